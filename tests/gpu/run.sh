#!/bin/sh
# The collector on a real GPU, checked against known truth, in one call of
# a few minutes on a machine that has only a driver, a POSIX shell and
# coreutils: everything it runs comes from the bundle this script sits in
# (`make gpu-bundle` -> build/gpu-bundle/, tests/gpu/README.md).
#
#   sh run.sh [OUTDIR [PACKDIR]]   (from the bundle, or: sh BUNDLE/run.sh OUTDIR)
#
# PACKDIR, when given, gets at most 8 files of at most 16 MiB (what a
# remote runner returns): table.txt, logs.txt (every text file of OUTDIR,
# each under a '==> NAME <==' header) and the run databases that fit.
#
# Prints one table (check, measured, verdict) on stdout and writes the run
# databases, the workloads' output, the collector's logs and the probe's
# output to OUTDIR (a temporary directory when not given). Exit status 0
# only when every check passes; 1 when a check fails; 2 when the
# environment is not fit and nothing else failed: a preflight row says why
# and every later check reads "skipped (preflight)", or the collector said
# it could not sample (counters busy, privileges: "FAIL (env)", and the
# checks that need samples read "skipped (env)"), or the workload fails
# without the collector.
#
# Steps, each bounded with timeout(1), all within GPU_CHECK_BUDGET seconds
# (default 330):
#   preflight  driver >= 580 (CUDA 13.0), the GPU, counter permissions,
#              other profilers, the bundle's libraries resolve, the CUDA
#              runtime sees the GPU, the metric set fits one pass
#   probe      workloads/pm_probe (CUPTI PM sampling without cyclescope),
#              informational only: probe*.txt
#   checks     workloads/truth (tests/gpu/truth.cu: exact copies, an exact
#              DRAM footprint, a known instruction count, two streams, NVTX)
#              alone, under `cyclescope run` at 100 us and at 10 us, and a
#              streaming run at 1 us with a small buffer (overflow counted)
#
# Test seam: GPU_CHECK_REPLAY=DIR skips preflight, probe and runs, and
# checks DIR/{plain,truth,fast,tiny}.{out,db} instead (tests/gpu/fake.sh).
set -u
START=$(date +%s)
BUDGET=${GPU_CHECK_BUDGET:-330}

D=$(cd "$(dirname "$0")" && pwd)
if [ ! -x "$D/bin/cyclescope" ]; then
	# tests/gpu/run.sh in the source tree: use the built bundle
	for c in "${GPU_BUNDLE:-}" "$D/../../build/gpu-bundle"; do
		[ -n "$c" ] && [ -x "$c/bin/cyclescope" ] && { D=$(cd "$c" && pwd); break; }
	done
fi
if [ ! -x "$D/bin/cyclescope" ]; then
	echo "run.sh: no bundle next to this script; build one with 'make gpu-bundle' and run build/gpu-bundle/run.sh" >&2
	exit 2
fi
OUT=${1:-$(mktemp -d)}
mkdir -p "$OUT" || exit 2
OUT=$(cd "$OUT" && pwd)
PACK=${2:-}
if [ -n "$PACK" ]; then
	mkdir -p "$PACK" || exit 2
	PACK=$(cd "$PACK" && pwd)
fi
pack() {
	[ -n "$PACK" ] || return 0
	cp "$OUT/table.txt" "$PACK/table.txt" 2>/dev/null
	(cd "$OUT" && for f in *; do
		case "$f" in *.db | *.db-wal | *.db-shm | table.txt) continue ;; esac
		[ -f "$f" ] && echo "$f"
	done | while read -r f; do
		echo "==> $f <=="
		head -c 2000000 "$f"
		echo
	done) >"$PACK/logs.txt"
	n=2
	for f in truth.db fast.db tiny.db truth.db-wal fast.db-wal tiny.db-wal; do
		[ -s "$OUT/$f" ] || continue
		if [ $n -ge 8 ] || [ "$(wc -c <"$OUT/$f")" -gt 16000000 ]; then
			echo "pack: $f left out ($(wc -c <"$OUT/$f") bytes)" >>"$PACK/logs.txt"
			continue
		fi
		cp "$OUT/$f" "$PACK/$f" && n=$((n + 1))
	done
}
trap pack EXIT
CS=$D/bin/cyclescope
W=$D/workloads
REPLAY=${GPU_CHECK_REPLAY:-}
: >"$OUT/run.log"

# The metric set of the checked runs: one pass on GH100 (preflight checks).
SET=pcie__read_bytes.sum,pcie__write_bytes.sum,dram__bytes_read.sum,dram__bytes_write.sum,sm__inst_executed.sum,sm__ctas_launched.sum,gpu__time_duration.sum,lts__t_bytes.sum,gr__cycles_elapsed.max
APIS='*cudaLaunchKernel*,cudaMemcpy,cudaMemset,cudaMalloc,cudaMallocHost,cudaDeviceSynchronize,cudaStreamSynchronize'
MIN_DRIVER=580
MARGIN=2000000 # ns each side of a phase's ranges; phases are 20 ms apart

