#!/usr/bin/env bash
# The writable layers' storage (docs/storage.md): small files in the
# sentry's memory, the rest in a private store on the host's disk, and
# --disk counting allocated blocks, never sizes.
#  - the layers once lived wholly in the sentry's RAM (memfds), which no
#    --memory limit saw: a 1.5 GiB write with --memory 1G succeeded;
#  - --disk counted sizes: a sparse file past 1 GiB was ENOSPC;
#  - the default 1 GiB could not hold a 2 GiB checkpoint.
. "$(dirname "$0")/lib.sh"

HERE=$(cd "$(dirname "$0")" && pwd)

# A store base of this file's own: what is in it is this file's sandboxes'.
STORE_BASE=$E2E_TMP/store-base
mkdir -m 700 "$STORE_BASE"

t_sparse_files_are_free()
{
	capture moat do -- sh -c 'truncate -s 5G /tmp/s && stat -c "%s %b" /tmp/s &&
		printf x | dd of=/tmp/s bs=1 seek=4000000000 conv=notrunc 2>/dev/null &&
		stat -c "%s %b" /tmp/s'
	assert_eq 0 "$STATUS" "a 5 GiB sparse file in /tmp: $ERR"
	assert_eq "5368709120 0" "$(sed -n 1p <<<"$OUT")" "size 5 GiB, no blocks"
	assert_match "$(sed -n 2p <<<"$OUT")" '^5368709120 (8|16)$' \
		"one byte written: one page"
	# the same on the overlay
	capture moat do -- sh -c 'truncate -s 3G /var/sparse && stat -c "%s %b" /var/sparse'
	assert_eq 0 "$STATUS" "a 3 GiB sparse file on the overlay: $ERR"
	assert_eq "3221225472 0" "$OUT" "size 3 GiB, no blocks"
}

# A copy-up copies only the data of a sparse rootfs file: its holes stay
# holes (as on overlayfs), where it was copied dense before, ENOSPC past
# --disk and seconds of the sentry's time.
t_sparse_copy_up()
{
	local f=$E2E_TMP/sparse-lower
	truncate -s 3G "$f"
	printf end >>"$f"
	chmod 666 "$f"
	capture moat do --disk 64M -- sh -c "printf X >>$f && stat -c '%s %b' $f && tail -c 4 $f"
	assert_eq 0 "$STATUS" "appending to a 3 GiB sparse rootfs file under --disk 64M: $ERR"
	assert_match "$(sed -n 1p <<<"$OUT")" '^3221225476 (8|16)$' "its copy holds one page or two"
	assert_eq "endX" "$(sed -n 2p <<<"$OUT")" "the data is there"
	assert_eq "3221225475" "$(stat -c %s "$f")" "the host's file is unchanged"
}

# A 2 GiB checkpoint, written and read back, under the default options.
t_a_checkpoint_fits_by_default()
{
	capture moat do -- python3 -c '
import hashlib, os
chunk = os.urandom(1 << 20)
with open("/tmp/ckpt", "wb") as f:
    for i in range(2100):
        f.write(chunk)
h = hashlib.sha256()
with open("/tmp/ckpt", "rb") as f:
    f.seek(-(1 << 20), 2)
    tail = f.read()
print(os.stat("/tmp/ckpt").st_size, tail == chunk)
st = os.statvfs("/tmp")
print("used", (st.f_blocks - st.f_bfree) * st.f_frsize >> 20)
'
	assert_eq 0 "$STATUS" "2100 MiB into /tmp: $ERR"
	assert_eq "$((2100 << 20)) True" "$(sed -n 1p <<<"$OUT")" "all of it, intact"
	assert_match "$(sed -n 2p <<<"$OUT")" '^used 2(09[0-9]|1[0-9][0-9])$' \
		"statfs counts what is held"
}

