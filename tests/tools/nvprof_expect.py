"""What importing an nvprof CSV must store, worked out from the file alone
with python's csv module and decimal arithmetic:
  python3 nvprof_expect.py trace FILE    the ranges: kind,name,t0,t1,device,stream,correlation_id,bytes
  python3 nvprof_expect.py samples FILE  what `cyclescope export` prints (metrics or summary reports)
Times in ns and sizes in bytes through the units row under the header;
rates in GB/s; "Low (2)" is 2; each kernel or name one sample, end to end
(a kernel's metrics 1 us, a summary row its total time)."""
import csv
import re
import sys
from decimal import Decimal

mode, path = sys.argv[1], sys.argv[2]
lines = [l for l in open(path).read().splitlines() if l and not l.startswith("==")]
rows = list(csv.reader(lines))
head = next(i for i, r in enumerate(rows) if r[:2] in (["Start", "Duration"], ["Device", "Kernel"], ["Type", "Time(%)"]))
hdr = rows[head]
UNITS = {"s": Decimal(10) ** 9, "ms": Decimal(10) ** 6, "us": Decimal(1000), "ns": Decimal(1),
         "B": 1, "KB": 1024, "MB": 1024 ** 2, "GB": 1024 ** 3}
units = rows[head + 1] if hdr[0] != "Device" else [""] * len(hdr)
data = [r for r in rows[head + (1 if hdr[0] == "Device" else 2):] if len(r) == len(hdr)]


def show(v):
    if v is None:
        return ""
    v = float(v)
    return str(int(v)) if v == int(v) else repr(v)


if mode == "trace":
    c = {h: i for i, h in enumerate(hdr)}
    for r in data:
        t0 = Decimal(r[c["Start"]]) * UNITS[units[c["Start"]]]
        t1 = int(t0 + Decimal(r[c["Duration"]]) * UNITS[units[c["Duration"]]])
        name = r[c["Name"]]
        kind = "memcpy" if name.startswith("[CUDA memcpy") else "memset" if name.startswith("[CUDA memset") else "kernel"
        size = r[c["Size"]]
        b = str(int(Decimal(size) * UNITS[units[c["Size"]]])) if size else ""
        dev = re.search(r"\((\d+)\)$", r[c["Device"]]).group(1)
        print(",".join([kind, name.replace(",", ";"), str(int(t0)), str(t1), dev, r[c["Stream"]], r[c["Correlation_ID"]], b]))
    sys.exit(0)

items, names = {}, []


def put(key, metric, v):
    items.setdefault(key, {})[metric] = v
    if metric not in names:
        names.append(metric)


if hdr[0] == "Device":
    RATES = {"B/s": Decimal("1e-9"), "KB/s": Decimal("1e-6"), "MB/s": Decimal("1e-3"), "GB/s": 1}

    def val(s):
        m = re.match(r"^[A-Za-z]+ \((\d+)\)$", s)
        if m:
            return Decimal(m.group(1))
        m = re.match(r"^([-0-9.]+)(%|[KMGT]?B/s)?$", s)
        return Decimal(m.group(1)) * (RATES[m.group(2)] if m.group(2) in RATES else 1)

    spread = {r[3] for r in data if val(r[5]) != val(r[6])}
    for r in data:
        key = (r[0], r[1])
        put(key, r[3], val(r[7]))
        if r[3] in spread:
            put(key, r[3] + ".min", val(r[5]))
            put(key, r[3] + ".max", val(r[6]))
        put(key, "invocations", Decimal(r[2]))
    dur = {k: 1000 for k in items}
else:
    what = ["time_percent", "total_time", "calls", "avg_time", "min_time", "max_time"]
    for r in data:
        key = (r[0], r[7])
        for i, w in enumerate(what):
            u = units[i + 1]
            put(key, w, Decimal(r[i + 1]) * (UNITS[u] if u in UNITS else 1))
    dur = {k: int(v["total_time"]) for k, v in items.items()}
print(",".join(["t0", "t1"] + names))
at = 0
for k, v in items.items():
    print(",".join([str(at), str(at + dur[k])] + [show(v.get(n)) for n in names]))
    at += dur[k]
