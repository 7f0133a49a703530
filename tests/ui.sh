#!/bin/sh
# The web UI in a real browser: a daemon on 127.0.0.1 over the bundled
# example (hardware, ns) and the real QV100 Accel-Sim output (simulator
# runs with kernel ranges), and live collectors of the test source;
# tests/browser/ui.test.js drives Debian's
# Chromium through playwright-core and prints one TAP line per check.
# Screenshots go to BUILD/test-artifacts/ui-*.png.
#   sh tests/ui.sh [BUILD_DIR]
B=${1:-build}
CS="$B/cyclescope"
Q=tests/fixtures/accelsim-qv100
. tests/lib.sh
PW="$B/test-node/node_modules/playwright-core"
CHROME=$(command -v chromium || command -v chromium-browser || true)
if [ ! -f "$B/web-assets/node_modules/uplot/dist/uPlot.iife.min.js" ] || [ ! -d "$PW" ] ||
	[ -z "$CHROME" ] || ! command -v node >/dev/null 2>&1; then
	echo "# the UI's browser checks are skipped: they need uPlot and playwright-core in $B (npm) and chromium"
	exit 0
fi
DB="$T/ui.db"
# the example with a unit in its header (the catalog would give the same;
# sanitizer builds never load it)
sed '1s/lts__t_sectors.sum,/lts__t_sectors.sum [l2_sector],/' docs/examples/h100-l2-overlap.csv >"$T/example.csv"
"$CS" import csv "$T/example.csv" --db "$DB" --name example >/dev/null 2>&1
"$CS" import "$Q/gpgpusim_visualizer__Wed-Dec--2-10-17-51-2026.log.gz" --db "$DB" --name sim >/dev/null 2>&1
"$CS" import accelsim-log "$Q/stdout.log.gz" --db "$DB" --name simk >/dev/null 2>&1
"$CS" import csv docs/examples/nccl-gemm-phases.csv --ranges docs/examples/nccl-gemm-phases.ranges.csv \
	--db "$DB" --name phases >/dev/null 2>&1
# A simulator run of 4000 metrics (400 samples), for the first load's time.
python3 - "$T/wide.csv" <<'PY'
import random, sys
random.seed(7)
with open(sys.argv[1], "w") as f:
    f.write("t0,t1," + ",".join("stat_%04d" % k for k in range(4000)) + "\n")
    for i in range(400):
        f.write("%d,%d," % (i * 500, i * 500 + 500) + ",".join(str(random.randrange(1000)) for _ in range(4000)) + "\n")
