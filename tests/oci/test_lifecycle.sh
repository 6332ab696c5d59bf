#!/usr/bin/env bash
# moat as an OCI runtime: runc's commands, their exit codes and the state
# transitions of the runtime spec. The lifecycle runs the same script
# against moat and, when it is installed, against runc: both transcripts
# must be the same (a differential test).
. "$(dirname "$0")/../e2e/lib.sh"
. "$(dirname "$0")/lib_oci.sh"

RUNC=$(command -v runc || true)
HERE=$(cd "$(dirname "$0")" && pwd)

# lifecycle RUNTIME ROOT BUNDLE_PREFIX: one line per step, "step rc status".
lifecycle()
{
	local rt=$1 root=$2 b=$3 id rc
	step()
	{
		local name=$1
		shift
		timeout 30 "$@" >/dev/null 2>&1 </dev/null
		rc=$?
		echo "$name rc=$rc $(oci_status "$rt" "$root" "$id")"
	}
	id=life1
	step create "$rt" --root "$root" create --bundle "$b-wait" $id
	step start "$rt" --root "$root" start $id
	step start-again "$rt" --root "$root" start $id
	step delete-running "$rt" --root "$root" delete $id
	step pause "$rt" --root "$root" pause $id
	step pause-again "$rt" --root "$root" pause $id
	step resume "$rt" --root "$root" resume $id
	step resume-again "$rt" --root "$root" resume $id
	# (its state right after kill races with the process's end)
	timeout 30 "$rt" --root "$root" kill $id TERM >/dev/null 2>&1
	echo "kill-term rc=$?"
	wait_status "$rt" "$root" $id stopped
	echo "stopped $(oci_status "$rt" "$root" $id)"
	step kill-stopped "$rt" --root "$root" kill $id TERM
	step start-stopped "$rt" --root "$root" start $id
	step delete "$rt" --root "$root" delete $id
	step state-deleted "$rt" --root "$root" state $id
	step delete-again "$rt" --root "$root" delete $id
	step delete-force-absent "$rt" --root "$root" delete --force $id

	id=life2 # killed before it ever ran
	step create "$rt" --root "$root" create --bundle "$b-wait" $id
	step create-same-id "$rt" --root "$root" create --bundle "$b-wait" $id
	step kill-created "$rt" --root "$root" kill $id KILL
	wait_status "$rt" "$root" $id stopped
	echo "stopped $(oci_status "$rt" "$root" $id)"
	step delete "$rt" --root "$root" delete $id

	id=life3 # a created container is deleted without --force
	step create "$rt" --root "$root" create --bundle "$b-wait" $id
	step delete-created "$rt" --root "$root" delete $id

	id=life4 # force-delete a running one
	step create "$rt" --root "$root" create --bundle "$b-wait" $id
	step start "$rt" --root "$root" start $id
	step delete-force "$rt" --root "$root" delete --force $id

	id=life5 # run: its exit code is the container's
	step run-exit7 "$rt" --root "$root" run --bundle "$b-exit7" $id
	step state-after-run "$rt" --root "$root" state $id
	step run-detached "$rt" --root "$root" run -d --bundle "$b-wait" $id
	timeout 30 "$rt" --root "$root" kill --all $id KILL >/dev/null 2>&1
	echo "kill-all rc=$?"
	wait_status "$rt" "$root" $id stopped
	step delete "$rt" --root "$root" delete $id
	step state-unknown "$rt" --root "$root" state nosuchcontainer
	step start-unknown "$rt" --root "$root" start nosuchcontainer
	step kill-unknown "$rt" --root "$root" kill nosuchcontainer
}

make_lifecycle_bundles()
{
	make_bundle "$1-wait" '["sh","-c","trap \"exit 3\" TERM; while :; do sleep 0.1; done"]' &&
		make_bundle "$1-exit7" '["sh","-c","exit 7"]'
}

t_lifecycle_matches_runc()
{
	local b=$E2E_TMP/b
	make_lifecycle_bundles "$b" || fail "bundles"
	lifecycle "$MOAT" "$E2E_TMP/moat-root" "$b" >"$E2E_TMP/moat.txt"
	cat "$E2E_TMP/moat.txt"
	# The transitions the spec defines, whatever runc says.
	assert_contains "$(cat "$E2E_TMP/moat.txt")" "create rc=0 created" "create leaves it created"
	assert_contains "$(cat "$E2E_TMP/moat.txt")" "start rc=0 running" "start runs it"
	assert_contains "$(cat "$E2E_TMP/moat.txt")" "pause rc=0 paused" "pause"
	assert_contains "$(cat "$E2E_TMP/moat.txt")" "stopped stopped" "kill stops it"
	assert_contains "$(cat "$E2E_TMP/moat.txt")" "run-exit7 rc=7" "run's exit code is the container's"
	if [ -z "$RUNC" ]; then
		echo "runc is not installed: no differential"
		return 0
	fi
	lifecycle "$RUNC" "$E2E_TMP/runc-root" "$b" >"$E2E_TMP/runc.txt"
	diff -u "$E2E_TMP/runc.txt" "$E2E_TMP/moat.txt" ||
		fail "moat's transcript differs from runc's"
}

t_state_json()
{
	local b=$E2E_TMP/b root=$E2E_TMP/root
	make_bundle "$b" '["sleep","30"]' \
		'c["annotations"]={"org.example.k":"v"}' || fail "bundle"
	moat --root "$root" create --bundle "$b" st1 || fail "create"
	capture moat --root "$root" state st1
	assert_eq 0 "$STATUS" "state"
	python3 - "$OUT" "$b" <<'PY' || fail "state JSON"
import json, sys, os
s = json.loads(sys.argv[1])
b = os.path.realpath(sys.argv[2])
assert s["ociVersion"].startswith("1."), s
assert s["id"] == "st1" and s["status"] == "created", s
assert s["pid"] > 0 and os.path.exists("/proc/%d" % s["pid"]), s
assert s["bundle"] == b and s["rootfs"] == b + "/rootfs", s
assert s["annotations"] == {"org.example.k": "v"}, s
assert s["created"].endswith("Z"), s
PY
	# Its control socket is a file only its owner may use, in its state
	# directory: not an abstract name any process of the host's network
	# namespace could reach.
	assert_eq 600 "$(stat -c %a "$root/st1/ctl")" "the control socket's mode"
	assert_not_contains "$(cat /proc/net/unix)" "@moat/o/" "no abstract name"
	assert_contains "$(cat /proc/net/unix)" "$root/st1/ctl" "a socket file"
	capture moat --root "$root" list --format json
	assert_contains "$OUT" '"id":"st1"' "list --format json"
	capture moat --root "$root" list -q
	assert_eq "st1" "$OUT" "list -q"
	capture moat --root "$root" list
	assert_match "$OUT" 'st1 +[0-9]+ +created' "list's table"
	moat --root "$root" delete --force st1 || fail "delete"
}

