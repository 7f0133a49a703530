#!/bin/sh
# The files GPU engineers already hold, imported as they come: long CSVs
# with their own column names, plain GPGPU-Sim stdout, nvidia-smi query
# logs, nvprof CSVs. The fixtures (tests/fixtures/formats, README.md there)
# are written in the shapes the tools print; every expected value is
# computed here from the fixture with python3's csv module or awk, never
# read from the importer. Bad input: a clear error naming the file and
# line, and nothing stored. TAP-style.
#   sh tests/formats.sh [BUILD_DIR]
B=${1:-build}
CS="$B/cyclescope"
F=tests/fixtures/formats
. tests/lib.sh
DB="$T/f.db"
q() { "$CS" query --db "$DB" "$1" | tail -n +2 | tr -d '\r'; }
same() { # DESC GOT WANT
	if [ "$2" = "$3" ]; then ok "$1 ($3)"; else echo "got '$2', wanted '$3'" >"$T/why"; no "$1" "$T/why"; fi
}
# bad DESC NEEDLE CMD...: fails, says NEEDLE, and stores nothing
bad() { refused "SELECT count(*) || ':' || coalesce(sum(samples), 0) FROM runs" "$@"; }
"$CS" query --db "$DB" "SELECT 1" >/dev/null 2>&1

# --- long CSVs: one row per time, metric and value ---
L=$F/long-by-metric.csv
"$CS" import "$L" --db "$DB" --name long >"$T/out" 2>&1 && grep -q 'looks like csv' "$T/out" &&
	ok "a long CSV with common column names (kernel_name,timestamp,metric_name,metric_value) is detected" ||
	no "long CSV detection" "$T/out"
R=$(q "SELECT id FROM runs WHERE name='long'")
same "rows grouped by metric become one sample per time, in time order" \
	"$(q "SELECT group_concat(t0 || '-' || t1 || '=' || CAST(value AS INT), ' ') FROM (SELECT t0, t1, value FROM series WHERE run=$R AND metric='dram__bytes_read.sum' ORDER BY t0)")" \
	"$(python3 - "$L" <<'PY'
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["metric_name"] == "dram__bytes_read.sum"]
ts = sorted(int(r["timestamp"]) for r in rows)
v = {int(r["timestamp"]): r["metric_value"] for r in rows}
ends = ts[1:] + [ts[-1] + ts[-1] - ts[-2]]
print(" ".join("%d-%d=%s" % (a, b, v[a]) for a, b in zip(ts, ends)))
PY
)"
same "each kernel's stretch of consecutive samples is a kernel range (names with commas kept)" \
	"$(q "SELECT group_concat(replace(name, ',', '+') || '@' || t0 || '-' || t1, ';') FROM (SELECT name, t0, t1 FROM ranges WHERE run=$R AND kind='kernel' ORDER BY t0)")" \
	"$(python3 - "$L" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
ts = sorted({int(r["timestamp"]) for r in rows})
ends = dict(zip(ts, ts[1:] + [ts[-1] + ts[-1] - ts[-2]]))
at = {}
for r in rows:
    at.setdefault(int(r["timestamp"]), set()).add(r["kernel_name"])
out, open_ = [], {}
for i, t in enumerate(ts):
    for k in sorted(at[t]):
        open_.setdefault(k, [t, ends[t]])[1] = ends[t]
    for k in [k for k in open_ if k not in at[t]]:
        out.append((open_[k][0], k, open_.pop(k)[1]))
for k, (a, b) in open_.items():
    out.append((a, k, b))
print(";".join("%s@%d-%d" % (k.replace(",", "+"), a, b) for a, k, b in sorted(out)))
PY
)"
"$CS" import "$F/long-own-names.csv" --db "$DB" --name own --time when_ns --metric unit,counter --value reading >"$T/out" 2>&1 &&
	ok "--time/--metric/--value name the columns (and say it is a long CSV)" || no "long CSV with named columns" "$T/out"
same "--metric with two columns joins them with '.'" \
	"$(q "SELECT group_concat(metric || '=' || CAST(s AS INT), ' ') FROM (SELECT metric, sum(value) s FROM series s JOIN runs r ON r.id = s.run WHERE r.name='own' GROUP BY metric ORDER BY metric)")" \
	"$(awk -F, 'NR > 1 { s[$2 "." $3] += $4 } END { for (k in s) print k "=" s[k] }' "$F/long-own-names.csv" | sort | tr '\n' ' ' | sed 's/ $//')"
