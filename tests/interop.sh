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

# --- Nsight Systems SQLite exports ---
python3 tests/tools/mknsys.py "$T/n25.sqlite"
python3 tests/tools/mknsys.py "$T/n23.sqlite" --schema 2023 --gpus 1
python3 tests/tools/mknsys.py "$T/nomet.sqlite" --no-metrics
"$CS" import "$T/n25.sqlite" --db "$DB" --name nsys >"$T/out" 2>&1 && grep -q "looks like nsys-sqlite" "$T/out" &&
	ok "an nsys SQLite export is detected by its tables and imported" || no "nsys import" "$T/out"
python3 - "$DB" "$T/n25.sqlite" nsys >"$T/why" 2>&1 <<'PY' && ok "nsys: kernels (demangled names, device, stream, correlation id), copies with bytes and kind, memsets, runtime calls (pid/tid), NVTX ranges and marks, exactly the export's" || no "nsys ranges" "$T/why"
import sqlite3, sys
db, src, run = sqlite3.connect(sys.argv[1]), sqlite3.connect(sys.argv[2]), sys.argv[3]
S = dict(src.execute("SELECT id, value FROM StringIds"))
want = []
for s, e, d, st, c, n in src.execute("SELECT start, end, deviceId, streamId, correlationId, demangledName FROM CUPTI_ACTIVITY_KIND_KERNEL"):
    want.append(("kernel", S[n], s, e, d, st, c, None, None, None))
lab = dict(src.execute("SELECT id, label FROM ENUM_CUDA_MEMCPY_OPER"))
for s, e, d, st, c, b, k in src.execute("SELECT start, end, deviceId, streamId, correlationId, bytes, copyKind FROM CUPTI_ACTIVITY_KIND_MEMCPY"):
    want.append(("memcpy", "memcpy " + lab[k], s, e, d, st, c, None, None, b))
for s, e, d, st, c, b in src.execute("SELECT start, end, deviceId, streamId, correlationId, bytes FROM CUPTI_ACTIVITY_KIND_MEMSET"):
    want.append(("memset", "memset", s, e, d, st, c, None, None, b))
for s, e, g, c, n in src.execute("SELECT start, end, globalTid, correlationId, nameId FROM CUPTI_ACTIVITY_KIND_RUNTIME"):
    want.append(("api", S[n], s, e, None, None, c, (g >> 24) & 0xFFFFFF, g & 0xFFFFFF, None))
cols = [r[1] for r in src.execute("PRAGMA table_info(NVTX_EVENTS)")]
tid = "textId" if "textId" in cols else "NULL"
for s, e, t, text, ti, g in src.execute("SELECT start, end, eventType, text, %s, globalTid FROM NVTX_EVENTS" % tid):
    if t not in (34, 59, 60):
        continue
    want.append(("nvtx", text if text is not None else S[ti], s, s if t == 34 else e, None, None, None,
                 (g >> 24) & 0xFFFFFF, g & 0xFFFFFF, None))
got = db.execute("SELECT r.kind, r.name, r.t0, r.t1, r.device, r.stream, r.correlation_id, r.pid, r.tid, r.bytes FROM ranges r "
                 "JOIN runs u ON u.id = r.run WHERE u.name = ?", (run,)).fetchall()
assert sorted(got, key=repr) == sorted(want, key=repr), (sorted(got, key=repr), sorted(want, key=repr))
PY
python3 - "$DB" >"$T/why" 2>&1 <<'PY' && ok "nsys: each GPU metric's unit from its name's bracket ('[MHz]' MHz, '[Throughput %]' %)" || no "nsys units" "$T/why"
import re, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
rows = db.execute("SELECT m.name, m.unit FROM metrics m JOIN runs r ON r.id = m.run WHERE r.name = 'nsys'").fetchall()
assert rows
for name, unit in rows:
    b = re.search(r"\[([^\]]+)\]$", name)
    want = None if not b else ("%" if "%" in b.group(1) else b.group(1))
    assert unit == want, (name, unit, want)
