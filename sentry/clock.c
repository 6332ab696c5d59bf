/* sentry/clock.c: clock ids that name a task or an fd, and setting the
 * clock.
 *
 * clock_gettime, clock_getres and clock_nanosleep run natively for clock
 * ids >= 0 (the guest filter, docs/allowlist.md). A negative id is either
 * a CPU-time clock naming a pid or tid (pthread_getcpuclockid and
 * clock_getcpuclockid make them) or a posix clock naming an fd. Both names
 * are the guest's: a virtual tid becomes the task's tid in the guests' pid
 * namespace, where the host kernel, running the call, applies Linux's own
 * rules to it (a thread clock only of a thread of the caller's process, a
 * process clock only of a process); an fd becomes one that no guest task
 * has open, since no guest fd is a host posix clock. A pid of no task of
 * the sandbox is EINVAL, as Linux says of a pid it cannot find.
 *
 * Setting the clock (clock_settime, settimeofday, adjtimex and
 * clock_adjtime with modes set) is passed to the host, which refuses it
 * after its own argument checks: guest tasks never hold CAP_SYS_TIME in
 * the host's initial user namespace, so this gives Linux's EPERM (and its
 * EINVAL and EFAULT first) for a process without that capability, and
 * adjtimex's reads (modes 0) of the clock's state.
 */
#include <sys/syscall.h>
#include <time.h>

#include "sentry/syscalls.h"

/* Linux's encoding of clock ids below 0 (include/linux/posix-timers.h). */
#define CPUCLOCK_PID(c) ((pid_t) ~((c) >> 3))
#define CPUCLOCK_LOW_BITS 7 /* the per-thread bit and the clock kind */
#define CLOCKFD 3
#define MAKE_CLOCK(id, low) ((clockid_t)((~(unsigned)(id) << 3) | (low)))
/* An fd no guest task has open (their host fds stop at 1065). */
#define NO_FD 0x0fffffff

/* The host's clock id for t's c (< 0) in *out, or -EINVAL. */
static int host_clock(const struct task *t, clockid_t c, clockid_t *out)
{
	pid_t pid = CPUCLOCK_PID(c);
	struct task *x;
	int ns;

	if ((c & CPUCLOCK_LOW_BITS) == CLOCKFD) {
		*out = MAKE_CLOCK(NO_FD, CLOCKFD);
		return 0;
	}
	if (pid == 0) {
		*out = c; /* the caller's own thread or process */
		return 0;
	}
	x = task_by_guest_tid(t->proc->pidns, pid);
	if (!x)
		return -EINVAL;
	ns = task_ns_tid(x);
	if (ns < 0)
		return -EINVAL;
	*out = MAKE_CLOCK(ns, c & CPUCLOCK_LOW_BITS);
	return 0;
}

/* A call whose first argument is a clock id: run by the host, with the
 * id in the host's terms. */
static long pass_clock(struct task *t, struct syscall_args *a)
{
	clockid_t c = (clockid_t)a->a[0], h;
	int rc;

	if (c >= 0)
		return SYS_PASSTHROUGH;
	rc = host_clock(t, c, &h);
	if (rc < 0)
		return rc;
	return h == c ? SYS_PASSTHROUGH : task_pass_arg0(t, (uint32_t)h);
}

long sys_clock_gettime(struct task *t, struct syscall_args *a)
{
	return pass_clock(t, a);
}

long sys_clock_getres(struct task *t, struct syscall_args *a)
{
	return pass_clock(t, a);
}

long sys_clock_nanosleep(struct task *t, struct syscall_args *a)
{
	return pass_clock(t, a);
}

long sys_clock_settime(struct task *t, struct syscall_args *a)
{
	return pass_clock(t, a);
}

long sys_clock_adjtime(struct task *t, struct syscall_args *a)
{
	return pass_clock(t, a);
}

long sys_settimeofday(struct task *t, struct syscall_args *a)
{
	(void)t;
	(void)a;
	return SYS_PASSTHROUGH;
}

long sys_adjtimex(struct task *t, struct syscall_args *a)
{
	(void)t;
	(void)a;
	return SYS_PASSTHROUGH;
}
