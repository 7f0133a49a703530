#!/bin/sh
# Import speed of the large formats against plain decompression of the
# same file, measured in the same run (goal: the import takes at most 2x
# the time of `zcat FILE > /dev/null`). Inputs are made here: the real
# QV100 visualizer log repeated (a multi-member gzip of 40 x N samples), a
# perf_counter CSV of Accel-Sim's shape (one gzip member per 64 rows), and
# the hardware tools' files below.
#   sh tests/bench/bench_import.sh BUILD_DIR WORK_DIR
B=${1:-build}
W=${2:-$B/bench}
CS="$B/cyclescope"
mkdir -p "$W"
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }
best() { # CMD... -> best wall time of 3 runs
	b=
	for i in 1 2 3; do
		t0=$(now)
		"$@" >/dev/null 2>&1
		t1=$(now)
		d=$(secs "$t0" "$t1")
		b=$(awk -v x="$d" -v y="${b:-1e9}" 'BEGIN { print (x < y) ? x : y }')
	done
	echo "$b"
}
AV=tests/fixtures/accelsim-qv100/gpgpusim_visualizer__Wed-Dec--2-10-17-51-2026.log.gz
: >"$W/av.log.gz"
for i in $(seq 1 50); do cat "$AV" >>"$W/av.log.gz"; done
python3 - "$W/perf.csv.gz" <<'PY'
import gzip, sys
cols = ["gpu_tot_sim_cycle", "gpu_sim_cycle", "gpu_tot_sim_insn", "gpu_sim_insn"] + \
       ["m_num_sim_winsn_%d" % i for i in range(132)] + ["occupancy"] + \
       ["LRC_subpartition_num_icnt_to_lrc_sectors_%d" % i for i in range(80)] + \
       ["interchip_read_requests", "interchip_write_requests"]
acc = [0] * len(cols)
with open(sys.argv[1], "wb") as f:
    f.write(gzip.compress(("".join(c + "," for c in cols) + "\n").encode(), 1))
    block = []
    for r in range(60000):
        cyc = (r + 1) * 500
        row = []
        for j, c in enumerate(cols):
            if j == 0: row.append("0")
            elif j == 1: row.append(str(cyc))
            elif c == "occupancy": row.append("%f" % (0.5 + (r % 7) / 100))
            else:
                acc[j] += (r * 7 + j) % 97
                row.append(str(acc[j]))
        block.append("".join(v + "," for v in row) + "\n")
        if len(block) == 64:
            f.write(gzip.compress("".join(block).encode(), 1)); block = []
    if block:
        f.write(gzip.compress("".join(block).encode(), 1))
PY
# The files GPU engineers hold, in their tools' shapes, large: an
# nvidia-smi log of 8 GPUs every 100 ms, nsys and nvprof GPU traces, a
# long CSV (one row per time, metric and value).
python3 - "$W" <<'PY'
import gzip, sys
w = sys.argv[1]
with gzip.open(w + "/smi.csv.gz", "wt", compresslevel=1) as f:
    f.write("timestamp, index, name, pci.bus_id, power.draw [W], clocks.current.sm [MHz], "
            "clocks.current.memory [MHz], utilization.gpu [%], memory.used [MiB], temperature.gpu\n")
    for r in range(90000):
        s, ms = divmod(r * 100, 1000)
        h, rest = divmod(s, 3600)
        for g in range(8):
            f.write("2026/11/30 %02d:%02d:%02d.%03d, %d, NVIDIA H100 80GB HBM3, 00000000:%02X:00.0, "
                    "%.2f W, %d MHz, 2619 MHz, %d %%, %d MiB, %d\n" % (h % 24, rest // 60, rest % 60, ms + g,
                    g, 0x19 + g, 80 + (r * 7 + g) % 600 + 0.37, 1980 - (r % 40) * 10, r % 101,
                    3441 + (r % 5000) * 12, 34 + (r + g) % 40))
with gzip.open(w + "/nsys-trace.csv.gz", "wt", compresslevel=1) as f:
    f.write("Start (ns),Duration (ns),CorrId,GrdX,GrdY,GrdZ,BlkX,BlkY,BlkZ,Reg/Trd,StcSMem (MB),"
            "DymSMem (MB),Bytes (MB),Throughput (MB/s),SrcMemKd,DstMemKd,Device,Ctx,GreenCtx,Strm,Name\n")
    t = 1000
    for r in range(700000):
        t += 1500 + r % 700
        if r % 10 == 9:
            f.write("%d,%d,%d,,,,,,,,,,33.554,95195.131,Pinned,Device,NVIDIA H100 80GB HBM3 (%d),1,,7,"
                    "[CUDA memcpy Host-to-Device]\n" % (t, 352480, r, r % 8))
        else:
            f.write('%d,%d,%d,132,1,1,128,1,1,128,0.049,0.000,,,,,NVIDIA H100 80GB HBM3 (%d),1,,%d,'
                    '"void gemm_kernel<float, 128>(float *, const float *, int)"\n' % (t, 1200 + r % 900, r, r % 8, 13 + r % 2))
