#!/bin/sh
# After run.sh, on the same GPU machine: what other tools say beside the
# collector. Informational rows, plus checks where the truth is known.
#
#   sh oracles.sh OUTDIR [PACKDIR]    (OUTDIR: run.sh's, with truth.out)
#
#   ncu      Nsight Compute on the truth workload, an oracle independent of
#            the collector for DRAM bytes, instructions and CTAs; its CSV
#            is imported with `cyclescope import ncu-csv` too
#   clocks   nvidia-smi's SM and memory clocks, power and utilisation
#            every 10 ms beside the streaming workload alone and sampled:
#            does PM sampling change the clocks?
#   torch    a bf16 GEMM loop (gemm.py) alone, under the collector, and
#            under the collector with torch.profiler recording too (do two
#            CUPTI clients coexist?), and torch.profiler alone
#
# Needs python3 for the summaries (the GPU image's, where torch is); a
# missing ncu, nvidia-smi or torch makes its rows read "skipped (...)".
# Writes OUTDIR/oracles/ and appends to OUTDIR/table.txt; with PACKDIR,
# also PACKDIR/oracles.txt and PACKDIR/recording.tar.xz (OUTDIR whole,
# at most 16 MB). Bounded by ORACLES_BUDGET seconds (default 150).
set -u
START=$(date +%s)
BUDGET=${ORACLES_BUDGET:-150}
D=$(cd "$(dirname "$0")" && pwd)
[ -x "$D/bin/cyclescope" ] || D=$(cd "$D/../../build/gpu-bundle" 2>/dev/null && pwd)
OUT=${1:?usage: oracles.sh OUTDIR [PACKDIR]}
OUT=$(cd "$OUT" && pwd) || exit 2
PACK=${2:-}
CS=$D/bin/cyclescope
W=$D/workloads
O=$OUT/oracles
mkdir -p "$O"
chmod +x "$D"/bin/* "$D"/workloads/* 2>/dev/null
: >"$O/table.txt"
row() { printf '%-46s %-66s %s\n' "$1" "$2" "$3" | tee -a "$O/table.txt"; }
left() { echo $((BUDGET - ($(date +%s) - START))); }
bounded() { # SECONDS CMD...
	t=$1
	shift
	l=$(($(left) - 5))
	[ "$l" -lt "$t" ] && t=$l
	[ "$t" -ge 5 ] || return 124
	echo "+ [${t}s] $*" >>"$O/run.log"
	# in the background and waited for: a signal to this shell then runs
	# its trap at once (a foreground child would hold it until it ends)
	timeout -k 5 "$t" "$@" &
	BPID=$!
	wait $BPID
	brc=$?
	BPID=
	return $brc
}
val() { sed -n "s/^$1=//p" "$2" 2>/dev/null | tail -n 1; }
PY=$(command -v python3 2>/dev/null)

pack() {
	[ -n "$PACK" ] || return 0
	mkdir -p "$PACK"
	cp "$O/table.txt" "$PACK/oracles.txt"
	# everything recorded, compressed; databases first to go if too big
	tar -C "$OUT" -cJf "$PACK/recording.tar.xz" . 2>/dev/null
	if [ "$(wc -c <"$PACK/recording.tar.xz")" -gt 16000000 ]; then
		tar -C "$OUT" -cJf "$PACK/recording.tar.xz" --exclude='fast.db*' --exclude='two-*.db' \
			--exclude='share*.db' . 2>/dev/null
	fi
}
trap pack EXIT
BPID=
trap '[ -n "$BPID" ] && kill -TERM "$BPID" 2>/dev/null; pack; trap - EXIT; exit 124' TERM INT HUP

echo "== oracles ($(date -u '+%H:%M:%SZ'))" | tee -a "$O/table.txt"

# ------------------------------------------------------------------ ncu
NCU=$(command -v ncu 2>/dev/null || ls /usr/local/cuda*/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -n 1)
NCU_M=dram__bytes_read.sum,dram__bytes_write.sum,sm__inst_executed.sum,sm__ctas_launched.sum,gpu__time_duration.sum
if [ -z "$NCU" ]; then
	row "ncu: the truth workload" "no ncu on this machine" "skipped (no ncu)"
elif [ -z "$PY" ]; then
	row "ncu: the truth workload" "no python3 for the summary" "skipped (no python3)"
