#!/bin/sh
# The simulator importers on real simulator output (tests/fixtures/accelsim-qv100,
# written by Accel-Sim/GPGPU-Sim 4.2.0) and on hand-written fixtures of the
# other formats (tests/fixtures/sim). Expected values are read from the
# files themselves with zcat/awk/grep, never from the importers' output.
# Then every bad-input case: a clear error naming the file and line, and
# nothing stored. TAP-style.
#   sh tests/simbridge.sh [BUILD_DIR]
B=${1:-build}
CS="$B/cyclescope"
Q=tests/fixtures/accelsim-qv100
S=tests/fixtures/sim
AV=$Q/gpgpusim_visualizer__Wed-Dec--2-10-17-51-2026.log.gz
. tests/lib.sh
DB="$T/s.db"
q() { "$CS" query --db "$DB" "$1" | tail -n +2 | tr -d '\r'; }
same() { # DESC GOT WANT
	if [ "$2" = "$3" ]; then ok "$1 ($3)"; else echo "got '$2', wanted '$3'" >"$T/why"; no "$1" "$T/why"; fi
}

# --- AerialVision visualizer log (real) ---
"$CS" import "$AV" --db "$DB" --name av >"$T/out" 2>&1 && grep -q 'looks like aerialvision' "$T/out" &&
	ok "the visualizer log is detected and imported" || no "visualizer import" "$T/out"
same "40 samples, one per gzip member" "$(q "SELECT samples FROM runs WHERE name='av'")" "$(zcat "$AV" | grep -c '^globalcyclecount:')"
same "kernels found where globalcyclecount restarts" "$(q "SELECT group_concat(name || ':' || t0 || '-' || t1, ' ') FROM ranges WHERE run=1 AND kind='sim-kernel'")" \
	"$(zcat "$AV" | awk '/^globalcyclecount:/ { c = $2; if (c <= p) { k++; printf "kernel %d:%d-%d ", k, o, o + p; o += p } p = c } END { k++; printf "kernel %d:%d-%d", k, o, o + p }')"
same "samples per kernel" "$(q "SELECT group_concat(c, ' ') FROM (SELECT r.name, (SELECT count(*) FROM series s WHERE s.run=1 AND s.metric='globalinsncount' AND s.t0 >= r.t0 AND s.t1 <= r.t1) c FROM ranges r WHERE r.run=1 ORDER BY r.t0)")" "12 17 11"
same "Ltworeadhit (window) sums as in the file" "$(q "SELECT CAST(sum(value) AS INT) FROM series WHERE run=1 AND metric='Ltworeadhit'")" \
	"$(zcat "$AV" | awk '/^Ltworeadhit:/ { s += $2 } END { print s }')"
same "Ltworeadmiss (window) sums as in the file" "$(q "SELECT CAST(sum(value) AS INT) FROM series WHERE run=1 AND metric='Ltworeadmiss'")" \
	"$(zcat "$AV" | awk '/^Ltworeadmiss:/ { s += $2 } END { print s }')"
same "cumulative shaderinsncount deltas add up to the last sample's total" \
	"$(q "SELECT CAST(sum(value) AS INT) FROM series WHERE run=1 AND metric='shaderinsncount'")" \
	"$(zcat "$AV" | awk '/^shaderinsncount:/ { t = 0; for (i = 2; i <= NF; i++) t += $i; last = t } END { print last }')"
same "per-SM series: shaderinsncount.sm[12]" "$(q "SELECT CAST(sum(value) AS INT) FROM series WHERE run=1 AND metric='shaderinsncount.sm[12]'")" \
	"$(zcat "$AV" | awk '/^shaderinsncount:/ { v = $14 } END { print v }')"
same "per-kernel globalinsncount restarts are stitched" "$(q "SELECT CAST(sum(value) AS INT) FROM series WHERE run=1 AND metric='globalinsncount'")" \
	"$(zcat "$AV" | awk '/^globalinsncount:/ { if ($2 < p) s += p; p = $2 } END { print s + p }')"
same "per-bank DRAM counts summed into the channel total" "$(q "SELECT CAST(sum(value) AS INT) FROM series WHERE run=1 AND metric='dramglobal_acc_r'")" \
	"$(zcat "$AV" | awk '/^dramglobal_acc_r:/ { v[$2 "." $3] = $4 } END { for (k in v) s += v[k]; print s }')"
