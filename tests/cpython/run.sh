#!/usr/bin/env bash
# tests/cpython/run.sh [MODULE...]: CPython's own regression tests (Debian's
# libpython3.11-testsuite), each run inside the sandbox as
#     moat do -- python3 -m test -q -w MODULE
# and passing there. Ends with one line "N passed, N failed". What is
# skipped inside but not natively, and why, is in docs/compat.md.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
MOAT=${MOAT:-$root/build/moat}
PY=/usr/bin/python3
export PATH=/usr/sbin:/usr/bin:/sbin:/bin LC_ALL=C
MODULES=("$@")
[ ${#MODULES[@]} -gt 0 ] || MODULES=(test_os test_posix test_subprocess
	test_shutil test_tempfile test_fcntl test_select test_signal test_pty
	test_mmap test_epoll test_socket test_multiprocessing_spawn)

if [ ! -d /usr/lib/python3.11/test ] || [ ! -f /usr/lib/python3.11/test/test_os.py ]; then
	echo "cpython: libpython3.11-testsuite is not installed (make deps)"
	echo "0 passed, 1 failed"
	exit 1
fi
logs=$root/build/test-logs/cpython
mkdir -p "$logs"
passed=0
failed=0
for m in "${MODULES[@]}"; do
	t0=$(date +%s)
	extra=()
	# test_mmap's large-file tests make 4 GiB sparse files: tmpfs counts
	# a file's size against --disk (docs/compat.md).
	[ "$m" = test_mmap ] && extra=(--disk 8G)
	# -w: a test that fails is run again, verbose, and counts if it then
	# passes (some are timing-sensitive on a loaded 2-core machine).
	timeout -k 10 1200 "$MOAT" do --timeout 1150 "${extra[@]}" -- \
		$PY -m test -q -w "$m" \
		>"$logs/$m.log" 2>&1 </dev/null
	rc=$?
	if [ $rc -eq 0 ]; then
		echo "ok    cpython: $m ($(($(date +%s) - t0))s)"
		passed=$((passed + 1))
	else
		echo "FAIL  cpython: $m (status $rc, $(($(date +%s) - t0))s)"
		tail -30 "$logs/$m.log" | sed 's/^/      /'
		failed=$((failed + 1))
	fi
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