# The state of the runtime spec in each status moat reports: ociVersion,
# id, status, bundle always; pid the daemon's while it lives (creating,
# created, running, paused), 0 once stopped, as runc prints it; the
# annotations. The same members as runc's in each status.
t_state_json_in_each_status()
{
	local b=$E2E_TMP/bs root=$E2E_TMP/root st out pid=0 i
	make_bundle "$b" '["sleep","30"]' \
		'c["annotations"]={"org.example.k":"v"}' \
		'c["mounts"]+=[{"destination":"/m%d"%i,"type":"bind","source":"'"$E2E_TMP"'/dsrc","options":["rbind","ro"]} for i in range(60)]' || fail "bundle"
	# sixty directories bound in, a gofer each: a create long enough to
	# be seen at work
	mkdir -p "$E2E_TMP/dsrc"
	check_state()
	{
		python3 - "$1" "$2" "$b" "${3:-}" <<'PY' || fail "state JSON while $2: $1"
import json, os, sys
s, want, b, other = json.loads(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
assert s["ociVersion"].startswith("1."), s
assert s["id"] == "sj1" and s["status"] == want, s
assert s["bundle"] == os.path.realpath(b), s
assert s["annotations"] == {"org.example.k": "v"}, s
if want == "stopped":
    assert s["pid"] == 0, s
else:
    assert s["pid"] > 0 and os.path.exists("/proc/%d" % s["pid"]), s
if other:
    assert set(s) == set(json.loads(other)), (sorted(s), sorted(json.loads(other)))
PY
	}
	runc_state()
	{
		[ -n "$RUNC" ] && "$RUNC" --root "$E2E_TMP/runc-root" state sj1 2>/dev/null
	}
	moat --root "$root" create --bundle "$b" sj1 &
	pid=$!
	for i in $(seq 400); do
		out=$(moat --root "$root" state sj1 2>/dev/null) || continue
		st=$(sed -n 's/^ *"status": "\(.*\)",*$/\1/p' <<<"$out")
		[ "$st" = creating ] && break
		[ "$st" = created ] && break
		sleep 0.005
	done
	[ "$st" = creating ] && check_state "$out" creating && echo "creating seen" >&2
	wait $pid || fail "create"
	[ "$st" = creating ] || echo "(creating was not seen: the create was too quick)"
	# runc's container of the same ID would have the same default
	# cgroupsPath (the ID), which moat's holds: its own
	python3 -c 'import json,sys; p=sys.argv[1]; c=json.load(open(p)); c["linux"]["cgroupsPath"]="runc-sj1-"+sys.argv[2]; json.dump(c,open(p,"w"))' "$b/config.json" $$
	[ -n "$RUNC" ] && { "$RUNC" --root "$E2E_TMP/runc-root" create --bundle "$b" sj1 || fail "runc create"; }
	check_state "$(moat --root "$root" state sj1)" created "$(runc_state)"
	moat --root "$root" start sj1 || fail "start"
	[ -n "$RUNC" ] && "$RUNC" --root "$E2E_TMP/runc-root" start sj1
	check_state "$(moat --root "$root" state sj1)" running "$(runc_state)"
	moat --root "$root" pause sj1 || fail "pause"
	[ -n "$RUNC" ] && "$RUNC" --root "$E2E_TMP/runc-root" pause sj1
	check_state "$(moat --root "$root" state sj1)" paused "$(runc_state)"
	moat --root "$root" resume sj1 || fail "resume"
	moat --root "$root" kill sj1 KILL || fail "kill"
	if [ -n "$RUNC" ]; then
		"$RUNC" --root "$E2E_TMP/runc-root" resume sj1
		"$RUNC" --root "$E2E_TMP/runc-root" kill sj1 KILL
		wait_status "$RUNC" "$E2E_TMP/runc-root" sj1 stopped
	fi
	check_state "$(moat --root "$root" state sj1)" stopped "$(runc_state)"
	moat --root "$root" delete sj1 || fail "delete"
	[ -n "$RUNC" ] && "$RUNC" --root "$E2E_TMP/runc-root" delete sj1
	return 0
}

t_exec()
{
	local b=$E2E_TMP/b root=$E2E_TMP/root pid
	make_bundle "$b" '["sleep","30"]' \
		'c["process"]["env"].append("FROM_CONFIG=yes")' || fail "bundle"
	moat --root "$root" run -d --bundle "$b" ex1 || fail "run -d"
	capture moat --root "$root" exec ex1 sh -c 'echo out; echo err >&2; echo $FROM_CONFIG $EXTRA; pwd; id -u; exit 4'
	assert_eq 4 "$STATUS" "exec's exit code is its process's"
	assert_eq "out
yes
/
0" "$(echo "$OUT" | sed 's/ *$//')" "stdout, the config's env, cwd and user"
	assert_eq "err" "$ERR" "stderr"
	capture moat --root "$root" exec ex1 -- sh -c 'echo after dashes'
	assert_eq "after dashes" "$OUT" "exec ID -- CMD"
	capture moat --root "$root" exec --user 1000:1000 --additional-gids 7 --additional-gids 9 ex1 id -G
	assert_eq "1000 7 9" "$OUT" "--additional-gids"
	capture moat --root "$root" exec --preserve-fds 2 ex1 true
	assert_ne 0 "$STATUS" "--preserve-fds other than 0 is refused"
	assert_contains "$ERR" "no host fd enters the sandbox" "says why"
	capture moat --root "$root" exec --env EXTRA=1 --cwd /bin --user 1000:1000 ex1 sh -c 'echo $EXTRA; pwd; id -u; id -g'
	assert_eq "1
/bin
1000
1000" "$OUT" "--env, --cwd and --user"
	echo '{"args":["sh","-c","echo from process.json; exit 2"],"cwd":"/tmp","env":["A=1"]}' >"$E2E_TMP/p.json"
	capture moat --root "$root" exec --process "$E2E_TMP/p.json" ex1
	assert_eq 2 "$STATUS" "--process"
	assert_eq "from process.json" "$OUT" "--process's args"
	capture moat --root "$root" exec ex1 /no/such/program
	assert_ne 0 "$STATUS" "a missing program"
	assert_contains "$ERR" "No such file" "says why"
	# -d: a stand-in process, reaped by whoever runs moat, with the
	# exec's exit code; signals sent to it reach the process.
	moat --root "$root" exec -d --pid-file "$E2E_TMP/exec.pid" ex1 sh -c 'trap "exit 9" TERM; while :; do sleep 0.1; done' ||
		fail "exec -d"
	pid=$(cat "$E2E_TMP/exec.pid")
	capture moat --root "$root" ps --format json ex1
	assert_match "$OUT" '^\[[0-9]+(,[0-9]+)+\]$' "ps lists both processes"
	kill -TERM "$pid"
	for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
	kill -0 "$pid" 2>/dev/null && fail "the exec -d stand-in did not end"
	capture moat --root "$root" ps --format json ex1
	assert_match "$OUT" '^\[[0-9]+\]$' "only init is left"
	moat --root "$root" kill ex1 KILL
	wait_status "$MOAT" "$root" ex1 stopped || fail "not stopped"
	capture moat --root "$root" exec ex1 true
	assert_ne 0 "$STATUS" "no exec in a stopped container"
	assert_contains "$ERR" "stopped" "says why"
	moat --root "$root" delete ex1 || fail "delete"
}

t_exec_at_the_pids_limit()
{
	# An exec past linux.resources.pids fails with EAGAIN, and leaves
	# the exec queue sound: the next one runs its own command.
	local b=$E2E_TMP/b root=$E2E_TMP/root
	make_bundle "$b" '["sleep","30"]' 'c["linux"]["resources"]={"pids":{"limit":2}}' || fail "bundle"
	moat --root "$root" run -d --bundle "$b" pl1 || fail "run -d"
	moat --root "$root" exec -d --pid-file "$E2E_TMP/e.pid" pl1 sleep 2 || fail "exec -d"
	capture moat --root "$root" exec pl1 echo over the limit
	assert_ne 0 "$STATUS" "an exec past the limit"
	assert_contains "$ERR" "Resource temporarily unavailable" "says why"
	for _ in $(seq 100); do kill -0 "$(cat "$E2E_TMP/e.pid")" 2>/dev/null || break; sleep 0.05; done
	capture moat --root "$root" exec pl1 echo mine
	assert_eq "mine" "$OUT" "the next exec runs its own command"
	moat --root "$root" delete --force pl1
}

t_exec_exit_status_via_subreaper()
{
	# As containerd's shim and conmon do: a subreaper learns the
	# container's and an exec's exit codes by reaping the pids in the
	# pid files.
	local b=$E2E_TMP/b root=$E2E_TMP/root
	make_bundle "$b" '["sh","-c","sleep 1; exit 42"]' || fail "bundle"
	cat >"$E2E_TMP/subreaper.py" <<'PY'
import ctypes, os, subprocess, sys, time
moat, root, b = sys.argv[1:4]
libc = ctypes.CDLL(None, use_errno=True)
libc.prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
def run(*a):
    subprocess.run([moat, "--root", root] + list(a), check=True, timeout=30)
run("create", "--bundle", b, "--pid-file", root + ".pid", "sr1")
init = int(open(root + ".pid").read())
run("start", "sr1")
run("exec", "-d", "--pid-file", root + ".epid", "sr1", "sh", "-c", "exit 5")
ex = int(open(root + ".epid").read())
got = {}
deadline = time.time() + 20
while len(got) < 2 and time.time() < deadline:
    pid, st = os.waitpid(-1, 0)
    got[pid] = os.waitstatus_to_exitcode(st)
print(got.get(init), got.get(ex))
run("delete", "sr1")
PY
	capture python3 "$E2E_TMP/subreaper.py" "$MOAT" "$root" "$b"
	assert_eq 0 "$STATUS" "the subreaper script"
	assert_eq "42 5" "$OUT" "exit codes of the container and of the exec"
}

t_hooks()
{
	local b=$E2E_TMP/b root=$E2E_TMP/root log=$E2E_TMP/hooks.log
	cat >"$E2E_TMP/hook.sh" <<HOOK
#!/bin/sh
state=\$(cat)
echo "\$1 \$state" >>$log
HOOK
	chmod +x "$E2E_TMP/hook.sh"
	make_bundle "$b" '["sleep","30"]' \
		"c['hooks']={k:[{'path':'$E2E_TMP/hook.sh','args':['hook.sh',k]}] for k in ('prestart','createRuntime','poststart','poststop')}" ||
		fail "bundle"
	moat --root "$root" create --bundle "$b" hk1 || fail "create"
	moat --root "$root" start hk1 || fail "start"
	moat --root "$root" delete --force hk1 || fail "delete"
	cat "$log"
	assert_eq "prestart createRuntime poststart poststop" \
		"$(awk '{print $1}' "$log" | tr '\n' ' ' | sed 's/ $//')" "each hook ran, in order"
	assert_contains "$(sed -n 1p "$log")" '"status":"created"' "prestart sees created"
	assert_contains "$(sed -n 3p "$log")" '"status":"running"' "poststart sees running"
	assert_contains "$(sed -n 4p "$log")" '"id":"hk1"' "the state names the container"
	# A failing prestart hook fails create, and leaves nothing.
	make_bundle "$b.2" '["true"]' "c['hooks']={'prestart':[{'path':'/bin/false'}]}" || fail "bundle 2"
	capture moat --root "$root" create --bundle "$b.2" hk2
	assert_ne 0 "$STATUS" "create with a failing hook"
	assert_contains "$ERR" "prestart" "names the hook"
	[ -e "$root/hk2" ] && fail "state of a failed create is left"
	return 0
}

t_events_and_ps()
{
	local b=$E2E_TMP/b root=$E2E_TMP/root
	make_bundle "$b" '["sh","-c","sleep 30"]' || fail "bundle"
	moat --root "$root" run -d --bundle "$b" ev1 || fail "run -d"
	capture moat --root "$root" events --stats ev1
	assert_eq 0 "$STATUS" "events --stats"
	python3 -c '
import json, sys
e = json.loads(sys.argv[1])
assert e["type"] == "stats" and e["id"] == "ev1", e
d = e["data"]
assert d["pids"]["current"] >= 1, d
assert d["memory"]["usage"]["usage"] > 0, d
assert d["cpu"]["usage"]["total"] > 0, d
assert d["network_interfaces"] == [], d
' "$OUT" || fail "stats event: $OUT"
	# without --stats: a stats event each interval, until it stops
	capture timeout 4 "$MOAT" --root "$root" events --interval 1 ev1
	assert_eq 124 "$STATUS" "events streams until stopped"
	assert_match "$(echo "$OUT" | wc -l)" '^[2-5]$' "one event a second: $OUT"
	capture moat --root "$root" ps ev1
	assert_match "$OUT" 'PID +GUEST-PID +CMD' "ps table header"
	assert_match "$OUT" '[0-9]+ +1 +sleep' "init is guest pid 1"
	moat --root "$root" delete --force ev1
	# With a network, its link's counters (the resolver's query went
	# through the sentry only: count what the link carried, maybe 0).
	make_bundle "$b.net" '["sleep","30"]' 'c["annotations"]={"dev.moat.net":"slirp"}' || fail "bundle"
	moat --root "$root" run -d --bundle "$b.net" ev2 || fail "run -d with slirp"
	capture moat --root "$root" events --stats ev2
	python3 -c '
import json, sys
n = json.loads(sys.argv[1])["data"]["network_interfaces"]
assert len(n) == 1 and n[0]["name"] == "eth0" and n[0]["tx_packets"] >= 0, n
' "$OUT" || fail "network stats: $OUT"
	moat --root "$root" delete --force ev2
}

t_pause_a_busy_container()
{
	# Paused while it forks and execs without a break: the sentry serves
	# requests only, signals wait for resume, a paused container can be
	# force-deleted and leaves no process or cgroup.
	local b=$E2E_TMP/b root=$E2E_TMP/root pid i
	make_bundle "$b" '["sh","-c","trap \"echo got USR1\" USR1; while :; do /bin/true; done"]' || fail "bundle"
	moat --root "$root" run -d --bundle "$b" pz1 >"$E2E_TMP/pz1.out" 2>&1 || fail "run -d"
	pid=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["pid"])' "$root/pz1/state.json")
	for i in 1 2 3 4 5; do
		moat --root "$root" pause pz1 || fail "pause $i"
		assert_eq paused "$(oci_status "$MOAT" "$root" pz1)" "paused $i"
		moat --root "$root" resume pz1 || fail "resume $i"
	done
	moat --root "$root" pause pz1 || fail "pause"
	moat --root "$root" kill pz1 USR1 || fail "kill while paused"
	sleep 0.3
	assert_not_contains "$(cat "$E2E_TMP/pz1.out")" "got USR1" "held while paused"
	moat --root "$root" resume pz1 || fail "resume"
	for _ in $(seq 100); do grep -q "got USR1" "$E2E_TMP/pz1.out" && break; sleep 0.05; done
	assert_contains "$(cat "$E2E_TMP/pz1.out")" "got USR1" "delivered at resume"
	capture moat --root "$root" exec pz1 echo still here
	assert_eq "still here" "$OUT" "exec after resume"
	moat --root "$root" pause pz1 || fail "pause again"
	moat --root "$root" delete --force pz1 || fail "delete --force while paused"
	for _ in $(seq 100); do
		[ -z "$(find /sys/fs/cgroup/freezer -maxdepth 2 -name "moat-$pid")" ] && break
		sleep 0.1
	done
	assert_eq "" "$(find /sys/fs/cgroup/freezer -maxdepth 2 -name "moat-$pid")" "the frozen cgroup is thawed and removed"
}

