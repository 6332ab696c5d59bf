#!/usr/bin/env bash
# moat secret rotate|revoke|set (cli/secret.c): what the command does
# before and without a broker. The value is read by the command itself,
# checked, and sent as a sealed memfd; a bad SOURCE sends nothing at all
# (a stand-in sandbox logs every connection); a sandbox without
# credentials says it has no broker. The broker's side (the value swapped,
# blocked, connections closed) is tests/escape/test_credentials_live.sh.
. "$(dirname "$0")/lib.sh"

PEER=$E2E_ROOT/tests/escape/ctl_peer.py

if [ "$(id -u)" != 0 ]; then
	echo "test_secret.sh: the stand-in sandbox binds in /run/moat: root needed"
	e2e_done
fi

name_for()
{
	printf '%s-%s' "$1" "$(random_token | tail -c 12)"
}

# A sandbox named $1 in the background (pid in BOX_PID), once its control
# socket answers.
box_up()
{
	# the binary itself, not the function: $! is then moat's pid
	timeout -k 5 "$MOAT_TIMEOUT" "$MOAT" do --name "$1" -- sleep 30 >box.out 2>&1 &
	BOX_PID=$!
	for _ in $(seq 100); do
		kill -0 "$BOX_PID" 2>/dev/null || fail "the sandbox did not start: $(cat box.out)"
		timeout 5 "$MOAT" policy show "$1" >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	fail "the sandbox never answered: $(cat box.out)"
}

box_down()
{
	kill "$BOX_PID" 2>/dev/null
	wait "$BOX_PID" 2>/dev/null
	return 0
}

t_no_broker_is_a_clear_error()
{
	local n
	n=$(name_for nobrk)
	box_up "$n"
	trap box_down EXIT
	export NEW_VALUE=sk-new-$(random_token)
	assert_status 1 moat secret rotate "$n" API_KEY env:NEW_VALUE
	assert_contains "$ERR" "this sandbox has no broker"
	assert_not_contains "$ERR$OUT" "$NEW_VALUE"
	assert_status 1 moat secret revoke "$n" API_KEY
	assert_contains "$ERR" "this sandbox has no broker"
	# it still serves
	assert_status 0 moat policy show "$n"
	box_down
}

# A stand-in sandbox at /run/moat/NAME that logs what it is sent and
# answers "ok": a SOURCE the command refuses must not even connect.
t_bad_source_sends_nothing()
{
	local n src
	n=$(name_for badsrc)
	mkdir -p /run/moat && chmod 700 /run/moat
	$PY "$PEER" answer "/run/moat/$n" heard.log >peer.out 2>&1 &
	local pid=$!
	# however the case ends, the stand-in and its socket file go
	trap 'kill $pid 2>/dev/null; rm -f "/run/moat/$n"' EXIT
	for _ in $(seq 100); do grep -q ready peer.out && break; sleep 0.05; done
	grep -q ready peer.out || fail "the stand-in did not start: $(cat peer.out)"
	unset NO_SUCH_VARIABLE
	export EMPTY= TWO_LINES=$'canary-a\ncanary-b' LONG
	LONG=$(head -c 9000 /dev/zero | tr '\0' a)
	printf 'x\0y' >nul.bin
	for src in env:NO_SUCH_VARIABLE env:EMPTY env:TWO_LINES env:LONG \
		file:/nonexistent/value "file:$PWD/nul.bin" file:relative fd:77 \
		fd:x value:x; do
		assert_status 1 moat secret rotate "$n" API_KEY "$src"
		assert_contains "$ERR" "nothing sent"
		assert_not_contains "$ERR" canary
	done
	# set checks its whole form (--secret's) and its value alike
	assert_status 1 moat secret set "$n" API_KEY env:TWO_LINES
	assert_contains "$ERR" "no hosts"
	for src in env:NO_SUCH_VARIABLE env:EMPTY env:TWO_LINES env:LONG \
		file:/nonexistent/value "file:$PWD/nul.bin" fd:77; do
		assert_status 1 moat secret set "$n" API_KEY "$src@api.example"
		assert_contains "$ERR" "nothing sent"
		assert_not_contains "$ERR" canary
	done
	assert_status 2 moat secret rotate "$n" "API KEY" env:TWO_LINES
	assert_status 2 moat secret frob "$n" API_KEY
	[ -s heard.log ] && fail "a refused source was sent: $(cat heard.log)"
	# the check above can fail: a good source is sent, and only then
	export GOOD=sk-good-$(random_token)
	assert_status 0 moat secret rotate "$n" API_KEY env:GOOD
	for _ in $(seq 40); do [ -s heard.log ] && break; sleep 0.05; done
	assert_contains "$(cat heard.log)" "secret-rotate API_KEY"
	# the value went as an fd, never in the bytes of the request
	assert_not_contains "$(cat heard.log)" "$GOOD"
	kill "$pid"
	wait "$pid" 2>/dev/null
	rm -f "/run/moat/$n"
	return 0
}

run_test no_broker_is_a_clear_error t_no_broker_is_a_clear_error
run_test bad_source_sends_nothing t_bad_source_sends_nothing
e2e_done
