#!/usr/bin/env bash
# File locks between the sandbox's processes, F_NOTIFY, and inotify's limits.
. "$(dirname "$0")/lib.sh"

t_record_locks_between_processes()
{
	capture moat do -- $PY -u -c '
import errno, fcntl, os, struct, time
p = "/tmp/lockfile"
open(p, "w").write("x" * 100)
f = open(p, "r+")
fcntl.lockf(f, fcntl.LOCK_EX, 10, 0)
pid = os.fork()
if pid == 0:
    g = open(p, "r+")
    try:
        fcntl.lockf(g, fcntl.LOCK_EX | fcntl.LOCK_NB, 10, 0)
        print("child got the lock")
    except OSError as e:
        print("child", errno.errorcode[e.errno])
    fcntl.lockf(g, fcntl.LOCK_EX | fcntl.LOCK_NB, 10, 20)
    print("other range free")
    r = struct.unpack("hhqqi", fcntl.fcntl(g, fcntl.F_GETLK, struct.pack("hhqqi", fcntl.F_WRLCK, 0, 0, 10, 0)))
    print("F_GETLK", r[0] == fcntl.F_WRLCK, r[4] == os.getppid())
    t0 = time.monotonic()
    fcntl.lockf(g, fcntl.LOCK_EX, 10, 0)
    print("waited", time.monotonic() - t0 > 0.5)
    os._exit(0)
time.sleep(1)
f.close()
os.waitpid(pid, 0)
a, b = open(p), open(p)
fcntl.flock(a, fcntl.LOCK_EX)
try:
    fcntl.flock(b, fcntl.LOCK_EX | fcntl.LOCK_NB)
except BlockingIOError:
    print("flock: one description at a time")
fcntl.flock(a, fcntl.LOCK_UN)
fcntl.flock(b, fcntl.LOCK_EX | fcntl.LOCK_NB)
print("flock: free after LOCK_UN")'
	assert_eq "child EAGAIN
other range free
F_GETLK True True
waited True
flock: one description at a time
flock: free after LOCK_UN" "$OUT" "POSIX locks conflict across processes, close drops them; flock per description"
}

t_posix_lock_deadlock_is_edeadlk()
{
	capture moat do -- $PY -u -c '
import errno, fcntl, os, time
open("/tmp/d", "w").write("x" * 10)
f = open("/tmp/d", "r+")
fcntl.lockf(f, fcntl.LOCK_EX, 1, 0)
pid = os.fork()
if pid == 0:
    g = open("/tmp/d", "r+")
    fcntl.lockf(g, fcntl.LOCK_EX, 1, 1)
    fcntl.lockf(g, fcntl.LOCK_EX, 1, 0)   # waits for the parent
    os._exit(0)
time.sleep(0.5)
try:
    fcntl.lockf(f, fcntl.LOCK_EX, 1, 1)
except OSError as e:
    print("EDEADLK" if e.errno == errno.EDEADLK else e)
f.close()
os.waitpid(pid, 0)
print("child done")'
	assert_eq "EDEADLK
child done" "$OUT" "a cycle of POSIX lock waiters is refused"
}

t_dnotify()
{
	capture moat do -- $PY -c '
import fcntl, os, signal
got = []
signal.signal(signal.SIGIO, lambda s, f: got.append(s))
os.mkdir("/tmp/w")
fd = os.open("/tmp/w", os.O_RDONLY)
fcntl.fcntl(fd, fcntl.F_NOTIFY, fcntl.DN_CREATE | fcntl.DN_DELETE | fcntl.DN_MULTISHOT)
open("/tmp/w/f", "w").close(); os.mkdir("/tmp/w/d"); os.unlink("/tmp/w/f")
os.chmod("/tmp/w/d", 0o700)
print(len(got))'
	assert_eq 3 "$OUT" "F_NOTIFY: creations and a removal signal the watcher; DN_ATTRIB was not asked"
}

