#!/bin/sh
# Fleet shipping against a real ClickHouse (Debian's clickhouse-server,
# private, bound to 127.0.0.1, data in a temp dir; tests/fleet/clickhouse.sh):
# one-off `cyclescope ship` and its errors; three daemons with different
# host names shipping through Distributed tables over a one-shard cluster,
# counts and sums per host and metric equal to their local files; a daemon
# killed with SIGKILL in the middle of shipping and restarted; marks lost
# after a confirmed batch (the crash between "sent" and "recorded"); and
# ClickHouse stopped during ingest, then back. TAP lines.
#   sh tests/fleet.sh [BUILD_DIR]
B=${1:-build}
CS="$B/cyclescope"
EX=docs/examples/h100-l2-overlap.csv
Q=tests/fixtures/accelsim-qv100
. tests/lib.sh
. tests/fleet/clickhouse.sh
if ! command -v clickhouse-server >/dev/null 2>&1; then
	echo "# clickhouse-server is not installed (.ci/install-deps installs it): fleet checks skipped"
	exit 0
fi
PIDS=""
trap 'for p in $PIDS; do kill -9 $p 2>/dev/null; done; ch_stop; cleanup' EXIT
ch_start "$T/ch" || { no "a private ClickHouse starts" "$T/ch/log/stdout"; exit 1; }
ok "a private ClickHouse $(ch_q 'SELECT version()') on 127.0.0.1:$CH_HTTP"
URL="http://127.0.0.1:$CH_HTTP"

# local COUNT and SUM per (key, metric) of a database file, sorted TSV
local_sums() { # DB KEY(sql over r = runs) -> "key metric count sum"
	"$CS" query --db "$1" "SELECT $2, s.metric, count(*), printf('%.6f', sum(s.value)) FROM series s
		JOIN runs r ON r.id = s.run GROUP BY 1, 2 ORDER BY 1, 2" | tail -n +2 | tr -d '\r' | tr ',' '\t'
}
ch_sums() { # TABLE WHERE KEY -> the same from ClickHouse, FINAL
	ch_q "SELECT $3, metric, count(), toString(round(sum(value), 6)) FROM $1 FINAL $2 GROUP BY $3, metric ORDER BY $3, metric FORMAT TSV"
}
# same SUMS: counts equal, sums within 1e-9 relative (summation order differs)
same_sums() {
	awk -F'\t' 'NR == FNR { c[$1 FS $2] = $3; s[$1 FS $2] = $4; n++; next }
		{ k = $1 FS $2; m++; d = s[k] - $4; if (d < 0) d = -d
		  if (!(k in c) || c[k] != $3 || d > 1e-9 * (s[k] < 0 ? -s[k] : s[k]) + 1e-6) { print "differs: " $0 " local " c[k] " " s[k]; bad++ } }
		END { if (n != m) print "local has " n " (key, metric) pairs, ClickHouse " m; exit (bad || n != m || !n) }' "$1" "$2"
}

# --- one-off ship ---
DB="$T/laptop.db"
"$CS" import csv "$EX" --db "$DB" --name example >/dev/null 2>&1
"$CS" import "$Q/gpgpusim_visualizer__Wed-Dec--2-10-17-51-2026.log.gz" --db "$DB" --name sim >/dev/null 2>&1
"$CS" ship --db "$DB" --to "$URL" --database laptop --host laptop >"$T/out" 2>&1
rc=$?
N=$("$CS" query --db "$DB" "SELECT count(*) FROM series" | tail -n 1 | tr -d '\r')
[ $rc -eq 0 ] && grep -q "shipped: 2 runs brought up to date, $N sample rows and 3 ranges" "$T/out" &&
	ok "ship --to: 2 runs, $N sample rows (every stored value), 3 ranges" || no "ship ($rc)" "$T/out"
