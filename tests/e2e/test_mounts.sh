#!/usr/bin/env bash
# --mount SRC:DST[:ro|rw|clone]: host directories in the sandbox, read-only,
# read-write through their own gofer, or as a private copy-on-write view.
. "$(dirname "$0")/lib.sh"
HERE=$(cd "$(dirname "$0")" && pwd)

# A small host tree, fresh for each case.
make_src()
{
	SRC=$E2E_TMP/src-$1
	rm -rf "$SRC"
	mkdir -p "$SRC/sub"
	echo hello >"$SRC/a.txt"
	echo inner >"$SRC/sub/b.txt"
	chmod -R a+rX "$SRC"
	SUM_BEFORE=$(cd "$SRC" && find . -printf '%p %m %s %T@\n' | sort | md5sum)
}

src_unchanged()
{
	local now
	now=$(cd "$SRC" && find . -printf '%p %m %s %T@\n' | sort | md5sum)
	[ "$now" = "$SUM_BEFORE" ] || fail "$1: the host directory changed"
}

t_ro_reads_and_every_write_is_erofs()
{
	make_src ro
	capture moat do --mount "$SRC:/w:ro" -- $PY -c '
import errno, os
print(open("/w/a.txt").read().strip(), open("/w/sub/b.txt").read().strip())
print(sorted(os.listdir("/w")), os.path.ismount("/w"))
def erofs(what, f, *a):
    try:
        f(*a)
        print(what, "succeeded")
    except OSError as e:
        print(what, errno.errorcode[e.errno])
erofs("create", open, "/w/new", "w")
erofs("append", open, "/w/a.txt", "a")
erofs("trunc", os.truncate, "/w/a.txt", 0)
erofs("mkdir", os.mkdir, "/w/d")
erofs("rmdir", os.rmdir, "/w/sub")
erofs("unlink", os.unlink, "/w/a.txt")
erofs("rename", os.rename, "/w/a.txt", "/w/b")
erofs("symlink", os.symlink, "x", "/w/l")
erofs("link", os.link, "/w/a.txt", "/w/h")
erofs("chmod", os.chmod, "/w/a.txt", 0o777)
erofs("utime", os.utime, "/w/a.txt", (0, 0))
erofs("mkfifo", os.mkfifo, "/w/f")
print(os.statvfs("/w").f_flag & os.ST_RDONLY)'
	assert_eq "hello inner
['a.txt', 'sub'] True
create EROFS
append EROFS
trunc EROFS
mkdir EROFS
rmdir EROFS
unlink EROFS
rename EROFS
symlink EROFS
link EROFS
chmod EROFS
utime EROFS
mkfifo EROFS
1" "$OUT" "a ro mount reads, and refuses every write with EROFS"
	src_unchanged "ro"
}

t_default_mode_is_ro()
{
	make_src def
	capture moat do --mount "$SRC:/w" -- sh -c 'echo x > /w/a.txt'
	assert_contains "$ERR" "Read-only file system" "no mode means ro"
	src_unchanged "default"
}

