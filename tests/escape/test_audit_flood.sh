#!/usr/bin/env bash
# The audit log cannot be flooded (sentry/audit.c): a guest looping on a
# syscall moat lacks (an audit record each) once wrote about 5 MB/s to the
# host's shared log. Now every record goes through one limiter: the first
# of each kind is written, then AUDIT_RATE (200) a second, and what is
# left out is counted in "audit-suppressed" records (so the written and
# the counted add up to every call); a sandbox writes at most --audit-max
# bytes, then one "audit-capped" record and, at its end, the count it
# dropped. A log past 32 MiB is rotated when a sandbox opens it.
. "$(dirname "$0")/../e2e/lib.sh"

HERE=$(cd "$(dirname "$0")" && pwd)
FLOOD=$E2E_TMP/audit_flood
gcc -O1 -static -o "$FLOOD" "$HERE/audit_flood.c" || {
	echo "cannot build audit_flood.c" >&2
	exit 1
}
chmod 755 "$FLOOD"

# tally LOG: "WRITTEN SUPPRESSED DROPPED FIRST LAST181 CAPPED" of a log
# where nr 180 was flooded and 181 called once.
tally()
{
	python3 - "$1" <<'PY'
import json, sys
w = s = d = capped = 0
first = last181 = None
for i, l in enumerate(open(sys.argv[1])):
    r = json.loads(l)
    if r.get("event") == "syscall-unimplemented" and r["nr"] == 180:
        w += 1
        first = i if first is None else first
    if r.get("event") == "syscall-unimplemented" and r["nr"] == 181:
        last181 = i
    if r["event"] == "audit-suppressed":
        s += r["records"]
    if r["event"] == "audit-dropped":
        d += r["records"]
    if r["event"] == "audit-capped":
        capped += 1
print(w, s, d, first, last181, capped)
PY
}

t_unimplemented_syscall_flood()
{
	local log=$E2E_TMP/flood.jsonl n=100000 secs
	capture moat do --audit "$log" -- "$FLOOD" 180 $n 181
	assert_eq 0 "$STATUS" "the flood runs: $ERR"
	assert_match "$OUT" "^calls $n seconds [0-9]+ enosys $((n + 1))\$" "every call is ENOSYS"
	secs=$(echo "$OUT" | awk '{print $4}')
	read -r w s d first last181 capped <<<"$(tally "$log")"
	assert_eq 0 "$first" "the first record is the flood's first call"
	assert_ne None "$last181" "the first of another kind is written, after the flood"
	assert_eq $n $((w + s)) "written and suppressed add up to every call ($w + $s)"
	# the bucket's burst, then its rate, for as long as the calls took
	# (rounded up): an upper bound, whatever the machine's speed
	[ "$w" -le $((200 + 200 * (secs + 1))) ] ||
		fail "$w records written in about $secs s: not limited"
	assert_eq 0 "$capped" "16 MiB is far off"
	[ "$(stat -c %s "$log")" -le $((1024 * 1024)) ] ||
		fail "the log is $(stat -c %s "$log") bytes"
}

t_a_sandbox_audit_is_capped()
{
	local log=$E2E_TMP/capped.jsonl n=50000
	capture moat do --audit "$log" --audit-max 16K -- "$FLOOD" 180 $n 181
	assert_eq 0 "$STATUS" "the flood runs: $ERR"
	read -r w s d first last181 capped <<<"$(tally "$log")"
	[ "$(stat -c %s "$log")" -le 16384 ] ||
		fail "the log is $(stat -c %s "$log") bytes, past --audit-max"
	assert_eq 1 "$capped" "one record says the rest are dropped"
	assert_eq 0 "$first" "the first record is still there"
	assert_eq $((n + 1)) $((w + s + d)) "written, suppressed and dropped add up ($w + $s + $d)"
	assert_match "$(tail -1 "$log")" '"event":"audit-dropped"' "the count dropped is the last record"
	capture moat do --audit "$log" --audit-max 1K -- true
	assert_eq 2 "$STATUS" "an --audit-max below 4K is refused"
}

# Denied connects (--net=none: ENETUNREACH, an audit record each) go
# through the same limit.
t_denied_connects_share_the_limit()
{
	local log=$E2E_TMP/connects.jsonl
	capture moat do --audit "$log" -- $PY -c '
import socket, time
t = time.monotonic()
for i in range(20000):
    s = socket.socket()
    try:
        s.connect(("10.9.8.7", 80))
    except OSError:
        pass
    s.close()
print("seconds", int(time.monotonic() - t) + 1)'
	assert_eq 0 "$STATUS" "the connects run: $ERR"
	python3 - "$log" "$(echo "$OUT" | awk '{print $2}')" <<'PY' || fail "connects: $(head -c 600 "$log")"
import json, sys
w = s = 0
for l in open(sys.argv[1]):
    r = json.loads(l)
    w += r["event"] == "net-unreachable"
    s += r["records"] if r["event"] == "audit-suppressed" else 0
secs = int(sys.argv[2])
assert w + s == 20000, (w, s)
assert 1 <= w <= 200 + 200 * (secs + 1), (w, secs)
PY
}

# A log past 32 MiB is rotated when a sandbox opens it: FILE.1 is the one
# that was, FILE.2 and FILE.3 the older ones, the oldest gone. Not a file
# of someone else's, nor one that is no regular file.
t_a_large_log_is_rotated()
{
	local d=$E2E_TMP/rot log
	mkdir -p "$d"
	log=$d/audit.jsonl
	truncate -s 33M "$log"
	echo one >"$log.1"
	echo two >"$log.2"
	echo three >"$log.3"
	capture moat do --audit "$log" -- "$FLOOD" 180 1
	assert_eq 0 "$STATUS" "runs: $ERR"
	assert_eq $((33 * 1024 * 1024)) "$(stat -c %s "$log.1")" "the large log is FILE.1"
	assert_eq one "$(cat "$log.2")" "FILE.1 is FILE.2"
	assert_eq two "$(cat "$log.3")" "FILE.2 is FILE.3"
	[ ! -e "$log.4" ] || fail "more than 3 old logs are kept"
	assert_contains "$(cat "$log")" '"nr":180' "the new log has the sandbox's record"
	# not a log past the size that is another user's
	truncate -s 33M "$d/other.jsonl"
	chown nobody "$d/other.jsonl"
	capture moat do --audit "$d/other.jsonl" -- true
	[ ! -e "$d/other.jsonl.1" ] || fail "another user's file was rotated"
}

run_test unimplemented_syscall_flood t_unimplemented_syscall_flood
run_test a_sandbox_audit_is_capped t_a_sandbox_audit_is_capped
run_test denied_connects_share_the_limit t_denied_connects_share_the_limit
run_test a_large_log_is_rotated t_a_large_log_is_rotated
e2e_done
