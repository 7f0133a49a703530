#!/bin/sh
# Suite correlation end to end: a generated suite in the tools' own shapes
# (tests/tools/mksuite.py: ncu raw CSVs per application and repeat, one
# get_stats.py CSV of two configurations), imported as a user would, then
# `correlate --suite` checked against statistics the generator computed
# with python's statistics module; pairing by name, by application, by a
# map; unpaired kernels and applications listed; the figure and the page.
#   sh tests/suite.sh [BUILD_DIR]
B=${1:-build}
CS="$B/cyclescope"
. tests/lib.sh
DB="$T/s.db"
S="$T/suite"
python3 tests/tools/mksuite.py "$S" --expect "$S/expect.json"
while IFS="$(printf '\t')" read -r f name rep; do
	"$CS" import "$S/$f" --db "$DB" --name "${name#hw*:}" --job "hw$rep" >/dev/null 2>&1 || echo "import $f failed" >>"$T/imp"
done <"$S/hw-names.txt"
"$CS" import "$S/sim.csv" --db "$DB" --name suite-sim >/dev/null 2>&1 || echo "import sim.csv failed" >>"$T/imp"
[ ! -s "$T/imp" ] && ok "the suite imports (10 ncu CSVs under two job labels, one get_stats CSV)" || no "imports" "$T/imp"

STATS="--hw-metric gpc__cycles_elapsed.avg --sim-metric gpu_tot_sim_cycle
	--hw-metric smsp__inst_executed.sum --sim-metric gpgpu_n_tot_w_icount
	--hw-metric lts__t_sectors_srcunit_tex_op_read.sum --sim-metric L2_cache_stats_breakdown[GLOBAL_ACC_R][TOTAL_ACCESS]"
# shellcheck disable=SC2086
"$CS" correlate --suite --db "$DB" --hw job:hw0 --hw job:hw1 --sim suite-sim --sim-config CFG-A \
	--sim-config CFG-B $STATS --app-map "$S/app-map.txt" --json >"$T/j" 2>"$T/err"
python3 - "$T/j" "$S/expect.json" >"$T/why" 2>&1 <<'PY' && ok "every statistic of both configurations is what python computes (r, rho, MAPE, mean error, RPD, within 1/10%, aggregate errors, NRMSE)" || no "suite statistics" "$T/why"
import json, math, sys
got = json.load(open(sys.argv[1])); exp = json.load(open(sys.argv[2]))
assert got["configurations"] == exp["configs"], got["configurations"]
assert len(got["statistics"]) == len(exp["stats"])
for g, e in zip(got["statistics"], exp["stats"]):
    assert g["hw_metric"] == e["hw"] and g["sim_metric"] == e["sim"], (g["statistic"], e)
    for gc, ec in zip(g["configurations"], e["configs"]):
        for k, v in ec.items():
            if k == "apps":
                assert len(gc["apps"]) == v, (k, len(gc["apps"]), v)
                continue
            w = gc[k]
            ok = w == v if isinstance(v, int) else math.isclose(w, v, rel_tol=1e-9, abs_tol=1e-9)
            assert ok, (g["statistic"], gc["configuration"], k, w, v)
print("ok")
PY
python3 - "$T/j" "$S/expect.json" >"$T/why" 2>&1 <<'PY' && ok "applications pair by normalised name, by the application without its arguments and by the map; the rest are listed" || no "application pairing" "$T/why"
import json, sys
got = json.load(open(sys.argv[1])); exp = json.load(open(sys.argv[2]))
how = {a["hw"]: a["paired_by"] for a in got["applications"]}
assert how == {"app000-suite-1.0/64_args": "name", "APP001-SUITE-1.0/128_ARGS": "name",
               "app002-suite-1.0": "application", "my-own-name": "map"}, how
apps = [(u["side"], u["app"]) for u in got["unpaired"] if "kernel" not in u]
assert sorted(apps) == [("hw", "app005-suite-1.0/128_args"), ("sim", "app004-suite-1.0/64_args")], apps
ks = [(u["configuration"], u["app"], u["kernel"], u["launch"]) for u in got["unpaired"] if "kernel" in u]
assert ks == [("CFG-A", "app000-suite-1.0/64_args", "k0_scan", 2),
              ("CFG-B", "app000-suite-1.0/64_args", "k0_scan", 2)], ks