# The bytes are not the host's RAM: with --memory 256M, 768 MiB go to the
# store on disk, while the host's shared memory does not grow by them.
t_the_layers_are_not_host_ram()
{
	local before after shm_grew held n
	before=$(awk '/^Shmem:/ { print $2 }' /proc/meminfo)
	timeout -k 5 60 "$MOAT" do --store "$STORE_BASE" --memory 256M -- \
		sh -c 'dd if=/dev/zero of=/tmp/big bs=1M count=768 2>/dev/null &&
		echo written && sleep 30' >"$E2E_TMP/out" 2>"$E2E_TMP/err" &
	for n in $(seq 600); do
		grep -q written "$E2E_TMP/out" && break
		sleep 0.1
	done
	grep -q written "$E2E_TMP/out" || { kill $!; fail "the write failed: $(cat "$E2E_TMP/err")"; }
	after=$(awk '/^Shmem:/ { print $2 }' /proc/meminfo)
	held=$(du -sk "$STORE_BASE" 2>/dev/null | awk '{ print $1 }')
	kill $! 2>/dev/null
	wait
	shm_grew=$(((after - before) / 1024))
	[ "$shm_grew" -lt 200 ] || fail "host shared memory grew by $shm_grew MiB"
	[ "${held:-0}" -ge $((700 * 1024)) ] || fail "the store holds ${held:-0} KiB, not the 768 MiB"
}

# A shared writable mapping could allocate blocks the sentry never sees:
# what it can reach is allocated first, within --disk, or mmap fails.
t_shared_mappings_are_bounded()
{
	capture moat do --disk 64M -- python3 -c '
import mmap, os
fd = os.open("/tmp/m", os.O_RDWR | os.O_CREAT)
os.ftruncate(fd, 1 << 30)
try:
    mmap.mmap(fd, 1 << 30, mmap.MAP_SHARED)
    print("mapped 1 GiB")
except OSError as e:
    print("refused", e.errno)
os.ftruncate(fd, 16 << 20)
m = mmap.mmap(fd, 16 << 20, mmap.MAP_SHARED)
st = os.statvfs("/tmp")
print("used", (st.f_blocks - st.f_bfree) * st.f_frsize >> 20)
m[-1:] = b"z"
m.close()
os.lseek(fd, -1, 2)
print(os.read(fd, 1))
'
	assert_eq 0 "$STATUS" "python: $ERR"
	assert_eq "refused 12" "$(sed -n 1p <<<"$OUT")" "1 GiB shared mapping with --disk 64M: ENOMEM"
	assert_eq "used 16" "$(sed -n 2p <<<"$OUT")" "a 16 MiB mapping holds 16 MiB"
	assert_eq "b'z'" "$(sed -n 3p <<<"$OUT")" "the mapping writes the file"
}

# Regression (a hostile review): only the range mapped was preallocated and
# a punch lowered the charge, so a mapping grown by mremap, or refilled
# after PUNCH_HOLE or MADV_REMOVE, or a fallocate past the end, allocated
# blocks nothing charged: 97 MiB in the store with --disk 32M. Now a file
# mapped shared and writable is preallocated and charged whole.
t_mappings_cannot_bypass_disk()
{
	local m held
	gcc -O1 -Wall -o "$E2E_TMP/mapped_disk" "$HERE/mapped_disk.c" ||
		fail "cannot build mapped_disk.c"
	chmod 755 "$E2E_TMP/mapped_disk"
	for m in mremap punch madv gap; do
		# the last one's store is gone first (its janitor, just after)
		for _ in $(seq 100); do [ -z "$(ls "$STORE_BASE")" ] && break; sleep 0.05; done
		rm -f "$E2E_TMP/md.out"
		timeout -k 5 60 "$MOAT" do --store "$STORE_BASE" --disk 32M -- \
			"$E2E_TMP/mapped_disk" "$m" >"$E2E_TMP/md.out" 2>&1 &
		for _ in $(seq 300); do
			grep -q ready "$E2E_TMP/md.out" 2>/dev/null && break
			sleep 0.1
		done
		grep -q ready "$E2E_TMP/md.out" || { kill $!; fail "$m: $(cat "$E2E_TMP/md.out")"; }
		held=$(du -sm "$STORE_BASE" | awk '{ print $1 }')
		kill $! # timeout passes the TERM on to moat
		wait
		[ "$held" -le 34 ] || fail "$m: the store holds $held MiB with --disk 32M ($(head -1 "$E2E_TMP/md.out"))"
		assert_match "$(head -1 "$E2E_TMP/md.out")" "^$m: [0-4] rounds, then E(NOMEM|NOSPC)\$" \
			"$m: refused once 32 MiB are taken"
	done
}

