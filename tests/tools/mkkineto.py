#!/usr/bin/env python3
"""Writes one PyTorch-profiler (Kineto) trace per rank of a made-up data-
parallel job, in the shape torch.profiler writes: schemaVersion,
deviceProperties, distributedInfo, traceEvents (cpu_op, cuda_runtime,
kernel with grid/block and correlation, ac2g flows, user_annotation,
gpu_memcpy), and baseTimeNanoseconds last, with ts and dur as decimal
microseconds relative to it.

Each step: a GEMM on stream 7, then an AllReduce on stream 21 that every
rank starts when it gets there (one rank, the straggler, late) and all
finish together; every third step also an AllGather, named the way older
NCCL versions name kernels (ncclKernel_...). Each rank's clock is offset
by --skew-us * rank (hosts' clocks differ).

usage: mkkineto.py OUTDIR [--ranks N] [--steps N] [--gzip] [--skew-us F]
"""
import argparse
import gzip
import json
import os
import random

ap = argparse.ArgumentParser()
ap.add_argument("out")
ap.add_argument("--ranks", type=int, default=4)
ap.add_argument("--steps", type=int, default=6)
ap.add_argument("--gzip", action="store_true")
ap.add_argument("--skew-us", type=float, default=0.0)
ap.add_argument("--seed", type=int, default=7)
ap.add_argument("--compact", action="store_true", help="no CPU ops or flows (bench)")
o = ap.parse_args()
rnd = random.Random(o.seed)
os.makedirs(o.out, exist_ok=True)

GEMM = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas"
AR = "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)"
AG = "ncclKernel_AllGather_RING_LL_Sum_int8_t(ncclWorkElem)"
BASE = 1733400000123456789

# Per step: when each rank arrives at the collective (us from the step's
# start), chosen once for all ranks so that the collective ends together.
plan = []
t = 100.0
for step in range(o.steps):
    gemm = 800.0 + rnd.randrange(0, 200)
    arrive = [gemm * (0.6 + 0.05 * rnd.random()) for _ in range(o.ranks)]
    late = step % o.ranks if o.ranks > 1 else 0
    if step % 2 == 0:
        late = o.ranks - 1  # the same rank is most often last
    arrive[late] += 150.0 + rnd.randrange(0, 100)
    xfer = 300.0 + rnd.randrange(0, 50)
    plan.append((t, gemm, arrive, late, xfer, step % 3 == 2))
    t += max(gemm, max(arrive) + xfer) + 200.0 + (400.0 if step % 3 == 2 else 0)


def us(v):
    return round(v, 3)


