/* sentry/syscall_list.h: THE syscall table. One line a syscall:
 *   EMU(name, handler, status, argfmt, note)  emulated by the sentry
 *   NATIVE(name, argfmt, note)                 runs on the host (docs/allowlist.md)
 * Anything absent returns -ENOSYS with one audit line. This list drives
 * dispatch, the guest seccomp filter, `moat help syscalls` and
 * docs/syscalls.md. argfmt, one char an argument, for --strace:
 *   d int, u unsigned, x hex, p pointer, s string, f open flags, o mode,
 *   F fd (AT_FDCWD aware), S signal
 */
/* files */
EMU(read, sys_read, FULL, "Fpu", "")
EMU(write, sys_write, FULL, "Fpu", "")
EMU(open, sys_open, FULL, "sfo",
    "a write open of a rootfs file copies it up into the overlay")
EMU(close, sys_close, FULL, "F", "")
EMU(stat, sys_stat, FULL, "sp", "")
EMU(fstat, sys_fstat, FULL, "Fp", "")
EMU(lstat, sys_lstat, FULL, "sp", "")
EMU(poll, sys_poll, FULL, "pud", "")
EMU(lseek, sys_lseek, FULL, "Fdd", "")
EMU(mmap, sys_mmap, FULL, "pxxxFx",
    "anonymous: native away from the stub; files: the donated host fd is mapped")
EMU(munmap, sys_mm_checked, FULL, "pu",
    "native unless it could reach the stub; then checked and passed")
EMU(mprotect, sys_mm_checked, FULL, "pux",
    "native unless it could reach the stub; then checked and passed")
EMU(mremap, sys_mm_checked, FULL, "puuxp",
    "native unless it could reach the stub or names a new address; then checked and passed")
EMU(madvise, sys_mm_checked, FULL, "pud",
    "native unless it could reach the stub; then checked and passed")
EMU(ioctl, sys_ioctl, PARTIAL, "Fxp",
    "TCGETS, TIOCGWINSZ, TIOCGPGRP, FIONREAD, FIOCLEX")
EMU(pread64, sys_pread64, FULL, "Fpud", "")
EMU(pwrite64, sys_pwrite64, FULL, "Fpud", "")
EMU(readv, sys_readv, FULL, "Fpd", "")
EMU(writev, sys_writev, FULL, "Fpd", "")
EMU(preadv, sys_preadv, FULL, "Fpdd", "")
EMU(pwritev, sys_pwritev, FULL, "Fpdd", "")
EMU(preadv2, sys_preadv2, PARTIAL, "Fpddux", "RWF_NOWAIT: EOPNOTSUPP")
EMU(pwritev2, sys_pwritev2, PARTIAL, "Fpddux", "RWF_NOWAIT: EOPNOTSUPP")
EMU(access, sys_access, FULL, "so", "")
EMU(pipe, sys_pipe, FULL, "p", "")
EMU(select, sys_select, FULL, "dpppp", "")
EMU(dup, sys_dup, FULL, "F", "")
EMU(dup2, sys_dup2, FULL, "FF", "")
EMU(fcntl, sys_fcntl, PARTIAL, "Fdx",
    "dupfd, flags, POSIX and OFD record locks, F_NOTIFY, F_SETOWN/F_SETSIG kept; no SIGIO for O_ASYNC")
EMU(getdents64, sys_getdents64, FULL, "Fpu", "")
EMU(getdents, sys_getdents, FULL, "Fpu",
    "struct linux_dirent, d_type in its last byte")
EMU(getcwd, sys_getcwd, FULL, "pu", "")
EMU(chdir, sys_chdir, FULL, "s", "")
EMU(fchdir, sys_fchdir, FULL, "F", "")
EMU(readlink, sys_readlink, FULL, "spu", "")
EMU(umask, sys_umask, FULL, "o", "")
EMU(mount, sys_mount, NONE_HANDLED, "ssxxp",
    "EPERM, as for a process without CAP_SYS_ADMIN: the mount table is fixed at setup")
EMU(umount2, sys_umount2, NONE_HANDLED, "sx",
    "EPERM, as for a process without CAP_SYS_ADMIN: the mount table is fixed at setup")
EMU(pivot_root, sys_pivot_root, NONE_HANDLED, "ss",
    "EPERM, as for a process without CAP_SYS_ADMIN: the mount table is fixed at setup")
