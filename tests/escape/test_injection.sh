#!/usr/bin/env bash
# Barrier: the sentry's injected syscalls cannot be hijacked, a dying thread
# group cannot hang the sentry, a dead task's tid cannot reach a host
# process, and the stub that injections run cannot be changed.
. "$(dirname "$0")/../e2e/lib.sh"

HERE=$(cd "$(dirname "$0")" && pwd)
BIN=$E2E_TMP/bin
mkdir -p "$BIN"

build()
{
	gcc -O1 -pthread -o "$BIN/$1" "$HERE/$1.c" || fail "cannot build $1"
}

t_hijack()
{
	build injection_hijack
	capture moat do -- "$BIN/injection_hijack" 1
	assert_contains "$OUT" "race not won" "no injected syscall ran guest-chosen code (getpid probe)"
	capture moat do -- "$BIN/injection_hijack" 2
	assert_contains "$OUT" "race not won" "no injected syscall ran guest-chosen code (CLONE_UNTRACED probe)"
}

t_leader_wait()
{
	build leader_wait
	capture moat do -- "$BIN/leader_wait"
	assert_eq 0 "$STATUS" "the sandbox does not hang (timeout would give 124)"
	assert_contains "$OUT" "survived" "every round of exit_group during injection completes"
}

t_stale_tid()
{
	build stale_tid
	capture moat do -- "$BIN/stale_tid" 100
	assert_contains "$OUT" "no stale task this time" "dead tids are gone from the sandbox"
}

t_stub_tamper()
{
	build stub_tamper
	capture moat do -- "$BIN/stub_tamper"
	assert_eq 0 "$STATUS" "every change to the stub is refused, file mappings still work"
	assert_not_contains "$OUT" "NOT refused" "nothing reached the stub"
}

run_test "injected syscalls cannot be hijacked" t_hijack
run_test "exit_group during an injection does not hang the sentry" t_leader_wait
run_test "a dead task's tid is not reused" t_stale_tid
run_test "the stub cannot be changed" t_stub_tamper
e2e_done
