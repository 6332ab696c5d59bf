#!/usr/bin/env bash
# Credentials never enter the guest (docs/credentials.md). Every case picks
# a random value S and runs a sandbox whose guest holds only S's
# placeholder P: the broker swaps P for S on requests to the secret's host
# where the policy allows it, blocks P everywhere else (a 403 and one
# audit line), and redacts S from what comes back. After every case S
# must appear nowhere the guest or the user can see: the guest's output,
# the audit log, `moat policy show`.
#
# The upstreams are HTTPS/HTTP echo servers in network namespaces this
# file makes and removes (tests/e2e/lib.sh testkit_up), with certificates
# of a test CA the sandbox trusts by --upstream-ca; each records what it
# received, so that a case can tell what reached a host. Nothing leaves
# the machine even if the barrier were broken.
. "$(dirname "$0")/../e2e/lib.sh"

AUDIT=$E2E_TMP/audit.jsonl

if ! net_ok; then
	echo "test_credentials.sh: needs root and iproute2"
	e2e_done
fi
trap e2e_cleanup EXIT
testkit_up || {
	echo "FAIL  test_credentials.sh: the test hosts did not come up"
	exit 1
}

# A fresh value and the environment variable that holds it, per case.
new_secret()
{
	S=sk-live-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')
	export REAL_KEY=$S
}

# box [moat do options] -- CMD...: a sandbox on the test hosts' network,
# trusting the test CA upstream, allowed to reach the four hosts.
box()
{
	"$MOAT" do --net=slirp --dns "$KIT_DNS" --audit "$AUDIT" \
		--upstream-ca "$KIT_CA_PEM" \
		--allow api.test:443+private --allow api.test:80+private \
		--allow alt.api.test:443+private \
		--allow other.test:443+private --allow other.test:80+private \
		--allow inspect.test:443+private \
		--allow plain.test:80+private "$@"
}

# S is nowhere the guest or the user sees: its output (the file given),
# the audit log.
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

# The requests a host received, as its echo server recorded them.
received() { cat "${ECHO_REC[$1]}"; }

case_header_swapped_curl()
{
	new_secret
	: >"${ECHO_REC[api]}"
	box --secret API_KEY=env:REAL_KEY@api.test -- sh -c \
		'echo "P=$API_KEY"; curl -sS -H "Authorization: Bearer $API_KEY" https://api.test/echo' \
		>out.txt 2>&1
	cat out.txt
	P=$(sed -n 's/^P=//p' out.txt)
	[ -n "$P" ] || return 1
	assert_ne "$S" "$P" || return 1
	# the host got S; the guest's echo shows P
	received api | grep -qF "Bearer $S" || {
		echo "api.test did not receive the value"
		received api
		return 1
	}
	grep -qF "Bearer $P" out.txt || return 1
	no_secret_in out.txt || return 1
	grep '"event":"credential"' "$AUDIT" | grep -q '"verdict":"swapped"'
}

case_header_swapped_python()
{
	new_secret
	: >"${ECHO_REC[api]}"
	box --secret API_KEY=env:REAL_KEY@api.test -- python3 -c '
import os, requests
r = requests.get("https://api.test/echo",
                 headers={"X-Api-Key": os.environ["API_KEY"]})
print(r.status_code, r.text)' >out.txt 2>&1
	cat out.txt
	grep -q '^200' out.txt || return 1
	received api | grep -qF "$S" || return 1
	no_secret_in out.txt
}

case_header_swapped_node()
{
	command -v node >/dev/null || { echo "skip: no node"; return 0; }
	new_secret
	: >"${ECHO_REC[api]}"
	box --secret API_KEY=env:REAL_KEY@api.test -- node -e '
const https = require("https");
https.get("https://api.test/echo", {headers: {Authorization: "Bearer " + process.env.API_KEY}}, r => {
  let b = ""; r.on("data", d => b += d); r.on("end", () => console.log(r.statusCode, b));
}).on("error", e => { console.log("error", e.message); process.exit(1); });' >out.txt 2>&1
	cat out.txt
	grep -q '^200' out.txt || return 1
	received api | grep -qF "Bearer $S" || return 1
	no_secret_in out.txt
}

case_basic_swapped()
{
	new_secret
	: >"${ECHO_REC[api]}"
	box --secret API_KEY=env:REAL_KEY@api.test -- sh -c \
		'curl -sS -u "user:$API_KEY" https://api.test/echo' >out.txt 2>&1
	cat out.txt
	want=$(printf 'user:%s' "$S" | base64 -w0)
	received api | grep -qF "Basic $want" || return 1
	no_secret_in out.txt
}

