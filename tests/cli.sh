#!/bin/sh
# End-to-end checks of the cyclescope command line on a real database file,
# including the loadable extension in the real sqlite3 shell. TAP-style
# output: one "ok N - ..." or "not ok N - ..." line per check.
#   sh tests/cli.sh [BUILD_DIR]
B=${1:-build}
CS="$B/cyclescope"
EX=docs/examples/h100-l2-overlap.csv
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
DB="$T/cli.db"
n=0
fails=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
no() { n=$((n + 1)); fails=$((fails + 1)); echo "not ok $n - $1"; [ -n "$2" ] && sed 's/^/#   /' "$2"; }
# check DESC CMD...: passes when CMD exits 0
check() { d=$1; shift; if "$@" >"$T/out" 2>&1; then ok "$d"; else no "$d" "$T/out"; fi; }
# fails DESC NEEDLE CODE CMD...: passes when CMD exits CODE and prints NEEDLE
fails() {
	d=$1 needle=$2 code=$3; shift 3
	"$@" >"$T/out" 2>&1; rc=$?
	if [ "$rc" -eq "$code" ] && grep -qF -- "$needle" "$T/out"; then ok "$d"; else
		echo "exit $rc, wanted $code and '$needle'" >>"$T/out"; no "$d" "$T/out"; fi
}

check "import the example CSV" "$CS" import csv "$EX" --db "$DB" --name example
grep -q "imported run 1 'example': 4000 samples x 6 metrics" "$T/out" && ok "import reports what it stored" || no "import reports what it stored" "$T/out"
check "runs lists it" "$CS" runs --db "$DB"
grep -q "complete.*4000.*40 ms.*example" "$T/out" && ok "runs shows status, samples, span" || no "runs shows status, samples, span" "$T/out"
check "runs --json" "$CS" runs --db "$DB" --json
grep -q '"name":"example".*"status":"complete".*"samples":4000.*"metrics":6.*"meta":{"file"' "$T/out" && ok "runs --json carries the run" || no "runs --json carries the run" "$T/out"

"$CS" export example --db "$DB" >"$T/export.csv" 2>"$T/err"
tr -d '\r' <"$T/export.csv" | cmp -s - "$EX" && ok "export reproduces the imported file byte for byte" || no "export reproduces the imported file" "$T/err"
check "re-import the export" "$CS" import csv "$T/export.csv" --db "$DB" --name again
"$CS" export again --db "$DB" | cmp -s - "$T/export.csv" && ok "export -> import -> export is exact" || no "export -> import -> export is exact"

"$CS" export 1 --db "$DB" --buckets 40 --metric lts__t_sectors.sum >"$T/b.csv" 2>"$T/err"
[ "$(wc -l <"$T/b.csv")" -eq 41 ] && head -n 1 "$T/b.csv" | grep -q '^t0,t1,lts__t_sectors.sum:min,lts__t_sectors.sum:max,lts__t_sectors.sum:mean,lts__t_sectors.sum:sum,lts__t_sectors.sum:count' && ok "bucketed export: header and 40 rows" || no "bucketed export" "$T/b.csv"
total=$(awk -F, 'NR > 1 { s += $6 } END { printf "%.0f", s }' "$T/b.csv")
want=$(awk -F, 'NR > 1 { s += $5 } END { printf "%.0f", s }' "$EX")
[ "$total" = "$want" ] && ok "bucket sums add up to the file's total ($want)" || { echo "$total != $want" >"$T/err"; no "bucket sums add up" "$T/err"; }
"$CS" export 1 --db "$DB" --from 5000000 --to 5100000 --metric nvlrx__bytes.sum >"$T/w.csv"
[ "$(wc -l <"$T/w.csv")" -eq 11 ] && ok "export --from/--to selects 10 samples" || no "export window" "$T/w.csv"
# times count from the run's start (its first sample in the file) and take units; '@' is a stored time
start=$(awk -F, 'NR == 2 { print $1 }' "$EX")
awk -F, -v lo=$((start + 4000000)) -v hi=$((start + 4100000)) 'NR == 1 { print "t0,t1,nvlrx__bytes.sum" } NR > 1 && $1 >= lo && $1 < hi { print $1 "," $2 "," $8 }' "$EX" >"$T/want.csv"
"$CS" export 1 --db "$DB" --from 4ms --to 4100us --metric nvlrx__bytes.sum >"$T/w.csv"
"$CS" export 1 --db "$DB" --from "@$((start + 4000000))" --to "@$((start + 4100000))" --metric nvlrx__bytes.sum >"$T/w2.csv"
tr -d '\r' <"$T/w.csv" | cmp -s - "$T/want.csv" && cmp -s "$T/w.csv" "$T/w2.csv" &&
	ok "export --from 4ms --to 4100us counts from the run start; @ gives the same window in stored times" || no "export relative window" "$T/w.csv"
"$CS" export 1 --db "$DB" --from 1xs --to 2ms >"$T/out" 2>&1
[ $? -eq 2 ] && grep -q "^cyclescope export: --from: '1xs': unknown unit 'xs' (expected ns, us, ms, s or cyc)" "$T/out" &&
	ok "a time with an unknown unit is refused naming the option and the unit" || no "bad time unit" "$T/out"
"$CS" export 1 --db "$DB" --from 3000cyc >"$T/out" 2>&1
[ $? -eq 2 ] && grep -q "records no clock to convert cycles" "$T/out" && ok "cycles on an ns run without a clock are refused, saying why" || no "cycles without clock" "$T/out"

"$CS" query --db "$DB" "SELECT count(*) AS n FROM series WHERE run = 1" >"$T/q.csv"
[ "$(tr -d '\r' <"$T/q.csv" | tail -n 1)" = "24000" ] && ok "query over the series table" || no "query over the series table" "$T/q.csv"
"$CS" query --db "$DB" --json "SELECT metric, sum(value) AS s FROM series WHERE run = 1 AND metric = 'nvlrx__bytes.sum' GROUP BY metric" >"$T/q.json"
grep -q '^\[{"metric":"nvlrx__bytes.sum","s":[0-9]' "$T/q.json" && ok "query --json" || no "query --json" "$T/q.json"
fails "query refuses writes" "only read-only statements" 1 "$CS" query --db "$DB" "DELETE FROM runs"
fails "query refuses two statements" "one statement at a time" 2 "$CS" query --db "$DB" "SELECT 1; SELECT 2"
fails "query reports SQL errors" "no such table: nope" 1 "$CS" query --db "$DB" "SELECT * FROM nope"

