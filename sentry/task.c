/* sentry/task.c: tasks, processes, virtual pids, fork/clone, exit and wait,
 * signals between guest processes.
 *
 * Virtual pids are the sentry's: the first guest process is pid 1, and the
 * host pids (numbers in the reaper's pid namespace) are never shown to the
 * guest. Every syscall that takes or returns a pid is emulated.
 */
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "platform/platform.h"
#include "sentry/pty.h"
#include "sentry/sentry.h"
#include "sentry/syscalls.h"
#include "sentry/pod.h"
#include "sentry/vfs.h"
#include "sentry/exec.h"

#define HASH(h) ((unsigned)(h) % ARRAY_SIZE(S->by_host))

struct task *task_by_host(pid_t htid)
{
	struct task *t;

	for (t = S->by_host[HASH(htid)]; t; t = t->hash_next)
		if (t->host_tid == htid && t->state != TS_DEAD)
			return t;
	return NULL;
}

struct task *task_by_vtid(int tid)
{
	struct task *t;

	for (t = S->tasks; t; t = t->next)
		if (t->tid == tid && t->state != TS_DEAD)
			return t;
	return NULL;
}

#define PID_HASH(pid) ((unsigned)(pid) % ARRAY_SIZE(S->by_pid))

struct process *proc_by_pid(int pid)
{
	struct process *p;

	for (p = S->by_pid[PID_HASH(pid)]; p; p = p->pid_next)
		if (p->pid == pid && !p->reaped)
			return p;
	return NULL;
}

void proc_set_pid(struct process *p, int pid)
{
	p->pid = pid;
	p->pid_next = S->by_pid[PID_HASH(pid)];
	S->by_pid[PID_HASH(pid)] = p;
}

static void unhash_proc(struct process *p)
{
	struct process **pp;

	for (pp = &S->by_pid[PID_HASH(p->pid)]; *pp; pp = &(*pp)->pid_next) {
		if (*pp == p) {
			*pp = p->pid_next;
			return;
		}
	}
}

/* ---- pid namespaces ---------------------------------------------------
 *
 * Only a pod member's first process has a number of its own (1); every
 * other process of a member keeps its pod number, which no other process
 * of the pod has. So a namespace is its init's pod pid, and a number is
 * translated by that one comparison and by who may see it: a member sees
 * its own processes alone, the pod's namespace sees all (as an ancestor
 * pid namespace does in Linux). */

struct pidns *pidns_new(int init)
{
	struct pidns *ns = calloc(1, sizeof(*ns));

	if (!ns)
		return NULL;
	ns->refs = 1;
	ns->init = init;
	return ns;
}

struct pidns *pidns_get(struct pidns *ns)
{
	if (ns)
		ns->refs++;
	return ns;
}

void pidns_put(struct pidns *ns)
{
	if (ns && --ns->refs == 0)
		free(ns);
}

bool pid_visible(const struct pidns *ns, const struct process *p)
{
	return !ns || ns == p->pidns;
}

/* Is pod pid pid, of no process or thread now, the group or session of
 * one of ns's processes (whose leader has gone)? */
static bool ns_group(const struct pidns *ns, int pid)
{
	for (const struct process *q = S->procs; q; q = q->next)
		if (!q->reaped && q->pidns == ns &&
		    (q->pgid == pid || q->sid == pid))
			return true;
	return false;
}

int pid_in_ns(const struct pidns *ns, int pid)
{
	return ns && pid == ns->init ? 1 : pid;
}

int pid_to_guest(const struct pidns *ns, int pid)
{
	const struct process *p;
	const struct task *t;

	if (!ns || pid <= 0)
		return pid;
	if ((p = proc_by_pid(pid)))
		return p->pidns != ns ? 0 : pid_in_ns(ns, pid);
	if (pid == ns->init) /* reaped: a number kept of it */
		return 1;
	if ((t = task_by_vtid(pid)))
		return t->proc->pidns == ns ? pid : 0;
	return ns_group(ns, pid) ? pid : 0;
}

int pid_from_guest(const struct pidns *ns, int vpid)
{
	if (!ns || vpid <= 0)
		return vpid;
	if (vpid == 1)
		return ns->init;
	return vpid == ns->init ? PID_MAX : vpid;
}

struct process *proc_by_vpid(const struct pidns *ns, int vpid)
{
	struct process *p = proc_by_pid(pid_from_guest(ns, vpid));

	return p && pid_visible(ns, p) ? p : NULL;
}

struct task *task_by_guest_tid(const struct pidns *ns, int vtid)
{
	struct task *t = task_by_vtid(pid_from_guest(ns, vtid));

	return t && pid_visible(ns, t->proc) ? t : NULL;
}

bool guest_pid_exists(const struct pidns *ns, int vpid)
{
	return vpid > 0 &&
	       (proc_by_vpid(ns, vpid) || task_by_guest_tid(ns, vpid));
}

bool guest_pgrp_exists(const struct pidns *ns, int vpgid)
{
	int pgid = pid_from_guest(ns, vpgid);

	if (vpgid <= 0)
		return false;
	for (const struct process *q = S->procs; q; q = q->next)
		if (!q->reaped && !q->exited && q->pgid == pgid &&
		    pid_visible(ns, q))
			return true;
	return false;
}

/* Pids are handed out in order: until they first wrap, the next one has
 * never been used, and only after that is it looked for (a thread group
 * that exec'd keeps its leader's pid, one of those handed out before). */
int alloc_pid(void)
{
	for (;;) {
		int pid = S->next_pid++;
		if (S->next_pid >= PID_MAX) {
			S->next_pid = 2;
			S->pids_wrapped = true;
		}
		if (!S->pids_wrapped ||
		    (!proc_by_pid(pid) && !task_by_vtid(pid)))
			return pid;
	}
}

/* What Linux's pids cgroup counts: tasks alive, zombies not yet reaped
 * (a fork bomb of children never waited for is one too), clones let
 * through whose child the sentry has not met yet, and orphans: children
 * whose parent died between its clone and the clone's event. Each orphan
 * is an early stop (sentry.c), a host process until reap_unclaimed kills
 * it, and there are no more of them than clones ended by their parent's
 * death (S->nclone_orphans) nor than early stops. */
int pids_in_use(void)
{
	int early = sentry_early_stops();
	int orphans = early < S->nclone_orphans ? early : S->nclone_orphans;

	return S->nlive + S->nzombies + S->nforking + orphans;
}

/* p's parent (or the sentry) has collected it: it no longer counts. */
void proc_reap(struct process *p)
{
	if (p->reaped)
		return;
	p->reaped = true;
	if (p->exited)
		S->nzombies--;
}

struct task *task_new(pid_t host_tid, struct process *p)
{
	struct task *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->host_tid = host_tid;
	t->proc = p;
	t->state = TS_NEW;
	t->wait_hostfd = -1;
	t->cpu = -1;
	S->nlive++;
	t->next = S->tasks;
	S->tasks = t;
	t->hash_next = S->by_host[HASH(host_tid)];
	S->by_host[HASH(host_tid)] = t;
	p->nthreads++;
	return t;
}

static void unhash_task(struct task *t)
{
	struct task **pp;

	for (pp = &S->by_host[HASH(t->host_tid)]; *pp; pp = &(*pp)->hash_next) {
		if (*pp == t) {
			*pp = t->hash_next;
			return;
		}
	}
}

struct process *proc_new(struct process *parent)
{
	struct process *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	if (parent && sysv_fork(parent, p) < 0) {
		free(p);
		return NULL;
	}
	if (parent) {
		p->ppid = parent->pid;
		p->pgid = parent->pgid;
		p->sid = parent->sid;
		p->cred = parent->cred;
		p->nondumpable = parent->nondumpable;
		p->no_new_privs = parent->no_new_privs;
		p->oom_score_adj = parent->oom_score_adj;
		p->oom_score_adj_min = parent->oom_score_adj_min;
		p->umask = parent->umask;
		p->nice = parent->nice;
		p->ctty = parent->ctty;
		p->sched_policy = parent->sched_policy;
		p->affinity = parent->affinity;
		memcpy(p->sigact, parent->sigact, sizeof(p->sigact));
		memcpy(p->rlim, parent->rlim, sizeof(p->rlim));
		memcpy(p->comm, parent->comm, sizeof(p->comm));
		p->cwd = vnode_get(parent->cwd);
		p->exe = vnode_get(parent->exe);
		p->cmdline = parent->cmdline;
		if (p->cmdline)
			p->cmdline->refs++;
		maps_copy(p, parent);
	} else {
		p->umask = 022;
		p->cred.cap = CAP_SETS_ROOT;
		p->ctty = -1;
		p->affinity = S->cpus;
	}
	p->mntns = vfs_ns_get(parent ? parent->mntns : vfs_ns());
	p->pidns = pidns_get(parent ? parent->pidns : NULL);
	p->next = S->procs;
	S->procs = p;
	return p;
}

