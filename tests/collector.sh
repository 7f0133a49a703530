#!/bin/sh
# The collector on a machine without a GPU: the offline catalog and set
# checks through the real CUPTI host library, hook resolution, `cyclescope
# run` (environment, exit status, refusals), InitializeInjection with no
# driver, and the pipeline end to end with the replay source into a
# database file and through a real daemon checked with curl. TAP-style.
#   sh tests/collector.sh [BUILD_DIR]
B=${1:-build}
CS="$B/cyclescope"
LIB="$B/libcyclescope_collector.so"
. tests/lib.sh
get() { curl -sS --noproxy '*' "$@"; }

if [ ! -f "$LIB" ]; then
	# Built only where the CUDA toolkit is; the rest must still work.
	echo "# $LIB not built (no CUDA toolkit): collector checks skipped"
	"$CS" metrics >"$T/out" 2>&1
	[ $? -eq 1 ] && grep -q 'built when the CUDA toolkit' "$T/out" && ok "metrics says how to get the collector" || no "metrics without the collector" "$T/out"
	exit $fails
fi

# libcupti dlopens libnvperf_host with RTLD_DEEPBIND, which the address
# and thread sanitizers refuse: their builds skip the host-API checks
# (the plain build runs them) and keep everything else.
if [ -n "$CS_SAN" ]; then
	echo "# sanitizer build ($CS_SAN): CUPTI host-API checks run in the plain build only"
	NOCHECK=--no-check
else
NOCHECK=
# --- the offline catalog (CUPTI host API, chip GH100) ---
"$CS" metrics --chip GH100 >"$T/cat" 2>"$T/err"
c=$(wc -l <"$T/cat")
[ "$c" -ge 500 ] && ok "GH100 catalog lists $c single-pass metrics" || no "catalog size ($c)" "$T/err"
grep -qP '^lts__t_sectors\.sum\tcounter\tl2_sector\tlts\t1\t' "$T/cat" && ok "lts__t_sectors.sum is there, a counter of l2_sector" || no "lts__t_sectors.sum in the catalog" "$T/cat"
grep -qP '^sm__throughput\.avg\.pct_of_peak_sustained_elapsed\t' "$T/cat" && no "19-pass sm__throughput is listed as sampleable" || ok "multi-pass metrics are left out"
"$CS" metrics --chip GH100 --all --json >"$T/cat.json" 2>"$T/err"
python3 -c "
import json,sys
m=json.load(open('$T/cat.json'))
by={x['name']:x for x in m}
assert len(m) > $c, len(m)
assert by['sm__throughput.avg.pct_of_peak_sustained_elapsed']['passes'] > 1
assert by['lts__t_sectors.sum']['passes'] == 1 and by['lts__t_sectors.sum']['description']
" 2>"$T/err" && ok "--all --json adds multi-pass metrics with their pass counts" || no "--all --json" "$T/err"
"$CS" metrics --chip XX100 >"$T/out" 2>&1
[ $? -eq 1 ] && grep -q 'known chips:.*GH100' "$T/out" && ok "an unknown chip lists the known ones" || no "unknown chip" "$T/out"

# --- set checks ---
"$CS" metrics --chip GH100 --check lts__t_sectors.sum,lts__t_sectors_srcunit_tex.sum >"$T/out" 2>&1 &&
	grep -q 'ok: 2 metrics fit one PM-sampling pass' "$T/out" && grep -q 'about 3104 bytes per sample' "$T/out" &&
	ok "the L2 pair fits one pass, 3104 bytes/sample" || no "L2 pair" "$T/out"
"$CS" metrics --chip GH100 --check lts__t_sectors.sum,lts__t_sectors_srcunit_tex.sum,lts__t_sectors_srcnode_gpc.sum >"$T/out" 2>&1
[ $? -eq 1 ] && grep -q "adding 'lts__t_sectors_srcnode_gpc.sum' (metric 3 of 3) makes the set need 2 passes" "$T/out" &&
	ok "the known two-pass set is refused naming srcnode_gpc" || no "two-pass set" "$T/out"
"$CS" metrics --chip GH100 --check lts__t_sectors.sum,lts__t_sectorz.sum >"$T/out" 2>&1
[ $? -eq 1 ] && grep -q "'lts__t_sectorz.sum' is unknown on GH100; did you mean 'lts__t_sectors.sum'" "$T/out" &&
	ok "a misspelled metric is refused with the nearest name" || no "misspelled metric" "$T/out"
