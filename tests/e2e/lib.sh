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
	peer_down
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

# descendants PID: every host pid below PID (not PID itself).
descendants()
{
	ps -e -o pid=,ppid= | awk -v root="$1" '
		{ parent[$1] = $2; pids[NR] = $1 }
		END {
			for (i = 1; i <= NR; i++) {
				p = pids[i]; q = parent[p]
				while (q != "" && q != 0 && q != 1) {
					if (q == root) { print p; break }
					q = parent[q]
				}
			}
		}'
}

# traced_below PID: the host processes below PID that a sentry traces (a
# sandbox's guests and its reaper).
traced_below()
{
	local p t
	for p in $(descendants "$1"); do
		t=$(awk '/^TracerPid:/ { print $2 }' "/proc/$p/status" 2>/dev/null)
		[ -n "$t" ] && [ "$t" != 0 ] && echo "$p"
	done
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

# ---------------------------------------------------------------- test hosts
#
# Test hosts are network namespaces this file makes and removes, each
# joined to the host by a veth pair; a sandbox with --net=slirp (or tap)
# reaches them through the host's routes, so nothing leaves the machine.
# The EXIT trap (e2e_cleanup) removes every namespace made here and every
# process in it, even when a case made it in its subshell.
#
#   peer_up NAME ADDR [ADDR...]   a namespace moat-NAME-$$ (NAME: up to 5
#                                 of [a-z0-9]); see peer_up below
#   peer_spawn NAME LOG CMD...    run CMD in it, wait for "ready" in LOG
#   net_peer_up NAME LOG HOST=ADDR...
#                                 net_peer.py there: the resolver for
#                                 HOST (and HTTP :8080, echo :7007, UDP)
#   peer_down [NAME...]           remove them (all: no NAME)
#   testca_make DIR               a test CA: DIR/ca.pem, DIR/ca.key
#   testca_leaf DIR HOST...       DIR/HOST.pem, DIR/HOST.key for HOSTs
#   echo_up NAME HOST...          https_echo.py in NAME: TLS on 443 with a
#                                 leaf of $KIT_CA for HOSTs, plain on 80
#   testkit_up                    the broker tests' hosts, all of the above
#   echo_reset, echo_records      empty / print every echo server's record
#
# What peer_up made is in PEER_NS[NAME] (the namespace), PEER_LINK[NAME]
# (the host's end of the veth), PEER_VETH[NAME] (the namespace's end),
# PEER_ADDR[NAME] (its first address) and PEER_HOSTSIDE[NAME] (the host's
# address on the link). Addresses come from 10.2xx.X.0/24 test ranges,
# with X=$KIT_X, this file's own number, so that files run at the same
# time do not collide.

declare -gA PEER_NS=() PEER_LINK=() PEER_VETH=() PEER_ADDR=() PEER_HOSTSIDE=()
declare -gA ECHO_REC=()
KIT_X=$(($$ % 200 + 20))
KIT_STATE=$E2E_TMP/kit.namespaces

# net_ok: may this run make namespaces (root, iproute2)?
net_ok()
{
	[ "$(id -u)" = 0 ] && command -v ip >/dev/null
}

# peer_up NAME ADDR [ADDR...]: the namespace, its veth pair, addresses.
# The first ADDR is an IPv4 a.b.c.d (d != 1): the namespace gets it as
# a.b.c.d/24, the host a.b.c.1/24. Each further ADDR is
#   a.b.c.e     another address of that /24;
#   ADDR/32     an address of the namespace's elsewhere, the host routing
#               it there (via the first address);
#   P::N        an IPv6 address P::N/64, the host P::1/64 (no DAD);
#   ADDR/128    an IPv6 address routed there (via the first IPv6 one).
peer_up()
{
	local name=$1 first=$2 ns=moat-$1-$$ vh vp a via6=
	shift 2
	case $name in '' | *[!a-z0-9]*) echo "peer_up: bad name: $name" >&2; return 1 ;; esac
	vh=m${name:0:5}$$h
	vp=m${name:0:5}$$p
	ip netns add "$ns" || return 1
	echo "$ns $vh" >>"$KIT_STATE"
	PEER_NS[$name]=$ns
	PEER_LINK[$name]=$vh
	PEER_VETH[$name]=$vp
	PEER_ADDR[$name]=$first
	PEER_HOSTSIDE[$name]=${first%.*}.1
	ip link add "$vh" type veth peer name "$vp" &&
		ip link set "$vp" netns "$ns" &&
		ip addr add "${first%.*}.1/24" dev "$vh" &&
		ip link set "$vh" up &&
		ip -n "$ns" addr add "$first/24" dev "$vp" &&
		ip -n "$ns" link set "$vp" up &&
		ip -n "$ns" link set lo up || return 1
	for a in "$@"; do
		case $a in
		*:*/128)
			ip -n "$ns" addr add "$a" dev "$vp" nodad &&
				ip -6 route add "$a" via "$via6" dev "$vh" || return 1
			;;
		*:*)
			if ! ip -6 addr show dev "$vh" | grep -q " ${a%::*}::1/64 "; then
				ip addr add "${a%::*}::1/64" dev "$vh" nodad || return 1
			fi
			ip -n "$ns" addr add "$a/64" dev "$vp" nodad || return 1
			[ -n "$via6" ] || via6=$a
			;;
		*/32)
			ip -n "$ns" addr add "$a" dev "$vp" &&
				ip route add "$a" via "$first" dev "$vh" || return 1
			;;
		*)
			ip -n "$ns" addr add "$a/24" dev "$vp" || return 1
			;;
		esac
	done
}

