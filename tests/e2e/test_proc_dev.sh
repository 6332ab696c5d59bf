#!/usr/bin/env bash
# The sandbox's own /proc and /dev, virtual pids.
. "$(dirname "$0")/lib.sh"
HERE=$(cd "$(dirname "$0")" && pwd)

t_pid1_ppid0()
{
	capture moat do -- $PY -c 'import os; print(os.getpid(), os.getppid())'
	assert_eq 0 "$STATUS" "python exits 0"
	assert_eq "1 0" "$OUT" "the first guest process is pid 1 and its parent is 0"
}

t_child_pids()
{
	local prog='
import os
pid = os.fork()
if pid == 0:
    print("child", os.getppid(), flush=True)
    os._exit(0)
os.waitpid(pid, 0)
print("parent sees child pid", "small" if 1 < pid < 100 else pid)'
	capture moat do -- $PY -c "$prog"
	assert_eq "child 1
parent sees child pid small" "$OUT" "a child sees parent 1 and has a small virtual pid"
}

t_proc_self_exe()
{
	capture moat do -- /bin/readlink /proc/self/exe
	assert_eq 0 "$STATUS" "readlink exits 0"
	assert_eq "$(readlink -f /bin/readlink)" "$OUT" "/proc/self/exe names the program"
}

t_proc_self_status()
{
	capture moat do -- /bin/cat /proc/self/status
	assert_eq 0 "$STATUS" "cat /proc/self/status exits 0"
	assert_match "$OUT" '^Pid:[[:space:]]+1$' "status shows Pid: 1"
	assert_match "$OUT" '^PPid:[[:space:]]+0$' "status shows PPid: 0"
	assert_match "$OUT" '^Name:[[:space:]]+cat$' "status shows Name: cat"
}

t_proc_self_cmdline()
{
	local out
	out=$(moat do -- /bin/cat /proc/self/cmdline | tr '\0' '|')
	assert_eq "/bin/cat|/proc/self/cmdline|" "$out" "/proc/self/cmdline holds argv"
}

t_proc_self_fd()
{
	capture moat do -- /bin/ls /proc/self/fd
	assert_eq 0 "$STATUS" "ls /proc/self/fd exits 0"
	assert_match "$OUT" '^0$' "fd 0 is listed"
	assert_match "$OUT" '^2$' "fd 2 is listed"
}

t_proc_self_maps()
{
	capture moat do -- /bin/cat /proc/self/maps
	assert_eq 0 "$STATUS" "cat /proc/self/maps exits 0"
	assert_contains "$OUT" "/usr/bin/cat" "maps names the program's file mapping"
	assert_contains "$OUT" "[stack]" "maps shows the stack"
}

t_cpuinfo()
{
	capture moat do -- /bin/cat /proc/cpuinfo
	assert_eq 0 "$STATUS" "cat /proc/cpuinfo exits 0"
	assert_match "$OUT" '^processor' "cpuinfo lists processors"
}

t_meminfo()
{
	capture moat do -- /bin/cat /proc/meminfo
	assert_eq 0 "$STATUS" "cat /proc/meminfo exits 0"
	assert_match "$OUT" '^MemTotal:' "meminfo has MemTotal"
}

t_python_cpu_count()
{
	# Regression (cpu count from the pinned sentry): /proc/stat listed
	# only the CPU the sentry pins itself to, so guests saw 1 CPU.
	capture moat do -- $PY -c 'import os, multiprocessing as m; print(os.cpu_count(), m.cpu_count(), len(os.sched_getaffinity(0)))'
	local n
	n=$($PY -c 'import os; print(len(os.sched_getaffinity(0)))')
	assert_eq "$n $n $n" "$OUT" "guests see every CPU the sandbox may use"
}

t_dev_null()
{
	capture moat do -- /bin/sh -c 'echo x > /dev/null && wc -c < /dev/null'
	assert_eq 0 "$STATUS" "writing /dev/null exits 0"
	assert_eq "0" "$OUT" "/dev/null reads empty"
}

t_dev_zero()
{
	capture moat do -- /bin/sh -c 'head -c 8 /dev/zero | od -An -tx1'
	assert_eq "$(head -c 8 /dev/zero | od -An -tx1)" "$OUT" "/dev/zero reads zeros"
}

t_dev_urandom()
{
	capture moat do -- /bin/sh -c 'head -c 16 /dev/urandom | wc -c'
	assert_eq "16" "$OUT" "/dev/urandom gives 16 bytes"
}

t_dev_random_differs()
{
	capture moat do -- /bin/sh -c 'a=$(head -c 16 /dev/random | od -An -tx1); b=$(head -c 16 /dev/random | od -An -tx1); [ "$a" != "$b" ] && echo differ'
	assert_eq "differ" "$OUT" "/dev/random gives different bytes each read"
}