# An ASan build of the extension needs the ASan runtime preloaded into the shell.
asan_rt=$(ldd "$B/cyclescope_series.so" 2>/dev/null | awk '/libasan|libtsan/ { print $3 }')
if command -v sqlite3 >/dev/null; then
	r=$(LD_PRELOAD="$asan_rt" ASAN_OPTIONS=detect_leaks=0 sqlite3 "$DB" ".load $B/cyclescope_series" "SELECT count(*), sum(value) FROM series WHERE run = 1 AND metric = 'lts__t_sectors.sum' AND t0 BETWEEN 1000000 AND 1990000" 2>&1)
	want=$(awk -F, 'NR > 1 && $1 <= 1990000 { n++; s += $5 } END { printf "%d|%d.0", n, s }' "$EX")
	[ "$r" = "$want" ] && ok "sqlite3 shell loads the extension ($r)" || { echo "$r != $want" >"$T/err"; no "sqlite3 .load" "$T/err"; }
else
	no "sqlite3 shell is installed (apt-get install sqlite3)"
fi

printf 't0,t1,a,b\n0,10,1,2\n10,20,3,x7\n' >"$T/bad.csv"
fails "bad CSV names file, line and column" "$T/bad.csv:3:4: metric 'b': expected a number" 1 "$CS" import csv "$T/bad.csv" --db "$DB"
[ "$("$CS" runs --db "$DB" | wc -l)" -eq 3 ] && ok "a failed import leaves no run behind" || no "failed import left a run"
fails "missing database" "no such database" 1 "$CS" runs --db "$T/none.db"
printf 'not sqlite at all................................................................................\n' >"$T/junk.db"
fails "not a database" "not a SQLite database" 1 "$CS" runs --db "$T/junk.db"
fails "prose about the simulators is no simulator log" "README.md: cannot tell the format from the content" 1 "$CS" import README.md --db "$T/readme.db"
fails "a SQLite file given as CSV says what it is" "is a SQLite database, not a file of format csv: a cyclescope database is read with --db" 1 "$CS" import csv "$DB" --db "$T/sq.db"
[ ! -e "$T/readme.db" ] && [ ! -e "$T/sq.db" ] && ok "refused imports create no database" || no "refused imports left a file"
# Numbers at the edges of a double: a subnormal (what export writes) is
# imported exactly, an underflow to 0 is said, an overflow refused; a NUL
# in a header name and a ';'-separated file are named.
printf 't0,t1,a\n0,10,4.9e-324\n10,20,1e-400\n20,30,-2.2250738585072014e-308\n' >"$T/edge.csv"
"$CS" import csv "$T/edge.csv" --db "$T/edge.db" >"$T/out" 2>&1 && "$CS" export 1 --db "$T/edge.db" >"$T/edge.out" 2>>"$T/out" &&
	python3 -c '
import csv, sys
got = [float(r["a"]) for r in csv.DictReader(open(sys.argv[1]))]
want = [float(r["a"]) for r in csv.DictReader(open(sys.argv[2]))]
assert got == want, (got, want)' "$T/edge.out" "$T/edge.csv" 2>>"$T/out" &&
	grep -q "edge.csv: 1 value(s) below the smallest double stored as 0 (the first at line 3 column 3: '1e-400')" "$T/out" &&
	ok "subnormals import exactly, an underflow to 0 is said" || no "number edges" "$T/out"
printf 't0,t1,a\n0,10,1e400\n' >"$T/big.csv"
fails "an overflowing number is refused" "big.csv:2:3: metric 'a': '1e400' is beyond the largest double" 1 "$CS" import csv "$T/big.csv" --db "$T/edge2.db"
printf 't0,t1,a\000b\n0,10,5\n' >"$T/nul.csv"
fails "a NUL in a header name is refused" "nul.csv:1:3: the column name holds a NUL byte" 1 "$CS" import csv "$T/nul.csv" --db "$T/edge2.db"
printf 't0,t1,ok,caf\351\n0,1,2,3\n' >"$T/latin1.csv"
fails "a header name that is not UTF-8 is refused with its place" "latin1.csv:1:4: the column name is not UTF-8 (byte 0xe9 at its offset 3)" 1 "$CS" import csv "$T/latin1.csv" --db "$T/edge2.db"
# One JSON writer: a run name with quotes, a backslash, a control byte and
# a stray byte, and a file path of 700 bytes (cut at 400-600 before), come
# out as valid JSON that reads back (python's json decoder).
ld="$T/$(python3 -c 'print("/".join(["d" * 200] * 3))')"
mkdir -p "$ld"
long="$ld/$(python3 -c 'print("f" * 100)').csv"
printf 't0,t1,x\n0,1,2\n' >"$long"
"$CS" import csv "$long" --db "$T/js2.db" --name "$(printf 'q"b\\s\tt\377x')" >/dev/null 2>&1
"$CS" runs --db "$T/js2.db" --json >"$T/out" 2>&1 && python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))[0]
assert r["name"] == "q\"b\\s\tt\ufffdx", repr(r["name"])
assert r["meta"]["file"] == sys.argv[2], len(r["meta"]["file"])' "$T/out" "$long" 2>>"$T/out" &&
	ok "run names and file names of any bytes come out as valid JSON, never cut" || no "JSON writer" "$T/out"
