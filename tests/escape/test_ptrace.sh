#!/usr/bin/env bash
# Barrier: ptrace(PTRACE_ATTACH) of any pid fails inside the sandbox (its
# own child, pid 1 from a child, the host shell's pid).  Natively, as root,
# attaching to one's own child succeeds, so this is the sandbox's doing.
. "$(dirname "$0")/../e2e/lib.sh"

HOSTPID=$$

PTRACE_PROG='
import ctypes, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
libc.ptrace.restype = ctypes.c_long
ATTACH, DETACH, WALL = 16, 17, 0x40000000
def attach(pid):
    r = libc.ptrace(ctypes.c_long(ATTACH), ctypes.c_long(pid), None, None)
    if r == 0:
        # attached (only expected natively): collect the stop, let go
        os.waitpid(pid, WALL)
        libc.ptrace(ctypes.c_long(DETACH), ctypes.c_long(pid), None, None)
    return r
child = os.fork()
if child == 0:
    time.sleep(30)
    os._exit(0)
print("child", attach(child))
# a second child tries its parent (pid 1 in the sandbox)
r, w = os.pipe()
c2 = os.fork()
if c2 == 0:
    os.write(w, str(attach(os.getppid())).encode())
    os._exit(0)
os.waitpid(c2, 0)
print("parent", os.read(r, 16).decode())
if int(sys.argv[1]):
    print("host", attach(int(sys.argv[1])))
os.kill(child, 9)
os.waitpid(child, 0)
print("done")
'

t_native_control()
{
	# Not a sandbox check: proves the program can attach when unconfined,
	# so the sandboxed -1 results below are meaningful.
	capture native $PY -c "$PTRACE_PROG" 0
	assert_contains "$OUT" "child 0" "natively, root attaches to its own child"
	assert_contains "$OUT" "done" "the probe ran to the end"
}

t_attach_fails()
{
	capture moat do -- $PY -c "$PTRACE_PROG" "$HOSTPID"
	assert_eq 0 "$STATUS" "the ptrace probe exits 0"
	assert_contains "$OUT" "done" "the probe ran to the end"
	assert_contains "$OUT" "child -1" "PTRACE_ATTACH of its own child fails"
	assert_contains "$OUT" "parent -1" "PTRACE_ATTACH of pid 1 fails"
	assert_contains "$OUT" "host -1" "PTRACE_ATTACH of a host pid fails"
	grep -q '^TracerPid:[[:space:]]*0$' /proc/$HOSTPID/status ||
		fail "the host shell is being traced"
}

run_test "native control: attach works unconfined" t_native_control
run_test "PTRACE_ATTACH fails for every pid" t_attach_fails
e2e_done
