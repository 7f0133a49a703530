#!/bin/sh
# The GPU-check bundle (tests/gpu/bundle.sh) on this machine, which has no
# GPU: built afresh, copied to a temporary directory and used there with a
# clean environment, so nothing reaches back into the source tree or the
# CUDA toolkit. Checks that it is self-contained (size, every ELF's
# libraries), that cyclescope and the bundled CUPTI work offline, that its
# run.sh stops at preflight here without blaming the collector, that the
# workloads are what the GPU needs, and (with BUILD/tests/replay_run and
# the sqlite3 shell) run.sh's checks over faked GPU data (tests/gpu/fake.sh),
# passing on the truth and failing on a broken one. TAP-style.
#   sh tests/gpu-bundle.sh [BUILD_DIR]
B=${1:-build}
. tests/lib.sh

NVCC=
if [ -n "${CUDA_HOME:-}" ] && [ -x "$CUDA_HOME/bin/nvcc" ]; then
	NVCC=$CUDA_HOME/bin/nvcc
else
	NVCC=$(command -v nvcc 2>/dev/null)
fi
if [ -z "$NVCC" ] || [ ! -f "$B/libcyclescope_collector.so" ]; then
	echo "# no nvcc or no collector (CUDA toolkit with CUPTI): GPU-bundle checks skipped"
	exit 0
fi
CUDA=$(dirname "$(dirname "$(readlink -f "$NVCC")")")
REPO=$(pwd)
BA=$(cd "$B" && pwd)

if ! command -v patchelf >/dev/null 2>&1; then
	no "patchelf is installed (.ci/install-deps)"
	exit $fails
fi
sh tests/gpu/bundle.sh "$B" >"$T/build.log" 2>&1 && ok "the bundle builds: $(tail -n 1 "$T/build.log" | sed "s/^bundle: //; s/;.*//")" ||
	{ no "the bundle builds" "$T/build.log"; exit $fails; }
cp -a "$B/gpu-bundle" "$T/b"
cd "$T/b" || exit 1
E="env -i PATH=/usr/bin:/bin HOME=$T"

