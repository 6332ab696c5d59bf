#!/usr/bin/env bash
# sentry/clock.c: setting the clock is refused as Linux refuses a process
# without CAP_SYS_TIME (EPERM, after its EINVAL and EFAULT checks), adjtimex
# reads the clock's state, and the CPU-time clocks of other threads and
# processes (whose clock ids encode a pid: the guest's, virtual) read as
# natively. tests/e2e/clocks.c prints the same natively and inside.
. "$(dirname "$0")/lib.sh"

HERE=$(cd "$(dirname "$0")" && pwd)

# native_unprivileged CMD...: CMD as a user without CAP_SYS_TIME, as every
# guest is on the host.
native_unprivileged()
{
	if [ "$(id -u)" = 0 ]; then
		native setpriv --reuid=65534 --regid=65534 --clear-groups \
			--inh-caps=-all --bounding-set=-all "$@"
	else
		native "$@"
	fi
}

t_clocks_as_native()
{
	local want
	gcc -O1 -pthread -o "$E2E_TMP/clocks" "$HERE/clocks.c" ||
		fail "cannot build clocks.c"
	chmod 755 "$E2E_TMP/clocks"
	capture native_unprivileged "$E2E_TMP/clocks"
	want=$OUT
	assert_contains "$want" "child process clock: ok, at least 40 ms: yes" \
		"the native run worked"
	capture moat do -- "$E2E_TMP/clocks"
	assert_eq 0 "$STATUS" "the program runs to the end"
	assert_eq "$want" "$OUT" "clock setting and CPU-time clocks as natively"
}

run_test "clocks: setting refused, CPU clocks of others readable" t_clocks_as_native
e2e_done
