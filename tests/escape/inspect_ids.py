# Who may read another process's /proc/PID/environ: Linux's ptrace-read
# check with the caller's filesystem ids (PTRACE_MODE_READ_FSCREDS). The
# caller's fsuid must be the target's real, effective and saved uid, and
# its fsgid the target's three gids; the effective uid does not decide.
# Run as root; prints the same natively and inside moat
# (tests/escape/test_credentials.sh).
import ctypes
import os

libc = ctypes.CDLL(None, use_errno=True)
PR_SET_DUMPABLE = 4
UID, GID, OTHER = 1000, 1000, 2000

# the target: uid and gid 1000, made dumpable again after its change of ids
r, w = os.pipe()
ready_r, ready_w = os.pipe()
target = os.fork()
if target == 0:
    os.close(w)
    os.setgroups([])
    os.setresgid(GID, GID, GID)
    os.setresuid(UID, UID, UID)
    libc.prctl(PR_SET_DUMPABLE, 1, 0, 0, 0)
    os.write(ready_w, b"x")
    os.read(r, 1)
    os._exit(0)
os.read(ready_r, 1)


def probe(name, gids, uids, fsuid=None):
    pid = os.fork()
    if pid == 0:
        os.setgroups([])
        os.setresgid(*gids)
        os.setresuid(*uids)
        if fsuid is not None:
            libc.setfsuid(fsuid)
        try:
            with open("/proc/%d/environ" % target, "rb") as f:
                f.read()
            res = "read"
        except OSError as e:
            res = os.strerror(e.errno)
        print("%s: %s" % (name, res), flush=True)
        os._exit(0)
    os.waitpid(pid, 0)


probe("same uids and gids", (GID, GID, GID), (UID, UID, UID))
probe("same uids, other gids", (OTHER, OTHER, OTHER), (UID, UID, UID))
probe("euid the target's, fsuid 0", (GID, GID, GID), (UID, UID, 0), 0)
probe("euid another, fsuid the target's", (GID, GID, GID),
      (OTHER, OTHER, UID), UID)
os.close(w)
os.waitpid(target, 0)
