#!/usr/bin/env bash
# bench/https.sh [--append FILE] [--update-readme]: HTTPS from a guest to a
# server on a test host, natively, under `moat do --net=slirp` with TLS
# passed through (with and without a credential broker running), through
# moat's credential broker (docs/credentials.md), and through mitmproxy
# with an addon that sets the Authorization header, the reference a user
# would otherwise pick (from a native client, and from a client in moat
# without a broker: the sandbox a user would put in front of it); prints a markdown table with each one's slowdown
# against native and a verdict line per aim of the broker.
#
# The test host is a network namespace made here and removed on exit
# (tests/e2e/lib.sh peer_up), on a veth pair, running bench/https_server.c
# (compiled here: one thread per connection, OpenSSL, keep-alive; a
# certificate of a test CA made here) and tests/e2e/net_peer.py's resolver,
# which moat's guests use (--dns) so that the broker knows the server's
# name. The server answers 403 unless Authorization is "Bearer S", S the
# run's random token: each column sends S, moat's broker column sends the
# placeholder it was given and the broker swaps it, mitmproxy's addon sets
# it. Every client is curl; the rows are
#   handshake + first byte: connect, a full TLS handshake (the server keeps
#     no sessions) and a GET's first byte, curl's time_starttransfer less
#     time_namelookup, median of N runs of curl a round;
#   1000 keep-alive requests: one curl, 1000 GETs on one connection, the
#     sum of their time_total (so without curl's start-up);
#   100 MiB download: curl's speed_download.
# The columns take turns, ROUNDS times (each row once a round), and each
# cell is the median over the rounds: the machine's load drifts, and a
# column run all at once would take one moment's share of it.
# Needs root; without it, or without a column's tool, cells are n/a.
#
# bench/run.sh calls it after bench/net.sh; `make bench-https` runs it
# alone. Environment:
#   MOAT                   moat binary (build/moat)
#   BENCH_HTTPS_MODES      columns (native passthrough nobroker broker mitmproxy
#                          mitmmoat)
#   BENCH_HTTPS_ROUNDS     rounds, the median is reported (3)
#   BENCH_HTTPS_HANDSHAKES curl runs for the first row, a round (20)
#   BENCH_HTTPS_REQUESTS   keep-alive requests (1000)
#   BENCH_HTTPS_ROWS       rows (handshake keepalive download), for profiling
#                          one; the others are then n/a
# The table goes to build/bench/https.md; --append FILE adds it to FILE too
# (run.sh's results.md); --update-readme puts it into README.md between the
# bench-https markers.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
. "$root/bench/lib.sh"
# The test host kit (peer_up, net_peer_up, testca_*) and its cleanup on exit.
. "$root/tests/e2e/lib.sh"
cd "$root"

MOAT=${MOAT:-$root/build/moat}
MODES=(${BENCH_HTTPS_MODES:-native passthrough nobroker broker mitmproxy mitmmoat})
ROUNDS=${BENCH_HTTPS_ROUNDS:-3}
HANDSHAKES=${BENCH_HTTPS_HANDSHAKES:-20}
REQUESTS=${BENCH_HTTPS_REQUESTS:-1000}
ROWS=(${BENCH_HTTPS_ROWS:-handshake keepalive download})
OUTDIR=$root/build/bench
UPDATE_README=0
APPEND=""
while [ $# -gt 0 ]; do
	case $1 in
	--update-readme) UPDATE_README=1 ;;
	--append) APPEND=${2:?--append needs a file}; shift ;;
	*) echo "usage: bench/https.sh [--append FILE] [--update-readme]" >&2; exit 2 ;;
	esac
	shift
done
mkdir -p "$OUTDIR"

HOST=bench.test
PORT=443
MITM_PORT=8443
# Everything the guest reads lives where any user can search (moat serves
# the host's / as a user that owns no host file).
DIR=$E2E_TMP
AUDIT=$OUTDIR/https-moat-audit.jsonl
rm -f "$AUDIT"
TOKEN=bench-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')
export BENCH_REAL=$TOKEN

