#!/bin/sh
# Jobs of many ranks: PyTorch profiler (Kineto) traces imported as they
# come (a committed fixture with real traces' quirks, and whole jobs that
# tests/tools/mkkineto.py writes in the same shape), labels on runs, and
# `phases --job` over the CLI and HTTP. Every expected value is worked out
# from the JSON files by tests/tools/kineto_expect.py (python's json and
# decimal; interval unions written there), never read from cyclescope.
# TAP-style.
#   sh tests/jobs.sh [BUILD_DIR]
B=${1:-build}
CS="$B/cyclescope"
F=tests/fixtures/formats
X=tests/tools/kineto_expect.py
. tests/lib.sh
DB="$T/j.db"
q() { "$CS" query --db "$DB" "$1" | tail -n +2 | tr -d '\r'; }
# pq SQL: rows of the database read with python's sqlite3, cells joined by '|'
pq() {
	python3 -c 'import sqlite3, sys
for r in sqlite3.connect(sys.argv[1]).execute(sys.argv[2]):
    print("|".join("" if v is None else str(v) for v in r))' "$DB" "$1"
}
same() { # DESC GOT WANT
	if [ "$2" = "$3" ]; then ok "$1"; else printf 'got:\n%s\nwanted:\n%s\n' "$2" "$3" >"$T/why"; no "$1" "$T/why"; fi
}
bad() { # DESC NEEDLE CMD...: fails, says NEEDLE, stores nothing
	refused "SELECT count(*) || ':' || (SELECT count(*) FROM ranges) FROM runs" "$@"
}
RANGE_ROW="kind || '|' || name || '|' || t0 || '|' || t1 || '|' || coalesce(device, '') || '|' ||
 coalesce(stream, '') || '|' || coalesce(correlation_id, '') || '|' || coalesce(pid, '') || '|' ||
 coalesce(tid, '') || '|' || coalesce(bytes, '') || '|' ||
 coalesce((SELECT group_concat(value, ',') FROM json_each(args, '$.grid')), '') || '|' ||
 coalesce((SELECT group_concat(value, ',') FROM json_each(args, '$.block')), '')"

# --- one trace with real traces' quirks ---
K=$F/kineto-quirks.pt.trace.json
"$CS" import "$K" --db "$DB" --name quirks >"$T/out" 2>&1 && grep -q 'looks like kineto' "$T/out" &&
	ok "a PyTorch profiler trace is recognised from its content" || no "kineto detection" "$T/out"
same "kernels, copies, sets, API calls and annotations: times exact to the ns from decimal us + baseTimeNanoseconds, streams, correlation ids, bytes, grid and block" \
	"$(pq "SELECT $RANGE_ROW FROM ranges WHERE run = (SELECT id FROM runs WHERE name = 'quirks') ORDER BY t0, kind, name")" \
	"$(python3 $X ranges "$K")"
same "distributedInfo gives the labels rank, world_size, backend; deviceProperties the device" \
	"$(q "SELECT json_extract(meta, '\$.labels.rank') || ' ' || json_extract(meta, '\$.labels.world_size') || ' ' || json_extract(meta, '\$.labels.backend') || ' ' || (SELECT name || '/' || sm_count FROM devices WHERE run = runs.id) FROM runs WHERE name = 'quirks'")" \
	"$(python3 -c "
import json; d = json.load(open('$K')); i = d['distributedInfo']; p = d['deviceProperties'][0]
print(i['rank'], i['world_size'], i['backend'], p['name'] + '/' + str(p['numSms']))")"
same "what was not imported is counted on stderr: CPU ops, flow events" \
	"$(sed -n 's/.* \([0-9]*\) flow events; not imported: cpu_op \([0-9]*\).*/\2 \1/p' "$T/out")" \
	"$(python3 -c "
import json; e = json.load(open('$K'))['traceEvents']
print(sum(1 for x in e if x.get('cat') == 'cpu_op'), sum(1 for x in e if x.get('ph') in ('s', 'f')))")"
gzip -c "$K" >"$T/k.json.gz"
"$CS" import "$T/k.json.gz" --db "$DB" --name quirks-gz >/dev/null 2>&1
same "gzipped, the same ranges" \
	"$(pq "SELECT $RANGE_ROW FROM ranges WHERE run = (SELECT id FROM runs WHERE name = 'quirks-gz') ORDER BY t0, kind, name")" \
	"$(pq "SELECT $RANGE_ROW FROM ranges WHERE run = (SELECT id FROM runs WHERE name = 'quirks') ORDER BY t0, kind, name")"
