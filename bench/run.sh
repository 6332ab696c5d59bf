#!/usr/bin/env bash
# bench/run.sh [--update-readme]: syscall micro-benchmarks and python3
# start-up, in one run, natively, under `moat do`, under gVisor's
# `runsc --platform=ptrace` and under `proot -r /`; prints a markdown table
# of the time per operation and each sandbox's ratio to native.
#
# Driven by `make bench`, which builds build/moat and the static benchmark
# program build/bench/syscalls first.  Environment:
#   MOAT          moat binary (build/moat)
#   BENCH_BIN     the benchmark program (build/bench/syscalls)
#   BENCH_REPEAT  runs per cell, the median is reported (3)
#   BENCH_SCALE   multiplies every iteration count (1; 0.1 for a quick look)
#   BENCH_MODES   which columns to run (native moat runsc proot)
# A sandbox that cannot run here shows "n/a" with the reason below the
# table.  The table also goes to build/bench/results.md; --update-readme
# puts it into README.md between the bench-table markers.
#
# Then bench/oci.sh prints container start-up (moat run, runc run, runsc
# run; BENCH_OCI=0 skips it), and last, bench/net.sh prints the network table (TCP throughput and connect
# latency; native, moat, slirp4netns, pasta), adds it to results.md and,
# with --update-readme, to README.md's bench-net block.  BENCH_NET=0 skips it.
# After it, bench/https.sh the same way: HTTPS natively, passed through,
# through moat's credential broker and through mitmproxy (README.md's
# bench-https block).  BENCH_HTTPS=0 skips it.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
. "$root/bench/lib.sh"

MOAT=${MOAT:-$root/build/moat}
BIN=${BENCH_BIN:-$root/build/bench/syscalls}
REPEAT=${BENCH_REPEAT:-3}
SCALE=${BENCH_SCALE:-1}
MODES=(${BENCH_MODES:-native moat runsc proot})
PY=/usr/bin/python3
OUTDIR=$root/build/bench
UPDATE_README=0
[ "${1:-}" = --update-readme ] && UPDATE_README=1
mkdir -p "$OUTDIR"
export PATH=/usr/sbin:/usr/bin:/sbin:/bin LC_ALL=C

if [ ! -x "$BIN" ]; then
	echo "bench: $BIN missing; run 'make bench'" >&2
	exit 1
fi
# moat serves the host's / as a user that owns no host file: run a copy of the program
# from a directory everyone can search, wherever the checkout lives.
BIN_DIR=$(mktemp -d /var/tmp/moat-bench.XXXXXX)
chmod 755 "$BIN_DIR"
cp "$BIN" "$BIN_DIR/syscalls"
BIN=$BIN_DIR/syscalls
trap 'rm -rf "$BIN_DIR"' EXIT

# benchmark name, iterations, file argument.  Counts keep the slowest
# sandbox (about 40 us per trapped syscall) to a few seconds per cell.
BENCHES=(
	"getppid 50000 -"
	"open_close 10000 /etc/hostname"
	"stat 10000 /etc/hostname"
	"pread_4k 10000 $BIN"
	"pipe_pingpong 3000 -"
	"fork_wait 300 -"
	"fork_exec 100 -"
)
declare -A LABEL=(
	[getppid]="getppid"
	[open_close]="open + close"
	[stat]="stat"
	[pread_4k]="pread 4 KiB"
	[pipe_pingpong]="pipe ping-pong (round trip)"
	[fork_wait]="fork + wait"
	[fork_exec]="fork + exec /bin/true"
	[python]="python3 -c pass (wall)"
	[untar]="untar a source tree, 4k files (wall)"
	[find]="find over /usr/lib/python3.11 (wall)"
	[sqlite]="sqlite: 20k inserts, 200 commits (wall)"
)

# How each mode runs a command.  runsc writes to a reopened copy of its
# stdout, so output is always taken through a pipe ($(...)), never a file.
prefix()
{
	case $1 in
	native) ;;
	moat) printf '%s\n' "$MOAT" do -- ;;
	runsc) printf '%s\n' runsc --platform=ptrace --network=none do ;;
	proot) printf '%s\n' proot -r / ;;
	esac
}

declare -A RES NA
na_reasons=()