# P to a host that is not the secret's: inspected, it gets the broker's
# 403 and one audit line; the host never sees S.
case_other_host_blocked()
{
	new_secret
	: >"${ECHO_REC[insp]}"
	box --secret API_KEY=env:REAL_KEY@api.test --inspect inspect.test -- sh -c \
		'curl -sS -w "%{http_code}\n" -H "Authorization: Bearer $API_KEY" https://inspect.test/echo' \
		>out.txt 2>&1
	cat out.txt
	grep -q '^403$' out.txt || return 1
	grep -q 'blocked' out.txt || return 1
	[ ! -s "${ECHO_REC[insp]}" ] || { received insp; return 1; }
	assert_eq 1 "$(grep '"event":"credential"' "$AUDIT" | grep -c '"verdict":"blocked"')" || return 1
	no_secret_in out.txt
}

case_plain_http_blocked()
{
	new_secret
	: >"${ECHO_REC[plain]}"
	box --secret API_KEY=env:REAL_KEY@api.test -- sh -c \
		'curl -sS -w "%{http_code}\n" -H "Authorization: Bearer $API_KEY" http://plain.test/echo;
		 curl -sS -w "%{http_code}\n" -H "Authorization: Bearer $API_KEY" http://api.test/echo' \
		>out.txt 2>&1
	cat out.txt
	assert_eq 2 "$(grep -c '^403$' out.txt)" || return 1
	[ ! -s "${ECHO_REC[plain]}" ] || return 1
	! received api | grep -qF "$S" || return 1
	no_secret_in out.txt
}

case_host_outside_policy_refused()
{
	new_secret
	# denied by name, and reached by address (no name resolved to it)
	: >"${ECHO_REC[other]}"
	box --secret API_KEY=env:REAL_KEY@api.test --deny other.test -- sh -c \
		'curl -sS --resolve "other.test:443:'"${PEER_ADDR[other]}"'" -H "Authorization: Bearer $API_KEY" https://other.test/echo; echo "rc=$?"' \
		>out.txt 2>&1
	cat out.txt
	grep -q 'rc=7' out.txt || return 1 # refused at connect
	[ ! -s "${ECHO_REC[other]}" ] || return 1
	grep '"event":"egress"' "$AUDIT" | grep -q '"verdict":"deny"' || return 1
	no_secret_in out.txt
}

case_wrong_location_blocked()
{
	new_secret
	: >"${ECHO_REC[api]}"
	box --secret API_KEY=env:REAL_KEY@api.test -- sh -c '
		curl -sS -o /dev/null -w "%{http_code}\n" "https://api.test/echo?key=$API_KEY"
		curl -sS -o /dev/null -w "%{http_code}\n" -d "token=$API_KEY" https://api.test/echo
		curl -sS -o /dev/null -w "%{http_code}\n" -H "X-Other: $API_KEY" https://api.test/echo' \
		>out.txt 2>&1
	cat out.txt
	assert_eq 3 "$(grep -c '^403$' out.txt)" || return 1
	! received api | grep -qF "$S" || return 1
	no_secret_in out.txt
}

case_opt_in_locations_swapped()
{
	new_secret
	: >"${ECHO_REC[api]}"
	cat >pol.json <<EOF
{"credentials": [{"name": "API_KEY", "from": "env:REAL_KEY",
  "hosts": ["api.test"], "in": ["query:key", "body"]}]}
EOF
	box --policy pol.json -- sh -c '
		curl -sS -o /dev/null -w "%{http_code}\n" "https://api.test/echo?key=$API_KEY"
		curl -sS -o /dev/null -w "%{http_code}\n" -d "token=$API_KEY" https://api.test/echo' \
		>out.txt 2>&1
	cat out.txt
	assert_eq 2 "$(grep -c '^200$' out.txt)" || return 1
	assert_eq 2 "$(received api | grep -cF "$S")" || return 1
	no_secret_in out.txt
}

case_other_secrets_host_blocked()
{
	new_secret
	export OTHER_KEY=ok-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')
	: >"${ECHO_REC[other]}"
	box --secret API_KEY=env:REAL_KEY@api.test \
		--secret OTHER=env:OTHER_KEY@other.test -- sh -c \
		'curl -sS -o /dev/null -w "%{http_code}\n" -H "Authorization: Bearer $API_KEY" https://other.test/echo' \
		>out.txt 2>&1
	cat out.txt
	grep -q '^403$' out.txt || return 1
	! received other | grep -qF "$S" || return 1
	no_secret_in out.txt
}

