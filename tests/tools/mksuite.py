#!/usr/bin/env python3
"""A suite for suite correlation, in the shapes the tools write.

Hardware: one `ncu --csv --page raw` file per application and repeat
(==PROF== lines, the units row, thousands separators, demangled names with
parameters, a template kernel), named for `cyclescope import --name`.
Simulator: one get_stats.py CSV (`-k -K -C CFG-A,CFG-B,...`: regex-named
statistic blocks, `app/args--mangled--N` rows, a column per
configuration).

With --expect FILE it also writes what a suite correlation must say,
computed here from the generated numbers (python's statistics module and
hand-written sums), never from cyclescope.

  mksuite.py DIR [--apps N] [--kernels K] [--configs C] [--repeats R]
             [--expect FILE]

DIR gets hw-R-APPINDEX.csv (and hw-names.txt: file and run name per line),
sim.csv and app-map.txt.
"""
import argparse
import json
import math
import os
import random
import statistics

STATS = [  # (ncu metric, its unit, get_stats regex, readable sim name)
    ("gpc__cycles_elapsed.avg", "cycle", r"gpu_tot_sim_cycle\s*=\s*(.*)", "gpu_tot_sim_cycle"),
    ("smsp__inst_executed.sum", "inst", r"gpgpu_n_tot_w_icount\s*=\s*(.*)", "gpgpu_n_tot_w_icount"),
    ("lts__t_sectors_srcunit_tex_op_read.sum", "sector",
     r"\s+L2_cache_stats_breakdown\[GLOBAL_ACC_R\]\[TOTAL_ACCESS\]\s*=\s*(.*)",
     "L2_cache_stats_breakdown[GLOBAL_ACC_R][TOTAL_ACCESS]"),
]


def mangle(name, params="Pfi"):
    return "_Z%d%s%s" % (len(name), name, params)


def thousands(v):
    return "{:,}".format(int(v))