same "dramutil.ch[3] is the channel's value, as printed" "$(q "SELECT CAST(sum(value) AS INT) FROM series WHERE run=1 AND metric='dramutil.ch[3]'")" \
	"$(zcat "$AV" | awk '$1 == "dramutil:" && $2 == 3 { s += $3 } END { print s }')"
same "names: per-SM, per-channel, named bins, arrays" \
	"$(q "SELECT count(*) FROM metrics WHERE run=1 AND name IN ('shaderinsncount.sm[79]','ShdrCTACount.sm[0]','dramutil.ch[31]','dramnreq','WarpDivergenceBreakdown.W29_32','LDmemlatdist[0]','STmemlatdist[0]','gpgpu_n_shmem_bkconflict')")" 8
same "CFLog lines are not series" "$(q "SELECT count(*) FROM metrics WHERE run=1 AND name LIKE 'CFLog%'")" 0
"$CS" export av --db "$DB" --metric Ltworeadhit,Ltworeadmiss >"$T/e.csv" 2>&1
head -n 1 "$T/e.csv" | tr -d '\r' | grep -q '^t0,t1,Ltworeadhit,Ltworeadmiss$' && [ "$(wc -l <"$T/e.csv")" -eq 41 ] &&
	ok "an imported simulator run exports like a hardware run" || no "export of a sim run" "$T/e.csv"
"$CS" import aerialvision "$AV" --db "$DB" --name banks --per-bank >"$T/out" 2>&1
same "--per-bank keeps 32 channels x 16 banks x 6 kinds more" \
	"$(q "SELECT count(*) FROM metrics m JOIN runs r ON r.id = m.run WHERE r.name='banks' AND m.name LIKE '%.bank[%'")" 3072

# --- Accel-Sim stdout (real) ---
"$CS" import "$Q/stdout.log.gz" --db "$DB" --name log >"$T/out" 2>&1 && grep -q 'looks like accelsim-log' "$T/out" &&
	ok "the stdout log (gzip) is detected and imported" || no "stdout import" "$T/out"
R=$(q "SELECT id FROM runs WHERE name='log'")
same "one sim-kernel range per kernel_name block" "$(q "SELECT group_concat(name || ':' || t0 || '-' || t1 || ':' || correlation_id, ' ') FROM ranges WHERE run=$R")" \
	"$(zcat "$Q/stdout.log.gz" | awk '/^kernel_name = / { k = $3 } /^kernel_launch_uid = / { u = $3 } /^gpu_sim_cycle = / { c = $3 } /^gpu_tot_sim_cycle = / { printf "%s%s:%d-%d:%d", sep, k, $3 - c, $3, u; sep = " " }')"
same "L2 breakdown (cumulative) differenced per kernel" \
	"$(q "SELECT group_concat(CAST(value AS INT), ' ') FROM series WHERE run=$R AND metric='L2_cache_stats_breakdown[GLOBAL_ACC_R][TOTAL_ACCESS]'")" \
	"$(zcat "$Q/stdout.log.gz" | awk '/L2_cache_stats_breakdown\[GLOBAL_ACC_R\]\[TOTAL_ACCESS\]/ { printf "%s%d", sep, $3 - p; p = $3; sep = " " }')"
same "L1D_total_cache_accesses differenced per kernel" \
	"$(q "SELECT group_concat(CAST(value AS INT), ' ') FROM series WHERE run=$R AND metric='L1D_total_cache_accesses'")" \
	"$(zcat "$Q/stdout.log.gz" | awk '/L1D_total_cache_accesses/ { printf "%s%d", sep, $3 - p; p = $3; sep = " " }')"
same "'total dram reads' keeps its printed name" \
	"$(q "SELECT group_concat(CAST(value AS INT), ' ') FROM series WHERE run=$R AND metric='total dram reads'")" \
	"$(zcat "$Q/stdout.log.gz" | awk '/^total dram reads = / { printf "%s%d", sep, $5 - p; p = $5; sep = " " }')"
same "per-kernel values stay as printed (gpu_ipc)" "$(q "SELECT group_concat(value, ' ') FROM series WHERE run=$R AND metric='gpu_ipc'")" \
	"$(zcat "$Q/stdout.log.gz" | awk '/^gpu_ipc = / { printf "%s%s", sep, $3; sep = " " }')"
