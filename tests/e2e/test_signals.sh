#!/usr/bin/env bash
# Signals and time: timers of the sentry's interrupt emulated syscalls, a
# signal the host queues on a blocked task interrupts it too, sigqueue
# carries its value.
. "$(dirname "$0")/lib.sh"
HERE=$(cd "$(dirname "$0")" && pwd)

t_alarm_interrupts_a_blocked_read()
{
	capture moat do -- $PY -c '
import os, signal, time
r, w = os.pipe()
def boom(s, f):
    raise TimeoutError
signal.signal(signal.SIGALRM, boom)
for i in range(2):
    signal.alarm(1)
    t0 = time.monotonic()
    try:
        os.read(r, 1)
    except TimeoutError:
        print("interrupted", round(time.monotonic() - t0))
print(signal.alarm(30), signal.alarm(0))
signal.setitimer(signal.ITIMER_REAL, 0.02, 0.02)
n = 0
def tick(s, f):
    global n
    n += 1
signal.signal(signal.SIGALRM, tick)
while n < 5:
    signal.pause()
print("ticks", n >= 5, signal.getitimer(signal.ITIMER_REAL)[1])'
	assert_eq "interrupted 1
interrupted 1
0 30
ticks True 0.02" "$OUT" "alarm and setitimer(ITIMER_REAL) reach a task blocked in the sentry"
}

t_posix_timers()
{
	gcc -O1 -o "$E2E_TMP/posix_timer" "$HERE/posix_timer.c" ||
		fail "cannot build posix_timer.c"
	chmod 755 "$E2E_TMP/posix_timer"
	capture moat do -- "$E2E_TMP/posix_timer"
	assert_eq "read -1 Interrupted system call
si_code SI_TIMER value 4242
periodic fired, interval 10 ms
deleted: EINVAL
cpu clock: Operation not supported" "$OUT" "timer_create family"
}

t_sigqueue_value()
{
	capture moat do -- $PY -c '
import ctypes, os, signal
libc = ctypes.CDLL(None, use_errno=True)
class sigval(ctypes.Union):
    _fields_ = [("sival_int", ctypes.c_int), ("sival_ptr", ctypes.c_void_p)]
signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGUSR1])
print(libc.sigqueue(os.getpid(), signal.SIGUSR1, sigval(77)))
info = signal.sigtimedwait([signal.SIGUSR1], 5)
print(info.si_signo == signal.SIGUSR1, info.si_code == -1, info.si_pid == os.getpid())'
	assert_eq "0
True True True" "$OUT" "sigqueue: SI_QUEUE from the sender's virtual pid"
}

t_host_signal_interrupts_a_blocked_read()
{
	local out=$E2E_TMP/hostsig.out pid guest i
	"$MOAT" do -- $PY -c '
import os, signal, sys
signal.signal(signal.SIGUSR2, lambda s, f: (print("handler", flush=True), sys.exit(7)))
print("ready", flush=True)
os.read(os.pipe()[0], 1)' >"$out" 2>&1 &
	pid=$!
	for i in $(seq 100); do grep -q ready "$out" 2>/dev/null && break; sleep 0.1; done
	# The guest is the sentry's grandchild (moat, the reaper, the guest),
	# not the gofer's child.
	guest=$(for c in $(pgrep -P "$pid"); do pgrep -P "$c"; done | head -1)
	[ -n "$guest" ] || { kill $pid; fail "no guest process found"; }
	kill -USR2 "$guest"
	wait $pid
	STATUS=$?
	assert_eq "ready
handler" "$(cat "$out")" "a signal from outside reached the blocked guest's handler"
	assert_eq 7 "$STATUS" "and it exited as its handler said"
}

t_timerfd()
{
	capture moat do -- $PY -c '
import ctypes, os, select, struct, time
libc = ctypes.CDLL(None, use_errno=True)
fd = libc.timerfd_create(1, 0)   # CLOCK_MONOTONIC
libc.timerfd_settime(fd, 0, struct.pack("qqqq", 0, 20000000, 0, 50000000), None)
t0 = time.monotonic()
print("first", struct.unpack("Q", os.read(fd, 8))[0], time.monotonic() - t0 >= 0.04)
time.sleep(0.1)
print("missed", struct.unpack("Q", os.read(fd, 8))[0] >= 4)
ep = select.epoll(); ep.register(fd, select.EPOLLIN)
print("epoll", len(ep.poll(1)))
cur = ctypes.create_string_buffer(32); libc.timerfd_gettime(fd, cur)
print("interval", struct.unpack("qqqq", cur.raw)[1])
print(libc.timerfd_create(8, 0), ctypes.get_errno() == 1)   # CLOCK_REALTIME_ALARM'
	assert_eq "first 1 True
missed True
epoll 1
interval 20000000
-1 True" "$OUT" "timerfd: blocking read, expirations counted, epoll, gettime"
}

