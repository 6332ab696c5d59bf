"""Renames that must fail (or do nothing) in the tree at argv[1], made by
tests/e2e/test_overlay.sh: prints each one's errno name, then whether every
file and directory is as it was (stat and contents), so the output is the
same natively and inside moat, where the tree is the overlay's rootfs and
a failed rename must not have copied anything up (a copy would show: its
st_nlink and st_blocks are the copy's, and a directory's st_nlink counts
only the copied subdirectories). With --space, also whether the free space
of the writable layers moved (a copy-up of big is charged there)."""
import ctypes, errno, hashlib, os, sys

libc = ctypes.CDLL(None, use_errno=True)
RENAME_NOREPLACE, RENAME_EXCHANGE = 1, 2
AT_FDCWD = -100

top = sys.argv[1]
os.chdir(top)


def renameat2(a, b, flags=0):
    if libc.renameat2(AT_FDCWD, a.encode(), AT_FDCWD, b.encode(), flags):
        return errno.errorcode[ctypes.get_errno()]
    return "OK"


def snapshot():
    snap = {}
    for dirpath, dirs, files in os.walk("."):
        for n in ["."] + dirs + files:
            p = os.path.normpath(os.path.join(dirpath, n))
            try:
                st = os.lstat(p)
            except OSError as e:  # listed, yet gone: as wrong as a change
                snap[p] = errno.errorcode[e.errno]
                continue
            data = b""
            if os.path.isfile(p):
                with open(p, "rb") as f:
                    data = hashlib.sha256(f.read()).hexdigest()
            snap[p] = (st.st_ino, st.st_dev, st.st_mode, st.st_nlink,
                       st.st_uid, st.st_size, st.st_blocks,
                       st.st_mtime_ns, st.st_ctime_ns, data)
    return snap


cases = [
    ("file onto an existing name, NOREPLACE", "f", "g", RENAME_NOREPLACE),
    ("big file onto an existing name, NOREPLACE", "big", "g",
     RENAME_NOREPLACE),
    ("file onto a non-empty directory", "f", "e", 0),
    ("file onto an empty directory", "f", "z", 0),
    ("directory onto a file", "d", "f", 0),
    ("directory into its own subdirectory", "d", "d/sub/new", 0),
    ("directory into itself", "d", "d/new", 0),
    ("file onto its own ancestor", "d/x", "d", 0),
    ("file to a name with a trailing slash", "f", "nosuch/", 0),
    ("file named with a trailing slash", "f/", "h", 0),
    ("EXCHANGE with a missing name", "f", "nosuch", RENAME_EXCHANGE),
    ("NOREPLACE and EXCHANGE together", "f", "g",
     RENAME_NOREPLACE | RENAME_EXCHANGE),
    ("an unknown flag", "f", "h", 8),
    ("missing source", "nosuch", "h", 0),
    ("file to another filesystem", "f", "/dev/shm/f", 0),
    ("big file to another filesystem", "big", "/dev/shm/big", 0),
    ("file onto a hard link of itself", "f", "f2", 0),
    ("file onto itself", "f", "f", 0),
]
space = "--space" in sys.argv
before = snapshot()
free0 = os.statvfs("/").f_bfree if space else 0
for what, a, b, flags in cases:
    print(f"{what}: {renameat2(a, b, flags)}")
# as a user who may not write the tree
sys.stdout.flush()
pid = os.fork()
if pid == 0:
    os.setgid(65534)
    os.setuid(65534)
    print(f"unprivileged rename: {renameat2('f', 'h')}", flush=True)
    os._exit(0)
os.waitpid(pid, 0)
after = snapshot()
changed = sorted(p for p in before.keys() | after.keys()
                 if before.get(p) != after.get(p))
print("unchanged:", ", ".join(changed) if changed else "everything")
if space:
    print("space:", "same" if os.statvfs("/").f_bfree == free0 else
          f"{free0 - os.statvfs('/').f_bfree} blocks used")