else
	CUDA_MODULE_LOADING=EAGER bounded 60 "$NCU" --csv --page raw --print-units base --metrics "$NCU_M" \
		--target-processes all --log-file "$O/ncu.csv" "$W/truth" all >"$O/ncu-truth.out" 2>"$O/ncu.err"
	rc=$?
	echo "$rc" >"$O/ncu.rc"
	# per kernel name and launch: the metrics; then the truth's sums
	"$PY" - "$O/ncu.csv" "$O/ncu-truth.out" "$W/truth.sass" "$OUT/measured.txt" >"$O/ncu-summary.txt" 2>&1 <<'EOF'
import csv, sys
rows = list(csv.reader(l for l in open(sys.argv[1]) if not l.startswith("==")))
head = rows[0]
data = [r for r in rows[1:] if len(r) == len(head) and r[head.index("Kernel Name")]]
data = [r for r in data if r[head.index("ID")].strip().isdigit()]  # the units row has none
def num(s):
    s = s.replace(",", "").strip()
    return float(s) if s and s not in ("n/a",) else 0.0
def col(r, m):
    return num(r[head.index(m)])
facts = {}
for f in sys.argv[2:]:
    try:
        for l in open(f):
            if "=" in l and not l.startswith(("event ", "phase ", "#")):
                k, v = l.strip().split("=", 1)
                facts[k] = v
    except OSError:
        pass
name = lambda r: r[head.index("Kernel Name")].split("(")[0].strip()
stream = [r for r in data if name(r) == "truth_stream"]
fma = [r for r in data if name(r) == "truth_fma"]
fma3 = fma[1:4]
sd = sum(col(r, "dram__bytes_read.sum") + col(r, "dram__bytes_write.sum") for r in stream)
foot = float(facts.get("stream_bytes_read", 0)) + float(facts.get("stream_bytes_written", 0))
inst = sum(col(r, "sm__inst_executed.sum") for r in fma3)
ctas = sum(col(r, "sm__ctas_launched.sum") for r in fma3)
loop = float(facts.get("loop_insts", 515)); stat = float(facts.get("static_insts", 560))
w = float(facts.get("fma_warps", 0)); it = float(facts.get("fma_iters", 0))
lo = w * it * loop; hi = w * (it * loop + stat - loop)
print(f"kernels={len(data)} stream={len(stream)} fma={len(fma)}")
print(f"stream_dram={sd:.0f} footprint={foot:.0f} ratio={sd / foot if foot else 0:.4f}")
print(f"fma3_inst={inst:.0f} sass_lo={lo:.0f} sass_hi={hi:.0f} ratio={inst / lo if lo else 0:.4f} hi_ratio={hi / lo if lo else 0:.4f}")
print(f"fma3_ctas={ctas:.0f} want={facts.get('fma_ctas', 0)} ratio={ctas / float(facts.get('fma_ctas', 1) or 1):.4f}")
for k, mine in (("stream_dram", sd), ("fma3_inst", inst), ("fma3_ctas", ctas)):
    c = facts.get("collector_" + k)
    if c:
        print(f"collector_vs_ncu_{k}={float(c) / mine if mine else 0:.4f}")
