#!/usr/bin/env python3
"""Writes the synthetic NCCL/GEMM overlap run of the demo (docs/examples/
nccl-gemm-phases.csv, its ranges in nccl-gemm-phases.ranges.csv): not a
measurement, a constructed H100-like profile with an isolated GEMM, an
isolated AllGather, the two overlapped and the GEMM's tail after the
collective ends, sampled every 10 us, with a per-sample cycle counter
(gpc__cycles_elapsed.max at ~1755 MHz).

usage: mkphases.py OUT.csv OUT.ranges.csv
Deterministic (a fixed LCG), so the committed files can be regenerated.
"""
import sys

US = 1000  # ns
SAMPLE = 10 * US
END = 18000 * US
GEMM1 = (1000 * US, 5000 * US)
AG = [(5503 * US, 10000 * US), (9500 * US, 14007 * US)]  # two chunks, overlapping each other
GEMM2 = (9000 * US, 17002 * US)
AG_ALL = (AG[0][0], AG[1][1])

seed = 12345


def rnd():
    global seed
    seed = (seed * 1103515245 + 12345) % (1 << 31)
    return seed / float(1 << 31)


def inside(t, iv):
    return iv[0] <= t < iv[1]


def rates(t):
    """Per-ns rates of each metric at time t."""
    g1, g2, ag = inside(t, GEMM1), inside(t, GEMM2), inside(t, AG_ALL)
    sm = lts = dram = nvl = 0.0
    if g1:
        sm, lts, dram = 400.0, 100.0, 2200.0
    if g2 and ag:
        sm, lts, dram = 320.0, 95.0, 2000.0
    elif g2:  # the tail: the GEMM's backlog on the SMs the collective held
        sm, lts, dram = 240.0, 70.0, 1500.0
    if ag:
        nvl = 350.0
        lts += 30.0
    return dict(sm=sm + 0.3, lts=lts + 0.02, dram=dram + 0.2, nvl=nvl)


def main():
    out, rout = sys.argv[1:3]
    rows = ["t0,t1,gpc__cycles_elapsed.max,sm__inst_executed.sum,lts__t_sectors.sum,dram__bytes_read.sum,nvlrx__bytes.sum"]
    for t0 in range(0, END, SAMPLE):
        acc = dict(sm=0.0, lts=0.0, dram=0.0, nvl=0.0)
        for t in range(t0, t0 + SAMPLE, US):  # integrate the rates per microsecond
            r = rates(t)
            for k in acc:
                acc[k] += r[k] * US
        noise = lambda: 1 + 0.02 * (rnd() - 0.5)
        cyc = 17550 + int(6 * (rnd() - 0.5))
        rows.append("%d,%d,%d,%d,%d,%d,%d" % (t0, t0 + SAMPLE, cyc, acc["sm"] * noise(), acc["lts"] * noise(),
                                              acc["dram"] * noise(), acc["nvl"] * noise()))
    with open(out, "w") as f:
        f.write("\n".join(rows) + "\n")
    gemm = "sm90_xmma_gemm_f16f16_f16f32_f32_tn_n_tilesize128x256x64_cublas"
    ranges = ["kind,name,t0,t1,device,stream,correlation_id",
              "nvtx,step 1,%d,%d,0,," % (500 * US, 17500 * US),
              "api,cudaLaunchKernel,%d,%d,0,,11" % (GEMM1[0] - 6 * US, GEMM1[0] - 2 * US),
              "kernel,%s,%d,%d,0,7,11" % (gemm, GEMM1[0], GEMM1[1]),
              "api,cudaLaunchKernel,%d,%d,0,,12" % (AG[0][0] - 6 * US, AG[0][0] - 2 * US),
              "kernel,ncclDevKernel_AllGather_RING_LL,%d,%d,0,13,12" % AG[0],
              "api,cudaLaunchKernel,%d,%d,0,,13" % (GEMM2[0] - 6 * US, GEMM2[0] - 2 * US),
              "kernel,%s,%d,%d,0,7,13" % (gemm, GEMM2[0], GEMM2[1]),
              "api,cudaLaunchKernel,%d,%d,0,,14" % (AG[1][0] - 6 * US, AG[1][0] - 2 * US),
              "kernel,ncclDevKernel_AllGather_RING_LL,%d,%d,0,14,14" % AG[1]]
    with open(rout, "w") as f:
        f.write("\n".join(ranges) + "\n")


main()