bad "a long CSV without recognisable columns says which to name" "name them with --time COL --metric COL[,COL...] --value COL" \
	"$CS" import csv-long "$F/long-own-names.csv" --db "$DB"
bad "--value naming a column the file lacks lists the header" "--value 'val_ue': no such column (the header has 'when_ns', 'unit', 'counter', 'reading', 'host')" \
	"$CS" import "$F/long-own-names.csv" --db "$DB" --time when_ns --metric counter --value val_ue
awk 'NR == 4 { $0 = "500,lts,t_sectors,fourteen,node1" } { print }' "$F/long-own-names.csv" >"$T/nan.csv"
bad "a value that is not a number names the line and column" "nan.csv:4: 'fourteen' (column reading) is not a number" \
	"$CS" import "$T/nan.csv" --db "$DB" --time when_ns --metric unit,counter --value reading
awk '{ print } NR == 2 { print "0,lts,t_sectors,13,node2" }' "$F/long-own-names.csv" >"$T/dup.csv"
bad "two values of one metric at one time name both lines" "dup.csv:3: 'lts.t_sectors' has a second value at time 0 (the first at line 2)" \
	"$CS" import "$T/dup.csv" --db "$DB" --time when_ns --metric unit,counter --value reading

# --- plain GPGPU-Sim stdout (PTX mode): kernels from push/bind/Destroy lines ---
kernels() { q "SELECT group_concat(name || '@' || t0 || '-' || t1 || '/' || stream || '/' || correlation_id, ';') FROM (SELECT * FROM ranges WHERE run=(SELECT id FROM runs WHERE name='$1') AND kind='sim-kernel' ORDER BY t0, stream)"; }
G4=$F/gpgpusim4-ptx-stdout.log
"$CS" import "$G4" --db "$DB" --name ptx4 >"$T/out" 2>&1 && grep -q 'looks like accelsim-log' "$T/out" &&
	ok "GPGPU-Sim 4.x PTX-mode stdout (no 'launching kernel' lines) is detected and imported" || no "PTX-mode 4.x import" "$T/out"
same "kernels from the pushes, bind lines and Destroy lines: streams, uids, concurrent kernels kept concurrent" \
	"$(kernels ptx4)" "$(python3 tests/tools/gpgpusim_kernels.py "$G4")"
grep -q "ends inside 1 unfinished kernel(s), not imported: uid 4 '_Z6vecAddPfS_S_i'" "$T/out" &&
	ok "the kernel the cut log was running is named in a warning, the finished ones imported" || no "PTX-mode cut warning" "$T/out"
same "cumulative L2 misses become per-block values" \
	"$(q "SELECT group_concat(CAST(value AS INT), ' ') FROM (SELECT value FROM series s JOIN runs r ON r.id = s.run WHERE r.name='ptx4' AND metric='L2_total_cache_misses' ORDER BY t0)")" \
	"$(awk '/^L2_total_cache_misses = / { printf "%s%d", (n++ ? " " : ""), $3 - p; p = $3 } END { print "" }' "$G4")"
G3=$F/gpgpusim3-ptx-stdout.log
"$CS" import "$G3" --db "$DB" --name ptx3 >"$T/out" 2>&1 &&
	same "GPGPU-Sim 3.x PTX-mode stdout: one kernel per block, named and on the stream of its push" "$(kernels ptx3)" "$(python3 tests/tools/gpgpusim_kernels.py "$G3")" ||
	no "PTX-mode 3.x import" "$T/out"
awk '/^Destroy streams for kernel 1:/ { print "Destroy streams for kernel one: size 0"; next } { print }' "$G4" >"$T/badptx.log"
bad "a malformed Destroy line in the middle names its line" "badptx.log:$(grep -n '^Destroy streams for kernel 1:' "$G4" | cut -d: -f1): expected 'Destroy streams for kernel N: size M'" \
	"$CS" import accelsim-log "$T/badptx.log" --db "$DB"

