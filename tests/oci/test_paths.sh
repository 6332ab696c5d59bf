#!/usr/bin/env bash
# linux.maskedPaths and linux.readonlyPaths, for any path (not only
# /proc's and /sys's), and /dev/ptmx: what a container sees, compared
# with runc when it is installed (its answer is the expected one). Mounts
# made under a read-only path before it, a directory's and a file's, keep
# their own mode: runc's read-only remount is not recursive.
. "$(dirname "$0")/../e2e/lib.sh"
. "$(dirname "$0")/lib_oci.sh"

RUNC=$(command -v runc || true)

# runc's own default lists (`runc spec`), and paths of the image's.
MASKED='["/proc/acpi","/proc/asound","/proc/kcore","/proc/keys","/proc/latency_stats","/proc/timer_list","/proc/timer_stats","/proc/sched_debug","/sys/firmware","/proc/scsi","/etc/secret","/hidden","/ro/sub/mask","/not/there","link-to-data/masked"]'
READONLY='["/proc/bus","/proc/fs","/proc/irq","/proc/sys","/proc/sysrq-trigger","/ro","/ro-file","/nor/this"]'

# The script the container runs: each line's output, errors included
# (busybox's messages name the errno).
SCRIPT='exec 2>&1
cat /etc/secret; echo "read $?"
stat -c "%F %t:%T %a" /etc/secret
echo x >/etc/secret; echo "write $?"; cat /etc/secret
stat -c "%F %a %u" /hidden; ls -A /hidden; echo "ls $?"
touch /hidden/n; mkdir /hidden/d
touch /ro/n; mkdir /ro/d; rm /ro/f; echo y >>/ro/f; cat /ro/f
touch /ro/sub/n; ls -A /ro/sub/mask; echo "mask in ro $?"
touch /ro/sub/mask/n
echo z >/ro/rw/f && cat /ro/rw/f
echo w >/ro/bound && cat /ro/bound
echo z >/ro-file; cat /ro-file
ls -A /data/masked; echo "through a link $?"
echo moat >/proc/sys/kernel/hostname
umount /ro; umount /etc/secret
mv /ro /ro2; rm /etc/secret
readlink /dev/ptmx; stat -c "%F %t:%T %a" /dev/pts/ptmx; ls /dev/pts
'

WANT='read 0
character special file 1:3 666
write 0
directory 1777 0
ls 0
touch: /hidden/n: Read-only file system
mkdir: can'"'"'t create directory '"'"'/hidden/d'"'"': Read-only file system
touch: /ro/n: Read-only file system
mkdir: can'"'"'t create directory '"'"'/ro/d'"'"': Read-only file system
rm: can'"'"'t remove '"'"'/ro/f'"'"': Read-only file system
sh: can'"'"'t create /ro/f: Read-only file system
keep
touch: /ro/sub/n: Read-only file system
mask in ro 0
touch: /ro/sub/mask/n: Read-only file system
z
w
sh: can'"'"'t create /ro-file: Read-only file system
file
through a link 0
sh: can'"'"'t create /proc/sys/kernel/hostname: Read-only file system
umount: can'"'"'t unmount /ro: Operation not permitted
umount: can'"'"'t unmount /etc/secret: Operation not permitted
mv: can'"'"'t rename '"'"'/ro'"'"': Device or resource busy
rm: can'"'"'t remove '"'"'/etc/secret'"'"': Device or resource busy
pts/ptmx
character special file 5:2 666
ptmx'

# paths_bundle DIR: the bundle SCRIPT runs in.
paths_bundle()
{
	local b=$1 r=$1/rootfs
	python3 -c 'import json,sys; print(json.dumps(["sh","-c",sys.argv[1]]))' "$SCRIPT" >"$E2E_TMP/args.json"
	rm -rf "$b/rw"
	mkdir -p "$b/rw" "$b"
	echo bound >"$b/bound"
	make_bundle "$b" "$(cat "$E2E_TMP/args.json")" \
		'c["root"]["readonly"]=False' \
		"c['linux']['maskedPaths']=$MASKED" \
		"c['linux']['readonlyPaths']=$READONLY" \
		"c['mounts'].append({'destination':'/ro/rw','type':'bind','source':'$b/rw','options':['rbind','rw']})" \
		"c['mounts'].append({'destination':'/ro/bound','type':'bind','source':'$b/bound','options':['bind','rw']})" ||
		return 1
	for a in touch mkdir rm mv umount readlink; do ln -sf busybox "$r/bin/$a"; done
	echo secret >"$r/etc/secret"
	mkdir -p "$r/hidden" "$r/ro/sub/mask" "$r/data/masked" "$r/ro/rw"
	touch "$r/ro/bound"
	echo inner >"$r/hidden/inner"
	echo inner >"$r/ro/sub/mask/inner"
	echo keep >"$r/ro/f"
	echo file >"$r/ro-file"
	echo inner >"$r/data/masked/f"
	ln -sfn data "$r/link-to-data"
}

t_masked_and_readonly_paths()
{
	local b=$E2E_TMP/paths
	paths_bundle "$b" || fail "bundle"
	if [ -n "$RUNC" ]; then
		capture timeout -k 5 30 "$RUNC" --root "$E2E_TMP/runc-root" run --bundle "$b" paths-runc
		assert_eq "$WANT" "$OUT" "runc: the expected answer"
		paths_bundle "$b" || fail "bundle"
	fi
	capture timeout -k 5 30 "$MOAT" --root "$E2E_TMP/root" run --bundle "$b" paths-moat
	assert_eq "$WANT" "$OUT" "masks, read-only paths and /dev/ptmx as runc's"
	[ "$(cat "$b/rootfs/ro/f")" = keep ] && [ "$(cat "$b/rootfs/etc/secret")" = secret ] ||
		fail "the image was changed"
	[ "$(cat "$b/rw/f")" = z ] || fail "the rw bind under the read-only path took no write"
}

t_a_path_through_a_file_is_an_error()
{
	# runc: "can't mask path /etc/secret/x: ... not a directory", and the
	# container does not start; moat refuses it too, naming the field.
	local b=$E2E_TMP/notdir field
	for field in maskedPaths readonlyPaths; do
		make_bundle "$b" '["true"]' "c['linux']['$field']=['/etc/hostname/x']" ||
			fail "bundle"
		if [ -n "$RUNC" ]; then
			capture timeout -k 5 30 "$RUNC" --root "$E2E_TMP/runc-root" run --bundle "$b" notdir-runc
			assert_ne 0 "$STATUS" "runc: $field through a file fails"
		fi
		capture timeout -k 5 30 "$MOAT" --root "$E2E_TMP/root" run --bundle "$b" notdir-moat
		assert_ne 0 "$STATUS" "$field through a file fails"
		assert_contains "$ERR" "linux.$field: \`/etc/hostname/x\`: Not a directory" "names the field"
		[ -z "$(ls -A "$E2E_TMP/root" 2>/dev/null)" ] || fail "state left behind"
	done
	make_bundle "$b" '["true"]' "c['linux']['maskedPaths']=['']" || fail "bundle"
	capture "$MOAT" --root "$E2E_TMP/root" create --bundle "$b" empty
	assert_ne 0 "$STATUS" "an empty path is refused"
	assert_contains "$ERR" "linux.maskedPaths[0]: an empty path" "names it"
}

run_test masked_and_readonly_paths t_masked_and_readonly_paths
run_test a_path_through_a_file_is_an_error t_a_path_through_a_file_is_an_error
e2e_done
