#!/usr/bin/env bash
# The sandbox's own /proc and /dev, virtual pids.
. "$(dirname "$0")/lib.sh"

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
e2e_done
