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
KINDS=$E2E_TMP/audit_kinds
gcc -O1 -static -o "$KINDS" "$HERE/audit_kinds.c" || {
	echo "cannot build audit_kinds.c" >&2
	exit 1
}
chmod 755 "$KINDS"

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
	assert_eq $n $((w + s + d)) "written, suppressed and dropped add up ($w + $s + $d)"
	assert_match "$(tail -1 "$log")" '"event":"audit-dropped"' "the count dropped is the last record"
	capture moat do --audit "$log" --audit-max 1K -- true
	assert_eq 2 "$STATUS" "an --audit-max below 4K is refused"
}

# cap_blinds: past the cap every record was dropped, the first of a kind
# and the owner's included, so a guest that flooded until then blinded
# the log. What the buckets let through is capped; the first of each
# kind and the owner's records are not.
t_the_cap_blinds_nothing()
{
	local log=$E2E_TMP/blind.jsonl pol=$E2E_TMP/blind.json name=audit-cap-$$ pid i
	echo '{"egress":{"allow":["example.com:443"]}}' >"$pol"
	moat do --name $name --audit "$log" --audit-max 16K -- $PY -c '
import ctypes, socket, sys, time
libc = ctypes.CDLL(None)
for i in range(3000): libc.syscall(180, 0, 0, 0)
print("capped", flush=True)
time.sleep(3)
s = socket.socket()
try: s.connect(("10.9.8.7", 80))
except OSError: pass
libc.syscall(181, 0, 0, 0)' >"$E2E_TMP/blind.out" 2>&1 &
	pid=$!
	for i in $(seq 300); do
		grep -q capped "$E2E_TMP/blind.out" 2>/dev/null && break
		sleep 0.05
	done
	grep -q '"event":"audit-capped"' "$log" || fail "not capped yet: $(tail -2 "$log")"
	moat policy set $name "$pol" || fail "policy set"
	wait $pid || fail "the guest: $(cat "$E2E_TMP/blind.out")"
	python3 - "$log" <<'PY' || fail "after the cap: $(tail -5 "$log")"
import json, sys
rs = [json.loads(l) for l in open(sys.argv[1])]
ev = [r["event"] for r in rs]
cap = ev.index("audit-capped")
after = ev[cap + 1:]
assert "policy-set" in after, "the owner's record"
assert "net-unreachable" in after, "a first of its kind"
assert any(r.get("nr") == 181 for r in rs[cap + 1:]), "syscall 181's first"
assert ev[-1] == "audit-dropped", ev[-3:]
PY
}

# kinds_exhaust: the kind of a record was the guest's own syscall number,
# so 256 made-up numbers filled the limiter's one table of kinds, and a
# flood kept the bucket empty: a refused connect and a first syscall
# were only counted. Now every number past the table is one kind, and
# syscalls, egress and the rest each have their bucket and table.
t_made_up_syscalls_hide_nothing()
{
	local log=$E2E_TMP/kinds.jsonl
	capture moat do --audit "$log" -- "$KINDS" 100000 3
	assert_eq 0 "$STATUS" "the guest runs: $ERR"
	assert_contains "$OUT" "connect -1 errno 101" "the connect is refused (--net=none)"
	python3 - "$log" <<'PY' || fail "kinds: $(grep -v '"nr":100' "$log" | head -c 800)"
import json, sys
rs = [json.loads(l) for l in open(sys.argv[1])]
assert all("sandbox" in r for r in rs), "every record names its sandbox"
ev = [r["event"] for r in rs]
assert ev.count("net-unreachable") == 1, ev.count("net-unreachable")
assert [r["nr"] for r in rs if r.get("nr") == 181] == [181], "181's first"
made_up = [r for r in rs if r["event"] == "syscall-unimplemented" and r["nr"] >= 100000]
# one first for all of them, then the bucket: 200 and 200 a second
assert len(made_up) <= 200 + 1 + 200 * 5, len(made_up)
PY
	# the same with --net=slirp: the egress deny is written, whatever
	# the flood of syscalls
	capture moat do --net=slirp --audit "$E2E_TMP/kinds-net.jsonl" -- "$KINDS" 100000 3
	assert_contains "$OUT" "connect -1 errno 111" "the connect is denied"
	assert_eq 1 "$(grep -c '"event":"egress".*"verdict":"deny"' "$E2E_TMP/kinds-net.jsonl")" \
		"the egress deny is written"
}