same "-nan% occupancy is absent, not 0" "$(q "SELECT count(*) FROM series WHERE run=$R AND metric='gpu_occupancy'")" 0
same "clock domains from 'GPGPU-Sim uArch: clock freqs'" \
	"$(q "SELECT CAST(clock_hz AS INT) || ' ' || json_extract(meta, '\$.clock_domains_hz.dram') FROM runs WHERE id=$R")" "1132000000 850000000"

# --- AccelWattch traces (real) ---
P=$Q/gpgpusim_power_trace_report__Wed-Dec--2-10-17-51-2026.log.gz
"$CS" import accelwattch "$P" --db "$DB" --name power --sample-cycles 500 >"$T/out" 2>&1 && ok "power trace imported" || no "power trace" "$T/out"
R=$(q "SELECT id FROM runs WHERE name='power'")
same "one sample per row" "$(q "SELECT samples FROM runs WHERE id=$R")" "$(zcat "$P" | tail -n +2 | grep -c .)"
same "power sums as in the file" "$(q "SELECT printf('%.3f', sum(value)) FROM series WHERE run=$R AND metric='power'")" \
	"$(zcat "$P" | awk -F, 'NR > 1 { s += $1 } END { printf "%.3f", s }')"
same "the run-together CONSTPSTATICP header is two metrics" \
	"$(q "SELECT printf('%.3f %.3f', sum(CASE WHEN metric='CONSTP' THEN value END), sum(CASE WHEN metric='STATICP' THEN value END)) FROM series WHERE run=$R AND metric IN ('CONSTP','STATICP')")" \
	"$(zcat "$P" | awk -F, 'NR > 1 { c += $(NF - 2); s += $(NF - 1) } END { printf "%.3f %.3f", c, s }')"
M=$Q/gpgpusim_metric_trace_report__Wed-Dec--2-10-17-51-2026.log.gz
"$CS" import "$M" --db "$DB" --name mtrace >"$T/out" 2>&1
same "metric trace: L2_RH sums as in the file" "$(q "SELECT printf('%.0f', sum(s.value)) FROM series s JOIN runs r ON r.id = s.run WHERE r.name='mtrace' AND s.metric='L2_RH'")" \
	"$(zcat "$M" | awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "L2_RH") c = i } NR > 1 { s += $c } END { printf "%.0f", s }')"

# --- hand-written fixtures of the other formats ---
"$CS" import "$S/perf_counter_2026-12-02_10-17-51.csv.gz" --db "$DB" --name perf --map configs/metric-maps/accelsim-chiplet.map >"$T/out" 2>&1 &&
	grep -q 'looks like accelsim-perf' "$T/out" && ok "perf_counter CSV (multi-member, trailing commas) imported" || no "perf_counter" "$T/out"
R=$(q "SELECT id FROM runs WHERE name='perf'")
same "running totals become per-interval values (interchip_read_requests)" \
	"$(q "SELECT group_concat(CAST(value AS INT), ' ') FROM series WHERE run=$R AND metric='interchip_read_requests'")" "7 14 21 28 35 42 49 56"
same "x axis is gpu_tot_sim_cycle + gpu_sim_cycle" "$(q "SELECT group_concat(t1, ' ') FROM series WHERE run=$R AND metric='occupancy'")" \
	"500 1000 1500 2000 2500 3000 3500 4000"
same "a restarting per-kernel counter (gpu_sim_insn) is not negative" \
	"$(q "SELECT min(value) >= 0 FROM series WHERE run=$R AND metric='gpu_sim_insn'")" 1
same "NAME_<i> columns are also summed into NAME" "$(q "SELECT CAST(sum(value) AS INT) FROM series WHERE run=$R AND metric='m_num_sim_winsn'")" 6840
same "the chiplet map adds interchip_requests and smsp__inst_executed.sum" \
	"$(q "SELECT group_concat(metric || '=' || CAST(s AS INT), ' ') FROM (SELECT metric, sum(value) s FROM series WHERE run=$R AND metric IN ('interchip_requests','smsp__inst_executed.sum') GROUP BY metric ORDER BY metric)")" \
	"interchip_requests=360 smsp__inst_executed.sum=6840"
same "mapped names are stored alongside the raw ones" "$(q "SELECT count(*) FROM metrics WHERE run=$R AND name IN ('interchip_read_requests','interchip_requests')")" 2
"$CS" import "$S/pm_cupti_output_1.csv" --db "$DB" --name pm >"$T/out" 2>&1
same "pm_cupti_tools CSV is a hw run in ns, the repeated session header skipped" \
	"$(q "SELECT kind || ' ' || time_unit || ' ' || samples FROM runs WHERE name='pm'")" "hw ns 10"
