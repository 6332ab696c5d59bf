/* sentry/sentry.c: the sentry's event loop.
 *
 * Single-threaded: ptrace requests must come from the thread that traces,
 * and one thread keeps every table free of locks. Each trapped syscall is a
 * seccomp stop; the handler returns a result (the task is resumed with it)
 * or SYS_BLOCK (the task stays stopped and the handler runs again when
 * something changes: a pipe, a child's exit, a host fd, a deadline).
 */
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/signalfd.h>
#include <sys/time.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

#include "platform/platform.h"
#include "sentry/exec.h"
#include "netstack/netstack.h"
#include "netstack/resolver.h"
#include "sentry/control.h"
#include "sentry/pty.h"
#include "sentry/audit.h"
#include "sentry/brokerlink.h"
#include "sentry/sentry.h"
#include "sentry/vfs.h"

struct sentry *S;

int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

void sentry_wake(void)
{
	S->generation++;
}

/* New tasks whose first stop arrived before their parent's clone event. */
static struct early {
	pid_t pid;
	int64_t when;
} * early_stops;
static int n_early, cap_early;

static void note_early_stop(pid_t pid)
{
	if (n_early == cap_early) {
		int ncap = cap_early ? cap_early * 2 : 64;
		struct early *n =
			realloc(early_stops, (size_t)ncap * sizeof(*n));
		if (!n) {
			plat_tkill(pid,
				   SIGKILL); /* cannot track it: no orphan */
			return;
		}
		early_stops = n;
		cap_early = ncap;
	}
	early_stops[n_early].pid = pid;
	early_stops[n_early].when = now_ns();
	n_early++;
}

static bool take_early_stop(pid_t pid)
{
	int i;

	for (i = 0; i < n_early; i++) {
		if (early_stops[i].pid == pid) {
			early_stops[i] = early_stops[--n_early];
			return true;
		}
	}
	return false;
}

int sentry_early_stops(void)
{
	return n_early;
}

/* A child whose parent's clone event never came (the parent died between
 * the two) is a stopped host process no guest knows: kill it. It is still
 * the sentry's unreaped tracee, so its pid cannot have been reused.
 *
 * Its age alone does not say so. waitpid(-1) finds the newest tracees
 * first, so under a flood of forks a parent's event can wait behind its
 * children's stops for seconds; a child killed then left its parent's
 * event naming a process that never stops, and the parent's fork never
 * returned. While a clone is in flight (S->nforking) or a spawn of the
 * reaper's is pending, any early stop may still be claimed; once none
 * is, none will be, and every early stop left is unclaimed. Until then
 * orphans count in pids_in_use, so waiting cannot let them pile up. */
static void reap_unclaimed(void)
{
	int64_t now = now_ns();
	int i = 0;

	if (S->nforking || sentry_spawns_pending())
		return;
	while (i < n_early) {
		if (now - early_stops[i].when > 1000000000LL) {
			if (S->nclone_orphans > 0)
				S->nclone_orphans--;
			plat_tkill(early_stops[i].pid, SIGKILL);
			plat_cont(early_stops[i].pid, 0);
			early_stops[i] = early_stops[--n_early];
		} else {
			i++;
		}
	}
}

/* A stop taken from the kernel is handled later (drain_waits' queue). A
 * non-leader thread's exec in the meantime kills the leader and gives its
 * tid to the exec'ing thread, now at its exec event: the leader's queued
 * seccomp stop is stale, and that tid's real stop comes as its own event.
 * true also when the task is gone (its death comes the same way). */
static bool still_at_seccomp_stop(pid_t pid)
{
	siginfo_t si;

	if (ptrace(PTRACE_GETSIGINFO, pid, 0, &si) < 0)
		return true;
	return si.si_code == (SIGTRAP | (PTRACE_EVENT_SECCOMP << 8));
}

static void complete(struct task *t, long ret);

void sentry_complete(struct task *t, long ret)
{
	complete(t, ret);
}

