#!/bin/sh
# The package under a real systemd: boots this machine's own root as a
# throwaway container (systemd-nspawn on an overlay of /, every write in a
# tmpfs), installs DEB there and checks what only systemd can show: the
# unit starts as Type=notify (active only once READY=1 came, with its
# status text), is hardened and still serves HTTP and the ingest socket as
# the cyclescope user, `systemctl reload` reopens its log file, `systemctl
# stop` brings STOPPING=1 and a clean exit, and purge removes it. Root;
# skipped without systemd-nspawn (systemd-container) or overlayfs. About
# 10 s. TAP-style.
#   sh tests/deb-systemd.sh build/cyclescope_VERSION_ARCH.deb
deb=${1:?usage: tests/deb-systemd.sh DEB}
[ "$(id -u)" -eq 0 ] || { echo "tests/deb-systemd.sh: run as root" >&2; exit 1; }
command -v systemd-nspawn >/dev/null 2>&1 ||
	{ echo "# no systemd-nspawn (apt-get install systemd-container): the unit is not run under systemd"; exit 0; }
W=$(mktemp -d)
R="$W/root"
cleanup() {
	umount "$R" 2>/dev/null
	umount "$W/upper" 2>/dev/null
	rm -rf "$W"
}
trap cleanup EXIT
mkdir -p "$W/upper" "$R"
if ! mount -t tmpfs -o size=1g cs-systemd "$W/upper" || ! mkdir "$W/upper/u" "$W/upper/w" ||
	! mount -t overlay cs-systemd -o "lowerdir=/,upperdir=$W/upper/u,workdir=$W/upper/w" "$R"; then
	echo "# cannot make an overlay of / here: the unit is not run under systemd"
	exit 0
fi
# A container of its own: a new machine id, and no policy-rc.d forbidding
# the postinst to start services (container images often have one).
systemd-id128 new >"$R/etc/machine-id"
rm -f "$R/usr/sbin/policy-rc.d"
mkdir -p "$R/cs-test"
cp "$deb" "$R/cs-test/cyclescope.deb"
cp docs/examples/h100-l2-overlap.csv "$R/cs-test/"
cat >"$R/etc/systemd/system/cs-test.service" <<'EOF'
[Unit]
Description=cyclescope package test
After=multi-user.target
SuccessAction=poweroff-force
FailureAction=poweroff-force
[Service]
Type=oneshot
ExecStart=/bin/sh /cs-test/inner.sh
StandardOutput=file:/cs-test/result
StandardError=inherit
EOF
cat >"$R/cs-test/inner.sh" <<'EOF'
# runs inside the container, as the cs-test unit
n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
no() { n=$((n + 1)); echo "not ok $n - $1"; [ -n "$2" ] && sed 's/^/#   /' "$2" | head -n 30; }
show() { systemctl show -p "$1" --value cyclescope; }
dpkg -i /cs-test/cyclescope.deb >/cs-test/dpkg.out 2>&1
# the postinst started it; `systemctl start` of a Type=notify unit returns
# once READY=1 came (or the start failed)
systemctl start cyclescope
[ "$(systemctl is-enabled cyclescope)" = enabled ] && [ "$(show ActiveState)" = active ] &&
	[ "$(show Type)" = notify ] && show StatusText | grep -q '^serving /var/lib/cyclescope/cyclescope.db on http://127.0.0.1:7070/' &&
	ok "installed, enabled and active as Type=notify: READY=1 with its status text" ||
	{ journalctl -u cyclescope --no-pager >/cs-test/j; no "the unit did not come up" /cs-test/j; }
curl -fsS http://127.0.0.1:7070/api/v1/health >/cs-test/h 2>&1 && grep -q '"status":"ok"' /cs-test/h &&
	[ "$(stat -c %U:%a /run/cyclescope/ingest.sock)" = cyclescope:660 ] &&
	[ "$(stat -c %U /var/lib/cyclescope/cyclescope.db)" = cyclescope ] &&
	[ "$(ps -o user= -p "$(show MainPID)")" = cyclescope ] &&
	ok "under the hardened unit it runs as cyclescope, answers HTTP, owns its database and socket" || no "HTTP, user or files" /cs-test/h
cyclescope import csv /cs-test/h100-l2-overlap.csv --socket /run/cyclescope/ingest.sock --name viasock >/cs-test/i 2>&1 &&
	curl -fsS http://127.0.0.1:7070/api/v1/runs | grep -q '"name":"viasock"' &&
	ok "a producer's run through /run/cyclescope/ingest.sock is served" || no "import through the socket" /cs-test/i
sed -i 's|^log =$|log = /var/log/cyclescope/cyclescope.log|' /etc/cyclescope.conf
systemctl restart cyclescope
mv /var/log/cyclescope/cyclescope.log /var/log/cyclescope/cyclescope.log.1
systemctl reload cyclescope
for _ in 1 2 3 4 5 6 7 8 9 10; do [ -f /var/log/cyclescope/cyclescope.log ] && break; sleep 0.2; done
grep -q 'log reopened' /var/log/cyclescope/cyclescope.log 2>/dev/null && [ "$(show ActiveState)" = active ] &&
	ok "systemctl reload (SIGHUP) reopens the log file in /var/log/cyclescope" ||
	{ journalctl -u cyclescope --no-pager >/cs-test/j; no "reload" /cs-test/j; }
systemctl stop cyclescope
journalctl -u cyclescope --no-pager >/cs-test/j
[ "$(show Result)" = success ] && [ "$(show ExecMainStatus)" = 0 ] &&
	[ "$(show StatusText)" = "stopping: draining the ingest queue" ] && grep -q "everything committed" /cs-test/j &&
	ok "systemctl stop: STOPPING=1, everything committed, exit 0" || no "stop" /cs-test/j
apt-get purge -y cyclescope >/cs-test/purge.out 2>&1
[ ! -e /var/lib/cyclescope ] && [ ! -e /var/log/cyclescope ] && [ ! -e /etc/cyclescope.conf ] &&
	[ ! -e /etc/systemd/system/multi-user.target.wants/cyclescope.service ] &&
	ok "purge leaves nothing: database, logs, config and unit link gone" || no "purge" /cs-test/purge.out
EOF
timeout 120 systemd-nspawn -q -D "$R" --register=no --keep-unit --link-journal=no -b --console=pipe \
	-- systemd.wants=cs-test.service >"$W/boot.log" 2>&1
if [ -s "$R/cs-test/result" ]; then
	cat "$R/cs-test/result"
else
	echo "not ok 1 - the container gave no result"
	tail -n 30 "$W/boot.log" | sed 's/^/#   /'
fi
! grep -q '^not ok' "$R/cs-test/result" 2>/dev/null && [ "$(grep -c '^ok' "$R/cs-test/result")" -eq 6 ]
