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

run_test hostile_resources_match_native t_hostile_resources_match_native
run_test mqueue_limits_match_native t_mqueue_limits_match_native
run_test mqueue_limits_hold_with_rlimit_raised t_mqueue_limits_hold_with_rlimit_raised
run_test fork_shares_mapping_records t_fork_shares_mapping_records
