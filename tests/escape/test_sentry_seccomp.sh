#!/usr/bin/env bash
# Barrier: the sentry runs under its own seccomp filter (sentry/seccomp.c)
# in every build: the release one and the ASan/UBSan one, whose runtime
# gets only what its reports need. Seen from the host, as an attacker who
# took over the sentry would meet it. The e2e suite runs this file against
# both build/moat and build/asan/moat.
. "$(dirname "$0")/../e2e/lib.sh"

# The Seccomp: line of the sentry's /proc status while a guest waits.
t_sentry_filtered()
{
	local fifo=$E2E_TMP/wait.in out=$E2E_TMP/wait.out sentry i status
	mkfifo "$fifo"
	# exec: the background job is moat itself, and moat is the sentry
	(exec "$MOAT" do -- /bin/sh -c 'echo ready; read x; echo done' \
		<"$fifo" >"$out" 2>"$E2E_TMP/wait.err") &
	sentry=$!
	exec 7>"$fifo"
	for i in $(seq 600); do
		grep -q ready "$out" && break
		sleep 0.1
	done
	grep -q ready "$out" || { kill -9 "$sentry"; fail "the guest never started"; }
	# (a shell that does not exec a subshell's last command keeps its
	# own pid: the sentry is then its child)
	local pid=$sentry name
	name=$(basename "$MOAT" | cut -c1-15)
	[ "$(cat "/proc/$pid/comm")" = "$name" ] || pid=$(pgrep -P "$sentry" -x "$name")
	status=$(grep -E '^(Seccomp|Seccomp_filters):' "/proc/$pid/status")
	echo go >&7
	exec 7>&-
	wait "$sentry"
	STATUS=$?
	OUT=$(cat "$out")
	ERR=$(cat "$E2E_TMP/wait.err")
	assert_contains "$status" "$(printf 'Seccomp:\t2')" "the sentry is in seccomp filter mode while the guest runs"
	assert_eq 0 "$STATUS" "the sandbox ends normally"
	assert_eq "$(printf 'ready\ndone')" "$OUT" "the guest ran to its end"
}

# LeakSanitizer's exit check (clone, ptrace attach, /proc/self/task) cannot
# run under the filter; the ASan build skips it there rather than die of
# SIGSYS. The release build ignores ASAN_OPTIONS.
t_sentry_exits_filtered()
{
	export ASAN_OPTIONS=detect_leaks=1
	capture moat do -- /bin/echo hi
	assert_eq 0 "$STATUS" "the sandbox exits 0"
	assert_eq hi "$OUT" "the guest's output"
	assert_not_contains "$ERR" "not in its filter" "no host syscall is missing from the filter"
}

# A crash of the filtered sentry still reports itself: libunwind, printing
# the backtrace, makes a pipe, which the release filter lacked, so the
# sentry died of SIGSYS (status 159) after the first line. (The ASan
# build reports a SEGV its own way.)
t_sentry_crash_reports()
{
	local out=$E2E_TMP/crash.out err=$E2E_TMP/crash.err pid name
	(exec "$MOAT" do -- /bin/sh -c 'echo ready; sleep 30' >"$out" 2>"$err") &
	pid=$!
	for _ in $(seq 600); do grep -q ready "$out" && break; sleep 0.1; done
	name=$(basename "$MOAT" | cut -c1-15)
	[ "$(cat "/proc/$pid/comm")" = "$name" ] || pid=$(pgrep -P "$pid" -x "$name")
	kill -SEGV "$pid"
	wait "$pid"
	STATUS=$?
	ERR=$(cat "$err")
	assert_ne 159 "$STATUS" "the sentry did not die of SIGSYS"
	assert_not_contains "$ERR" "not in its filter" "no host syscall is missing"
	if ! grep -q AddressSanitizer "$err"; then
		assert_eq 139 "$STATUS" "it died of its SIGSEGV"
		assert_contains "$ERR" "fatal signal 11" "the crash handler ran"
		assert_match "$ERR" '^  #2 0x' "and printed a backtrace"
	fi
}

run_test "the sentry runs under its seccomp filter" t_sentry_filtered
run_test "a crash of the filtered sentry prints its backtrace" t_sentry_crash_reports
run_test "the sentry exits cleanly under its filter (LeakSanitizer on)" t_sentry_exits_filtered
e2e_done