/* ---- clone ---------------------------------------------------------- */

#define CLONE_NS_FLAGS                                                         \
	(CLONE_NEWNS | CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET |           \
	 CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWCGROUP)

/* Validate the flags and let the host create the task. CLONE_PARENT is
 * forced on new processes so the reaper, not a guest, is their host parent
 * (the guest's parent is virtual, kept in struct process). */
static long do_clone(struct task *t, uint64_t flags, uint64_t ptid,
		     uint64_t ctid)
{
	struct user_regs_struct r;

	if (flags & CLONE_NS_FLAGS)
		return -EPERM;
	/* Clones let through whose child the sentry has not met yet count
	 * too: a bomb's many forkers, each past the check before any child's
	 * event, would overshoot it, and without a pids cgroup (one that
	 * cannot be made) nothing else would stop them. */
	if (S->opts.pids && pids_in_use() >= S->opts.pids) {
		S->pids_refused++;
		return -EAGAIN; /* as fork does past RLIMIT_NPROC or pids.max */
	}
	/* What a new process copies of its parent is the sentry's heap,
	 * which no memory cgroup sees: it has budgets of its own, checked
	 * here, where the fork can still fail as Linux's does when a kernel
	 * allocation is refused. */
	if (!(flags & CLONE_THREAD) &&
	    ((!(flags & CLONE_FILES) && !fdtable_dup_fits(t->proc->fdt)) ||
	     !sysv_fork_fits(t->proc)))
		return -ENOMEM;
	/* CLONE_UNTRACED would run a child outside the sentry; CLONE_PTRACE
	 * and CLONE_PIDFD would hand the guest host objects. */
	if (flags & (CLONE_UNTRACED | CLONE_PTRACE | CLONE_PIDFD))
		return -EINVAL;
	if ((flags & CLONE_THREAD) && !(flags & CLONE_SIGHAND))
		return -EINVAL;
	if ((flags & CLONE_SIGHAND) && !(flags & CLONE_VM))
		return -EINVAL;
	if (!(flags & CLONE_THREAD)) {
		/* The new process's exit signal comes from the reaper's
		 * child (SIGCHLD); the guest's choice is kept virtually. */
		flags |= CLONE_PARENT;
	}
	t->clone_flags = flags;
	t->clone_ptid = ptid;
	t->clone_ctid = ctid;
	t->fixup_kind = 1;
	r = t->regs;
	r.orig_rax = SYS_clone;
	r.rdi = flags;
	r.rsi = t->sc.a[1];
	r.rdx = ptid;
	r.r10 = ctid;
	r.r8 = t->sc.a[4];
	if (t->sc.nr != SYS_clone) {
		r.rsi = 0;
		r.r8 = 0;
	}
	if (ptrace(PTRACE_SETREGS, t->host_tid, 0, &r) < 0)
		return -ESRCH;
	t->clone_inflight = true;
	S->nforking++;
	return SYS_PASSTHROUGH_FIXUP;
}

/* The clone t made is settled: its child is known (the event), or it
 * failed (the syscall returned without one), or t died. */
static void clone_settled(struct task *t)
{
	if (t->clone_inflight) {
		t->clone_inflight = false;
		S->nforking--;
	}
}

long sys_clone(struct task *t, struct syscall_args *a)
{
	/* x86_64: clone(flags, stack, ptid, ctid, tls) */
	return do_clone(t, a->a[0], a->a[2], a->a[3]);
}

long sys_fork(struct task *t, struct syscall_args *a)
{
	(void)a;
	return do_clone(t, SIGCHLD, 0, 0);
}

long sys_vfork(struct task *t, struct syscall_args *a)
{
	(void)a;
	return do_clone(t, CLONE_VM | CLONE_VFORK | SIGCHLD, 0, 0);
}

long sys_unshare(struct task *t, struct syscall_args *a)
{
	uint64_t flags = a->a[0];

	(void)t;
	if (flags & (CLONE_NS_FLAGS | CLONE_NEWTIME))
		return (flags &
			~(uint64_t)(CLONE_NS_FLAGS | CLONE_NEWTIME |
				    CLONE_SYSVSEM | CLONE_FILES | CLONE_FS |
				    CLONE_VM | CLONE_SIGHAND | CLONE_THREAD)) ?
			       -EINVAL :
			       -EPERM;
	if (flags & ~(uint64_t)(CLONE_FILES | CLONE_FS | CLONE_VM |
				CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM))
		return -EINVAL;
	/* Private fd tables and fs state per process already: nothing to do
	 * for a single-threaded caller. */
	return 0;
}

long sys_setns(struct task *t, struct syscall_args *a)
{
	(void)t;
	(void)a;
	return -EPERM;
}

long sys_clone3(struct task *t, struct syscall_args *a)
{
	(void)t;
	(void)a;
	/* Its arguments are in guest memory, which another thread could change
	 * between the sentry's check and the host's read. libc falls back to
	 * clone on ENOSYS. */
	return -ENOSYS;
}

/* A new process whose child the sentry gives up on: it never ran, nobody
 * waits for it, and task_sweep frees it. */
static void proc_unborn(struct process *p)
{
	sysv_proc_gone(p);
	maps_clear(p);
	p->exited = p->reaped = true; /* never a zombie */
}

struct task *task_clone_event(struct task *parent, pid_t child_host, int ev)
{
	struct process *p;
	struct task *c;
	uint64_t flags = parent->clone_flags;
	int vtid;

	clone_settled(parent); /* the child is counted in nlive from here */
	if (task_by_host(child_host))
		return NULL;
	vtid = alloc_pid();
	if (ev == PTRACE_EVENT_CLONE && (flags & CLONE_THREAD)) {
		p = parent->proc;
	} else {
		/* Out of memory, or a budget another fork took since do_clone
		 * checked it: the parent's clone fails with ENOMEM, and the
		 * child, never known, is killed (reap_unclaimed). */
		parent->fixup_value = -ENOMEM;
		p = proc_new(parent->proc);
		if (!p)
			return NULL;
		proc_set_pid(p, vtid);
		p->host_pid = child_host;
		if (flags & CLONE_FILES) {
			p->fdt = parent->proc->fdt;
			p->fdt->refs++;
		} else {
			p->fdt = fdtable_dup(parent->proc->fdt);
		}
		if (!p->fdt) {
			proc_unborn(p);
			return NULL;
		}
	}
	c = task_new(child_host, p);
	if (!c) {
		if (p != parent->proc)
			proc_unborn(p);
		return NULL;
	}
	c->tid = vtid;
	if (p->pid == vtid)
		p->leader = c;
	/* Both are stopped: replace the host tids the kernel stored. */
	if ((flags & CLONE_PARENT_SETTID) && parent->clone_ptid)
		task_write(parent, parent->clone_ptid, &vtid, sizeof(vtid));
	if ((flags & CLONE_CHILD_SETTID) && parent->clone_ctid)
		task_write(c, parent->clone_ctid, &vtid, sizeof(vtid));
	parent->fixup_value = vtid;
	/* The child starts with the registers the host clone saw, where the
	 * sentry rewrote the argument registers; give it the guest's own (a
	 * vfork wrapper keeps its return address in rdi across the call). */
	c->regs = parent->regs;
	c->fix_clone_regs = true;
	return c;
}

static void restore_arg_regs(struct user_regs_struct *r,
			     const struct user_regs_struct *orig)
{
	r->rdi = orig->rdi;
	r->rsi = orig->rsi;
	r->rdx = orig->rdx;
	r->r10 = orig->r10;
	r->r8 = orig->r8;
	r->r9 = orig->r9;
}

void task_start_child(struct task *c)
{
	if (c->fix_clone_regs) {
		struct user_regs_struct r;
		c->fix_clone_regs = false;
		if (ptrace(PTRACE_GETREGS, c->host_tid, 0, &r) == 0) {
			restore_arg_regs(&r, &c->regs);
			ptrace(PTRACE_SETREGS, c->host_tid, 0, &r);
		}
	}
	c->state = TS_RUNNING;
	plat_set_options(c->host_tid);
	plat_cont(c->host_tid, 0);
}

