#!/usr/bin/env bash
# What the container sees of its kernel through config.json: linux.devices
# as nodes of /dev, linux.sysctl in /proc/sys and in behaviour, and its
# /proc/self/{uid_map,gid_map,oom_score_adj,oom_score}; each against runc
# where runc is installed, since runc's answer is the right one.
. "$(dirname "$0")/../e2e/lib.sh"
. "$(dirname "$0")/lib_oci.sh"

RUNC=$(command -v runc || true)
HERE=$(cd "$(dirname "$0")" && pwd)

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

t_oom_score_adj_and_id_maps_as_runc_shows_them()
{
	local b=$E2E_TMP/oom
	# oomScoreAdj is where the process reads it, and it may raise it and
	# lower it again to 0 but not below (runc's container lacks
	# CAP_SYS_RESOURCE as moat's uid 1000 does); out of range or not a
	# number is EINVAL; the id maps are the initial namespace's and
	# written once.
	make_bundle "$b" '["sh","-c","cat /proc/self/uid_map /proc/self/gid_map /proc/self/oom_score_adj; echo 5 > /proc/self/oom_score_adj; echo rc=$?; cat /proc/self/oom_score_adj; echo -5 > /proc/self/oom_score_adj; echo rc=$?; echo 1001 > /proc/self/oom_score_adj; echo rc=$?; echo \" 7 \" > /proc/self/oom_score_adj; echo rc=$?; cat /proc/$$/oom_score_adj; echo 8x > /proc/self/oom_score_adj; echo rc=$?; echo 0 > /proc/self/uid_map; echo rc=$?; stat -c \"%a %u\" /proc/self/oom_score_adj /proc/self/oom_score /proc/self/uid_map /proc/self/gid_map"]' \
		"c['process']['oomScoreAdj']=100" \
		"c['process']['user']={'uid':1000,'gid':1000}" || fail "bundle"
	run_both oom "$b"
	assert_eq "         0          0 4294967295
         0          0 4294967295
100
rc=0
5
rc=1
rc=1
rc=0
7
rc=1
rc=1
644 1000
444 1000
644 1000
644 1000" "$OUT_MOAT" "moat's /proc/self"
	if [ -n "$RUNC" ]; then
		assert_eq "$OUT_RUNC" "$OUT_MOAT" "the same as under runc"
	fi

	# oom_score: Linux's scale, (1000 + adj + rss share) * 2 / 3, and 0
	# for -1000, which never is chosen.
	make_bundle "$b" '["sh","-c","cat /proc/self/oom_score; echo -1000 > /proc/self/oom_score_adj && cat /proc/self/oom_score"]' \
		"c['process']['oomScoreAdj']=100" || fail "bundle"
	capture timeout -k 5 30 "$MOAT" --root "$E2E_TMP/moat-root" run --bundle "$b" oom2
	assert_eq 0 "$STATUS" "ran: $ERR"
	local first
	first=$(head -1 <<<"$OUT")
	[ "$first" -ge 733 ] && [ "$first" -le 800 ] || fail "oom_score with adj 100 is $first, not about 733"
	assert_eq 0 "$(tail -1 <<<"$OUT")" "root may lower it to -1000: score 0"
}

t_id_maps_are_the_configs()
{
	local b=$E2E_TMP/maps
	make_bundle "$b" '["sh","-c","cat /proc/self/uid_map /proc/1/gid_map"]' \
		"c['linux']['namespaces'].append({'type':'user'})" \
		"c['linux']['uidMappings']=[{'containerID':0,'hostID':1000,'size':2000}]" \
		"c['linux']['gidMappings']=[{'containerID':0,'hostID':1000,'size':3000},{'containerID':5000,'hostID':9000,'size':1}]" ||
		fail "bundle"
	capture timeout -k 5 30 "$MOAT" --root "$E2E_TMP/moat-root" run --bundle "$b" maps
	assert_eq 0 "$STATUS" "ran: $ERR"
	assert_eq "         0       1000       2000
         0       1000       3000
      5000       9000          1" "$OUT" "as Linux prints them"
	make_bundle "$b" '["true"]' \
		"c['linux']['uidMappings']=[{'containerID':0,'hostID':1000}]" || fail "bundle"
	capture "$MOAT" --root "$E2E_TMP/moat-root" create --bundle "$b" maps2
	assert_eq 1 "$STATUS" "refused"
	assert_contains "$ERR" "linux.uidMappings[0]: size: required" "names the field"
}

