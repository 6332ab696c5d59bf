#!/usr/bin/env bash
# linux.cgroupsPath: an OCI container's cgroups are where runc's cgroupfs
# driver puts them (an absolute path below each hierarchy's root, a
# relative one below the runtime's own cgroup, none: the ID), with
# linux.resources written there, the whole sandbox accounted there (what
# kubelet and cAdvisor read), removed at delete; hostile paths refused.
# runc, when installed, gives the expected placement and values.
. "$(dirname "$0")/../e2e/lib.sh"
. "$(dirname "$0")/lib_oci.sh"

RUNC=$(command -v runc || true)
CG=/sys/fs/cgroup
TOP=moat-e2e-cg-$$

if [ "$(id -u)" != 0 ] || [ "$(stat -fc %T $CG)" != tmpfs ] || [ ! -d $CG/memory ]; then
	# The v2 layout is written from the kernel's documentation
	# (docs/limits.md); these checks are v1's file names.
	echo "test_cgroups.sh: skipped: needs root and a cgroup v1 host"
	e2e_done
	exit 0
fi

# Containers a failed case left, then the cgroups made for the cases.
cg_cleanup()
{
	oci_cleanup
	[ -n "$RUNC" ] && for id in $("$RUNC" --root "$E2E_TMP/runc-root" list -q 2>/dev/null); do
		"$RUNC" --root "$E2E_TMP/runc-root" delete --force "$id" >/dev/null 2>&1
	done
	for d in $CG/*/$TOP $CG/*/"$(own memory)"/$TOP; do
		[ -d "$d" ] && find "$d" -depth -type d -exec rmdir {} + 2>/dev/null
	done
	e2e_cleanup
}
trap cg_cleanup EXIT

# own CTL: this shell's cgroup of CTL, as /proc/self/cgroup says.
own()
{
	awk -F: -v c="$1" '{ n = split($2, a, ","); for (i = 1; i <= n; i++) if (a[i] == c) print $3 }' /proc/self/cgroup
}

# The limits of the cases: runc writes each where the test reads it.
LIMITS='c["linux"]["resources"]={"memory":{"limit":104857600,"reservation":52428800,"swap":209715200,"swappiness":10,"disableOOMKiller":True,"kernel":1},"cpu":{"shares":512,"quota":50000,"period":100000,"cpus":"0","mems":"0"},"pids":{"limit":100}}'

# values DIR...: the limits as the cgroup files under each DIR say them
# (DIR: the path below each hierarchy's root).
values()
{
	local d=$1
	echo "memory $(cat $CG/memory/$d/memory.limit_in_bytes) $(cat $CG/memory/$d/memory.soft_limit_in_bytes)" \
		"$(cat $CG/memory/$d/memory.memsw.limit_in_bytes 2>/dev/null || echo noswap)" \
		"$(cat $CG/memory/$d/memory.swappiness) $(head -1 $CG/memory/$d/memory.oom_control)"
	echo "cpu $(cat $CG/cpu/$d/cpu.shares) $(cat $CG/cpu/$d/cpu.cfs_quota_us) $(cat $CG/cpu/$d/cpu.cfs_period_us)"
	echo "cpuset $(cat $CG/cpuset/$d/cpuset.cpus) $(cat $CG/cpuset/$d/cpuset.mems)"
}

# pid_of RUNTIME ROOT ID
pid_of()
{
	"$1" --root "$2" state "$3" | python3 -c 'import json,sys; print(json.load(sys.stdin)["pid"])'
}

