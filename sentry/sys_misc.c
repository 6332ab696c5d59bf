/* sentry/sys_misc.c: identity, credentials, limits and system information. */
#include <linux/capability.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
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
	snprintf(u.version, sizeof(u.version), "#1 SMP moat");
	snprintf(u.machine, sizeof(u.machine), "x86_64");
	snprintf(u.domainname, sizeof(u.domainname), "%s", S->domainname);
	return task_write(t, a->a[0], &u, sizeof(u));
}

static long set_name(struct task *t, uint64_t uname_, uint64_t len, char *dst)
{
	char buf[65];

	if (t->proc->cred.euid != 0)
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
	if (rl.rlim_max > p->rlim[res].max && t->proc->cred.euid != 0)
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

long sys_prlimit64(struct task *t, struct syscall_args *a)
{
	int pid = (int)a->a[0], res = (int)a->a[1];
	struct process *p = pid ? proc_by_pid(pid) : t->proc;
	struct rlimit old;
	long rc;

	if (!p || p->exited)
		return -ESRCH;
	if (res < 0 || res >= RLIM_NLIMITS)
		return -EINVAL;
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
	si.uptime = (long)((now_ns() - S->boot_ns) / 1000000000LL);
	for (p = S->procs; p; p = p->next)
		if (!p->exited)
			n++;
	si.procs = n;
	return task_write(t, a->a[0], &si, sizeof(si));
}

/* ---- credentials -----------------------------------------------------------
 * Virtual: root inside the sandbox by default, nobody on the host always. */

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

static bool id_ok(struct creds *c, uint32_t id, bool gid)
{
	if (c->euid == 0)
		return true;
	if (gid)
		return id == c->rgid || id == c->egid || id == c->sgid;
	return id == c->ruid || id == c->euid || id == c->suid;
}

long sys_setuid(struct task *t, struct syscall_args *a)
{
	uint32_t id = (uint32_t)a->a[0];

	if (id == (uint32_t)-1)
		return -EINVAL;
	if (CRED->euid == 0) {
		CRED->ruid = CRED->euid = CRED->suid = CRED->fsuid = id;
		return 0;
	}
	if (!id_ok(CRED, id, false))
		return -EPERM;
	CRED->euid = CRED->fsuid = id;
	return 0;
}

long sys_setgid(struct task *t, struct syscall_args *a)
{
	uint32_t id = (uint32_t)a->a[0];

	if (id == (uint32_t)-1)
		return -EINVAL;
	if (CRED->euid == 0) {
		CRED->rgid = CRED->egid = CRED->sgid = CRED->fsgid = id;
		return 0;
	}
	if (!id_ok(CRED, id, true))
		return -EPERM;
	CRED->egid = CRED->fsgid = id;
	return 0;
}

static long setres(struct task *t, uint32_t r, uint32_t e, uint32_t s, bool gid)
{
	uint32_t *pr = gid ? &CRED->rgid : &CRED->ruid;
	uint32_t *pe = gid ? &CRED->egid : &CRED->euid;
	uint32_t *ps = gid ? &CRED->sgid : &CRED->suid;
	uint32_t *pf = gid ? &CRED->fsgid : &CRED->fsuid;

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
	return 0;
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

long sys_setreuid(struct task *t, struct syscall_args *a)
{
	uint32_t r = (uint32_t)a->a[0], e = (uint32_t)a->a[1];
	uint32_t s =
		(r != (uint32_t)-1 || (e != (uint32_t)-1 && e != CRED->ruid)) ?
			(e != (uint32_t)-1 ? e : CRED->euid) :
			(uint32_t)-1;
	return setres(t, r, e, s, false);
}

long sys_setregid(struct task *t, struct syscall_args *a)
{
	uint32_t r = (uint32_t)a->a[0], e = (uint32_t)a->a[1];
	uint32_t s =
		(r != (uint32_t)-1 || (e != (uint32_t)-1 && e != CRED->rgid)) ?
			(e != (uint32_t)-1 ? e : CRED->egid) :
			(uint32_t)-1;
	return setres(t, r, e, s, true);
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

	if (id != (uint32_t)-1 &&
	    (CRED->euid == 0 || id_ok(CRED, id, false) || id == CRED->fsuid))
		CRED->fsuid = id;
	return old;
}

long sys_setfsgid(struct task *t, struct syscall_args *a)
{
	uint32_t old = CRED->fsgid, id = (uint32_t)a->a[0];

	if (id != (uint32_t)-1 &&
	    (CRED->euid == 0 || id_ok(CRED, id, true) || id == CRED->fsgid))
		CRED->fsgid = id;
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

	if (CRED->euid != 0)
		return -EPERM;
	if (n < 0 || n > (int)ARRAY_SIZE(CRED->groups))
		return -EINVAL;
	if (n &&
	    task_read(t, a->a[1], CRED->groups, sizeof(gid_t) * (size_t)n) < 0)
		return -EFAULT;
	CRED->ngroups = n;
	return 0;
}

long sys_capget(struct task *t, struct syscall_args *a)
{
	struct __user_cap_header_struct h;
	struct __user_cap_data_struct d[2];
	uint64_t all = CRED->euid == 0 ? 0x1ffffffffffULL : 0;

	if (task_read(t, a->a[0], &h, sizeof(h)) < 0)
		return -EFAULT;
	if (h.version != _LINUX_CAPABILITY_VERSION_3 &&
	    h.version != _LINUX_CAPABILITY_VERSION_2) {
		h.version = _LINUX_CAPABILITY_VERSION_3;
		task_write(t, a->a[0], &h, sizeof(h));
		return a->a[1] ? -EINVAL : 0;
	}
	if (!a->a[1])
		return 0;
	memset(d, 0, sizeof(d));
	d[0].effective = d[0].permitted = (uint32_t)all;
	d[1].effective = d[1].permitted = (uint32_t)(all >> 32);
	return task_write(t, a->a[1], d, sizeof(d));
}

long sys_capset(struct task *t, struct syscall_args *a)
{
	(void)a;
	/* Capabilities inside the sandbox are not backed by host ones;
	 * dropping them is accepted and has no host effect. */
	return CRED->euid == 0 ? 0 : -EPERM;
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
	case PR_GET_DUMPABLE:
		return 1;
	case PR_SET_DUMPABLE:
		return a->a[1] <= 1 ? 0 : -EINVAL;
	case PR_SET_NO_NEW_PRIVS:
		return a->a[1] == 1 ? 0 : -EINVAL;
	case PR_GET_NO_NEW_PRIVS:
		return 0;
	case PR_GET_KEEPCAPS:
		return 0;
	case PR_SET_KEEPCAPS:
		return a->a[1] <= 1 ? 0 : -EINVAL;
	case PR_SET_CHILD_SUBREAPER:
	case PR_GET_CHILD_SUBREAPER:
		return op == PR_GET_CHILD_SUBREAPER ?
			       task_write(t, a->a[1], &(int){ 0 }, 4) :
			       0;
	case PR_GET_SECUREBITS:
		return 0;
	case PR_SET_SECUREBITS:
		return CRED->euid == 0 ? 0 : -EPERM;
	case PR_CAPBSET_READ:
		return a->a[1] <= 40 ? 1 : -EINVAL;
	case PR_CAPBSET_DROP:
		return CRED->euid == 0 ? 0 : -EPERM;
	case PR_GET_TIMERSLACK:
		return 50000;
	case PR_SET_VMA:
		return 0;
	default:
		return -EINVAL;
	}
}

long sys_getpriority(struct task *t, struct syscall_args *a)
{
	(void)t;
	(void)a;
	return 20; /* nice 0, in the kernel's 40-nice encoding */
}

long sys_setpriority(struct task *t, struct syscall_args *a)
{
	(void)t;
	return (int)a->a[2] < 0 ? -EACCES : 0;
}

long sys_ptrace(struct task *t, struct syscall_args *a)
{
	(void)t;
	(void)a;
	return -EPERM;
}

long sys_sched_setaffinity(struct task *t, struct syscall_args *a)
{
	int pid = (int)a->a[0];

	if (pid && !task_by_vtid(pid))
		return -ESRCH;
	(void)t;
	return 0;
}

long sys_sched_getaffinity(struct task *t, struct syscall_args *a)
{
	int pid = (int)a->a[0];
	size_t len = a->a[1];
	size_t need = (size_t)(S->ncpus_possible + 63) / 64 * 8;

	if (pid && !task_by_vtid(pid))
		return -ESRCH;
	if (len < need || (len & 7))
		return -EINVAL;
	if (need > sizeof(S->cpus))
		need = sizeof(S->cpus);
	/* The platform pins tasks to the sentry's CPU to keep each trap on
	 * one core; the guest sees the CPUs the sandbox may use. */
	if (task_write(t, a->a[2], &S->cpus, need) < 0)
		return -EFAULT;
	return (long)need;
}

long sys_sched_setscheduler(struct task *t, struct syscall_args *a)
{
	(void)t;
	(void)a;
	return -EPERM;
}

long sys_sched_setparam(struct task *t, struct syscall_args *a)
{
	(void)t;
	(void)a;
	return -EPERM;
}
