#!/usr/bin/env bash
# System V IPC and POSIX message queues in the sandbox's own namespace:
# the same program prints the same inside as natively, and the sandbox's
# keys and queue names are not the host's.
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

# The native run gets an IPC namespace and an mqueue mount of its own, so
# that it neither sees nor leaves queues of the host's.
t_posix_mqueue_matches_native()
{
	gcc -O1 -pthread -o "$E2E_TMP/posix_mqueue" "$HERE/posix_mqueue.c" \
		-lrt || fail "cannot build posix_mqueue.c"
	chmod 755 "$E2E_TMP/posix_mqueue"
	mkdir -p "$E2E_TMP/mq"
	capture native unshare --ipc --mount sh -c \
		'mount -t mqueue none "$1" && exec "$2" "$1"' sh \
		"$E2E_TMP/mq" "$E2E_TMP/posix_mqueue"
	[ "$STATUS" = 0 ] || fail "native run: $ERR"
	assert_contains "$OUT" "done" "the native run ends"
	local want=$OUT
	capture moat do -- "$E2E_TMP/posix_mqueue" /dev/mqueue
	assert_eq "$want" "$OUT" "POSIX message queues behave inside as natively"
}

t_mqueue_names_are_the_sandboxs_own()
{
	local name=/moat-e2e-$$
	cat >"$E2E_TMP/mq.py" <<'PY'
import ctypes, errno, os, sys
libc = ctypes.CDLL("librt.so.1", use_errno=True)
name, op = sys.argv[1].encode(), sys.argv[2]
if op == "make":
    print(libc.mq_open(name, os.O_CREAT | os.O_RDWR, 0o600, None) >= 0)
elif op == "open":
    r = libc.mq_open(name, os.O_RDWR)
    print(r, errno.errorcode.get(ctypes.get_errno(), "ok") if r < 0 else "")
else:
    print(libc.mq_unlink(name))
PY
	chmod 644 "$E2E_TMP/mq.py"
	# a queue of the host's ...
	capture native $PY "$E2E_TMP/mq.py" "$name" make
	assert_eq "True" "$OUT" "host mq_open"
	capture moat do -- sh -c "$PY $E2E_TMP/mq.py $name open;
		$PY $E2E_TMP/mq.py $name-in make; ls /dev/mqueue"
	native $PY "$E2E_TMP/mq.py" "$name" unlink >/dev/null
	# ... is not the sandbox's, and the sandbox's is not the host's
	assert_eq "-1 ENOENT
True
${name#/}-in" "$OUT" "the host's queue is not seen inside; the sandbox's own is"
	capture native $PY "$E2E_TMP/mq.py" "$name-in" open
	native $PY "$E2E_TMP/mq.py" "$name-in" unlink >/dev/null
	assert_eq "-1 ENOENT" "$OUT" "the sandbox's queue never reached the host"
}

run_test sysv_matches_native t_sysv_matches_native
run_test keys_are_the_sandboxs_own t_keys_are_the_sandboxs_own
run_test posix_mqueue_matches_native t_posix_mqueue_matches_native
run_test mqueue_names_are_the_sandboxs_own t_mqueue_names_are_the_sandboxs_own
