#!/bin/sh
# The store's size on counter data of several shapes, each against its
# entropy floor, xz -9e and ClickHouse's wide table:
#   proportional  smooth bases, noise proportional to the value (the shape
#                 the other benches write)
#   uniform       smooth bases, noise uniform over 201 values, bursts
#   sparse        long runs of zero, short bursts
#   float         rates: doubles of seven significant digits
# 20 metrics x N samples each (N = $SHAPES_N, default 200000), 10 us
# intervals +-40 ns, all metrics on the same timestamps; then the uniform
# shape at the length of a long run ($SHAPES_LONG_N, default 1M samples),
# its file against 1.15 B a value.
#
# "file" is the database's size per value; "data" leaves out what the same
# import of one sample takes (the schema's tables, a page each: 0.06 B a
# value at 200000 samples, 0.012 at the 1M of a long run), as the floor and
# xz, which hold no tables, and ClickHouse's parts, which leave out its
# catalogue, do. The ratio to the floor is judged on data.
#
# The floor of an integer shape is the order-0 entropy of each metric's
# first differences plus that of the shared timestamps' (t0 deltas and
# durations), per value; of the float shape, the same of each metric's
# decimal integers: its values as printed, times 10^e, e the most
# decimals one of them prints with (what a writer that knows the data are
# decimal starts from). xz -9e compresses the same first differences as
# int32 columns (int64 for the float shape's), timestamps included.
# Figures go to $BENCH_FIGURES.
#   sh tests/bench/bench_shapes.sh BUILD_DIR WORK_DIR
B=${1:-build}
W=${2:-$B/bench}
CS="$B/cyclescope"
N=${SHAPES_N:-200000}
mkdir -p "$W/shapes"
fig() { [ -n "$BENCH_FIGURES" ] && echo "$*" >>"$BENCH_FIGURES"; }