static void complete(struct task *t, long ret)
{
	const struct syscall_desc *d = syscall_lookup(t->sc.nr);
	int sig;

	/* The task died while its syscall was handled (an injection saw it
	 * go): its host tid may already belong to another process. */
	if (t->state == TS_DEAD)
		return;
	switch (ret) {
	case SYS_BLOCK:
		t->state = TS_BLOCKED;
		return;
	case SYS_NORETURN:
		return;
	case SYS_PASSTHROUGH:
		t->state = TS_RUNNING;
		t->block_started = false;
		t->wait_mask_addr = 0;
		plat_resume_passthrough(t, 0);
		return;
	case SYS_PASSTHROUGH_FIXUP:
		t->state = TS_RUNNING;
		t->block_started = false;
		t->fixup_pending = true;
		plat_resume_passthrough(t, 1);
		return;
	default:
		break;
	}
	if (S->opts.strace && d)
		strace_exit(t, d, ret == SYS_RESTART ? -EINTR : ret);
	t->state = TS_RUNNING;
	t->block_started = false;
	t->io_done = 0;
	if (t->fifo_wait)
		fifo_unwait(t); /* the open was interrupted */
	t->deadline_ns = 0;
	t->wait_hostfd = -1;
	t->lock_wait = NULL;
	t->wait_mask_addr = 0;
	/* Signals that arrived while the task was stopped for us: queue them
	 * on the host now, they are delivered as it returns to user mode. */
	for (sig = 1; t->pending_sigs && sig <= 64; sig++) {
		if (t->pending_sigs & (1ULL << (sig - 1)))
			plat_tkill(t->host_tid, sig);
	}
	t->pending_sigs = 0;
	if (ret == SYS_RESTART)
		plat_resume_restart(t);
	else
		plat_resume_result(t, ret);
}

static void handle_syscall_stop(struct task *t)
{
	const struct syscall_desc *d;
	long ret;

	if (ptrace(PTRACE_GETREGS, t->host_tid, 0, &t->regs) < 0)
		return;
	plat_note_trap(t);
	plat_bind_gofer();
	t->at_exit_stop = false;
	t->sc.nr = (long)t->regs.orig_rax;
	t->sc.a[0] = t->regs.rdi;
	t->sc.a[1] = t->regs.rsi;
	t->sc.a[2] = t->regs.rdx;
	t->sc.a[3] = t->regs.r10;
	t->sc.a[4] = t->regs.r8;
	t->sc.a[5] = t->regs.r9;
	t->block_started = false;
	t->io_done = 0;
	if (t->booting) {
		/* The first task's own execveat of the stub (see
		 * platform/ptrace.c guest_boot): the only host exec a task
		 * makes that the sentry did not write itself. */
		t->booting = false;
		if (t->sc.nr == SYS_execveat && t->sc.a[0] == GUEST_STUB_FD) {
			t->state = TS_RUNNING;
			plat_resume_passthrough(t, 0);
			return;
		}
	}
	d = syscall_lookup(t->sc.nr);
	if (S->opts.strace)
		strace_enter(t, d);
	ret = syscall_dispatch(t);
	complete(t, ret);
}

static void retry_blocked(void)
{
	struct task *t, *next;
	uint64_t gen;

	do {
		gen = S->generation;
		for (t = S->tasks; t; t = next) {
			next = t->next;
			if (t->state != TS_BLOCKED)
				continue;
			t->block_started = true;
			/* Running again, as at its first dispatch: a signal its
			 * own handler raises on it (a write's SIGPIPE) is for
			 * after the call, not an interruption of it. */
			t->state = TS_RUNNING;
			complete(t, syscall_dispatch(t));
		}
	} while (gen != S->generation);
}

static void handle_exit_stop(struct task *t)
{
	struct user_regs_struct r;

	if (!t->fixup_pending) {
		plat_cont(t->host_tid, 0);
		return;
	}
	t->fixup_pending = false;
	if (ptrace(PTRACE_GETREGS, t->host_tid, 0, &r) < 0)
		return;
	task_fixup_result(t, &r);
	ptrace(PTRACE_SETREGS, t->host_tid, 0, &r);
	if (S->opts.strace)
		strace_exit(t, syscall_lookup(t->sc.nr), (long)r.rax);
	plat_cont(t->host_tid, 0);
}

/* Called from the event loop alone (never from a handler), for each event
 * it collected, one by one or as a batch (drain_waits, the deferred ones). */