# An F_NOTIFY watch outlives neither its process: the watcher exits and is
# reaped while a child it forked still has the directory open, and the
# child's changes there must not signal through the freed process (it
# once did: a use-after-free, and a signal to whatever reused the memory).
t_dnotify_watcher_exits_before_its_child()
{
	capture moat do -- $PY -c '
import fcntl, os, signal, time
os.mkdir("/tmp/w")
r, w = os.pipe()
a = os.fork()
if a == 0:
    fd = os.open("/tmp/w", os.O_RDONLY)
    fcntl.fcntl(fd, fcntl.F_NOTIFY, fcntl.DN_CREATE | fcntl.DN_MULTISHOT)
    if os.fork() == 0:
        os.read(r, 1)                        # the watcher is gone
        open("/tmp/w/f", "w").close()
        os.mkdir("/tmp/w/d")
        print("child alive", flush=True)
        os._exit(0)
    os._exit(0)
os.waitpid(a, 0)                             # reaped
for i in range(40):                          # the sentry frees the dead
    if os.fork() == 0:                       # once 32 have piled up
        os._exit(0)
    os.wait()
# new processes, to take the freed memory
kids = [os.fork() for i in range(4)]
if 0 in kids:
    time.sleep(1)
    os._exit(0)
time.sleep(0.2)
os.write(w, b"x")
for k in kids:
    print("status", os.waitpid(k, 0)[1])
time.sleep(0.5)'
	assert_eq "child alive
status 0
status 0
status 0
status 0" "$OUT" "the watch goes with its process; its directory's changes signal nobody"
}

# inotify's per-user limits hold for the sandbox: 128 instances (EMFILE
# past them), 8192 watches (ENOSPC).
t_inotify_limits()
{
	capture moat do -- $PY -c '
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
fds = []
while True:
    fd = libc.inotify_init1(0)
    if fd < 0:
        print("instances", len(fds), os.strerror(ctypes.get_errno()))
        break
    fds.append(fd)
    if len(fds) > 1000:
        print("no limit")
        break
os.close(fds.pop())
fd = libc.inotify_init1(0)
print("after a close", fd >= 0)
os.mkdir("/tmp/many")
n = 0
while True:
    p = "/tmp/many/%d" % n
    os.mkdir(p)
    if libc.inotify_add_watch(fd, p.encode(), 0x100) < 0:
        print("watches", n, os.strerror(ctypes.get_errno()))
        break
    n += 1
    if n > 20000:
        print("no limit")
        break'
	assert_eq "instances 128 Too many open files
after a close True
watches 8192 No space left on device" "$OUT" "128 instances and 8192 watches, as Linux's default per-user limits"
}

# An inotify queue holds 16384 events, then one IN_Q_OVERFLOW; a repeat of
# the last event queued is merged, also after part of the queue was read.
t_inotify_queue_overflow_and_merge()
{
	capture moat do -- $PY -c '
import ctypes, os, struct
libc = ctypes.CDLL(None, use_errno=True)
fd = libc.inotify_init1(os.O_NONBLOCK)
os.mkdir("/tmp/q")
libc.inotify_add_watch(fd, b"/tmp/q", 0x4)          # IN_ATTRIB
for n in ("a", "b"):
    open("/tmp/q/" + n, "w").close()
def events(size=1 << 20):
    out = []
    while True:
        try:
            buf = os.read(fd, size)
        except BlockingIOError:
            return out
        i = 0
        while i < len(buf):
            wd, mask, cookie, l = struct.unpack_from("iIII", buf, i)
            out.append((mask, buf[i + 16:i + 16 + l].rstrip(b"\0").decode()))
            i += 16 + l
        if size < 1 << 20:
            return out
os.chmod("/tmp/q/a", 0o600); os.chmod("/tmp/q/a", 0o644)
os.chmod("/tmp/q/b", 0o600)
print(events(32))                                   # one record
os.chmod("/tmp/q/b", 0o644)                         # the same as the last
os.chmod("/tmp/q/a", 0o600)
print(events())
for i in range(16400):
    os.chmod("/tmp/q/" + "ab"[i % 2], 0o600 if i % 4 < 2 else 0o644)
ev = events()
print(len(ev), ev[-2:])'
	assert_eq "[(4, 'a')]
[(4, 'b'), (4, 'a')]
16385 [(4, 'b'), (16384, '')]" "$OUT" "16384 events then IN_Q_OVERFLOW; repeats merge"
}

run_test record_locks_between_processes t_record_locks_between_processes
run_test posix_lock_deadlock_is_edeadlk t_posix_lock_deadlock_is_edeadlk
run_test dnotify t_dnotify
run_test dnotify_watcher_exits_before_its_child t_dnotify_watcher_exits_before_its_child
run_test inotify_limits t_inotify_limits
run_test inotify_queue_overflow_and_merge t_inotify_queue_overflow_and_merge