"$CS" metrics --chip GH100 --check ctc__rx_bytes.sum >"$T/out" 2>&1
[ $? -eq 1 ] && grep -q "did you mean 'CTC.TriageCompute.ctc__rx_bytes.sum'" "$T/out" &&
	ok "a metric typed without its prefix is matched by suffix (not lts__t_bytes.sum)" || no "suffix match" "$T/out"
"$CS" metrics --check sm__throughput.avg.pct_of_peak_sustained_elapsed >"$T/out" 2>&1
[ $? -eq 1 ] && grep -q 'alone needs 19 passes' "$T/out" && ok "a metric needing 19 passes alone is named" || no "multi-pass alone" "$T/out"
"$CS" metrics --check lts__t_sectors.sum,lts__t_sectors_srcnode_gpc.sum,lts__t_sectors_srcunit_tex.sum --json >"$T/out" 2>&1
[ $? -eq 1 ] && grep -q '"single_pass":false,"passes":2,"bad":"lts__t_sectors_srcunit_tex.sum"' "$T/out" &&
	ok "--check --json names the breaking metric" || no "--check --json" "$T/out"
for set in hopper-l2 general memory-io; do
	"$CS" metrics --chip GH100 --check "@$set" >"$T/out" 2>&1 && ok "shipped set $set is single-pass on GH100" || no "set $set" "$T/out"
done
grep -q '^lts__t_sectors_srcunit_tex.sum' configs/metric-sets/hopper-l2.txt && grep -q '^lts__t_sectors.sum' configs/metric-sets/hopper-l2.txt &&
	ok "hopper-l2 holds lts__t_sectors.sum and its srcunit_tex part" || no "hopper-l2 content"
"$CS" metrics --check @no-such-set >"$T/out" 2>&1
[ $? -eq 2 ] && grep -q 'no-such-set' "$T/out" && ok "an unknown set file is a usage error" || no "unknown set" "$T/out"

"$CS" run --metrics lts__t_sectors.sum,lts__t_sectors_srcunit_tex.sum,lts__t_sectors_srcnode_gpc.sum -- true >"$T/out" 2>&1
[ $? -eq 2 ] && grep -q 'srcnode_gpc' "$T/out" && ok "run refuses a two-pass set before starting the job" || no "run two-pass" "$T/out"

# --- an H200 recording, evaluated again offline (tests/fixtures/gpu-h200) ---
# The counter-data images the collector saved on the GPU, evaluated by
# CUPTI's host API alone (tests/tools/pm_eval): the DRAM bytes of the
# streaming kernels (ranges read with python's sqlite3) against the
# workload's footprint, and every sample the collector stored (read back
# with `export`) against CUPTI's own evaluation of the same sample.
H=tests/fixtures/gpu-h200
if [ -x "$B/tests/pm_eval" ]; then
	mkdir -p "$T/img"
	cp "$H"/img/index-dev0.txt "$H"/img/config-dev0.bin "$T/img/"
	for f in "$H"/img/counterdata-*.bin.gz; do gzip -dc "$f" >"$T/img/$(basename "$f" .gz)"; done
	"$B/tests/pm_eval" "$T/img" >"$T/eval.csv" 2>"$T/eval.err"
	[ $? -eq 0 ] && [ "$(sed -n 1p "$T/eval.csv")" = "config same" ] &&
		ok "the saved images evaluate offline; the config image built anew is the GPU's, byte for byte" ||
		no "pm_eval on the H200 recording" "$T/eval.err"
	# a cut image is refused by name, never read past its end
	mkdir -p "$T/cut"
	cp "$T/img/index-dev0.txt" "$T/img/config-dev0.bin" "$T/cut/"
	head -c 1000 "$T/img/counterdata-dev0-0001.bin" >"$T/cut/counterdata-dev0-0001.bin"
	"$B/tests/pm_eval" "$T/cut" >"$T/cut.out" 2>"$T/cut.err"
	[ $? -eq 1 ] && grep -q 'counterdata-dev0-0001.bin: 1000 bytes, the index says' "$T/cut.err" &&
		ok "a cut counter-data image is refused with its size and the index's" || no "cut image" "$T/cut.err"
	# a copy: opening the committed file read-write would migrate it
	cp "$H/img.db" "$T/img.db"
	"$CS" export img --db "$T/img.db" >"$T/stored.csv" 2>"$T/err"
	python3 - "$T/eval.csv" "$T/img.db" "$H/img.out" "$T/stored.csv" >"$T/cmp" 2>&1 <<'PY'