t_job_control_in_wait()
{
	capture moat do -- $PY -c '
import os, signal, time
got = []
signal.signal(signal.SIGCHLD, lambda s, f: got.append(s))
pid = os.fork()
if pid == 0:
    time.sleep(30)
    os._exit(0)
time.sleep(0.2)
for sig in (signal.SIGSTOP, signal.SIGTSTP):
    os.kill(pid, sig)
    p, st = os.waitpid(pid, os.WUNTRACED)
    print("stopped", os.WIFSTOPPED(st) and os.WSTOPSIG(st) == sig)
    os.kill(pid, signal.SIGCONT)
    p, st = os.waitpid(pid, os.WCONTINUED)
    print("continued", os.WIFCONTINUED(st))
print(os.waitpid(pid, os.WNOHANG | os.WUNTRACED | os.WCONTINUED))
os.kill(pid, signal.SIGKILL)
print(os.waitpid(pid, 0)[1], len(got) >= 4)'
	assert_eq "stopped True
continued True
stopped True
continued True
(0, 0)
9 True" "$OUT" "SIGSTOP, SIGTSTP and SIGCONT show in wait (WUNTRACED, WCONTINUED) and SIGCHLD"
}

t_moat_kill()
{
	local name out=$E2E_TMP/kill.out pid
	name=kill-$(random_token | tail -c 12)
	"$MOAT" do --name "$name" -- $PY -c '
import signal, sys, time, os
signal.signal(signal.SIGUSR1, lambda s, f: (print("init got USR1", flush=True), sys.exit(5)))
if os.fork() == 0:
    signal.signal(signal.SIGUSR2, lambda s, f: (print("child got USR2", flush=True), os._exit(0)))
    time.sleep(30)
    os._exit(1)
print("ready", flush=True)
signal.signal(signal.SIGUSR2, signal.SIG_IGN)
time.sleep(30)' >"$out" 2>&1 &
	pid=$!
	for _ in $(seq 100); do grep -q ready "$out" && break; sleep 0.1; done
	capture "$MOAT" do --name "$name" -- true
	assert_eq 125 "$STATUS" "a second sandbox of the same name is refused"
	assert_contains "$ERR" "a sandbox of that name runs" "and says why"
	"$MOAT" kill --all "$name" USR2 || fail "moat kill --all failed"
	sleep 0.5
	"$MOAT" kill "$name" SIGUSR1 || fail "moat kill failed"
	wait $pid
	STATUS=$?
	assert_eq 5 "$STATUS" "init ended as its handler said"
	assert_contains "$(cat "$out")" "child got USR2" "--all reached the child"
	assert_contains "$(cat "$out")" "init got USR1" "the signal reached init"
	capture "$MOAT" kill "$name" TERM
	assert_eq 1 "$STATUS" "no such sandbox any more"
	capture "$MOAT" kill "$name" NOSUCHSIG
	assert_eq 2 "$STATUS" "a bad signal name is a usage error"
}

t_ppoll_mask()
{
	capture moat do -- $PY -c '
import ctypes, os, signal, struct, time
libc = ctypes.CDLL(None, use_errno=True)
got = []
signal.signal(signal.SIGUSR1, lambda s, f: got.append(1))
signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGUSR1])
pid = os.getpid()
if os.fork() == 0:
    time.sleep(0.3)
    os.kill(pid, signal.SIGUSR1)
    os._exit(0)
r, w = os.pipe()
empty = ctypes.c_uint64(0)
rc = libc.ppoll(struct.pack("ihh", r, 1, 0), 1, None, ctypes.byref(empty))
print("ppoll", rc, ctypes.get_errno() == 4, len(got))
print("blocked again", signal.SIGUSR1 in signal.pthread_sigmask(signal.SIG_BLOCK, []))
def boom(s, f):
    got.append(2)
    raise InterruptedError
signal.signal(signal.SIGUSR2, boom)
signal.siginterrupt(signal.SIGUSR2, False)   # SA_RESTART
if os.fork() == 0:
    time.sleep(0.3)
    os.kill(pid, signal.SIGUSR2)
    os._exit(0)
import select
p = select.poll(); p.register(r, select.POLLIN)
t0 = time.monotonic()
try:
    p.poll(3000)
except InterruptedError:
    pass
print("poll", time.monotonic() - t0 < 2, got)'
	assert_eq "ppoll -1 True 1
blocked again True
poll True [1, 2]" "$OUT" "ppoll's mask lets a blocked signal through for the wait only; poll is never restarted"
}

