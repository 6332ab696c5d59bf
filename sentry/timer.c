/* sentry/timer.c: timers that run on the wall clock, in the sentry.
 *
 * alarm, setitimer(ITIMER_REAL) and timer_create on CLOCK_REALTIME,
 * CLOCK_MONOTONIC and CLOCK_BOOTTIME expire while their process may be
 * blocked in a syscall the sentry emulates. A host timer would queue its
 * signal on a task stopped under ptrace, where nothing would notice it;
 * the sentry's own timer knows, and interrupts the syscall as Linux does
 * (EINTR, or a restart under SA_RESTART). The sentry's loop sleeps until
 * the next deadline (timers_next) and fires what is due (timers_run).
 *
 * CPU-time timers (ITIMER_VIRTUAL, ITIMER_PROF) stay the host's: they only
 * tick while the task runs, never while it is stopped for the sentry.
 */
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/timerfd.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>

#include "platform/platform.h"
#include "sentry/syscalls.h"
#include "sentry/vfs.h"

#define NS 1000000000LL
#define TIMERS_PER_PROC_MAX 1024 /* a guest may not fill the sentry */
#define ITIMER_ID (-1)		 /* the ITIMER_REAL of a process */

struct gtimer {
	struct gtimer *next;
	struct process *proc;
	int id; /* timer_create's id, or ITIMER_ID */
	clockid_t clock;
	int64_t deadline; /* CLOCK_MONOTONIC ns; 0: disarmed */
	int64_t interval; /* ns; 0: one shot */
	int notify;	  /* SIGEV_SIGNAL, SIGEV_NONE, SIGEV_THREAD_ID */
	int signo;
	union sigval value;
	int tid;	 /* SIGEV_THREAD_ID: virtual tid */
	int overrun;	 /* expirations missed at the last firing */
	struct tfd *tfd; /* a timerfd's timer (proc is NULL) */
};

/* timerfd: expirations counted for read(2). */
struct tfd {
	struct gtimer *g;
	uint64_t ticks;
	uint64_t seq;
};

static struct gtimer *timers;

static int64_t mono_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * NS + ts.tv_nsec;
}

/* Now on clock c, in ns (the clocks timers may use). */
static int64_t clock_now(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return ts.tv_sec * NS + ts.tv_nsec;
}

static struct gtimer *find(struct process *p, int id)
{
	struct gtimer *g;

	for (g = timers; g; g = g->next)
		if (g->proc == p && g->id == id)
			return g;
	return NULL;
}

static void unlink_timer(struct gtimer *g)
{
	struct gtimer **pp;

	for (pp = &timers; *pp; pp = &(*pp)->next)
		if (*pp == g) {
			*pp = g->next;
			return;
		}
}

static void drop_where(struct process *p, bool posix_only)
{
	struct gtimer **pp = &timers, *g;

	while ((g = *pp)) {
		if (g->proc == p && (!posix_only || g->id != ITIMER_ID)) {
			*pp = g->next;
			free(g);
		} else {
			pp = &g->next;
		}
	}
}

void timers_exit(struct process *p)
{
	drop_where(p, false);
}

void timers_exec(struct process *p)
{
	drop_where(p, true); /* alarm() survives exec; timer_create's not */
}

int64_t timers_next(void)
{
	struct gtimer *g;
	int64_t next = 0;

	for (g = timers; g; g = g->next)
		if (g->deadline && (!next || g->deadline < next))
			next = g->deadline;
	return next;
}

static void fire(struct gtimer *g)
{
	struct process *p = g->proc;
	siginfo_t si;

	if (g->tfd) {
		g->tfd->ticks += 1 + (uint64_t)g->overrun;
		g->tfd->seq++;
		return;
	}
	if (p->exited || g->notify == SIGEV_NONE)
		return;
	if (g->id == ITIMER_ID) {
		send_signal_proc(p, SIGALRM, 0);
		return;
	}
	memset(&si, 0, sizeof(si));
	si.si_signo = g->signo;
	si.si_code = SI_TIMER;
	si.si_timerid = g->id;
	si.si_overrun = g->overrun;
	si.si_value = g->value;
	if (g->notify == SIGEV_THREAD_ID) {
		struct task *t = task_by_vtid(g->tid);
		if (t && t->proc == p) {
			send_siginfo(p, t, &si);
			return;
		}
	}
	send_siginfo(p, NULL, &si);
}

