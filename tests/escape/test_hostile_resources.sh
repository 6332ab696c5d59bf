#!/usr/bin/env bash
# Robustness: requests that once hung or corrupted the sentry (a timer
# interval that overflowed, unbounded message queues, a double free on
# EMFILE) give what Linux gives, and the sandbox runs to its end; POSIX
# message queues made and filled to their limits stop where Linux's do.
. "$(dirname "$0")/../e2e/lib.sh"

HERE=$(cd "$(dirname "$0")" && pwd)

t_hostile_resources_match_native()
{
	cp "$HERE/hostile_resources.py" "$E2E_TMP/hostile_resources.py"
	chmod 644 "$E2E_TMP/hostile_resources.py"
	assert_same_as_native $PY "$E2E_TMP/hostile_resources.py"
	assert_contains "$OUT" "sentry alive"
}

# Natively in an IPC namespace of its own: the host's queues neither count
# nor get touched.
t_mqueue_limits_match_native()
{
	cp "$HERE/hostile_mqueue.py" "$E2E_TMP/hostile_mqueue.py"
	chmod 644 "$E2E_TMP/hostile_mqueue.py"
	capture native unshare --ipc $PY "$E2E_TMP/hostile_mqueue.py"
	local want=$OUT
	assert_contains "$want" "sentry alive" "the native run ends"
	capture moat do -- $PY "$E2E_TMP/hostile_mqueue.py"
	assert_eq "$want" "$OUT" "queues and messages stop at Linux's limits"
}

# Root may lift its RLIMIT_MSGQUEUE in the sandbox (not on this host, so
# there is no native run to compare): queues_max and the per-queue limits
# still bound what the sentry holds, 256 queues of 10 messages of 8 KiB.
t_mqueue_limits_hold_with_rlimit_raised()
{
	cp "$HERE/hostile_mqueue.py" "$E2E_TMP/hostile_mqueue.py"
	chmod 644 "$E2E_TMP/hostile_mqueue.py"
	capture moat do -- $PY "$E2E_TMP/hostile_mqueue.py" raised
	assert_contains "$OUT" "largest queues: 256 ENOSPC" "queues_max holds"
	assert_contains "$OUT" "8 KiB messages queued: 2560 EAGAIN" \
		"msg_max and msgsize_max hold"
	assert_contains "$OUT" "received back: 2560 EAGAIN" "nothing is lost"
	assert_contains "$OUT" "sentry alive" "the sentry answers after"
}

# The sentry's heap is outside the sandbox's memory cgroup (only the
# reaper and the guests are in it), so what the sentry keeps for each
# guest process must be bounded by the sentry.

# sentry_rss PID: the sentry's resident memory now, in KiB.
sentry_rss()
{
	awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"
}

# wait_for FILE ERE: until a line of FILE matches (a hang guard).
wait_for()
{
	local i
	for i in $(seq 1200); do
		grep -Eq -- "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

# run_held PROG ARGS...: PROG under moat do in the background, its stdin
# on fd 8 (each line lets it go on); SENTRY is the sentry's pid (moat do's
# own process is the sentry). A sanitizer build (e2e-asan) holds freed
# memory in quarantine: without one, its RSS too is what the sentry keeps.
run_held()
{
	rm -f "$E2E_TMP/held.in"
	mkfifo "$E2E_TMP/held.in"
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:quarantine_size_mb=0} \
		"$MOAT" do --timeout 240 -- "$@" <"$E2E_TMP/held.in" \
		>"$E2E_TMP/held.out" 2>"$E2E_TMP/held.err" &
	SENTRY=$!
	exec 8>"$E2E_TMP/held.in"
}

held_finish()
{
	exec 8>&-
	wait "$SENTRY"
	STATUS=$?
	OUT=$(cat "$E2E_TMP/held.out")
	ERR=$(cat "$E2E_TMP/held.err")
}

