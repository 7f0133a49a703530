#!/usr/bin/env python3
"""The summary `make bench` and `make bench-scale` end with.

    figures.py CURRENT [PREVIOUS]

CURRENT holds this run's figures, one per line:

    NAME BEST MEDIAN UNIT GOAL

BEST and MEDIAN are of the repetitions (best = fastest or largest), GOAL
is `<=X`, `>=X` or `-`. The median is the figure judged against the goal
and compared with the previous run (one lucky repetition meets nothing);
the best is printed beside it. PREVIOUS is the same file from the last
run; each figure is printed beside its previous median, so a regression
shows even where no goal is set. Exits 0 whatever the goals say: a
benchmark reports.
"""
import sys


def load(path):
    figs = {}
    try:
        with open(path) as f:
            for line in f:
                p = line.split()
                if len(p) == 5:
                    figs[p[0]] = (float(p[1]), float(p[2]), p[3], p[4])
    except OSError:
        pass
    return figs


def met(value, goal):
    if goal == "-":
        return ""
    bound = float(goal[2:])
    return "yes" if (value <= bound if goal.startswith("<=") else value >= bound) else "NO"


def main():
    cur = load(sys.argv[1])
    prev = load(sys.argv[2]) if len(sys.argv) > 2 else {}
    if not cur:
        return
    w = max(len(n) for n in cur)
    print()
    print("%-*s  %10s %10s  %-10s %10s %7s  %-8s %s" % (w, "figure", "median", "best", "unit",
                                                       "previous", "change", "goal", "met (median)"))
    for name, (best, med, unit, goal) in cur.items():
        before = prev.get(name)
        if before and before[1]:
            change = "%+.0f%%" % (100 * (med - before[1]) / abs(before[1]))
            pv = "%.4g" % before[1]
        else:
            change, pv = "", "(none)"
        print("%-*s  %10.4g %10.4g  %-10s %10s %7s  %-8s %s" % (w, name, med, best, unit, pv, change,
                                                             goal, met(med, goal)))
    if not prev:
        print("(no previous figures: the next run compares against these)")


main()