# The store is private while the sandbox runs, and gone after it, however
# the sentry ends; one a crash left is swept by the next start.
t_the_store_is_private_and_removed()
{
	local d m f stale pid
	# moat itself, not its timeout wrapper: it is the sentry
	timeout -k 5 60 "$MOAT" do --store "$STORE_BASE" -- \
		sh -c 'head -c 200000 /dev/zero > /tmp/f && echo ready && sleep 30' \
		>"$E2E_TMP/out" 2>&1 &
	for _ in $(seq 300); do grep -q ready "$E2E_TMP/out" && break; sleep 0.1; done
	pid=$(pgrep -P $! -x moat)
	d=$(ls -d "$STORE_BASE"/s.* 2>/dev/null | head -1)
	[ -n "$d" ] || fail "no store directory while it runs"
	m=$(stat -c %a "$d")
	assert_eq 700 "$m" "the store directory is 0700"
	f=$(ls "$d" | grep -v lock | head -1)
	[ -n "$f" ] || fail "the 200 kB file is not in the store"
	assert_eq 600 "$(stat -c %a "$d/$f")" "its files are 0600"
	# SIGKILL of the sentry: its janitor still removes the directory
	[ -n "$pid" ] || fail "no sentry found"
	kill -KILL "$pid"
	wait
	for _ in $(seq 100); do [ -e "$d" ] || break; sleep 0.05; done
	[ ! -e "$d" ] || fail "$d survived its sandbox"
	# a directory whose lock nobody holds is swept at the next start,
	# unless it is young: a sandbox starting now has made its lock file
	# and not flocked it yet
	stale=$STORE_BASE/s.deadbeef
	mkdir -m 700 "$stale" && : >"$stale/lock" && : >"$stale/0000000000000001"
	assert_status 0 moat do --store "$STORE_BASE" -- true
	[ -e "$stale/lock" ] || fail "a store just made was swept"
	touch -d '-2 min' "$stale"
	assert_status 0 moat do --store "$STORE_BASE" -- true
	[ ! -e "$stale" ] || fail "a stale store was not swept"
	# its own directory goes with its janitor, just after it ends
	for _ in $(seq 100); do [ -z "$(ls "$STORE_BASE")" ] && break; sleep 0.05; done
	assert_eq "" "$(ls "$STORE_BASE")" "nothing left"
}

t_a_bad_store_is_refused()
{
	local d=$E2E_TMP/store
	mkdir -m 777 "$d"
	capture moat do --store "$d" -- true
	assert_eq 125 "$STATUS" "a world-writable store is refused"
	assert_contains "$ERR" "no one else may write" "the error says why"
	chmod 700 "$d"
	chown nobody "$d"
	capture moat do --store "$d" -- true
	assert_ne 0 "$STATUS" "a store of another user is refused"
	assert_contains "$ERR" "uid 65534" "the error names its owner"
	chown root "$d"
	assert_status 0 moat do --store "$d" -- sh -c 'head -c 100000 /dev/zero >/tmp/x'
	for _ in $(seq 100); do [ -z "$(ls "$d")" ] && break; sleep 0.05; done
	assert_eq "" "$(ls "$d")" "and cleaned up after"
}

# A start that fails at once (the program is missing) ends the store's
# gofer before the janitor removes its directory: the user reads one error,
# not a second one from a gofer that found its directory gone.
t_a_failed_start_says_one_thing()
{
	local i
	for i in $(seq 40); do
		capture moat do -- /no/such/program
		assert_eq 127 "$STATUS" "a missing program (run $i)"
		assert_eq 1 "$(printf '%s\n' "$ERR" | wc -l)" \
			"one line on stderr (run $i): $ERR"
	done
}

run_test "sparse files cost their blocks, not their size" t_sparse_files_are_free
run_test "a sparse rootfs file is copied up sparse" t_sparse_copy_up
run_test "a 2 GiB checkpoint fits by default" t_a_checkpoint_fits_by_default
run_test "the writable layers are not the host's RAM" t_the_layers_are_not_host_ram
run_test "shared mappings are bounded by --disk" t_shared_mappings_are_bounded
run_test "shared mappings cannot write past --disk" t_mappings_cannot_bypass_disk
run_test "the store is private and removed" t_the_store_is_private_and_removed
run_test "a store others may write is refused" t_a_bad_store_is_refused
run_test "a failed start says one thing" t_a_failed_start_says_one_thing