# moat exec into a container that forks without a break: the exec's fork
# by the reaper and the guests' forks interleave, and a stop of the new
# process taken aside while another task was waited for once left the
# sentry waiting for it for good (every exec after it hung too).
t_exec_into_a_forking_container()
{
	local b=$E2E_TMP/b root=$E2E_TMP/root i
	make_bundle "$b" '["sh","-c","while :; do /bin/true; done"]' || fail "bundle"
	moat --root "$root" run -d --bundle "$b" fk1 >/dev/null 2>&1 || fail "run -d"
	for i in $(seq 30); do
		# to a file: a hung exec's stdio stays open in the sentry
		timeout 20 "$MOAT" --root "$root" exec fk1 echo still here \
			>"$E2E_TMP/fk.out" 2>&1 </dev/null
		assert_eq "still here" "$(cat "$E2E_TMP/fk.out")" "exec $i"
	done
	moat --root "$root" delete --force fk1 || fail "delete"
}

t_live_policy_of_a_container()
{
	# moat policy show/set reach a container of the default --root by ID.
	local b=$E2E_TMP/b id=pol-$$
	make_bundle "$b" '["sleep","30"]' \
		'c["annotations"]={"dev.moat.net":"slirp","dev.moat.allow":"example.org:443"}' || fail "bundle"
	moat run -d --bundle "$b" "$id" || fail "run -d"
	capture moat policy show "$id"
	moat delete --force "$id"
	assert_eq 0 "$STATUS" "policy show"
	assert_contains "$OUT" "example.org:443" "its annotation's rule"
}

