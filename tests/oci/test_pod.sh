#!/usr/bin/env bash
# A pod is one sandbox (issue 13): a sandbox container (annotated as
# containerd's CRI annotates the pause container) starts the sentry, and
# member containers (CRI's annotations, and the pod daemon's namespaces
# by path, as containerd names them) run in it, each with its own rootfs,
# sharing the pod's loopback and hostname. Each member's pid is its
# anchor, in the pod's network namespace; state, kill, exec, ps and delete
# act on one member; deleting the sandbox container leaves no process.
. "$(dirname "$0")/../e2e/lib.sh"
. "$(dirname "$0")/lib_oci.sh"
HERE=$(cd "$(dirname "$0")" && pwd)

PORT=$((20000 + $$ % 20000))

# sandbox_bundle DIR ID: the pod's sandbox container, sleeping.
sandbox_bundle()
{
	make_bundle "$1" '["sleep","1000"]' 'c["hostname"]="podhost"' \
		"c['annotations']={'io.kubernetes.cri.container-type':'sandbox','io.kubernetes.cri.sandbox-id':'$2'}"
}

# member_bundle DIR SANDBOX_ID SANDBOX_PID ARGS_JSON: a workload container
# of that pod, with a marker file only its rootfs has (/only-NAME).
# SANDBOX_ID "-": no annotations, the namespace paths alone say whose
# it is (podman's rule too).
member_bundle()
{
	local dir=$1 sid=$2 pid=$3 args=$4 ann
	ann="c['annotations']={'io.kubernetes.cri.container-type':'container','io.kubernetes.cri.sandbox-id':'$sid'}"
	[ "$sid" = - ] && ann="c['annotations']={}"
	make_bundle "$dir" "$args" "$ann" \
		"c['linux']['namespaces']=[{'type':'pid'},{'type':'network','path':'/proc/$pid/ns/net'},{'type':'ipc','path':'/proc/$pid/ns/ipc'},{'type':'uts','path':'/proc/$pid/ns/uts'},{'type':'mount'}]" || return 1
	ln -sf busybox "$dir/rootfs/bin/nc"
	touch "$dir/rootfs/only-$(basename "$dir")"
}

# start_pod ROOT ID: the sandbox container created and started; its
# daemon's pid in POD_PID.
start_pod()
{
	local root=$1 id=$2
	sandbox_bundle "$E2E_TMP/$id" "$id" || fail "sandbox bundle"
	moat --root "$root" create --bundle "$E2E_TMP/$id" --pid-file "$E2E_TMP/$id.pid" "$id" </dev/null ||
		fail "create the sandbox container"
	moat --root "$root" start "$id" || fail "start the sandbox container"
	POD_PID=$(cat "$E2E_TMP/$id.pid")
}

# alive PID: a process, not a zombie (an anchor whose parent is gone is
# reaped by init, when the machine's init reaps).
alive()
{
	[ -r /proc/$1/stat ] && ! grep -q '^[0-9]* (.*) [ZX] ' /proc/$1/stat
}

# processes LEFT: every process whose command line names this test's
# directory (daemons, anchors and gofers all do).
processes()
{
	pgrep -f "$E2E_TMP" | grep -v "^$$\$" || true
}

# gone_or_say: no process of this test's is left (5 s for the last to
# end), or a failure naming them.
gone_or_say()
{
	local left
	for _ in $(seq 50); do
		[ -z "$(processes)" ] && return 0
		sleep 0.1
	done
	left=$(processes)
	assert_eq "" "$left" "no sentry, anchor or gofer is left: $(ps -o pid,stat,args -p "$(echo $left | tr " " ,)")"
}