import csv, sqlite3, sys
ev = list(csv.DictReader(open(sys.argv[1]).readlines()[1:]))
db = sqlite3.connect(sys.argv[2])
a, b = db.execute("SELECT min(t0) - 2000000, max(t1) + 2000000 FROM ranges WHERE run = 1 "
                  "AND kind = 'kernel' AND name = 'truth_stream'").fetchone()
facts = dict(l.strip().split("=", 1) for l in open(sys.argv[3]) if "=" in l and not l.startswith(("event", "phase")))
foot = int(facts["stream_bytes_read"]) + int(facts["stream_bytes_written"])
dram = sum(float(r["dram__bytes_read.sum"]) + float(r["dram__bytes_write.sum"])
           for r in ev if int(r["t1"]) > a and int(r["t0"]) < b)
stored = {(int(r["t0"]), int(r["t1"])): r for r in csv.DictReader(open(sys.argv[4]))}
same = diff = 0
for r in ev:
    s = stored.get((int(r["t0"]), int(r["t1"])))
    if s is None:
        continue
    for m in ("dram__bytes_read.sum", "dram__bytes_write.sum", "gr__cycles_elapsed.max"):
        x, y = float(r[m]), float(s[m])
        if abs(x - y) <= 1e-9 * max(abs(x), 1.0):
            same += 1
        else:
            diff += 1
            print("differs", r["t0"], m, x, y)
matched = sum(1 for r in ev if (int(r["t0"]), int(r["t1"])) in stored)
print(f"ratio={dram / foot:.4f} evaluated={len(ev)} stored={len(stored)} matched={matched} same={same} diff={diff}")
PY
	r=$(sed -n 's/^ratio=\([0-9.]*\) .*/\1/p' "$T/cmp")
	awk -v r="${r:-0}" 'BEGIN { exit !(r >= 0.98 && r <= 1.04) }' &&
		ok "DRAM bytes of 16 streaming kernels, evaluated offline: $r of the 32 GiB they move" ||
		no "offline DRAM bytes" "$T/cmp"
	# every stored sample is one CUPTI evaluated, with its values; only
	# the first after the start is not stored (the engine skips it)
	v=$(sed -n 's/^ratio=[0-9.]* evaluated=\([0-9]*\) stored=\([0-9]*\) matched=\([0-9]*\) same=\([0-9]*\) diff=\([0-9]*\)$/\1 \2 \3 \4 \5/p' "$T/cmp")
	set -- ${v:-0 0 0 0 1}
	[ "$2" -gt 40 ] && [ "$3" = "$2" ] && [ "$1" = $(($2 + 1)) ] && [ "$4" = $((3 * $2)) ] && [ "$5" = 0 ] &&
		ok "the $2 stored samples equal CUPTI's offline evaluation of the same images (the first after the start is skipped)" ||
		no "stored samples vs offline evaluation" "$T/cmp"
fi
fi

# --- hook resolution ---
"$CS" run --list-apis --apis cudaMemcpy >"$T/apis" 2>&1
grep -qP '^runtime\t\d+\tcudaMemcpy_v3020\tcudaMemcpy$' "$T/apis" && grep -qP '\tcudaMemcpy_ptds_v7000\t' "$T/apis" &&
	[ "$(wc -l <"$T/apis")" -eq 2 ] && ok "cudaMemcpy enables cudaMemcpy_v3020 and its _ptds variant, nothing else" || no "cudaMemcpy resolution" "$T/apis"
"$CS" run --list-apis --apis 'cuLaunchKernel*' >"$T/apis" 2>&1
for f in cuLaunchKernel cuLaunchKernel_ptsz cuLaunchKernelEx cuLaunchKernelEx_ptsz; do
	grep -qP "^driver\t\d+\t$f\t" "$T/apis" || { no "cuLaunchKernel* misses $f" "$T/apis"; f=; break; }
