/* sentry/sys_misc.c: identity, credentials, limits and system information. */
#include <linux/capability.h>
#include <linux/securebits.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/sysinfo.h>
#include <sys/utsname.h>

#include "sentry/syscalls.h"
#include "sentry/vfs.h"

long sys_uname(struct task *t, struct syscall_args *a)
{
	struct utsname u, host;

	uname(&host);
	memset(&u, 0, sizeof(u));
	snprintf(u.sysname, sizeof(u.sysname), "Linux");
	snprintf(u.nodename, sizeof(u.nodename), "%s", S->hostname);
	/* The guest runs on the sentry's kernel, which implements Linux's
	 * interface as of the host's version. */
	snprintf(u.release, sizeof(u.release), "%s", host.release);
	snprintf(u.version, sizeof(u.version), "%s", MOAT_UTS_VERSION);
	snprintf(u.machine, sizeof(u.machine), "x86_64");
	snprintf(u.domainname, sizeof(u.domainname), "%s", S->domainname);
	return task_write(t, a->a[0], &u, sizeof(u));
}

static long set_name(struct task *t, uint64_t uname_, uint64_t len, char *dst)
{
	char buf[65];

	if (!creds_capable(&t->proc->cred, CAP_SYS_ADMIN))
		return -EPERM;
	if (len > 64)
		return -EINVAL;
	if (task_read(t, uname_, buf, len) < 0)
		return -EFAULT;
	buf[len] = 0;
	memcpy(dst, buf, len + 1);
	return 0;
}

long sys_sethostname(struct task *t, struct syscall_args *a)
{
	return set_name(t, a->a[0], a->a[1], S->hostname);
}

long sys_setdomainname(struct task *t, struct syscall_args *a)
{
	return set_name(t, a->a[0], a->a[1], S->domainname);
}

/* ---- limits ----------------------------------------------------------------- */

static long get_rlim(struct task *t, struct process *p, int res, uint64_t uold)
{
	struct rlimit rl;

	if (res < 0 || res >= RLIM_NLIMITS)
		return -EINVAL;
	rl.rlim_cur = p->rlim[res].cur;
	rl.rlim_max = p->rlim[res].max;
	return uold ? task_write(t, uold, &rl, sizeof(rl)) : 0;
}

static long set_rlim(struct task *t, struct process *p, int res, uint64_t unew)
{
	struct rlimit rl;

	if (res < 0 || res >= RLIM_NLIMITS)
		return -EINVAL;
	if (task_read(t, unew, &rl, sizeof(rl)) < 0)
		return -EFAULT;
	if (rl.rlim_cur > rl.rlim_max)
		return -EINVAL;
	if (rl.rlim_max > p->rlim[res].max &&
	    !creds_capable(&t->proc->cred, CAP_SYS_RESOURCE))
		return -EPERM;
	if (res == RLIMIT_NOFILE && rl.rlim_max > 1048576)
		return -EPERM;
	p->rlim[res].cur = rl.rlim_cur;
	p->rlim[res].max = rl.rlim_max;
	return 0;
}

long sys_getrlimit(struct task *t, struct syscall_args *a)
{
	return get_rlim(t, t->proc, (int)a->a[0], a->a[1]);
}

long sys_setrlimit(struct task *t, struct syscall_args *a)
{
	return set_rlim(t, t->proc, (int)a->a[0], a->a[1]);
}

/* Linux's check_prlimit_permission: another process's limits take its
 * very ids (all three uids and gids the caller's real ones), or
 * CAP_SYS_RESOURCE. */
static bool prlimit_ok(const struct creds *c, const struct creds *tc)
{
	if (creds_capable(c, CAP_SYS_RESOURCE))
		return true;
	return c->ruid == tc->euid && c->ruid == tc->suid &&
	       c->ruid == tc->ruid && c->rgid == tc->egid &&
	       c->rgid == tc->sgid && c->rgid == tc->rgid;
}