"$CS" import "$K" --db "$DB" --name relabelled --job exp7 --rank 0 --label host=node3,tp=2 >/dev/null 2>&1
same "--job, --rank and --label win over the file's own labels and keep the rest" \
	"$(pq "SELECT json(json_extract(meta, '\$.labels')) FROM runs WHERE name = 'relabelled'")" \
	'{"backend":"nccl","rank":"0","world_size":"2","job":"exp7","host":"node3","tp":"2"}'
python3 - "$K" "$T/late.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
late = {"traceEvents": d.pop("traceEvents"), "baseTimeNanoseconds": d.pop("baseTimeNanoseconds") + 1000}
late.update(d)  # distributedInfo and deviceProperties after the events, another origin
json.dump(late, open(sys.argv[2], "w"))
EOF
"$CS" import "$T/late.json" --db "$DB" --name late >/dev/null 2>&1
same "a trace laid out otherwise (the header after the events) gets the same ranges, labels and devices" \
	"$(pq "SELECT (SELECT min(t0) - 1000 FROM ranges WHERE run = r.id) || ' ' || json_extract(meta, '\$.labels.rank') || ' ' || (SELECT count(*) FROM devices WHERE run = r.id) || ' ' || (SELECT count(*) FROM ranges WHERE run = r.id) FROM runs r WHERE name = 'late'")" \
	"$(pq "SELECT (SELECT min(t0) FROM ranges WHERE run = r.id) || ' 1 1 ' || (SELECT count(*) FROM ranges WHERE run = r.id) FROM runs r WHERE name = 'quirks'")"
bad "--rank must be a number" "--rank" "$CS" import "$K" --db "$DB" --rank one
bad "--label must be KEY=VALUE" "KEY=VALUE" "$CS" import "$K" --db "$DB" --label oops

# --- bad traces: a clear error, nothing stored ---
head -c 1500 "$K" >"$T/cut.pt.trace.json"
bad "a cut-off trace is refused (the JSON ends early)" "ends early" "$CS" import kineto "$T/cut.pt.trace.json" --db "$DB"
sed 's/"ts": 12.001/"ts": "soon"/' "$K" >"$T/badts.pt.trace.json"
bad "a ts that is no number names the event" 'event 2: "ts" is soon: expected microseconds' "$CS" import "$T/badts.pt.trace.json" --db "$DB"
sed 's/"dur": 3.5/"dur": -3.5/' "$K" >"$T/neg.pt.trace.json"
bad "a negative dur names the event" '"dur" is negative' "$CS" import "$T/neg.pt.trace.json" --db "$DB"
printf '{"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "aten::add", "ts": 1, "dur": 2}]}' >"$T/cpu.json"
bad "a trace of CPU ops only says so" "none of them a kernel" "$CS" import kineto "$T/cpu.json" --db "$DB"

