#!/usr/bin/env bash
# process.capabilities and noNewPrivileges as the guest sees them: capget,
# /proc/self/status, PR_CAPBSET_READ, PR_CAP_AMBIENT_IS_SET,
# PR_GET_NO_NEW_PRIVS, and what the sets let it do (bind below 1024,
# chown), through capset, setuid and exec. tests/oci/capchk.c prints it
# all; each case asserts what Linux's rules give, and when runc is
# installed, that runc's container printed exactly the same.
. "$(dirname "$0")/../e2e/lib.sh"
. "$(dirname "$0")/lib_oci.sh"

HERE=$(cd "$(dirname "$0")" && pwd)
RUNC=$(command -v runc || true)
CAPCHK=$E2E_TMP/capchk
gcc -static -O1 -o "$CAPCHK" "$HERE/capchk.c" || {
	echo "test_caps.sh: cannot build capchk.c (static glibc)" >&2
	exit 1
}

# caps_bundle DIR UID NNP CAPS_JSON STEP...: a bundle whose process is
# capchk STEP... as UID (gid the same), noNewPrivileges NNP (True/False),
# process.capabilities CAPS_JSON (a Python expression; None: left out),
# with a tmpfs /tmp everyone may write (runc gives a tmpfs the mode of the
# directory under it: 1777 here too).
caps_bundle()
{
	local dir=$1 uid=$2 nnp=$3 caps=$4 args
	shift 4
	args=$(python3 -c 'import json,sys; print(json.dumps(["/bin/capchk"] + sys.argv[1:]))' "$@")
	make_bundle "$dir" "$args" \
		"c['process']['user']={'uid':$uid,'gid':$uid}" \
		"c['process']['noNewPrivileges']=$nnp" \
		"c['process']['capabilities']=$caps" \
		"c['process']['capabilities'] is None and c['process'].pop('capabilities')" \
		"c['mounts'].append({'destination':'/tmp','type':'tmpfs','source':'tmpfs','options':['mode=1777']})" ||
		fail "bundle"
	cp "$CAPCHK" "$dir/rootfs/bin/capchk" && chmod 1777 "$dir/rootfs/tmp" || fail "rootfs"
}

# run_both DIR ID: the bundle under moat (OUT, ERR), and under runc,
# whose output must be the same.
run_both()
{
	local dir=$1 id=$2 moat_out moat_err
	capture timeout -k 5 60 "$MOAT" --root "$E2E_TMP/moat-root" run --bundle "$dir" "$id"
	assert_eq 0 "$STATUS" "moat ran the container"
	moat_out=$OUT moat_err=$ERR
	if [ -n "$RUNC" ]; then
		capture timeout -k 5 60 "$RUNC" --root "$E2E_TMP/runc-root" run --bundle "$dir" "$id"
		assert_eq 0 "$STATUS" "runc ran the container"
		assert_eq "$OUT" "$moat_out" "moat's container sees what runc's sees"
		echo "runc printed the same"
	else
		echo "runc is not installed: no differential"
	fi
	OUT=$moat_out ERR=$moat_err STATUS=0
}

# line PREFIX: the first line of OUT that starts with PREFIX.
line()
{
	printf '%s\n' "$OUT" | grep -m1 -F -- "$1"
}

