#!/usr/bin/env bash
# DNS rebinding: whoever answers DNS for an allowed name picks the address
# the guest connects to. An answer that points an allowed name at the
# host, its loopback, a private or a link-local address is dropped (the
# guest's resolver does not return it, the connection is refused, an
# audit line says why) unless the rule says `+private` for a private
# address; the host's own addresses and loopback never pass. The
# resolver takes only the answer to the query it asked, with an id no
# observer can predict.
#
# The test host is a network namespace this file makes with lib.sh's
# peer_up (the EXIT trap removes it), with net_peer.py as its web and DNS
# server.
# Every address an answer names is one of the namespace's own, or the
# host side of its veth pair, or the sandbox's loopback: nothing leaves
# the machine even if the barrier were broken.
. "$(dirname "$0")/../e2e/lib.sh"

X=$KIT_X
SUB=10.205.$X
HOSTSIDE=$SUB.1 # the host's own address, on its end of the veth
PEER=$SUB.2     # the resolver, and a web server
PRIV=$SUB.3     # a private address of the namespace's
LL=169.254.$X.2 # a link-local one (never the metadata address)
# cloud metadata services inside the private ranges (Alibaba's, AWS's
# IPv6 one): addresses of the namespace's, routed there on the veth
META4=100.100.100.200
META6=fd00:ec2::254
SUB6=fd00:205:$X
PEER_LOG=$E2E_TMP/peer.log
AUDIT=$E2E_TMP/audit.jsonl

dns_setup()
{
	peer_up dns "$PEER" "$PRIV" "$LL/32" "$META4/32" \
		"$SUB6::2" "$META6/128" &&
		net_peer_up dns "$PEER_LOG" \
			private.rebind.test="$PRIV" ll.rebind.test="$LL" \
			loop.rebind.test=127.0.0.1 host.rebind.test="$HOSTSIDE" \
			spoof.rebind.test="$PEER,$PRIV" \
			meta4.rebind.test="$META4" meta6.rebind.test/6="$META6" \
			slow.rebind.test="$PEER"
}

NET_OK=1
net_ok && dns_setup || NET_OK=0

need_net()
{
	[ "$NET_OK" = 1 ] || fail "could not make the test host's namespace (root and iproute2 needed)"
}

NET_MODE=slirp
moat_net()
{
	: >"$AUDIT"
	moat do --net="$NET_MODE" --dns "$PEER" --audit "$AUDIT" "$@"
}

# The guest's view of NAME (which resolves to ADDR) on PORT: what its
# resolver says, then a connection by name and one by address (each sends
# a request the test host would log).
PROBE='
import socket, sys
name, addr, port, tag = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
fam = socket.AF_INET6 if ":" in addr else socket.AF_INET
try:
    print(socket.getaddrinfo(name, port, fam, socket.SOCK_STREAM)[0][4][0])
except socket.gaierror:
    print("no address")
for dest in (name, addr):
    s = socket.socket(fam)
    s.settimeout(5)
    try:
        s.connect(socket.getaddrinfo(dest, port, fam, socket.SOCK_STREAM)[0][4])
        s.sendall(b"GET /" + tag.encode() + b" HTTP/1.0\r\n\r\n")
        print("connected")
    except socket.gaierror:
        print("no address")
    except OSError as e:
        print(e.errno)
'

# rebound RULE NAME ADDR PORT REASON: under --allow RULE the guest gets
# no address for NAME and reaches ADDR neither by name nor by address; an
# audit line says the answer was dropped, and why.
rebound()
{
	local rule=$1 name=$2 addr=$3 port=$4 reason=$5 tag=rebind-$RANDOM
	capture moat_net --allow "$rule" -- $PY -c "$PROBE" "$name" "$addr" "$port" "$tag"
	assert_eq "no address
no address
111" "$OUT" "$rule: $name ($addr) neither resolves nor connects"
	! grep -q "$tag" "$PEER_LOG" || fail "$rule: a connection reached the test host"
	grep '"event":"dns-answer"' "$AUDIT" | grep "\"dest\":\"$addr\"" |
		grep "\"name\":\"$name\"" | grep -q "\"reason\":\"$reason\"" ||
		fail "$rule: no dns-answer audit line ($reason): $(cat "$AUDIT")"
}

t_a_private_answer_of_a_plain_name_is_dropped()
{
	need_net
	rebound private.rebind.test:8080 private.rebind.test "$PRIV" 8080 special-range
}

# (lwIP sends to a link-local destination on the link itself, by ARP,
# never through the gateway, so the connection fails even with the answer
# taken; the host's route to $LL is there for the day it would not.)
t_a_link_local_answer_is_dropped_even_marked()
{
	need_net
	rebound ll.rebind.test:8080 ll.rebind.test "$LL" 8080 special-range
	rebound ll.rebind.test:8080+private ll.rebind.test "$LL" 8080 special-range
}

