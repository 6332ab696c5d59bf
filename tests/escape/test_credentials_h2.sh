#!/usr/bin/env bash
# Credentials over HTTP/2 and gRPC (docs/credentials.md, "HTTP/2"). The
# broker speaks h2 to the guest only when upstream chose h2 too, and
# checks every stream as it checks an HTTP/1 request: P is swapped for S
# where allowed, a misplaced P blocks its stream alone (a 403 and one
# audit line, the other streams of the connection go on), and S is
# redacted from response headers, DATA and trailers.
#
# The upstreams live in network namespaces this file makes: h2.test, an
# HTTP/2 echo server (tests/e2e/h2_echo.py, python3-h2), and grpc.test, a
# gRPC echo service (tests/e2e/grpc_echo.py, python3-grpcio); both record
# what they received, with certificates of a test CA the sandbox trusts
# by --upstream-ca.
. "$(dirname "$0")/../e2e/lib.sh"

AUDIT=$E2E_TMP/audit.jsonl

if ! net_ok; then
	echo "test_credentials_h2.sh: needs root and iproute2"
	e2e_done
fi
if ! $PY -c 'import h2, grpc' 2>/dev/null; then
	echo "test_credentials_h2.sh: needs python3-h2 and python3-grpcio"
	e2e_done
fi
trap e2e_cleanup EXIT

H2_REC=$E2E_TMP/h2.jsonl
GRPC_REC=$E2E_TMP/grpc.jsonl
up()
{
	local a=10.225.$KIT_X.2 g=10.226.$KIT_X.2
	peer_up h2 "$a" && peer_up grpc "$g" || return 1
	net_peer_up h2 "$E2E_TMP/dns.log" h2.test="$a" grpc.test="$g" || return 1
	testca_make "$KIT_CA" && testca_leaf "$KIT_CA" h2.test &&
		testca_leaf "$KIT_CA" grpc.test || return 1
	: >"$H2_REC"
	: >"$GRPC_REC"
	peer_spawn h2 "$E2E_TMP/h2.out" $PY "$E2E_ROOT/tests/e2e/h2_echo.py" \
		--record "$H2_REC" --cert "$KIT_CA/h2.test.pem" \
		--key "$KIT_CA/h2.test.key" || return 1
	# the guest runs the client from here: a checkout under /tmp is not
	# in its view (its /tmp is its own)
	cp "$E2E_ROOT/tests/e2e/grpc_echo.py" "$E2E_TMP/grpc_echo.py"
	peer_spawn grpc "$E2E_TMP/grpc.out" $PY "$E2E_ROOT/tests/e2e/grpc_echo.py" \
		serve --record "$GRPC_REC" --cert "$KIT_CA/grpc.test.pem" \
		--key "$KIT_CA/grpc.test.key" || return 1
}
up || {
	echo "FAIL  test_credentials_h2.sh: the test hosts did not come up"
	exit 1
}

new_secret()
{
	S=sk-live-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')
	export REAL_KEY=$S
	: >"$H2_REC"
	: >"$GRPC_REC"
	: >"$AUDIT"
}

box()
{
	"$MOAT" do --net=slirp --dns "$KIT_DNS" --audit "$AUDIT" \
		--upstream-ca "$KIT_CA/ca.pem" \
		--allow h2.test:443+private --allow grpc.test:443+private "$@"
}

no_secret_in()
{
	local f
	for f in "$@" "$AUDIT"; do
		[ -f "$f" ] || continue
		if grep -qF -- "$S" "$f"; then
			echo "the secret's value is in $f:"
			grep -F -- "$S" "$f" | head -3
			return 1
		fi
	done
}

