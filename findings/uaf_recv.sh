#!/usr/bin/env bash
# A brokered flow's ns_conn freed inside lwIP's recv callback (on_recv
# went on to the chain's next pbuf with the freed conn). Run with the
# ASan build: MOAT=$PWD/build/asan/moat bash findings/uaf_recv.sh [SECS]
. "$(dirname "$0")/../tests/e2e/lib.sh"
HERE=$(cd "$(dirname "$0")" && pwd)
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0:abort_on_error=1}
trap e2e_cleanup EXIT
testkit_up || exit 1
export REAL_KEY=sk-live-uaf
cd "$E2E_TMP" || exit 1
"$MOAT" do --net=slirp --dns "$KIT_DNS" --allow plain.test:80+private \
	--secret API_KEY=env:REAL_KEY@api.test -- \
	python3 "$HERE/close_mid_download.py" "${1:-20}" >out.txt 2>&1
rc=$?
grep -m1 -A12 "ERROR: AddressSanitizer" out.txt || tail -3 out.txt
echo "moat exit: $rc"
[ "$rc" -eq 0 ] && ! grep -q "ERROR: AddressSanitizer" out.txt
