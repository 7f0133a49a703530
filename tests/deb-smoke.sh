#!/bin/sh
# The installed Debian package (make deb), from its installed paths only:
# /usr/bin/cyclescope --version, the metric catalog with an installed
# metric set, an import of an example, `serve` with the installed
# /etc/cyclescope.conf answering curl, the daemon as its unit starts it (its
# user, state directory and ExecStart line), the report with its inline
# figures and the installed uPlot for the UI, the unit through systemd-analyze verify. It runs in a
# private mount namespace where the repository lies under an empty tmpfs,
# from a temp dir, with a bare environment and the system's PATH, so
# nothing can come from the source tree or a build folder. After a purge,
# --purged checks that nothing the package installed or made is left.
# Root, Debian; CI runs it between apt-get install and apt-get purge.
# TAP-style.
#   sh tests/deb-smoke.sh
#   sh tests/deb-smoke.sh --purged build/cyclescope_VERSION_ARCH.deb
if [ "${1:-}" = "--purged" ]; then
	. tests/lib.sh
	deb=${2:?usage: tests/deb-smoke.sh --purged DEB}
	st=$(dpkg-query -W -f='${db:Status-Status}' cyclescope 2>/dev/null)
	[ -z "$st" ] || [ "$st" = not-installed ] && ok "dpkg has forgotten the package" ||
		no "dpkg still knows cyclescope: $st"
	# every file the .deb holds, the directories that are only its own,
	# and what its scripts and the daemon make
	left=""
	for f in $(dpkg-deb -c "$deb" | awk '$1 !~ /^d/ { sub(/^\./, "", $6); print $6 }') \
		/usr/lib/cyclescope /usr/share/cyclescope /usr/share/doc/cyclescope /var/lib/cyclescope \
		/var/log/cyclescope /run/cyclescope /etc/systemd/system/multi-user.target.wants/cyclescope.service; do
		[ -e "$f" ] || [ -L "$f" ] && left="$left $f"
	done
	left="$left$(find /var/lib/systemd/deb-systemd-helper-enabled /var/lib/systemd/deb-systemd-helper-masked \
		-name 'cyclescope*' 2>/dev/null | sed 's/^/ /' | tr -d '\n')"
	[ -z "$left" ] && ok "apt-get purge leaves none of its files, directories, data or unit links" ||
		no "left after the purge:$left"
	exit $fails
fi

# Outside the namespace: copy the inputs, then run this script's second half
# in a private mount namespace with the repository hidden.
if [ -z "${CS_SMOKE_INNER:-}" ]; then
	[ "$(id -u)" -eq 0 ] || { echo "tests/deb-smoke.sh: run as root (it checks the installed package)" >&2; exit 1; }
	dpkg-query -W -f='${db:Status-Status}' cyclescope 2>/dev/null | grep -qx installed ||
		{ echo "tests/deb-smoke.sh: the cyclescope package is not installed (make deb; apt-get install ./build/cyclescope_*.deb)" >&2; exit 1; }
	repo=$(pwd -P)
	W=$(mktemp -d)
	cp tests/deb-smoke.sh tests/lib.sh docs/examples/h100-l2-overlap.csv "$W/" || exit 1
	unshare --mount --propagation private true 2>/dev/null ||
		{ echo "tests/deb-smoke.sh: cannot make a mount namespace (unshare), so cannot hide the repository" >&2; exit 1; }
	unshare --mount --propagation private sh -c 'mount -t tmpfs -o size=1m,mode=0555 cs-hidden "$1" && cd "$2" &&
		exec env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME="$2" LANG=C.UTF-8 CS_SMOKE_INNER=1 CS_SMOKE_REPO="$1" \
		sh "$2/deb-smoke.sh"' _ "$repo" "$W"
	rc=$?
	rm -rf "$W"
	exit $rc
fi

. ./lib.sh
cd "$T" || exit 1
cp "$HOME/h100-l2-overlap.csv" .
[ -z "$(ls -A "$CS_SMOKE_REPO")" ] && ok "the repository is hidden ($CS_SMOKE_REPO is empty here)" || no "hiding $CS_SMOKE_REPO"
CS=$(command -v cyclescope)
[ "$CS" = /usr/bin/cyclescope ] && ok "cyclescope on PATH is the installed /usr/bin/cyclescope" || no "cyclescope on PATH: '$CS'"

want=$(dpkg-query -W -f='${Version}' cyclescope)
cyclescope --version >out 2>&1 && [ "$(cat out)" = "cyclescope $want" ] &&
	ok "cyclescope --version says the package's version ($want)" || no "--version (package $want)" out

if [ -f /usr/lib/cyclescope/libcyclescope_collector.so ]; then
	cyclescope metrics --chip GH100 --check @hopper-l2 >out 2>&1 && grep -q "fit one PM-sampling pass" out &&
		ok "metrics --chip GH100 --check @hopper-l2: the installed collector and metric set" || no "metrics --check @hopper-l2" out
else
	echo "# the package has no collector (built without the CUDA toolkit): metrics --check is not tried"
fi

cyclescope import csv h100-l2-overlap.csv --db smoke.db --name overlap >out 2>&1 &&
	cyclescope runs --db smoke.db >runs 2>&1 && grep -q overlap runs &&
	ok "import csv of docs/examples/h100-l2-overlap.csv, then runs lists it" || no "import of the example" out

