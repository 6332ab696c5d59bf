#!/usr/bin/env bash
# The netstack (--net=slirp): guest sockets reach a test host through lwIP
# in the sentry and libslirp in its helper, as the egress policy allows,
# and nothing else does. The test host lives in a network namespace this
# file makes (lib.sh's peer_up; veth 10.203.X.1 <-> 10.203.X.2 and .3) and
# the EXIT trap removes; every address used, the denied ones included, is
# one of its, so nothing leaves the machine even if the policy were broken.
. "$(dirname "$0")/lib.sh"

HERE=$(cd "$(dirname "$0")" && pwd)
SUB=10.203.$KIT_X
SUB6=fd00:203:$KIT_X
PEER6=$SUB6::2
PEER=$SUB.2
DENIED=$SUB.3
PEER_LOG=$E2E_TMP/peer.log
AUDIT=$E2E_TMP/audit.jsonl

net_setup()
{
	peer_up net "$PEER" "$DENIED" "$PEER6" &&
		net_peer_up net "$PEER_LOG" \
			peer.moat.test="$PEER" denied.moat.test="$DENIED" \
			v6.moat.test/6="$PEER6"
}

NET_OK=1
net_ok && net_setup || NET_OK=0

need_net()
{
	[ "$NET_OK" = 1 ] || fail "could not make the test host's namespace (root and iproute2 needed)"
}

# moat_net ARGS... -- CMD: moat do with $NET_MODE (slirp unless a case
# says tap), the test's resolver, the audit log.
NET_MODE=slirp
moat_net()
{
	: >"$AUDIT"
	moat do --net="$NET_MODE" --dns "$PEER" --audit "$AUDIT" "$@"
}

