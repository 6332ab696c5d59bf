#!/usr/bin/env bash
# moat do options: --hostname, --env, --cwd, --strace.
. "$(dirname "$0")/lib.sh"

t_hostname_uname()
{
	capture moat do --hostname sbx-e2e -- /bin/uname -n
	assert_eq 0 "$STATUS" "uname -n exits 0"
	assert_eq "sbx-e2e" "$OUT" "uname -n shows --hostname"
}

t_hostname_cmd()
{
	capture moat do --hostname sbx-e2e -- /bin/hostname
	assert_eq 0 "$STATUS" "hostname exits 0"
	assert_eq "sbx-e2e" "$OUT" "hostname shows --hostname"
}

t_hostname_python()
{
	capture moat do --hostname sbx-py -- $PY -c 'import os, socket; print(os.uname().nodename, socket.gethostname())'
	assert_eq "sbx-py sbx-py" "$OUT" "uname(2) from python shows --hostname"
}

t_hostname_not_host()
{
	local host
	host=$(hostname)
	capture moat do --hostname sbx-e2e -- /bin/uname -n
	assert_ne "$host" "$OUT" "the guest does not see the host's hostname"
	assert_eq "$host" "$(hostname)" "the host's hostname is unchanged"
}

t_env()
{
	capture moat do --env MOAT_E2E=hello-env --env OTHER=a=b -- \
		/bin/sh -c 'echo "$MOAT_E2E|$OTHER"'
	assert_eq 0 "$STATUS" "sh exits 0"
	assert_eq "hello-env|a=b" "$OUT" "--env K=V is visible (values may hold =)"
}

t_env_python()
{
	capture moat do --env MOAT_E2E=py -- $PY -c 'import os; print(os.environ["MOAT_E2E"])'
	assert_eq "py" "$OUT" "--env is in python's os.environ"
}

t_cwd()
{
	capture moat do --cwd /usr/share -- /bin/pwd
	assert_eq 0 "$STATUS" "pwd exits 0"
	assert_eq "/usr/share" "$OUT" "--cwd sets the working directory"
}

t_cwd_relative_paths()
{
	capture moat do --cwd /etc -- /bin/cat os-release
	assert_eq 0 "$STATUS" "cat of a relative path exits 0"
	assert_eq "$(cat /etc/os-release)" "$OUT" "relative paths resolve against --cwd"
}

t_cwd_python()
{
	capture moat do --cwd /usr -- $PY -c 'import os; print(os.getcwd())'
	assert_eq "/usr" "$OUT" "getcwd(2) returns --cwd"
}

t_strace()
{
	capture moat do --strace -- /bin/cat /etc/hostname
	assert_eq 0 "$STATUS" "cat under --strace exits 0"
	assert_eq "$(cat /etc/hostname)" "$OUT" "stdout is unaffected by --strace"
	assert_contains "$ERR" "openat(" "--strace shows openat calls"
	assert_contains "$ERR" "/etc/hostname" "--strace decodes path arguments"
	assert_match "$ERR" '\) += ' "--strace shows results as '= value'"
	assert_contains "$ERR" "read(" "--strace shows read calls"
}

t_no_strace_quiet()
{
	capture moat do -- /bin/cat /etc/hostname
	assert_eq "" "$ERR" "without --strace, moat writes nothing on stderr"
}

run_test "--hostname shows in uname -n" t_hostname_uname
run_test "--hostname shows in hostname" t_hostname_cmd
run_test "--hostname shows in python uname and gethostname" t_hostname_python
run_test "--hostname does not touch the host" t_hostname_not_host
run_test "--env K=V is visible" t_env
run_test "--env reaches python" t_env_python
run_test "--cwd sets pwd" t_cwd
run_test "--cwd resolves relative paths" t_cwd_relative_paths
run_test "--cwd is getcwd in python" t_cwd_python
run_test "--strace prints decoded syscalls and results" t_strace
run_test "no stderr noise without --strace" t_no_strace_quiet
e2e_done
