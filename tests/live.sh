#!/bin/sh
# Live collection end to end: real processes load the injection library
# through InitializeInjection (tests/tools/inject.c) with its clock-driven
# test source (CYCLESCOPE_SOURCE=test: no GPU), register with a real
# daemon, are armed, triggered over HTTP and by the CLI, killed, and see
# the daemon restart. Every stored value is recomputed here from the test
# source's formula, (k mod 997) * (metric + 1) + device for sample k.
#   sh tests/live.sh [BUILD_DIR]
B=${1:-build}
CS="$B/cyclescope"
LIB="$B/libcyclescope_collector.so"
INJ="$B/tests/inject"
[ -x "$INJ" ] || { echo "not ok 1 - $INJ is missing"; exit 1; }
if [ ! -f "$LIB" ]; then
	echo "# $LIB is not built (no CUDA toolkit): the live checks need the injection library"
	exit 0
fi
. tests/lib.sh
DB="$T/live.db"
SOCK="$T/ingest.sock"
TOKEN=live-token
INTERVAL=1000000 # 1 ms
get() { curl -sS --noproxy '*' -H "Authorization: Bearer $TOKEN" "$@"; }
post() { curl -sS --noproxy '*' -H "Authorization: Bearer $TOKEN" -o "$T/body" -w '%{http_code}' -X POST "$@"; }

start() { # [more serve options]
	: >"$T/stderr"
	: >"$T/stderr" # before the fork: a restart must not read the last daemon's line
	"$CS" serve --db "$DB" --socket "$SOCK" --listen "127.0.0.1:${PORT:-0}" --token "$TOKEN" \
		--log "$T/log" "$@" 2>"$T/stderr" &
	DPID=$!
	i=0
	while [ $i -lt 2400 ] && ! grep -q 'http://' "$T/stderr" 2>/dev/null; do sleep 0.05; i=$((i + 1)); done
	PORT=$(sed -n 's/^cyclescope serve:.*http:\/\/127\.0\.0\.1:\([0-9]*\)\/.*/\1/p' "$T/stderr" | head -n 1)
	U="http://127.0.0.1:$PORT"
}
stop() { kill "$DPID" 2>/dev/null; wait "$DPID" 2>/dev/null; DPID=; }

