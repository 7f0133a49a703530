#!/bin/sh
# Runs each test binary given (optionally under $CS_WRAP, e.g. valgrind) and
# then the end-to-end CLI script; prints one "N passed, N failed" line.
# cmocka prints its own per-binary summary above it.
passed=0
failed=0
for t in "$@"; do
	echo "== $t"
	if $CS_WRAP "$t"; then
		passed=$((passed + 1))
	else
		echo "FAILED: $t"
		failed=$((failed + 1))
	fi
done
if [ -z "$CS_SKIP_CLI" ]; then
	echo "== tests/cli.sh"
	if sh tests/cli.sh "${CS_BUILD:-build}"; then
		passed=$((passed + 1))
	else
		echo "FAILED: tests/cli.sh"
		failed=$((failed + 1))
	fi
fi
echo "test binaries: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