# gen DIR N SHAPES: SHAPES (comma-separated) of N samples into DIR, each
# with its .csv, .deltas and .floor; a shape's data does not depend on N's
# neighbours (each has its own seed)
gen() {
python3 - "$1" "$2" "$3" <<'PY'
import array, collections, decimal, math, os, random, sys
out, n, wanted = sys.argv[1], int(sys.argv[2]), sys.argv[3].split(",")
M = 20

def entropy_bits(xs):
    c = collections.Counter(xs)
    t = float(len(xs))
    return -sum(k * math.log2(k / t) for k in c.values())

def times(rng):
    t0, t1, t = [], [], 1000000
    for i in range(n):
        t += 10000 + rng.randrange(-40, 41)
        t0.append(t)
        t1.append(t + 10000 - rng.randrange(0, 81))
    return t0, t1

def shape(name, rng):
    cols = []
    for m in range(M):
        base, amp, per = rng.randrange(2000, 60000), rng.randrange(500, 20000), rng.randrange(2000, 40000)
        col = []
        for i in range(n):
            smooth = base + amp * math.sin(2 * math.pi * i / per)
            if name == "proportional":
                v = int(smooth * (1 + rng.gauss(0, 0.01)))
            elif name == "uniform":
                v = int(smooth) + rng.randrange(-100, 101)
                if rng.random() < 0.002:
                    v += rng.randrange(10000, 200000)
            elif name == "sparse":
                v = 0 if (i // 500) % 10 else int(smooth) + rng.randrange(0, 1000)
            else:
                v = float("%.7g" % (smooth * (1 + rng.gauss(0, 0.01)) / 1000.0 + 0.5))
            col.append(max(v, 0))
        cols.append(col)
    return cols

for seed, name in enumerate(("proportional", "uniform", "sparse", "float")):
    if name not in wanted:
        continue
    rng = random.Random(1000 + seed)
    t0, t1 = times(rng)
    cols = shape(name, rng)
    with open(os.path.join(out, name + ".csv"), "w") as f:
        f.write("t0,t1," + ",".join("m%02d" % m for m in range(M)) + "\n")
        for i in range(n):
            f.write("%d,%d,%s\n" % (t0[i], t1[i], ",".join(repr(c[i]) if name == "float" else str(c[i]) for c in cols)))
    dt = [t0[0]] + [t0[i] - t0[i - 1] for i in range(1, n)]
    du = [t1[i] - t0[i] for i in range(n)]
    bits = entropy_bits(dt[1:]) + entropy_bits(du)
    raw = bytearray()
    raw += array.array("i", [d for d in dt[1:]]).tobytes() + array.array("i", du).tobytes()
    for c in cols:
        if name == "float":
            # the decimal integers of the values as the CSV prints them
            # (repr), all at the most decimals one of them has
            ds = [decimal.Decimal(repr(x)) for x in c]
            e = max(0, -min(d.as_tuple().exponent for d in ds))
            c = [int(d.scaleb(e)) for d in ds]
        d = [c[0]] + [c[i] - c[i - 1] for i in range(1, n)]
        bits += entropy_bits(d)
        raw += array.array("q" if name == "float" else "i", d).tobytes()
    with open(os.path.join(out, name + ".deltas"), "wb") as f:
        f.write(raw)
    with open(os.path.join(out, name + ".floor"), "w") as f:
        f.write("%.6f\n" % (bits / 8 / (n * M)))
PY
}
gen "$W/shapes" "$N" proportional,uniform,sparse,float || exit 1

CH=
if command -v clickhouse-server >/dev/null 2>&1; then
	. tests/fleet/clickhouse.sh
	CH_HTTP= CH_TCP=
	CH_EXTRA_XML='<compression><case><min_part_size>0</min_part_size><min_part_size_ratio>0</min_part_size_ratio><method>zstd</method></case></compression>'
	rm -rf "$W/shapes/ch"
	if ch_start "$W/shapes/ch"; then
		CH=1
		trap 'ch_stop' EXIT
	fi
fi

echo "== the store's size on four shapes of counter data ($N samples x 20 metrics each)"
printf '%-13s %9s %9s %9s %9s %9s %11s\n' shape floor file data xz ClickHouse "data/floor"
for s in proportional uniform sparse float; do
	D="$W/shapes/$s"
	rm -f "$D.db"* "$D.one.db"*
	"$CS" import csv "$D.csv" --db "$D.db" --name "$s" >/dev/null 2>&1 || { echo "import of $s failed"; continue; }
	head -n 2 "$D.csv" >"$D.one.csv"
	"$CS" import csv "$D.one.csv" --db "$D.one.db" --name "$s" >/dev/null 2>&1 || { echo "import of one $s sample failed"; continue; }
	values=$((N * 20))
	file=$(stat -c %s "$D.db")
	ours=$((file - $(stat -c %s "$D.one.db")))
	xz -9e -T1 -c "$D.deltas" >"$D.deltas.xz"
	xzb=$(stat -c %s "$D.deltas.xz")
	floor=$(cat "$D.floor")
	chb=
	if [ -n "$CH" ]; then
		typ=UInt32
		[ "$s" = float ] && typ=Float64
		cols=$(seq -s, 0 19 | tr ',' '\n' | awk -v t="$typ" '{ printf ", m%02d %s", $1, t }')
		ch_q "CREATE DATABASE IF NOT EXISTS s" >/dev/null
		ch_q "CREATE TABLE s.$s (t0 UInt64, t1 UInt64$cols) ENGINE = MergeTree ORDER BY t0" >/dev/null
		tail -n +2 "$D.csv" | clickhouse-client --port "$CH_TCP" --query "INSERT INTO s.$s FORMAT CSV"
		ch_q "OPTIMIZE TABLE s.$s FINAL" >/dev/null
		chb=$(ch_q "SELECT sum(bytes_on_disk) FROM system.parts WHERE database = 's' AND table = '$s' AND active")
	fi
	awk -v s="$s" -v f="$floor" -v F="$file" -v o="$ours" -v x="$xzb" -v c="$chb" -v v="$values" 'BEGIN {
		printf "%-13s %9.3f %9.3f %9.3f %9.3f %9s %10.3fx\n", s, f, F / v, o / v, x / v, c == "" ? "-" : sprintf("%.3f", c / v), o / v / f }'
	bpv=$(awk -v o="$file" -v v="$values" 'BEGIN { print o / v }')
	fig "shapes.$s.file_bytes_per_value" "$bpv" "$bpv" B/value -
	bpv=$(awk -v o="$ours" -v v="$values" 'BEGIN { print o / v }')
	fig "shapes.$s.bytes_per_value" "$bpv" "$bpv" B/value -
	fig "shapes.$s.floor" "$floor" "$floor" B/value -
	r=$(awk -v o="$ours" -v v="$values" -v f="$floor" 'BEGIN { print o / v / f }')
	if [ "$s" = float ]; then
		fig "shapes.$s.ours_over_floor" "$r" "$r" x -
	else
		fig "shapes.$s.ours_over_floor" "$r" "$r" x "<=1.06"
	fi
	r=$(awk -v o="$ours" -v x="$xzb" 'BEGIN { print x / o }')
	fig "shapes.$s.xz_over_ours" "$r" "$r" x ">=1"
	if [ -n "$chb" ]; then
		r=$(awk -v o="$ours" -v c="$chb" 'BEGIN { print c / o }')
		fig "shapes.$s.clickhouse_over_ours" "$r" "$r" x ">=1.6"
	fi
	rm -f "$D.db"* "$D.one.db"* "$D.one.csv" "$D.deltas.xz"
done
if [ -n "$CH" ]; then
	ch_stop
	trap - EXIT
fi

# The uniform shape at the length of a long run (LONG_N samples, default
# 1M, x 20 metrics): the file's size a value against 1.15, and the floor.
LN=${SHAPES_LONG_N:-1000000}
mkdir -p "$W/shapes/long"
if gen "$W/shapes/long" "$LN" uniform; then
	D="$W/shapes/long/uniform"
	"$CS" import csv "$D.csv" --db "$D.db" --name uniform >/dev/null 2>&1 || echo "import of the long uniform run failed"
	file=$(stat -c %s "$D.db" 2>/dev/null || echo 0)
	floor=$(cat "$D.floor")
	awk -v n="$LN" -v F="$file" -v f="$floor" 'BEGIN {
		printf "uniform, %d samples x 20: file %.4f B/value (goal <= 1.15), floor %.4f, %.3fx\n", n, F / n / 20, f, F / n / 20 / f }'
	bpv=$(awk -v F="$file" -v n="$LN" 'BEGIN { print F / n / 20 }')
	fig "shapes.uniform_long.file_bytes_per_value" "$bpv" "$bpv" B/value "<=1.15"
	fig "shapes.uniform_long.floor" "$floor" "$floor" B/value -
fi
rm -rf "$W/shapes"
