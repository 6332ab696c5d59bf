#!/usr/bin/env bash
# The root is writable inside the sandbox (an overlay in the sentry's
# memory) and untouched on the host.
. "$(dirname "$0")/lib.sh"
HERE=$(cd "$(dirname "$0")" && pwd)

t_write_etc()
{
	local name=moat-ovl-$(random_token)
	capture moat do -- /bin/sh -c "
		echo hello > /etc/$name && cat /etc/$name
		echo extra >> /etc/hostname && tail -1 /etc/hostname
		chmod 600 /etc/passwd && stat -c %a /etc/passwd
		ls /etc | grep -c $name"
	assert_eq "hello
extra
600
1" "$OUT" "create, append to and chmod rootfs files inside"
	[ ! -e "/etc/$name" ] || fail "a file created in the sandbox reached the host's /etc"
	[ "$(tail -1 /etc/hostname)" != extra ] || fail "the host's /etc/hostname changed"
	[ "$(stat -c %a /etc/passwd)" = 644 ] || fail "the host's /etc/passwd changed mode"
}

t_rm_rf_python()
{
	capture moat do -- /bin/sh -c 'rm -rf /usr/lib/python3.11 && ls /usr/lib/python3.11 2>&1; echo done'
	assert_contains "$OUT" "No such file or directory" "the tree is gone inside"
	[ -e /usr/lib/python3.11/os.py ] || fail "the host's /usr/lib/python3.11 was harmed"
}

t_merged_dirs()
{
	capture moat do -- /bin/sh -c '
		mkdir /opt/moat-new && touch /opt/moat-new/f /usr/share/moat-file
		ls /usr/share | grep -c "^doc$\|^moat-file$"
		mv /usr/share/moat-file /usr/share/moat-moved && ls /usr/share | grep -c moat-
		cp /etc/os-release /etc/copy && mv /etc/copy /etc/copy2 && cmp /etc/os-release /etc/copy2 && echo same
		mv /usr/share/doc/bash /usr/share/doc/bash-moved && ls /usr/share/doc/bash-moved | wc -l
		ls -d /usr/share/doc/bash 2>&1 | grep -c "No such"'
	assert_eq "2
1
same
$(ls /usr/share/doc/bash | wc -l)
1" "$OUT" "merged listings, renames of rootfs files, and mv of a rootfs directory (copied)"
}

t_rename_over_rootfs()
{
	capture moat do -- $PY -c '
import os
def tryit(a, b):
    try:
        os.rename(a, b)
        print("ok")
    except OSError as e:
        print(e.strerror)
open("/etc/moat-f", "w").write("hi")
tryit("/etc/moat-f", "/etc/apt")             # file over a rootfs directory
os.makedirs("/opt/moat-d/sub")
tryit("/opt/moat-d", "/usr/share/doc/bash")  # dir over a non-empty one
open("/usr/share/doc/dpkg/moat-new", "w").close()
tryit("/usr/share/doc/dpkg", "/usr/share/doc/dpkg2")  # copied up: EXDEV
print(len(os.listdir("/usr/share/doc/dpkg")) > 1, os.path.isdir("/etc/apt"))
os.rmdir("/opt/moat-d/sub")
os.makedirs("/usr/share/moat-e/x"); os.rmdir("/usr/share/moat-e/x")
tryit("/opt/moat-d", "/usr/share/moat-e")    # over an empty one: allowed
print(os.listdir("/usr/share/moat-e"))
'
	assert_eq "Is a directory
Directory not empty
Invalid cross-device link
True True
ok
[]" "$OUT" "renames over rootfs names check type and emptiness; merged directories are not moved"
	capture moat do -- /bin/sh -c 'mv /usr/share/doc/dpkg /var/tmp/moat-dp 2>&1; ls /var/tmp/moat-dp | wc -l'
	assert_eq "$(ls /usr/share/doc/dpkg | wc -l)" "$OUT" "mv of a rootfs directory copies it without complaints"
}

t_readdir_during_copyup()
{
	local n
	gcc -O1 -static -o "$E2E_TMP/readdir_copyup" "$HERE/readdir_copyup.c" ||
		fail "cannot build readdir_copyup.c"
	n=$(($(ls -A /usr/share/doc | wc -l) + 3)) # ".", ".." and the marker
	capture moat do -- "$E2E_TMP/readdir_copyup" /usr/share/doc
	assert_eq "$n $n $n" "$OUT" "copy-ups during a merged listing lose and repeat no entry"
}

t_trunc_rdonly()
{
	capture moat do -- $PY -c '
import os
os.close(os.open("/etc/os-release", os.O_RDONLY | os.O_TRUNC))
print(os.path.getsize("/etc/os-release"))
os.setuid(65534)
try:
    os.open("/etc/hostname", os.O_RDONLY | os.O_TRUNC)
    print("opened")
except OSError as e:
    print(e.strerror)
'
	assert_eq "0
Permission denied" "$OUT" "O_RDONLY|O_TRUNC truncates, and needs write permission"
	[ -s /etc/os-release ] || fail "the host's /etc/os-release was truncated"
}

