# tests/lib.sh - what the shell suites share (sourced): a temp dir $T
# removed at exit with any daemon started into $DPID, and TAP-style
# ok/no counters ($n checks, $fails failures).
T=$(mktemp -d)
n=0
fails=0
DPID=
cleanup() { [ -n "$DPID" ] && kill -9 "$DPID" 2>/dev/null; rm -rf "$T"; }
trap cleanup EXIT
ok() { n=$((n + 1)); echo "ok $n - $1"; }
# no DESC [FILE]: a failed check, with the start of FILE as the reason
no() { n=$((n + 1)); fails=$((fails + 1)); echo "not ok $n - $1"; [ -n "$2" ] && [ -f "$2" ] && head -c 2000 "$2" | sed 's/^/#   /'; }