fails=0
pre_fail=0
row() { printf '%-46s %-66s %s\n' "$1" "$2" "$3" | tee -a "$OUT/table.txt"; }
pass() { row "$1" "$2" "ok"; }
fail() { row "$1" "$2" "FAIL"; fails=$((fails + 1)); }
check() { # COND-EXIT-STATUS NAME MEASURED
	if [ "$1" -eq 0 ]; then pass "$2" "$3"; else fail "$2" "$3"; fi
}
info() { row "$1" "$2" "${3:-info}"; }
# scheck: a check that needs PM samples; when the collector said the
# environment kept it from sampling (ENVWHY), it is skipped, not failed
ENVWHY=
envskips=0
scheck() {
	if [ -n "$ENVWHY" ]; then
		row "$2" "$3" "skipped (env)"
		envskips=$((envskips + 1))
	else
		check "$@"
	fi
}
pre_ok() { row "preflight: $1" "$2" "ok"; }
pre_warn() { row "preflight: $1" "$2" "warn"; }
pre_bad() { row "preflight: $1" "$2" "FAIL (preflight)"; pre_fail=$((pre_fail + 1)); }
log() { echo "$*" >>"$OUT/run.log"; }
# first line of a file, for the measured column
first() { sed -n '/./{p;q;}' "$1" 2>/dev/null | cut -c1-56; }
left() { echo $((BUDGET - ($(date +%s) - START))); }
# bounded SECONDS CMD...: timeout(1), never past the budget
bounded() {
	t=$1
	shift
	l=$(($(left) - 5))
	[ "$l" -lt "$t" ] && t=$l
	if [ "$t" -lt 5 ]; then
		log "no time left for: $*"
		return 124
	fi
	log "+ [${t}s] $*"
	timeout -k 5 "$t" "$@"
}
now_ms() { echo $(($(date +%s%N) / 1000000)); }
# q DB SQL: rows without the header, CR stripped
# (the header record can span lines: a column named after a multi-line
# expression is quoted)
q() {
	bounded 30 "$CS" query --db "$1" "$2" 2>>"$OUT/run.log" | tr -d '\r' |
		awk 'h { print; next } { c += gsub(/"/, "\""); if (c % 2 == 0) h = 1 }'
}
# ratio A B -> A/B with 4 decimals; within R LO HI
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b == 0 || a == "") print "inf"; else printf "%.4f", a / b }'; }
within() { awk -v r="$1" -v lo="$2" -v hi="$3" 'BEGIN { exit !(r != "inf" && r + 0 >= lo && r + 0 <= hi) }'; }
val() { sed -n "s/^$1=//p" "$2" | tail -n 1; } # KEY FILE
mib() { awk -v b="$1" 'BEGIN { printf "%.1f MiB", b / 1048576 }'; }
gib() { awk -v b="$1" 'BEGIN { printf "%.2f GiB", b / 1073741824 }'; }
num() { awk -v v="$1" 'BEGIN { printf "%.0f", v + 0 }'; }

