#!/usr/bin/env python3
"""Writes synthetic Accel-Sim / GPGPU-Sim stdout logs of one workload, in
the shapes the simulators print, and the truth about them as JSON.

The workload: kernels with a name, a stream, a duration in cycles and an
instruction count, executed at a constant rate while they run. The
schedule follows Accel-Sim's trace-driven loop (gpu-simulator/
accel-sim.cc): launch every kernel whose stream is free, simulate until
one finishes, print "Destroy streams for kernel U: size 0" and its
statistics block, reset gpu_sim_cycle (update_stats), launch again. A
block's kernel_name / kernel_launch_uid lines list the kernels first
scheduled since the previous block (each entry followed by a space), so a
block may list several or none.

usage: mkstdout.py SHAPE OUT.log TRUTH.json
SHAPE: serial (the kernels one after another on one stream: no launch
lines, the GPGPU-Sim 3.x form), serial4 (one stream, the 4.x form with
launch and completion lines), streams2, streams4 (concurrent streams),
newer (streams4 with set_kernel_done lines, cuda_stream_id on launches and
per-stream cache breakdowns), perkernel (a fork whose blocks are each the
finishing kernel's own statistics over its own duration), cut (streams4
cut off inside a block).

The truth: every kernel's extent [t0, t1) in cycles, name, uid, stream,
instructions, and whether it ran alone (no other kernel's extent overlaps
it); the run's total instructions.
"""
import json
import sys

# name, stream (in the concurrent shapes), cycles, instructions
KERNELS = [
    ("_Z5saxpyifPfS_", 1, 4000, 1_200_000),
    ("_Z5scaleifPf", 2, 2500, 640_000),
    ("_Z4gemmILi128EEvPKfS1_Pfi", 1, 6000, 3_000_000),
    ("_Z9allgatherPfi", 3, 1500, 90_000),
    ("_Z6reducePfi", 4, 900, 45_000),
    ("_Z7stencilPKfPfi", 2, 3000, 1_500_000),
]
ALONE_TAIL = ("_Z8epiloguePf", 1, 1200, 300_000)  # runs alone at the end


def schedule(streams, exact_delay=0):
    """Runs the workload; returns kernels with launch/start/end cycles and
    the blocks printed, in order."""
    ks = []
    for uid, (name, st, cyc, insn) in enumerate(KERNELS + [ALONE_TAIL], start=1):
        s = st if streams > 1 else 1
        if streams > 1 and s > streams:
            s = (s - 1) % streams + 1
        ks.append(dict(uid=uid, name=name, stream=s, cycles=cyc, insn=insn))
    # The tail kernel waits for everything: on its own stream after all.
    now = 0
    running, done, events = [], [], []
    pending = list(ks)
    listed = []
    last_print = 0

    def launch():
        busy = {k["stream"] for k in running}
        for k in list(pending):
            if k is ks[-1] and (running or len(pending) > 1):
                continue  # the epilogue: after all others
            if k["stream"] in busy:
                continue
            # Kernels of a stream in order: only the first pending one.
            if any(p["stream"] == k["stream"] for p in pending[: pending.index(k)]):
                continue
            k["launch"] = now
            k["start"] = now + exact_delay
            k["end"] = k["start"] + k["cycles"]
            running.append(k)
            pending.remove(k)
            busy.add(k["stream"])
            listed.append(k)
            events.append(("launch", k))

    launch()
    tot_insn = 0
    per_stream_l2 = {}
    while running:
        fin = min(running, key=lambda k: (k["end"], k["uid"]))
        t = fin["end"]
        insn = sum(k["insn"] * (min(t, k["end"]) - max(last_print, k["start"])) // k["cycles"]
                   for k in running if min(t, k["end"]) > max(last_print, k["start"]))
        # integer rates: make the finishing kernel's last block exact
        for k in running:
            done_part = min(t, k["end"]) - max(last_print, k["start"])
            if done_part > 0:
                k.setdefault("acc", 0)
                k["acc"] += k["insn"] * done_part // k["cycles"]
        fix = fin["insn"] - fin["acc"]
        insn += fix
        fin["acc"] += fix
        tot_insn += insn
        per_stream_l2[fin["stream"]] = per_stream_l2.get(fin["stream"], 0) + fin["insn"] // 8
        now = t
        running.remove(fin)
        done.append(fin)
        events.append(("done", fin))
        events.append(("block", dict(names=[k["name"] for k in listed], uids=[k["uid"] for k in listed],
                                     stream=fin["stream"], cyc=t - last_print, insn=insn, tot=t,
                                     tot_insn=tot_insn, l2=per_stream_l2[fin["stream"]], fin=fin)))
        listed.clear()
        last_print = t
        launch()
    return ks, events


