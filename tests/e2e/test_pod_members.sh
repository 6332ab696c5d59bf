#!/usr/bin/env bash
# A pod's members in one sentry (sentry/pod.c, docs/control.md): each with
# its own rootfs and mounts, sharing the sandbox's loopback and hostname,
# driven through the control socket as cli/ drives it (pod_client.py).
. "$(dirname "$0")/lib.sh"
HERE=$(cd "$(dirname "$0")" && pwd)

# pod_up NAME: a sandbox named NAME that lives 60 s; SOCK its socket.
pod_up()
{
	POD=$1-$$
	SOCK=/run/moat/$POD
	[ "$(id -u)" = 0 ] || SOCK=${XDG_RUNTIME_DIR:-/tmp/moat-$(id -u)}/moat/$POD
	moat do --name "$POD" ${POD_OPTS:-} -- sleep 60 >"$E2E_TMP/$POD.log" 2>&1 &
	POD_PID=$!
	for _ in $(seq 100); do
		[ -S "$SOCK" ] && return 0
		sleep 0.05
	done
	fail "the sandbox $POD never served its socket"
}

pod_down()
{
	kill "$POD_PID" 2>/dev/null
	wait "$POD_PID" 2>/dev/null
	return 0
}

# member_bg NAME RFS WORD [OPTS] -- ARGV: member NAME started in the
# background (BG its client's pid, its answer in $E2E_TMP/NAME.out), once
# its output has WORD; MPID its first process's pod pid.
member_bg()
{
	local name=$1 rfs=$2 word=$3
	shift 3
	pc container "$name" "$rfs" "$@" >"$E2E_TMP/$name.out" 2>&1 &
	BG=$!
	for _ in $(seq 100); do
		grep -q "$word" "$E2E_TMP/$name.out" && break
		sleep 0.05
	done
	grep -q "$word" "$E2E_TMP/$name.out" || fail "$name never said $word: $(cat "$E2E_TMP/$name.out")"
	MPID=$(sed -n 's/^ok //p' "$E2E_TMP/$name.out")
}

pc()
{
	timeout 30 $PY "$HERE/pod_client.py" "$MOAT" "$SOCK" "$@"
}

# member_rootfs NAME: a busybox rootfs with /marker saying NAME.
member_rootfs()
{
	RFS=$E2E_TMP/rfs-$1
	make_busybox_rootfs "$RFS"
	echo "$1" >"$RFS/marker"
	chmod -R a+rX "$RFS"
}

t_a_member_has_its_own_rootfs_and_mounts()
{
	pod_up own
	member_rootfs m1
	mkdir -p "$E2E_TMP/vol" && echo bound >"$E2E_TMP/vol/f"
	capture pc container m1 "$RFS" --bind "$E2E_TMP/vol:/mnt" --tmpfs /run \
		-- /bin/sh -c 'cat /marker; cat /mnt/f; ls /run | wc -l;
			echo new >/etc/made && cat /etc/made;
			echo x >/mnt/g 2>/dev/null || echo ro-bind;
			grep -c " /mnt " /proc/self/mountinfo; exit 3'
	assert_contains "$OUT" "ok "
	assert_contains "$OUT" "m1"
	assert_contains "$OUT" "bound"
	assert_contains "$OUT" "new"
	assert_contains "$OUT" "ro-bind"
	assert_match "$OUT" 'exit 768$'
	[ -e "$RFS/etc/made" ] && fail "a member's write reached its rootfs"
	# the sandbox's own view is its own: the host's rootfs, no /mnt bind
	capture pc exec - -- /bin/sh -c 'cat /marker 2>&1; grep -c " /mnt " /proc/self/mountinfo'
	assert_contains "$OUT" "No such file"
	assert_not_contains "$OUT" "m1"
	pod_down
}

