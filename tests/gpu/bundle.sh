#!/bin/sh
# Builds the self-contained GPU-check bundle: everything tests/gpu/run.sh
# needs on a machine that has only an NVIDIA driver, a POSIX shell and
# coreutils (no toolkit, no SQLite, no network).
#
#   sh tests/gpu/bundle.sh [BUILD_DIR]      (make gpu-bundle; after make all)
#
# BUILD_DIR/gpu-bundle/
#   run.sh, README.md, MANIFEST       the check, how to run it, what is in here
#   oracles.sh, workloads/gemm.py     ncu, clocks and torch beside the collector
#   workloads/btrace.so               a fatal signal's stack, for crashed runs
#   bin/cyclescope                    rpath $ORIGIN/../lib
#   lib/cyclescope/libcyclescope_collector.so     rpath $ORIGIN/.. (found by
#                                     cyclescope in ../lib/cyclescope/)
#   lib/                              libcupti.so.13, libnvperf_host.so from
#                                     the toolkit (libnvperf_target.so with
#                                     BUNDLE_NVPERF_TARGET=1: unused); the
#                                     non-glibc libraries of the two above
#                                     (sqlite3, zstd, microhttpd, curl, ...),
#                                     each with rpath $ORIGIN
#   share/cyclescope/metric-sets/     the shipped sets (@hopper-l2 ...)
#   workloads/truth, truth.sass       tests/gpu/truth.cu for sm_90 (+compute_90
#                                     PTX), static cudart and libstdc++ (glibc
#                                     2.34 is enough: glibc_compat.c); the
#                                     SASS facts of truth_fma from its cubin
#   workloads/pm_probe                ../shared/tools/pm_probe.cu (when found),
#                                     libcupti through the rpath, the driver's
#                                     libcuda.so.1 at run time
# glibc's own libraries (libc, libm, libpthread, libdl, librt, libutil,
# libresolv, ld-linux) and libgcc_s stay the system's. Needs nvcc (CUDA_HOME
# or on PATH) and patchelf (.ci/install-deps).
set -eu
B=${1:-build}
[ -d "$B" ] || { echo "bundle.sh: no build directory '$B' (make all first)" >&2; exit 1; }
B=$(cd "$B" && pwd)
SRC=$(cd "$(dirname "$0")" && pwd) # tests/gpu
REPO=$(cd "$SRC/../.." && pwd)
OUT=$B/gpu-bundle
TMP=$B/gpu-bundle.tmp
die() { echo "bundle.sh: $*" >&2; exit 1; }

NVCC=
if [ -n "${CUDA_HOME:-}" ] && [ -x "$CUDA_HOME/bin/nvcc" ]; then
	NVCC=$CUDA_HOME/bin/nvcc
elif command -v nvcc >/dev/null 2>&1; then
	NVCC=$(readlink -f "$(command -v nvcc)")
	CUDA_HOME=$(dirname "$(dirname "$NVCC")")
fi
[ -n "$NVCC" ] || die "no nvcc (set CUDA_HOME or put nvcc on PATH)"
command -v patchelf >/dev/null 2>&1 || die "no patchelf (apt-get install patchelf; .ci/install-deps installs it)"
[ -x "$B/cyclescope" ] || die "$B/cyclescope not built (make all)"
[ -f "$B/libcyclescope_collector.so" ] || die "$B/libcyclescope_collector.so not built (CUDA toolkit with CUPTI needed)"

rm -rf "$TMP"
mkdir -p "$TMP/bin" "$TMP/lib/cyclescope" "$TMP/share/cyclescope/metric-sets" "$TMP/workloads" "$TMP/.keep"

# --- the workloads (both nvcc runs at once) ---
PROBE_SRC=
for p in "${PM_PROBE_SRC:-}" "$REPO/../shared/tools/pm_probe.cu" "$REPO/shared/tools/pm_probe.cu"; do
	[ -n "$p" ] && [ -f "$p" ] && { PROBE_SRC=$p; break; }
done
CUPTI_SO=$(ldd "$B/libcyclescope_collector.so" | sed -n 's/^[[:space:]]*libcupti\.so\.13 => \([^ ]*\) .*/\1/p')
[ -f "$CUPTI_SO" ] || die "the collector's libcupti.so.13 does not resolve (ldd $B/libcyclescope_collector.so)"
CUPTI_DIR=$(dirname "$(readlink -f "$CUPTI_SO")")
# libstdc++ static (the GPU machine's may be older), libgcc_s the system's;
# glibc_compat.c keeps libstdc++.a from needing glibc 2.36.
STATIC="-Xcompiler -static-libstdc++"
# shellcheck disable=SC2086
"$NVCC" -O2 -arch=sm_90 $STATIC -keep -keep-dir "$TMP/.keep" -I"$CUDA_HOME/include" \
	-o "$TMP/workloads/truth" "$SRC/truth.cu" "$SRC/glibc_compat.c" >"$TMP/.keep/truth.log" 2>&1 &
