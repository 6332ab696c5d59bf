#!/usr/bin/env bash
# The host's own addresses are never reached through a name (nor `*`):
# whatever the kernel delivers locally, in the namespace where the
# sandbox's traffic leaves, when the connection is made. Not a list read
# once at start: an address the host gains later, an AnyIP prefix (a
# local route, no interface address), more addresses than any fixed list
# holds, and, for an OCI bundle with a network namespace, that
# namespace's own addresses. Only an address rule that names them
# reaches them.
#
# The test host is a network namespace this file makes and removes
# (lib.sh's peer_up), with net_peer.py as its DNS; the "host services"
# are listeners of this file on the host, and every address a name
# points at is made local to the host by this file (on its veth end,
# which takes them along when it goes) or is the namespace's own: nothing
# leaves the machine.
. "$(dirname "$0")/../e2e/lib.sh"
. "$(dirname "$0")/../oci/lib_oci.sh"

HERE=$(cd "$(dirname "$0")/../e2e" && pwd)
X=$KIT_X
SUB=10.214.$X
HOSTSIDE=$SUB.1 # the host's, on its end of the veth
PEER=$SUB.2     # the namespace's: the resolver
LATE=$SUB.77    # the host's, but only once the sandbox runs
ANY=10.215.$X   # an AnyIP prefix of the host's: ANY.0/24, no address
MANY=10.216.$X  # the host's 300 addresses: MANY.1-254, MANY2.1-46
MANY2=10.217.$X
POD=moat-hap-$$ # an OCI "pod" namespace, and its peer
PODPEER=moat-happ-$$
PODSUB=10.218.$X
PEER_LOG=$E2E_TMP/peer.log
AUDIT=$E2E_TMP/audit.jsonl
# what the cases start in the background, killed at the end (they run in
# subshells: a variable would not come back)
PIDS=$E2E_TMP/pids

ha_cleanup()
{
	[ -f "$PIDS" ] && kill $(cat "$PIDS") 2>/dev/null
	oci_cleanup
	ip netns del "$POD" 2>/dev/null
	ip netns del "$PODPEER" 2>/dev/null
	e2e_cleanup # and the test host's namespace
}
trap ha_cleanup EXIT

ha_setup()
{
	peer_up ha "$PEER" &&
		net_peer_up ha "$PEER_LOG" \
			late.host.test="$LATE" any.host.test="$ANY.42" \
			many.host.test="$MANY2.46" first.host.test="$MANY.1" || return 1
	NS=${PEER_NS[ha]}
	VH=${PEER_LINK[ha]}
	VP=${PEER_VETH[ha]}
}

NET_OK=1
net_ok && ha_setup || NET_OK=0

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

# listen NAME: a host service on all the host's addresses; sets PORT. Its
# log, $E2E_TMP/NAME.log, says CONNECTED for each connection it takes.
listen()
{
	local log=$E2E_TMP/$1.log
	native $PY -c '
import socket
s = socket.socket(); s.bind(("0.0.0.0", 0)); s.listen(64)
print(s.getsockname()[1], flush=True)
while True:
    c, a = s.accept()
    print("CONNECTED", a, flush=True)
    c.close()' >"$log" 2>&1 &
	echo $! >>"$PIDS"
	for _ in $(seq 50); do [ -s "$log" ] && break; sleep 0.1; done
	read -r PORT <"$log"
	case $PORT in '' | *[!0-9]*) fail "the host listener did not start: $(cat "$log")" ;; esac
}

reached() { grep -c CONNECTED "$E2E_TMP/$1.log"; }

# The guest's probe: NAME (or an address) on PORT, after SLEEP seconds:
# what the resolver says, then what connect says.
PROBE='
import socket, sys, time
dest, port = sys.argv[1], int(sys.argv[2])
time.sleep(float(sys.argv[3]))
try:
    addr = socket.gethostbyname(dest)
except socket.gaierror:
    print(dest, "no address")
    sys.exit(0)
s = socket.socket()
s.settimeout(5)
try:
    s.connect((addr, port))
    print(dest, "connected")
except OSError as e:
    print(dest, e.errno)
'

# host_refused NAME ADDR: the audit says ADDR was refused as the host's
# (a dropped answer for NAME, or a refused connection).
host_refused()
{
	grep -E '"event":"(dns-answer|egress)"' "$AUDIT" | grep "\"dest\":\"$2[:\"]" |
		grep '"verdict":"deny"' | grep -q '"reason":"host-address"' ||
		fail "no host-address audit line for $1 ($2): $(cat "$AUDIT")"
}