done
[ -n "$f" ] && ok "cuLaunchKernel* enables cuLaunchKernel, cuLaunchKernelEx and their _ptsz forms" 
"$CS" run --list-apis >"$T/apis" 2>&1
grep -qP '^runtime\t\d+\t__cudaLaunchKernel_v13000\tcudaLaunchKernel\*$' "$T/apis" && grep -qP '\t__cudaLaunchKernel_ptsz_v13000\t' "$T/apis" &&
	ok "the default APIs hook CUDA 13's <<<>>> launches (__cudaLaunchKernel_v13000, _ptsz)" || no "CUDA 13 launches" "$T/apis"
"$CS" run --list-apis --apis 'cudaGraphLaunch,cuMemcpyHtoD*,*Malloc*' >"$T/apis" 2>&1
grep -q 'cudaGraphLaunch_v10000' "$T/apis" && grep -q 'cuMemcpyHtoDAsync_v2' "$T/apis" && grep -q 'cudaMallocManaged' "$T/apis" &&
	ok "graph, HtoD and *Malloc* patterns resolve" || no "more patterns" "$T/apis"
"$CS" run --list-apis --apis 'cudaNoSuchCall*' >"$T/out" 2>&1
[ $? -eq 1 ] && grep -q 'matches no runtime or driver callback' "$T/out" && ok "a pattern matching nothing is refused" || no "empty pattern" "$T/out"

# --- cyclescope run ---
"$CS" run $NOCHECK --db "$T/r.db" -- sh -c 'exit 7'
[ $? -eq 7 ] && ok "run exits with the job's status" || no "exit status"
"$CS" run $NOCHECK --db "$T/r.db" --metrics @hopper-l2 --apis 'cudaMemcpy*' --kernels '*gemm*' --nvtx \
	--interval-ns 50000 --buffer-mb 64 --mode window --name job --devices 0 -- \
	sh -c 'env' >"$T/env" 2>&1
grep -q "^CUDA_INJECTION64_PATH=/.*libcyclescope_collector.so$" "$T/env" &&
	grep -q '^CYCLESCOPE_METRICS=lts__t_sectors.sum,lts__t_sectors_srcunit_tex.sum,' "$T/env" &&
	grep -q '^CYCLESCOPE_OUTPUT=db$' "$T/env" && grep -q "^CYCLESCOPE_DB=$T/r.db$" "$T/env" &&
	grep -q '^CYCLESCOPE_MODE=window$' "$T/env" && grep -q '^CYCLESCOPE_INTERVAL_NS=50000$' "$T/env" &&
	grep -q '^CYCLESCOPE_KERNELS=\*gemm\*$' "$T/env" && grep -q '^NVTX_INJECTION64_PATH=/.*libcupti.so' "$T/env" &&
	ok "run hands its settings and the injection paths to the job" || no "run environment" "$T/env"
sh -c "cd '$T' && '$PWD/$CS' run $NOCHECK -- sh -c 'echo \$CYCLESCOPE_DB \$CYCLESCOPE_OUTPUT'" >"$T/out" 2>&1
grep -q "^$T/cyclescope.db auto$" "$T/out" && ok "without --db: the default database as an absolute path, daemon first" || no "default output" "$T/out"
"$CS" run $NOCHECK --db "$T/r.db" -- /no/such/program >"$T/out" 2>&1
[ $? -eq 127 ] && grep -q "cannot run '/no/such/program'" "$T/out" && ok "a missing program exits 127" || no "missing program" "$T/out"
"$CS" run --mode sometimes -- true >"$T/out" 2>&1
[ $? -eq 2 ] && grep -q 'continuous, window or armed' "$T/out" && ok "a bad --mode is a usage error" || no "bad mode" "$T/out"
"$CS" run --armed --db "$T/r.db" -- true >"$T/out" 2>&1
[ $? -eq 2 ] && grep -q 'armed takes its commands from a daemon' "$T/out" && ok "--armed with --db is a usage error" || no "armed with db" "$T/out"
"$CS" run --ranges sometimes -- true >"$T/out" 2>&1
[ $? -eq 2 ] && grep -q 'always or in-windows' "$T/out" && ok "a bad --ranges is a usage error" || no "bad ranges" "$T/out"
"$CS" run --interval-ns 0 -- true >"$T/out" 2>&1
[ $? -eq 2 ] && ok "--interval-ns 0 is a usage error" || no "interval 0" "$T/out"
"$CS" run -- >"$T/out" 2>&1
[ $? -eq 2 ] && grep -q 'expected -- CMD' "$T/out" && ok "no command is a usage error" || no "no command" "$T/out"