EOF
	s=$O/ncu-summary.txt
	if [ "$(val kernels "$s")" = "" ]; then
		row "ncu: the truth workload" "exit $rc: $(grep -m 1 -i 'error' "$O/ncu.err" "$O/ncu.csv" 2>/dev/null | cut -c1-50)" "FAIL"
	else
		ck() { awk -v r="$1" -v lo="$2" -v hi="$3" 'BEGIN { exit !(r + 0 >= lo && r + 0 <= hi) }' && echo ok || echo FAIL; }
		line=$(grep '^stream_dram=' "$s")
		r=$(echo "$line" | sed 's/.*ratio=//')
		row "ncu: DRAM bytes, stream kernels / footprint" "$r ($(val kernels "$s") kernels profiled, exit $rc)" "$(ck "$r" 0.98 1.04)"
		line=$(grep '^fma3_inst=' "$s")
		r=$(echo "$line" | sed 's/.*ratio=\([0-9.]*\) .*/\1/')
		h=$(echo "$line" | sed 's/.*hi_ratio=//')
		row "ncu: instructions, truth_fma x3 / SASS count" "$r (SASS bounds 1..$h)" "$(ck "$r" 0.97 "$(awk -v h="$h" 'BEGIN { print h * 1.03 }')")"
		r=$(grep '^fma3_ctas=' "$s" | sed 's/.*ratio=//')
		row "ncu: CTAs launched, truth_fma x3" "$r" "$(ck "$r" 0.999 1.001)"
		row "collector / ncu: DRAM, instructions, CTAs" "$(val collector_vs_ncu_stream_dram "$s"), $(val collector_vs_ncu_fma3_inst "$s"), $(val collector_vs_ncu_fma3_ctas "$s")" "info"
		"$CS" import ncu-csv "$O/ncu.csv" --db "$O/ncu.db" --name ncu-truth >"$O/ncu-import.txt" 2>&1
		irc=$?
		n=$("$CS" query --db "$O/ncu.db" "SELECT count(DISTINCT name) || ' names, ' || count(*) || ' kernel ranges' FROM ranges WHERE kind = 'kernel'" 2>/dev/null | tail -n 1 | tr -d '\r"')
		[ $irc -eq 0 ] && r=ok || r=FAIL
		row "cyclescope import ncu-csv of ncu's CSV" "exit $irc, ${n:-none}" "$r"
	fi
fi
pack

# --------------------------------------------------------------- clocks
# clocks NAME CMD...: nvidia-smi every 10 ms while CMD runs
clocks() {
	n=$1
	shift
	nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,utilization.gpu,$REASONS \
		--format=csv,noheader,nounits -lms 10 >"$O/clocks-$n.csv" 2>&1 &
	p=$!
	sleep 1
	"$@" >"$O/clocks-$n.out" 2>"$O/clocks-$n.err"
	echo $? >"$O/clocks-$n.rc"
	sleep 0.3
	kill "$p" 2>/dev/null
	wait "$p" 2>/dev/null
}
clock_row() { # NAME: SM and memory clocks, power while the GPU is busy
	"$PY" - "$O/clocks-$1.csv" <<'EOF'
import csv, statistics, sys
busy = []
for r in csv.reader(open(sys.argv[1])):
    try:
        sm, mem, pw, util = float(r[1]), float(r[2]), float(r[3]), float(r[4])
    except (ValueError, IndexError):
        continue
    if util >= 50:
        busy.append((sm, mem, pw, r[5].strip() if len(r) > 5 else ""))
if not busy:
    print("no busy samples")
else:
    sm = [b[0] for b in busy]; mem = [b[1] for b in busy]; pw = [b[2] for b in busy]
    reasons = sorted({b[3] for b in busy})
    print(f"{len(busy)} busy: SM {min(sm):.0f}/{statistics.median(sm):.0f}/{max(sm):.0f} MHz, "
          f"mem {statistics.median(mem):.0f} MHz, {statistics.median(pw):.0f} W, reasons {','.join(reasons)[:20]}")
EOF
}
if ! command -v nvidia-smi >/dev/null 2>&1 || [ -z "$PY" ]; then
	row "clocks beside PM sampling" "no nvidia-smi or python3" "skipped (no nvidia-smi)"
else
	REASONS=clocks_event_reasons.active
	nvidia-smi --query-gpu=$REASONS --format=csv >/dev/null 2>&1 || REASONS=clocks_throttle_reasons.active
	clocks plain bounded 30 "$W/truth" stream 2000
	clocks sampled bounded 30 "$CS" run --db "$O/clocks-sampled.db" --name clocks-sampled \
		--metrics dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum,gr__cycles_elapsed.max \
		-- "$W/truth" stream 2000
	row "clocks, truth stream alone (min/med/max)" "$(clock_row plain)" "info"
	row "clocks, truth stream sampled at 100 us" "$(clock_row sampled)" "info"
	cyc=$("$CS" query --db "$O/clocks-sampled.db" "SELECT round(sum(s.value) / (sum(t.value) / 1e3)) FROM series s JOIN series t ON t.run = s.run AND t.seq = s.seq AND t.device = s.device AND t.metric = 'gpu__time_duration.sum' WHERE s.run = 1 AND s.metric = 'gr__cycles_elapsed.max' AND t.value > 0" 2>/dev/null | tail -n 1 | tr -d '\r')
	row "  GR clock seen by the samples" "${cyc:-none} MHz (gr__cycles_elapsed.max / gpu__time_duration.sum)" "info"