assert got["hw_runs"] == 10 and got["sim_runs"] == 1, (got["hw_runs"], got["sim_runs"])
print("ok")
PY
# The pairs, as CSV: the hardware value is the mean of the two repeats,
# min and max theirs; one row per kernel, statistic and configuration.
# shellcheck disable=SC2086
"$CS" correlate --suite --db "$DB" --hw job:hw0 --hw job:hw1 --sim suite-sim --sim-config CFG-A \
	--sim-config CFG-B $STATS --app-map "$S/app-map.txt" --csv >"$T/p.csv" 2>"$T/err"
python3 - "$T/p.csv" "$S" >"$T/why" 2>&1 <<'PY' && ok "--csv: 120 pairs; hardware mean, min and max over the repeats read back from the ncu files" || no "pair CSV" "$T/why"
import csv, os, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
assert len(rows) == 3 * 2 * 20, len(rows)
# the ncu files' own numbers for app001's kernels, both repeats
names = [l.rstrip("\n").split("\t") for l in open(os.path.join(sys.argv[2], "hw-names.txt"))]
vals = {}  # (kernel, launch) -> the repeats' values
for f, name, rep in names:
    if "APP001" not in name:
        continue
    lines = [l for l in open(os.path.join(sys.argv[2], f), newline="") if not l.startswith("==PROF==")]
    r = list(csv.reader(lines))
    head = r[0]
    seen = {}
    for row in r[2:]:
        seen[row[4]] = seen.get(row[4], -1) + 1
        vals.setdefault((row[4], seen[row[4]]), []).append(float(row[head.index("smsp__inst_executed.sum")].replace(",", "")))
got = [x for x in rows if x["hw_app"] == "APP001-SUITE-1.0/128_ARGS" and x["statistic"].startswith("smsp__") and x["configuration"] == "CFG-A"]
assert len(got) == 5, got
for x, (name, v) in zip(got, vals.items()):
    assert abs(float(x["hw"]) - sum(v) / 2) < 1e-6 and float(x["hw_min"]) == min(v) and float(x["hw_max"]) == max(v), (x, v)
    assert x["repeats"] == "2" and x["sim_app"] == "app001-suite-1.0/128_args", x
print("ok")
PY
# The figure: one panel per statistic, a colour per configuration, every
# point named, y = x and the 10% band.
# shellcheck disable=SC2086
"$CS" report --suite --db "$DB" --hw job:hw0 --hw job:hw1 --sim suite-sim --sim-config CFG-A \
	--sim-config CFG-B $STATS --app-map "$S/app-map.txt" -o "$T/f.svg" 2>"$T/err"
python3 - "$T/f.svg" >"$T/why" 2>&1 <<'PY' && ok "report --suite -o F.svg: a valid SVG, 3 panels, 120 named points with whiskers, y = x and the 10% band in each" || no "suite figure" "$T/why"
import sys, xml.etree.ElementTree as ET
ns = {"s": "http://www.w3.org/2000/svg"}
root = ET.parse(sys.argv[1]).getroot()
panels = root.findall("s:svg", ns)
assert len(panels) == 3, len(panels)
pts = [c for c in root.findall(".//s:circle", ns) if c.find("s:title", ns) is not None]
assert len(pts) == 120, len(pts)
assert all(" #" in c.find("s:title", ns).text for c in pts)
for p in panels:
    assert len(p.findall(".//*[@class='diagonal']", ns)) == 1
    assert len(p.findall(".//*[@class='band']", ns)) == 2
    assert len(p.findall(".//*[@class='whisker']", ns)) > 0
print("ok")
PY
# Time against cycles: a warning without a clock, converted with one.
"$CS" correlate --suite --db "$DB" --hw job:hw0 --sim suite-sim --sim-config CFG-A --hw-metric gpu__time_duration.sum \
	--sim-metric gpu_tot_sim_cycle --json >"$T/j" 2>&1
"$CS" correlate --suite --db "$DB" --hw job:hw0 --sim suite-sim --sim-config CFG-A --hw-metric gpu__time_duration.sum \
	--sim-metric gpu_tot_sim_cycle --hw-clock-mhz 1500 --csv >"$T/t.csv" 2>"$T/err"