tpid=$!
ppid=
if [ -n "$PROBE_SRC" ]; then
	STUBS=
	for s in "$CUDA_HOME/lib64/stubs" "$CUDA_HOME/targets/x86_64-linux/lib/stubs"; do
		[ -f "$s/libcuda.so" ] && { STUBS=$s; break; }
	done
	[ -n "$STUBS" ] || die "no libcuda.so stub under $CUDA_HOME (lib64/stubs)"
	# DT_RPATH, not RUNPATH: it also serves libcupti's own dlopen of
	# libnvperf_host.so, which has no rpath of its own.
	# shellcheck disable=SC2086
	"$NVCC" -O2 -arch=sm_90 $STATIC -I"$CUDA_HOME/include" -o "$TMP/workloads/pm_probe" "$PROBE_SRC" "$SRC/glibc_compat.c" \
		-L"$CUPTI_DIR" -lcupti -L"$STUBS" -lcuda \
		-Xlinker --disable-new-dtags -Xlinker -rpath -Xlinker '$ORIGIN/../lib' \
		>"$TMP/.keep/probe.log" 2>&1 &
	ppid=$!
else
	echo "bundle.sh: pm_probe.cu not found (../shared/tools/ or PM_PROBE_SRC): the bundle has no probe" >&2
fi
wait "$tpid" || { cat "$TMP/.keep/truth.log" >&2; die "nvcc failed on truth.cu"; }
[ -z "$ppid" ] || wait "$ppid" || { cat "$TMP/.keep/probe.log" >&2; die "nvcc failed on pm_probe.cu"; }

# --- SASS facts of truth_fma, read from the cubin truth embeds ---
# Instructions are 16 bytes; the opcode is the low 12 bits of the first
# 8 bytes (FFMA: ...23, BRA: 947). A BRA's offset, in 4-byte words, is
# bits 32..63 (signed) times 64 plus bits 16..23. The loop is the range a
# backward BRA closes; it must hold the 8 x 64 FFMAs truth.cu unrolls, or
# only the function's size is written (run.sh then uses bounds).
CUBIN=$(ls "$TMP"/.keep/truth*.sm_90.cubin 2>/dev/null | grep -v dlink | head -n 1)
[ -n "$CUBIN" ] || die "nvcc -keep left no sm_90 cubin"
sec=$(readelf -S --wide "$CUBIN" 2>/dev/null | sed -n 's/.*\] \.text\.truth_fma  *PROGBITS  *[0-9a-f]*  *\([0-9a-f]*\)  *\([0-9a-f]*\) .*/\1 \2/p')
[ -n "$sec" ] || die "no .text.truth_fma in $CUBIN"
set -- $sec
{
	echo "# SASS facts of truth_fma (sm_90) from the cubin workloads/truth embeds ($(basename "$CUBIN"))"
	od -An -v -tx8 -w16 -j $((0x$1)) -N $((0x$2)) "$CUBIN" | awk -v want=512 '
	function hex(s,   i, v) { v = 0; for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1; return v }
	{ lo[n] = $1; n++ }
	END {
		print "static_insts=" n
		for (i = 0; i < n; i++) {
			if (substr(lo[i], 14, 3) != "947") continue
			f = hex(substr(lo[i], 1, 8)); if (f >= 2147483648) f -= 4294967296
			w = f * 64 + hex(substr(lo[i], 11, 2))
			if (w % 4 || w >= 0) continue
			t = i + 1 + w / 4
			if (t < 0 || t > i) continue
			c = 0
			for (j = t; j <= i; j++) if (lo[j] ~ /[02468ace]23$/) c++
			if (c == want) { print "loop_insts=" i - t + 1; print "loop_ffma=" c; print "loop_first=" t; print "loop_branch=" i; found = 1; break }
		}
		if (!found) print "# the loop was not found: run.sh uses bounds (512 FFMAs .. static_insts per iteration)"
	}'
} >"$TMP/workloads/truth.sass"