# VALS[row,mode]: the values of the rounds so far, one a line; RES: their
# median; a cell that failed once is na.
declare -A RES NA VALS
na_reasons=()
mitm_pid=""

cleanup()
{
	if [ -n "$mitm_pid" ]; then
		kill "$mitm_pid" 2>/dev/null
		wait "$mitm_pid" 2>/dev/null
	fi
	e2e_cleanup
}
trap cleanup EXIT

SETUP_ERR=""
setup_peer()
{
	local c a=10.206.$KIT_X.2 m=10.206.$KIT_X.4
	if [ "$(id -u)" != 0 ]; then
		SETUP_ERR="needs root to make the test host (a network namespace and a veth pair); CI runs as root"
		return 1
	fi
	for c in ip curl openssl cc; do
		command -v "$c" >/dev/null || { SETUP_ERR="$c not installed (make deps)"; return 1; }
	done
	if ! cc -O2 -o "$DIR/https_server" "$root/bench/https_server.c" -lssl -lcrypto -lpthread \
		2>"$OUTDIR/https-cc.err"; then
		SETUP_ERR="bench/https_server.c did not compile: $(head -1 "$OUTDIR/https-cc.err")"
		return 1
	fi
	PEER=$a MITM=$m
	# other.test: the credentialed host of the pass-through column, an
	# address nothing answers on; mitm.test: mitmproxy, on the test host
	# too, so that a guest reaches it as it reaches the server.
	if ! { peer_up bench "$a" 10.206.$KIT_X.3 "$m" &&
		testca_make "$DIR/ca" && testca_leaf "$DIR/ca" "$HOST" "$a" &&
		net_peer_up bench "$DIR/dns.log" "$HOST=$a" other.test=10.206.$KIT_X.3 \
			mitm.test="$m"; } \
		2>"$OUTDIR/https-setup.err"; then
		SETUP_ERR="could not make the test host: $(head -1 "$OUTDIR/https-setup.err")"
		return 1
	fi
	chmod -R a+rX "$DIR/ca"
	export BENCH_AUTH=$TOKEN
	if ! peer_spawn bench "$OUTDIR/https-server.log" "$DIR/https_server" \
		"$a" "$PORT" "$DIR/ca/$HOST.pem" "$DIR/ca/$HOST.key" 2>>"$OUTDIR/https-setup.err"; then
		SETUP_ERR="the server did not start (see $OUTDIR/https-server.log)"
		return 1
	fi
}

# mitm_up: mitmdump on the test host (mitm.test), a reverse proxy to the
# server, its addon setting Authorization, its CA in $DIR/mitm.  Once for
# both mitmproxy columns.
MITM_ERR=""
mitm_up()
{
	local i
	[ -n "$mitm_pid" ] && return 0
	[ -n "$MITM_ERR" ] && return 1
	command -v mitmdump >/dev/null || { MITM_ERR="mitmdump not installed (make deps)"; return 1; }
	mkdir -p "$DIR/mitm"
	cat >"$DIR/mitm/auth.py" <<'EOF'
import os

TOKEN = os.environ["BENCH_REAL"]


def request(flow):
    flow.request.headers["Authorization"] = "Bearer " + TOKEN
EOF
	ip netns exec "${PEER_NS[bench]}" mitmdump -q --mode "reverse:https://$PEER:$PORT" --listen-host "$MITM" \
		--listen-port "$MITM_PORT" --set confdir="$DIR/mitm" \
		--set ssl_verify_upstream_trusted_ca="$DIR/ca/ca.pem" \
		--set stream_large_bodies=1m --set flow_detail=0 \
		-s "$DIR/mitm/auth.py" >"$OUTDIR/https-mitmdump.log" 2>&1 &
	mitm_pid=$!
	for ((i = 0; i < 300; i++)); do
		if [ -f "$DIR/mitm/mitmproxy-ca-cert.pem" ] &&
			ip netns exec "${PEER_NS[bench]}" ss -Hltn "( sport = :$MITM_PORT )" | grep -q .; then
			# its certificate, not its key, for the guest to read
			chmod a+r "$DIR/mitm/mitmproxy-ca-cert.pem"
			return 0
		fi
		kill -0 "$mitm_pid" 2>/dev/null || break
		sleep 0.1
	done
	MITM_ERR="mitmdump did not start: $(tail -1 "$OUTDIR/https-mitmdump.log")"
	mitm_pid=""
	return 1
}