# --- self-contained ---
sz=$(du -sb . | cut -f1)
[ "$sz" -lt $((60 << 20)) ] && ok "under 60 MiB ($((sz >> 20)) MiB)" || no "size $((sz >> 20)) MiB"
: >"$T/ldd"
for f in bin/* lib/*.so* lib/cyclescope/*.so workloads/*; do
	head -c 4 "$f" | grep -q 'ELF' || continue
	echo "== $f" >>"$T/ldd"
	$E ldd "$f" >>"$T/ldd" 2>&1
done
grep -q '^== workloads/truth$' "$T/ldd" && grep -q '^== lib/libcupti.so.13$' "$T/ldd" &&
	ok "ldd ran on $(grep -c '^== ' "$T/ldd") ELF files" || no "ldd over the bundle" "$T/ldd"
awk -v b="$T/b/" -v cuda="$CUDA" -v build="$BA/" -v repo="$REPO/" '
	/^== / { f = $2; next }
	/not found/ && !(f == "workloads/pm_probe" && $1 == "libcuda.so.1") { print f ": " $0; next }
	$2 == "=>" && $3 ~ /^\// {
		if (index($3, b) == 1) next
		if (index($3, cuda) == 1 || index($3, "/usr/local/cuda") == 1 || index($3, build) == 1 || index($3, repo) == 1 ||
		    $3 !~ /^\/(usr\/)?lib(64)?\//) print f ": " $0 }' "$T/ldd" >"$T/bad"
[ ! -s "$T/bad" ] && ok "every dependency resolves to the bundle or the system's /lib, /usr/lib (no toolkit, no build tree)" ||
	no "dependencies outside the bundle" "$T/bad"
grep -A 30 '^== lib/cyclescope/libcyclescope_collector.so$' "$T/ldd" | grep -q "libcupti.so.13 => $T/b/lib/cyclescope/../libcupti.so.13" &&
	ok "the collector finds libcupti in the bundle through its rpath" || no "collector's libcupti" "$T/ldd"
g=$(sed -n 's/^glibc needed: GLIBC_//p' MANIFEST)
awk -v g="$g" 'BEGIN { split(g, v, "."); exit !(g != "" && v[1] == 2 && v[2] <= 35) }' &&
	ok "glibc $g is enough (Ubuntu 22.04 has 2.35)" || no "glibc needed: '$g'" MANIFEST
cmp -s run.sh "$REPO/tests/gpu/run.sh" && [ -f README.md ] && ok "run.sh and README.md are in the bundle" || no "run.sh/README.md"

# --- cyclescope and the bundled CUPTI, offline ---
$E bin/cyclescope --help >"$T/out" 2>&1 && grep -q 'usage: cyclescope' "$T/out" && ok "bin/cyclescope --help" || no "--help" "$T/out"
SET=$(sed -n 's/^SET=//p' run.sh)
APIS=$(sed -n "s/^APIS='\\(.*\\)'\$/\\1/p" run.sh)
for s in "$SET" @memory-io @hopper-l2 @general; do
	$E bin/cyclescope metrics --chip GH100 --check "$s" >"$T/out" 2>&1 && grep -q '^ok: ' "$T/out" &&
		ok "metrics --check $(echo "$s" | cut -c1-40): one pass on GH100" || no "metrics --check $s" "$T/out"
done
$E bin/cyclescope run --list-apis --apis 'cudaMemcpy*' >"$T/out" 2>&1 && grep -qP '^runtime\t\d+\tcudaMemcpy_v3020\t' "$T/out" &&
	ok "run --list-apis --apis 'cudaMemcpy*'" || no "--list-apis" "$T/out"
$E bin/cyclescope run --list-apis --apis "$APIS" >"$T/out" 2>&1 && grep -q '__cudaLaunchKernel_v13000' "$T/out" &&
	ok "run.sh's --apis resolve (<<<>>> launches: __cudaLaunchKernel)" || no "run.sh's --apis" "$T/out"
$E bin/cyclescope run --db "$T/e.db" --nvtx --metrics "$SET" -- sh -c env >"$T/env" 2>&1
grep -qx "CUDA_INJECTION64_PATH=$T/b/lib/cyclescope/libcyclescope_collector.so" "$T/env" &&
	grep -qx "NVTX_INJECTION64_PATH=$T/b/lib/libcupti.so.13" "$T/env" &&
	ok "run --nvtx injects the bundle's collector and libcupti" || no "injection paths" "$T/env"

# --- run.sh here: stops at preflight, blames nothing on the collector ---
# (with LD_LIBRARY_PATH at the toolkit's libcupti, as GPU images set it)
TK=$(dirname "$(ldd "$BA/libcyclescope_collector.so" | sed -n 's/^[[:space:]]*libcupti\.so\.13 => \([^ ]*\) .*/\1/p')")
timeout 120 $E LD_LIBRARY_PATH="$TK" sh run.sh "$T/gpu-out" >"$T/table" 2>&1
rc=$?
[ $rc -eq 2 ] && ok "run.sh exits 2 (environment) without a driver" || no "run.sh exit status $rc" "$T/table"
grep -q '^preflight: NVIDIA driver .*no NVIDIA driver.*FAIL (preflight)$' "$T/table" &&
	ok "a preflight row says: no NVIDIA driver" || no "no-driver row" "$T/table"
grep -v '^preflight: ' "$T/table" | grep -v '^==' | grep -v 'skipped (preflight)$' >"$T/other"
[ ! -s "$T/other" ] && [ "$(grep -c 'skipped (preflight)$' "$T/table")" -ge 15 ] &&
	ok "every check reads 'skipped (preflight)'" || no "rows that are not preflight or skipped" "$T/other"
grep -q '^preflight: bundle libraries resolve .* ok$' "$T/table" && grep -q '^preflight: metric set fits one pass .* ok$' "$T/table" &&
	ok "preflight: the bundle's libraries and the metric set are fine here" || no "bundle preflight rows" "$T/table"
