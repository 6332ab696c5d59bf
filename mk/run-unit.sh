#!/usr/bin/env bash
# Run Criterion unit suites: mk/run-unit.sh <label> BIN...
# Every suite runs (a failing one does not hide the next); exits non-zero if
# any failed.  Criterion's own "Synthesis:" line follows each suite.
set -uo pipefail
cd "$(dirname "$0")/.."

label=$1
shift
if [ $# -eq 0 ]; then
	echo "unit ($label): no suites under tests/unit/"
	exit 0
fi

export MOAT=${MOAT:-$PWD/build/moat}
export MOAT_SRCDIR=$PWD
failed=()
for bin in "$@"; do
	echo "== unit ($label): $(basename "$bin")"
	# Criterion forks one process per test; --jobs bounds it on 2 cores.
	# Its global --timeout does not work in 2.4.1 (only a test's own
	# .timeout does), so a whole suite gets 300 s.
	if ! timeout -k 10 300 "$bin" --jobs="${NPROC:-2}"; then
		failed+=("$(basename "$bin")")
	fi
done
if [ ${#failed[@]} -gt 0 ]; then
	echo "unit ($label): FAILED: ${failed[*]}" >&2
	exit 1
fi
echo "unit ($label): all $# suites passed"
