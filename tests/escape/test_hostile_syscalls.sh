#!/usr/bin/env bash
# Robustness: every syscall number, called with hostile arguments (-1,
# kernel addresses, the stub's address, huge sizes) from throwaway
# children, must leave the sentry alive and answering. A sentry crash
# would end the sandbox with a status other than the program's.
. "$(dirname "$0")/../e2e/lib.sh"

HERE=$(cd "$(dirname "$0")" && pwd)
HOSTILE_BIN=""

build_hostile()
{
	HOSTILE_BIN=$E2E_TMP/hostile
	gcc -O1 -static -o "$HOSTILE_BIN" "$HERE/hostile_syscalls.c" ||
		fail "cannot build the hostile-syscall program"
}

t_hostile_seed()
{
	local seed=$1
	[ -n "$HOSTILE_BIN" ] || build_hostile
	capture moat do -- "$HOSTILE_BIN" "$seed"
	assert_eq 0 "$STATUS" "the sandbox survives seed $seed and exits with the program's status"
	assert_contains "$OUT" "ran " "the program ran to the end"
	# and the sentry still works afterwards
	capture moat do -- /bin/sh -c 'echo alive'
	assert_eq "alive" "$OUT" "a new sandbox runs after the hostile one"
}

run_test "hostile syscall arguments, seed 1" t_hostile_seed 1
run_test "hostile syscall arguments, seed 2" t_hostile_seed 2
run_test "hostile syscall arguments, seed 3" t_hostile_seed 3
e2e_done