case_host_confusion_blocked()
{
	new_secret
	: >"${ECHO_REC[api]}"
	: >"${ECHO_REC[other]}"
	box --secret API_KEY=env:REAL_KEY@api.test -- sh -c '
		curl -sS -o /dev/null -w "%{http_code}\n" -H "Host: other.test" -H "Authorization: Bearer $API_KEY" https://api.test/echo
		curl -sS -o /dev/null -w "%{http_code}\n" --resolve "api.test:443:'"${PEER_ADDR[other]}"'" -H "Authorization: Bearer $API_KEY" https://api.test/echo
		echo "resolve rc=$?"
		python3 - <<PY
import os, socket, ssl
s = ssl.create_default_context().wrap_socket(
    socket.create_connection(("api.test", 443)), server_hostname="api.test")
p = os.environ["API_KEY"]
def req(host):
    s.sendall(f"GET /echo HTTP/1.1\\r\\nHost: {host}\\r\\nAuthorization: Bearer {p}\\r\\n\\r\\n".encode())
    f = s.makefile("rb")
    status = f.readline().split()[1].decode()
    n = 0
    while True:
        line = f.readline()
        if line.lower().startswith(b"content-length:"):
            n = int(line.split(b":")[1])
        if line in (b"\\r\\n", b""):
            break
    f.read(n)
    return status
print("keepalive", req("api.test"), req("other.test"))
PY' >out.txt 2>&1
	cat out.txt
	grep -q '^keepalive 200 403$' out.txt || return 1
	grep -q 'resolve rc=7' out.txt || return 1 # no name leads there
	grep -q '^403$' out.txt || return 1
	# the keep-alive connection's first request alone
	assert_eq 1 "$(received api | grep -cF "$S")" || return 1
	! received other | grep -qF "$S" || return 1
	grep '"verdict":"blocked"' "$AUDIT" | grep -q 'host' || return 1
	no_secret_in out.txt
}

case_redaction()
{
	new_secret
	: >"${ECHO_REC[api]}"
	box --secret API_KEY=env:REAL_KEY@api.test -- sh -c '
		echo "P=$API_KEY"
		for p in header chunked gzip sse echo; do
			curl -sS -D - -H "Authorization: Bearer $API_KEY" "https://api.test/$p" | gzip -dcf
			echo
		done' >out.txt 2>&1
	cat out.txt
	P=$(sed -n 's/^P=//p' out.txt)
	[ -n "$P" ] || return 1
	# each of the five got S, and each echo came back as P: the
	# header, a fixed body, a chunked one, a gzip one and an event
	# stream (three events)
	assert_eq 5 "$(received api | grep -cF "$S")" || return 1
	grep -qiF "X-Echo: Bearer $P" out.txt || return 1
	[ "$(grep -oF "Bearer $P" out.txt | wc -l)" -ge 9 ] || return 1
	no_secret_in out.txt
}

# A redirect to another host, followed with the headers
# (--location-trusted): the next hop is checked again. Inspected, it is
# blocked; not inspected, it passes by the broker and carries only P.
case_redirect_checked_again()
{
	new_secret
	: >"${ECHO_REC[api]}"
	: >"${ECHO_REC[other]}"
	box --secret API_KEY=env:REAL_KEY@api.test --inspect other.test -- sh -c '
		curl -sS -o /dev/null -w "%{http_code}\n" --location-trusted -H "Authorization: Bearer $API_KEY" "https://api.test/redirect?to=https://other.test/echo"' \
		>out.txt 2>&1
	cat out.txt
	grep -q '^403$' out.txt || return 1
	[ ! -s "${ECHO_REC[other]}" ] || return 1
	: >"$AUDIT"
	# other.test's own certificate, passed by: the guest trusts its CA
	cat /etc/ssl/certs/ca-certificates.crt "$KIT_CA_PEM" >"$E2E_TMP/both.pem"
	box --secret API_KEY=env:REAL_KEY@api.test -- sh -c '
		cat /etc/moat/ca.pem >>'"$E2E_TMP"'/both.pem 2>/dev/null
		curl -sS -o /dev/null -w "%{http_code}\n" --cacert '"$E2E_TMP"'/both.pem --location-trusted -H "Authorization: Bearer $API_KEY" "https://api.test/redirect?to=https://other.test/echo"' \
		>out2.txt 2>&1
	cat out2.txt
	grep -q '^200$' out2.txt || return 1
	! received other | grep -qF "$S" || return 1
	no_secret_in out.txt out2.txt
}