EMU(openat, sys_openat, FULL, "Fsfo", "")
EMU(newfstatat, sys_newfstatat, FULL, "Fspx", "")
EMU(readlinkat, sys_readlinkat, FULL, "Fspu", "")
EMU(faccessat, sys_faccessat, FULL, "Fso", "")
EMU(faccessat2, sys_faccessat2, FULL, "Fsox", "")
EMU(pselect6, sys_pselect6, FULL, "dppppp", "")
EMU(ppoll, sys_ppoll, FULL, "pupp", "")
EMU(dup3, sys_dup3, FULL, "FFx", "")
EMU(pipe2, sys_pipe2, PARTIAL, "px",
    "O_DIRECT (packet mode) is accepted, but the pipe stays a byte stream")
EMU(statx, sys_statx, PARTIAL, "Fsxxp",
    "STATX_BASIC_STATS only: no birth time, attributes or mount id")
EMU(openat2, sys_openat2, FULL, "Fspu",
    "every RESOLVE_* flag as Linux; RESOLVE_CACHED: EAGAIN where the gofer would be asked")
EMU(close_range, sys_close_range, PARTIAL, "uux",
    "CLOSE_RANGE_UNSHARE copies a table shared with another process (CLONE_FILES); the threads of a process keep sharing theirs")
EMU(statfs, sys_statfs, FULL, "sp", "")
EMU(fstatfs, sys_fstatfs, FULL, "Fp", "")
EMU(mkdir, sys_mkdir, PARTIAL, "so",
    "tmpfs (/tmp, /dev/shm) and the rootfs's in-memory overlay")
EMU(mkdirat, sys_mkdirat, PARTIAL, "Fso",
    "tmpfs (/tmp, /dev/shm) and the rootfs's in-memory overlay")
EMU(rmdir, sys_rmdir, PARTIAL, "s",
    "tmpfs (/tmp, /dev/shm) and the rootfs's in-memory overlay")
EMU(unlink, sys_unlink, PARTIAL, "s",
    "tmpfs (/tmp, /dev/shm) and the rootfs's in-memory overlay")
EMU(unlinkat, sys_unlinkat, PARTIAL, "Fsx",
    "tmpfs (/tmp, /dev/shm) and the rootfs's in-memory overlay")
EMU(rename, sys_rename, PARTIAL, "ss",
    "tmpfs and the overlay; a directory with rootfs contents: EXDEV (mv copies)")
EMU(renameat, sys_renameat, PARTIAL, "FsFs",
    "tmpfs and the overlay; a directory with rootfs contents: EXDEV (mv copies)")
EMU(renameat2, sys_renameat2, PARTIAL, "FsFsx",
    "tmpfs and the overlay; a directory with rootfs contents: EXDEV (mv copies)")
EMU(creat, sys_creat, PARTIAL, "so",
    "tmpfs (/tmp, /dev/shm) and the rootfs's in-memory overlay")
EMU(symlink, sys_symlink, PARTIAL, "ss",
    "tmpfs (/tmp, /dev/shm) and the rootfs's in-memory overlay")
EMU(symlinkat, sys_symlinkat, PARTIAL, "sFs",
    "tmpfs (/tmp, /dev/shm) and the rootfs's in-memory overlay")
EMU(link, sys_link, PARTIAL, "ss",
    "tmpfs (/tmp, /dev/shm) and the rootfs's in-memory overlay")
EMU(linkat, sys_linkat, PARTIAL, "FsFsx",
    "tmpfs (/tmp, /dev/shm) and the rootfs's in-memory overlay")
EMU(chmod, sys_chmod, PARTIAL, "so",
    "tmpfs (/tmp, /dev/shm) and the rootfs's in-memory overlay")
EMU(fchmodat, sys_fchmodat, PARTIAL, "Fso",
    "tmpfs (/tmp, /dev/shm) and the rootfs's in-memory overlay")
EMU(chown, sys_chown, PARTIAL, "sdd",
    "tmpfs (/tmp, /dev/shm) and the rootfs's in-memory overlay")
EMU(lchown, sys_lchown, PARTIAL, "sdd",
    "tmpfs (/tmp, /dev/shm) and the rootfs's in-memory overlay")
EMU(fchownat, sys_fchownat, PARTIAL, "Fsddx",
    "tmpfs (/tmp, /dev/shm) and the rootfs's in-memory overlay")