# Three requests on one h2 connection: each stream reaches h2.test with
# S, and each echo the guest gets shows P, in the body and the header.
case_h2_every_stream_swapped()
{
	new_secret
	box --secret API_KEY=env:REAL_KEY@h2.test -- sh -c \
		'echo "P=$API_KEY"; curl -sS --http2 -w "\n%{http_version} %{http_code} %{num_connects}\n" \
			-D - -H "Authorization: Bearer $API_KEY" \
			https://h2.test/header https://h2.test/a https://h2.test/b' \
		>out.txt 2>&1
	cat out.txt
	P=$(sed -n 's/^P=//p' out.txt)
	[ -n "$P" ] || return 1
	assert_eq 3 "$(grep -c '^2 200' out.txt)" || return 1
	assert_eq 3 "$(grep -c "\"authorization\": \"Bearer $P\"" out.txt)" || return 1
	grep -qi "^x-echo: Bearer $P" out.txt || return 1
	# one connection, three streams, each with S
	assert_eq 3 "$(grep -cF "Bearer $S" "$H2_REC")" || return 1
	assert_eq 1 "$(grep -c '"alpn":"h2"' "$H2_REC")" || return 1
	assert_eq 1 "$(grep '"stream"' "$H2_REC" | sed 's/.*"conn":\([0-9]*\).*/\1/' | sort -u | wc -l)" || return 1
	assert_eq 3 "$(grep '"event":"credential"' "$AUDIT" | grep -c '"verdict":"swapped"')" || return 1
	no_secret_in out.txt
}

# P in a header that is not enabled blocks that stream only: it gets
# the broker's 403 and h2.test never sees it; the next stream on the
# same connection goes through swapped.
case_h2_stream_blocked_connection_stays()
{
	new_secret
	box --secret API_KEY=env:REAL_KEY@h2.test -- python3 -c '
import os, socket, ssl
import h2.connection, h2.events
p = os.environ["API_KEY"]
ctx = ssl.create_default_context()
ctx.set_alpn_protocols(["h2"])
s = ctx.wrap_socket(socket.create_connection(("h2.test", 443)), server_hostname="h2.test")
print("alpn", s.selected_alpn_protocol())
c = h2.connection.H2Connection()
c.initiate_connection()
base = [(":method", "GET"), (":scheme", "https"), (":authority", "h2.test")]
c.send_headers(1, base + [(":path", "/bad"), ("x-other", p)], end_stream=True)
c.send_headers(3, base + [(":path", "/good"), ("authorization", "Bearer " + p)], end_stream=True)
s.sendall(c.data_to_send())
done, out = set(), {}
while len(done) < 2:
    d = s.recv(65536)
    if not d:
        break
    for ev in c.receive_data(d):
        if isinstance(ev, h2.events.ResponseReceived):
            out.setdefault(ev.stream_id, [dict(ev.headers)[b":status"].decode(), b""])
        elif isinstance(ev, h2.events.DataReceived):
            c.acknowledge_received_data(ev.flow_controlled_length, ev.stream_id)
            out[ev.stream_id][1] += ev.data
        elif isinstance(ev, (h2.events.StreamEnded, h2.events.StreamReset)):
            done.add(ev.stream_id)
    s.sendall(c.data_to_send())
for k in sorted(out):
    print("stream", k, out[k][0], out[k][1].decode().strip())
' >out.txt 2>&1
	cat out.txt
	grep -q '^alpn h2' out.txt || return 1
	grep -q '^stream 1 403 moat: blocked: .*x-other' out.txt || return 1
	grep -q '^stream 3 200 ' out.txt || return 1
	! grep -q '"/bad"' "$H2_REC" || return 1
	assert_eq 1 "$(grep -cF "Bearer $S" "$H2_REC")" || return 1
	assert_eq 1 "$(grep '"event":"credential"' "$AUDIT" | grep -c '"verdict":"blocked"')" || return 1
	no_secret_in out.txt
}

# :authority naming another host than the SNI is blocked on its stream.
case_h2_authority_checked()
{
	new_secret
	box --secret API_KEY=env:REAL_KEY@h2.test -- sh -c \
		'curl -sS --http2 -w "\n%{http_code}\n" -H "Host: grpc.test" \
			-H "Authorization: Bearer $API_KEY" https://h2.test/x' \
		>out.txt 2>&1
	cat out.txt
	grep -q '^403$' out.txt || return 1
	grep -q 'not this connection' out.txt || return 1
	! grep -q '"stream"' "$H2_REC" || return 1
	assert_eq 1 "$(grep '"event":"credential"' "$AUDIT" | grep -c '"verdict":"blocked"')" || return 1
	no_secret_in out.txt
}