PY
"$CS" import csv "$T/wide.csv" --time-unit cycle --db "$DB" --name wide >/dev/null 2>&1 || no "the 4000-metric run imported"
# A hardware run with no clock and no cycle counter: correlating it needs
# the hardware clock field.
printf 't0,t1,l2_reads\n0,1000,5\n1000,2000,7\n' >"$T/noclock.csv"
"$CS" import csv "$T/noclock.csv" --db "$DB" --name noclock >/dev/null 2>&1
# A job of four ranks (PyTorch profiler traces, clocks 1 ms apart), for
# the job page; last, so that the runs above keep their ids.
python3 tests/tools/mkkineto.py "$T/job" --ranks 4 --steps 6 --skew-us 1000
for f in "$T"/job/*.pt.trace.json; do "$CS" import kineto "$f" --db "$DB" --job dp4 >/dev/null 2>&1; done
# What the run pages open on, computed here from the chunks' stored
# aggregates: the two metrics whose range is widest for their size, names
# with "cycle" last, then by name (docs/ui.md).
# a collector-like run of 90 s with 10,000 API calls: more than a lane draws one by one
python3 - "$T/busy" <<'PY'
import random, sys
random.seed(11)
base = 1796393411000000000
with open(sys.argv[1] + ".csv", "w") as f:
    f.write("t0,t1,sm__inst_executed.sum\n")
    for i in range(900):
        f.write("%d,%d,%d\n" % (base + i * 100000000, base + (i + 1) * 100000000, random.randrange(1000, 9000)))
with open(sys.argv[1] + ".ranges.csv", "w") as f:
    f.write("kind,name,t0,t1,device,stream,correlation_id\n")
    for i in range(10000):
        t0 = base + random.randrange(0, 90000000000 - 60000000)
        d = random.choice([20000, 50000, 200000]) if i % 50 else random.randrange(1000000, 50000000)
        f.write("api,%s,%d,%d,0,,%d\n" % (random.choice(["cudaLaunchKernel", "cudaMemcpyAsync", "ncclAllReduce"]), t0, t0 + d, i + 1))
PY
"$CS" import csv "$T/busy.csv" --ranges "$T/busy.ranges.csv" --db "$DB" --name busy >/dev/null 2>&1 || no "the 10,000-range run imported"
DEFAULTS=$(python3 - "$DB" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
out = []
for (run,) in db.execute("SELECT id FROM runs ORDER BY id"):
    rows = db.execute("SELECT m.name, min(c.vmin), max(c.vmax) FROM chunks c JOIN metrics m ON m.run = c.run AND m.id = c.metric WHERE c.run = ? GROUP BY c.metric", (run,)).fetchall()
    rows = [(n, lo, hi) for n, lo, hi in rows if hi > lo]
    rows.sort(key=lambda r: ("cycle" in r[0].lower(), -(r[2] - r[1]) / max(abs(r[2]), abs(r[1])), -r[2], r[0]))
    # an SM activity counter first where one varies, then the rest in that order
    sm = [r for r in rows if r[0].startswith(("sm__inst_executed", "smsp__inst_executed", "sm__throughput", "sm__warps_active"))][:1]
    pick = sm + [r for r in rows if r not in sm][:2 - len(sm)]
    out.append("%d=%s" % (run, ",".join(r[0] for r in pick)))
print(";".join(out))
PY
)
# tally OUT RC WHAT: a node test's TAP lines into this suite's counts
tally() {
	cat "$1"
	n=$((n + $(grep -c '^ok ' "$1") + $(grep -c '^not ok ' "$1")))
	fails=$((fails + $(grep -c '^not ok ' "$1")))
	[ "$2" -ne 0 ] && [ "$(grep -c '^not ok ' "$1")" -eq 0 ] && no "$3 ran to its end (exit $2)"
	return 0
}
# serve DB SOCK STDERR [OPTIONS...]: a daemon on a free port, its port in $PORT
serve() {
	db=$1 sock=$2 err=$3
	shift 3
	"$CS" serve --db "$db" --socket "$sock" --listen 127.0.0.1:0 "$@" 2>"$err" &
	DPID=$!
	i=0
	while [ $i -lt 1200 ] && ! grep -q 'http://' "$err" 2>/dev/null; do sleep 0.05; i=$((i + 1)); done
	PORT=$(sed -n 's/^cyclescope serve:.*http:\/\/127\.0\.0\.1:\([0-9]*\)\/.*/\1/p' "$err" | head -n 1)
}
serve "$DB" "$T/s.sock" "$T/stderr" --log "$T/log"
[ -n "$PORT" ] || { no "the daemon started" "$T/stderr"; exit 1; }
curl -sS --noproxy '*' -o "$T/index" -w '%{http_code} %{content_type}\n' "http://127.0.0.1:$PORT/" >"$T/code"
grep -q '^200 text/html' "$T/code" && grep -q '/ui/app.js' "$T/index" && ok "GET / serves the UI page" || no "GET /" "$T/code"
code=$(curl -sS --noproxy '*' -o "$T/body" -w '%{http_code}' "http://127.0.0.1:$PORT/ui/nosuch.js")
[ "$code" = 404 ] && grep -q 'no such UI file: nosuch.js' "$T/body" && ok "an unknown UI file is 404 naming it" || no "UI 404 ($code)" "$T/body"
code=$(curl -sS --noproxy '*' -o "$T/body" -w '%{http_code}' "http://127.0.0.1:$PORT/api/v1/runs/sim/ranges.csv?from=5000&to=16000&limit=2")
[ "$code" = 200 ] && [ "$(tr -d '\r' <"$T/body" | cut -d, -f2 | tail -n +2 | tr '\n' ' ')" = "kernel 1 kernel 2 " ] &&
	ok "ranges.csv?from&to&limit: the longest ranges overlapping the view" || no "ranges.csv filters ($code)" "$T/body"