long sys_prlimit64(struct task *t, struct syscall_args *a)
{
	int pid = (int)a->a[0], res = (int)a->a[1];
	struct process *p = pid ? proc_by_vpid(t->proc->pidns, pid) : t->proc;
	struct rlimit old;
	long rc;

	if (!p || p->exited)
		return -ESRCH;
	if (res < 0 || res >= RLIM_NLIMITS)
		return -EINVAL;
	if (p != t->proc && !prlimit_ok(&t->proc->cred, &p->cred))
		return -EPERM;
	old.rlim_cur = p->rlim[res].cur;
	old.rlim_max = p->rlim[res].max;
	if (a->a[2]) {
		rc = set_rlim(t, p, res, a->a[2]);
		if (rc < 0)
			return rc;
	}
	if (a->a[3])
		return task_write(t, a->a[3], &old, sizeof(old));
	return 0;
}

void rlimits_default(struct process *p)
{
	int i;

	for (i = 0; i < RLIM_NLIMITS; i++) {
		p->rlim[i].cur = RLIM_INFINITY;
		p->rlim[i].max = RLIM_INFINITY;
	}
	p->rlim[RLIMIT_NOFILE].cur = 1024;
	p->rlim[RLIMIT_NOFILE].max = 524288;
	p->rlim[RLIMIT_STACK].cur = 8 << 20;
	p->rlim[RLIMIT_CORE].cur = 0;
	p->rlim[RLIMIT_NPROC].cur = p->rlim[RLIMIT_NPROC].max = 32768;
	p->rlim[RLIMIT_SIGPENDING].cur = p->rlim[RLIMIT_SIGPENDING].max = 32768;
	p->rlim[RLIMIT_MEMLOCK].cur = p->rlim[RLIMIT_MEMLOCK].max = 8 << 20;
	p->rlim[RLIMIT_MSGQUEUE].cur = p->rlim[RLIMIT_MSGQUEUE].max = 819200;
	p->rlim[RLIMIT_NICE].cur = p->rlim[RLIMIT_NICE].max = 0;
	p->rlim[RLIMIT_RTPRIO].cur = p->rlim[RLIMIT_RTPRIO].max = 0;
}

long sys_sysinfo(struct task *t, struct syscall_args *a)
{
	struct sysinfo si;
	struct process *p;
	unsigned short n = 0;

	if (sysinfo(&si) < 0)
		return -EFAULT;
	/* The memory limit is the guest's RAM, as in /proc/meminfo: glibc's
	 * _SC_PHYS_PAGES (which sort, the JVM and others size from) reads it
	 * here. */
	if (S->opts.memory && si.mem_unit) {
		unsigned long lim =
			(unsigned long)(S->opts.memory / si.mem_unit);
		if (si.totalram > lim)
			si.totalram = lim;
		if (si.freeram > lim)
			si.freeram = lim;
	}
	si.uptime = (long)((now_ns() - S->boot_ns) / 1000000000LL);
	for (p = S->procs; p; p = p->next)
		if (!p->exited)
			n++;
	si.procs = n;
	return task_write(t, a->a[0], &si, sizeof(si));
}

/* ---- credentials -----------------------------------------------------------
 * Virtual: root inside the sandbox by default; on the host always the
 * sandbox's guest uid (sentry/hostids.h), whatever the guest sets. */

#define CRED (&t->proc->cred)

long sys_getuid(struct task *t, struct syscall_args *a)
{
	(void)a;
	return CRED->ruid;
}

long sys_geteuid(struct task *t, struct syscall_args *a)
{
	(void)a;
	return CRED->euid;
}

long sys_getgid(struct task *t, struct syscall_args *a)
{
	(void)a;
	return CRED->rgid;
}

long sys_getegid(struct task *t, struct syscall_args *a)
{
	(void)a;
	return CRED->egid;
}

/* May c take id as one of its ids without CAP_SETUID (CAP_SETGID)? Only
 * its own real, effective or saved one (setresuid's rule). */
static bool id_ok(struct creds *c, uint32_t id, bool gid)
{
	if (creds_capable(c, gid ? CAP_SETGID : CAP_SETUID))
		return true;
	if (gid)
		return id == c->rgid || id == c->egid || id == c->sgid;
	return id == c->ruid || id == c->euid || id == c->suid;
}

