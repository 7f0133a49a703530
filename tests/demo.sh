#!/bin/sh
# The README's quick start: import the bundled example into the embedded
# default database (./cyclescope.db, or $CYCLESCOPE_DB), show it, print curl
# lines, and run the daemon on it in the foreground (Ctrl-C stops it).
# The QV100 Accel-Sim output goes in beside it, with a synthetic hardware
# counterpart, so the UI has a simulator run to show and compare.
#   sh tests/demo.sh [BUILD_DIR] [--no-serve]
# --no-serve: only load the database and list its runs (tests/docs.sh).
set -e
B=${1:-build}
CS="$B/cyclescope"
EX=docs/examples/h100-l2-overlap.csv
NAME="example: GEMM + AllGather overlap (synthetic H100 L2 profile)"
DB=${CYCLESCOPE_DB:-cyclescope.db}
LISTEN=${CYCLESCOPE_LISTEN:-127.0.0.1:7070}
SOCK=${CYCLESCOPE_SOCKET:-./cyclescope.sock}
have=$("$CS" query --db "$DB" "SELECT count(*) FROM runs WHERE name = '$NAME'" 2>/dev/null | tail -n 1 | tr -d '\r')
if [ "${have:-0}" = "0" ]; then
	"$CS" import csv "$EX" --ranges docs/examples/h100-l2-overlap.ranges.csv --db "$DB" --name "$NAME"
else
	echo "(the example is already in $DB)"
fi
RUN=$("$CS" query --db "$DB" "SELECT max(id) FROM runs WHERE name = '$NAME'" | tail -n 1 | tr -d '\r')
# A real simulator run beside it (Accel-Sim on QV100: per-cycle samples with
# kernel ranges, and its per-kernel statistics), for the UI's compare page.
Q=tests/fixtures/accelsim-qv100
for f in "qv100-visualizer:$Q/gpgpusim_visualizer__Wed-Dec--2-10-17-51-2026.log.gz" "qv100-stdout:$Q/stdout.log.gz"; do
	n=${f%%:*}
	have=$("$CS" query --db "$DB" "SELECT count(*) FROM runs WHERE name = '$n'" 2>/dev/null | tail -n 1 | tr -d '\r')
	[ "${have:-0}" = "0" ] && "$CS" import "${f#*:}" --db "$DB" --name "$n"
done
# A synthetic NCCL/GEMM overlap run with its kernels (tests/tools/mkphases.py):
# an isolated GEMM, an isolated AllGather, both overlapped, the GEMM's tail.
PH="nccl-gemm-phases (synthetic)"
have=$("$CS" query --db "$DB" "SELECT count(*) FROM runs WHERE name = '$PH'" 2>/dev/null | tail -n 1 | tr -d '\r')
[ "${have:-0}" = "0" ] && "$CS" import csv docs/examples/nccl-gemm-phases.csv \
	--ranges docs/examples/nccl-gemm-phases.ranges.csv --db "$DB" --name "$PH"
PHRUN=$("$CS" query --db "$DB" "SELECT max(id) FROM runs WHERE name = '$PH'" | tail -n 1 | tr -d '\r')
# A synthetic hardware counterpart of the QV100 run, for the compare page
# and the correlation examples: the visualizer's L2 reads as a GPU at
# 1132 MHz would report them (ns, half-length samples, 1000 cycles later,
# +-2% noise; docs/correlation.md makes it), with its three kernels.
have=$("$CS" query --db "$DB" "SELECT count(*) FROM runs WHERE name = 'qv100-hw'" 2>/dev/null | tail -n 1 | tr -d '\r')
[ "${have:-0}" = "0" ] && "$CS" import csv docs/examples/qv100-hw.csv --ranges docs/examples/qv100-hw.ranges.csv \
	--clock-mhz 1132 --db "$DB" --name qv100-hw
echo
"$CS" runs --db "$DB"
U="http://$LISTEN"
# What to try with the daemon running (tests/docs.sh runs these lines
# against its own daemon on a copy of the database).
try() {
	cat <<EOT
  curl -s $U/api/v1/runs
  curl -s "$U/api/v1/runs/$RUN/series.csv?metric=lts__t_sectors.sum,nvlrx__bytes.sum&buckets=8"
  curl -s "$U/api/v1/runs/$RUN/series.csv" -o ${TMPDIR:-/tmp}/series.csv
  curl -s --get --data-urlencode "sql=SELECT metric, sum(value) FROM series WHERE run = $RUN GROUP BY metric" $U/api/v1/query
  curl -s "$U/api/v1/runs/$PHRUN/phases?a=kernel:nccl*&b=*gemm*&metric=sm__inst_executed.sum&format=text"
  curl -s "$U/api/v1/correlate?hw=qv100-hw&sim=qv100-visualizer&hw_metric=lts__t_sectors.sum&sim_metric=Ltworeadmiss%2BLtworeadhit&format=text"
  curl -s $U/metrics
  $CS import csv $EX --socket $SOCK --name again     # stream another run into the daemon
EOT
}
if [ "$2" = --no-serve ]; then
	printf '\nWith the daemon running on %s (HTTP %s, ingest socket %s):\n\n' "$DB" "$U" "$SOCK"
	try
	exit 0
fi
cat <<EOT

Starting the daemon on $DB (HTTP $U, ingest socket $SOCK).
Open $U/ in a browser for the UI (runs, zoomable plots, compare), or in
another shell:

EOT
try
cat <<EOT

Ctrl-C stops it (everything queued is committed first).
EOT
exec "$CS" serve --db "$DB" --listen "$LISTEN" --socket "$SOCK"