static void fix_waited_info(struct task *t, long ret, uint64_t uinfo);

void task_fixup_result(struct task *t, struct user_regs_struct *r)
{
	switch (t->fixup_kind) {
	case 1: /* clone: host pid -> virtual */
		clone_settled(t);
		if ((long)r->rax > 0)
			r->rax = (unsigned long long)t->fixup_value;
		restore_arg_regs(r, &t->regs);
		break;
	case 2: /* set_tid_address */
		r->rax = (unsigned long long)pid_in_ns(t->proc->pidns, t->tid);
		break;
	case 3: /* execve whose host exec of the stub failed */
		exec_failed(t);
		break;
	case 4: /* rt_sigtimedwait: the siginfo it returned */
		fix_waited_info(t, (long)r->rax, t->fixup_addr);
		break;
	case 5: /* task_pass_arg0: the guest's own argument registers */
		restore_arg_regs(r, &t->regs);
		break;
	default:
		break;
	}
	t->fixup_kind = 0;
}

long task_pass_arg0(struct task *t, uint64_t a0)
{
	struct user_regs_struct r = t->regs;

	r.rdi = a0;
	if (ptrace(PTRACE_SETREGS, t->host_tid, 0, &r) < 0)
		return -ESRCH;
	t->fixup_kind = 5;
	return SYS_PASSTHROUGH_FIXUP;
}

long sys_set_tid_address(struct task *t, struct syscall_args *a)
{
	t->clear_child_tid = a->a[0];
	t->fixup_kind = 2;
	return SYS_PASSTHROUGH_FIXUP;
}

/* ---- exit and wait -------------------------------------------------- */

/* Who adopts q, orphaned by gone's death: its pid namespace's init (the
 * pod's is 1), or 0 when that init is gone too. */
static int reaper_of(const struct process *q, const struct process *gone)
{
	const struct process *init;

	if (!q->pidns)
		return 1;
	init = proc_by_pid(q->pidns->init);
	return init && init != gone && !init->exited ? init->pid : 0;
}

/* Zombie q was just reparented to init. */
static void zombie_to_init(struct process *q)
{
	struct process *init = proc_by_pid(q->ppid);
	struct sigact_rec *sa;

	if (!init || init->exited)
		return;
	sa = &init->sigact[SIGCHLD];
	if (sa->handler == (uint64_t)(uintptr_t)SIG_IGN ||
	    (sa->flags & SA_NOCLDWAIT)) {
		proc_reap(q);
		return;
	}
	init->chld_pid = pid_to_guest(init->pidns, q->pid);
	init->chld_status = q->exit_status;
	send_signal_proc(init, SIGCHLD, q->pid);
}

static void proc_exited(struct process *p, int status)
{
	struct process *q, *parent;

	p->exited = true;
	p->exit_status = status;
	maps_clear(p); /* a zombie has no maps to show */
	timers_exit(p);
	locks_proc_gone(p);
	notify_proc_gone(p);
	sysv_proc_gone(p);
	mqueue_proc_gone(p);
	/* Its files close before the event loop looks at its next event
	 * (handle_stop), not here: a handler that learnt of this death in
	 * the middle of an injection may still hold one of them (found by
	 * the ASan end-to-end run). */
	S->fds_to_release = true;
	/* Orphans go to virtual init. One that is a zombie already is
	 * init's to reap, as Linux's reparent_leader has it: init hears of
	 * it, or, if it ignores SIGCHLD, it is reaped at once. */
	for (q = S->procs; q; q = q->next) {
		if (q->ppid != p->pid || q->reaped || q == p)
			continue;
		/* A member's with a pid namespace of its own go to its
		 * init; with none left, nobody waits for them. */
		q->ppid = reaper_of(q, p);
		if (!q->ppid && q->exited)
			proc_reap(q);
		else if (q->exited && p->pid != 1)
			zombie_to_init(q);
	}
	if (p->pid == 1) {
		S->init_exited = true;
		S->init_status = status;
		/* Like the death of a pid namespace's init: everything goes. */
		if (S->reaper > 0)
			plat_kill(S->reaper, SIGKILL);
		for (q = S->procs; q; q = q->next)
			if (!q->exited && q->host_pid > 0)
				plat_kill(q->host_pid, SIGKILL);
	}
	parent = proc_by_pid(p->ppid);
	if (p->ppid == 0 && p->pid != 1) {
		/* A `moat exec` process: its parent is outside. What it
		 * wrote to its terminal goes out before its client hears. */
		pty_relay_end(p);
		control_proc_exited(p);
		p->reaped = true;
	} else if (parent && !parent->exited) {
		struct sigact_rec *sa = &parent->sigact[SIGCHLD];
		if (sa->handler == (uint64_t)(uintptr_t)SIG_IGN ||
		    (sa->flags & SA_NOCLDWAIT)) {
			p->reaped = true; /* auto-reap, as Linux does */
		} else {
			parent->chld_pid = pid_to_guest(parent->pidns, p->pid);
			parent->chld_status = status;
			send_signal_proc(parent, SIGCHLD, p->pid);
		}
	}
	if (!p->reaped)
		S->nzombies++;
	sentry_wake();
}

void task_exited(struct task *t, int status)
{
	struct process *p = t->proc;

	if (t->state == TS_DEAD)
		return;
	if (t->fifo_wait)
		fifo_unwait(t);
	t->state = TS_DEAD;
	if (t->clone_inflight)
		S->nclone_orphans++; /* its child, if any, is an orphan */
	clone_settled(t);
	S->nlive--;
	S->ndead++;
	if (p->mntns != vfs_ns0())
		S->sweep_soon = true;
	unhash_task(t);
	p->nthreads--;
	if (t == p->leader || p->nthreads <= 0) {
		if (!p->exited && (t == p->leader || p->nthreads <= 0))
			proc_exited(p, status);
	}
	sentry_wake();
}

/* A job-control change of p for its parent: SIGCHLD (CLD_STOPPED or
 * CLD_CONTINUED) unless the parent asked not to hear of stops. */
static void tell_parent(struct process *p, int status)
{
	struct process *parent = proc_by_pid(p->ppid);
	struct sigact_rec *sa;

	sentry_wake();
	if (!parent || parent->exited)
		return;
	sa = &parent->sigact[SIGCHLD];
	if (sa->handler == (uint64_t)(uintptr_t)SIG_IGN ||
	    (sa->flags & SA_NOCLDSTOP))
		return;
	parent->chld_pid = pid_to_guest(parent->pidns, p->pid);
	parent->chld_status = status;
	send_signal_proc(parent, SIGCHLD, p->pid);
}

void task_group_stop(struct task *t, int sig)
{
	struct process *p = t->proc;

	if (p->stopped || p->exited)
		return;
	if (sig == SIGSTOP && p->stop_as) {
		sig = p->stop_as;
		p->stop_as = 0;
	}
	p->stopped = true;
	p->stop_sig = sig;
	p->stop_pending = true;
	p->cont_pending = false;
	tell_parent(p, (sig << 8) | 0x7f);
}

void task_group_cont(struct task *t)
{
	struct process *p = t->proc;

	if (!p->stopped)
		return;
	p->stopped = false;
	p->stop_pending = false;
	p->cont_pending = true;
	tell_parent(p, 0xffff);
}

/* A wait's or kill's pid argument (a pid, -1, 0 or a group's -pgid) as
 * the pod numbers it. */
static int pid_arg_from_guest(const struct pidns *ns, int pid)
{
	if (pid > 0)
		return pid_from_guest(ns, pid);
	return pid < -1 ? -pid_from_guest(ns, -pid) : pid;
}

/* pid: the pod's number (pid_arg_from_guest) */
static bool wait_matches(struct process *self, struct process *c, int pid)
{
	if (c->ppid != self->pid || c->reaped)
		return false;
	if (pid > 0)
		return c->pid == pid;
	if (pid == -1)
		return true;
	if (pid == 0)
		return c->pgid == self->pgid;
	return c->pgid == -pid;
}

/* Find a child with something to report: it exited (exited), or, when
 * asked, it stopped or continued since the last report. Returns it, NULL
 * with *any set if children exist. */
