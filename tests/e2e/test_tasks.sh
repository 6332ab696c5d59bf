#!/usr/bin/env bash
# Tasks: namespace flags refused, statuses and signals between guest
# processes with virtual pids, process groups and sessions, threads.
. "$(dirname "$0")/lib.sh"
HERE=$(cd "$(dirname "$0")" && pwd)

t_clone_namespace_refused()
{
	capture moat do -- $PY -c '
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
for name, flag in (("NEWUSER", 0x10000000), ("NEWNS", 0x20000), ("NEWPID", 0x20000000), ("NEWNET", 0x40000000)):
    r = libc.syscall(56, flag | 17, 0, 0, 0, 0)
    print(name, r, ctypes.get_errno())
r = libc.syscall(56, 0x00800000 | 17, 0, 0, 0, 0)  # CLONE_UNTRACED
print("UNTRACED", r, ctypes.get_errno())
'
	assert_eq 0 "$STATUS" "the probe runs"
	assert_contains "$OUT" "NEWUSER -1 1" "clone(CLONE_NEWUSER) fails with EPERM"
	assert_contains "$OUT" "NEWNS -1 1" "clone(CLONE_NEWNS) fails with EPERM"
	assert_contains "$OUT" "NEWPID -1 1" "clone(CLONE_NEWPID) fails with EPERM"
	assert_contains "$OUT" "NEWNET -1 1" "clone(CLONE_NEWNET) fails with EPERM"
	assert_contains "$OUT" "UNTRACED -1 22" "clone(CLONE_UNTRACED) fails with EINVAL"
}

t_unshare_refused()
{
	capture moat do -- unshare -U /bin/true
	assert_ne 0 "$STATUS" "unshare -U fails inside the sandbox"
	assert_contains "$ERR" "Operation not permitted" "with EPERM"
}

t_wait_statuses()
{
	capture moat do -- $PY -c '
import os, signal, time
def child(fn):
    p = os.fork()
    if p == 0:
        fn()
        os._exit(0)
    return p
a = child(lambda: os._exit(42))
b = child(lambda: os.kill(os.getpid(), signal.SIGTERM))
c = child(lambda: time.sleep(30))
os.kill(c, signal.SIGKILL)
for p in (a, b, c):
    _, st = os.waitpid(p, 0)
    print(p < 100, os.WIFEXITED(st) and os.WEXITSTATUS(st), os.WIFSIGNALED(st) and os.WTERMSIG(st))
si = os.waitid(os.P_PID, child(lambda: os._exit(3)), os.WEXITED)
print("waitid", si.si_code == os.CLD_EXITED, si.si_status)
try:
    os.waitpid(-1, 0)
except ChildProcessError:
    print("ECHILD")
'
	assert_eq 0 "$STATUS" "the probe runs"
	assert_eq "True 42 False
True False 15
True False 9
waitid True 3
ECHILD" "$OUT" "wait4 and waitid give exact statuses; no children is ECHILD"
}

t_sigchld_siginfo()
{
	capture moat do -- $PY -c '
import os, signal
got = []
signal.signal(signal.SIGCHLD, lambda s, f: got.append(s))
p = os.fork()
if p == 0:
    os._exit(5)
_, st = os.waitpid(p, 0)
print("status", os.WEXITSTATUS(st), "sigchld", got == [signal.SIGCHLD])
'
	assert_eq "status 5 sigchld True" "$OUT" "the parent gets SIGCHLD for its child"
}

# A reaped child's files are closed: a write to a pipe whose only reader it
# held is EPIPE. The sentry once closed them only after the whole batch of
# events it had collected, so the parent's wait and write in that batch
# found the pipe open (CPython's resource tracker tests: "No such process").
t_reaped_reader_pipe_is_closed()
{
	gcc -O1 -Wall -o "$E2E_TMP/reaped_reader_pipe" "$HERE/reaped_reader_pipe.c" ||
		fail "cannot build reaped_reader_pipe.c"
	chmod 755 "$E2E_TMP/reaped_reader_pipe"
	capture native "$E2E_TMP/reaped_reader_pipe"
	local want=$OUT
	assert_eq "rounds 200: EPIPE 200, written 0, other 0" "$want" "natively, every write is EPIPE"
	capture moat do -- "$E2E_TMP/reaped_reader_pipe"
	assert_eq "$want" "$OUT" "a write to the pipe of a reaped reader is EPIPE, as natively"
}

t_kill_between_guests()
{
	capture moat do -- /bin/sh -c 'sleep 30 & p=$!; kill -TERM $p; wait $p; echo "status $?"; kill -0 $p 2>/dev/null || echo gone'
	assert_eq "status 143
gone" "$OUT" "sh kills its background job by virtual pid"
}