t_unprivileged_changes()
{
	capture moat do -- $PY -c '
import os
os.setuid(65534)
for name, fn in (("chmod", lambda: os.chmod("/etc/passwd", 0o777)),
                 ("chown", lambda: os.chown("/etc/passwd", 65534, -1)),
                 ("utime", lambda: os.utime("/etc/passwd", (1, 1))),
                 ("utime-now", lambda: os.utime("/etc/passwd")),
                 ("rename", lambda: os.rename("/etc/passwd", "/etc/pw"))):
    try:
        fn(); print(name, "ok")
    except OSError as e:
        print(name, e.strerror)
'
	assert_eq "chmod Operation not permitted
chown Operation not permitted
utime Operation not permitted
utime-now Permission denied
rename Permission denied" "$OUT" "changes to rootfs files another user owns are refused as on Linux, before any copy-up"
}

t_stale_fd_no_resurrection()
{
	capture moat do -- $PY -c '
import os, shutil
fd = os.open("/usr/share/doc/dpkg/copyright", os.O_RDONLY)
shutil.rmtree("/usr/share/doc/dpkg")
os.mkdir("/usr/share/doc/dpkg")
try:
    os.fchmod(fd, 0o600)
except OSError:
    pass
print(os.listdir("/usr/share/doc/dpkg"))
'
	assert_eq "[]" "$OUT" "a change through an fd of a removed rootfs file does not bring it back"
}

t_sticky_rootfs_dir()
{
	mkdir -m 1777 "$E2E_TMP/sticky"
	echo hi >"$E2E_TMP/sticky/roots"
	chmod 644 "$E2E_TMP/sticky/roots"
	capture moat do -- $PY -c '
import os, sys
d = sys.argv[1]
os.setuid(1000)
open(d + "/mine", "w").write("x")
for name, fn in (("unlink", lambda: os.unlink(d + "/roots")),
                 ("rename over", lambda: os.rename(d + "/mine", d + "/roots")),
                 ("rename away", lambda: os.rename(d + "/roots", d + "/x")),
                 ("unlink own", lambda: os.unlink(d + "/mine"))):
    try:
        fn(); print(name, "ok")
    except OSError as e:
        print(name, e.strerror)
' "$E2E_TMP/sticky"
	assert_eq "unlink Operation not permitted
rename over Operation not permitted
rename away Operation not permitted
unlink own ok" "$OUT" "a sticky rootfs directory protects another user's files"
}

