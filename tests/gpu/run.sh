#!/bin/sh
# GPU checks of the collector against known truth, in one call (under 5
# minutes on one H100/H200): builds cyclescope and two workloads, runs them
# under `cyclescope run`, and checks the stored data:
#   - PCIe bytes in the host->device copy windows ~ the bytes copied
#   - DRAM and L2 bytes during the GEMMs >= the GEMMs' minimum traffic
#   - samples cover every kernel longer than a few intervals
#   - a range for every hooked API kind, kernels and copies on the device,
#     NVTX phases of the graph workload
#   - zero overflows and drops at the default interval
#   - with ncu on PATH: one GEMM's lts__t_sectors.sum from ncu vs the sum of
#     our samples over that kernel's range
# Prints a table; exit status 0 when every check passes. Output (the
# databases and logs) goes to $OUT when set, else a temp dir.
#   sh tests/gpu/run.sh
set -u
OUT=${OUT:-$(mktemp -d)}
B=build
CS=$B/cyclescope
fails=0
row() { printf '%-46s %-28s %s\n' "$1" "$2" "$3"; }
pass() { row "$1" "$2" "ok"; }
fail() { row "$1" "$2" "FAIL"; fails=$((fails + 1)); }
q() { "$CS" query --db "$1" "$2" | tail -n +2 | tr -d '\r'; }
# ratio A B -> A/B with 3 decimals (awk, no bc needed)
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b == 0) print "inf"; else printf "%.3f", a / b }'; }
within() { awk -v r="$1" -v lo="$2" -v hi="$3" 'BEGIN { exit !(r != "inf" && r >= lo && r <= hi) }'; }

echo "== environment"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | head -n 4
command -v nvcc >/dev/null || { echo "nvcc not found"; exit 1; }
CUDA_HOME=${CUDA_HOME:-$(dirname "$(dirname "$(readlink -f "$(command -v nvcc)")")")}
echo "CUDA_HOME=$CUDA_HOME"

echo "== build"
if ! make -j"$(nproc)" all >"$OUT/build.log" 2>&1; then
	sh .ci/install-deps >>"$OUT/build.log" 2>&1
	make -j"$(nproc)" all >>"$OUT/build.log" 2>&1 || { tail -n 30 "$OUT/build.log"; exit 1; }
fi
[ -f "$B/libcyclescope_collector.so" ] || { echo "collector not built"; tail -n 30 "$OUT/build.log"; exit 1; }
for w in gemm_copy graph_overlap; do
	nvcc -O2 -I"$CUDA_HOME/include" "tests/gpu/$w.cu" -o "$OUT/$w" \
		-L"$CUDA_HOME/lib64" -L"$CUDA_HOME/lib" -lcublas -lnccl >>"$OUT/build.log" 2>&1 ||
		{ echo "cannot build $w"; tail -n 20 "$OUT/build.log"; exit 1; }
done
"$CS" metrics --check @memory-io >/dev/null || { echo "memory-io set refused"; exit 1; }

echo "== workload 1: copies and GEMMs (memory-io set, continuous, default 10 kHz)"
DB1=$OUT/gemm.db
N=8192
REPS=5
CYCLESCOPE_LOG=info "$CS" run --db "$DB1" --metrics @memory-io \
	--apis 'cudaMemcpy*,cudaLaunchKernel*,cuLaunchKernel*,cudaMalloc*' --name gemm_copy \
	-- "$OUT/gemm_copy" $N $REPS >"$OUT/gemm.out" 2>"$OUT/gemm.err"
rc=$?
cat "$OUT/gemm.err" | sed 's/^/  | /' | tail -n 8
[ $rc -eq 0 ] && pass "gemm_copy runs under the collector" "exit 0" || fail "gemm_copy runs under the collector" "exit $rc"
H2D=$(sed -n 's/^h2d_bytes=//p' "$OUT/gemm.out")
MIN=$(sed -n 's/^gemm_min_bytes=//p' "$OUT/gemm.out")
RUN=$(q "$DB1" "SELECT max(id) FROM runs")

v=$(q "$DB1" "SELECT samples || ' ' || dropped || ' ' || overflows || ' ' || status || ' ' || json_extract(meta,'\$.pm_sampling[0].trigger') FROM runs WHERE id=$RUN")
set -- $v
[ "${1:-0}" -gt 0 ] && pass "samples stored" "${1:-0} samples, $5" || fail "samples stored" "${v:-none}"
[ "${2:-1}" = 0 ] && [ "${3:-1}" = 0 ] && pass "no drops, no overflows at 10 kHz" "dropped ${2:-?}, overflows ${3:-?}" ||
	fail "no drops, no overflows at 10 kHz" "dropped ${2:-?}, overflows ${3:-?}"

