#!/usr/bin/env bash
# `make demo`: untrusted Python and a shell pipeline, run by moat's sentry,
# and a credential the guest never holds (the broker's security drill).
set -euo pipefail
cd "$(dirname "$0")/.."
MOAT=${MOAT:-build/moat}
export PATH=/usr/sbin:/usr/bin:/sbin:/bin

bold='' plain=''
if [ -t 1 ]; then bold=$'\033[1m' plain=$'\033[0m'; fi
# show CMD...: print CMD as one would type it (relative to the repo), run it.
show() {
	local a line=""
	for a in "$@"; do
		a=${a#"$PWD/"}
		if [[ "$a" =~ ^[A-Za-z0-9_./=:,+@%-]+$ ]]; then
			line+="$a "
		else
			line+="'${a//\'/\'\\\'\'}' "
		fi
	done
	printf '\n%s$ %s%s\n' "$bold" "${line% }" "$plain"
	"$@"
}

# Untrusted code: it believes it is pid 1 on a machine called moat-demo, and
# its /proc holds only the sandbox's own processes.
show "$MOAT" do --hostname moat-demo -- python3 -c '
import os
print("pid:", os.getpid(), " parent:", os.getppid())
print("hostname:", os.uname().nodename)
print("pids in /proc:", sorted(int(p) for p in os.listdir("/proc") if p.isdigit()))
try:
    open("/etc/moat-demo", "w").write("written by the guest")
    print("wrote /etc/moat-demo, inside the sandbox only")
except OSError as e:
    print("cannot write /etc/moat-demo:", e.strerror)
'
if [ -e /etc/moat-demo ]; then
	echo "demo: FAILED: /etc/moat-demo reached the host" >&2
	rm -f /etc/moat-demo
	exit 1
fi
echo "(host: /etc/moat-demo does not exist)"

# A static busybox shell pipeline, and the exit status coming back.
show "$MOAT" do -- /bin/busybox sh -c \
	'echo "sh is pid $$"; busybox ls /usr/bin | busybox head -3 | busybox wc -l; exit 3' ||
	status=$?
echo "(exit status ${status:-0})"
if [ "${status:-0}" != 3 ]; then
	echo "demo: FAILED: expected the guest's exit status 3" >&2
	exit 1
fi

# The security drill: a secret the guest never holds.  Two test hosts in
# network namespaces made here and removed on exit (tests/e2e/lib.sh),
# each an HTTPS echo server with a certificate of a test CA: api.test,
# the secret's host, and other.test, a host the egress policy allows but
# the secret is not for.  The guest gets a placeholder in API_KEY; the
# credential broker swaps it for the real value on the way to api.test,
# and blocks it on the way to other.test (--inspect: the broker sees that
# host's requests too) with a 403 and one audit line.  A host outside the
# egress policy would not even be reached (refused at connect).
if [ "$(id -u)" != 0 ] || ! command -v ip >/dev/null || ! command -v openssl >/dev/null; then
	printf '\n(the credential drill needs root, iproute2 and openssl to make its test hosts: skipped)\n'
	exit 0
fi
set +e
. tests/e2e/lib.sh
set -e
# Its cleanup (the namespaces, their servers, the files) runs without -e.
trap 'set +e; e2e_cleanup' EXIT
api=10.221.$KIT_X.2 other=10.222.$KIT_X.2
if ! { peer_up api "$api" && peer_up other "$other" &&
	net_peer_up api "$E2E_TMP/dns.log" api.test="$api" other.test="$other" &&
	echo_up api api.test && echo_up other other.test; } >"$E2E_TMP/kit.err" 2>&1; then
	echo "demo: FAILED: the test hosts did not come up:" >&2
	cat "$E2E_TMP/kit.err" >&2
	exit 1
fi
cp "$KIT_CA/ca.pem" "$E2E_TMP/test-ca.pem"
REAL_KEY=sk-live-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')
export REAL_KEY
AUDIT=$E2E_TMP/audit.jsonl
printf '\n(host: REAL_KEY=%s, in moat'\''s environment only)\n' "$REAL_KEY"
show "$MOAT" do --net=slirp --dns "$KIT_DNS" --upstream-ca "$E2E_TMP/test-ca.pem" \
	--allow api.test:443+private --allow other.test:443+private --inspect other.test \
	--secret API_KEY=env:REAL_KEY@api.test --audit "$AUDIT" -- sh -c '
echo "guest: API_KEY=$API_KEY"
echo "guest -> api.test, the echo of its Authorization:"
curl -sS -H "Authorization: Bearer $API_KEY" https://api.test/echo | grep -o "\"authorization\": \"[^\"]*\""
echo "guest -> other.test (allowed, not the secret'\''s host):"
curl -sS -w "HTTP %{http_code}\n" -H "Authorization: Bearer $API_KEY" https://other.test/echo' \
	>"$E2E_TMP/guest.out" 2>&1 || true
cat "$E2E_TMP/guest.out"
got=$(grep -o '\["Authorization","[^"]*"\]' "${ECHO_REC[api]}" | head -1 |
	sed 's/\["\([^"]*\)","\([^"]*\)"\]/\1: \2/')
echo "(host: api.test received $got)"
blocked=$(grep '"event":"credential"' "$AUDIT" | grep '"verdict":"blocked"' || true)
echo "(host: the audit line of the block:)"
printf '%s\n' "$blocked"
if ! grep -qF "Bearer $REAL_KEY" "${ECHO_REC[api]}"; then
	echo "demo: FAILED: api.test did not receive the real value" >&2
	exit 1
fi
if [ -s "${ECHO_REC[other]}" ] || [ "$(printf '%s\n' "$blocked" | grep -c .)" != 1 ] ||
	! grep -q '^HTTP 403$' "$E2E_TMP/guest.out"; then
	echo "demo: FAILED: other.test was not blocked with one audit line" >&2
	exit 1
fi
if grep -qF "$REAL_KEY" "$E2E_TMP/guest.out" "$AUDIT"; then
	echo "demo: FAILED: the real value reached the guest or the audit log" >&2
	exit 1
fi
echo "(the guest only ever saw its placeholder)"