EMU(truncate, sys_truncate, PARTIAL, "sd",
    "tmpfs (/tmp, /dev/shm) and the rootfs's in-memory overlay")
EMU(utimensat, sys_utimensat, PARTIAL, "Fspx",
    "tmpfs (/tmp, /dev/shm) and the rootfs's in-memory overlay")
EMU(utime, sys_utime, PARTIAL, "sp", "as utimensat")
EMU(utimes, sys_utimes, PARTIAL, "sp", "as utimensat")
EMU(futimesat, sys_futimesat, PARTIAL, "Fsp", "as utimensat")
EMU(mknod, sys_mknod, PARTIAL, "sox",
    "tmpfs (/tmp, /dev/shm) and the rootfs's in-memory overlay")
EMU(mknodat, sys_mknodat, PARTIAL, "Fsox",
    "tmpfs (/tmp, /dev/shm) and the rootfs's in-memory overlay")
EMU(fchmod, sys_fchmod, PARTIAL, "Fo",
    "tmpfs and the rootfs's in-memory overlay")
EMU(fchown, sys_fchown, PARTIAL, "Fdd",
    "tmpfs and the rootfs's in-memory overlay")
EMU(ftruncate, sys_ftruncate, PARTIAL, "Fd",
    "tmpfs and the rootfs's in-memory overlay")
EMU(fallocate, sys_fallocate, PARTIAL, "Fdxd",
    "mode 0, KEEP_SIZE, PUNCH_HOLE; others EOPNOTSUPP")
EMU(fsync, sys_fsync, FULL, "F", "")
EMU(fdatasync, sys_fsync, FULL, "F", "")
EMU(sync, sys_sync, FULL, "", "")
EMU(syncfs, sys_syncfs, FULL, "F",
    "a rw mount's host filesystem; else nothing to write back")
EMU(flock, sys_flock, FULL, "Fx", "between the sandbox's processes")
EMU(memfd_create, sys_memfd_create, PARTIAL, "sx",
    "a tmpfs file of no directory; no seals, no hugetlb")
EMU(sendfile, sys_sendfile, FULL, "FFpu",
    "a copy through the sentry; to a blocking stream socket it waits for all of it, as Linux")
EMU(copy_file_range, sys_copy_file_range, FULL, "FpFpux",
    "a copy through the sentry")
EMU(splice, sys_splice, FULL, "FpFpux", "through the sentry, in 64 KiB chunks")
EMU(tee, sys_tee, FULL, "FFux", "")
EMU(fadvise64, sys_fadvise64, FULL, "Fddd",
    "advice is checked and has no effect")
EMU(getxattr, sys_getxattr, PARTIAL, "sspu",
    "user.*: tmpfs and the overlay; other namespaces read as absent")
EMU(lgetxattr, sys_lgetxattr, PARTIAL, "sspu", "as getxattr")
EMU(fgetxattr, sys_fgetxattr, PARTIAL, "Fspu", "as getxattr")
EMU(listxattr, sys_listxattr, PARTIAL, "spu", "user.* names")
EMU(llistxattr, sys_llistxattr, PARTIAL, "spu", "user.* names")
EMU(flistxattr, sys_flistxattr, PARTIAL, "Fpu", "user.* names")
EMU(setxattr, sys_setxattr, PARTIAL, "sspux",
    "user.* (a rootfs file is copied up); 64 KiB a file; mounted host directories EOPNOTSUPP")
EMU(lsetxattr, sys_lsetxattr, PARTIAL, "sspux", "as setxattr")
EMU(fsetxattr, sys_fsetxattr, PARTIAL, "Fspux", "as setxattr")
EMU(removexattr, sys_removexattr, PARTIAL, "ss", "as setxattr")
EMU(lremovexattr, sys_lremovexattr, PARTIAL, "ss", "as setxattr")
EMU(fremovexattr, sys_fremovexattr, PARTIAL, "Fs", "as setxattr")
/* sockets (sentry/socket.c): AF_UNIX, and AF_INET/AF_INET6 on the loopback
 * until the netstack brings the rest */
EMU(socket, sys_socket, PARTIAL, "ddd",
    "AF_UNIX; AF_INET and AF_INET6 stream and datagram (loopback, and the netstack under --net); IPv4 ping sockets; AF_NETLINK route, read-only; raw sockets EPERM; other families EAFNOSUPPORT and an audit line")