t_none_http_server_fetched_by_urllib()
{
	# --net=none (the default): the loopback alone, no test host needed
	capture moat do -- sh -c '
		cd /tmp && echo served > f.txt &&
		python3 -m http.server 8000 --bind 127.0.0.1 >/dev/null 2>&1 &
		python3 -c "
import time, urllib.request
for _ in range(100):
    try:
        print(urllib.request.urlopen(\"http://localhost:8000/f.txt\").read().decode(), end=\"\")
        break
    except OSError:
        time.sleep(0.05)
import socket
try:
    socket.create_connection((\"192.0.2.1\", 80), timeout=5)
except OSError as e:
    print(e.errno)
"; kill %1'
	assert_eq "served
101" "$OUT" "http.server on the loopback; the outside is unreachable"
}

t_http_fetch_of_an_allowed_name()
{
	need_net
	# the test host's addresses are private: its name says it may be
	capture moat_net --allow peer.moat.test:8080+private -- sh -c "
		curl -sS --max-time 10 http://peer.moat.test:8080/curl-$$ &&
		$PY -c 'import urllib.request; print(urllib.request.urlopen(\"http://peer.moat.test:8080/py\", timeout=10).read().decode(), end=\"\")'"
	assert_eq "peer says hello to /curl-$$
peer says hello to /py" "$OUT" "curl and urllib fetch from the allowed peer"
	grep -q "http $PEER /curl-$$" "$PEER_LOG" || fail "the peer did not see the request"
	assert_contains "$(cat "$AUDIT")" '"event":"egress"' 
	assert_contains "$(grep '"egress"' "$AUDIT")" '"verdict":"allow"'
	assert_contains "$(grep '"egress"' "$AUDIT")" '"rule":"peer.moat.test:8080+private"'
}

t_denied_address_is_refused_at_once()
{
	need_net
	capture moat_net --allow peer.moat.test:8080 -- $PY -c "
import socket, time
for addr in (('$DENIED', 8080), ('$PEER', 8081)):
    s = socket.socket()
    t0 = time.monotonic()
    try:
        s.connect(addr)
        s.sendall(b'GET /leak HTTP/1.0\r\n\r\n')
        print('connected')
    except OSError as e:
        print(e.errno, 'fast' if time.monotonic() - t0 < 0.1 else 'slow')"
	assert_eq "111 fast
111 fast" "$OUT" "ECONNREFUSED within 100 ms"
	! grep -q "/leak" "$PEER_LOG" || fail "a denied connection reached the peer"
	[ "$(grep -c '"verdict":"deny"' "$AUDIT")" = 2 ] || fail "one audit line per denial expected: $(cat "$AUDIT")"
	assert_contains "$(cat "$AUDIT")" "\"dest\":\"$DENIED:8080\""
}

t_dns_of_a_denied_name_is_nxdomain()
{
	need_net
	capture moat_net --allow peer.moat.test+private -- $PY -c "
import socket
print(socket.gethostbyname('peer.moat.test'))
try:
    socket.gethostbyname('denied.moat.test')
    print('resolved')
except socket.gaierror as e:
    print('gaierror', e.errno == socket.EAI_NONAME)"
	assert_eq "$PEER
gaierror True" "$OUT" "allowed resolves, denied is NXDOMAIN"
	! grep -q "dns denied.moat.test" "$PEER_LOG" || fail "the denied name was asked upstream"
	assert_contains "$(grep 'denied.moat.test' "$AUDIT")" '"verdict":"deny"'
}

t_udp_to_a_denied_port_never_arrives()
{
	need_net
	capture moat_net --allow "$PEER:9999/udp" -- $PY -c "
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(5)
s.sendto(b'allowed-$$', ('$PEER', 9999))
print(s.recvfrom(100)[0].decode())
try:
    s.sendto(b'denied-$$', ('$PEER', 9998))
    print('sent')
except OSError as e:
    print(e.errno)"
	assert_eq "echo:allowed-$$
1" "$OUT" "allowed datagram echoed; denied sendto is EPERM"
	sleep 0.3
	grep -q "udp 9999 allowed-$$" "$PEER_LOG" || fail "the allowed datagram did not arrive"
	! grep -q "denied-$$" "$PEER_LOG" || fail "the denied datagram arrived"
}

t_host_loopback_is_unreachable_even_allowing_all()
{
	need_net
	local log=$E2E_TMP/host.log port
	native $PY -c '
import socket, select
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen()
print(s.getsockname()[1], flush=True)
r, _, _ = select.select([s], [], [], 20)
print("CONNECTED" if r else "quiet", flush=True)' >"$log" 2>&1 &
	local pid=$!
	for _ in $(seq 50); do [ -s "$log" ] && break; sleep 0.1; done
	read -r port <"$log"
	capture moat_net --allow '*' --allow 10.0.2.0/24 -- $PY -c "
import socket
for a in ('127.0.0.1', '10.0.2.2', '10.0.2.15'):
    s = socket.socket(); s.settimeout(3)
    try:
        s.connect((a, $port)); print(a, 'connected')
    except OSError as e:
        print(a, e.errno)"
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	[ "$(sed -n 2p "$log")" != CONNECTED ] || fail "a connection reached the host's loopback: $OUT"
	assert_not_contains "$OUT" "connected"
}

t_echo_through_the_netstack()
{
	need_net
	cp "$HERE/net_echo.py" "$E2E_TMP/net_echo.py"
	chmod 644 "$E2E_TMP/net_echo.py"
	capture moat_net --allow "$PEER:7007" -- $PY "$E2E_TMP/net_echo.py" "$PEER"
	assert_eq "echo ok
fionread True
waitall 10000
eof True
peer True name 10.0.2.15" "$OUT" "bytes, readiness and names as on Linux"
	sleep 0.2
	grep -q "echo 4204304" "$PEER_LOG" || fail "the peer did not echo it all: $(grep echo "$PEER_LOG")"
}

t_frames_of_no_flow_are_dropped_and_counted()
{
	need_net
	# The peer echoes a datagram after its socket closed: lwIP answers
	# with an ICMP port unreachable, which is no allowed flow.
	capture moat_net --allow "$PEER:9999/udp" -- $PY -c "
import socket, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.sendto(b'late', ('$PEER', 9999))
s.close()
time.sleep(0.5)
print('done')"
	assert_eq done "$OUT"
	local n
	n=$(sed -n 's/.*"event":"net-summary","frames_dropped":\([0-9]*\).*/\1/p' "$AUDIT")
	[ -n "$n" ] && [ "$n" -ge 1 ] || fail "no drop counted: $(cat "$AUDIT")"
}

t_ipv6_fetch_by_name()
{
	need_net
	capture moat_net --allow v6.moat.test:8080+private -- $PY -c "
import socket, urllib.request
print(socket.getaddrinfo('v6.moat.test', 8080, socket.AF_INET6)[0][4][0])
print(urllib.request.urlopen('http://v6.moat.test:8080/six', timeout=10).read().decode(), end='')
s = socket.socket(socket.AF_INET6)
try:
    s.connect(('$PEER6', 7007))
except OSError as e:
    print(e.errno)"
	assert_eq "$PEER6
peer says hello to /six
111" "$OUT" "AAAA resolved; fetched over IPv6; another port refused"
	grep -q "http $PEER6 /six" "$PEER_LOG" || fail "the peer did not see it over IPv6: $(cat "$PEER_LOG")"
}

t_net_edges()
{
	need_net
	cp "$HERE/net_edges.py" "$E2E_TMP/net_edges.py"
	chmod 644 "$E2E_TMP/net_edges.py"
	capture moat_net --allow peer.moat.test:7007 --allow peer.moat.test:8080 \
		--allow "$PEER:9999/udp" --allow "[$PEER6]:9999/udp" \
		--allow 10.0.0.0/8 -- $PY "$E2E_TMP/net_edges.py" "$PEER" "$PEER6"
	assert_eq "shutdown-close ok
self self
self closed port 111
mapped by name ok
udp mapped and v6 ok
big 90
alive" "$OUT" "each edge as on Linux, and the sentry alive"
	# one decision per socket and destination: the 20 mapped datagrams
	# are one, the oversized one's socket another
	[ "$(grep -c "\"dest\":\"$PEER:9999\"" "$AUDIT")" = 2 ] ||
		fail "one decision for one UDP destination: $(grep 9999 "$AUDIT")"
}

t_names_below_a_suffix_never_reach_special_ranges()
{
	need_net
	# peer.moat.test is a private address: a suffix rule does not name
	# it, so the answer never reaches the guest, and the address is no
	# destination either
	capture moat_net --allow '*.moat.test:8080' -- $PY -c "
import socket
for dest in ('peer.moat.test', '$PEER'):
    try:
        socket.create_connection((dest, 8080), timeout=5)
        print('connected')
    except socket.gaierror:
        print('no address')
    except OSError as e:
        print(e.errno)"
	assert_eq "no address
111" "$OUT"
	assert_contains "$(grep '"dns-answer"' "$AUDIT")" '"reason":"special-range"'
}

t_loopback_resolver_is_refused()
{
	capture moat do --net=slirp --dns 127.0.0.53 -- true
	[ "$STATUS" != 0 ] || fail "a loopback --dns was accepted"
	assert_contains "$ERR" "--dns \`127.0.0.53\`"
}

t_ping_by_icmp_rules()
{
	need_net
	cp "$HERE/net_ping.py" "$E2E_TMP/net_ping.py"
	chmod 644 "$E2E_TMP/net_ping.py"
	# an /icmp rule lets echo through; a rule without it does not
	capture moat_net --allow "$PEER/icmp" -- $PY "$E2E_TMP/net_ping.py" "$PEER"
	assert_eq "(0, 7, 'moat-ping', '127.0.0.1')
(0, 7, 'moat-ping', '$PEER')" "$OUT" "loopback and test host answer"
	capture moat_net --allow "$PEER" -- $PY "$E2E_TMP/net_ping.py" "$PEER"
	assert_eq "(0, 7, 'moat-ping', '127.0.0.1')
peer 1" "$OUT" "TCP and UDP rules do not cover ICMP"
	assert_contains "$(grep '"icmp"' "$AUDIT")" '"verdict":"deny"'
}

t_policy_swap_mid_run()
{
	need_net
	local name=net$$ out=$E2E_TMP/swap.out
	printf '{\n  "egress": {\n    "allow": ["%s:9999/udp"]\n  }\n}\n' "$PEER" >"$E2E_TMP/after.json"
	printf '{\n  "egress": {\n    "allow": ["%s:8080",\n              "x.com:99999"]\n  }\n}\n' "$PEER" >"$E2E_TMP/bad.json"
	: >"$AUDIT"
	moat do --name "$name" --net="$NET_MODE" --dns "$PEER" --audit "$AUDIT" \
		--allow peer.moat.test:8080+private -- $PY -c "
import socket, time, sys
a = socket.create_connection(('peer.moat.test', 8080), timeout=10)
a.sendall(b'GET /before HTTP/1.1\r\nHost: x\r\n\r\n')
print(a.recv(4096).split(b'\r\n')[0].decode(), flush=True)
print('ready', flush=True)
time.sleep(3)
try:
    a.sendall(b'GET /after-old HTTP/1.1\r\nHost: x\r\n\r\n')
    print('old', a.recv(4096) or b'eof')
except OSError as e:
    print('old', e.errno)
try:
    socket.create_connection(('$PEER', 8080), timeout=10)
    print('new connected')
except OSError as e:
    print('new', e.errno)
" >"$out" 2>&1 &
	local pid=$!
	for _ in $(seq 100); do grep -q ready "$out" && break; sleep 0.05; done
	grep -q ready "$out" || fail "the guest did not get going: $(cat "$out")"
	assert_status 1 moat policy set "$name" "$E2E_TMP/bad.json"
	assert_contains "$ERR" "bad.json:4: egress.allow[1]: \`x.com:99999\`: bad port"
	capture moat policy show "$name"
	assert_contains "$OUT" '"peer.moat.test:8080+private"'
	assert_status 0 moat policy set "$name" "$E2E_TMP/after.json"
	capture moat policy show "$name"
	assert_contains "$OUT" "\"$PEER:9999/udp\""
	assert_not_contains "$OUT" "8080"
	wait "$pid"
	OUT=$(cat "$out")
	assert_eq "HTTP/1.0 200 OK
ready
old 104
new 111" "$OUT" "the swap reset the old connection and refuses new ones"
	! grep -q "/after-old" "$PEER_LOG" || fail "the old connection still reached the peer"
	assert_contains "$(cat "$AUDIT")" '"event":"policy-set"'
}

# --net=tap: the same cases through a TAP device, and nothing left after
t_tap() { NET_MODE=tap "$@"; }

t_tap_leaves_nothing_behind()
{
	need_net
	local before after
	before=$(ip -br link | grep -c '^moat' ; nft list tables 2>/dev/null | grep -c moat_)
	capture moat do --net=tap --audit /dev/null -- true
	assert_eq "" "$ERR" "tap set up without complaint"
	for _ in $(seq 40); do
		after=$(ip -br link | grep -c '^moat' ; nft list tables 2>/dev/null | grep -c moat_)
		[ "$after" = "$before" ] && return 0
		sleep 0.05
	done
	fail "links or tables left: $(ip -br link | grep '^moat'; nft list tables | grep moat_)"
}

t_tap_crash_leaves_nothing_behind()
{
	need_net
	local before after pid
	before=$(ip -br link | grep -c '^moat' ; nft list tables 2>/dev/null | grep -c moat_)
	"$MOAT" do --net=tap --audit /dev/null -- sleep 30 >/dev/null 2>&1 &
	pid=$!
	for _ in $(seq 100); do
		ip -br link | grep -q "^moat$pid" && break
		sleep 0.05
	done
	ip -br link | grep -q "^moat$pid" || fail "the tap link never came up"
	kill -KILL "$pid" # the sentry, as a crash would end it
	wait "$pid" 2>/dev/null
	for _ in $(seq 100); do
		after=$(ip -br link | grep -c '^moat' ; nft list tables 2>/dev/null | grep -c moat_)
		[ "$after" = "$before" ] && return 0
		sleep 0.05
	done
	fail "left after a crash: $(ip -br link | grep '^moat'; nft list tables | grep moat_)"
}

# Killed at any moment of its start, a --net=tap sandbox leaves no link and
# no table: the janitor that removes them exists before they do.
t_tap_crash_while_starting_leaves_nothing()
{
	need_net
	local pids="" pid i left
	for i in $(seq 20); do
		"$MOAT" do --net=tap --audit /dev/null -- true >/dev/null 2>&1 &
		pid=$!
		pids="$pids $pid"
		sleep "0.0$((i % 10))"
		kill -KILL "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	done
	# each sandbox's link and table are named after its pid
	for _ in $(seq 100); do
		left=
		for pid in $pids; do
			ip -br link | grep -q "^moat$pid[ @]" && left="$left link moat$pid"
			nft list tables 2>/dev/null | grep -qx "table ip moat_$pid" && left="$left table moat_$pid"
		done
		[ -z "$left" ] && return 0
		sleep 0.05
	done
	fail "left after a crash:$left"
}

t_every_sandbox_has_a_control_socket()
{
	# without --name the sandbox's ID is moat's pid
	"$MOAT" do --allow example.com -- sleep 20 >/dev/null 2>&1 &
	local pid=$! out
	for _ in $(seq 100); do
		out=$("$MOAT" policy show "$pid" 2>/dev/null) && break
		sleep 0.05
	done
	assert_contains "$out" '"example.com"'
	"$MOAT" kill "$pid" TERM || fail "moat kill by pid failed"
	wait "$pid"
	[ $? = 143 ] || fail "the sandbox did not end with SIGTERM"
}

# Empty datagrams from outside cost the guest's socket their whole skb:
# of a flood that nobody reads, a few hundred stay queued, as on Linux
# (the host's own run of the same program, over the veth), not every one
# at ~200 bytes of sentry heap. The first one is waited for; after that
# the queue can hold no more, however long the flood goes on.
t_udp_flood_from_outside_is_bounded()
{
	need_net
	local prog="
import socket, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(10)
s.sendto(b'flood 20000', ('$PEER', 9997))
s.recv(1)
time.sleep(1)
s.setblocking(False)
n = 1
try:
    while True:
        s.recv(1)
        n += 1
except BlockingIOError:
    pass
print('queued:', 'a few hundred at most' if n <= 1024 else 'more than 1024')"
	capture native $PY -c "$prog"
	assert_eq "queued: a few hundred at most" "$OUT" "the host drops past its buffer"
	capture moat_net --allow "$PEER:9997/udp" -- $PY -c "$prog"
	assert_eq "queued: a few hundred at most" "$OUT" "the guest's socket drops past its buffer"
}

run_test every_sandbox_has_a_control_socket t_every_sandbox_has_a_control_socket
run_test none_http_server_fetched_by_urllib t_none_http_server_fetched_by_urllib
run_test http_fetch_of_an_allowed_name t_http_fetch_of_an_allowed_name
run_test denied_address_is_refused_at_once t_denied_address_is_refused_at_once
run_test dns_of_a_denied_name_is_nxdomain t_dns_of_a_denied_name_is_nxdomain
run_test udp_to_a_denied_port_never_arrives t_udp_to_a_denied_port_never_arrives
run_test host_loopback_is_unreachable_even_allowing_all t_host_loopback_is_unreachable_even_allowing_all
run_test echo_through_the_netstack t_echo_through_the_netstack
run_test udp_flood_from_outside_is_bounded t_udp_flood_from_outside_is_bounded
run_test frames_of_no_flow_are_dropped_and_counted t_frames_of_no_flow_are_dropped_and_counted
run_test ipv6_fetch_by_name t_ipv6_fetch_by_name
run_test net_edges t_net_edges
run_test names_below_a_suffix_never_reach_special_ranges t_names_below_a_suffix_never_reach_special_ranges
run_test loopback_resolver_is_refused t_loopback_resolver_is_refused
run_test policy_swap_mid_run t_policy_swap_mid_run
run_test tap_http_fetch_of_an_allowed_name t_tap t_http_fetch_of_an_allowed_name
run_test tap_denied_address_is_refused_at_once t_tap t_denied_address_is_refused_at_once
run_test tap_dns_of_a_denied_name_is_nxdomain t_tap t_dns_of_a_denied_name_is_nxdomain
run_test tap_udp_to_a_denied_port_never_arrives t_tap t_udp_to_a_denied_port_never_arrives
run_test tap_host_loopback_is_unreachable_even_allowing_all t_tap t_host_loopback_is_unreachable_even_allowing_all
run_test tap_echo_through_the_netstack t_tap t_echo_through_the_netstack
run_test tap_policy_swap_mid_run t_tap t_policy_swap_mid_run
run_test tap_leaves_nothing_behind t_tap_leaves_nothing_behind
run_test tap_crash_leaves_nothing_behind t_tap_crash_leaves_nothing_behind
run_test tap_crash_while_starting_leaves_nothing t_tap_crash_while_starting_leaves_nothing
run_test tap_ping_by_icmp_rules t_tap t_ping_by_icmp_rules
