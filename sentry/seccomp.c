/* sentry/seccomp.c: the sentry's own seccomp filter.
 *
 * Installed after setup (the gofer, namespaces and first task exist), so it
 * lists only what the event loop needs: ptrace and the calls that read and
 * write tracee memory, I/O on fds it already holds, memory for itself, and
 * signals to its own tasks. No socket, no exec, and no open but one
 * relative to the host /proc fd (a tracee's maps or status, cpuinfo, and
 * reopens of its own fds through self/fd), without O_CREAT, O_TRUNC,
 * O_APPEND or O_TMPFILE.
 *
 * What that last rule does not hold, and why it is worth writing down: the
 * filter checks the directory fd and the flags, never the path, so a
 * sentry taken over could still open an existing host file by "../" from
 * /proc, read it (the sentry runs as the caller, root for containers) and
 * write it in place. No guest string reaches these paths (they are built
 * from integers); confining the sentry's view of the host's files
 * (Landlock, or a mount namespace of its own) is the next step.
 *
 * The ASan/UBSan build (make e2e-asan) runs under the same filter, plus
 * what the sanitizer runtime needs to print a report (sanitizer_extra), so
 * the end-to-end suite, run against both builds, finds a call the sentry
 * makes and the filter lacks in either.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <seccomp.h>
#include <sys/socket.h>
#include <sys/syscall.h>

#include "lib/crash.h"
#include "sentry/sentry.h"

#if defined(__SANITIZE_ADDRESS__)
#define SENTRY_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SENTRY_SANITIZED 1
#endif
#endif
#ifndef SENTRY_SANITIZED
#define SENTRY_SANITIZED 0
#endif

#if SENTRY_SANITIZED
#include <sanitizer/lsan_interface.h>

static bool filtered;

/* LeakSanitizer's end-of-process check stops the world: it clones a
 * tracer thread that ptrace-attaches to every thread and lists
 * /proc/self/task. Not one filtered process may do that (no clone, no
 * open), so once the filter is on the check is skipped; e2e-asan runs with
 * detect_leaks=0 anyway, and the unit suites check leaks. */
int __lsan_is_turned_off(void)
{
	return filtered;
}

/* What ASan's and UBSan's reports need, found by running this build under
 * the filter with a report forced after it (and with strace): the module
 * list from /proc/self/maps, and /proc/self/cmdline and environ (open), the
 * executable's and libraries' names (readlink), the symbolizer's read of
 * every module and its debug file (openat at the cwd), a pipe the unwinder
 * probes memory with (pipe2). Opens are read-only; nothing here writes a
 * path, makes a process or a socket. */
static int sanitizer_extra(scmp_filter_ctx ctx)
{
	/* no write access, no creation, whatever else the flags say */
	const scmp_datum_t wr = O_ACCMODE | O_CREAT | O_TRUNC | O_APPEND;
	int rc;

	rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SYS_open, 1,
			      SCMP_A1(SCMP_CMP_MASKED_EQ, wr, 0));
	/* AT_FDCWD as the kernel sees an int: the low 32 bits */
	if (rc == 0)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SYS_openat, 2,
				      SCMP_A0(SCMP_CMP_MASKED_EQ, 0xffffffffu,
					      (scmp_datum_t)(uint32_t)AT_FDCWD),
				      SCMP_A2(SCMP_CMP_MASKED_EQ, wr, 0));
	if (rc == 0)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SYS_readlink, 0);
	if (rc == 0)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SYS_pipe2, 0);
	return rc;
}
#endif

static void on_sigsys(int sig, siginfo_t *si, void *ctx)
{
	char msg[96];
	int n;

	(void)sig;
	(void)ctx;
	n = snprintf(msg, sizeof(msg),
		     "moat: sentry: host syscall %d is not in its filter\n",
		     si->si_syscall);
	if (write(2, msg, (size_t)n) < 0)
		_exit(125);
	_exit(125);
}

