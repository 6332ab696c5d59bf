#!/usr/bin/env bash
# The sandbox's /sys: a read-only sysfs of its own, whose CPUs are the
# sandbox's CPU set, whose interfaces are the netstack's, and which shows
# nothing of the host's hardware.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../oci/lib_oci.sh"

# The counts glibc, coreutils and Python take from /sys (get_nprocs_conf
# and get_nprocs read devices/system/cpu) and from sched_getaffinity:
# "<nproc> <nproc --all> <_NPROCESSORS_CONF> <_NPROCESSORS_ONLN>
#  <os.cpu_count()> <affinity> <online>".
cpu_counts='echo $(nproc) $(nproc --all) $(getconf _NPROCESSORS_CONF) $(getconf _NPROCESSORS_ONLN) $(python3 -c "import os; print(os.cpu_count(), len(os.sched_getaffinity(0)))") $(cat /sys/devices/system/cpu/online)'

t_cpus_are_the_sandbox_set()
{
	local n online
	n=$($PY -c 'import os; print(len(os.sched_getaffinity(0)))')
	online=$(cat /sys/devices/system/cpu/online)
	# natively (no affinity narrower than the machine here): the host's
	capture native sh -c "$cpu_counts"
	assert_eq "$n $n $n $n $n $n $online" "$OUT" "natively, every count is the machine's"
	capture moat do -- sh -c "$cpu_counts"
	assert_eq 0 "$STATUS" "the counts run: $ERR"
	assert_eq "$n $n $n $n $n $n $online" "$OUT" "inside, the same"
	capture moat do -- sh -c 'ls -d /sys/devices/system/cpu/cpu[0-9]* | wc -l; cat /sys/devices/system/cpu/possible /sys/devices/system/cpu/present /sys/devices/system/node/node0/cpulist'
	assert_eq "$n
$online
$online
$online" "$OUT" "one directory a CPU; possible, present and node0 alike"

	# Narrower than the machine: the sandbox's set, everywhere (runc
	# would show the host's /sys, and glibc count the host's CPUs).
	[ "$n" -ge 2 ] || { echo "one CPU: the narrower set is not tried"; return 0; }
	local last
	last=$($PY -c 'import os; print(max(os.sched_getaffinity(0)))')
	capture taskset -c "$last" "$MOAT" do -- sh -c "$cpu_counts; ls /sys/devices/system/cpu | grep '^cpu[0-9]'; cat /sys/devices/system/cpu/cpu$last/topology/core_id"
	assert_eq "1 1 1 1 1 1 $last
cpu$last
$last" "$OUT" "pinned to CPU $last: one CPU, that one"
}