# --- Accel-Sim get_stats.py CSVs with the stats YAML's regexes as names ---
col() { # RUN METRIC: the metric's values in sample order ('' where absent)
	"$CS" export "$(q "SELECT id FROM runs WHERE name='$1'")" --db "$DB" | tr -d '\r' |
		python3 -c "import csv, sys; r = list(csv.DictReader(sys.stdin)); print(' '.join('' if x[sys.argv[1]] == '' else '%g' % float(x[sys.argv[1]]) for x in r))" "$2"
}
S1=$F/get-stats-regex.csv
"$CS" import "$S1" --db "$DB" --name gs >"$T/out" 2>&1 && grep -q 'looks like accelsim-stats' "$T/out" &&
	ok "a get_stats.py CSV whose statistics are the stats YAML's regexes is detected and imported" || no "get_stats regex import" "$T/out"
same "statistic names come out readable (no \\s or (.*); the rate's (inst/sec) and (cycle/sec) kept apart)" \
	"$(q "SELECT group_concat(substr(m.name, 12), ' ') FROM (SELECT name FROM metrics WHERE run=(SELECT id FROM runs WHERE name='gs') AND name LIKE 'QV100-SASS:%' ORDER BY substr(name, 12)) m")" \
	"$(python3 tests/tools/get_stats_expect.py "$S1" names QV100-SASS)"
m='QV100-SASS:L2_cache_stats_breakdown[GLOBAL_ACC_R][HIT]'
same "one kernel-level sample per app--kernel row, a metric per config and statistic, NA absent" \
	"$(col gs "$m")" "$(python3 tests/tools/get_stats_expect.py "$S1" values "$m")"
S2=$F/get-stats-cfg-rows.csv
"$CS" import "$S2" --db "$DB" --name gs-r >"$T/out" 2>&1 &&
	same "get_stats.py -R (configs as rows), with the script's own lines mixed in" \
		"$(col gs-r QV100-SASS:gpu_tot_sim_cycle)" "$(python3 tests/tools/get_stats_expect.py "$S2" values QV100-SASS:gpu_tot_sim_cycle)" ||
	no "get_stats -R import" "$T/out"

# --- nvidia-smi query logs ---
N=$F/nvsmi-h100x2.csv
ex() { "$CS" export "$1" --db "$DB" | tr -d '\r'; }
"$CS" import "$N" --db "$DB" --name smi --tz UTC >"$T/out" 2>&1 && grep -q 'looks like nvidia-smi' "$T/out" &&
	ok "an nvidia-smi query log (2 GPUs with index, units on the values) is detected and imported" || no "nvidia-smi import" "$T/out"
python3 tests/tools/nvsmi_expect.py "$N" UTC >"$T/want"
ex "$(q "SELECT id FROM runs WHERE name='smi'")" >"$T/got"
diff "$T/want" "$T/got" >"$T/why" && ok "every GPU's series, times (UTC) and values as the log says, [N/A] absent" || no "nvidia-smi values" "$T/why"
same "each series carries the header's unit (degrees C for temperatures)" \
	"$(q "SELECT group_concat(m.name || '=' || m.unit, ' ') FROM metrics m JOIN runs r ON r.id = m.run WHERE r.name='smi'")" \
	"$(head -n 1 "$N" | tr ',' '\n' | sed -n 's/^ *\([a-z_.]*\) \[\(.*\)\]$/\1=\2/p; s/^ *\(temperature\.[a-z]*\)$/\1=C/p' | tr '\n' ' ' | sed 's/ $//')"
line=$(($(wc -l <"$N") + 1))
grep -q "nvsmi-h100x2.csv:$line: the log ends inside this row" "$T/out" && grep -q 'hold NUL bytes' "$T/out" &&
	ok "the cut last line and the NULs of a killed job are named in warnings (line $line)" || no "cut log warnings" "$T/out"
A=$F/nvsmi-a100-nounits.csv
TZ=America/New_York "$CS" import "$A" --db "$DB" --name smi-a >"$T/out" 2>&1 &&
	grep -q 'read as GPUs 0..1 in the order printed' "$T/out" && grep -q 'read in America/New_York (this machine' "$T/out" &&
	ok "nounits, no index: GPUs from the rows sharing a timestamp, the machine's zone named" || no "nvidia-smi nounits" "$T/out"
