#!/usr/bin/env bash
# Ordinary client-first protocols whose first line is "token SP visible"
# (memcached, IRC, beanstalkd, the PROXY protocol) are classified as plain
# HTTP when a broker runs, and handed to the broker, which waits for the
# rest of a request head that never comes: the client hangs. Without a broker they work.
#   MOAT=$PWD/build/moat bash findings/odd_protocols.sh
. "$(dirname "$0")/../tests/e2e/lib.sh"
trap e2e_cleanup EXIT
testkit_up || exit 1
ip netns exec "${PEER_NS[plain]}" python3 -c '
import socket
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", 8083))
s.listen(8)
s.settimeout(60)
while True:
    c, _ = s.accept()
    d = c.recv(200)
    c.sendall(b"SERVER GOT " + d)
    c.close()' &
lpid=$!
sleep 0.5
export REAL_KEY=sk-live-x
cd "$E2E_TMP" || exit 1
for broker in "" "--secret API_KEY=env:REAL_KEY@api.test"; do
	echo "== ${broker:-no broker}"
	# shellcheck disable=SC2086
	"$MOAT" do --net=slirp --dns "$KIT_DNS" --allow plain.test:8083+private $broker -- python3 -c '
import socket
for line in (b"get foo\r\n", b"NICK bob\r\n", b"PROXY TCP4 1.2.3.4 5.6.7.8 1 2\r\n"):
    s = socket.create_connection(("plain.test", 8083))
    s.settimeout(5)
    s.sendall(line)
    try:
        print(repr(line), "->", repr(s.recv(200)[:60]))
    except OSError as e:
        print(repr(line), "->", e)
    s.close()'
done
kill "$lpid"