# peer_spawn NAME LOG CMD...: CMD in NAME's namespace, in the background,
# its output in LOG; waits (up to 10 s) until LOG says "ready". Sets
# PEER_PID. peer_down ends it.
peer_spawn()
{
	local name=$1 log=$2
	shift 2
	: >"$log"
	ip netns exec "${PEER_NS[$name]}" "$@" >"$log" 2>&1 &
	PEER_PID=$!
	for _ in $(seq 200); do
		grep -q ready "$log" 2>/dev/null && return 0
		kill -0 "$PEER_PID" 2>/dev/null || break
		sleep 0.05
	done
	echo "peer_spawn $name: $* did not get ready:" >&2
	cat "$log" >&2
	return 1
}

# net_peer_up NAME LOG HOST=ADDR...: tests/e2e/net_peer.py in NAME (its
# resolver on :53 knows the HOSTs; the NAME=ADDR forms are net_peer.py's).
# It logs what it gets to LOG. Sets KIT_DNS to NAME's address, for --dns.
net_peer_up()
{
	local name=$1 log=$2
	shift 2
	: >"$log"
	peer_spawn "$name" "$E2E_TMP/net_peer-$name.out" \
		$PY "$E2E_ROOT/tests/e2e/net_peer.py" "$log" "$@" || return 1
	KIT_DNS=${PEER_ADDR[$name]}
}

# peer_down [NAME...]: end every process in the namespaces, remove them
# and their links (the routes go with the links). Without NAME: all.
peer_down()
{
	local ns vh pids keep
	[ -f "$KIT_STATE" ] || return 0
	keep=$KIT_STATE.keep
	: >"$keep"
	while read -r ns vh; do
		if [ $# -gt 0 ] && ! printf '%s\n' "$@" | sed 's/.*/moat-&-'$$'/' | grep -qx "$ns"; then
			echo "$ns $vh" >>"$keep"
			continue
		fi
		# only what this file started runs there
		pids=$(ip netns pids "$ns" 2>/dev/null)
		[ -n "$pids" ] && kill $pids 2>/dev/null
		for _ in $(seq 40); do
			[ -z "$(ip netns pids "$ns" 2>/dev/null)" ] && break
			sleep 0.05
		done
		pids=$(ip netns pids "$ns" 2>/dev/null)
		[ -n "$pids" ] && kill -KILL $pids 2>/dev/null
		ip netns del "$ns" 2>/dev/null
		ip link del "$vh" 2>/dev/null
	done <"$KIT_STATE"
	mv "$keep" "$KIT_STATE"
	[ -s "$KIT_STATE" ] || rm -f "$KIT_STATE"
}

# testca_make DIR: a test CA (EC P-256, 2 days): DIR/ca.pem, DIR/ca.key.
# moat trusts it for upstreams with --upstream-ca DIR/ca.pem.
testca_make()
{
	local dir=$1
	mkdir -p "$dir" || return 1
	openssl req -x509 -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 \
		-nodes -keyout "$dir/ca.key" -out "$dir/ca.pem" -days 2 \
		-subj "/CN=moat test CA $$" -config /dev/null \
		-addext basicConstraints=critical,CA:TRUE \
		-addext keyUsage=critical,keyCertSign,cRLSign \
		-addext subjectKeyIdentifier=hash 2>"$dir/openssl.err" || {
		cat "$dir/openssl.err" >&2
		return 1
	}
}

# testca_leaf DIR HOST...: a server certificate of DIR's CA for HOSTs (its
# subjectAltNames; an address becomes an IP entry): DIR/HOST.pem (the
# leaf, then the CA) and DIR/HOST.key, HOST being the first one.
testca_leaf()
{
	local dir=$1 first=$2 h san=
	shift
	for h in "$@"; do
		case $h in
		*[!0-9.]* | '') case $h in *:*) san+=",IP:$h" ;; *) san+=",DNS:$h" ;; esac ;;
		*) san+=",IP:$h" ;;
		esac
	done
	printf '%s\n' "subjectAltName=${san#,}" "basicConstraints=critical,CA:FALSE" \
		"keyUsage=critical,digitalSignature" "extendedKeyUsage=serverAuth" \
		"subjectKeyIdentifier=hash" "authorityKeyIdentifier=keyid" >"$dir/$first.ext"
	openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
		-keyout "$dir/$first.key" -subj "/CN=$first" -config /dev/null \
		-out "$dir/$first.csr" 2>"$dir/openssl.err" &&
		openssl x509 -req -in "$dir/$first.csr" -CA "$dir/ca.pem" \
			-CAkey "$dir/ca.key" -CAcreateserial -days 2 \
			-extfile "$dir/$first.ext" -out "$dir/$first.crt" 2>>"$dir/openssl.err" || {
		cat "$dir/openssl.err" >&2
		return 1
	}
	cat "$dir/$first.crt" "$dir/ca.pem" >"$dir/$first.pem"
}