fi
pack

# ----------------------------------------------------- the default set
# @general (cyclescope run's default) holds device-level metrics (PCIe,
# NVLink) that a GPU's counter-availability image may refuse: dropped
# (the default) or the set configured against the empty image (none)
for mode in drop none; do
	CYCLESCOPE_UNAVAILABLE=$mode CYCLESCOPE_LOG=info bounded 30 "$CS" run --db "$O/general-$mode.db" \
		--name "general-$mode" -- "$W/truth" stream 40 >"$O/general-$mode.out" 2>"$O/general-$mode.err"
	rc=$?
	n=$("$CS" query --db "$O/general-$mode.db" "SELECT samples FROM runs WHERE id = 1" 2>/dev/null | tail -n 1 | tr -d '\r')
	e=$(grep -m 1 -E 'not available|refuses|ERROR|no samples' "$O/general-$mode.err" | sed 's/^.*device 0: //' | cut -c1-40)
	row "@general, unavailable metrics: $mode" "exit $rc, ${n:-no} samples${e:+; $e}" "info"
done
pack

# ---------------------------------------------------------------- torch
if [ -z "$PY" ] || ! "$PY" -c 'import torch' >/dev/null 2>&1; then
	row "torch: bf16 GEMM loop" "no python3 with torch" "skipped (no torch)"
else
	G=$D/workloads/gemm.py
	[ -f "$G" ] || G=$(dirname "$0")/gemm.py
	bounded 90 "$PY" "$G" alone >"$O/torch-plain.out" 2>"$O/torch-plain.err"
	echo $? >"$O/torch-plain.rc"
	CYCLESCOPE_LOG=info bounded 90 "$CS" run --db "$O/torch-alone.db" --name torch-alone \
		-- "$PY" "$G" alone >"$O/torch-alone.out" 2>"$O/torch-alone.err"
	echo $? >"$O/torch-alone.rc"
	CYCLESCOPE_LOG=info bounded 90 "$CS" run --db "$O/torch-prof.db" --name torch-prof \
		-- "$PY" "$G" profiler "$O/torch-trace.json" >"$O/torch-prof.out" 2>"$O/torch-prof.err"
	echo $? >"$O/torch-prof.rc"
	if [ "${ORACLES_PROFILER_ALONE:-1}" = 1 ]; then
		bounded 90 "$PY" "$G" profiler "$O/torch-trace-alone.json" >"$O/torch-profonly.out" 2>"$O/torch-profonly.err"
		echo $? >"$O/torch-profonly.rc"
	fi
	# a small set with the tensor pipes: what a GEMM's samples show
	CYCLESCOPE_LOG=info bounded 90 "$CS" run --db "$O/torch-small.db" --name torch-small \
		--metrics sm__pipe_tensor_cycles_active_realtime.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum \
		-- "$PY" "$G" alone >"$O/torch-small.out" 2>"$O/torch-small.err"
	echo $? >"$O/torch-small.rc"
	for n in plain alone prof profonly small; do
		[ -f "$O/torch-$n.rc" ] || continue
		smp=
		[ -f "$O/torch-$n.db" ] && smp=", $("$CS" query --db "$O/torch-$n.db" "SELECT samples || ' samples, ' || (SELECT count(*) FROM ranges WHERE run = 1 AND kind = 'kernel') || ' kernels' FROM runs WHERE id = 1" 2>/dev/null | tail -n 1 | tr -d '\r"')"
		ev=$(val kernel_events "$O/torch-$n.out")
		err=$(grep -m 1 -E 'error|warning|CUPTI_ERROR' "$O/torch-$n.err" 2>/dev/null | sed 's/^.*collector: //; s/^.*failed with error //' | cut -c1-44)
		row "torch $n" "exit $(cat "$O/torch-$n.rc"), $(val tflops "$O/torch-$n.out" | sed 's/$/ TFLOP\/s/')$smp${ev:+, trace kernels $ev}${err:+; $err}" "info"
	done
	gzip -9 -f "$O"/torch-trace*.json 2>/dev/null
fi
pack
echo "== oracles done in $(($(date +%s) - START)) s; output in $O"