t_mount_and_statfs()
{
	capture moat do -- sh -c 'grep " /sys " /proc/self/mountinfo | cut -d" " -f4-; grep " /sys " /proc/mounts; stat -f -c "%t" /sys; python3 -c "
import os
a, b = os.stat(\"/sys\"), os.stat(\"/sys/kernel\")
print(a.st_dev == b.st_dev, a.st_dev != os.stat(\"/proc\").st_dev, a.st_dev != os.stat(\"/\").st_dev)
print(os.statvfs(\"/sys\").f_flag & (os.ST_RDONLY | os.ST_NOSUID | os.ST_NODEV | os.ST_NOEXEC))"'
	assert_eq 0 "$STATUS" "the probe runs: $ERR"
	assert_eq "/ /sys ro,nosuid,nodev,noexec,relatime - sysfs sysfs ro
sysfs /sys sysfs ro,nosuid,nodev,noexec,relatime 0 0
62656572
True True True
15" "$OUT" "a sysfs mount as runc's, SYSFS_MAGIC, a device of its own"
}

# Every change refused with EROFS, as under runc's read-only sysfs: root's
# and another user's, to a file, a new name, a directory, a link.
t_writes_refused()
{
	cat >"$E2E_TMP/sysw.py" <<'PY'
import errno, os, sys
def tr(what, f):
    try:
        f()
        print(what, "done")
    except OSError as e:
        print(what, errno.errorcode[e.errno])
def probe():
    thp = "/sys/kernel/mm/transparent_hugepage/enabled"
    tr("write", lambda: os.open(thp, os.O_WRONLY))
    tr("rdwr", lambda: os.open("/sys/devices/system/cpu/online", os.O_RDWR))
    tr("trunc", lambda: os.open("/sys/class/net/lo/mtu", os.O_RDONLY | os.O_TRUNC))
    tr("create", lambda: os.open("/sys/new", os.O_CREAT | os.O_WRONLY, 0o644))
    tr("mkdir", lambda: os.mkdir("/sys/fs/cgroup/x"))
    tr("symlink", lambda: os.symlink("a", "/sys/kernel/l"))
    tr("unlink", lambda: os.unlink("/sys/class/net/lo"))
    tr("rmdir", lambda: os.rmdir("/sys/block"))
    tr("chmod", lambda: os.chmod(thp, 0o666))
    tr("rename", lambda: os.rename("/sys/block", "/sys/b2"))
probe()
sys.stdout.flush()
if os.fork() == 0:
    os.setgid(65534)
    os.setuid(65534)
    probe()
    sys.stdout.flush()
    os._exit(0)
os.wait()
PY
	chmod 644 "$E2E_TMP/sysw.py"
	capture moat do -- $PY "$E2E_TMP/sysw.py"
	assert_eq 0 "$STATUS" "the probe runs: $ERR"
	local want="write EROFS
rdwr EROFS
trunc EROFS
create EROFS
mkdir EROFS
symlink EROFS
unlink EROFS
rmdir EROFS
chmod EROFS
rename EROFS"
	assert_eq "$want
$want" "$OUT" "root and nobody: EROFS"
}

t_interfaces()
{
	capture moat do -- sh -c 'ls /sys/class/net; readlink /sys/class/net/lo; cd /sys/class/net/lo && cat address mtu flags ifindex type operstate'
	assert_eq "lo
../../devices/virtual/net/lo
00:00:00:00:00:00
65536
0x9
1
772
unknown" "$OUT" "without --net: lo, as netlink has it"
	net_ok || { echo "no namespaces here: --net slirp is not tried"; return 0; }
	capture moat do --net slirp -- sh -c 'ls /sys/class/net | tr "\n" " "; cd /sys/class/net/eth0 && cat address mtu flags ifindex type operstate; ip -o link'
	assert_eq 0 "$STATUS" "with --net slirp: $ERR"
	assert_contains "$OUT" "eth0 lo" "eth0 and lo"
	assert_contains "$OUT" "52:54:00:12:34:56
1500
0x1003
2
1
up" "the netstack's eth0"
	assert_contains "$OUT" "link/ether 52:54:00:12:34:56" "the MAC netlink gives"
}

# No host device, block device, PCI tree, DMI table or MAC address.
t_nothing_of_the_host()
{
	capture moat do -- sh -c 'for d in block bus dev/block dev/char firmware module fs/cgroup; do ls -A /sys/$d; done; ls /sys/class; ls /sys/devices; find /sys -name "*pci*" -o -name "dmi" -o -name "serial*" -o -name "*uuid*"'
	assert_eq "net
system
virtual" "$OUT" "empty directories, class/net alone, devices/system and virtual alone"
	local mac found=
	capture moat do --net slirp -- sh -c 'cat $(find /sys -type f) 2>&1'
	for mac in $(cat /sys/class/net/*/address 2>/dev/null | sort -u); do
		[ "$mac" = 00:00:00:00:00:00 ] && continue
		[ "$mac" = 52:54:00:12:34:56 ] && continue
		case $OUT in *"$mac"*) found="$found $mac" ;; esac
	done
	assert_eq "" "$found" "no host MAC address anywhere in /sys"
}

# THP: the host kernel maps the guest's memory, so its setting.
t_thp_is_the_hosts()
{
	local d=/sys/kernel/mm/transparent_hugepage f want
	[ -r $d/enabled ] || { echo "no THP on this host"; return 0; }
	want=$(cd $d && cat enabled defrag hpage_pmd_size)
	capture moat do -- sh -c "cd $d && cat enabled defrag hpage_pmd_size"
	assert_eq "$want" "$OUT" "enabled, defrag, hpage_pmd_size are the host's"
}

# libnuma's view: one node, the sandbox's CPUs and memory.
t_numa_node()
{
	capture moat do --memory 512m -- sh -c 'cd /sys/devices/system/node && cat possible online has_cpu node0/distance; head -1 node0/meminfo; grep MemTotal /proc/meminfo'
	assert_eq 0 "$STATUS" "$ERR"
	assert_contains "$OUT" "0
0
0
10
Node 0 MemTotal:         524288 kB" "node 0 alone, with --memory's size"
	assert_match "$OUT" 'MemTotal: +524288 kB' "as /proc/meminfo says"
}

# An OCI bundle: the default config mounts sysfs at /sys, and the sandbox
# shows it there, in its order; a config without it has no sysfs.
t_oci_bundle()
{
	local b=$E2E_TMP/sysb root=$E2E_TMP/sysroot
	make_bundle "$b" '["sh","-c","cut -d\" \" -f5,8,9 /proc/self/mountinfo; cat /sys/devices/system/cpu/online"]' || fail "bundle"
	grep -q '"sysfs"' "$b/config.json" || fail "moat spec mounts no sysfs"
	capture moat --root "$root" run --bundle "$b" sys1
	assert_eq 0 "$STATUS" "the container runs: $ERR"
	assert_contains "$OUT" "/dev/mqueue mqueue mqueue
/sys sysfs sysfs" "after /dev/mqueue, as the config orders them"
	assert_contains "$OUT" "/sys/firmware tmpfs tmpfs" "the default maskedPaths' /sys/firmware masked, as runc does"
	assert_contains "$OUT" "$(cat /sys/devices/system/cpu/online)" "the CPUs"
	make_bundle "$b.no" '["sh","-c","grep -c sysfs /proc/self/mountinfo; ls -A /sys | wc -l"]' \
		"c['mounts'] = [m for m in c['mounts'] if m['type'] != 'sysfs']" || fail "bundle"
	capture moat --root "$root" run --bundle "$b.no" sys2
	assert_eq "0
0" "$OUT" "no sysfs mount in config.json: none, the rootfs's empty /sys"
}

run_test "CPUs: the sandbox's set (nproc, getconf, os.cpu_count)" t_cpus_are_the_sandbox_set
run_test "a sysfs mount: mountinfo, statfs, st_dev" t_mount_and_statfs
run_test "writes, creates, mkdir: EROFS" t_writes_refused
run_test "class/net: the netstack's interfaces" t_interfaces
run_test "nothing of the host's hardware" t_nothing_of_the_host
run_test "THP: the host's" t_thp_is_the_hosts
run_test "devices/system/node: one node" t_numa_node
run_test "OCI: the config's sysfs mount" t_oci_bundle
e2e_done
