#!/bin/sh
# The daemon when things go wrong around it: the disk fills up under a
# live run and frees again; slow clients try to hold every connection.
# TAP-style output.
#   sh tests/reliability.sh [BUILD_DIR]
B=${1:-build}
CS="$B/cyclescope"
PRODUCE="$B/tests/produce"
[ -x "$PRODUCE" ] || { echo "not ok 1 - $PRODUCE is missing (make $PRODUCE)"; exit 1; }
. tests/lib.sh
get() { curl -sS --noproxy '*' "$@"; }
MNT=
cleanup_mnt() { [ -n "$DPID" ] && kill -9 "$DPID" 2>/dev/null; sleep 0.2; [ -n "$MNT" ] && umount "$MNT" 2>/dev/null; cleanup; }
trap cleanup_mnt EXIT

# start DB SOCK: a daemon on a free port; sets DPID and U
start() {
	printf 'commit_ms = 20\nlog_level = info\n' >"$T/conf"
	"$CS" serve --db "$1" --socket "$2" --listen 127.0.0.1:0 --config "$T/conf" \
		--log "$T/log" 2>"$T/stderr" &
	DPID=$!
	i=0
	while [ $i -lt 200 ] && { ! grep -q 'http://' "$T/stderr" 2>/dev/null || [ ! -S "$2" ]; }; do sleep 0.05; i=$((i + 1)); done
	U="http://127.0.0.1:$(sed -n 's/^cyclescope serve:.*http:\/\/127\.0\.0\.1:\([0-9]*\)\/.*/\1/p' "$T/stderr" | head -n 1)"
}

# wait_for SECONDS CMD...: polls CMD every 0.1 s until it succeeds
wait_for() {
	tries=$(($1 * 10)); shift
	while [ $tries -gt 0 ]; do "$@" && return 0; sleep 0.1; tries=$((tries - 1)); done
	return 1
}
health_is() { get "$U/api/v1/health" 2>/dev/null | grep -q "$1"; }

# --- disk full: a small tmpfs (needs root to mount) ---
# (ONLY=diskfull runs just this part: tests/stress.sh does.)
if [ "$(id -u)" -eq 0 ] && mkdir "$T/m" && mount -t tmpfs -o size=8m tmpfs "$T/m" 2>/dev/null; then
	MNT="$T/m"
	DB="$MNT/d.db"
	SOCK="$T/s.sock"
	dd if=/dev/zero of="$MNT/ballast" bs=1M count=3 2>/dev/null
	start "$DB" "$SOCK"
	"$CS" import csv docs/examples/h100-l2-overlap.csv --socket "$SOCK" --name before >/dev/null 2>&1 &&
		ok "a run fits before the disk fills" || no "run before the disk fills" "$T/log"
	"$PRODUCE" --socket "$SOCK" --name big --samples 3000000 --metrics 8 --expect "$T/big.csv" >"$T/prod" 2>&1
	rc=$?
	[ $rc -ne 0 ] && ok "the producer of the run that filled the disk fails (exit $rc), it is not told all is well" || no "producer on a full disk exited 0" "$T/prod"
	# it is told why (ACK status 4 before the close), not only that the
	# connection closed
	grep -q "the daemon could not store run .*disk full" "$T/prod" &&
		ok "that producer is told why: its run could not be stored, the disk is full" || no "producer told why" "$T/prod"
	wait_for 5 health_is '"status":"degraded","reason":"disk full"' && ok "health: degraded, disk full" || no "health degraded" "$T/log"
	get "$U/metrics" | grep -q '^cyclescope_store_degraded 1' && ok "metrics: cyclescope_store_degraded 1" || no "degraded gauge"
	grep -q "disk full: .*1 open run(s) cut" "$T/log" && ok "the log says the disk is full and the run was cut" || no "log line" "$T/log"
	printf 't0,t1,x\n0,10,1\n10,20,2\n' >"$T/tiny.csv"
	"$CS" import csv "$T/tiny.csv" --socket "$SOCK" --name refused >"$T/out" 2>&1
	rc=$?
	[ $rc -eq 1 ] && grep -q "RUN_BEGIN: refused: the daemon's database cannot be written (disk full)" "$T/log" &&
		ok "a new run is refused while the disk is full (import exits 1; the log says why)" || no "new run while full (exit $rc)" "$T/out"
	grep -q "could not store .*disk full" "$T/out" &&
		ok "the refused import says why: the disk is full" || no "refused import told why" "$T/out"
	! grep -q "no transaction is active" "$T/log" && ok "the writer stays in step with SQLite (no 'no transaction is active')" || no "writer out of step" "$T/log"
	rm -f "$MNT/ballast"
	wait_for 10 health_is '"status":"ok"' && ok "space freed: health is ok again" || no "health after freeing" "$T/log"
	get "$U/api/v1/runs?name=big" >"$T/big.json"
	grep -q '"status":"incomplete"' "$T/big.json" && grep -q "run 2 marked incomplete" "$T/log" &&
		ok "the cut run is marked incomplete for real (it was left 'running')" || no "cut run status" "$T/big.json"
	"$CS" import csv "$T/tiny.csv" --socket "$SOCK" --name after >"$T/out" 2>&1 &&
		get "$U/api/v1/runs?name=after" | grep -q '"status":"complete"' && ok "ingest resumes: a new run is stored complete" || no "ingest after freeing" "$T/out"
	"$CS" export big --db "$DB" >"$T/big.out" 2>"$T/err"
	rows=$(($(wc -l <"$T/big.out") - 1))
	head -n "$((rows + 1))" "$T/big.csv" | cmp -s - "$T/big.out" && [ "$rows" -gt 0 ] &&
		ok "what was committed of the cut run is a clean prefix of what was sent ($rows samples)" || no "cut run prefix ($rows rows)" "$T/err"
	"$CS" check --db "$DB" >"$T/check" 2>&1 && ok "check: the file is sound" || no "check after disk full" "$T/check"
	kill -TERM "$DPID"; wait "$DPID"; rc=$?; DPID=
	[ $rc -eq 0 ] && ok "SIGTERM after the episode: exit 0" || no "exit after disk full ($rc)" "$T/stderr"