PY
for d in 0 1; do "$CS" export nsys --db "$DB" --device $d >"$T/nsys$d.csv"; done
python3 - "$T/n25.sqlite" "$T/nsys0.csv" "$T/nsys1.csv" >"$T/why" 2>&1 <<'PY' && ok "nsys: GPU_METRICS as each GPU's series (typeId's low byte), names from TARGET_INFO_GPU_METRICS, one sample per timestamp covering the time since the previous, values as stored" || no "nsys GPU metrics" "$T/why"
import csv, sqlite3, sys
src = sqlite3.connect(sys.argv[1])
names = {(t, m): n for t, m, n in src.execute("SELECT typeId, metricId, metricName FROM TARGET_INFO_GPU_METRICS")}
for dev, path in enumerate(sys.argv[2:]):
    rows = {}
    for ts, t, m, v in src.execute("SELECT timestamp, typeId, metricId, value FROM GPU_METRICS WHERE typeId & 255 = ?", (dev,)):
        rows.setdefault(ts, {})[names[(t, m)]] = float(v)
    got = list(csv.reader(open(path)))
    if got[0][0] == "device":  # export names the device when it is not 0
        got = [r[1:] for r in got]
    head, data = got[0], got[1:]
    ts = sorted(rows)
    assert len(data) == len(ts), (len(data), len(ts))
    for i, (r, t) in enumerate(zip(data, ts)):
        start = max(0, t - (ts[1] - ts[0])) if i == 0 else ts[i - 1]
        assert int(r[0]) == start and int(r[1]) == t, (r[:2], start, t)
        for n, v in rows[t].items():
            assert float(r[head.index(n)]) == v, (n, r, v)
PY
"$CS" query --db "$DB" "SELECT idx, name, chip, sm_count, clock_hz FROM devices WHERE run = (SELECT id FROM runs WHERE name = 'nsys')" | tr -d '\r' | tail -n +2 | tr '\n' ' ' >"$T/devs"
[ "$(cat "$T/devs")" = "0,NVIDIA H100 80GB HBM3,GH100,132,1980000000 1,NVIDIA H100 80GB HBM3,GH100,132,1980000000 " ] &&
	ok "nsys: one device per GPU of TARGET_INFO_GPU (name, chip, SMs, clock)" || no "nsys devices" "$T/devs"
"$CS" import nsys-sqlite "$T/n23.sqlite" --db "$DB" --name nsys23 >"$T/out" 2>&1 && grep -q "schema 3.11.0" "$T/out" &&
	"$CS" import "$T/nomet.sqlite" --db "$DB" --name nomet >>"$T/out" 2>&1 &&
	[ "$("$CS" query --db "$DB" "SELECT count(*) FROM ranges WHERE run = (SELECT id FROM runs WHERE name = 'nomet') AND kind = 'kernel'" | tail -n 1 | tr -d '\r')" = 6 ] &&
	ok "nsys: an older schema (no rawTimestamp, no textId) and an export without GPU_METRICS import" || no "nsys variants" "$T/out"

# --- nsys bad input ---
python3 tests/tools/mknsys.py "$T/badm.sqlite" --bad-metric
"$CS" import "$T/badm.sqlite" --db "$DB" --name bad >"$T/out" 2>&1
[ $? -eq 1 ] && grep -q "badm.sqlite: GPU_METRICS row [0-9]*: metricId 17 of typeId 256 is not in TARGET_INFO_GPU_METRICS" "$T/out" &&
	ok "nsys: a GPU_METRICS row with an unknown metric id is named, nothing stored" || no "nsys unknown metric" "$T/out"
python3 -c "import sqlite3, sys; d = sqlite3.connect(sys.argv[1]); d.execute('CREATE TABLE t (a)'); d.commit()" "$T/other.sqlite"
"$CS" import "$T/other.sqlite" --db "$DB" --name bad >"$T/out" 2>&1
[ $? -eq 1 ] && grep -q "an Nsight Systems export (nsys-sqlite) has tables this one lacks" "$T/out" &&
	"$CS" import nsys-sqlite "$T/other.sqlite" --db "$DB" --name bad >"$T/out" 2>&1; 
[ $? -eq 1 ] && grep -q "other.sqlite: not an Nsight Systems SQLite export: no StringIds table; none of its tables" "$T/out" &&
	ok "an SQLite file that is not an nsys export: which tables are missing" || no "not nsys" "$T/out"
python3 tests/tools/mknsys.py "$T/nok.sqlite" --no-kernels --no-metrics
"$CS" import "$T/nok.sqlite" --db "$DB" --name nok >"$T/out" 2>&1 && grep -q "no kernels (CUPTI_ACTIVITY_KIND_KERNEL is empty)" "$T/out" &&
	ok "nsys: an export with zero kernels imports its copies and NVTX, and says it has no kernels" || no "nsys zero kernels" "$T/out"
