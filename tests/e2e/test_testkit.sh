#!/usr/bin/env bash
# The test kit of lib.sh that the credential broker's tests stand on: a
# test CA, test hosts in network namespaces, a resolver for their names
# and HTTPS/HTTP echo servers that record what they get. Checked from the
# host (curl against the kit's CA and names), and from a sandbox through
# --net=slirp, which reaches the hosts without any broker. Afterwards
# nothing of it is left: no namespace, link or process.
. "$(dirname "$0")/lib.sh"

KIT_OK=1
net_ok && testkit_up || KIT_OK=0

need_kit()
{
	[ "$KIT_OK" = 1 ] || fail "could not bring the test kit up (root and iproute2 needed)"
	echo_reset
}

# field FILE N KEY: KEY of the Nth JSON line of FILE (1-based)
field()
{
	$PY -c '
import json, sys
rec = json.loads(open(sys.argv[1]).read().splitlines()[int(sys.argv[2]) - 1])
v = rec
for k in sys.argv[3].split("."):
    v = v[int(k)] if isinstance(v, list) else v[k]
print(v if not isinstance(v, (dict, list)) else json.dumps(v))' "$@"
}

# kcurl HOST ARGS...: curl from the host to HOST at its kit address
kcurl()
{
	local host=$1 peer
	shift
	case $host in api.test | alt.api.test) peer=api ;; other.test) peer=other ;;
	inspect.test) peer=insp ;; plain.test) peer=plain ;; esac
	native curl -sS --max-time 10 --cacert "$KIT_CA_PEM" \
		--resolve "$host:443:${PEER_ADDR[$peer]}" \
		--resolve "$host:80:${PEER_ADDR[$peer]}" "$@"
}

t_requests_reach_each_host_with_its_sni()
{
	need_kit
	local tok
	tok=$(random_token)
	capture kcurl api.test -H "Authorization: Bearer $tok" \
		https://api.test/hello?x=1
	assert_eq 0 "$STATUS" "curl to api.test"
	assert_contains "$OUT" "\"authorization\": \"Bearer $tok\"" "the echo shows the header"
	capture kcurl other.test -d "body-$tok" https://other.test/post
	assert_eq 0 "$STATUS" "curl to other.test"
	assert_eq "api.test" "$(field "${ECHO_REC[api]}" 1 sni)" "api's SNI recorded"
	assert_eq "/hello?x=1" "$(field "${ECHO_REC[api]}" 1 path)"
	assert_eq "Bearer $tok" "$(field "${ECHO_REC[api]}" 1 headers.3.1)" \
		"the header as received (Host, User-Agent, Accept, Authorization)"
	assert_eq "other.test" "$(field "${ECHO_REC[other]}" 1 sni)"
	assert_eq "POST" "$(field "${ECHO_REC[other]}" 1 method)"
	assert_eq "body-$tok" "$(field "${ECHO_REC[other]}" 1 body)"
	assert_eq 1 "$(wc -l <"${ECHO_REC[api]}")" "one request, one line"
	# a second name of the same host; plain HTTP on 80
	capture kcurl alt.api.test https://alt.api.test/
	assert_eq "alt.api.test" "$(field "${ECHO_REC[api]}" 2 sni)"
	capture kcurl plain.test http://plain.test/p
	assert_eq 0 "$STATUS"
	assert_eq "False" "$(field "${ECHO_REC[plain]}" 1 tls)"
	# the kit's CA is what makes it work: another CA does not
	testca_make "$E2E_TMP/other-ca" || fail "a second CA"
	capture native curl -sS --max-time 10 --cacert "$E2E_TMP/other-ca/ca.pem" \
		--resolve "api.test:443:${PEER_ADDR[api]}" https://api.test/
	assert_ne 0 "$STATUS" "a CA that did not sign the leaf is refused"
}

# python3 -c "$DNS_A" SERVER NAME: the A record SERVER gives for NAME
DNS_A='
import socket, struct, sys
q = struct.pack(">HHHHHH", 0x4d4f, 0x0100, 1, 0, 0, 0)
q += b"".join(bytes([len(l)]) + l.encode() for l in sys.argv[2].split(".")) + b"\0"
q += struct.pack(">HH", 1, 1)
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(3)
s.sendto(q, (sys.argv[1], 53))
r = s.recv(512)
if struct.unpack(">H", r[6:8])[0]:
    print(socket.inet_ntoa(r[-4:]))
else:
    print("nxdomain")'

t_the_resolver_knows_the_kit_names()
{
	need_kit
	local n
	for n in api.test other.test inspect.test plain.test; do
		capture native $PY -c "$DNS_A" "$KIT_DNS" "$n"
		case $n in
		api.test) assert_eq "${PEER_ADDR[api]}" "$OUT" "$n" ;;
		other.test) assert_eq "${PEER_ADDR[other]}" "$OUT" "$n" ;;
		inspect.test) assert_eq "${PEER_ADDR[insp]}" "$OUT" "$n" ;;
		plain.test) assert_eq "${PEER_ADDR[plain]}" "$OUT" "$n" ;;
		esac
	done
	capture native $PY -c "$DNS_A" "$KIT_DNS" nowhere.test
	assert_eq nxdomain "$OUT" "no other name"
}