# app NAME SECONDS [ENV...]: an armed test-source process in the background
app() {
	name=$1 secs=$2
	shift 2
	env -u CUDA_VISIBLE_DEVICES CYCLESCOPE_SOURCE=test CYCLESCOPE_MODE=armed CYCLESCOPE_SOCKET="$SOCK" \
		CYCLESCOPE_METRICS=lts__t_sectors.sum,dram__bytes_read.sum \
		CYCLESCOPE_INTERVAL_NS=$INTERVAL CYCLESCOPE_TEST_DEVICES=2 CYCLESCOPE_NAME="$name" \
		"$@" "$INJ" "$LIB" "$secs" >"$T/$name.out" 2>"$T/$name.err" &
	APPS="$APPS $!"
}
# wait_apps: until every app started so far has exited (not the daemon)
wait_apps() { for p in $APPS; do wait "$p" 2>/dev/null; done; APPS=; }
# samples NAME: the run's samples as CSV (device,t0,t1,metrics...) in $T/NAME.csv
samples() { "$CS" export "$1" --db "$DB" >"$T/$1.csv" 2>"$T/$1.export.err"; }
# wait_collectors N [JOB]: until N live collectors (of JOB) are registered
wait_collectors() {
	i=0
	while [ $i -lt 200 ]; do
		c=$(get "$U/api/v1/collectors" | python3 -c "
import json,sys
print(sum(1 for c in json.load(sys.stdin) if '${2:-}' in ('', c['job']) and c['state'] == 'idle'))" 2>/dev/null)
		[ "${c:-0}" -ge "$1" ] && return 0
		sleep 0.05
		i=$((i + 1))
	done
	return 1
}

start
[ -n "$PORT" ] || { no "daemon starts" "$T/stderr"; exit 1; }

# --- four armed ranks of one job, one trigger for 0.5 s over HTTP ---
for r in 0 1 2 3; do app "rank$r" 4 CYCLESCOPE_JOB=job-42 RANK=$r LOCAL_RANK=$r WORLD_SIZE=4 CYCLESCOPE_LABELS=step=warm,pp=$((r / 2)); done
wait_collectors 4 job-42 && ok "4 armed collectors register, idle, grouped under job-42" ||
	{ get "$U/api/v1/collectors" >"$T/c.json"; no "4 collectors registered" "$T/c.json"; }
get "$U/api/v1/collectors" >"$T/c.json"
python3 - "$T/c.json" <<'EOF' && ok "each lists pid, mode armed, devices, metrics, no run yet" || no "collector fields" "$T/c.json"
import json, sys
c = json.load(open(sys.argv[1]))
assert len(c) == 4, c
for x in c:
    assert x["mode"] == "armed" and x["pid"] > 0 and x["run"] is None, x
    assert x["devices"] == "0-1" and x["metrics"] == "lts__t_sectors.sum,dram__bytes_read.sum", x
    assert "inject" in x["cmdline"], x
EOF
sleep 0.3 # idle: nothing may be recorded
# the request from python, its time taken just before it is sent
code=$(python3 - "$U" "$TOKEN" "$T/t_post" "$T/body" <<'EOF'
import sys, time, urllib.request
u, tok, tfile, body = sys.argv[1:]
rq = urllib.request.Request(u + "/api/v1/collectors/window", data=b"job=job-42&seconds=0.5&name=slow-step",
                            headers={"Authorization": "Bearer " + tok}, method="POST")
t = time.time_ns()
with urllib.request.urlopen(rq, timeout=10) as r:
    open(body, "wb").write(r.read())
    code = r.status
open(tfile, "w").write(str(t))
print(code)
EOF
)
[ "$code" = 200 ] && [ "$(grep -o '"done":"window open"' "$T/body" | wc -l)" -eq 4 ] &&
	ok "one POST opens a 0.5 s window in each of the job's 4 collectors" || no "trigger the job ($code)" "$T/body"
wait_apps
for r in 0 1 2 3; do samples "rank$r"; done
python3 - "$DB" "$T/t_post" $INTERVAL "$T" <<'EOF' >"$T/check" 2>&1 && ok "each run: one window and one trigger range, samples only inside the window (±1 period), every value the source's" || no "armed runs" "$T/check"
import csv, json, socket, sqlite3, sys
db, t_post, interval, tdir = sys.argv[1], int(open(sys.argv[2]).read()), int(sys.argv[3]), sys.argv[4]
con = sqlite3.connect(db)
runs = con.execute("SELECT id, name, status, meta FROM runs WHERE name LIKE 'rank%' ORDER BY name").fetchall()
assert len(runs) == 4, runs
lat = []
for rid, name, status, meta in runs:
    assert status == "complete", (name, status)
    assert '"mode":"armed"' in meta, meta
    labels = json.loads(meta)["labels"]
    r = name[len("rank"):]
    want = {"job": "job-42", "rank": r, "local_rank": r, "world_size": "4", "host": socket.gethostname(),
            "step": "warm", "pp": str(int(r) // 2)}
    assert labels == want, (labels, want)
    win = con.execute("SELECT t0, t1 FROM ranges WHERE run=? AND kind='window'", (rid,)).fetchall()
    trg = con.execute("SELECT t0, t1, name FROM ranges WHERE run=? AND kind='trigger'", (rid,)).fetchall()
    assert len(win) == 1 and len(trg) == 1, (name, win, trg)
    assert trg[0][2] == "slow-step" and trg[0][1] - trg[0][0] == 500000000, trg
    w0, w1 = win[0]
    assert 0.45e9 <= w1 - w0 <= 0.7e9, (name, w1 - w0)
    other = con.execute("SELECT count(*) FROM ranges WHERE run=? AND kind='api' AND (t1 < ? OR t0 > ?)", (rid, w0, w1)).fetchone()[0]
    inside = con.execute("SELECT count(*) FROM ranges WHERE run=? AND kind='api' AND t0 >= ? AND t1 <= ?", (rid, w0, w1)).fetchone()[0]
    assert other == 0, (name, "ranges outside the window", other)
    assert inside >= 20, (name, "the application's ranges inside the window (one per 10 ms)", inside)
    rows = list(csv.DictReader(open("%s/%s.csv" % (tdir, name))))
    assert rows, name
    names = ["lts__t_sectors.sum", "dram__bytes_read.sum"]
    per_dev = {}
    for r in rows:
        dev, t0, t1 = int(r["device"]), int(r["t0"]), int(r["t1"])
        # a sample begins within a period of the window (a sampler stopped
        # a little late on a loaded machine gives the one begun just after)
        assert w0 - interval <= t0 <= w1 + interval, (name, t0, t1, w0, w1)
        assert t0 % interval == 0 and t1 - t0 == interval, (t0, t1)
        k = t0 // interval
        for j, metric in enumerate(names):
            assert float(r[metric]) == (k % 997) * (j + 1) + dev, (name, k, metric, r)
        per_dev.setdefault(dev, set()).add(t0)
    assert sorted(per_dev) == [0, 1], per_dev
    for dev, ts in per_dev.items():
        ts = sorted(ts)
        # every sample of the window, none missing (the first after the start is skipped)
        assert (ts[-1] - ts[0]) // interval + 1 == len(ts), (name, dev, len(ts))
        # and most of it: the sampler starts when the control thread gets to
        # it, which a loaded 2-core machine (sanitizers) can delay by ms
        assert len(ts) >= 0.9 * (w1 - w0) / interval, (name, dev, len(ts), w1 - w0)
    lat.append(((trg[0][0] - t_post) / 1e6, (min(min(v) for v in per_dev.values()) - t_post) / 1e6))
print("trigger latency, request to window start / to first stored sample's t0, ms: %s"
      % ", ".join("%.1f / %.1f" % x for x in lat))
EOF
sed 's/^/# /' "$T/check"
get "$U/api/v1/jobs" >"$T/jobs.json"
python3 - "$T/jobs.json" <<'EOF' >"$T/check" 2>&1 && ok "GET /api/v1/jobs: job-42 with ranks 0-3, each its run and labels" || no "jobs" "$T/check"
import json, sys
jobs = {j["job"]: j for j in json.load(open(sys.argv[1]))}
j = jobs["job-42"]
assert j["runs"] == 4, j
assert [r["rank"] for r in j["ranks"]] == ["0", "1", "2", "3"], j
assert [r["name"] for r in j["ranks"]] == ["rank0", "rank1", "rank2", "rank3"], j
assert all(r["labels"]["world_size"] == "4" for r in j["ranks"]), j
EOF

# --- the CLI ---
app cli 300 CYCLESCOPE_JOB=cli-job # lives until this part is done
AP=$!
wait_collectors 1 cli-job
"$CS" collectors --url "$U" --token "$TOKEN" >"$T/cl" 2>&1
head -n 1 "$T/cl" | grep -q '^ *id  *pid  *host  *job  *mode  *state' && grep -q 'cli-job  *armed  *idle' "$T/cl" &&
	ok "cyclescope collectors prints a table with the armed collector" || no "collectors table" "$T/cl"
"$CS" collectors --url "$U" --token "$TOKEN" --csv | python3 -c "
import csv,sys
r=[x for x in csv.DictReader(sys.stdin) if x['job']=='cli-job']
assert len(r)==1 and r[0]['mode']=='armed', r" && ok "collectors --csv parses with python's csv" || no "collectors --csv"
"$CS" trigger --job cli-job --seconds 0.3 --name from-cli --url "$U" --token "$TOKEN" >"$T/tr" 2>&1 &&
	grep -q '^collector [0-9]*: window open$' "$T/tr" && ok "cyclescope trigger --job opens a window" || no "trigger --job" "$T/tr"
"$CS" trigger --job cli-job --close --url "$U" --token "$TOKEN" >"$T/tr2" 2>&1
rc=$?
{ [ $rc -eq 0 ] && grep -q ': window closed$' "$T/tr2"; } ||
	{ [ $rc -eq 1 ] && grep -q ': not done: no window opened by a command is open$' "$T/tr2"; } &&
	ok "trigger --close: closed, or refused by name once the window had ended" || no "trigger --close ($rc)" "$T/tr2"
"$CS" trigger --all --seconds 0 --url "$U" --token "$TOKEN" >"$T/tr5" 2>&1
[ $? -eq 2 ] && grep -q 'seconds is a duration' "$T/tr5" && ok "trigger --seconds 0 is a usage error" || no "seconds 0" "$T/tr5"
"$CS" trigger 999999 --url "$U" --token "$TOKEN" >"$T/tr3" 2>&1
[ $? -eq 1 ] && grep -q 'answered 404.*no live collector 999999' "$T/tr3" && ok "trigger of an unknown id fails with the daemon's reason" || no "unknown id" "$T/tr3"
"$CS" trigger --all --url "$U" --token wrong >"$T/tr4" 2>&1
[ $? -eq 1 ] && grep -q 'answered 401' "$T/tr4" && ok "trigger with a wrong token: 401, exit 1" || no "wrong token" "$T/tr4"
kill -USR1 "$AP" 2>/dev/null # done with it: the application ends
wait_apps

# --- interval between windows; refusals name why ---
app iv 300
AP=$!
wait_collectors 1
id=$(get "$U/api/v1/collectors" | python3 -c "import json,sys; print([c['id'] for c in json.load(sys.stdin) if c['cmdline'].find('inject')>=0][-1])")
code=$(post "$U/api/v1/collectors/$id/interval" -d ns=2000000)
[ "$code" = 200 ] && ok "interval changed while idle" || no "interval ($code)" "$T/body"
code=$(post "$U/api/v1/collectors/$id/interval" -d ns=1000)
[ "$code" = 409 ] && grep -q 'outside this collector.s limits' "$T/body" && ok "an interval outside the limits is refused (409) with the limits" || no "interval limits ($code)" "$T/body"
code=$(post "$U/api/v1/collectors/$id/window" -d seconds=1)
code2=$(post "$U/api/v1/collectors/$id/interval" -d ns=3000000)
[ "$code" = 200 ] && [ "$code2" = 409 ] && grep -q 'only between windows' "$T/body" && ok "no interval change while a window is open" || no "interval in a window ($code $code2)" "$T/body"
code=$(post "$U/api/v1/collectors/$id/window/close")
[ "$code" = 200 ] && ok "window/close closes it" || no "window/close ($code)" "$T/body"
sleep 1.5 # the rate limit: 5 at once, 2 a second
code=$(post "$U/api/v1/collectors/$id/window/close")
[ "$code" = 409 ] && grep -q 'no window' "$T/body" && ok "closing with none open is refused (409)" || no "close twice ($code)" "$T/body"
code=$(post "$U/api/v1/collectors/$id/interval" -d ns=-5)
code2=$(post "$U/api/v1/collectors/$id/interval" -d ns=abc)
[ "$code" = 400 ] && [ "$code2" = 400 ] && grep -q '^{"error":"ns: ' "$T/body" && ok "a negative or non-numeric interval is a 400 naming ns" || no "bad ns ($code $code2)" "$T/body"
code=$(post "$U/api/v1/collectors/$id/window" --data-binary 'name=%FF')
[ "$code" = 400 ] && grep -q 'name: not UTF-8' "$T/body" && ok "a trigger label that is not UTF-8 is a 400 naming it" || no "bad name ($code)" "$T/body"
code=$(post "$U/api/v1/collectors/$id/window" -d seconds=-1)
code2=$(post "$U/api/v1/collectors/$id/window" -d seconds=1e-12)
[ "$code" = 400 ] && [ "$code2" = 400 ] && grep -q 'seconds: expected a duration in seconds, at least 1e-9' "$T/body" &&
	ok "a bad seconds, or one that rounds to 0 ns (1e-12: it meant open until closed), is a 400 naming it" ||
	no "bad seconds ($code $code2)" "$T/body"
code=$(python3 -c "print('name=' + 'x' * 1100000)" | post "$U/api/v1/collectors/$id/window" --data-binary @-)
[ "$code" = 413 ] && ok "a form body over 1 MiB to /collectors is a 413" || no "big form ($code)" "$T/body"
code=$(curl -sS --noproxy '*' -o "$T/body" -w '%{http_code}' -X POST "$U/api/v1/collectors/$id/window")
[ "$code" = 401 ] && ok "a trigger without the token is refused (401)" || no "no token ($code)" "$T/body"
kill -USR1 "$AP" 2>/dev/null # done with it: the application ends
wait_apps
samples iv
python3 - "$T/iv.csv" <<'EOF' >"$T/iv" 2>&1 && ok "after the change the run's samples are 2 ms apart" || no "interval applied" "$T/iv"
import csv, sys
d = {int(r["t1"]) - int(r["t0"]) for r in csv.DictReader(open(sys.argv[1]))}
assert d == {2000000}, d
EOF

# --- a storm of 1000 triggers changes nothing beyond the rate limit ---
# (the application lives until the storm is over: under a sanitizer the
# storm outlasted a life of 4 s and its last requests found no collector)
app storm 300
SP=$!
wait_collectors 1
id=$(get "$U/api/v1/collectors" | python3 -c "import json,sys; print(json.load(sys.stdin)[-1]['id'])")
python3 - "$U" "$TOKEN" "$id" <<'EOF' >"$T/storm" 2>&1
import sys, time, urllib.request
from concurrent.futures import ThreadPoolExecutor
u, tok, cid = sys.argv[1:]
def one(i):
    rq = urllib.request.Request("%s/api/v1/collectors/%s/window" % (u, cid), data=b"seconds=0.05&name=storm",
                                headers={"Authorization": "Bearer " + tok}, method="POST")
    try:
        return urllib.request.urlopen(rq, timeout=10).status
    except urllib.error.HTTPError as e:
        return e.code
t = time.time()
with ThreadPoolExecutor(8) as ex:
    codes = list(ex.map(one, range(1000)))
el = time.time() - t
print("ok200=%d limited429=%d other=%d elapsed=%.2f" % (codes.count(200), codes.count(429), len(codes) - codes.count(200) - codes.count(429), el))
EOF
kill -USR1 "$SP" 2>/dev/null
wait_apps
python3 - "$DB" "$T/storm" <<'EOF' >>"$T/storm" 2>&1 && ok "trigger storm: $(head -n 1 "$T/storm"); the run holds exactly the accepted triggers" || no "storm" "$T/storm"
import re, sqlite3, sys
f = dict(re.findall(r"(\w+)=([\d.]+)", open(sys.argv[2]).read()))
ok, lim, other, el = int(f["ok200"]), int(f["limited429"]), int(f["other"]), float(f["elapsed"])
assert other == 0 and ok + lim == 1000, f
assert 1 <= ok <= 5 + 2 * el + 1, (ok, el)   # burst 5, 2 a second
con = sqlite3.connect(sys.argv[1])
rid = con.execute("SELECT id FROM runs WHERE name='storm'").fetchone()[0]
n = con.execute("SELECT count(*) FROM ranges WHERE run=? AND kind='trigger'", (rid,)).fetchone()[0]
assert n == ok, (n, ok)
EOF

get "$U/metrics" >"$T/metrics"
lim=$(sed -n 's/^cyclescope_collector_commands_limited_total //p' "$T/metrics")
# every storm request the rate limit refused, however many got through
limited=$(sed -n 's/.*limited429=\([0-9]*\).*/\1/p' "$T/storm" | head -n 1)
[ -n "$limited" ] && [ "$limited" -gt 0 ] && [ "${lim:-0}" -ge "$limited" ] && grep -q '^cyclescope_collectors ' "$T/metrics" &&
	ok "/metrics counts the live collectors and the rate-limited commands ($lim, the storm's $limited among them)" || no "collector metrics ($lim, storm $limited)" "$T/metrics"

# --- a collector that dies mid-window leaves an incomplete run with what was received ---
app dies 30
wait_collectors 1
apid=$(get "$U/api/v1/collectors" | python3 -c "import json,sys; print(json.load(sys.stdin)[-1]['pid'])")
code=$(post "$U/api/v1/collectors/window" -d pid="$apid" -d seconds=20)
sleep 1
kill -9 "$apid"
wait_apps
i=0
while [ $i -lt 100 ] && ! get "$U/api/v1/runs?name=dies" | grep -q '"status":"incomplete"'; do sleep 0.05; i=$((i + 1)); done
samples dies
python3 - "$DB" "$T/dies.csv" <<'EOF' >"$T/dies" 2>&1 && ok "killed mid-window: the run is incomplete and holds the samples received (all valid)" || no "dies mid-window ($code)" "$T/dies"
import csv, sqlite3, sys
con = sqlite3.connect(sys.argv[1])
st = con.execute("SELECT status FROM runs WHERE name='dies'").fetchone()[0]
assert st == "incomplete", st
names = ["lts__t_sectors.sum", "dram__bytes_read.sum"]
rows = list(csv.DictReader(open(sys.argv[2])))
assert len(rows) > 2 * 300, len(rows)   # ~1 s at 1 ms, 2 devices
for r in rows:
    k, dev = int(r["t0"]) // 1000000, int(r["device"])
    for j, m in enumerate(names):
        assert float(r[m]) == (k % 997) * (j + 1) + dev, r
EOF

# --- the daemon restarts while collectors are armed: they register again ---
app survivor 6 CYCLESCOPE_LOG=info
wait_collectors 1
sid=$(get "$U/api/v1/collectors" | python3 -c "import json,sys; print(json.load(sys.stdin)[-1]['id'])")
post "$U/api/v1/collectors/$sid/interval" -d ns=3000000 >/dev/null
stop
start
i=0
while [ $i -lt 160 ] && ! get "$U/api/v1/collectors" 2>/dev/null | grep -q '"state":"idle"'; do sleep 0.05; i=$((i + 1)); done
get "$U/api/v1/collectors" | grep -q '"mode":"armed".*"interval_ns":3000000' &&
	ok "after a daemon restart the armed collector registers again within $((i * 50)) ms, still armed, its interval kept" || no "re-register" "$T/survivor.err"
code=$(post "$U/api/v1/collectors/window" -d all=1 -d seconds=0.3)
[ "$code" = 200 ] && ok "and takes a trigger from the new daemon" || no "trigger after restart ($code)" "$T/body"
wait_apps
samples survivor
python3 - "$DB" "$T/survivor.csv" <<'EOF' >"$T/surv" 2>&1 && ok "its run has the window and its samples" || no "survivor run" "$T/surv"
import csv, sqlite3, sys
con = sqlite3.connect(sys.argv[1])
rid, st = con.execute("SELECT id, status FROM runs WHERE name='survivor'").fetchone()
assert st == "complete", st
assert con.execute("SELECT count(*) FROM ranges WHERE run=? AND kind='window'", (rid,)).fetchone()[0] == 1
rows = list(csv.DictReader(open(sys.argv[2])))
assert len(rows) > 2 * 60, len(rows)   # 0.3 s at the 3 ms set before the restart, 2 devices
assert {int(r["t1"]) - int(r["t0"]) for r in rows} == {3000000}
EOF
grep -q 'registered again' "$T/survivor.err" && ok "the collector logs that it registered again" || no "re-register log" "$T/survivor.err"

# --- the daemon restarts in the middle of a window: the samples after it go to a new run ---
app midrun 5 CYCLESCOPE_LOG=info
wait_collectors 1
code=$(post "$U/api/v1/collectors/window" -d all=1 -d seconds=3 -d name=across)
sleep 0.8
stop
start
i=0
while [ $i -lt 160 ] && ! get "$U/api/v1/collectors" 2>/dev/null | grep -q '"state":"sampling"'; do sleep 0.05; i=$((i + 1)); done
wait_apps
python3 - "$DB" <<'EOF' >"$T/mid" 2>&1 && ok "a restart mid-window: the first run is incomplete, the samples after it are in a new complete run" || no "restart mid-window ($code)" "$T/mid"
import sqlite3, sys
con = sqlite3.connect(sys.argv[1])
runs = con.execute("SELECT id, status, samples FROM runs WHERE name='midrun' ORDER BY id").fetchall()
assert len(runs) == 2, runs
(a, sa, na), (b, sb, nb) = runs
assert sa == "incomplete" and sb == "complete", runs
assert na > 2 * 300 and nb > 2 * 500, runs   # 0.8 s before, the rest of 3 s after, 2 devices
last_a = con.execute("SELECT max(t1_last) FROM timelines WHERE run=?", (a,)).fetchone()[0]
first_b = con.execute("SELECT min(t0_first) FROM timelines WHERE run=?", (b,)).fetchone()[0]
assert first_b >= last_a, (last_a, first_b)
assert con.execute("SELECT count(*) FROM ranges WHERE run=? AND kind='window'", (b,)).fetchone()[0] == 1
assert con.execute("SELECT count(*) FROM devices WHERE run=?", (b,)).fetchone()[0] == 2
EOF
"$CS" export midrun --db "$DB" >"$T/midrun.csv" 2>&1
python3 - "$T/midrun.csv" <<'EOF' && ok "the new run's values are the source's" || no "new run values" "$T/midrun.csv"
import csv, sys
names = ["lts__t_sectors.sum", "dram__bytes_read.sum"]
rows = list(csv.DictReader(open(sys.argv[1])))
assert rows
for r in rows:
    k, dev = int(r["t0"]) // 1000000, int(r["device"])
    for j, m in enumerate(names):
        assert float(r[m]) == (k % 997) * (j + 1) + dev, r
EOF
grep -q 'what follows goes to a new run' "$T/midrun.err" && ok "the collector says the rest goes to a new run" || no "new-run log" "$T/midrun.err"

# --- a read-only daemon sends no commands ---
stop
start --read-only
app ro 300
AP=$!
wait_collectors 1
code=$(post "$U/api/v1/collectors/window" -d all=1)
[ "$code" = 403 ] && grep -q 'read-only' "$T/body" && ok "a read-only daemon refuses triggers (403)" || no "read-only ($code)" "$T/body"
code=$(curl -sS --noproxy '*' -H "Authorization: Bearer $TOKEN" -o "$T/body" -w '%{http_code}' -X DELETE "$U/api/v1/runs/rank0")
[ "$code" = 403 ] && grep -q 'deletes no runs' "$T/body" && ok "and run deletions (403)" || no "read-only delete ($code)" "$T/body"
kill -USR1 "$AP" 2>/dev/null # done with it: the application ends
wait_apps
stop
if grep -l 'Sanitizer\|runtime error:' "$T"/*.err "$T/stderr" "$T/log" >"$T/san" 2>/dev/null; then
	no "no sanitizer report from the collectors or the daemon" "$(head -n 1 "$T/san")"
else
	ok "no sanitizer report from the collectors or the daemon"
fi
echo "# $n checks, $fails failed"
[ "$fails" -eq 0 ]
