#!/usr/bin/env bash
# bench/net.sh [--append FILE] [--update-readme]: TCP throughput and
# connect latency from a guest to a peer on a test host, natively, under
# `moat do --net=slirp` (and --net=tap once it exists), and through the
# user-space stacks rootless containers use, slirp4netns and pasta; prints
# a markdown table with each one's slowdown against native.
#
# The test host is a network namespace made here and removed on exit,
# joined to this one by a veth pair (HOST_ADDR here, PEER there), running
# `iperf3 -s` and bench/net.py's accept-and-close server on PEER.  Every
# connection of every column goes to PEER: nothing leaves the machine, and
# every path ends in the same host TCP over the same veth.  Needs root (a
# named network namespace, a veth pair); without it every cell is n/a.
#
# bench/run.sh calls it last, so `make bench` prints both tables;
# `make bench-net` runs it alone.  Environment:
#   MOAT                moat binary (build/moat)
#   BENCH_NET_MODES     columns to run (native moat tap slirp4netns pasta)
#   BENCH_NET_SECONDS   iperf3 -t (2)
#   BENCH_NET_REPEAT    iperf3 runs each way, the median is reported (3)
#   BENCH_NET_CONNECTS  connects per latency cell (200)
# The table goes to build/bench/net.md; --append FILE adds it to FILE too
# (run.sh's results.md); --update-readme puts it into README.md between the
# bench-net markers.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
. "$root/bench/lib.sh"

MOAT=${MOAT:-$root/build/moat}
MODES=(${BENCH_NET_MODES:-native moat tap slirp4netns pasta})
SECS=${BENCH_NET_SECONDS:-2}
REPEAT=${BENCH_NET_REPEAT:-3}
CONNECTS=${BENCH_NET_CONNECTS:-200}
PY=/usr/bin/python3
OUTDIR=$root/build/bench
UPDATE_README=0
APPEND=""
while [ $# -gt 0 ]; do
	case $1 in
	--update-readme) UPDATE_README=1 ;;
	--append) APPEND=${2:?--append needs a file}; shift ;;
	*) echo "usage: bench/net.sh [--append FILE] [--update-readme]" >&2; exit 2 ;;
	esac
	shift
done
mkdir -p "$OUTDIR"
export PATH=/usr/sbin:/usr/bin:/sbin:/bin LC_ALL=C

# The test host.  10.204.0.0/24 is private: moat reaches it only because
# --allow names the peer, and no route of the host's sends it anywhere else.
HOST_ADDR=10.204.0.1
PEER=10.204.0.2
IPERF_PORT=5201
ACCEPT_PORT=5202
NS=moat-bench-net-$$
VETH_HOST=mbn$$h
VETH_PEER=mbn$$p

declare -A RES NA NOTE STALL
na_reasons=()
srv_pids=()

# moat serves the host's / read-only as a user that owns no host file: the client
# program lives in a directory everyone can search.
DIR=$(mktemp -d /var/tmp/moat-bench-net.XXXXXX)
chmod 755 "$DIR"
cp "$root/bench/net.py" "$DIR/net.py"
chmod 644 "$DIR/net.py"
AUDIT=$OUTDIR/net-moat-audit.jsonl
rm -f "$AUDIT"

cleanup()
{
	local p
	for p in "${srv_pids[@]}"; do
		kill "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	ip netns del "$NS" 2>/dev/null
	ip link del "$VETH_HOST" 2>/dev/null
	rm -rf "$DIR"
}
trap cleanup EXIT