SYSCTLS='{"kernel.shmmax":"65536","kernel.shm_rmid_forced":"1","kernel.msgmnb":"4096","kernel.sem":"250 32000 100 128","fs.mqueue.msg_max":"5","net.ipv4.ip_unprivileged_port_start":"80","net.ipv4.ip_forward":"0"}'

t_sysctls_change_behaviour_and_proc_sys()
{
	local b=$E2E_TMP/sysctl
	# What /proc/sys shows, and what the limits do to a process that is
	# not root: each set one is both, as under runc.
	make_bundle "$b" '["sh","-c","for f in kernel/shmmax kernel/shm_rmid_forced kernel/msgmnb kernel/sem fs/mqueue/msg_max net/ipv4/ip_unprivileged_port_start net/ipv4/ip_forward; do echo $f $(cat /proc/sys/$f); done; /bin/sysctl_probe"]' \
		"c['linux']['sysctl']=json.loads('$SYSCTLS')" \
		"c['process']['user']={'uid':1000,'gid':1000}" || fail "bundle"
	gcc -O1 -static -o "$b/rootfs/bin/sysctl_probe" "$HERE/sysctl_probe.c" ||
		fail "cannot build sysctl_probe.c"
	run_both sysctl "$b"
	assert_eq "kernel/shmmax 65536
kernel/shm_rmid_forced 1
kernel/msgmnb 4096
kernel/sem 250 32000 100 128
fs/mqueue/msg_max 5
net/ipv4/ip_unprivileged_port_start 80
net/ipv4/ip_forward 0
shmget 65536: ok
shmget 65537: Invalid argument
shmat: ok
after shmdt: Invalid argument
msg_qbytes: 4096
semget 250: ok
semget 251: Invalid argument
mq_open: ok
mq_maxmsg: 5
mq_open maxmsg 6: Invalid argument
bind 80: ok
bind 79: Permission denied" "$OUT_MOAT" "moat's"
	if [ -n "$RUNC" ]; then
		assert_eq "$OUT_RUNC" "$OUT_MOAT" "the same as under runc"
	fi
}

t_sysctls_the_sandbox_cannot_honour_are_refused()
{
	local b=$E2E_TMP/sysctlbad
	make_bundle "$b" '["true"]' "c['linux']['sysctl']={'net.ipv4.ip_forward':'1'}" || fail "bundle"
	capture "$MOAT" --root "$E2E_TMP/moat-root" create --bundle "$b" sb1
	assert_eq 1 "$STATUS" "ip_forward=1: refused"
	assert_contains "$ERR" "linux.sysctl.net.ipv4.ip_forward: not supported by moat: the sandbox's netstack never forwards packets" "says why"
	make_bundle "$b" '["true"]' "c['linux']['sysctl']={'kernel.shmmax':'68719476736'}" || fail "bundle"
	capture "$MOAT" --root "$E2E_TMP/moat-root" create --bundle "$b" sb2
	assert_eq 1 "$STATUS" "above the sentry's bound: refused"
	assert_contains "$ERR" "linux.sysctl.kernel.shmmax: \`68719476736\`: from 1 to 1073741824: the sentry holds" "says why"
	make_bundle "$b" '["true"]' "c['linux']['sysctl']={'vm.swappiness':'1'}" || fail "bundle"
	capture "$MOAT" --root "$E2E_TMP/moat-root" create --bundle "$b" sb3
	assert_eq 1 "$STATUS" "unknown: refused"
	assert_contains "$ERR" "linux.sysctl.vm.swappiness: not supported by moat (it honours" "names what it honours"
}

run_test devices_are_nodes_as_runc_makes_them t_devices_are_nodes_as_runc_makes_them
run_test devices_open_as_the_sentrys_or_not_at_all t_devices_open_as_the_sentrys_or_not_at_all
run_test devices_the_sandbox_cannot_make_are_refused t_devices_the_sandbox_cannot_make_are_refused
run_test oom_score_adj_and_id_maps_as_runc_shows_them t_oom_score_adj_and_id_maps_as_runc_shows_them
run_test id_maps_are_the_configs t_id_maps_are_the_configs
run_test sysctls_change_behaviour_and_proc_sys t_sysctls_change_behaviour_and_proc_sys
run_test sysctls_the_sandbox_cannot_honour_are_refused t_sysctls_the_sandbox_cannot_honour_are_refused
e2e_done
