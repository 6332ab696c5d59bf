#!/usr/bin/env bash
# The broker process on its own (broker/broker.c): `moat broker` driven
# through its link by tests/e2e/broker_link.py, which plays the sentry:
# its start (values read, placeholders made, confinement), its refusals,
# and flows through it over socketpairs, with a TLS echo server on the
# upstream end whose certificate comes from a test CA. No network: the
# broker never has any.
. "$(dirname "$0")/lib.sh"

HERE=$(cd "$(dirname "$0")" && pwd)
S=sk-live-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')
JSON='{"credentials":[{"name":"API_KEY","from":"env:REAL_KEY","hosts":["api.test"]}]}'

if [ "$(id -u)" != 0 ]; then
	echo "test_broker.sh: skipped: --as needs root"
	exit 0
fi

# A test CA and a certificate for api.test from it, in $E2E_TMP/certs.
make_certs()
{
	local d=$E2E_TMP/certs
	[ -f "$d/api.test.crt" ] && return 0
	mkdir -p "$d"
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
		-keyout "$d/testca.key" -out "$d/testca.crt" -days 2 \
		-subj "/CN=moat broker test CA" \
		-addext "basicConstraints=critical,CA:TRUE" \
		-addext "keyUsage=critical,keyCertSign" 2>/dev/null &&
		openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
			-keyout "$d/api.test.key" -out "$d/api.test.csr" \
			-subj "/CN=api.test" 2>/dev/null &&
		printf 'subjectAltName=DNS:api.test\nextendedKeyUsage=serverAuth\n' >"$d/ext" &&
		openssl x509 -req -in "$d/api.test.csr" -CA "$d/testca.crt" \
			-CAkey "$d/testca.key" -CAcreateserial -days 2 \
			-out "$d/api.test.crt" -extfile "$d/ext" 2>/dev/null
}

# link CASE: run the driver; its lines in OUT.
link()
{
	make_certs || fail "no test certificates"
	assert_status 0 env BRK_JSON="${BRK_JSON:-$JSON}" BRK_SECRET="$S" \
		BRK_ENV="${BRK_ENV-REAL_KEY=$S}" BRK_UPCA="${BRK_UPCA-$E2E_TMP/certs/testca.crt}" \
		BRK_FDVALS="${BRK_FDVALS:-}" BRK_NEW="${BRK_NEW:-}" \
		timeout -k 5 90 "$PY" "$HERE/broker_link.py" "$MOAT" "$E2E_TMP/certs" "$1"
}

# val KEY: the value of the driver's first `KEY: ` line.
val()
{
	sed -n "s/^$1: //p" <<<"$OUT" | head -1
}