t_an_absolute_path_holds_the_limits()
{
	local b=$E2E_TMP/abs want got pid
	make_bundle "$b" '["sleep","30"]' "c['linux']['cgroupsPath']='/$TOP/abs'" "$LIMITS" || fail "bundle"
	want=$'memory 104857600 52428800 209715200 10 oom_kill_disable 1\ncpu 512 50000 100000\ncpuset 0 0'
	if [ -n "$RUNC" ]; then
		"$RUNC" --root "$E2E_TMP/runc-root" create --bundle "$b" abs-runc </dev/null >/dev/null 2>&1 || fail "runc create"
		assert_eq "$want" "$(values $TOP/abs)" "runc: the limits at cgroupsPath"
		"$RUNC" --root "$E2E_TMP/runc-root" delete --force abs-runc
		[ ! -e $CG/memory/$TOP/abs ] || fail "runc: removed at delete"
	fi
	capture moat --root "$E2E_TMP/root" create --bundle "$b" abs-moat
	assert_eq 0 "$STATUS" "create"
	assert_eq "$want" "$(values $TOP/abs)" "the limits at cgroupsPath, as runc's"
	pid=$(pid_of "$MOAT" "$E2E_TMP/root" abs-moat)
	got=$(grep -E '^[0-9]+:(memory|pids|cpu|cpuset|freezer|cpuacct|devices|blkio):' /proc/$pid/cgroup | cut -d: -f3 | sort -u)
	assert_eq "/$TOP/abs" "$got" "the container's pid is in cgroupsPath in every hierarchy"
	# moat's parts below it: the guests' own memory limit and pids limit
	[ -d $CG/memory/$TOP/abs/guest ] || fail "no guest/ below cgroupsPath"
	assert_eq 102 "$(cat $CG/pids/$TOP/abs/guest/pids.max)" "the guests' pids limit"
	assert_eq 0 "$(cat $CG/cpuset/$TOP/abs/guest/cpuset.cpus)" "the guests' cpuset"
	capture moat --root "$E2E_TMP/root" delete --force abs-moat
	assert_eq 0 "$STATUS" "delete"
	for d in $CG/*/$TOP/abs; do
		[ ! -e "$d" ] || fail "$d left after delete"
	done
}

t_a_relative_path_is_below_the_runtimes_cgroup()
{
	local b=$E2E_TMP/rel pid m p
	make_bundle "$b" '["sleep","30"]' "c['linux']['cgroupsPath']='$TOP/rel'" || fail "bundle"
	m=$(own memory)
	p=$(own pids)
	if [ -n "$RUNC" ]; then
		"$RUNC" --root "$E2E_TMP/runc-root" create --bundle "$b" rel-runc </dev/null >/dev/null 2>&1 || fail "runc create"
		pid=$(pid_of "$RUNC" "$E2E_TMP/runc-root" rel-runc)
		assert_contains "$(cat /proc/$pid/cgroup)" ":memory:${m%/}/$TOP/rel" "runc: below its own memory cgroup"
		"$RUNC" --root "$E2E_TMP/runc-root" delete --force rel-runc
	fi
	capture moat --root "$E2E_TMP/root" create --bundle "$b" rel-moat
	assert_eq 0 "$STATUS" "create"
	pid=$(pid_of "$MOAT" "$E2E_TMP/root" rel-moat)
	assert_contains "$(cat /proc/$pid/cgroup)" ":memory:${m%/}/$TOP/rel" "below the runtime's own memory cgroup"
	assert_contains "$(cat /proc/$pid/cgroup)" ":pids:${p%/}/$TOP/rel" "and pids cgroup"
	capture moat --root "$E2E_TMP/root" delete --force rel-moat
	[ ! -e "$CG/memory${m%/}/$TOP/rel" ] || fail "left after delete"
}

t_no_path_is_the_id()
{
	local b=$E2E_TMP/none pid m
	make_bundle "$b" '["sleep","30"]' || fail "bundle"
	m=$(own memory)
	capture moat --root "$E2E_TMP/root" create --bundle "$b" $TOP-none
	assert_eq 0 "$STATUS" "create"
	pid=$(pid_of "$MOAT" "$E2E_TMP/root" $TOP-none)
	assert_contains "$(cat /proc/$pid/cgroup)" ":memory:${m%/}/$TOP-none" "runc's default: the ID, relative"
	capture moat --root "$E2E_TMP/root" delete --force $TOP-none
	[ ! -e "$CG/memory${m%/}/$TOP-none" ] || fail "left after delete"
}

t_the_sandbox_is_accounted_at_the_path()
{
	# A guest that holds 48 MiB: cgroupsPath's usage counts it (the
	# guests are in guest/, below it), as kubelet reads it.
	local b=$E2E_TMP/acct before after i
	cat >"$E2E_TMP/hold.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
int main(int argc, char **argv)
{
	size_t n = (size_t)atoi(argv[1]) << 20;
	char *p = malloc(n);
	memset(p, 1, n);
	printf("held\n");
	fflush(stdout);
	sleep(30);
	return p[n - 1] == 1 ? 0 : 1;
}
C
	gcc -static -O1 -o "$E2E_TMP/hold" "$E2E_TMP/hold.c" || fail "cannot build hold.c"
	make_bundle "$b" '["/bin/hold","48"]' "c['linux']['cgroupsPath']='/$TOP/acct'" \
		'c["linux"]["resources"]={"memory":{"limit":268435456}}' || fail "bundle"
	cp "$E2E_TMP/hold" "$b/rootfs/bin/hold" || fail "rootfs"
	capture moat --root "$E2E_TMP/root" create --bundle "$b" acct-moat
	assert_eq 0 "$STATUS" "create"
	before=$(cat $CG/memory/$TOP/acct/memory.usage_in_bytes)
	moat --root "$E2E_TMP/root" start acct-moat >"$E2E_TMP/acct.out" 2>&1 </dev/null || fail "start"
	for i in $(seq 100); do
		after=$(cat $CG/memory/$TOP/acct/memory.usage_in_bytes)
		[ $((after - before)) -ge $((40 << 20)) ] && break
		sleep 0.1
	done
	# the guest holds 48 MiB; the rest of the sandbox may give back a
	# little meanwhile (its start's pages): 40 MiB or more is it
	[ $((after - before)) -ge $((40 << 20)) ] ||
		fail "memory.usage_in_bytes rose by $((after - before)), not about 48 MiB"
	[ "$(cat $CG/pids/$TOP/acct/pids.current)" -ge 2 ] || fail "pids.current counts the sentry and the guest"
	[ "$(cat $CG/cpuacct/$TOP/acct/cpuacct.usage)" -gt 0 ] || fail "cpuacct.usage"
	capture moat --root "$E2E_TMP/root" delete --force acct-moat
	[ ! -e $CG/memory/$TOP/acct ] || fail "left after delete"
}

t_a_stopped_container_is_gone_at_delete()
{
	local b=$E2E_TMP/stop d
	make_bundle "$b" '["true"]' "c['linux']['cgroupsPath']='/$TOP/stop'" || fail "bundle"
	capture moat --root "$E2E_TMP/root" create --bundle "$b" stop-moat
	assert_eq 0 "$STATUS" "create"
	[ -d $CG/pids/$TOP/stop/guest ] || fail "made at create"
	capture moat --root "$E2E_TMP/root" start stop-moat
	wait_status "$MOAT" "$E2E_TMP/root" stop-moat stopped || fail "not stopped"
	capture moat --root "$E2E_TMP/root" delete stop-moat
	assert_eq 0 "$STATUS" "delete"
	for d in $CG/*/$TOP/stop; do
		[ ! -e "$d" ] || fail "$d left after delete"
	done
}