[ "$("$CS" query --db "$DB" "SELECT count(*) FROM runs WHERE name = 'bad'" | tail -n 1 | tr -d '\r')" = 0 ] &&
	ok "failed nsys imports leave nothing" || no "nsys failures left runs"

# --- Perfetto / Chrome trace export ---
"$CS" import csv docs/examples/nccl-gemm-phases.csv --ranges docs/examples/nccl-gemm-phases.ranges.csv \
	--db "$DB" --name phases >/dev/null 2>&1
"$CS" export phases --db "$DB" --format perfetto -o "$T/phases.json" >"$T/out" 2>&1 &&
	"$CS" export nsys --db "$DB" --format perfetto --buckets 10 -o "$T/nsys.json" >>"$T/out" 2>&1 &&
	"$CS" export nsys --db "$DB" --format perfetto --raw >"$T/nsys-raw.json" 2>>"$T/out" ||
	no "export --format perfetto" "$T/out"
python3 - "$T/phases.json" "$T/nsys.json" "$T/nsys-raw.json" "$DB" >"$T/why" 2>&1 <<'PY' && ok "perfetto export: valid Trace Event JSON (the documented fields of M, X, i, C and flow events), one track per range kind and stream/thread, one counter per metric and device named with its unit and ending at zero with the samples, an arrow from each API call to what it launched, times in microseconds" || no "perfetto schema" "$T/why"
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[4])
def check(path, run):
    t = json.load(open(path))
    assert t["displayTimeUnit"] == "ns" and isinstance(t["traceEvents"], list), t.keys()
    names, tracks, counters, used, flows, last = {}, {}, set(), set(), {}, {}
    for e in t["traceEvents"]:
        assert isinstance(e["name"], str) and e["ph"] in ("M", "X", "i", "C", "s", "f"), e
        assert isinstance(e["pid"], int), e
        if e["ph"] in ("s", "f"):  # an API call's arrow to what it launched
            flows.setdefault(e["id"], []).append(e)
            continue
        if e["ph"] == "M":
            assert e["name"] in ("process_name", "process_sort_index", "thread_name"), e
            if e["name"] == "thread_name":
                tracks[(e["pid"], e["tid"])] = e["args"]["name"]
            continue
        assert isinstance(e["ts"], (int, float)) and e["ts"] >= 0, e
        if e["ph"] == "X":
            assert isinstance(e["dur"], (int, float)) and e["dur"] > 0 and isinstance(e["tid"], int), e
            used.add((e["pid"], e["tid"], e["cat"]))
        elif e["ph"] == "i":
            assert e["s"] in ("t", "p", "g"), e
            used.add((e["pid"], e["tid"], e["cat"]))
        else:
            assert isinstance(e["args"]["value"], (int, float)), e
            counters.add((e["pid"], e["name"]))
            last[(e["pid"], e["name"])] = e
    for pid, tid, cat in used:
        assert (pid, tid) in tracks, (pid, tid)
    rid = db.execute("SELECT id FROM runs WHERE name = ?", (run,)).fetchone()[0]
    kinds = {k for (k,) in db.execute("SELECT DISTINCT kind FROM ranges WHERE run = ?", (rid,))}
    assert {c for _, _, c in used} == kinds, (kinds, used)
    # one track per kind and stream (device ranges) or thread (host ranges)
    want_tracks = {r for r in db.execute("SELECT DISTINCT kind, coalesce(device, -1), CASE WHEN kind IN "
                   "('kernel','memcpy','memset','graph','sim-kernel') THEN stream ELSE tid END FROM ranges WHERE run = ?", (rid,))}
    assert len({(p, t) for p, t, _ in used}) == len({(k if k not in ("memcpy", "memset") else "copies", d, s) for k, d, s in want_tracks}), (used, want_tracks)
    # a counter per metric and device, named with its unit, ending at zero
    # where the samples end
    metrics = [m + (" [%s]" % u if u else "") for (m, u) in db.execute("SELECT name, coalesce(unit, '') FROM metrics WHERE run = ?", (rid,))]
    devs = [d for (d,) in db.execute("SELECT DISTINCT device FROM timelines WHERE run = ?", (rid,))] if metrics else []
    assert counters == {(d + 1, m) for d in devs for m in metrics}, (sorted(counters)[:5], metrics, devs)
    end = db.execute("SELECT max(t_max) FROM runs WHERE id = ?", (rid,)).fetchone()[0]
    for k, e in last.items():
        assert e["args"]["value"] == 0 and e["ts"] <= end / 1000 + 1e-6, (k, e, end)
    # an arrow per API call whose correlation id a kernel or copy carries,
    # from the call's start to the kernel's
    want = {}
    for cid, kind, t0 in db.execute("SELECT correlation_id, kind, t0 FROM ranges WHERE run = ? AND correlation_id IS NOT NULL"
                                    " ORDER BY t0, id", (rid,)):
        want.setdefault(cid, {}).setdefault(kind, t0)
    arrows = {c: (v["api"], min(v.get(k, 1 << 62) for k in ("kernel", "memcpy", "memset", "graph")))
              for c, v in want.items() if "api" in v and any(k in v for k in ("kernel", "memcpy", "memset", "graph"))}
    assert set(flows) == set(arrows), (sorted(flows)[:5], sorted(arrows)[:5])
    for c, (a, k) in arrows.items():
        s, f = sorted(flows[c], key=lambda e: e["ph"] != "s")
        assert s["ph"] == "s" and f["ph"] == "f" and f["bp"] == "e", flows[c]
        assert abs(s["ts"] - a / 1000) < 1e-3 and abs(f["ts"] - k / 1000) < 1e-3, (c, s, f, a, k)
    return t