# Sum of METRIC over the samples that intersect [min t0 - MARGIN, max t1 +
# MARGIN] of the ranges WHERE selects: a phase's traffic, whole samples.
win_sum() { # DB METRIC RANGE-WHERE
	v=$(q "$1" "WITH w AS (SELECT min(t0) - $MARGIN a, max(t1) + $MARGIN b FROM ranges WHERE run = 1 AND $3)
		SELECT coalesce(sum(s.value), 0) FROM series s, w WHERE s.run = 1 AND s.metric = '$2'
		AND s.t1 > w.a AND s.t0 < w.b")
	num "${v:-0}"
}
# Sample values weighted by their overlap with each range (in-range only).
in_sum() { # DB METRIC RANGE-WHERE
	v=$(q "$1" "SELECT coalesce(sum(s.value * (min(s.t1, r.t1) - max(s.t0, r.t0)) * 1.0 / (s.t1 - s.t0)), 0)
		FROM ranges r JOIN series s ON s.run = r.run AND s.metric = '$2'
		AND s.t1 > r.t0 AND s.t0 < r.t1 WHERE r.run = 1 AND s.t1 > s.t0 AND $3")
	num "${v:-0}"
}

# ---------------------------------------------------------------- preflight
CHECKS="workload runs without the collector|truth under the collector (100 us)|\
run row: complete, samples, trigger|no drops, no overflows at 10 kHz|\
timeline without gaps at 10 kHz|first kernel sampled from its start|\
PCIe bytes, H2D copy / bytes copied|PCIe bytes, D2H copy / bytes copied|\
DRAM bytes, stream kernels / footprint|instructions, truth_fma x3 / SASS count|\
CTAs launched, truth_fma x3|kernel ranges vs cudaEvent times|\
a kernel range per launch, joined to its call|copy ranges with bytes|NVTX ranges|\
two streams overlap|overhead (work time) at 100 us, 10 us|1 us, small buffer: losses are counted"
# skip_all WHY [FROM]: every check from the FROM-th on reads "skipped (WHY)"
skip_all() {
	echo "$CHECKS" | tr '|' '\n' | tail -n +"${2:-1}" | while IFS= read -r c; do
		row "$c" "-" "skipped ($1)"
	done
}

if [ -z "$REPLAY" ]; then
	echo "== preflight ($(date -u '+%Y-%m-%d %H:%M:%SZ'), bundle $D, output $OUT)" | tee -a "$OUT/run.log"
	ver=
	if [ -r /proc/driver/nvidia/version ]; then
		ver=$(sed -n '1p' /proc/driver/nvidia/version | tr ' \t' '\n\n' | grep -E '^[0-9]+\.[0-9]+(\.[0-9]+)?$' | head -n 1)
	elif command -v nvidia-smi >/dev/null 2>&1; then
		ver=$(bounded 20 nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -n 1)
	fi
	if [ -z "$ver" ]; then
		pre_bad "NVIDIA driver" "no NVIDIA driver (no /proc/driver/nvidia/version)"
	elif [ "${ver%%.*}" -lt "$MIN_DRIVER" ] 2>/dev/null; then
		pre_bad "NVIDIA driver" "$ver; CUDA 13.0 needs >= $MIN_DRIVER"
	else
		pre_ok "NVIDIA driver" "$ver (>= $MIN_DRIVER for CUDA 13.0)"
	fi
	if [ -n "$ver" ]; then
		if command -v nvidia-smi >/dev/null 2>&1; then
			bounded 20 nvidia-smi -L >"$OUT/nvidia-smi.txt" 2>&1
			bounded 20 nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv,noheader \
				>"$OUT/gpu-apps.txt" 2>&1
			pre_ok "GPU (nvidia-smi -L)" "$(first "$OUT/nvidia-smi.txt")"
			if [ -s "$OUT/gpu-apps.txt" ] && ! grep -qi 'no running' "$OUT/gpu-apps.txt"; then
				pre_warn "other processes on the GPU" "$(wc -l <"$OUT/gpu-apps.txt") (counters are device-wide): $(first "$OUT/gpu-apps.txt")"
			fi
		else
			row "preflight: GPU (nvidia-smi -L)" "nvidia-smi not installed" "info"
		fi
		admin=$(sed -n 's/^RmProfilingAdminOnly: *//p' /proc/driver/nvidia/params 2>/dev/null)
		uid=$(id -u)
		if [ "${admin:-}" = 1 ] && [ "$uid" -ne 0 ]; then
			pre_bad "counter permission" "RmProfilingAdminOnly=1 and not root: run as root or set NVreg_RestrictProfilingToAdminUsers=0"
		else
			pre_ok "counter permission" "RmProfilingAdminOnly=${admin:-?}, uid $uid$([ "$uid" -eq 0 ] && echo ' (root overrides)')"
		fi
	fi
	# Another profiler may hold the counters (PM sampling is one per GPU).
	prof=
	for c in /proc/[0-9]*/comm; do
		n=$(cat "$c" 2>/dev/null) || continue
		case "$n" in
		nv-hostengine | dcgm* | ncu | ncu-ui | nsys | nsys-launcher | nsight*) prof="$prof $n(${c#/proc/})" ;;
		esac
	done
	prof=$(echo "$prof" | sed 's|/comm||g; s/^ //')
	case "$prof" in
	"") pre_ok "no other profiler running" "no nv-hostengine/dcgm*/ncu/nsys process" ;;
	*ncu* | *nsys* | *nsight*) pre_bad "no other profiler running" "$prof" ;;
	*) pre_warn "no other profiler running" "$prof (DCGM profiling holds the counters: dcgmi profile --pause)" ;;
	esac
	# The bundle's own libraries (the driver's libcuda.so.1 aside, which
	# only the workloads and the probe load).
	lddf() { ldd "$1" 2>&1 || /lib64/ld-linux-x86-64.so.2 --list "$1" 2>&1; }
	: >"$OUT/ldd.txt"
	for f in "$D"/bin/* "$D"/lib/*.so* "$D"/lib/cyclescope/*.so "$W"/*; do
		[ -f "$f" ] && head -c 4 "$f" | grep -q ELF || continue
		echo "== $f" >>"$OUT/ldd.txt"
		lddf "$f" >>"$OUT/ldd.txt"
	done
	# libcuda.so.1 is the driver's: the driver row and 'CUDA runtime sees
	# the GPU' speak for it
	nf=$(grep 'not found' "$OUT/ldd.txt" | grep -vc 'libcuda\.so\.1 => not found')
	cupti=$(lddf "$D/lib/cyclescope/libcyclescope_collector.so" 2>/dev/null | sed -n 's/.*libcupti.so.13 => \([^ ]*\).*/\1/p')
	if [ "$nf" -ne 0 ]; then
		pre_bad "bundle libraries resolve" "$nf not found: $(grep 'not found' "$OUT/ldd.txt" | grep -v 'libcuda\.so\.1 =>' | head -n 1 | tr -s ' \t' ' ')"
	else
		case "$cupti" in
		"$D"/*) pre_ok "bundle libraries resolve" "all; libcupti from the bundle" ;;
		*) pre_bad "bundle libraries resolve" "libcupti.so.13 from '${cupti:-?}', not the bundle" ;;
		esac
	fi
	bounded 30 "$CS" metrics --chip GH100 --check "$SET" >"$OUT/set-check.txt" 2>&1
	if [ $? -eq 0 ]; then
		pre_ok "metric set fits one pass (GH100)" "$(sed -n 's/^hardware buffer: about \([0-9]*\) bytes per sample.*/\1 B\/sample/p' "$OUT/set-check.txt"), bundled libcupti host API"
	else
		pre_bad "metric set fits one pass (GH100)" "$(first "$OUT/set-check.txt")"
	fi
	if [ "$pre_fail" -eq 0 ]; then
		bounded 60 "$W/truth" info >"$OUT/info.txt" 2>&1
		rc=$?
		cc=$(val cc "$OUT/info.txt")
		if [ $rc -ne 0 ]; then
			pre_bad "CUDA runtime sees the GPU" "exit $rc: $(first "$OUT/info.txt")"
		elif [ "${cc%%.*}" != 9 ]; then
			pre_warn "CUDA runtime sees the GPU" "$(val gpu "$OUT/info.txt"), cc $cc: truth's SASS counts are for sm_90"
		else
			pre_ok "CUDA runtime sees the GPU" "$(val gpu "$OUT/info.txt"), $(val sms "$OUT/info.txt") SMs, cc $cc"
		fi
	fi
	if [ "$pre_fail" -ne 0 ]; then
		row "probe (workloads/pm_probe)" "-" "skipped (preflight)"
		skip_all preflight
		echo "== the environment is not fit for the GPU check ($pre_fail preflight row(s)); output in $OUT"
		exit 2
	fi

	# ------------------------------------------------------------ probe
	echo "== probe (informational)" | tee -a "$OUT/run.log"
	[ -x "$W/pm_probe" ] || info "probe (workloads/pm_probe)" "not in this bundle (pm_probe.cu was not found at build)"
	[ -x "$W/pm_probe" ] && for a in "100000 256" "10000 64"; do
		f=$OUT/probe-$(echo "$a" | tr ' ' '-').txt
		# shellcheck disable=SC2086
		bounded 40 "$W/pm_probe" $a >"$f" 2>&1
		rc=$?
		s=$(sed -n 's/^decodes=.*samples=\([0-9]*\).*/\1/p' "$f")
		o=$(sed -n 's/^decodes=[0-9]* overflows=\([0-9]*\).*/\1/p' "$f")
		k=$(sed -n 's/^kernel activity records=\([0-9]*\).*/\1/p' "$f")
		info "probe: pm_probe $a" "exit $rc, $(sed -n 's/^chip=//p' "$f") samples ${s:-?}, overflows ${o:-?}, kernels ${k:-?}"
	done
	cp "$OUT/probe-100000-256.txt" "$OUT/probe.txt" 2>/dev/null