t_one_name_one_sandbox()
{
	# A container of the default --root and a `moat do --name` share
	# /run/moat, and its names: neither takes the other's, and moat kill
	# and moat policy reach each by its name.
	local b=$E2E_TMP/b id=one-$$ pid=
	# (the default --root is not oci_cleanup's)
	trap 'timeout 20 "$MOAT" delete --force "$id" >/dev/null 2>&1; [ -z "$pid" ] || kill -KILL "$pid" 2>/dev/null' EXIT
	make_bundle "$b" '["sleep","30"]' || fail "bundle"
	moat run -d --bundle "$b" "$id" || fail "run -d"
	capture moat do --name "$id" -- true
	assert_eq 125 "$STATUS" "moat do --name of a container's ID"
	assert_contains "$ERR" "an OCI container of that name exists" "says why"
	capture moat policy show "$id"
	assert_eq 0 "$STATUS" "moat policy show still reaches the container"
	moat delete --force "$id"
	"$MOAT" do --timeout 60 --name "$id" -- sleep 30 >/dev/null 2>&1 &
	pid=$!
	for _ in $(seq 100); do [ -S "/run/moat/$id" ] && break; sleep 0.05; done
	capture moat create --bundle "$b" "$id"
	kill -KILL "$pid"
	wait "$pid" 2>/dev/null
	assert_ne 0 "$STATUS" "moat create of a moat do's name"
	assert_contains "$ERR" "container with id exists" "says why"
}

t_readonly_root()
{
	local b=$E2E_TMP/b root=$E2E_TMP/root
	# root.readonly: every change to the rootfs is EROFS, also to what
	# setup wrote into it (/etc/hosts); /tmp and tmpfs mounts stay
	# writable.
	# A writable bind of a file stays writable (and puts /etc in the
	# overlay, where removing a rootfs name must still be EROFS); a ro
	# tmpfs is read-only once a tmpfs inside it is mounted.
	echo "motd" >"$E2E_TMP/motd.rw"
	make_bundle "$b" '["sh","-c","touch /x; mkdir /y; echo a >>/etc/hosts; rm /etc/hostname; echo b >/tmp/t && echo /tmp ok; echo c >/run/r && echo /run ok; echo d >>/etc/motd && echo motd ok; touch /ro/x; touch /ro/inner/y && echo inner ok"]' \
		'c["root"]["readonly"]=True' \
		'c["mounts"].append({"destination":"/run","type":"tmpfs","source":"tmpfs","options":["mode=755"]})' \
		'c["mounts"].append({"destination":"/ro","type":"tmpfs","source":"tmpfs","options":["ro"]})' \
		'c["mounts"].append({"destination":"/ro/inner","type":"tmpfs","source":"tmpfs"})' \
		"c['mounts'].append({'destination':'/etc/motd','type':'bind','source':'$E2E_TMP/motd.rw','options':['bind']})" || fail "bundle"
	capture moat --root "$root" run --bundle "$b" ro1
	assert_eq "/tmp ok
/run ok
motd ok
inner ok" "$OUT" "tmpfs, a rw file bind and a tmpfs in a ro tmpfs are writable"
	assert_eq 5 "$(echo "$ERR" | grep -c 'Read-only file system')" "each rootfs change is EROFS: $ERR"
	# access(W_OK) and statfs say so too (the host's / as the rootfs,
	# for python)
	make_bundle "$b.py" '["/usr/bin/python3","-c","import os; print(os.access(\"/etc/hostname\", os.W_OK), os.statvfs(\"/\").f_flag & 1)"]' \
		'c["root"]={"path":"/","readonly":True}' || fail "bundle"
	capture moat --root "$root" run --bundle "$b.py" ro2
	assert_eq "False 1" "$OUT" "access(W_OK) is false, statfs says ST_RDONLY"
	echo "from the host" >"$E2E_TMP/motd"
	make_bundle "$b.rw" '["sh","-c","touch /x && echo a >>/etc/hosts && rm /etc/hostname && echo changed; stat -c \"%a %u\" /scratch; cat /etc/motd; echo b >>/etc/motd"]' \
		'c["root"]["readonly"]=False' \
		'c["mounts"].append({"destination":"/scratch","type":"tmpfs","source":"tmpfs","options":["mode=750","uid=1000"]})' \
		"c['mounts'].append({'destination':'/etc/motd','type':'bind','source':'$E2E_TMP/motd','options':['bind','ro']})" || fail "bundle"
	capture moat --root "$root" run --bundle "$b.rw" rw1
	assert_eq "changed
750 1000
from the host" "$OUT" "a writable rootfs, a tmpfs's mode and owner, a file bound in"
	assert_contains "$ERR" "Read-only file system" "a read-only bind of a file"
	[ -e "$b.rw/rootfs/x" ] && fail "the bundle's rootfs was written"
	return 0
}

t_run_passes_signals_on()
{
	# `moat run` in the foreground hands the signals it gets to the
	# container's first process, and ends as it ends.
	local b=$E2E_TMP/b root=$E2E_TMP/root pid
	make_bundle "$b" '["sh","-c","trap \"echo got TERM; exit 7\" TERM; while :; do sleep 0.1; done"]' || fail "bundle"
	"$MOAT" --root "$root" run --bundle "$b" sg1 >"$E2E_TMP/sg1.out" 2>&1 &
	pid=$!
	for _ in $(seq 100); do
		[ "$(oci_status "$MOAT" "$root" sg1)" = running ] && break
		sleep 0.05
	done
	sleep 0.2
	kill -TERM "$pid"
	wait "$pid"
	assert_eq 7 "$?" "run ends with the container's code"
	assert_contains "$(cat "$E2E_TMP/sg1.out")" "got TERM" "the container got SIGTERM"
	[ -e "$root/sg1" ] && fail "run did not delete it"
	return 0
}

# The container's first process is its pid namespace's init: from inside,
# a signal it has no handler for is dropped, SIGKILL too, and the kill
# succeeds; one it handles arrives. A second process's kill of pid 1 is
# dropped the same way. Without that, `kill -TERM 1` ended the container.
t_init_takes_only_handled_signals()
{
	local b=$E2E_TMP/b root rt out
	make_bundle "$b" '["sh","-c","kill -TERM 1; echo term $?; kill -KILL 1; echo kill $?; sh -c \"kill -TERM 1; echo child term \\$?\"; trap \"echo handled USR1\" USR1; kill -USR1 1; echo alive"]' || fail "bundle"
	for rt in "$MOAT" ${RUNC:+"$RUNC"}; do
		root=$E2E_TMP/root-$(basename "$rt")
		out=$(timeout 30 "$rt" --root "$root" run --bundle "$b" init1 2>&1 </dev/null)
		echo "$(basename "$rt"): $out"
		"$rt" --root "$root" delete --force init1 >/dev/null 2>&1
		assert_eq "term 0
kill 0
child term 0
handled USR1
alive" "$out" "$(basename "$rt"): pid 1 takes only the signals it handles"
	done
}

# An init that blocks its signals and waits for them, as tini and
# dumb-init do, gets them (tests/oci/init_sigwait.c): only one it neither
# handles nor blocks is dropped. The same transcript under runc.
t_init_waits_for_blocked_signals()
{
	local b=$E2E_TMP/b root rt out
	make_bundle "$b" '["/init_sigwait"]' || fail "bundle"
	gcc -static -O1 -Wall -o "$b/rootfs/init_sigwait" "$HERE/init_sigwait.c" ||
		fail "cannot build init_sigwait.c"
	for rt in "$MOAT" ${RUNC:+"$RUNC"}; do
		root=$E2E_TMP/root-$(basename "$rt")
		out=$(timeout 60 "$rt" --root "$root" run --bundle "$b" init2 2>&1 </dev/null)
		echo "$(basename "$rt"): $out"
		"$rt" --root "$root" delete --force init2 >/dev/null 2>&1
		assert_eq "sigtimedwait: Terminated
sigtimedwait, waiting: Terminated
signalfd: User defined signal 2
alive after SIGUSR1
alive after a blocked SIGHUP" "$out" "$(basename "$rt"): a blocked signal reaches pid 1"
	done
}