grep -q "^preflight: bundle libraries resolve .*libcupti from the bundle.* ok$" "$T/table" &&
	ok "preflight: the bundle's libcupti wins over LD_LIBRARY_PATH=$TK" || no "libcupti under LD_LIBRARY_PATH" "$T/table"
[ -f "$T/gpu-out/table.txt" ] && [ -f "$T/gpu-out/run.log" ] && ok "run.sh writes table.txt and run.log to OUTDIR" || no "OUTDIR files"
# a second run into the same OUTDIR would read run 1 of each database
timeout 60 $E sh run.sh "$T/gpu-out" >"$T/out" 2>&1
rc=$?
[ $rc -eq 2 ] && grep -q 'is not empty' "$T/out" && ok "run.sh refuses an OUTDIR that is not empty" || no "non-empty OUTDIR: exit $rc" "$T/out"

# --- the workloads ---
for w in truth pm_probe; do
	if [ $w = pm_probe ] && [ ! -e workloads/pm_probe ]; then
		# bundle.sh takes pm_probe.cu from ../shared/tools beside the repo
		echo "# no workloads/pm_probe: shared/tools/pm_probe.cu was not beside the repo; its check skipped"
		continue
	fi
	readelf -h "workloads/$w" 2>/dev/null | grep -q 'Machine:.*X86-64' || { no "workloads/$w is an x86-64 ELF"; continue; }
	u=$(sed -n "/^== workloads\\/$w\$/,/^== /p" "$T/ldd" | grep 'not found' | awk '{ print $1 }' | tr '\n' ' ')
	d=$(sed -n "/^== workloads\\/$w\$/,/^== /p" "$T/ldd" | grep -c 'libcudart\|libstdc++\|libcublas\|libnccl')
	[ "${u% }" = "$([ $w = pm_probe ] && echo libcuda.so.1)" ] && [ "$d" -eq 0 ] &&
		ok "workloads/$w: x86-64 ELF, static cudart and libstdc++, unresolved here: ${u:-nothing}" ||
		no "workloads/$w dependencies (unresolved: $u)" "$T/ldd"
done
grep -q '^loop_insts=[0-9]' workloads/truth.sass && grep -q '^loop_ffma=512$' workloads/truth.sass &&
	ok "truth_fma's SASS loop found: $(sed -n 's/^loop_insts=//p' workloads/truth.sass) instructions, 512 FFMAs" ||
	no "truth.sass" workloads/truth.sass
$E workloads/truth all >"$T/alone.out" 2>&1
want=$?
timeout 60 $E bin/cyclescope run --db "$T/w.db" -- workloads/truth all >"$T/out" 2>&1
rc=$?
[ $rc -ne 0 ] && [ $rc -eq $want ] && ok "run -- workloads/truth exits with the workload's status ($rc) here" ||
	no "run -- truth: exit $rc, alone $want" "$T/out"

