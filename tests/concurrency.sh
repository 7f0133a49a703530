#!/bin/sh
# Concurrent kernels end to end: Accel-Sim / GPGPU-Sim stdout of one
# synthetic workload in every shape the simulators print (tests/tools/
# mkstdout.py writes the logs and, independently of cyclescope, the truth:
# each kernel's extent, uid, stream and instructions), imported and
# checked against the truth with python's sqlite3; kernel-level
# correlation of the concurrent runs against the serialized one; the
# hardware cycle axis from gpc__cycles_elapsed.max; `phases`. TAP-style.
#   sh tests/concurrency.sh [BUILD_DIR]
B=${1:-build}
CS="$B/cyclescope"
. tests/lib.sh
DB="$T/c.db"
MK="python3 tests/tools/mkstdout.py"

# --- every shape imports, with the accounting it uses said ---
for shape in serial serial4 streams2 streams4 newer perkernel cut; do
	$MK $shape "$T/$shape.log" "$T/$shape.json"
	"$CS" import accelsim-log "$T/$shape.log" --db "$DB" --name $shape >"$T/imp.$shape" 2>&1 ||
		no "import $shape" "$T/imp.$shape"
done
grep -q 'interval accounting' "$T/imp.streams4" && grep -q 'per-kernel accounting' "$T/imp.perkernel" &&
	grep -q 'block accounting' "$T/imp.serial" &&
	ok "each import says its accounting (block, interval, per-kernel)" || no "accounting line" "$T/imp.streams4" "$T/imp.perkernel" "$T/imp.serial"

# Kernel extents, names, uids, streams exact for every shape.
python3 - "$DB" "$T" >"$T/why" 2>&1 <<'PY' && ok "sim-kernel ranges: extents, names, uids and streams exactly the truth's in all 7 shapes" || no "kernel ranges" "$T/why"
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
bad = 0
for shape in "serial serial4 streams2 streams4 newer perkernel cut".split():
    truth = json.load(open("%s/%s.json" % (sys.argv[2], shape)))
    got = db.execute("SELECT r.name, r.t0, r.t1, r.correlation_id, r.stream FROM ranges r JOIN runs u ON u.id = r.run "
                     "WHERE u.name = ? AND r.kind = 'sim-kernel' ORDER BY r.correlation_id", (shape,)).fetchall()
    want = sorted((k["name"], k["t0"], k["t1"], k["uid"], k["stream"]) for k in truth["kernels"])
    got = sorted(tuple(g) for g in got)
    if got != want:
        print(shape, "got", got, "want", want)
        bad = 1
sys.exit(bad)
PY

# The samples of a multi-stream log are its blocks, back to back.
"$CS" export streams4 --db "$DB" --metric gpu_sim_insn >"$T/s4.csv"
python3 - "$T/s4.csv" "$T/streams4.log" >"$T/why" 2>&1 <<'PY' && ok "streams4: one sample per block over [previous block's end, gpu_tot_sim_cycle), gpu_sim_insn as printed" || no "streams4 samples" "$T/why"
import sqlite3, sys
import csv
blocks, prev = [], 0
cyc = insn = None
for line in open(sys.argv[2]):
    if line.startswith("gpu_sim_insn = "): insn = int(line.split("=")[1])
    if line.startswith("gpu_tot_sim_cycle = "):
        tot = int(line.split("=")[1]); blocks.append((prev, tot, float(insn))); prev = tot
got = [(int(r[0]), int(r[1]), float(r[2])) for r in list(csv.reader(open(sys.argv[1])))[1:]]
assert got == blocks, (got, blocks)
PY

