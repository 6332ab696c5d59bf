# What a process that dropped root still sees of its own /proc/self, as
# Linux has it: the drop leaves it not dumpable, so its /proc files are
# root's (task_dump_owner), but the process itself may still list and
# follow its own fd/ (proc_fd_permission) and read its own links
# (ptrace_may_access: the same thread group always passes). closefrom(),
# ttyname() and Python's close_fds depend on it. Run as root; prints the
# same natively and inside moat (tests/escape/test_host_uids.sh).
import ctypes
import os
import subprocess
import sys

libc = ctypes.CDLL(None, use_errno=True)
USER = 1000


def attempt(what, fn):
    try:
        r = fn()
        print(what, "ok" if r is None else r)
    except OSError as e:
        print(what, os.strerror(e.errno))


def link_kind(path):
    # The target's kind, not its text (a pipe's inode number differs).
    t = os.readlink(path)
    return t.split(":")[0] if ":" in t else "path"


def opened(path):
    with open(path, "rb") as f:
        f.read(1)


os.setgroups([])
os.setresgid(USER, USER, USER)
os.setresuid(USER, USER, USER)
print("uid", os.getuid(), "dumpable", libc.prctl(3, 0, 0, 0, 0))
r, w = os.pipe()
attempt("listdir fd: has the pipe",
        lambda: str(r in [int(n) for n in os.listdir("/proc/self/fd")]))
attempt("stat fd: owner", lambda: str(os.stat("/proc/self/fd").st_uid))
attempt("access fd R_OK|X_OK",
        lambda: str(os.access("/proc/self/fd", os.R_OK | os.X_OK)))
attempt("readlink fd/r:", lambda: link_kind("/proc/self/fd/%d" % r))
attempt("readlink task fd/r:", lambda: link_kind(
    "/proc/self/task/%d/fd/%d" % (os.getpid(), r)))
attempt("open fd/w for writing", lambda: os.close(
    os.open("/proc/self/fd/%d" % w, os.O_WRONLY)))
attempt("readlink exe:", lambda: link_kind("/proc/self/exe"))
attempt("readlink cwd:", lambda: link_kind("/proc/self/cwd"))
attempt("open environ", lambda: opened("/proc/self/environ"))
attempt("open maps", lambda: opened("/proc/self/maps"))
attempt("open status", lambda: opened("/proc/self/status"))
# ttyname() is a readlink of /proc/self/fd/N and a stat of its target.
m, s = os.openpty()
attempt("ttyname of a pty", lambda: os.ttyname(s).startswith("/dev/pts/"))
# close_fds lists /proc/self/fd in the child (CPython's _posixsubprocess)
# to close what it would inherit.
os.set_inheritable(r, True)
os.set_inheritable(w, True)
CHILD = """
import os, sys
left = []
for fd in map(int, sys.argv[1:]):
    try:
        os.fstat(fd)
        left.append(fd)
    except OSError:
        pass
print(left)
"""
p = subprocess.run([sys.executable, "-c", CHILD, str(r), str(w)],
                   capture_output=True, text=True, close_fds=True)
print("close_fds: inherited", p.stdout.strip(), p.returncode)
p = subprocess.run([sys.executable, "-c", CHILD, str(r), str(w)],
                   capture_output=True, text=True, close_fds=False)
print("no close_fds: inherited", len(p.stdout.split(",")), p.returncode)
# Another process of the same uid, not dumpable either, is not let in.
pid = os.fork()
if pid == 0:
    os.read(r, 1)
    os._exit(0)
attempt("listdir a sibling's fd",
        lambda: str(len(os.listdir("/proc/%d/fd" % pid)) > 0))
os.write(w, b"x")
os.waitpid(pid, 0)