t_dev_full()
{
	capture moat do -- $PY -c '
import os
fd = os.open("/dev/full", os.O_WRONLY)
try:
    os.write(fd, b"x")
    print("wrote")
except OSError as e:
    print("errno", e.errno)
print(len(os.read(os.open("/dev/full", os.O_RDONLY), 8)))'
	assert_eq 0 "$STATUS" "the /dev/full probe exits 0"
	assert_eq "errno 28
8" "$OUT" "/dev/full fails writes with ENOSPC and reads as zeros"
}

# A read of the memory devices returns the whole count, as Linux's (no
# cap but MAX_RW_COUNT; /dev/random too since 5.6), and getrandom (the
# host's, run natively) its own: whatever the native run prints.
t_dev_random_full_reads()
{
	capture moat do -- /bin/sh -c 'dd if=/dev/urandom bs=64k count=64 of=/tmp/x 2>/dev/null; wc -c </tmp/x; dd if=/dev/random bs=1M count=40 2>/dev/null | wc -c'
	assert_eq "4194304
41943040" "$OUT" "dd of /dev/urandom and /dev/random writes every block in full"
	local prog='
import os
for n, devs in ((65536, ("/dev/urandom", "/dev/random", "/dev/zero")),
                (4 << 20, ("/dev/urandom", "/dev/random", "/dev/zero")),
                ((32 << 20) + 1, ("/dev/urandom",))):   # past the old 32 MiB-1
    row = [len(os.getrandom(n))]
    for dev in devs:
        fd = os.open(dev, os.O_RDONLY)
        row.append(len(os.read(fd, n)))
        row.append(len(os.pread(fd, 16, 1 << 40)))
        os.close(fd)
    print(n, *row)'
	assert_same_as_native $PY -c "$prog"
}

# The memory devices are not streams: pread, sendfile from them and
# fadvise work, copy_file_range refuses them, as natively.
t_dev_memory_not_streams()
{
	local prog='
import os
def t(name, f):
    try:
        print(name, f())
    except OSError as e:
        print(name, "error", e.errno)
z = os.open("/dev/zero", os.O_RDONLY)
u = os.open("/dev/urandom", os.O_RDONLY)
out = os.open("/tmp/devout", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
t("pread", lambda: len(os.pread(u, 8, 4096)))
t("sendfile", lambda: os.sendfile(out, z, None, 100))
t("sendfile at", lambda: os.sendfile(out, u, 5, 1 << 20))
t("copy_file_range", lambda: os.copy_file_range(z, out, 100))
t("fadvise", lambda: os.posix_fadvise(z, 0, 0, 0))
t("lseek", lambda: os.lseek(z, 100, 0))'
	assert_same_as_native $PY -c "$prog"
}

# /proc/sys: every entry says what the sandbox does (tests/e2e/proc_sys.py).
stage_proc_sys()
{
	cp "$HERE/proc_sys.py" "$E2E_TMP/proc_sys.py"
	chmod 644 "$E2E_TMP/proc_sys.py"
}

# What holds on any Linux (sysctls against uname, sysconf, IPC_INFO,
# socket buffers and ports, PR_CAPBSET_READ; read-only ones refuse root)
# holds inside.
t_proc_sys_agrees_with_linux()
{
	stage_proc_sys
	capture native $PY "$E2E_TMP/proc_sys.py" agree
	assert_eq 0 "$STATUS" "the native run exits 0"
	assert_not_contains "$OUT" "BAD" "every check holds natively"
	local want=$OUT
	capture moat do -- $PY "$E2E_TMP/proc_sys.py" agree
	assert_eq "$want" "$OUT" "and inside"
}

# The limits, tried where the sentry enforces them: cap_last_cap against
# capget and CapBnd, ngroups_max against setgroups, shmmax, shmall, sem,
# msgmax, pipe-max-size, inotify instances, the unprivileged ports, file-nr;
# every entry read-only for root and others.
t_proc_sys_limits()
{
	stage_proc_sys
	capture moat do -- $PY "$E2E_TMP/proc_sys.py" limits
	assert_eq 0 "$STATUS" "the probe exits 0"
	assert_not_contains "$OUT" "BAD" "every limit is the one enforced"
	assert_eq 22 "$(grep -c ' ok$' <<<"$OUT")" "all 22 checks ran"
}

t_proc_sys_values()
{
	capture moat do --hostname sbx-sys --pids 77 -- /bin/sh -c '
		cd /proc/sys
		for f in kernel/cap_last_cap kernel/hostname kernel/domainname \
			kernel/ngroups_max kernel/pid_max kernel/threads-max \
			kernel/ostype kernel/shmmni kernel/msgmni kernel/sem \
			fs/nr_open fs/file-max fs/pipe-max-size \
			fs/inotify/max_user_watches fs/mqueue/queues_max \
			net/core/somaxconn net/ipv4/ip_local_port_range \
			net/ipv4/ip_unprivileged_port_start; do
			printf "%s=%s\n" $f "$(cat $f)"
		done'
	assert_eq 0 "$STATUS" "reading /proc/sys exits 0"
	# cap_last_cap: CAP_CHECKPOINT_RESTORE, the last capget reports;
	# ngroups_max: struct creds' groups; pid_max: alloc_pid's wrap;
	# threads-max: --pids; the ports: the sentry's 32768-60999 and
	# lwIP's 49152-65535 for connections out.
	assert_eq "kernel/cap_last_cap=40
kernel/hostname=sbx-sys
kernel/domainname=(none)
kernel/ngroups_max=32
kernel/pid_max=4194304
kernel/threads-max=77
kernel/ostype=Linux
kernel/shmmni=4096
kernel/msgmni=4096
kernel/sem=32000	1048576	500	4096
fs/nr_open=65536
fs/file-max=262144
fs/pipe-max-size=1048576
fs/inotify/max_user_watches=8192
fs/mqueue/queues_max=256
net/core/somaxconn=4096
net/ipv4/ip_local_port_range=32768	65535
net/ipv4/ip_unprivileged_port_start=1024" "$OUT" "/proc/sys shows the sandbox's limits"
	# vm.*: the host kernel maps the guest's memory, so its numbers
	local f want
	for f in vm/overcommit_memory vm/max_map_count vm/mmap_min_addr; do
		want=$(cat /proc/sys/$f)
		capture moat do -- /bin/cat /proc/sys/$f
		assert_eq "$want" "$OUT" "$f is the host's"
	done
}

# /proc/sys/kernel lists its entries in name order, and every entry of the
# tree is one Linux has (Yama's only where the host has Yama).
t_proc_sys_listing()
{
	capture moat do -- /bin/ls /proc/sys/kernel
	assert_eq 0 "$STATUS" "ls /proc/sys/kernel exits 0"
	assert_eq "cap_last_cap domainname hostname msgmax msgmnb msgmni ngroups_max osrelease ostype overflowgid overflowuid pid_max random sem shm_rmid_forced shmall shmmax shmmni threads-max version yama" \
		"$(tr '\n' ' ' <<<"$OUT" | sed 's/ $//')" "the kernel entries programs read"
	capture moat do -- /bin/sh -c 'cd /proc/sys && find . | sort'
	assert_eq 0 "$STATUS" "find /proc/sys exits 0"
	assert_contains "$OUT" "./kernel/random/boot_id" "find descends the tree"
	local p missing=
	while read -r p; do
		case $p in ./kernel/yama*) continue ;; esac
		[ -e "/proc/sys/$p" ] || missing="$missing $p"
	done <<<"$OUT"
	assert_eq "" "$missing" "every entry is one Linux has"
}