/* Linux's commit_creds: a change of the effective or file-system ids
 * leaves the process not dumpable (fs.suid_dumpable's default, 0); a
 * change of the uids moves the capabilities (caps_setuid_fixup). */
static long creds_changed(struct task *t, const struct creds *old)
{
	if (old->euid != CRED->euid || old->egid != CRED->egid ||
	    old->fsuid != CRED->fsuid || old->fsgid != CRED->fsgid)
		t->proc->nondumpable = true;
	caps_setuid_fixup(CRED, old);
	return 0;
}

long sys_setuid(struct task *t, struct syscall_args *a)
{
	uint32_t id = (uint32_t)a->a[0];
	struct creds old = *CRED;

	if (id == (uint32_t)-1)
		return -EINVAL;
	if (creds_capable(CRED, CAP_SETUID))
		CRED->ruid = CRED->suid = id;
	else if (id != CRED->ruid && id != CRED->suid)
		return -EPERM;
	CRED->euid = CRED->fsuid = id;
	return creds_changed(t, &old);
}

long sys_setgid(struct task *t, struct syscall_args *a)
{
	uint32_t id = (uint32_t)a->a[0];
	struct creds old = *CRED;

	if (id == (uint32_t)-1)
		return -EINVAL;
	if (creds_capable(CRED, CAP_SETGID))
		CRED->rgid = CRED->sgid = id;
	else if (id != CRED->rgid && id != CRED->sgid)
		return -EPERM;
	CRED->egid = CRED->fsgid = id;
	return creds_changed(t, &old);
}

static long setres(struct task *t, uint32_t r, uint32_t e, uint32_t s, bool gid)
{
	uint32_t *pr = gid ? &CRED->rgid : &CRED->ruid;
	uint32_t *pe = gid ? &CRED->egid : &CRED->euid;
	uint32_t *ps = gid ? &CRED->sgid : &CRED->suid;
	uint32_t *pf = gid ? &CRED->fsgid : &CRED->fsuid;
	struct creds old = *CRED;

	if ((r != (uint32_t)-1 && !id_ok(CRED, r, gid)) ||
	    (e != (uint32_t)-1 && !id_ok(CRED, e, gid)) ||
	    (s != (uint32_t)-1 && !id_ok(CRED, s, gid)))
		return -EPERM;
	if (r != (uint32_t)-1)
		*pr = r;
	if (e != (uint32_t)-1)
		*pe = e;
	if (s != (uint32_t)-1)
		*ps = s;
	*pf = *pe;
	return creds_changed(t, &old);
}

long sys_setresuid(struct task *t, struct syscall_args *a)
{
	return setres(t, (uint32_t)a->a[0], (uint32_t)a->a[1],
		      (uint32_t)a->a[2], false);
}

long sys_setresgid(struct task *t, struct syscall_args *a)
{
	return setres(t, (uint32_t)a->a[0], (uint32_t)a->a[1],
		      (uint32_t)a->a[2], true);
}

/* setreuid and setregid: the real id may become only the real or the
 * effective one without the capability; the saved one follows the
 * effective when the real one is given or the effective one differs
 * from the old real one. */
static long setre(struct task *t, uint32_t r, uint32_t e, bool gid)
{
	uint32_t oldr = gid ? CRED->rgid : CRED->ruid;
	uint32_t olde = gid ? CRED->egid : CRED->euid;
	uint32_t s = (r != (uint32_t)-1 || (e != (uint32_t)-1 && e != oldr)) ?
			     (e != (uint32_t)-1 ? e : olde) :
			     (uint32_t)-1;

	if (r != (uint32_t)-1 && r != oldr && r != olde &&
	    !creds_capable(CRED, gid ? CAP_SETGID : CAP_SETUID))
		return -EPERM;
	return setres(t, r, e, s, gid);
}

long sys_setreuid(struct task *t, struct syscall_args *a)
{
	return setre(t, (uint32_t)a->a[0], (uint32_t)a->a[1], false);
}