# The body is searched across DATA frames: P in a 100 KiB body (several
# frames) is blocked where the body is not enabled, swapped where it is.
case_h2_body()
{
	new_secret
	box --secret API_KEY=env:REAL_KEY@h2.test -- sh -c \
		'head -c 70000 /dev/zero | tr "\0" a >b.txt; printf "%s" "$API_KEY" >>b.txt
		 head -c 30000 /dev/zero | tr "\0" a >>b.txt
		 curl -sS --http2 -o /dev/null -w "%{http_code}\n" --data-binary @b.txt https://h2.test/up' \
		>out.txt 2>&1
	cat out.txt
	grep -q '^403$' out.txt || return 1
	! grep -qF "$S" "$H2_REC" || return 1
	# the request had gone up before its body: upstream got a reset
	grep -q '"reset":true' "$H2_REC" || return 1
	assert_eq 1 "$(grep '"event":"credential"' "$AUDIT" | grep -c '"verdict":"blocked"')" || return 1
	new_secret
	cat >pol.json <<EOF
{"credentials": [{"name": "API_KEY", "from": "env:REAL_KEY",
  "hosts": ["h2.test"], "in": ["body"]}]}
EOF
	box --policy pol.json -- sh -c \
		'head -c 70000 /dev/zero | tr "\0" a >b.txt; printf "%s" "$API_KEY" >>b.txt
		 head -c 30000 /dev/zero | tr "\0" a >>b.txt
		 curl -sS --http2 -w "\n%{http_code}\n" --data-binary @b.txt https://h2.test/up | tail -c 200' \
		>out.txt 2>&1
	cat out.txt
	grep -q '^200$' out.txt || return 1
	grep -qF "$S" "$H2_REC" || return 1
	no_secret_in out.txt
}

# S echoed in trailers and in a large DATA stream reaches the guest as P.
case_h2_redaction()
{
	new_secret
	box --secret API_KEY=env:REAL_KEY@h2.test -- python3 -c '
import os, socket, ssl
import h2.connection, h2.events
p = os.environ["API_KEY"]
ctx = ssl.create_default_context()
ctx.set_alpn_protocols(["h2"])
s = ctx.wrap_socket(socket.create_connection(("h2.test", 443)), server_hostname="h2.test")
c = h2.connection.H2Connection()
c.initiate_connection()
base = [(":method", "GET"), (":scheme", "https"), (":authority", "h2.test")]
auth = [("authorization", "Bearer " + p)]
c.send_headers(1, base + [(":path", "/trailers")] + auth, end_stream=True)
c.send_headers(3, base + [(":path", "/big?n=300000")] + auth, end_stream=True)
s.sendall(c.data_to_send())
done, body, tr = set(), {1: b"", 3: b""}, []
while len(done) < 2:
    d = s.recv(65536)
    if not d:
        break
    for ev in c.receive_data(d):
        if isinstance(ev, h2.events.DataReceived):
            c.acknowledge_received_data(ev.flow_controlled_length, ev.stream_id)
            body[ev.stream_id] += ev.data
        elif isinstance(ev, h2.events.TrailersReceived):
            tr = ev.headers
        elif isinstance(ev, (h2.events.StreamEnded, h2.events.StreamReset)):
            done.add(ev.stream_id)
    s.sendall(c.data_to_send())
print("trailers", dict(tr).get(b"x-echo", b"").decode())
print("body1", body[1].decode().strip())
print("len3", len(body[3]), body[3].count(b"x" * 100))
print("body3", body[3][:300].decode())
' >out.txt 2>&1
	cat out.txt | cut -c1-400
	P=$(sed -n 's/^trailers Bearer //p' out.txt)
	[ -n "$P" ] || return 1
	assert_ne "$S" "$P" || return 1
	grep -qF "\"authorization\": \"Bearer $P\"" out.txt || return 1
	grep -q "^len3 .* 3000$" out.txt || return 1
	grep -qF "Bearer $S" "$H2_REC" || return 1
	no_secret_in out.txt
}