# boot_id is the sandbox's: the same for all its processes, another for
# the next sandbox, never the host's.
t_proc_sys_boot_id()
{
	capture moat do -- /bin/sh -c 'cat /proc/sys/kernel/random/boot_id; /bin/sh -c "cat /proc/sys/kernel/random/boot_id"'
	local a b
	a=$(head -1 <<<"$OUT")
	b=$(tail -1 <<<"$OUT")
	assert_eq "$a" "$b" "one boot_id for the sandbox's processes"
	assert_ne "$(cat /proc/sys/kernel/random/boot_id)" "$a" "not the host's"
	capture moat do -- /bin/cat /proc/sys/kernel/random/boot_id
	assert_ne "$a" "$OUT" "another sandbox, another boot_id"
}

run_test "pid 1 has parent 0" t_pid1_ppid0
run_test "child processes get small virtual pids" t_child_pids
run_test "/proc/self/exe" t_proc_self_exe
run_test "/proc/self/status" t_proc_self_status
run_test "/proc/self/cmdline" t_proc_self_cmdline
run_test "/proc/self/fd" t_proc_self_fd
run_test "/proc/self/maps" t_proc_self_maps
run_test "/proc/cpuinfo" t_cpuinfo
run_test "/proc/meminfo" t_meminfo
run_test "os.cpu_count()" t_python_cpu_count
run_test "/dev/null" t_dev_null
run_test "/dev/zero" t_dev_zero
run_test "/dev/urandom" t_dev_urandom
run_test "/dev/random" t_dev_random_differs
run_test "/dev/full" t_dev_full
run_test "/dev/urandom and /dev/random: full reads" t_dev_random_full_reads
run_test "memory devices are not streams" t_dev_memory_not_streams
run_test "/proc/sys agrees with Linux's own rules" t_proc_sys_agrees_with_linux
run_test "/proc/sys limits are the enforced ones" t_proc_sys_limits
run_test "/proc/sys values" t_proc_sys_values
run_test "/proc/sys listing" t_proc_sys_listing
run_test "/proc/sys/kernel/random/boot_id" t_proc_sys_boot_id
e2e_done