# Sample values weighted by their overlap with ranges of a kind/name.
overlap_sum() { # DB RUN METRIC RANGE-WHERE
	q "$1" "SELECT coalesce(sum(s.value * (min(s.t1, r.t1) - max(s.t0, r.t0)) * 1.0 / (s.t1 - s.t0)), 0)
		FROM ranges r JOIN series s ON s.run = r.run AND s.metric = '$3'
		AND s.t1 > r.t0 AND s.t0 < r.t1 WHERE r.run = $2 AND $4" | awk '{ printf "%.0f", $1 }'
}
HTOD="r.kind = 'memcpy' AND r.name = 'memcpy HtoD'"
rd=$(overlap_sum "$DB1" "$RUN" pcie__read_bytes.sum "$HTOD")
wr=$(overlap_sum "$DB1" "$RUN" pcie__write_bytes.sum "$HTOD")
pc=$((rd + wr))
r=$(ratio "$pc" "${H2D:-0}")
within "$r" 0.9 1.5 && pass "PCIe bytes in HtoD copies / bytes copied" "$pc / $H2D = $r" ||
	fail "PCIe bytes in HtoD copies / bytes copied" "$pc / ${H2D:-?} = $r"
GEMM="r.kind = 'kernel' AND r.name LIKE '%gemm%'"
ng=$(q "$DB1" "SELECT count(*) FROM ranges r WHERE r.run = $RUN AND $GEMM")
dr=$(overlap_sum "$DB1" "$RUN" dram__bytes_read.sum "$GEMM")
dw=$(overlap_sum "$DB1" "$RUN" dram__bytes_write.sum "$GEMM")
l2=$(overlap_sum "$DB1" "$RUN" lts__t_bytes.sum "$GEMM")
want=$((MIN * REPS))
r=$(ratio $((dr + dw)) "$want")
within "$r" 1.0 1000 && pass "DRAM bytes in $ng GEMM kernels / min traffic" "$((dr + dw)) / $want = $r" ||
	fail "DRAM bytes in $ng GEMM kernels / min traffic" "$((dr + dw)) / $want = $r"
r=$(ratio "$l2" "$want")
within "$r" 1.0 100000 && pass "L2 bytes in GEMM kernels / min traffic" "$l2 / $want = $r" ||
	fail "L2 bytes in GEMM kernels / min traffic" "$l2 / $want = $r"
