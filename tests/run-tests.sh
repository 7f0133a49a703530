#!/bin/sh
# Runs each cmocka test binary given (under $CS_WRAP, e.g. valgrind, when
# set), then the end-to-end CLI checks (tests/cli.sh), and ends with one
# line "tests: N passed, N failed" counting every test case.
passed=0
failed=0
broken=""
log=$(mktemp)
for t in "$@"; do
	echo "== $t"
	$CS_WRAP "$t" >"$log" 2>&1
	rc=$?
	cat "$log"
	p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test(s)\./\1/p' "$log" | tail -n 1)
	f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test(s), listed below:/\1/p' "$log" | tail -n 1)
	passed=$((passed + ${p:-0}))
	failed=$((failed + ${f:-0}))
	if [ "$rc" -ne 0 ] && [ -z "$f" ]; then
		# crashed or died before cmocka could report
		failed=$((failed + 1))
	fi
	[ "$rc" -ne 0 ] && broken="$broken $t"
done
if [ -z "$CS_SKIP_CLI" ]; then
	# The GPU bundle's offline self-test: in the plain build only (it
	# packs that build's binaries).
	gpu_bundle=$([ -z "$CS_SAN$CS_WRAP" ] && echo tests/gpu-bundle.sh tests/install.sh)
	for script in tests/cli.sh tests/daemon.sh tests/collector.sh tests/live.sh tests/simbridge.sh tests/formats.sh tests/jobs.sh tests/concurrency.sh tests/interop.sh tests/correlate.sh tests/suite.sh tests/figures.sh tests/ui.sh tests/fleet.sh tests/reliability.sh tests/stress.sh tests/docs.sh $gpu_bundle; do
		echo "== $script"
		sh "$script" "${CS_BUILD:-build}" >"$log" 2>&1
		rc=$?
		cat "$log"
		p=$(grep -c '^ok ' "$log")
		f=$(grep -c '^not ok ' "$log")
		passed=$((passed + p))
		failed=$((failed + f))
		if [ "$rc" -ne 0 ]; then
			[ "$f" -eq 0 ] && failed=$((failed + 1))
			broken="$broken $script"
		fi
	done
fi
rm -f "$log"
[ -n "$broken" ] && echo "failing:$broken"
echo "tests: $passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ -z "$broken" ]