long sys_setregid(struct task *t, struct syscall_args *a)
{
	return setre(t, (uint32_t)a->a[0], (uint32_t)a->a[1], true);
}

static long getres(struct task *t, struct syscall_args *a, bool gid)
{
	uint32_t v[3] = { gid ? CRED->rgid : CRED->ruid,
			  gid ? CRED->egid : CRED->euid,
			  gid ? CRED->sgid : CRED->suid };
	int i;

	for (i = 0; i < 3; i++)
		if (task_write(t, a->a[i], &v[i], 4) < 0)
			return -EFAULT;
	return 0;
}

long sys_getresuid(struct task *t, struct syscall_args *a)
{
	return getres(t, a, false);
}

long sys_getresgid(struct task *t, struct syscall_args *a)
{
	return getres(t, a, true);
}

long sys_setfsuid(struct task *t, struct syscall_args *a)
{
	uint32_t old = CRED->fsuid, id = (uint32_t)a->a[0];

	if (id != (uint32_t)-1 && id != old && id_ok(CRED, id, false)) {
		CRED->fsuid = id;
		t->proc->nondumpable = true; /* as creds_changed */
		caps_setfsuid_fixup(CRED, old);
	}
	return old;
}

long sys_setfsgid(struct task *t, struct syscall_args *a)
{
	uint32_t old = CRED->fsgid, id = (uint32_t)a->a[0];

	if (id != (uint32_t)-1 && id != old && id_ok(CRED, id, true)) {
		CRED->fsgid = id;
		t->proc->nondumpable = true; /* as creds_changed */
	}
	return old;
}

long sys_getgroups(struct task *t, struct syscall_args *a)
{
	int n = (int)a->a[0];

	if (n < 0)
		return -EINVAL;
	if (n == 0)
		return CRED->ngroups;
	if (n < CRED->ngroups)
		return -EINVAL;
	if (task_write(t, a->a[1], CRED->groups,
		       sizeof(gid_t) * (size_t)CRED->ngroups) < 0)
		return -EFAULT;
	return CRED->ngroups;
}

long sys_setgroups(struct task *t, struct syscall_args *a)
{
	int n = (int)a->a[0];

	if (!creds_capable(CRED, CAP_SETGID))
		return -EPERM;
	if (n < 0 || n > (int)ARRAY_SIZE(CRED->groups))
		return -EINVAL;
	if (n &&
	    task_read(t, a->a[1], CRED->groups, sizeof(gid_t) * (size_t)n) < 0)
		return -EFAULT;
	CRED->ngroups = n;
	return 0;
}

/* capget and capset's header: its version says how many 32-bit halves
 * of each set the data holds (one for version 1, two since); any other
 * is answered with the version Linux prefers, and EINVAL. */
static long cap_header(struct task *t, uint64_t uh, int *pid, size_t *halves)
{
	struct __user_cap_header_struct h;

	if (task_read(t, uh, &h, sizeof(h)) < 0)
		return -EFAULT;
	switch (h.version) {
	case _LINUX_CAPABILITY_VERSION_1:
		*halves = 1;
		break;
	case _LINUX_CAPABILITY_VERSION_2:
	case _LINUX_CAPABILITY_VERSION_3:
		*halves = 2;
		break;
	default:
		h.version = _LINUX_CAPABILITY_VERSION_3;
		if (task_write(t, uh, &h.version, sizeof(h.version)) < 0)
			return -EFAULT;
		return -EINVAL;
	}
	*pid = h.pid;
	return 0;
}

long sys_capget(struct task *t, struct syscall_args *a)
{
	struct __user_cap_data_struct d[2];
	const struct creds *c = CRED;
	size_t halves;
	int pid;
	long rc = cap_header(t, a->a[0], &pid, &halves);

	if (!a->a[1] || rc < 0)
		return !a->a[1] && rc == -EINVAL ? 0 : rc;
	if (pid < 0)
		return -EINVAL;
	if (pid && pid != pid_in_ns(t->proc->pidns, t->tid)) {
		struct task *x = task_by_guest_tid(t->proc->pidns, pid);
		struct process *p = x ? x->proc :
					proc_by_vpid(t->proc->pidns, pid);

		if (!p || p->exited)
			return -ESRCH;
		c = &p->cred;
	}
	d[0].effective = (uint32_t)c->cap.eff;
	d[0].permitted = (uint32_t)c->cap.prm;
	d[0].inheritable = (uint32_t)c->cap.inh;
	d[1].effective = (uint32_t)(c->cap.eff >> 32);
	d[1].permitted = (uint32_t)(c->cap.prm >> 32);
	d[1].inheritable = (uint32_t)(c->cap.inh >> 32);
	return task_write(t, a->a[1], d, halves * sizeof(d[0]));
}

