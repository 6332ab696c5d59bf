#!/usr/bin/env bash
# System V IPC in the sandbox's own namespace: the same program prints the
# same inside as natively, and the sandbox's keys are not the host's.
. "$(dirname "$0")/lib.sh"
HERE=$(cd "$(dirname "$0")" && pwd)

t_sysv_matches_native()
{
	cp "$HERE/sysv_ipc.py" "$E2E_TMP/sysv_ipc.py"
	chmod 644 "$E2E_TMP/sysv_ipc.py"
	capture native $PY "$E2E_TMP/sysv_ipc.py"
	local want=$OUT
	capture moat do -- $PY "$E2E_TMP/sysv_ipc.py"
	assert_eq "$want" "$OUT" "shm, sem and msg behave inside as natively"
}

t_keys_are_the_sandboxs_own()
{
	local key=$((0x6d6f6100 + $$ % 255))
	# a segment of the host's under a key ...
	native $PY -c "
import ctypes, sys
libc = ctypes.CDLL(None)
print(libc.shmget($key, 4096, 0o1000 | 0o600))" >"$E2E_TMP/hostshm" || fail "host shmget"
	capture moat do -- $PY -c "
import ctypes, errno
libc = ctypes.CDLL(None, use_errno=True)
print(libc.shmget($key, 4096, 0o600), ctypes.get_errno() == errno.ENOENT)"
	native $PY -c "
import ctypes; ctypes.CDLL(None).shmctl(int(open('$E2E_TMP/hostshm').read()), 0, None)"
	assert_eq "-1 True" "$OUT" "... is not found inside the sandbox"
}

run_test sysv_matches_native t_sysv_matches_native
run_test keys_are_the_sandboxs_own t_keys_are_the_sandboxs_own
