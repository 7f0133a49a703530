#!/bin/sh
# Jobs of many ranks: PyTorch profiler trace import in events per second
# (a 450k-event trace in Kineto's layout, tests/tools/mkkineto.py), and
# `phases --job` over 64 ranks x 10,000 collectives (each rank's NCCL
# kernels and GEMMs given as ranges), its time and peak memory. Best and
# median of 3.
#   sh tests/bench/bench_jobs.sh BUILD_DIR WORK_DIR
B=${1:-build}
W=${2:-$B/bench}
CS="$B/cyclescope"
mkdir -p "$W"
fig() { [ -n "$BENCH_FIGURES" ] && echo "$*" >>"$BENCH_FIGURES"; return 0; }
# three runs of CMD...: "best median" of wall seconds, and the largest
# peak RSS in MB in $W/rss
three() {
	: >"$W/times"
	for i in 1 2 3; do
		/usr/bin/time -f "%e %M" -o "$W/t1" "$@" >/dev/null 2>&1
		cat "$W/t1" >>"$W/times"
	done
	sort -n "$W/times" | awk '{ t[NR] = $1; if ($2 > m) m = $2 } END { printf "%s %s\n", t[1], t[2]; printf "%.1f\n", m / 1024 > "'"$W/rss"'" }'
}

echo "== PyTorch profiler trace import (best / median of 3)"
python3 tests/tools/mkkineto.py "$W/kineto" --ranks 1 --steps 40000
K=$(ls "$W"/kineto/*.pt.trace.json)
events=$(python3 -c "import json, sys; print(len(json.load(open(sys.argv[1]))['traceEvents']))" "$K")
set -- $(three sh -c "rm -f '$W/k.db'*; '$CS' import kineto '$K' --db '$W/k.db'")
best=$(awk -v e="$events" -v t="$1" 'BEGIN { printf "%.0f", e / t }')
med=$(awk -v e="$events" -v t="$2" 'BEGIN { printf "%.0f", e / t }')
printf '%d events, %.1f MB: %s s best, %s s median: %s events/s best, %s median\n' "$events" \
	"$(stat -c %s "$K" | awk '{ print $1 / 1e6 }')" "$1" "$2" "$best" "$med"
fig "import.kineto.events_per_s" "$best" "$med" events/s ">=1000000"
rm -rf "$W/kineto" "$W/k.db"*

echo "== phases --job, 64 ranks x 10,000 collectives (best / median of 3)"
python3 - "$W/job" <<'PY'
import os, random, sys
out = sys.argv[1]
os.makedirs(out, exist_ok=True)
rnd = random.Random(3)
R, N = 64, 10000
# each step: a GEMM, then an AllReduce all ranks finish together
late = [rnd.randrange(R) for _ in range(N)]
arrive = [[rnd.randrange(0, 20000) + (60000 if late[i] == r else 0) for r in range(R)] for i in range(N)]
for r in range(R):
    with open("%s/r%d.ranges.csv" % (out, r), "w") as f:
        f.write("kind,name,t0,t1,device,stream\n")
        t = 1_000_000_000 + r * 1000  # clocks a microsecond apart
        for i in range(N):
            s = t + i * 1_000_000
            f.write("kernel,sm90_xmma_gemm_bf16bf16_bf16f32,%d,%d,%d,7\n" % (s, s + 600_000, r))
            a = s + 500_000 + arrive[i][r]
            e = s + 500_000 + max(arrive[i]) + 300_000
            f.write("kernel,ncclDevKernel_AllReduce_Sum_bf16_RING_LL,%d,%d,%d,21\n" % (a, e, r))
    with open("%s/r%d.csv" % (out, r), "w") as f:
        f.write("t0,t1,sm__cycles_active.avg\n%d,%d,1\n" % (1_000_000_000, 1_000_000_100))
PY
rm -f "$W/job.db"*
for r in $(seq 0 63); do
	"$CS" import csv "$W/job/r$r.csv" --ranges "$W/job/r$r.ranges.csv" --db "$W/job.db" \
		--job scale --rank "$r" >/dev/null 2>&1 || echo "import of rank $r failed"
done
set -- $(three "$CS" phases --job scale --a 'kernel:nccl*' --b '*gemm*' --align collectives \
	--db "$W/job.db")
rss=$(cat "$W/rss")
printf 'phases --job: %s s best, %s s median, peak %s MB\n' "$1" "$2" "$rss"
fig "jobs.phases_64x10000" "$1" "$2" s "<=2"
fig "jobs.phases_64x10000_peak" "$rss" "$rss" MB "<=500"
[ -n "$BENCH_KEEP" ] || rm -rf "$W/job" "$W/job.db"* "$W/times" "$W/t1" "$W/rss"