t_members_do_not_see_each_others_files_and_share_loopback()
{
	pod_up two
	member_rootfs a && RA=$RFS
	member_rootfs b && RB=$RFS
	H=$(pc exec - -- /bin/hostname | grep -v '^ok \|^exit ')
	[ -n "$H" ] || fail "no hostname"
	pc container a "$RA" -- /bin/sh -c 'echo from-a | busybox nc -l -p 7301' \
		>"$E2E_TMP/a.out" 2>&1 &
	A=$!
	sleep 0.5
	capture pc container b "$RB" -- /bin/sh -c 'cat /marker; hostname;
		for i in 1 2 3 4 5 6 7 8 9 10; do
			busybox nc 127.0.0.1 7301 </dev/null && break; sleep 0.2; done'
	assert_contains "$OUT" "from-a"
	assert_match "$OUT" '(^|[^a-z])b($|[^a-z])'
	assert_not_contains "$OUT" "from-a
a"
	# one UTS namespace: the sandbox's hostname
	assert_contains "$OUT" "$H"
	wait "$A"
	pod_down
}

t_exec_state_ps_and_kill_name_a_member()
{
	pod_up ctl
	member_rootfs m
	pc container m "$RFS" -- /bin/sh -c 'echo up; sleep 30 & wait' >"$E2E_TMP/m.out" 2>&1 &
	M=$!
	for _ in $(seq 100); do
		grep -q up "$E2E_TMP/m.out" && break
		sleep 0.05
	done
	assert_eq "running" "$(pc line 'state m')" "a running member's state"
	assert_match "$(pc line 'state none')" '^error: no such container'
	capture pc exec m -- /bin/sh -c 'cat /marker'
	assert_contains "$OUT" "m"
	assert_match "$(pc exec none -- /bin/true)" '^error: no such container none'
	n=$(pc line 'ps m' | tail -n +2 | wc -l)
	all=$(pc line 'ps' | tail -n +2 | wc -l)
	[ "$n" -ge 2 ] && [ "$all" -gt "$n" ] ||
		fail "ps m lists $n of $all processes"
	# its sleep dies of it; its first process, an init with no handler
	# for TERM, drops it (as Linux's does) and ends when its wait does
	assert_eq "ok" "$(pc line 'kill TERM all m')"
	wait "$M"
	assert_contains "$(cat "$E2E_TMP/m.out")" "exit 0"
	assert_eq "stopped" "$(pc line 'state m')" "an ended member's state"
	assert_match "$(pc exec m -- /bin/true)" '^error: no such container m'
	pod_down
}

# Its first process's end kills the rest; once none is left its gofers end;
# its name may then be used again.
t_a_members_end_ends_its_processes_and_gofers()
{
	pod_up end
	member_rootfs e
	capture pc container e "$RFS" -- /bin/sh -c '(sleep 30 &) ; sleep 30 & exit 5'
	assert_match "$OUT" 'exit 1280$'
	for _ in $(seq 100); do
		pgrep -f "gofer --root $RFS" >/dev/null || break
		sleep 0.05
	done
	assert_eq "" "$(pgrep -af "gofer --root $RFS")" "the member's gofers ended"
	assert_eq "" "$(pc line 'ps e' | tail -n +2)" "no process of it is left"
	capture pc container e "$RFS" -- /bin/sh -c 'exit 0'
	assert_match "$OUT" 'exit 0$'
	pod_down
}

t_malformed_requests_are_refused()
{
	pod_up bad
	member_rootfs x
	assert_match "$(pc container x "$RFS" --no-rootfs-fd -- /bin/true)" \
		"^error: no socket for the rootfs"
	assert_match "$(pc raw 'container LEN ../x' 0 0)" "^error: not a container's name"
	assert_match "$(pc raw 'container LEN y' 0 0)" "^error: no socket"
	assert_match "$(pc raw 'exec LEN has/slash' / 0 0 0 1 /bin/true 0)" \
		"^error: not a container's name"
	assert_match "$(pc container x "$RFS" --bind "$E2E_TMP:/b" --bind "$E2E_TMP:/c" -- /bin/nonexistent)" \
		"^error: exec .*No such file"
	# a refused member is forgotten: the name is free, the sandbox runs on
	capture pc container x "$RFS" -- /bin/sh -c 'cat /marker'
	assert_contains "$OUT" "x"
	assert_eq "running" "$(pc line state)"
	pod_down
}