# --- injection without a driver ---
"$B/tests/inject" "$LIB" >"$T/out" 2>"$T/err"
rc=$?
[ $rc -eq 0 ] && [ "$(cat "$T/out")" = "InitializeInjection=1,1" ] && [ "$(wc -l <"$T/err")" -eq 1 ] &&
	grep -q 'collector: CUPTI is not usable here.*no NVIDIA driver' "$T/err" &&
	ok "InitializeInjection with no driver returns 1 with one stderr line" || no "injection without a driver (rc $rc)" "$T/err"
CYCLESCOPE_DEVICES=zero "$B/tests/inject" "$LIB" >"$T/out" 2>"$T/err"
[ "$(wc -l <"$T/err")" -eq 1 ] && grep -q "CYCLESCOPE_DEVICES='zero'" "$T/err" && ok "a bad setting is one line too" || no "bad setting" "$T/err"

# --- the pipeline end to end with the replay source ---
awk 'BEGIN { print "metrics lts__t_sectors.sum,lts__t_sectors_srcunit_tex.sum,dram__bytes_read.sum"
	t = 1700000000000000000; k = 0
	for (b = 0; b < 20; b++) {
		print (b == 7 ? "batch overflows=1 lost=2" : "batch")
		for (j = 0; j < 500; j++) {
			printf "%.0f %.0f %d %d %s\n", t, t + 10000, k * 10, k * 7, (k % 50 == 0 ? "nan" : k * 64)
			t += 10000; k++ } } }' >"$T/rec"
"$B/tests/replay_run" --db "$T/p.db" --devices 2 --name direct "$T/rec" >"$T/out" 2>&1 &&
	grep -q 'samples=19998 dropped=4 overflows=2 ranges=200 ranges_dropped=0 .*first_skipped=2 ' "$T/out" && ok "replay into a database file: every sample and range counted (the first after each start skipped)" || no "replay direct" "$T/out"
"$CS" query --db "$T/p.db" "SELECT samples, dropped, overflows, status, json_extract(meta,'$.pm_sampling[0].trigger') FROM runs" >"$T/out" 2>&1
grep -q '^19998,4,2,complete,gpu_time_interval' "$T/out" && ok "the run records samples, drops, overflows and the trigger mode" || no "run row" "$T/out"
"$CS" query --db "$T/p.db" "SELECT count(*), sum(value) FROM series WHERE run=1 AND device=1 AND metric='dram__bytes_read.sum'" >"$T/out" 2>&1
grep -q '^9800,3136000000' "$T/out" && ok "NaN samples are absent, the rest sum exactly" || no "series values" "$T/out"

SOCK="$T/s.sock"
"$CS" serve --db "$T/d.db" --socket "$SOCK" --listen 127.0.0.1:0 --log "$T/log" 2>"$T/stderr" &
DPID=$!
i=0
while [ $i -lt 2400 ] && ! grep -q 'http://' "$T/stderr" 2>/dev/null; do sleep 0.05; i=$((i + 1)); done
PORT=$(sed -n 's/^cyclescope serve:.*http:\/\/127\.0\.0\.1:\([0-9]*\)\/.*/\1/p' "$T/stderr" | head -n 1)
U="http://127.0.0.1:$PORT"
"$B/tests/replay_run" --socket "$SOCK" --name viadaemon "$T/rec" >"$T/out" 2>&1 &&
	grep -q 'samples=9999 dropped=2' "$T/out" && ok "replay through the daemon's socket" || no "replay via daemon" "$T/out"
i=0
while [ $i -lt 100 ] && ! get "$U/api/v1/runs?name=viadaemon" | grep -q '"status":"complete"'; do sleep 0.05; i=$((i + 1)); done
get "$U/api/v1/runs/viadaemon/series.csv?metric=lts__t_sectors.sum,dram__bytes_read.sum" -o "$T/s.csv"
[ "$(wc -l <"$T/s.csv")" -eq 10000 ] && head -n 1 "$T/s.csv" | tr -d '\r' | grep -q '^t0,t1,lts__t_sectors.sum,dram__bytes_read.sum$' &&
	ok "curl gets the 9999 samples back as CSV" || no "series.csv via daemon" "$T/s.csv"