with gzip.open(w + "/nvprof-trace.csv.gz", "wt", compresslevel=1) as f:
    f.write("==20153== Profiling result:\n")
    f.write('"Start","Duration","Grid X","Grid Y","Grid Z","Block X","Block Y","Block Z","Registers Per Thread",'
            '"Static SMem","Dynamic SMem","Size","Throughput","SrcMemType","DstMemType","Device","Context","Stream",'
            '"Name","Correlation_ID"\nms,us,,,,,,,,KB,B,MB,GB/s,,,,,,,\n')
    t = 0.0
    for r in range(700000):
        t += 0.0017
        f.write('%.6f,%.6f,80,1,1,256,1,1,128,48.000000,0,,,,,"Tesla V100-SXM2-16GB (0)","1","%d",'
                '"void gemm_kernel<float, 128>(float*, float const*, int)",%d\n' % (t, 1.2 + (r % 900) / 1000, 13 + r % 2, r))
with gzip.open(w + "/long.csv.gz", "wt", compresslevel=1) as f:
    f.write("timestamp,kernel_name,metric_name,metric_value\n")
    names = ["sm__inst_executed.sum", "lts__t_sectors.sum", "dram__bytes_read.sum", "gpc__cycles_elapsed.max",
             "sm__warps_active.avg", "l1tex__t_sectors.sum", "smsp__cycles_active.avg", "nvlrx__bytes.sum"]
    for r in range(250000):
        k = "gemm" if (r // 1000) % 2 else "nccl_allgather"
        for j, m in enumerate(names):
            f.write("%d,%s,%s,%d\n" % (r * 10000, k, m, (r * 31 + j * 7) % 100000))
PY
echo "== import speed vs decompression (best of 3)"
printf '%-16s %10s %10s %10s %10s %8s\n' format "text MB" "zcat s" "import s" "MB/s" ratio
for f in aerialvision:av.log.gz accelsim-perf:perf.csv.gz nvidia-smi:smi.csv.gz nsys-stats:nsys-trace.csv.gz \
	nvprof-csv:nvprof-trace.csv.gz csv-long:long.csv.gz; do
	fmt=${f%%:*} file=$W/${f#*:}
	mb=$(zcat "$file" | wc -c | awk '{ printf "%.1f", $1 / 1e6 }')
	z=$(best sh -c "zcat '$file' > /dev/null")
	i=$(best sh -c "rm -f '$W/i.db'; '$CS' import $fmt '$file' --db '$W/i.db'")
	ratio=$(awk -v a="$i" -v b="$z" 'BEGIN { printf "%.2f", a / b }')
	printf '%-16s %10s %10s %10s %10.1f %7.2fx\n' "$fmt" "$mb" "$z" "$i" \
		"$(awk -v m="$mb" -v t="$i" 'BEGIN { print m / t }')" "$ratio"
	[ -n "$BENCH_FIGURES" ] && echo "import.speed.${fmt}_over_zcat $ratio $ratio x <=2" >>"$BENCH_FIGURES"
done

# Bytes per value of simulator runs: the real QV100 visualizer log alone
# (40 samples x 879 metrics: the file's fixed pages dominate) and repeated
# 50 times (2000 samples); values counted through the series table.
fig() { [ -n "$BENCH_FIGURES" ] && echo "$*" >>"$BENCH_FIGURES"; return 0; }
echo "== bytes per stored value (file size after a checkpoint / present values)"
for f in one:"$AV" x50:"$W/av.log.gz"; do
	tag=${f%%:*} file=${f#*:}
	rm -f "$W/sz.db"*
	"$CS" import aerialvision "$file" --db "$W/sz.db" >/dev/null 2>&1
	sqlite3 "$W/sz.db" "PRAGMA wal_checkpoint(TRUNCATE)" >/dev/null
	v=$("$CS" query --db "$W/sz.db" "SELECT count(*) FROM series" | tail -n 1 | tr -d '\r')
	bytes=$(stat -c %s "$W/sz.db")
	bpv=$(awk -v b="$bytes" -v v="$v" 'BEGIN { printf "%.3f", b / v }')
	printf '%-34s %10s values %10s bytes %8s B/value\n' "qv100 visualizer ($tag)" "$v" "$bytes" "$bpv"
	fig "import.size.qv100_visualizer_$tag" "$bpv" "$bpv" B/value -
done
rm -f "$W/sz.db"*