/* The sets change by Linux's rules (caps_capset); they are the sandbox's
 * own and never reach the host task, which holds no capability. */
long sys_capset(struct task *t, struct syscall_args *a)
{
	struct __user_cap_data_struct d[2] = { 0 };
	size_t halves;
	int pid;
	long rc = cap_header(t, a->a[0], &pid, &halves);

	if (rc < 0)
		return rc;
	if (pid && pid != pid_in_ns(t->proc->pidns, t->tid))
		return -EPERM;
	if (task_read(t, a->a[1], d, halves * sizeof(d[0])) < 0)
		return -EFAULT;
	return caps_capset(CRED,
			   d[0].effective | (uint64_t)d[1].effective << 32,
			   d[0].permitted | (uint64_t)d[1].permitted << 32,
			   d[0].inheritable | (uint64_t)d[1].inheritable << 32);
}

long sys_prctl(struct task *t, struct syscall_args *a)
{
	int op = (int)a->a[0];

	switch (op) {
	case PR_SET_NAME: {
		char buf[16];
		if (task_read_str(t, a->a[1], buf, sizeof(buf)) < 0) {
			if (task_read(t, a->a[1], buf, sizeof(buf) - 1) < 0)
				return -EFAULT;
			buf[15] = 0;
		}
		memcpy(t->proc->comm, buf, sizeof(buf));
		return 0;
	}
	case PR_GET_NAME:
		return task_write(t, a->a[1], t->proc->comm,
				  sizeof(t->proc->comm));
	case PR_SET_PDEATHSIG:
		if (a->a[1] > 64)
			return -EINVAL;
		return 0;
	case PR_GET_PDEATHSIG: {
		int z = 0;
		return task_write(t, a->a[1], &z, sizeof(z));
	}
	/* The process's flag, never the host task's: that one stays what
	 * the sandbox set (docs/security.md). */
	case PR_GET_DUMPABLE:
		return t->proc->nondumpable ? 0 : 1;
	case PR_SET_DUMPABLE:
		if (a->a[1] > 1)
			return -EINVAL; /* SUID_DUMP_ROOT is not settable */
		t->proc->nondumpable = a->a[1] == 0;
		return 0;
	/* The process's own flag: every guest's host task has it set
	 * already (docs/security.md); this one is what the guest set or
	 * its config gave, and what it sees. */
	case PR_SET_NO_NEW_PRIVS:
		if (a->a[1] != 1 || a->a[2] || a->a[3] || a->a[4])
			return -EINVAL;
		t->proc->no_new_privs = true;
		return 0;
	case PR_GET_NO_NEW_PRIVS:
		if (a->a[1] || a->a[2] || a->a[3] || a->a[4])
			return -EINVAL;
		return t->proc->no_new_privs;
	case PR_GET_KEEPCAPS:
		return !!(CRED->securebits & SECBIT_KEEP_CAPS);
	case PR_SET_KEEPCAPS:
		return caps_set_keepcaps(CRED, a->a[1]);
	case PR_SET_CHILD_SUBREAPER:
	case PR_GET_CHILD_SUBREAPER:
		return op == PR_GET_CHILD_SUBREAPER ?
			       task_write(t, a->a[1], &(int){ 0 }, 4) :
			       0;
	case PR_GET_SECUREBITS:
		return CRED->securebits;
	case PR_SET_SECUREBITS:
		return caps_set_securebits(CRED, a->a[1]);
	case PR_CAPBSET_READ:
		if (a->a[1] > MOAT_CAP_LAST)
			return -EINVAL;
		return (CRED->cap.bnd >> a->a[1]) & 1;
	case PR_CAPBSET_DROP:
		return caps_bset_drop(CRED, a->a[1]);
	case PR_CAP_AMBIENT:
		return caps_ambient(CRED, a->a[1], a->a[2], a->a[3], a->a[4]);
	case PR_GET_TIMERSLACK:
		return 50000;
	case PR_SET_VMA:
		return 0;
	default:
		return -EINVAL;
	}
}