t_user_gets_nothing_permitted()
{
	# runc's answer for uid 1000 without ambient capabilities: the exec
	# leaves nothing permitted or effective; the bounding set stays.
	local b=$E2E_TMP/user
	caps_bundle "$b" 1000 True \
		"{'bounding':['CAP_CHOWN','CAP_NET_BIND_SERVICE'],'effective':['CAP_CHOWN','CAP_NET_BIND_SERVICE'],'permitted':['CAP_CHOWN','CAP_NET_BIND_SERVICE'],'ambient':[]}" \
		show bind 80 bind 8080 touch /tmp/f chown /tmp/f 5
	run_both "$b" caps-user
	echo "$OUT"
	assert_eq "capget eff 0000000000000000 prm 0000000000000000 inh 0000000000000000" \
		"$(line capget)" "capget"
	assert_eq "bset-read 0000000000000401 ambient-is-set 0000000000000000 past-last 22" \
		"$(line bset-read)" "PR_CAPBSET_READ, PR_CAP_AMBIENT_IS_SET, EINVAL past cap_last_cap"
	assert_eq "$(printf 'CapInh:\t0000000000000000\nCapPrm:\t0000000000000000\nCapEff:\t0000000000000000\nCapBnd:\t0000000000000401\nCapAmb:\t0000000000000000\nNoNewPrivs:\t1')" \
		"$(printf '%s\n' "$OUT" | grep -E '^(Cap|NoNewPrivs)')" "/proc/self/status"
	assert_eq "no_new_privs 1 keepcaps 0 securebits 0" "$(line no_new_privs)" "prctl"
	assert_eq "bind: EACCES" "$(line 'bind: ')" "port 80 needs CAP_NET_BIND_SERVICE"
	assert_eq "chown: EPERM" "$(line chown)" "chown needs CAP_CHOWN"
}

t_ambient_survives_exec()
{
	local b=$E2E_TMP/amb
	caps_bundle "$b" 1000 True \
		"{'bounding':['CAP_NET_BIND_SERVICE'],'effective':['CAP_NET_BIND_SERVICE'],'permitted':['CAP_NET_BIND_SERVICE'],'inheritable':['CAP_NET_BIND_SERVICE'],'ambient':['CAP_NET_BIND_SERVICE']}" \
		show bind 80 alower 10 exec show bind 80
	run_both "$b" caps-amb
	echo "$OUT"
	assert_eq "capget eff 0000000000000400 prm 0000000000000400 inh 0000000000000400" \
		"$(line capget)" "ambient: permitted and effective after the exec"
	assert_eq "bind: 0" "$(line 'bind: ')" "so port 80 binds"
	assert_eq "bind: EACCES" "$(printf '%s\n' "$OUT" | grep 'bind: ' | tail -1)" \
		"lowered, the next exec drops it"
	assert_eq "capget eff 0000000000000000 prm 0000000000000000 inh 0000000000000400" \
		"$(printf '%s\n' "$OUT" | grep capget | tail -1)" "capget after"
}

t_root_with_few_caps()
{
	# root under noNewPrivileges keeps what permitted said; without it,
	# the exec gives root its bounding set.
	local b=$E2E_TMP/root
	caps_bundle "$b" 0 True \
		"{'bounding':['CAP_CHOWN','CAP_NET_BIND_SERVICE'],'effective':['CAP_CHOWN'],'permitted':['CAP_CHOWN']}" \
		show bind 80 touch /tmp/f chown /tmp/f 5 bdrop 0 capset 401 401 0 securebits 1
	run_both "$b" caps-root
	echo "$OUT"
	assert_eq "capget eff 0000000000000001 prm 0000000000000001 inh 0000000000000000" \
		"$(line capget)" "root, noNewPrivileges: permitted as given"
	assert_eq "bind: EACCES" "$(line 'bind: ')" "uid 0 alone does not bind port 80"
	assert_eq "chown: 0" "$(line chown)" "CAP_CHOWN chowns"
	assert_eq "bdrop: EPERM" "$(line bdrop)" "PR_CAPBSET_DROP needs CAP_SETPCAP"
	assert_eq "capset: EPERM" "$(line capset)" "capset raises nothing"
	assert_eq "securebits: EPERM" "$(line "securebits: ")" "nor securebits"

	caps_bundle "$b" 0 False \
		"{'bounding':['CAP_CHOWN','CAP_NET_BIND_SERVICE'],'effective':['CAP_CHOWN'],'permitted':['CAP_CHOWN']}" \
		show bind 80
	run_both "$b" caps-root2
	assert_eq "capget eff 0000000000000401 prm 0000000000000401 inh 0000000000000000" \
		"$(line capget)" "root's exec without noNewPrivileges: the bounding set"
	assert_eq "bind: 0" "$(line 'bind: ')" "port 80 binds"
}