case_start_confined()
{
	local ph
	link start
	assert_eq yes "$(val ready)"
	ph=$(val placeholder)
	ph=${ph#API_KEY=}
	# as long as the value, letters and digits only
	assert_eq "${#S}" "${#ph}"
	assert_match "$ph" '^[A-Za-z0-9]+$'
	assert_eq 65534 "$(val uid)"
	assert_eq 65534 "$(val gid)"
	assert_eq 1 "$(val nonewprivs)"
	assert_eq 2 "$(val seccomp)"
	# not dumpable: its /proc files are root's though it runs as 65534
	assert_eq 0 "$(val proc_owner)"
	# the variable it read is gone from its memory's environ block
	assert_eq no "$(val environ_has_secret)"
	# stdio on /dev/null and the link: no other fd
	assert_eq 4 "$(val fds | wc -w)"
	# the link closed: it exits
	assert_eq 0 "$(val exit)"
	assert_not_contains "$OUT" "$S"
}

case_placeholder_template()
{
	local ph
	BRK_JSON='{"credentials":[{"name":"API_KEY","from":"env:REAL_KEY","hosts":["api.test"],"placeholder":"sk-{rand}"}]}' \
		link start
	ph=$(val placeholder)
	ph=${ph#API_KEY=}
	assert_match "$ph" '^sk-[A-Za-z0-9]+$'
	assert_eq "${#S}" "${#ph}"
	# a short value still gets 16 random characters
	BRK_ENV=REAL_KEY=abc BRK_JSON='{"credentials":[{"name":"API_KEY","from":"env:REAL_KEY","hosts":["api.test"],"placeholder":"sk-{rand}"}]}' \
		link start
	ph=$(val placeholder)
	ph=${ph#API_KEY=}
	assert_eq $((3 + 16)) "${#ph}"
}

case_file_and_fd_sources()
{
	local ph1 ph2
	printf '%s\n' "$S" >"$E2E_TMP/secret"
	chmod 600 "$E2E_TMP/secret"
	BRK_ENV= BRK_FDVALS=0123456789abcdefghijklmnopqrstuvwxyz \
		BRK_JSON='{"credentials":[{"name":"A","from":"file:'"$E2E_TMP"'/secret","hosts":["a.test"]},{"name":"B","from":"fd:9","hosts":["b.test"]}]}' \
		link start
	assert_eq yes "$(val ready)"
	ph1=$(sed -n 's/^placeholder: A=//p' <<<"$OUT")
	ph2=$(sed -n 's/^placeholder: B=//p' <<<"$OUT")
	# the trailing newline is not part of the value
	assert_eq "${#S}" "${#ph1}"
	assert_eq 36 "${#ph2}"
}

# refused SETUP-JSON WHAT: the broker answers BRK_FAIL naming the secret.
refused()
{
	BRK_ENV=${BRK_ENV-} BRK_JSON=$1 link start
	assert_contains "$(val fail)" "secret API_KEY"
	assert_contains "$(val fail)" "$2"
	assert_eq 1 "$(val exit)"
	assert_eq "" "$(val ready)"
}

case_refusals()
{
	local f=$E2E_TMP/v
	BRK_ENV=OTHER=x refused "$JSON" "REAL_KEY is not set"
	: >"$f"
	refused '{"credentials":[{"name":"API_KEY","from":"file:'"$f"'","hosts":["a.test"]}]}' "is empty"
	head -c 9000 /dev/zero | tr '\0' a >"$f"
	refused '{"credentials":[{"name":"API_KEY","from":"file:'"$f"'","hosts":["a.test"]}]}' "longer than"
	printf 'abc\0def' >"$f"
	refused '{"credentials":[{"name":"API_KEY","from":"file:'"$f"'","hosts":["a.test"]}]}' "NUL"
	printf 'abc\ndef\n' >"$f"
	refused '{"credentials":[{"name":"API_KEY","from":"file:'"$f"'","hosts":["a.test"]}]}' "line break"
	refused '{"credentials":[{"name":"API_KEY","from":"file:'"$E2E_TMP"'/none","hosts":["a.test"]}]}' "No such file"
	refused '{"credentials":[{"name":"API_KEY","from":"file:/etc","hosts":["a.test"]}]}' "not a file"
}

case_flow_tls()
{
	link flow
	# the guest trusts the sandbox CA, gets a leaf for its SNI and
	# http/1.1 though it offered h2 first
	assert_eq api.test "$(val guest_cert_san)"
	assert_eq http/1.1 "$(val guest_alpn)"
	# upstream: verified against --upstream-ca, SNI and ALPN sent
	assert_eq api.test "$(val upstream_sni)"
	assert_eq http/1.1 "$(val upstream_alpn)"
	assert_contains "$(val upstream_request)" 'Host: api.test'
	assert_contains "$(val guest_answer)" '200 OK'
	assert_eq 0 "$(val exit)"
}

# Needs the HTTP engine (broker/http1.c): the placeholder is swapped on
# the way up and the echoed value redacted on the way down.
case_flow_swap()
{
	local ph
	link flow
	ph=$(val placeholder)
	ph=${ph#API_KEY=}
	assert_contains "$(val upstream_request)" "Authorization: Bearer $S"
	assert_contains "$(val guest_answer)" "you sent: Bearer $ph"
	assert_not_contains "$(val guest_answer)" "$S"
}

# Needs the HTTP engine too: its 403 reaches the guest whole (the broker
# lingers before it closes), and nothing reaches upstream.
case_flow_blocked()
{
	link blocked
	assert_contains "$(val guest_answer)" '403 Forbidden'
	assert_contains "$(val guest_answer)" 'moat: blocked'
	assert_contains "$(val audit)" '"verdict":"blocked"'
	assert_contains "$(val audit)" '"secret":"API_KEY"'
	assert_eq "b''" "$(val upstream_request)"
	assert_not_contains "$OUT" "$S"
}

case_flow_plain_http()
{
	link flow-http
	assert_contains "$(val upstream_request)" 'Host: api.test'
	assert_contains "$(val guest_answer)" '200 OK'
	# plain HTTP never carries the value
	assert_not_contains "$(val upstream_request)" "$S"
}

case_host_confusion()
{
	link confusion
	assert_contains "$(val audit)" '"verdict":"blocked","reason":"host-confusion"'
	assert_contains "$(val audit)" '"dest":"10.0.0.5:443"'
	assert_eq "b''" "$(val upstream_request)"
	assert_eq "b''" "$(val guest_answer)"
}

case_sni_mismatch()
{
	link sni-mismatch
	assert_contains "$(val guest_error)" UNRECOGNIZED_NAME
	assert_contains "$(val audit)" '"reason":"host-confusion"'
	assert_eq "b''" "$(val upstream_request)"
}

case_upstream_untrusted()
{
	BRK_UPCA= link untrusted
	assert_contains "$(val guest_answer)" '502 Bad Gateway'
	assert_contains "$(val guest_answer)" 'certificate of api.test is not trusted'
	assert_contains "$(val audit)" '"reason":"upstream-certificate"'
	# nothing of the request went upstream
	assert_eq "b''" "$(val upstream_request)"
}

case_stalled_flow_isolated()
{
	link two-flows
	assert_contains "$(val guest_answer)" '200 OK'
}

case_parallel_flows()
{
	link parallel
	assert_eq 24 "$(val parallel_ok)"
	assert_eq 0 "$(val exit)"
}

case_big_flow()
{
	link big
	assert_eq True "$(val big_up)"
	assert_eq True "$(val big_down)"
	assert_eq 0 "$(val exit)"
}

case_revoke_closes_flows()
{
	link revoke-closes
	assert_eq "0 revoked; 1 open flows closed" "$(val revoke)"
	# both sides of the open flow see its end
	assert_eq "b''" "$(val guest_after_revoke)"
	assert_eq True "$(val upstream_after_revoke)"
}

case_flow_cap()
{
	link too-many
	# 260 flows at once, 256 served
	assert_eq 4 "$(val too_many)"
}

# What a WebSocket client sends before the 101 reaches upstream once the
# upgrade takes.
case_ws_early_bytes()
{
	link ws-early
	assert_eq "HTTP/1.1 101 Switching Protocols" "$(val ws_status)"
	assert_eq "b'EARLY-FRAME'" "$(val ws_early)"
}

# A response under way at a rotate echoes the old value: the guest gets
# the placeholder for it all the same.
case_rotate_under_way()
{
	local ph
	BRK_NEW=sk-new-0123456789abcdef0123 link rotate-under-way
	ph=$(val placeholder)
	ph=${ph#API_KEY=}
	assert_eq rotated "$(val rotate)"
	assert_contains "$(val upstream_request)" "Bearer $S"
	assert_contains "$(val guest_answer)" "you sent: Bearer $ph"
	assert_not_contains "$(val guest_answer)" "$S"
}

case_bad_flow_ends_link()
{
	link bad-flow
	assert_eq 1 "$(val exit)"
}

case_rotate()
{
	BRK_NEW=sk-new-0123456789 link rotate
	assert_eq "True 0 rotated" "$(val rotate)"
	assert_eq -2 "$(val revoke_unknown)"
}

run_test start_confined case_start_confined
run_test placeholder_template case_placeholder_template
run_test file_and_fd_sources case_file_and_fd_sources
run_test refusals case_refusals
run_test flow_tls case_flow_tls
run_test flow_swap case_flow_swap
run_test flow_blocked case_flow_blocked
run_test flow_plain_http case_flow_plain_http
run_test host_confusion case_host_confusion
run_test sni_mismatch case_sni_mismatch
run_test upstream_untrusted case_upstream_untrusted
run_test stalled_flow_isolated case_stalled_flow_isolated
run_test parallel_flows case_parallel_flows
run_test big_flow case_big_flow
run_test revoke_closes_flows case_revoke_closes_flows
run_test flow_cap case_flow_cap
run_test ws_early_bytes case_ws_early_bytes
run_test rotate_under_way case_rotate_under_way
run_test bad_flow_ends_link case_bad_flow_ends_link
run_test rotate case_rotate
e2e_done