t_pgrp_session()
{
	capture moat do -- $PY -c '
import os
print("init", os.getpid(), os.getpgrp(), os.getsid(0), flush=True)
p = os.fork()
if p == 0:
    os.setsid()
    print("child", os.getpid() == os.getpgrp() == os.getsid(0), flush=True)
    os._exit(0)
os.waitpid(p, 0)
r, w = os.pipe()
q = os.fork()
if q == 0:
    os.setpgid(0, 0)
    os.write(w, b"x")
    os.read(r, 1) if False else None
    os._exit(0)
os.read(r, 1)
os.waitpid(q, 0)
print("setpgid ok")
'
	assert_eq "init 1 1 1
child True
setpgid ok" "$OUT" "process groups and sessions are virtual"
}

t_threads_tids()
{
	capture moat do -- $PY -c '
import threading, os
tids = []
def f(): tids.append(threading.get_native_id())
ts = [threading.Thread(target=f) for _ in range(8)]
[t.start() for t in ts]; [t.join() for t in ts]
print(len(set(tids)), all(1 < t < 100 for t in tids), os.getpid())
'
	assert_eq "8 True 1" "$OUT" "threads get distinct small virtual tids"
}

t_kill_esrch()
{
	capture moat do -- $PY -c '
import os, errno
for pid in (99999, 2**22):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        print("ESRCH")
'
	assert_eq "ESRCH
ESRCH" "$OUT" "signalling a pid that is not in the sandbox fails with ESRCH"
}

# Ctrl-C: the terminal signals the whole foreground process group. The
# guest gets SIGINT as it would natively (python raises KeyboardInterrupt)
# and moat reports 130, as a shell would.
t_ctrl_c()
{
	local rcfile=$E2E_TMP/ctrlc.rc pid pgid i
	rm -f "$rcfile"
	setsid bash -c "\"$MOAT\" do -- $PY -c 'import time; print(\"up\", flush=True); time.sleep(20)' >/dev/null 2>&1; echo \$? >\"$rcfile\"" &
	for i in $(seq 50); do
		pid=$(pgrep -f "$PY -c import time; print" | head -1)
		[ -n "$pid" ] && break
		sleep 0.1
	done
	[ -n "$pid" ] || fail "the guest did not start"
	sleep 0.5
	pgid=$(ps -o pgid= "$pid" | tr -d ' ')
	kill -INT -- "-$pgid"
	for i in $(seq 50); do
		[ -s "$rcfile" ] && break
		sleep 0.1
	done
	assert_eq 130 "$(cat "$rcfile" 2>/dev/null)" "moat exits 130 after Ctrl-C, like the guest"
}

# A fork whose parent dies between its clone event and the sentry's look
# at it (tests/e2e/clone_orphans.c: threads fork while their process
# calls exit_group) leaves a child no guest knows; the sentry kills it once
# no clone is in flight, and only then: one killed while its parent's
# event still waited behind others hung that parent's fork for good.
t_orphans_of_a_clone_are_killed()
{
	local prog=$E2E_TMP/clone_orphans out=$E2E_TMP/orphans.out cli i left
	gcc -O1 -Wall -pthread -o "$prog" "$HERE/clone_orphans.c" ||
		fail "cannot build clone_orphans.c"
	chmod 755 "$prog"
	"$MOAT" do -- "$prog" 60 >"$out" 2>&1 </dev/null &
	cli=$!
	for i in $(seq 1 300); do
		grep -q settled "$out" && break
		sleep 0.1
	done
	grep -q settled "$out" || {
		kill -9 "$cli"
		fail "the guest did not settle: $(head -c 300 "$out")"
	}
	# what is left is the reaper and the guest's one process
	for i in $(seq 1 40); do
		left=$(traced_below "$cli" | wc -l)
		[ "$left" -le 2 ] && break
		sleep 0.1
	done
	kill -9 "$cli" 2>/dev/null
	wait "$cli" 2>/dev/null
	assert_eq 2 "$left" "the reaper and the guest, and no orphan of a clone, are left"
}

run_test "clone with namespace flags is refused" t_clone_namespace_refused
run_test "unshare is refused" t_unshare_refused
run_test "wait4/waitid give exact statuses" t_wait_statuses
run_test "SIGCHLD reaches the parent" t_sigchld_siginfo
run_test "a reaped reader's pipe is closed (EPIPE)" t_reaped_reader_pipe_is_closed
run_test "kill between guest processes" t_kill_between_guests
run_test "process groups and sessions" t_pgrp_session
run_test "threads get virtual tids" t_threads_tids
run_test "kill of a pid outside the sandbox is ESRCH" t_kill_esrch
run_test "Ctrl-C reaches the guest; moat reports 130" t_ctrl_c
run_test "a clone's orphans are killed once no clone is in flight" t_orphans_of_a_clone_are_killed
e2e_done
