#!/bin/sh
# make bench, the store against ClickHouse on the bench's own data (the 20
# metrics x 1M samples bench_store wrote to ours.db), in the same run:
#   - size: ClickHouse's smallest table for it, against ours.db. Two tables
#     are tried, both zstd (server-wide <compression>), values UInt32 (every
#     value is a non-negative integer below 2^32), merged to one part
#     (OPTIMIZE FINAL): wide (t0, t1, one column per metric; ORDER BY t0)
#     and long (metric, t0, t1, value; ORDER BY (metric, t0));
#   - a 1% window in the middle (n/100 samples), one metric and all 20:
#     ClickHouse over HTTP (curl, server and loopback included; best and
#     median of 5) against the store in process (bench_store's figures) and
#     through `cyclescope export` (process start included).
# ClickHouse runs at nice 19 on the same 2 cores.
#   sh tests/bench/bench_clickhouse.sh BUILD_DIR BENCH_DIR
B=${1:-build}
W=${2:-$B/bench}
CS="$B/cyclescope"
fig() { [ -n "$BENCH_FIGURES" ] && echo "$*" >>"$BENCH_FIGURES"; return 0; }
figval() { awk -v n="$1" '$1 == n { print $2; exit }' "$BENCH_FIGURES" 2>/dev/null; }
if ! command -v clickhouse-server >/dev/null 2>&1; then
	echo "== ClickHouse comparison: clickhouse-server not installed, skipped"
	exit 0
fi
. tests/fleet/clickhouse.sh
now() { date +%s.%N; }
rm -rf "$W/chb"
CH_HTTP= CH_TCP=
CH_EXTRA_XML='<compression><case><min_part_size>0</min_part_size><min_part_size_ratio>0</min_part_size_ratio><method>zstd</method></case></compression>'
ch_start "$W/chb" || exit 1
renice -n 19 -p "$CH_PID" >/dev/null 2>&1
trap 'ch_stop' EXIT
URL="http://127.0.0.1:$CH_HTTP/"

"$CS" export 1 --db "$W/ours.db" >"$W/wide.csv" || exit 1
head -n 1 "$W/wide.csv" | tr -d '\r' >"$W/wide.hdr"
cols=$(tr ',' '\n' <"$W/wide.hdr" | tail -n +3 | awk '{ printf ", m%02d UInt32", NR - 1 }')
ch_q "CREATE DATABASE IF NOT EXISTS b" >/dev/null
ch_q "CREATE TABLE b.wide (t0 UInt64, t1 UInt64$cols) ENGINE = MergeTree ORDER BY t0" >/dev/null
ch_q "CREATE TABLE b.long (metric UInt8, t0 UInt64, t1 UInt64, value UInt32) ENGINE = MergeTree ORDER BY (metric, t0)" >/dev/null
tail -n +2 "$W/wide.csv" | tr -d '\r' | clickhouse-client --port "$CH_TCP" --query "INSERT INTO b.wide FORMAT CSV"
ch_q "INSERT INTO b.long SELECT k - 1, t0, t1, vals[k] FROM (SELECT t0, t1,
	[$(seq -s, 0 19 | sed 's/\([0-9]*\)/m\1/g; s/m\([0-9]\)\b/m0\1/g')] AS vals FROM b.wide)
	ARRAY JOIN arrayEnumerate(vals) AS k" >/dev/null
ch_q "OPTIMIZE TABLE b.wide FINAL" >/dev/null
ch_q "OPTIMIZE TABLE b.long FINAL" >/dev/null
values=$(ch_q "SELECT count() FROM b.long")
wide=$(ch_q "SELECT sum(bytes_on_disk) FROM system.parts WHERE database = 'b' AND table = 'wide' AND active")
long=$(ch_q "SELECT sum(bytes_on_disk) FROM system.parts WHERE database = 'b' AND table = 'long' AND active")
ours=$(stat -c %s "$W/ours.db")
best=$(( wide < long ? wide : long ))
echo "== the store against ClickHouse 18.16 on the same $values values"
awk -v w="$wide" -v l="$long" -v o="$ours" -v v="$values" 'BEGIN {
	printf "size: ClickHouse wide %.3f B/value, long %.3f B/value; cyclescope %.3f B/value\n", w / v, l / v, o / v }'
