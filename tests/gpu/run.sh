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
# The bundle's executables, whatever the copy that brought them kept.
chmod +x "$D"/bin/* "$D"/workloads/* 2>/dev/null
# The bundle's libraries first: an LD_LIBRARY_PATH naming a toolkit
# (GPU images often set one) would otherwise give the collector another
# libcupti (preflight warns when it still does).
USER_LDP=${LD_LIBRARY_PATH:-}
LD_LIBRARY_PATH=$D/lib${USER_LDP:+:$USER_LDP}
export LD_LIBRARY_PATH
# Kernels load with the module, not inside the first launch's event
# window (the kernel-vs-event check).
CUDA_MODULE_LOADING=EAGER
export CUDA_MODULE_LOADING
OUT=${1:-$(mktemp -d)}
mkdir -p "$OUT" || exit 2
OUT=$(cd "$OUT" && pwd)
# A second run into the same OUTDIR would add run 2 to each database
# while every query reads run 1: start from an empty one.
if [ -n "$(ls -A "$OUT")" ]; then
	echo "run.sh: OUTDIR $OUT is not empty; give an empty or new directory" >&2
	exit 2
fi
PACK=${2:-}
if [ -n "$PACK" ]; then
	mkdir -p "$PACK" || exit 2
	PACK=$(cd "$PACK" && pwd)
fi
# pack: PACKDIR's copy of what there is so far (after each phase and on
# any exit or signal), within what a remote runner returns: 8 files of at
# most 16 MB, logs.txt cut at 15 MB.
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
	done) | head -c 15000000 >"$PACK/logs.txt"
	n=2
	for f in truth.db fast.db tiny.db truth.db-wal fast.db-wal tiny.db-wal; do
		[ -s "$OUT/$f" ] || continue
		# 6 files at most: oracles.sh adds two to the same PACKDIR
		if [ $n -ge 6 ] || [ "$(wc -c <"$OUT/$f")" -gt 16000000 ]; then
			echo "pack: $f left out ($(wc -c <"$OUT/$f") bytes)" >>"$PACK/logs.txt"
			continue
		fi
		cp "$OUT/$f" "$PACK/$f" && n=$((n + 1))
	done
}
trap pack EXIT
# dash runs no EXIT trap on a signal: pack, then end as killed
BPID=
trap '[ -n "$BPID" ] && kill -TERM "$BPID" 2>/dev/null; pack; trap - EXIT; exit 124' TERM INT HUP
CS=$D/bin/cyclescope
W=$D/workloads
REPLAY=${GPU_CHECK_REPLAY:-}
: >"$OUT/run.log"

# The metric set of the checked runs: one pass on GH100 (preflight checks).
SET=pcie__read_bytes.sum,pcie__write_bytes.sum,dram__bytes_read.sum,dram__bytes_write.sum,sm__inst_executed.sum,sm__ctas_launched.sum,gpu__time_duration.sum,lts__t_bytes.sum,gr__cycles_elapsed.max
APIS='*cudaLaunchKernel*,cudaMemcpy,cudaMemset,cudaMalloc,cudaMallocHost,cudaDeviceSynchronize,cudaStreamSynchronize'
# 1 us and the saved recording: DRAM, time, cycles (small images)
TINY_SET=dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum
IMG_SET=dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum,gr__cycles_elapsed.max
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
	# in the background and waited for: a signal to this shell then runs
	# its trap at once (a foreground child would hold it until it ends)
	timeout -k 5 "$t" "$@" &
	BPID=$!
	wait $BPID
	brc=$?
	BPID=
	return $brc
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
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b + 0 == 0 || a == "") print "inf"; else printf "%.4f", a / b }'; }
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
PCIe bytes read, H2D copy / bytes copied|PCIe bytes written, D2H copy / bytes copied|\
DRAM bytes, stream kernels / footprint|instructions, truth_fma x3 / SASS count|\
CTAs launched, truth_fma x3|kernel ranges vs cudaEvent times|\
a kernel range per launch, joined to its call|copy ranges with bytes|NVTX ranges|\
two streams overlap|overhead (work time) at 100 us, 10 us|1 us, small buffer: losses are counted|\
job and rank from SLURM_JOB_ID, RANK|DRAM bytes at 1 ms (saved run) / footprint|recording for offline evaluation saved"
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
	# Some GPU machines run under a sandboxed kernel (gVisor and the like)
	# in which profilers could not read counters: the kernel says which.
	info "preflight: kernel (uname -r)" "$(uname -r) $(uname -m)$(dmesg 2>/dev/null | grep -q -i gvisor && echo ', gVisor')"
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
		*) pre_warn "bundle libraries resolve" "libcupti.so.13 from '${cupti:-none}', not $D/lib (LD_LIBRARY_PATH=${USER_LDP:-unset})" ;;
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
		skip_all preflight
		row "probe (workloads/pm_probe)" "-" "skipped (preflight)"
		echo "== the environment is not fit for the GPU check ($pre_fail preflight row(s)); output in $OUT"
		exit 2
	fi

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
	grep -o -i -E "CUPTI is not usable[^;]*|CUPTI refused PM sampling[^;]*|counters are busy[^;]*|insufficient privileges[^;]*|PM sampling is not supported[^;]*|another CUPTI client[^;]*" "$1" 2>/dev/null | head -n 1
}

# samples DB: the run's sample count, 0 when there is none
samples_of() {
	v=$(q "$1" "SELECT samples FROM runs WHERE id = 1")
	echo "${v:-0}"
}
# collector_row NAME: what the collector said of run NAME (its first
# ERROR line, else its first warning) and the samples it stored
collector_row() {
	e=$(grep -m 1 'ERROR' "$OUT/$1.err" 2>/dev/null | cut -c1-50)
	[ -n "$e" ] || e=$(grep -m 1 -i 'warn' "$OUT/$1.err" 2>/dev/null | cut -c1-50)
	info "  collector, run $1" "$(samples_of "$OUT/$1.db") samples; ${e:-no error or warning}"
}
# The collector sets up the sampler while CUDA creates the first context
# and holds that callback until it is done (CYCLESCOPE_START_WAIT_MS,
# 5000). If a driver makes that wait on itself, a short run times out:
# then every run goes on without the wait.
smoke() { # WAIT_MS
	CYCLESCOPE_START_WAIT_MS=$1 CYCLESCOPE_LOG=info bounded 20 "$CS" run --db "$OUT/smoke-$1.db" \
		--name "smoke-$1" --metrics "$SET" -- "$W/truth" stream 4 >"$OUT/smoke-$1.out" 2>"$OUT/smoke-$1.err"
}
start_wait() {
	WAIT=5000
	t0=$(now_ms)
	smoke 5000
	rc=$?
	if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
		t1=$(now_ms)
		smoke 0
		rc0=$?
		[ $rc0 -eq 0 ] && WAIT=0
		info "smoke run: start wait 5000 ms, then 0 ms" "timed out after $((t1 - t0)) ms; 0 ms: exit $rc0, $(samples_of "$OUT/smoke-0.db") samples; using $WAIT"
	else
		info "smoke run: start wait 5000 ms" "exit $rc in $(($(now_ms) - t0)) ms, $(samples_of "$OUT/smoke-5000.db") samples"
	fi
	CYCLESCOPE_START_WAIT_MS=$WAIT
	export CYCLESCOPE_START_WAIT_MS
}
# What the newer work needs seen on hardware (checked further down):
#   img     a recording the CUPTI host API evaluates again offline
#           (CYCLESCOPE_SAVE_IMAGES), with job and rank from a launcher's
#           environment (SLURM_JOB_ID, RANK)
#   two-a, two-b   two collected processes on the one GPU at once
#   share, share-plain   one collected process beside one that is not
extra_runs() {
	mkdir -p "$OUT/img"
	unset CYCLESCOPE_JOB CYCLESCOPE_RANK # they would win over the launcher's
	export SLURM_JOB_ID=4242 RANK=3 CYCLESCOPE_SAVE_IMAGES="$OUT/img" CYCLESCOPE_SAVE_PASSES=64
	run_truth img --metrics "$IMG_SET" --interval-ns 1000000 -- "$W/truth" stream 16
	echo $? >"$OUT/img.rc"
	unset SLURM_JOB_ID RANK CYCLESCOPE_SAVE_IMAGES CYCLESCOPE_SAVE_PASSES
	collector_row img
	pack
	for p in "two-a two-b" "share share-plain"; do
		set -- $p
		CYCLESCOPE_LOG=info bounded 60 "$CS" run --db "$OUT/$1.db" --name "$1" --metrics "$IMG_SET" \
			-- "$W/truth" stream 1500 >"$OUT/$1.out" 2>"$OUT/$1.err" &
		a=$!
		if [ "$2" = share-plain ]; then
			bounded 60 "$W/truth" stream 1500 >"$OUT/$2.out" 2>"$OUT/$2.err" &
		else
			CYCLESCOPE_LOG=info bounded 60 "$CS" run --db "$OUT/$2.db" --name "$2" --metrics "$IMG_SET" \
				-- "$W/truth" stream 1500 >"$OUT/$2.out" 2>"$OUT/$2.err" &
		fi
		b=$!
		wait $a
		echo $? >"$OUT/$1.rc"
		wait $b
		echo $? >"$OUT/$2.rc"
	done
}

if [ -n "$REPLAY" ]; then
	# everything recorded (a real GPU run's OUTDIR, or tests/gpu/fake.sh's)
	cp -R "$REPLAY"/. "$OUT"/
	for n in plain truth fast tiny; do
		[ -f "$OUT/$n.err" ] || : >"$OUT/$n.err"
	done
	: >"$OUT/table.txt"
	rc_plain=0 rc_truth=0 rc_fast=0 rc_tiny=0
else
	echo "== checks" | tee -a "$OUT/run.log"
	pack
	start_wait
	run_truth plain alone all
	rc_plain=$?
	run_truth truth --metrics "$SET" --apis "$APIS" --nvtx -- "$W/truth" all
	rc_truth=$?
	if [ "$(samples_of "$OUT/truth.db")" = 0 ] && grep -q 'refused the configuration' "$OUT/truth.err"; then
		# device-level pcie__* beside context-level metrics: once more without
		for f in truth.db truth.out truth.err truth.wall; do mv "$OUT/$f" "$OUT/pcie-refused.${f#truth.}"; done
		SET=$(echo "$SET" | tr ',' '\n' | grep -v '^pcie__' | paste -s -d, -)
		info "metric set: pcie__* refused, retried without" "$(grep -m 1 'refused the configuration' "$OUT/pcie-refused.err" | cut -c1-66)"
		run_truth truth --metrics "$SET" --apis "$APIS" --nvtx -- "$W/truth" all
		rc_truth=$?
	fi
	collector_row truth
	pack
	run_truth fast --metrics "$SET" --apis "$APIS" --nvtx --interval-ns 10000 --buffer-mb 512 -- "$W/truth" all
	rc_fast=$?
	collector_row fast
	# 1 us: a small set (no nvl* metrics), so each sample and the
	# counter-data image (65,536 slots) stay small
	# (a run here once died of SIGFPE: btrace.so writes the stack to tiny.err)
	[ -f "$W/btrace.so" ] && LD_PRELOAD=$W/btrace.so && export LD_PRELOAD
	run_truth tiny --metrics "$TINY_SET" --interval-ns 1000 --buffer-mb 8 -- "$W/truth" stream 60
	rc_tiny=$?
	collector_row tiny
	# the same at 1 us with the default 256 MiB buffer
	run_truth tinybig --metrics "$TINY_SET" --interval-ns 1000 -- "$W/truth" stream 60
	echo $? >"$OUT/tinybig.rc"
	unset LD_PRELOAD
	info "  1 us, 256 MiB buffer" "exit $(cat "$OUT/tinybig.rc"), $(samples_of "$OUT/tinybig.db") samples; $(grep -m 1 -E 'btrace|ERROR' "$OUT/tinybig.err" | sed 's/^.*collector: //' | cut -c1-40)"
	pack
	extra_runs
	pack
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
elif [ "$(samples_of "$DB")" = 0 ]; then
	fail "truth under the collector (100 us)" "exit 0, no samples: $(grep -m 1 'ERROR' "$OUT/truth.err" | sed 's/^.*collector: //' | cut -c1-36)"
else
	pass "truth under the collector (100 us)" "exit 0, work $(val work_ms "$T") ms, process $(cat "$OUT/truth.wall") ms"
fi

v=$(q "$DB" "SELECT status || ' ' || samples || ' ' || dropped || ' ' || overflows || ' ' ||
	coalesce(json_extract(meta, '\$.pm_sampling[0].trigger'), '-') || ' ' ||
	coalesce(json_extract(meta, '\$.interval_ns'), '-') FROM runs WHERE id = 1")
set -- ${v:-none 0 - - - -} - - - - - -
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
v=$(q "$DB" "SELECT coalesce((SELECT min(t0) FROM series WHERE run = 1 AND metric = 'gpu__time_duration.sum') - t0, 'x'),
	t1 - t0 FROM ranges WHERE run = 1 AND $FIRST" | tr ',' ' ')
set -- ${v:-x x} x x
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
	# the copy's own direction: the GPU reads host memory for H2D
	# (pcie__read_bytes) and writes it for D2H; the other direction
	# (requests, completions) is shown beside
	if [ $dir = HtoD ]; then
		r=$(ratio "$rd" "${want:-0}")
		ri=$(ratio "$ird" "${want:-0}")
		name="PCIe bytes read, H2D copy / bytes copied"
	else
		r=$(ratio "$wr" "${want:-0}")
		ri=$(ratio "$iwr" "${want:-0}")
		name="PCIe bytes written, D2H copy / bytes copied"
	fi
	case "$SET" in
	*pcie__*)
		within "$r" 0.97 1.08
		scheck $? "$name" "$r (rd $(mib "$rd"), wr $(mib "$wr"); in-range $ri)"
		;;
	*) row "$name" "-" "skipped (pcie__* refused)" ;;
	esac
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
echo "collector_stream_dram=$((dr + dw))" >>"$OUT/measured.txt"
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
printf 'collector_fma3_inst=%s\ncollector_fma3_ctas=%s\n' "$im" "$cm" >>"$OUT/measured.txt"
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
	  # one-sided: the events bracket the kernel and the launch, so the
	  # range may be shorter by the launch latency, never much longer
	  e = ev[k, i]; d = $2 / 1e6; dev = d - e; if (dev < 0) dev = -dev
	  n++; if (d - e > 0.02 * e + 0.03 || e - d > 0.05 * e + 0.1) bad++
	  if (dev / e > worst) { worst = dev / e; wk = k " #" i " " d " vs " e " ms" } }
	END { for (x in ne) tot += ne[x]
	      printf "%d %d %d %d %.4f %s\n", n, tot, bad + 0, miss + 0, worst, wk }' "$T" "$OUT/kernels.csv")
set -- ${res:-0 0 0 0 0} 0 0 0 0 0
[ "$1" -gt 0 ] && [ "$1" = "$2" ] && [ "$3" = 0 ] && [ "$4" = 0 ]
okev=$?
shift 4
check $okev "kernel ranges vs cudaEvent times" "$(echo "$res" | cut -d' ' -f1) of $(echo "$res" | cut -d' ' -f2) not over 2%+30us, under 5%+100us; worst $(awk -v w="$1" 'BEGIN { printf "%.2f%%", w * 100 }')"
log "worst kernel vs event: $*"

# --- one kernel range per launch, joined to its launch call ---
# The first launch calls cuInit, which loads the collector: its call may
# begin before the collector sees calls, so it need not be joined.
v=$(q "$DB" "WITH j AS (SELECT k.t0, EXISTS (SELECT 1 FROM ranges a
	 WHERE a.run = 1 AND a.kind = 'api' AND a.name LIKE '%LaunchKernel%' AND a.correlation_id = k.correlation_id
	 AND a.t0 <= k.t0) joined FROM ranges k WHERE k.run = 1 AND k.kind = 'kernel')
	SELECT (SELECT count(*) FROM j), (SELECT coalesce(sum(joined), 0) FROM j WHERE t0 > (SELECT min(t0) FROM j)),
	coalesce((SELECT joined FROM j ORDER BY t0 LIMIT 1), 0),
	(SELECT count(*) FROM ranges WHERE run = 1 AND kind = 'api' AND name LIKE '%LaunchKernel%')" | tr ',' ' ')
set -- ${v:-0 0 0 0} 0 0 0 0
want=$(val kernel_launches "$T")
[ "$1" = "$want" ] && [ "$2" = "$((${want:-1} - 1))" ]
check $? "a kernel range per launch, joined to its call" "$1 kernels, the $2 after the first joined (first: $([ "$3" = 1 ] && echo joined || echo not joined)), $4 launch calls (launched ${want:-none})"

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
set -- ${v:-0 0 0 x x} 0 0 0 x x
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
set -- ${v:-- - -} - - -
w="kind = 'kernel' AND name = 'truth_stream'"
fb=$(val stream_bytes_read "$OUT/fast.out")
fw=$(val stream_bytes_written "$OUT/fast.out")
fr=$(ratio $(($(win_sum "$OUT/fast.db" dram__bytes_read.sum "$w") + $(win_sum "$OUT/fast.db" dram__bytes_write.sum "$w"))) \
	$((${fb:-0} + ${fw:-0})))
info "  10 us: samples, dropped, overflows; DRAM" "$1, $2, $3; stream DRAM bytes / footprint $fr"

# ------------------------------------------- 1 us, 8 MiB buffer: losses counted
DB=$OUT/tiny.db
v=$(q "$DB" "SELECT samples || ' ' || dropped || ' ' || overflows FROM runs WHERE id = 1")
set -- ${v:-0 - -} - - -
ns=$1 dro=$2 ovf=$3
set -- $(tl "$DB") 0 0 0 0
span=$2 gaps=$3 dt=$4
gr=$(ratio "$gaps" "$span")
# counted: overflows or drops reported; or nothing was lost (no gaps)
if [ -n "$ENVWHY$(env_reason "$OUT/tiny.err")" ]; then
	row "1 us, small buffer: losses are counted" "$(env_reason "$OUT/tiny.err" | cut -c1-66)" "skipped (env)"
	envskips=$((envskips + 1))
elif [ "$rc_tiny" -ne 0 ] || ! [ "${ns:-0}" -gt 0 ] 2>/dev/null; then
	fail "1 us, small buffer: losses are counted" "exit $rc_tiny, ${ns:-0} samples: $( (grep -m 1 '^btrace' "$OUT/tiny.err" || tail -n 1 "$OUT/tiny.err") | cut -c1-40)"
elif [ "$dro" != 0 ] || [ "$ovf" != 0 ] || within "$gr" 0 0.01; then
	pass "1 us, small buffer: losses are counted" "$ns samples, dt $dt ns, gaps $(awk -v r="$gr" 'BEGIN { printf "%.1f%%", r * 100 }'), dropped $dro, overflows $ovf"
else
	fail "1 us, small buffer: losses are counted" "$ns samples, gaps $(awk -v r="$gr" 'BEGIN { printf "%.1f%%", r * 100 }') but dropped 0, overflows 0"
fi

# ------------------------------ the newer work, on hardware (extra_runs)
# Rows read "skipped (not recorded)" when a recording has no such run.
if [ -f "$OUT/img.db" ]; then
	v=$(q "$OUT/img.db" "SELECT coalesce(json_extract(meta, '\$.job'), '-') || ' ' ||
		coalesce(json_extract(meta, '\$.rank'), '-') FROM runs WHERE id = 1")
	[ "$v" = "4242 3" ]
	check $? "job and rank from SLURM_JOB_ID, RANK" "job rank = ${v:-none} (want 4242 3)"
	w="kind = 'kernel' AND name = 'truth_stream'"
	rb=$(val stream_bytes_read "$OUT/img.out")
	wb=$(val stream_bytes_written "$OUT/img.out")
	ib=$((${rb:-0} + ${wb:-0}))
	r=$(ratio $(($(win_sum "$OUT/img.db" dram__bytes_read.sum "$w") + $(win_sum "$OUT/img.db" dram__bytes_write.sum "$w"))) "$ib")
	within "$r" 0.98 1.04
	scheck $? "DRAM bytes at 1 ms (saved run) / footprint" "$r of $(gib "$ib")"
	np=$(ls "$OUT/img" 2>/dev/null | grep -c '^counterdata-')
	ni=$(grep -c '^pass ' "$OUT/img/index-dev0.txt" 2>/dev/null)
	[ "$np" -gt 0 ] && [ -s "$OUT/img/config-dev0.bin" ]
	scheck $? "recording for offline evaluation saved" "$np counter-data images ($(sed -n 's/^counter_data_size //p' "$OUT/img/index-dev0.txt" 2>/dev/null) B each), ${ni:-0} samples indexed"
else
	row "job and rank from SLURM_JOB_ID, RANK" "-" "skipped (not recorded)"
	row "DRAM bytes at 1 ms (saved run) / footprint" "-" "skipped (not recorded)"
	row "recording for offline evaluation saved" "-" "skipped (not recorded)"
fi
# two_row NAME: exit, samples, DRAM bytes over the process's own footprint
# (above 1 when device-wide counters also count the other process), and
# what the collector said
two_row() {
	rb=$(val stream_bytes_read "$OUT/$1.out")
	wb=$(val stream_bytes_written "$OUT/$1.out")
	ob=$((${rb:-0} + ${wb:-0}))
	d=$(q "$OUT/$1.db" "SELECT coalesce(sum(value), 0) FROM series WHERE run = 1 AND metric IN ('dram__bytes_read.sum', 'dram__bytes_write.sum')")
	e=$(grep -m 1 -E 'ERROR|WARN' "$OUT/$1.err" 2>/dev/null | sed 's/^.*collector: //' | cut -c1-30)
	echo "exit $(cat "$OUT/$1.rc" 2>/dev/null), $(samples_of "$OUT/$1.db") samples, DRAM/own $(ratio "$(num "${d:-0}")" "$ob")${e:+; $e}"
}
if [ -f "$OUT/two-a.rc" ]; then
	info "two collected processes: A" "$(two_row two-a)"
	info "two collected processes: B" "$(two_row two-b)"
	info "collected beside an uncollected process" "$(two_row share); other exit $(cat "$OUT/share-plain.rc" 2>/dev/null)"
else
	row "two processes on the one GPU" "-" "skipped (not recorded)"
fi
pack

# ------------------------------------------- probe (after the checks)
# CUPTI PM sampling without cyclescope: informational, last, so that it
# never takes time from the checks.
run_probe() {
	echo "== probe (informational)" | tee -a "$OUT/run.log"
	if [ ! -x "$W/pm_probe" ]; then
		info "probe (workloads/pm_probe)" "not in this bundle (pm_probe.cu was not found at build)"
		return
	fi
	for a in "100000 256" "10000 64"; do
		f=$OUT/probe-$(echo "$a" | tr ' ' '-').txt
		# shellcheck disable=SC2086
		bounded 40 "$W/pm_probe" $a >"$f" 2>&1
		rc=$?
		s=$(sed -n 's/^decodes=.*samples=\([0-9]*\).*/\1/p' "$f")
		o=$(sed -n 's/^decodes=[0-9]* overflows=\([0-9]*\).*/\1/p' "$f")
		k=$(sed -n 's/^kernel activity records=\([0-9]*\).*/\1/p' "$f")
		info "probe: pm_probe $a" "exit $rc, $(sed -n 's/^chip=//p' "$f") samples ${s:-none}, overflows ${o:-none}, kernels ${k:-none}"
	done
}
[ -n "$REPLAY" ] || run_probe
pack

echo "== $fails check(s) failed, $envskips skipped for the environment; databases, logs and the probe's output in $OUT ($(($(date +%s) - START)) s)"
[ "$fails" -eq 0 ] || exit 1
[ "$envskips" -eq 0 ] || exit 2
exit 0