fi

# ---------------------------------------------------------------- the runs
# run_truth NAME [cyclescope run options]: workloads/truth all, alone
# (no options) or under the collector; NAME.{out,err,db}, wall time in ms
# in NAME.wall.
run_truth() {
	n=$1
	lim=75
	[ "$n" = tiny ] && lim=60
	shift
	t0=$(now_ms)
	if [ "$1" = alone ]; then
		shift
		bounded 60 "$W/truth" "$@" >"$OUT/$n.out" 2>"$OUT/$n.err"
	else
		CYCLESCOPE_LOG=info bounded "$lim" "$CS" run --db "$OUT/$n.db" --name "$n" "$@" \
			>"$OUT/$n.out" 2>"$OUT/$n.err"
	fi
	rc=$?
	echo $(($(now_ms) - t0)) >"$OUT/$n.wall"
	return $rc
}
# Losses the collector reports itself, and why a run could not sample.
env_reason() { # ERRFILE
	grep -o -i -E "CUPTI is not usable[^;]*|counters are busy[^;]*|insufficient privileges[^;]*|PM sampling is not supported[^;]*|another CUPTI client[^;]*" "$1" 2>/dev/null | head -n 1
}

if [ -n "$REPLAY" ]; then
	for n in plain truth fast tiny; do
		cp "$REPLAY/$n.out" "$OUT/" 2>/dev/null
		cp "$REPLAY/$n.db" "$OUT/" 2>/dev/null
		cp "$REPLAY/$n.wall" "$OUT/" 2>/dev/null
		cp "$REPLAY/$n.err" "$OUT/" 2>/dev/null || : >"$OUT/$n.err"
	done
	rc_plain=0 rc_truth=0 rc_fast=0 rc_tiny=0