python3 tests/tools/nvsmi_expect.py "$A" America/New_York >"$T/want"
ex "$(q "SELECT id FROM runs WHERE name='smi-a'")" >"$T/got"
diff "$T/want" "$T/got" >"$T/why" && ok "across the spring-forward hour: times in the zone's offsets, pstate P8 as 8, repeated headers skipped" || no "nvidia-smi DST" "$T/why"
"$CS" import "$A" --db "$DB" --name smi-tokyo --tz Asia/Tokyo >"$T/out" 2>&1
same "--tz names the zone the timestamps are read in" \
	"$(q "SELECT min(t0) FROM series s JOIN runs r ON r.id = s.run WHERE r.name='smi-tokyo'")" \
	"$(python3 tests/tools/nvsmi_expect.py "$A" Asia/Tokyo | sed -n 2p | cut -d, -f2)"
FB=$F/nvsmi-fallback.csv
"$CS" import "$FB" --db "$DB" --name smi-fb --tz Europe/Berlin >"$T/out" 2>&1 &&
	python3 tests/tools/nvsmi_expect.py "$FB" Europe/Berlin >"$T/want" &&
	"$CS" export "$(q "SELECT id FROM runs WHERE name='smi-fb'")" --db "$DB" | tr -d '\r' >"$T/got" && diff "$T/want" "$T/got" >"$T/why" &&
	ok "across the autumn hour that repeats: its second pass read as standard time" || { cat "$T/out" >>"$T/why"; no "nvidia-smi fall-back hour" "$T/why"; }
bad "--tz with a zone that does not exist" "--tz 'Mars/Olympus': not a time zone" \
	"$CS" import "$A" --db "$DB" --tz Mars/Olympus
awk 'NR == 4 { $0 = substr($0, 1, 40) } { print }' "$N" >"$T/mid.csv"
bad "a cut row in the middle of the log names its line" "mid.csv:4: expected 10 fields (one per header column), found" \
	"$CS" import nvidia-smi "$T/mid.csv" --db "$DB" --tz UTC
tail -n +2 "$N" >"$T/nohead.csv"
bad "a noheader log says to put the field names first" "no header line: the log was written with --format=csv,noheader" \
	"$CS" import nvidia-smi "$T/nohead.csv" --db "$DB"

# --- nvprof CSVs: a GPU trace, a metrics report, the summary ---
P=$F/nvprof-gputrace.csv
"$CS" import "$P" --db "$DB" --name nvp-trace >"$T/out" 2>&1 && grep -q 'looks like nvprof-csv' "$T/out" &&
	ok "nvprof --print-gpu-trace --csv is detected and imported" || no "nvprof trace import" "$T/out"
q "SELECT kind, replace(name, ',', ';'), t0, t1, device, stream, correlation_id, bytes FROM ranges WHERE run=(SELECT id FROM runs WHERE name='nvp-trace') ORDER BY t0" >"$T/got"
python3 tests/tools/nvprof_expect.py trace "$P" >"$T/want"
diff "$T/want" "$T/got" >"$T/why" && ok "every kernel, copy and memset a range: times through the units row (ms, us), bytes (MB), streams, correlation ids" || no "nvprof trace ranges" "$T/why"
same "the two kernels on streams 13 and 14 stay concurrent" \
	"$(q "SELECT count(*) FROM ranges a JOIN ranges b ON a.run = b.run AND a.stream < b.stream AND a.t0 < b.t1 AND b.t0 < a.t1 WHERE a.run=(SELECT id FROM runs WHERE name='nvp-trace') AND a.kind='kernel' AND b.kind='kernel'")" 1
for r in metrics summary; do
	"$CS" import "$F/nvprof-$r.csv" --db "$DB" --name "nvp-$r" >"$T/out" 2>&1 || no "nvprof $r import" "$T/out"
	python3 tests/tools/nvprof_expect.py samples "$F/nvprof-$r.csv" >"$T/want"
	"$CS" export "$(q "SELECT id FROM runs WHERE name='nvp-$r'")" --db "$DB" | tr -d '\r' >"$T/got"
	diff "$T/want" "$T/got" >"$T/why" && ok "nvprof $r report: one sample per kernel or name, its values in one unit each (%, GB/s, levels, ns)" || no "nvprof $r values" "$T/why"