# setup_peer: the namespace, the veth pair and the two servers.  Returns
# non-zero with $SETUP_ERR set when the test host cannot be made.
SETUP_ERR=""
setup_peer()
{
	local c i
	if [ "$(id -u)" != 0 ]; then
		SETUP_ERR="needs root to make the test host (a network namespace and a veth pair); CI runs as root"
		return 1
	fi
	for c in ip iperf3 pgrep ss; do
		command -v "$c" >/dev/null || { SETUP_ERR="$c not installed (make deps)"; return 1; }
	done
	if ip -4 route show to match "$PEER" | grep -q "^10\.204\.0\.0/24"; then
		SETUP_ERR="10.204.0.0/24 is already routed here (another bench/net.sh?)"
		return 1
	fi
	if ! { ip netns add "$NS" &&
		ip link add "$VETH_HOST" type veth peer name "$VETH_PEER" netns "$NS" &&
		ip addr add "$HOST_ADDR/24" dev "$VETH_HOST" &&
		ip link set "$VETH_HOST" up &&
		ip -n "$NS" addr add "$PEER/24" dev "$VETH_PEER" &&
		ip -n "$NS" link set "$VETH_PEER" up &&
		ip -n "$NS" link set lo up; } 2>"$OUTDIR/net-setup.err"; then
		SETUP_ERR="could not make the test host: $(head -1 "$OUTDIR/net-setup.err")"
		return 1
	fi
	ip netns exec "$NS" iperf3 -s -B "$PEER" -p "$IPERF_PORT" >"$OUTDIR/net-iperf3-server.log" 2>&1 &
	srv_pids+=($!)
	ip netns exec "$NS" $PY "$DIR/net.py" accept "$PEER" "$ACCEPT_PORT" 2>"$OUTDIR/net-accept.err" &
	srv_pids+=($!)
	# Both listening (ss, not a probe connect: iperf3 would take a bare
	# connection for a client and stay busy with it).
	for ((i = 0; i < 100; i++)); do
		[ "$(ip netns exec "$NS" ss -Hltn "( sport = :$IPERF_PORT or sport = :$ACCEPT_PORT )" | wc -l)" -ge 2 ] && return 0
		sleep 0.05
	done
	SETUP_ERR="the peer's servers did not start (see $OUTDIR/net-iperf3-server.log, net-accept.err)"
	return 1
}

# s4n_run SECS CMD...: CMD in a new user and network namespace whose tap0 is
# slirp4netns's, the way rootless podman used it before pasta.  The shell
# waits for tap0's address, so CMD never sees the link half made.
s4n_run()
{
	local t=$1 upid child="" spid rc i
	shift
	timeout "$t" unshare --user --map-root-user --net --fork /bin/sh -c '
		i=0
		until ip -4 addr show tap0 2>/dev/null | grep -q inet; do
			i=$((i + 1)); [ $i -gt 250 ] && { echo "tap0 never came up" >&2; exit 97; }
			sleep 0.02
		done
		exec "$@"' sh "$@" &
	upid=$!
	# timeout -> unshare -> sh: unshare's child is in the new namespaces
	# from its first instruction (unshare(2) came before the fork), while
	# unshare itself may not be yet.
	for ((i = 0; i < 250; i++)); do
		child=$(pgrep -P "$(pgrep -P "$upid" | head -1)" 2>/dev/null | head -1)
		[ -n "$child" ] && break
		sleep 0.02
	done
	if [ -z "$child" ]; then
		kill "$upid" 2>/dev/null
		wait "$upid"
		return 98
	fi
	slirp4netns --configure --mtu=65520 --disable-host-loopback "$child" tap0 \
		</dev/null >>"$OUTDIR/net-slirp4netns.log" 2>&1 &
	spid=$!
	wait "$upid"
	rc=$?
	kill "$spid" 2>/dev/null
	wait "$spid" 2>/dev/null
	return $rc
}

# client SECS MODE CMD...: run CMD where MODE's guest would be, killed
# after SECS seconds.
client()
{
	local t=$1 mode=$2
	shift 2
	case $mode in
	native) timeout "$t" "$@" ;;
	moat) timeout "$t" "$MOAT" do --net=slirp --allow "$PEER" --audit "$AUDIT" -- "$@" ;;
	tap) timeout "$t" "$MOAT" do --net=tap --allow "$PEER" --audit "$AUDIT" -- "$@" ;;
	slirp4netns) s4n_run "$t" "$@" ;;
	# pasta drops to nobody when started as root, and then cannot map
	# its user namespace here: --runas 0 keeps it root.  No port is
	# forwarded either way (-t/-u/-T/-U none); its link mirrors eth0.
	pasta) timeout "$t" pasta --runas 0 --config-net -q -f -t none -u none -T none -U none -- "$@" ;;
	esac
}

# mode_check MODE: can MODE's guest run a command at all?
mode_check()
{
	local mode=$1 err rc
	err=$OUTDIR/net-check-$mode.err
	case $mode in
	native) ;;
	moat | tap) [ -x "$MOAT" ] || { NA[$mode]="$MOAT not built"; return 1; } ;;
	slirp4netns | pasta)
		command -v "$mode" >/dev/null || { NA[$mode]="$mode not installed (make deps)"; return 1; } ;;
	esac
	client 60 "$mode" /bin/true </dev/null >/dev/null 2>"$err"
	rc=$?
	if [ $rc != 0 ]; then
		NA[$mode]="$(grep -v -e '^$' -e 'to syslog' "$err" | head -1 | cut -c1-160) (status $rc)"
		return 1
	fi
	return 0
}