printf 't0;t1;a\n0;10;5\n' >"$T/semi.csv"
fails "a ;-separated file gets a hint" "its fields are separated by ';': the CSV must use commas" 1 "$CS" import csv "$T/semi.csv" --db "$T/edge2.db"
# Text that is not UTF-8: query --json stays valid JSON, each bad byte a
# U+FFFD as Python's own decoder places them (it passed the bytes raw).
"$CS" query --json --db "$DB" "SELECT CAST(X'C328' AS TEXT) AS a, CAST(X'F4908080' AS TEXT) AS b, CAST(X'EDA080' AS TEXT) AS c, CAST(X'E282ACF09F9880' AS TEXT) AS d" >"$T/u.json" 2>&1
python3 -c '
import json, sys
got = json.loads(open(sys.argv[1], "rb").read().decode("utf-8"))[0]
want = {k: bytes.fromhex(h).decode("utf-8", "replace") for k, h in
        (("a", "C328"), ("b", "F4908080"), ("c", "EDA080"), ("d", "E282ACF09F9880"))}
assert got == want, (got, want)' "$T/u.json" 2>"$T/err" && ok "query --json: invalid UTF-8 becomes U+FFFD, the JSON stays valid" || no "query --json UTF-8" "$T/err"
# runs keeps its columns in line whatever the source's length.
"$CS" import tests/fixtures/sim/perf_counter_2026-12-02_10-17-51.csv.gz --db "$T/cols.db" >/dev/null 2>&1
"$CS" import csv "$EX" --db "$T/cols.db" >/dev/null 2>&1
"$CS" runs --db "$T/cols.db" >"$T/out" 2>&1
awk 'NR == 1 { p = index($0, "UNIT") } NR > 1 && substr($0, p, 2) !~ /^(ns|cy)/ { bad = 1 } END { exit bad || NR < 3 }' "$T/out" &&
	ok "runs: the UNIT column in line under its header with an accelsim-perf run" || no "runs columns" "$T/out"
fails "unknown command" "unknown command 'frobnicate'" 2 "$CS" frobnicate
fails "a misspelt command gets a suggestion" "unknown command 'imprt' (did you mean 'import'?)" 2 "$CS" imprt
fails "a misspelt option gets a suggestion" "unknown option '--metirc' (did you mean '--metric'?)" 2 "$CS" export 1 --metirc x --db "$DB"
fails "unknown option" "unknown option '--bogus'" 2 "$CS" runs --bogus
fails "unknown format" "unknown format 'xml'" 2 "$CS" import xml "$EX" --db "$DB"
fails "unknown run" "no run 'nosuch'" 1 "$CS" export nosuch --db "$DB"
fails "unknown metric" "has no metric 'nope'" 1 "$CS" export 1 --metric nope --db "$DB"
fails "a misspelt metric gets the nearest name" "has no metric 'lts__t_sector.sum' (did you mean 'lts__t_sectors.sum'?)" 1 "$CS" export 1 --metric lts__t_sector.sum --db "$DB"
fails "a misspelt run name gets the nearest run" "no run 'exampel' (did you mean 'example'?" 1 "$CS" export exampel --db "$DB"
"$CS" import csv "$EX" --db "$T/pre.db" >/dev/null 2>&1
fails "a run name without its suffix gets the run" "no run 'h100-l2-overlap' (did you mean 'h100-l2-overlap.csv'?" 1 "$CS" export h100-l2-overlap --db "$T/pre.db"
fails "bad number" "--buckets: expected a non-negative integer" 2 "$CS" export 1 --buckets ten --db "$DB"
check "help" "$CS" --help
grep -q "import" "$T/out" && ok "help lists the commands" || no "help lists the commands" "$T/out"
# Every subcommand's --help: the help on stdout, nothing on stderr, exit 0
# (correlate and report went on after it and failed).
ABS_CS=$(cd "$(dirname "$CS")" && pwd)/$(basename "$CS")
for c in serve run import runs export query metrics correlate report ship; do
	(cd "$T" && "$ABS_CS" $c --help) >"$T/out" 2>"$T/err"
	rc=$?
	if [ $rc -ne 0 ] || [ -s "$T/err" ] || ! grep -q "^usage: cyclescope $c" "$T/out"; then
		no "$c --help (exit $rc)" "$T/err"; c=; break
	fi
done
[ -n "$c" ] && ok "every subcommand's --help prints its usage and exits 0"
CYCLESCOPE_DB="$DB" "$CS" runs >"$T/out" 2>&1 && grep -q example "$T/out" && ok "\$CYCLESCOPE_DB picks the database" || no "\$CYCLESCOPE_DB" "$T/out"

# A writer killed with SIGKILL mid-import: the file opens, earlier runs are
# intact, the killed run shows as incomplete.
awk 'BEGIN { print "t0,t1,a,b,c,d"; for (i = 0; i < 3000000; i++) printf "%d,%d,%d,%d,%d,%d\n", i*10, i*10+10, i%977, i%13, i, 7 }' >"$T/big.csv"
"$CS" import csv "$T/big.csv" --db "$DB" --name killed >/dev/null 2>&1 &
pid=$!
i=0
while [ $i -lt 100 ]; do
	sleep 0.05
	"$CS" query --db "$DB" "SELECT count(*) FROM runs WHERE name = 'killed' AND samples > 0" 2>/dev/null | tail -n 1 | grep -q 1 && break
	i=$((i + 1))
done
kill -9 "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
"$CS" runs --db "$DB" >"$T/out" 2>&1
grep -q "incomplete.*killed" "$T/out" && ok "SIGKILLed import shows as incomplete" || no "SIGKILLed import shows as incomplete" "$T/out"
"$CS" export example --db "$DB" | tr -d '\r' | cmp -s - "$EX" && ok "earlier runs intact after SIGKILL" || no "earlier runs intact after SIGKILL"
r=$("$CS" query --db "$DB" "SELECT count(*) FROM series WHERE run = (SELECT id FROM runs WHERE name = 'killed')" | tail -n 1 | tr -d '\r')
[ "${r:-0}" -gt 0 ] && ok "the killed run's committed samples read back ($r values)" || no "killed run readable"
if command -v sqlite3 >/dev/null; then
	[ "$(sqlite3 "$DB" 'PRAGMA integrity_check')" = "ok" ] && ok "integrity_check after SIGKILL" || no "integrity_check after SIGKILL"
fi