/* The processes a (which, who) pair of get/setpriority names, visited
 * until fn returns non-zero. */
static int prio_each(struct task *t, int which, int who,
		     int (*fn)(struct process *p, void *arg), void *arg,
		     bool *found)
{
	struct process *p;
	int rc, gwho = pid_from_guest(t->proc->pidns, who);

	*found = false;
	for (p = S->procs; p; p = p->next) {
		bool match;
		if (p->exited || !pid_visible(t->proc->pidns, p))
			continue;
		switch (which) {
		case PRIO_PROCESS:
			match = p->pid == (who ? gwho : t->proc->pid);
			break;
		case PRIO_PGRP:
			match = p->pgid == (who ? gwho : t->proc->pgid);
			break;
		case PRIO_USER:
			match = p->cred.ruid ==
				(uid_t)(who ? who : (int)t->proc->cred.ruid);
			break;
		default:
			return -EINVAL;
		}
		if (!match)
			continue;
		*found = true;
		rc = fn(p, arg);
		if (rc)
			return rc;
	}
	return 0;
}

static int prio_min(struct process *p, void *arg)
{
	int *best = arg;

	if (p->nice < *best)
		*best = p->nice;
	return 0;
}

long sys_getpriority(struct task *t, struct syscall_args *a)
{
	int best = 20;
	bool found;
	int rc = prio_each(t, (int)a->a[0], (int)a->a[1], prio_min, &best,
			   &found);

	if (rc < 0)
		return rc;
	if (!found)
		return -ESRCH;
	return 20 - best; /* the kernel's 20-nice encoding */
}

struct prio_set {
	struct task *t;
	int nice;
};

static int prio_apply(struct process *p, void *arg)
{
	struct prio_set *ps = arg;
	const struct creds *c = &ps->t->proc->cred;

	if (!creds_capable(c, CAP_SYS_NICE) && c->euid != p->cred.euid &&
	    c->euid != p->cred.ruid)
		return -EPERM;
	/* Raising a priority (a lower nice) takes CAP_SYS_NICE. */
	if (ps->nice < p->nice && !creds_capable(c, CAP_SYS_NICE))
		return -EACCES;
	p->nice = ps->nice;
	return 0;
}

long sys_setpriority(struct task *t, struct syscall_args *a)
{
	struct prio_set ps = { t, (int)a->a[2] };
	bool found;
	int rc;

	if (ps.nice < -20)
		ps.nice = -20;
	if (ps.nice > 19)
		ps.nice = 19;
	rc = prio_each(t, (int)a->a[0], (int)a->a[1], prio_apply, &ps, &found);
	if (rc < 0)
		return rc;
	return found ? 0 : -ESRCH;
}

long sys_ptrace(struct task *t, struct syscall_args *a)
{
	(void)t;
	(void)a;
	return -EPERM;
}

/* The process a sched_* pid names (0: the caller's), or NULL. */
static struct process *sched_target(struct task *t, int pid)
{
	struct task *x;

	if (pid == 0)
		return t->proc;
	x = task_by_guest_tid(t->proc->pidns, pid);
	return x ? x->proc : NULL;
}

long sys_sched_setaffinity(struct task *t, struct syscall_args *a)
{
	struct process *p;
	cpu_set_t want;
	size_t len = a->a[1];

	p = (int)a->a[0] < 0 ? NULL : sched_target(t, (int)a->a[0]);
	if (!p)
		return -ESRCH;
	CPU_ZERO(&want);
	if (task_read(t, a->a[2], &want,
		      len < sizeof(want) ? len : sizeof(want)) < 0)
		return -EFAULT;
	/* Kept as the guest's view, within the CPUs the sandbox may use;
	 * the platform places tasks itself (platform/ptrace.c). */
	CPU_AND(&want, &want, &S->cpus);
	if (CPU_COUNT(&want) == 0)
		return -EINVAL;
	p->affinity = want;
	return 0;
}

