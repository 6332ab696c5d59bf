#!/usr/bin/env bash
# Barrier: a fork whose parent dies before the sentry hears of it leaves no
# half-known process behind, and no guest signal reaches the caller's host
# process group. (tests/escape/lost_fork_event.c has the story.)
. "$(dirname "$0")/../e2e/lib.sh"

HERE=$(cd "$(dirname "$0")" && pwd)

t_lost_fork()
{
	local out=$E2E_TMP/lost.out
	gcc -O1 -pthread -o "$E2E_TMP/lost_fork_event" "$HERE/lost_fork_event.c" ||
		fail "cannot build the probe"
	# A process group of our own: a victim sleeps in it next to moat.
	setsid bash -c '
		trap "echo HOST-GROUP-SIGNALLED" USR1
		sleep 300 & v=$!
		timeout 120 "$1" do -- "$2" 150
		echo "moat-status $?"
		sleep 0.3
		kill -0 $v 2>/dev/null && echo victim-alive
		kill $v 2>/dev/null
	' _ "$MOAT" "$E2E_TMP/lost_fork_event" >"$out" 2>&1
	OUT=$(cat "$out")
	assert_not_contains "$OUT" "HOST-GROUP-SIGNALLED" "no guest signal reached the caller's process group"
	assert_contains "$OUT" "victim-alive" "a host process next to moat is untouched"
	assert_contains "$OUT" "no ghost" "every child of a dying forker is accounted for"
}

run_test "a lost fork event leaves no ghost and no host signal" t_lost_fork
e2e_done