# import --json: what was imported, for scripts (they parsed 'imported run N').
"$CS" import csv "$EX" --db "$T/js.db" --name 'a "quoted" name' --json >"$T/out" 2>"$T/err" &&
	python3 -c '
import csv, json, sys
j = json.load(open(sys.argv[1]))
rows = list(csv.reader(open(sys.argv[2])))
want = {"run": 1, "name": "a \"quoted\" name", "samples": len(rows) - 1,
        "metrics": len(rows[0]) - 2, "devices": 1}
assert {k: j[k] for k in want} == want, (j, want)
assert j["db"].endswith("js.db"), j' "$T/out" "$EX" 2>>"$T/err" &&
	ok "import --json says run, name, samples, metrics, devices and the file" || no "import --json" "$T/err"

# runs delete / rename (there was no way to remove or rename a run).
for rn in keep gone other; do "$CS" import csv "$EX" --db "$T/del.db" --name $rn >/dev/null 2>&1; done
"$CS" runs delete gone nosuch --db "$T/del.db" >"$T/out" 2>&1
[ $? -eq 1 ] && grep -q "no run 'nosuch'" "$T/out" && [ "$("$CS" runs --db "$T/del.db" | grep -c ' gone$')" -eq 1 ] &&
	ok "runs delete with an unknown run changes nothing" || no "delete unknown" "$T/out"
gid=$(sqlite3 "$T/del.db" "SELECT id FROM runs WHERE name = 'gone'")
"$CS" runs delete gone --db "$T/del.db" >"$T/out" 2>&1 &&
	[ "$(sqlite3 "$T/del.db" "SELECT (SELECT count(*) FROM runs WHERE id = $gid) + (SELECT count(*) FROM chunks WHERE run = $gid) + (SELECT count(*) FROM timelines WHERE run = $gid) + (SELECT count(*) FROM metrics WHERE run = $gid)")" = 0 ] &&
	[ "$(sqlite3 "$T/del.db" "SELECT count(*) FROM runs")" = 2 ] && grep -q "deleted run $gid ('gone')" "$T/out" &&
	ok "runs delete removes the run and all it holds, nothing else" || no "runs delete" "$T/out"
"$CS" runs rename other renamed --db "$T/del.db" >"$T/out" 2>&1 &&
	[ "$(sqlite3 "$T/del.db" "SELECT group_concat(name, ' ') FROM (SELECT name FROM runs ORDER BY id)")" = "keep renamed" ] &&
	ok "runs rename" || no "runs rename" "$T/out"
# A run name with a terminal's escapes and a line break prints as '?'s: one
# line a run, nothing the terminal acts on.
"$CS" import csv "$EX" --db "$T/esc.db" --name "$(printf 'evil\033[31m\r\ncyclescope: error: forged')" >/dev/null 2>&1
"$CS" runs --db "$T/esc.db" >"$T/out" 2>&1
[ "$(wc -l <"$T/out")" -eq 2 ] && ! grep -q "$(printf '\033')" "$T/out" && grep -q 'evil?\[31m??cyclescope: error: forged$' "$T/out" &&
	ok "runs prints a name's escapes and line breaks as '?'" || no "runs with escapes in a name" "$T/out"
"$B/tests/produce" --db "$T/del.db" --name live --samples 5000 --stall-after 1000 >/dev/null 2>&1 &
PP=$!
# until the run is there (or the producer has died): a loaded machine may take long
i=0; while [ $i -lt 2400 ] && kill -0 $PP 2>/dev/null && [ "$(sqlite3 "$T/del.db" "SELECT count(*) FROM runs WHERE name = 'live'" 2>/dev/null)" != 1 ]; do sleep 0.05; i=$((i + 1)); done
"$CS" runs delete live --db "$T/del.db" >"$T/out" 2>&1
rc=$?
kill -9 $PP 2>/dev/null; wait $PP 2>/dev/null
[ $rc -eq 1 ] && grep -q "is still being written (pid $PP on " "$T/out" &&
	ok "a run a live producer writes is not deleted" || no "delete a live run (exit $rc)" "$T/out"
"$CS" runs delete live --db "$T/del.db" >"$T/out" 2>&1 && ok "once its producer is gone it can be" || no "delete after the producer died" "$T/out"

# Many buckets are read and written a part at a time (4096 a part): 9000
# buckets come out whole, each holding exactly the raw samples that fall
# in its bounds (counted here from the raw export).
"$CS" export 1 --db "$DB" --buckets 9000 --metric lts__t_sectors.sum >"$T/b9k.csv" 2>"$T/err"
"$CS" export 1 --db "$DB" --metric lts__t_sectors.sum >"$T/raw1.csv" 2>>"$T/err"
python3 -c '
import bisect, csv, sys
b = list(csv.DictReader(open(sys.argv[1])))
raw = list(csv.DictReader(open(sys.argv[2])))
starts = [int(r["t0"]) for r in b]
cnt = [0] * len(b); tot = [0.0] * len(b)
for r in raw:
    if r["lts__t_sectors.sum"] == "":
        continue
    t = int(r["t0"]); i = bisect.bisect_right(starts, t) - 1
    assert 0 <= i and t < int(b[i]["t1"]), t
    cnt[i] += 1; tot[i] += float(r["lts__t_sectors.sum"])
assert len(b) == 9000, len(b)
for i, r in enumerate(b):
    assert int(r["lts__t_sectors.sum:count"]) == cnt[i], (i, r, cnt[i])
    if cnt[i]:
        assert abs(float(r["lts__t_sectors.sum:sum"]) - tot[i]) <= 1e-9 * abs(tot[i]), (i, r, tot[i])
print(sum(cnt))' "$T/b9k.csv" "$T/raw1.csv" >"$T/out" 2>&1 &&
	ok "9000 buckets (three parts): every bucket holds exactly its raw samples ($(cat "$T/out") in all)" || no "buckets in parts" "$T/out"