# gRPC through the broker: a unary and a server-streaming call, the
# metadata swapped on the way up, S redacted from the echoed answers,
# initial metadata and trailing metadata (gRPC's status is in trailers).
case_grpc_unary_and_stream()
{
	new_secret
	box --secret API_KEY=env:REAL_KEY@grpc.test -- sh -c \
		'echo "P=$API_KEY"; export GRPC_DNS_RESOLVER=native
		 python3 '"$E2E_TMP"'/grpc_echo.py call grpc.test:443 unary "$API_KEY"
		 python3 '"$E2E_TMP"'/grpc_echo.py call grpc.test:443 stream "$API_KEY"' \
		>out.txt 2>&1
	cat out.txt
	P=$(sed -n 's/^P=//p' out.txt)
	[ -n "$P" ] || return 1
	assert_eq 2 "$(grep -c '^code StatusCode.OK' out.txt)" || return 1
	assert_eq 4 "$(grep -c "^answer Bearer $P" out.txt)" || return 1
	assert_eq 2 "$(grep -c "^initial Bearer $P" out.txt)" || return 1
	assert_eq 2 "$(grep -c "^trailing Bearer $P" out.txt)" || return 1
	assert_eq 2 "$(grep -cF "Bearer $S" "$GRPC_REC")" || return 1
	no_secret_in out.txt
}

# A client that offers only http/1.1 still gets HTTP/1.1 from the broker,
# even where upstream speaks h2 only: it is never offered h2 upstream.
case_h1_client_stays_h1()
{
	new_secret
	box --secret API_KEY=env:REAL_KEY@h2.test -- sh -c \
		'curl -sS --http1.1 -w "\n%{http_version} %{http_code}\n" \
			-H "Authorization: Bearer $API_KEY" https://h2.test/x' \
		>out.txt 2>&1
	cat out.txt
	# the broker offered h2.test no h2 (which speaks nothing else, so
	# the request fails)
	grep -q '"alpn":null' "$H2_REC" || return 1
	! grep -q '"alpn":"h2"' "$H2_REC" || return 1
	no_secret_in out.txt
}

# Redaction that changes lengths (a value shorter than its placeholder):
# the response's content-length is dropped, and the client reads the
# whole, longer body without a length error.
case_h2_redaction_length_changes()
{
	new_secret
	S=sk-$(od -An -N4 -tx1 /dev/urandom | tr -d ' \n')
	export REAL_KEY=$S
	box --secret API_KEY=env:REAL_KEY@h2.test -- sh -c \
		'echo "P=$API_KEY"; curl -sS --http2 -D - -H "Authorization: Bearer $API_KEY" https://h2.test/header; echo "rc=$?"' \
		>out.txt 2>&1
	cat out.txt
	P=$(sed -n 's/^P=//p' out.txt)
	[ "${#P}" -gt "${#S}" ] || return 1
	grep -q '^rc=0' out.txt || return 1
	! grep -qi '^content-length' out.txt || return 1
	grep -qF "\"authorization\": \"Bearer $P\"" out.txt || return 1
	grep -qF "Bearer $S" "$H2_REC" || return 1
	no_secret_in out.txt
}

# Many streams at once on one connection, and a download far larger
# than every window: each stream swapped, nothing stalls.
case_h2_parallel_streams_and_big_download()
{
	new_secret
	box --secret API_KEY=env:REAL_KEY@h2.test -- sh -c \
		'urls=; for i in $(seq 30); do urls="$urls https://h2.test/p$i"; done
		 curl -sS --http2 -Z --parallel-max 30 -H "Authorization: Bearer $API_KEY" $urls >par.txt; echo "rc=$?"
		 grep -c "\"authorization\": \"Bearer $API_KEY\"" par.txt
		 curl -sS --http2 -o /dev/null -w "size=%{size_download}\n" -H "Authorization: Bearer $API_KEY" "https://h2.test/big?n=8000000"' \
		>out.txt 2>&1
	cat out.txt
	grep -q '^rc=0' out.txt || return 1
	grep -q '^30$' out.txt || return 1
	assert_eq 31 "$(grep -cF "Bearer $S" "$H2_REC")" || return 1
	grep -q '^size=80003' out.txt || return 1
	no_secret_in out.txt
}

run_test h2_every_stream_swapped case_h2_every_stream_swapped
run_test h2_parallel_streams_and_big_download case_h2_parallel_streams_and_big_download
run_test h2_stream_blocked_connection_stays case_h2_stream_blocked_connection_stays
run_test h2_authority_checked case_h2_authority_checked
run_test h2_body case_h2_body
run_test h2_redaction case_h2_redaction
run_test grpc_unary_and_stream case_grpc_unary_and_stream
run_test h2_redaction_length_changes case_h2_redaction_length_changes
run_test h1_client_stays_h1 case_h1_client_stays_h1
e2e_done