t_a_loopback_answer_is_dropped_even_marked()
{
	need_net
	rebound loop.rebind.test:8080 loop.rebind.test 127.0.0.1 8080 host-address
	rebound loop.rebind.test:8080+private loop.rebind.test 127.0.0.1 8080 host-address
}

t_the_hosts_own_address_is_dropped_even_marked()
{
	need_net
	local log=$E2E_TMP/host.log port
	# a listener on the host's own address, which records a connection
	native $PY -c '
import socket, select, sys
s = socket.socket(); s.bind((sys.argv[1], 0)); s.listen()
print(s.getsockname()[1], flush=True)
r, _, _ = select.select([s], [], [], 30)
print("CONNECTED" if r else "quiet", flush=True)' "$HOSTSIDE" >"$log" 2>&1 &
	local pid=$!
	for _ in $(seq 50); do [ -s "$log" ] && break; sleep 0.1; done
	read -r port <"$log"
	case $port in '' | *[!0-9]*) fail "the host listener did not start: $(cat "$log")" ;; esac
	rebound "host.rebind.test:$port" host.rebind.test "$HOSTSIDE" "$port" host-address
	rebound "host.rebind.test:$port+private" host.rebind.test "$HOSTSIDE" "$port" host-address
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	[ "$(sed -n 2p "$log")" != CONNECTED ] || fail "a connection reached the host's own address"
}

# Alibaba's metadata service sits in the shared range (100.64/10), AWS's
# IPv6 one in the unique-local range (fc00::/7): "private" ranges, which
# a +private name may reach; the metadata addresses in them it may not.
t_metadata_inside_private_ranges_is_never_reached_by_name()
{
	need_net
	rebound meta4.rebind.test:8080+private meta4.rebind.test "$META4" 8080 special-range
	rebound meta6.rebind.test:8080+private meta6.rebind.test "$META6" 8080 special-range
	# an address rule that names them reaches them (the test host
	# answers there: the refusals above are the policy's)
	capture moat_net --allow "$META4:8080" --allow "[$META6]:8080" -- $PY -c "
import urllib.request
for u in ('http://$META4:8080/meta4', 'http://[$META6]:8080/meta6'):
    print(urllib.request.urlopen(u, timeout=10).read().decode(), end='')"
	assert_eq "peer says hello to /meta4
peer says hello to /meta6" "$OUT" "named by address, the metadata addresses are reached"
}

t_a_marked_name_reaches_its_private_address()
{
	need_net
	capture moat_net --allow private.rebind.test:8080+private -- $PY -c "
import socket, urllib.request
print(socket.gethostbyname('private.rebind.test'))
print(urllib.request.urlopen('http://private.rebind.test:8080/marked', timeout=10).read().decode(), end='')"
	assert_eq "$PRIV
peer says hello to /marked" "$OUT" "a +private name resolves and connects"
	grep -q "http $PRIV /marked" "$PEER_LOG" || fail "the test host did not see it"
	assert_contains "$(grep '"egress"' "$AUDIT")" '"rule":"private.rebind.test:8080+private"'
	assert_not_contains "$(cat "$AUDIT")" '"dns-answer"'
}

t_spoofed_answers_are_ignored()
{
	need_net
	# Before the real answer ($PEER) the test host sends forgeries that
	# carry $PRIV: another id, another name, another type, another
	# class, from port 5353, from $PRIV:53. The rule (the policy file's
	# object form) lets the name have a private address, so only the
	# resolver's checks stand between a forgery and the guest.
	printf '{"egress": {"allow": [{"dest": "spoof.rebind.test:8080", "private": true}]}}\n' \
		>"$E2E_TMP/spoof.json"
	capture moat_net --policy "$E2E_TMP/spoof.json" -- $PY -c "
import socket
print(socket.gethostbyname('spoof.rebind.test'))
for dest in ('$PRIV', 'spoof.rebind.test'):
    s = socket.socket()
    s.settimeout(5)
    try:
        s.connect((dest, 8080))
        s.sendall(b'GET /spoof-' + dest.encode() + b' HTTP/1.0\r\n\r\n')
        print('connected')
    except OSError as e:
        print(e.errno)"
	assert_eq "$PEER
111
connected" "$OUT" "only the real answer counts; a forged address is no destination"
	grep -q "^dns spoof.rebind.test 1 " "$PEER_LOG" || fail "no query reached the test host"
	! grep -q "/spoof-$PRIV" "$PEER_LOG" || fail "the forged address was reached"
}

