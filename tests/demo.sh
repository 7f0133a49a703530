#!/bin/sh
# The README's quick start: import the bundled example into the embedded
# default database (./cyclescope.db, or $CYCLESCOPE_DB) and show it.
#   sh tests/demo.sh [BUILD_DIR]
set -e
B=${1:-build}
CS="$B/cyclescope"
EX=docs/examples/h100-l2-overlap.csv
NAME="example: GEMM + AllGather overlap (synthetic H100 L2 profile)"
DB=${CYCLESCOPE_DB:-cyclescope.db}
have=$("$CS" query --db "$DB" "SELECT count(*) FROM runs WHERE name = '$NAME'" 2>/dev/null | tail -n 1 | tr -d '\r')
if [ "${have:-0}" = "0" ]; then
	"$CS" import csv "$EX" --db "$DB" --name "$NAME"
else
	echo "(the example is already in $DB)"
fi
echo
echo "\$ cyclescope runs"
"$CS" runs --db "$DB"
RUN=$("$CS" query --db "$DB" "SELECT max(id) FROM runs WHERE name = '$NAME'" | tail -n 1 | tr -d '\r')
echo
echo "\$ cyclescope export $RUN --metric lts__t_sectors.sum,nvlrx__bytes.sum --buckets 8"
"$CS" export "$RUN" --db "$DB" --metric lts__t_sectors.sum,nvlrx__bytes.sum --buckets 8
echo
echo "\$ cyclescope query \"SELECT metric, count(*), sum(value) FROM series WHERE run = $RUN GROUP BY metric\""
"$CS" query --db "$DB" "SELECT metric, count(*) AS samples, sum(value) AS total FROM series WHERE run = $RUN GROUP BY metric ORDER BY metric"
echo
echo "Next: 'cyclescope export $RUN > series.csv', 'sqlite3 $DB' with '.load $B/cyclescope_series',"
echo "'cyclescope --help'. Docs are in docs/."
