"""What importing nsys stats output must store, from the file alone:
  python3 nsys_stats_expect.py trace FILE    CSV trace rows as ranges: kind,name,t0,t1,device,stream,corr,bytes
  python3 nsys_stats_expect.py samples FILE  what `cyclescope export` prints for a log of summaries
The column format is cut where its row of dashes says; numbers lose their
thousands separators; MB is 10^6 bytes. A summary row is one sample per
kind and name (the copy time and size reports of one operation share it),
lasting its total time, end to end in order of first sight."""
import csv
import re
import sys
from decimal import Decimal

mode, path = sys.argv[1], sys.argv[2]
lines = open(path, encoding="utf-8").read().split("\n")
SCALE = {"ns": 1, "us": 1000, "ms": 10**6, "s": 10**9, "B": 1, "MB": 10**6}


def unit(h):
    m = re.search(r"\((\w+)\)$", h)
    return m.group(1) if m else ""


def num(cell, u):
    cell = cell.replace(",", "")
    return None if cell in ("", "-") else Decimal(cell) * SCALE.get(u, 1)


if mode == "trace":
    start = next(i for i, l in enumerate(lines) if l.startswith("Start (ns),"))
    rows = list(csv.reader([l for l in lines[start:] if l]))
    h = rows[0]
    c = {re.sub(r" \(.*\)$", "", x): i for i, x in enumerate(h)}
    for r in rows[1:]:
        t0 = num(r[c["Start"]], unit(h[c["Start"]]))
        t1 = t0 + num(r[c["Duration"]], unit(h[c["Duration"]]))
        name = r[c["Name"]]
        kind = "memcpy" if name.startswith("[CUDA memcpy") else "memset" if name.startswith("[CUDA memset") else "kernel"
        b = num(r[c["Bytes"]], unit(h[c["Bytes"]]))
        dev = re.search(r"\((\d+)\)$", r[c["Device"]]).group(1)
        print(",".join([kind, name.replace(",", ";"), str(int(t0)), str(int(t1)), dev, r[c["Strm"]], r[c["CorrId"]], "" if b is None else str(int(b))]))
    sys.exit(0)

ROLE = {"Time (%)": "time_percent", "Total Time": "total_time", "Total": "total_bytes", "Instances": "count",
        "Num Calls": "count", "Count": "count", "Avg": "avg", "Med": "med", "Min": "min", "Max": "max", "StdDev": "stddev"}
items, names, report = {}, [], ""
i = 0
while i < len(lines):
    m = re.search(r"Executing '(\w+)' stats report", lines[i])
    if m:
        report = m.group(1)
    if i + 1 < len(lines) and re.fullmatch(r" [- ]+", lines[i + 1] or "x"):
        dash = lines[i + 1]
        spans = [m.start() for m in re.finditer(r"-+", dash)]
        cut = lambda l: [l[a:b].strip() for a, b in zip(spans, spans[1:] + [None])]
        head = cut(lines[i])
        j = i + 2
        while j < len(lines) and lines[j].strip():
            cells = cut(lines[j])
            name = cells[-1]
            kind = ("memcpy" if name.startswith("[CUDA memcpy") else "nvtx" if "nvtx" in report
                    else "api" if "api" in report else "kernel")
            it = items.setdefault((kind, name), {})
            for h, v in zip(head, cells):
                base = re.sub(r" \((ns|MB)\)$", "", h)
                if base not in ROLE:
                    continue
                role = ROLE[base]
                if role in ("avg", "med", "min", "max", "stddev", "total_time") or role == "total_bytes":
                    role = role if role.startswith("total") else role + ("_bytes" if unit(h) == "MB" else "_time")
                it[role] = num(v, unit(h))
                if role not in names:
                    names.append(role)
            j += 1
        i = j
    i += 1


def show(v):
    if v is None:
        return ""
    f = float(v)
    return str(int(f)) if f == int(f) else repr(f)


print(",".join(["t0", "t1"] + names))
at = 0
for v in items.values():
    d = int(v["total_time"])
    print(",".join([str(at), str(at + d)] + [show(v.get(n)) for n in names]))
    at += d