# The same with the header quoted, ", " between fields, and the session
# header repeated quoted: the CSV tokenizer reads it as the tools write it.
python3 - "$S/pm_cupti_output_1.csv" "$T/pmq.csv" <<'EOF'
import sys
lines = open(sys.argv[1]).read().splitlines()
head = ", ".join('"%s"' % h for h in lines[0].split(","))
out = [head] + [", ".join(l.split(",")) if not l.startswith("sm__") else head for l in lines[1:]]
open(sys.argv[2], "w").write("\n".join(out) + "\n")
EOF
"$CS" import pm-cupti-csv "$T/pmq.csv" --db "$DB" --name pmq >"$T/out" 2>&1
same "pm_cupti_tools CSV with quoted headers and ', ' separators: the same 10 samples, the quoted repeat skipped" \
	"$(q "SELECT (SELECT samples FROM runs WHERE name='pmq') || ' ' || (SELECT CAST(sum(value) AS INT) FROM series s JOIN runs r ON r.id = s.run WHERE r.name='pmq' AND metric='sm__inst_executed.sum')")" \
	"10 $(python3 -c "import csv; print(sum(int(r['sm__inst_executed.sum']) for r in csv.DictReader(open('$S/pm_cupti_output_1.csv')) if r['sm__inst_executed.sum'] != 'sm__inst_executed.sum'))")"
"$CS" import "$S/kernbench_series.csv" --db "$DB" --name kb >"$T/out" 2>&1
same "KernBench series: component.stat metrics, ns" \
	"$(q "SELECT (SELECT time_unit FROM runs WHERE name='kb') || ' ' || group_concat(name, ' ') FROM (SELECT m.name FROM metrics m JOIN runs r ON r.id = m.run WHERE r.name='kb' ORDER BY m.name)")" "ns hbm_ctrl.reads pcie_ep.bytes"
"$CS" import csv "$S/long.csv" --db "$DB" --name long --time-unit cycle >"$T/out" 2>&1
same "long CSV: rows with one time are one sample" \
	"$(q "SELECT samples || ' ' || kind FROM runs WHERE name='long'")" "4 sim"
"$CS" import accelsim-log "$S/gpgpusim3-stdout.log" --db "$DB" --name old >"$T/out" 2>&1
R=$(q "SELECT id FROM runs WHERE name='old'")
same "old stdout form: a stat first printed in kernel 2 is 0 in kernel 1" \
	"$(q "SELECT group_concat(CAST(value AS INT), ' ') FROM series WHERE run=$R AND metric='L2_cache_stats_breakdown[GLOBAL_ACC_W][MISS]'")" "0 8192"
same "old stdout form: cumulative L2 misses differenced" \
	"$(q "SELECT group_concat(CAST(value AS INT), ' ') FROM series WHERE run=$R AND metric='L2_total_cache_misses'")" "32768 16384"

# --- bad input: clear errors, nothing stored, other runs untouched ---
before=$(q "SELECT count(*) || ':' || sum(samples) FROM runs")
bad() { # DESC NEEDLE CMD...
	desc=$1 needle=$2
	shift 2
	"$@" >"$T/bad" 2>&1
	rc=$?
	if [ $rc -ne 0 ] && grep -qF -- "$needle" "$T/bad" && [ "$(q "SELECT count(*) || ':' || sum(samples) FROM runs")" = "$before" ]; then
		ok "$desc"
	else
		echo "rc=$rc" >>"$T/bad"
		no "$desc" "$T/bad"
	fi
}
head -c 200000 "$AV" >"$T/trunc.gz"
bad "truncated gzip: byte offset and complete lines, nothing stored" "truncated gzip stream: the data ends inside member" \
	"$CS" import aerialvision "$T/trunc.gz" --db "$DB"
zcat "$AV" | awk '/^shaderinsncount:/ && ++k == 5 { $NF = ""; sub(/ +$/, "") } { print }' | gzip >"$T/sm.gz"
line=$(zcat "$T/sm.gz" | grep -n '^shaderinsncount:' | sed -n 5p | cut -d: -f1)
bad "a per-SM line with 79 of 80 values names the line" "sm.gz:$line: expected 80 values after shaderinsncount (one per SM, as in the first per-SM line), found 79" \
	"$CS" import aerialvision "$T/sm.gz" --db "$DB"