code=$(curl -sS --noproxy '*' -o "$T/body" -w '%{http_code}' "http://127.0.0.1:$PORT/api/v1/runs/sim/ranges.csv?from=9&to=3")
[ "$code" = 400 ] && grep -q 'to: must be greater than from' "$T/body" && ok "ranges.csv with to <= from is 400" || no "ranges.csv bad bounds ($code)" "$T/body"
code=$(curl -sS --noproxy '*' -o "$T/body" -w '%{http_code}' "http://127.0.0.1:$PORT/api/v1/runs/phases/phases?a=kernel:nccl*&b=*gemm*&metric=sm__inst_executed.sum")
[ "$code" = 200 ] && python3 -c 'import json,sys; r = json.load(open(sys.argv[1])); assert [p["phase"] for p in r["phases"]][:4] == ["neither", "only A", "A and B", "only B"] and r["tail"]["duration"] == 2995000' "$T/body" &&
	ok "GET /api/v1/runs/{run}/phases answers what the CLI computes (JSON)" || no "phases over HTTP ($code)" "$T/body"
code=$(curl -sS --noproxy '*' -o "$T/body" -w '%{http_code}' "http://127.0.0.1:$PORT/api/v1/runs/phases/phases?a=nothing*&b=*gemm*")
[ "$code" = 404 ] && grep -q "matches no range" "$T/body" && ok "phases: a glob matching nothing is 404 naming it" || no "phases 404 ($code)" "$T/body"
code=$(curl -sS --noproxy '*' -o "$T/body" -w '%{http_code}' "http://127.0.0.1:$PORT/api/v1/runs/phases/phases?a=x")
[ "$code" = 400 ] && grep -q "give both A and B" "$T/body" && ok "phases without b is 400" || no "phases 400 ($code)" "$T/body"
code=$(curl -sS --noproxy '*' -o "$T/body" -w '%{http_code}' "http://127.0.0.1:$PORT/api/v1/runs/phases/trace.json?buckets=50")
"$CS" export phases --db "$DB" --format perfetto --buckets 50 >"$T/cli.json" 2>/dev/null
[ "$code" = 200 ] && cmp -s "$T/body" "$T/cli.json" && python3 -c 'import json,sys; json.load(open(sys.argv[1]))["traceEvents"]' "$T/body" &&
	ok "GET /api/v1/runs/{run}/trace.json is the CLI's perfetto export, byte for byte" || no "trace.json ($code)" "$T/body"
mkdir -p "$B/test-artifacts"
code=$(curl -sS --noproxy '*' -o "$T/body" -w '%{http_code} %{content_type}' "http://127.0.0.1:$PORT/favicon.ico")
[ "$code" = "200 image/svg+xml" ] && grep -q '<svg' "$T/body" && ok "/favicon.ico is served (an SVG icon)" || no "favicon ($code)" "$T/body"
"$CS" plot phases --db "$DB" --metric dram__bytes_read.sum --from 1000000 --to 9000000 --rate second -o "$T/cli.svg" 2>/dev/null
code=$(curl -sS --noproxy '*' -o "$T/body" -w '%{http_code} %{content_type}' "http://127.0.0.1:$PORT/api/v1/runs/phases/plot.svg?metric=dram__bytes_read.sum&from=1000000&to=9000000&rate=second")
[ "$code" = "200 image/svg+xml" ] && cmp -s "$T/body" "$T/cli.svg" && ok "GET /api/v1/runs/{run}/plot.svg is cyclescope plot's figure, byte for byte" || no "plot.svg ($code)" "$T/body"
code=$(curl -sS --noproxy '*' -o "$T/body" -w '%{http_code}' "http://127.0.0.1:$PORT/api/v1/runs/phases/plot.svg?rate=hourly")
[ "$code" = 400 ] && grep -q 'rate: sample, second or cycle' "$T/body" && ok "plot.svg with a bad rate is 400 naming it" || no "plot.svg 400 ($code)" "$T/body"
code=$(curl -sS --noproxy '*' -o "$T/body" -w '%{http_code}' "http://127.0.0.1:$PORT/api/v1/runs/phases/plot.svg?to=18446744073709551615")
[ "$code" = 400 ] && grep -q "to: '18446744073709551615': past the end of the run's time" "$T/body" &&
	ok "plot.svg with to past 2^63-1 is 400 naming it (was a 500)" || no "plot.svg huge to ($code)" "$T/body"
