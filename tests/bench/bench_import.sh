#!/bin/sh
# Import speed of the simulator formats against plain decompression of the
# same file, measured in the same run (issue goal: the import takes at most
# 2x the time of `zcat FILE > /dev/null`). Inputs are made here: the real
# QV100 visualizer log repeated (a multi-member gzip of 40 x N samples) and
# a perf_counter CSV of Accel-Sim's shape (one gzip member per 64 rows).
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
echo "== import speed vs decompression (best of 3)"
printf '%-16s %10s %10s %10s %10s %8s\n' format "text MB" "zcat s" "import s" "MB/s" ratio
for f in aerialvision:av.log.gz accelsim-perf:perf.csv.gz; do
	fmt=${f%%:*} file=$W/${f#*:}
	mb=$(zcat "$file" | wc -c | awk '{ printf "%.1f", $1 / 1e6 }')
	z=$(best sh -c "zcat '$file' > /dev/null")
	i=$(best sh -c "rm -f '$W/i.db'; '$CS' import $fmt '$file' --db '$W/i.db'")
	printf '%-16s %10s %10s %10s %10.1f %7.2fx\n' "$fmt" "$mb" "$z" "$i" \
		"$(awk -v m="$mb" -v t="$i" 'BEGIN { print m / t }')" "$(awk -v a="$i" -v b="$z" 'BEGIN { print a / b }')"
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
