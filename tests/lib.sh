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
# refused STATE_SQL DESC NEEDLE CMD...: CMD fails, its output says NEEDLE,
# and STATE_SQL (through the suite's q) reads the same after as before:
# nothing was stored
refused() {
	state=$1 desc=$2 needle=$3
	shift 3
	before=$(q "$state")
	"$@" >"$T/refused" 2>&1
	rc=$?
	if [ $rc -ne 0 ] && grep -qF -- "$needle" "$T/refused" && [ "$(q "$state")" = "$before" ]; then
		ok "$desc"
	else
		echo "rc=$rc" >>"$T/refused"
		no "$desc" "$T/refused"
	fi
}
