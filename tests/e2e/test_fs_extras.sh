#!/usr/bin/env bash
# splice and tee, user.* extended attributes, pidfds.
. "$(dirname "$0")/lib.sh"

t_splice_tee()
{
	capture moat do -- $PY -c '
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
r, w = os.pipe()
open("/tmp/src", "wb").write(b"0123456789" * 10)
fd = os.open("/tmp/src", os.O_RDONLY)
print(os.splice(fd, w, 20, offset_src=5), os.lseek(fd, 0, os.SEEK_CUR))
print(os.read(r, 100))
os.write(w, b"abcdef")
r2, w2 = os.pipe()
print(libc.tee(r, w2, 4, 0), os.read(r2, 10), os.read(r, 10))
out = os.open("/tmp/dst", os.O_WRONLY | os.O_CREAT, 0o644)
os.write(w, b"XYZ")
print(os.splice(r, out, 3, offset_dst=2), open("/tmp/dst", "rb").read())
try:
    os.splice(fd, out, 1)
except OSError as e:
    print("no pipe", e.errno)'
	assert_eq "20 0
b'56789012345678901234'
4 b'abcd' b'abcdef'
3 b'\x00\x00XYZ'
no pipe 22" "$OUT" "splice to and from pipes at given offsets; tee leaves the data"
}

t_user_xattrs()
{
	capture moat do -- $PY -c '
import errno, os
open("/tmp/f", "w").close()
os.setxattr("/tmp/f", "user.a", b"1"); os.setxattr("/tmp/f", "user.b", b"22")
print(sorted(os.listxattr("/tmp/f")), os.getxattr("/tmp/f", "user.b"))
os.removexattr("/tmp/f", "user.a"); print(os.listxattr("/tmp/f"))
os.setxattr("/etc/hostname", "user.moat", b"v")
print(os.getxattr("/etc/hostname", "user.moat"))
for what, f in (("absent", lambda: os.getxattr("/etc/hostname", "user.none")),
                ("replace", lambda: os.setxattr("/tmp/f", "user.a", b"x", os.XATTR_REPLACE)),
                ("create", lambda: os.setxattr("/tmp/f", "user.b", b"x", os.XATTR_CREATE)),
                ("security", lambda: os.setxattr("/tmp/f", "security.x", b"x")),
                ("symlink", lambda: (os.symlink("f", "/tmp/l"), os.setxattr("/tmp/l", "user.x", b"x", follow_symlinks=False)))):
    try:
        f()
        print(what, "ok")
    except OSError as e:
        print(what, errno.errorcode[e.errno])'
	assert_eq "['user.a', 'user.b'] b'22'
['user.b']
b'v'
absent ENODATA
replace ENODATA
create EEXIST
security ENOTSUP
symlink EPERM" "$OUT" "user.* attributes in tmpfs and the overlay"
	if getfattr -n user.moat /etc/hostname >/dev/null 2>&1; then
		fail "the attribute reached the host's /etc/hostname"
	fi
}

t_pidfd()
{
	capture moat do -- $PY -c '
import os, select, signal, time
pid = os.fork()
if pid == 0:
    time.sleep(0.3)
    os._exit(4)
fd = os.pidfd_open(pid)
print(select.select([fd], [], [], 0)[0], select.select([fd], [], [], 5)[0] == [fd], os.waitpid(pid, 0)[1] >> 8)
pid = os.fork()
if pid == 0:
    time.sleep(30)
    os._exit(0)
signal.pidfd_send_signal(os.pidfd_open(pid), signal.SIGTERM)
print(os.waitpid(pid, 0)[1] & 0x7f)'
	assert_eq "[] True 4
15" "$OUT" "a pidfd is readable once its process exits, and signals it"
}

run_test splice_tee t_splice_tee
run_test user_xattrs t_user_xattrs
run_test pidfd t_pidfd