get "$U/api/v1/runs/viadaemon/ranges.csv" -o "$T/r.csv"
grep -c 'memcpy HtoD' "$T/r.csv" | grep -q '^50$' && grep -q '1048576' "$T/r.csv" && ok "API and device ranges arrive, copies with bytes" || no "ranges via daemon" "$T/r.csv"
"$B/tests/replay_run" --socket "$SOCK" --name win --mode window "$T/rec" >"$T/out" 2>&1 &&
	grep -q 'windows=1' "$T/out" && ok "window mode through the daemon records the window" || no "window mode" "$T/out"
# Bad records through the socket: before, the daemon refused the whole
# connection at the first backward sample and the run stayed incomplete.
awk 'BEGIN { print "metrics lts__t_sectors.sum,lts__t_sectors_srcunit_tex.sum,dram__bytes_read.sum"
	print "batch"; t = 1000000000000  
	for (i = 0; i < 300; i++) {
		a = t + i * 10000; b = a + 10000
		if (i == 50) b = a - 5          # ends before it starts
		if (i == 100) a -= 3000000      # stamped backwards
		if (i == 150) b = a             # zero-length
		if (i >= 200 && i < 203) continue  # a gap of 3 samples
		printf "%.0f %.0f 1 1 1\n", a, b } }' >"$T/bad.rec"
"$B/tests/replay_run" --socket "$SOCK" --name badrecs "$T/bad.rec" >"$T/out" 2>&1
i=0
while [ $i -lt 100 ] && ! get "$U/api/v1/runs?name=badrecs" | grep -q '"status":"complete"'; do sleep 0.05; i=$((i + 1)); done
"$CS" query --db "$T/d.db" "SELECT status, samples, bad_records, empty_samples, overflows FROM runs WHERE name='badrecs'" >"$T/q" 2>&1
# 297 written; bad 2, empty 1, the first skipped: 293 stored; 3 missing
tr -d '\r' <"$T/q" | grep -q '^complete,293,2,1,3$' && ok "bad samples through the socket: dropped alone and counted, the run complete" || no "bad records via daemon" "$T/q"

# A daemon that stops reading: the application's exit is bounded (close
# waits --close-ms, sends time out), nothing is freed under the sender.
python3 -c '
import socket, os, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(sys.argv[1]); s.listen(1)
c, _ = s.accept()
c.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
time.sleep(30)' "$T/stuck.sock" &
SPID=$!
i=0; while [ $i -lt 100 ] && [ ! -S "$T/stuck.sock" ]; do sleep 0.05; i=$((i + 1)); done
start=$(date +%s)
timeout 25 "$B/tests/replay_run" --socket "$T/stuck.sock" --close-ms 500 --name stuck "$T/rec" >"$T/out" 2>&1
rc=$?
took=$(( $(date +%s) - start ))
kill $SPID 2>/dev/null; wait $SPID 2>/dev/null
[ $rc -ne 124 ] && [ $took -le 8 ] && grep -q 'did not finish within 500 ms\|no progress within the send timeout' "$T/out" &&
	ok "a daemon that stops reading: exit after ${took}s with the reason, no hang, no crash (rc $rc)" || no "stuck daemon (rc $rc, ${took}s)" "$T/out"

kill "$DPID"; wait "$DPID" 2>/dev/null; DPID=
"$CS" query --db "$T/d.db" "SELECT count(*) FROM ranges r JOIN runs u ON u.id = r.run WHERE u.name='win' AND r.kind='window' AND r.name='cudaMemcpy'" >"$T/out" 2>&1
tr -d '\r' <"$T/out" | grep -q '^1$' && ok "the window is a range named after the call that opened it" || no "window range" "$T/out"
# A context teardown mid-run: device 0 stopped, drained and started again.
awk 'BEGIN { print "metrics lts__t_sectors.sum,lts__t_sectors_srcunit_tex.sum,dram__bytes_read.sum"
	t = 1700000000000000000
	for (s = 0; s < 2; s++) { print "start"; print "batch"
		for (i = 0; i < 100; i++) printf "%.0f %.0f 1 2 3\n", t + (s * 1000 + i) * 10000, t + (s * 1000 + i + 1) * 10000 } }' >"$T/seg.rec"