# echo_up NAME HOST...: tests/e2e/https_echo.py in NAME's namespace, TLS
# on 443 (a leaf of $KIT_CA for HOSTs; the CA is made on first use) and
# plain HTTP on 80. Each request it takes is one JSON line in
# ECHO_REC[NAME] ($E2E_TMP/echo-NAME.jsonl); its pid is in
# $E2E_TMP/echo-NAME.pid.
KIT_CA=$E2E_TMP/ca
echo_up()
{
	local name=$1
	shift
	[ -f "$KIT_CA/ca.pem" ] || testca_make "$KIT_CA" || return 1
	testca_leaf "$KIT_CA" "$@" || return 1
	ECHO_REC[$name]=$E2E_TMP/echo-$name.jsonl
	: >"${ECHO_REC[$name]}"
	peer_spawn "$name" "$E2E_TMP/echo-$name.out" $PY \
		"$E2E_ROOT/tests/e2e/https_echo.py" --name "$name" \
		--record "${ECHO_REC[$name]}" --cert "$KIT_CA/$1.pem" \
		--key "$KIT_CA/$1.key" --tls-port 443 --http-port 80 || return 1
	echo "$PEER_PID" >"$E2E_TMP/echo-$name.pid"
}

# testkit_up: the hosts of the credential broker's tests, each its own
# namespace with an echo server (443 TLS, 80 plain):
#   api.test      PEER_ADDR[api]    (10.221.X.2; also the resolver)
#   other.test    PEER_ADDR[other]  (10.222.X.2)
#   inspect.test  PEER_ADDR[insp]   (10.223.X.2)
#   plain.test    PEER_ADDR[plain]  (10.224.X.2)
# and alt.api.test, a second name of api's address. The resolver, at
# $KIT_DNS (for --dns), answers for these names only; KIT_CA_PEM is the
# CA for --upstream-ca. The addresses are private: an egress rule names
# them as `api.test:443+private`. Records: ECHO_REC[api] and so on.
testkit_up()
{
	local a=10.221.$KIT_X.2 o=10.222.$KIT_X.2 i=10.223.$KIT_X.2 p=10.224.$KIT_X.2
	net_ok || { echo "testkit_up: root and iproute2 needed" >&2; return 1; }
	peer_up api "$a" && peer_up other "$o" && peer_up insp "$i" &&
		peer_up plain "$p" || return 1
	net_peer_up api "$E2E_TMP/dns.log" api.test="$a" alt.api.test="$a" \
		other.test="$o" inspect.test="$i" plain.test="$p" || return 1
	echo_up api api.test alt.api.test && echo_up other other.test &&
		echo_up insp inspect.test && echo_up plain plain.test || return 1
	KIT_CA_PEM=$KIT_CA/ca.pem
}

# echo_reset: empty every echo server's record (a case's first step, so
# that its lines are its own).
echo_reset()
{
	local f
	for f in "${ECHO_REC[@]}"; do : >"$f"; done
}

# echo_records: every request any echo server took, one JSON line each.
echo_records()
{
	local f
	for f in "${ECHO_REC[@]}"; do cat "$f"; done
}