# wait_port FILE: PORT from a starting daemon's announcement in FILE
wait_port() {
	PORT=
	for _ in $(seq 100); do
		PORT=$(sed -n 's/^cyclescope serve:.*http:\/\/127\.0\.0\.1:\([0-9]*\)\/.*/\1/p' "$1" | head -n 1)
		[ -n "$PORT" ] && break
		sleep 0.1
	done
}

# serve with the installed config, on any free port, answering curl
cyclescope serve --config /etc/cyclescope.conf --db smoke.db --socket "$T/ingest.sock" --listen 127.0.0.1:0 \
	>serve.out 2>serve.err &
DPID=$!
wait_port serve.err
U="http://127.0.0.1:$PORT/api/v1"
[ -n "$PORT" ] && curl -fsS "$U/health" >health 2>&1 && curl -fsS "$U/runs" >runs.json 2>&1 && grep -q '"overlap"' runs.json &&
	curl -fsS "$U/runs/1/series.csv?metric=lts__t_sectors.sum&buckets=10" >s.csv 2>&1 && [ "$(wc -l <s.csv)" -eq 11 ] &&
	ok "serve --config /etc/cyclescope.conf answers curl: health, runs, series.csv" || no "serve and curl" serve.err
kill -TERM "$DPID" 2>/dev/null
wait "$DPID" && grep -q "everything committed" serve.err && ok "serve stops on SIGTERM with everything committed" ||
	no "serve stop" serve.err
DPID=

# as the unit starts it: its user (sysusers.d), its state directory
# (tmpfiles.d), its ExecStart line, its runtime directory (made here, as
# systemd's RuntimeDirectory= would), on any free port
U_=/lib/systemd/system/cyclescope.service
getent passwd cyclescope | grep -q ':/var/lib/cyclescope:' && getent group cyclescope >/dev/null &&
	[ "$(stat -c %U:%G:%a /var/lib/cyclescope)" = cyclescope:cyclescope:750 ] &&
	ok "the postinst made the cyclescope user and group and /var/lib/cyclescope (cyclescope, 0750)" ||
	no "user and state directory: $(getent passwd cyclescope) $(stat -c %U:%G:%a /var/lib/cyclescope 2>&1)"
exe=$(sed -n 's/^ExecStart=//p' "$U_")
install -d -m 0750 -o cyclescope -g cyclescope /run/cyclescope
# shellcheck disable=SC2086 # the unit's ExecStart, word-split as systemd does for it
(cd /var/lib/cyclescope && CYCLESCOPE_LISTEN=127.0.0.1:0 exec setpriv --reuid=cyclescope --regid=cyclescope \
	--init-groups -- $exe) \
	>"$T/unit.out" 2>"$T/unit.err" &
DPID=$!
wait_port unit.err
[ -n "$PORT" ] && curl -fsS "http://127.0.0.1:$PORT/api/v1/health" >/dev/null 2>&1 &&
	[ "$(stat -c %U:%a /run/cyclescope/ingest.sock 2>&1)" = cyclescope:660 ] &&
	[ "$(stat -c %U /var/lib/cyclescope/cyclescope.db 2>&1)" = cyclescope ] &&
	ok "the unit's ExecStart, as the cyclescope user: its database in /var/lib/cyclescope, socket 0660 in /run/cyclescope" ||
	no "the unit's ExecStart ($exe)" unit.err
kill -TERM "$DPID" 2>/dev/null
wait "$DPID" && grep -q "everything committed" "$T/unit.err" && [ ! -e /run/cyclescope/ingest.sock ] &&
	ok "SIGTERM stops it cleanly and it removes its socket" || no "the unit's daemon stopping" "$T/unit.err"
DPID=
rm -rf /run/cyclescope

cyclescope report --db smoke.db --hw overlap --sim overlap --hw-metric lts__t_sectors.sum \
	--sim-metric lts__t_sectors.sum -o r.html >out 2>&1
[ -s r.html ] && grep -q '<svg ' r.html && ! grep -q '<script[^>]*src=' r.html &&
	ok "report writes a self-contained page, its figures inline SVG" || no "report" out
js=/usr/share/cyclescope/web-assets/node_modules/uplot/dist/uPlot.iife.min.js
if [ -f "$js" ]; then
	cyclescope --version --verbose >out 2>&1 && grep -q '^web assets (uPlot): /usr/bin/../share/cyclescope/web-assets' out &&
		ok "the UI's uPlot is installed and found" || no "installed uPlot" out
else
	no "the package has no uPlot ($js): built without npm?"
fi

if command -v systemd-analyze >/dev/null 2>&1; then
	man=no
	command -v man >/dev/null 2>&1 && [ -f /usr/share/man/man1/cyclescope-serve.1.gz ] && man=yes
	systemd-analyze verify --man="$man" "$U_" >out 2>&1 && grep -q '^Type=notify' "$U_" &&
		[ -L /etc/systemd/system/multi-user.target.wants/cyclescope.service ] &&
		ok "the installed unit (Type=notify) passes systemd-analyze verify and is enabled" || no "unit" out
fi
exit $fails