# --- a job of four ranks, clocks 1 ms apart per rank ---
python3 tests/tools/mkkineto.py "$T/job" --ranks 4 --steps 9 --skew-us 1000 --gzip
for f in "$T"/job/*.pt.trace.json.gz; do
	"$CS" import "$f" --db "$DB" --job dp4 >>"$T/imports" 2>&1 || no "import $f" "$T/imports"
done
"$CS" runs --db "$DB" --job dp4 >"$T/runs" 2>&1
same "runs --job lists the job's runs with their ranks" \
	"$(awk 'NR > 1 { print $(NF - 1) }' "$T/runs" | tr '\n' ' ')" "0 1 2 3 "
"$CS" phases --job dp4 --a 'kernel:nccl*' --b '*gemm*' --db "$DB" --json >"$T/p.json" 2>"$T/p.err" ||
	no "phases --job" "$T/p.err"
for align in none collectives; do
	"$CS" phases --job dp4 --a 'kernel:nccl*' --b '*gemm*' --db "$DB" --json --align $align >"$T/p-$align.json" 2>&1
	python3 $X job nccl gemm $align "$T"/job/*.gz >"$T/want-$align.json"
	python3 - "$T/p-$align.json" "$T/want-$align.json" <<'EOF' >"$T/check" 2>&1 &&
import json, sys
got, want = (json.load(open(p)) for p in sys.argv[1:])
rg = {r["rank"]: r for r in got["ranks"]}
for w in want["ranks"]:
    g = rg[w["rank"]]
    assert g["phases"]["only A"] == w["only_a_ns"], (g["phases"], w)
    assert g["phases"]["A and B"] == w["ab_ns"], (g["phases"], w)
    assert g["phases"]["only B"] == w["only_b_ns"], (g["phases"], w)
    for k in ("exposed_ns", "wait_ns", "times_last", "offset_ns"):
        assert g[k] == w[k], (k, g[k], w[k], w["rank"])
    assert abs(g["overlap_fraction"] - w["ab_ns"] / w["a_ns"]) < 1e-12, (g, w)
gi = {(c["collective"], c["index"]): c for c in got["collectives"]}
assert len(gi) == len(want["collectives"]), (len(gi), len(want["collectives"]))
for w in want["collectives"]:
    g = gi[(w["collective"], w["index"])]
    for k in ("start_ns", "end_ns", "start_skew_ns", "straggler_rank", "wait_ns", "exposed_ns"):
        assert g[k] == w[k], (w["collective"], w["index"], k, g[k], w[k])
print("%d instances, %d ranks" % (len(gi), len(rg)))
EOF
		ok "phases --job --align $align: every rank's phases, exposed and waiting time, every instance's starts, ends, skew, straggler, waits ($(cat "$T/check"))" ||
		no "phases --job --align $align" "$T/check"
done
python3 - "$T/p-collectives.json" <<'EOF' >"$T/check" 2>&1 && ok "--align collectives recovers the ranks' 1 ms clock steps exactly" || no "alignment" "$T/check"
import json, sys
off = [r["offset_ns"] for r in json.load(open(sys.argv[1]))["ranks"]]
assert [b - a for a, b in zip(off, off[1:])] == [1000000] * 3, off
EOF
"$CS" phases --job dp4 --a 'kernel:nccl*' --b '*gemm*' --db "$DB" --csv --align collectives >"$T/p.csv"
python3 - "$T/p.csv" "$T/p-collectives.json" <<'EOF' >"$T/check" 2>&1 && ok "--csv: one row per instance and rank, the JSON's values" || no "phases --job --csv" "$T/check"
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1])))
j = json.load(open(sys.argv[2]))
ranks = [r["rank"] for r in j["ranks"]]
assert len(rows) == len(j["collectives"]) * len(ranks), len(rows)
at = {(r["collective"], int(r["index"]), int(r["rank"])): r for r in rows}
for c in j["collectives"]:
    for i, rk in enumerate(ranks):
        r = at[(c["collective"], c["index"], rk)]
        assert int(r["start_ns"]) == c["start_ns"][i] and int(r["wait_ns"]) == c["wait_ns"][i], r
        assert int(r["straggler_rank"]) == c["straggler_rank"], r
EOF
"$CS" phases --job dp4 --a 'kernel:nccl*' --b '*gemm*' --db "$DB" --align collectives >"$T/p.txt"
grep -q "most often last: rank 3" "$T/p.txt" && grep -q "clocks aligned" "$T/p.txt" &&
	ok "the text names the rank most often last and how clocks were taken" || no "phases --job text" "$T/p.txt"

# --- a missing rank and a collective count that differs are reported ---
python3 tests/tools/mkkineto.py "$T/gap" --ranks 4 --steps 4
python3 - "$T/gap/worker1.1701.pt.trace.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
ar = [i for i, e in enumerate(d["traceEvents"]) if e.get("name", "").startswith("ncclDevKernel_AllReduce")]
del d["traceEvents"][ar[-1]]
json.dump(d, open(sys.argv[1], "w"))
EOF
for r in 0 1 3; do "$CS" import "$T"/gap/worker$r.*.json --db "$DB" --job gap >/dev/null 2>&1; done
"$CS" phases --job gap --a 'kernel:nccl*' --b '*gemm*' --db "$DB" --json >"$T/gap.json" 2>&1
python3 - "$T/gap.json" <<'EOF' >"$T/check" 2>&1 && ok "a missing rank (2 of 4) and a rank with one AllReduce fewer are named in warnings; the rest is matched" || no "missing rank, count mismatch" "$T/check"
import json, sys
j = json.load(open(sys.argv[1]))
w = " | ".join(j["warnings"])
assert "rank 2 is missing" in w, w
assert "AllReduce: rank 1 has 3, others up to 4" in w, w
assert [r["rank"] for r in j["ranks"]] == [0, 1, 3], j["ranks"]
assert sum(1 for c in j["collectives"] if c["collective"] == "AllReduce") == 3, j["collectives"]
EOF
bad "an unknown job is named" "no run is labelled with job 'nope'" "$CS" phases --job nope --a 'kernel:nccl*' --b '*gemm*' --db "$DB"
bad "--align needs --job" "--align goes with --job" "$CS" phases quirks --a 'kernel:nccl*' --b '*gemm*' --align collectives --db "$DB"

# --- the figure ---
"$CS" plot --job dp4 --a 'kernel:nccl*' --b '*gemm*' --align collectives --db "$DB" -o "$T/job.svg" 2>"$T/err" &&
	python3 - "$T/job.svg" <<'EOF' >"$T/check" 2>&1 && ok "plot --job: an SVG with one lane per rank and each straggler named" || no "plot --job" "$T/check"
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
text = " ".join(t.text or "" for t in root.iter() if t.tag.endswith("text") or t.tag.endswith("title"))
for r in range(4):
    assert "rank %d" % r in text, r
assert "started last" in text, text[:500]
EOF
if command -v rsvg-convert >/dev/null 2>&1; then
	mkdir -p "$B/test-artifacts" && rsvg-convert -o "$B/test-artifacts/job-dp4.png" "$T/job.svg"
fi

# --- over HTTP ---
start_daemon() {
	: >"$T/serve.err"
	"$CS" serve --db "$DB" --listen 127.0.0.1:0 --socket "$T/s.sock" 2>"$T/serve.err" &
	DPID=$!
	# until it serves, or has exited
	i=0
	while [ $i -lt 2400 ] && kill -0 "$DPID" 2>/dev/null && ! grep -q 'http://' "$T/serve.err"; do
		sleep 0.05
		i=$((i + 1))
	done
	PORT=$(sed -n 's/^cyclescope serve:.*http:\/\/127\.0\.0\.1:\([0-9]*\)\/.*/\1/p' "$T/serve.err" | head -n 1)
}
start_daemon
U="http://127.0.0.1:$PORT"
get() { curl -sS --noproxy '*' -o "$T/body" -w '%{http_code}' "$1"; }
code=$(get "$U/api/v1/jobs")
python3 - "$T/body" <<'EOF' >"$T/check" 2>&1 && [ "$code" = 200 ] && ok "GET /api/v1/jobs lists dp4, gap and exp7 with their ranks" || no "/api/v1/jobs ($code)" "$T/check"
import json, sys
j = {x["job"]: x for x in json.load(open(sys.argv[1]))}
assert sorted(j) == ["dp4", "exp7", "gap"], sorted(j)
assert [r["rank"] for r in j["dp4"]["ranks"]] == ["0", "1", "2", "3"], j["dp4"]
assert [r["rank"] for r in j["gap"]["ranks"]] == ["0", "1", "3"], j["gap"]
EOF
code=$(get "$U/api/v1/jobs/dp4/phases?a=kernel:nccl*&b=*gemm*&align=collectives")
python3 - "$T/body" "$T/p-collectives.json" <<'EOF' >"$T/check" 2>&1 && [ "$code" = 200 ] && ok "GET /api/v1/jobs/dp4/phases answers what the CLI prints" || no "jobs phases over HTTP ($code)" "$T/check"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
assert a == b
EOF
code=$(get "$U/api/v1/runs?job=dp4")
[ "$code" = 200 ] && [ "$(python3 -c "import json; print(len(json.load(open('$T/body'))))")" = 4 ] &&
	ok "GET /api/v1/runs?job=dp4: its four runs" || no "runs?job ($code)" "$T/body"