static void handle_stop(pid_t pid, int st)
{
	struct task *t;
	int sig, ev;

	/* Linux closes a process's files before its parent can learn of its
	 * death: once a wait has reaped it, a write to a pipe whose only
	 * reader it was is EPIPE (CPython's resource tracker tests see it
	 * die so). Files of a process found dead by an earlier event close
	 * here, before this event is looked at, not only at the loop's top:
	 * a batch can hold its death, its parent's wait and that write. */
	if (S->fds_to_release)
		task_release_files();
	t = task_by_host(pid);
	if (S->debug)
		fprintf(stderr,
			"moat-debug: %.3f pid %d (task %d) status 0x%x\n",
			(double)(now_ns() - S->boot_ns) / 1e6, pid,
			t ? t->tid : -1, st);

	if (!t) {
		if (pid == S->reaper && (WIFEXITED(st) || WIFSIGNALED(st))) {
			S->reaper = -1;
			return;
		}
		if (pid == S->reaper && WIFSTOPPED(st)) {
			/* The reaper is traced for its forks alone: each is
			 * a `moat exec` process (sentry_spawn_born). */
			unsigned long msg = 0;
			int sig = 0;

			if ((st >> 16) == PTRACE_EVENT_FORK &&
			    ptrace(PTRACE_GETEVENTMSG, pid, 0, &msg) == 0 &&
			    (pid_t)msg > 1)
				sentry_spawn_born((pid_t)msg,
						  take_early_stop((pid_t)msg));
			else if ((st >> 16) == 0 && WSTOPSIG(st) == SIGUSR1)
				sentry_spawn_born(-1, false); /* fork failed */
			else if ((st >> 16) == 0 && WSTOPSIG(st) != SIGSTOP)
				sig = WSTOPSIG(st);
			ptrace(PTRACE_CONT, pid, 0, sig);
			return;
		}
		if (WIFSTOPPED(st))
			note_early_stop(pid);
		else
			take_early_stop(pid); /* gone: forget it */
		return;
	}
	vfs_ns_enter(t->proc->mntns);
	if (WIFEXITED(st) || WIFSIGNALED(st)) {
		task_exited(t, st);
		return;
	}
	if (!WIFSTOPPED(st))
		return;
	sig = WSTOPSIG(st);
	ev = st >> 16;
	if (ev == PTRACE_EVENT_SECCOMP) {
		if (t->proc->exec_pending && !still_at_seccomp_stop(pid))
			return;
		handle_syscall_stop(t);
		return;
	}
	if (sig == (SIGTRAP | 0x80)) {
		handle_exit_stop(t);
		return;
	}
	switch (ev) {
	case PTRACE_EVENT_FORK:
	case PTRACE_EVENT_VFORK:
	case PTRACE_EVENT_CLONE: {
		unsigned long msg = 0;
		struct task *c;

		/* The parent can die between its event stop and this call (a
		 * sibling's exit_group): then there is no child to know of.
		 * Its stopped child, if any, is an early stop nobody claims;
		 * reap_unclaimed() kills it. */
		if (ptrace(PTRACE_GETEVENTMSG, pid, 0, &msg) < 0 ||
		    (pid_t)msg <= 1)
			c = NULL;
		else
			c = task_clone_event(t, (pid_t)msg, ev);
		if (c && take_early_stop(c->host_tid))
			task_start_child(c);
		ptrace(t->fixup_pending ? PTRACE_SYSCALL : PTRACE_CONT, pid, 0,
		       0);
		return;
	}
	case PTRACE_EVENT_EXEC:
		exec_event(t);
		return;
	case PTRACE_EVENT_STOP:
		if (t->state == TS_NEW) {
			task_start_child(t);
			return;
		}
		if (sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN ||
		    sig == SIGTTOU) {
			/* A group-stop: the task stays stopped (LISTEN lets
			 * SIGCONT end it) and its parent may wait for it. */
			task_group_stop(t, sig);
			ptrace(PTRACE_LISTEN, pid, 0, 0);
			return;
		}
		if (t->proc->stopped)
			task_group_cont(t); /* SIGCONT ended the stop */
		plat_cont(pid, 0);
		return;
	default:
		break;
	}
	/* Signal-delivery stop. */
	if (t->state == TS_NEW) {
		task_start_child(t);
		return;
	}
	if (init_drops_delivery(t, sig)) {
		/* an init's, with no handler: as Linux's get_signal */
		plat_cont(pid, 0);
		return;
	}
	task_fix_siginfo(t, sig);
	if ((sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU) &&
	    t->proc->sigact[sig].handler == (uint64_t)(uintptr_t)SIG_DFL) {
		/* The host would drop it: to the host kernel the guests'
		 * process groups are orphaned (their sessions and groups are
		 * the sentry's). A stop it is, as SIGSTOP, and the wait that
		 * reports it names the signal that was sent. */
		t->proc->stop_as = sig;
		plat_cont(pid, SIGSTOP);
		return;
	}
	plat_cont(pid, sig);
}

