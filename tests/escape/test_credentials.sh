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
		echo "resolve rc=$?"' >out.txt 2>&1
	cat out.txt
	grep -q '^403$' out.txt || return 1
	! received api | grep -qF "$S" || return 1
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
run_test guest_hunts_for_the_value case_guest_hunts_for_the_value
run_test file_source_other_names_refused case_file_source_other_names_refused
run_test policy_show_has_no_value case_policy_show_has_no_value
e2e_done
