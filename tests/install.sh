#!/bin/sh
# `make install` / `make uninstall`: an installed copy, moved elsewhere and
# run from another directory, finds uPlot (the UI's), the collector
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
"$I" report --db w.db --hw simk --sim simk --hw-metric gpu_sim_insn --sim-metric gpu_sim_insn -o r.html >"$T/out" 2>&1 &&
	[ "$(grep -c '<svg ' r.html)" -ge 1 ] && "$I" plot simk --db w.db -o p.svg 2>>"$T/out" && grep -q '<svg ' p.svg &&
	ok "an installed copy, moved elsewhere, writes the report (inline figures) and a plot" || no "installed report and plot" "$T/out"
if [ -f "$OLDPWD/$B/web-assets/node_modules/uplot/dist/uPlot.iife.min.js" ]; then
	"$I" --version --verbose >"$T/out" 2>&1 && grep -q "web assets (uPlot): $T/opt/cs/bin/../share/cyclescope/web-assets" "$T/out" &&
		ok "it finds its own uPlot (the UI's), in its PREFIX" || no "installed uPlot" "$T/out"
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
[ -f "$C" ] && [ "$(comp cyclescope pha)" = "phases" ] && [ "$(comp cyclescope import --rang)" = "--ranges" ] &&
	comp cyclescope import nc | grep -q 'ncu-csv' && [ "$(comp cyclescope correlate --hw-c)" = "--hw-clock-mhz" ] &&
	ok "the installed bash completion completes commands, each command's options and import formats" || no "bash completion" "$C"
# the systemd unit as installed: systemd's own check (ExecStart must exist,
# and its Documentation= man page, found in the installed man pages)
if command -v systemd-analyze >/dev/null 2>&1; then
	P="$T/prefix"
	U="$P/lib/systemd/system/cyclescope.service"
	make -s install BUILD="$B" PREFIX="$P" >"$T/out" 2>&1
	man=no
	command -v man >/dev/null 2>&1 && [ -f "$P/share/man/man1/cyclescope-serve.1" ] && man=yes
	[ -x "$P/bin/cyclescope" ] &&
		grep -q "^ExecStart=$P/bin/cyclescope serve" "$U" &&
		MANPATH="$P/share/man:$(manpath 2>/dev/null)" systemd-analyze verify --man="$man" "$U" >>"$T/out" 2>&1 &&
		grep -q '^u cyclescope ' "$P/lib/sysusers.d/cyclescope.conf" &&
		grep -q '^d /var/lib/cyclescope 0750 cyclescope cyclescope ' "$P/lib/tmpfiles.d/cyclescope.conf" &&
		ok "the installed unit passes systemd-analyze verify, sysusers.d creates its user, tmpfiles.d its state directory" ||
		no "systemd unit" "$T/out"
	# what the issue asks of the unit: notify, hardening, the state
	# directory writable, reload by SIGHUP
	missing=""
	for d in Type=notify NoNewPrivileges=yes ProtectSystem=strict 'ReadWritePaths=/var/lib/cyclescope ' \
		StateDirectory=cyclescope RuntimeDirectory=cyclescope 'ExecReload=/bin/kill -HUP $MAINPID' User=cyclescope; do
		grep -qF "$d" "$U" || missing="$missing $d"
	done
	[ -z "$missing" ] && ok "the unit is Type=notify, hardened (ProtectSystem=strict, NoNewPrivileges), reloads with SIGHUP" ||
		no "the unit lacks:$missing"
	make -s uninstall BUILD="$B" PREFIX="$P" >/dev/null 2>&1
else
	echo "# systemd-analyze is not installed: the unit is not verified"
fi
# sd_notify, as systemd's Type=notify sees it: a Unix datagram socket in
# $NOTIFY_SOCKET. On READY=1 the listener asks the HTTP port it names at
# once (so READY=1 came after HTTP was up); then SIGTERM must bring
# STOPPING=1 before the daemon exits.
if command -v python3 >/dev/null 2>&1; then
	cat >"$T/notify.py" <<'EOF'
import re, socket, sys, urllib.request
path, log = sys.argv[1], open(sys.argv[2], "w", buffering=1)
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(path)
s.settimeout(20)
open(path + ".bound", "w").close()
while True:
    lines = s.recv(4096).decode().split("\n")
    log.write("".join(l + "\n" for l in lines))
    if "READY=1" in lines:
        port = re.search(r"http://127\.0\.0\.1:(\d+)/", "\n".join(lines)).group(1)
        try:
            with urllib.request.urlopen("http://127.0.0.1:%s/api/v1/health" % port, timeout=5) as r:
                log.write("health %d\n" % r.status)
        except Exception as e:
            log.write("health failed: %s\n" % e)
    if "STOPPING=1" in lines:
        break
EOF
	python3 "$T/notify.py" "$T/notify.sock" "$T/notify.log" 2>"$T/notify.err" &
	LPID=$!
	for _ in $(seq 50); do [ -e "$T/notify.sock.bound" ] && break; sleep 0.1; done
	NOTIFY_SOCKET="$T/notify.sock" "$B/cyclescope" serve --db "$T/n.db" --socket "$T/n.sock" --listen 127.0.0.1:0 \
		>"$T/n.out" 2>"$T/n.err" &
	DPID=$!
	for _ in $(seq 100); do grep -q '^health' "$T/notify.log" 2>/dev/null && break; sleep 0.1; done
	kill -TERM "$DPID" 2>/dev/null
	wait "$DPID"
	drc=$?
	DPID=
	wait "$LPID"
	cat "$T/notify.err" "$T/n.err" >>"$T/notify.log" 2>/dev/null
	[ "$drc" -eq 0 ] && [ "$(grep -E '^(READY=1|health|STOPPING=1)' "$T/notify.log" | tr '\n' ' ')" = "READY=1 health 200 STOPPING=1 " ] &&
		grep -q '^STATUS=serving ' "$T/notify.log" &&
		ok "serve under \$NOTIFY_SOCKET: READY=1 once HTTP answers, STOPPING=1 on SIGTERM, then exit 0" ||
		no "sd_notify READY/STOPPING" "$T/notify.log"
else
	echo "# no python3: sd_notify is not checked"
fi
make -s uninstall BUILD="$B" DESTDIR="$R" PREFIX=/usr >"$T/out" 2>&1 && [ -z "$(find "$R" -type f)" ] &&
	ok "make uninstall removes every installed file" || no "make uninstall" "$T/out"
exit $fails
