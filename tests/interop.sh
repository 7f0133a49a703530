#!/bin/sh
# The hardware data users already have: Nsight Compute CSV exports
# (tests/fixtures/ncu), Nsight Systems SQLite exports (made here by
# tests/tools/mknsys.py with the documented tables), and the Perfetto /
# Chrome trace export. Expected values are computed here with python's csv
# and sqlite3 modules from the fixtures, never from cyclescope's output.
# TAP-style.
#   sh tests/interop.sh [BUILD_DIR]
B=${1:-build}
CS="$B/cyclescope"
. tests/lib.sh
DB="$T/i.db"
N=tests/fixtures/ncu
Q=tests/fixtures/accelsim-qv100

# --- ncu --csv --page raw ---
"$CS" import "$N/raw.csv" --db "$DB" --name ncu >"$T/out" 2>&1 && grep -q "looks like ncu-csv" "$T/out" &&
	ok "ncu --page raw is detected (after its ==PROF== lines) and imported" || no "ncu raw import" "$T/out"
"$CS" export ncu --db "$DB" >"$T/ncu.csv"
python3 - "$N/raw.csv" "$T/ncu.csv" >"$T/why" 2>&1 <<'PY' && ok "raw page: one sample per kernel on the cumulative gpu__time_duration axis, every metric as in the file in base units (Kbyte->byte, usecond->ns), thousands separators read, text cells absent" || no "ncu raw values" "$T/why"
import csv, math, sys
lines = open(sys.argv[1], newline="").read().split("\r\n")
rows = list(csv.reader([l for l in lines if l and not l.startswith("==")]))
head, units, data = rows[0], rows[1], rows[2:]
factor = {"Kbyte": 1e3, "usecond": 1e3, "khz": 1e3}
got = list(csv.reader(open(sys.argv[2])))
ghead, gdata = got[0], got[1:]
assert len(gdata) == len(data), (len(gdata), len(data))
t = 0
for r, g in zip(data, gdata):
    d = float(r[head.index("gpu__time_duration.sum")]) * 1e3
    assert int(g[0]) == int(t) and int(g[1]) == int(t + d), (g[:2], t, d)
    t = int(t + d)
    for k, name in enumerate(head):
        if k < 11 or name.startswith("device__attribute_"):
            assert name not in ghead, name
            continue
        cell = r[k].replace(",", "")
        try:
            want = float(cell) * factor.get(units[k], 1)
        except ValueError:
            want = None
        have = g[ghead.index(name)]
        if want is None:
            assert have == "", (name, have)
        else:
            assert math.isclose(float(have), want, rel_tol=1e-12), (name, have, want)
PY
"$CS" query --db "$DB" "SELECT name, unit FROM metrics WHERE run = 1 ORDER BY name" | tr -d '\r' | tail -n +2 | tr '\n' ' ' >"$T/units"
grep -q "dram__bytes_read.sum,byte gpu__time_duration.sum,ns launch__grid_size, launch__occupancy_limit_blocks,block lts__t_sectors_srcunit_tex_op_read.sum,sector sm__throughput.avg.pct_of_peak_sustained_elapsed,% smsp__inst_executed.sum,inst" "$T/units" &&
	ok "raw page: units recorded in the base unit" || no "ncu units" "$T/units"
python3 - "$DB" "$N/raw.csv" >"$T/why" 2>&1 <<'PY' && ok "raw page: one kernel range per kernel with its name, ID, stream and device; device attributes and the clock in the run" || no "ncu ranges/meta" "$T/why"
import csv, json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
lines = [l for l in open(sys.argv[2], newline="").read().split("\r\n") if l and not l.startswith("==")]
rows = list(csv.reader(lines))
head, data = rows[0], rows[2:]
got = db.execute("SELECT name, correlation_id, stream, device FROM ranges WHERE run = 1 AND kind = 'kernel' ORDER BY t0").fetchall()
want = [(r[head.index("Kernel Name")], int(r[0]), int(r[head.index("Stream")]), int(r[head.index("Device")])) for r in data]
assert got == want, (got, want)
clock, meta = db.execute("SELECT clock_hz, meta FROM runs WHERE id = 1").fetchone()
assert clock == 1530000 * 1e3, clock
m = json.loads(meta)
assert m["page"] == "raw" and m["device_attributes"]["display_name"] == "Tesla V100-SXM2-16GB", m
PY
grep -q "2 text cells in metric columns stored as absent (the first at line 9, launch__occupancy_limit_blocks: 'n/a')" "$T/out" &&
	ok "text cells are counted in one warning naming the first" || no "text cells warning" "$T/out"

