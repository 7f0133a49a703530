#!/bin/sh
# Figures and what they draw, without a browser: `cyclescope plot` (SVG
# parsed with python3's xml), expressions as series (export --expr, the
# values recomputed here with python3's csv from the raw columns), units at
# import (the CSV header's "name [unit]" and the NCU catalog's), the
# correlation figure (format=svg) and the report's inline figures. Where
# rsvg-convert is installed, the figures are rendered into
# BUILD/test-artifacts/ for a person to look at.
#   sh tests/figures.sh [BUILD_DIR]
B=${1:-build}
CS="$B/cyclescope"
. tests/lib.sh
DB="$T/f.db"
Q=tests/fixtures/accelsim-qv100
ART="$B/test-artifacts"
mkdir -p "$ART"
# the example with its units in the header, as the catalog would give them
# (sanitizer builds never load the catalog)
sed '1s/lts__t_sectors.sum,/lts__t_sectors.sum [l2_sector],/; 1s/dram__bytes_read.sum,/dram__bytes_read.sum [byte],/' \
	docs/examples/h100-l2-overlap.csv >"$T/overlap.csv"
"$CS" import csv "$T/overlap.csv" --ranges docs/examples/h100-l2-overlap.ranges.csv \
	--db "$DB" --name overlap >/dev/null 2>&1 || no "the overlap example imported"
"$CS" import accelsim-log "$Q/stdout.log.gz" --db "$DB" --name simk >/dev/null 2>&1
"$CS" import "$Q/gpgpusim_visualizer__Wed-Dec--2-10-17-51-2026.log.gz" --db "$DB" --name sim >/dev/null 2>&1

# --- units ---
printf 't0,t1,power [W],bw[GB/s],x[0],L2[GLOBAL_ACC_R][TOTAL],lts__t_sectors.sum\n0,10,1,2,3,4,5\n' >"$T/u.csv"
"$CS" import csv "$T/u.csv" --db "$DB" --name units >/dev/null 2>&1
python3 - "$DB" >"$T/units" 2>&1 <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
rows = dict(db.execute("SELECT m.name, m.unit FROM metrics m JOIN runs r ON r.id = m.run WHERE r.name = 'units'"))
want = {"power": "W", "bw": "GB/s", "x[0]": None, "L2[GLOBAL_ACC_R][TOTAL]": None}
assert all(rows.get(k, "missing") == v for k, v in want.items()), rows
print(rows.get("lts__t_sectors.sum"))
PY
[ $? -eq 0 ] && ok "a CSV header's trailing [unit] is the metric's unit; Accel-Sim's bracketed names stay names" || no "units from the header" "$T/units"
if [ -f "$B/libcyclescope_collector.so" ] && ! ldd "$CS" | grep -Eq 'libasan|libtsan'; then
	[ "$(cat "$T/units")" = "l2_sector" ] && ok "an NCU-named metric imported without a unit gets the catalog's (l2_sector)" ||
		no "the catalog's unit" "$T/units"
else
	echo "# the catalog's units are not checked: no collector library (no CUDA toolkit), or a sanitizer build"
fi
# A figure reads every part of the series, not only the first: a ramp of
# 10000 samples (value = sample number) in 8000 buckets, more than the 4096
# read at a time, reaches its last value, so the y axis has a tick at 10k
# (max computed here, 9999).
python3 -c "
print('t0,t1,ramp')
for i in range(10000): print('%d,%d,%d' % (i * 1000, i * 1000 + 1000, i))" >"$T/ramp.csv"
"$CS" import csv "$T/ramp.csv" --db "$T/ramp.db" --name ramp >/dev/null 2>&1
"$CS" plot ramp --db "$T/ramp.db" --metric ramp --buckets 8000 -o "$T/ramp.svg" 2>"$T/err"
top=$(python3 -c "import csv; print(max(int(r['ramp']) for r in csv.DictReader(open('$T/ramp.csv'))))")
[ "$top" = 9999 ] && grep -q '>10k<' "$T/ramp.svg" && ok "a figure of 8000 buckets reads them all (the axis reaches the ramp's last value, $top)" ||
	no "figure past the first 4096 buckets" "$T/err"

