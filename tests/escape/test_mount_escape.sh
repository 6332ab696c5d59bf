#!/usr/bin/env bash
# Barrier tests for --mount: a host directory given to the sandbox, even
# read-write, is the only host tree it can change, whatever symlinks and
# ".." it holds or the guest makes.
. "$(dirname "$0")/../e2e/lib.sh"
HERE=$(cd "$(dirname "$0")" && pwd)

t_host_symlinks_in_a_rw_mount_stay_inside()
{
	local src=$E2E_TMP/rw-links tok
	tok=moat-esc-$(random_token)
	mkdir -p "$src/in"
	ln -s / "$src/hostroot"
	ln -s .. "$src/up"
	ln -s "$E2E_TMP" "$src/abs"
	chmod -R a+rX "$src"
	capture moat do --mount "$src:/w:rw" -- sh -c "
		echo x > /w/hostroot/var/tmp/$tok; echo \$?
		echo x > /w/up/$tok; echo \$?
		echo x > /w/abs/$tok; echo \$?
		echo x > /w/in/../../$tok; echo \$?
		mkdir -p $E2E_TMP && echo x > /w/abs/$tok && cat $E2E_TMP/$tok"
	assert_eq "0
0
0
0
x" "$OUT" "writes through the links land in the sandbox's own tree"
	[ ! -e "/var/tmp/$tok" ] || fail "a write through a host symlink reached the host's /var/tmp"
	[ ! -e "$src/../$tok" ] && [ ! -e "$E2E_TMP/$tok" ] || fail "a write escaped the mount"
	[ ! -e "/$tok" ] || fail "a write reached the host's /"
	[ -z "$(find "$src" -name "$tok")" ] || fail "a link was followed on the host side"
}

t_guest_symlinks_in_a_rw_mount_stay_inside()
{
	local src=$E2E_TMP/rw-guest tok
	tok=moat-esc-$(random_token)
	mkdir -p "$src"
	chmod a+rwx "$src"
	capture moat do --mount "$src:/w:rw" -- sh -c "
		ln -s /etc /w/etc && echo x > /w/etc/$tok && cat /etc/$tok
		ln -s /var/tmp /w/vt && mkdir /w/vt/$tok && echo made"
	assert_eq "x
made" "$OUT" "links the guest makes resolve in the guest's namespace"
	[ ! -e "/etc/$tok" ] || fail "a guest-made link wrote into the host's /etc"
	[ ! -e "/var/tmp/$tok" ] || fail "a guest-made link made a directory in the host's /var/tmp"
	[ "$(readlink "$src/etc")" = /etc ] || fail "the link itself should be on the host, as text"
}

t_ro_mount_refuses_even_when_host_modes_allow()
{
	local src=$E2E_TMP/ro-open
	mkdir -p "$src"
	echo keep >"$src/f"
	chmod 777 "$src"
	chmod 666 "$src/f"
	capture moat do --mount "$src:/w:ro" -- sh -c 'echo gone > /w/f; rm -f /w/f; mv /w/f /w/g; echo done'
	assert_eq done "$OUT" "the shell ran to the end"
	[ "$(cat "$src/f")" = keep ] && [ ! -e "$src/g" ] || fail "a ro mount was written"
}

t_rw_mount_gofer_sees_only_its_directory()
{
	local src=$E2E_TMP/rw-only tok
	tok=moat-esc-$(random_token)
	mkdir -p "$src"
	chmod a+rwx "$src"
	# A rename of the mount's own contents out of it, and hard links to
	# files outside, are refused: EXDEV, as across two host filesystems.
	capture moat do --mount "$src:/w:rw" -- $PY -c "
import os
open('/w/f', 'w').write('x')
for what, f in (('rename out', lambda: os.rename('/w/f', '/etc/$tok')),
                ('link in', lambda: os.link('/etc/passwd', '/w/$tok')),
                ('link out', lambda: os.link('/w/f', '/etc/$tok'))):
    try:
        f()
        print(what, 'ok')
    except OSError as e:
        print(what, e.errno)"
	assert_eq "rename out 18
link in 18
link out 18" "$OUT" "nothing crosses the mount's edge"
	[ ! -e "$src/$tok" ] && [ ! -e "/etc/$tok" ] || fail "a link or rename crossed the mount"
}