t_state_survives_a_crash_of_create()
{
	# The daemon writes its own state before it says it is ready: a
	# create killed in its hooks leaves a container state and delete know.
	local b=$E2E_TMP/b root=$E2E_TMP/root pid
	make_bundle "$b" '["sleep","30"]' 		"c['hooks']={'prestart':[{'path':'/bin/sleep','args':['sleep','20']}]}" || fail "bundle"
	"$MOAT" --root "$root" create --bundle "$b" cr1 &
	pid=$!
	for _ in $(seq 100); do
		[ "$(oci_status "$MOAT" "$root" cr1)" = created ] && break
		sleep 0.05
	done
	kill -9 "$pid"
	wait "$pid" 2>/dev/null
	pkill -f "^/bin/sleep 20$" 2>/dev/null
	assert_eq created "$(oci_status "$MOAT" "$root" cr1)" "the container outlives its creator"
	moat --root "$root" delete --force cr1 || fail "delete"
	[ -e "$root/cr1" ] && fail "state left"
	return 0
}

# A container that has ended, killed before it ran or by its own exit, is
# "stopped" from the moment it is (runc's answer), never "creating" while
# its daemon winds down.
t_an_ended_container_is_stopped()
{
	local b=$E2E_TMP/b root=$E2E_TMP/root i
	make_bundle "$b" '["sleep","30"]' || fail "bundle"
	for i in $(seq 15); do
		moat --root "$root" create --bundle "$b" st$i || fail "create $i"
		moat --root "$root" kill st$i KILL || fail "kill $i"
		assert_eq stopped "$(oci_status "$MOAT" "$root" st$i)" "killed while created (run $i)"
		moat --root "$root" delete st$i || fail "delete $i"
	done
}

# kill KILL, then at once state and delete, 200 times over (two loops at
# once, no sleeps): the state is stopped from the kill's return on, never
# running again nor creating, every state and delete answers (a sentry
# ending closes the connections it has not served: no SIGPIPE death), and
# nothing is left of any of them afterwards.
t_kill_then_delete_at_once()
{
	local b=$E2E_TMP/b root=$E2E_TMP/root pids=$E2E_TMP/pids p cg hogs
	make_bundle "$b" '["sh","-c","sleep 60 & sleep 60 & sleep 60 & wait"]' || fail "bundle"
	hammer()
	{
		local loop=$1 n=$2 i id out rc st j
		for i in $(seq "$n"); do
			id=k$loop-$i
			moat --root "$root" create --bundle "$b" "$id" || { echo "create $id failed"; continue; }
			sed -n 's/^.*"pid": *\([0-9]*\).*$/\1/p' "$root/$id/state.json" >>"$pids.$loop"
			moat --root "$root" start "$id" || echo "start $id failed"
			moat --root "$root" kill "$id" KILL || echo "kill $id failed"
			for j in 1 2 3; do
				out=$(moat --root "$root" state "$id" 2>&1)
				rc=$?
				st=$(sed -n 's/^ *"status": "\(.*\)",*$/\1/p' <<<"$out")
				[ "$rc" = 0 ] && [ "$st" = stopped ] ||
					echo "state $id after kill ($j): rc=$rc status=$st: $out"
			done
			out=$(moat --root "$root" delete "$id" 2>&1) ||
				echo "delete $id right after kill: rc=$? $out"
		done
	}
	# two busy host processes: the sandboxes' ends compete for the CPUs,
	# as on a loaded node, which widens every window between them
	timeout 120 sh -c 'while :; do :; done' &
	hogs=$!
	timeout 120 sh -c 'while :; do :; done' &
	hogs="$hogs $!"
	hammer 1 67 >"$E2E_TMP/hammer1" 2>&1 &
	p=$!
	hammer 2 67 >"$E2E_TMP/hammer2" 2>&1 &
	p="$p $!"
	hammer 3 66 >"$E2E_TMP/hammer3" 2>&1
	wait $p
	kill $hogs 2>/dev/null
	assert_eq "" "$(cat "$E2E_TMP"/hammer? | head -20)" "every kill, state and delete as they should be"
	assert_eq 200 "$(cat "$pids".? | wc -l)" "200 containers ran"
	assert_eq "" "$(ls -A "$root")" "no state left"
	for _ in $(seq 100); do
		kill -0 $(cat "$pids".?) 2>/dev/null || break
		sleep 0.05
	done
	for p in $(cat "$pids".?); do
		kill -0 "$p" 2>/dev/null && fail "daemon $p outlived its delete"
		pgrep -P "$p" >/dev/null && fail "a child of daemon $p outlived its delete"
	done
	for _ in $(seq 100); do
		# at each container's cgroupsPath: its ID, below moat's cgroup
		cg=$(find /sys/fs/cgroup/*/ -maxdepth 4 -name "k[123]-*" 2>/dev/null)
		[ -z "$cg" ] && break
		sleep 0.1
	done
	assert_eq "" "$cg" "cgroups removed"
	grep -q "$root" /proc/self/mountinfo && fail "a mount is left"
	return 0
}

# The runtime spec: a runtime must not fail on a property it does not
# know (config.md, Extensibility). Each is ignored, with a warning naming
# it on stderr and in --log; runc takes the same config. A known property
# of the wrong type is still an error naming it.
t_unknown_properties_are_warned_of()
{
	local b=$E2E_TMP/bu root=$E2E_TMP/root f
	make_bundle "$b" '["sh","-c","echo ran"]' \
		'c["unknownTop"]="x"' \
		'c["process"]["unknownProcess"]={"deep":[1]}' \
		'c["process"]["user"]["unknownUser"]=1' \
		'c["root"]["unknownRoot"]=True' \
		'c["mounts"][0]["unknownMount"]=1' \
		'c["linux"]["unknownLinux"]=[]' \
		'c["linux"]["resources"]={"unknownResources":1,"pids":{"limit":100,"unknownPids":1}}' \
		'c["linux"]["namespaces"][0]["unknownNamespace"]=1' \
		'c["hooks"]={"prestart":[{"path":"/bin/true","unknownHook":1}],"unknownHooks":[]}' \
		'c["annotations"]={"org.example.unknown.key":"v"}' || fail "bundle"
	capture moat --root "$root" --log "$E2E_TMP/u.log" run --bundle "$b" u1
	assert_eq 0 "$STATUS" "a config with unknown properties runs: $ERR"
	assert_eq "ran" "$OUT" "its process ran"
	for f in unknownTop process.unknownProcess process.user.unknownUser \
		root.unknownRoot 'mounts[0].unknownMount' linux.unknownLinux \
		linux.resources.unknownResources linux.resources.pids.unknownPids \
		'linux.namespaces[0].unknownNamespace' 'hooks.prestart[0].unknownHook' \
		hooks.unknownHooks; do
		assert_match "$ERR" "moat: warning: config.json:[0-9]+: ${f//[/\\[}: unknown property, ignored" "a warning names $f"
		assert_contains "$(cat "$E2E_TMP/u.log")" "level=warning msg=\"config.json:" "--log has the warnings"
	done
	assert_eq 11 "$(grep -c 'moat: warning:' <<<"$ERR")" "one warning each, none for the annotation"
	if [ -n "$RUNC" ]; then
		capture "$RUNC" --root "$E2E_TMP/runc-root" run --bundle "$b" u1
		assert_eq 0 "$STATUS" "runc takes the same config: $ERR"
	fi
	make_bundle "$b" '["true"]' 'c["process"]["apparmorProfile"]=7' || fail "bundle"
	capture moat --root "$root" create --bundle "$b" u2
	assert_ne 0 "$STATUS" "a known property of the wrong type"
	assert_contains "$ERR" "process.apparmorProfile: a string expected" "names it"
	[ -e "$root/u2" ] && fail "state left behind"
	return 0
}

t_malformed_bundles()
{
	local b=$E2E_TMP/b root=$E2E_TMP/root
	make_bundle "$b" '["true"]' || fail "bundle"
	cp -r "$b" "$b.noroot" && rm -rf "$b.noroot/rootfs"
	check()
	{
		local what=$1 bundle=$2 want=$3
		capture moat --root "$root" create --bundle "$bundle" bad1
		assert_ne 0 "$STATUS" "$what: refused"
		assert_contains "$ERR" "$want" "$what: says why"
		assert_eq 1 "$(echo "$ERR" | wc -l)" "$what: one line"
		[ -e "$root/bad1" ] && fail "$what: state left behind"
		return 0
	}
	check "missing root" "$b.noroot" "root.path"
	cp -r "$b" "$b.json" && echo '{"ociVersion": "1.0.0",' >"$b.json/config.json"
	check "bad JSON" "$b.json" "config.json:2: unexpected end of file"
	make_bundle "$b.ns" '["true"]' 'c["linux"]["namespaces"].append({"type":"bogus"})'
	check "unknown namespace" "$b.ns" "linux.namespaces[5].type: \`bogus\` is not a namespace type"
	make_bundle "$b.rel" '["true"]' 'c["mounts"].append({"destination":"data","type":"tmpfs"})'
	check "relative mount destination" "$b.rel" "mounts[5].destination: \`data\`"
	make_bundle "$b.args" '[]'
	check "empty args" "$b.args" "process.args: empty"
	check "no bundle" "$E2E_TMP/nothing" "bundle"
	make_bundle "$b.prog" '["/no/such/program"]'
	check "missing program" "$b.prog" "exec \`/no/such/program\`"
	capture moat --root "$root" create --bundle "$b" 'bad/id'
	assert_ne 0 "$STATUS" "a bad container id"
}

t_delete_frees_everything()
{
	local b=$E2E_TMP/b root=$E2E_TMP/root pid kids
	make_bundle "$b" '["sh","-c","sleep 60 & sleep 60"]' \
		'c["linux"]["resources"]={"memory":{"limit":268435456},"pids":{"limit":50}}' || fail "bundle"
	moat --root "$root" run -d --bundle "$b" del1 || fail "run -d"
	pid=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["pid"])' "$root/del1/state.json")
	kids=$(pgrep -P "$pid" | tr '\n' ' ')
	[ -n "$kids" ] || fail "the daemon has no children (gofer, reaper)"
	moat --root "$root" delete --force del1 || fail "delete"
	[ -e "$root/del1" ] && fail "state directory left"
	for _ in $(seq 100); do
		kill -0 $pid $kids 2>/dev/null || break
		sleep 0.05
	done
	for p in $pid $kids; do
		kill -0 "$p" 2>/dev/null && fail "process $p outlived delete"
	done
	# The cgroups go once their janitor sees them empty.
	for _ in $(seq 100); do
		[ -z "$(find /sys/fs/cgroup/*/ -maxdepth 3 -name "moat-$pid" 2>/dev/null)" ] && break
		sleep 0.1
	done
	assert_eq "" "$(find /sys/fs/cgroup/*/ -maxdepth 3 -name "moat-$pid" 2>/dev/null)" "cgroups removed"
	grep -q "moat-$pid\|$root" /proc/self/mountinfo && fail "a mount is left"
	return 0
}