void timers_run(void)
{
	int64_t now = mono_now();
	struct gtimer *g;
	bool again;

	/* A firing may exit a process (a fatal SIGALRM) and drop timers:
	 * start over after each. */
	do {
		again = false;
		for (g = timers; g; g = g->next) {
			if (!g->deadline || g->deadline > now)
				continue;
			if (g->interval > 0) {
				int64_t missed =
					(now - g->deadline) / g->interval;
				g->overrun = missed > INT32_MAX ? INT32_MAX :
								  (int)missed;
				g->deadline += (missed + 1) * g->interval;
			} else {
				g->overrun = 0;
				g->deadline = 0;
			}
			fire(g);
			sentry_wake();
			again = true;
			break;
		}
	} while (again);
}

/* ---- itimers -------------------------------------------------------------- */

static void ns_to_tv(int64_t ns, struct timeval *tv)
{
	tv->tv_sec = ns / NS;
	tv->tv_usec = (ns % NS) / 1000;
	if (ns > 0 && tv->tv_sec == 0 && tv->tv_usec == 0)
		tv->tv_usec = 1; /* armed: never reported as 0 */
}

/* The ITIMER_REAL of p: its value now, and set it (new may be NULL). */
static int itimer_real(struct process *p, const struct itimerval *nv,
		       struct itimerval *old)
{
	struct gtimer *g = find(p, ITIMER_ID);
	int64_t now = mono_now();

	if (old) {
		memset(old, 0, sizeof(*old));
		if (g && g->deadline) {
			ns_to_tv(g->deadline - now > 0 ? g->deadline - now : 1,
				 &old->it_value);
			ns_to_tv(g->interval, &old->it_interval);
		}
	}
	if (!nv)
		return 0;
	if (nv->it_value.tv_sec < 0 || nv->it_value.tv_usec < 0 ||
	    nv->it_value.tv_usec >= 1000000 || nv->it_interval.tv_sec < 0 ||
	    nv->it_interval.tv_usec < 0 || nv->it_interval.tv_usec >= 1000000)
		return -EINVAL;
	if (!g) {
		g = calloc(1, sizeof(*g));
		if (!g)
			return -ENOMEM;
		g->proc = p;
		g->id = ITIMER_ID;
		g->clock = CLOCK_MONOTONIC;
		g->notify = SIGEV_SIGNAL;
		g->signo = SIGALRM;
		g->next = timers;
		timers = g;
	}
	/* Clamped as arm() does: a larger one would overflow to a negative
	 * interval, and timers_run would never move the deadline on. */
	g->interval = nv->it_interval.tv_sec > 100LL * 365 * 86400 ?
			      100LL * 365 * 86400 * NS :
			      nv->it_interval.tv_sec * NS +
				      (int64_t)nv->it_interval.tv_usec * 1000;
	if (nv->it_value.tv_sec || nv->it_value.tv_usec) {
		/* Beyond a century, it will never fire in a sandbox's life. */
		int64_t v =
			nv->it_value.tv_sec > 100LL * 365 * 86400 ?
				100LL * 365 * 86400 * NS :
				nv->it_value.tv_sec * NS +
					(int64_t)nv->it_value.tv_usec * 1000;
		g->deadline = now + v;
	} else {
		g->deadline = 0;
	}
	return 0;
}

long sys_setitimer(struct task *t, struct syscall_args *a)
{
	struct itimerval nv, old;
	int rc;

	if ((int)a->a[0] != ITIMER_REAL) {
		if ((int)a->a[0] == ITIMER_VIRTUAL ||
		    (int)a->a[0] == ITIMER_PROF)
			return SYS_PASSTHROUGH; /* CPU time: the host's */
		return -EINVAL;
	}
	if (a->a[1]) {
		if (task_read(t, a->a[1], &nv, sizeof(nv)) < 0)
			return -EFAULT;
	} else {
		memset(&nv, 0, sizeof(nv)); /* NULL disarms, as Linux */
	}
	rc = itimer_real(t->proc, &nv, &old);
	if (rc < 0)
		return rc;
	if (a->a[2] && task_write(t, a->a[2], &old, sizeof(old)) < 0)
		return -EFAULT;
	return 0;
}