# Chunked, pipelined and 100-continue requests work through the broker;
# each request smuggling form gets a 400 and never reaches the host.
case_framing()
{
	new_secret
	: >"${ECHO_REC[api]}"
	head -c 300000 /dev/urandom | base64 -w0 >big.txt
	cp big.txt "$E2E_TMP/big.txt"
	box --secret API_KEY=env:REAL_KEY@api.test -- sh -c '
		curl -sS -o /dev/null -w "%{http_code}\n" -H "Transfer-Encoding: chunked" -H "Authorization: Bearer $API_KEY" --data-binary @'"$E2E_TMP"'/big.txt https://api.test/echo
		curl -sS -o /dev/null -w "%{http_code}\n" -H "Expect: 100-continue" -H "Authorization: Bearer $API_KEY" --data-binary @'"$E2E_TMP"'/big.txt https://api.test/echo
		python3 - <<PY
import os, socket, ssl
ctx = ssl.create_default_context()
def ask(raw):
    s = ctx.wrap_socket(socket.create_connection(("api.test", 443)), server_hostname="api.test")
    s.sendall(raw)
    out = b""
    s.settimeout(5)
    try:
        while True:
            d = s.recv(65536)
            if not d:
                break
            out += d
    except socket.timeout:
        pass
    return out
p = os.environ["API_KEY"].encode()
one = b"GET /echo HTTP/1.1\r\nHost: api.test\r\nAuthorization: Bearer " + p + b"\r\n\r\n"
last = b"GET /echo HTTP/1.1\r\nHost: api.test\r\nConnection: close\r\nAuthorization: Bearer " + p + b"\r\n\r\n"
print("pipelined", ask(one + one + last).count(b"HTTP/1.1 200"))
for name, raw in [
    ("cl+te", b"POST /echo HTTP/1.1\r\nHost: api.test\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"),
    ("two-cl", b"POST /echo HTTP/1.1\r\nHost: api.test\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!"),
    ("bare-lf", b"GET /echo HTTP/1.1\nHost: api.test\n\n"),
    ("folded", b"GET /echo HTTP/1.1\r\nHost: api.test\r\nX-A: a\r\n b\r\n\r\n"),
    ("te-gzip", b"POST /echo HTTP/1.1\r\nHost: api.test\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n"),
]:
    print(name, ask(raw).split(b"\r\n")[0].decode())
PY' >out.txt 2>&1
	cat out.txt
	assert_eq 2 "$(grep -c '^200$' out.txt)" || return 1
	grep -q '^pipelined 3$' out.txt || return 1
	assert_eq 5 "$(grep -c 'HTTP/1.1 400' out.txt)" || return 1
	# the two uploads whole, and three pipelined requests; no smuggled one
	assert_eq 5 "$(wc -l <"${ECHO_REC[api]}")" || return 1
	assert_eq 2 "$(received api | grep -cF "$(head -c 64 big.txt)")" || return 1
	no_secret_in out.txt
}

# A client that pins the upstream's key fails its handshake with the
# broker, and sends nothing; a host without a credential shows the guest
# its real certificate.
case_pinning_and_pass_through()
{
	new_secret
	: >"${ECHO_REC[api]}"
	pin=$(openssl x509 -in "$KIT_CA/api.test.crt" -pubkey -noout |
		openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64)
	box --secret API_KEY=env:REAL_KEY@api.test -- sh -c '
		curl -sS -o /dev/null --pinnedpubkey "sha256//'"$pin"'" -H "Authorization: Bearer $API_KEY" https://api.test/echo; echo "pinned rc=$?"
		openssl s_client -connect other.test:443 -servername other.test </dev/null 2>/dev/null | grep "^issuer"' \
		>out.txt 2>&1
	cat out.txt
	grep -q 'pinned rc=90' out.txt || return 1
	[ ! -s "${ECHO_REC[api]}" ] || return 1
	grep '"verdict":"blocked"' "$AUDIT" | grep -q '"reason":"guest-handshake"' || { cat "$AUDIT"; return 1; }
	grep -q "issuer=CN = moat test CA" out.txt || return 1
	no_secret_in out.txt
}