# --- expressions as series ---
E='lts__t_sectors.sum - lts__t_sectors_srcunit_tex.sum'
"$CS" export overlap --db "$DB" --metric lts__t_sectors.sum,lts__t_sectors_srcunit_tex.sum,sm__inst_executed.sum >"$T/raw.csv"
"$CS" export overlap --db "$DB" --expr "$E; rate(sm__inst_executed.sum)" >"$T/expr.csv"
"$CS" export overlap --db "$DB" --expr "$E" --buckets 7 >"$T/exprb.csv"
python3 - "$T/raw.csv" "$T/expr.csv" "$T/exprb.csv" "$E" >"$T/out" 2>&1 <<'PY'
import csv, sys
raw = list(csv.DictReader(open(sys.argv[1])))
ex = list(csv.reader(open(sys.argv[2])))
exb = list(csv.DictReader(open(sys.argv[3])))
e = sys.argv[4]
assert ex[0] == ["t0", "t1", e, "rate(sm__inst_executed.sum)"], ex[0]
assert len(ex) - 1 == len(raw)
for r, x in zip(raw, ex[1:]):
    d = float(r["lts__t_sectors.sum"]) - float(r["lts__t_sectors_srcunit_tex.sum"])
    assert abs(float(x[2]) - d) <= 1e-9 * max(1, abs(d)), (r, x)
    rate = float(r["sm__inst_executed.sum"]) / ((int(r["t1"]) - int(r["t0"])) * 1e-9)
    assert abs(float(x[3]) - rate) <= 1e-9 * rate, (r, x)
# 7 buckets over [first t0, last t0 + 1) (series.csv's default window):
# a sample falls in floor((t0 - from) * 7 / width)
t0 = int(raw[0]["t0"]); end = max(int(r["t0"]) for r in raw) + 1
width = end - t0
sums = [0.0] * 7; counts = [0] * 7; mins = [None] * 7
for r in raw:
    b = (int(r["t0"]) - t0) * 7 // width
    v = float(r["lts__t_sectors.sum"]) - float(r["lts__t_sectors_srcunit_tex.sum"])
    sums[b] += v; counts[b] += 1; mins[b] = v if mins[b] is None else min(mins[b], v)
assert len(exb) == 7
for b, row in enumerate(exb):
    assert int(row[e + ":count"]) == counts[b], (b, row)
    assert abs(float(row[e + ":sum"]) - sums[b]) <= 1e-9 * abs(sums[b]) + 1e-9, (b, row)
    assert float(row[e + ":min"]) == mins[b], (b, row)
print("ok")
PY
[ $? -eq 0 ] && ok "export --expr: expressions per sample and bucketed (rate() per second), as python recomputes them" || no "export --expr" "$T/out"
# with buckets, the metric columns come from the stored aggregates: the
# same bytes as without the expression
"$CS" export overlap --db "$DB" --metric lts__t_sectors.sum --buckets 7 >"$T/m7.csv"
"$CS" export overlap --db "$DB" --metric lts__t_sectors.sum --expr "$E" --buckets 7 >"$T/me7.csv"
[ "$(tr -d '\r' <"$T/me7.csv" | cut -d, -f1-7)" = "$(tr -d '\r' <"$T/m7.csv")" ] && ok "bucketed metric columns beside an expression are the plain bucketed export's" ||
	no "metric columns beside an expression" "$T/me7.csv"
# delta() starts afresh on each device: its first sample has no previous one
printf 'device,t0,t1,x\n0,0,10,5\n1,0,10,100\n0,10,20,7\n1,10,20,130\n0,20,30,12\n' >"$T/d.csv"
"$CS" import csv "$T/d.csv" --db "$DB" --name twodev >/dev/null 2>&1
"$CS" export twodev --db "$DB" --expr 'delta(x)' >"$T/dx.csv"
python3 - "$T/d.csv" "$T/dx.csv" >"$T/out" 2>&1 <<'PY'
import csv, sys
src = list(csv.DictReader(open(sys.argv[1])))
got = [(r["device"], r["t0"], r["delta(x)"]) for r in csv.DictReader(open(sys.argv[2]))]
want, last = [], {}
for d in ("0", "1"):
    prev = None
    for r in (r for r in src if r["device"] == d):
        x = float(r["x"])
        want.append((d, r["t0"], "" if prev is None else "%g" % (x - prev)))
        prev = x
assert got == want, (got, want)
print("ok")
PY
[ $? -eq 0 ] && ok "delta() in an exported expression starts afresh on each device" || no "delta per device" "$T/out"
"$CS" export overlap --db "$DB" --expr 'lts__t_sectors.sum - ' >"$T/o" 2>"$T/e"
[ $? -ne 0 ] && grep -q "column 21" "$T/e" && ok "a malformed --expr names its column" || no "bad --expr" "$T/e"

# --- cyclescope plot ---
"$CS" plot overlap --db "$DB" --metric lts__t_sectors.sum,dram__bytes_read.sum --expr "$E" --rate second \
	-o "$T/p.svg" 2>"$T/e" || no "cyclescope plot ran" "$T/e"