EMU(socketpair, sys_socketpair, FULL, "dddp",
    "AF_UNIX stream, dgram, seqpacket")
EMU(bind, sys_bind, PARTIAL, "Fpu",
    "AF_UNIX paths (socket nodes in tmpfs or the overlay), abstract names, autobind; inet: loopback and any")
EMU(listen, sys_listen, FULL, "Fd", "")
EMU(connect, sys_connect, FULL, "Fpu",
    "inet: the sandbox's loopback; elsewhere the netstack (--net=slirp) after the egress policy (ECONNREFUSED and an audit line when denied), or ENETUNREACH under --net=none")
EMU(accept, sys_accept, FULL, "Fpp", "")
EMU(accept4, sys_accept4, FULL, "Fppx", "")
EMU(sendto, sys_sendto, PARTIAL, "Fpuxpd",
    "no urgent data: MSG_OOB is EOPNOTSUPP")
EMU(recvfrom, sys_recvfrom, PARTIAL, "Fpuxpp",
    "no urgent data: MSG_OOB is EINVAL (streams) or EOPNOTSUPP")
EMU(sendmsg, sys_sendmsg, PARTIAL, "Fpx",
    "SCM_RIGHTS, SCM_CREDENTIALS; MSG_OOB as sendto")
EMU(recvmsg, sys_recvmsg, PARTIAL, "Fpx",
    "SCM_RIGHTS; SCM_CREDENTIALS with SO_PASSCRED; MSG_OOB as recvfrom")
EMU(sendmmsg, sys_sendmmsg, PARTIAL, "Fpux",
    "sendmsg for each, stopping at the first that would block (Linux waits on a blocking socket)")
EMU(recvmmsg, sys_recvmmsg, PARTIAL, "Fpuxp",
    "recvmsg for each; only the first may block (as with MSG_WAITFORONE), the timeout is not used")
EMU(shutdown, sys_shutdown, FULL, "Fd", "")
EMU(getsockopt, sys_getsockopt, PARTIAL, "Fddpp",
    "SO_TYPE, SO_DOMAIN, SO_PROTOCOL, SO_ERROR, SO_PEERCRED, SO_RCVTIMEO/SNDTIMEO, buffers and the options setsockopt keeps; others ENOPROTOOPT and an audit line")
EMU(setsockopt, sys_setsockopt, PARTIAL, "Fddpu",
    "SO_REUSEADDR/PORT, SO_PASSCRED, IPV6_V6ONLY, buffers, SO_RCVTIMEO/SNDTIMEO (EAGAIN after them); TCP_NODELAY and SO_KEEPALIVE reach the netstack; linger and the like kept as set; others ENOPROTOOPT and an audit line")
EMU(getsockname, sys_getsockname, FULL, "Fpp", "")
EMU(getpeername, sys_getpeername, FULL, "Fpp", "")
EMU(epoll_create, sys_epoll_create, FULL, "d", "")
EMU(epoll_create1, sys_epoll_create1, FULL, "x", "")
EMU(epoll_ctl, sys_epoll_ctl, FULL, "FdFp",
    "level and edge triggered, EPOLLONESHOT, EPOLLEXCLUSIVE (every waiter wakes, as epoll(7) allows)")
EMU(epoll_wait, sys_epoll_wait, FULL, "Fpdd", "")
EMU(epoll_pwait, sys_epoll_pwait, FULL, "Fpddp",
    "the mask is in force while it waits, and after until a handler returns")
EMU(epoll_pwait2, sys_epoll_pwait2, FULL, "Fpdpp", "as epoll_pwait")
EMU(eventfd, sys_eventfd, FULL, "u", "")
EMU(eventfd2, sys_eventfd2, FULL, "ux", "")
/* tasks */
EMU(getpid, sys_getpid, FULL, "", "")
EMU(getppid, sys_getppid, FULL, "", "")
EMU(gettid, sys_gettid, FULL, "", "")
EMU(set_tid_address, sys_set_tid_address, FULL, "p",
    "host records the address; result is the virtual tid")
EMU(clone, sys_clone, PARTIAL, "xppdx",
    "namespace flags, CLONE_PIDFD and CLONE_UNTRACED refused")