# Every kernel longer than 3 intervals holds at least one whole sample.
unc=$(q "$DB1" "SELECT count(*) FROM ranges r WHERE r.run = $RUN AND r.kind = 'kernel'
	AND r.t1 - r.t0 > 300000 AND NOT EXISTS (SELECT 1 FROM series s WHERE s.run = r.run
	AND s.metric = 'gpu__time_duration.sum' AND s.t0 >= r.t0 AND s.t1 <= r.t1)")
nk=$(q "$DB1" "SELECT count(*) FROM ranges r WHERE r.run = $RUN AND r.kind = 'kernel' AND r.t1 - r.t0 > 300000")
[ "${unc:-1}" = 0 ] && [ "${nk:-0}" -gt 0 ] && pass "samples cover every kernel > 300 us" "$nk kernels, $unc uncovered" ||
	fail "samples cover every kernel > 300 us" "${nk:-?} kernels, ${unc:-?} uncovered"
apis=$(q "$DB1" "SELECT group_concat(name || ':' || n, ' ') FROM (SELECT name, count(*) n FROM ranges
	WHERE run = $RUN AND kind = 'api' GROUP BY name ORDER BY name)")
echo "$apis" | grep -q 'cudaMemcpy:3' && echo "$apis" | grep -q 'cudaMalloc:' &&
	pass "API ranges for the hooked calls" "$apis" || fail "API ranges for the hooked calls" "${apis:-none}"
cp=$(q "$DB1" "SELECT count(*) || ' ' || coalesce(sum(bytes), 0) FROM ranges WHERE run = $RUN AND kind = 'memcpy'")
set -- $cp
[ "${1:-0}" -ge 3 ] && [ "${2:-0}" -ge $((H2D + H2D / 2)) ] && pass "device copies with bytes" "$1 copies, $2 B" ||
	fail "device copies with bytes" "${1:-0} copies, ${2:-0} B (want >= 3, $((H2D + H2D / 2)) B)"

if command -v ncu >/dev/null 2>&1; then
	ncu --metrics lts__t_sectors.sum --kernel-name regex:gemm --launch-count 1 --csv \
		"$OUT/gemm_copy" 4096 1 >"$OUT/ncu.csv" 2>"$OUT/ncu.err"
	ncuv=$(grep lts__t_sectors.sum "$OUT/ncu.csv" | tail -n 1 | awk -F'","' '{ gsub(/[",]/, "", $NF); print $NF }')
	CYCLESCOPE_LOG=info "$CS" run --db "$OUT/ncu-ours.db" --metrics lts__t_sectors.sum --interval-ns 20000 \
		-- "$OUT/gemm_copy" 4096 1 >/dev/null 2>>"$OUT/gemm.err"
	ours=$(overlap_sum "$OUT/ncu-ours.db" 1 lts__t_sectors.sum "r.kind = 'kernel' AND r.name LIKE '%gemm%'")
	r=$(ratio "$ours" "${ncuv:-0}")
	within "$r" 0.8 1.25 && pass "one GEMM: our lts__t_sectors.sum / ncu's" "$ours / $ncuv = $r" ||
		fail "one GEMM: our lts__t_sectors.sum / ncu's" "$ours / ${ncuv:-?} = $r"
else
	row "one GEMM vs ncu" "ncu not on PATH" "skipped"
fi

echo "== workload 2: NCCL AllGather graph alone, with a GEMM, GEMM alone (hopper-l2, NVTX)"
DB2=$OUT/overlap.db
CYCLESCOPE_LOG=info "$CS" run --db "$DB2" --metrics @hopper-l2 --nvtx \
	--apis 'cudaGraphLaunch,cuGraphLaunch,cudaDeviceSynchronize' --name graph_overlap \
	-- "$OUT/graph_overlap" 256 10 >"$OUT/overlap.out" 2>"$OUT/overlap.err"
rc=$?
tail -n 8 "$OUT/overlap.err" | sed 's/^/  | /'
[ $rc -eq 0 ] && pass "graph_overlap runs under the collector" "exit 0, $(sed -n 's/^ranks=//p' "$OUT/overlap.out") rank(s)" ||
	fail "graph_overlap runs under the collector" "exit $rc"
g=$(q "$DB2" "SELECT count(*) FROM ranges WHERE run = 1 AND kind = 'api' AND name = 'cudaGraphLaunch'")
[ "${g:-0}" -ge 20 ] && pass "cudaGraphLaunch ranges" "$g" || fail "cudaGraphLaunch ranges" "${g:-0}"
nc=$(q "$DB2" "SELECT count(*) FROM ranges WHERE run = 1 AND kind = 'kernel' AND name LIKE 'ncclDevKernel%AllGather%'")
[ "${nc:-0}" -ge 20 ] && pass "NCCL AllGather kernels from the graphs" "$nc" || fail "NCCL AllGather kernels from the graphs" "${nc:-0}"
ph=$(q "$DB2" "SELECT group_concat(name, ',') FROM (SELECT name FROM ranges WHERE run = 1 AND kind = 'nvtx' ORDER BY t0)")
[ "$ph" = "allgather-alone,overlap,gemm-alone" ] && pass "NVTX phases" "$ph" || fail "NVTX phases" "${ph:-none}"
echo "   phase              ms      L2 sectors     non-SM L2 sectors (lts - srcunit_tex)"
for p in allgather-alone overlap gemm-alone; do
	W="r.kind = 'nvtx' AND r.name = '$p'"
	ms=$(q "$DB2" "SELECT (t1 - t0) / 1e6 FROM ranges r WHERE r.run = 1 AND $W")
	all=$(overlap_sum "$DB2" 1 lts__t_sectors.sum "$W")
	tex=$(overlap_sum "$DB2" 1 lts__t_sectors_srcunit_tex.sum "$W")
	printf '   %-18s %-7.1f %-14s %s\n' "$p" "${ms:-0}" "$all" "$((all - tex))"
done
v=$(q "$DB2" "SELECT dropped || ' ' || overflows FROM runs WHERE id = 1")
set -- $v
[ "${1:-1}" = 0 ] && [ "${2:-1}" = 0 ] && pass "no drops, no overflows (graph run)" "dropped $1, overflows $2" ||
	fail "no drops, no overflows (graph run)" "${v:-none}"

echo "== $fails check(s) failed; databases and logs in $OUT"
[ $fails -eq 0 ]