# /proc/<pid>/fd/N of another member's file is only its text, looked up
# in the reader's own tree: no node of another mount namespace enters a
# walk (its read-only paths are not the reader's, and its gofers may be
# gone by the next open: that was a crash of the whole pod).
t_another_members_fd_is_its_text()
{
	pod_up fdx
	member_rootfs b && RB=$RFS
	member_rootfs a && RA=$RFS
	echo secret-of-b >"$RB/bfile"
	# shareProcessNamespace: both see the pod's processes
	member_bg b "$RB" b-up --share-pids -- /bin/sh -c 'exec 3</bfile; echo b-up; sleep 30'
	B=$BG
	capture pc container a "$RA" --share-pids -- /bin/sh -c '
		for p in /proc/[0-9]*; do
			[ "$(readlink $p/fd/3 2>/dev/null)" = /bfile ] && P=${p#/proc/}
		done
		echo "b is ${P:-none}"
		cat /proc/$P/fd/3 2>&1
		kill -9 $P; sleep 0.5
		cat /proc/$P/fd/3 2>&1; echo done'
	wait "$B"
	assert_match "$OUT" "b is [0-9]+"
	assert_not_contains "$OUT" "secret-of-b"
	assert_contains "$OUT" "done"
	assert_eq "running" "$(pc line state)" "the pod outlives it"
	pod_down
}

# A member has a pid namespace of its own (as each container of a pod
# without shareProcessNamespace has): its first process is 1, it sees its
# own processes alone, and another member's are out of its reach; with
# --share-pids it sees the pod's.
t_a_member_has_its_own_pids()
{
	pod_up pids
	member_rootfs b && RB=$RFS
	member_rootfs a && RA=$RFS
	member_bg b "$RB" b-up -- /bin/sh -c 'echo b-up; sleep 30'
	B=$BG BPID=$MPID
	capture pc container a "$RA" -- /bin/sh -c '
		echo "self $$"; sh -c "echo ppid \$PPID"
		(sleep 20 &); sleep 20 & echo "job $!"
		echo "sleeps $(cat /proc/[0-9]*/comm | grep -c "^sleep$")"
		cut -d" " -f1,4 /proc/1/stat | sed "s/^/stat /"
		readlink /proc/self | grep -qx "[0-9]*" && echo self-link
		grep "^NSpid" /proc/self/status
		kill -0 '"$BPID"' 2>/dev/null && echo b-reached || echo b-unseen
		[ -e /proc/'"$BPID"' ] && echo b-listed
		kill -TERM 1 && echo term-dropped; exit 4'
	assert_contains "$OUT" "self 1"
	# its first process is its namespace's init: a signal it does not
	# handle, from inside, is dropped
	assert_contains "$OUT" "term-dropped"
	assert_contains "$OUT" "ppid 1"
	assert_match "$OUT" "job [0-9]+"
	# the orphaned sleep and the job: none of b's or the pod's
	assert_contains "$OUT" "sleeps 2"
	assert_contains "$OUT" "stat 1 0"
	assert_contains "$OUT" "self-link"
	assert_contains "$OUT" "b-unseen"
	assert_not_contains "$OUT" "b-listed"
	assert_match "$OUT" 'exit 1024$'
	# The pod sees a's process by its pod number, with a's own after it.
	capture pc exec - -- /bin/sh -c 'grep -h "^NSpid:.*	1$" /proc/[0-9]*/status'
	assert_match "$OUT" "NSpid:	[0-9]+	1"
	# --share-pids: the pod's pid 1 and b are in view.
	capture pc container c "$RA" --share-pids -- /bin/sh -c '
		cat /proc/1/comm; [ "$$" = 1 ] || echo not-one
		kill -0 '"$BPID"' && echo b-reached'
	assert_contains "$OUT" "sleep"
	assert_contains "$OUT" "not-one"
	assert_contains "$OUT" "b-reached"
	kill "$B" 2>/dev/null
	wait "$B" 2>/dev/null
	pod_down
}

# What an ended member wrote (its overlay's upper layer, /tmp, a tmpfs
# mount) goes back to the pod's --disk: a container restarted over and
# over does not use up the pod's memory and disk. Each member writes 3 MiB
# to each of its three, 9 of a 12 MiB budget: the second fits only if
# the first one's went back.
t_an_ended_members_files_go()
{
	POD_OPTS="--disk 12M" pod_up disk
	member_rootfs d
	for m in d1 d2 d3; do
		capture pc container $m "$RFS" --tmpfs /run -- /bin/sh -c '
			for f in /big /tmp/big /run/big; do
				head -c 3145728 /dev/zero >$f || echo "no room: $f"
			done; echo wrote'
		assert_contains "$OUT" "wrote"
		assert_not_contains "$OUT" "no room" "$m's files fit the pod's --disk"
		assert_match "$OUT" 'exit 0$'
	done
	assert_eq "running" "$(pc line state)" "the pod outlives them"
	pod_down
}

# What a member with its own pids may not reach of another member's, by
# the paths a hostile review found (tests/e2e/pidns_probe.c): the
# other's terminals in /dev/pts, a pidfd of the other's passed to it over
# a unix socket, a credential or an F_SETOWN claiming the other's pid.
# And numbers of its own: waitid(P_PGID) of a negative id, its netlink
# port id.
t_a_member_reaches_nothing_by_pid()
{
	local probe=$E2E_TMP/pidns_probe sock=moatpf$$ bpty
	cc -static -O1 -o "$probe" "$HERE/pidns_probe.c" || fail "cannot build pidns_probe.c"
	pod_up reach
	member_rootfs b && RB=$RFS
	member_rootfs a && RA=$RFS
	cp "$probe" "$RB/bin/probe" && cp "$probe" "$RA/bin/probe"
	member_bg b "$RB" "^pty" -- /bin/probe ptmx
	B=$BG BPID=$MPID
	bpty=$(sed -n 's|^pty /dev/pts/||p' "$E2E_TMP/b.out")
	# one that shares the pod's pids hands a pidfd of b's init to a
	member_bg c "$RB" "^serving" --share-pids -- /bin/probe pidfd-serve $sock "$BPID"
	C=$BG
	capture pc container a "$RA" -- /bin/sh -c '
		echo "pts: $(ls /dev/pts | tr "\n" " ")"
		[ -e /dev/pts/'"$bpty"' ] && echo b-pty-seen
		cat /dev/pts/'"$bpty"' 2>/dev/null && echo b-pty-read
		probe pidfd-kill '$sock'
		probe creds '"$BPID"'; probe creds 1
		probe setown -2147483648; probe setown '"$BPID"'; probe setown -'"$BPID"'; probe setown 1
		probe waitid-pgid-neg; probe nlpid'
	assert_contains "$OUT" "pts: ptmx "
	assert_not_contains "$OUT" "b-pty"
	assert_contains "$OUT" "kill EINVAL" "a pidfd from outside its namespace signals nothing"
	assert_contains "$OUT" "creds ESRCH
creds 0" "a credential claims a pid of its own namespace alone"
	assert_contains "$OUT" "setown EINVAL
setown ESRCH
setown ESRCH
setown 0"
	assert_contains "$OUT" "waitid EINVAL"
	assert_contains "$OUT" "nlpid 1"
	assert_not_contains "$(cat "$E2E_TMP/b.out")" "exit" "b lives on"
	capture pc exec - -- /bin/sh -c "kill -0 $BPID && echo b-alive"
	assert_contains "$OUT" "b-alive"
	kill "$B" "$C" 2>/dev/null
	wait "$B" "$C" 2>/dev/null
	pod_down
}

run_test own_rootfs_and_mounts t_a_member_has_its_own_rootfs_and_mounts
run_test two_members t_members_do_not_see_each_others_files_and_share_loopback
run_test exec_state_ps_kill t_exec_state_ps_and_kill_name_a_member
run_test a_members_end t_a_members_end_ends_its_processes_and_gofers
run_test malformed t_malformed_requests_are_refused
run_test another_members_fd t_another_members_fd_is_its_text
run_test own_pids t_a_member_has_its_own_pids
run_test ended_members_files t_an_ended_members_files_go
run_test reaches_nothing_by_pid t_a_member_reaches_nothing_by_pid
e2e_done
