#!/usr/bin/env bash
# findings/run.sh MOAT CASE [ARG]: the test certificates (as
# tests/e2e/test_broker.sh makes them) in $TMPDIR/rev-certs, then
# hostile_link.py CASE with a random S.
set -e
MOAT=${1:?moat binary}; shift
d=${TMPDIR:-/tmp}/rev-certs
if [ ! -f "$d/api.test.crt" ]; then
	mkdir -p "$d"
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
		-keyout "$d/testca.key" -out "$d/testca.crt" -days 2 \
		-subj "/CN=rev test CA" -addext "basicConstraints=critical,CA:TRUE" \
		-addext "keyUsage=critical,keyCertSign" 2>/dev/null
	openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
		-keyout "$d/api.test.key" -out "$d/api.test.csr" -subj "/CN=api.test" 2>/dev/null
	printf 'subjectAltName=DNS:api.test\nextendedKeyUsage=serverAuth\n' >"$d/ext"
	openssl x509 -req -in "$d/api.test.csr" -CA "$d/testca.crt" -CAkey "$d/testca.key" \
		-CAcreateserial -days 2 -out "$d/api.test.crt" -extfile "$d/ext" 2>/dev/null
fi
[ -f /tmp/bomb.zst ] || head -c 63M /dev/zero | zstd -19 -q -c >/tmp/bomb.zst
export BRK_SECRET=sk-live-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')
echo "S: $BRK_SECRET"
exec timeout -k 5 120 python3 "$(dirname "$0")/hostile_link.py" "$MOAT" "$d" "$@"