# client MODE SCRIPT: run the sh SCRIPT where MODE's client would be.  The
# script's $URL is the server, $AUTH the Authorization header the client
# sends and $CA its --cacert option: always a file of one CA (OpenSSL 3.0
# takes milliseconds per handshake to load a whole bundle), the test CA's,
# moat's (/etc/moat/ca.pem) or mitmproxy's.
client()
{
	local mode=$1 script=$2
	local -a common=(--net=slirp --dns "$KIT_DNS" --audit "$AUDIT" --allow "$HOST:443+private")
	case $mode in
	native)
		URL=https://$HOST AUTH="Bearer $TOKEN" CA="--cacert $DIR/ca/ca.pem --resolve $HOST:$PORT:$PEER" \
			timeout 300 sh -c "$script" ;;
	mitmproxy)
		URL=https://mitm.test:$MITM_PORT AUTH="Bearer not-the-token" \
			CA="--cacert $DIR/mitm/mitmproxy-ca-cert.pem --resolve mitm.test:$MITM_PORT:$MITM" \
			timeout 300 sh -c "$script" ;;
	mitmmoat)
		timeout 300 "$MOAT" do "${common[@]}" --allow mitm.test:$MITM_PORT+private \
			--env URL=https://mitm.test:$MITM_PORT --env "AUTH=Bearer not-the-token" \
			--env "CA=--cacert $DIR/mitm/mitmproxy-ca-cert.pem" -- sh -c "$script" ;;
	nobroker)
		timeout 300 "$MOAT" do "${common[@]}" --env URL=https://$HOST \
			--env "AUTH=Bearer $TOKEN" --env "CA=--cacert $DIR/ca/ca.pem" -- sh -c "$script" ;;
	passthrough)
		# A broker runs (a credential for another host), so every flow's
		# first bytes are sniffed, and this one is passed through.
		timeout 300 "$MOAT" do "${common[@]}" --allow other.test:443+private \
			--secret OTHER_KEY=env:BENCH_REAL@other.test --upstream-ca "$DIR/ca/ca.pem" \
			--env URL=https://$HOST --env "AUTH=Bearer $TOKEN" \
			--env "CA=--cacert $DIR/ca/ca.pem" -- sh -c "$script" ;;
	broker)
		timeout 300 "$MOAT" do "${common[@]}" \
			--secret BENCH_KEY=env:BENCH_REAL@$HOST --upstream-ca "$DIR/ca/ca.pem" \
			--env URL=https://$HOST --env "CA=--cacert /etc/moat/ca.pem" -- sh -c 'AUTH="Bearer $BENCH_KEY"; '"$script" ;;
	esac
}

na()
{
	local row=$1 mode=$2 err=$3
	[ "${RES[$row,$mode]:-}" = na ] && return
	RES[$row,$mode]=na
	na_reasons+=("$mode, $row: $(grep -v -e '^$' -e 'to syslog' "$err" | tail -1 | cut -c1-200)")
}

# got ROW MODE VALUE: one round's value.
got()
{
	VALS[$1,$2]+="$3"$'\n'
}