long sys_getitimer(struct task *t, struct syscall_args *a)
{
	struct itimerval old;

	if ((int)a->a[0] != ITIMER_REAL) {
		if ((int)a->a[0] == ITIMER_VIRTUAL ||
		    (int)a->a[0] == ITIMER_PROF)
			return SYS_PASSTHROUGH;
		return -EINVAL;
	}
	itimer_real(t->proc, NULL, &old);
	return task_write(t, a->a[1], &old, sizeof(old)) < 0 ? -EFAULT : 0;
}

long sys_alarm(struct task *t, struct syscall_args *a)
{
	struct itimerval nv = { .it_value = { .tv_sec = (time_t)(unsigned)
								a->a[0] } },
			 old;
	int rc = itimer_real(t->proc, &nv, &old);

	if (rc < 0)
		return rc;
	/* Seconds left of the previous alarm, rounded as Linux does. */
	return old.it_value.tv_sec +
	       (old.it_value.tv_usec >= 500000 ||
		(!old.it_value.tv_sec && old.it_value.tv_usec));
}

/* ---- POSIX timers ------------------------------------------------------- */

static bool clock_ok(clockid_t c)
{
	return c == CLOCK_REALTIME || c == CLOCK_MONOTONIC ||
	       c == CLOCK_BOOTTIME;
}

/* Arm g from a guest itimerspec (TIMER_ABSTIME: on g's clock); the old
 * value in *old. */
static long arm(struct gtimer *g, struct itimerspec nv, bool abs_time,
		struct itimerspec *old);

long sys_timer_create(struct task *t, struct syscall_args *a)
{
	clockid_t clock = (clockid_t)a->a[0];
	struct sigevent ev;
	struct gtimer *g;
	int n = 0, id;

	if (!clock_ok(clock)) {
		/* CPU-time clocks (2, 3, and the negative ids glibc makes of
		 * them) would need the host's timers: not offered. */
		return clock < 0 || clock == CLOCK_PROCESS_CPUTIME_ID ||
				       clock == CLOCK_THREAD_CPUTIME_ID ?
			       -EOPNOTSUPP :
			       -EINVAL;
	}
	memset(&ev, 0, sizeof(ev));
	if (a->a[1]) {
		if (task_read(t, a->a[1], &ev, sizeof(ev)) < 0)
			return -EFAULT;
	} else {
		ev.sigev_notify = SIGEV_SIGNAL;
		ev.sigev_signo = SIGALRM;
	}
	switch (ev.sigev_notify) {
	case SIGEV_NONE:
		break;
	case SIGEV_SIGNAL:
	case SIGEV_THREAD_ID:
		if (ev.sigev_signo < 1 || ev.sigev_signo > 64)
			return -EINVAL;
		break;
	default:
		return -EINVAL; /* SIGEV_THREAD is glibc's, on THREAD_ID */
	}
	for (g = timers; g; g = g->next)
		if (g->proc == t->proc)
			n++;
	if (n >= TIMERS_PER_PROC_MAX)
		return -EAGAIN;
	for (id = 0; find(t->proc, id); id++)
		;
	g = calloc(1, sizeof(*g));
	if (!g)
		return -ENOMEM;
	g->proc = t->proc;
	g->id = id;
	g->clock = clock;
	g->notify = ev.sigev_notify;
	g->signo = ev.sigev_signo;
	g->value = a->a[1] ? ev.sigev_value : (union sigval){ .sival_int = id };
	if (ev.sigev_notify == SIGEV_THREAD_ID) {
		struct task *x =
			task_by_guest_tid(t->proc->pidns, ev._sigev_un._tid);
		if (!x || x->proc != t->proc) {
			free(g);
			return -EINVAL;
		}
		g->tid = x->tid;
	}
	if (task_write(t, a->a[2], &id, sizeof(id)) < 0) {
		free(g);
		return -EFAULT;
	}
	g->next = timers;
	timers = g;
	return 0;
}