# Conventions: global options before the command, short options, -o on
# every command, --json summaries, summaries on stderr and data on stdout,
# runs filters, export --range; man pages made from --help; completion of
# run and metric names from the database.
"$CS" --db "$DB" runs >"$T/g1" 2>&1 && "$CS" runs --db "$DB" >"$T/g2" 2>&1 && cmp -s "$T/g1" "$T/g2" &&
	ok "--db before the command is every command's --db" || no "global --db" "$T/g1"
"$CS" -j --db="$DB" runs >"$T/g1" 2>&1 && python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))[0]["name"] == "example"' "$T/g1" &&
	ok "-j before the command is the command's --json" || no "global -j" "$T/g1"
"$CS" runs --db "$DB" -o "$T/g3" >"$T/g4" 2>&1 && [ ! -s "$T/g4" ] && cmp -s "$T/g3" "$T/g2" &&
	ok "runs -o FILE: the table goes to FILE, nothing to stdout" || no "runs -o" "$T/g4"
"$CS" export example --db "$DB" -m lts__t_sectors.sum -jo "$T/g5.csv" >"$T/g6" 2>"$T/err" &&
	python3 -c '
import csv, json, os, sys
j = json.load(open(sys.argv[1])); rows = list(csv.reader(open(sys.argv[2])))
assert rows[0] == ["t0", "t1", "lts__t_sectors.sum"], rows[0]
assert j == {"file": sys.argv[2], "format": "csv", "bytes": os.path.getsize(sys.argv[2]), "rows": len(rows) - 1}, j' "$T/g6" "$T/g5.csv" 2>>"$T/err" &&
	ok "export -m METRIC -jo FILE: the CSV in FILE, what was written as JSON on stdout" || no "export -jo" "$T/err"
"$CS" import csv "$EX" --db "$T/conv.db" --name conv >"$T/g7" 2>"$T/g8" && [ ! -s "$T/g7" ] && grep -q "^imported run 1 'conv'" "$T/g8" &&
	"$CS" -q import csv "$EX" --db "$T/conv.db" --name conv2 >"$T/g7" 2>"$T/g8" && [ ! -s "$T/g7" ] && [ ! -s "$T/g8" ] &&
	ok "import's summary goes to stderr; -q silences it" || no "import summary (stdout / stderr)" "$T/g8"
printf 'kind,name,t0,t1\nkernel,gemm_a,1000005,3000005\nkernel,gemm_b,20000005,20500005\nnvtx,step,0,40000000\n' >"$T/rg.csv"
"$CS" import csv "$EX" --db "$T/conv.db" --name ranged --ranges "$T/rg.csv" >/dev/null 2>&1
"$CS" export ranged --db "$T/conv.db" --range 'gemm*' -m lts__t_sectors.sum >"$T/g9" 2>"$T/err" &&
	python3 -c '
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
got = [int(r["t0"]) for r in csv.DictReader(open(sys.argv[2]))]
want = [int(r["t0"]) for r in rows if 1000005 <= int(r["t0"]) < 3000005 or 20000005 <= int(r["t0"]) < 20500005]
assert got == want and want, (len(got), len(want))
print(len(want))' "$EX" "$T/g9" >"$T/out" 2>&1 &&
	ok "export --range 'gemm*': exactly the samples inside those ranges ($(cat "$T/out"))" || no "export --range" "$T/out"
