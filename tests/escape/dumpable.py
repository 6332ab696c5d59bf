# prctl(PR_SET_DUMPABLE) and what follows from the flag, as Linux has it:
# the flag reads back, fork keeps it, a change of ids clears it, exec sets
# it again, and a process that is not dumpable has root's /proc files.
# Run as root; prints the same natively and inside moat
# (tests/escape/test_host_uids.sh).
import ctypes
import os
import sys

libc = ctypes.CDLL(None, use_errno=True)
PR_GET_DUMPABLE, PR_SET_DUMPABLE = 3, 4
USER = 1000


def get():
    return libc.prctl(PR_GET_DUMPABLE, 0, 0, 0, 0)


def put(v):
    if libc.prctl(PR_SET_DUMPABLE, v, 0, 0, 0) == 0:
        return "ok"
    return os.strerror(ctypes.get_errno())


def owner():
    # Linux's task_dump_owner: the files go to root, the world-readable
    # directory /proc/PID itself does not.
    d = "/proc/%d" % os.getpid()
    return "%d/%d" % (os.stat(d).st_uid, os.stat(d + "/status").st_uid)


AFTER_EXEC = """
import ctypes, os
libc = ctypes.CDLL(None)
d = "/proc/%d" % os.getpid()
print("after exec: dumpable", libc.prctl(3, 0, 0, 0, 0), "owner",
      "%d/%d" % (os.stat(d).st_uid, os.stat(d + "/status").st_uid))
"""

print("start: dumpable", get())
print("set 0:", put(0), "dumpable", get(), flush=True)
pid = os.fork()
if pid == 0:
    print("forked child: dumpable", get(), flush=True)
    os._exit(0)
os.waitpid(pid, 0)
print("set 2:", put(2), "dumpable", get())
print("set 1:", put(1), "dumpable", get(), flush=True)
pid = os.fork()
if pid == 0:
    os.setgroups([])
    os.setresgid(USER, USER, USER)
    os.setresuid(USER, USER, USER)
    print("as uid %d: dumpable" % USER, get(), "owner", owner())
    print("set 1:", put(1), "dumpable", get(), "owner", owner())
    print("set 0:", put(0), "dumpable", get(), "owner", owner(), flush=True)
    os.execv(sys.executable, [sys.executable, "-c", AFTER_EXEC])
os.waitpid(pid, 0)
