#!/usr/bin/env bash
# Robustness: requests that once hung or corrupted the sentry (a timer
# interval that overflowed, unbounded message queues, a double free on
# EMFILE) give what Linux gives, and the sandbox runs to its end.
. "$(dirname "$0")/../e2e/lib.sh"

HERE=$(cd "$(dirname "$0")" && pwd)

t_hostile_resources_match_native()
{
	cp "$HERE/hostile_resources.py" "$E2E_TMP/hostile_resources.py"
	chmod 644 "$E2E_TMP/hostile_resources.py"
	assert_same_as_native $PY "$E2E_TMP/hostile_resources.py"
	assert_contains "$OUT" "sentry alive"
}

run_test hostile_resources_match_native t_hostile_resources_match_native