EMU(unshare, sys_unshare, PARTIAL, "x",
    "namespace flags refused (EPERM); the rest is a no-op")
EMU(setns, sys_setns, NONE_HANDLED, "Fx",
    "EPERM: the sandbox's namespaces are fixed")
EMU(clone3, sys_clone3, NONE_HANDLED, "pu",
    "ENOSYS: its arguments live in guest memory (TOCTOU); libc falls back to clone")
EMU(fork, sys_fork, FULL, "", "")
EMU(vfork, sys_vfork, FULL, "", "")
EMU(execve, sys_execve, PARTIAL, "spp",
    "the sentry's own loader: ELF static, static-PIE, PT_INTERP, #!; set-user-ID and set-group-ID bits are ignored, as under no_new_privs")
EMU(execveat, sys_execveat, PARTIAL, "Fsppx", "as execve")
EMU(wait4, sys_wait4, PARTIAL, "dpxp", "the rusage is all zeros")
EMU(waitid, sys_waitid, PARTIAL, "ddpxp",
    "P_ALL, P_PID, P_PGID, P_PIDFD; the rusage is all zeros")
EMU(kill, sys_kill, FULL, "dS", "")
EMU(tkill, sys_tkill, FULL, "dS", "")
EMU(tgkill, sys_tgkill, FULL, "ddS", "")
EMU(rt_sigaction, sys_rt_sigaction, FULL, "Sppu",
    "recorded by the sentry, then applied by the host to the caller's own table")
EMU(uname, sys_uname, FULL, "p", "")
EMU(sethostname, sys_sethostname, FULL, "pu",
    "changes the sandbox's hostname only")
EMU(setdomainname, sys_setdomainname, FULL, "pu", "")
EMU(getrlimit, sys_getrlimit, FULL, "dp", "")
EMU(setrlimit, sys_setrlimit, PARTIAL, "dp",
    "recorded; host limits stay as set by moat")
EMU(prlimit64, sys_prlimit64, PARTIAL, "ddpp", "")
EMU(sysinfo, sys_sysinfo, FULL, "p", "")
EMU(getuid, sys_getuid, FULL, "", "virtual credentials")
EMU(getgid, sys_getgid, FULL, "", "")
EMU(geteuid, sys_geteuid, FULL, "", "")
EMU(getegid, sys_getegid, FULL, "", "")
EMU(setuid, sys_setuid, FULL, "d", "")
EMU(setgid, sys_setgid, FULL, "d", "")
EMU(setreuid, sys_setreuid, FULL, "dd", "")
EMU(setregid, sys_setregid, FULL, "dd", "")
EMU(setresuid, sys_setresuid, FULL, "ddd", "")
EMU(setresgid, sys_setresgid, FULL, "ddd", "")
EMU(getresuid, sys_getresuid, FULL, "ppp", "")
EMU(getresgid, sys_getresgid, FULL, "ppp", "")
EMU(setfsuid, sys_setfsuid, FULL, "d", "")
EMU(setfsgid, sys_setfsgid, FULL, "d", "")
EMU(getgroups, sys_getgroups, FULL, "dp", "")
EMU(setgroups, sys_setgroups, FULL, "dp", "")
EMU(capget, sys_capget, FULL, "pp",
    "the sandbox's own sets (docs/compat.md), never the host's: the host task holds no capability")
EMU(capset, sys_capset, FULL, "pp",
    "Linux's rules on the sandbox's own sets; they decide the sentry's privilege checks")
EMU(setpgid, sys_setpgid, FULL, "dd", "")
EMU(getpgid, sys_getpgid, FULL, "d", "")
EMU(getpgrp, sys_getpgrp, FULL, "", "")
EMU(setsid, sys_setsid, FULL, "", "")
EMU(getsid, sys_getsid, FULL, "d", "")
EMU(prctl, sys_prctl, PARTIAL, "dxxxx",
    "NAME; DUMPABLE (the process's own flag, never the host task's: its /proc files and inspection follow it); CAPBSET_READ/DROP, CAP_AMBIENT, KEEPCAPS, SECUREBITS and NO_NEW_PRIVS on the sandbox's own capability sets and flag (the host task has no_new_privs always); PDEATHSIG and CHILD_SUBREAPER are accepted without effect (a get reads the default)")
EMU(getpriority, sys_getpriority, PARTIAL, "dd",
    "nice values kept per process; the host schedules every task alike")
