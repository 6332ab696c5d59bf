#!/usr/bin/env bash
# Barrier tests for a bundle's file bind mounts: the one host file is all
# the container reaches, read and written through a gofer confined to it.
# Its host siblings stay out of reach by "..", by /proc/self/fd, by links,
# renames and creates, and are not even in the gofer's namespace.
. "$(dirname "$0")/../e2e/lib.sh"
. "$(dirname "$0")/../oci/lib_oci.sh"
HERE=$(cd "$(dirname "$0")" && pwd)

t_a_file_mount_reaches_nothing_beside_it()
{
	local d=$E2E_TMP/host b=$E2E_TMP/esc root=$E2E_TMP/root-esc tok pid i gofer want
	tok=$(random_token)
	mkdir -p "$d"
	echo "$tok" >"$d/secret"
	: >"$d/tl"
	chmod 755 "$d"
	chmod 644 "$d/secret"
	chmod 666 "$d/tl"
	make_bundle "$b" '["/probe","/dev/termination-log"]' \
		"c['root']['readonly']=False" \
		"c['mounts'].append({'destination':'/dev/termination-log','type':'bind','source':'$d/tl','options':['rbind','rw']})" ||
		fail "bundle"
	gcc -O1 -static -o "$b/rootfs/probe" "$HERE/file_mount_probe.c" ||
		fail "cannot build the probe"
	timeout -k 5 60 "$MOAT" --root "$root" run --bundle "$b" esc1 >"$E2E_TMP/out" 2>&1 &
	pid=$!
	for i in $(seq 300); do
		grep -q from-guest "$d/tl" && break
		sleep 0.1
	done
	# The file's gofer: its "/" holds the one file, nothing of $d.
	gofer=$(pgrep -f -- "gofer --root $d/tl" | head -1)
	[ -n "$gofer" ] || fail "no gofer serves $d/tl"
	assert_eq file "$(ls -A "/proc/$gofer/root/")" "the gofer's namespace holds the file alone"
	printf 'done\n' >"$d/tl"
	wait $pid
	want="dotdot ENOTDIR
openat dotdot ENOTDIR
openat secret ENOTDIR
openat dot ENOTDIR
getdents ENOTDIR
fd link /dev/termination-log
fd dotdot ENOTDIR
symlink up ENOTDIR
chdir ENOTDIR
link out EXDEV
rename out EBUSY
rename over refused
unlink EBUSY
create EEXIST
mkdir EEXIST
write 11"
	assert_eq "$want" "$(cat "$E2E_TMP/out")" "every way out fails"
	assert_not_contains "$(cat "$E2E_TMP/out")" "$tok" "the sibling was never read"
	assert_eq "$tok" "$(cat "$d/secret")" "the sibling is unchanged"
	assert_eq "secret
tl" "$(ls -A "$d")" "nothing was made beside the file"
	if [ -n "$(command -v runc)" ]; then
		: >"$d/tl"
		timeout -k 5 60 runc --root "$E2E_TMP/runc-root" run --bundle "$b" esc1 >"$E2E_TMP/out" 2>&1 &
		pid=$!
		for i in $(seq 300); do
			grep -q from-guest "$d/tl" && break
			sleep 0.1
		done
		printf 'done\n' >"$d/tl"
		wait $pid
		assert_eq "$want" "$(cat "$E2E_TMP/out")" "runc says the same"
	fi
}

run_test a_file_mount_reaches_nothing_beside_it t_a_file_mount_reaches_nothing_beside_it
e2e_done
