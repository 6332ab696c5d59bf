# tests/e2e/lib.sh: helpers for end-to-end tests that drive the real moat
# binary (sourced by tests/e2e/test_*.sh and tests/escape/test_*.sh).
#
# A test file defines one function per case and runs each with
#     run_test NAME FUNCTION [ARGS...]
# The case runs in a subshell; the first failed assertion ends it (assertions
# `exit 1`), so use assertions only inside a case.  Its output is kept and
# shown only when it fails.  Every moat invocation goes through `moat`, which
# adds a timeout (MOAT_TIMEOUT, default 60 s) so a hung sentry fails a case
# instead of the run.  Timing never decides pass/fail.
#
# Run one file:  MOAT=build/moat bash tests/e2e/test_exit.sh
# Run all:       make e2e   (tests/e2e/run.sh)

E2E_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
MOAT=${MOAT:-$E2E_ROOT/build/moat}
case $MOAT in /*) ;; *) MOAT=$E2E_ROOT/$MOAT ;; esac
MOAT_TIMEOUT=${MOAT_TIMEOUT:-60}
export MOAT MOAT_TIMEOUT

# Deterministic tools on both sides: the guest and the native run see the
# same PATH, not whatever the invoking shell had (pyenv shims and the like).
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
export LC_ALL=C
PY=/usr/bin/python3

# Counters for this file; run.sh adds up the RESULT lines.
E2E_PASSED=0
E2E_FAILED=0
E2E_FILE=$(basename "${BASH_SOURCE[1]:-$0}")
E2E_FILTER=${E2E_FILTER:-}
E2E_TMP=$(mktemp -d /var/tmp/moat-e2e.XXXXXX)
# Not under /tmp, which is a tmpfs of its own inside the sandbox, and
# searchable by everyone: moat serves the host's / as a user that owns no
# host file (the sandbox's helper uid, docs/security.md), so programs the
# tests build for the guest must be reachable by any user.
chmod 755 "$E2E_TMP"
trap 'e2e_cleanup' EXIT

e2e_cleanup()
{
	rm -rf "$E2E_TMP"
}

# moat ARGS...: the binary with a timeout and no stdin unless redirected.
moat()
{
	timeout -k 5 "$MOAT_TIMEOUT" "$MOAT" "$@"
}

# native CMD...: the same command run directly, with the same timeout.
native()
{
	timeout -k 5 "$MOAT_TIMEOUT" "$@"
}

# asan_build: is $MOAT the ASan/UBSan build? Cases that only load the
# machine (bombs, floods at scale) leave that run to the plain one:
#     asan_build && { echo "skipped under the ASan build: ..."; return 0; }
asan_build()
{
	case $MOAT in */asan/*) return 0 ;; esac
	return 1
}

# capture CMD...: run CMD, set OUT, ERR (stdout/stderr, trailing newlines
# stripped as by $(...)) and STATUS.  Never fails by itself.
capture()
{
	"$@" >"$E2E_TMP/out" 2>"$E2E_TMP/err" </dev/null
	STATUS=$?
	OUT=$(cat "$E2E_TMP/out")
	ERR=$(cat "$E2E_TMP/err")
	return 0
}

# Show what the last capture saw (called by failing assertions).
show_capture()
{
	echo "  status: ${STATUS-<none>}"
	echo "  stdout: $(printf '%s' "${OUT-}" | head -c 2000)"
	echo "  stderr: $(printf '%s' "${ERR-}" | head -c 2000)"
}

fail()
{
	echo "FAIL: $*"
	exit 1
}

# assert_eq EXPECTED ACTUAL MSG
assert_eq()
{
	if [ "$1" != "$2" ]; then
		echo "FAIL: $3"
		echo "  expected: $(printf '%q' "$1")"
		echo "  actual:   $(printf '%q' "$2")"
		# What the last moat run said, to tell a bug from a flake.
		[ -z "${STATUS+x}" ] || { echo "  status: $STATUS"; echo "  stderr: $(printf '%s' "${ERR-}" | head -c 1500)"; }
		exit 1
	fi
}

# assert_ne UNEXPECTED ACTUAL MSG
assert_ne()
{
	if [ "$1" = "$2" ]; then
		echo "FAIL: $3"
		echo "  got the unexpected value: $(printf '%q' "$2")"
		exit 1
	fi
}

# assert_status EXPECTED CMD...: run CMD (with capture) and check its status.
assert_status()
{
	local expected=$1
	shift
	capture "$@"
	if [ "$STATUS" != "$expected" ]; then
		echo "FAIL: exit status of: $*"
		echo "  expected status $expected"
		show_capture
		exit 1
	fi
}

# assert_contains HAYSTACK NEEDLE MSG
assert_contains()
{
	case $1 in
	*"$2"*) ;;
	*)
		echo "FAIL: $3"
		echo "  expected to contain: $(printf '%q' "$2")"
		echo "  in: $(printf '%s' "$1" | head -c 2000)"
		exit 1
		;;
	esac
}

# assert_not_contains HAYSTACK NEEDLE MSG
assert_not_contains()
{
	case $1 in
	*"$2"*)
		echo "FAIL: $3"
		echo "  must not contain: $(printf '%q' "$2")"
		echo "  in: $(printf '%s' "$1" | head -c 2000)"
		exit 1
		;;
	esac
}

# assert_match HAYSTACK ERE MSG (extended regex, any line)
assert_match()
{
	if ! printf '%s\n' "$1" | grep -Eq -- "$2"; then
		echo "FAIL: $3"
		echo "  expected a line matching: $2"
		echo "  in: $(printf '%s' "$1" | head -c 2000)"
		exit 1
	fi
}

# assert_same_as_native CMD...: stdout and status of `moat do -- CMD` equal
# those of CMD run natively.
assert_same_as_native()
{
	local nout nstatus
	capture native "$@"
	nout=$OUT
	nstatus=$STATUS
	capture moat do -- "$@"
	if [ "$OUT" != "$nout" ] || [ "$STATUS" != "$nstatus" ]; then
		echo "FAIL: moat do -- $* differs from the native run"
		echo "  native status $nstatus, stdout:"
		printf '%s\n' "$nout" | head -20 | sed 's/^/    /'
		echo "  moat:"
		show_capture
		exit 1
	fi
}

# run_test NAME FUNCTION [ARGS...]: run one case.
run_test()
{
	local name=$1
	shift
	if [ -n "$E2E_FILTER" ] && [[ "$E2E_FILE:$name" != *"$E2E_FILTER"* ]]; then
		return 0
	fi
	local log=$E2E_TMP/case.log start end rc
	if [ -n "${E2E_DEADLINE:-}" ] && [ "$(date +%s)" -ge "$E2E_DEADLINE" ]; then
		E2E_FAILED=$((E2E_FAILED + 1))
		echo "FAIL  $E2E_FILE: $name (not run: the e2e time budget is spent)"
		echo "RESULT FAIL $E2E_FILE:$name" >>"${E2E_RESULTS:-/dev/null}"
		return 0
	fi
	start=$(date +%s.%N)
	(
		cd "$E2E_TMP" || exit 1
		"$@"
	) >"$log" 2>&1 </dev/null
	rc=$?
	end=$(date +%s.%N)
	local secs
	secs=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }')
	if [ "$rc" -eq 0 ]; then
		E2E_PASSED=$((E2E_PASSED + 1))
		echo "ok    $E2E_FILE: $name (${secs}s)"
		echo "RESULT PASS $E2E_FILE:$name" >>"${E2E_RESULTS:-/dev/null}"
	else
		E2E_FAILED=$((E2E_FAILED + 1))
		echo "FAIL  $E2E_FILE: $name (${secs}s)"
		sed 's/^/      /' "$log" | head -60
		echo "RESULT FAIL $E2E_FILE:$name" >>"${E2E_RESULTS:-/dev/null}"
	fi
}

# e2e_done: end of a test file; exit status says whether every case passed.
e2e_done()
{
	if [ -z "${E2E_RESULTS:-}" ]; then
		echo "$E2E_FILE: $E2E_PASSED ok, $E2E_FAILED not ok"
	fi
	[ "$E2E_FAILED" -eq 0 ]
	exit
}

# make_busybox_rootfs DIR: a minimal root for --rootfs tests, made only of
# the static busybox (busybox-static) and its applet symlinks, plus empty
# mount points for /proc, /dev and /tmp.
make_busybox_rootfs()
{
	local dir=$1 applet
	mkdir -p "$dir/bin" "$dir/proc" "$dir/dev" "$dir/tmp" "$dir/etc"
	cp /bin/busybox "$dir/bin/busybox"
	for applet in sh ash cat ls echo readlink head wc grep true false \
		sleep pwd uname hostname id env test stat sort tr cut od; do
		ln -sf busybox "$dir/bin/$applet"
	done
	echo "moat-rootfs" >"$dir/etc/hostname"
}

# random_token: a string that appears nowhere unless a test put it there.
random_token()
{
	printf 'moat-%s-%s' "$(od -An -N8 -tx8 /dev/urandom | tr -d ' ')" "$$"
}