t_members_share_the_pod()
{
	local root=$E2E_TMP/root1 a1 out
	start_pod "$root" pod1
	# m1 serves one line on the pod's loopback, then stays
	member_bundle "$E2E_TMP/m1" pod1 "$POD_PID" \
		"[\"sh\",\"-c\",\"ls /; hostname; echo served-by-m1 | nc -l -p $PORT; sleep 1000\"]" || fail "bundle m1"
	member_bundle "$E2E_TMP/m2" pod1 "$POD_PID" \
		"[\"sh\",\"-c\",\"ls /; hostname; for i in 1 2 3 4 5 6 7 8 9 10; do nc 127.0.0.1 $PORT && exit 0; sleep 0.3; done; exit 9\"]" || fail "bundle m2"
	moat --root "$root" create --bundle "$E2E_TMP/m1" --pid-file "$E2E_TMP/m1.pid" m1 \
		</dev/null >"$E2E_TMP/m1.out" 2>&1 || fail "create m1: $(cat "$E2E_TMP/m1.out")"
	assert_eq created "$(oci_status "$MOAT" "$root" m1)" "m1 created"
	a1=$(cat "$E2E_TMP/m1.pid")
	assert_eq "$(readlink /proc/$POD_PID/ns/net)" "$(readlink /proc/$a1/ns/net)" \
		"the anchor's network namespace is the pod daemon's"
	assert_eq "$(readlink /proc/$POD_PID/ns/uts)" "$(readlink /proc/$a1/ns/uts)" \
		"the anchor's uts namespace is the pod daemon's"
	assert_eq "$a1" "$(moat --root "$root" state m1 | python3 -c 'import json,sys; print(json.load(sys.stdin)["pid"])')" \
		"state's pid is the anchor's"
	moat --root "$root" start m1 || fail "start m1"
	assert_eq running "$(oci_status "$MOAT" "$root" m1)" "m1 running"
	moat --root "$root" create --bundle "$E2E_TMP/m2" m2 </dev/null >"$E2E_TMP/m2.out" 2>&1 ||
		fail "create m2: $(cat "$E2E_TMP/m2.out")"
	moat --root "$root" start m2 || fail "start m2"
	wait_status "$MOAT" "$root" m2 stopped || sleep 3
	assert_eq stopped "$(oci_status "$MOAT" "$root" m2)" "m2 ran to its end"
	out=$(cat "$E2E_TMP/m2.out")
	assert_contains "$out" "served-by-m1" "m2 reached m1 over the pod's loopback"
	assert_contains "$out" "only-m2" "m2 sees its own rootfs"
	assert_not_contains "$out" "only-m1" "m2 does not see m1's"
	assert_contains "$out" "podhost" "m2 has the pod's hostname"
	out=$(cat "$E2E_TMP/m1.out")
	assert_contains "$out" "only-m1" "m1 sees its own rootfs"
	assert_not_contains "$out" "only-m2" "m1 does not see m2's"
	assert_contains "$out" "podhost" "m1 has the pod's hostname"
	# exec and ps act on the member
	capture moat --root "$root" exec m1 ls /
	assert_eq 0 "$STATUS" "exec into m1: $ERR"
	assert_contains "$OUT" "only-m1" "exec sees m1's rootfs"
	assert_not_contains "$OUT" "only-m2" "and not m2's"
	capture moat --root "$root" ps --format json m1
	assert_eq 0 "$STATUS" "ps m1: $ERR"
	assert_ne "[]" "$OUT" "m1 has processes"
	# kill of a member ends it alone
	moat --root "$root" kill m1 KILL || fail "kill m1"
	wait_status "$MOAT" "$root" m1 stopped
	assert_eq stopped "$(oci_status "$MOAT" "$root" m1)" "m1 stopped after its kill"
	assert_eq running "$(oci_status "$MOAT" "$root" pod1)" "the pod runs on"
	! alive "$a1" || fail "m1's anchor still runs"
	moat --root "$root" delete m1 || fail "delete m1"
	moat --root "$root" delete m2 || fail "delete m2"
	moat --root "$root" delete --force pod1 || fail "delete the pod"
	gone_or_say
}

t_deleting_the_sandbox_ends_the_members()
{
	local root=$E2E_TMP/root2 a3 a4
	start_pod "$root" pod2
	member_bundle "$E2E_TMP/m3" pod2 "$POD_PID" '["sleep","1000"]' || fail "bundle m3"
	member_bundle "$E2E_TMP/m4" pod2 "$POD_PID" '["sleep","1000"]' || fail "bundle m4"
	moat --root "$root" create --bundle "$E2E_TMP/m3" --pid-file "$E2E_TMP/m3.pid" m3 </dev/null ||
		fail "create m3"
	moat --root "$root" start m3 || fail "start m3"
	# m4 is only created: its anchor waits for a start that never comes
	moat --root "$root" create --bundle "$E2E_TMP/m4" --pid-file "$E2E_TMP/m4.pid" m4 </dev/null ||
		fail "create m4"
	a3=$(cat "$E2E_TMP/m3.pid") a4=$(cat "$E2E_TMP/m4.pid")
	assert_ne "" "$(pgrep -f "gofer --root $E2E_TMP/m3/rootfs")" "m3's rootfs gofer runs"
	moat --root "$root" delete --force pod2 || fail "delete the pod"
	gone_or_say
	! alive "$a3" || fail "m3's anchor still runs"
	! alive "$a4" || fail "m4's anchor still runs"
	assert_eq stopped "$(oci_status "$MOAT" "$root" m3)" "m3 stopped"
	assert_eq stopped "$(oci_status "$MOAT" "$root" m4)" "m4 stopped"
	assert_eq 137 "$(cat "$root/m3/exit")" "m3's anchor ended as killed"
	moat --root "$root" delete m3 || fail "delete m3"
	moat --root "$root" delete m4 || fail "delete m4"
}