long sys_sched_getaffinity(struct task *t, struct syscall_args *a)
{
	int pid = (int)a->a[0];
	size_t len = a->a[1];
	size_t need = (size_t)(S->ncpus_possible + 63) / 64 * 8;

	struct process *p = pid < 0 ? NULL : sched_target(t, pid);

	if (len < need || (len & 7))
		return -EINVAL;
	if (!p)
		return -ESRCH; /* a negative pid names no process either */
	if (need > sizeof(p->affinity))
		need = sizeof(p->affinity);
	/* The platform pins tasks to the sentry's CPU to keep each trap on
	 * one core; the guest sees the CPUs it asked for, within those the
	 * sandbox may use. */
	if (task_write(t, a->a[2], &p->affinity, need) < 0)
		return -EFAULT;
	return (long)need;
}

/* Policies an unprivileged Linux process may choose (priority 0); the
 * real-time ones need CAP_SYS_NICE on the host, which no guest has. */
static bool policy_ok(int policy)
{
	return policy == SCHED_OTHER || policy == SCHED_BATCH ||
	       policy == SCHED_IDLE;
}

long sys_sched_setscheduler(struct task *t, struct syscall_args *a)
{
	int pid = (int)a->a[0], policy = (int)a->a[1] & ~SCHED_RESET_ON_FORK;
	struct sched_param sp;
	struct process *p;

	if (pid < 0 || !a->a[2])
		return -EINVAL;
	p = sched_target(t, pid);
	if (!p)
		return -ESRCH;
	if (task_read(t, a->a[2], &sp, sizeof(sp)) < 0)
		return -EFAULT;
	if (policy == SCHED_FIFO || policy == SCHED_RR)
		return sp.sched_priority < 1 || sp.sched_priority > 99 ?
			       -EINVAL :
			       -EPERM;
	if (!policy_ok(policy) || sp.sched_priority != 0)
		return -EINVAL;
	p->sched_policy = policy;
	return 0;
}

long sys_sched_setparam(struct task *t, struct syscall_args *a)
{
	int pid = (int)a->a[0];
	struct sched_param sp;
	struct process *p;

	if (pid < 0 || !a->a[1])
		return -EINVAL;
	p = sched_target(t, pid);
	if (!p)
		return -ESRCH;
	if (task_read(t, a->a[1], &sp, sizeof(sp)) < 0)
		return -EFAULT;
	return sp.sched_priority == 0 ? 0 : -EINVAL;
}

long sys_sched_getscheduler(struct task *t, struct syscall_args *a)
{
	int pid = (int)a->a[0];
	struct process *p = pid < 0 ? NULL : sched_target(t, pid);

	if (pid < 0)
		return -EINVAL;
	return p ? p->sched_policy : -ESRCH;
}

long sys_sched_getparam(struct task *t, struct syscall_args *a)
{
	int pid = (int)a->a[0];
	struct sched_param sp = { .sched_priority = 0 };

	if (pid < 0 || !a->a[1])
		return -EINVAL;
	if (!sched_target(t, pid))
		return -ESRCH;
	return task_write(t, a->a[1], &sp, sizeof(sp)) < 0 ? -EFAULT : 0;
}

long sys_sched_rr_get_interval(struct task *t, struct syscall_args *a)
{
	int pid = (int)a->a[0];
	struct timespec ts;

	if (pid < 0)
		return -EINVAL;
	if (!sched_target(t, pid))
		return -ESRCH;
	/* The host's time slice for a normal task (the sentry is one). */
	if (syscall(SYS_sched_rr_get_interval, 0, &ts) < 0)
		return -errno;
	return task_write(t, a->a[1], &ts, sizeof(ts)) < 0 ? -EFAULT : 0;
}
