#!/bin/sh
# `make install` / `make uninstall`: an installed copy, moved elsewhere and
# run from another directory, finds uPlot (the report), the collector
# library (`run`) and the metric sets (`metrics --check @SET`) in its own
# PREFIX; uninstall leaves nothing. The plain build only (it installs that
# build's binaries). TAP-style.
#   sh tests/install.sh [BUILD_DIR]
B=${1:-build}
. tests/lib.sh
R="$T/root"
make -s install BUILD="$B" DESTDIR="$R" PREFIX=/usr >"$T/out" 2>&1 &&
	[ -x "$R/usr/bin/cyclescope" ] && [ -f "$R/usr/lib/cyclescope/cyclescope_series.so" ] &&
	[ -f "$R/usr/share/cyclescope/metric-sets/general.txt" ] && [ -f "$R/usr/share/cyclescope/metric-maps/accelsim-volta.map" ] &&
	ok "make install DESTDIR=... PREFIX=/usr: the binary, the SQLite extension, metric sets and maps" || no "make install" "$T/out"
# moved: everything is found relative to the binary
mkdir -p "$T/opt" "$T/work"
cp -r "$R/usr" "$T/opt/cs"
I="$T/opt/cs/bin/cyclescope"
cd "$T/work" || exit 1
"$I" import "$OLDPWD/tests/fixtures/accelsim-qv100/stdout.log.gz" --db w.db --name simk >/dev/null 2>&1
if [ -f "$OLDPWD/$B/web-assets/node_modules/uplot/dist/uPlot.iife.min.js" ]; then
	"$I" report --db w.db --hw simk --sim simk --hw-metric gpu_sim_insn --sim-metric gpu_sim_insn -o r.html >"$T/out" 2>&1 &&
		grep -q 'uPlot' r.html && ok "an installed copy, moved elsewhere, writes the report with its own uPlot" || no "installed report" "$T/out"
fi
if [ -f "$OLDPWD/$B/libcyclescope_collector.so" ]; then
	"$I" run --list-apis >"$T/out" 2>&1 && grep -q cudaMemcpy "$T/out" &&
		"$I" metrics --check @general >"$T/out2" 2>&1 && grep -q "fit one PM-sampling pass" "$T/out2" &&
		ok "it finds its collector (run --list-apis) and its metric sets (metrics --check @general)" || no "installed collector" "$T/out" "$T/out2"
else
	echo "# no collector in $B (built where the CUDA toolkit is): its installed lookup is not checked"
fi
cd "$OLDPWD" || exit 1
# bash completion, as installed: commands, a command's options, import formats
C="$R/usr/share/bash-completion/completions/cyclescope"
comp() { bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _cyclescope; echo "${COMPREPLY[*]}"' _ "$C" "$@"; }
[ -f "$C" ] && [ "$(comp cyclescope pha)" = "phases" ] && [ "$(comp cyclescope import --ran)" = "--ranges" ] &&
	comp cyclescope import nc | grep -q 'ncu-csv' && [ "$(comp cyclescope correlate --hw-c)" = "--hw-clock-mhz" ] &&
	ok "the installed bash completion completes commands, each command's options and import formats" || no "bash completion" "$C"
# the systemd unit as installed: systemd's own check (ExecStart must exist)
if command -v systemd-analyze >/dev/null 2>&1; then
	P="$T/prefix"
	make -s install BUILD="$B" PREFIX="$P" >"$T/out" 2>&1 &&
		grep -q "^ExecStart=$P/bin/cyclescope serve" "$P/lib/systemd/system/cyclescope.service" &&
		systemd-analyze verify "$P/lib/systemd/system/cyclescope.service" >>"$T/out" 2>&1 &&
		grep -q '^u cyclescope ' "$P/lib/sysusers.d/cyclescope.conf" &&
		ok "the installed unit passes systemd-analyze verify, and sysusers.d creates its user" || no "systemd unit" "$T/out"
	make -s uninstall BUILD="$B" PREFIX="$P" >/dev/null 2>&1
else
	echo "# systemd-analyze is not installed: the unit is not verified"
fi
make -s uninstall BUILD="$B" DESTDIR="$R" PREFIX=/usr >"$T/out" 2>&1 && [ -z "$(find "$R" -type f)" ] &&
	ok "make uninstall removes every installed file" || no "make uninstall" "$T/out"
exit $fails
