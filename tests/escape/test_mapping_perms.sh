#!/usr/bin/env bash
# Barrier between the guest's own users: a mapping made for a read-only
# access stays read-only. mprotect runs natively, so the host fd behind a
# mapping must be opened as the guest's access allows (the sentry's own is
# read-write).
. "$(dirname "$0")/../e2e/lib.sh"

HERE=$(cd "$(dirname "$0")" && pwd)

t_shm_rdonly_stays_read_only()
{
	gcc -O1 -Wall -o "$E2E_TMP/shm_rdonly" "$HERE/shm_rdonly.c" ||
		fail "cannot build shm_rdonly.c"
	chmod 755 "$E2E_TMP/shm_rdonly"
	capture unshare --ipc -- "$E2E_TMP/shm_rdonly"
	local want=$OUT
	assert_contains "$want" "mprotect writable: EACCES" "natively"
	capture moat do -- "$E2E_TMP/shm_rdonly"
	assert_eq "$want" "$OUT" "as natively: the reader cannot write the segment"
}

run_test "a SHM_RDONLY attach cannot be mprotected writable" t_shm_rdonly_stays_read_only
