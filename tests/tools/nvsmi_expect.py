"""What `cyclescope export` must print for an nvidia-smi query log, worked
out from the log alone: python3 nvsmi_expect.py LOG ZONE. Local timestamps
are read in ZONE (zoneinfo); GPUs come from index, else pci.bus_id, else
the order of the rows sharing a timestamp; each row lasts until its GPU's
next, the last as long as the one before; text columns are left out."""
import datetime
import re
import sys
from zoneinfo import ZoneInfo

log, zone = sys.argv[1], ZoneInfo(sys.argv[2])
lines = open(log, "rb").read().split(b"\0")[0].decode().splitlines()
header = [h.strip() for h in lines[0].split(",")]
names = [re.sub(r"\s*\[.*\]$", "", h) for h in header]
rows = [[f.strip() for f in l.split(",")] for l in lines[1:] if l.strip() and l != lines[0]]
rows = [r for r in rows if len(r) == len(header)]


def num(name, v):
    if v.startswith("[") or v in ("", "N/A"):
        return None
    if name == "pstate":
        v = v[1:]
    m = re.match(r"^([-+0-9.eE]+)\s*[A-Za-z%/]*$", v)
    return float(m.group(1)) if m else "text"


cols = [i for i, n in enumerate(names)
        if n not in ("timestamp", "index", "pci.bus_id", "uuid", "name")
        and all(num(n, r[i]) != "text" for r in rows)]


def ns(ts, fold=0):
    d = datetime.datetime.strptime(ts, "%Y/%m/%d %H:%M:%S.%f").replace(tzinfo=zone, fold=fold)
    return int(d.timestamp()) * 10**9 + d.microsecond * 1000


per = {}
bus = []
prev_t, pos = None, 0
last = {}
for r in rows:
    t = ns(r[names.index("timestamp")])
    if last and t < max(last.values()):  # the hour the clock was set back: its second pass
        t = ns(r[names.index("timestamp")], 1)
    if "index" in names:
        g = int(r[names.index("index")])
    elif "pci.bus_id" in names:
        b = r[names.index("pci.bus_id")]
        bus += [b] if b not in bus else []
        g = bus.index(b)
    else:
        pos = pos + 1 if t == prev_t else 0
        g, prev_t = pos, t
    per.setdefault(g, []).append((t, [num(names[i], r[i]) for i in cols]))
    last[g] = t


def show(v):
    return "" if v is None else str(int(v)) if v == int(v) else repr(v)


dev = ["device"] if len(per) > 1 else []  # export names the device when there are several
print(",".join(dev + ["t0", "t1"] + [names[i] for i in cols]))
for g in sorted(per):
    s = per[g]
    for k, (t, vals) in enumerate(s):
        t1 = s[k + 1][0] if k + 1 < len(s) else t + (t - s[k - 1][0] if k else 0)
        print(",".join(([str(g)] if dev else []) + [str(t), str(t1)] + [show(v) for v in vals]))