static struct gtimer *timer_of(struct task *t, uint64_t id)
{
	if ((int)id < 0)
		return NULL;
	return find(t->proc, (int)id);
}

static void value_of(const struct gtimer *g, struct itimerspec *cur)
{
	int64_t left = g->deadline ? g->deadline - mono_now() : 0;

	memset(cur, 0, sizeof(*cur));
	if (g->deadline) {
		if (left <= 0)
			left = 1;
		cur->it_value.tv_sec = left / NS;
		cur->it_value.tv_nsec = left % NS;
	}
	cur->it_interval.tv_sec = g->interval / NS;
	cur->it_interval.tv_nsec = g->interval % NS;
}

static long arm(struct gtimer *g, struct itimerspec nv, bool abs_time,
		struct itimerspec *old)
{
	int64_t v;

	if (nv.it_value.tv_sec < 0 || nv.it_value.tv_nsec < 0 ||
	    nv.it_value.tv_nsec >= NS || nv.it_interval.tv_sec < 0 ||
	    nv.it_interval.tv_nsec < 0 || nv.it_interval.tv_nsec >= NS)
		return -EINVAL;
	value_of(g, old);
	if (nv.it_value.tv_sec > 100LL * 365 * 86400 && !abs_time)
		nv.it_value.tv_sec = 100LL * 365 * 86400;
	if (nv.it_interval.tv_sec > 100LL * 365 * 86400)
		nv.it_interval.tv_sec = 100LL * 365 * 86400;
	v = nv.it_value.tv_sec * NS + nv.it_value.tv_nsec;
	g->interval = nv.it_interval.tv_sec * NS + nv.it_interval.tv_nsec;
	g->overrun = 0;
	if (!v) {
		g->deadline = 0;
	} else if (abs_time) {
		/* An absolute time on the timer's clock, as a monotonic
		 * deadline (a later jump of the wall clock is not followed). */
		int64_t rel = v - clock_now(g->clock);
		g->deadline = mono_now() + (rel > 0 ? rel : 0);
		if (!g->deadline)
			g->deadline = 1;
	} else {
		g->deadline = mono_now() + v;
	}
	sentry_wake();
	return 0;
}

long sys_timer_settime(struct task *t, struct syscall_args *a)
{
	struct gtimer *g = timer_of(t, a->a[0]);
	struct itimerspec nv, old;
	int flags = (int)a->a[1];
	long rc;

	if (!g)
		return -EINVAL;
	if (flags & ~TIMER_ABSTIME)
		return -EINVAL;
	if (task_read(t, a->a[2], &nv, sizeof(nv)) < 0)
		return -EFAULT;
	rc = arm(g, nv, flags & TIMER_ABSTIME, &old);
	if (rc < 0)
		return rc;
	if (a->a[3] && task_write(t, a->a[3], &old, sizeof(old)) < 0)
		return -EFAULT;
	return 0;
}

long sys_timer_gettime(struct task *t, struct syscall_args *a)
{
	struct gtimer *g = timer_of(t, a->a[0]);
	struct itimerspec cur;

	if (!g)
		return -EINVAL;
	value_of(g, &cur);
	return task_write(t, a->a[1], &cur, sizeof(cur)) < 0 ? -EFAULT : 0;
}

long sys_timer_getoverrun(struct task *t, struct syscall_args *a)
{
	struct gtimer *g = timer_of(t, a->a[0]);

	return g ? g->overrun : -EINVAL;
}

long sys_timer_delete(struct task *t, struct syscall_args *a)
{
	struct gtimer *g = timer_of(t, a->a[0]);

	if (!g)
		return -EINVAL;
	unlink_timer(g);
	free(g);
	return 0;
}

/* ---- timerfd ------------------------------------------------------------- */