static struct process *find_zombie_or(struct process *self, int pid, bool *any,
				      bool want_exit, bool stopped,
				      bool continued)
{
	struct process *c;

	*any = false;
	for (c = S->procs; c; c = c->next) {
		if (!wait_matches(self, c, pid))
			continue;
		*any = true;
		if (c->exited && want_exit)
			return c;
		if (!c->exited && ((stopped && c->stop_pending) ||
				   (continued && c->cont_pending)))
			return c;
	}
	return NULL;
}

long sys_wait4(struct task *t, struct syscall_args *a)
{
	int pid = (int)a->a[0];
	int options = (int)a->a[2], vpid;
	bool any;
	struct process *c;

	if (options & ~(WNOHANG | WUNTRACED | WCONTINUED | __WALL | __WCLONE |
			__WNOTHREAD))
		return -EINVAL;
	if (pid == INT32_MIN)
		return -ESRCH;
	c = find_zombie_or(t->proc, pid_arg_from_guest(t->proc->pidns, pid),
			   &any, true, options & WUNTRACED,
			   options & WCONTINUED);
	if (!c)
		return !any ? -ECHILD : (options & WNOHANG) ? 0 : SYS_BLOCK;
	if (!c->exited) {
		/* a stop or a continue, reported once */
		int st = c->stop_pending ? (c->stop_sig << 8) | 0x7f : 0xffff;
		if (a->a[1] && task_write(t, a->a[1], &st, sizeof(int)) < 0)
			return -EFAULT;
		if (c->stop_pending)
			c->stop_pending = false;
		else
			c->cont_pending = false;
		return pid_to_guest(t->proc->pidns, c->pid);
	}
	if (a->a[1] && task_write(t, a->a[1], &c->exit_status, sizeof(int)) < 0)
		return -EFAULT;
	if (a->a[3]) {
		struct rusage ru;
		memset(&ru, 0, sizeof(ru));
		if (task_write(t, a->a[3], &ru, sizeof(ru)) < 0)
			return -EFAULT;
	}
	/* translated while c is still the pod's: a reaped pid is nobody's */
	vpid = pid_to_guest(t->proc->pidns, c->pid);
	proc_reap(c);
	return vpid;
}

static int pidfd_target(struct task *t, int fd, int *pid, bool *nonblock);

/* The rusage of a reported child: all zeros, as for wait4. */
static long put_zero_rusage(struct task *t, uint64_t uru)
{
	struct rusage ru;

	memset(&ru, 0, sizeof(ru));
	return uru && task_write(t, uru, &ru, sizeof(ru)) < 0 ? -EFAULT : 0;
}

long sys_waitid(struct task *t, struct syscall_args *a)
{
	int idtype = (int)a->a[0], id = (int)a->a[1], options = (int)a->a[3];
	int pid;
	bool any, nonblock, eagain = false;
	struct process *c;
	siginfo_t si;
	long rc;

	switch (idtype) {
	case P_ALL:
		pid = -1;
		break;
	case P_PID:
		pid = pid_from_guest(t->proc->pidns, id);
		if (id <= 0)
			return -EINVAL;
		break;
	case P_PGID:
		if (id < 0)
			return -EINVAL;
		pid = id ? -pid_from_guest(t->proc->pidns, id) : 0;
		break;
	case P_PIDFD:
		rc = pidfd_target(t, id, &pid, &nonblock);
		if (rc < 0)
			return rc;
		/* Linux: an O_NONBLOCK pidfd waits as WNOHANG, and says
		 * EAGAIN where WNOHANG itself would say 0. */
		eagain = nonblock && !(options & WNOHANG);
		if (nonblock)
			options |= WNOHANG;
		break;
	default:
		return -EINVAL;
	}
	if (!(options & (WEXITED | WSTOPPED | WCONTINUED)))
		return -EINVAL;
	c = find_zombie_or(t->proc, pid, &any, options & WEXITED,
			   options & WSTOPPED, options & WCONTINUED);
	if (!c) {
		if (!any)
			return -ECHILD;
		if (options & WNOHANG) {
			if (a->a[2]) {
				memset(&si, 0, sizeof(si));
				if (task_write(t, a->a[2], &si, sizeof(si)) < 0)
					return -EFAULT;
			}
			return eagain ? -EAGAIN : 0;
		}
		return SYS_BLOCK;
	}
	memset(&si, 0, sizeof(si));
	si.si_signo = SIGCHLD;
	si.si_pid = pid_to_guest(t->proc->pidns, c->pid);
	si.si_uid = c->cred.ruid;
	if (!c->exited) {
		bool stop = c->stop_pending && (options & WSTOPPED);
		si.si_code = stop ? CLD_STOPPED : CLD_CONTINUED;
		si.si_status = stop ? c->stop_sig : SIGCONT;
		if (a->a[2] && task_write(t, a->a[2], &si, sizeof(si)) < 0)
			return -EFAULT;
		if (put_zero_rusage(t, a->a[4]) < 0)
			return -EFAULT;
		if (!(options & WNOWAIT)) {
			if (stop)
				c->stop_pending = false;
			else
				c->cont_pending = false;
		}
		return 0;
	}
	if (WIFEXITED(c->exit_status)) {
		si.si_code = CLD_EXITED;
		si.si_status = WEXITSTATUS(c->exit_status);
	} else {
		si.si_code = WCOREDUMP(c->exit_status) ? CLD_DUMPED :
							 CLD_KILLED;
		si.si_status = WTERMSIG(c->exit_status);
	}
	if (a->a[2] && task_write(t, a->a[2], &si, sizeof(si)) < 0)
		return -EFAULT;
	if (put_zero_rusage(t, a->a[4]) < 0)
		return -EFAULT;
	if (!(options & WNOWAIT))
		proc_reap(c);
	return 0;
}

/* ---- signals ---------------------------------------------------------- */

bool sig_default_ignored(int sig)
{
	return sig == SIGCHLD || sig == SIGURG || sig == SIGWINCH ||
	       sig == SIGCONT;
}

/* Linux's is_ignored(): t blocks sig or its process ignores it. t is
 * stopped in a syscall (its mask is read from the host). */
bool task_sig_ignored(struct task *t, int sig)
{
	uint64_t mask = 0;

	if (t->proc->sigact[sig].handler == (uint64_t)(uintptr_t)SIG_IGN)
		return true;
	if (ptrace(PTRACE_GETSIGMASK, t->host_tid, sizeof(mask), &mask) < 0)
		return false;
	return (mask & (1ULL << (sig - 1))) != 0;
}

/* POSIX's orphaned process group: no live member has a parent in another
 * group of the same session (Linux's will_become_orphaned_pgrp). Nobody
 * is left to continue it, so job control must not stop it. */
bool pgrp_orphaned(int pgid)
{
	struct process *q, *parent;

	for (q = S->procs; q; q = q->next) {
		if (q->exited || q->pgid != pgid)
			continue;
		parent = proc_by_pid(q->ppid);
		if (parent && !parent->exited && parent->pgid != pgid &&
		    parent->sid == q->sid)
			return false;
	}
	return true;
}

/* A task stopped in an emulated blocking syscall: does sig interrupt it? */
long task_wait_sigmask(struct task *t, uint64_t uaddr, uint64_t size)
{
	uint64_t m;

	t->wait_mask_addr = 0;
	if (!uaddr)
		return 0;
	if (size != sizeof(m))
		return -EINVAL;
	if (task_read(t, uaddr, &m, sizeof(m)) < 0)
		return -EFAULT;
	t->wait_mask_addr = uaddr;
	t->wait_mask = m & ~((1ULL << (SIGKILL - 1)) | (1ULL << (SIGSTOP - 1)));
	return 0;
}

/* A wait that runs under a mask of its own ends because of a signal: the
 * host runs ppoll(NULL, 0, 1 ns, mask) in its place. It fails EINTR with
 * the signal pending, and the kernel delivers it with the caller's own
 * mask saved for after the handler, exactly as for the real call. */
static bool interrupt_with_mask(struct task *t)
{
	static const struct timespec one = { 0, 1 };
	struct user_regs_struct r = t->regs;
	uint64_t ts = (r.rsp - 512) & ~15ULL; /* well below the red zone */

	if (!t->wait_mask_addr || t->at_exit_stop)
		return false;
	if (task_write(t, ts, &one, sizeof(one)) < 0)
		return false;
	r.orig_rax = SYS_ppoll;
	r.rdi = 0;
	r.rsi = 0;
	r.rdx = ts;
	r.r10 = t->wait_mask_addr;
	r.r8 = sizeof(uint64_t);
	if (ptrace(PTRACE_SETREGS, t->host_tid, 0, &r) < 0)
		return false;
	sentry_complete(t, SYS_PASSTHROUGH);
	return true;
}