# Memory: after a brokered call, S is in no process of the sandbox but
# the broker: not in the sentry (which relays the upstream's TLS, never
# its plaintext) and not in any guest. Read from the host (the guest's
# own /proc has no mem file), every readable mapping of each.
case_not_in_sandbox_memory()
{
	new_secret
	box --secret API_KEY=env:REAL_KEY@api.test -- sh -c '
		curl -sS -H "Authorization: Bearer $API_KEY" https://api.test/header >/dev/null
		curl -sS -H "Authorization: Bearer $API_KEY" https://api.test/echo >/dev/null
		touch '"$E2E_TMP"'/called; sleep 20' >out.txt 2>&1 &
	local pid=$! i
	for i in $(seq 100); do
		[ -f "$E2E_TMP/called" ] && break
		sleep 0.1
	done
	$PY - "$pid" "$S" <<'PY' >scan.txt 2>&1
import os, re, sys
root, needle = int(sys.argv[1]), sys.argv[2].encode()
kids = {}
for p in os.listdir("/proc"):
    if p.isdigit():
        try:
            ppid = int(open(f"/proc/{p}/stat").read().rsplit(")", 1)[1].split()[1])
        except OSError:
            continue
        kids.setdefault(ppid, []).append(int(p))
todo, tree = [root], []
while todo:
    p = todo.pop()
    tree.append(p)
    todo += kids.get(p, [])
scanned = 0
for p in tree[1:]:  # not the test's own subshell, which holds S
    try:
        cmd = open(f"/proc/{p}/cmdline", "rb").read().split(b"\0")
        if cmd[:2] == [b"moat", b"broker"]:
            print("broker", p)
            continue
        maps = open(f"/proc/{p}/maps").read().splitlines()
        mem = open(f"/proc/{p}/mem", "rb", 0)
    except OSError:
        continue
    for line in maps:
        m = re.match(r"([0-9a-f]+)-([0-9a-f]+) r", line)
        if not m or "[vvar]" in line:
            continue
        lo, hi = int(m.group(1), 16), int(m.group(2), 16)
        # ASan's shadow: terabytes, never touched by a value
        if hi - lo > (1 << 30):
            continue
        scanned += 1
        tail = b""
        for at in range(lo, hi, 1 << 20):
            try:
                mem.seek(at)
                data = tail + mem.read(min(1 << 20, hi - at))
            except (OSError, ValueError, OverflowError):
                break
            if needle in data:
                print("FOUND in", p, cmd[:2], line)
                break
            tail = data[-len(needle):]
print("processes", len(tree), "mappings", scanned)
PY
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	cat scan.txt
	grep -q '^broker ' scan.txt || return 1
	if grep -q __asan_init "$MOAT"; then
		# ASan's runtime keeps its own copy of the environment it
		# started with (read from /proc/self/environ, for its
		# options): the sentry's, in the sanitizer build only
		! grep FOUND scan.txt | grep -v "moat', b'do'" | grep -q . || return 1
	else
		! grep -q FOUND scan.txt || return 1
	fi
	[ "$(sed -n 's/^processes \([0-9]*\).*/\1/p' scan.txt)" -ge 3 ]
}

# --inspect '*': every TLS flow goes to the broker but a --passthrough
# host's, which keeps its own certificate; a placeholder to any inspected
# host is blocked.
case_inspect_all_but_passthrough()
{
	new_secret
	: >"${ECHO_REC[insp]}"
	: >"${ECHO_REC[other]}"
	cat /etc/ssl/certs/ca-certificates.crt "$KIT_CA_PEM" >"$E2E_TMP/both.pem"
	box --secret API_KEY=env:REAL_KEY@api.test --inspect '*' --passthrough other.test -- sh -c '
		curl -sS -o /dev/null -w "%{http_code}\n" -H "Authorization: Bearer $API_KEY" https://inspect.test/echo
		openssl s_client -connect other.test:443 -servername other.test </dev/null 2>/dev/null | grep "^issuer"
		cat /etc/moat/ca.pem >>'"$E2E_TMP"'/both.pem
		curl -sS -o /dev/null -w "%{http_code}\n" --cacert '"$E2E_TMP"'/both.pem -H "Authorization: Bearer $API_KEY" https://other.test/echo' \
		>out.txt 2>&1
	cat out.txt
	assert_eq "403" "$(sed -n 1p out.txt)" || return 1
	grep -q "issuer=CN = moat test CA" out.txt || return 1
	assert_eq "200" "$(sed -n '$p' out.txt)" || return 1
	[ ! -s "${ECHO_REC[insp]}" ] || return 1
	! received other | grep -qF "$S" || return 1
	no_secret_in out.txt
}