t_rw_mount_cannot_remove_host_submounts()
{
	local src=$E2E_TMP/rw-sub
	mkdir -p "$src/sub"
	chmod a+rwx "$src" "$src/sub"
	mount -t tmpfs -o mode=0777 moat-test "$src/sub" ||
		fail "could not make a host mount for the test"
	echo keep >"$src/sub/f"
	# The gofer does not enter a host mount point (EXDEV, so rmdir and
	# rename of it fail at the walk); renaming onto it reaches the host
	# kernel, which must answer EBUSY, never detach the host's mount.
	capture moat do --mount "$src:/w:rw" -- $PY -c "
import os
for what, f in (('rmdir', lambda: os.rmdir('/w/sub')),
                ('rename', lambda: os.rename('/w/sub', '/w/moved')),
                ('rename over', lambda: (os.mkdir('/w/d'), os.rename('/w/d', '/w/sub')))):
    try:
        f()
        print(what, 'ok')
    except OSError as e:
        print(what, e.errno)"
	local ok=1
	mountpoint -q "$src/sub" && [ "$(cat "$src/sub/f" 2>/dev/null)" = keep ] || ok=0
	umount -l "$src/sub" 2>/dev/null
	assert_eq "rmdir 18
rename 18
rename over 16" "$OUT" "a host mount point in a rw mount is not removed"
	[ $ok = 1 ] || fail "the host's mount under the rw mount was detached"
}

t_rw_mount_never_makes_setid_files()
{
	local src=$E2E_TMP/rw-suid
	mkdir -p "$src"
	chmod a+rwx "$src"
	capture moat do --mount "$src:/w:rw" -- sh -c '
		cp /bin/true /w/t && chmod 6755 /w/t; echo $?
		touch /w/n && chmod u+s,g+s /w/n; echo $?'
	assert_eq "0
0" "$OUT" "chmod itself succeeds"
	[ -z "$(find "$src" -perm /6000)" ] || fail "a set-id file reached the host: $(find "$src" -perm /6000 -ls)"
}

t_image_symlinks_on_the_way_to_a_mount_point_stay_inside()
{
	# Symlinks of the image on the way to a mount point are followed
	# inside the sandbox, as runc's securejoin does: to a directory of
	# the image, up past its root, to a host path; a dangling link's
	# target is made in the overlay. The mount is where the guest's walk
	# arrives; nothing is made on the host or in the image.
	local r=$E2E_TMP/linkroot src=$E2E_TMP/linksrc tok before
	tok=moat-esc-$(random_token)
	make_busybox_rootfs "$r"
	mkdir "$r/real" "$src"
	echo fromhost >"$src/f"
	ln -s /real "$r/lnk"
	ln -s "../../../../../../var/tmp/$tok" "$r/up"
	ln -s "$E2E_TMP/$tok" "$r/abs"
	ln -s /proc/self "$r/p"
	ln -s / "$r/top"
	chmod -R a+rX "$r" "$src"
	before=$(cd "$r" && find . -printf '%p %y %s\n' | sort)
	capture moat do --rootfs "$r" --mount "$src:/lnk/m" \
		--mount "$src:/up/m" --mount "$src:/abs/m" -- \
		sh -c "cat /real/m/f /var/tmp/$tok/m/f $E2E_TMP/$tok/m/f"
	assert_eq "fromhost
fromhost
fromhost" "$OUT" "each mount is where its path leads in the sandbox: $ERR"
	[ ! -e "/var/tmp/$tok" ] && [ ! -e "$E2E_TMP/$tok" ] ||
		fail "a mount point was made on the host"
	assert_eq "$before" "$(cd "$r" && find . -printf '%p %y %s\n' | sort)" \
		"the image is unchanged"
	# into the sandbox's own /proc, or onto its root: refused, truly
	capture moat do --rootfs "$r" --mount "$src:/p/m" -- true
	assert_ne 0 "$STATUS" "a mount point in /proc"
	assert_contains "$ERR" "mount point \`/p/m\` leads into the sandbox's own /proc or /dev" "says why"
	capture moat do --rootfs "$r" --mount "$src:/top" -- true
	assert_ne 0 "$STATUS" "a mount point at /"
	assert_contains "$ERR" "mount point \`/top\` is \`/\`, the root" "says why"
}