code=$(get "$U/api/v1/jobs/dp4/figure.svg?a=kernel:nccl*&b=*gemm*&instances=3")
[ "$code" = 200 ] && grep -q "<svg" "$T/body" && ok "GET /api/v1/jobs/dp4/figure.svg draws the figure" || no "figure over HTTP ($code)" "$T/body"
# a window from the job's start, with units; the same as bare ns
code=$(get "$U/api/v1/jobs/dp4/figure.svg?a=kernel:nccl*&b=*gemm*&from=0&to=2.5ms")
cp "$T/body" "$T/w1.svg"
code2=$(get "$U/api/v1/jobs/dp4/figure.svg?a=kernel:nccl*&b=*gemm*&from=0&to=2500000")
[ "$code" = 200 ] && [ "$code2" = 200 ] && cmp -s "$T/body" "$T/w1.svg" && grep -q 'time since --from' "$T/body" &&
	ok "the job figure's from/to count from the job's start and take units (to=2.5ms is to=2500000)" || no "job window units ($code $code2)" "$T/body"
code=$(get "$U/api/v1/jobs/dp4/figure.svg?a=kernel:nccl*&b=*gemm*&from=0&to=3000cyc")
[ "$code" = 400 ] && grep -q "this time is in ns" "$T/body" && ok "a job's window in cycles is refused, saying why" || no "job window in cycles ($code)" "$T/body"
code=$(get "$U/api/v1/jobs/nope/phases?a=kernel:nccl*&b=*gemm*")
[ "$code" = 404 ] && grep -q "no run is labelled with job" "$T/body" && ok "an unknown job is a 404 naming it" || no "unknown job ($code)" "$T/body"
code=$(get "$U/api/v1/jobs/dp4/phases?a=kernel:nccl*&b=*gemm*&align=sideways")
[ "$code" = 400 ] && ok "a bad align is a 400" || no "bad align ($code)" "$T/body"
code=$(get "$U/api/v1/jobs/dp4/elsewhere")
[ "$code" = 404 ] && ok "an unknown part of a job is a 404" || no "unknown job part ($code)" "$T/body"

echo "# $n checks, $fails failed"
[ "$fails" -eq 0 ]