def block_lines(b, shape):
    out = []
    out.append("kernel_name = " + "".join(n + " " for n in b["names"]))
    out.append("kernel_launch_uid = " + "".join(str(u) + " " for u in b["uids"]))
    if shape != "serial":
        out.append("kernel_stream_id = %d" % b["stream"])
    out.append("gpu_sim_cycle = %d" % b["cyc"])
    out.append("gpu_sim_insn = %d" % b["insn"])
    out.append("gpu_ipc = %12.4f" % (b["insn"] / b["cyc"]))
    out.append("gpu_tot_sim_cycle = %d" % b["tot"])
    out.append("gpu_tot_sim_insn = %d" % b["tot_insn"])
    out.append("gpu_tot_ipc = %12.4f" % (b["tot_insn"] / b["tot"]))
    out.append("gpu_occupancy = %.4f%% " % 50.0)
    out.append("L2_BW  = %12.4f GB/Sec" % 12.5)
    out.append("gpu_total_sim_rate=%d" % 1000)
    out.append("")
    out.append("========= L2 cache stats =========")
    out.append("L2_total_cache_accesses = %d" % (b["tot_insn"] // 4))
    if shape == "newer":
        out.append("L2_total_cache_breakdown:")
        out.append("\tL2_cache_stats_breakdown[GLOBAL_ACC_R][HIT] = %d" % b["l2"])
        out.append("\tL2_cache_stats_breakdown[GLOBAL_ACC_R][TOTAL_ACCESS] = %d" % b["l2"])
    out.append("gpgpu_simulation_time = 0 days, 0 hrs, 0 min, 1 sec (1 sec)")
    out.append("gpgpu_simulation_rate = 1000 (inst/sec)")
    out.append("gpgpu_silicon_slowdown = 1000x")
    return out


def main():
    shape, out_path, truth_path = sys.argv[1:4]
    streams = {"serial": 1, "serial4": 1, "streams2": 2}.get(shape, 4)
    delay = 3 if shape == "newer" else 0
    ks, events = schedule(streams, delay)
    lines = ["GPGPU-Sim uArch: clock freqs: 1132000000.000000:1132000000.000000:1132000000.000000:850000000.000000",
             "Accel-Sim [build accelsim-commit-synthetic]" if shape != "serial" else "GPGPU-Sim PTX: synthetic"]
    per_kernel = shape == "perkernel"
    for ev, x in events:
        if ev == "launch":
            if shape in ("serial", "perkernel"):
                if per_kernel:
                    lines.append("launching kernel name: %s uid: %d" % (x["name"], x["uid"]))
                continue
            if shape in ("newer", "cut", "streams4", "streams2"):
                lines.append("launching kernel name: %s uid: %d cuda_stream_id: %d" % (x["name"], x["uid"], x["stream"]))
            else:
                lines.append("launching kernel name: %s uid: %d" % (x["name"], x["uid"]))
        elif ev == "done":
            if shape == "newer":
                lines.append("gpgpu_sim::set_kernel_done start_cycle=%d, end_cycle=%d" % (x["start"], x["end"]))
            if shape not in ("serial", "perkernel"):
                lines.append("Destroy streams for kernel %d: size 0" % x["uid"])
        else:
            if per_kernel:
                f = x["fin"]
                x = dict(x, names=[f["name"]], uids=[f["uid"]], cyc=f["end"] - f["start"], insn=f["insn"],
                         tot=f["end"])
            lines.extend(block_lines(x, shape))
    if shape == "cut":
        # Cut inside the fourth block, after its gpu_sim_cycle line.
        n = 0
        for i, l in enumerate(lines):
            if l.startswith("kernel_name = "):
                n += 1
                if n == 4:
                    lines = lines[: i + 4]
                    break
    with open(out_path, "w") as f:
        f.write("\n".join(lines) + ("\n" if shape != "cut" else ""))
    # The truth.
    # A cut log: the kernels whose block came before the fourth (finished),
    # and those launched by then that did not (unfinished).
    finished, launched = set(), []
    if shape == "cut":
        nb = 0
        for ev, x in events:
            if ev == "block":
                nb += 1
                if nb == 4:
                    break
                finished.add(x["fin"]["uid"])
            elif ev == "launch":
                launched.append(x["uid"])
    kernels = []
    for k in ks:
        if shape == "cut" and k["uid"] not in finished:
            continue
        t0 = k["start"] if shape in ("newer", "perkernel") else k["launch"]
        kernels.append(dict(uid=k["uid"], name=k["name"], stream=None if shape == "serial" else k["stream"],
                            t0=t0, t1=k["end"],
                            insn=k["insn"]))
    for k in kernels:
        k["alone"] = not any(o is not k and o["t0"] < k["t1"] and k["t0"] < o["t1"] for o in kernels)
    unfinished = [u for u in launched if u not in finished]
    truth = dict(shape=shape, kernels=kernels, total_insn=sum(k["insn"] for k in ks), unfinished=unfinished)
    with open(truth_path, "w") as f:
        json.dump(truth, f, indent=1)


main()