t = check(sys.argv[1], "phases")
x = [e for e in t["traceEvents"] if e["ph"] == "X" and e["name"].startswith("ncclDevKernel")][0]
assert x["ts"] == 5503.0 and x["dur"] == (10000000 - 5503000) / 1000, x  # ns -> us
check(sys.argv[2], "nsys")
raw = check(sys.argv[3], "nsys")
n = sum(1 for e in raw["traceEvents"] if e["ph"] == "C")
assert n == 80 * 4 + 2 * 4, n  # --raw: every value (2 GPUs x 40 samples x 4 metrics), and each counter's end
PY

# --- Accel-Sim's own tables ---
A=tests/fixtures/accelsim-tables
for f in get_stats hw_perf hw_power_validation; do
	"$CS" import "$A/$f.csv" --db "$DB" --name "$f" >"$T/imp.$f" 2>&1 || no "import $f" "$T/imp.$f"
	"$CS" export "$f" --db "$DB" >"$T/$f.out"
done
grep -q "looks like accelsim-stats" "$T/imp.get_stats" && grep -q "looks like accelwattch-hw" "$T/imp.hw_perf" &&
	grep -q "looks like accelwattch-hw" "$T/imp.hw_power_validation" &&
	ok "get_stats.py CSV and AccelWattch's hardware CSVs are detected as what they are" || no "tables detection" "$T/imp.get_stats" "$T/imp.hw_perf"
python3 - "$A" "$T" "$DB" >"$T/why" 2>&1 <<'PY' && ok "get_stats.py CSV: one sim-kernel per app--kernel row, one metric per statistic (its regex undone), NA absent, kernels end to end over their gpu_sim_cycle; AccelWattch CSVs: one kernel per row, every column a metric" || no "tables values" "$T/why"
import csv, re, sqlite3, sys
A, T, db = sys.argv[1], sys.argv[2], sqlite3.connect(sys.argv[3])
# get_stats: blocks of dashes, stat, header, rows
stats, cur, state = {}, None, 0
for row in csv.reader(open(A + "/get_stats.csv")):
    if not row:
        continue
    if row[0].startswith("-----"):
        state = 1
    elif state == 1:
        cur = re.sub(r"\\(.)", r"\1", row[0].split("\\s")[0]); state = 2
    elif state == 2:
        state = 3
    elif "build" not in cur:
        stats.setdefault(row[0], {})[cur] = None if row[1] == "NA" else float(row[1])
got = list(csv.reader(open(T + "/get_stats.out")))
head = got[0]
t = 0
for (label, vals), g in zip(stats.items(), got[1:]):
    d = int(vals["gpu_sim_cycle"])
    assert int(g[0]) == t and int(g[1]) == t + d, (g, t, d)
    t += d
    for k, v in vals.items():
        assert (g[head.index(k)] == "") if v is None else float(g[head.index(k)]) == v, (label, k, g)
