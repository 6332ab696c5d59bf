#!/usr/bin/env bash
# tests/e2e/run.sh [FILTER]: run every tests/e2e/test_*.sh and
# tests/escape/test_*.sh against $MOAT (default build/moat) and end with
# exactly one line "N passed, N failed"; exit non-zero if any case failed.
# FILTER (or E2E_FILTER) keeps only cases whose "file:name" contains it.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"

export MOAT=${MOAT:-$root/build/moat}
case $MOAT in /*) ;; *) MOAT=$root/$MOAT ;; esac
export E2E_FILTER=${1:-${E2E_FILTER:-}}
# Time budget for the whole run (E2E_BUDGET seconds, default 900): past it,
# remaining cases fail at once instead of each waiting out its timeout, so a
# sandbox that hangs on everything cannot hold CI for an hour.
export E2E_DEADLINE=$(($(date +%s) + ${E2E_BUDGET:-900}))
export E2E_RESULTS
E2E_RESULTS=$(mktemp /tmp/moat-e2e-results.XXXXXX)
trap 'rm -f "$E2E_RESULTS"' EXIT

if [ ! -x "$MOAT" ]; then
	echo "e2e: $MOAT does not exist or is not executable (run make)" >&2
fi

extra=0
for f in tests/e2e/test_*.sh tests/escape/test_*.sh tests/oci/test_*.sh; do
	[ -f "$f" ] || continue
	echo "== $f"
	before=$(grep -c '^RESULT FAIL' "$E2E_RESULTS")
	bash "$f"
	rc=$?
	after=$(grep -c '^RESULT FAIL' "$E2E_RESULTS")
	# A file that exits non-zero without a failed case died on its own
	# (syntax error, missing helper): that is a failure too.
	if [ "$rc" -ne 0 ] && [ "$after" -eq "$before" ]; then
		echo "FAIL  $f exited $rc without reporting a failed case"
		extra=$((extra + 1))
	fi
done

passed=$(grep -c '^RESULT PASS' "$E2E_RESULTS")
failed=$(($(grep -c '^RESULT FAIL' "$E2E_RESULTS") + extra))
if [ "$failed" -gt 0 ]; then
	echo
	echo "failed cases:"
	grep '^RESULT FAIL' "$E2E_RESULTS" | sed 's/^RESULT FAIL /  /'
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