t_root_drops_privileges()
{
	# A daemon's way down: keep caps across setresuid, take back one
	# capability, exec: all gone (non-root, no ambient).
	local b=$E2E_TMP/drop
	caps_bundle "$b" 0 False \
		"{k:['CAP_CHOWN','CAP_SETUID','CAP_SETGID','CAP_SETPCAP','CAP_NET_BIND_SERVICE','CAP_KILL'] for k in ('bounding','effective','permitted')}" \
		bdrop 5 keepcaps 1 setresuid 1000 1000 1000 show capset 400 5e1 0 bind 80 exec show bind 80
	run_both "$b" caps-drop
	echo "$OUT"
	assert_eq "bdrop: 0" "$(line bdrop)" "CAP_SETPCAP drops from the bounding set"
	assert_eq "capget eff 0000000000000000 prm 00000000000005e1 inh 0000000000000000" \
		"$(line capget)" "keepcaps: permitted kept, effective cleared"
	assert_eq "bset-read 00000000000005c1 ambient-is-set 0000000000000000 past-last 22" \
		"$(line bset-read)" "CAP_KILL left the bounding set"
	assert_eq "no_new_privs 0 keepcaps 1 securebits 16" "$(line no_new_privs)" "keepcaps"
	assert_eq "capset: 0" "$(line capset)" "effective from permitted"
	assert_eq "bind: 0" "$(line 'bind: ')" "and it binds port 80"
	assert_eq "capget eff 0000000000000000 prm 0000000000000000 inh 0000000000000000" \
		"$(printf '%s\n' "$OUT" | grep capget | tail -1)" "the exec dropped all"
	assert_eq "no_new_privs 0 keepcaps 0 securebits 0" \
		"$(printf '%s\n' "$OUT" | grep no_new_privs | tail -1)" "exec clears keepcaps"
}

t_exec_gets_its_own_sets()
{
	# `exec` with a process.json: its capabilities, not the container's;
	# without one, the container's config's.
	local b=$E2E_TMP/ex rt root out1 out2
	make_bundle "$b" '["sleep","30"]' \
		"c['process']['noNewPrivileges']=False" \
		"c['process']['capabilities']={k:['CAP_CHOWN','CAP_KILL'] for k in ('bounding','effective','permitted')}" ||
		fail "bundle"
	cp "$CAPCHK" "$b/rootfs/bin/capchk" || fail "rootfs"
	python3 - "$b/process.json" <<'PY' || fail "process.json"
import json, sys
json.dump({"args": ["/bin/capchk", "show"], "cwd": "/", "env": ["PATH=/bin"],
           "user": {"uid": 1000, "gid": 1000}, "noNewPrivileges": True,
           "capabilities": {k: ["CAP_KILL"] for k in
                            ("bounding", "effective", "permitted", "inheritable", "ambient")}},
          open(sys.argv[1], "w"))
# a process.json without capabilities: the container's, not root's all
json.dump({"args": ["/bin/capchk", "show"], "cwd": "/", "env": ["PATH=/bin"],
           "user": {"uid": 0, "gid": 0}},
          open(sys.argv[1].replace("process.json", "nocaps.json"), "w"))
PY
	for rt in "$MOAT" $RUNC; do
		root=$E2E_TMP/ex-root-$(basename "$rt")
		capture timeout -k 5 30 "$rt" --root "$root" run -d --bundle "$b" caps-ex
		assert_eq 0 "$STATUS" "$rt: started"
		capture timeout -k 5 30 "$rt" --root "$root" exec --process "$b/process.json" caps-ex
		assert_eq 0 "$STATUS" "$rt: exec --process"
		out1=$OUT
		capture timeout -k 5 30 "$rt" --root "$root" exec caps-ex /bin/capchk show
		assert_eq 0 "$STATUS" "$rt: exec"
		out2=$OUT
		capture timeout -k 5 30 "$rt" --root "$root" exec --process "$b/nocaps.json" caps-ex
		assert_eq 0 "$STATUS" "$rt: exec --process without capabilities"
		assert_eq "capget eff 0000000000000021 prm 0000000000000021 inh 0000000000000000" \
			"$(printf '%s\n' "$OUT" | grep capget)" "$rt: a process.json without capabilities gets the config's, never more"
		timeout 20 "$rt" --root "$root" delete --force caps-ex >/dev/null 2>&1
		echo "$rt --process: $out1"
		echo "$rt: $out2"
		assert_eq "capget eff 0000000000000020 prm 0000000000000020 inh 0000000000000020" \
			"$(printf '%s\n' "$out1" | grep capget)" "$rt: process.json's sets, ambient through the exec"
		assert_eq "NoNewPrivs:	1" "$(printf '%s\n' "$out1" | grep NoNewPrivs)" "$rt: process.json's noNewPrivileges"
		assert_eq "capget eff 0000000000000021 prm 0000000000000021 inh 0000000000000000" \
			"$(printf '%s\n' "$out2" | grep capget)" "$rt: the config's sets"
		assert_eq "NoNewPrivs:	0" "$(printf '%s\n' "$out2" | grep NoNewPrivs)" "$rt: the config's noNewPrivileges"
	done
}