# handshake + first byte: N curl runs, each a new connection and a full
# handshake; µs.
run_handshake()
{
	local mode=$1 out err=$OUTDIR/https-$mode-handshake.err
	out=$(client "$mode" 'for i in $(seq '"$HANDSHAKES"'); do
		curl -sSf $CA -o /dev/null -H "Authorization: $AUTH" -H "Connection: close" \
			-w "T %{time_namelookup} %{time_starttransfer}\n" "$URL/small" || exit 1
	done' </dev/null 2>"$err")
	if [ "$(printf '%s\n' "$out" | grep -c '^T ')" != "$HANDSHAKES" ]; then
		na handshake "$mode" "$err"
		return
	fi
	got handshake "$mode" "$(printf '%s\n' "$out" | awk '/^T / { printf "%.1f\n", ($3 - $2) * 1e6 }' | median)"
}

# 1000 keep-alive requests on one connection: the sum of their times, µs.
run_keepalive()
{
	local mode=$1 out err=$OUTDIR/https-$mode-keepalive.err
	out=$(client "$mode" 'curl -sSf $CA -H "Authorization: $AUTH" -o /dev/null \
		-w "%{stderr}T %{time_total} %{num_connects} %{http_code}\n" "$URL/small?[1-'"$REQUESTS"']" 2>&1 >/dev/null' \
		</dev/null 2>"$err")
	printf '%s\n' "$out" >"$OUTDIR/https-$mode-keepalive.out"
	if [ "$(printf '%s\n' "$out" | grep -c '^T .* 200$')" != "$REQUESTS" ]; then
		printf '%s\n' "$out" | grep -v '^T ' | tail -3 >>"$err"
		na keepalive "$mode" "$err"
		return
	fi
	got keepalive "$mode" "$(printf '%s\n' "$out" | awk '/^T / { t += $2 } END { printf "%.0f\n", t * 1e6 }')"
	CONNS[$mode]=$(printf '%s\n' "$out" | awk '/^T / { c += $3 } END { print c }')
}
declare -A CONNS

# 100 MiB download: bytes per second.
run_download()
{
	local mode=$1 out err=$OUTDIR/https-$mode-download.err
	out=$(client "$mode" 'curl -sSf $CA -o /dev/null -H "Authorization: $AUTH" \
		-w "T %{speed_download} %{size_download}\n" "$URL/big"' </dev/null 2>"$err")
	if [ "$(printf '%s\n' "$out" | grep -c '^T .* 104857600$')" != 1 ]; then
		na download "$mode" "$err"
		return
	fi
	got download "$mode" "$(printf '%s\n' "$out" | awk '/^T / { print $2 }')"
}

fmt_Bps()
{
	awk -v b="$1" 'BEGIN {
		if (b == "na" || b == "") { print "n/a"; exit }
		if (b >= 1e9) printf "%.2f GB/s\n", b / 1e9
		else printf "%.0f MB/s\n", b / 1e6
	}'
}

fmt_us()
{
	awk -v u="$1" 'BEGIN {
		if (u == "na" || u == "") { print "n/a"; exit }
		if (u < 1000) printf "%.0f µs\n", u
		else if (u < 1e6) printf "%.2f ms\n", u / 1e3
		else printf "%.2f s\n", u / 1e6
	}'
}

# ---------------------------------------------------------------- run

start=$(date +%s)
active=()
if setup_peer; then
	for mode in "${MODES[@]}"; do
		case $mode in
		native) ;;
		mitmproxy) mitm_up || { NA[$mode]=$MITM_ERR; echo "bench-https: $mode: n/a: $MITM_ERR" >&2; continue; } ;;
		mitmmoat)
			[ -x "$MOAT" ] || { NA[$mode]="$MOAT not built"; continue; }
			mitm_up || { NA[$mode]=$MITM_ERR; echo "bench-https: $mode: n/a: $MITM_ERR" >&2; continue; }
			;;
		*) [ -x "$MOAT" ] || { NA[$mode]="$MOAT not built"; continue; } ;;
		esac
		active+=("$mode")
	done