t_hostile_paths_are_refused()
{
	local b=$E2E_TMP/hostile p m
	m=$(own memory)
	mkdir -p $CG/memory/$TOP/theirs && chown 65534 $CG/memory/$TOP/theirs || fail "setup"
	for p in "/" "/$TOP/../.." "$TOP/../../x" "/$TOP/theirs/c" "/$TOP/cgroup.procs/c" "${m:-/}"; do
		make_bundle "$b" '["true"]' "c['linux']['cgroupsPath']='$p'" || fail "bundle"
		capture moat --root "$E2E_TMP/root" create --bundle "$b" hostile
		assert_ne 0 "$STATUS" "cgroupsPath $p refused"
		assert_contains "$ERR" "linux.cgroupsPath \`$p\`" "the message names the field"
		[ -z "$(ls -A "$E2E_TMP/root" 2>/dev/null)" ] || fail "state left behind"
		moat --root "$E2E_TMP/root" delete --force hostile >/dev/null 2>&1
	done
	[ ! -e $CG/memory/$TOP/theirs/c ] || fail "made below another user's cgroup"
	# the messages, one of each kind
	make_bundle "$b" '["true"]' "c['linux']['cgroupsPath']='/'" || fail "bundle"
	capture moat --root "$E2E_TMP/root" create --bundle "$b" hostile
	assert_contains "$ERR" "names the root of the cgroup hierarchy" "the root"
	make_bundle "$b" '["true"]' "c['linux']['cgroupsPath']='a/../../b'" || fail "bundle"
	capture moat --root "$E2E_TMP/root" create --bundle "$b" hostile
	assert_contains "$ERR" "\`..\` is not allowed" "dot-dot"
	make_bundle "$b" '["true"]' "c['linux']['cgroupsPath']='/$TOP/theirs/c'" || fail "bundle"
	capture moat --root "$E2E_TMP/root" create --bundle "$b" hostile
	assert_contains "$ERR" "another user's cgroup" "another user's"
	if [ "${m:-/}" != / ]; then
		make_bundle "$b" '["true"]' "c['linux']['cgroupsPath']='${m%/*}'" || fail "bundle"
		capture moat --root "$E2E_TMP/root" create --bundle "$b" hostile
		assert_contains "$ERR" "names the runtime's own cgroup" "an ancestor of the runtime's"
	fi
}