done
same "summary rows are kernel, copy and API ranges of their total time" \
	"$(q "SELECT group_concat(kind, ' ') FROM (SELECT kind FROM ranges WHERE run=(SELECT id FROM runs WHERE name='nvp-summary') ORDER BY t0)")" "kernel kernel memcpy api api"
awk 'NR == 8 { $0 = substr($0, 1, 30) } { print }' "$P" >"$T/cutrow.csv"
bad "a cut report row in the middle names its line" "cutrow.csv:8: expected 20 fields (one per header column), found" \
	"$CS" import nvprof-csv "$T/cutrow.csv" --db "$DB"
sed 's/"Low (3)"/"Lowish"/; s/,Low (3),/,Lowish,/' "$F/nvprof-metrics.csv" >"$T/lvl.csv"
bad "a metric value that is no number, rate or level names the line" "lvl.csv:$(grep -n 'Low (3)' "$F/nvprof-metrics.csv" | cut -d: -f1): Max of 'shared_utilization': 'Lowish' is not a number" \
	"$CS" import nvprof-csv "$T/lvl.csv" --db "$DB"
grep '^==' "$P" >"$T/empty.csv"
bad "a log with no report says what nvprof prints" "no nvprof CSV report: expected a header such as" \
	"$CS" import nvprof-csv "$T/empty.csv" --db "$DB"

# --- nsys stats reports: a job log in the column format, a CSV trace ---
N1=$F/nsys-stats-log.txt
"$CS" import "$N1" --db "$DB" --name nsl >"$T/out" 2>&1 && grep -q 'looks like nsys-stats' "$T/out" &&
	ok "an 'nsys profile --stats=true' log (column format, several reports) is detected and imported" || no "nsys stats log import" "$T/out"
python3 tests/tools/nsys_stats_expect.py samples "$N1" >"$T/want"
"$CS" export "$(q "SELECT id FROM runs WHERE name='nsl'")" --db "$DB" | tr -d '\r' >"$T/got"
diff "$T/want" "$T/got" >"$T/why" && ok "each summary row one sample per name: columns cut by the dashes, thousands separators dropped, MB as bytes, copy time and size of one operation together" || no "nsys summaries" "$T/why"
same "names are kernel, API, NVTX and copy ranges (names with spaces, commas and nsys's … kept)" \
	"$(q "SELECT group_concat(kind, ' ') FROM (SELECT kind FROM ranges WHERE run=(SELECT id FROM runs WHERE name='nsl') ORDER BY t0)")" \
	"nvtx nvtx api api api kernel kernel kernel memcpy memcpy"
N2=$F/nsys-stats-gputrace.csv
"$CS" import "$N2" --db "$DB" --name nst >"$T/out" 2>&1 &&
	q "SELECT kind, replace(name, ',', ';'), t0, t1, device, stream, correlation_id, bytes FROM ranges WHERE run=(SELECT id FROM runs WHERE name='nst') ORDER BY t0" >"$T/got" &&
	python3 tests/tools/nsys_stats_expect.py trace "$N2" >"$T/want" && diff "$T/want" "$T/got" >"$T/why" &&
	ok "nsys stats --report cuda_gpu_trace --format csv: kernels, copies and memsets as ranges with devices, streams, ids and bytes" || { cat "$T/out" >>"$T/why"; no "nsys gpu trace" "$T/why"; }
awk '/^ +51.0 / { sub(/11,639,320/, "11,639,3x0") } { print }' "$N1" >"$T/badnum.txt"
bad "a number that is not one names its line and column" "badnum.txt:$(grep -n '^ *51.0 ' "$N1" | head -n 1 | cut -d: -f1): '11,639,3x0' (column 2): expected a number" \
	"$CS" import nsys-stats "$T/badnum.txt" --db "$DB"