python3 - "$T/j" "$T/t.csv" "$S" >"$T/why" 2>&1 <<'PY' && ok "ns against cycles: a warning asks for the clock; --hw-clock-mhz 1500 turns 5.00 us into 7500 cycles" || no "units" "$T/why"
import csv, json, sys
g = json.load(open(sys.argv[1]))
assert any("is time (ns)" in w and "--hw-clock-mhz" in w for w in g["warnings"]), g["warnings"]
rows = list(csv.DictReader(open(sys.argv[2], newline="")))
# the generator's durations: 5 + k microseconds for the k-th kernel
first = [x for x in rows if x["hw_app"] == "app000-suite-1.0/64_args"]
assert [float(x["hw"]) for x in first] == [(5 + k) * 1000 * 1.5 for k in range(5)], first
PY
"$CS" report --suite --db "$DB" --hw job:hw0 --sim suite-sim --sim-config CFG-A --hw-metric gpu__time_duration.sum \
	--sim-metric gpu_tot_sim_cycle -o "$T/r.html" 2>"$T/err"
python3 - "$T/r.html" >"$T/why" 2>&1 <<'PY' && ok "report --suite -o F.html: one page with the inline figure, the warning on the page, the unpaired listed" || no "suite page" "$T/why"
import sys
from html.parser import HTMLParser
page = open(sys.argv[1]).read()
assert "<?xml" not in page
class P(HTMLParser):
    def __init__(s):
        super().__init__(); s.ids = set(); s.svgs = 0; s.text = []
    def handle_starttag(s, tag, a):
        a = dict(a)
        if "id" in a: s.ids.add(a["id"])
        if tag == "svg": s.svgs += 1
    def handle_data(s, d): s.text.append(d)
p = P(); p.feed(page)
text = " ".join(p.text)
assert "warnings" in p.ids and "is time (ns)" in text, text[:400]
assert p.svgs >= 2 and "app004-suite-1.0/64_args" in text and "app000-suite-1.0/64_args" in text
PY
# Errors: a group that matches nothing, a metric no run has.
"$CS" correlate --suite --db "$DB" --hw 'nosuch*' --sim suite-sim --metric x >"$T/out" 2>&1
[ $? -eq 1 ] && grep -q "nosuch\*: no run matches" "$T/out" && ok "a group that matches no run is named" || no "empty group" "$T/out"
"$CS" correlate --suite --db "$DB" --hw job:hw0 --sim suite-sim --sim-config CFG-A --hw-metric nosuch \
	--sim-metric gpu_tot_sim_cycle --json >"$T/j" 2>&1
python3 - "$T/j" >"$T/why" 2>&1 <<'PY' && ok "runs without the metric are left out and named in a warning, nothing pairs" || no "missing metric" "$T/why"
import json, sys
g = json.load(open(sys.argv[1]))
c = g["statistics"][0]["configurations"][0]
assert c["pairs"] == 0 and c["runs_left_out"] == 5, c
assert any("has no metric 'nosuch'" in w for w in g["warnings"]), g["warnings"]
PY
"$CS" correlate --suite --db "$DB" --hw job:hw0 --sim suite-sim >"$T/out" 2>&1
[ $? -eq 2 ] && grep -q "give --metric" "$T/out" && ok "no statistic: a usage error saying what to give" || no "usage" "$T/out"
# The real QV100 Accel-Sim stdout against ncu's raw and details pages of
# the same three kernels (tests/fixtures/ncu): kernels pair by demangled
# name; values read back here from the files themselves.
Q=tests/fixtures/accelsim-qv100
"$CS" import tests/fixtures/ncu/raw.csv --db "$T/q.db" --name qv100_demo --job raw >/dev/null 2>&1
"$CS" import tests/fixtures/ncu/details.csv --db "$T/q.db" --name qv100_demo --job details >/dev/null 2>&1
"$CS" import accelsim-log "$Q/stdout.log.gz" --db "$T/q.db" --name qv100_demo --job sim >/dev/null 2>&1
"$CS" correlate --suite --db "$T/q.db" --hw-job raw --sim-job sim --hw-metric smsp__inst_executed.sum \
	--sim-metric gpgpu_n_tot_w_icount --csv >"$T/q1.csv" 2>"$T/err"
