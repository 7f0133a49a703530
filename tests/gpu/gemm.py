"""A bf16 GEMM loop for the GPU check (tests/gpu/oracles.sh): the shape of
the work the collector is meant for, run alone or with torch.profiler
recording at the same time, to see whether two CUPTI clients coexist.

    python3 gemm.py alone|profiler [TRACE.json]

Prints key=value lines: the device, the achieved TFLOP/s, and with the
profiler the trace's file and how many GPU kernel events it holds.
Exit status 0, 2 on a usage error, 3 when torch or CUDA is missing.
"""
import json
import sys
import time

N = 8192  # square bf16 GEMMs: 2 * N^3 flops each
WARMUP = 10
ITERS = 150


def main():
    if len(sys.argv) < 2 or sys.argv[1] not in ("alone", "profiler"):
        print(__doc__, file=sys.stderr)
        return 2
    try:
        import torch
    except ImportError as e:
        print(f"gemm: no torch: {e}", file=sys.stderr)
        return 3
    if not torch.cuda.is_available():
        print("gemm: torch sees no CUDA device", file=sys.stderr)
        return 3
    print(f"torch={torch.__version__}\ncuda={torch.version.cuda}\n"
          f"gpu={torch.cuda.get_device_name(0)}", flush=True)
    a = torch.randn(N, N, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(N, N, device="cuda", dtype=torch.bfloat16)
    c = torch.empty(N, N, device="cuda", dtype=torch.bfloat16)
    for _ in range(WARMUP):
        torch.matmul(a, b, out=c)
    torch.cuda.synchronize()

    def loop():
        t0 = time.perf_counter()
        for _ in range(ITERS):
            torch.matmul(a, b, out=c)
        torch.cuda.synchronize()
        return time.perf_counter() - t0

    if sys.argv[1] == "alone":
        s = loop()
    else:
        from torch.profiler import ProfilerActivity, profile
        trace = sys.argv[2] if len(sys.argv) > 2 else "gemm-trace.json"
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            s = loop()
        prof.export_chrome_trace(trace)
        with open(trace) as f:
            ev = json.load(f).get("traceEvents", [])
        kernels = [e for e in ev if e.get("cat") == "kernel"]
        print(f"trace={trace}\nevents={len(ev)}\nkernel_events={len(kernels)}")
    print(f"iters={ITERS}\nseconds={s:.4f}\ntflops={2 * N ** 3 * ITERS / s / 1e12:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