def suite(apps, kernels, seed=7):
    """The applications: (hw run name, sim app label, kernels [(ncu name,
    mangled name)]). The first few exercise pairing: a case difference,
    an application without its arguments, one by the map, one only on
    each side, and an extra simulated launch."""
    rnd = random.Random(seed)
    out = []
    for a in range(apps):
        sim = "app%03d-suite-1.0/%d_args" % (a, 64 << (a % 4))
        hw = sim
        if a == 1:
            hw = sim.upper()  # normalisation: case
        elif a == 2:
            hw = "app002-suite-1.0"  # the application alone
        elif a == 3:
            hw = "my-own-name"  # paired by the map
        ks = []
        for k in range(kernels):
            base = "k%d_%s" % (k % max(1, kernels // 2), "gemm" if k % 3 == 0 else "scan")
            if k == 1:
                ks.append(("void tiled<4>(float *)", "_Z5tiledILi4EEvPf"))
            else:
                ks.append(("%s(float *, int)" % base, mangle(base)))
        out.append({"hw": hw, "sim": sim, "kernels": ks,
                    "scale": [rnd.uniform(1e3, 1e6) for _ in STATS]})
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--apps", type=int, default=6)
    ap.add_argument("--kernels", type=int, default=5)
    ap.add_argument("--configs", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--expect")
    o = ap.parse_args()
    rnd = random.Random(11)
    os.makedirs(o.dir, exist_ok=True)
    apps = suite(o.apps, o.kernels)
    cfgs = ["CFG-%s" % chr(ord("A") + c) for c in range(o.configs)]
    only_hw = o.apps - 1 if o.apps >= 6 else None   # the last: hardware only
    only_sim = o.apps - 2 if o.apps >= 6 else None  # the one before: simulator only
    # hardware values per repeat, app, kernel, stat
    hw = [[[[a["scale"][s] * (1 + 0.3 * k) * rnd.uniform(0.97, 1.03) for s in range(len(STATS))]
            for k in range(len(a["kernels"]))] for a in apps] for _ in range(o.repeats)]
    # simulator: the hardware's mean times an error of its configuration
    sim = [[[[0.0] * len(STATS) for _ in a["kernels"]] for a in apps] for _ in cfgs]
    for c in range(len(cfgs)):
        for i, a in enumerate(apps):
            for k in range(len(a["kernels"])):
                for s in range(len(STATS)):
                    mean = sum(hw[r][i][k][s] for r in range(o.repeats)) / o.repeats
                    sim[c][i][k][s] = float(round(mean * rnd.uniform(0.8 + 0.05 * c, 1.25)))
    names = []
    for r in range(o.repeats):
        for i, a in enumerate(apps):
            if i == only_sim:
                continue
            path = os.path.join(o.dir, "hw-%d-%03d.csv" % (r, i))
            cols = ["ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context",
                    "Stream", "Device", "CC", "gpu__time_duration.sum"] + [s[0] for s in STATS]
            units = ["", "", "", "", "", "", "", "", "", "usecond"] + [s[1] for s in STATS]
            with open(path, "w", newline="") as f:
                f.write("==PROF== Connected to process 4%03d (/home/u/suite/app)\r\n" % i)
                for k, (nm, _) in enumerate(a["kernels"]):
                    f.write('==PROF== Profiling "%s" - %d: 0%%....50%%....100%% - 9 passes\r\n'
                            % (nm.split("(")[0], k))
                f.write("==PROF== Disconnected from process 4%03d\r\n" % i)
                f.write(",".join('"%s"' % c for c in cols) + "\r\n")
                f.write(",".join('"%s"' % u for u in units) + "\r\n")
                for k, (nm, _) in enumerate(a["kernels"]):
                    vals = [thousands(round(v)) for v in hw[r][i][k]]
                    # the stored hardware value is the rounded one
                    hw[r][i][k] = [float(round(v)) for v in hw[r][i][k]]
                    row = [str(k), "4%03d" % i, "app", "127.0.0.1", nm, "1", "7", "0", "9.0",
                           "%.2f" % (5 + k)] + vals
                    f.write(",".join('"%s"' % v for v in row) + "\r\n")
            names.append((os.path.basename(path), "hw%d:%s" % (r, a["hw"]) if o.repeats > 1
                          else a["hw"], r, i))
    with open(os.path.join(o.dir, "hw-names.txt"), "w") as f:
        for fn, nm, r, i in names:
            f.write("%s\t%s\t%d\n" % (fn, nm, r))
    with open(os.path.join(o.dir, "app-map.txt"), "w") as f:
        f.write("# hardware name, simulator name\n")
        if o.apps > 3:
            f.write("%s,%s\n" % (apps[3]["hw"], apps[3]["sim"]))
    # get_stats.py -k -K -C CFG-A,CFG-B: a block per statistic
    rule = "-" * 100 + "," * len(cfgs)
    with open(os.path.join(o.dir, "sim.csv"), "w") as f:
        f.write(rule + "\n" + "Accel-Sim-build" + "," * len(cfgs) + "\n")
        f.write("APPS," + ",".join(cfgs) + "\n")
        f.write("%s--all_kernels,%s\n\n" % (apps[0]["sim"], ",".join(["accelsim-commit-1"] * len(cfgs))))
        for s, st in enumerate(STATS):
            f.write(rule + "\n" + st[2] + "," * len(cfgs) + "\n")
            f.write("APPS," + ",".join(cfgs) + "\n")
            for i, a in enumerate(apps):
                if i == only_hw:
                    continue
                uid = 0
                extra = [(len(a["kernels"]) - 1)] if i == 0 else []  # one more launch
                for k in list(range(len(a["kernels"]))) + extra:
                    uid += 1
                    v = [sim[c][i][k][s] * (1.5 if k >= len(a["kernels"]) - 1 and extra and uid > len(a["kernels"]) else 1)
                         for c in range(len(cfgs))]
                    f.write("%s--%s--%d,%s\n" % (a["sim"], a["kernels"][k][1], uid,
                                                ",".join("%.1f" % x for x in v)))
            f.write("\n")
    if not o.expect:
        return
    # what must come out: pairs of every app on both sides, kernels by
    # name and launch order (the extra simulated launch is unpaired)
    exp = {"configs": cfgs, "stats": [], "unpaired_apps": {"hw": [], "sim": []},
           "unpaired_kernels": 0}
    if only_hw is not None:
        exp["unpaired_apps"]["hw"].append(("hw0:" if o.repeats > 1 else "") + apps[only_hw]["hw"])
        exp["unpaired_apps"]["sim"].append(apps[only_sim]["sim"])
    exp["unpaired_kernels"] = len(cfgs)  # app 0's extra launch, once per configuration
    for s, st in enumerate(STATS):
        per_cfg = []
        for c in range(len(cfgs)):
            hws, sims, apps_tot = [], [], []
            for i, a in enumerate(apps):
                if i in (only_hw, only_sim):
                    continue
                ah = asim = 0.0
                for k in range(len(a["kernels"])):
                    h = sum(hw[r][i][k][s] for r in range(o.repeats)) / o.repeats
                    hws.append(h)
                    sims.append(sim[c][i][k][s])
                    ah += h
                    asim += sim[c][i][k][s]
                apps_tot.append((ah, asim))
            per_cfg.append(stats_of(hws, sims) | {"apps": len(apps_tot)})
        exp["stats"].append({"hw": st[0], "sim": st[3], "configs": per_cfg})
    with open(o.expect, "w") as f:
        json.dump(exp, f, indent=1)


def ranks(v):
    order = sorted(range(len(v)), key=lambda i: v[i])
    r = [0.0] * len(v)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and v[order[j + 1]] == v[order[i]]:
            j += 1
        for q in range(i, j + 1):
            r[order[q]] = (i + j) / 2 + 1
        i = j + 1
    return r


def stats_of(h, s):
    rel = [(y - x) / abs(x) for x, y in zip(h, s) if x != 0]
    return {
        "pairs": len(h),
        "pearson": statistics.correlation(h, s),
        "spearman": statistics.correlation(ranks(h), ranks(s)),
        "mape_pct": 100 * statistics.fmean(abs(e) for e in rel),
        "mean_error_pct": 100 * statistics.fmean(rel),
        "rpd_pct": 100 * statistics.fmean(abs(y - x) / ((abs(x) + abs(y)) / 2) for x, y in zip(h, s)),
        "within_1pct": sum(1 for e in rel if abs(e) <= 0.01),
        "within_10pct": sum(1 for e in rel if abs(e) <= 0.10),
        "aggregate_error_pct": 100 * (sum(s) - sum(h)) / sum(h),
        "abs_aggregate_error_pct": 100 * sum(abs(y - x) for x, y in zip(h, s)) / sum(abs(x) for x in h),
        "nrmse": math.sqrt(statistics.fmean((y - x) ** 2 for x, y in zip(h, s))) / statistics.fmean(h),
    }


if __name__ == "__main__":
    main()