# mode_check MODE: can this sandbox run the benchmark program at all?
mode_check()
{
	local mode=$1 out err
	local -a pre
	mapfile -t pre < <(prefix "$mode")
	case $mode in
	moat) [ -x "$MOAT" ] || { NA[$mode]="$MOAT not built"; return 1; } ;;
	runsc | proot)
		command -v "$mode" >/dev/null || { NA[$mode]="$mode not installed (make deps)"; return 1; } ;;
	esac
	err=$OUTDIR/check-$mode.err
	local rc reason
	out=$(timeout 120 "${pre[@]}" "$BIN" getppid 10 </dev/null 2>"$err")
	rc=$?
	if [[ "$out" != getppid\ * ]]; then
		reason=$(grep -v '^$' "$err" | head -1 | cut -c1-160)
		NA[$mode]="\`${pre[*]} syscalls getppid 10\` failed (status $rc): ${reason:-no output}"
		return 1
	fi
	return 0
}


run_cell()
{
	local mode=$1 name=$2 n=$3 file=$4 r out vals="" err=$OUTDIR/$mode-$name.err
	local -a pre args=("$name" "$n")
	mapfile -t pre < <(prefix "$mode")
	[ "$file" != - ] && args+=("$file")
	for ((r = 0; r < REPEAT; r++)); do
		out=$(timeout 300 "${pre[@]}" "$BIN" "${args[@]}" </dev/null 2>"$err")
		if [[ "$out" != "$name "* ]]; then
			RES[$name,$mode]=na
			na_reasons+=("$mode, $name: $(grep -v '^$' "$err" | head -1 | cut -c1-160)")
			return
		fi
		vals+="${out#"$name "}"$'\n'
	done
	RES[$name,$mode]=$(printf '%s' "$vals" | median)
}

# run_wall MODE NAME RUNS CMD...: wall time of the whole command, sandbox
# start included (median of RUNS, after a warm-up run that must succeed).
run_wall()
{
	local mode=$1 name=$2 runs=$3 ms
	shift 3
	local -a pre
	mapfile -t pre < <(prefix "$mode")
	if ! timeout 300 "${pre[@]}" "$@" </dev/null >/dev/null 2>"$OUTDIR/$mode-$name.err"; then
		RES[$name,$mode]=na
		na_reasons+=("$mode, $name: $(grep -v '^$' "$OUTDIR/$mode-$name.err" | head -1 | cut -c1-160)")
		return
	fi
	local i t0 t1 vals=""
	for ((i = 0; i < runs; i++)); do
		t0=$(date +%s%N)
		timeout 300 "${pre[@]}" "$@" </dev/null >/dev/null 2>&1
		t1=$(date +%s%N)
		vals+="$((t1 - t0))"$'\n'
	done
	ms=$(printf '%s' "$vals" | median)
	RES[$name,$mode]=${ms:-na}
}

# The file-system workload: a tarball of Python's standard library (no
# tests), made once, readable by any user (moat's view of the host).
FS_TGZ=$BIN_DIR/src.tgz
tar czf "$FS_TGZ" -C /usr/lib --exclude=python3.11/test --exclude='__pycache__' \
	python3.11 2>/dev/null
chmod 644 "$FS_TGZ"
FS_SQL='import sqlite3, tempfile, os
d = tempfile.mkdtemp(dir="/tmp"); c = sqlite3.connect(os.path.join(d, "b.db"))
c.execute("create table t (i integer primary key, s text)")
for k in range(200):
    c.executemany("insert into t (s) values (?)", [("row %d" % (k * 100 + j),) for j in range(100)])
    c.commit()
assert c.execute("select count(*) from t").fetchone()[0] == 20000
c.close(); os.remove(os.path.join(d, "b.db")); os.rmdir(d)'

fmt_time()
{
	awk -v ns="$1" 'BEGIN {
		if (ns == "na" || ns == "") { print "n/a"; exit }
		if (ns < 1000) printf "%.0f ns\n", ns
		else if (ns < 1e6) printf "%.1f µs\n", ns / 1e3
		else if (ns < 1e9) printf "%.2f ms\n", ns / 1e6
		else printf "%.2f s\n", ns / 1e9
	}'
}


# ---------------------------------------------------------------- run

start=$(date +%s)
active=()
for mode in "${MODES[@]}"; do
	if mode_check "$mode"; then
		active+=("$mode")
	else
		echo "bench: $mode: n/a: ${NA[$mode]}" >&2
	fi