/* poll, select and epoll_wait in all their forms end with EINTR after a
 * handler, whatever SA_RESTART says (signal(7)). */
static bool never_restarted(long nr)
{
	return nr == SYS_poll || nr == SYS_ppoll || nr == SYS_select ||
	       nr == SYS_pselect6 || nr == SYS_epoll_wait ||
	       nr == SYS_epoll_pwait || nr == SYS_epoll_pwait2;
}

static void maybe_interrupt(struct task *t, int sig)
{
	struct sigact_rec *sa = &t->proc->sigact[sig];
	uint64_t mask = 0;

	if (t->state != TS_BLOCKED)
		return;
	if (t->wait_mask_addr)
		mask = t->wait_mask; /* the wait's own mask is in force */
	else if (ptrace(PTRACE_GETSIGMASK, t->host_tid, sizeof(mask), &mask) <
		 0)
		mask = 0;
	if ((mask & (1ULL << (sig - 1))) && sig != SIGKILL)
		return;
	if (sa->handler == (uint64_t)(uintptr_t)SIG_IGN)
		return;
	if (sa->handler == (uint64_t)(uintptr_t)SIG_DFL &&
	    sig_default_ignored(sig))
		return;
	if (t->io_done) {
		/* A write that had moved bytes before it blocked returns their
		 * count, whatever the handler or SA_RESTART (pipe(7)). */
		sentry_complete(t, (long)t->io_done);
		return;
	}
	if (sa->handler == (uint64_t)(uintptr_t)SIG_DFL) {
		if (!interrupt_with_mask(t))
			sentry_complete(t, -EINTR); /* it dies or stops */
		return;
	}
	if (interrupt_with_mask(t))
		return;
	sentry_complete(t,
			(sa->flags & SA_RESTART) && !never_restarted(t->sc.nr) ?
				SYS_RESTART :
				-EINTR);
}

/* Signals the host queued on a task while the sentry held it in an
 * emulated syscall (a terminal's Ctrl-C, SIGWINCH, a CPU-time timer, a
 * signal from outside the sandbox): the sentry did not send them, so it
 * looks for them, once a tick, and interrupts the syscall as Linux would.
 */
