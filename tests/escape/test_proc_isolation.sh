#!/usr/bin/env bash
# Barrier: the guest's /proc shows only the sandbox's own (small, virtual)
# pids; no host process is visible or reachable.
. "$(dirname "$0")/../e2e/lib.sh"

ROOT=$E2E_TMP/root
make_busybox_rootfs "$ROOT"
HOSTPID=$$
HERE=$(cd "$(dirname "$0")" && pwd)

# check_pid_listing LISTING: numeric entries exist, include 1, are all small
# and none is the host test shell's pid.
check_pid_listing()
{
	local pids p
	pids=$(printf '%s\n' "$1" | grep -E '^[0-9]+$' || true)
	[ -n "$pids" ] || fail "no numeric entries in the guest's /proc: $1"
	printf '%s\n' "$pids" | grep -qx 1 || fail "pid 1 is not in the guest's /proc: $pids"
	for p in $pids; do
		[ "$p" -le 64 ] || fail "/proc lists pid $p, not a small sandbox pid (all: $(echo $pids))"
		[ "$p" != "$HOSTPID" ] || fail "/proc lists the host shell's pid $HOSTPID"
	done
}

t_ls_proc_rootfs()
{
	capture moat do --rootfs "$ROOT" -- /bin/ls /proc
	assert_eq 0 "$STATUS" "ls /proc exits 0"
	check_pid_listing "$OUT"
}

t_ls_proc_hostroot()
{
	capture moat do -- /bin/ls -1 /proc
	assert_eq 0 "$STATUS" "ls /proc exits 0"
	check_pid_listing "$OUT"
}

t_ls_proc_with_children()
{
	capture moat do --rootfs "$ROOT" -- /bin/sh -c 'sleep 5 & sleep 5 & ls /proc; kill %1 %2 2>/dev/null; true'
	assert_eq 0 "$STATUS" "sh exits 0"
	check_pid_listing "$OUT"
	[ "$(printf '%s\n' "$OUT" | grep -cE '^[0-9]+$')" -ge 3 ] ||
		fail "the guest's own children are missing from /proc: $OUT"
}

t_python_listdir()
{
	capture moat do -- $PY -c 'import os; print("\n".join(p for p in os.listdir("/proc") if p.isdigit()))'
	assert_eq 0 "$STATUS" "python exits 0"
	check_pid_listing "$OUT"
}

t_host_pid_unreachable()
{
	capture moat do --rootfs "$ROOT" -- /bin/sh -c \
		"cat /proc/$HOSTPID/status 2>/dev/null && echo readable; kill -0 $HOSTPID 2>/dev/null && echo signalable; echo done"
	assert_contains "$OUT" "done" "the guest ran"
	assert_not_contains "$OUT" "readable" "the host shell's /proc entry is readable"
	assert_not_contains "$OUT" "signalable" "the host shell's pid is signalable"
}

t_proc_self_status_small()
{
	capture moat do --rootfs "$ROOT" -- /bin/sh -c 'grep -E "^(Pid|PPid|Tgid):" /proc/self/status'
	assert_eq 0 "$STATUS" "grep /proc/self/status exits 0"
	assert_not_contains "$OUT" "$HOSTPID" "status leaks a host pid"
	local pid
	pid=$(printf '%s\n' "$OUT" | awk '/^Pid:/ { print $2 }')
	[ -n "$pid" ] && [ "$pid" -le 64 ] || fail "Pid in status is not a small sandbox pid: $OUT"
}

# Security: /proc/<pid>/maps once copied the host's device and inode
# numbers (the host's disk, and the inode of the sentry's memfd behind a
# /tmp file). Each line must show what stat() of its path shows in the
# guest, 00:00 0 for anything not a file, and never the host's identity
# of the file.
t_maps_show_guest_numbers()
{
	local line name dev ino hdev hino
	cp "$HERE/proc_maps.py" "$E2E_TMP/proc_maps.py"
	chmod 644 "$E2E_TMP/proc_maps.py"
	capture moat do -- $PY "$E2E_TMP/proc_maps.py" /tmp/maps-probe
	assert_eq 0 "$STATUS" "the maps probe runs"
	assert_contains "$OUT" "checked" "the probe read its maps"
	assert_not_contains "$OUT" "bad " "every maps line shows the guest's own numbers"
	assert_match "$OUT" '^map /tmp/maps-probe ' "the mmapped /tmp file is in maps"
	assert_match "$OUT" '^map /usr/lib/.*/libc\.so\.6 ' "libc is in maps"
	while read -r line name dev ino; do
		[ "$line" = map ] && [ -e "$name" ] || continue
		hdev=$(stat -L -c '%t:%T' "$name" | awk -F: '{ printf "%02x:%02x", strtonum("0x" $1), strtonum("0x" $2) }')
		hino=$(stat -L -c '%i' "$name")
		[ "$dev $ino" != "$hdev $hino" ] ||
			fail "maps shows the host's device and inode of $name: $dev $ino"
		assert_ne "$hdev" "$dev" "maps shows the host's device of $name"
	done <<<"$OUT"
}

# The caller's stdio is the sentry's file: fstat of it showed the host's
# device and inode numbers (those of the file it was redirected from),
# which /proc/self/fd hides. Equal files still compare equal.
t_host_stdio_numbers_are_hidden()
{
	local f=$E2E_TMP/stdio hdev hino
	echo x >"$f"
	hdev=$(stat -c %d "$f")
	hino=$(stat -c %i "$f")
	# stdin and stdout both the same host file; the answer on stderr
	moat do -- python3 -c 'import os, sys; a, b = os.fstat(0), os.fstat(1)
print(a.st_dev, a.st_ino, (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino), file=sys.stderr)' \
		<"$f" >>"$f" 2>"$E2E_TMP/stdio.err"
	STATUS=$?
	OUT=$(cat "$E2E_TMP/stdio.err")
	assert_eq 0 "$STATUS" "python: $OUT"
	assert_not_contains " $OUT " " $hdev " "no host device number"
	assert_not_contains " $OUT " " $hino " "no host inode number"
	assert_contains "$OUT" "True" "the same host file twice is the same file"
}

run_test "ls /proc in a rootfs shows only sandbox pids" t_ls_proc_rootfs
run_test "ls /proc on the host root shows only sandbox pids" t_ls_proc_hostroot
run_test "the guest's children appear, nothing else" t_ls_proc_with_children
run_test "python os.listdir(/proc) shows only sandbox pids" t_python_listdir
run_test "a host pid is neither readable nor signalable" t_host_pid_unreachable
run_test "/proc/self/status holds virtual pids" t_proc_self_status_small
run_test "/proc/self/maps shows the sandbox's device and inode numbers" t_maps_show_guest_numbers
run_test "host stdio shows no host device or inode" t_host_stdio_numbers_are_hidden
e2e_done