else
	echo "bench-https: n/a: $SETUP_ERR" >&2
fi
for ((round = 1; round <= ROUNDS; round++)); do
	echo "bench-https: round $round of $ROUNDS: $HANDSHAKES handshakes, $REQUESTS keep-alive requests and 100 MiB under ${active[*]}" >&2
	for mode in "${active[@]}"; do
		for row in "${ROWS[@]}"; do
			"run_$row" "$mode"
		done
	done
done
for k in "${!VALS[@]}"; do
	[ "${RES[$k]:-}" = na ] || RES[$k]=$(printf '%s' "${VALS[$k]}" | median)
done
elapsed=$(($(date +%s) - start))
# The broker column went through the broker: its swaps are in the audit log.
# (a share of them: the audit's rate limit suppresses the rest, and counts them).
swaps=0 suppressed=0
if [ -s "$AUDIT" ]; then
	swaps=$(grep '"event":"credential"' "$AUDIT" | grep -c '"verdict":"swapped"')
	suppressed=$(grep '"event":"audit-suppressed"' "$AUDIT" | grep -o '"records":[0-9]*' |
		awk -F: '{ n += $2 } END { print n + 0 }')
fi

# ---------------------------------------------------------------- table

cell()
{
	local row=$1 mode=$2
	if [ -n "$SETUP_ERR" ] || [ -n "${NA[$mode]:-}" ]; then
		echo na
	else
		echo "${RES[$row,$mode]:-na}"
	fi
}

# slower ROW A B: how many times worse A is than B on ROW (throughput
# B ÷ A, time A ÷ B), a bare number or na.
slower()
{
	local a b
	a=$(cell "$1" "$2") b=$(cell "$1" "$3")
	if [ "$1" = download ]; then
		awk -v a="$b" -v b="$a" 'BEGIN { if (a == "na" || b == "na" || b == 0) print "na"; else printf "%.2f\n", a / b }'
	else
		awk -v a="$a" -v b="$b" 'BEGIN { if (a == "na" || b == "na" || b == 0) print "na"; else printf "%.2f\n", a / b }'
	fi
}

# verdict LIMIT X: "met" or "missed" for a slowdown X against LIMIT.
verdict()
{
	awk -v l="$1" -v x="$2" 'BEGIN { if (x == "na") print "n/a"; else if (x <= l) print "met"; else print "missed" }'
}

label_of()
{
	case $1 in
	native) echo native ;;
	passthrough) echo "moat, TLS passed through" ;;
	nobroker) echo "moat (no broker)" ;;
	broker) echo "moat, broker" ;;
	mitmproxy) echo "mitmproxy" ;;
	mitmmoat) echo "moat (no broker) + mitmproxy" ;;
	esac
}

row_name()
{
	case $1 in
	handshake) echo "handshake + first byte" ;;
	keepalive) echo "keep-alive requests" ;;
	download) echo download ;;
	esac
}

