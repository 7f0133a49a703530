#!/usr/bin/env python3
"""What importing PyTorch profiler (Kineto) traces must store, and what
`phases --job` must answer for them, worked out from the JSON files with
python's json and decimal modules, independently of cyclescope.

  kineto_expect.py ranges FILE
      one line per range: kind|name|t0|t1|device|stream|corr|pid|tid|bytes|grid|block
      sorted, in the form the test selects from the database
  kineto_expect.py job A_PREFIX B_SUBSTR ALIGN FILE...
      JSON: per rank (by distributedInfo.rank) its A time, exposed time,
      phases, waits, times last; per instance the starts, ends, skew,
      straggler, waits and exposed time (times in ns)
"""
import decimal
import gzip
import json
import re
from fractions import Fraction
import sys

KINDS = {"kernel": "kernel", "gpu_memcpy": "memcpy", "gpu_memset": "memset", "cuda_runtime": "api",
         "cuda_driver": "api", "user_annotation": "nvtx", "gpu_user_annotation": "nvtx"}


def load(path):
    op = gzip.open if path.endswith(".gz") else open
    with op(path, "rt") as f:
        return json.load(f, parse_float=decimal.Decimal)


def ns(us):
    return int((decimal.Decimal(us) * 1000).quantize(decimal.Decimal(1), rounding=decimal.ROUND_HALF_UP))


def trailing_int(v):
    if v is None:
        return None
    if isinstance(v, int):
        return v
    m = re.search(r"(\d+)\s*$", str(v))
    return int(m.group(1)) if m else None


def ranges(doc):
    base = int(doc.get("baseTimeNanoseconds", 0))
    out = []
    for e in doc["traceEvents"]:
        ph = e.get("ph")
        if not (ph == "X" or (ph is None and "dur" in e)):
            continue
        kind = KINDS.get(str(e.get("cat", "")).lower())
        if not kind:
            continue
        a = e.get("args", {})
        t0 = base + ns(e["ts"])
        t1 = t0 + ns(e["dur"])
        stream = a.get("stream")
        if stream is None and kind in ("kernel", "memcpy", "memset"):
            stream = trailing_int(e.get("tid"))
        out.append(dict(kind=kind, name=e["name"], t0=t0, t1=t1, device=a.get("device"), stream=stream,
                        corr=a.get("correlation"), pid=trailing_int(e.get("pid")),
                        tid=trailing_int(e.get("tid")), bytes=a.get("bytes"),
                        grid=a.get("grid"), block=a.get("block")))
    return out


def fmt(v):
    if v is None:
        return ""
    if isinstance(v, list):
        return ",".join(str(x) for x in v)
    return str(v)


def union(iv):
    out = []
    for a, b in sorted(iv):
        if b <= a:
            continue
        if out and a <= out[-1][1]:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return out


def overlap_len(a, b, u):
    return sum(max(0, min(b, y) - max(a, x)) for x, y in u)


def key_of(name):
    for p in ("ncclDevKernel_", "ncclKernel_"):
        if name.startswith(p):
            return re.split(r"[_(]", name[len(p):])[0]
    return name


def median(xs):
    # exact (ints and Fractions): epoch nanoseconds do not fit a float
    xs = sorted(xs)
    n = len(xs)
    return xs[n // 2] if n % 2 else Fraction(xs[n // 2 - 1] + xs[n // 2], 2)


def rnd(x):
    # half away from zero, as llround
    x = Fraction(x)
    return int(x + Fraction(1, 2)) if x >= 0 else -int(-x + Fraction(1, 2))


def job(a_prefix, b_sub, align, files):
    ranks = {}
    for f in files:
        doc = load(f)
        rk = int(doc["distributedInfo"]["rank"])
        rs = ranges(doc)
        A = sorted((r["t0"], r["t1"], key_of(r["name"])) for r in rs
                   if r["kind"] == "kernel" and r["name"].startswith(a_prefix))
        B = [(r["t0"], r["t1"]) for r in rs if b_sub in r["name"]]
        ranks[rk] = (A, union(B), union([(x, y) for x, y, _ in A]))
    order = sorted(ranks)
    per_key = {}
    for i, rk in enumerate(order):
        for t0, t1, k in ranks[rk][0]:
            per_key.setdefault(k, [[] for _ in order])[i].append((t0, t1))
    inst = []
    for k in sorted(per_key, key=lambda k: min(per_key[k][0][0][0], 10**30) if per_key[k][0] else 0):
        lists = per_key[k]
        n = min(len(x) for x in lists)
        for idx in range(n):
            inst.append((k, idx, [lists[r][idx] for r in range(len(order))]))
    off = [0] * len(order)
    if align:
        mids = [median([e for _, e in iv]) for _, _, iv in inst]
        for r in range(len(order)):
            off[r] = rnd(median([iv[r][1] - m for (_, _, iv), m in zip(inst, mids)]))
    res_inst = []
    last = [0] * len(order)
    wait = [0] * len(order)
    exposed = [0] * len(order)
    for k, idx, iv in inst:
        starts = [iv[r][0] - off[r] for r in range(len(order))]
        ends = [iv[r][1] - off[r] for r in range(len(order))]
        strag = max(range(len(order)), key=lambda r: (starts[r], -r))
        w = [starts[strag] - s for s in starts]
        ex = [(iv[r][1] - iv[r][0]) - overlap_len(iv[r][0], iv[r][1], ranks[order[r]][1])
              for r in range(len(order))]
        last[strag] += 1
        for r in range(len(order)):
            wait[r] += w[r]
            exposed[r] += ex[r]
        res_inst.append(dict(collective=k, index=idx, start_ns=starts, end_ns=ends,
                             start_skew_ns=max(starts) - min(starts), straggler_rank=order[strag],
                             wait_ns=w, exposed_ns=ex))
    res_ranks = []
    for r, rk in enumerate(order):
        _, ub, ua = ranks[rk]
        a_time = sum(y - x for x, y in ua)
        ab = sum(overlap_len(x, y, ub) for x, y in ua)
        res_ranks.append(dict(rank=rk, a_ns=a_time, ab_ns=ab, only_a_ns=a_time - ab,
                              only_b_ns=sum(y - x for x, y in ub) - ab, exposed_ns=exposed[r],
                              wait_ns=wait[r], times_last=last[r], offset_ns=off[r]))
    return dict(ranks=res_ranks, collectives=res_inst)


if __name__ == "__main__":
    if sys.argv[1] == "ranges":
        for r in sorted(ranges(load(sys.argv[2])), key=lambda r: (r["t0"], r["kind"], r["name"])):
            print("|".join(fmt(r[k]) for k in ("kind", "name", "t0", "t1", "device", "stream", "corr",
                                                 "pid", "tid", "bytes", "grid", "block")))
    else:
        print(json.dumps(job(sys.argv[2], sys.argv[3], sys.argv[4] == "collectives", sys.argv[5:])))
