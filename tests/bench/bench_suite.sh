#!/bin/sh
# Suite correlation at scale: 100 applications x 50 kernels, 3 simulator
# configurations, 3 statistics (tests/tools/mksuite.py: an ncu raw CSV per
# application, one get_stats.py CSV), `correlate --suite` against the same
# pairing and statistics done by a python script reading the same files
# (csv module, dicts: what a correlator script does). Best and median of 3.
#   sh tests/bench/bench_suite.sh BUILD_DIR WORK_DIR
B=${1:-build}
W=${2:-$B/bench}
CS="$B/cyclescope"
mkdir -p "$W"
fig() { [ -n "$BENCH_FIGURES" ] && echo "$*" >>"$BENCH_FIGURES"; return 0; }
three() {
	: >"$W/times"
	for i in 1 2 3; do
		/usr/bin/time -f "%e" -o "$W/t1" "$@" >/dev/null 2>&1
		cat "$W/t1" >>"$W/times"
	done
	sort -n "$W/times" | awk '{ t[NR] = $1 } END { printf "%s %s\n", t[1], t[2] }'
}

echo "== correlate --suite, 100 applications x 50 kernels x 3 configurations (best / median of 3)"
rm -rf "$W/suite" "$W/suite.db"*
python3 tests/tools/mksuite.py "$W/suite" --apps 100 --kernels 50 --configs 3 --repeats 1
while IFS="$(printf '\t')" read -r f name rep; do
	"$CS" import "$W/suite/$f" --db "$W/suite.db" --name "$name" --job hw0 >/dev/null 2>&1 ||
		echo "import of $f failed"
done <"$W/suite/hw-names.txt"
"$CS" import "$W/suite/sim.csv" --db "$W/suite.db" --name suite-sim >/dev/null 2>&1 || echo "import of sim.csv failed"
set -- $(three "$CS" correlate --suite --db "$W/suite.db" --hw job:hw0 --sim suite-sim \
	--sim-config CFG-A --sim-config CFG-B --sim-config CFG-C \
	--hw-metric gpc__cycles_elapsed.avg --sim-metric gpu_tot_sim_cycle \
	--hw-metric smsp__inst_executed.sum --sim-metric gpgpu_n_tot_w_icount \
	--hw-metric lts__t_sectors_srcunit_tex_op_read.sum \
	--sim-metric 'L2_cache_stats_breakdown[GLOBAL_ACC_R][TOTAL_ACCESS]' \
	--app-map "$W/suite/app-map.txt" --json)
ours_best=$1 ours_med=$2
cat >"$W/suite.py" <<'PY'
# The baseline: the same pairs (application by name, kernel by name and
# launch) and statistics from the files themselves.
import csv, math, statistics, sys
d = sys.argv[1]
stats = [("gpc__cycles_elapsed.avg", "gpu_tot_sim_cycle"), ("smsp__inst_executed.sum", "gpgpu_n_tot_w_icount"),
         ("lts__t_sectors_srcunit_tex_op_read.sum", "L2_cache_stats_breakdown[GLOBAL_ACC_R][TOTAL_ACCESS]")]
hw = {}
for line in open(d + "/hw-names.txt"):
    f, name, _ = line.rstrip("\n").split("\t")
    rows = list(csv.reader(l for l in open(d + "/" + f, newline="") if not l.startswith("==PROF==")))
    head, seen = rows[0], {}
    for r in rows[2:]:
        k = r[4].split("(")[0].replace("void ", "")
        seen[k] = seen.get(k, -1) + 1
        hw[(name.lower(), k, seen[k])] = [float(r[head.index(s[0])].replace(",", "")) for s in stats]
sim, block, cfgs = {}, None, []
for r in csv.reader(open(d + "/sim.csv", newline="")):
    if not r or r[0].startswith("-----"):
        block = None; continue
    if block is None:
        block = r[0]; continue
    if r[0] == "APPS":
        cfgs = r[1:]; continue
    if block.endswith("-build"):
        continue
    app, kern = r[0].split("--")[0], r[0].split("--")[1]
    sim.setdefault(block, []).append((app.lower(), kern, [float(x) for x in r[1:]]))
for si, (h, s) in enumerate(stats):
    key = [b for b in sim if s.split("[")[0] in b][0]
    for c in range(len(cfgs)):
        seen, xs, ys = {}, [], []
        for app, kern, vals in sim[key]:
            digits = kern[2:len(kern) - len(kern[2:].lstrip("0123456789"))]
            n = kern[2 + len(digits):2 + len(digits) + int(digits)]  # _Z<len>name...: the name
            seen[(app, n)] = seen.get((app, n), -1) + 1
            v = hw.get((app, n, seen[(app, n)]))
            if v:
                xs.append(v[si]); ys.append(vals[c])
        if len(xs) > 1:
            statistics.correlation(xs, ys)
            statistics.fmean(abs(y - x) / x for x, y in zip(xs, ys) if x)
PY
set -- $(three python3 "$W/suite.py" "$W/suite")
ratio=$(awk -v a="$ours_med" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')
printf 'correlate --suite: %s s best, %s s median (python over the files: %s s best, %s s median; %sx)\n' \
	"$ours_best" "$ours_med" "$1" "$2" "$ratio"
fig "suite.correlate_100x50x3" "$ours_best" "$ours_med" s "<=2"
fig "suite.correlate_vs_python" "$ratio" "$ratio" x "<=1"
[ -n "$BENCH_KEEP" ] || rm -rf "$W/suite" "$W/suite.db"* "$W/suite.py" "$W/times" "$W/t1"