# policy_set_hidden: the owner's records (the control socket's, the
# host's side) shared the guest's bucket and table of kinds: a guest
# that kept them full hid `moat policy set` from the log.
t_the_owners_records_are_never_hidden()
{
	local log=$E2E_TMP/owner.jsonl pol=$E2E_TMP/owner.json name=audit-own-$$ pid i
	echo '{"egress":{"allow":["example.com:443"]}}' >"$pol"
	moat do --name $name --audit "$log" -- "$KINDS" 200000 4 >"$E2E_TMP/owner.out" &
	pid=$!
	for i in $(seq 300); do
		[ "$(grep -c '"nr":200' "$log" 2>/dev/null)" -ge 256 ] && break
		sleep 0.05
	done
	moat policy set $name "$pol" || fail "policy set"
	moat policy set $name "$pol" || fail "policy set again"
	wait $pid
	assert_eq 2 "$(grep -c '"event":"policy-set"' "$log")" "both policy-set records"
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

# dns_name_breaks_json: a query name of 253 quotes or backslashes,
# escaped, ran past its buffer and was cut unclosed: no JSON, and jq
# stops at the first such line of the shared log.
t_dns_names_stay_json()
{
	local log=$E2E_TMP/dns.jsonl
	capture moat do --audit "$log" -- $PY -c '
import socket, struct
def q(labels):
    m = struct.pack(">HHHHHH", 0x1234, 0x0100, 1, 0, 0, 0)
    for l in labels: m += bytes([len(l)]) + l
    return m + b"\0" + struct.pack(">HH", 1, 1)
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(2)
for c in (b"\"", b"\\", b"\x01", b"\xff"):
    s.sendto(q([c * 63] * 3 + [c * 61]), ("10.0.2.3", 53))
    try: s.recv(600)
    except OSError: pass
'
	assert_eq 0 "$STATUS" "the queries run: $ERR"
	python3 - "$log" <<'PY' || fail "dns: $(head -c 1500 "$log")"
import json, sys
names = []
for l in open(sys.argv[1], "rb"):
    r = json.loads(l)
    if r["event"] == "dns":
        names.append(r["name"])
assert len(names) >= 2, names
for n, c in zip(names, ('"', "\\")):
    assert set(n) == {c, "."} and len(n) == 253, (c, n[:20])
PY
	jq -e . "$log" >/dev/null || fail "jq reads it all"
}

# rotate_flock_dos: rotate() waited for good on a lock of the log, which
# anyone who can read it can hold: a sandbox that logs there never
# started. It waits a little, then runs on without rotating.
t_a_held_lock_does_not_stop_a_sandbox()
{
	local d=$E2E_TMP/lock log hold
	mkdir -p "$d"
	chmod 755 "$d"
	log=$d/audit.jsonl
	truncate -s 33M "$log"
	chmod 644 "$log"
	setpriv --reuid=65534 --regid=65534 --clear-groups $PY -c '
import fcntl, sys, time
f = open(sys.argv[1]); fcntl.flock(f, fcntl.LOCK_SH)
print("held", flush=True); time.sleep(60)' "$log" >"$d/hold.out" &
	hold=$!
	for _ in $(seq 100); do grep -q held "$d/hold.out" && break; sleep 0.05; done
	capture timeout 30 "$MOAT" do --audit "$log" -- "$FLOOD" 180 1
	kill $hold
	wait $hold 2>/dev/null
	assert_eq 0 "$STATUS" "the sandbox runs (124: it waited for the lock)"
	assert_contains "$(tail -c 300 "$log")" '"nr":180' "it logs to the file, not rotated"
	[ ! -e "$log.1" ] || fail "rotated under another's lock"
}

run_test unimplemented_syscall_flood t_unimplemented_syscall_flood
run_test a_sandbox_audit_is_capped t_a_sandbox_audit_is_capped
run_test the_cap_blinds_nothing t_the_cap_blinds_nothing
run_test made_up_syscalls_hide_nothing t_made_up_syscalls_hide_nothing
run_test the_owners_records_are_never_hidden t_the_owners_records_are_never_hidden
run_test denied_connects_share_the_limit t_denied_connects_share_the_limit
run_test a_large_log_is_rotated t_a_large_log_is_rotated
run_test dns_names_stay_json t_dns_names_stay_json
run_test a_held_lock_does_not_stop_a_sandbox t_a_held_lock_does_not_stop_a_sandbox
e2e_done