# run_iperf MODE fwd|rev: REPEAT iperf3 runs, the median of the
# receiver's bits per second (one stream is noisy on a small machine).
run_iperf()
{
	local mode=$1 dir=$2 out err parsed msg r vals=""
	local -a rev=()
	local what="iperf3 guest → peer"
	[ "$dir" = rev ] && rev=(-R) what="iperf3 -R peer → guest"
	for ((r = 0; r < REPEAT; r++)); do
		err=$OUTDIR/net-$mode-iperf-$dir-$r.err
		out=$(client $((SECS + 30)) "$mode" iperf3 -c "$PEER" -p "$IPERF_PORT" \
			-t "$SECS" -J "${rev[@]}" </dev/null 2>"$err")
		printf '%s\n' "$out" >"$OUTDIR/net-$mode-iperf-$dir-$r.json"
		# The rate iperf3 reports is its own bytes over time; a failed
		# getsockopt of its statistics (TCP_INFO) is noted, not fatal.
		parsed=$(printf '%s' "$out" | $PY -c '
import json, sys
try:
    j = json.load(sys.stdin)
    bps = j["end"]["sum_received"]["bits_per_second"]
except Exception as e:
    print("na\t\t" + (str(e) or type(e).__name__)); sys.exit()
per = [i["sum"]["bits_per_second"] for i in j.get("intervals", [])]
stall = "stall" if per and min(per) < 0.05 * max(per) else ""
print("%s\t%s\t%s" % (bps if bps > 0 else "na", stall, j.get("error", "")))')
		msg=${parsed#*$'\t'*$'\t'}
		[[ "$parsed" = *$'\t'stall$'\t'* ]] &&
			STALL[$dir,$mode]="$mode, $what: stalled (a second under 5% of its best; per-second rates in build/bench/net-$mode-iperf-$dir-*.json)"
		if [ "${parsed%%$'\t'*}" = na ]; then
			RES[$dir,$mode]=na
			na_reasons+=("$mode, $what: ${msg:-$(grep -v -e '^$' -e 'to syslog' "$err" | head -1 | cut -c1-160)}")
			return
		fi
		[ -n "$msg" ] && NOTE[$mode]="iperf3 reported \`$msg\`"
		vals+="${parsed%%$'\t'*}"$'\n'
	done
	RES[$dir,$mode]=$(printf '%s' "$vals" | median)
}


run_connect()
{
	local mode=$1 out err med
	err=$OUTDIR/net-$mode-connect.err
	out=$(client 120 "$mode" $PY "$DIR/net.py" connect "$PEER" "$ACCEPT_PORT" "$CONNECTS" \
		</dev/null 2>"$err")
	if [[ "$out" != connect_us\ * ]]; then
		RES[connect,$mode]=na
		na_reasons+=("$mode, connect: $(grep -v -e '^$' -e 'to syslog' "$err" | tail -1 | cut -c1-160)")
		return
	fi
	read -r _ med _ <<<"$out"
	RES[connect,$mode]=$med
}

fmt_bps()
{
	awk -v b="$1" 'BEGIN {
		if (b == "na" || b == "") { print "n/a"; exit }
		if (b >= 1e9) printf "%.2f Gbit/s\n", b / 1e9
		else printf "%.0f Mbit/s\n", b / 1e6
	}'
}

fmt_us()
{
	awk -v u="$1" 'BEGIN {
		if (u == "na" || u == "") { print "n/a"; exit }
		if (u < 1000) printf "%.0f µs\n", u; else printf "%.2f ms\n", u / 1e3
	}'
}


# ---------------------------------------------------------------- run

start=$(date +%s)
active=()
if setup_peer; then
	for mode in "${MODES[@]}"; do
		if mode_check "$mode"; then
			active+=("$mode")
		else
			echo "bench-net: $mode: n/a: ${NA[$mode]}" >&2
		fi
	done
else
	echo "bench-net: n/a: $SETUP_ERR" >&2
fi
for mode in "${active[@]}"; do
	echo "bench-net: iperf3 both ways (${REPEAT}x ${SECS}s), ${CONNECTS} connects under $mode" >&2
	run_iperf "$mode" fwd
	run_iperf "$mode" rev
	run_connect "$mode"
done
elapsed=$(($(date +%s) - start))

