#!/usr/bin/env bash
# The sentry's side of the credential broker (sentry/brokerlink.c, the
# sniffing in sentry/socket.c) against a hostile guest: what it makes the
# sentry hold stays bounded, and what it sends reaches no credentialed
# host's value. The hosts are tests/e2e/lib.sh's kit (testkit_up), in
# network namespaces this file makes and removes.
. "$(dirname "$0")/../e2e/lib.sh"
HERE=$(cd "$(dirname "$0")" && pwd)

AUDIT=$E2E_TMP/audit.jsonl

if ! net_ok; then
	echo "test_broker_barrier.sh: needs root and iproute2"
	e2e_done
fi
trap e2e_cleanup EXIT
testkit_up || {
	echo "FAIL  test_broker_barrier.sh: the test hosts did not come up"
	exit 1
}
PROBE=$E2E_TMP/broker_probe
gcc -O1 -o "$PROBE" "$HERE/broker_probe.c" || fail "cannot build broker_probe"

new_secret()
{
	S=sk-live-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')
	export REAL_KEY=$S
}

box()
{
	"$MOAT" do --net=slirp --dns "$KIT_DNS" --audit "$AUDIT" \
		--upstream-ca "$KIT_CA_PEM" \
		--allow api.test:443+private --allow api.test:80+private \
		--allow plain.test:80+private "$@"
}

# kib_of PID FIELD: a /proc/PID/status field, in KiB.
kib_of() { awk -v f="$2:" '$1 == f { print $2 }' "/proc/$1/status"; }

# data_after N: the sentry's heap (VmData, KiB) once its guest made N
# empty sends on a connection whose first bytes are being sniffed.
data_after()
{
	local pid spid= kib=
	new_secret
	box --secret API_KEY=env:REAL_KEY@api.test -- sh -c \
		"$PROBE zero plain.test 80 $1 && sleep 5" >"zero$1.txt" 2>&1 &
	pid=$!
	for _ in $(seq 100); do
		spid=$(pgrep -P "$pid" | head -1)
		grep -q sent "zero$1.txt" && break
		sleep 0.1
	done
	grep -q sent "zero$1.txt" && kib=$(kib_of "$spid" VmData)
	wait "$pid"
	cat "zero$1.txt" >&2
	echo "${kib:-0}"
}

case_empty_sends_hold_nothing()
{
	local base many
	base=$(data_after 1)
	many=$(data_after 20000)
	echo "VmData: $base KiB after 1 empty send, $many KiB after 20000"
	[ "$base" -gt 0 ] && [ "$many" -gt 0 ] || return 1
	# 20000 sniff buffers (16 KiB each) would be 312 MiB
	[ $((many - base)) -lt 65536 ]
}

# The broker killed (from the host) while a flow is open: that flow is
# reset, not ended as if the upstream had finished (a reader until EOF
# would take a cut answer for the whole), and a flow after it is reset
# too: nothing passes by, nothing reaches the host.
case_broker_killed_resets_flows()
{
	local fifo=$E2E_TMP/kill.fifo pid spid bpid
	new_secret
	: >"${ECHO_REC[plain]}"
	rm -f "$fifo"
	mkfifo "$fifo"
	# from the test's own directory: a checkout under /tmp is not in the
	# guest's view (its /tmp is its own)
	cp "$HERE/broker_kill.py" "$E2E_TMP/broker_kill.py"
	box --secret API_KEY=env:REAL_KEY@api.test -- \
		python3 "$E2E_TMP/broker_kill.py" plain.test <"$fifo" >out.txt 2>&1 &
	pid=$!
	exec 7>"$fifo"
	for _ in $(seq 100); do
		grep -q sent out.txt && break
		sleep 0.1
	done
	spid=$(pgrep -P "$pid" | head -1)
	bpid=$(pgrep -P "$spid" -f 'broker --ctl' | head -1)
	[ -n "$bpid" ] || { exec 7>&-; wait "$pid"; return 1; }
	kill -9 "$bpid"
	sleep 0.5
	echo go >&7
	exec 7>&-
	wait "$pid"
	cat out.txt
	grep -q '^open error ECONNRESET' out.txt || return 1
	grep -q '^new error ECONNRESET' out.txt || return 1
	[ ! -s "${ECHO_REC[plain]}" ]
}