t_kill_before_start_ends_the_member()
{
	local root=$E2E_TMP/root3 a5
	start_pod "$root" pod3
	# a member by its namespace paths alone
	member_bundle "$E2E_TMP/m5" - "$POD_PID" '["sleep","1000"]' || fail "bundle m5"
	moat --root "$root" create --bundle "$E2E_TMP/m5" --pid-file "$E2E_TMP/m5.pid" m5 </dev/null ||
		fail "create m5"
	a5=$(cat "$E2E_TMP/m5.pid")
	assert_contains "$(cat "$root/m5/state.json")" '"moatPod":"pod3"' "m5 is pod3's member"
	assert_eq "$(readlink /proc/$POD_PID/ns/ipc)" "$(readlink /proc/$a5/ns/ipc)" \
		"its anchor is in the pod's ipc namespace"
	moat --root "$root" kill m5 TERM || fail "kill m5"
	assert_eq stopped "$(oci_status "$MOAT" "$root" m5)" "m5 stopped, never started"
	! alive "$a5" || fail "m5's anchor still runs"
	capture moat --root "$root" start m5
	assert_ne 0 "$STATUS" "a stopped member does not start"
	moat --root "$root" delete m5 || fail "delete m5"
	assert_eq running "$(oci_status "$MOAT" "$root" pod3)" "the pod runs on"
	moat --root "$root" delete --force pod3 || fail "delete the pod"
}

t_a_member_needs_its_pod()
{
	local root=$E2E_TMP/root4
	member_bundle "$E2E_TMP/m6" nosuchpod $$ '["true"]' || fail "bundle m6"
	capture moat --root "$root" create --bundle "$E2E_TMP/m6" m6
	assert_ne 0 "$STATUS" "a member of no pod is refused"
	assert_contains "$ERR" "io.kubernetes.cri.sandbox-id \`nosuchpod\`: the pod's sandbox container is not a running moat container" \
		"says why"
	assert_eq "" "$(ls -d "$root/m6" 2>/dev/null)" "no state left behind"
	# a namespace path of no moat container's, without the annotations
	make_bundle "$E2E_TMP/m7" '["true"]' \
		"c['linux']['namespaces'][2]={'type':'ipc','path':'/proc/$$/ns/ipc'}" || fail "bundle m7"
	capture moat --root "$root" create --bundle "$E2E_TMP/m7" m7
	assert_ne 0 "$STATUS" "an ipc namespace of no pod's is refused"
	assert_contains "$ERR" "linux.namespaces[2].path \`/proc/$$/ns/ipc\`: joining an existing ipc namespace" "says why"
	assert_eq "" "$(ls -d "$root/m7" 2>/dev/null)" "no state left behind"
}

# A member on a terminal (its pty master sent to --console-socket, as
# exec -t does) with a bind mount of its own (a gofer of the anchor's,
# rw: its write reaches the host).
t_a_member_on_a_terminal_with_a_bind()
{
	local root=$E2E_TMP/root5 sock=$E2E_TMP/console.sock py
	start_pod "$root" pod5
	mkdir -p "$E2E_TMP/data"
	member_bundle "$E2E_TMP/m8" pod5 "$POD_PID" \
		'["sh","-c","test -t 0 && echo on a tty; echo written >/data/from-m8; ls /data"]' || fail "bundle m8"
	python3 - "$E2E_TMP/m8/config.json" "$E2E_TMP/data" <<'PY' || fail "config"
import json, sys
c = json.load(open(sys.argv[1]))
c["process"]["terminal"] = True
c["mounts"].append({"destination": "/data", "type": "bind", "source": sys.argv[2], "options": ["rbind", "rw"]})
json.dump(c, open(sys.argv[1], "w"))
PY
	python3 "$HERE/console_socket.py" "$sock" 'from-m8' >"$E2E_TMP/console.out" 2>&1 &
	py=$!
	for _ in $(seq 50); do [ -S "$sock" ] && break; sleep 0.1; done
	capture moat --root "$root" create --bundle "$E2E_TMP/m8" --console-socket "$sock" m8
	assert_eq 0 "$STATUS" "create on a terminal: $ERR"
	moat --root "$root" start m8 || fail "start m8"
	wait $py
	assert_contains "$(cat "$E2E_TMP/console.out")" "on a tty" "its stdin is a terminal"
	assert_contains "$(cat "$E2E_TMP/console.out")" "from-m8" "it sees its bind"
	wait_status "$MOAT" "$root" m8 stopped
	assert_eq written "$(cat "$E2E_TMP/data/from-m8" 2>/dev/null)" "its write reached the host"
	moat --root "$root" delete m8 || fail "delete m8"
	moat --root "$root" delete --force pod5 || fail "delete the pod"
	gone_or_say
}

run_test members_share_the_pod t_members_share_the_pod
run_test deleting_the_sandbox_ends_the_members t_deleting_the_sandbox_ends_the_members
run_test kill_before_start_ends_the_member t_kill_before_start_ends_the_member
run_test a_member_on_a_terminal_with_a_bind t_a_member_on_a_terminal_with_a_bind
run_test a_member_needs_its_pod t_a_member_needs_its_pod
e2e_done
