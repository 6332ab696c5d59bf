#!/usr/bin/env bash
# Barrier: killing the sentry (SIGKILL, no chance to clean up) leaves no
# guest process behind: guest tasks are traced with PTRACE_O_EXITKILL.
#
# The sentry is found as the tracer (TracerPid) of the guest's host
# processes; if nothing traces them, by a process of moat's tree whose
# command line says "boot" or "sentry".
. "$(dirname "$0")/../e2e/lib.sh"

alive()
{
	local st
	st=$(awk '/^State:/ { print $2 }' "/proc/$1/status" 2>/dev/null) || return 1
	[ -n "$st" ] && [ "$st" != Z ] && [ "$st" != X ]
}

# ancestors: this shell and every process above it, which pgrep must ignore
# (an interactive caller's command line may hold the marker).
ancestors()
{
	local p=$BASHPID
	while [ -n "$p" ] && [ "$p" != 0 ]; do
		echo "$p"
		p=$(awk '/^PPid:/ { print $2 }' "/proc/$p/status" 2>/dev/null)
	done
}

# marked MARKER: live processes whose command line holds MARKER.
marked()
{
	local self p
	self=" $(ancestors | tr '\n' ' ') "
	for p in $(pgrep -f -- "$1"); do
		[[ "$self" == *" $p "* ]] || echo "$p"
	done
}

tracer_of()
{
	awk '/^TracerPid:/ { print $2 }' "/proc/$1/status" 2>/dev/null
}

# scenario MOAT-ARGS...: start `moat do ARGS` in the background, find its
# guests and its sentry, SIGKILL the sentry, and check the guests vanish.
scenario()
{
	local marker=$1
	shift
	"$MOAT" "$@" </dev/null >"$E2E_TMP/guest.out" 2>"$E2E_TMP/guest.err" &
	local cli=$!
	local guests="" sentry="" tree="" p t i
	for i in $(seq 1 100); do
		tree=$(descendants "$cli")
		guests=""
		for p in $tree; do
			t=$(tracer_of "$p")
			if [ -n "$t" ] && [ "$t" != 0 ]; then
				guests="$guests $p"
				sentry=$t
			fi
		done
		# The guest shell has started its sleeps once three are traced.
		[ "$(echo $guests | wc -w)" -ge 3 ] && break
		sleep 0.2
	done
	if [ -z "$sentry" ]; then
		for p in $cli $tree; do
			if tr '\0' ' ' 2>/dev/null <"/proc/$p/cmdline" | grep -qwE 'boot|sentry'; then
				sentry=$p
				guests=$(echo "$tree" | grep -vx "$p")
				break
			fi
		done
	fi
	if [ -z "$sentry" ] || [ -z "$guests" ]; then
		kill -9 "$cli" $tree 2>/dev/null
		wait "$cli" 2>/dev/null
		echo "moat tree: $(ps -o pid=,ppid=,stat=,args= -p "$cli" $tree 2>/dev/null)"
		echo "guest stderr: $(head -c 1000 "$E2E_TMP/guest.err")"
		fail "could not find a running guest and its sentry under moat (pid $cli)"
	fi
	echo "cli $cli, sentry $sentry, guests:$guests, tree: $(echo $tree)"
	local before
	before=$(marked "$marker" | tr '\n' ' ')

	kill -9 "$sentry"

	local left=""
	for i in $(seq 1 50); do
		left=""
		for p in $guests; do
			alive "$p" && left="$left $p"
		done
		[ -z "$left" ] && break
		sleep 0.2
	done
	if [ -n "$left" ]; then
		ps -o pid=,ppid=,stat=,args= -p $left
		kill -9 $left 2>/dev/null
		kill -9 "$cli" 2>/dev/null
		wait "$cli" 2>/dev/null
		fail "guest processes$left survived the sentry's death"
	fi
	# The rest of moat's tree (the gofer, the CLI) must not linger either.
	local rest=""
	for i in $(seq 1 50); do
		rest=""
		for p in $tree $cli; do
			[ "$p" = "$sentry" ] && continue
			alive "$p" && rest="$rest $p"
		done
		[ -z "$rest" ] && break
		sleep 0.2
	done
	if [ -n "$rest" ]; then
		ps -o pid=,ppid=,stat=,args= -p $rest
		kill -9 $rest 2>/dev/null
		wait "$cli" 2>/dev/null
		fail "moat processes$rest lingered after the sentry was killed"
	fi
	local marked
	marked=$(marked "$marker" | tr '\n' ' ')
	if [ -n "$marked" ]; then
		kill -9 $marked 2>/dev/null
		fail "processes with the guest's marker survived (the moat CLI is gone too): $marked (before: $before)"
	fi

	wait "$cli"
	local rc=$?
	[ "$sentry" = "$cli" ] || [ "$rc" -ne 0 ] ||
		fail "moat do exited 0 although its sentry was killed"
}

t_kill_sentry_sleep()
{
	local marker
	marker=4242.$RANDOM$RANDOM
	scenario "$marker" do -- /bin/sh -c "sleep $marker & sleep $marker & sleep $marker; wait"
}

t_kill_sentry_python()
{
	local marker
	marker=moat-marker-$RANDOM$RANDOM
	scenario "$marker" do -- $PY -c '
import os, sys, time, threading
for _ in range(2):
    if os.fork() == 0:
        time.sleep(100)
        os._exit(0)
threading.Thread(target=time.sleep, args=(100,), daemon=True).start()
time.sleep(100)' "$marker"
}

run_test "SIGKILL of the sentry kills guest sh and its sleeps" t_kill_sentry_sleep
run_test "SIGKILL of the sentry kills python, its forks and threads" t_kill_sentry_python
e2e_done