zcat "$AV" | awk 'NR == 3000 { print "this is not a visualizer line" } { print }' | gzip >"$T/garbage.gz"
bad "a garbage line names the line and what was expected" "garbage.gz:3000: expected 'key: values'" \
	"$CS" import aerialvision "$T/garbage.gz" --db "$DB"
zcat "$AV" | sed 's/^Ltworeadhit: 0$/Ltworeadhit: zero/' | gzip >"$T/nan.gz"
bad "a non-number names the key" "'zero' is not a number (in the values of Ltworeadhit)" \
	"$CS" import aerialvision "$T/nan.gz" --db "$DB"
zcat "$AV" | sed '96s/^dramglobal_acc_r: 0 1 0$/dramglobal_acc_r: 0 1e36 0/' | gzip >"$T/bank.gz"
bad "a bank number far out of range names the line" "bank.gz:96: expected 'dramglobal_acc_r: <channel> <bank> <value>' with channel and bank whole numbers below 4096" \
	"$CS" import aerialvision "$T/bank.gz" --db "$DB"
bad "the wrong format for a file (stdout given as aerialvision)" "stdout.log.gz:1: expected 'key: values'" \
	"$CS" import aerialvision "$Q/stdout.log.gz" --db "$DB"
bad "the wrong format for a file (long CSV given as accelsim-perf)" "expected gpu_tot_sim_cycle and gpu_sim_cycle columns" \
	"$CS" import accelsim-perf "$S/long.csv" --db "$DB"
bad "a visualizer log given as accelsim-log" "no 'kernel_name = ' line" \
	"$CS" import accelsim-log "$AV" --db "$DB"
printf 'hello\nworld\n' >"$T/what.txt"
bad "an unknown format is refused by detection" "cannot tell the format from the content" \
	"$CS" import "$T/what.txt" --db "$DB"
zcat "$S/perf_counter_2026-12-02_10-17-51.csv.gz" | awk 'NR == 4 { sub(/,[^,]*,$/, ",") } { print }' >"$T/short.csv"
bad "a perf_counter row with a missing field" "short.csv:4: expected 17 values (one per header column), found 16" \
	"$CS" import accelsim-perf "$T/short.csv" --db "$DB"
printf 'lts__t_sectors.sum = L2_BW +\n' >"$T/bad.map"
bad "a map with a syntax error names file, line and column" "bad.map:1:29: expected a number" \
	"$CS" import "$Q/stdout.log.gz" --db "$DB" --map "$T/bad.map"
printf 'a = b\na = c\n' >"$T/dup.map"
bad "a map that maps one name twice" "dup.map:2:1: 'a' is already mapped on line 1" \
	"$CS" import "$Q/stdout.log.gz" --db "$DB" --map "$T/dup.map"
: >"$T/empty.gz"
bad "an empty file" "empty" "$CS" import accelwattch "$T/empty.gz" --db "$DB"
zcat "$AV" | awk '{ print } /^STmemlatdist:/ && ++k == 20 { exit }' | sed '$d' | gzip >"$T/cut.gz"
bad "a log that ends inside a sample" "the file ends inside sample 20" \
	"$CS" import aerialvision "$T/cut.gz" --db "$DB"
same "earlier runs are untouched after all of that" "$(q "SELECT count(*) FROM runs WHERE status='complete'")" "$(q "SELECT count(*) FROM runs")"

# --- through the daemon ---
SOCK="$T/d.sock"
"$CS" serve --db "$T/d.db" --socket "$SOCK" --listen 127.0.0.1:0 --log "$T/log" 2>"$T/stderr" &
DPID=$!
i=0
while [ $i -lt 2400 ] && ! grep -q 'http://' "$T/stderr" 2>/dev/null; do sleep 0.05; i=$((i + 1)); done
"$CS" import aerialvision "$AV" --socket "$SOCK" --name viad >"$T/out" 2>&1 && ok "import --socket sends a visualizer run to the daemon" || no "import via daemon" "$T/out"
"$CS" import aerialvision "$T/trunc.gz" --socket "$SOCK" --name broken >"$T/out" 2>&1
kill "$DPID"; wait "$DPID" 2>/dev/null; DPID=
same "the daemon stored the good run and discarded the truncated one" \
	"$("$CS" query --db "$T/d.db" "SELECT group_concat(name || ':' || status || ':' || samples) FROM runs" | tail -n 1 | tr -d '\r')" "viad:complete:40"
exit $fails
