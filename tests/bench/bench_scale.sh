#!/bin/sh
# make bench-scale: how the store's costs grow with the number of metrics
# and the length of a run, warm and cold (tests/bench/bench_scale.c), as a
# table and as figures with the goals they are held to.
#   sh tests/bench/bench_scale.sh BUILD_DIR WORK_DIR FIGURES
# Runs: 20 x 1M and 20 x 5M samples (20M and 100M values), 1000 and 4000
# metrics x 20k samples, and 20 x 15M samples (300M values, one ingest).
B=${1:-build}
W=${2:-$B/bench-scale}
FIG=${3:-$W/figures.txt}
mkdir -p "$W"
CONFIGS=${BENCH_SCALE_CONFIGS:-"20x1000000 20x5000000 1000x20000 4000x20000 20x15000000"}
for c in $CONFIGS; do
	m=${c%x*} n=${c#*x}
	rep=3
	[ "$n" -ge 10000000 ] && rep=1
	echo "# $m metrics x $n samples ..." >&2
	"$B/tests/bench_scale" --metrics "$m" --samples "$n" --dir "$W" --repeat $rep \
		--cli "$B/cyclescope" >"$W/$c.txt" || exit 1
done

# one column per run, one row per measure (best of 3, cold ones once)
python3 - "$W" "$FIG" $CONFIGS <<'PY'
import sys
w, fig, configs = sys.argv[1], sys.argv[2], sys.argv[3:]
runs = {}
for c in configs:
    d = {}
    for line in open("%s/%s.txt" % (w, c)):
        k, best, med, unit = line.split()
        d[k] = (float(best), float(med), unit)
    runs[c] = d
def label(c):
    m, n = c.split("x")
    v = int(m) * int(n)
    return "%sx%s" % (m, ("%dM" % (int(n) // 10**6)) if int(n) >= 10**6 else "%dk" % (int(n) // 1000)) + \
        " (%dM)" % (v // 10**6)
keys = ["ingest", "size", "page-slack", "raw-all", "buckets-all", "window-one", "window1pct-one",
        "buckets-one", "cli-window-one", "cold-raw-all", "cold-window1pct-one", "cold-buckets-one"]
print("store scaling (best of 3 warm, the CLI window of 15; cold once, after posix_fadvise DONTNEED)")
print("%-22s" % "" + "".join("%18s" % label(c) for c in configs))
for k in keys:
    unit = next((runs[c][k][2] for c in configs if k in runs[c]), "")
    print("%-22s" % ("%s (%s)" % (k, unit))[:22] +
          "".join("%18.3f" % runs[c][k][0] if k in runs[c] else "%18s" % "-" for c in configs))
print("%-22s" % "cold read / rows (x)")
for q in ("raw-all", "window1pct-one", "buckets-one"):
    print("%-22s" % ("  " + q) + "".join(
        "%18.2f" % (runs[c]["cold-read-" + q][0] / runs[c]["cold-rows-" + q][0])
        if runs[c].get("cold-rows-" + q, (0,))[0] else "%18s" % "-" for c in configs))

out = open(fig, "a")
def figure(name, best, med, unit, goal="-"):
    out.write("%s %.6g %.6g %s %s\n" % (name, best, med, unit, goal))
def ratio(name, a, b, key, goal, unit="x"):
    if a in runs and b in runs:
        x, y = runs[a][key], runs[b][key]
        figure(name, x[0] / y[0], x[1] / y[1], unit, goal)
# 1: linear in metrics
ratio("scale.raw_all.4000_over_1000_metrics", "4000x20000", "1000x20000", "raw-all", "<=4.5")
ratio("scale.buckets_all.4000_over_1000_metrics", "4000x20000", "1000x20000", "buckets-all", "<=4.5")
if "4000x20000" in runs:
    figure("scale.ingest.4000_metrics", *runs["4000x20000"]["ingest"][:2], "Mvalues/s", ">=30")
# 2: cold I/O proportional to the query; warm all-metric buckets (vs previous)
for c, tag in (("20x15000000", "300M"), ("20x1000000", "20M")):
    if c in runs:
        for q in ("window1pct-one", "buckets-one"):
            r = runs[c]["cold-read-" + q][0] / max(runs[c]["cold-rows-" + q][0], 1e-9)
            figure("scale.cold_read_over_rows.%s.%s" % (q, tag), r, r, "x", "<=3" if tag == "300M" else "-")
        figure("scale.buckets_all.%s" % tag, *runs[c]["buckets-all"][:2], "ms")
# 3: window latency independent of run length
ratio("scale.window_one.300M_over_20M", "20x15000000", "20x1000000", "window-one", "<=1.2")
ratio("scale.cli_window_one.300M_over_20M", "20x15000000", "20x1000000", "cli-window-one", "<=1.2")
# 4: bytes per value and page slack
for c, tag in (("20x1000000", "20_metrics"), ("4000x20000", "4000_metrics")):
    if c in runs:
        figure("scale.size.%s" % tag, *runs[c]["size"][:2], "B/value", "<=1.3" if tag == "20_metrics" else "-")
        figure("scale.page_slack.%s" % tag, *runs[c]["page-slack"][:2], "fraction", "<=0.1")
PY
rm -f "$W"/scale-*.db*