EMU(setpriority, sys_setpriority, PARTIAL, "ddd",
    "nice values kept per process; the host schedules every task alike")
EMU(ptrace, sys_ptrace, NONE_HANDLED, "dddp",
    "EPERM: a sandboxed process may not trace")
EMU(sched_setaffinity, sys_sched_setaffinity, PARTIAL, "dup",
    "kept per process within the CPUs moat may use; host placement is the platform's")
EMU(sched_getaffinity, sys_sched_getaffinity, FULL, "dup",
    "the mask set, else the CPUs moat may use")
EMU(sched_setscheduler, sys_sched_setscheduler, PARTIAL, "ddp",
    "SCHED_OTHER, BATCH, IDLE kept; real-time policies EPERM")
EMU(sched_setparam, sys_sched_setparam, PARTIAL, "dp", "priority 0 only")
/* memory, signals and time: native (docs/allowlist.md) */
NATIVE(brk, "p", "the host keeps the break after the stub image")
NATIVE(msync, "pux", "")
NATIVE(mincore, "pup", "")
NATIVE(mlock, "pu", "")
NATIVE(munlock, "pu", "")
NATIVE(rt_sigprocmask, "dppu", "")
NATIVE(rt_sigreturn, "", "")
NATIVE(rt_sigpending, "pu", "")
EMU(rt_sigtimedwait, sys_rt_sigtimedwait, FULL, "pppu",
    "runs on the host; the sender in its siginfo is put back as the sandbox sees it")
NATIVE(rt_sigsuspend, "pu", "")
NATIVE(sigaltstack, "pp", "")
NATIVE(pause, "", "")
NATIVE(sched_yield, "", "")
EMU(sched_getparam, sys_sched_getparam, FULL, "dp", "")
EMU(sched_getscheduler, sys_sched_getscheduler, FULL, "d",
    "the policy set by sched_setscheduler")
EMU(sched_rr_get_interval, sys_sched_rr_get_interval, FULL, "dp", "")
NATIVE(sched_get_priority_max, "d", "")
NATIVE(sched_get_priority_min, "d", "")
NATIVE(nanosleep, "pp", "")
EMU(clock_nanosleep, sys_clock_nanosleep, FULL, "dxpp",
    "native for clock ids >= 0; a CPU clock of another thread or process runs on the host with its pid in the host's terms (sentry/clock.c)")
EMU(clock_gettime, sys_clock_gettime, FULL, "dp", "as clock_nanosleep")
EMU(clock_getres, sys_clock_getres, FULL, "dp", "as clock_nanosleep")
NATIVE(gettimeofday, "pp", "")
NATIVE(time, "p", "")
EMU(clock_settime, sys_clock_settime, FULL, "dp",
    "the host refuses it: EPERM, as for a process without CAP_SYS_TIME")
EMU(settimeofday, sys_settimeofday, FULL, "pp", "as clock_settime")
EMU(adjtimex, sys_adjtimex, FULL, "p",
    "reads the host clock's state; setting it: EPERM, as clock_settime")
EMU(clock_adjtime, sys_clock_adjtime, FULL, "dp", "as adjtimex")
EMU(getitimer, sys_getitimer, FULL, "dp",
    "ITIMER_REAL in the sentry; CPU-time itimers native")
EMU(setitimer, sys_setitimer, FULL, "dpp",
    "ITIMER_REAL in the sentry (it interrupts emulated syscalls); CPU-time itimers native")
EMU(alarm, sys_alarm, FULL, "u", "an ITIMER_REAL of the sentry's")
EMU(timer_create, sys_timer_create, PARTIAL, "dpp",
    "CLOCK_REALTIME, MONOTONIC, BOOTTIME; CPU-time clocks EOPNOTSUPP")
EMU(timer_settime, sys_timer_settime, PARTIAL, "dxpp",
    "an absolute CLOCK_REALTIME time is turned into a monotonic one when set: a later change of the host's clock does not move it")
EMU(timer_gettime, sys_timer_gettime, FULL, "dp", "")
EMU(timer_getoverrun, sys_timer_getoverrun, FULL, "d", "")
EMU(timer_delete, sys_timer_delete, FULL, "d", "")
/* System V IPC (sentry/sysv.c): the sandbox's own namespace */
EMU(shmget, sys_shmget, FULL, "dux", "memfds of the sentry's; 1 GiB in all")
EMU(shmat, sys_shmat, FULL, "dpx", "")
EMU(shmdt, sys_shmdt, PARTIAL, "p",
    "a segment unmapped with munmap stays attached until exit")