t_two_containers_cannot_share_a_path()
{
	# runc 1.1 warns and goes on (1.2 refuses): two sandboxes in one
	# cgroupsPath would share their guests' cgroup. Both at once: one.
	local b=$E2E_TMP/two ok=0 i
	make_bundle "$b" '["sleep","30"]' "c['linux']['cgroupsPath']='/$TOP/two'" || fail "bundle"
	(moat --root "$E2E_TMP/root" create --bundle "$b" two-a </dev/null >"$E2E_TMP/two-a" 2>&1; echo $? >>"$E2E_TMP/two-a") &
	(moat --root "$E2E_TMP/root" create --bundle "$b" two-b </dev/null >"$E2E_TMP/two-b" 2>&1; echo $? >>"$E2E_TMP/two-b") &
	wait
	for i in a b; do
		[ "$(tail -1 "$E2E_TMP/two-$i")" = 0 ] && ok=$((ok + 1))
	done
	assert_eq 1 "$ok" "one of two concurrent creates succeeds ($(cat "$E2E_TMP"/two-?))"
	assert_contains "$(cat "$E2E_TMP"/two-?)" "linux.cgroupsPath \`/$TOP/two\`" "the other names the field"
	capture moat --root "$E2E_TMP/root" create --bundle "$b" two-c
	assert_ne 0 "$STATUS" "a third, later, is refused"
	assert_contains "$ERR" "already holds processes" "it says why"
	moat --root "$E2E_TMP/root" delete --force two-a >/dev/null 2>&1
	moat --root "$E2E_TMP/root" delete --force two-b >/dev/null 2>&1
	[ ! -e $CG/memory/$TOP/two ] || fail "left after delete"
}

run_test an_absolute_path_holds_the_limits t_an_absolute_path_holds_the_limits
run_test a_relative_path_is_below_the_runtimes_cgroup t_a_relative_path_is_below_the_runtimes_cgroup
run_test no_path_is_the_id t_no_path_is_the_id
run_test the_sandbox_is_accounted_at_the_path t_the_sandbox_is_accounted_at_the_path
run_test a_stopped_container_is_gone_at_delete t_a_stopped_container_is_gone_at_delete
run_test hostile_paths_are_refused t_hostile_paths_are_refused
run_test two_containers_cannot_share_a_path t_two_containers_cannot_share_a_path
e2e_done