local_sums "$DB" r.uuid >"$T/l"
ch_sums laptop.samples "" run_uuid >"$T/c"
same_sums "$T/l" "$T/c" >"$T/why" && ok "per run and metric, ClickHouse's counts and sums are the file's ($(wc -l <"$T/l") pairs)" || no "one-off sums" "$T/why"
[ "$(ch_q "SELECT count() FROM laptop.ranges FINAL")" = 3 ] &&
	[ "$(ch_q "SELECT name, status, samples FROM laptop.runs FINAL WHERE host = 'laptop' ORDER BY run_id FORMAT CSV" | tr -d '"' | tr '\n' ' ')" = "example,complete,4000 sim,complete,40 " ] &&
	[ "$(ch_q "SELECT count() FROM laptop.metrics FINAL")" = 885 ] &&
	ok "runs, metrics and ranges are there too" || no "ranges/runs/metrics" 
"$CS" ship --db "$DB" --to "$URL" --database laptop --host laptop >"$T/out" 2>&1
grep -q 'shipped: 0 runs brought up to date, 0 sample rows' "$T/out" && [ "$(ch_q 'SELECT count() FROM laptop.samples FINAL')" = "$N" ] &&
	ok "shipping again sends nothing: the marks in the file" || no "re-ship" "$T/out"
# The crash between "ClickHouse confirmed" and "mark recorded": forget the
# sample marks, ship again: every batch goes again, and collapses.
sqlite3 "$DB" "UPDATE ship_marks SET mark = 0 WHERE what IN ('samples', 'done', 'meta')"
"$CS" ship --db "$DB" --to "$URL" --database laptop --host laptop --batch 7000 >"$T/out" 2>&1
raw=$(ch_q 'SELECT count() FROM laptop.samples')
fin=$(ch_q 'SELECT count() FROM laptop.samples FINAL')
# OPTIMIZE ... FINAL may return while a background merge holds parts
# (a busy machine): asked again until the twins are gone, for up to 60 s
i=0 merged=
while [ $i -lt 120 ] && [ "$merged" != "$N" ]; do
	ch_q 'OPTIMIZE TABLE laptop.samples FINAL' >/dev/null
	merged=$(ch_q 'SELECT count() FROM laptop.samples')
	[ "$merged" = "$N" ] || sleep 0.5
	i=$((i + 1))
done
# (background merges may already have collapsed some of the twins)
grep -q "shipped: 2 runs brought up to date, $N sample rows" "$T/out" && [ "$raw" -gt "$N" ] && [ "$fin" = "$N" ] && [ "$merged" = "$N" ] &&
	ok "all $N rows re-sent after lost marks collapse: $raw rows stored, $fin with FINAL, $merged after OPTIMIZE" ||
	{ echo "raw $raw final $fin merged $merged" | cat - "$T/out" >"$T/why"; no "re-sent batches collapse" "$T/why"; }
"$CS" ship --db "$DB" --to "$URL" --database laptop --run sim --host laptop >"$T/out" 2>&1 && grep -q 'shipped: 0 runs' "$T/out" &&
	ok "ship --run: one run" || no "ship --run" "$T/out"

# bad input: each a clear error, nothing recorded as shipped
"$CS" ship --db "$DB" --to ftp://x >"$T/out" 2>&1
[ $? -ne 0 ] && grep -q "ClickHouse URL 'ftp://x': expected http://HOST:PORT" "$T/out" && ok "a URL that is not http is refused" || no "bad URL" "$T/out"
P=$(ch_free_port)
"$CS" ship --db "$DB" --to "http://127.0.0.1:$P" --database other >"$T/out" 2>&1
[ $? -eq 1 ] && grep -q "127.0.0.1:$P: Couldn't connect to server" "$T/out" && grep -q 'run it again to resume' "$T/out" &&
	ok "an unreachable server: curl's reason and exit 1" || no "unreachable" "$T/out"
"$CS" ship --db "$DB" --to "$URL" --database 'bad-name' >"$T/out" 2>&1
[ $? -ne 0 ] && grep -q "database 'bad-name': only letters, digits and _" "$T/out" && ok "a malformed database name is refused" || no "bad database name" "$T/out"
"$CS" ship --db "$DB" --to "$URL" --database other --cluster nosuch >"$T/out" 2>&1
[ $? -eq 1 ] && grep -q "ClickHouse answered HTTP [0-9]* to CREATE TABLE IF NOT EXISTS other.runs_all.*nosuch" "$T/out" &&
	ok "ClickHouse's refusal is reported with its message" || no "ClickHouse error" "$T/out"
"$CS" ship --db "$T/none.db" --to "$URL" >"$T/out" 2>&1
[ $? -ne 0 ] && grep -q "none.db" "$T/out" && ok "a missing database file is named" || no "missing db" "$T/out"

# --- three daemons, three host names, one Distributed table ---
serve() { # NAME DB: a daemon shipping as host NAME; sets $PORT_NAME etc.
	cat >"$T/$1.conf" <<CONF
commit_ms = 20
partial_flush_ms = 100
[sink.clickhouse]
url = $URL
database = fleet
host = $1
cluster = cs_test
interval_ms = 100
batch_rows = ${BATCH:-1000000}
CONF
	: >"$T/$1.stderr" # before the fork: a restart must not read the last daemon's line
	"$CS" serve --db "$2" --socket "$T/$1.sock" --listen 127.0.0.1:0 --config "$T/$1.conf" \
		--log "$T/$1.log" 2>"$T/$1.stderr" &
	LAST=$!
	PIDS="$PIDS $LAST"
	i=0
	while [ $i -lt 2400 ] && ! grep -q 'http://' "$T/$1.stderr" 2>/dev/null; do sleep 0.05; i=$((i + 1)); done
}
# wait_runs DB N: until the file holds N complete runs (an import through
# the socket returns before the daemon has applied all it sent)
wait_runs() {
	i=0
	while [ $i -lt 300 ]; do
		[ "$("$CS" query --db "$1" "SELECT count(*) FROM runs WHERE status = 'complete'" | tail -n 1 | tr -d '\r')" = "$2" ] && return 0
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}
# wait_shipped HOST DB: until ClickHouse holds the file's sample count for HOST
wait_shipped() {
	want=$("$CS" query --db "$2" "SELECT count(*) FROM series" | tail -n 1 | tr -d '\r')
	i=0
	while [ $i -lt 300 ]; do
		[ "$(ch_q "SELECT count() FROM fleet.samples_all FINAL WHERE host = '$1'")" = "$want" ] && return 0
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}
for h in node-a node-b node-c; do
	serve $h "$T/$h.db"
	eval "PID_$(echo $h | tr - _)=$LAST"
done
k=1
for h in node-a node-b node-c; do
	# each node's own numbers: the example scaled by k
	tr -d '\r' <"$EX" | awk -F, -v k=$k 'NR == 1 { print; next } { printf "%s,%s", $1, $2; for (i = 3; i <= NF; i++) printf ",%s", $i * k; print "" }' >"$T/$h.csv"
	"$CS" import csv "$T/$h.csv" --socket "$T/$h.sock" --name "overlap-$h" >/dev/null 2>&1 || no "import into $h"
	k=$((k + 1))
done
"$CS" import "$Q/gpgpusim_visualizer__Wed-Dec--2-10-17-51-2026.log.gz" --socket "$T/node-b.sock" --name sim >/dev/null 2>&1
allin=1
wait_runs "$T/node-a.db" 1 && wait_runs "$T/node-b.db" 2 && wait_runs "$T/node-c.db" 1 || allin=0
for h in node-a node-b node-c; do wait_shipped $h "$T/$h.db" || allin=0; done
[ $allin = 1 ] && ok "three daemons shipped everything through fleet.samples_all" || no "three daemons shipped"
: >"$T/l"
for h in node-a node-b node-c; do local_sums "$T/$h.db" "'$h'" >>"$T/l"; done
ch_sums fleet.samples_all "" host >"$T/c"
same_sums "$T/l" "$T/c" >"$T/why" && ok "per host and metric, counts and sums equal the local files ($(wc -l <"$T/l") pairs)" || no "fleet sums" "$T/why"
[ "$(ch_q "SELECT host, count() FROM fleet.runs_all FINAL GROUP BY host ORDER BY host FORMAT CSV" | tr -d '"' | tr '\n' ' ')" = "node-a,1 node-b,2 node-c,1 " ] &&
	ok "runs per host: a 1, b 2, c 1" || no "runs per host"
curl -s --noproxy '*' "$(sed -n 's/^cyclescope serve:.*\(http:[^ ]*\)$/\1/p' "$T/node-a.stderr")metrics" >"$T/m"
grep -q '^cyclescope_ship_up 1' "$T/m" && grep -q '^cyclescope_ship_rows_total 24000' "$T/m" && grep -q '^cyclescope_ship_pending_runs 0' "$T/m" &&
	ok "/metrics: shipping up, 24000 rows, nothing pending" || no "/metrics" "$T/m"

# --- ClickHouse down during ingest, then back ---
ch_stop
"$CS" import csv "$EX" --socket "$T/node-c.sock" --name while-down >"$T/out" 2>&1 && wait_runs "$T/node-c.db" 2 &&
	ok "with ClickHouse down the daemon keeps collecting locally" || no "ingest while down" "$T/out"
sleep 3
n_down=$(grep -c 'clickhouse: .*data stays in the local file' "$T/node-c.log")
ch_start "$T/ch" || no "ClickHouse restarts"
wait_shipped node-c "$T/node-c.db" && ok "after ClickHouse returns, node-c catches up" || no "catch up"
# the line for the return is written once its first batch is in: rows can
# be in ClickHouse a moment before it is in the log (up to 30 s)
i=0
while [ $i -lt 300 ] && ! grep -q 'reachable again, catching up' "$T/node-c.log"; do
	sleep 0.1
	i=$((i + 1))
done
[ "$n_down" = 1 ] && grep -q 'reachable again, catching up' "$T/node-c.log" &&
	ok "one log line for the outage (after several retries), one for the return" || no "outage logging ($n_down lines)" "$T/node-c.log"
local_sums "$T/node-c.db" "'node-c'" >"$T/l"
ch_sums fleet.samples_all "WHERE host = 'node-c'" host >"$T/c"
same_sums "$T/l" "$T/c" >"$T/why" && ok "nothing lost or doubled across the outage" || no "outage sums" "$T/why"
for p in $PIDS; do kill $p 2>/dev/null; wait $p 2>/dev/null; done
PIDS=""

# --- SIGKILL in the middle of shipping ---
# 100000 samples x 4 metrics, in the file before the daemon starts, shipped
# in batches of 4000 rows; killed once ClickHouse holds some but not all.
awk 'BEGIN { print "t0,t1,a,b,c,d"; for (i = 0; i < 100000; i++) printf "%d,%d,%d,%d,%.3f,%d\n", i * 100, i * 100 + 100, i, i % 7, i / 3, 5 }' >"$T/big.csv"
"$CS" import csv "$T/big.csv" --db "$T/node-k.db" --name big >/dev/null 2>&1
BATCH=4000 serve node-k "$T/node-k.db"
i=0
while [ $i -lt 400 ]; do
	got=$(ch_q "SELECT count() FROM fleet.samples_all WHERE host = 'node-k'")
	[ "$got" -gt 0 ] 2>/dev/null && break
	sleep 0.01
	i=$((i + 1))
done
kill -9 $LAST
wait $LAST 2>/dev/null
at_kill=$(ch_q "SELECT count() FROM fleet.samples_all WHERE host = 'node-k'")
BATCH=4000 serve node-k "$T/node-k.db"
wait_shipped node-k "$T/node-k.db" && ok "killed with $at_kill of 400000 rows in ClickHouse, restarted: it resumes and finishes" || no "resume after SIGKILL"
local_sums "$T/node-k.db" "'node-k'" >"$T/l"
ch_sums fleet.samples_all "WHERE host = 'node-k'" host >"$T/c"
same_sums "$T/l" "$T/c" >"$T/why" && [ "$(ch_q "SELECT count() FROM fleet.samples_all FINAL WHERE host = 'node-k'")" = 400000 ] &&
	ok "after the SIGKILL: 400000 rows, no loss, no duplicates (FINAL)" || no "SIGKILL sums" "$T/why"
kill $LAST
wait $LAST 2>/dev/null
PIDS=""
exit $fails