t_rmdir_and_recreate()
{
	capture moat do -- /bin/sh -c '
		rmdir /usr/share/doc/bash 2>&1 | grep -c "not empty"
		rm /usr/share/doc/bash/* && rmdir /usr/share/doc/bash && echo removed
		mkdir /usr/share/doc/bash && ls /usr/share/doc/bash | wc -l'
	assert_eq "1
removed
0" "$OUT" "a non-empty rootfs dir is ENOTEMPTY; emptied it goes; recreated it is empty"
}

t_python_site_packages()
{
	capture moat do -- $PY -c '
import sys, os, importlib
site = [p for p in sys.path if p.endswith("dist-packages")][0]
os.makedirs(site, exist_ok=True)
open(os.path.join(site, "moat_probe_mod.py"), "w").write("VALUE = 42\n")
importlib.invalidate_caches()
import moat_probe_mod
print(moat_probe_mod.VALUE)'
	assert_eq "42" "$OUT" "a module written into site-packages imports"
	! ls /usr/lib/python3/dist-packages/moat_probe_mod.py 2>/dev/null || fail "it reached the host"
}

# Compat: HOME was the host's /root, which the gofer (serving / as nobody)
# cannot read: mkdir in it worked, but a file in the new directory, or a
# stat of a missing name, gave EACCES. Jupyter's kernel died of it, and
# every cache under ~ failed.
t_home_is_writable()
{
	capture moat do -- /bin/sh -c '
		cd && pwd && ls -A | wc -l
		mkdir d && echo data > d/f && cat d/f
		stat d/missing 2>&1 | grep -c "No such file"
		stat missing 2>&1 | grep -c "No such file"
		mkdir -p .cache/a/b && touch .cache/a/b/c && ls -A
		ls -ld . | cut -c1-10'
	assert_eq "/root
0
data
1
1
.cache
d
drwx------" "$OUT" "the guest's HOME is an empty directory it can list and write"
	capture moat do -- $PY -c '
import os
home = os.path.expanduser("~")
os.makedirs(os.path.join(home, ".cache", "torch", "hub"))
p = os.path.join(home, ".cache", "torch", "hub", "m.txt")
open(p, "w").write("cached")
print(home, open(p).read(), os.access(home, os.W_OK))'
	assert_eq "/root cached True" "$OUT" "python's expanduser(\"~\") is writable"
	[ ! -e /root/d ] && [ ! -e /root/.cache/torch ] || fail "the guest's home reached the host's /root"
}

t_home_env_and_rootfs()
{
	local root=$E2E_TMP/bbroot
	capture moat do --env HOME=/home/moat-user -- /bin/sh -c 'cd && pwd && touch f && ls'
	assert_eq "/home/moat-user
f" "$OUT" "a --env HOME the rootfs lacks is made, writable"
	[ ! -e /home/moat-user ] || fail "the made home reached the host"
	make_busybox_rootfs "$root"
	capture moat do --rootfs "$root" -- /bin/sh -c 'cd && pwd && echo x > f && cat f'
	assert_eq "/root
x" "$OUT" "a --rootfs without /root gets one"
	[ ! -e "$root/root" ] || fail "the rootfs was changed"
	capture moat do --env HOME=/tmp -- /bin/sh -c 'cd && pwd && ls -ld . | cut -c1-10'
	assert_eq "/tmp
drwxrwxrwt" "$OUT" "a HOME on tmpfs is left as it is"
}

# A directory the guest makes is its own: below it the rootfs is never
# asked, even where a rootfs directory the gofer cannot read (mode 0700,
# owned by root: nobody may not search it) holds the same path.
t_upper_dir_below_unreadable()
{
	mkdir -p "$E2E_TMP/priv/sub" && echo secret >"$E2E_TMP/priv/sub/inner"
	chmod 700 "$E2E_TMP/priv"
	capture moat do -- /bin/sh -c '
		cd "$1" || exit 9
		mkdir new && echo a > new/f && cat new/f
		stat new/missing 2>&1 | grep -c "No such file"
		mkdir new/deeper && touch new/deeper/g && ls new
		mkdir sub && ls -A sub | wc -l
		cat sub/inner 2>&1 | grep -c "No such file"
		touch sub/mine && ls sub' sh "$E2E_TMP/priv"
	assert_eq "a
1
deeper
f
0
1
mine" "$OUT" "create and stat below a new directory whose rootfs path is unreadable"
	[ ! -e "$E2E_TMP/priv/new" ] || fail "the new directory reached the host"
}

# Compat: a rename that fails (EEXIST, EXDEV, EISDIR, ENOTDIR, EINVAL,
# ENOTEMPTY, ...) once copied its source up into the overlay first: a
# failed `mv` of a big rootfs file filled memory, and the copy showed
# (st_nlink of a hard-linked file, st_blocks, a directory's st_nlink). The
# same renames of the same tree natively, in a scratch copy: the same
# errnos, and nothing changed.
make_rename_tree()
{
	mkdir -p "$1/d/sub" "$1/e" "$1/z"
	head -c 5000 /dev/zero | tr '\0' a >"$1/f"
	ln "$1/f" "$1/f2"
	echo g >"$1/g"
	head -c 8388608 /dev/zero >"$1/big"
	echo x >"$1/d/x"
	echo y >"$1/e/y"
	chmod -R a+rX "$1"
}

t_failed_rename_copies_nothing()
{
	local nout
	cp "$HERE/rename_fail.py" "$E2E_TMP/rename_fail.py"
	chmod 644 "$E2E_TMP/rename_fail.py"
	make_rename_tree "$E2E_TMP/rn-native"
	make_rename_tree "$E2E_TMP/rn-lower"
	capture native $PY "$E2E_TMP/rename_fail.py" "$E2E_TMP/rn-native"
	assert_eq 0 "$STATUS" "the native run"
	assert_contains "$OUT" "unchanged: everything" "natively, failed renames change nothing"
	nout=$OUT
	capture moat do -- $PY "$E2E_TMP/rename_fail.py" "$E2E_TMP/rn-lower" --space
	assert_eq "$nout
space: same" "$OUT" "the same errnos as natively, nothing copied up, no space used"
}

run_test "writes to /etc stay in the sandbox" t_write_etc
run_test "rm -rf of a rootfs tree leaves the host's intact" t_rm_rf_python
run_test "merged directories and renames" t_merged_dirs
run_test "renames over rootfs names" t_rename_over_rootfs
run_test "listing a merged directory while copying up" t_readdir_during_copyup
run_test "read-only opens with O_TRUNC" t_trunc_rdonly
run_test "unprivileged changes to rootfs files" t_unprivileged_changes
run_test "stale fds of removed rootfs files" t_stale_fd_no_resurrection
run_test "sticky rootfs directories" t_sticky_rootfs_dir
run_test "rmdir of rootfs directories" t_rmdir_and_recreate
run_test "python writes into site-packages" t_python_site_packages
run_test "the guest's home is writable" t_home_is_writable
run_test "HOME from --env, and under --rootfs" t_home_env_and_rootfs
run_test "new directories below an unreadable rootfs one" t_upper_dir_below_unreadable
run_test "a failed rename copies nothing up" t_failed_rename_copies_nothing
e2e_done
