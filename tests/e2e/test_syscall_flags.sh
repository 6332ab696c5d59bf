#!/usr/bin/env bash
# Flags and options the syscall table called handled, which were accepted
# and ignored: close_range's CLOSE_RANGE_UNSHARE, waitid's P_PIDFD (and
# its rusage), msgrcv's MSG_COPY, fadvise64's advice, statx's flags and
# mask, MSG_OOB (which handed out ordinary data). tests/e2e/flag_audit.c
# prints the same natively and inside.
. "$(dirname "$0")/lib.sh"

HERE=$(cd "$(dirname "$0")" && pwd)

t_flags_as_native()
{
	local want
	gcc -O1 -o "$E2E_TMP/flag_audit" "$HERE/flag_audit.c" ||
		fail "cannot build flag_audit.c"
	chmod 755 "$E2E_TMP/flag_audit"
	capture native "$E2E_TMP/flag_audit"
	want=$OUT
	assert_contains "$want" "waitid P_PIDFD: ok" "the native run worked"
	capture moat do -- "$E2E_TMP/flag_audit"
	assert_eq 0 "$STATUS" "the program runs to the end"
	assert_eq "$want" "$OUT" "each flag does what it does natively"
}

run_test "flags the table called handled do what Linux does" t_flags_as_native
e2e_done