"$B/tests/replay_run" --db "$T/park.db" --devices 2 --park --name park "$T/seg.rec" >"$T/out" 2>&1
"$CS" query --db "$T/park.db" "SELECT device, count(*), max(seq) FROM series WHERE metric='dram__bytes_read.sum' GROUP BY device" >"$T/q" 2>&1
tr -d '\r' <"$T/q" | tr '\n' ' ' | grep -q '0,198,197 1,99,98' && ok "a parked device is drained and resumes with its next samples; the other goes on" || no "park/resume" "$T/q"

# Nothing done, nothing recorded: no run, no file, and run says why.
printf 'metrics a\n' >"$T/empty.rec"
"$B/tests/replay_run" --db "$T/none.db" --no-ranges --status "$T/status" "$T/empty.rec" >"$T/out" 2>&1
[ ! -e "$T/none.db" ] && grep -q 'run_begun=0' "$T/out" && grep -qP '^pid=\d+\tstatus=none\treason=no GPU work was replayed$' "$T/status" &&
	ok "no GPU work: no run and no database file, a status line says why" || no "no work, no run" "$T/status"
"$B/tests/replay_run" --db "$T/one.db" --status "$T/status2" --name st "$T/rec" >"$T/out" 2>&1
grep -qP '^pid=\d+\tstatus=recorded\trun=run 1\twhere=.*one\.db\tsamples=9999\tdropped=2\t' "$T/status2" &&
	ok "a recorded run leaves its status line" || no "status line" "$T/status2"
"$CS" run $NOCHECK --db "$T/true.db" -- true >"$T/out" 2>&1
[ $? -eq 0 ] && [ ! -e "$T/true.db" ] && grep -q '^cyclescope run: no run recorded: .*the collector was not loaded' "$T/out" &&
	ok "run -- true says that no run was recorded and why" || no "run -- true" "$T/out"
"$CS" run $NOCHECK --db "$T/true.db" -- "$B/tests/inject" "$LIB" >"$T/out" 2>&1
grep -q '^cyclescope run: pid [0-9]*: no run recorded: CUPTI is not usable here' "$T/out" && [ ! -e "$T/true.db" ] &&
	ok "run with the collector loaded but no driver: the reason, no file" || no "run, no driver" "$T/out"
CYCLESCOPE_METRICS='a b c d e f g h' "$B/tests/inject" "$LIB" >/dev/null 2>"$T/err"
[ $? -eq 0 ] && ok "space-separated metrics in CYCLESCOPE_METRICS do not break the injection" || no "metric words" "$T/err"

# --- job and rank from a launcher's environment, into the run's metadata ---
# (the test source: no GPU; each run is a new file)
jr() { # DB ENV...: job|rank of the run the collector records with ENV
	db=$1
	shift
	env CYCLESCOPE_SOURCE=test CYCLESCOPE_OUTPUT=db CYCLESCOPE_DB="$db" "$@" "$B/tests/inject" "$LIB" 1 >/dev/null 2>>"$T/jr.err"
	python3 -c "import sqlite3, json, sys
m = json.loads(sqlite3.connect(sys.argv[1]).execute('SELECT meta FROM runs').fetchone()[0])
l = m.get('labels', {})
print(l.get('job', '-') + '|' + l.get('rank', '-'))" "$db" 2>>"$T/jr.err"
}
[ "$(jr "$T/jr1.db" SLURM_JOB_ID=77 SLURM_PROCID=5)" = "77|5" ] &&
	[ "$(jr "$T/jr2.db" RANK=3)" = "-|3" ] &&
	[ "$(jr "$T/jr3.db" CYCLESCOPE_JOB=mine CYCLESCOPE_RANK=1 TORCHELASTIC_RUN_ID=x RANK=9)" = "mine|1" ] &&
	[ "$(jr "$T/jr4.db")" = "-|-" ] &&
	ok "job and rank come from the launcher's environment (Slurm, torchrun, --job/--rank first; a rank without a job kept)" ||
	no "job and rank in the run's metadata" "$T/jr.err"
exit $fails