TEX=$(python3 -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT coalesce(unit, \x27\x27) FROM metrics m JOIN runs r ON r.id = m.run WHERE r.name = \x27overlap\x27 AND m.name = \x27lts__t_sectors_srcunit_tex.sum\x27").fetchone()[0])' "$DB")
python3 - "$T/p.svg" "$TEX" >"$T/out" 2>&1 <<'PY'
import sys, xml.etree.ElementTree as ET
ns = {"s": "http://www.w3.org/2000/svg"}
root = ET.parse(sys.argv[1]).getroot()
panels = root.findall(".//s:g[@class='panel']", ns)
series = root.findall(".//s:g[@class='series']", ns)
titles = [t.text for t in root.iter("{http://www.w3.org/2000/svg}text") if t.get("class") == "axis-title"]
caption = ["".join(t.itertext()) for t in root.iter("{http://www.w3.org/2000/svg}text") if t.get("class") == "caption"]
lanes = [g.get("data-label") for g in root.findall(".//s:g[@class='lane']", ns)]
assert len(panels) == 3 and len(series) == 3, (len(panels), len(series))
# the difference keeps its metrics' unit when both have it (the tex counter
# gets the catalog's, where the catalog is loaded), else counts per second
tex = sys.argv[2]
for want in ["lts__t_sectors.sum [l2_sector/s]", "dram__bytes_read.sum [byte/s]",
             "lts__t_sectors.sum - lts__t_sectors_srcunit_tex.sum [%s/s]" % ("l2_sector" if tex == "l2_sector" else "count"),
             "time since run start"]:
    assert want in titles, (want, titles)
assert caption and "run overlap" in caption[0] and "1000 buckets" in caption[0] and "per second" in caption[0], caption
assert set(lanes) == {"kernel s7", "kernel s13", "nvtx"}, lanes
print("ok")
PY
[ $? -eq 0 ] && ok "cyclescope plot writes an SVG with one panel per series, axis titles with units, the ranges' lanes and a caption" ||
	no "plot SVG" "$T/out"
cp "$T/p.svg" "$ART/plot-overlap.svg"
"$CS" plot simk --db "$DB" --metric gpu_sim_insn -o "$T/k.svg" 2>"$T/e"
python3 - "$T/k.svg" >"$T/out" 2>&1 <<'PY'
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
S = "{http://www.w3.org/2000/svg}"
spans = [r for r in root.iter(S + "rect") if r.get("class") == "span"]
texts = [t.text for t in root.iter(S + "text")]
assert len(spans) == 3, len(spans)
assert "vecAdd" in texts and "saxpy" in texts and "stencil" in texts, texts
cap = ["".join(t.itertext()) for t in root.iter(S + "text") if t.get("class") == "caption"][0]
assert "every sample over its own interval" in cap and "20.8k cycles" in cap, cap
print("ok")
PY
[ $? -eq 0 ] && ok "a per-kernel simulator run plots every sample over its kernel, the kernels named by their demangled short names" ||
	no "plot of per-kernel samples" "$T/out"
cp "$T/k.svg" "$ART/plot-simk.svg"
"$CS" plot overlap --db "$DB" --metric nosuch -o "$T/x.svg" 2>"$T/e"
rc=$?
[ $rc -eq 1 ] && grep -q "nosuch" "$T/e" && ok "plot of an unknown metric fails naming it" || no "plot unknown metric (rc $rc)" "$T/e"
"$CS" plot overlap --db "$DB" --rate hourly 2>"$T/e"
[ $? -eq 1 ] && grep -q "rate: sample, second or cycle" "$T/e" && ok "plot --rate takes sample, second or cycle" || no "plot --rate" "$T/e"

printf 't0,t1,gpu-util [%%]\n0,1000,50\n1000,2000,70\n' >"$T/g.csv"
"$CS" import csv "$T/g.csv" --db "$DB" --name dashed >/dev/null 2>&1
"$CS" plot dashed --db "$DB" --metric gpu-util --rate second -o "$T/g.svg" 2>"$T/e" && grep -q 'gpu-util \[%/s\]' "$T/g.svg" &&
	ok "a metric whose name is no bare word (gpu-util) plots per second" || no "rate of gpu-util" "$T/e"

# --- correlation figures and the report ---
H='L2_cache_stats_breakdown[GLOBAL_ACC_R][TOTAL_ACCESS]'
"$CS" report --db "$DB" --hw simk --sim sim --hw-metric "$H" --sim-metric 'Ltworeadmiss + Ltworeadhit' \
	--bin-cycles 2000 -o "$T/r.html" >/dev/null 2>"$T/e" || no "report ran" "$T/e"
python3 - "$T/r.html" "$ART" >"$T/out" 2>&1 <<'PY'
import re, sys, xml.etree.ElementTree as ET
html = open(sys.argv[1]).read()
svgs = re.findall(r"<svg .*?</svg>", html, re.S)
assert len(svgs) == 2, len(svgs)
assert "uPlot" not in html
S = "{http://www.w3.org/2000/svg}"
binned, scatter = (ET.fromstring(s) for s in svgs)
assert len([g for g in binned.iter(S + "g") if g.get("class") == "panel"]) == 3
assert any(t.text == "sim - hw" for t in binned.iter(S + "text"))
assert any(t.text == "sim vs hw [%]" for t in binned.iter(S + "text"))
# the scatter's points lie inside its plot area
clip = next(scatter.iter(S + "clipPath")).find(S + "rect")
x, y, w, h = (float(clip.get(k)) for k in ("x", "y", "width", "height"))
pts = [(float(c.get("cx")), float(c.get("cy"))) for g in scatter.iter(S + "g") if g.get("class") == "panel" for c in g.iter(S + "circle")]
assert len(pts) == 3 and all(x <= cx <= x + w and y <= cy <= y + h for cx, cy in pts), pts
for i, s in enumerate(svgs):
    open("%s/report-figure-%d.svg" % (sys.argv[2], i), "w").write(s)
print("ok")
PY
[ $? -eq 0 ] && ok "the report draws its figures as inline SVG: the binned pair with its difference panels (absolute and relative), the kernel scatter with every point inside its axes" ||
	no "report figures" "$T/out"
# plot --compare: the report's binned figure, byte for byte, with both runs'
# kernels in lanes and every matched pair linked in the colour of its error
# (the kernel level's own per-kernel values, correlate --kernels --json)
"$CS" plot --compare --db "$DB" --hw simk --sim sim --hw-metric "$H" --sim-metric 'Ltworeadmiss + Ltworeadhit' \
	--bin-cycles 2000 -o "$ART/plot-compare.svg" 2>"$T/e" || no "plot --compare ran" "$T/e"
"$CS" correlate --db "$DB" --hw simk --sim sim --hw-metric "$H" --sim-metric 'Ltworeadmiss + Ltworeadhit' --kernels --json >"$T/k.json"
python3 - "$ART/plot-compare.svg" "$ART/report-figure-0.svg" "$T/k.json" "$DB" >"$T/out" 2>&1 <<'PY'
import json, sqlite3, sys, xml.etree.ElementTree as ET
svg = open(sys.argv[1]).read()
assert svg.split("\n", 1)[1].strip() == open(sys.argv[2]).read().strip(), "not the report's figure"
S = "{http://www.w3.org/2000/svg}"
root = ET.fromstring(svg.split("\n", 1)[1])
lanes = {g.get("data-label"): g for g in root.iter(S + "g") if g.get("class") == "lane"}
assert set(lanes) == {"hw kernels", "matched", "sim kernels"}, lanes.keys()
# each lane's spans are the run's kernel ranges, in order
db = sqlite3.connect(sys.argv[4])
def names(run):
    return [r[0] for r in db.execute("SELECT g.name FROM ranges g JOIN runs r ON r.id = g.run WHERE r.name = ? AND g.kind = 'sim-kernel' ORDER BY g.t0", (run,))]
def spans(label):
    return [t.text for r in lanes[label].iter(S + "rect") if r.get("class") == "span" for t in r.iter(S + "title")]
assert spans("hw kernels") == names("simk") and spans("sim kernels") == names("sim"), (spans("hw kernels"), spans("sim kernels"))
k = json.load(open(sys.argv[3]))[0]["per_kernel"]
links = [l for l in root.iter(S + "line") if l.get("class") == "link"]
assert len(links) == len(k) == 3, (len(links), len(k))
for l, p in zip(links, k):
    err = 100 * (p["sim"] - p["hw"]) / abs(p["hw"])
    want = "#2ca02c" if abs(err) <= 10 else "#ff7f0e" if abs(err) <= 30 else "#d62728"
    assert l.get("stroke") == want, (l.get("stroke"), err)
    assert l.find(S + "title").text == "sim %+.1f%% of hw" % err, l.find(S + "title").text
print("ok")
PY
[ $? -eq 0 ] && ok "plot --compare writes the report's figure: both runs' kernels in lanes, each match linked in the colour of its error" ||
	no "plot --compare" "$T/out"

# --metric takes expressions where no metric has the name (export and plot
# alike); an expression's axis gets the unit its metrics give it
"$CS" export overlap --db "$DB" --metric 'lts__t_sectors.sum,lts__t_sectors.sum - lts__t_sectors_srcunit_tex.sum' >"$T/m.csv"
"$CS" export overlap --db "$DB" --metric lts__t_sectors.sum --expr 'lts__t_sectors.sum - lts__t_sectors_srcunit_tex.sum' >"$T/e.csv"
[ -s "$T/m.csv" ] && cmp -s "$T/m.csv" "$T/e.csv" && ok "export --metric takes an expression as --expr does" || no "--metric expression" "$T/m.csv"
"$CS" plot overlap --db "$DB" --metric 'rate(lts__t_sectors.sum),lts__t_sectors.sum - lts__t_sectors_srcunit_tex.sum,dram__bytes_read.sum / lts__t_sectors.sum,lts__t_sectors.sum * 2' \
	-o "$ART/plot-expr-units.svg" 2>"$T/e" || no "plot --metric expressions" "$T/e"
python3 - "$ART/plot-expr-units.svg" "$TEX" >"$T/out" 2>&1 <<'PY'
import sys, xml.etree.ElementTree as ET
S = "{http://www.w3.org/2000/svg}"
root = ET.fromstring(open(sys.argv[1]).read().split("\n", 1)[1])
titles = [t.text for t in root.iter(S + "text") if (t.get("class") or "").startswith("axis-title")]
diff = "lts__t_sectors.sum - lts__t_sectors_srcunit_tex.sum" + (" [l2_sector]" if sys.argv[2] == "l2_sector" else "")
want = ["rate(lts__t_sectors.sum) [l2_sector/s]", diff,
        "dram__bytes_read.sum / lts__t_sectors.sum [byte/l2_sector]", "lts__t_sectors.sum * 2"]
for w in want:
    assert w in titles, (w, titles)
print("ok")
PY
[ $? -eq 0 ] && ok "plot --metric takes expressions, their axes in derived units (l2_sector/s, byte/l2_sector; none for a product)" ||
	no "derived units" "$T/out"

# the overlap phases shaded behind every panel, in their colours, where
# the phases command puts them
"$CS" import csv docs/examples/nccl-gemm-phases.csv --ranges docs/examples/nccl-gemm-phases.ranges.csv \
	--db "$DB" --name ph >/dev/null 2>&1
"$CS" plot ph --db "$DB" --metric sm__inst_executed.sum,nvlrx__bytes.sum --a 'kernel:nccl*' --b 'kernel:!nccl*' \
	--rate second -o "$ART/plot-phases.svg" 2>"$T/e" || no "plot --a --b" "$T/e"
"$CS" phases ph --db "$DB" --a 'kernel:nccl*' --b 'kernel:!nccl*' --json >"$T/ph.json"
python3 - "$ART/plot-phases.svg" "$T/ph.json" >"$T/out" 2>&1 <<'PY'
import json, sys, xml.etree.ElementTree as ET
S = "{http://www.w3.org/2000/svg}"
root = ET.fromstring(open(sys.argv[1]).read().split("\n", 1)[1])
ph = json.load(open(sys.argv[2]))
colour = {"only A": "#ff7f0e", "A and B": "#d62728", "only B": "#1f77b4", "tail": "#9467bd"}
want = [colour[name] for t0, t1, name in ph["segments"] if name != "neither"]
assert "#9467bd" in want and "#d62728" in want
panels = [g for g in root.iter(S + "g") if g.get("class") == "panel"]
assert len(panels) == 2
for p in panels:
    got = [r.get("fill") for r in p.iter(S + "rect") if r.get("class") == "shade"]
    assert got == want, (got, want)
cap = [t for t in root.iter(S + "text") if t.get("class") == "caption"][0]
assert "shaded: the overlap of A = kernel:nccl* and B = kernel:!nccl*" in "".join(cap.itertext())
print("ok")
PY
[ $? -eq 0 ] && ok "plot --a --b shades the overlap phases behind every panel in their colours, as phases splits them" ||
	no "phases shaded" "$T/out"

if command -v rsvg-convert >/dev/null 2>&1; then
	for f in "$ART"/plot-*.svg "$ART"/report-figure-*.svg; do
		rsvg-convert -z 1.5 "$f" -o "${f%.svg}.png" || no "rsvg-convert rendered $f"
	done
	ok "the figures are rendered to PNG under $ART for looking at"
else
	echo "# rsvg-convert is not installed: the figures stay SVG in $ART"
fi
exit $fails