t_console_socket()
{
	# terminal: true: the pty master goes to --console-socket (an engine's
	# socket: here a python stand-in that reads what the container says).
	local b=$E2E_TMP/b root=$E2E_TMP/root sock=$E2E_TMP/console.sock
	make_bundle "$b" '["sh","-c","test -t 0 && echo on a tty; stty size"]' \
		'c["process"]["terminal"]=True' 'c["process"]["consoleSize"]={"height":30,"width":100}' || fail "bundle"
	python3 "$HERE/console_socket.py" "$sock" $'100| 0\r\n|\n0 0' >"$E2E_TMP/console.out" 2>&1 &
	local py=$!
	for _ in $(seq 50); do [ -S "$sock" ] && break; sleep 0.1; done
	capture moat --root "$root" create --bundle "$b" --console-socket "$sock" tty1
	assert_eq 0 "$STATUS" "create with a console socket"
	moat --root "$root" start tty1 || fail "start"
	wait $py
	cat "$E2E_TMP/console.out"
	assert_contains "$(cat "$E2E_TMP/console.out")" "on a tty" "stdin is a terminal"
	assert_contains "$(cat "$E2E_TMP/console.out")" "30 100" "consoleSize is its size"
	moat --root "$root" delete --force tty1
	# exec -t: a terminal of its own too, through the console socket
	rm -f "$sock"
	python3 "$HERE/console_socket.py" "$sock" $'100| 0\r\n|\n0 0' >"$E2E_TMP/console2.out" 2>&1 &
	py=$!
	for _ in $(seq 50); do [ -S "$sock" ] && break; sleep 0.1; done
	make_bundle "$b.w" '["sleep","30"]' || fail "bundle"
	moat --root "$root" run -d --bundle "$b.w" tty3 || fail "run -d"
	capture moat --root "$root" exec -t --console-socket "$sock" tty3 sh -c 'test -t 0 && echo exec on a tty; stty size'
	assert_eq 0 "$STATUS" "exec -t"
	wait $py
	cat "$E2E_TMP/console2.out"
	assert_contains "$(cat "$E2E_TMP/console2.out")" "exec on a tty" "the exec'd process is on a terminal"
	moat --root "$root" delete --force tty3
	capture moat --root "$root" create --bundle "$b" tty2
	assert_ne 0 "$STATUS" "terminal without --console-socket"
	assert_contains "$ERR" "console-socket" "says why"
}

t_state_files_are_private()
{
	# The state is the container's owner's alone: --root and the parents
	# it makes 0700 (runc's MkdirAll(root, 0700)), ROOT/ID 0700, its
	# files 0600, since config.json holds process.env, secrets included,
	# and the ID is in the daemon's command line for anyone to read.
	local b=$E2E_TMP/b top=$E2E_TMP/priv root=$E2E_TMP/priv/root f
	make_bundle "$b" '["sleep","30"]' 'c["process"]["env"].append("TOKEN=s3cr3t")' || fail "bundle"
	umask 022
	moat --root "$root" create --bundle "$b" --pid-file "$E2E_TMP/pv.pid" pv1 || fail "create"
	assert_eq 700 "$(stat -c %a "$top")" "a parent --root made"
	assert_eq 700 "$(stat -c %a "$root")" "--root"
	assert_eq 700 "$(stat -c %a "$root/pv1")" "ROOT/ID"
	for f in config.json state.json exit; do
		assert_eq 600 "$(stat -c %a "$root/pv1/$f")" "ROOT/ID/$f"
	done
	assert_eq 600 "$(stat -c %a "$root/pv1/ctl")" "the control socket"
	assert_eq 644 "$(stat -c %a "$E2E_TMP/pv.pid")" "the pid file (runc's 0666 less the umask)"
	assert_eq "" "$(find "$root" -name '.*')" "no temporary file is left"
	# Even through a --root others may enter, another user reads none of
	# it.
	chmod 0755 "$root"
	capture setpriv --reuid=nobody --regid=nogroup --clear-groups cat "$root/pv1/config.json"
	assert_ne 0 "$STATUS" "nobody cannot read config.json"
	assert_not_contains "$OUT" s3cr3t "nor the secret in it"
	# A state directory that older moat made (0711, its files 0644) is
	# made private again at the next command that uses it; so is an
	# older --root's 0711 (a root of another mode, an engine's own, is
	# kept: ROOT/ID is private anyway).
	chmod 0711 "$root" "$root/pv1"
	chmod 0644 "$root/pv1/config.json" "$root/pv1/state.json"
	capture moat --root "$root" state pv1
	assert_eq 0 "$STATUS" "state of an older moat's container"
	assert_eq 700 "$(stat -c %a "$root")" "an older --root, made 0700"
	assert_eq 700 "$(stat -c %a "$root/pv1")" "an older ROOT/ID, made 0700"
	chmod 0755 "$root"
	capture moat --root "$root" list -q
	assert_eq pv1 "$OUT" "a --root readable by others is used"
	assert_eq 755 "$(stat -c %a "$root")" "and kept as it is"
	# Another directory in a shared --root is not a container's: it is
	# neither made private nor removed by delete --force.
	mkdir -m 0711 "$root/notours"
	echo data >"$root/notours/data"
	capture moat --root "$root" list -q
	assert_eq pv1 "$OUT" "only the container is listed"
	assert_eq 711 "$(stat -c %a "$root/notours")" "another directory keeps its mode"
	capture moat --root "$root" delete --force notours
	assert_ne 0 "$STATUS" "delete --force of a directory that is no container's state"
	assert_contains "$ERR" "holds more than a container's state" "says why"
	assert_eq data "$(cat "$root/notours/data")" "and leaves it as it is"
	moat --root "$root" delete --force pv1 || fail "delete"
	[ -e "$root/pv1" ] && fail "state left"
	return 0
}

