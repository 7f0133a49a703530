#!/bin/sh
# Fakes what tests/gpu/run.sh reads from a GPU, so its checks can be run on
# a machine without one: the workload's output (plain, truth, fast, tiny
# .out and .wall) and run databases written by the collector's own
# pipeline (BUILD/tests/replay_run) from a synthetic recording of the
# truth workload's phases, with the ranges the collector would store
# (inserted with the sqlite3 shell).
#   sh tests/gpu/fake.sh BUILD_DIR OUTDIR [SKEW...]
# SKEW words break the truth on purpose, so a test can see a check fail:
#   dram=F   DRAM bytes of the stream kernels times F
#   lost     the 1 us run loses samples without counting them
#   nvtx     the NVTX range 'overlap' is missing
# As on a GPU, the first launch has no API range (it calls cuInit, which
# loads the collector) and the first truth_stream's events span 100 us more than its kernel.
# Then: GPU_CHECK_REPLAY=OUTDIR sh BUNDLE/run.sh OUT2
set -eu
B=$1
O=$2
shift 2
SKEW="$*"
RR=$B/tests/replay_run
[ -x "$RR" ] || { echo "fake.sh: $RR not built" >&2; exit 1; }
command -v sqlite3 >/dev/null 2>&1 || { echo "fake.sh: no sqlite3 shell" >&2; exit 1; }
mkdir -p "$O"
M=pcie__read_bytes.sum,pcie__write_bytes.sum,dram__bytes_read.sum,dram__bytes_write.sum,sm__inst_executed.sum,sm__ctas_launched.sum,gpu__time_duration.sum,lts__t_bytes.sum,gr__cycles_elapsed.max
LOOP=515
cat >"$O/truth.sass" <<EOF
static_insts=560
loop_insts=$LOOP
loop_ffma=512
EOF

