#!/usr/bin/env bash
# tmpfs at /tmp and /dev/shm: writable inside the sandbox, in the sentry's
# memory, invisible to the host; the rootfs stays read-only.
. "$(dirname "$0")/lib.sh"

t_shell_ops()
{
	capture moat do -- /bin/sh -c '
		echo hello > /tmp/a && cat /tmp/a
		mkdir -p /tmp/d/e && echo x > /tmp/d/e/f && mv /tmp/d /tmp/g
		cat /tmp/g/e/f && ls /tmp/g/e
		ln -s /tmp/g/e/f /tmp/l && cat /tmp/l && readlink /tmp/l
		ln /tmp/a /tmp/hard && stat -c %h /tmp/a
		echo more >> /tmp/a && wc -c < /tmp/a
		touch /tmp/t && chmod 640 /tmp/t && stat -c "%a %U %G" /tmp/t
		truncate -s 10 /tmp/t && stat -c %s /tmp/t
		rm -r /tmp/g /tmp/l /tmp/hard /tmp/t && ls /tmp
		cd /tmp && mkdir sub && cd sub && pwd && cd .. && rmdir sub
	'
	assert_eq 0 "$STATUS" "the shell script runs"
	assert_eq "hello
x
f
x
/tmp/g/e/f
2
11
640 root root
10
a
/tmp/sub" "$OUT" "create, append, mkdir, rename, symlink, link, chmod, truncate, rm work in /tmp"
}

t_mprotect_readonly_map()
{
	# A shared mapping of a file opened read-only: mprotect runs natively,
	# so the mapping must be of a read-only description, or it could be
	# made writable and write a file its opener may not write.
	capture moat do -- $PY -c '
import mmap, os, ctypes
with open("/tmp/f", "w") as f:
    f.write("original" + "\0" * 4088)
os.chmod("/tmp/f", 0o644)
os.setuid(1000)
fd = os.open("/tmp/f", os.O_RDONLY)
m = mmap.mmap(fd, 4096, mmap.MAP_SHARED, mmap.PROT_READ)
libc = ctypes.CDLL(None, use_errno=True)
maps = open("/proc/self/maps").read()
start = next(int(l.split("-")[0], 16) for l in maps.splitlines() if "/tmp/f" in l)
rc = libc.mprotect(ctypes.c_void_p(start), 4096, 3)
print("mprotect", rc, ctypes.get_errno() if rc else 0)
if rc == 0:
    ctypes.memmove(start, b"CHANGED!", 8)
print(open("/tmp/f").read(8))
'
	assert_eq 0 "$STATUS" "the script ran: $ERR"
	assert_contains "$OUT" "mprotect -1 13" "mprotect to writable is EACCES"
	assert_contains "$OUT" "original" "the file is unchanged"
}

# MAP_SHARED_VALIDATE (0x03) is a shared mapping as MAP_SHARED is: a
# writable one of a file opened read-only is EACCES, not a mapping of the
# tmpfs file's read-write host fd that writes a file its opener may not.
t_shared_validate_readonly_map()
{
	capture moat do -- $PY -c '
import mmap, os
with open("/tmp/f", "w") as f:
    f.write("original" + "\0" * 4088)
os.chmod("/tmp/f", 0o644)
os.setuid(1000)
fd = os.open("/tmp/f", os.O_RDONLY)
try:
    m = mmap.mmap(fd, 4096, 0x03, mmap.PROT_READ | mmap.PROT_WRITE)
    m[0:8] = b"CHANGED!"
    m.close()
    print("mapped")
except OSError as e:
    print("refused", e.errno)
print(open("/tmp/f").read(8))
'
	assert_eq 0 "$STATUS" "the script ran: $ERR"
	assert_contains "$OUT" "refused 13" "MAP_SHARED_VALIDATE, PROT_WRITE: EACCES"
	assert_contains "$OUT" "original" "the file is unchanged"
}

# A rename gives every node below it its new path, one level at a time:
# with a PATH_MAX buffer on the stack per level, a chain of directories as
# deep as PATH_MAX allows overflowed the sentry's stack (SIGSEGV).
t_rename_a_deep_tree()
{
	capture moat do -- $PY -c '
import os
os.chdir("/tmp")
for i in range(2040):
    os.mkdir("a")
    os.chdir("a")
os.chdir("/tmp")
os.rename("/tmp/a", "/tmp/b")
os.chdir("/tmp/b/a/a")
print(os.getcwd())
'
	assert_eq 0 "$STATUS" "the rename of a 2040-deep tree: $ERR"
	assert_eq "/tmp/b/a/a" "$OUT" "its nodes have their new paths"
}

t_errors()
{
	capture moat do -- /bin/sh -c '
		mkdir /tmp/x; mkdir /tmp/x 2>/dev/null || echo EEXIST
		echo f > /tmp/x/f; rmdir /tmp/x 2>/dev/null || echo ENOTEMPTY
		rm /tmp/x 2>/dev/null || echo EISDIR
		cat /tmp/nothing 2>/dev/null || echo ENOENT
		echo > /proc/moat-x 2>/dev/null || echo EPERM
		mv /tmp/x/f /dev/shm/f && cat /dev/shm/f
	'
	assert_eq "EEXIST
ENOTEMPTY
EISDIR
ENOENT
EPERM
f" "$OUT" "errors as Linux gives them; a move across tmpfs mounts copies"
}