else
	echo "# the disk-full checks mount a small tmpfs and need root: skipped"
fi

# --- slow clients: 70 connections sending a byte a second (64 slots) ---
if [ "${ONLY:-}" != diskfull ]; then
printf 'http_header_timeout_s = 3\n' >"$T/slow.conf"
"$CS" serve --db "$T/slow.db" --socket "$T/slow.sock" --listen 127.0.0.1:0 --config "$T/slow.conf" \
	--token tok --log "$T/slow.log" 2>"$T/stderr" &
DPID=$!
# the port, from the line the daemon prints once it listens (waited for
# as that line, not any mention of a URL; while the daemon lives)
PORT=
i=0
while [ $i -lt 1200 ] && [ -z "$PORT" ] && kill -0 "$DPID" 2>/dev/null; do
	PORT=$(sed -n 's/^cyclescope serve:.*http:\/\/127\.0\.0\.1:\([0-9]*\)\/.*/\1/p' "$T/stderr" | head -n 1)
	[ -n "$PORT" ] || sleep 0.05
	i=$((i + 1))
done
[ -n "$PORT" ] || { echo "# the slow-client daemon printed no port:"; sed 's/^/#   /' "$T/stderr"; }
cat >"$T/slow.py" <<'PY'
import socket, sys, threading, time
port, n, secs = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
body = len(sys.argv) > 4 and sys.argv[4] == "body"
closed_after = []
def client():
    s = socket.socket(); s.settimeout(secs + 5)
    try:
        s.connect(("127.0.0.1", port))
    except OSError:
        closed_after.append(0.0); return
    t0 = time.time()
    req = b"GET /api/v1/health HTTP/1.1\r\nHost: x\r\nX-Pad: " + b"a" * 200
    if body: # the headers at once, then the body a byte a second
        s.sendall(b"POST /api/v1/query HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\nsql=")
        req = b"x" * 200
    for b in req:
        try:
            s.send(bytes([b]))
        except OSError:
            break
        time.sleep(1.0)
        if time.time() - t0 > secs:
            break
    closed_after.append(time.time() - t0)
threads = [threading.Thread(target=client) for _ in range(n)]
for t in threads: t.start()
for t in threads: t.join()
print("max_held %.1f" % max(closed_after))
PY
# health_while_slow: ten health checks with the token while the slow
# clients ($SPID) run; bad = the ones not answered 200, worst = the slowest
health_while_slow() {
	sleep 1.5
	worst=0 bad=0
	for k in 1 2 3 4 5 6 7 8 9 10; do
		tm=$(curl -sS --noproxy '*' -m 5 -o /dev/null -w '%{http_code} %{time_total}' -H 'Authorization: Bearer tok' "http://127.0.0.1:$PORT/api/v1/health")
		code=${tm% *}; secs=${tm#* }
		[ "$code" = 200 ] || bad=$((bad + 1))
		worst=$(python3 -c "print(max($worst, $secs))")
		sleep 0.5
	done
	wait $SPID
}
python3 "$T/slow.py" "$PORT" 70 12 >"$T/slow.out" 2>&1 &
SPID=$!
health_while_slow
[ $bad -eq 0 ] && python3 -c "import sys; sys.exit(0 if $worst < 1.0 else 1)" &&
	ok "70 slow clients: health with the token answers every time, in $worst s at worst" || no "health under slow clients ($bad failed, worst $worst s)" "$T/slow.out"
held=$(sed -n 's/^max_held //p' "$T/slow.out")
python3 -c "import sys; sys.exit(0 if float('${held:-99}') < 6 else 1)" &&
	ok "a client that never finishes its headers is closed after the header timeout (held $held s, limit 3 s)" || no "slow clients closed (held $held s)" "$T/slow.out"
# The same with clients that send their headers at once and then drip
# their body: the guard covers the whole request, not only its headers.
python3 "$T/slow.py" "$PORT" 70 12 body >"$T/slow.out" 2>&1 &
SPID=$!
health_while_slow
held=$(sed -n 's/^max_held //p' "$T/slow.out")
[ $bad -eq 0 ] && python3 -c "import sys; sys.exit(0 if $worst < 1.0 and float('${held:-99}') < 6 else 1)" &&
	ok "70 clients dripping their request body: health answers every time ($worst s at worst), each closed after the request timeout (held $held s)" ||
	no "health under slow bodies ($bad failed, worst $worst s, held $held s)" "$T/slow.out"
curl -sS --noproxy '*' -H 'Authorization: Bearer tok' "http://127.0.0.1:$PORT/metrics" | grep -q '^cyclescope_http_slow_closed_total [1-9]' &&
	ok "metrics count the slow connections closed" || no "slow_closed metric"
kill -TERM "$DPID"; wait "$DPID"; DPID=
fi

echo "reliability: $((n - fails)) of $n checks passed"
[ "$fails" -eq 0 ]
