#!/usr/bin/env bash
# Barrier: with --rootfs DIR, a guest cannot read a host file outside DIR.
# Every case first reads a file inside DIR (so a sandbox that runs nothing
# cannot pass), then tries one way out; the secret's token must not appear.
. "$(dirname "$0")/../e2e/lib.sh"

BASE=$E2E_TMP/escape
ROOT=$BASE/root
SECRET=$BASE/secret.txt
TOKEN=$(random_token)
INSIDE=$(random_token)
make_busybox_rootfs "$ROOT"
echo "$TOKEN" >"$SECRET"
echo "$INSIDE" >"$ROOT/inside.txt"
# Links planted inside the rootfs by its (untrusted) author.
ln -s "$SECRET" "$ROOT/abs-link"
ln -s ../secret.txt "$ROOT/rel-link"
ln -s "$BASE" "$ROOT/abs-dir-link"
ln -s ../../../../../../.. "$ROOT/up-link"
mkdir -p "$ROOT/a/b"
ln -s ../../../secret.txt "$ROOT/a/b/deep-link"
HOSTPID=$$

# escape_attempt SHELL-SNIPPET [moat options...]: run the snippet in the
# rootfs after reading inside.txt; check the inside token is there and the
# secret's is not.
escape_attempt()
{
	local snippet=$1
	shift
	capture moat do --rootfs "$ROOT" "$@" -- /bin/sh -c \
		"cat /inside.txt; $snippet; echo done"
	case $STATUS in 124 | 137) fail "moat hung (timeout)" ;; esac
	assert_contains "$OUT" "$INSIDE" "the guest runs and reads a file inside its rootfs"
	assert_contains "$OUT" "done" "the guest shell ran to the end"
	assert_not_contains "$OUT$ERR" "$TOKEN" "the host secret leaked into the guest"
}

t_dotdot_abs() { escape_attempt "cat /../../../../..$SECRET 2>&1"; }
t_dotdot_rel() { escape_attempt "cd /tmp && cat ../../../../../../../..$SECRET 2>&1"; }
t_dotdot_cwd() { escape_attempt "cat ../../../../../../..$SECRET 2>&1" --cwd /a/b; }
t_cd_up()
{
	escape_attempt "cd / && cd .. && cd .. && cd .. && pwd && cat .$SECRET 2>&1 && ls $BASE 2>&1"
	assert_contains "$OUT" "/" "pwd after cd .. stays at /"
}
t_abs_symlink() { escape_attempt "cat /abs-link 2>&1"; }
t_rel_symlink() { escape_attempt "cat /rel-link 2>&1"; }
t_dir_symlink() { escape_attempt "cat /abs-dir-link/secret.txt 2>&1; ls /abs-dir-link 2>&1"; }
t_up_symlink() { escape_attempt "cat /up-link$SECRET 2>&1"; }
t_deep_symlink() { escape_attempt "cat /a/b/deep-link 2>&1"; }
t_readlink_follow() { escape_attempt 'cat "$(readlink /abs-link)" 2>&1'; }
t_proc_self_root() { escape_attempt "cat /proc/self/root$SECRET 2>&1; cat /proc/self/root/../../../..$SECRET 2>&1"; }
t_proc_1_root() { escape_attempt "cat /proc/1/root$SECRET 2>&1; cat /proc/1/cwd/../../../..$SECRET 2>&1"; }
t_proc_self_cwd() { escape_attempt "cat /proc/self/cwd/../../../..$SECRET 2>&1"; }
t_proc_host_pid()
{
	escape_attempt "cat /proc/$HOSTPID/root$SECRET 2>&1; cat /proc/$HOSTPID/cwd/secret.txt 2>&1; ls /proc/$HOSTPID/root$BASE 2>&1"
}
t_proc_all_pids()
{
	escape_attempt "for p in /proc/[0-9]*; do cat \$p/root$SECRET \$p/cwd/secret.txt 2>/dev/null; done"
}

# Host fds other than stdio must not be inherited: fd 3 is the secret,
# stdin is a directory outside the rootfs.
t_inherited_fd()
{
	exec 3<"$SECRET"
	capture moat do --rootfs "$ROOT" -- /bin/sh -c \
		'cat /inside.txt; cat <&3 2>&1; cat /proc/self/fd/3 2>&1; cat /dev/fd/3 2>&1; echo done'
	exec 3<&-
	assert_contains "$OUT" "$INSIDE" "the guest runs"
	assert_not_contains "$OUT$ERR" "$TOKEN" "an inherited host fd 3 leaked the secret"
}

t_stdin_dir_fd()
{
	local out
	out=$(moat do --rootfs "$ROOT" -- /bin/sh -c \
		'cat /inside.txt; cat /proc/self/fd/0/secret.txt 2>&1; ls /proc/self/fd/0/ 2>&1; echo done' <"$BASE" 2>&1)
	assert_contains "$out" "$INSIDE" "the guest runs"
	assert_not_contains "$out" "$TOKEN" "a directory on stdin opened a way out of the rootfs"
}

t_rootfs_listing()
{
	capture moat do --rootfs "$ROOT" -- /bin/ls /
	assert_eq 0 "$STATUS" "ls / exits 0"
	assert_contains "$OUT" "inside.txt" "/ is the rootfs"
	assert_not_contains "$OUT" "secret.txt" "/ is not the rootfs's parent"
}

run_test "rootfs: / is DIR" t_rootfs_listing
run_test "no escape by absolute ../../.." t_dotdot_abs
run_test "no escape by relative ../../.." t_dotdot_rel
run_test "no escape by ../ from --cwd" t_dotdot_cwd
run_test "no escape by cd .. at /" t_cd_up
run_test "no escape by an absolute symlink to the host path" t_abs_symlink
run_test "no escape by a relative symlink out of DIR" t_rel_symlink
run_test "no escape by a directory symlink" t_dir_symlink
run_test "no escape by a ../.. symlink" t_up_symlink
run_test "no escape by a nested ../ symlink" t_deep_symlink
run_test "no escape by following readlink by hand" t_readlink_follow
run_test "no escape by /proc/self/root" t_proc_self_root
run_test "no escape by /proc/1/root and /proc/1/cwd" t_proc_1_root
run_test "no escape by /proc/self/cwd" t_proc_self_cwd
run_test "no escape by /proc/<host pid>/root" t_proc_host_pid
run_test "no escape by any /proc/<pid>/root" t_proc_all_pids
run_test "no inherited host fd beyond stdio" t_inherited_fd
run_test "no escape through a directory on stdin" t_stdin_dir_fd
e2e_done