# A guest that asks one name many times at once gets one upstream query:
# each query in flight is one more id and port a blind forger may guess.
# (The test host answers slow.* half a second late, so all 64 are in
# flight together.) Each asker still gets its answer, under its own id.
t_identical_queries_in_flight_are_asked_once()
{
	need_net
	: >"$PEER_LOG"
	capture moat_net --allow slow.rebind.test+private -- $PY -c "
import socket, struct
q = lambda i: struct.pack('>HHHHHH', i, 0x0100, 1, 0, 0, 0) + b'\x04slow\x06rebind\x04test\x00\x00\x01\x00\x01'
socks = []
for i in range(64):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(10)
    s.sendto(q(1000 + i), ('10.0.2.3', 53))
    socks.append(s)
ok = 0
for i, s in enumerate(socks):
    m = s.recv(512)
    ok += struct.unpack('>H', m[:2])[0] == 1000 + i and socket.inet_aton('$PEER') in m
print(ok)"
	assert_eq 1 "$(grep -c '^dns slow.rebind.test 1 ' "$PEER_LOG")" \
		"upstream queries for one name asked 64 times at once"
	assert_eq 64 "$OUT" "every asker answered, under its own id"
}

# xorshift32, as the resolver's clock-seeded generator was: with three
# successive ids, one search over the state's hidden half predicts the
# rest. Prints how many of the later ids it predicted.
PREDICT='
import sys
ids = [int(x) for x in sys.argv[1:]]
def xs(x):
    x ^= (x << 13) & 0xffffffff
    x ^= x >> 17
    x ^= (x << 5) & 0xffffffff
    return x
best = 0
for hi in range(1 << 16):
    s = hi << 16 | ids[0]
    for want in ids[1:3]:
        s = xs(s)
        if s & 0xffff != want:
            break
    else:
        n = 0
        for want in ids[3:]:
            s = xs(s)
            n += s & 0xffff == want
        best = max(best, n)
print(best)
'

t_upstream_ids_are_unpredictable()
{
	need_net
	capture moat_net --allow '*.ids.rebind.test' -- $PY -c "
import socket
for i in range(8):
    try:
        socket.gethostbyname('n%d.ids.rebind.test' % i)
    except socket.gaierror:
        pass
print('asked')"
	assert_eq asked "$OUT"
	local ids
	ids=$(sed -n 's/^dns n[0-9]\.ids\.rebind\.test 1 \([0-9]*\) [0-9]*$/\1/p' "$PEER_LOG")
	[ "$(echo "$ids" | wc -l)" -ge 8 ] || fail "8 queries expected: $(grep ids "$PEER_LOG")"
	# shellcheck disable=SC2086
	assert_eq 0 "$(native $PY -c "$PREDICT" $ids)" "later ids predicted from the first three: $ids"
}

# Under --net=tap the test host sees the ports the resolver's queries
# leave from (NAT keeps them): lwIP's own choice would be each the next
# (7 successive pairs of 8); random ones rarely are (1 in 8192 a pair).
t_upstream_ports_are_random()
{
	need_net
	: >"$PEER_LOG"
	capture moat_net --allow '*.ports.rebind.test' -- $PY -c "
import socket
for i in range(8):
    try:
        socket.gethostbyname('n%d.ports.rebind.test' % i)
    except socket.gaierror:
        pass
print('asked')"
	assert_eq asked "$OUT"
	local ports
	ports=$(sed -n 's/^dns n[0-9]\.ports\.rebind\.test 1 [0-9]* \([0-9]*\)$/\1/p' "$PEER_LOG")
	[ "$(echo "$ports" | wc -l)" -ge 8 ] || fail "8 queries expected: $(grep ports "$PEER_LOG")"
	local runs
	# shellcheck disable=SC2086
	runs=$(native $PY -c '
import sys
p = [int(x) for x in sys.argv[1:]]
print(sum(0 < b - a <= 2 for a, b in zip(p, p[1:])))' $ports)
	[ "$runs" -lt 4 ] || fail "$runs of 7 source ports follow the one before: $ports"
}

t_tap() { NET_MODE=tap "$@"; }

run_test a_private_answer_of_a_plain_name_is_dropped t_a_private_answer_of_a_plain_name_is_dropped
run_test a_link_local_answer_is_dropped_even_marked t_a_link_local_answer_is_dropped_even_marked
run_test a_loopback_answer_is_dropped_even_marked t_a_loopback_answer_is_dropped_even_marked
run_test the_hosts_own_address_is_dropped_even_marked t_the_hosts_own_address_is_dropped_even_marked
run_test metadata_inside_private_ranges_is_never_reached_by_name t_metadata_inside_private_ranges_is_never_reached_by_name
run_test a_marked_name_reaches_its_private_address t_a_marked_name_reaches_its_private_address
run_test spoofed_answers_are_ignored t_spoofed_answers_are_ignored
run_test upstream_ids_are_unpredictable t_upstream_ids_are_unpredictable
run_test identical_queries_in_flight_are_asked_once t_identical_queries_in_flight_are_asked_once
run_test tap_a_private_answer_of_a_plain_name_is_dropped t_tap t_a_private_answer_of_a_plain_name_is_dropped
run_test tap_upstream_ports_are_random t_tap t_upstream_ports_are_random