# gen NAME INTERVAL_NS: NAME.rec (the recording), NAME.sql (ranges),
# NAME.out (the workload's stdout)
gen() {
	awk -v name="$1" -v iv="$2" -v loop="$LOOP" -v metrics="$M" -v skew="$SKEW" -v dir="$O" '
	function act(metric, a, b, total) { na++; am[na] = metric; a0[na] = a; a1[na] = b; at[na] = total }
	function rng(kind, nm, a, b, stream, corr, bytes) {
		printf "INSERT INTO ranges(run, kind, name, t0, t1, device, stream, correlation_id, pid, tid, bytes) VALUES (1, '\''%s'\'', '\''%s'\'', %.0f, %.0f, 0, %d, %d, 1, 1, %s);\n",
			kind, nm, T + a, T + b, stream, corr, bytes == "" ? "NULL" : bytes > sql }
	function kernel(nm, a, b, stream, warps, iters, ctas, evms) {
		corr++
		# as on a GPU: the first launch calls cuInit, which loads the
		# collector, so its call has no API range
		if (corr > 1) rng("api", "__cudaLaunchKernel", a - 20000, a - 15000, 0, corr, "")
		rng("kernel", nm, a, b, stream, corr, "")
		if (warps) act("sm__inst_executed.sum", a, b, warps * iters * loop + warps * 20)
		if (ctas) act("sm__ctas_launched.sum", a, a + 1000, ctas)
		# the first stream kernel: its events also hold the function load
		late = (nm == "truth_stream" && !nstream++) ? 0.1 : 0
		if (evms != "") print "event name=" nm " ms=" sprintf("%.4f", (b - a) / 1e6 + 0.004 + late) > out
	}
	BEGIN {
		T = 1700000000000000000; out = dir "/" name ".out"; sql = dir "/" name ".sql"; rec = dir "/" name ".rec"
		n = split(metrics, mn, ",")
		dram = 1; if (match(skew, /dram=[0-9.]+/)) dram = substr(skew, RSTART + 5, RLENGTH - 5) + 0
		print "DELETE FROM ranges;" > sql
		if (name == "tiny") {
			# 1 us: a stream of kernels; losses counted unless skew says "lost"
			end = 60e6
			for (k = 0; k < 40; k++) kernel("truth_stream", 5e6 + k * 1.2e6, 5e6 + k * 1.2e6 + 1e6, 7, 0, 0, 0, "")
			print "stream_launches=40" > out
		} else {
			end = 300e6; MiB = 1048576
			kernel("truth_fma", 1e6, 9e6, 7, 8192, 2000, 1024, "")
			print "first_ctas=1024\nfirst_warps=8192\nfirst_iters=2000\ngpu=NVIDIA H200\nsms=132\ncc=9.0" > out
			corr++; rng("api", "cudaMemcpy", 29.99e6, 35.5e6, 0, corr, ""); rng("memcpy", "memcpy HtoD", 30e6, 35.4e6, 7, corr, 256 * MiB)
			act("pcie__read_bytes.sum", 30e6, 35.4e6, 256 * MiB + 4096); act("pcie__write_bytes.sum", 30e6, 35.4e6, 8192)
			act("dram__bytes_write.sum", 30e6, 35.4e6, 256 * MiB)
			corr++; rng("api", "cudaMemcpy", 55.39e6, 60.9e6, 0, corr, ""); rng("memcpy", "memcpy DtoH", 55.4e6, 60.8e6, 7, corr, 256 * MiB)
			act("pcie__write_bytes.sum", 55.4e6, 60.8e6, 256 * MiB + 4096); act("dram__bytes_read.sum", 55.4e6, 60.8e6, 256 * MiB)
			printf "h2d_bytes=%.0f\nd2h_bytes=%.0f\nphase name=copy ms=11.000\n", 256 * MiB, 256 * MiB > out
			printf "stream_launches=16\nstream_bytes_read=%.0f\nstream_bytes_written=%.0f\n", 16 * 1024 * MiB, 16 * 1024 * MiB > out
			for (k = 0; k < 16; k++) {
				a = 90e6 + k * 0.605e6; b = a + 0.6e6
				kernel("truth_stream", a, b, 7, 0, 0, 1056, "e")
				act("dram__bytes_read.sum", a, b, 1024 * MiB * dram); act("dram__bytes_write.sum", a, b, 1024 * MiB * dram)
				act("lts__t_bytes.sum", a, b, 2048 * MiB * 1.01)
			}
			print "phase name=stream ms=9.700" > out
			print "fma_launches=3\nfma_ctas=1584\nfma_warps=12672\nfma_iters=2400" > out
			for (k = 0; k < 3; k++) kernel("truth_fma", 120e6 + k * 10.01e6, 130e6 + k * 10.01e6, 7, 4224, 2400, 528, "e")
			print "phase name=fma ms=30.050" > out
			print "comm_blocks=16\ncomm_ms=30.0\ncompute_ctas=464" > out
			kernel("truth_comm", 170e6, 200e6, 13, 0, 0, 16, "e")
			kernel("truth_comm", 220e6, 250e6, 13, 0, 0, 16, "e")
			kernel("truth_fma", 220.02e6, 230e6, 14, 3712, 2400, 464, "e")
			kernel("truth_fma", 270e6, 279e6, 14, 3712, 2400, 464, "e")
			print "phase name=overlap ms=70.000\ncomm_loops=1234\nfma_out0=1" > out
			nvtx["truth"] = 10e6 " " 290e6; nvtx["copy"] = 25e6 " " 61e6; nvtx["stream"] = 85e6 " " 101e6
			nvtx["fma"] = 115e6 " " 152e6; nvtx["comm-alone"] = 169e6 " " 201e6
			if (skew !~ /nvtx/) nvtx["overlap"] = 219e6 " " 251e6
			nvtx["compute-alone"] = 269e6 " " 281e6
			for (k in nvtx) { split(nvtx[k], p, " "); rng("nvtx", k, p[1], p[2], 0, 0, "") }
			print "kernel_launches=24" > out
		}
		work = name == "plain" ? 120.5 : name == "truth" ? 123.1 : name == "fast" ? 131.7 : 60
		printf "work_ms=%.3f\nwall_ms=%.3f\n", work, work + 300 > out
		# the recording: samples of every metric at iv over [0.3 ms, end]
		print "metrics " metrics > rec
		ns = 0
		for (t = 0.3e6; t + iv <= end; t += iv) {
			if (ns % 2000 == 0) {
				if (name == "tiny" && ns == 4000 && skew !~ /lost/) print "batch overflows=1 lost=0" > rec
				else print "batch" > rec
			}
			ns++
			if (name == "tiny" && ns > 4000 && ns < 9000) continue # lost samples
			line = sprintf("%.0f %.0f", T + t, T + t + iv)
			for (i = 1; i <= n; i++) v[mn[i]] = 0
			v["gpu__time_duration.sum"] = iv; v["gr__cycles_elapsed.max"] = iv * 1.755
			for (j = 1; j <= na; j++) {
				lo = a0[j] > t ? a0[j] : t; hi = a1[j] < t + iv ? a1[j] : t + iv
				if (hi > lo) v[am[j]] += at[j] * (hi - lo) / (a1[j] - a0[j])
			}
			for (i = 1; i <= n; i++) line = line sprintf(" %.0f", v[mn[i]])
			print line > rec
		}
	}'
	echo "$3" >"$O/$1.wall"
}

for r in "plain 100000 1420" "truth 100000 1980" "fast 10000 2110" "tiny 1000 900"; do
	set -- $r
	gen "$@"
	[ "$1" = plain ] && { rm -f "$O/plain.rec" "$O/plain.sql"; continue; }
	rm -f "$O/$1.db"
	# the recording's ranges are replaced by the workload's
	"$RR" --db "$O/$1.db" --name "$1" "$O/$1.rec" >"$O/$1.replay" 2>&1
	sqlite3 "$O/$1.db" <"$O/$1.sql"
	sqlite3 "$O/$1.db" "UPDATE runs SET meta = json_set(meta, '\$.interval_ns', $2)"
	# the engine counts a gap in the timeline as lost: "lost" hides it
	case "$1 $SKEW" in tiny*lost*) sqlite3 "$O/$1.db" "UPDATE runs SET overflows = 0, dropped = 0" ;; esac
	rm -f "$O/$1.rec" "$O/$1.sql"
done