static long tfd_read(struct task *t, struct file *f, void *buf, size_t n,
		     int64_t *off)
{
	struct tfd *d = f->priv;

	(void)t;
	(void)off;
	if (n < 8)
		return -EINVAL;
	if (!d->ticks)
		return (f->flags & O_NONBLOCK) ? -EAGAIN : SYS_BLOCK;
	memcpy(buf, &d->ticks, 8);
	d->ticks = 0;
	d->seq++;
	return 8;
}

static short tfd_poll(struct file *f, short events)
{
	struct tfd *d = f->priv;

	return d->ticks ? (short)(events & (POLLIN | POLLRDNORM)) : 0;
}

static int tfd_stat(struct file *f, struct stat *st)
{
	(void)f;
	memset(st, 0, sizeof(*st));
	st->st_mode = 0600; /* anon inode */
	st->st_nlink = 1;
	st->st_blksize = 4096;
	return 0;
}

static uint64_t tfd_evseq(struct file *f)
{
	return ((struct tfd *)f->priv)->seq;
}

static void tfd_release(struct file *f)
{
	struct tfd *d = f->priv;

	unlink_timer(d->g);
	free(d->g);
	free(d);
}

static const struct file_ops tfd_ops = {
	.read = tfd_read,
	.poll = tfd_poll,
	.stat = tfd_stat,
	.release = tfd_release,
	.evseq = tfd_evseq,
};

long sys_timerfd_create(struct task *t, struct syscall_args *a)
{
	clockid_t clock = (clockid_t)a->a[0];
	int flags = (int)a->a[1];
	struct tfd *d;
	struct gtimer *g;
	long fd;

	if (flags & ~(TFD_NONBLOCK | TFD_CLOEXEC))
		return -EINVAL;
	if (clock == CLOCK_REALTIME_ALARM || clock == CLOCK_BOOTTIME_ALARM)
		return -EPERM; /* waking the host from suspend: not ours */
	if (!clock_ok(clock))
		return -EINVAL;
	d = calloc(1, sizeof(*d));
	g = calloc(1, sizeof(*g));
	if (!d || !g) {
		free(d);
		free(g);
		return -ENOMEM;
	}
	g->id = -2; /* never a timer_create id */
	g->clock = clock;
	g->tfd = d;
	d->g = g;
	g->next = timers;
	timers = g;
	fd = install_anon(t, &tfd_ops,
			  O_RDWR | ((flags & TFD_NONBLOCK) ? O_NONBLOCK : 0), d,
			  (flags & TFD_CLOEXEC) != 0);
	/* On failure, a file that was made has released (unlinked and freed)
	 * g already; one that was not has freed only d. */
	if (fd < 0 && timers == g) {
		timers = g->next;
		free(g);
	}
	return fd;
}

static struct tfd *tfd_of(struct task *t, int fd, long *err)
{
	struct file *f = fd_get(t, fd);

	*err = !f ? -EBADF : f->ops != &tfd_ops ? -EINVAL : 0;
	return *err ? NULL : f->priv;
}

long sys_timerfd_settime(struct task *t, struct syscall_args *a)
{
	struct itimerspec nv, old;
	int flags = (int)a->a[1];
	long rc;
	struct tfd *d = tfd_of(t, (int)a->a[0], &rc);

	if (!d)
		return rc;
	if (flags & ~(TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET))
		return -EINVAL;
	if (task_read(t, a->a[2], &nv, sizeof(nv)) < 0)
		return -EFAULT;
	rc = arm(d->g, nv, flags & TFD_TIMER_ABSTIME, &old);
	if (rc < 0)
		return rc;
	d->ticks = 0;
	if (a->a[3] && task_write(t, a->a[3], &old, sizeof(old)) < 0)
		return -EFAULT;
	return 0;
}

long sys_timerfd_gettime(struct task *t, struct syscall_args *a)
{
	struct itimerspec cur;
	long rc;
	struct tfd *d = tfd_of(t, (int)a->a[0], &rc);

	if (!d)
		return rc;
	value_of(d->g, &cur);
	return task_write(t, a->a[1], &cur, sizeof(cur)) < 0 ? -EFAULT : 0;
}