case_guest_hunts_for_the_value()
{
	new_secret
	echo "$S" >"$E2E_TMP/secret.txt"
	box --secret API_KEY=env:REAL_KEY@api.test \
		--secret FILE_KEY=file:"$E2E_TMP/secret.txt"@api.test -- sh -c '
		env; cat /proc/*/environ /proc/*/cmdline 2>/dev/null | tr "\0" "\n"
		cat '"$E2E_TMP"'/secret.txt 2>&1
		grep -r -F -- "'"${S:0:10}"'" /etc /tmp 2>/dev/null | head' >out.txt 2>&1
	grep -q 'API_KEY=' out.txt || return 1
	grep -q 'No such file' out.txt || return 1
	no_secret_in out.txt
}

# A file: source is whited out under its one name: another name for it in
# the guest's tree (a hard link, a --mount of its directory) would show
# the value, so the sandbox does not start.
case_file_source_other_names_refused()
{
	new_secret
	mkdir -p "$E2E_TMP/sec/d"
	echo "$S" >"$E2E_TMP/sec/d/key"
	ln "$E2E_TMP/sec/d/key" "$E2E_TMP/sec/d/link"
	box --secret K=file:"$E2E_TMP/sec/d/key"@api.test -- \
		cat "$E2E_TMP/sec/d/link" >out.txt 2>&1
	assert_eq 125 $? || return 1
	grep -q 'hard links' out.txt || return 1
	rm "$E2E_TMP/sec/d/link"
	box --mount "$E2E_TMP/sec:/mnt/sec" \
		--secret K=file:"$E2E_TMP/sec/d/key"@api.test -- \
		cat /mnt/sec/d/key >>out.txt 2>&1
	assert_eq 125 $? || return 1
	grep -q 'mount .* shows it' out.txt || return 1
	# a --rootfs above it: the guest's name for it is not the host's
	make_busybox_rootfs "$E2E_TMP/sec/root"
	mkdir -p "$E2E_TMP/sec/root/srv"
	echo "$S" >"$E2E_TMP/sec/root/srv/key"
	box --rootfs "$E2E_TMP/sec/root" \
		--secret K=file:"$E2E_TMP/sec/root/srv/key"@api.test -- \
		cat /srv/key >>out.txt 2>&1
	assert_eq 125 $? || return 1
	grep -q 'in the rootfs' out.txt || return 1
	rm -rf "$E2E_TMP/sec/root"
	# its one name alone: hidden, and the sandbox runs
	box --secret K=file:"$E2E_TMP/sec/d/key"@api.test -- \
		cat "$E2E_TMP/sec/d/key" >>out.txt 2>&1
	grep -q 'No such file' out.txt || return 1
	cat out.txt
	no_secret_in out.txt
}

case_policy_show_has_no_value()
{
	new_secret
	box --name "cred$$" --secret API_KEY=env:REAL_KEY@api.test -- sleep 3 &
	local pid=$!
	for _ in $(seq 50); do
		"$MOAT" policy show "cred$$" >show.json 2>/dev/null && break
		sleep 0.1
	done
	wait $pid
	cat show.json
	grep -q 'env:REAL_KEY' show.json || return 1
	no_secret_in show.json
}

run_test header_swapped_curl case_header_swapped_curl
run_test header_swapped_python case_header_swapped_python
run_test header_swapped_node case_header_swapped_node
run_test basic_swapped case_basic_swapped
run_test other_host_blocked case_other_host_blocked
run_test plain_http_blocked case_plain_http_blocked
run_test host_outside_policy_refused case_host_outside_policy_refused
run_test wrong_location_blocked case_wrong_location_blocked
run_test opt_in_locations_swapped case_opt_in_locations_swapped
run_test other_secrets_host_blocked case_other_secrets_host_blocked
run_test host_confusion_blocked case_host_confusion_blocked
run_test redaction case_redaction
run_test inspect_all_but_passthrough case_inspect_all_but_passthrough
run_test redirect_checked_again case_redirect_checked_again
run_test framing case_framing
run_test pinning_and_pass_through case_pinning_and_pass_through
run_test not_in_sandbox_memory case_not_in_sandbox_memory
run_test guest_hunts_for_the_value case_guest_hunts_for_the_value
run_test file_source_other_names_refused case_file_source_other_names_refused
run_test policy_show_has_no_value case_policy_show_has_no_value
e2e_done