t_config_errors_and_unknown_names()
{
	local b=$E2E_TMP/bad
	caps_bundle "$b" 0 False "{'effective':['CAP_KILL']}" show
	capture "$MOAT" --root "$E2E_TMP/moat-root" run --bundle "$b" caps-bad
	assert_ne 0 "$STATUS" "effective beyond permitted: refused"
	assert_contains "$ERR" "process.capabilities.effective: CAP_KILL is not permitted" "names the set"
	[ -n "$RUNC" ] && {
		capture "$RUNC" --root "$E2E_TMP/runc-root" run --bundle "$b" caps-bad
		assert_ne 0 "$STATUS" "runc refuses it too"
	}
	# An unknown name is left out with a warning, as runc does.
	caps_bundle "$b" 0 True "{'bounding':['CAP_CHOWN','CAP_NOT_YET'],'permitted':['CAP_CHOWN'],'effective':['CAP_CHOWN']}" show
	run_both "$b" caps-unknown
	assert_contains "$ERR" "process.capabilities.bounding[1]: unknown capability \`CAP_NOT_YET\`, ignored" "warned"
	assert_eq "bset-read 0000000000000001 ambient-is-set 0000000000000000 past-last 22" \
		"$(line bset-read)" "the known one is there"
}

t_moat_do_root_and_checks()
{
	# moat do: root with every capability, as in a fresh user namespace;
	# the checks ask the capability, so dropping it refuses what it
	# allows (caps_checks.py prints the same natively, as root).
	local want
	capture "$MOAT" do -- "$CAPCHK" show setuid 1000 show bind 80
	assert_eq 0 "$STATUS" "ran"
	assert_eq "capget eff 000001ffffffffff prm 000001ffffffffff inh 0000000000000000" \
		"$(line capget)" "root: all of them"
	assert_eq "$(printf 'CapBnd:\t000001ffffffffff')" "$(line CapBnd)" "bounding: all"
	assert_eq "capget eff 0000000000000000 prm 0000000000000000 inh 0000000000000000" \
		"$(printf '%s\n' "$OUT" | grep capget | tail -1)" "setuid(1000) cleared them"
	assert_eq "bind: EACCES" "$(line 'bind: ')" "uid 1000 binds no port 80"
	cp "$HERE/caps_checks.py" "$E2E_TMP/caps_checks.py"
	rm -rf /tmp/caps-checks
	want=$(python3 "$E2E_TMP/caps_checks.py" 2>&1)
	rm -rf /tmp/caps-checks
	echo "native: $want"
	capture "$MOAT" do -- python3 "$E2E_TMP/caps_checks.py"
	assert_eq "$want" "$OUT" "the checks as natively"
	assert_contains "$OUT" "without them: Permission denied" "root without DAC_OVERRIDE"
	assert_contains "$OUT" "uid 1000 signals root's process: Operation not permitted" "kill"
}

run_test user_gets_nothing_permitted t_user_gets_nothing_permitted
run_test ambient_survives_exec t_ambient_survives_exec
run_test root_with_few_caps t_root_with_few_caps
run_test root_drops_privileges t_root_drops_privileges
run_test exec_gets_its_own_sets t_exec_gets_its_own_sets
run_test config_errors_and_unknown_names t_config_errors_and_unknown_names
run_test moat_do_root_and_checks t_moat_do_root_and_checks
e2e_done
