#!/usr/bin/env bash
# Barrier: syscalls outside the allowlist never reach the host.  Each case
# makes calls that would be visible on the host if the host kernel ran them
# for the guest (the root is the host's /, so paths name real host files),
# then checks on the host that nothing happened.  What the guest sees
# (an error, or a change in its private overlay) does not matter.
. "$(dirname "$0")/../e2e/lib.sh"

TOKEN=$(random_token)

t_mkdir_syscall()
{
	local dir=/tmp/moat-escape-$TOKEN
	capture moat do -- $PY -c '
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
SYS_mkdir = 83
print("mkdir", libc.syscall(SYS_mkdir, sys.argv[1].encode(), 0o755))
try:
    os.mkdir(sys.argv[1] + "-os")
except OSError as e:
    print("os.mkdir", e.errno)
print("done")' "$dir"
	local leaked=""
	[ -e "$dir" ] && leaked="$leaked $dir"
	[ -e "$dir-os" ] && leaked="$leaked $dir-os"
	rmdir "$dir" "$dir-os" 2>/dev/null
	[ -z "$leaked" ] || fail "the guest's mkdir created$leaked on the host"
	assert_contains "$OUT" "done" "the guest ran the mkdir calls"
}

t_create_file()
{
	local f=/tmp/moat-escape-file-$TOKEN
	capture moat do -- /bin/sh -c "echo pwned > $f; touch $f.touch; echo done"
	local leaked=""
	[ -e "$f" ] && leaked="$leaked $f"
	[ -e "$f.touch" ] && leaked="$leaked $f.touch"
	rm -f "$f" "$f.touch"
	[ -z "$leaked" ] || fail "the guest created$leaked on the host"
	assert_contains "$OUT" "done" "the guest ran"
}

t_modify_host_file()
{
	local victim=$E2E_TMP/victim
	echo original >"$victim"
	chmod 644 "$victim"
	capture moat do -- $PY -c '
import ctypes, os, sys
v = sys.argv[1]
libc = ctypes.CDLL(None, use_errno=True)
for name, fn in [
    ("write", lambda: open(v, "w").write("pwned")),
    ("append", lambda: open(v, "a").write("pwned")),
    ("truncate", lambda: os.truncate(v, 0)),
    ("chmod", lambda: os.chmod(v, 0o777)),
    ("rename", lambda: os.rename(v, v + ".moved")),
    ("unlink_syscall", lambda: libc.syscall(87, v.encode())),
    ("unlink", lambda: os.unlink(v)),
]:
    try:
        fn()
        print(name, "ok")
    except OSError as e:
        print(name, e.errno)
print("done")' "$victim"
	assert_contains "$OUT" "done" "the guest ran the modifications"
	[ -f "$victim" ] || fail "the guest removed or renamed a host file"
	assert_eq "original" "$(cat "$victim")" "the host file's content is unchanged"
	assert_eq 644 "$(stat -c %a "$victim")" "the host file's mode is unchanged"
	[ ! -e "$victim.moved" ] || fail "the guest renamed a host file"
}

t_kill_host_process()
{
	sleep 300 &
	local sp=$!
	capture moat do -- $PY -c '
import os, sys, signal, ctypes
pid = int(sys.argv[1])
for fn in (lambda: os.kill(pid, signal.SIGKILL),
           lambda: ctypes.CDLL(None).syscall(62, pid, 9)):
    try:
        fn()
    except OSError as e:
        print("kill", e.errno)
print("done")' "$sp"
	local alive=no
	kill -0 "$sp" 2>/dev/null && alive=yes
	kill "$sp" 2>/dev/null
	wait "$sp" 2>/dev/null
	assert_contains "$OUT" "done" "the guest ran the kill calls"
	assert_eq yes "$alive" "a host process was killed from inside the sandbox"
}

t_sethostname()
{
	local before
	before=$(hostname)
	capture moat do -- $PY -c '
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
print("sethostname", libc.sethostname(b"pwned-by-guest", 14))
print("done")'
	local after
	after=$(hostname)
	# A sandbox this broken must not leave the machine renamed.
	[ "$after" = "$before" ] || hostname "$before"
	assert_eq "$before" "$after" "the host's hostname is unchanged"
	assert_contains "$OUT" "done" "the guest ran sethostname"
}

# The done-when of issue 3, whole: rm -rf /usr inside, the host's /usr
# intact. About 90 s (160k names, each a gofer round trip); the ASan run
# (the same barrier, a slower sentry) leaves it to the plain one.
t_rm_rf_usr()
{
	asan_build && { echo "skipped under the ASan build: the plain e2e run covers it"; return 0; }
	local before after
	before=$(find /usr -maxdepth 3 -printf '%p %s %m\n' 2>/dev/null | sort | md5sum)
	capture env MOAT_TIMEOUT=600 timeout -k 5 600 "$MOAT" do -- /bin/sh -c \
		'rm -rf /usr 2>/dev/null; [ -e /usr/bin/python3 ] && echo present || echo gone'
	after=$(find /usr -maxdepth 3 -printf '%p %s %m\n' 2>/dev/null | sort | md5sum)
	assert_eq gone "$OUT" "/usr/bin/python3 is gone inside"
	[ "$before" = "$after" ] || fail "the host's /usr changed"
	[ -x /usr/bin/python3 ] || fail "the host's python3 is gone"
}

run_test "rm -rf /usr inside leaves the host's /usr intact" t_rm_rf_usr
run_test "mkdir (raw syscall and os.mkdir) does not reach the host" t_mkdir_syscall
run_test "creating a file does not reach the host" t_create_file
run_test "write/truncate/chmod/rename/unlink of a host file do not reach it" t_modify_host_file
run_test "kill of a host pid does not reach it" t_kill_host_process
run_test "sethostname does not reach the host" t_sethostname
e2e_done