# Many connections, each with a first byte held for sniffing: the held
# buffers are charged to the sandbox (its --memory share), so that past
# it a send fails (ENOBUFS) instead of the sentry growing without end.
# The host never accepts them (its listen queue holds the handshakes).
case_held_first_bytes_charged()
{
	local lpid
	# ASan's own memory (shadow, quarantine) takes the sentry past a
	# 64 MiB limit before the guest does anything: the plain run covers it
	asan_build && { echo "skipped under the ASan build"; return 0; }
	ip netns exec "${PEER_NS[plain]}" python3 -c '
import socket, time
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", 8081))
s.listen(4096)
time.sleep(120)' &
	lpid=$!
	sleep 0.5
	new_secret
	box --memory 64m --allow plain.test:8081+private \
		--secret API_KEY=env:REAL_KEY@api.test -- sh -c \
		"ulimit -n 4096; $PROBE hold plain.test 8081 2000 </dev/null" \
		>out.txt 2>&1
	kill "$lpid"
	wait "$lpid" 2>/dev/null
	cat out.txt
	# 2000 buffers would be 31 MiB; the sentry's share of 64 MiB is 16
	grep -q 'send: No buffer space available' out.txt || return 1
	[ "$(sed -n 's/^held //p' out.txt)" -lt 1100 ]
}

# A connection closed while its first bytes are still held (too few to
# tell what the flow is: "PING" could begin a request line) sends them
# before its FIN, as a close does without a broker: nothing is lost.
case_close_sends_held_bytes()
{
	local lpid got=$E2E_TMP/got.txt
	: >"$got"
	ip netns exec "${PEER_NS[plain]}" python3 -c '
import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", 8082))
s.listen(4)
s.settimeout(30)
c, _ = s.accept()
c.settimeout(30)
data = b""
while True:
    d = c.recv(100)
    if not d:
        break
    data += d
open(sys.argv[1], "wb").write(data + b"|end\n")' "$got" &
	lpid=$!
	sleep 0.5
	new_secret
	box --allow plain.test:8082+private \
		--secret API_KEY=env:REAL_KEY@api.test -- python3 -c '
import socket
s = socket.create_connection(("plain.test", 8082))
s.sendall(b"PING")
s.close()'
	wait "$lpid"
	cat "$got"
	assert_eq "PING|end" "$(cat "$got")"
}

# Client-first protocols whose first line is "token SP visible" but names
# no HTTP version (memcached, IRC, the PROXY protocol) pass by the broker
# with one running: it would wait for the rest of a request head that
# never comes, and the client would hang.
case_other_line_protocols_pass()
{
	local lpid
	ip netns exec "${PEER_NS[plain]}" python3 -c '
import socket
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", 8083))
s.listen(8)
s.settimeout(30)
for _ in range(3):
    c, _ = s.accept()
    c.sendall(b"SERVER GOT " + c.recv(200))
    c.close()' &
	lpid=$!
	sleep 0.5
	new_secret
	box --allow plain.test:8083+private \
		--secret API_KEY=env:REAL_KEY@api.test -- python3 -c '
import socket
for line in (b"get foo\r\n", b"NICK bob\r\n", b"PROXY TCP4 1.2.3.4 5.6.7.8 1 2\r\n"):
    s = socket.create_connection(("plain.test", 8083))
    s.settimeout(10)
    s.sendall(line)
    try:
        print(repr(s.recv(200)))
    except OSError as e:
        print("no answer:", e)' >out.txt 2>&1
	kill "$lpid" 2>/dev/null
	wait "$lpid" 2>/dev/null
	cat out.txt
	assert_eq 3 "$(grep -c "SERVER GOT" out.txt)"
}

run_test other_line_protocols_pass case_other_line_protocols_pass
run_test close_sends_held_bytes case_close_sends_held_bytes
run_test held_first_bytes_charged case_held_first_bytes_charged
run_test broker_killed_resets_flows case_broker_killed_resets_flows
run_test empty_sends_hold_nothing case_empty_sends_hold_nothing
e2e_done