/* The host's /proc/<tid>/status of a task, NUL-terminated in buf. */
static ssize_t host_status(pid_t tid, char *buf, size_t cap)
{
	char rel[32];
	ssize_t n;
	int fd;

	snprintf(rel, sizeof(rel), "%d/status", (int)tid);
	fd = openat(S->host_proc_fd, rel, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, cap - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = 0;
	return n;
}

static uint64_t host_pending(pid_t tid)
{
	char buf[4096], *p;
	uint64_t set = 0;

	if (host_status(tid, buf, sizeof(buf)) <= 0)
		return 0;
	for (p = buf; (p = strstr(p, "Pnd:\t")); p += 5)
		set |= strtoull(p + 5, NULL, 16); /* SigPnd, then ShdPnd */
	return set;
}

/* The last number of the NSpid line is the tid in the task's own (the
 * innermost) pid namespace. Read once per host tid: one open and read of
 * the host's /proc, only for the few calls that name another task. */
int task_ns_tid(struct task *x)
{
	char buf[4096], *p, *end;
	long v = 0;

	if (x->ns_tid > 0 && x->ns_tid_of == x->host_tid)
		return x->ns_tid;
	if (host_status(x->host_tid, buf, sizeof(buf)) <= 0)
		return -ESRCH;
	p = strstr(buf, "\nNSpid:");
	if (!p)
		return -ESRCH;
	for (p += 7; *p && *p != '\n'; p = end) {
		long n = strtol(p, &end, 10);
		if (end == p)
			break;
		v = n;
	}
	if (v <= 0)
		return -ESRCH;
	x->ns_tid = (pid_t)v;
	x->ns_tid_of = x->host_tid;
	return x->ns_tid;
}

/* Blocked tasks whose host signals one tick reads: each costs a read of
 * /proc/<tid>/status, and the tick is 10 ms. A thousand blocked tasks (a
 * fork bomb's, waiting on one pipe) read at every tick took more than a
 * tick, so the loop did nothing else (under ASan, or a busy host). Past
 * this many, they are read in turns: each within a few ticks. */
#define HOST_SIGNALS_PER_TICK 64

void task_poll_host_signals(void)
{
	static long turn; /* blocked tasks passed over before this tick's */
	struct task *t, *next;
	long seen = 0, polled = 0;
	int sig;

	for (t = S->tasks; t && polled < HOST_SIGNALS_PER_TICK; t = next) {
		uint64_t set;
		next = t->next;
		if (t->state != TS_BLOCKED || seen++ < turn)
			continue;
		polled++;
		set = host_pending(t->host_tid);
		if (set)
			sentry_wake(); /* a signalfd may have become readable */
		for (sig = 1; set && sig <= 64 && t->state == TS_BLOCKED; sig++)
			if (set & (1ULL << (sig - 1)))
				maybe_interrupt(t, sig);
	}
	/* the next tick goes on after these, or from the start once all
	 * have had their turn */
	turn = t ? turn + polled : 0;
}

void sig_note_sender(struct process *p, int sig, int sender_pid)
{
	struct process *from = sender_pid ? proc_by_pid(sender_pid) : NULL;

	p->sig_sender[sig] = pid_to_guest(p->pidns, sender_pid);
	p->sig_sender_uid[sig] = from ? from->cred.ruid : 0;
}

static bool init_drops(const struct process *p, int sig, int sender_pid);

int send_signal_task(struct task *t, int sig, int sender_pid)
{
	if (sig == 0 || init_drops(t->proc, sig, sender_pid))
		return 0;
	sig_note_sender(t->proc, sig, sender_pid);
	if (plat_tkill(t->host_tid, sig) < 0)
		return -ESRCH;
	sentry_wake(); /* a signalfd may have become readable */
	maybe_interrupt(t, sig);
	return 0;
}

/* A process-directed signal was queued on the host. */
static void proc_interrupt(struct process *p, int sig)
{
	struct task *t, *blocked = NULL;
	bool running = false;

	for (t = S->tasks; t; t = t->next) {
		if (t->proc != p || t->state == TS_DEAD)
			continue;
		if (t->state == TS_BLOCKED && !blocked)
			blocked = t;
		else if (t->state == TS_RUNNING)
			running = true;
	}
	/* The host gives a process-directed signal to a thread that is not
	 * stopped; interrupt one of ours only when no thread can take it. */
	if (blocked && !running)
		maybe_interrupt(blocked, sig);
}

int send_signal_proc(struct process *p, int sig, int sender_pid)
{
	if (p->exited)
		return 0; /* zombie: accepted, no effect */
	if (sig == 0 || init_drops(p, sig, sender_pid))
		return 0;
	sig_note_sender(p, sig, sender_pid);
	if (plat_kill(p->host_pid, sig) < 0)
		return -ESRCH;
	sentry_wake(); /* a signalfd may have become readable */
	proc_interrupt(p, sig);
	return 0;
}

int send_siginfo(struct process *p, struct task *t, const siginfo_t *si)
{
	int sig = si->si_signo;

	if (p->exited)
		return 0;
	if (sig <= 0 || sig > 64)
		return -EINVAL;
	if (plat_sigqueue(p->host_pid, t ? t->host_tid : 0, si) < 0)
		return -ESRCH;
	if (t)
		maybe_interrupt(t, sig);
	else
		proc_interrupt(p, sig);
	return 0;
}

/* A siginfo the sentry queued on a guest's behalf arrives with the host's
 * view of the sender (pid 0: an ancestor namespace; its uid translated):
 * put back the sandbox's. true if si changed. */
static bool fix_info(struct process *p, siginfo_t *si)
{
	int sig = si->si_signo;

	if (sig <= 0 || sig > 64)
		return false;
	if (si->si_code != SI_USER && si->si_code != SI_TKILL &&
	    si->si_code != SI_QUEUE && si->si_code != SI_MESGQ)
		return false;
	if (si->si_pid != 0)
		return false;
	si->si_pid = p->sig_sender[sig];
	si->si_uid = p->sig_sender_uid[sig];
	if (sig == SIGCHLD && p->chld_pid && si->si_code != SI_QUEUE &&
	    si->si_code != SI_MESGQ) {
		int cs = p->chld_status;
		si->si_pid = p->chld_pid;
		if (cs == 0xffff) {
			si->si_code = CLD_CONTINUED;
			si->si_status = SIGCONT;
		} else if (WIFSTOPPED(cs)) {
			si->si_code = CLD_STOPPED;
			si->si_status = WSTOPSIG(cs);
		} else {
			si->si_code = WIFEXITED(cs) ? CLD_EXITED :
				      WCOREDUMP(cs) ? CLD_DUMPED :
						      CLD_KILLED;
			si->si_status = WIFEXITED(cs) ? WEXITSTATUS(cs) :
							WTERMSIG(cs);
		}
	}
	return true;
}

void task_fix_siginfo(struct task *t, int sig)
{
	siginfo_t si;

	if (sig <= 0 || sig > 64)
		return;
	if (ptrace(PTRACE_GETSIGINFO, t->host_tid, 0, &si) < 0)
		return;
	if (fix_info(t->proc, &si))
		ptrace(PTRACE_SETSIGINFO, t->host_tid, 0, &si);
}

/* rt_sigtimedwait runs on the host (it dequeues host signals); its
 * siginfo is mended on the way out, as a delivered one is. */
long sys_rt_sigtimedwait(struct task *t, struct syscall_args *a)
{
	if (!a->a[1])
		return SYS_PASSTHROUGH;
	t->fixup_kind = 4;
	t->fixup_addr = a->a[1];
	return SYS_PASSTHROUGH_FIXUP;
}

static void fix_waited_info(struct task *t, long ret, uint64_t uinfo)
{
	siginfo_t si;

	if (ret <= 0 || task_read(t, uinfo, &si, sizeof(si)) < 0)
		return;
	if (fix_info(t->proc, &si))
		task_write(t, uinfo, &si, sizeof(si));
}

static int valid_sig(int sig)
{
	return sig >= 0 && sig <= 64;
}

/* Linux's check_kill_permission: a process may signal its own thread
 * group; another whose real or saved uid is its real or effective uid;
 * any with CAP_KILL; and SIGCONT one of its session. Signal 0 asks the
 * same. */
static int may_signal(struct task *t, const struct process *p, int sig)
{
	const struct creds *c = &t->proc->cred, *tc = &p->cred;

	if (p == t->proc || creds_capable(c, CAP_KILL))
		return 0;
	if (c->euid == tc->suid || c->euid == tc->ruid || c->ruid == tc->suid ||
	    c->ruid == tc->ruid)
		return 0;
	if (sig == SIGCONT && p->sid == t->proc->sid)
		return 0;
	return -EPERM;
}

/* Linux's SIGNAL_UNKILLABLE: a pid namespace's init takes only the
 * signals it has a handler for, but SIGKILL and SIGSTOP from an ancestor
 * namespace and the faults the kernel forces on it. A member's own
 * namespace has its first process for init; the pod's is pid 1 of an OCI
 * container, while moat do's pid 1 is a process like any other
 * (docs/platform-ptrace.md), as runsc do's. */
bool proc_unkillable_init(const struct process *p)
{
	return p->pidns ? p->pidns->init == p->pid :
			  p->pid == 1 && S->opts.init_unkillable;
}

/* The rest of the rule is kept where the signal is delivered
 * (init_drops_delivery, at its signal-delivery stop): there a signal that
 * was blocked when sent, and then taken by sigtimedwait or a signalfd
 * (tini's, dumb-init's way) never arrives, and one with a handler by then
 * does. SIGKILL has no such stop, and neither it nor SIGSTOP can be
 * blocked or handled: from the init's own namespace they are dropped
 * here, as the kill succeeds. */
static bool init_drops(const struct process *p, int sig, int sender_pid)
{
	const struct process *from;

	if ((sig != SIGKILL && sig != SIGSTOP) || !proc_unkillable_init(p))
		return false;
	from = sender_pid ? proc_by_pid(sender_pid) : NULL; /* 0: outside */
	return from && from->pidns == p->pidns;
}

bool init_drops_delivery(struct task *t, int sig)
{
	siginfo_t si;

	if (sig <= 0 || sig > 64 || sig == SIGSTOP ||
	    !proc_unkillable_init(t->proc) ||
	    t->proc->sigact[sig].handler != (uint64_t)(uintptr_t)SIG_DFL)
		return false;
	/* a fault's (si_code > 0, or the kernel's own) is forced on it */
	if (ptrace(PTRACE_GETSIGINFO, t->host_tid, 0, &si) < 0)
		return false;
	return si.si_code <= 0;
}

/* rt_sigqueueinfo and rt_tgsigqueueinfo: the caller's own siginfo (as
 * sigqueue(3) fills it: si_pid is its virtual pid). Only the kernel may
 * claim si_code >= 0 or SI_TKILL towards another process. */
static long sigqueue_to(struct task *t, struct process *p, struct task *thr,
			int sig, uint64_t uinfo)
{
	siginfo_t si;

	if (!valid_sig(sig))
		return -EINVAL;
	if (task_read(t, uinfo, &si, sizeof(si)) < 0)
		return -EFAULT;
	if (!p || p->exited)
		return p ? 0 : -ESRCH;
	if ((si.si_code >= 0 || si.si_code == SI_TKILL) && p != t->proc)
		return -EPERM;
	if (may_signal(t, p, sig) < 0)
		return -EPERM;
	if (sig == 0 || init_drops(p, sig, t->proc->pid))
		return 0;
	si.si_signo = sig;
	sig_note_sender(p, sig, t->proc->pid);
	if (si.si_code >= 0 || si.si_code == SI_TKILL) {
		/* To itself: the host would not take such a code from the
		 * sentry, so it goes as a plain signal. */
		return thr ? send_signal_task(thr, sig, t->proc->pid) :
			     send_signal_proc(p, sig, t->proc->pid);
	}
	return send_siginfo(p, thr, &si);
}

long sys_rt_sigqueueinfo(struct task *t, struct syscall_args *a)
{
	int pid = (int)a->a[0];

	return sigqueue_to(t,
			   pid > 0 ? proc_by_vpid(t->proc->pidns, pid) : NULL,
			   NULL, (int)a->a[1], a->a[2]);
}

long sys_rt_tgsigqueueinfo(struct task *t, struct syscall_args *a)
{
	int tgid = (int)a->a[0], tid = (int)a->a[1];
	struct task *thr = tid > 0 ? task_by_guest_tid(t->proc->pidns, tid) :
				     NULL;

	if (tgid <= 0 || tid <= 0)
		return -EINVAL;
	if (!thr || thr->proc->pid != pid_from_guest(t->proc->pidns, tgid))
		return -ESRCH;
	return sigqueue_to(t, thr->proc, thr, (int)a->a[2], a->a[3]);
}

long sys_kill(struct task *t, struct syscall_args *a)
{
	int pid = (int)a->a[0], sig = (int)a->a[1];
	struct process *p;
	int n = 0, rc = 0, ok = 0, err;

	if (!valid_sig(sig))
		return -EINVAL;
	if (pid > 0) {
		p = proc_by_vpid(t->proc->pidns, pid);
		if (!p)
			return -ESRCH;
		rc = may_signal(t, p, sig);
		return rc < 0 ? rc : send_signal_proc(p, sig, t->proc->pid);
	}
	if (pid == INT32_MIN)
		return -ESRCH;
	pid = pid_arg_from_guest(t->proc->pidns, pid); /* a group's, or 0, -1 */
	for (p = S->procs; p; p = p->next) {
		if (p->reaped || p->exited || !pid_visible(t->proc->pidns, p))
			continue;
		/* -1: all it sees but itself and its namespace's init */
		if (pid == -1 &&
		    (pid_in_ns(t->proc->pidns, p->pid) == 1 || p == t->proc))
			continue;
		if (pid == 0 && p->pgid != t->proc->pgid)
			continue;
		if (pid < -1 && p->pgid != -pid)
			continue;
		n++;
		err = may_signal(t, p, sig);
		if (err == 0)
			err = send_signal_proc(p, sig, t->proc->pid);
		/* kill(-1): those it may not signal are passed over; a group:
		 * success if any took it, else the last error (Linux's) */
		if (pid == -1 ? err != -EPERM : true)
			rc = err;
		ok += err == 0;
	}
	if (!n)
		return -ESRCH;
	return pid != -1 && ok ? 0 : rc;
}

long sys_tgkill(struct task *t, struct syscall_args *a)
{
	int tgid = (int)a->a[0], tid = (int)a->a[1], sig = (int)a->a[2];
	struct task *x;

	if (!valid_sig(sig) || tgid <= 0 || tid <= 0)
		return -EINVAL;
	x = task_by_guest_tid(t->proc->pidns, tid);
	if (!x || x->proc->pid != pid_from_guest(t->proc->pidns, tgid))
		return -ESRCH;
	if (may_signal(t, x->proc, sig) < 0)
		return -EPERM;
	return send_signal_task(x, sig, t->proc->pid);
}

long sys_tkill(struct task *t, struct syscall_args *a)
{
	int tid = (int)a->a[0], sig = (int)a->a[1];
	struct task *x;

	if (!valid_sig(sig) || tid <= 0)
		return -EINVAL;
	x = task_by_guest_tid(t->proc->pidns, tid);
	if (!x)
		return -ESRCH;
	if (may_signal(t, x->proc, sig) < 0)
		return -EPERM;
	return send_signal_task(x, sig, t->proc->pid);
}

long sys_rt_sigaction(struct task *t, struct syscall_args *a)
{
	int sig = (int)a->a[0];
	struct {
		uint64_t handler, flags, restorer, mask;
	} act;

	/* Validity is the host's to judge; it runs on the caller's own table.
	 * The sentry keeps a copy to know which signals interrupt or
	 * auto-reap. */
	if (sig >= 1 && sig <= 64 && a->a[1] && a->a[3] == 8 &&
	    sig != SIGKILL && sig != SIGSTOP) {
		if (task_read(t, a->a[1], &act, sizeof(act)) < 0)
			return -EFAULT;
		t->proc->sigact[sig].handler = act.handler;
		t->proc->sigact[sig].flags = act.flags;
	}
	return SYS_PASSTHROUGH;
}

/* ---- ids -------------------------------------------------------------- */

long sys_getpid(struct task *t, struct syscall_args *a)
{
	(void)a;
	return pid_in_ns(t->proc->pidns, t->proc->pid);
}

long sys_gettid(struct task *t, struct syscall_args *a)
{
	(void)a;
	return pid_in_ns(t->proc->pidns, t->tid);
}

long sys_getppid(struct task *t, struct syscall_args *a)
{
	(void)a;
	return t->proc->pid == 1 ? 0 : pid_in_ns(t->proc->pidns, t->proc->ppid);
}

long sys_getpgrp(struct task *t, struct syscall_args *a)
{
	(void)a;
	return pid_in_ns(t->proc->pidns, t->proc->pgid);
}

long sys_getpgid(struct task *t, struct syscall_args *a)
{
	int pid = (int)a->a[0];
	struct process *p = pid ? proc_by_vpid(t->proc->pidns, pid) : t->proc;

	if (!p)
		return -ESRCH;
	return pid_in_ns(t->proc->pidns, p->pgid);
}

long sys_getsid(struct task *t, struct syscall_args *a)
{
	int pid = (int)a->a[0];
	struct process *p = pid ? proc_by_vpid(t->proc->pidns, pid) : t->proc;

	if (!p)
		return -ESRCH;
	return pid_in_ns(t->proc->pidns, p->sid);
}

long sys_setsid(struct task *t, struct syscall_args *a)
{
	struct process *p;

	(void)a;
	for (p = S->procs; p; p = p->next)
		if (!p->reaped && p->pgid == t->proc->pid)
			return -EPERM;
	t->proc->sid = t->proc->pid;
	t->proc->pgid = t->proc->pid;
	t->proc->ctty = -1; /* a new session has no terminal yet */
	return pid_in_ns(t->proc->pidns, t->proc->sid);
}

long sys_setpgid(struct task *t, struct syscall_args *a)
{
	int pid = (int)a->a[0], pgid = (int)a->a[1];
	struct process *p = pid ? proc_by_vpid(t->proc->pidns, pid) : t->proc,
		       *q;

	if (pgid < 0)
		return -EINVAL;
	pgid = pid_from_guest(t->proc->pidns, pgid);
	if (!p)
		return -ESRCH;
	if (p != t->proc && p->ppid != t->proc->pid)
		return -ESRCH;
	if (p->sid == p->pid || p->sid != t->proc->sid)
		return -EPERM;
	if (!pgid)
		pgid = p->pid;
	if (pgid != p->pid) {
		bool found = false;
		for (q = S->procs; q; q = q->next)
			if (!q->reaped && q->pgid == pgid &&
			    q->sid == t->proc->sid)
				found = true;
		if (!found)
			return -EPERM;
	}
	p->pgid = pgid;
	return 0;
}

/* Close the files of processes that have exited (see proc_exited). */
void task_release_files(void)
{
	struct process *p;

	S->fds_to_release = false;
	for (p = S->procs; p; p = p->next) {
		if (p->exited && p->fdt) {
			struct fdtable *fdt = p->fdt;
			p->fdt = NULL;
			fdtable_put(fdt);
			sentry_wake();
		}
	}
}

/* Free dead tasks and reaped processes. Called from the top of the event
 * loop only, where no handler holds a pointer to either. */
void task_sweep(void)
{
	struct task **tp = &S->tasks, *t;
	struct process **pp = &S->procs, *p;

	while ((t = *tp)) {
		if (t->state == TS_DEAD) {
			*tp = t->next;
			exec_plan_free(
				t->exec); /* lost a race with another exec */
			free(t);
		} else {
			tp = &t->next;
		}
	}
	/* One pass over each list, not one over the tasks per process: a
	 * bomb's thousands of zombies made this quadratic. */
	for (p = S->procs; p; p = p->next)
		p->swept_used = false;
	for (t = S->tasks; t; t = t->next)
		t->proc->swept_used = true;
	while ((p = *pp)) {
		if (p->reaped && !p->swept_used) {
			*pp = p->next;
			unhash_proc(p);
			vnode_put(p->cwd);
			vnode_put(p->exe);
			cmdline_put(p->cmdline);
			maps_clear(p);
			fdtable_put(p->fdt);
			vfs_ns_put(p->mntns);
			pidns_put(p->pidns);
			free(p);
		} else {
			pp = &p->next;
		}
	}
	S->ndead = 0;
}

/* ---- pidfd ------------------------------------------------------------- */

/* A pidfd names a process by virtual pid and the process's identity at
 * open (pids are not reused while the sandbox runs short of them, but a
 * reaped process must not be mistaken for a new one). */
struct pidfd {
	int pid;
	struct process *proc; /* compared, not dereferenced once gone */
};

static struct process *pidfd_proc(struct pidfd *d)
{
	struct process *p = proc_by_pid(d->pid);

	return p == d->proc ? p : NULL;
}

static short pidfd_poll(struct file *f, short events)
{
	struct process *p = pidfd_proc(f->priv);

	/* readable once the process has exited (zombie or reaped) */
	return (!p || p->exited) ? (short)(events & (POLLIN | POLLRDNORM)) : 0;
}

static int pidfd_stat(struct file *f, struct stat *st)
{
	(void)f;
	memset(st, 0, sizeof(*st));
	st->st_mode = 0600;
	st->st_nlink = 1;
	return 0;
}

static const struct file_ops pidfd_ops = {
	.poll = pidfd_poll,
	.stat = pidfd_stat,
	.release = file_release_priv,
};

/* The pid a pidfd names, for waitid(P_PIDFD): Linux takes pidfds only
 * (not /proc/<pid> directories), and EBADF for anything else. */
static int pidfd_target(struct task *t, int fd, int *pid, bool *nonblock)
{
	struct file *f = fd_get(t, fd);

	if (!f || f->ops != &pidfd_ops || !f->priv)
		return -EBADF;
	/* A process reaped since (its pid maybe another's now) is nobody's
	 * child: ECHILD, as Linux says. */
	*pid = pidfd_proc(f->priv) ? ((struct pidfd *)f->priv)->pid : INT_MAX;
	*nonblock = (f->flags & O_NONBLOCK) != 0;
	return 0;
}

long sys_pidfd_open(struct task *t, struct syscall_args *a)
{
	int pid = (int)a->a[0];
	unsigned flags = (unsigned)a->a[1];
	struct process *p;
	struct pidfd *d;

	if (flags & ~(unsigned)O_NONBLOCK)
		return -EINVAL;
	if (pid <= 0)
		return -EINVAL;
	p = proc_by_vpid(t->proc->pidns, pid);
	if (!p || p->reaped)
		return -ESRCH;
	d = calloc(1, sizeof(*d));
	if (d) {
		d->pid = p->pid;
		d->proc = p;
	}
	/* pidfds are close-on-exec, as Linux makes them */
	return install_anon(t, &pidfd_ops, O_RDWR | (int)flags, d, true);
}

long sys_pidfd_send_signal(struct task *t, struct syscall_args *a)
{
	struct file *f = fd_get(t, (int)a->a[0]);
	int sig = (int)a->a[1];
	struct process *p;

	if (!f)
		return -EBADF;
	if (f->ops == &pidfd_ops) {
		p = pidfd_proc(f->priv);
		/* one passed from outside its pid namespace: Linux's
		 * access_pidfd_pidns */
		if (p && !pid_visible(t->proc->pidns, p))
			return -EINVAL;
	} else if (procfs_pid_of_dir(f->vn)) {
		/* an open /proc/<pid> directory is a pidfd too */
		p = proc_by_pid(procfs_pid_of_dir(f->vn));
		if (p && !pid_visible(t->proc->pidns, p))
			p = NULL;
	} else {
		return -EBADF;
	}
	if (a->a[3])
		return -EINVAL;
	if (!valid_sig(sig))
		return -EINVAL;
	if (a->a[2])
		return sigqueue_to(t, p, NULL, sig, a->a[2]);
	if (!p || p->exited)
		return -ESRCH;
	/* as kill(2): Linux's check_kill_permission, whatever names it */
	if (may_signal(t, p, sig) < 0)
		return -EPERM;
	if (sig == 0)
		return 0;
	return send_signal_proc(p, sig, t->proc->pid);
}

/* ---- signalfd -------------------------------------------------------------
 *
 * Signals stay the host's: a signal for a guest is queued on its host task
 * (blocked, for signalfd to be useful). Reading a signalfd dequeues one by
 * running rt_sigtimedwait(mask, zero timeout) in the reading task, with a
 * scratch area of the stub's data page for its arguments; the siginfo it
 * returns is mended (the sender as the sandbox sees it) and given as a
 * struct signalfd_siginfo. Readiness is the host's pending set of the
 * task that made the signalfd, within the mask. */

#define SFD_SCRATCH (STUB_DATA + 0x800) /* mask 8, timespec 16, info 128 */

struct sfd {
	uint64_t mask;
	struct task *owner; /* whose pending signals poll reports */
	int owner_tid;
};

static uint64_t pending_of(struct task *t)
{
	return t && t->state != TS_DEAD ? host_pending(t->host_tid) : 0;
}

static uint64_t sfd_mask_of(uint64_t m)
{
	return m & ~((1ULL << (SIGKILL - 1)) | (1ULL << (SIGSTOP - 1)));
}

/* Dequeue one signal of mask from t, into *si. 1, 0 if none, or -errno. */
static long sfd_take(struct task *t, uint64_t mask, siginfo_t *si)
{
	static const struct timespec zero = { 0, 0 };
	long r;

	if (task_write(t, SFD_SCRATCH, &mask, sizeof(mask)) < 0 ||
	    task_write(t, SFD_SCRATCH + 8, &zero, sizeof(zero)) < 0)
		return -EFAULT;
	r = plat_inject(t, SYS_rt_sigtimedwait, SFD_SCRATCH, SFD_SCRATCH + 24,
			SFD_SCRATCH + 8, 8, 0, 0);
	if (r == -EAGAIN || r == -EINTR)
		return 0;
	if (r < 0)
		return r;
	if (task_read(t, SFD_SCRATCH + 24, si, sizeof(*si)) < 0)
		return -EFAULT;
	fix_info(t->proc, si);
	return 1;
}

static void to_ssi(const siginfo_t *si, struct signalfd_siginfo *o)
{
	memset(o, 0, sizeof(*o));
	o->ssi_signo = (uint32_t)si->si_signo;
	o->ssi_errno = si->si_errno;
	o->ssi_code = si->si_code;
	o->ssi_pid = (uint32_t)si->si_pid;
	o->ssi_uid = si->si_uid;
	if (si->si_code == SI_TIMER) {
		o->ssi_tid = (uint32_t)si->si_timerid;
		o->ssi_overrun = (uint32_t)si->si_overrun;
	}
	if (si->si_signo == SIGCHLD && si->si_code > 0) {
		o->ssi_status = si->si_status;
		o->ssi_utime = (uint64_t)si->si_utime;
		o->ssi_stime = (uint64_t)si->si_stime;
	}
	/* the value only where the siginfo carries one (its union holds
	 * other fields otherwise) */
	if (si->si_code == SI_QUEUE || si->si_code == SI_TIMER ||
	    si->si_code == SI_MESGQ || si->si_code == SI_ASYNCIO) {
		o->ssi_int = si->si_value.sival_int;
		o->ssi_ptr = (uint64_t)(uintptr_t)si->si_value.sival_ptr;
	}
	if (si->si_signo == SIGSEGV || si->si_signo == SIGBUS ||
	    si->si_signo == SIGILL || si->si_signo == SIGFPE)
		o->ssi_addr = (uint64_t)(uintptr_t)si->si_addr;
}

static long sfd_read(struct task *t, struct file *f, void *buf, size_t n,
		     int64_t *off)
{
	struct sfd *s = f->priv;
	size_t done = 0;

	(void)off;
	if (n < sizeof(struct signalfd_siginfo))
		return -EINVAL;
	while (done + sizeof(struct signalfd_siginfo) <= n) {
		siginfo_t si;
		long r;
		if (!(pending_of(t) & s->mask))
			break;
		r = sfd_take(t, s->mask, &si);
		if (r < 0)
			return done ? (long)done : r;
		if (r == 0)
			break;
		to_ssi(&si,
		       (struct signalfd_siginfo *)(void *)((char *)buf + done));
		done += sizeof(struct signalfd_siginfo);
	}
	if (done)
		return (long)done;
	return (f->flags & O_NONBLOCK) ? -EAGAIN : SYS_BLOCK;
}

static short sfd_poll(struct file *f, short events)
{
	struct sfd *s = f->priv;
	struct task *o = task_by_vtid(s->owner_tid);

	if (!o || o != s->owner)
		o = NULL;
	return (pending_of(o) & s->mask) ?
		       (short)(events & (POLLIN | POLLRDNORM)) :
		       0;
}

static int sfd_stat(struct file *f, struct stat *st)
{
	(void)f;
	memset(st, 0, sizeof(*st));
	st->st_mode = 0600;
	st->st_nlink = 1;
	return 0;
}

static const struct file_ops sfd_ops = {
	.read = sfd_read,
	.poll = sfd_poll,
	.stat = sfd_stat,
	.release = file_release_priv,
};

long sys_signalfd4(struct task *t, struct syscall_args *a)
{
	int fd = (int)a->a[0], flags = (int)a->a[3];
	uint64_t mask;
	struct sfd *s;

	if (flags & ~(SFD_NONBLOCK | SFD_CLOEXEC))
		return -EINVAL;
	if (a->a[2] != sizeof(mask))
		return -EINVAL;
	if (task_read(t, a->a[1], &mask, sizeof(mask)) < 0)
		return -EFAULT;
	if (fd != -1) {
		struct file *f = fd_get(t, fd);
		if (!f)
			return -EBADF;
		if (f->ops != &sfd_ops)
			return -EINVAL;
		((struct sfd *)f->priv)->mask = sfd_mask_of(mask);
		sentry_wake();
		return fd;
	}
	s = calloc(1, sizeof(*s));
	if (s) {
		s->mask = sfd_mask_of(mask);
		s->owner = t;
		s->owner_tid = t->tid;
	}
	return install_anon(t, &sfd_ops,
			    O_RDWR | ((flags & SFD_NONBLOCK) ? O_NONBLOCK : 0),
			    s, (flags & SFD_CLOEXEC) != 0);
}

long sys_signalfd(struct task *t, struct syscall_args *a)
{
	struct syscall_args b = *a;

	b.a[3] = 0;
	return sys_signalfd4(t, &b);
}