# The sentry once kept a record with the path of each file mapping, per
# process, copied whole at every fork: 4096 mappings of ~3.8 KB paths
# made ~15 MB of its heap a child, zombies included (1023 children: past
# moat do's default memory limit, which does not see it). Past its bound
# a mapping may show without a name, never with another's.
t_fork_shares_mapping_records()
{
	local before after want
	gcc -O1 -o "$E2E_TMP/maps_fork" "$HERE/maps_fork.c" || fail "cannot build maps_fork"
	mkdir "$E2E_TMP/native-maps"
	capture native "$E2E_TMP/maps_fork" "$E2E_TMP/native-maps" 4096 48
	want=$OUT
	rm -rf "$E2E_TMP/native-maps"
	assert_contains "$want" "children: 32 waiting, 0 bad" "the native run forks"
	run_held "$E2E_TMP/maps_fork" /tmp 4096 48
	wait_for "$E2E_TMP/held.out" '^mapped' || {
		held_finish
		fail "never mapped: $ERR"
	}
	before=$(sentry_rss "$SENTRY")
	echo >&8
	wait_for "$E2E_TMP/held.out" '^forked' || {
		held_finish
		fail "never forked: $ERR"
	}
	after=$(sentry_rss "$SENTRY")
	echo >&8
	held_finish
	assert_eq 0 "$STATUS" "the program exits 0"
	assert_eq "$want" "$OUT" "every name shown is right, in the parent and in each child"
	echo "sentry RSS: $before KiB mapped, $after KiB with 48 children"
	[ $((after - before)) -lt $((64 << 10)) ] ||
		fail "48 children grew the sentry by $(((after - before) >> 10)) MiB"
}

# The fd tables fork copies are the sentry's heap too (16 bytes a slot):
# a process with fd 65535 open, forked 200 times, once made the sentry
# hold 200 MiB more. Their sandbox-wide bound (64 MiB) fails a fork with
# ENOMEM first, as Linux's memory cgroup would.
t_fork_bounds_fd_tables()
{
	local before after
	cat >"$E2E_TMP/fdt_fork.py" <<'PY'
import errno, os, resource, sys
resource.setrlimit(resource.RLIMIT_NOFILE, (65536, 65536))
r, w = os.pipe()
os.dup2(r, 65535)
print("ready", flush=True)
sys.stdin.readline()
kids, err = 0, "none"
while kids < 200:
    try:
        pid = os.fork()
    except OSError as e:
        err = errno.errorcode[e.errno]
        break
    if pid == 0:
        os.close(w)
        os.read(r, 1)
        os._exit(0)
    kids += 1
print(f"forked {kids}, then {err}", flush=True)
sys.stdin.readline()
os.close(w)
for _ in range(kids):
    os.wait()
os.close(65535)
pid = os.fork()
if pid == 0:
    os._exit(0)
os.waitpid(pid, 0)
print("fork after: ok")
PY
	chmod 644 "$E2E_TMP/fdt_fork.py"
	run_held $PY "$E2E_TMP/fdt_fork.py"
	wait_for "$E2E_TMP/held.out" '^ready' || {
		held_finish
		fail "never ready: $ERR"
	}
	before=$(sentry_rss "$SENTRY")
	echo >&8
	wait_for "$E2E_TMP/held.out" '^forked' || {
		held_finish
		fail "never forked: $ERR"
	}
	after=$(sentry_rss "$SENTRY")
	echo >&8
	held_finish
	assert_eq 0 "$STATUS" "the program exits 0"
	echo "sentry RSS: $before KiB, then $after KiB: $OUT"
	assert_match "$OUT" '^forked [0-9]+, then ENOMEM$' "fork fails with ENOMEM at the bound"
	assert_contains "$OUT" "fork after: ok" "and works again once the children are gone"
	[ $((after - before)) -lt $((80 << 10)) ] ||
		fail "the children's fd tables grew the sentry by $(((after - before) >> 10)) MiB"
}

