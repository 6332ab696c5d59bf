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
run_test empty_messages_are_charged t_empty_messages_are_charged
run_test epoll_nesting_matches_native t_epoll_nesting_matches_native