t_an_address_the_host_gains_later_is_the_hosts()
{
	need_net
	listen late
	# the sandbox is up (its resolver asked nothing yet) when the host
	# gains $LATE; the guest asks after
	ip addr del "$LATE/32" dev "$VH" 2>/dev/null
	(sleep 1.5; ip addr add "$LATE/32" dev "$VH") &
	local adder=$!
	capture moat_net --allow "late.host.test:$PORT+private" --allow "*:$PORT" -- \
		$PY -c "$PROBE" late.host.test "$PORT" 3
	wait "$adder"
	assert_eq "late.host.test no address" "$OUT" "a name that points at the host's new address"
	assert_eq 0 "$(reached late)" "the host service was reached"
	host_refused late.host.test "$LATE"
	# named by address, it is reached: the refusal above is the rule's
	capture moat_net --allow "$LATE:$PORT" -- $PY -c "$PROBE" "$LATE" "$PORT" 0
	assert_eq "$LATE connected" "$OUT" "an address rule reaches the host's address"
	ip addr del "$LATE/32" dev "$VH"
}

# The same while connections are being made: the guest connects again
# and again to an address of the test host's, and the host takes the
# address over meanwhile (its own first, then the namespace lets it go).
# Whichever line sees it first (the sentry, once it has heard, or the
# link's own check, which asks the kernel at each new destination), no
# connection made after reaches the host's service.
t_connections_as_the_host_takes_an_address_over()
{
	need_net
	listen race
	ip addr del "$LATE/32" dev "$VH" 2>/dev/null
	ip -n "$NS" addr add "$LATE/32" dev "$VP" || fail "no address for the test host"
	(sleep 1.5; ip addr add "$LATE/32" dev "$VH"; ip -n "$NS" addr del "$LATE/32" dev "$VP") &
	local adder=$!
	capture moat_net --allow "late.host.test:$PORT+private" -- $PY -c "
import socket, time
addr = socket.gethostbyname('late.host.test')  # the test host's, now
seen = set()
end = time.time() + 3.5
while time.time() < end:
    s = socket.socket()
    s.settimeout(0.5)
    try:
        s.connect((addr, $PORT))
        seen.add('connected')
    except OSError as e:
        seen.add(str(e.errno))
    s.close()
    time.sleep(0.01)
print(' '.join(sorted(seen)))"
	wait "$adder"
	# refused: by the test host (111), then as the host's (111, or under
	# --net=tap a SYN the kernel dropped before the sentry heard: a
	# timeout, None)
	assert_match "$OUT" '^111( None)?$' "every connection refused"
	assert_eq 0 "$(reached race)" "the host service was reached"
	host_refused late.host.test "$LATE"
	echo "refused by the link: $(grep -c '"by":"link"' "$AUDIT")" >&2 # for the log
	ip addr del "$LATE/32" dev "$VH"
}

t_an_anyip_prefix_is_the_hosts()
{
	need_net
	listen any
	ip route del local "$ANY.0/24" dev "$VH" table local 2>/dev/null
	ip route add local "$ANY.0/24" dev "$VH" table local || fail "no AnyIP route"
	capture moat_net --allow "any.host.test:$PORT+private" -- $PY -c "$PROBE" any.host.test "$PORT" 0
	assert_eq "any.host.test no address" "$OUT" "a name that points into the host's AnyIP prefix"
	assert_eq 0 "$(reached any)" "the host service was reached"
	host_refused any.host.test "$ANY.42"
	capture moat_net --allow "$ANY.0/24:$PORT" -- $PY -c "$PROBE" "$ANY.42" "$PORT" 0
	assert_eq "$ANY.42 connected" "$OUT" "a CIDR rule reaches the prefix"
	ip route del local "$ANY.0/24" dev "$VH" table local
}

t_every_one_of_many_host_addresses_is_the_hosts()
{
	need_net
	listen many
	{
		for i in $(seq 1 254); do echo "addr add $MANY.$i/32 dev $VH"; done
		for i in $(seq 1 46); do echo "addr add $MANY2.$i/32 dev $VH"; done
	} >"$E2E_TMP/batch"
	ip -batch "$E2E_TMP/batch" || fail "could not add 300 addresses"
	capture moat_net --allow "many.host.test:$PORT+private" \
		--allow "first.host.test:$PORT+private" -- sh -c "
$PY -c '$PROBE' first.host.test $PORT 0
$PY -c '$PROBE' many.host.test $PORT 0"
	assert_eq "first.host.test no address
many.host.test no address" "$OUT" "the first and the 300th of the host's addresses"
	assert_eq 0 "$(reached many)" "the host service was reached"
	host_refused many.host.test "$MANY2.46"
	sed -i 's/^addr add/addr del/' "$E2E_TMP/batch"
	ip -batch "$E2E_TMP/batch"
}

