#!/usr/bin/env python3
"""Writes the seed corpus of tests/fuzz/fuzz_store.c, from the frame layouts
in docs/protocol.md (not from our code).

  mkfuzzstore.py DIR    writes the seeds into DIR
                        (tests/fuzz/corpus/fuzz_store)

A seed is records of one control byte and one frame. The control byte:
bit 0 the connection (0 or 1), bits 1-2 commit after the frame (1 whole
chunks, 2 partial chunks too), bit 3 close the connection after the frame,
bits 4-6 apply a SAMPLES frame 2^k times (seq and times moved on).
"""
import math
import os
import struct
import sys

HELLO, RUN_BEGIN, DEVICE, METRICS, SAMPLES, RANGES, RUN_END = range(1, 8)
COMPLETE, INCOMPLETE, DISCARD = 1, 2, 3


def ctl(conn=0, commit=0, close=False, repeat=0):
    return bytes([conn | commit << 1 | (8 if close else 0) | repeat << 4])


def frame(t, payload):
    return struct.pack("<IBBHI", 0x50435343, 1, t, 0, len(payload)) + payload


def s(text):
    b = text.encode()
    return struct.pack("<I", len(b)) + b


def hello(pid, host):
    return frame(HELLO, struct.pack("<I", pid) + s(host) + s("./gemm") + s("0.1.0"))


def run_begin(name, uuid="", kind=1, unit=1, meta="{}"):
    return frame(RUN_BEGIN, struct.pack("<BBHQd", kind, unit, 0, 1700000000000000000, 1.5e9)
                 + s(uuid) + s("fuzz") + s(name) + s(meta))


def device(index, name):
    return frame(DEVICE, struct.pack("<IIdd", index, 132, 1.98e9, 2.6e9)
                 + s(name) + s("GH100") + s("GPU-%d" % index))


def metrics(*ms):
    p = struct.pack("<I", len(ms))
    for mid, kind, cumulative, name, unit in ms:
        p += struct.pack("<IBBH", mid, kind, cumulative, 0) + s(name) + s(unit)
    return frame(METRICS, p)


def samples(dev, seq0, ids, t0, t1, values):
    m, n = len(ids), len(t0)
    p = struct.pack("<IIIIQ", dev, m, n, 0, seq0)
    p += struct.pack("<%dI" % m, *ids)
    p += struct.pack("<%dQ" % n, *t0) + struct.pack("<%dQ" % n, *t1)
    p += struct.pack("<%dd" % (n * m), *values)
    return frame(SAMPLES, p)


def ranges(*rs):
    p = struct.pack("<I", len(rs))
    for kind, t0, t1, dev, name in rs:
        p += struct.pack("<B3xQQqqqqqq", kind, t0, t1, dev, -1, -1, -1, -1, -1) + s(name)
    return frame(RANGES, p)


def run_end(status, n):
    return frame(RUN_END, struct.pack("<B7xQQQQ", status, 0, n, 0, 0))


def regular(n, start=1000, step=100):
    t0 = [start + i * step for i in range(n)]
    return t0, [t + step for t in t0]


def seeds():
    nan = float("nan")
    t0, t1 = regular(4)
    basic = (ctl() + hello(1234, "node-1") + ctl() + run_begin("gemm")
             + ctl() + metrics((7, 0, 0, "lts__t_sectors.sum", "sector"),
                               (9, 3, 0, "sm__warps_active.avg", ""))
             + ctl(commit=2) + samples(0, 0, [7, 9], t0, t1,
                                       [1, 0.5, 2, nan, 3, 1.25, nan, -0.0])
             + ctl(commit=1) + run_end(COMPLETE, 4))

    a0, a1 = regular(300, 5000, 10)
    b0, b1 = regular(50, 5003, 60)
    devices = (ctl() + run_begin("two devices", kind=2, unit=2)
               + ctl() + device(0, "NVIDIA H200") + ctl() + device(1, "NVIDIA H200")
               + ctl() + metrics((1, 0, 1, "inst_executed", "inst"),
                                 (2, 1, 0, "ipc", ""), (3, 2, 0, "dram_bw", "B/s"))
               + ctl() + samples(0, 10, [1, 2], a0, a1,
                                 [v for i in range(300) for v in (i * 3, i / 7)])
               + ctl(commit=2) + samples(1, 0, [3, 1], b0, b1,
                                         [v for i in range(50) for v in (1e9 + i, math.inf if i == 7 else i)])
               + ctl() + ranges((2, 5000, 6000, 0, "gemm_kernel"), (1, 4990, 5001, -1, "cudaLaunch"),
                                (7, 5000, 8000, 1, "window"))
               + ctl(commit=1) + samples(0, 310, [2], [8000, 8000, 8100], [8050, 8000, 8200],
                                         [nan, 4.5, 5.5])
               + ctl() + run_end(COMPLETE, 353))

    d0, d1 = regular(8)
    discard = (ctl() + run_begin("import", uuid="6f9619ff-8b86-d011-b42d-00c04fc964ff")
               + ctl(conn=1) + run_begin("kept")
               + ctl() + metrics((0, 0, 0, "a", ""))
               + ctl(conn=1) + metrics((5, 3, 0, "b", "W"))
               + ctl(commit=2) + samples(0, 0, [0], d0, d1, list(range(8)))
               + ctl(conn=1) + samples(2, 100, [5], d0, d1, [250.5] * 8)
               + ctl(commit=2) + run_end(DISCARD, 8)
               + ctl(conn=1, commit=2) + run_end(INCOMPLETE, 8))

    # 32 samples applied 128 times: whole chunks of 4096, then a partial
    # one, on two connections; connection 1 closes with its run open.
    c0, c1 = regular(32, 0, 1000)
    chunks = (ctl() + run_begin("chunks") + ctl(conn=1) + run_begin("cut")
              + ctl() + metrics((1, 0, 0, "x", ""), (2, 0, 1, "y", ""))
              + ctl(conn=1) + metrics((1, 0, 0, "x", ""))
              + ctl(repeat=7) + samples(0, 0, [1, 2], c0, c1,
                                        [v for i in range(32) for v in (i, nan if i % 5 else 1e300)])
              + ctl(commit=1, repeat=1) + samples(0, 4096, [2], [200000000 + i for i in range(32)],
                                                  [200000001 + i for i in range(32)], [0.25] * 32)
              + ctl(conn=1, repeat=6) + samples(3, 0, [1], c0, c1, [float(i) for i in range(32)])
              + ctl(conn=1, commit=2, close=True) + metrics((2, 0, 0, "z", ""))
              + ctl() + run_end(COMPLETE, 4096 + 64))
    return {"basic": basic, "devices": devices, "discard": discard, "chunks": chunks}


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "tests/fuzz/corpus/fuzz_store"
    os.makedirs(out, exist_ok=True)
    for name, data in seeds().items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