# --- ncu --csv --page details ---
"$CS" import "$N/details.csv" --db "$DB" --name ncud >"$T/out" 2>&1 && grep -q "details page, 2 kernels" "$T/out" &&
	ok "ncu --page details is detected and imported" || no "ncu details import" "$T/out"
"$CS" export ncud --db "$DB" >"$T/ncud.csv"
python3 - "$N/details.csv" "$T/ncud.csv" >"$T/why" 2>&1 <<'PY' && ok "details page: one sample per kernel, display names with units converted (Ghz/Mhz->Hz, usecond/msecond->ns), rule rows skipped, a name in two sections its first" || no "ncu details values" "$T/why"
import csv, math, sys
rows = list(csv.reader(open(sys.argv[1], newline="")))
head, data = rows[0], rows[1:]
f = {"Ghz": 1e9, "Mhz": 1e6, "usecond": 1e3, "msecond": 1e6}
want = {}
order = []
for r in data:
    r = r + [""] * (len(head) - len(r))
    k, name, unit, val = r[0], r[12], r[13], r[14]
    if not name:
        continue
    if k not in want:
        want[k] = {}
        order.append(k)
    if name in want[k]:
        continue
    try:
        want[k][name] = float(val.replace(",", "")) * f.get(unit, 1)
    except ValueError:
        want[k][name] = None
got = list(csv.reader(open(sys.argv[2])))
gh, gd = got[0], got[1:]
assert len(gd) == len(order)
t = 0
for k, g in zip(order, gd):
    assert int(g[0]) == t, (g[0], t)
    t = int(t + want[k]["Duration"])
    for name, v in want[k].items():
        have = g[gh.index(name)]
        if v is None:
            assert have == "", (name, have)
        else:
            assert math.isclose(float(have), v, rel_tol=1e-12), (k, name, have, v)
PY

# --- kernel-level correlation: Accel-Sim stdout against ncu, Accel-Sim style ---
"$CS" import accelsim-log "$Q/stdout.log.gz" --map configs/metric-maps/accelsim-volta.map --db "$DB" --name simk >/dev/null 2>&1
"$CS" correlate --db "$DB" --hw ncu --sim simk --map configs/metric-maps/accelsim-volta.map --kernels --json >"$T/k.json" 2>"$T/k.err"
python3 - "$T/k.json" "$N/raw.csv" "$Q/stdout.log.gz" >"$T/why" 2>&1 <<'PY' && ok "correlate --kernels --map: Accel-Sim stdout vs ncu raw, kernels matched by demangled name, per-kernel pairs, r, MAPE and aggregate error as computed by hand" || no "stdout vs ncu kernel level" "$T/why" "$T/k.err"
import csv, gzip, json, math, sys
r = {p["hw_metric"]: p for p in json.load(open(sys.argv[1]))}
lines = [l for l in open(sys.argv[2], newline="").read().split("\r\n") if l and not l.startswith("==")]
rows = list(csv.reader(lines))
head, units, data = rows[0], rows[1], rows[2:]
scale = {"Kbyte": 1e3}
hw = lambda m: [float(x[head.index(m)].replace(",", "")) * scale.get(units[head.index(m)], 1) for x in data]
# the simulator side: the stdout's running totals, differenced per kernel
def stat(name):
    out, prev = [], 0.0
    for line in gzip.open(sys.argv[3], "rt"):
        s = line.strip()
        if s.startswith(name + " = "):
            v = float(s.split("=")[1]); out.append(v - prev); prev = v
    return out
pairs = {"lts__t_sectors_srcunit_tex_op_read.sum": stat("L2_cache_stats_breakdown[GLOBAL_ACC_R][TOTAL_ACCESS]"),
         "smsp__inst_executed.sum": stat("gpgpu_n_tot_w_icount"),
         "dram__bytes_read.sum": [32 * x for x in stat("total dram reads")]}