/* Stops handled in one turn of the loop at most: a guest whose threads
 * keep stopping (dozens, each in a loop of trapped calls) never empties
 * waitpid, and the loop must still come round to the control socket, the
 * link, the broker and the deadlines. */
#define WAITS_PER_TURN 64
/* Stops taken from the kernel in one turn at most (each is a few words). */
#define GATHER_PER_TURN 8192

/* The queued events, WAITS_PER_TURN at most, oldest first: true if some
 * are left. */
static bool handle_queued(void)
{
	for (int i = 0; i < WAITS_PER_TURN; i++) {
		pid_t pid;
		int st;

		if (!plat_next_deferred(&pid, &st))
			return false;
		handle_stop(pid, st);
	}
	return plat_has_deferred();
}

/* Every stop waiting now is queued behind those queued before, and the
 * oldest are handled: true if some are left. waitpid(-1) finds the newest
 * tracees first, so taking its first 64 each turn served a flood of new
 * children before their parents' events, and a thread behind busy ones
 * could wait for seconds (a parent's fork event among them, which
 * reap_unclaimed once took for an orphan's). In the queue's order every
 * stop is handled within (stops before it / 64) turns. */
static bool drain_waits(void)
{
	bool capped = true;

	for (int i = 0; i < GATHER_PER_TURN; i++) {
		int st;
		pid_t pid;

		if (!plat_defer_reserve()) {
			/* no memory for the queue: in the kernel's order */
			if (plat_has_deferred()) {
				handle_queued();
				return true;
			}
			pid = waitpid(-1, &st, __WALL | WNOHANG);
			if (pid <= 0)
				return false;
			handle_stop(pid, st);
			return true;
		}
		pid = waitpid(-1, &st, __WALL | WNOHANG);
		if (pid <= 0) {
			capped = false;
			break;
		}
		plat_defer(pid, st);
	}
	return handle_queued() || capped;
}

static int live_tasks(void)
{
	return S->nlive;
}

static volatile sig_atomic_t tick;
volatile sig_atomic_t sentry_term;

static void on_term(int sig)
{
	(void)sig;
	sentry_term = 1;
}

void sentry_catch_term(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_term; /* no SA_RESTART: a wait sees it at once */
	sigaction(SIGTERM, &sa, NULL);
}

/* Everything of the guests' goes, as on init's death: --timeout, or a
 * SIGTERM. */
static void kill_all(void)
{
	struct process *q;

	plat_kill(S->reaper, SIGKILL);
	for (q = S->procs; q; q = q->next)
		if (!q->exited)
			plat_kill(q->host_pid, SIGKILL);
}

static void on_tick(int sig)
{
	(void)sig;
	tick = 1;
}

/* A 10 ms tick interrupts the blocking waitpid (no SA_RESTART) so that
 * compute-bound tasks can be let off the sentry's CPU, and so that a wait
 * on one task during an injection can time out. */
static void start_tick(void)
{
	struct sigaction sa;
	struct itimerval it = { { 0, 10000 }, { 0, 10000 } };

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_tick;
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
}