"$CS" correlate --suite --db "$T/q.db" --hw-job details --sim-job sim --hw-metric 'sum("Elapsed Cycles")' \
	--sim-metric gpu_sim_cycle --json >"$T/q2.json" 2>"$T/err"
icount=$(zcat "$Q/stdout.log.gz" | awk '/^gpgpu_n_tot_w_icount/ { printf "%s%d", s, $3 - p; p = $3; s = " " }')
cycles=$(zcat "$Q/stdout.log.gz" | awk '/^gpu_sim_cycle/ { printf "%s%d", s, $3; s = " " }')
python3 - "$T/q1.csv" "$T/q2.json" "$icount" "$cycles" >"$T/why" 2>&1 <<'PY' && ok "the real Accel-Sim stdout pairs with ncu's raw page (3 kernels by demangled name) and its details page (2, stencil unpaired); values as the files say" || no "QV100 stdout against ncu" "$T/why"
import csv, json, sys
raw = [r for r in csv.reader(l for l in open("tests/fixtures/ncu/raw.csv", newline="") if not l.startswith("==PROF=="))]
col = raw[0].index("smsp__inst_executed.sum")
hw = [float(r[col].replace(",", "")) for r in raw[2:]]
sim = [float(x) for x in sys.argv[3].split()]
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
assert [x["kernel"] for x in rows] == ["vecAdd", "saxpy", "stencil"], rows
assert [float(x["hw"]) for x in rows] == hw and [float(x["sim"]) for x in rows] == sim, (rows, hw, sim)
det = list(csv.reader(open("tests/fixtures/ncu/details.csv", newline="")))
el = [float(r[14].replace(",", "")) for r in det[1:] if r[12] == "Elapsed Cycles"]
cyc = [float(x) for x in sys.argv[4].split()]
g = json.load(open(sys.argv[2]))
c = g["statistics"][0]["configurations"][0]
assert c["pairs"] == 2 and abs(c["hw_total"] - sum(el)) < 1e-9 and abs(c["sim_total"] - sum(cyc[:2])) < 1e-9, (c, el, cyc)
assert [(u["kernel"], u["launch"]) for u in g["unpaired"] if "kernel" in u] == [("stencil", 0)], g["unpaired"]
assert g["statistics"][0]["hw_unit"] == "cycle" and not g["warnings"], g
PY

# Two sides that would share a name are told apart; a statistic twice is refused.
"$CS" correlate --suite --db "$DB" --hw-job hw0 --sim suite-sim --sim 'suite-s*' --sim-config CFG-A \
	--metric x --json >"$T/j" 2>/dev/null
python3 -c 'import json, sys; c = json.load(open(sys.argv[1]))["configurations"]; assert c == ["CFG-A (suite-sim)", "CFG-A (suite-s*)"], c' "$T/j" 2>"$T/why" &&
	ok "two configurations of one name are named by their runs too" || no "unique configuration names" "$T/why"
"$CS" correlate --suite --db "$DB" --hw-job hw0 --sim suite-sim --metric x --metric x >"$T/out" 2>&1
[ $? -eq 1 ] && grep -q 'the statistic x is given twice' "$T/out" && ok "a statistic given twice is refused, named" || no "duplicate statistic" "$T/out"

# History: two saves, listed, shown, drawn, one deleted.
"$CS" correlate --suite --db "$DB" --hw-job hw0 --sim suite-sim --sim-config CFG-A --metric nosuch \
	--hw-metric gpc__cycles_elapsed.avg --sim-metric gpu_tot_sim_cycle --save --label 'commit a1' >/dev/null 2>"$T/s1"
"$CS" correlate --suite --db "$DB" --hw-job hw0 --sim suite-sim --sim-config CFG-B \
	--hw-metric gpc__cycles_elapsed.avg --sim-metric gpu_tot_sim_cycle --save --label "it's b2" >/dev/null 2>"$T/s2"
"$CS" correlate --suite --db "$DB" --hw-job hw0 --sim suite-sim --sim-config CFG-B \
	--hw-metric gpc__cycles_elapsed.avg --sim-metric gpu_tot_sim_cycle --json >"$T/b.json" 2>/dev/null