code=$(curl -sS --noproxy '*' -o "$T/body" -w '%{http_code} %{content_type}' "http://127.0.0.1:$PORT/api/v1/correlate?hw=simk&sim=sim&hw_metric=gpu_sim_insn&sim_metric=Ltworeadhit&format=svg")
[ "$code" = "200 image/svg+xml" ] && python3 -c 'import sys, xml.etree.ElementTree as E; E.parse(sys.argv[1])' "$T/body" &&
	ok "GET /api/v1/correlate?format=svg is the comparison's figure (parses as XML)" || no "correlate svg ($code)" "$T/body"
code=$(curl -sS --noproxy '*' -o "$T/body" -w '%{http_code}' "http://127.0.0.1:$PORT/api/v1/correlate?hw=noclock&sim=sim&hw_metric=l2_reads&sim_metric=Ltworeadhit")
[ "$code" = 400 ] && grep -q 'hw_clock_mhz' "$T/body" && ! grep -q -- '--hw-clock-mhz' "$T/body" &&
	ok "over HTTP a correlation error names the request's field (hw_clock_mhz), not the CLI option" || no "field names ($code)" "$T/body"
# The live pages: the browser test starts collectors of the injection
# library's clock-driven test source (no GPU) streaming to this daemon,
# as tests/live.sh does: one continuous (a run that grows while its page
# follows it), three armed (the collectors page and its triggers).
case "$B" in /*) BA=$B ;; *) BA=$PWD/$B ;; esac
INJECT=
[ -x "$BA/tests/inject" ] && [ -f "$BA/libcyclescope_collector.so" ] && INJECT="$BA/tests/inject"
CS_DEFAULTS="$DEFAULTS" CS_URL="http://127.0.0.1:$PORT" CS_PW="$PWD/$PW" CS_CHROME="$CHROME" CS_ARTIFACTS="$B/test-artifacts" \
	CS_INJECT="$INJECT" CS_LIB="$BA/libcyclescope_collector.so" CS_SOCK="$T/s.sock" CS_N=$n timeout 600 node tests/browser/ui.test.js >"$T/out" 2>&1
tally "$T/out" $? "the browser test"
kill "$DPID"; wait "$DPID" 2>/dev/null; DPID=
# A suite (tests/tools/mksuite.py), on its own database: the suite page.
python3 tests/tools/mksuite.py "$T/suite"
while IFS="$(printf '\t')" read -r f name rep; do
	"$CS" import "$T/suite/$f" --db "$T/suite.db" --name "${name#hw*:}" --job "hw$rep" >/dev/null 2>&1
done <"$T/suite/hw-names.txt"
"$CS" import "$T/suite/sim.csv" --db "$T/suite.db" --name suite-sim >/dev/null 2>&1
serve "$T/suite.db" "$T/u.sock" "$T/ustderr" --log "$T/ulog"
CS_URL="http://127.0.0.1:$PORT" CS_PW="$PWD/$PW" CS_CHROME="$CHROME" CS_ARTIFACTS="$B/test-artifacts" CS_N=$n \
	CS_APP_MAP="$(cat "$T/suite/app-map.txt")" timeout 300 node tests/browser/suite.test.js >"$T/sout" 2>&1
tally "$T/sout" $? "the suite browser test"
kill "$DPID"; wait "$DPID" 2>/dev/null; DPID=
# A daemon with a token (on a copy): the page asks for it and keeps it.
cp "$DB" "$T/tok.db"
serve "$T/tok.db" "$T/t.sock" "$T/tstderr" --token ui-secret --log "$T/tlog"
CS_URL="http://127.0.0.1:$PORT" CS_TOKEN=ui-secret CS_PW="$PWD/$PW" CS_CHROME="$CHROME" CS_N=$n \
	timeout 300 node tests/browser/token.test.js >"$T/tout" 2>&1
tally "$T/tout" $? "the token browser test"
kill "$DPID"; wait "$DPID" 2>/dev/null; DPID=
exit $fails