# System V leftovers that Linux drops: the undo records of a removed
# semaphore set (the sentry once kept 64 KB a round until exit, past any
# limit), and attachments unmapped by munmap, which the sentry never sees
# (bounded, they must not end in ENOMEM for a loop that Linux runs).
t_sysv_churn_is_forgotten()
{
	local want hwm
	gcc -O1 -o "$E2E_TMP/sysv_churn" "$HERE/sysv_churn.c" || fail "cannot build sysv_churn"
	capture native unshare --ipc "$E2E_TMP/sysv_churn" 1000 9000
	want=$OUT
	assert_eq "sem rounds: 1000, then none
shm rounds: 9000, then none
sentry alive" "$want" "the native run"
	run_held "$E2E_TMP/sysv_churn" 1000 9000
	wait_for "$E2E_TMP/held.out" '^sentry alive' || {
		held_finish
		fail "never done: $ERR"
	}
	hwm=$(awk '/^VmHWM:/ { print $2 }' "/proc/$SENTRY/status")
	echo >&8
	held_finish
	assert_eq 0 "$STATUS" "the program exits 0"
	assert_eq "$want" "$OUT" "every round works, as natively"
	echo "sentry peak RSS: $hwm KiB"
	[ "$hwm" -lt $((32 << 10)) ] || fail "the sentry grew to $((hwm >> 10)) MiB"
}

# A message costs its socket its whole skb, however few its bytes: unix
# datagrams, seqpacket records and single-byte stream writes get EAGAIN
# after a few hundred, UDP and netlink receivers drop and overrun, as on
# Linux; the sentry once counted bytes only and queued ~200 bytes of its
# heap for each empty message, without end. Its peak RSS is read while
# every queue is full (the guest waits for a line on stdin, 30 s at
# most); before the fix it was ~90 MB, here a few.
t_empty_messages_are_charged()
{
	local bin=$E2E_TMP/empty_messages pid hwm i
	gcc -O1 -o "$bin" "$HERE/empty_messages.c" || fail "cannot build empty_messages"
	capture native "$bin"
	local want=$OUT
	assert_contains "$want" "unix dgram, empty: EAGAIN within 1024 sends" \
		"the native run stops at EAGAIN"
	mkfifo "$E2E_TMP/go"
	exec 3<>"$E2E_TMP/go"
	"$MOAT" do -- "$bin" <&3 >"$E2E_TMP/mout" 2>"$E2E_TMP/merr" &
	pid=$!
	for ((i = 0; i < 600; i++)); do
		grep -q "queues full" "$E2E_TMP/mout" && break
		kill -0 $pid 2>/dev/null || break
		sleep 0.1
	done
	hwm=$(awk '/VmHWM/ {print $2}' /proc/$pid/status)
	echo "sentry peak RSS, every queue full: ${hwm:-?} kB"
	echo go >&3
	wait $pid
	STATUS=$?
	exec 3>&-
	OUT=$(cat "$E2E_TMP/mout")
	ERR=$(cat "$E2E_TMP/merr")
	[ -n "$hwm" ] && [ "$hwm" -lt 32768 ] ||
		fail "the sentry's peak RSS with every queue full: ${hwm:-?} kB"
	assert_eq "$want" "$OUT" "every queue stops where Linux's does"
}

# Epolls that watch epolls: nesting, cycles and wakeup paths are refused
# where Linux refuses them (ELOOP, EINVAL), and a DAG of 5 levels of 40
# epolls, each watching all of the level below, is looked at in linear
# time: the sentry once polled every path, 40^4 polls (about a second of
# its CPU, outside the sandbox's cgroups) a look, so the 300 looks here
# (waits, polls, and wake-ups of a blocked wait) ran past the timeout.
t_epoll_nesting_matches_native()
{
	gcc -O1 -o "$E2E_TMP/epoll_nesting" "$HERE/epoll_nesting.c" ||
		fail "cannot build epoll_nesting"
	assert_same_as_native "$E2E_TMP/epoll_nesting"
	assert_contains "$OUT" "an epoll over it: ELOOP" "a sixth level is refused"
	assert_contains "$OUT" "the blocked wait: 1 ready" "the DAG ran to its end"
}

run_test hostile_resources_match_native t_hostile_resources_match_native
run_test mqueue_limits_match_native t_mqueue_limits_match_native
run_test mqueue_limits_hold_with_rlimit_raised t_mqueue_limits_hold_with_rlimit_raised
run_test fork_shares_mapping_records t_fork_shares_mapping_records
run_test fork_bounds_fd_tables t_fork_bounds_fd_tables
run_test sysv_churn_is_forgotten t_sysv_churn_is_forgotten
run_test empty_messages_are_charged t_empty_messages_are_charged
run_test epoll_nesting_matches_native t_epoll_nesting_matches_native