"$CS" correlations --db "$DB" --json >"$T/list.json" 2>&1
"$CS" correlations show 2 --db "$DB" >"$T/show.json" 2>&1
python3 - "$T/list.json" "$T/show.json" "$T/b.json" "$T/s1" "$T/s2" >"$T/why" 2>&1 <<'PY' && ok "--save keeps each answer with its label and command; the list's figures are the answer's; show prints it whole" || no "saved correlations" "$T/why"
import json, sys
lst = json.load(open(sys.argv[1])); show = json.load(open(sys.argv[2])); b = json.load(open(sys.argv[3]))
assert open(sys.argv[4]).read().startswith("saved correlation 1: commit a1"), open(sys.argv[4]).read()
assert "saved correlation 2: it's b2" in open(sys.argv[5]).read()
assert [x["label"] for x in lst] == ["commit a1", "it's b2"], lst
assert "--label 'it'\\''s b2'" in lst[1]["command"], lst[1]["command"]
s1 = lst[0]["summary"]
assert [(x["statistic"], x["configuration"]) for x in s1] == [("nosuch", "CFG-A"), ("gpc__cycles_elapsed.avg / gpu_tot_sim_cycle", "CFG-A")], s1
assert s1[0]["pairs"] == 0 and s1[1]["pairs"] == 15, s1  # no map: three applications
want = b["statistics"][0]["configurations"][0]
got = lst[1]["summary"][0]
for k in ("pairs", "pearson", "spearman", "mape_pct", "mean_error_pct", "within_10pct", "aggregate_error_pct"):
    assert got[k] == want[k] or abs(got[k] - want[k]) <= 1e-13 * abs(want[k]), (k, got[k], want[k])