t_spec_and_version()
{
	capture moat --version
	assert_match "$OUT" "spec: 1\.[0-9]+\.[0-9]+" "--version names the spec"
	mkdir -p "$E2E_TMP/s"
	moat spec --bundle "$E2E_TMP/s" || fail "spec"
	python3 -c 'import json,sys; c=json.load(open(sys.argv[1])); assert c["root"]["path"]=="rootfs"' "$E2E_TMP/s/config.json" ||
		fail "spec's config"
	capture moat spec --bundle "$E2E_TMP/s"
	assert_ne 0 "$STATUS" "spec never overwrites"
	capture moat --root "$E2E_TMP/r" --log "$E2E_TMP/log.json" --log-format json state nosuch
	assert_eq 1 "$STATUS" "state of an unknown container"
	assert_contains "$(cat "$E2E_TMP/log.json")" '"level":"error"' "--log gets the error as JSON"
	capture moat --root "$E2E_TMP/r" --log "$E2E_TMP/log.txt" --log-format text state nosuch
	assert_match "$(cat "$E2E_TMP/log.txt")" 'level=error msg="container does not exist"' "--log-format text"
	capture moat --root "$E2E_TMP/r" --log-format yaml list
	assert_ne 0 "$STATUS" "an unknown --log-format is refused"
	capture moat --root "$E2E_TMP/r" --systemd-cgroup --debug list -q
	assert_eq 0 "$STATUS" "--systemd-cgroup and --debug are accepted"
}

# A ps answer longer than one read: 2,600 processes with 15-byte names make
# it about 80 KiB (the CLI used to read 64 KiB and parse the cut-off last
# line as a pid: 1, 2 or 3, the host's init, kthreadd, a kernel thread).
# Both formats list exactly the container's processes: those its sentry
# traces, but for the reaper.
t_ps_of_many_processes()
{
	local b=$E2E_TMP/b root=$E2E_TMP/root n=2600 i cur daemon json
	make_bundle "$b" "[\"/bin/many_procs\",\"$n\"]" || fail "bundle"
	gcc -O1 -static -o "$b/rootfs/bin/many_procs" "$HERE/many_procs.c" ||
		fail "cannot build many_procs.c"
	moat --root "$root" run -d --bundle "$b" mp1 || fail "run -d"
	for i in $(seq 600); do
		cur=$(timeout 10 "$MOAT" --root "$root" events --stats mp1 |
			python3 -c 'import json,sys; print(json.load(sys.stdin)["data"]["pids"]["current"])')
		[ "${cur:-0}" -ge $((n + 1)) ] && break
		sleep 0.5
	done
	[ "${cur:-0}" -ge $((n + 1)) ] || fail "only $cur processes started"
	daemon=$(timeout 10 "$MOAT" --root "$root" state mp1 |
		python3 -c 'import json,sys; print(json.load(sys.stdin)["pid"])')
	capture moat --root "$root" ps --format json mp1
	assert_eq 0 "$STATUS" "ps --format json"
	json=$OUT
	capture moat --root "$root" ps mp1
	assert_eq 0 "$STATUS" "ps"
	python3 - "$daemon" "$n" "$json" "$OUT" <<'PY' || fail "ps lists other processes than the container's"
import json, os, sys
daemon, n, listed, table = int(sys.argv[1]), int(sys.argv[2]), json.loads(sys.argv[3]), sys.argv[4]
def status(p):
    d = {}
    for l in open("/proc/%s/status" % p):
        k, _, v = l.partition(":")
        d[k] = v.strip()
    return d
truth = set()
for p in os.listdir("/proc"):
    try:
        s = status(p) if p.isdigit() else {}
    except OSError:
        continue
    # the guests: traced by the sentry, children of its reaper
    if s.get("TracerPid") == str(daemon) and s.get("PPid") != str(daemon):
        truth.add(int(p))
assert len(truth) == n + 1, ("guests on the host", len(truth))
outside = [p for p in listed if p not in truth]
assert not outside, ("json names processes outside", outside[:5])
assert len(listed) == len(set(listed)) == n + 1, ("json", len(listed))
rows = [l.split() for l in table.splitlines()[1:]]
assert {int(r[0]) for r in rows} == truth and len(rows) == n + 1, ("table", len(rows))
assert sum(r[2] == "longprocessname" for r in rows) == n, "table commands"
PY
	moat --root "$root" delete --force mp1
}