for rank in range(o.ranks):
    off = o.skew_us * rank
    ev = []
    corr = 1000
    pid = 40000 + rank
    for step, (t0, gemm, arrive, late, xfer, ag) in enumerate(plan):
        s0 = t0 + off
        ev.append({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d" % step,
                   "pid": pid, "tid": pid, "ts": us(s0 - 50), "dur": us(gemm + 900)})
        for name, stream, k0, k1, extra in (
            (GEMM, 7, s0, s0 + gemm, {}),
            (AR, 21, s0 + arrive[rank], t0 + max(arrive) + xfer + off,
             {"Collective name": "allreduce", "Seq": step}),
        ):
            corr += 1
            launch = k0 - 20.0
            if not o.compact:
                ev.append({"ph": "X", "cat": "cpu_op", "name": "aten::mm" if stream == 7 else "c10d::allreduce_",
                           "pid": pid, "tid": pid, "ts": us(launch - 5), "dur": us(9.5),
                           "args": {"External id": corr}})
            ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": pid, "tid": pid,
                       "ts": us(launch), "dur": us(4.25), "args": {"External id": corr, "cbid": 211,
                                                                   "correlation": corr}})
            args = {"External id": corr, "queued": 0, "device": rank, "context": 1, "stream": stream,
                    "correlation": corr, "registers per thread": 128, "shared memory": 0,
                    "grid": [132, 1, 1] if stream == 7 else [2, 1, 1],
                    "block": [384, 1, 1] if stream == 7 else [640, 1, 1]}
            args.update(extra)
            ev.append({"ph": "X", "cat": "kernel", "name": name, "pid": rank, "tid": stream,
                       "ts": us(k0), "dur": us(k1 - k0), "args": args})
            if not o.compact:
                ev.append({"ph": "s", "id": corr, "pid": pid, "tid": pid, "ts": us(launch), "cat": "ac2g",
                           "name": "ac2g"})
                ev.append({"ph": "f", "id": corr, "pid": rank, "tid": stream, "ts": us(k0), "cat": "ac2g",
                           "name": "ac2g", "bp": "e"})
        if ag:
            end = t0 + max(max(arrive) + xfer, gemm)
            g0 = end + 100.0 + (30.0 if rank == 0 else 0.0) + off
            g1 = end + 100.0 + 30.0 + 250.0 + off
            corr += 1
            ev.append({"ph": "X", "cat": "kernel", "name": AG, "pid": rank, "tid": 21, "ts": us(g0),
                       "dur": us(g1 - g0), "args": {"device": rank, "stream": 21, "correlation": corr,
                                                     "grid": [1, 1, 1], "block": [512, 1, 1]}})
        if step == 0 and not o.compact:
            ev.append({"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD (Pageable -> Device)",
                       "pid": rank, "tid": 7, "ts": us(s0 - 40), "dur": us(12.5),
                       "args": {"device": rank, "context": 1, "stream": 7, "correlation": 999,
                                "bytes": 1048576, "memory bandwidth (GB/s)": 83.9}})
    ev.append({"ph": "M", "name": "process_name", "pid": rank, "tid": 0, "args": {"name": "python"}})
    doc = {
        "schemaVersion": 1,
        "deviceProperties": [{"id": d, "name": "NVIDIA H100 80GB HBM3", "totalGlobalMem": 85045231616,
                              "computeMajor": 9, "computeMinor": 0, "maxThreadsPerBlock": 1024,
                              "maxThreadsPerMultiprocessor": 2048, "regsPerBlock": 65536,
                              "warpSize": 32, "sharedMemPerBlock": 49152, "numSms": 132}
                             for d in range(min(o.ranks, 8))],
        "distributedInfo": {"backend": "nccl", "rank": rank, "world_size": o.ranks, "pg_count": 1,
                            "pg_config": [{"pg_name": "0", "pg_desc": "default_pg",
                                           "backend_config": "cuda:nccl", "pg_size": o.ranks,
                                           "ranks": list(range(o.ranks))}],
                            "nccl_version": "2.21.5"},
        "record_shapes": 1,
        "with_stack": 0,
        "traceEvents": ev,
        "traceName": "rank%d.pt.trace.json" % rank,
        "displayTimeUnit": "ms",
        "baseTimeNanoseconds": BASE,
    }
    name = os.path.join(o.out, "worker%d.%d.pt.trace.json" % (rank, 1700 + rank))
    # laid out as Kineto writes it: the members, then one event per line
    # block, baseTimeNanoseconds last
    head = {k: v for k, v in doc.items() if k not in ("traceEvents", "traceName", "displayTimeUnit",
                                                      "baseTimeNanoseconds")}
    text = "{\n" + "".join("  %s: %s,\n" % (json.dumps(k), json.dumps(v)) for k, v in head.items())
    text += '  "traceEvents": [\n  ' + ",\n  ".join(json.dumps(e) for e in ev) + "\n  ],\n"
    text += '  "traceName": %s,\n  "displayTimeUnit": "ms",\n  "baseTimeNanoseconds": %d\n}\n' % (
        json.dumps(doc["traceName"]), BASE)
    if o.gzip:
        with gzip.open(name + ".gz", "wt") as f:
            f.write(text)
    else:
        with open(name, "w") as f:
            f.write(text)