assert show == b, "show differs from the answer"
PY
"$CS" correlations trend --db "$DB" -o "$T/trend.svg" >/dev/null 2>&1
python3 - "$T/trend.svg" >"$T/why" 2>&1 <<'PY' && ok "correlations trend: a panel per statistic, each saved correlation named under the axis, points named" || no "trend figure" "$T/why"
import sys, xml.etree.ElementTree as ET
ns = {"s": "http://www.w3.org/2000/svg"}
root = ET.parse(sys.argv[1]).getroot()
assert len(root.findall(".//s:g[@class='panel']", ns)) == 2
text = " ".join(t.text or "" for t in root.iter("{http://www.w3.org/2000/svg}text"))
assert "#1 commit a1" in text and "#2 it's b2" in text, text
titles = [t.text for t in root.iter("{http://www.w3.org/2000/svg}title")]
assert any(t.startswith("#2 it's b2: CFG-B, gpc__cycles_elapsed.avg / gpu_tot_sim_cycle: MAPE") for t in titles), titles
PY
"$CS" correlations delete 1 --db "$DB" >"$T/out" 2>&1 && "$CS" correlations --db "$DB" >"$T/list.txt" 2>&1 &&
	[ "$(grep -c "it's b2" "$T/list.txt")" = 1 ] && ! grep -q 'commit a1' "$T/list.txt" &&
	ok "correlations delete 1 removes it; the list has the other" || no "delete" "$T/list.txt"
"$CS" correlations show 9 --db "$DB" >"$T/out" 2>&1
[ $? -eq 1 ] && grep -q 'no saved correlation 9' "$T/out" && ok "showing one that is not there names it" || no "show missing" "$T/out"
# A file older than v7, read-only: none saved, nothing written.
cp tests/fixtures/store/v3.db "$T/old.db" && chmod 0444 "$T/old.db"
"$CS" correlations --db "$T/old.db" --json >"$T/out" 2>&1 && [ "$(cat "$T/out")" = "[]" ] &&
	ok "a read-only v3 file lists no saved correlations" || no "old file" "$T/out"

# The same over HTTP: parameters repeat as the options do.
"$CS" serve --db "$DB" --socket "$T/s.sock" --listen 127.0.0.1:0 --log "$T/log" 2>"$T/stderr" &
DPID=$!
i=0
while [ $i -lt 2400 ] && ! grep -q 'http://' "$T/stderr" 2>/dev/null; do sleep 0.05; i=$((i + 1)); done
PORT=$(sed -n 's/^cyclescope serve:.*http:\/\/127\.0\.0\.1:\([0-9]*\)\/.*/\1/p' "$T/stderr" | head -n 1)
U="http://127.0.0.1:$PORT/api/v1/correlate"
# shellcheck disable=SC2086
"$CS" correlate --suite --db "$DB" --hw job:hw0 --hw job:hw1 --sim suite-sim --sim-config CFG-A \
	--sim-config CFG-B $STATS --app-map "$S/app-map.txt" --csv >"$T/cli.csv" 2>"$T/err"
code=$(curl -sS --noproxy '*' -o "$T/body" -w '%{http_code}' --get "$U" -d suite=1 -d format=csv \
	-d hw=job:hw0 -d hw=job:hw1 -d sim=suite-sim -d sim_config=CFG-A -d sim_config=CFG-B \
	-d hw_metric=gpc__cycles_elapsed.avg -d sim_metric=gpu_tot_sim_cycle \
	-d hw_metric=smsp__inst_executed.sum -d sim_metric=gpgpu_n_tot_w_icount \
	-d hw_metric=lts__t_sectors_srcunit_tex_op_read.sum \
	--data-urlencode 'sim_metric=L2_cache_stats_breakdown[GLOBAL_ACC_R][TOTAL_ACCESS]' \
	--data-urlencode "app_map=$(cat "$S/app-map.txt")")
[ "$code" = 200 ] && cmp -s "$T/body" "$T/cli.csv" && ok "GET /api/v1/correlate?suite=1 answers what correlate --suite --csv prints" || no "suite over HTTP ($code)" "$T/body"
code=$(curl -sS --noproxy '*' -o "$T/body" -w '%{http_code} %{content_type}' --get "http://127.0.0.1:$PORT/report" -d suite=1 \
	-d hw=job:hw0 -d sim=suite-sim -d sim_config=CFG-A -d hw_metric=gpu__time_duration.sum -d sim_metric=gpu_tot_sim_cycle)
"$CS" report --suite --db "$DB" --hw job:hw0 --sim suite-sim --sim-config CFG-A --hw-metric gpu__time_duration.sum \
	--sim-metric gpu_tot_sim_cycle -o "$T/r2.html" 2>/dev/null
[ "$code" = "200 text/html; charset=utf-8" ] && cmp -s "$T/body" "$T/r2.html" && ok "GET /report?suite=1 serves the page report --suite writes" || no "suite report over HTTP ($code)" "$T/body"
code=$(curl -sS --noproxy '*' -o "$T/body" -w '%{http_code}' --get "$U" -d suite=1 -d hw=job:hw0 -d sim=nosuch -d metric=x)
[ "$code" = 404 ] && grep -q "no run 'nosuch'" "$T/body" && ok "a suite naming a run that is not there is a 404 naming it" || no "suite 404 ($code)" "$T/body"
code=$(curl -sS --noproxy '*' -o "$T/body" -w '%{http_code}' "http://127.0.0.1:$PORT/api/v1/correlations")
"$CS" correlations --db "$DB" --json >"$T/cli.json" 2>&1
[ "$code" = 200 ] && cmp -s "$T/body" "$T/cli.json" && ok "GET /api/v1/correlations is 'correlations --json'" || no "correlations over HTTP ($code)" "$T/body"
code=$(curl -sS --noproxy '*' -o "$T/body" -w '%{http_code}' "http://127.0.0.1:$PORT/api/v1/correlations/2")
c2=$(curl -sS --noproxy '*' -o "$T/body2" -w '%{http_code}' "http://127.0.0.1:$PORT/api/v1/correlations/trend.svg")
c3=$(curl -sS --noproxy '*' -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/api/v1/correlations/1")
[ "$code" = 200 ] && cmp -s "$T/body" "$T/show.json" && [ "$c2" = 200 ] && grep -q '<svg' "$T/body2" && [ "$c3" = 404 ] &&
	ok "GET /api/v1/correlations/2 is its answer, /trend.svg the figure, a deleted one a 404" || no "correlations/ID over HTTP ($code $c2 $c3)" "$T/body"
kill "$DPID"; wait "$DPID" 2>/dev/null; DPID=
exit $fails