t_signalfd_matches_native()
{
	cp "$HERE/signalfd.py" "$E2E_TMP/signalfd.py"
	chmod 644 "$E2E_TMP/signalfd.py"
	capture native $PY "$E2E_TMP/signalfd.py"
	local want=$OUT
	capture moat do -- $PY "$E2E_TMP/signalfd.py"
	assert_eq "$want" "$OUT" "signalfd reads inside what it reads natively"
}

# The siginfo names a sender that is gone by the time the signal is taken:
# its uid was looked up at delivery, and a reaped sender showed uid 0.
t_siginfo_of_a_sender_gone()
{
	gcc -O1 -Wall -o "$E2E_TMP/signal_sender_gone" "$HERE/signal_sender_gone.c" -lrt ||
		fail "cannot build signal_sender_gone.c"
	chmod 755 "$E2E_TMP/signal_sender_gone"
	capture unshare --ipc -- "$E2E_TMP/signal_sender_gone"
	local want=$OUT
	assert_contains "$want" "kill: signo 10 pid child uid 4321" "natively"
	capture moat do -- "$E2E_TMP/signal_sender_gone"
	assert_eq "$want" "$OUT" "the sender's pid and uid, as natively"
}

t_pipe_write_interrupted_matches_native()
{
	gcc -O1 -Wall -o "$E2E_TMP/pipe_write_signal" "$HERE/pipe_write_signal.c" ||
		fail "cannot build pipe_write_signal.c"
	chmod 755 "$E2E_TMP/pipe_write_signal"
	capture native "$E2E_TMP/pipe_write_signal"
	local want=$OUT
	assert_contains "$want" "drained: 167936  handled 1" "natively, a signal ends a big write with what went in"
	capture moat do -- "$E2E_TMP/pipe_write_signal"
	assert_eq "$want" "$OUT" "a blocking pipe write that a signal interrupts returns as natively"
}

# A handler that raises ends a write to a pipe that filled mid-write: the
# exception reaches the writer (os.write, and a buffered file's write).
t_pipe_write_handler_raises()
{
	local prog='
import os, signal
r, w = os.pipe()
def boom(s, f):
    raise ZeroDivisionError
signal.signal(signal.SIGALRM, boom)
for mode in ("os", "io"):
    signal.setitimer(signal.ITIMER_REAL, 0.3)
    try:
        if mode == "os":
            n = os.write(w, b"x" * (1 << 20))
        else:
            n = open(w, "wb", closefd=False).write(b"x" * (1 << 20))
        print(mode, "returned", n)
    except ZeroDivisionError:
        print(mode, "raised")
    signal.setitimer(signal.ITIMER_REAL, 0)
    os.set_blocking(r, False)
    try:
        while os.read(r, 1 << 20):
            pass
    except BlockingIOError:
        pass
    os.set_blocking(r, True)'
	assert_same_as_native $PY -c "$prog"
	assert_eq "os raised
io raised" "$OUT" "the handler ran, and its exception ended the write"
}

# Giving up root gives up the right to signal root's processes, by any
# name: kill(2), a pidfd, an open /proc/PID (pidfd_send_signal once sent
# them whatever the sender was). The same lines as natively.
t_pidfd_signal_asks_kill_permission()
{
	[ "$(id -u)" = 0 ] || { echo "skipped: the native run needs root to setresuid"; return 0; }
	gcc -O1 -Wall -o "$E2E_TMP/pidfd_perm" "$HERE/pidfd_perm.c" || fail "cannot build pidfd_perm.c"
	capture native "$E2E_TMP/pidfd_perm"
	local want=$OUT
	assert_contains "$want" "pidfd_send_signal(victim, SIGSTOP): Operation not permitted" "natively: EPERM"
	assert_contains "$want" "victim alive" "natively: the victim lives"
	capture moat do -- "$E2E_TMP/pidfd_perm"
	assert_eq "$want" "$OUT" "the sandbox says what Linux says: $ERR"
}

run_test siginfo_of_a_sender_gone t_siginfo_of_a_sender_gone
run_test pipe_write_interrupted_matches_native t_pipe_write_interrupted_matches_native
run_test pipe_write_handler_raises t_pipe_write_handler_raises
run_test pidfd_signal_asks_kill_permission t_pidfd_signal_asks_kill_permission
run_test signalfd_matches_native t_signalfd_matches_native
run_test ppoll_mask t_ppoll_mask
run_test timerfd t_timerfd
run_test moat_kill t_moat_kill
run_test job_control_in_wait t_job_control_in_wait
run_test alarm_interrupts_a_blocked_read t_alarm_interrupts_a_blocked_read
run_test posix_timers t_posix_timers
run_test sigqueue_value t_sigqueue_value
run_test host_signal_interrupts_a_blocked_read t_host_signal_interrupts_a_blocked_read