t_python_tempfile_mmap_sqlite()
{
	capture moat do -- $PY -u -c '
import tempfile, os, mmap, shutil, sqlite3
d = tempfile.mkdtemp()
p = os.path.join(d, "f.bin")
with open(p, "wb") as f:
    f.write(b"\0" * 8192)
with open(p, "r+b") as f:
    m = mmap.mmap(f.fileno(), 8192)
    m[0:5] = b"hello"
    m.close()
print(open(p, "rb").read(5))
db = sqlite3.connect(os.path.join(d, "t.db"))
db.execute("create table t(a)")
db.executemany("insert into t values (?)", [(i,) for i in range(10000)])
db.commit()
print(db.execute("select count(*), sum(a) from t").fetchone())
shutil.copytree(d, d + "-copy")
print(sorted(os.listdir(d + "-copy")))
shutil.rmtree(d)
print(os.path.exists(d))
'
	assert_eq "b'hello'
(10000, 49995000)
['f.bin', 't.db']
False" "$OUT" "tempfile, a shared file mapping, sqlite and shutil work in /tmp"
}

t_shm_shared_between_processes()
{
	capture moat do -- $PY -u -c '
import os, mmap
fd = os.open("/dev/shm/seg", os.O_CREAT | os.O_RDWR, 0o600)
os.ftruncate(fd, 4096)
m = mmap.mmap(fd, 4096)
pid = os.fork()
if pid == 0:
    m[:5] = b"child"
    os._exit(0)
os.waitpid(pid, 0)
print(m[:5])
'
	assert_eq "b'child'" "$OUT" "a MAP_SHARED mapping of a /dev/shm file is shared across fork"
}

t_venv()
{
	capture moat do -- /bin/sh -c 'python3 -m venv /tmp/v && /tmp/v/bin/python -c "import sys; print(sys.prefix)"'
	assert_eq "/tmp/v" "$OUT" "python3 -m venv in /tmp and its python run"
}

t_git_round_trip()
{
	capture moat do --env HOME=/tmp -- /bin/sh -c '
		cd /tmp && git init -q r && cd r && echo a > a && git add a &&
		git -c user.email=a@b -c user.name=n commit -qm first &&
		git log --format=%s'
	assert_eq "first" "$OUT" "git init/add/commit/log in /tmp"
}

t_host_untouched()
{
	local name=moat-tmpfs-$(random_token)
	capture moat do -- /bin/sh -c "echo secret > /tmp/$name; mkdir /dev/shm/$name; ls /tmp"
	assert_contains "$OUT" "$name" "the file exists inside"
	[ ! -e "/tmp/$name" ] || fail "the guest's /tmp file reached the host's /tmp"
	[ ! -e "/dev/shm/$name" ] || fail "the guest's /dev/shm dir reached the host"
	capture moat do -- /bin/ls /tmp
	assert_not_contains "$OUT" "$name" "each sandbox starts with an empty /tmp"
}

t_tar_round_trip()
{
	capture moat do -- /bin/sh -c '
		cd /tmp && tar czf src.tgz -C /usr/lib/python3.11 json email &&
		mkdir x && tar xzf src.tgz -C x &&
		(cd /usr/lib/python3.11 && find json email -type f -exec sha256sum {} +) | sort > a &&
		(cd x && find json email -type f -exec sha256sum {} +) | sort > b &&
		cmp a b && echo same'
	assert_eq "same" "$OUT" "a tar czf/xzf round trip in /tmp gives the same checksums"
}

t_sqlite_100k()
{
	capture moat do -- $PY -c '
import sqlite3
db = sqlite3.connect("/tmp/t.db")
db.execute("create table t(a integer, b text)")
db.executemany("insert into t values (?, ?)", ((i, str(i)) for i in range(100000)))
db.commit()
print(db.execute("select count(*), sum(a) from t").fetchone())
print(db.execute("select count(*) from t where b like \"%77%\"").fetchone()[0] > 0)'
	assert_eq "(100000, 4999950000)
True" "$OUT" "a sqlite3 database of 100k rows written and queried"
}

t_copy_calls()
{
	capture moat do -- $PY -c '
import os
src = open("/etc/passwd", "rb").read()
fd_in = os.open("/etc/passwd", os.O_RDONLY)
r, w = os.pipe()
print(os.sendfile(w, fd_in, 0, 10), os.read(r, 10) == src[:10])
a = os.open("/etc/passwd", os.O_RDONLY)
b = os.open("/tmp/q", os.O_WRONLY | os.O_CREAT, 0o644)
print(os.copy_file_range(a, b, 5), open("/tmp/q", "rb").read() == src[:5])'
	assert_eq "10 True
5 True" "$OUT" "sendfile to a pipe and copy_file_range into /tmp"
}

run_test "shell file operations in /tmp" t_shell_ops
run_test "sendfile and copy_file_range" t_copy_calls
run_test "tar round trip" t_tar_round_trip
run_test "sqlite, 100k rows" t_sqlite_100k
run_test "errors in /tmp and on the rootfs" t_errors
run_test "a read-only open cannot be mapped writable" t_mprotect_readonly_map
run_test "nor with MAP_SHARED_VALIDATE" t_shared_validate_readonly_map
run_test "a rename of a tree as deep as PATH_MAX allows" t_rename_a_deep_tree
run_test "python tempfile, mmap, sqlite in /tmp" t_python_tempfile_mmap_sqlite
run_test "/dev/shm mappings are shared across fork" t_shm_shared_between_processes
run_test "python venv in /tmp" t_venv
run_test "git round trip in /tmp" t_git_round_trip
run_test "the host's /tmp is untouched" t_host_untouched
e2e_done