EMU(shmctl, sys_shmctl, FULL, "ddp", "")
EMU(semget, sys_semget, FULL, "ddx", "")
EMU(semop, sys_semop, FULL, "dpu", "")
EMU(semtimedop, sys_semtimedop, FULL, "dpup", "")
EMU(semctl, sys_semctl, PARTIAL, "dddx", "GETNCNT and GETZCNT are 0")
EMU(msgget, sys_msgget, FULL, "dx", "")
EMU(msgsnd, sys_msgsnd, FULL, "dpux", "")
EMU(msgrcv, sys_msgrcv, FULL, "dpudx", "MSG_EXCEPT, MSG_NOERROR, MSG_COPY")
EMU(msgctl, sys_msgctl, FULL, "ddp", "")
/* POSIX message queues (sentry/mqueue.c): the sandbox's own, /dev/mqueue */
EMU(mq_open, sys_mq_open, FULL, "sfop",
    "Linux's default limits, fixed and without CAP_SYS_RESOURCE: 256 queues of 10 messages of 8 KiB; RLIMIT_MSGQUEUE as Linux charges")
EMU(mq_unlink, sys_mq_unlink, FULL, "s", "")
EMU(mq_timedsend, sys_mq_timedsend, FULL, "Fpuup", "")
EMU(mq_timedreceive, sys_mq_timedreceive, FULL, "Fpupp", "")
EMU(mq_notify, sys_mq_notify, FULL, "Fp",
    "SIGEV_SIGNAL, SIGEV_NONE, and SIGEV_THREAD in glibc's netlink form")
EMU(mq_getsetattr, sys_mq_getsetattr, FULL, "Fpp", "")
EMU(signalfd, sys_signalfd, FULL, "dpu", "")
EMU(signalfd4, sys_signalfd4, FULL, "dpux",
    "reads dequeue the reading task's signals; poll reports the creator's")
EMU(inotify_init, sys_inotify_init, FULL, "", "")
EMU(inotify_init1, sys_inotify_init1, FULL, "x", "")
EMU(inotify_add_watch, sys_inotify_add_watch, PARTIAL, "Fsx",
    "changes made inside the sandbox; a mounted host directory's own changes are not seen")
EMU(inotify_rm_watch, sys_inotify_rm_watch, FULL, "Fd", "")
EMU(timerfd_create, sys_timerfd_create, FULL, "dx",
    "REALTIME, MONOTONIC, BOOTTIME; the _ALARM clocks EPERM")
EMU(timerfd_settime, sys_timerfd_settime, PARTIAL, "dxpp",
    "as timer_settime; TFD_TIMER_CANCEL_ON_SET is accepted and never cancels (no ECANCELED)")
EMU(timerfd_gettime, sys_timerfd_gettime, FULL, "dp", "")
EMU(rt_sigqueueinfo, sys_rt_sigqueueinfo, FULL, "dSp", "")
EMU(pidfd_open, sys_pidfd_open, PARTIAL, "dx",
    "readable once the process exits; PIDFD_THREAD: EINVAL, as before Linux 6.9")
EMU(pidfd_send_signal, sys_pidfd_send_signal, PARTIAL, "FSpx",
    "flags (PIDFD_SIGNAL_*): EINVAL, as before Linux 6.9")
EMU(rt_tgsigqueueinfo, sys_rt_tgsigqueueinfo, FULL, "ddSp", "")
NATIVE(times, "p",
       "the children's times are always zero (their host parent is the reaper)")
NATIVE(getrusage, "dp", "RUSAGE_CHILDREN is always empty, as in times")
NATIVE(arch_prctl, "xp", "")
NATIVE(futex, "pdupup", "")
NATIVE(set_robust_list, "pu", "")
NATIVE(get_robust_list, "dpp", "pid 0 only")
NATIVE(restart_syscall, "", "")
NATIVE(getrandom, "pux", "")
NATIVE(rseq, "puxx", "")
NATIVE(getcpu, "ppp", "")
NATIVE(membarrier, "dxd", "")
NATIVE(exit, "d", "")
NATIVE(exit_group, "d", "")
