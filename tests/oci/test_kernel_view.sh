#!/usr/bin/env bash
# What the container sees of its kernel through config.json: linux.devices
# as nodes of /dev, linux.sysctl in /proc/sys and in behaviour, and its
# /proc/self/{uid_map,gid_map,oom_score_adj,oom_score}; each against runc
# where runc is installed, since runc's answer is the right one.
. "$(dirname "$0")/../e2e/lib.sh"
. "$(dirname "$0")/lib_oci.sh"

RUNC=$(command -v runc || true)

# run_both NAME BUNDLE: OUT_MOAT (and OUT_RUNC, when runc is here) from
# `run` of BUNDLE under each; fails the case if one does not run.
run_both()
{
	local name=$1 b=$2
	capture timeout -k 5 30 "$MOAT" --root "$E2E_TMP/moat-root" run --bundle "$b" "$name"
	assert_eq 0 "$STATUS" "moat ran it: $ERR"
	OUT_MOAT=$OUT
	OUT_RUNC=
	[ -n "$RUNC" ] || return 0
	capture timeout -k 5 30 "$RUNC" --root "$E2E_TMP/runc-root" run --bundle "$b" "$name"
	assert_eq 0 "$STATUS" "runc ran it: $ERR"
	OUT_RUNC=$OUT
}

DEVICES='[
 {"path":"/dev/test1","type":"c","major":10,"minor":666,"fileMode":432,"uid":0,"gid":0},
 {"path":"/dev/test2","type":"b","major":8,"minor":666,"fileMode":432,"uid":5,"gid":6},
 {"path":"/dev/test3","type":"p","major":8,"minor":666,"fileMode":432},
 {"path":"/dev/net/tun","type":"c","major":10,"minor":200},
 {"path":"/dev/x9","type":"u","major":1,"minor":5},
 {"path":"/dev/null","type":"c","major":1,"minor":5,"fileMode":438}
]'

t_devices_are_nodes_as_runc_makes_them()
{
	local b=$E2E_TMP/dev
	# Type, number, mode and owner of each, the directory a path implies,
	# and what reading them gives: /dev/null given as 1:5 is zero, and
	# the FIFO carries bytes from a writer to a reader.
	make_bundle "$b" '["sh","-c","stat -c \"%n %F %t:%T %a %u:%g\" /dev/test1 /dev/test2 /dev/test3 /dev/net /dev/net/tun /dev/x9 /dev/null; ls /dev/net; head -c 3 /dev/null | od -An -c; head -c 2 /dev/x9 | od -An -c; (echo through > /dev/test3 &); cat /dev/test3"]' \
		"c['linux']['devices']=json.loads('''$DEVICES''')" || fail "bundle"
	run_both devs "$b"
	assert_contains "$OUT_MOAT" "/dev/test1 character special file a:29a 660 0:0" "a char device's number and mode"
	assert_contains "$OUT_MOAT" "/dev/test2 block special file 8:29a 660 5:6" "a block device's number and owner"
	assert_contains "$OUT_MOAT" "/dev/test3 fifo 0:0 660 0:0" "a FIFO"
	assert_contains "$OUT_MOAT" "/dev/net directory 0:0 755 0:0" "the directory its path implies"
	assert_contains "$OUT_MOAT" "/dev/x9 character special file 1:5 666 0:0" "type u is a char device, mode 0666 by default"
	assert_contains "$OUT_MOAT" "through" "the FIFO is one"
	if [ -n "$RUNC" ]; then
		assert_eq "$OUT_RUNC" "$OUT_MOAT" "the same as under runc"
	fi
}

t_devices_open_as_the_sentrys_or_not_at_all()
{
	local b=$E2E_TMP/devopen
	# A number the sentry has no device for opens as Linux opens one no
	# driver has (runc's container gets EPERM from its device cgroup
	# first); one it has is that device, whatever its name.
	make_bundle "$b" '["sh","-c","cat /dev/test1; echo rc=$?; cat /dev/test2; echo rc=$?; echo x > /dev/x9 && echo wrote; head -c 4 /dev/net/tun; echo rc=$?"]' \
		"c['linux']['devices']=json.loads('''$DEVICES''')" || fail "bundle"
	capture timeout -k 5 30 "$MOAT" --root "$E2E_TMP/moat-root" run --bundle "$b" devopen
	assert_eq 0 "$STATUS" "ran: $ERR"
	assert_eq "rc=1
rc=1
wrote
rc=1" "$OUT" "no driver for 10:666, 8:666 or 10:200; 1:5 takes writes"
	assert_contains "$ERR" "can't open '/dev/test1': No such device or address" "ENXIO, as Linux says"
	assert_contains "$ERR" "can't open '/dev/test2': No such device or address" "a block device too"
}

t_devices_the_sandbox_cannot_make_are_refused()
{
	local b=$E2E_TMP/devbad
	make_bundle "$b" '["true"]' \
		"c['linux']['devices']=[{'path':'/tmp/x','type':'c','major':1,'minor':3}]" || fail "bundle"
	capture "$MOAT" --root "$E2E_TMP/moat-root" create --bundle "$b" devbad
	assert_eq 1 "$STATUS" "refused"
	assert_contains "$ERR" "linux.devices[0].path: \`/tmp/x\`: moat makes device nodes in the sandbox's /dev only" "names the field and says why"
	make_bundle "$b" '["true"]' \
		"c['linux']['devices']=[{'path':'/dev/pts/9','type':'c','major':1,'minor':3}]" || fail "bundle"
	capture "$MOAT" --root "$E2E_TMP/moat-root" create --bundle "$b" devbad
	assert_eq 1 "$STATUS" "a node in devpts: refused (runc fails too)"
	assert_contains "$ERR" "linux.devices[0].path: \`/dev/pts/9\`: in a filesystem of its own" "says why"
}

run_test devices_are_nodes_as_runc_makes_them t_devices_are_nodes_as_runc_makes_them
run_test devices_open_as_the_sentrys_or_not_at_all t_devices_open_as_the_sentrys_or_not_at_all
run_test devices_the_sandbox_cannot_make_are_refused t_devices_the_sandbox_cannot_make_are_refused
e2e_done