else
	echo "== checks" | tee -a "$OUT/run.log"
	run_truth plain alone all
	rc_plain=$?
	run_truth truth --metrics "$SET" --apis "$APIS" --nvtx -- "$W/truth" all
	rc_truth=$?
	run_truth fast --metrics "$SET" --apis "$APIS" --nvtx --interval-ns 10000 --buffer-mb 512 -- "$W/truth" all
	rc_fast=$?
	run_truth tiny --metrics @memory-io --interval-ns 1000 --buffer-mb 8 -- "$W/truth" stream 60
	rc_tiny=$?
fi

if [ "$rc_plain" -ne 0 ]; then
	row "workload runs without the collector" "exit $rc_plain: $(first "$OUT/plain.err")" "FAIL (env)"
	skip_all "workload fails alone" 2
	echo "== truth fails without the collector: a GPU, driver or bundle problem, not the collector's; see $OUT/plain.err"
	exit 2
fi
pass "workload runs without the collector" "work $(val work_ms "$OUT/plain.out") ms, process $(cat "$OUT/plain.wall") ms"

# ------------------------------------------------------- run 'truth' (100 us)
T=$OUT/truth.out
DB=$OUT/truth.db
why=$(env_reason "$OUT/truth.err")
if [ "$rc_truth" -ne 0 ]; then
	fail "truth under the collector (100 us)" "exit $rc_truth: $(tail -n 1 "$OUT/truth.err" | cut -c1-50)"
elif [ -n "$why" ]; then
	# not the collector's fault: the checks that need samples are skipped
	row "truth under the collector (100 us)" "$(echo "$why" | cut -c1-66)" "FAIL (env)"
	ENVWHY=$why
else
	pass "truth under the collector (100 us)" "exit 0, work $(val work_ms "$T") ms, process $(cat "$OUT/truth.wall") ms"
fi

v=$(q "$DB" "SELECT status || ' ' || samples || ' ' || dropped || ' ' || overflows || ' ' ||
	coalesce(json_extract(meta, '\$.pm_sampling[0].trigger'), '?') || ' ' ||
	coalesce(json_extract(meta, '\$.interval_ns'), '?') FROM runs WHERE id = 1")
set -- ${v:-none 0 ? ? ? ?}
[ "$1" = complete ] && [ "$2" -gt 0 ] 2>/dev/null && [ "$5" = gpu_time_interval ]
scheck $? "run row: complete, samples, trigger" "$1, $2 samples, $5, interval $6 ns"
IV=$6
[ "$IV" -gt 0 ] 2>/dev/null || IV=100000
[ "$3" = 0 ] && [ "$4" = 0 ]
scheck $? "no drops, no overflows at 10 kHz" "dropped $3, overflows $4"

# The sample timeline: count, span, and the time between samples.
tl() { # DB -> "count span_ns gaps_ns median_dt"
	q "$1" "WITH s AS (SELECT seq, t0, t1, lag(t1) OVER (ORDER BY t0) p FROM series
		WHERE run = 1 AND device = 0 AND metric = 'gpu__time_duration.sum')
		SELECT count(*), max(t1) - min(t0), coalesce(sum(CASE WHEN t0 - p > 0 THEN t0 - p END), 0),
		(SELECT t1 - t0 FROM s ORDER BY t1 - t0 LIMIT 1 OFFSET (SELECT count(*) / 2 FROM s)) FROM s" | tr ',' ' '
}
set -- $(tl "$DB") 0 0 0 0
n=$1 span=$2 gaps=$3 dt=$4
gr=$(ratio "$gaps" "$span")
within "$gr" 0 0.01 && [ "$n" -gt 0 ] 2>/dev/null
scheck $? "timeline without gaps at 10 kHz" "$n samples over $(awk -v s="$span" 'BEGIN { printf "%.1f", s / 1e6 }') ms, dt $dt ns, gaps $(awk -v r="$gr" 'BEGIN { printf "%.2f%%", r * 100 }')"