# --- binary reports, gzipped exports, and files that are none of the formats ---
kernels_of() { q "SELECT count(*) FROM ranges WHERE run=(SELECT id FROM runs WHERE name='$1') AND kind='kernel'"; }
python3 tests/tools/mknsys.py "$T/n.sqlite"
nk=$(python3 -c "import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute('SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL').fetchone()[0])" "$T/n.sqlite")
gzip -c "$T/n.sqlite" >"$T/n.sqlite.gz"
"$CS" import "$T/n.sqlite.gz" --db "$DB" --name nsys-gz >"$T/out" 2>&1 && grep -q 'looks like nsys-sqlite' "$T/out" &&
	[ "$(kernels_of nsys-gz)" = "$nk" ] && ok "a gzipped nsys SQLite export is unpacked and imported ($nk kernels)" || no "gzipped nsys export" "$T/out"
[ -z "$(ls -d "$T"/cyclescope-import-* 2>/dev/null)" ] && ok "its temporary copy is removed" || no "temporary copy left behind"
printf 'not a report, but named like one\n' >"$T/app.nsys-rep"
bad "an .nsys-rep without nsys on PATH gives the exact commands to run" "nsys export --type sqlite --output $T/app.sqlite $T/app.nsys-rep" \
	env PATH=/usr/bin:/bin TMPDIR="$T" "$CS" import "$T/app.nsys-rep" --db "$DB"
mkdir -p "$T/bin"
printf '#!/bin/sh\necho "$*" >"%s/nsys.args"\nwhile [ $# -gt 1 ]; do [ "$1" = --output ] && out=$2; shift; done\npython3 %s/tests/tools/mknsys.py "$out"\n' "$T" "$(pwd)" >"$T/bin/nsys"
printf '#!/bin/sh\necho "$*" >"%s/ncu.args"\ncat %s/tests/fixtures/ncu/raw.csv\n' "$T" "$(pwd)" >"$T/bin/ncu"
chmod +x "$T/bin/nsys" "$T/bin/ncu"
PATH="$T/bin:$PATH" TMPDIR="$T" "$CS" import "$T/app.nsys-rep" --db "$DB" --name rep >"$T/out" 2>&1 && grep -q 'converting .*app.nsys-rep with nsys export' "$T/out" &&
	grep -q "^export --type sqlite --force-overwrite true --output $T/cyclescope-import-.*/report.sqlite $T/app.nsys-rep\$" "$T/nsys.args" &&
	[ "$(kernels_of rep)" = "$nk" ] && [ -z "$(ls -d "$T"/cyclescope-import-* 2>/dev/null)" ] &&
	ok "with nsys on PATH the report is exported to SQLite in a temporary directory, imported, and the directory removed" ||
	{ cat "$T/nsys.args" >>"$T/out"; no "nsys-rep conversion" "$T/out"; }
printf 'x\n' >"$T/k.ncu-rep"
nr=$(python3 -c "import csv, sys; print(len({x[0] for x in csv.reader(open(sys.argv[1])) if x and x[0].isdigit()}))" tests/fixtures/ncu/raw.csv)
PATH="$T/bin:$PATH" TMPDIR="$T" "$CS" import "$T/k.ncu-rep" --db "$DB" --name ncurep >"$T/out" 2>&1 &&
	[ "$(cat "$T/ncu.args")" = "--import $T/k.ncu-rep --csv --page raw" ] && [ "$(kernels_of ncurep)" = "$nr" ] &&
	ok "an .ncu-rep is read through ncu --import --csv --page raw ($nr kernels)" || no "ncu-rep conversion" "$T/out"
bad "an .ncu-rep without ncu on PATH gives the exact command" "ncu --import $T/k.ncu-rep --csv --page raw > $T/k.csv" \
	env PATH=/usr/bin:/bin "$CS" import "$T/k.ncu-rep" --db "$DB"
printf 'when,what\n1,2\n' >"$T/what.csv"
"$CS" import "$T/what.csv" --db "$DB" >"$T/out" 2>&1
[ $? -ne 0 ] && grep -q "its first line is 'when,what'; what each format starts with:" "$T/out" &&
	grep -q '^  nvidia-smi  *timestamp, index, power.draw' "$T/out" && grep -q '^  accelsim-log  *lines starting GPGPU-Sim PTX:' "$T/out" &&
	ok "a file no format takes: its first line and what each format starts with" || no "format hints" "$T/out"

"$CS" check --db "$DB" >"$T/out" 2>&1 && ok "check: the database is sound after every import and refusal" || no "check" "$T/out"
echo "formats: $((n - fails)) of $n checks passed"
[ "$fails" -eq 0 ]