int sentry_loop(void)
{
	sigset_t mask;
	int sfd;

	sigemptyset(&mask);
	sigaddset(&mask, SIGCHLD);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	sfd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
	if (sfd < 0)
		return -errno;
	start_tick();
	bool polled = true;
	bool sig_ready = true;	 /* after a poll: did sfd say a SIGCHLD came? */
	bool waits_left = false; /* drain_waits stopped at its budget */
	uint64_t retried_gen = (uint64_t)-1;

	for (;;) {
		struct pollfd pfds[96];
		int n = 0, timeout = -1;
		int64_t now, next_deadline = 0;
		struct signalfd_siginfo si[8];
		struct task *t;

		/* `moat pause`: nothing of the guests is handled until
		 * resume; frozen tasks would never reach the stops the
		 * sentry waits for. */
		if (S->paused)
			control_wait_resume();
		if (polled && (sig_ready || waits_left)) {
			/* After a poll, collect everything that happened. After
			 * a blocking waitpid there is nothing more to collect
			 * that the next waitpid would not return; after a poll
			 * that sfd did not wake, nothing at all: every stop,
			 * exit and continue sends a SIGCHLD, and each one
			 * read here is read before the waits it announces. */
			while (read(sfd, si, sizeof(si)) == (ssize_t)sizeof(si))
				;
			/* a SIGCHLD read here announced what is left: the
			 * next turn drains it whatever sfd says */
			waits_left = drain_waits();
		} else if (plat_has_deferred()) {
			/* events that arrived while a handler waited on one
			 * task (platform/ptrace.c), in their order */
			waits_left = handle_queued();
		}
		polled = false;
		if (S->fds_to_release)
			task_release_files();
		/* a pod member's are freed at once: its namespace, and its
		 * gofers, end with its last process (sentry/pod.h) */
		if (S->ndead > 32 || S->sweep_soon) {
			S->sweep_soon = false;
			task_sweep();
		}
		if (sentry_term == 1) {
			/* the sandbox is being ended (moat delete): its guests
			 * go, and the loop ends as it does after them, so that
			 * the audit log's end is written */
			sentry_term = 2;
			kill_all();
		}
		if (tick) {
			tick = 0;
			if (S->deadline_ns && !S->timed_out &&
			    now_ns() > S->deadline_ns) {
				S->timed_out = true;
				kill_all();
			}
			audit_tick();
			plat_release_busy();
			task_poll_host_signals();
			if (n_early)
				reap_unclaimed();
			else if (!S->nforking)
				S->nclone_orphans = 0; /* none left to come */
		}
		{
			int64_t due = timers_next();
			if (due && due <= now_ns())
				timers_run();
		}
		if (S->generation != retried_gen) {
			retry_blocked();
			retried_gen = S->generation;
		}
		if (S->init_exited && !live_tasks())
			break;
		pfds[n].fd = sfd;
		pfds[n].events = POLLIN;
		n++;
		/* -t: the host terminal's side of the sandbox's pty */
		n += pty_relay_pollfds(pfds + n, (int)ARRAY_SIZE(pfds) - n);
		/* --name: requests from outside (moat kill) */
		n += control_pollfds(pfds + n, (int)ARRAY_SIZE(pfds) - n);
		/* --net: the link's frames */
		n += netstack_pollfds(pfds + n, (int)ARRAY_SIZE(pfds) - n);
		/* the broker's messages and the flows it relays */
		n += broker_pollfds(pfds + n, (int)ARRAY_SIZE(pfds) - n);
		for (t = S->tasks; t; t = t->next) {
			if (t->state != TS_BLOCKED)
				continue;
			if (t->wait_hostfd >= 0 && n < (int)ARRAY_SIZE(pfds)) {
				pfds[n].fd = t->wait_hostfd;
				pfds[n].events = t->wait_events;
				n++;
			}
			if (t->deadline_ns &&
			    (!next_deadline || t->deadline_ns < next_deadline))
				next_deadline = t->deadline_ns;
		}
		{
			int64_t due[5] = { timers_next(), netstack_deadline(),
					   resolver_deadline(),
					   control_deadline(),
					   broker_deadline() };
			for (size_t i = 0; i < ARRAY_SIZE(due); i++)
				if (due[i] &&
				    (!next_deadline || due[i] < next_deadline))
					next_deadline = due[i];
		}
		/* the handlers since the drain (injections in a retry, a
		 * timer, a host signal) may have queued events */
		if (plat_has_deferred())
			waits_left = true;
		if (n == 1 && !next_deadline && !waits_left) {
			/* Nothing but tasks to wait for (the common case): block
			 * in waitpid itself, one host call per event. */
			int st;
			pid_t pid = waitpid(-1, &st, __WALL);
			if (pid > 0)
				handle_stop(pid, st);
			else if (errno == ECHILD)
				break;
			continue;
		}
		if (next_deadline) {
			now = now_ns();
			timeout = next_deadline <= now ?
					  0 :
					  (int)((next_deadline - now + 999999) /
						1000000);
		}
		if (waits_left)
			timeout = 0; /* a look at the rest, then more stops */
		{
			int pr = poll(pfds, (nfds_t)n, timeout);

			if (pr < 0 && errno != EINTR)
				return -errno;
			sig_ready = pr < 0 || pfds[0].revents;
		}
		pty_relay_pump();
		control_pump();
		netstack_pump();
		broker_pump();
		{
			int64_t due = resolver_deadline();
			if (due && due <= now_ns())
				resolver_run();
		}
		polled = true;
		/* Any readiness or timeout may unblock someone. */
		sentry_wake();
	}
	close(sfd);
	return 0;
}