t_echo_modes()
{
	need_kit
	local tok
	tok=$(random_token)
	capture kcurl api.test -H "Authorization: $tok" -D - https://api.test/header
	assert_match "$OUT" "^X-Echo: $tok" "the value in a response header"
	capture kcurl api.test -D - https://api.test/chunked
	assert_match "$OUT" "^Transfer-Encoding: chunked" "a chunked answer"
	assert_contains "$OUT" '"path": "/chunked"'
	capture kcurl api.test -H "Authorization: $tok" -D - -o "$E2E_TMP/gz" https://api.test/gzip
	assert_match "$OUT" "^Content-Encoding: gzip" "gzip without being asked"
	assert_contains "$(gzip -dc "$E2E_TMP/gz")" "$tok"
	capture kcurl api.test -H "Authorization: $tok" -N https://api.test/sse
	assert_eq 3 "$(grep -c "^data: .*$tok" <<<"$OUT")" "three events"
	capture kcurl api.test -D - "https://api.test/redirect?to=https://other.test/x"
	assert_match "$OUT" "^HTTP/1.1 302" "a redirect"
	assert_match "$OUT" "^Location: https://other.test/x"
	# keep-alive: two requests, one connection; a chunked upload with
	# 100-continue
	capture kcurl api.test https://api.test/a https://api.test/b
	assert_eq "$(field "${ECHO_REC[api]}" 6 conn)" "$(field "${ECHO_REC[api]}" 7 conn)" \
		"both on one connection"
	assert_eq 2 "$(field "${ECHO_REC[api]}" 7 seq)"
	capture kcurl api.test -H "Transfer-Encoding: chunked" -H "Expect: 100-continue" \
		--data-binary "chunked-$tok" https://api.test/up
	assert_contains "$OUT" "\"body\": \"chunked-$tok\"" "the chunked body, decoded"
	assert_eq "True" "$(field "${ECHO_REC[api]}" 8 chunked)"
}

t_a_sandbox_reaches_the_kit_hosts()
{
	need_kit
	local tok
	tok=$(random_token)
	capture moat do --net=slirp --dns "$KIT_DNS" --allow api.test:443+private \
		-- curl -sS --max-time 10 --cacert "$KIT_CA_PEM" \
		-H "Authorization: Bearer $tok" https://api.test/from-moat
	assert_eq 0 "$STATUS" "curl in moat to api.test"
	assert_contains "$OUT" "\"authorization\": \"Bearer $tok\""
	assert_eq api.test "$(field "${ECHO_REC[api]}" 1 sni)"
	assert_eq /from-moat "$(field "${ECHO_REC[api]}" 1 path)"
	# other.test is not allowed: no address, nothing recorded
	capture moat do --net=slirp --dns "$KIT_DNS" --allow api.test:443+private \
		-- curl -sS --max-time 10 --cacert "$KIT_CA_PEM" https://other.test/
	assert_ne 0 "$STATUS" "other.test is outside the policy"
	assert_eq 0 "$(wc -l <"${ECHO_REC[other]}")" "nothing reached other.test"
}

t_nothing_is_left_after_the_kit()
{
	# a kit of its own in a child shell, that ends: every namespace,
	# link and process of it must be gone
	# (its addresses in other /24s than this file's)
	local out=$E2E_TMP/child.out
	bash -c '. "$1/tests/e2e/lib.sh"; KIT_X=$2; testkit_up || exit 1
		echo "${PEER_NS[*]} ${PEER_LINK[*]}"
		for ns in "${PEER_NS[@]}"; do ip netns pids "$ns"; done' \
		_ "$E2E_ROOT" $(((KIT_X - 20 + 1) % 200 + 20)) >"$out" 2>&1 ||
		fail "the child's kit: $(cat "$out")"
	local ns=() links=() pids=() w
	read -ra w <"$out"
	for x in "${w[@]}"; do
		case $x in moat-*) ns+=("$x") ;; *) links+=("$x") ;; esac
	done
	mapfile -t pids < <(tail -n +2 "$out")
	assert_eq 4 "${#ns[@]}" "four namespaces were made: $(cat "$out")"
	# four echo servers and the resolver
	assert_eq 5 "${#pids[@]}" "five servers ran: $(cat "$out")"
	for x in "${ns[@]}"; do
		! ip netns list | grep -qw "$x" || fail "namespace $x left"
	done
	for x in "${links[@]}"; do
		! ip link show "$x" >/dev/null 2>&1 || fail "link $x left"
	done
	for x in "${pids[@]}"; do
		! kill -0 "$x" 2>/dev/null || fail "process $x left"
	done
}

run_test requests_reach_each_host_with_its_sni t_requests_reach_each_host_with_its_sni
run_test the_resolver_knows_the_kit_names t_the_resolver_knows_the_kit_names
run_test echo_modes t_echo_modes
run_test a_sandbox_reaches_the_kit_hosts t_a_sandbox_reaches_the_kit_hosts
run_test nothing_is_left_after_the_kit t_nothing_is_left_after_the_kit
e2e_done