int sentry_seccomp_install(struct moat_error *err)
{
	static const int allow[] = {
		SYS_read,
		SYS_write,
		SYS_pread64,
		SYS_pwrite64,
		SYS_readv,
		SYS_writev,
		SYS_close,
		SYS_fstat,
		SYS_newfstatat,
		SYS_lseek,
		SYS_getdents64,
		SYS_poll,
		SYS_ppoll,
		SYS_ioctl,
		SYS_fcntl,
		SYS_dup,
		SYS_mmap,
		SYS_munmap,
		SYS_mremap,
		SYS_brk,
		SYS_mprotect,
		SYS_madvise,
		SYS_rt_sigaction,
		SYS_rt_sigprocmask,
		SYS_rt_sigreturn,
		SYS_ptrace,
		SYS_wait4,
		SYS_waitid,
		SYS_process_vm_readv,
		SYS_process_vm_writev,
		SYS_kill,
		SYS_tkill,
		SYS_tgkill,
		SYS_sendmsg,
		SYS_recvmsg,
		SYS_clock_gettime,
		SYS_clock_nanosleep,
		SYS_nanosleep,
		SYS_getrandom,
		SYS_exit,
		SYS_exit_group,
		SYS_uname,
		SYS_sysinfo,
		SYS_getpid,
		SYS_gettid,
		SYS_futex,
		SYS_sched_yield,
		SYS_restart_syscall,
		SYS_getppid,
		SYS_statfs,
		SYS_fstatfs,
		SYS_signalfd4,
		SYS_sendto,
		SYS_recvfrom,
		SYS_rt_sigtimedwait,
		SYS_getuid,
		SYS_geteuid,
		SYS_prlimit64,
		SYS_sigaltstack,
		SYS_rseq,
		SYS_set_robust_list,
		SYS_getcpu,
		SYS_sched_getaffinity,
		SYS_sched_setaffinity,
		SYS_setitimer,
		SYS_memfd_create,
		SYS_ftruncate,
		SYS_kcmp,
		SYS_getitimer,
		SYS_mincore,
		SYS_msync,
		SYS_gettimeofday,
		SYS_fsync, /* fsync of a file of a `--mount ...:rw` */
		SYS_fdatasync,
		SYS_syncfs, /* of a `--mount ...:rw` */
		SYS_sched_rr_get_interval,
		SYS_fallocate, /* a tmpfs memfd's hole, a rw mount's file */
		SYS_rt_sigqueueinfo, /* timers' and sigqueue's siginfo */
		SYS_rt_tgsigqueueinfo,
		SYS_epoll_ctl, /* the broker's flows (sentry/brokerlink.c) */
		SYS_epoll_wait,
		SYS_shutdown,
		SYS_accept4,	/* the control socket's requests */
		SYS_getsockopt, /* and their SO_PEERCRED */
		SYS_pipe2,	/* libunwind probes memory through one when the
			    * crash handler prints a backtrace (lib/crash.c) */
	};
	/* TRAP, not KILL: the handler names the syscall before the sentry
	 * exits, so a gap in this list is a clear bug report, not a riddle. */
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_TRAP);
	struct sigaction sa;
	size_t i;
	int rc = 0;

	if (!ctx)
		return moat_error_set(err, ENOMEM, "sentry seccomp");
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sigsys;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGSYS, &sa, NULL);
	for (i = 0; i < ARRAY_SIZE(allow) && rc == 0; i++)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, allow[i], 0);
	/* openat only relative to the host /proc fd kept for tracee maps,
	 * and nothing that makes or empties a file. */
	if (rc == 0 && S->host_proc_fd >= 0)
		rc = seccomp_rule_add(
			ctx, SCMP_ACT_ALLOW, SYS_openat, 2,
			SCMP_A0(SCMP_CMP_EQ, (uint64_t)S->host_proc_fd),
			SCMP_A2(SCMP_CMP_MASKED_EQ,
				(uint64_t)(O_CREAT | O_TRUNC | O_APPEND |
					   __O_TMPFILE),
				0));
	/* a brokered flow's two pairs: a socketpair reaches nothing */
	if (rc == 0)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SYS_socketpair, 1,
				      SCMP_A0(SCMP_CMP_EQ, AF_UNIX));
#if SENTRY_SANITIZED
	if (rc == 0)
		rc = sanitizer_extra(ctx);
#endif
	if (rc == 0)
		rc = seccomp_load(ctx);
	seccomp_release(ctx);
	if (rc < 0)
		return moat_error_set(err, -rc, "sentry seccomp");
#if SENTRY_SANITIZED
	filtered = true;
#endif
	crash_handler_no_names();
	return 0;
}