COLS=(native passthrough nobroker broker mitmproxy mitmmoat)
table=$OUTDIR/https.md
{
	line="| HTTPS, guest to a server on a veth"
	sep="|---"
	for mode in "${COLS[@]}"; do line+=" | $(label_of $mode)"; sep+="|---:"; done
	for mode in "${COLS[@]:1}"; do line+=" | $(label_of $mode) vs native"; sep+="|---:"; done
	echo "$line |"
	echo "$sep|"
	for row in handshake keepalive download; do
		case $row in
		handshake) label="handshake + first byte"; fmt=fmt_us ;;
		keepalive) label="$REQUESTS keep-alive requests, total"; fmt=fmt_us ;;
		download) label="100 MiB download"; fmt=fmt_Bps ;;
		esac
		line="| $label"
		for mode in "${COLS[@]}"; do line+=" | $($fmt "$(cell $row $mode)")"; done
		nat=$(cell $row native)
		for mode in "${COLS[@]:1}"; do
			if [ $row = download ]; then
				line+=" | $(fmt_ratio "$nat" "$(cell $row $mode)")"
			else
				line+=" | $(fmt_ratio "$(cell $row $mode)" "$nat")"
			fi
		done
		echo "$line |"
	done
	echo
	echo "The \"vs native\" columns are times worse than native, lower is better (native ÷ x for throughput, x ÷ native for time)."
	echo "The aims of the broker (docs/credentials.md), \"×\" times worse as above:"
	for row in handshake keepalive download; do
		r=$(slower $row passthrough nobroker)
		echo "- pass-through within 1.2× of moat without a broker, $(row_name $row): $(verdict 1.2 "$r") (${r}×)"
	done
	r=$(slower keepalive broker passthrough)
	echo "- brokered keep-alive requests within 2× of pass-through: $(verdict 2 "$r") (${r}×)"
	for row in handshake keepalive download; do
		r=$(slower $row broker mitmmoat)
		echo "- the broker ahead of mitmproxy (both from moat), $(row_name $row): $(verdict 1 "$r") (the broker ${r}× worse)"
	done
	echo
	cpu=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)
	echo "Every client is curl $(curl --version | awk 'NR == 1 { print $2 }'); the server, bench/https_server.c (OpenSSL, a thread per connection, no session"
	echo "resumption), is in a network namespace on a veth pair ($PEER), and requires \`Authorization: Bearer\` and the run's token."
	echo "Handshake + first byte: curl's time_starttransfer less time_namelookup, one curl per connection, median of $HANDSHAKES; keep-alive:"
	echo "one curl, the sum of its transfers' time_total (${CONNS[broker]:-?} connection(s) in the broker column); download: curl's speed_download."
	echo "The columns take turns, $ROUNDS rounds of the three rows; each cell is the median of the rounds."
	echo "moat: \`moat do --net=slirp --allow $HOST:443+private\`; passed through: with \`--secret OTHER_KEY=env:V@other.test\` too (a broker"
	echo "sniffs every flow); broker: \`--secret BENCH_KEY=env:V@$HOST --upstream-ca CA\`, the guest sending its placeholder ($swaps swap lines audited,"
	echo "$suppressed more records suppressed by the audit's rate limit);"
	echo "mitmproxy: \`mitmdump --mode reverse:https://$PEER\` with an addon that sets Authorization, on the test host ($MITM:$MITM_PORT),"
	echo "from native curl, and from curl in moat without a broker (\`--allow mitm.test:$MITM_PORT+private\`)."
	echo "Measured $(date -u +%Y-%m-%d) on $(nproc) × ${cpu:-unknown CPU}, Linux $(uname -r),"
	echo "moat $(git describe --always --dirty 2>/dev/null || echo dev)," \
		"mitmproxy $(dpkg-query -W -f='${Version}' mitmproxy 2>/dev/null || echo n/a)," \
		"OpenSSL $(openssl version | awk '{ print $2 }'); the HTTPS rows took ${elapsed}s."
	[ -n "$SETUP_ERR" ] && echo "- n/a: $SETUP_ERR"
	for mode in "${COLS[@]}"; do
		if [[ " ${MODES[*]} " != *" $mode "* ]]; then
			echo "- $(label_of $mode): not run (BENCH_HTTPS_MODES)"
		elif [ -z "$SETUP_ERR" ] && [ -n "${NA[$mode]:-}" ]; then
			echo "- $(label_of $mode): n/a: ${NA[$mode]}"
		fi
	done
	for r in "${na_reasons[@]}"; do
		echo "- n/a: $r"
	done
} >"$table"

echo
cat "$table"
[ -n "$APPEND" ] && { echo; cat "$table"; } >>"$APPEND"

if [ "$UPDATE_README" = 1 ]; then
	readme_block bench-https "$table"
fi
# Timing never fails anything.
exit 0
