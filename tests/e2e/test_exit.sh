#!/usr/bin/env bash
# moat do returns the command's exit status, 128+N when it is killed by
# signal N, 127 when the command does not exist; errors name what failed.
. "$(dirname "$0")/lib.sh"

t_true() { assert_status 0 moat do -- /bin/true; }
t_false() { assert_status 1 moat do -- /bin/false; }
t_exit7() { assert_status 7 moat do -- /bin/sh -c 'exit 7'; }
t_exit255() { assert_status 255 moat do -- /bin/sh -c 'exit 255'; }

t_python_segv()
{
	assert_status 139 moat do -- $PY -c \
		'import os, signal; os.kill(os.getpid(), signal.SIGSEGV)'
}

t_sh_kill_segv() { assert_status 139 moat do -- /bin/sh -c 'kill -SEGV $$'; }
t_sh_kill_term() { assert_status 143 moat do -- /bin/sh -c 'kill -TERM $$'; }

# A real fault, not a kill(2): a NULL store through ctypes.
t_python_null_deref()
{
	assert_status 139 moat do -- $PY -c \
		'import ctypes; ctypes.memset(0, 1, 1)'
}

t_nonexistent_cmd()
{
	capture moat do -- /nonexistent
	assert_eq 127 "$STATUS" "moat do -- /nonexistent exits 127"
	assert_contains "$ERR" "/nonexistent" "the error names the missing path"
}

t_nonexistent_rootfs()
{
	capture moat do --rootfs /nonexistent-moat-rootfs -- /bin/true
	assert_ne 0 "$STATUS" "moat do --rootfs /nonexistent fails"
	case $STATUS in 124 | 137) fail "moat hung (timeout) instead of failing" ;; esac
	assert_contains "$ERR" "/nonexistent-moat-rootfs" \
		"the error names the missing rootfs"
}

t_no_command()
{
	capture moat do --
	assert_ne 0 "$STATUS" "moat do without a command fails"
	case $STATUS in 124 | 137) fail "moat hung (timeout)" ;; esac
	[ -n "$ERR" ] || fail "moat do without a command prints nothing on stderr"
}

run_test "/bin/true exits 0" t_true
run_test "/bin/false exits 1" t_false
run_test "sh -c 'exit 7' exits 7" t_exit7
run_test "sh -c 'exit 255' exits 255" t_exit255
run_test "python killing itself with SIGSEGV exits 139" t_python_segv
run_test "sh killing itself with SIGSEGV exits 139" t_sh_kill_segv
run_test "sh killing itself with SIGTERM exits 143" t_sh_kill_term
run_test "a NULL dereference exits 139" t_python_null_deref
run_test "missing command exits 127 and names it" t_nonexistent_cmd
run_test "missing rootfs fails and names it" t_nonexistent_rootfs
run_test "no command is a usage error" t_no_command
e2e_done
