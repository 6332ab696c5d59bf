#!/usr/bin/env bash
# The legacy syscalls old static binaries make (glibc before 2.28, uClibc:
# busybox 1.28's ls and touch): getdents, whose struct linux_dirent keeps
# d_type in the record's last byte, utime, utimes, futimesat and time.
# tests/e2e/legacy_syscalls.c issues them raw, as a mini ls and touch,
# and must print the same natively and inside, on the sandbox's tmpfs, on
# its overlay and on the rootfs.
. "$(dirname "$0")/lib.sh"

HERE=$(cd "$(dirname "$0")" && pwd)
BIN=$E2E_TMP/legacy_syscalls

build()
{
	[ -x "$BIN" ] && return 0
	gcc -O1 -static -o "$BIN" "$HERE/legacy_syscalls.c" 2>/dev/null ||
		fail "cannot build legacy_syscalls.c"
	chmod 755 "$BIN"
}

# The native run makes its directory on the host's disk; the listing and
# the times do not depend on where it is.
native_make()
{
	rm -rf "$E2E_TMP/native-made"
	capture native "$BIN" make "$E2E_TMP/native-made"
	assert_contains "$OUT" "ls: same as getdents64" "the native run worked"
	WANT=$OUT
}

t_tmpfs()
{
	build
	native_make
	capture moat do -- "$BIN" make /tmp/legacy
	assert_eq "$WANT" "$OUT" "ls and touch with legacy syscalls in /tmp"
}

t_overlay()
{
	build
	native_make
	capture moat do -- "$BIN" make "$E2E_TMP/in-the-overlay"
	assert_eq "$WANT" "$OUT" "ls and touch with legacy syscalls in the overlay"
	[ ! -e "$E2E_TMP/in-the-overlay" ] ||
		fail "the guest's directory reached the host"
}

# A host directory, read through the gofer; touching one of its files
# changes the sandbox's copy, never the host's.
t_rootfs()
{
	local before want
	build
	native_make
	cp -a "$E2E_TMP/native-made" "$E2E_TMP/tree"
	chmod -R a+rX "$E2E_TMP/tree"
	capture native "$BIN" ls "$E2E_TMP/tree"
	want=$OUT
	capture moat do -- "$BIN" ls "$E2E_TMP/tree"
	assert_eq "$want" "$OUT" "ls with getdents of a rootfs directory"
	cp -a "$E2E_TMP/tree/a" "$E2E_TMP/native-a"
	capture native "$BIN" touch "$E2E_TMP/native-a"
	want=$OUT
	before=$(stat -c %Y "$E2E_TMP/tree/a")
	capture moat do -- "$BIN" touch "$E2E_TMP/tree/a"
	assert_eq "$want" "$OUT" "touch with utime, utimes, futimesat of a rootfs file"
	assert_eq "$before" "$(stat -c %Y "$E2E_TMP/tree/a")" \
		"the host's file keeps its times"
}

run_test "legacy syscalls: ls and touch on tmpfs" t_tmpfs
run_test "legacy syscalls: ls and touch on the overlay" t_overlay
run_test "legacy syscalls: ls and touch on the rootfs" t_rootfs
e2e_done