t_a_mount_source_swapped_while_starting_is_not_served_as_root()
{
	# The sentry checks a --mount source (and decides whether it is the
	# host's "/", which is served as the sandbox's helper uid), then its
	# gofer opens it by path. Whoever can write the source's directory
	# may swap in a link to "/" between the two: the gofer served the
	# host's root as uid 0, /etc/shadow included. The gofer now refuses
	# a tree that is not the directory checked.
	local d=$E2E_TMP/swapped r=$E2E_TMP/swap-root sw i out won=0
	mkdir -p "$d/vol"
	echo marker >"$d/vol/marker"
	chmod -R a+rX "$d"
	# The gofer itself, told to expect another directory: refused.
	capture $PY -c '
import os, socket, subprocess, sys
a, b = socket.socketpair()
p = subprocess.run([sys.argv[1], "gofer", "--root", sys.argv[2], "--fd", str(b.fileno()),
                    "--expect", sys.argv[3]], pass_fds=[b.fileno()], capture_output=True, text=True)
print(p.returncode, p.stderr.strip())' "$MOAT" "$d/vol" "$(stat -c %d:%i /)"
	assert_eq "1 gofer: \`$d/vol\` changed while the sandbox started: it is no longer the directory checked" \
		"$OUT" "a tree that is not the one checked is refused"
	# The race itself: swapped to and fro while sandboxes start, the
	# source is the directory, the host's root as the helper uid, or
	# refused; never the host's root as root.
	make_busybox_rootfs "$r"
	ln -s / "$d/lnk"
	gcc -O1 -o "$E2E_TMP/swap_paths" "$HERE/swap_paths.c" || fail "cannot build swap_paths"
	"$E2E_TMP/swap_paths" "$d/vol" "$d/lnk" &
	sw=$!
	for i in $(seq 40); do
		out=$(timeout 20 "$MOAT" do --rootfs "$r" --mount "$d/vol:/m" -- \
			sh -c 'head -c 1 /m/etc/shadow 2>/dev/null && echo " <- shadow"' 2>&1)
		case $out in *"<- shadow"*) won=$((won + 1)) ;; esac
	done
	kill $sw
	wait $sw 2>/dev/null
	assert_eq 0 "$won" "runs in which the guest read the host's /etc/shadow"
}

run_test host_symlinks_in_a_rw_mount_stay_inside t_host_symlinks_in_a_rw_mount_stay_inside
run_test guest_symlinks_in_a_rw_mount_stay_inside t_guest_symlinks_in_a_rw_mount_stay_inside
run_test ro_mount_refuses_even_when_host_modes_allow t_ro_mount_refuses_even_when_host_modes_allow
run_test rw_mount_gofer_sees_only_its_directory t_rw_mount_gofer_sees_only_its_directory
run_test rw_mount_cannot_remove_host_submounts t_rw_mount_cannot_remove_host_submounts
run_test rw_mount_never_makes_setid_files t_rw_mount_never_makes_setid_files
run_test image_symlinks_on_the_way_to_a_mount_point_stay_inside t_image_symlinks_on_the_way_to_a_mount_point_stay_inside
run_test a_mount_source_swapped_while_starting_is_not_served_as_root t_a_mount_source_swapped_while_starting_is_not_served_as_root