# An OCI bundle whose network namespace is a pod's: the slirp helper's
# sockets are the pod's, so the pod's own addresses are "the host's" (a
# sidecar listens there), not those of the namespace moat started in.
t_an_oci_pods_own_address_is_the_hosts()
{
	need_net
	ip netns add "$POD" && ip netns add "$PODPEER" &&
		ip link add mh$$a netns "$POD" type veth peer name mh$$b netns "$PODPEER" &&
		ip -n "$POD" addr add "$PODSUB.5/24" dev mh$$a &&
		ip -n "$PODPEER" addr add "$PODSUB.6/24" dev mh$$b &&
		ip -n "$POD" link set mh$$a up && ip -n "$POD" link set lo up &&
		ip -n "$PODPEER" link set mh$$b up || fail "could not make the pod's namespaces"
	mkdir -p "$E2E_TMP/www" && echo "the pod's own service" >"$E2E_TMP/www/index.html"
	ip netns exec "$POD" $PY -m http.server -b 0.0.0.0 -d "$E2E_TMP/www" 8091 >/dev/null 2>&1 &
	echo $! >>"$PIDS"
	: >"$E2E_TMP/podpeer.log"
	ip netns exec "$PODPEER" $PY "$HERE/net_peer.py" "$E2E_TMP/podpeer.log" \
		pod.host.test="$PODSUB.5" >"$E2E_TMP/podpeer.out" 2>&1 &
	echo $! >>"$PIDS"
	for _ in $(seq 100); do
		grep -q ready "$E2E_TMP/podpeer.out" 2>/dev/null && break
		sleep 0.05
	done
	local ns='[{"type":"pid"},{"type":"network","path":"/var/run/netns/'$POD'"},{"type":"ipc"},{"type":"uts"},{"type":"mount"}]'
	make_bundle "$E2E_TMP/b" '["sh","-c","wget -q -O - http://pod.host.test:8091/index.html 2>&1; wget -q -O - http://'"$PODSUB"'.5:8091/index.html 2>&1"]' \
		"c['linux']['namespaces']=json.loads('$ns')" \
		"c['annotations']={'dev.moat.net':'slirp','dev.moat.dns':'$PODSUB.6','dev.moat.allow':'pod.host.test:8091+private'}" ||
		fail "no bundle"
	ln -sf busybox "$E2E_TMP/b/rootfs/bin/wget"
	# (the sentry writes the resolver's address into the one the root has)
	echo "nameserver 10.0.2.3" >"$E2E_TMP/b/rootfs/etc/resolv.conf"
	capture timeout 60 "$MOAT" --root "$E2E_TMP/root" run --bundle "$E2E_TMP/b" hapod
	assert_not_contains "$OUT" "the pod's own service" "the pod's own address was reached"
	assert_contains "$OUT" "bad address" "its name had an address"
	grep -q "^dns pod.host.test 1 " "$E2E_TMP/podpeer.log" || fail "the pod's resolver was never asked: $OUT $ERR $(cat $E2E_TMP/podpeer.out)"
}

t_tap() { NET_MODE=tap "$@"; }

run_test an_address_the_host_gains_later_is_the_hosts t_an_address_the_host_gains_later_is_the_hosts
run_test connections_as_the_host_takes_an_address_over t_connections_as_the_host_takes_an_address_over
run_test an_anyip_prefix_is_the_hosts t_an_anyip_prefix_is_the_hosts
run_test every_one_of_many_host_addresses_is_the_hosts t_every_one_of_many_host_addresses_is_the_hosts
run_test an_oci_pods_own_address_is_the_hosts t_an_oci_pods_own_address_is_the_hosts
run_test tap_an_address_the_host_gains_later_is_the_hosts t_tap t_an_address_the_host_gains_later_is_the_hosts
run_test tap_connections_as_the_host_takes_an_address_over t_tap t_connections_as_the_host_takes_an_address_over
run_test tap_an_anyip_prefix_is_the_hosts t_tap t_an_anyip_prefix_is_the_hosts