# --- cyclescope, the collector, the libraries ---
cp "$B/cyclescope" "$TMP/bin/"
cp "$B/libcyclescope_collector.so" "$TMP/lib/cyclescope/"
strip --strip-debug "$TMP/bin/cyclescope" "$TMP/lib/cyclescope/libcyclescope_collector.so"
cp "$REPO"/configs/metric-sets/*.txt "$TMP/share/cyclescope/metric-sets/"
# glibc's and libgcc's stay the system's
system_lib() {
	case "$1" in
	linux-vdso.so.* | ld-linux*.so.* | libc.so.* | libm.so.* | libpthread.so.* | libdl.so.* | \
		librt.so.* | libutil.so.* | libresolv.so.* | libgcc_s.so.* | libanl.so.* | libnsl.so.*) return 0 ;;
	esac
	return 1
}
for f in "$B/cyclescope" "$B/libcyclescope_collector.so"; do
	ldd "$f" | awk '$2 == "=>" && $3 ~ /^\// { print $1, $3 }'
done | sort -u | while read -r name path; do
	system_lib "$name" && continue
	[ -f "$TMP/lib/$name" ] && continue
	cp -L "$path" "$TMP/lib/$name"
	chmod 755 "$TMP/lib/$name"
	case "$name" in
	libcupti.so.* | libnvperf_*) ;; # NVIDIA's, untouched
	*) patchelf --force-rpath --set-rpath '$ORIGIN' "$TMP/lib/$name" ;;
	esac
done
[ -f "$TMP/lib/libcupti.so.13" ] || die "libcupti.so.13 was not copied"
# libnvperf_target.so (5 MiB) only with BUNDLE_NVPERF_TARGET=1: libcupti
# never loads it (it dlopens libnvperf_host.so, which exports the target
# API too), and the bundle stays under 60 MiB without it.
for n in libnvperf_host.so $([ "${BUNDLE_NVPERF_TARGET:-0}" = 1 ] && echo libnvperf_target.so); do
	[ -f "$TMP/lib/$n" ] || cp -L "$CUPTI_DIR/$n" "$TMP/lib/$n"
done
# DT_RPATH, not RUNPATH: searched before LD_LIBRARY_PATH, so a toolkit's
# lib64 there (GPU images often set one) cannot hand the collector another
# libcupti; DT_RPATH also serves the libraries these load.
patchelf --force-rpath --set-rpath '$ORIGIN/../lib' "$TMP/bin/cyclescope"
patchelf --force-rpath --set-rpath '$ORIGIN/..' "$TMP/lib/cyclescope/libcyclescope_collector.so"

cc -O2 -shared -fPIC -o "$TMP/workloads/btrace.so" "$SRC/btrace.c" || die "cc failed on btrace.c"
cp "$SRC/run.sh" "$TMP/run.sh"
cp "$SRC/oracles.sh" "$TMP/oracles.sh"
cp "$SRC/gemm.py" "$TMP/workloads/gemm.py"
cp "$SRC/README.md" "$TMP/README.md"
rm -rf "$TMP/.keep"

# --- every dependency resolves inside the bundle or to the system's glibc ---
bad=$(for f in "$TMP"/bin/* "$TMP"/lib/*.so* "$TMP"/lib/cyclescope/*.so "$TMP"/workloads/truth "$TMP"/workloads/pm_probe; do
	[ -f "$f" ] || continue
	env -u LD_LIBRARY_PATH ldd "$f" 2>&1 | while read -r line; do
		set -- $line
		case "$line" in
		"libcuda.so.1 => not found") ;; # the driver's, on the GPU machine
		*"not found"*) echo "$f: $line" ;;
		*" => $TMP/"*) ;;
		*" => /"*) system_lib "$1" || echo "$f: $1 => $3" ;;
		esac
	done
done)
[ -z "$bad" ] || die "dependencies outside the bundle:
$bad"

{
	echo "# cyclescope GPU-check bundle"
	echo "built $(date -u '+%Y-%m-%d %H:%M:%SZ') on $(uname -n) from $(git -C "$REPO" describe --always --dirty 2>/dev/null || echo '?')"
	echo "nvcc: $("$NVCC" --version | tail -n 1)"
	echo "glibc needed: $(for f in "$TMP"/bin/* "$TMP"/lib/*.so* "$TMP"/lib/cyclescope/*.so "$TMP"/workloads/*; do
		objdump -T "$f" 2>/dev/null; done | grep -o 'GLIBC_[0-9.]*' | sort -t. -k2,2n -k3,3n -u | tail -n 1)"
	echo
	(cd "$TMP" && find . -type f ! -name MANIFEST | sort | while read -r f; do
		printf '%10s  %s\n' "$(wc -c <"$f")" "${f#./}"
	done)
} >"$TMP/MANIFEST"

rm -rf "$OUT"
mv "$TMP" "$OUT"
echo "bundle: $OUT ($(du -sh "$OUT" | cut -f1)); on the GPU machine: sh gpu-bundle/run.sh OUTDIR"