# Socket options moat's guests asked for and did not get (audit log).
moat_unimpl=""
if [ -s "$AUDIT" ]; then
	moat_unimpl=$($PY - "$AUDIT" <<'EOF'
import json, sys
names = {(6, 11): "TCP_INFO", (6, 13): "TCP_CONGESTION", (6, 14): "TCP_MD5SIG",
         (1, 7): "SO_SNDBUF", (1, 8): "SO_RCVBUF"}
seen = []
for line in open(sys.argv[1]):
    try:
        e = json.loads(line)
    except ValueError:
        continue
    if e.get("event") == "sockopt-unimplemented":
        k = (e.get("level"), e.get("opt"))
        if k not in seen:
            seen.append(k)
print(", ".join("%s (level %d, option %d)" % (names.get(k, "?"), k[0], k[1]) for k in seen))
EOF
)
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

table=$OUTDIR/net.md
{
	echo "| network, guest to a peer on a veth | native | moat (slirp) | moat (tap) | slirp4netns | pasta | moat (slirp) vs native | slirp4netns vs native | pasta vs native |"
	echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
	for row in fwd rev connect; do
		case $row in
		fwd) label="TCP throughput, guest → peer (iperf3)"; fmt=fmt_bps ;;
		rev) label="TCP throughput, peer → guest (iperf3 -R)"; fmt=fmt_bps ;;
		connect) label="TCP connect + close, median of $CONNECTS"; fmt=fmt_us ;;
		esac
		line="| $label"
		for mode in native moat tap slirp4netns pasta; do
			line+=" | $($fmt "$(cell $row $mode)")"
		done
		nat=$(cell $row native)
		for mode in moat slirp4netns pasta; do
			# Always "times worse than native": throughput native ÷ x,
			# latency x ÷ native.
			if [ $row = connect ]; then
				line+=" | $(fmt_ratio "$(cell $row $mode)" "$nat")"
			else
				line+=" | $(fmt_ratio "$nat" "$(cell $row $mode)")"
			fi
		done
		echo "$line |"
	done
	echo
	cpu=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)
	echo "The \"vs native\" columns are times worse than native, lower is better (1.00× = native):"
	echo "native ÷ x for throughput, x ÷ native for latency."
	echo "Throughput: one TCP stream, \`iperf3 -t $SECS\`, the receiver's rate, median of $REPEAT runs; connect: python3, \`connect()\` to"
	echo "an accept-and-close server until \`close()\`, timed with \`time.perf_counter\` inside each guest."
	echo "The peer is a network namespace on a veth pair ($PEER), so every column ends in the same host TCP."
	echo "moat: \`moat do --net=slirp --allow $PEER\`; slirp4netns: \`--configure --mtu=65520"
	echo "--disable-host-loopback\` on an \`unshare --user --map-root-user --net\`; pasta: \`--config-net\`."
	echo "Measured $(date -u +%Y-%m-%d) on $(nproc) × ${cpu:-unknown CPU}, Linux $(uname -r),"
	echo "moat $(git describe --always --dirty 2>/dev/null || echo dev)," \
		"iperf3 $(dpkg-query -W -f='${Version}' iperf3 2>/dev/null || echo n/a)," \
		"slirp4netns $(dpkg-query -W -f='${Version}' slirp4netns 2>/dev/null || echo n/a)," \
		"passt $(dpkg-query -W -f='${Version}' passt 2>/dev/null || echo n/a);" \
		"the network rows took ${elapsed}s."
	[ -n "$SETUP_ERR" ] && echo "- n/a: $SETUP_ERR"
	for mode in native moat tap slirp4netns pasta; do
		if [[ " ${MODES[*]} " != *" $mode "* ]]; then
			echo "- $mode: not run (BENCH_NET_MODES)"
		elif [ -z "$SETUP_ERR" ] && [ -n "${NA[$mode]:-}" ]; then
			echo "- $mode: n/a: ${NA[$mode]}"
		fi
	done
	for mode in native moat tap slirp4netns pasta; do
		[ -n "${NOTE[$mode]:-}" ] && echo "- $mode: ${NOTE[$mode]}"
	done
	[ -n "$moat_unimpl" ] &&
		echo "- moat: socket options the guest asked for and did not get (audit, sockopt-unimplemented):" \
			"$moat_unimpl; iperf3 takes its retransmit and cwnd statistics from them, not its rate"
	for r in "${STALL[@]}"; do
		echo "- $r"
	done
	for r in "${na_reasons[@]}"; do
		echo "- n/a: $r"
	done
} >"$table"

echo
cat "$table"
[ -n "$APPEND" ] && { echo; cat "$table"; } >>"$APPEND"

if [ "$UPDATE_README" = 1 ]; then
	readme_block bench-net "$table"
fi