t_rw_writes_reach_the_host()
{
	make_src rw
	capture moat do --mount "$SRC:/data/w:rw" -- $PY -c '
import os
open("/data/w/new.txt", "w").write("new\n")
with open("/data/w/a.txt", "a") as f: f.write("more\n")
os.mkdir("/data/w/d")
os.symlink("../a.txt", "/data/w/d/ln")
os.link("/data/w/new.txt", "/data/w/d/hard")
os.rename("/data/w/sub/b.txt", "/data/w/d/b.txt")
os.rmdir("/data/w/sub")
os.chmod("/data/w/new.txt", 0o600)
os.utime("/data/w/new.txt", (1000000000, 1000000000))
fd = os.open("/data/w/ro.txt", os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o444)
os.write(fd, b"still writable"); os.fsync(fd); os.close(fd)
print(open("/data/w/d/ln").read().strip())
print(os.stat("/data/w/d/hard").st_nlink, oct(os.stat("/data/w/new.txt").st_mode & 0o777))
try:
    os.rename("/data/w/d", "/tmp/elsewhere")
except OSError as e:
    print("EXDEV" if e.errno == 18 else e)'
	assert_eq "hello
more
2 0o600
EXDEV" "$OUT" "writes through a rw mount"
	[ "$(cat "$SRC/new.txt")" = new ] || fail "new.txt did not reach the host"
	[ "$(cat "$SRC/a.txt")" = "hello
more" ] || fail "the append did not reach the host"
	[ "$(readlink "$SRC/d/ln")" = ../a.txt ] || fail "the symlink is not on the host"
	[ "$(cat "$SRC/d/b.txt")" = inner ] || fail "the rename is not on the host"
	[ ! -e "$SRC/sub" ] || fail "rmdir did not reach the host"
	[ "$(stat -c '%a %Y' "$SRC/new.txt")" = "600 1000000000" ] || fail "chmod/utime did not reach the host"
	[ "$(cat "$SRC/ro.txt")" = "still writable" ] || fail "a file created 0444 was not writable through its creating fd"
	[ "$(stat -c %a "$SRC/ro.txt")" = 444 ] || fail "ro.txt mode"
}

t_rw_git_round_trip()
{
	make_src git
	capture moat do --mount "$SRC:/repo:rw" --cwd /repo -- sh -c '
		git init -q . && git -c user.email=a@b -c user.name=moat add -A &&
		git -c user.email=a@b -c user.name=moat commit -qm first &&
		git log --oneline | wc -l'
	assert_eq 1 "$OUT" "git commits into a rw mount"
	[ "$(git -C "$SRC" log --format=%s)" = first ] || fail "the host sees no commit"
}

t_xattrs_through_the_gofer()
{
	make_src xattr
	$PY -c "import os; os.setxattr('$SRC/a.txt', 'user.host', b'hv')" ||
		fail "the host filesystem has no user xattrs"
	capture moat do --mount "$SRC:/w:rw" -- $PY -c '
import os
print(os.listxattr("/w/a.txt"), os.getxattr("/w/a.txt", "user.host"))
os.setxattr("/w/a.txt", "user.new", b"nv"); os.removexattr("/w/a.txt", "user.host")
print(sorted(os.listxattr("/w/a.txt")))'
	assert_eq "['user.host'] b'hv'
['user.new']" "$OUT" "a rw mount's xattrs are the host's"
	assert_eq "['user.new'] b'nv'" "$($PY -c "import os; print(os.listxattr('$SRC/a.txt'), os.getxattr('$SRC/a.txt', 'user.new'))")" "and reach it"
	capture moat do --mount "$SRC:/w:ro" -- $PY -c '
import os
print(os.getxattr("/w/a.txt", "user.new"))
try:
    os.setxattr("/w/a.txt", "user.x", b"1")
except OSError as e:
    print(e.errno)'
	assert_eq "b'nv'
30" "$OUT" "a ro mount's xattrs read, and never change"
}

t_clone_is_private()
{
	make_src clone
	capture moat do --mount "$SRC:/w:clone" -- sh -c '
		cd /w && echo changed > a.txt && echo new > n.txt && rm sub/b.txt &&
		mkdir d && cat a.txt n.txt && ls | tr "\n" " " && ls sub | wc -l'
	assert_eq "changed
new
a.txt d n.txt sub 0" "$OUT" "edits of a clone mount are visible inside"
	src_unchanged "clone"
	[ "$(cat "$SRC/a.txt")" = hello ] || fail "clone: a.txt changed on the host"
	[ ! -e "$SRC/n.txt" ] || fail "clone: n.txt reached the host"
}

t_mount_point_is_listed()
{
	make_src list
	capture moat do --mount "$SRC:/moat-w:ro" --mount "$SRC:/opt/moat-c:clone" -- sh -c 'ls / | grep -c "^moat-w$"; ls /opt | grep -c "^moat-c$"; stat -c %d /moat-w /opt/moat-c / | sort -u | wc -l'
	assert_eq "1
1
3" "$OUT" "mount points appear in their parents, each with its own st_dev"
	[ ! -e /moat-w ] && [ ! -e /opt/moat-c ] || fail "a mount point was made on the host"
}

t_bad_mount_arguments()
{
	local bad
	for bad in "nope" "$E2E_TMP/does-not-exist:/w" "/etc/passwd:/w" "/tmp:relative" \
		"/tmp:/w:rx" "/tmp:/" "/tmp:/proc/x" "/tmp:/dev" "/tmp:/a/../b" "/tmp:/tmp/x:clone"; do
		capture moat do --mount "$bad" -- true
		assert_eq 2 "$STATUS" "--mount $bad is refused"
		assert_contains "$ERR" "--mount" "--mount $bad: the message names the option"
	done
}

# A workspace under the guest's home (--mount DIR:/root/work): the host's
# /root, which the gofer serves as nobody, could not be searched, so its
# mount point could not be made (EACCES at setup). The home is the
# guest's own now; each mode works there, and a clone's files show
# through the home that hides the host's /root.
t_mount_under_home()
{
	local m
	for m in ro rw clone; do
		make_src "home-$m"
		capture moat do --mount "$SRC:/root/work:$m" -- sh -c 'cat ~/work/a.txt ~/work/sub/b.txt && ls -A ~ && touch ~/mine && ls ~'
		assert_eq 0 "$STATUS" "--mount at /root/work:$m starts"
		assert_eq "hello
inner
work
mine
work" "$OUT" "a $m mount under HOME, and the rest of HOME writable"
		src_unchanged "$m under HOME"
	done
}

# /proc/self/mountinfo, /proc/mounts and mountstats list the sandbox's
# mounts, each with the options the sentry enforces there, and agree with
# stat's st_dev and statvfs's f_flag (tests/e2e/mount_table.py, which says
# "ok" natively too). They were a fixed text: no --mount in it, and a
# root of st_dev 0:0 listed as 0:30.
t_mount_table_is_the_sandboxs()
{
	local fs want
	make_src table
	mkdir -p "$E2E_TMP/odd"
	cp "$HERE/mount_table.py" "$E2E_TMP/mount_table.py"
	chmod 644 "$E2E_TMP/mount_table.py"
	capture native $PY "$E2E_TMP/mount_table.py"
	assert_eq ok "$(head -1 <<<"$OUT")" "the checker holds natively"
	fs=$(findmnt -n -o FSTYPE --target "$SRC")
	capture moat do --mount "$SRC:/w:ro" --mount "$SRC:/w2:rw" \
		--mount "$SRC:/opt/c:clone" --mount "$E2E_TMP/odd:/o d"$'\t'"d\\e" -- \
		sh -c "$PY $E2E_TMP/mount_table.py; grep -F ' /o\\040d\\011d\\134e ' /proc/mounts;
			cmp /proc/1/mountinfo /proc/self/mountinfo && echo same for pid 1"
	want="ok
/ overlay overlay rw,nosuid,nodev,relatime
/proc proc proc rw,nosuid,nodev,noexec,relatime
/dev tmpfs tmpfs rw,nosuid,relatime
/dev/pts devpts devpts rw,nosuid,noexec,relatime
/dev/shm tmpfs shm rw,nosuid,nodev,relatime
/dev/mqueue mqueue mqueue rw,nosuid,nodev,noexec,relatime
/sys sysfs sysfs ro,nosuid,nodev,noexec,relatime
/tmp tmpfs tmpfs rw,nosuid,nodev,relatime
/w $fs none ro,nosuid,nodev,relatime
/w2 $fs none rw,nosuid,nodev,relatime
/opt/c overlay overlay rw,nosuid,nodev,relatime
/o d"$'\t'"d\\e $fs none ro,nosuid,nodev,relatime
none /o\\040d\\011d\\134e $fs ro,nosuid,nodev,relatime 0 0
same for pid 1"
	assert_eq "$want" "$OUT" "every mount, as stat and statvfs see it: $ERR"
}

# The guest's mount table is fixed: mount, umount2 and pivot_root fail as
# for a process without CAP_SYS_ADMIN (they were ENOSYS), each after the
# checks Linux makes first. tests/e2e/guest_mount.c prints the same
# natively, as nobody, and inside.
t_mount_syscalls_as_unprivileged_linux()
{
	local want
	gcc -O1 -o "$E2E_TMP/guest_mount" "$HERE/guest_mount.c" ||
		fail "cannot build guest_mount.c"
	chmod 755 "$E2E_TMP/guest_mount"
	if [ "$(id -u)" = 0 ]; then
		capture native setpriv --reuid=65534 --regid=65534 --clear-groups \
			--inh-caps=-all --bounding-set=-all "$E2E_TMP/guest_mount"
	else
		capture native "$E2E_TMP/guest_mount"
	fi
	want=$OUT
	assert_contains "$want" "umount2 /tmp: EPERM" "the native run worked"
	capture moat do -- "$E2E_TMP/guest_mount"
	assert_eq "$want" "$OUT" "each errno as Linux's: $ERR"
}

run_test ro_reads_and_every_write_is_erofs t_ro_reads_and_every_write_is_erofs
run_test default_mode_is_ro t_default_mode_is_ro
run_test rw_writes_reach_the_host t_rw_writes_reach_the_host
run_test rw_git_round_trip t_rw_git_round_trip
run_test xattrs_through_the_gofer t_xattrs_through_the_gofer
run_test clone_is_private t_clone_is_private
run_test mount_point_is_listed t_mount_point_is_listed
run_test bad_mount_arguments t_bad_mount_arguments
run_test mount_under_home t_mount_under_home
run_test mount_table_is_the_sandboxs t_mount_table_is_the_sandboxs
run_test mount_syscalls_as_unprivileged_linux t_mount_syscalls_as_unprivileged_linux