done
for spec in "${BENCHES[@]}"; do
	read -r name n file <<<"$spec"
	n=$(awk -v n="$n" -v s="$SCALE" 'BEGIN { n = int(n * s); print (n < 1) ? 1 : n }')
	for mode in "${active[@]}"; do
		echo "bench: $name x$n under $mode" >&2
		run_cell "$mode" "$name" "$n" "$file"
	done
done
for mode in "${active[@]}"; do
	echo "bench: python3 -c pass under $mode" >&2
	run_wall "$mode" python 10 $PY -c pass
	echo "bench: file system: untar, find, sqlite under $mode" >&2
	run_wall "$mode" untar 5 /bin/sh -c \
		'd=$(mktemp -d /tmp/fsb.XXXXXX) && tar xzf "$1" -C "$d" && rm -rf "$d"' sh "$FS_TGZ"
	run_wall "$mode" find 5 /bin/sh -c 'find /usr/lib/python3.11 >/dev/null'
	run_wall "$mode" sqlite 5 $PY -c "$FS_SQL"
done
elapsed=$(($(date +%s) - start))

# ---------------------------------------------------------------- table

cell()
{
	local name=$1 mode=$2
	if [ -n "${NA[$mode]:-}" ]; then
		echo na
	else
		echo "${RES[$name,$mode]:-na}"
	fi
}

table=$OUTDIR/results.md
{
	echo "| benchmark | native | moat | runsc (ptrace) | proot | moat/native | runsc/native | proot/native |"
	echo "|---|---:|---:|---:|---:|---:|---:|---:|"
	for name in getppid open_close stat pread_4k pipe_pingpong fork_wait fork_exec python untar find sqlite; do
		nat=$(cell "$name" native)
		mo=$(cell "$name" moat)
		rs=$(cell "$name" runsc)
		pr=$(cell "$name" proot)
		echo "| ${LABEL[$name]} | $(fmt_time "$nat") | $(fmt_time "$mo") | $(fmt_time "$rs") | $(fmt_time "$pr") | $(fmt_ratio "$mo" "$nat") | $(fmt_ratio "$rs" "$nat") | $(fmt_ratio "$pr" "$nat") |"
	done
	echo
	cpu=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)
	echo "Time per operation (median of $REPEAT runs); rows marked wall: the whole command, sandbox start included (median of 10 for python, 5 for the file-system rows)."
	echo "Measured $(date -u +%Y-%m-%d) on $(nproc) × ${cpu:-unknown CPU}, Linux $(uname -r),"
	echo "moat $(git describe --always --dirty 2>/dev/null || echo dev),"
	echo "runsc $(dpkg-query -W -f='${Version}' runsc 2>/dev/null || echo n/a)," \
		"proot $(dpkg-query -W -f='${Version}' proot 2>/dev/null || echo n/a);" \
		"\`make bench\` took ${elapsed}s."
	for mode in native moat runsc proot; do
		if [[ " ${MODES[*]} " != *" $mode "* ]]; then
			echo "- $mode: not run (BENCH_MODES)"
		elif [ -n "${NA[$mode]:-}" ]; then
			echo "- $mode: n/a: ${NA[$mode]}"
		fi
	done
	for r in "${na_reasons[@]}"; do
		echo "- n/a: $r"
	done
} >"$table"

echo
cat "$table"

if [ "$UPDATE_README" = 1 ]; then
	readme_block bench-table "$table"
fi

if [ "${BENCH_OCI:-1}" != 0 ]; then
	oci_args=(--append "$table")
	[ "$UPDATE_README" = 1 ] && oci_args+=(--update-readme)
	MOAT=$MOAT bash "$root/bench/oci.sh" "${oci_args[@]}"
fi

if [ "${BENCH_NET:-1}" != 0 ]; then
	net_args=(--append "$table")
	[ "$UPDATE_README" = 1 ] && net_args+=(--update-readme)
	MOAT=$MOAT bash "$root/bench/net.sh" "${net_args[@]}"
fi

if [ "${BENCH_HTTPS:-1}" != 0 ]; then
	https_args=(--append "$table")
	[ "$UPDATE_README" = 1 ] && https_args+=(--update-readme)
	MOAT=$MOAT bash "$root/bench/https.sh" "${https_args[@]}"
fi