# --- run.sh's checks over faked GPU data ---
cd "$REPO" || exit 1
if [ -x "$B/tests/replay_run" ] && command -v sqlite3 >/dev/null 2>&1; then
	sh tests/gpu/fake.sh "$B" "$T/fake" >"$T/out" 2>&1 &&
		$E GPU_CHECK_REPLAY="$T/fake" sh "$T/b/run.sh" "$T/fake-out" >"$T/table" 2>&1
	rc=$?
	grep -v '^==' "$T/table" | grep -v ' ok$' | grep -v ' info$' | grep -v ' skipped (not recorded)$' >"$T/other"
	[ $rc -eq 0 ] && [ ! -s "$T/other" ] && [ "$(grep -c ' ok$' "$T/table")" -ge 18 ] &&
		ok "run.sh passes every check on faked truth ($(grep -c ' ok$' "$T/table") ok)" || no "run.sh on faked truth (exit $rc)" "$T/table"
	sh tests/gpu/fake.sh "$B" "$T/fake2" dram=0.9 lost nvtx >"$T/out" 2>&1 &&
		$E GPU_CHECK_REPLAY="$T/fake2" sh "$T/b/run.sh" "$T/fake2-out" >"$T/table" 2>&1
	rc=$?
	f=$(grep ' FAIL$' "$T/table" | cut -c1-46 | sed 's/ *$//' | tr '\n' '|')
	[ $rc -eq 1 ] && [ "$f" = "DRAM bytes, stream kernels / footprint|NVTX ranges|two streams overlap|1 us, small buffer: losses are counted|" ] &&
		ok "and fails exactly the broken ones (DRAM x0.9, NVTX, overlap, silent loss)" || no "run.sh on broken truth: exit $rc, failed: $f" "$T/table"
	grep -q '^a kernel range per launch, joined to its call .*the 23 after the first joined (first: not joined).* ok$' "$T/table" &&
		grep -q '^kernel ranges vs cudaEvent times .* ok$' "$T/table" &&
		ok "the first launch without its API range and a first stream event 100 us long still pass" ||
		no "first launch / first event" "$T/table"
	# killed mid-run (the call's limit): PACKDIR still gets the table and
	# logs. A timeout(1) in front of the real one sends the TERM from
	# run.sh's first bounded command, while a query is under way.
	sh tests/gpu/fake.sh "$B" "$T/fake3" >"$T/out" 2>&1
	mkdir -p "$T/stop"
	printf '#!/bin/sh\n[ -f %s/stop/armed ] && rm -f %s/stop/armed && kill -TERM "$(cat %s/stop/pid)"\nexec %s "$@"\n' \
		"$T" "$T" "$T" "$(command -v timeout)" >"$T/stop/timeout"
	chmod +x "$T/stop/timeout"
	: >"$T/stop/armed"
	$E PATH="$T/stop:/usr/bin:/bin" GPU_CHECK_REPLAY="$T/fake3" \
		sh -c 'echo $$ >"$1/stop/pid"; exec sh "$1/b/run.sh" "$1/fake3-out" "$1/pack3"' sh "$T" >"$T/table3" 2>&1
	rc=$?
	[ $rc -eq 124 ] && [ -s "$T/pack3/table.txt" ] && grep -q '^==> run.log <==' "$T/pack3/logs.txt" &&
		ok "run.sh killed by SIGTERM mid-run: exit 124, PACKDIR has table.txt and logs.txt" ||
		no "SIGTERM mid-run: exit $rc, pack: $(ls "$T/pack3" 2>/dev/null | tr '\n' ' ')" "$T/table3"
else
	echo "# $B/tests/replay_run or sqlite3 missing: run.sh's checks over faked data skipped"
fi

# --- run.sh's checks over what an H200 measured (tests/fixtures/gpu-h200) ---
$E GPU_CHECK_REPLAY="$REPO/tests/fixtures/gpu-h200" sh "$T/b/run.sh" "$T/h200-out" >"$T/table" 2>&1
rc=$?
grep -v '^==' "$T/table" | grep -v ' ok$' | grep -v ' info$' | grep -v ' skipped (not recorded)$' >"$T/other"
k=$(grep -c ' ok$' "$T/table")
[ $rc -eq 0 ] && [ ! -s "$T/other" ] && [ "$k" -ge 21 ] &&
	ok "run.sh passes every check on the H200 recording ($k ok)" || no "run.sh on the H200 recording (exit $rc)" "$T/table"
# the same recording without its kernel ranges: every row is still
# written (no abort on an empty column) and the range checks fail
if command -v sqlite3 >/dev/null 2>&1; then
	cp -R "$REPO/tests/fixtures/gpu-h200" "$T/nok"
	chmod -R u+w "$T/nok"
	sqlite3 "$T/nok/truth.db" "DELETE FROM ranges WHERE kind = 'kernel'"
	$E GPU_CHECK_REPLAY="$T/nok" sh "$T/b/run.sh" "$T/nok-out" >"$T/table" 2>&1
	rc=$?
	[ $rc -eq 1 ] && grep -q '^kernel ranges vs cudaEvent times .* FAIL$' "$T/table" &&
		grep -q '^a kernel range per launch.* FAIL$' "$T/table" && grep -q '^== .* check(s) failed' "$T/table" &&
		ok "without kernel ranges the table is written to the end and their checks fail" ||
		no "run.sh on a recording without kernel ranges (exit $rc)" "$T/table"
fi
exit $fails