want=$(python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT count(*) FROM runs WHERE kind = ? AND name GLOB ?", ("hw", "conv*")).fetchone()[0])' "$T/conv.db")
[ "$("$CS" runs --db "$T/conv.db" --kind hw -n 'conv*' | tail -n +2 | wc -l)" = "$want" ] && [ "$want" = 2 ] &&
	[ "$("$CS" runs --db "$T/conv.db" --kind sim | tail -n +2 | wc -l)" = 0 ] &&
	ok "runs --kind hw -n 'conv*' lists the $want runs the filter names" || no "runs filters"
fails "an unknown short option is a usage error" "unknown option '-x'" 2 "$CS" runs -x --db "$DB"
fails "output that cannot be written is a failure, never exit 0" "cyclescope runs: writing the output: No space left on device" 1 "$CS" runs --db "$DB" -o /dev/full
fails "-j on a command without JSON output is a usage error" "this command has no JSON output" 2 "$CS" -j check --db "$DB"
"$CS" --version --verbose >"$T/out" 2>&1 && grep -q '^collector library: ' "$T/out" && grep -q '^web assets (uPlot): ' "$T/out" &&
	grep -q '^metric sets: ' "$T/out" && ok "--version --verbose says where the parts were found" || no "--version --verbose" "$T/out"
drift=""
for c in $("$CS" --help | sed -n 's/^  \([a-z][a-z]*\) .*/\1/p'); do
	"$CS" help --man "$c" | sed -n '/^\.nf$/,/^\.fi$/p' | sed '1d;$d' |
		sed 's/^\\&//; s/\\-/-/g; s/\\e/\\/g' >"$T/man.txt"
	"$CS" "$c" --help >"$T/help.txt"
	cmp -s "$T/man.txt" "$T/help.txt" || drift="$drift $c"
done
[ -z "$drift" ] && ok "every command's man page holds exactly its --help text" || no "man pages differ from --help:$drift"
if command -v bash >/dev/null; then
	"$CS" completion bash >"$T/comp.sh"
	comp() { PATH="$(dirname "$CS"):$PATH" bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _cyclescope; echo "${COMPREPLY[*]}"' _ "$T/comp.sh" "$@"; }
	[ "$(comp cyclescope --db "$T/conv.db" export c)" = "conv conv2" ] &&
		[ "$(comp cyclescope export ranged --db "$T/conv.db" --metric lts__t_s)" = "lts__t_sectors.sum lts__t_sectors_srcunit_tex.sum" ] &&
		[ "$(comp cyclescope runs --db "$T/conv.db" del)" = "delete" ] &&
		ok "bash completion: run names and metric names from the database on the line" || no "completion of names"
fi

# Checksums: every chunk and timeline carries one (docs/schema.md); a
# flipped bit is an error naming where it is, never different values with
# exit status 0; `check` verifies a whole file; files from before checksums
# read as they are.
CK="$T/ck.db"
python3 -c '
import random
r = random.Random(3)
print("t0,t1,a,b,c")
for i in range(12000):
    print(f"{i*10},{i*10+10},{r.randint(0, 1 << 40)},{r.random()*1000:.6f},{i % 7}")' >"$T/ck.csv"
"$CS" import csv "$T/ck.csv" --db "$CK" --name ck >/dev/null 2>&1
"$CS" export ck --db "$CK" >"$T/ck.clean" 2>&1
want=$(python3 -c 'import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); print("%d timelines and %d chunks, 0 problems" % (c.execute("SELECT count(*) FROM timelines").fetchone()[0], c.execute("SELECT count(*) FROM chunks").fetchone()[0]))' "$CK")
fails "check: a sound file has no problems ($want)" "$want" 0 "$CS" check --db "$CK"
cp "$CK" "$T/ck1.db"
python3 tests/tools/chunkfmt.py flip "$T/ck1.db" >"$T/where"
fails "check: one flipped payload bit is named ($(tr '\n' ' ' <"$T/where"))" "$(head -n 1 "$T/where") device 0 $(tail -n 1 "$T/where"): corrupt chunk: block checksum mismatch" 1 "$CS" check --db "$T/ck1.db"
fails "export of the damaged run fails, saying where" "corrupt chunk: block checksum mismatch" 1 "$CS" export ck --db "$T/ck1.db"
cp "$CK" "$T/ck2.db"
python3 -c 'import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
c.execute("UPDATE chunks SET data = x'"'"'00112233'"'"' WHERE seq0 = 0 AND metric = (SELECT min(metric) FROM chunks)")
c.commit()' "$T/ck2.db"
fails "export of a run whose very first chunk is cut to 4 bytes fails, saying where" "seq 0: corrupt chunk: chunk shorter than its header" 1 "$CS" export ck --db "$T/ck2.db"
silent=0 caught=0
for seed in 1 2 3 4 5 6 7 8; do
	cp "$CK" "$T/ckr.db"
	python3 tests/tools/chunkfmt.py random "$T/ckr.db" 16 "$seed"
	"$CS" export ck --db "$T/ckr.db" >"$T/ckr.csv" 2>/dev/null; erc=$?
	"$CS" check --db "$T/ckr.db" >/dev/null 2>&1; crc=$?
	[ $erc -eq 0 ] && ! cmp -s "$T/ckr.csv" "$T/ck.clean" && silent=$((silent + 1))
	[ $crc -ne 0 ] && caught=$((caught + 1))
	rm -f "$T"/ckr.db*
done
[ $silent -eq 0 ] && [ $caught -ge 7 ] && ok "8 copies with 16 random bit flips: none exports different values with exit 0; check finds $caught" ||
	no "random bit flips: $silent exported different values silently, check found $caught of 8"
# (format 1 from the format 2 blobs of the v3 fixture, which the code
# before format 3 wrote)
cp tests/fixtures/store/v3.db "$T/ck0.db"
cp tests/fixtures/store/v3.db "$T/ck2.db"
"$CS" export v3-fixture --db "$T/ck2.db" >"$T/ck2.clean" 2>&1
python3 tests/tools/chunkfmt.py format1 "$T/ck0.db"
fails "check: a file from before checksums is validated, and says so" "were written before checksums and are validated, not verified" 0 "$CS" check --db "$T/ck0.db"
"$CS" export v3-fixture --db "$T/ck0.db" | cmp -s - "$T/ck2.clean" && ok "a file from before checksums exports the same values" || no "format 1 export"

# Archived files on read-only media: a WAL database whose file and
# directory are read-only (it failed with "attempt to write a readonly
# database"). Needs another user than root, who may write anything.
ABS=$(cd "$(dirname "$CS")" && pwd)/$(basename "$CS")
if [ "$(id -u)" -eq 0 ] && id nobody >/dev/null 2>&1 &&
	su nobody -s /bin/sh -c "'$ABS' --help" >/dev/null 2>&1; then
	RO=$(mktemp -d); chmod 755 "$RO"
	"$CS" import csv "$EX" --db "$RO/a.db" --name archived >/dev/null 2>&1
	cp "$RO/a.db" "$RO/w.db"
	# w.db keeps committed changes in its -wal (no checkpoint at exit)
	python3 -c '
import os, sqlite3, sys
c = sqlite3.connect(sys.argv[1]); c.execute("PRAGMA wal_autocheckpoint = 0")
c.execute("UPDATE runs SET name = ?", ("changed",)); c.commit(); os._exit(0)' "$RO/w.db"
	rm -f "$RO/w.db-shm" # without its -shm, the -wal cannot be read here
	chmod 0444 "$RO"/*; chmod 0555 "$RO"
	su nobody -s /bin/sh -c "'$ABS' runs --db '$RO/a.db' && '$ABS' export archived --metric lts__t_sectors.sum --db '$RO/a.db'" >"$T/out" 2>&1
	rc=$?
	want=$(python3 -c 'import csv,sys; r=list(csv.DictReader(open(sys.argv[1]))); print(len(r))' "$EX")
	[ $rc -eq 0 ] && grep -q 'archived' "$T/out" && [ "$(grep -c '^[0-9]' "$T/out")" -ge "$want" ] &&
		ok "a read-only WAL file in a read-only directory reads ($want samples)" || no "read-only media (exit $rc)" "$T/out"
	su nobody -s /bin/sh -c "'$ABS' runs --db '$RO/w.db'" >"$T/out" 2>&1
	[ $? -eq 1 ] && grep -q "write-ahead log $RO/w.db-wal holds changes" "$T/out" &&
		ok "read-only with unread WAL content: says so and how to get at it" || no "read-only WAL content" "$T/out"
	chmod 0755 "$RO"; rm -rf "$RO"
else
	echo "# read-only media checks need root and a 'nobody' user who can run $ABS: skipped"
fi

# A v3 file (tests/fixtures/store/v3.db, written by the code before the v4
# timeline index from tests/fixtures/store/v3-source.csv): the first
# read-write open migrates it, and every sample reads back as the source
# says (python's csv, values compared as floats, empty fields absent).
cp tests/fixtures/store/v3.db "$T/v3.db"
"$CS" export v3-fixture --db "$T/v3.db" >"$T/v3.csv" 2>"$T/err" &&
	python3 - tests/fixtures/store/v3-source.csv "$T/v3.csv" "$T/v3.db" <<'PY' >"$T/out" 2>&1 && ok "a v3 file migrates to the current schema and reads back as its source CSV (9000 samples, 2 devices)" || no "v3 migration" "$T/out"
import csv, sqlite3, sys
def rows(path):
    out = {}
    for r in csv.DictReader(open(path)):
        d = r.get("device", "0")
        out.setdefault(d, []).append((int(r["t0"]), int(r["t1"]),
            [None if r[m] == "" else float(r[m]) for m in ("l2.sum", "sm.ratio")]))
    return out
want, got = rows(sys.argv[1]), rows(sys.argv[2])
assert sorted(want) == sorted(got), (sorted(want), sorted(got))
for d in want:
    assert want[d] == got[d], "device %s differs" % d
db = sqlite3.connect(sys.argv[3])
assert db.execute("PRAGMA user_version").fetchone()[0] == 7
assert db.execute("SELECT count(*) FROM sqlite_master WHERE name = 'timelines_t0'").fetchone()[0] == 1
assert db.execute("SELECT count(*) FROM correlations").fetchone()[0] == 0
assert db.execute("SELECT count(*) FROM sqlite_master WHERE name = 'ranges_run_name'").fetchone()[0] == 0
assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
PY
"$CS" check --db "$T/v3.db" >"$T/out" 2>&1 && ok "cyclescope check passes on the migrated v3 file" || no "check after migration" "$T/out"

# A v4 file (tests/fixtures/store/v4.db, written by the code at schema v4
# from v4-source.csv and v4-source.ranges.csv: two devices, an integer
# counter with gaps and zero runs, a float ratio, a counter past 2^32, 81
# ranges): it migrates on the first read-write open, and its samples and
# ranges read back as the source files say.
cp tests/fixtures/store/v4.db "$T/v4.db"
"$CS" export v4-fixture --db "$T/v4.db" >"$T/v4.csv" 2>"$T/err" &&
	"$CS" query --db "$T/v4.db" "SELECT kind, name, t0, t1, device, stream, correlation_id, args FROM ranges ORDER BY id" >"$T/v4r.csv" &&
	python3 - tests/fixtures/store/v4-source.csv "$T/v4.csv" "$T/v4.db" tests/fixtures/store/v4-source.ranges.csv "$T/v4r.csv" <<'PY' >"$T/out" 2>&1 && ok "a v4 file migrates to the current schema: its 6000 samples on 2 devices and 81 ranges read back as their source files" || no "v4 migration" "$T/out"
import csv, sqlite3, sys
cols = ("l2.sum", "sm.ratio", "dram.bytes")
def rows(path):
    out = {}
    for r in csv.DictReader(open(path)):
        out.setdefault(r.get("device", "0"), []).append((int(r["t0"]), int(r["t1"]),
            [None if r[m] == "" else float(r[m]) for m in cols]))
    return out
want, got = rows(sys.argv[1]), rows(sys.argv[2])
assert sorted(want) == sorted(got) == ["0", "1"], (sorted(want), sorted(got))
for d in want:
    assert want[d] == got[d], "device %s differs" % d
assert sum(len(v) for v in got.values()) == 6000
src = [(r["kind"], r["name"], r["t0"], r["t1"], r["device"], r["stream"], r["correlation_id"]) for r in csv.DictReader(open(sys.argv[4]))]
back = [(r["kind"], r["name"], r["t0"], r["t1"], r["device"], r["stream"], r["correlation_id"]) for r in csv.DictReader(open(sys.argv[5]))]
assert src == back and len(back) == 81, (len(src), len(back))
assert all(r["args"] == "" for r in csv.DictReader(open(sys.argv[5])))
db = sqlite3.connect(sys.argv[3])
assert db.execute("PRAGMA user_version").fetchone()[0] == 7
assert db.execute("SELECT count(*) FROM correlations").fetchone()[0] == 0
assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
PY
"$CS" check --db "$T/v4.db" >"$T/out" 2>&1 && ok "cyclescope check passes on the migrated v4 file" || no "check after v4 migration" "$T/out"

# A file of value and timeline chunks in format 4 (tests/fixtures/store/
# v7-format4.db, written by the code before format 5 from f4-source.csv:
# a smooth counter with noise and a gap every 997 samples, a counter in
# bursts over zeros) reads back as its source; a run imported beside it is
# written as now (value chunks in format 7: the smooth counter's noise
# against lines, the bursts with their runs of zeros as symbols; its
# timeline in format 5), and the file, old and new formats in it, checks
# clean.
cp tests/fixtures/store/v7-format4.db "$T/f4.db"
head -n 3001 tests/fixtures/store/f4-source.csv >"$T/f4-more.csv"
"$CS" export format4-fixture --db "$T/f4.db" >"$T/f4.csv" 2>"$T/err" &&
	"$CS" import csv "$T/f4-more.csv" --db "$T/f4.db" --name current-beside >/dev/null 2>>"$T/err" &&
	"$CS" export current-beside --db "$T/f4.db" >"$T/f5.csv" 2>>"$T/err" &&
	"$CS" check --db "$T/f4.db" >>"$T/err" 2>&1 &&
	python3 - tests/fixtures/store/f4-source.csv "$T/f4.csv" "$T/f5.csv" "$T/f4.db" <<'PY' >"$T/out" 2>&1 && ok "a file of format 4 chunks reads back as its source, and takes a run in today's formats beside it" || { cat "$T/err" >>"$T/out"; no "format 4 file" "$T/out"; }
import csv, sqlite3, sys
def rows(path):
    return [(int(r["t0"]), int(r["t1"]), [None if r[m] == "" else float(r[m]) for m in ("smooth", "sparse")])
            for r in csv.DictReader(open(path))]
src = rows(sys.argv[1])
assert rows(sys.argv[2]) == src and len(src) == 8000
assert rows(sys.argv[3]) == src[:3000]
db = sqlite3.connect(sys.argv[4])
formats = {(r, name): sorted(set(f for (f,) in db.execute(
    "SELECT unicode(substr(c.data, 1, 1)) FROM chunks c JOIN metrics m ON m.run = c.run AND m.id = c.metric"
    " WHERE c.run = ? AND m.name = ?", (r, name)))) for r in (1, 2) for name in ("smooth", "sparse")}
assert formats == {(1, "smooth"): [4], (1, "sparse"): [4], (2, "smooth"): [7], (2, "sparse"): [7]}, formats
timelines = {r: sorted(set(f for (f,) in db.execute(
    "SELECT unicode(substr(data, 1, 1)) FROM timelines WHERE run = ?", (r,)))) for r in (1, 2)}
assert timelines == {1: [4], 2: [5]}, timelines
PY

# The same source written by the code before format 7
# (tests/fixtures/store/v7-format6.db: value chunks in format 6, the smooth
# counter's blocks with bits back, the bursts' table with run symbols, a
# format 5 timeline) reads back as its source and checks clean.
cp tests/fixtures/store/v7-format6.db "$T/f6.db"
"$CS" export format6-fixture --db "$T/f6.db" >"$T/f6.csv" 2>"$T/err" &&
	"$CS" check --db "$T/f6.db" >>"$T/err" 2>&1 &&
	python3 - tests/fixtures/store/f4-source.csv "$T/f6.csv" "$T/f6.db" <<'PY' >"$T/out" 2>&1 && ok "a file of format 6 chunks reads back as its source" || { cat "$T/err" >>"$T/out"; no "format 6 file" "$T/out"; }
import csv, sqlite3, sys
def rows(path):
    return [(int(r["t0"]), int(r["t1"]), [None if r[m] == "" else float(r[m]) for m in ("smooth", "sparse")])
            for r in csv.DictReader(open(path))]
assert rows(sys.argv[2]) == rows(sys.argv[1])
db = sqlite3.connect(sys.argv[3])
def top(blob):  # the table's first varint: one past its highest symbol
    v, s, p = 0, 0, 16
    while True:
        v |= (blob[p] & 127) << s
        s += 7
        if blob[p] < 128:
            return v
        p += 1
chunks = {name: (blob[0], top(blob)) for name, blob in db.execute(
    "SELECT m.name, c.data FROM chunks c JOIN metrics m ON m.run = c.run AND m.id = c.metric")}
assert chunks["smooth"][0] == 6 and chunks["smooth"][1] <= 432, chunks
assert chunks["sparse"][0] == 6 and chunks["sparse"][1] > 432, chunks  # run symbols 432-439
assert [f for (f,) in db.execute("SELECT unicode(substr(data, 1, 1)) FROM timelines")] == [5]
PY

# A reader written from docs/schema.md alone (tests/tools/docreader.py)
# decodes the committed format 4 and format 6 files, and a run written
# now whose value chunks hold blocks against lines (some with absent
# samples, one the short last block), runs of zeros, bits back, values
# near 2^53 and decimal fractions (rates of seven significant digits,
# percentages of two decimals with absent samples), to their sources,
# every coded block's first samples alone as well.
for f in 4 6; do
	cp tests/fixtures/store/v7-format$f.db "$T/doc$f.db"
	python3 tests/tools/docreader.py "$T/doc$f.db" --compare tests/fixtures/store/f4-source.csv \
		--prefix-check >"$T/out" 2>&1 && ok "the format $f file decodes to its source by docs/schema.md alone" ||
		no "format $f file by docs/schema.md" "$T/out"
done
python3 - "$T/doc.csv" <<'PY'
import math, random, sys
rng = random.Random(5)
with open(sys.argv[1], "w") as f:
    f.write("t0,t1,trend,bursts,wave,huge,rate,pct\n")
    t = 1000000
    for i in range(20300):
        t += 10000 + rng.randrange(-40, 41)
        trend = "" if (i % 13 == 0 and 5000 < i < 12000) or i % 101 == 0 else \
            str(int(30000 + 3.7 * i) + rng.randrange(-100, 101))
        bursts = 0 if (i // 300) % 7 else 5000 + rng.randrange(0, 1000)
        wave = int(-5000 + 2000 * math.sin(i / 4000)) + rng.randrange(-30, 31)
        huge = 2 ** 53 - 1000 + i % 700 + rng.randrange(0, 50)  # block sums past 2^61
        rate = "%.7g" % (20 + 15 * math.sin(i / 3000) + rng.gauss(0, 0.05))
        pct = "" if i % 17 == 0 and i > 15000 else "%.2f" % rng.uniform(-50, 50)
        f.write("%d,%d,%s,%d,%d,%d,%s,%s\n" % (t, t + 9000 - rng.randrange(0, 81), trend, bursts, wave,
                                              huge, rate, pct))
PY
"$CS" import csv "$T/doc.csv" --db "$T/doc.db" --name doc >/dev/null 2>"$T/err" &&
	python3 tests/tools/docreader.py "$T/doc.db" --compare "$T/doc.csv" --prefix-check >"$T/out" 2>&1 &&
	python3 - "$T/out" <<'PY' >>"$T/out" 2>&1 && ok "a run written now decodes to its source by docs/schema.md alone (lines, absent samples, runs, bits back, decimals)" || { cat "$T/err" >>"$T/out"; no "today's format by docs/schema.md" "$T/out"; }
import ast, sys
line = [l for l in open(sys.argv[1]) if l.strip().startswith("stats:")][0]
stats = ast.literal_eval(line.split("stats:", 1)[1].strip().rsplit("} {", 1)[0] + "}")
for k in ("value chunks fmt7", "value chunks fmt8", "timelines fmt5", "blocks type3 line",
          "line with bitmap", "line short block", "blocks type3 with runs", "bitsback R>=46",
          "decimal blocks type1", "decimal blocks type3"):
    assert stats.get(k, 0) > 0, (k, stats)
PY

echo "cli: $((n - fails)) of $n checks passed"
[ "$fails" -eq 0 ]