names = [n for (n,) in db.execute("SELECT r.name FROM ranges r JOIN runs u ON u.id = r.run WHERE u.name = 'get_stats' AND r.kind = 'sim-kernel' ORDER BY r.t0")]
assert names == [l.split("--")[1] for l in stats], names
meta = db.execute("SELECT meta FROM runs WHERE name = 'get_stats'").fetchone()[0]
assert "accelsim-commit-4a8f1b2" in meta, meta
for f, first in (("hw_perf", 2), ("hw_power_validation", 1)):
    rows = list(csv.reader(open(A + "/" + f + ".csv")))
    got = list(csv.reader(open(T + "/" + f + ".out")))
    assert len(got) - 1 == len(rows) - 1
    for r, g in zip(rows[1:], got[1:]):
        for k in range(first, len(rows[0])):
            assert float(g[got[0].index(rows[0][k])]) == float(r[k]), (f, rows[0][k], g, r)
PY
printf '%s\n' '# functional simulator specification' '-gpgpu_ptx_instruction_classification 0' \
	'-gpgpu_ptx_sim_mode 0' '-gpgpu_ptx_force_max_capability 70' '-gpgpu_n_clusters 80' \
	'-gpgpu_clock_domains 1132.0:1132.0:1132.0:850.0' '-visualizer_enabled 0' >"$T/gpgpusim.config"
"$CS" import "$T/gpgpusim.config" --db "$DB" >"$T/out" 2>&1
[ $? -eq 1 ] && grep -q "is a GPGPU-Sim/Accel-Sim config file" "$T/out" && ! grep -q "accelsim-log" "$T/out" &&
	ok "a gpgpusim.config is named as what it is, never announced as accelsim-log" || no "config file" "$T/out"
sed '3d' "$A/get_stats.csv" >"$T/nohead.csv"
"$CS" import accelsim-stats "$T/nohead.csv" --db "$DB" --name bad >"$T/out" 2>&1
[ $? -eq 1 ] && grep -q "nohead.csv:3: expected the header APPS,<config>" "$T/out" && ok "get_stats CSV without its header row: file:line" || no "get_stats bad" "$T/out"

# --- the same through a running daemon's socket ---
"$CS" serve --db "$T/d.db" --socket "$T/s.sock" --listen 127.0.0.1:0 2>"$T/serve.err" &
DPID=$!
i=0
while [ $i -lt 2400 ] && ! grep -q 'http://' "$T/serve.err" 2>/dev/null; do sleep 0.05; i=$((i + 1)); done
PORT=$(sed -n 's/^cyclescope serve:.*http:\/\/127\.0\.0\.1:\([0-9]*\)\/.*/\1/p' "$T/serve.err" | head -n 1)
"$CS" import "$T/n25.sqlite" --socket "$T/s.sock" --name viansys >"$T/out" 2>&1 &&
	"$CS" import "$N/raw.csv" --socket "$T/s.sock" --name viancu >>"$T/out" 2>&1 &&
	"$CS" import "$A/get_stats.csv" --socket "$T/s.sock" --name viastats >>"$T/out" 2>&1
rc=$?
"$CS" import accelsim-log "$Q/stdout.log.gz" --socket "$T/s.sock" --name viasim >/dev/null 2>&1
sleep 0.3
curl -sS --noproxy '*' "http://127.0.0.1:$PORT/api/v1/runs/viasim/ranges.csv" >"$T/ranges.csv" 2>&1
kill "$DPID"; wait "$DPID" 2>/dev/null
python3 - "$T/ranges.csv" >"$T/why" 2>&1 <<'PY' && ok "ranges.csv's demangled column: _Z6vecAddPfS_S_i is vecAdd(float*, float*, float*, int)" || no "ranges.csv demangled" "$T/why" "$T/ranges.csv"
import csv, sys
r = list(csv.DictReader(open(sys.argv[1])))
assert [(x["name"], x["demangled"]) for x in r] == [("_Z6vecAddPfS_S_i", "vecAdd(float*, float*, float*, int)"),
    ("_Z5saxpyifPfS_", "saxpy(int, float, float*, float*)"), ("_Z7stencilPKfPfi", "stencil(float const*, float*, int)")], r
PY
got=$("$CS" query --db "$T/d.db" "SELECT group_concat(name || ':' || status || ':' || samples || ':' || (SELECT count(*) FROM ranges r WHERE r.run = runs.id), ' ') FROM runs" | tail -n 1 | tr -d '\r')
[ $rc -eq 0 ] && [ "$got" = "viansys:complete:80:19 viancu:complete:3:3 viastats:complete:3:3 viasim:complete:3:3" ] &&
	ok "nsys, ncu and get_stats imports through the daemon's socket ($got)" || { echo "$got" >>"$T/out"; no "imports through the daemon" "$T/out" "$T/serve.err"; }

exit $fails
