#!/usr/bin/env bash
# Barrier inside the guest: openat2's RESOLVE_* flags confine a path walk
# the way Linux does, so a guest program that relies on them to stay in a
# directory (RESOLVE_BENEATH, IN_ROOT) or off symlinks, magic links and
# other mounts is protected as it would be natively. They used to be
# accepted and ignored.
. "$(dirname "$0")/../e2e/lib.sh"

HERE=$(cd "$(dirname "$0")" && pwd)
BIN=$E2E_TMP/openat2_resolve

build()
{
	[ -x "$BIN" ] && return 0
	gcc -O1 -o "$BIN" "$HERE/openat2_resolve.c" ||
		fail "cannot build openat2_resolve.c"
	chmod 755 "$BIN"
}

# Natively, the same layout as the sandbox's: a tmpfs mounted at /tmp
# (moat's /tmp is a tmpfs of its own), in a mount namespace of the test's
# own. Without root or unshare, the results documented in
# openat2_resolve.expected (Linux 6.18) stand in.
native_expected()
{
	if [ "$(id -u)" = 0 ] && unshare -m --propagation private true 2>/dev/null; then
		native unshare -m --propagation private sh -c \
			'mount -t tmpfs tmpfs /tmp && exec "$1" /tmp/oa2' sh "$BIN"
	else
		cat "$HERE/openat2_resolve.expected"
	fi
}

t_every_flag_as_native()
{
	local want
	build
	want=$(native_expected)
	assert_contains "$want" "beneath .. out: EXDEV" "the native run worked"
	capture moat do -- "$BIN" /tmp/oa2
	assert_eq 0 "$STATUS" "the program runs to the end"
	assert_eq "$want" "$OUT" "every RESOLVE_* case gives what Linux gives"
}

# The rootfs is served by the gofer: a name the sandbox has not looked up
# yet is not cached, so RESOLVE_CACHED says EAGAIN until a plain open has
# looked it up.
t_cached_needs_a_lookup()
{
	build
	capture moat do -- "$BIN" cold /usr/share/common-licenses/GPL-3
	assert_eq "cold cached: EAGAIN
cold plain: ok                     GNU GENERAL
cold cached again: ok                     GNU GENERAL" "$OUT" \
		"RESOLVE_CACHED: EAGAIN before the gofer was asked, ok after"
}

# A --mount is a mount as /tmp is: NO_XDEV refuses the step onto it, and
# CACHED never reaches a host directory without asking its gofer.
t_host_mount()
{
	build
	mkdir -p "$E2E_TMP/hostdir"
	echo "hostfile" >"$E2E_TMP/hostdir/f"
	chmod -R a+rX "$E2E_TMP/hostdir"
	capture moat do --mount "$E2E_TMP/hostdir:/mnt/h:ro" -- /bin/sh -c "
		$BIN one / mnt/h/f 0; $BIN one / mnt/h/f 1; $BIN one /mnt/h f 1
		$BIN one /mnt/h ../../etc/passwd 1; $BIN one /mnt/h f 0x20
		$BIN one /mnt/h ../h/f 8; $BIN one /mnt/h ../h/f 16"
	assert_eq "mnt/h/f: ok hostfile
mnt/h/f: EXDEV
f: ok hostfile
../../etc/passwd: EXDEV
f: EAGAIN
../h/f: EXDEV
../h/f: ENOENT" "$OUT" "NO_XDEV and CACHED at a --mount"
}

run_test "openat2: every RESOLVE_* flag as natively" t_every_flag_as_native
run_test "openat2: RESOLVE_CACHED needs a looked-up name" t_cached_needs_a_lookup
run_test "openat2: a --mount is a mount" t_host_mount
e2e_done