# Per-stream breakdowns: differenced per stream (newer), so each block
# holds its finishing kernel's own L2 hits (insn / 8 in the workload).
"$CS" export newer --db "$DB" --metric 'L2_cache_stats_breakdown[GLOBAL_ACC_R][HIT]' >"$T/nw.csv"
python3 - "$T/nw.csv" "$T/newer.json" "$T/newer.log" >"$T/why" 2>&1 <<'PY' && ok "newer: per-stream cache breakdowns differenced per stream: each block has its finishing kernel's own" || no "per-stream breakdowns" "$T/why"
import json, sqlite3, sys
import csv
truth = {k["uid"]: k for k in json.load(open(sys.argv[2]))["kernels"]}
fin = [int(l.split()[4].rstrip(":")) for l in open(sys.argv[3]) if l.startswith("Destroy streams for kernel ")]
got = [float(r[2]) for r in list(csv.reader(open(sys.argv[1])))[1:]]
want = [float(truth[u]["insn"] // 8) for u in fin]
assert got == want, (got, want)
PY

# A cut-off log: the finished kernels, and the unfinished ones named.
python3 - "$T/cut.json" "$T/imp.cut" >"$T/why" 2>&1 <<'PY' && ok "a log cut off inside a block: finished kernels imported, the unfinished ones named" || no "cut-off log" "$T/why"
import json, re, sys
t = json.load(open(sys.argv[1]))
msg = open(sys.argv[2]).read()
assert "the file ends inside %d unfinished kernel(s)" % len(t["unfinished"]) in msg, msg
for u in t["unfinished"]:
    assert "uid %d " % u in msg, (u, msg)
PY

# --- kernel level: concurrent against serialized, nothing counted twice ---
for shape in streams2 streams4 newer perkernel; do
	"$CS" correlate --db "$DB" --hw serial4 --sim $shape --hw-metric gpu_sim_insn --sim-metric gpu_sim_insn \
		--kernels --json >"$T/k.$shape" 2>&1 || no "correlate --kernels $shape" "$T/k.$shape"
done
python3 - "$T" >"$T/why" 2>&1 <<'PY' && ok "kernel level: every kernel that ran alone has the serialized run's instructions, the others are 'shared' and left out; matched by uid" || no "kernel-level honesty" "$T/why"
import json, sys
T = sys.argv[1]
for shape in "streams2 streams4 newer perkernel".split():
    truth = {k["uid"]: k for k in json.load(open("%s/%s.json" % (T, shape)))["kernels"]}
    serial = {k["uid"]: k for k in json.load(open("%s/serial4.json" % T))["kernels"]}
    r = json.load(open("%s/k.%s" % (T, shape)))[0]
    assert r["kernels"] == len(truth), (shape, r["kernels"])
    compared = 0
    for k in r["per_kernel"]:
        t = truth[k["uid"]]
        assert k["matched_by"] == "uid" and k["hw_uid"] == k["uid"], (shape, k)
        assert k["hw"] == serial[k["uid"]]["insn"], (shape, k)
        alone = t["alone"] or shape == "perkernel"  # a per-kernel block is the kernel's own
        if alone:
            assert not k["shared"] and k["sim"] == t["insn"], (shape, k, t)
            compared += 1
        else:
            assert k["shared"] and k["sim"] is None and "ran beside" in k["note"], (shape, k)
    assert r["compared"] == compared, (shape, r["compared"], compared)
PY
python3 - "$T" >"$T/why" 2>&1 <<'PY' && ok "kernel level never counts a sample twice: kernels alone + shared + outside = the run's total instructions, both sides, all shapes" || no "kernel accounting sums" "$T/why"
import json, sys
T = sys.argv[1]
for shape in "streams2 streams4 newer perkernel".split():
    total = json.load(open("%s/%s.json" % (T, shape)))["total_insn"]
    r = json.load(open("%s/k.%s" % (T, shape)))[0]
    for side in ("hw_accounting", "sim_accounting"):
        a = r[side]
        assert a["kernels"] + a["shared"] + a["outside"] == a["total"] == total, (shape, side, a, total)
    alone = sum(k["sim"] for k in r["per_kernel"] if not k["shared"])
    assert alone == r["sim_accounting"]["kernels"], (shape, alone, r["sim_accounting"])
PY

# --- the hardware cycle axis from its own counter ---
# A simulator series in 500-cycle samples, and the same series on
# "hardware" 3 bins (1500 cycles) later, in ns samples of 500 cycles each
# at a clock that moves between 1.5 and 2.0 GHz, with gpc__cycles_elapsed.max.
python3 - "$T" <<'PY'
import sys
T = sys.argv[1]
sig = [((i * 37) % 23) * 100 + (i % 5) * 7 + 50 for i in range(200)]
with open(T + "/axis-sim.csv", "w") as f:
    f.write("t0,t1,insts\n")
    for i, v in enumerate(sig):
        f.write("%d,%d,%d\n" % (500 * i, 500 * (i + 1), v))
t = 1000000
hw = []
with open(T + "/axis-hw.csv", "w") as f:
    f.write("t0,t1,gpc__cycles_elapsed.max,sm__inst_executed.sum\n")
    for i in range(200):
        d = (250, 278, 313, 333)[(i * 7) % 4]   # ns for 500 cycles
        v = sig[i - 3] if i >= 3 else 0
        hw.append(v)
        f.write("%d,%d,500,%d\n" % (t, t + d, v))
        t += d
with open(T + "/axis-want", "w") as f:
    f.write(" ".join(str(v) for v in hw))
PY
"$CS" import csv "$T/axis-sim.csv" --time-unit cycle --db "$DB" --name axis-sim >/dev/null 2>&1
"$CS" import csv "$T/axis-hw.csv" --db "$DB" --name axis-hw >/dev/null 2>&1
"$CS" correlate --db "$DB" --hw axis-hw --sim axis-sim --hw-metric sm__inst_executed.sum --sim-metric insts \
	--bin-cycles 500 --max-lag 6 --json >"$T/ax.json" 2>&1
"$CS" correlate --db "$DB" --hw axis-hw --sim axis-sim --hw-metric sm__inst_executed.sum --sim-metric insts \
	--bin-cycles 500 --max-lag 6 --csv >"$T/ax.csv" 2>&1
python3 - "$T/ax.json" "$T/ax.csv" "$T/axis-want" >"$T/why" 2>&1 <<'PY' && ok "a hardware run with gpc__cycles_elapsed.max and a moving clock: no clock option, the lag of 3 bins recovered exactly, every bin as brute force says" || no "cycle axis from the counter" "$T/why"
import csv, json, sys
r = json.load(open(sys.argv[1]))[0]
assert r["hw_axis"] == "cycles from gpc__cycles_elapsed.max", r["hw_axis"]
assert r["lag_bins"] == 3 and r["pearson"] > 0.999999 and r["hw_cycles"] == 100000, r
rows = list(csv.reader(open(sys.argv[2])))[1:]
want = [float(x) for x in open(sys.argv[3]).read().split()]
hw = [float(x[4]) for x in rows]
sim = [float(x[5]) for x in rows]
assert hw == want[3:3 + len(hw)], (hw[:10], want[3:13])
assert hw == sim, "aligned bins differ"
PY
"$CS" correlate --db "$DB" --hw axis-hw --sim axis-sim --hw-metric sm__inst_executed.sum --sim-metric insts \
	--bin-cycles 500 --hw-clock-mhz 1755 >"$T/out" 2>&1
grep -q "axis 1755.0 MHz (given)" "$T/out" && ok "--hw-clock-mhz still overrides the counter, and says so" || no "--hw-clock-mhz override" "$T/out"
"$CS" correlate --db "$DB" --hw serial4 --sim streams4 --hw-metric gpu_sim_insn --sim-metric gpu_sim_insn \
	--sim-window 'sim-kernel:*#0' --bin-cycles 5000 --json >"$T/out" 2>&1
python3 - "$T/out" >"$T/why" 2>&1 <<'PY' && ok "guard rails: fewer than 8 bins and windows 2x apart are warned, with what to change; a cycle run's clock is the run's, never 0" || no "warnings" "$T/why"
import json, sys
r = json.load(open(sys.argv[1]))[0]
w = " | ".join(r["warnings"])
assert "fewer than 8 bins" in w and "lower --bin-cycles" in w, w
assert "lengths differ by more than 2x (hw 19100, sim 4000 cycles)" in w, w
assert r["hw_axis"] == "cycles (the run's unit)" and r["hw_clock_hz"] == 1132e6, r
PY
"$CS" correlate --db "$DB" --hw serial4 --sim streams4 --hw-metric gpu_sim_insn --sim-metric gpu_sim_insn \
	--bin-cycles 5000 >"$T/out" 2>&1
grep -Eq "warning: only [0-9]+ bins" "$T/out" && ! grep -q "0.0 MHz" "$T/out" && ok "the text says the warning too" || no "text warnings" "$T/out"

# --- phases: the overlap analysis ---
python3 tests/tools/mkphases.py "$T/ph.csv" "$T/ph.ranges.csv"
cmp -s "$T/ph.csv" docs/examples/nccl-gemm-phases.csv && cmp -s "$T/ph.ranges.csv" docs/examples/nccl-gemm-phases.ranges.csv &&
	ok "docs/examples/nccl-gemm-phases.* are what tests/tools/mkphases.py writes" || no "demo phases files regenerate" /dev/null
"$CS" import csv "$T/ph.csv" --ranges "$T/ph.ranges.csv" --db "$DB" --name phases >"$T/out" 2>&1 || no "import --ranges" "$T/out"
"$CS" phases phases --db "$DB" --a 'kernel:nccl*' --b '*gemm*' --json >"$T/ph.json" 2>"$T/out" || no "phases --json" "$T/out"
python3 - "$T/ph.json" "$T/ph.csv" "$T/ph.ranges.csv" >"$T/why" 2>&1 <<'PY' && ok "phases: durations equal a brute force on a 1 us grid, each metric's phase sums equal the brute force's and add up to the run total, the tail is the GEMM after the last overlap" || no "phases brute force" "$T/why"
import csv, json, sys
r = json.load(open(sys.argv[1]))
rows = list(csv.reader(open(sys.argv[2])))
head, rows = rows[0], rows[1:]
rg = list(csv.DictReader(open(sys.argv[3])))
A = [(int(x["t0"]), int(x["t1"])) for x in rg if x["kind"] == "kernel" and x["name"].startswith("nccl")]
B = [(int(x["t0"]), int(x["t1"])) for x in rg if "gemm" in x["name"]]
end = max(int(x[1]) for x in rows)
US = 1000
names = ["neither", "only A", "A and B", "only B"]
dur = dict.fromkeys(names, 0)
sums = {m: dict.fromkeys(names, 0.0) for m in head[2:]}
cell_phase = []
for t in range(0, end, US):
    a = any(s <= t < e for s, e in A)
    b = any(s <= t < e for s, e in B)
    p = "A and B" if a and b else "only A" if a else "only B" if b else "neither"
    cell_phase.append(p)
    dur[p] += US
for x in rows:
    t0, t1 = int(x[0]), int(x[1])
    cells = (t1 - t0) // US
    for k, m in enumerate(head[2:]):
        v = float(x[2 + k])
        for c in range(t0 // US, t1 // US):
            sums[m][cell_phase[c]] += v / cells
got = {p["phase"]: p for p in r["phases"]}
for p in names:
    assert got[p]["duration"] == dur[p], (p, got[p]["duration"], dur[p])
    for m in head[2:]:
        g, w = got[p]["metrics"][m]["sum"], sums[m][p]
        assert abs(g - w) <= 1e-9 * max(1.0, abs(w)), (p, m, g, w)
for m in head[2:]:
    total = sum(float(x[2 + head[2:].index(m)]) for x in rows)
    parts = sum(got[p]["metrics"][m]["sum"] for p in names)
    assert abs(parts - total) <= 1e-9 * total and abs(r["totals"][m] - total) <= 1e-9 * total, (m, parts, total)
assert r["tail"]["start"] == max(e for s, e in A) and r["tail"]["end"] == max(e for s, e in B), r["tail"]
assert got["tail"]["duration"] + got["only B outside the tail"]["duration"] == got["only B"]["duration"]
tail = got["tail"]["metrics"]["sm__inst_executed.sum"]["mean_rate"]
alone = got["only B outside the tail"]["metrics"]["sm__inst_executed.sum"]["mean_rate"]
assert 0.55 < tail / alone < 0.65, (tail, alone)
PY
"$CS" phases phases --db "$DB" --a 'kernel:nccl*' --b '*gemm*' --metric sm__inst_executed.sum >"$T/ph.txt" 2>&1
grep -q "tail: B runs on alone for 2.995 ms after its last overlap with A" "$T/ph.txt" && grep -q "tail / B alone: 0.6" "$T/ph.txt" &&
	ok "phases text: the tail and its rate against B alone" || no "phases text" "$T/ph.txt"
"$CS" phases newer --db "$DB" --a 'sim-kernel:_Z9allgather*' --b '*gemm*' \
	--metric 'L2_cache_stats_breakdown[GLOBAL_ACC_R][HIT],gpu_sim_*' --csv >"$T/out" 2>&1 &&
	[ "$(tail -n +2 "$T/out" | tr -d '\r' | cut -d, -f2 | sort -u | tr '\n' ' ')" = '"L2_cache_stats_breakdown[GLOBAL_ACC_R][HIT]" "gpu_sim_cycle" "gpu_sim_insn" ' ] &&
	ok "phases --metric: a name with brackets is itself, a glob matches by pattern" || no "phases metric names" "$T/out"
"$CS" phases phases --db "$DB" --a 'kernel:allreduce*' --b '*gemm*' >"$T/out" 2>&1
[ $? -eq 1 ] && grep -q "\-\-a 'kernel:allreduce\*' matches no range of run" "$T/out" && grep -q "kernel x4 (ncclDevKernel_AllGather_RING_LL" "$T/out" &&
	ok "phases: a glob matching nothing is named, with the run's range kinds and names" || no "phases no match" "$T/out"

# B as everything A is not: '!GLOB' (the demo's kernels are NCCL's and one GEMM's)
"$CS" phases phases --db "$DB" --a 'kernel:nccl*' --b 'kernel:!nccl*' --json >"$T/neg.json" 2>"$T/out"
python3 - "$T/ph.json" "$T/neg.json" >"$T/why" 2>&1 <<'PY' && ok "phases --b 'kernel:!nccl*': the kernels A does not name, the same phases as naming the GEMM" || no "negated glob" "$T/why"
import json, sys
a, b = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
assert b["b"] == "kernel:!nccl*" and b["b_ranges"] == a["b_ranges"] == 2, (a["b_ranges"], b["b_ranges"])
assert [(p["phase"], p["duration"]) for p in a["phases"]] == [(p["phase"], p["duration"]) for p in b["phases"]], (a["phases"], b["phases"])
PY

# --- running totals in a visualizer log ---
AV=tests/fixtures/accelsim-qv100/gpgpusim_visualizer__Wed-Dec--2-10-17-51-2026.log.gz
# The real log with Ltworeadmiss printed as a running total over the run, as
# some builds do, and an unknown key on every sample.
zcat "$AV" | awk '/^Ltworeadmiss:/ { c += $2; print "Ltworeadmiss: " c; next }
	/^globalcyclecount:/ { print "mybuild_counter: 7" } { print }' | gzip >"$T/cum.log.gz"
want=$(zcat "$AV" | awk '/^Ltworeadmiss:/ { printf "%s%d", s, $2; s = " " }')
"$CS" import aerialvision "$T/cum.log.gz" --db "$DB" --name cum >"$T/out" 2>&1
got=$("$CS" export cum --db "$DB" --metric Ltworeadmiss | tail -n +2 | tr -d '\r' | awk -F, '{ printf "%s%d", s, $3; s = " " }')
"$CS" import aerialvision "$AV" --db "$DB" --name orig >"$T/out2" 2>&1
[ "$got" = "$want" ] && grep -q "Ltworeadmiss looks cumulative" "$T/out" && grep -q -- "--per-window keeps it as printed" "$T/out" &&
	[ "$(grep -c "looks cumulative" "$T/out")" -eq 1 ] && ! grep -q "looks cumulative" "$T/out2" &&
	ok "a running total where per-window values are expected is recognised, said, and stored as the per-window values; nothing else is, in the real log" || { echo "got $got want $want" >>"$T/out"; no "running totals" "$T/out" "$T/out2"; }
grep -q "40 lines with unknown keys were kept" "$T/out" && ok "the unknown-key warning counts lines (40), not keys" || no "unknown key count" "$T/out"
"$CS" import aerialvision "$T/cum.log.gz" --db "$DB" --name cum-as-printed --per-window >"$T/out" 2>&1
got=$("$CS" export cum-as-printed --db "$DB" --metric Ltworeadmiss | tail -n +2 | tr -d '\r' | awk -F, '{ printf "%s%d", s, $3; s = " " }')
[ "$got" = "$(zcat "$T/cum.log.gz" | awk '/^Ltworeadmiss:/ { printf "%s%d", s, $2; s = " " }')" ] && ! grep -q "looks cumulative" "$T/out" &&
	ok "--per-window stores the values as printed, with no check" || no "--per-window" "$T/out"
# Too short to recognise (samples 21 to 26 of it): --cumulative says so.
zcat "$T/cum.log.gz" | awk '{ if (n >= 20 && n < 26) print } /^STmemlatdist:/ { n++ }' >"$T/short.log"
want=$(zcat "$AV" | awk '/^Ltworeadmiss:/ { n++; c += $2; if (n == 21) printf "%d", c; else if (n > 21 && n <= 26) printf " %d", $2 }')
"$CS" import aerialvision "$T/short.log" --db "$DB" --name short --cumulative Ltworeadmiss >"$T/out" 2>&1
got=$("$CS" export short --db "$DB" --metric Ltworeadmiss | tail -n +2 | tr -d '\r' | awk -F, '{ printf "%s%d", s, $3; s = " " }')
[ "$got" = "$want" ] && ! grep -q "looks cumulative" "$T/out" && ok "--cumulative NAME stores deltas where the file is too short to tell (6 samples: $want)" || { echo "got $got want $want" >>"$T/out"; no "--cumulative" "$T/out"; }

# The same check in the CSV importers: a warning naming the running total,
# and --cumulative storing its deltas.
python3 - "$T/tot.csv" <<'PY'
import sys
with open(sys.argv[1], "w") as f:
    f.write("t0,t1,window_reads,total_reads,avg_latency\n")
    c = 0
    for i in range(20):
        w = (i * 7) % 5 * 10 + 3
        c += w
        f.write("%d,%d,%d,%d,%d\n" % (i * 100, i * 100 + 100, w, c, 100 + i))
PY
"$CS" import csv "$T/tot.csv" --db "$DB" --name tot >"$T/out" 2>&1
grep -q "tot.csv: total_reads never decreases over the run while other counters do" "$T/out" &&
	grep -q -- "re-import with --cumulative total_reads" "$T/out" && ! grep -q "avg_latency never" "$T/out" &&
	ok "csv: a column that only grows while others drop is named, with --cumulative to fix it (an average is not)" || no "csv running-total warning" "$T/out"
"$CS" import csv "$T/tot.csv" --db "$DB" --name tot2 --cumulative total_reads >"$T/out" 2>&1
got=$("$CS" export tot2 --db "$DB" --metric total_reads,window_reads | tail -n +2 | tr -d '\r' | awk -F, '$3 != $4 { bad++ } END { print bad + 0, NR }')
[ "$got" = "0 20" ] && ! grep -q "never decrease" "$T/out" && ok "csv --cumulative: the running total stored as its per-sample deltas (equal to the window column in all 20 rows)" || no "csv --cumulative ($got)" "$T/out"

# --- bad input: file:line, nothing stored ---
runs_before=$("$CS" query --db "$DB" "SELECT count(*) FROM runs" | tail -n 1 | tr -d '\r')
bad() { # DESC PATTERN FILE
	"$CS" import accelsim-log "$3" --db "$DB" --name bad >"$T/out" 2>&1
	rc=$?
	cnt=$("$CS" query --db "$DB" "SELECT count(*) FROM runs" | tail -n 1 | tr -d '\r')
	if [ $rc -eq 1 ] && grep -Eq "$2" "$T/out" && [ "$cnt" = "$runs_before" ]; then ok "$1"; else no "$1" "$T/out"; fi
}
awk '{ print } /^launching kernel name: _Z5scaleifPf uid: 2/ { print }' "$T/streams4.log" >"$T/twice.log"
bad "a uid launched twice: file:line, nothing stored" "twice.log:5: kernel uid 2 launched twice \(first at line 4\)" "$T/twice.log"
sed 's/^Destroy streams for kernel 4: size 0/Destroy streams for kernel 40: size 0/' "$T/streams4.log" >"$T/unknown.log"
bad "a completion of an unknown uid" "unknown.log:[0-9]+: completion of kernel uid 40, which was never launched" "$T/unknown.log"
sed 's/^kernel_launch_uid = 6 $/kernel_launch_uid = 6 9 /' "$T/streams4.log" >"$T/never.log"
bad "a block listing a uid never launched" "never.log:[0-9]+: the statistics block lists kernel uid 9, which was never launched" "$T/never.log"
awk '/^gpu_tot_sim_cycle = 2500$/ { print "gpu_tot_sim_cycle = 1200"; next } { print }' "$T/streams4.log" >"$T/back.log"
bad "gpu_tot_sim_cycle going back" "back.log:[0-9]+: gpu_tot_sim_cycle goes back from 1500 to 1200" "$T/back.log"
awk '/^gpu_tot_sim_cycle = 900$/ { print "gpu_tot_sim_cycle = -900"; next } { print }' "$T/streams4.log" >"$T/neg.log"
bad "a negative gpu_tot_sim_cycle" "neg.log:[0-9]+: negative gpu_tot_sim_cycle" "$T/neg.log"
awk '/^gpu_tot_sim_cycle = 900$/ { print "gpu_tot_sim_cycle = 1e30"; next } { print }' "$T/streams4.log" >"$T/huge.log"
bad "a gpu_tot_sim_cycle beyond 2^53" "huge.log:[0-9]+: gpu_tot_sim_cycle 1e\+30 is not a cycle count" "$T/huge.log"
awk '{ print } /^launching kernel name: _Z5scaleifPf uid: 2/ { print "launching kernel name: _Z4oops" }' "$T/streams4.log" >"$T/badlaunch.log"
bad "a malformed launch line inside the file" "badlaunch.log:5: expected 'launching kernel name: NAME uid: N'" "$T/badlaunch.log"

# Logs killed mid-write: a partial last line, a 3.x log cut inside a block.
head -n 40 "$T/streams4.log" >"$T/part.log"
printf 'launching kernel name: _Z4gemmILi128EEvPKfS1_Pfi ui' >>"$T/part.log"
"$CS" import accelsim-log "$T/part.log" --db "$DB" --name part >"$T/out" 2>&1 &&
	grep -q "part.log:41: the file ends inside this line (expected 'launching kernel name: NAME uid: N'): ignored" "$T/out" &&
	ok "a log whose last line is cut inside a launch line imports what it holds, and says so" || no "partial last line" "$T/out"
awk '/^kernel_name = _Z9transposePfS_ii/ { cut = 1 } cut && /^gpu_sim_cycle/ { exit } { print }' tests/fixtures/sim/gpgpusim3-stdout.log >"$T/cut3.log"
"$CS" import accelsim-log "$T/cut3.log" --db "$DB" --name cut3 >"$T/out" 2>&1 &&
	grep -q "the file ends inside this statistics block" "$T/out" &&
	[ "$("$CS" query --db "$DB" "SELECT count(*) FROM ranges r JOIN runs u ON u.id = r.run WHERE u.name = 'cut3'" | tail -n 1 | tr -d '\r')" = 1 ] &&
	ok "a GPGPU-Sim 3.x log cut inside its second block: the first kernel imported, the cut block said" || no "3.x cut-off" "$T/out"

exit $fails