# --- SASS facts of truth_fma (bundle build: workloads/truth.sass) ---
S=$W/truth.sass
[ -n "$REPLAY" ] && [ -f "$REPLAY/truth.sass" ] && S=$REPLAY/truth.sass
loop=$(val loop_insts "$S")
stat=$(val static_insts "$S")
ffma=$(val loop_ffma "$S")
# expected instructions of NWARPS warps x ITERS iterations: [lo, hi]
inst_lo() { awk -v w="$1" -v i="$2" -v l="${loop:-${ffma:-512}}" 'BEGIN { printf "%.0f", w * i * l }'; }
inst_hi() { awk -v w="$1" -v i="$2" -v l="${loop:-${stat:-560}}" -v s="${stat:-560}" 'BEGIN { printf "%.0f", w * (i * l + s - l) }'; }

# --- first kernel: the process's first CUDA call ---
FIRST="kind = 'kernel' AND name = 'truth_fma' AND t0 = (SELECT min(t0) FROM ranges WHERE run = 1 AND kind = 'kernel')"
v=$(q "$DB" "SELECT (SELECT min(t0) FROM series WHERE run = 1 AND metric = 'gpu__time_duration.sum') - t0,
	t1 - t0 FROM ranges WHERE run = 1 AND $FIRST" | tr ',' ' ')
set -- ${v:-x x}
lead=$1 fdur=$2
fi_m=$(win_sum "$DB" sm__inst_executed.sum "$FIRST")
lo=$(inst_lo "$(val first_warps "$T")" "$(val first_iters "$T")")
hi=$(inst_hi "$(val first_warps "$T")" "$(val first_iters "$T")")
r=$(ratio "$fi_m" "$lo")
rh=$(ratio "$hi" "$lo")
[ "$lead" != x ] && [ "$lead" -le "$IV" ] 2>/dev/null && within "$r" 0.97 "$(awk -v h="$rh" 'BEGIN { print h * 1.03 }')"
scheck $? "first kernel sampled from its start" "first sample $(awk -v l="$lead" 'BEGIN { if (l == "x") print "?"; else printf "%+.3f", l / 1e6 }') ms from it; inst $r of SASS count"

# --- copies: PCIe bytes ---
for dir in HtoD DtoH; do
	w="kind = 'memcpy' AND name = 'memcpy $dir' AND bytes = $(val h2d_bytes "$T")"
	[ $dir = DtoH ] && w="kind = 'memcpy' AND name = 'memcpy $dir' AND bytes = $(val d2h_bytes "$T")"
	want=$(val h2d_bytes "$T")
	rd=$(win_sum "$DB" pcie__read_bytes.sum "$w")
	wr=$(win_sum "$DB" pcie__write_bytes.sum "$w")
	ird=$(in_sum "$DB" pcie__read_bytes.sum "$w")
	iwr=$(in_sum "$DB" pcie__write_bytes.sum "$w")
	r=$(ratio $((rd + wr)) "${want:-0}")
	ri=$(ratio $((ird + iwr)) "${want:-0}")
	name="PCIe bytes, H2D copy / bytes copied"
	[ $dir = HtoD ] || name="PCIe bytes, D2H copy / bytes copied"
	within "$r" 0.97 1.08
	scheck $? "$name" "$r (rd $(mib "$rd"), wr $(mib "$wr"); in-range $ri)"
done

# --- stream kernels: DRAM bytes ---
w="kind = 'kernel' AND name = 'truth_stream'"
dr=$(win_sum "$DB" dram__bytes_read.sum "$w")
dw=$(win_sum "$DB" dram__bytes_write.sum "$w")
l2=$(win_sum "$DB" lts__t_bytes.sum "$w")
br=$(val stream_bytes_read "$T")
bw=$(val stream_bytes_written "$T")
rr=$(ratio "$dr" "$br")
rw=$(ratio "$dw" "$bw")
rt=$(ratio $((dr + dw)) $((${br:-0} + ${bw:-0})))
ri=$(ratio "$(($(in_sum "$DB" dram__bytes_read.sum "$w") + $(in_sum "$DB" dram__bytes_write.sum "$w")))" $((${br:-0} + ${bw:-0})))
within "$rt" 0.98 1.04 && within "$rr" 0.97 1.05 && within "$rw" 0.97 1.05
scheck $? "DRAM bytes, stream kernels / footprint" "$rt of $(gib $((${br:-0} + ${bw:-0}))) (read $rr, write $rw; in-range $ri)"
info "  L2 bytes, stream kernels / footprint" "$(ratio "$l2" $((${br:-0} + ${bw:-0})))"

# --- fma phase: instructions and CTAs ---
w="kind = 'kernel' AND name = 'truth_fma' AND t0 < (SELECT min(t0) FROM ranges WHERE run = 1 AND kind = 'kernel' AND name = 'truth_comm')
	AND t0 > (SELECT max(t1) FROM ranges WHERE run = 1 AND kind = 'kernel' AND name = 'truth_stream')"
im=$(win_sum "$DB" sm__inst_executed.sum "$w")
nl=$(val fma_launches "$T")
lo=$(inst_lo "$(val fma_warps "$T")" "$(val fma_iters "$T")")
hi=$(inst_hi "$(val fma_warps "$T")" "$(val fma_iters "$T")")
r=$(ratio "$im" "$lo")
rh=$(ratio "$hi" "$lo")
within "$r" 0.97 "$(awk -v h="$rh" 'BEGIN { print h * 1.03 }')"
scheck $? "instructions, truth_fma x${nl:-?} / SASS count" "$r ($im; SASS: $lo..$hi, loop ${loop:-?} insts)"
cm=$(win_sum "$DB" sm__ctas_launched.sum "$w")
r=$(ratio "$cm" "$(val fma_ctas "$T")")
within "$r" 0.99 1.01
scheck $? "CTAs launched, truth_fma x${nl:-?}" "$cm of $(val fma_ctas "$T") = $r"

# --- kernel ranges vs the workload's cudaEvent times ---
q "$DB" "SELECT name, t1 - t0 FROM ranges WHERE run = 1 AND kind = 'kernel' ORDER BY t0" >"$OUT/kernels.csv"
res=$(awk -F, '
	FNR == NR { if ($0 ~ /^event name=/) { split($0, a, /[ =]/); ev[a[3], ++ne[a[3]]] = a[5] }; next }
	{ k = $1; i = ++seen[k]; if (k == "truth_fma") i--   # the first kernel has no events
	  if (i < 1) next
	  if (!((k, i) in ev)) { miss++; next }
	  e = ev[k, i]; d = $2 / 1e6; dev = d - e; if (dev < 0) dev = -dev
	  n++; lim = 0.02 * e + 0.03; if (dev > lim) bad++
	  if (dev / e > worst) { worst = dev / e; wk = k " #" i " " d " vs " e " ms" } }
	END { for (x in ne) tot += ne[x]
	      printf "%d %d %d %d %.4f %s\n", n, tot, bad + 0, miss + 0, worst, wk }' "$T" "$OUT/kernels.csv")
set -- ${res:-0 0 0 0 0}
[ "$1" -gt 0 ] && [ "$1" = "$2" ] && [ "$3" = 0 ] && [ "$4" = 0 ]
shift 4
check $? "kernel ranges vs cudaEvent times" "$(echo "$res" | cut -d' ' -f1) of $(echo "$res" | cut -d' ' -f2) within 2%+30us; worst $(awk -v w="$1" 'BEGIN { printf "%.2f%%", w * 100 }')"
log "worst kernel vs event: $*"

# --- one kernel range per launch, joined to its launch call ---
v=$(q "$DB" "SELECT (SELECT count(*) FROM ranges WHERE run = 1 AND kind = 'kernel'),
	(SELECT count(*) FROM ranges k WHERE k.run = 1 AND k.kind = 'kernel' AND EXISTS (SELECT 1 FROM ranges a
	 WHERE a.run = 1 AND a.kind = 'api' AND a.name LIKE '%LaunchKernel%' AND a.correlation_id = k.correlation_id
	 AND a.t0 <= k.t0)),
	(SELECT count(*) FROM ranges WHERE run = 1 AND kind = 'api' AND name LIKE '%LaunchKernel%')" | tr ',' ' ')
set -- ${v:-0 0 0}
want=$(val kernel_launches "$T")
[ "$1" = "$want" ] && [ "$2" = "$want" ]
check $? "a kernel range per launch, joined to its call" "$1 kernels, $2 joined, $3 launch calls (launched ${want:-?})"

v=$(q "$DB" "SELECT group_concat(name || ':' || bytes, ' ') FROM (SELECT name, bytes FROM ranges
	WHERE run = 1 AND kind = 'memcpy' AND bytes >= 1048576 ORDER BY t0)")
[ "$v" = "memcpy HtoD:$(val h2d_bytes "$T") memcpy DtoH:$(val d2h_bytes "$T")" ]
check $? "copy ranges with bytes" "${v:-none}"

# --- NVTX ---
v=$(q "$DB" "SELECT group_concat(name, ' ') FROM (SELECT name FROM ranges WHERE run = 1 AND kind = 'nvtx' ORDER BY t0, t1 DESC)")
[ "$v" = "truth copy stream fma comm-alone overlap compute-alone" ]
check $? "NVTX ranges" "${v:-none}"

# --- two streams: the collective-like kernel and the compute kernel ---
v=$(q "$DB" "SELECT min(c.t1, f.t1) - max(c.t0, f.t0), f.t1 - f.t0, c.t1 - c.t0, c.stream, f.stream
	FROM ranges o, ranges c, ranges f WHERE o.run = 1 AND o.kind = 'nvtx' AND o.name = 'overlap'
	AND c.run = 1 AND c.kind = 'kernel' AND c.name = 'truth_comm' AND c.t0 BETWEEN o.t0 AND o.t1
	AND f.run = 1 AND f.kind = 'kernel' AND f.name = 'truth_fma' AND f.t0 BETWEEN o.t0 AND o.t1" | head -n 1 | tr ',' ' ')
set -- ${v:-0 0 0 x x}
r=$(ratio "$1" "$2")
within "$r" 0.5 1.0001 && [ "$4" != "$5" ]
check $? "two streams overlap" "$(awk -v o="$1" -v f="$2" -v c="$3" 'BEGIN { printf "%.1f ms of truth_fma (%.1f ms) under truth_comm (%.1f ms)", o / 1e6, f / 1e6, c / 1e6 }'), streams $4/$5"

# --------------------------------------------------- overhead (10 us run too)
pw=$(val work_ms "$OUT/plain.out")
r1=$(ratio "$(val work_ms "$T")" "$pw")
r2=$(ratio "$(val work_ms "$OUT/fast.out")" "$pw")
[ "$rc_fast" -eq 0 ] && within "$r1" 0 1.5 && within "$r2" 0 1.5
check $? "overhead (work time) at 100 us, 10 us" "x$r1, x$r2 (alone $pw ms; exit at 10 us: $rc_fast)"
info "  overhead (process wall time)" "x$(ratio "$(cat "$OUT/truth.wall")" "$(cat "$OUT/plain.wall")"), x$(ratio "$(cat "$OUT/fast.wall")" "$(cat "$OUT/plain.wall")") (alone $(cat "$OUT/plain.wall") ms)"
v=$(q "$OUT/fast.db" "SELECT samples || ' ' || dropped || ' ' || overflows FROM runs WHERE id = 1")
set -- ${v:-? ? ?}
w="kind = 'kernel' AND name = 'truth_stream'"
fb=$(val stream_bytes_read "$OUT/fast.out")
fw=$(val stream_bytes_written "$OUT/fast.out")
fr=$(ratio $(($(win_sum "$OUT/fast.db" dram__bytes_read.sum "$w") + $(win_sum "$OUT/fast.db" dram__bytes_write.sum "$w"))) \
	$((${fb:-0} + ${fw:-0})))
info "  10 us: samples, dropped, overflows; DRAM" "$1, $2, $3; stream DRAM bytes / footprint $fr"

# ------------------------------------------- 1 us, 8 MiB buffer: losses counted
DB=$OUT/tiny.db
v=$(q "$DB" "SELECT samples || ' ' || dropped || ' ' || overflows FROM runs WHERE id = 1")
set -- ${v:-0 ? ?}
ns=$1 dro=$2 ovf=$3
set -- $(tl "$DB") 0 0 0 0
span=$2 gaps=$3 dt=$4
gr=$(ratio "$gaps" "$span")
# counted: overflows or drops reported; or nothing was lost (no gaps)
if [ -n "$ENVWHY$(env_reason "$OUT/tiny.err")" ]; then
	row "1 us, small buffer: losses are counted" "$(env_reason "$OUT/tiny.err" | cut -c1-66)" "skipped (env)"
	envskips=$((envskips + 1))
elif [ "$rc_tiny" -ne 0 ] || ! [ "${ns:-0}" -gt 0 ] 2>/dev/null; then
	fail "1 us, small buffer: losses are counted" "exit $rc_tiny, ${ns:-0} samples: $(tail -n 1 "$OUT/tiny.err" | cut -c1-40)"
elif [ "$dro" != 0 ] || [ "$ovf" != 0 ] || within "$gr" 0 0.01; then
	pass "1 us, small buffer: losses are counted" "$ns samples, dt $dt ns, gaps $(awk -v r="$gr" 'BEGIN { printf "%.1f%%", r * 100 }'), dropped $dro, overflows $ovf"
else
	fail "1 us, small buffer: losses are counted" "$ns samples, gaps $(awk -v r="$gr" 'BEGIN { printf "%.1f%%", r * 100 }') but dropped 0, overflows 0"
fi

echo "== $fails check(s) failed, $envskips skipped for the environment; databases, logs and the probe's output in $OUT ($(($(date +%s) - START)) s)"
[ "$fails" -eq 0 ] || exit 1
[ "$envskips" -eq 0 ] || exit 2
exit 0