# A sentry that lies or is cut off (a stand-in on the container's control
# socket): a well-formed answer naming host processes has them left out,
# with a warning; a cut-off or malformed one is an error and prints no pid;
# a cut-off "ok" to a kill is no "ok".
t_ps_names_only_the_containers()
{
	local b=$E2E_TMP/b root=$E2E_TMP/root ctl real fpid i reply=$E2E_TMP/reply
	make_bundle "$b" '["sleep","30"]' || fail "bundle"
	moat --root "$root" run -d --bundle "$b" liar || fail "run -d"
	capture moat --root "$root" ps --format json liar
	real=$(python3 -c 'import json,sys; l=json.loads(sys.argv[1]); assert len(l) == 1; print(l[0])' "$OUT") ||
		fail "ps of one process: $OUT"
	ctl=$root/liar/ctl
	mv "$ctl" "$ctl.real"
	: >"$reply"
	$PY "$HERE/fake_ctl.py" "$ctl" "$reply" >"$E2E_TMP/fake.out" 2>&1 &
	fpid=$!
	trap 'kill $fpid 2>/dev/null; mv -f "$ctl.real" "$ctl"' EXIT
	for i in $(seq 100); do
		grep -q ready "$E2E_TMP/fake.out" && break
		sleep 0.05
	done
	# well-formed, and lying: the host's init, kthreadd, this shell
	printf '1 1 init\n2 2 kthreadd\n%d 3 bash\n%d 1 sleep\n' $$ "$real" >"$reply.body"
	{ printf 'ok %d\n' "$(stat -c %s "$reply.body")"; cat "$reply.body"; } >"$reply"
	capture moat --root "$root" ps --format json liar
	assert_eq 0 "$STATUS" "a well-formed answer"
	assert_eq "[$real]" "$OUT" "only the container's process is listed"
	assert_contains "$ERR" "host pid 1 is not a process of container" "the lie is said"
	capture moat --root "$root" ps liar
	assert_match "$OUT" "^$real +1 +sleep\$" "the table has it"
	assert_eq 2 "$(printf '%s\n' "$OUT" | wc -l)" "and nothing else: $OUT"
	# cut off: fewer bytes than it says; the old unframed form; a bad line
	for body in 'ok 200\n1 1 init\n' '1 1 init\n2 2 kthreadd\n' \
		'ok 13\n1 1 init\n2 2\n' 'ok 9\n1 1 init\n\n' 'ok 0x9\n1 1 init\n'; do
		printf "$body" >"$reply"
		capture moat --root "$root" ps --format json liar
		assert_eq 1 "$STATUS" "a malformed answer is an error: $body"
		assert_eq "" "$OUT" "and no data: $body"
		assert_contains "$ERR" "malformed" "it says so: $body"
	done
	capture moat --root "$root" kill liar TERM
	assert_eq 1 "$STATUS" "a cut-off answer to kill is no ok"
	# fake_sentry: a NUL in a body was its end (strlen), so what came
	# after it was never checked
	printf 'ok 8\n1 1 a\n\0z' >"$reply"
	capture moat --root "$root" ps --format json liar
	assert_eq 1 "$STATUS" "a NUL in the body is malformed"
	assert_eq "" "$OUT" "and no data"
	# more than the header says: refused, not read on
	printf 'ok 6\n1 1 a\nok 6\n1 1 a\n' >"$reply"
	capture moat --root "$root" ps --format json liar
	assert_eq 1 "$STATUS" "bytes past the body are malformed"
	# a message printed from the sentry drives no terminal
	printf 'error: \033[2J\033]0;owned\007 x\n' >"$reply.kill"
	capture moat --root "$root" kill liar TERM
	assert_eq 1 "$STATUS" "an error"
	assert_contains "$ERR" "?[2J?]0;owned? x" "its control bytes are '?'"
	[[ "$ERR" != *$'\033'* && "$ERR" != *$'\007'* ]] || fail "an escape reached the terminal: $(printf %q "$ERR")"
	# one deadline for the whole answer (5 s for kill), not one a
	# read: a byte every 2 s held the caller for as long as it liked
	echo dribble >"$reply.kill"
	truncate -s -1 "$reply.kill" # "dribble", no newline
	capture timeout 60 "$MOAT" --root "$root" kill liar TERM
	assert_eq 1 "$STATUS" "a dribbled answer ends as no answer (124: it waited on)"
	kill $fpid
	mv -f "$ctl.real" "$ctl"
	trap - EXIT
	moat --root "$root" delete --force liar
}

# What the shared audit log got since offset $1, of sandbox $2, one
# record a line (every line of it must be JSON).
LOG=/var/log/moat/audit.jsonl
log_since()
{
	local from=$1
	[ "$(stat -c %s "$LOG" 2>/dev/null || echo 0)" -ge "$from" ] || from=0 # rotated
	tail -c +$((from + 1)) "$LOG" | python3 -c '
import json, sys
for l in sys.stdin.buffer:
    r = json.loads(l)
    if r.get("sandbox") == sys.argv[1]: print(json.dumps(r))' "$2"
}

# exec_argv0_forge: an exec's argv0 went into the log unquoted, so a
# program's name could add members or whole records. And the records
# named the daemon's pid: now the container's ID.
t_exec_records_are_quoted()
{
	local b=$E2E_TMP/b root=$E2E_TMP/root id=argv0-$$ before out
	local n1='x","event":"fk' n2=$'\n''{"event":"fake'
	make_bundle "$b" '["sleep","30"]' || fail "bundle"
	cp "$b/rootfs/bin/busybox" "$b/rootfs/bin/$n1"
	cp "$b/rootfs/bin/busybox" "$b/rootfs/bin/$n2"
	before=$(stat -c %s "$LOG" 2>/dev/null || echo 0)
	moat --root "$root" run -d --bundle "$b" $id || fail "run -d"
	moat --root "$root" exec $id "/bin/$n1" true
	moat --root "$root" exec $id "/bin/$n2" true
	moat --root "$root" delete --force $id
	out=$(log_since "$before" $id) || fail "a record is no JSON: $(tail -c 600 "$LOG")"
	echo "$out" >"$E2E_TMP/records"
	python3 - "$E2E_TMP/records" "$n1" "$n2" <<'PY' || fail "exec records: $out"
import json, sys
rs = [json.loads(l) for l in open(sys.argv.pop(1))]
names = [r["argv0"] for r in rs if r["event"] == "exec"]
assert all(r["event"] not in ("fk", "fake") for r in rs)
# the name the sentry keeps (comm) is the first 15 bytes
assert [sys.argv[1][:15], sys.argv[2][:15]] == names[-2:], names
PY
}

# end_counts_lost: delete --force SIGKILLed the sentry, so what it had
# counted and not yet said (audit-suppressed, "at":"end") was lost. It
# is asked to end first (SIGTERM), and it writes its end.
t_delete_force_writes_the_end()
{
	local b=$E2E_TMP/b root=$E2E_TMP/root id=endcount-$$ before out
	make_bundle "$b" '["/bin/audit_flood","180","100000000"]' || fail "bundle"
	gcc -O1 -static -o "$b/rootfs/bin/audit_flood" "$HERE/../escape/audit_flood.c" ||
		fail "cannot build audit_flood.c"
	before=$(stat -c %s "$LOG" 2>/dev/null || echo 0)
	moat --root "$root" run -d --bundle "$b" $id || fail "run -d"
	for _ in $(seq 100); do
		tail -c +$((before + 1)) "$LOG" | grep -q "\"$id\".*\"nr\":180" && break
		sleep 0.1
	done
	sleep 1.5 # past the bucket's burst
	capture moat --root "$root" delete --force $id
	assert_eq 0 "$STATUS" "delete --force: $ERR"
	capture moat --root "$root" state $id
	assert_ne 0 "$STATUS" "it is gone"
	out=$(log_since "$before" $id) || fail "no JSON"
	echo "$out" >"$E2E_TMP/records"
	python3 - "$E2E_TMP/records" <<'PY' || fail "the end: $(echo "$out" | tail -3)"
import json, sys
rs = [json.loads(l) for l in open(sys.argv[1])]
assert rs, "no records"
assert any(r.get("at") == "end" for r in rs), rs[-1]
assert sum(r.get("records", 0) for r in rs if r["event"] == "audit-suppressed") > 0
PY
}

run_test lifecycle_matches_runc t_lifecycle_matches_runc
run_test state_json t_state_json
run_test state_json_in_each_status t_state_json_in_each_status
run_test exec t_exec
run_test exec_at_the_pids_limit t_exec_at_the_pids_limit
run_test exec_exit_status_via_subreaper t_exec_exit_status_via_subreaper
run_test hooks t_hooks
run_test events_and_ps t_events_and_ps
run_test ps_of_many_processes t_ps_of_many_processes
run_test ps_names_only_the_containers t_ps_names_only_the_containers
run_test pause_a_busy_container t_pause_a_busy_container
run_test readonly_root t_readonly_root
run_test exec_into_a_forking_container t_exec_into_a_forking_container
run_test live_policy_of_a_container t_live_policy_of_a_container
run_test one_name_one_sandbox t_one_name_one_sandbox
run_test run_passes_signals_on t_run_passes_signals_on
run_test init_takes_only_handled_signals t_init_takes_only_handled_signals
run_test init_waits_for_blocked_signals t_init_waits_for_blocked_signals
run_test state_survives_a_crash_of_create t_state_survives_a_crash_of_create
run_test an_ended_container_is_stopped t_an_ended_container_is_stopped
run_test kill_then_delete_at_once t_kill_then_delete_at_once
run_test unknown_properties_are_warned_of t_unknown_properties_are_warned_of
run_test malformed_bundles t_malformed_bundles
run_test delete_frees_everything t_delete_frees_everything
run_test console_socket t_console_socket
run_test state_files_are_private t_state_files_are_private
run_test spec_and_version t_spec_and_version
run_test exec_records_are_quoted t_exec_records_are_quoted
run_test delete_force_writes_the_end t_delete_force_writes_the_end
e2e_done