assert sorted(r) == sorted(pairs), sorted(r)
for m, sim in pairs.items():
    h = hw(m)
    p = r[m]
    assert [k["matched_by"] for k in p["per_kernel"]] == ["demangled name"] * 3, p["per_kernel"]
    assert [k["hw"] for k in p["per_kernel"]] == h and [k["sim"] for k in p["per_kernel"]] == sim, (m, p["per_kernel"])
    n = len(h); mh = sum(h) / n; ms = sum(sim) / n
    cov = sum((a - mh) * (b - ms) for a, b in zip(h, sim))
    pr = cov / math.sqrt(sum((a - mh) ** 2 for a in h) * sum((b - ms) ** 2 for b in sim))
    mape = 100 * sum(abs(b - a) / abs(a) for a, b in zip(h, sim)) / n
    agg = 100 * sum(abs(b - a) for a, b in zip(h, sim)) / sum(h)
    assert math.isclose(p["pearson"], pr, rel_tol=1e-9), (p["pearson"], pr)
    assert math.isclose(p["mape_pct"], mape, rel_tol=1e-9) and math.isclose(p["aggregate_error_pct"], agg, rel_tol=1e-9), p
    assert p["per_kernel"][0]["demangled"] == "vecAdd(float*, float*, float*, int)", p["per_kernel"][0]
PY
grep -q "pairs are not in both runs, skipped: gpc__cycles_elapsed.avg, " "$T/k.err" && [ "$(grep -c warning "$T/k.err")" -eq 1 ] &&
	ok "map pairs missing on one side are skipped in one line" || no "map skip line" "$T/k.err"

# --- ncu bad input: file:line, nothing stored ---
runs_before=$("$CS" query --db "$DB" "SELECT count(*) FROM runs" | tail -n 1 | tr -d '\r')
tr -d '\r' <"$N/raw.csv" | awk 'NR == 6 { sub(/"smsp__inst_executed.sum"$/, "\"dram__bytes_read.sum\"") } { print }' >"$T/dup.csv"
"$CS" import ncu-csv "$T/dup.csv" --db "$DB" --name bad >"$T/out" 2>&1
[ $? -eq 1 ] && grep -q "dup.csv:6: column 'dram__bytes_read.sum' appears twice (columns 15 and 21)" "$T/out" &&
	ok "duplicated columns: an error naming both" || no "duplicated columns" "$T/out"
tr -d '\r' <"$N/raw.csv" | sed '7d' >"$T/nounits.csv"
"$CS" import ncu-csv "$T/nounits.csv" --db "$DB" --name nounits >"$T/out" 2>&1 && grep -q "nounits.csv:7: no units row" "$T/out" &&
	ok "no units row: imported, with a warning naming the row" || no "no units row" "$T/out"
tr -d '\r' <"$N/raw.csv" | head -c -60 >"$T/cut.csv"
"$CS" import ncu-csv "$T/cut.csv" --db "$DB" --name cut >"$T/out" 2>&1 && grep -q "the last row (row 5) is cut short: not imported" "$T/out" &&
	[ "$("$CS" query --db "$DB" "SELECT samples FROM runs WHERE name = 'cut'" | tail -n 1 | tr -d '\r')" = 2 ] &&
	ok "a last row cut short: the kernels before it imported, the cut said" || no "cut ncu csv" "$T/out"
printf '"ID","Process ID","Process Name"\n"","",""\n' >"$T/empty.csv"
"$CS" import ncu-csv "$T/empty.csv" --db "$DB" --name bad >"$T/out" 2>&1
[ $? -eq 1 ] && grep -q "empty.csv:[0-9]*: no kernel rows" "$T/out" && ok "no kernel rows: an error" || no "empty ncu" "$T/out"
n2=$("$CS" query --db "$DB" "SELECT count(*) FROM runs WHERE name = 'bad'" | tail -n 1 | tr -d '\r')
[ "$n2" = 0 ] && ok "failed ncu imports leave nothing" || no "ncu failures left runs ($n2)"

exit $fails
