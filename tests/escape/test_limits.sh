#!/usr/bin/env bash
# Limits: a fork bomb, a memory bomb, a runaway and a disk filler are
# contained under --pids, --memory, --timeout and --disk; moat says which
# limit ended the sandbox, and leaves no cgroup or process behind.
. "$(dirname "$0")/../e2e/lib.sh"

t_timeout()
{
	local start end
	start=$(date +%s)
	capture moat do --timeout 1 -- /bin/sleep 30
	end=$(date +%s)
	assert_eq 137 "$STATUS" "the sandbox is killed (SIGKILL: 137)"
	assert_contains "$ERR" "time limit of 1 s" "moat names the limit"
	[ $((end - start)) -lt 10 ] || fail "it took $((end - start)) s"
}

t_pids()
{
	capture moat do --pids 20 -- $PY -c '
import os, time
n = 0
try:
    while True:
        if os.fork() == 0:
            time.sleep(2)
            os._exit(0)
        n += 1
except BlockingIOError:
    print("EAGAIN after", n)
'
	assert_eq 0 "$STATUS" "the program handles EAGAIN and exits"
	assert_contains "$OUT" "EAGAIN after 19" "fork fails with EAGAIN at the limit (19 children + itself)"
	assert_contains "$ERR" "process limit of 20" "moat names the limit"
}

t_fork_bomb()
{
	local marker
	marker=moat-bomb-$(random_token)
	capture moat do --pids 64 --timeout 5 -- /bin/bash -c "b() { b | b & }; b; echo $marker"
	case $STATUS in
	124) fail "moat hung past its own --timeout" ;;
	esac
	sleep 0.5
	! pgrep -f "$marker" >/dev/null || fail "bomb processes survived the sandbox"
	capture moat do -- /bin/echo alive
	assert_eq "alive" "$OUT" "the host and moat still work"
}

t_memory_bomb()
{
	capture moat do --memory 100M -- $PY -c '
x = []
while True:
    x.append(bytearray(10 << 20))
'
	assert_eq 137 "$STATUS" "the kernel kills the guest at the limit"
	assert_contains "$ERR" "memory limit of 104857600 bytes" "moat names the limit"
	# The janitor removes the cgroup once the last guest is gone.
	local i
	for i in $(seq 40); do
		find /sys/fs/cgroup/memory -maxdepth 4 -name 'moat-*' 2>/dev/null | grep -q . || return 0
		sleep 0.1
	done
	fail "a memory cgroup of moat's was left behind"
}

t_disk()
{
	capture moat do --disk 1M -- /bin/sh -c 'head -c 2000000 /dev/zero > /tmp/big; echo "status $?"; stat -c %s /tmp/big'
	assert_contains "$ERR" "No space left on device" "writing past --disk fails with ENOSPC"
	assert_contains "$OUT" "1048576" "tmpfs holds exactly the limit"
}

run_test "--timeout kills a runaway" t_timeout
run_test "--pids refuses forks past the limit" t_pids
run_test "a fork bomb is contained" t_fork_bomb
run_test "a memory bomb is contained" t_memory_bomb
run_test "--disk bounds /tmp" t_disk
e2e_done