r=$(awk -v b="$best" -v o="$ours" 'BEGIN { print b / o }')
rw=$(awk -v b="$wide" -v o="$ours" 'BEGIN { print b / o }')
rl=$(awk -v b="$long" -v o="$ours" 'BEGIN { print b / o }')
echo "  ClickHouse's smallest table is ${r}x the size of ours (goal >= 1.6x); wide ${rw}x, long ${rl}x"
# against the entropy of the data's own law (bench_store's store.floor):
# how near to it the goal asks ours to be
fl=$(figval store.floor)
[ -n "$fl" ] && awk -v b="$best" -v o="$ours" -v v="$values" -v f="$fl" 'BEGIN {
	printf "  the data'"'"'s floor %.4f B/value: ClickHouse %.3fx it, ours %.3fx; 1.6x ours asks ours to be at most %.4f B/value, %.3fx the floor\n",
		f, b / v / f, o / v / f, b / v / 1.6, b / v / 1.6 / f }'
fig store.size_clickhouse_best_over_ours "$r" "$r" x ">=1.6"
fig store.size_clickhouse_wide_over_ours "$rw" "$rw" x -
fig store.size_clickhouse_long_over_ours "$rl" "$rl" x -

# the 1% window: t0 of samples n/2 and n/2 + n/100 of the bench's run
# (bench_store's window)
N=$(ch_q "SELECT count() FROM b.wide")
F=$(ch_q "SELECT t0 FROM b.wide ORDER BY t0 LIMIT 1 OFFSET $((N / 2))")
T=$(ch_q "SELECT t0 FROM b.wide ORDER BY t0 LIMIT 1 OFFSET $((N / 2 + N / 100))")
M=$(tr ',' '\n' <"$W/wide.hdr" | sed -n 13p) # metric 10 (bench_store's ids[m / 2])
timed5() { # CMD... -> "best median" seconds of 5 runs
	: >"$W/t5"
	for i in 1 2 3 4 5; do
		a=$(now); "$@" >/dev/null 2>&1; b=$(now)
		awk -v a="$a" -v b="$b" 'BEGIN { print b - a }' >>"$W/t5"
	done
	sort -g "$W/t5" | awk '{ t[NR] = $1 } END { printf "%.6f %.6f\n", t[1], t[3] }'
}
chq() { curl -s --noproxy '*' -o /dev/null "$URL" --data-binary "$1"; }
for what in one all; do
	if [ $what = one ]; then
		sel="t0, t1, m10" ours_args="--metric $M"
	else
		sel="*" ours_args=""
	fi
	set -- $(timed5 chq "SELECT $sel FROM b.wide WHERE t0 >= $F AND t0 < $T ORDER BY t0 FORMAT CSV")
	chb=$1 chm=$2
	set -- $(timed5 "$CS" export 1 --db "$W/ours.db" $ours_args --from "@$F" --to "@$T")
	clib=$1 clim=$2
	inp=$(figval store.window1pct_all_metrics)
	[ $what = one ] && inp=$(figval store.window1pct_one_metric)
	awk -v w="$what" -v cb="$chb" -v cm="$chm" -v ob="$clib" -v om="$clim" -v ip="$inp" 'BEGIN {
		printf "1%% window, %s metric%s: ClickHouse over HTTP %.2f ms (median %.2f); cyclescope in process %.2f ms, export %.2f ms (median %.2f)\n",
			w, w == "all" ? "s" : "", cb * 1e3, cm * 1e3, ip, ob * 1e3, om * 1e3 }'
	fig "store.window1pct_${what}_inprocess_over_clickhouse" \
		"$(awk -v a="$inp" -v b="$chb" 'BEGIN { print a / 1e3 / b }')" \
		"$(awk -v a="$inp" -v b="$chm" 'BEGIN { print a / 1e3 / b }')" x "<=1"
	fig "store.window1pct_${what}_cli_over_clickhouse" \
		"$(awk -v a="$clib" -v b="$chb" 'BEGIN { print a / b }')" \
		"$(awk -v a="$clim" -v b="$chm" 'BEGIN { print a / b }')" x "<=1.5"
done
rm -f "$W/wide.csv" "$W/t5"
