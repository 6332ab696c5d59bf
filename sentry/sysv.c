/* sentry/sysv.c: System V IPC, in the sandbox's own IPC namespace.
 *
 * Shared memory segments are memfds of the sentry's, mapped into a guest
 * by shmat as any tmpfs file is (the donated fd, MAP_SHARED), so pages are
 * shared without copies. Semaphore sets and message queues live in the
 * sentry; a semop or msgsnd/msgrcv that must wait blocks as any emulated
 * syscall does (interrupted by signals, IPC_NOWAIT for EAGAIN/ENOMSG).
 * Nothing is the host's: another sandbox, or the host, never sees a key.
 * The limits are sentry/sysv.h's.
 */
#include <fcntl.h>
#include <stdio.h>
#include <limits.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/sysmacros.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "platform/platform.h"
#include "sentry/limits.h"
#include "sentry/syscalls.h"
#include "sentry/sysctl.h"
#include "sentry/sysv.h"
#include "sentry/vfs.h"

#define IPC_CMD(c) ((c) & ~0x100) /* glibc adds IPC_64 */
/* Attachments (which fork copies) and SEM_UNDO records are the sentry's
 * heap, which no memory cgroup sees: bounded for the whole sandbox. Past
 * them shmat, fork and a semop with SEM_UNDO fail with ENOMEM, as Linux's
 * do when its memory cgroup refuses the kernel's allocation. */
#define SHM_ATT_TOTAL 8192	    /* attachments of all processes */
#define UNDO_BYTES_TOTAL (8u << 20) /* SEM_UNDO records of all processes */

enum ipc_kind {
	K_SHM,
	K_SEM,
	K_MSG
};

struct semun_val {
	unsigned short val;
	int pid;
};

struct msg {
	struct msg *next;
	long type;
	size_t len;
	char text[];
};

struct ipcobj {
	struct ipcobj *next;
	enum ipc_kind kind;
	int id;
	key_t key;
	bool removed;
	uid_t uid, cuid;
	gid_t gid, cgid;
	mode_t mode;
	time_t ctime, otime;
	int lpid, cpid;
	/* shm */
	int memfd;
	size_t size;
	int nattch;
	time_t atime, dtime;
	/* sem */
	int nsems;
	struct semun_val *sems;
	/* msg */
	struct msg *head, *tail;
	size_t qbytes, qnum, qmax;
	time_t rtime;
	int lrpid;
};

struct shmatt {
	struct shmatt *next;
	struct process *proc;
	uint64_t addr;
	struct ipcobj *seg;
};

struct semundo {
	struct semundo *next;
	struct process *proc;
	int id;
	int nsems;
	short adj[];
};

static struct ipcobj *objs;
static struct shmatt *atts;
static struct semundo *undos;
static long natts;	  /* for SHM_ATT_TOTAL */
static size_t undo_bytes; /* for UNDO_BYTES_TOTAL */
static int next_id[3] = { 0, 0, 0 };
static size_t shm_bytes;

static time_t now_s(void)
{
	return time(NULL);
}

static struct ipcobj *find_id(enum ipc_kind k, int id)
{
	struct ipcobj *o;

	for (o = objs; o; o = o->next)
		if (o->kind == k && o->id == id && !o->removed)
			return o;
	return NULL;
}

static int count(enum ipc_kind k)
{
	struct ipcobj *o;
	int n = 0;

	for (o = objs; o; o = o->next)
		if (o->kind == k)
			n++;
	return n;
}

/* Permission to use o: read (r) and/or write (w) bits, as for files. */
static int may(struct task *t, struct ipcobj *o, bool r, bool w)
{
	const struct creds *c = &t->proc->cred;
	mode_t m = o->mode;

	if (creds_capable(c, CAP_IPC_OWNER))
		return 0;
	if (c->euid == o->uid || c->euid == o->cuid)
		m >>= 6;
	else if (c->egid == o->gid || c->egid == o->cgid)
		m >>= 3;
	if ((r && !(m & 4)) || (w && !(m & 2)))
		return -EACCES;
	return 0;
}

/* The get: an existing object of key, or a new one (ok says if the
 * caller may make it: its own callback fills the kind's part). */
static long ipc_get(struct task *t, enum ipc_kind k, key_t key, int flags,
		    struct ipcobj **out, bool *made)
{
	struct ipcobj *o;

	*made = false;
	if (key != IPC_PRIVATE) {
		for (o = objs; o; o = o->next)
			if (o->kind == k && o->key == key && !o->removed)
				break;
		if (o) {
			if ((flags & IPC_CREAT) && (flags & IPC_EXCL))
				return -EEXIST;
			if (may(t, o, (flags & 0444) != 0,
				(flags & 0222) != 0) < 0)
				return -EACCES;
			*out = o;
			return 0;
		}
		if (!(flags & IPC_CREAT))
			return -ENOENT;
	}
	/* kernel.shmmni, sem's SEMMNI, msgmni */
	if ((unsigned long long)count(k) >= (k == K_SHM ? sysctl_k.shmmni :
					     k == K_SEM ? sysctl_k.sem[3] :
							  sysctl_k.msgmni))
		return -ENOSPC;
	o = calloc(1, sizeof(*o));
	if (!o)
		return -ENOMEM;
	o->kind = k;
	o->id = next_id[k]++;
	o->key = key;
	o->uid = o->cuid = t->proc->cred.euid;
	o->gid = o->cgid = t->proc->cred.egid;
	o->mode = (mode_t)flags & 0777;
	o->ctime = now_s();
	o->cpid = t->proc->pid;
	o->memfd = -1;
	*out = o;
	*made = true;
	return 0;
}

static void link_obj(struct ipcobj *o)
{
	o->next = objs;
	objs = o;
}

static size_t msg_total; /* bytes queued in all queues, headers too */
static long sem_total;	 /* semaphores in all sets */

static void undo_free(struct semundo **pp)
{
	struct semundo *u = *pp;

	*pp = u->next;
	undo_bytes -= sizeof(*u) + sizeof(short) * (size_t)u->nsems;
	free(u);
}

/* A set is removed: its adjustments go with it, as Linux's freeary
 * drops them (the id may name another set later). */
static void undo_drop_set(int id)
{
	struct semundo **pp = &undos;

	while (*pp) {
		if ((*pp)->id == id)
			undo_free(pp);
		else
			pp = &(*pp)->next;
	}
}

static void free_obj(struct ipcobj *o)
{
	struct ipcobj **pp;

	for (pp = &objs; *pp; pp = &(*pp)->next)
		if (*pp == o) {
			*pp = o->next;
			break;
		}
	if (o->memfd >= 0) {
		close(o->memfd);
		shm_bytes -= o->size;
	}
	while (o->head) {
		struct msg *m = o->head;
		o->head = m->next;
		msg_total -= sizeof(*m) + m->len;
		limits_heap_charge(-(int64_t)(sizeof(*m) + m->len));
		free(m);
	}
	sem_total -= o->sems ? o->nsems : 0;
	if (o->sems)
		undo_drop_set(o->id);
	free(o->sems);
	free(o);
}

static void perm_out(const struct ipcobj *o, struct ipc_perm *p)
{
	memset(p, 0, sizeof(*p));
	p->__key = o->key;
	p->uid = o->uid;
	p->gid = o->gid;
	p->cuid = o->cuid;
	p->cgid = o->cgid;
	p->mode = (unsigned short)o->mode;
}

static long ipc_set(struct task *t, struct ipcobj *o, const struct ipc_perm *p)
{
	const struct creds *c = &t->proc->cred;

	if (!creds_capable(c, CAP_SYS_ADMIN) && c->euid != o->uid &&
	    c->euid != o->cuid)
		return -EPERM;
	o->uid = p->uid;
	o->gid = p->gid;
	o->mode = p->mode & 0777;
	o->ctime = now_s();
	sentry_wake();
	return 0;
}

static long ipc_rmid(struct task *t, struct ipcobj *o)
{
	const struct creds *c = &t->proc->cred;

	if (!creds_capable(c, CAP_SYS_ADMIN) && c->euid != o->uid &&
	    c->euid != o->cuid)
		return -EPERM;
	o->removed = true;
	o->key = IPC_PRIVATE;
	if (o->kind != K_SHM || o->nattch == 0)
		free_obj(o);
	sentry_wake(); /* waiters see EIDRM */
	return 0;
}

/* ---- shared memory ------------------------------------------------------- */

long sys_shmget(struct task *t, struct syscall_args *a)
{
	size_t size = a->a[1];
	struct ipcobj *o;
	bool made;
	long rc = ipc_get(t, K_SHM, (key_t)a->a[0], (int)a->a[2], &o, &made);

	if (rc < 0)
		return rc;
	if (!made)
		return size > o->size ? -EINVAL : o->id;
	/* Linux's newseg: a size past kernel.shmmax is EINVAL, one past
	 * what kernel.shmall leaves ENOSPC. */
	if (!size || size > sysctl_k.shmmax) {
		free(o);
		return -EINVAL;
	}
	size = (size + 4095) & ~(size_t)4095;
	/* (shmall is at most SHM_TOTAL's pages: the sentry's bound) */
	if (size / 4096 > sysctl_k.shmall ||
	    (shm_bytes + size) / 4096 > sysctl_k.shmall) {
		free(o);
		return -ENOSPC;
	}
	/* One host fd a segment (SHMMNI of them at most), within the line
	 * of fds guests may make the sentry hold. */
	o->memfd = fd_admit(memfd_create("moat-sysv-shm", MFD_CLOEXEC));
	if (o->memfd < 0 || ftruncate(o->memfd, (off_t)size) < 0) {
		int rc = o->memfd == -ENFILE ? -ENFILE : -ENOMEM;
		if (o->memfd >= 0)
			close(o->memfd);
		free(o);
		return rc;
	}
	o->size = size;
	shm_bytes += size;
	link_obj(o);
	return o->id;
}

static void detach(struct shmatt **pp);

long sys_shmat(struct task *t, struct syscall_args *a)
{
	struct ipcobj *o = find_id(K_SHM, (int)a->a[0]);
	uint64_t addr = a->a[1];
	int flags = (int)a->a[2], prot, mflags = MAP_SHARED, gfd;
	struct shmatt *at;
	long r;

	if (!o)
		return -EINVAL;
	if (may(t, o, true, !(flags & SHM_RDONLY)) < 0)
		return -EACCES;
	if (natts >= SHM_ATT_TOTAL)
		return -ENOMEM;
	if (addr) {
		if (flags & SHM_RND)
			addr &= ~(uint64_t)(SHMLBA - 1);
		else if (addr & 4095)
			return -EINVAL;
		if (stub_overlaps(addr, o->size))
			return -EINVAL;
		mflags |= (flags & SHM_REMAP) ? MAP_FIXED : MAP_FIXED_NOREPLACE;
	}
	prot = PROT_READ | ((flags & SHM_RDONLY) ? 0 : PROT_WRITE) |
	       ((flags & SHM_EXEC) ? PROT_EXEC : 0);
	at = calloc(1, sizeof(*at));
	if (!at)
		return -ENOMEM;
	if (flags & SHM_RDONLY) {
		/* A read-only open of the segment, as Linux's shmat makes:
		 * mprotect runs natively, and the memfd is open read-write,
		 * so a reader could otherwise make the mapping writable. */
		char self[32];
		int ro;

		snprintf(self, sizeof(self), "self/fd/%d", o->memfd);
		ro = fd_admit(
			openat(S->host_proc_fd, self, O_RDONLY | O_CLOEXEC));
		gfd = ro < 0 ? (ro == -ENFILE ? ro : -ENOMEM) :
			       plat_donate_fd(t, ro);
		if (ro >= 0)
			close(ro);
	} else {
		gfd = plat_donate_fd(t, o->memfd);
	}
	if (gfd < 0) {
		free(at);
		return gfd;
	}
	r = plat_inject(t, SYS_mmap, addr, o->size, (uint64_t)prot,
			(uint64_t)mflags, (uint64_t)gfd, 0);
	plat_inject(t, SYS_close, (uint64_t)gfd, 0, 0, 0, 0, 0);
	if (r < 0 && r >= -4095) {
		free(at);
		return r;
	}
	/* munmap is native: an attachment of this process at the address
	 * the host just gave out again is gone (shmat and munmap in a loop
	 * would otherwise pile them up). */
	for (struct shmatt **pp = &atts; *pp;) {
		if ((*pp)->proc == t->proc && (*pp)->addr == (uint64_t)r)
			detach(pp);
		else
			pp = &(*pp)->next;
	}
	at->proc = t->proc;
	at->addr = (uint64_t)r;
	at->seg = o;
	at->next = atts;
	atts = at;
	natts++;
	o->nattch++;
	o->atime = now_s();
	o->lpid = t->proc->pid;
	/* Linux: the shm filesystem's device, and the segment's id as the
	 * inode. */
	maps_add(t->proc, (uint64_t)r, (uint64_t)r + o->size, "/SYSV (deleted)",
		 makedev(0, 1), (uint64_t)o->id);
	return r;
}

static void detach(struct shmatt **pp)
{
	struct shmatt *at = *pp;
	struct ipcobj *o = at->seg;

	*pp = at->next;
	natts--;
	o->nattch--;
	o->dtime = now_s();
	/* kernel.shm_rmid_forced: the last detach removes it (Linux's
	 * shm_may_destroy) */
	if ((o->removed || sysctl_k.shm_rmid_forced) && o->nattch == 0) {
		o->removed = true;
		free_obj(o);
	}
	free(at);
}

long sys_shmdt(struct task *t, struct syscall_args *a)
{
	struct shmatt **pp;

	for (pp = &atts; *pp; pp = &(*pp)->next) {
		if ((*pp)->proc != t->proc || (*pp)->addr != a->a[0])
			continue;
		plat_inject(t, SYS_munmap, (*pp)->addr, (*pp)->seg->size, 0, 0,
			    0, 0);
		(*pp)->seg->lpid = t->proc->pid;
		detach(pp);
		return 0;
	}
	return -EINVAL;
}

static long atts_of(const struct process *p)
{
	const struct shmatt *at;
	long n = 0;

	for (at = atts; at; at = at->next)
		n += at->proc == p;
	return n;
}

bool sysv_fork_fits(const struct process *parent)
{
	return natts + atts_of(parent) <= SHM_ATT_TOTAL;
}

/* fork copies the parent's attachments; exit and exec drop them. */
int sysv_fork(struct process *parent, struct process *child)
{
	struct shmatt *at, *n;

	if (natts + atts_of(parent) > SHM_ATT_TOTAL)
		return -ENOMEM;
	for (at = atts; at; at = at->next) {
		if (at->proc != parent)
			continue;
		n = calloc(1, sizeof(*n));
		if (!n) {
			sysv_exec(child); /* drops the copies made so far */
			return -ENOMEM;
		}
		*n = *at;
		n->proc = child;
		n->next = atts;
		atts = n;
		natts++;
		at->seg->nattch++;
	}
	return 0;
}

static void undo_apply(struct process *p);

void sysv_exec(struct process *p)
{
	struct shmatt **pp = &atts;

	while (*pp) {
		if ((*pp)->proc == p)
			detach(pp);
		else
			pp = &(*pp)->next;
	}
}

void sysv_proc_gone(struct process *p)
{
	struct ipcobj *o, *next;

	sysv_exec(p);
	undo_apply(p); /* SEM_UNDO: at exit, not at exec */
	/* kernel.shm_rmid_forced: what it made and no one has attached goes
	 * with it (Linux's exit_shm) */
	for (o = objs; sysctl_k.shm_rmid_forced && o; o = next) {
		next = o->next;
		if (o->kind == K_SHM && o->cpid == p->pid && o->nattch == 0) {
			o->removed = true;
			free_obj(o);
		}
	}
}

long sys_shmctl(struct task *t, struct syscall_args *a)
{
	int cmd = IPC_CMD((int)a->a[1]);
	struct ipcobj *o = find_id(K_SHM, (int)a->a[0]);
	struct shmid_ds ds;

	if (cmd == IPC_INFO || cmd == SHM_INFO) {
		struct shminfo si = { .shmmax = sysctl_k.shmmax,
				      .shmmin = 1,
				      .shmmni = sysctl_k.shmmni,
				      .shmseg = sysctl_k.shmmni,
				      .shmall = sysctl_k.shmall };
		if (task_write(t, a->a[2], &si, sizeof(si)) < 0)
			return -EFAULT;
		return next_id[K_SHM];
	}
	if (!o)
		return -EINVAL;
	switch (cmd) {
	case IPC_STAT:
	case SHM_STAT:
		if (may(t, o, true, false) < 0)
			return -EACCES;
		memset(&ds, 0, sizeof(ds));
		perm_out(o, &ds.shm_perm);
		ds.shm_segsz = o->size;
		ds.shm_atime = o->atime;
		ds.shm_dtime = o->dtime;
		ds.shm_ctime = o->ctime;
		ds.shm_cpid = pid_to_guest(t->proc->pidns, o->cpid);
		ds.shm_lpid = pid_to_guest(t->proc->pidns, o->lpid);
		ds.shm_nattch = (shmatt_t)o->nattch;
		if (task_write(t, a->a[2], &ds, sizeof(ds)) < 0)
			return -EFAULT;
		return cmd == SHM_STAT ? o->id : 0;
	case IPC_SET:
		if (task_read(t, a->a[2], &ds, sizeof(ds)) < 0)
			return -EFAULT;
		return ipc_set(t, o, &ds.shm_perm);
	case IPC_RMID:
		return ipc_rmid(t, o);
	case SHM_LOCK:
	case SHM_UNLOCK:
		return 0; /* memfd pages: nothing to pin */
	default:
		return -EINVAL;
	}
}

/* ---- semaphores ------------------------------------------------------------ */

long sys_semget(struct task *t, struct syscall_args *a)
{
	int nsems = (int)a->a[1];
	struct ipcobj *o;
	bool made;
	long rc;

	if (nsems < 0 || (unsigned long long)nsems > sysctl_k.sem[0])
		return -EINVAL;
	rc = ipc_get(t, K_SEM, (key_t)a->a[0], (int)a->a[2], &o, &made);
	if (rc < 0)
		return rc;
	if (!made)
		return nsems > o->nsems ? -EINVAL : o->id;
	if (!nsems) {
		free(o);
		return -EINVAL;
	}
	if ((unsigned long long)sem_total + (unsigned long long)nsems >
	    sysctl_k.sem[1]) {
		free(o);
		return -ENOSPC; /* as Linux past SEMMNS */
	}
	o->sems = calloc((size_t)nsems, sizeof(*o->sems));
	if (!o->sems) {
		free(o);
		return -ENOMEM;
	}
	o->nsems = nsems;
	sem_total += nsems;
	link_obj(o);
	return o->id;
}

static struct semundo *undo_of(struct process *p, struct ipcobj *o)
{
	struct semundo *u;

	size_t sz = sizeof(*u) + sizeof(short) * (size_t)o->nsems;

	for (u = undos; u; u = u->next)
		if (u->proc == p && u->id == o->id)
			return u;
	if (undo_bytes + sz > UNDO_BYTES_TOTAL)
		return NULL;
	u = calloc(1, sz);
	if (!u)
		return NULL;
	undo_bytes += sz;
	u->proc = p;
	u->id = o->id;
	u->nsems = o->nsems;
	u->next = undos;
	undos = u;
	return u;
}

static void undo_apply(struct process *p)
{
	struct semundo **pp = &undos, *u;

	while ((u = *pp)) {
		if (u->proc != p) {
			pp = &u->next;
			continue;
		}
		struct ipcobj *o = find_id(K_SEM, u->id);
		for (int i = 0; o && i < u->nsems && i < o->nsems; i++) {
			int v = o->sems[i].val + u->adj[i];
			o->sems[i].val = (unsigned short)(v < 0	    ? 0 :
							  v > 32767 ? 32767 :
								      v);
		}
		undo_free(pp);
		sentry_wake();
	}
}

static long do_semop(struct task *t, int id, uint64_t usops, size_t nsops,
		     int64_t timeout_ns)
{
	struct sembuf sops[SEM_NSOPS_MAX];
	struct ipcobj *o = find_id(K_SEM, id);
	struct semundo *u = NULL;
	bool alter = false, nowait = false;
	size_t i;

	if (!o)
		return t->block_started ? -EIDRM : -EINVAL;
	/* (SEMOPM is at most SEM_NSOPS_MAX, sops' size) */
	if (!nsops || nsops > sysctl_k.sem[2])
		return nsops ? -E2BIG : -EINVAL;
	if (task_read(t, usops, sops, sizeof(sops[0]) * nsops) < 0)
		return -EFAULT;
	for (i = 0; i < nsops; i++) {
		if (sops[i].sem_num >= o->nsems)
			return -EFBIG;
		if (sops[i].sem_op)
			alter = true;
	}
	if (may(t, o, true, alter) < 0)
		return -EACCES;
	/* All or nothing: check every operation first. */
	for (i = 0; i < nsops; i++) {
		int v = o->sems[sops[i].sem_num].val, op = sops[i].sem_op;
		int tot = 0;
		size_t j;
		for (j = 0; j < i; j++)
			if (sops[j].sem_num == sops[i].sem_num)
				tot += sops[j].sem_op;
		v += tot;
		if ((op < 0 && v + op < 0) || (op == 0 && v != 0)) {
			nowait = (sops[i].sem_flg & IPC_NOWAIT) != 0;
			goto wait;
		}
		if (op > 0 && v + op > 32767)
			return -ERANGE;
	}
	/* The undo record first: without it nothing is done (ENOMEM, as
	 * Linux's find_alloc_undo). */
	for (i = 0; i < nsops; i++)
		if ((sops[i].sem_flg & SEM_UNDO) && sops[i].sem_op &&
		    !(u = undo_of(t->proc, o)))
			return -ENOMEM;
	for (i = 0; i < nsops; i++) {
		struct semun_val *s = &o->sems[sops[i].sem_num];
		s->val = (unsigned short)(s->val + sops[i].sem_op);
		s->pid = t->proc->pid;
		if ((sops[i].sem_flg & SEM_UNDO) && sops[i].sem_op)
			u->adj[sops[i].sem_num] -= sops[i].sem_op;
	}
	o->otime = now_s();
	sentry_wake();
	return 0;
wait:
	if (nowait)
		return -EAGAIN;
	if (timeout_ns >= 0) {
		if (!t->block_started)
			t->deadline_ns = now_ns() + timeout_ns;
		else if (now_ns() >= t->deadline_ns)
			return -EAGAIN;
	}
	return SYS_BLOCK;
}

long sys_semop(struct task *t, struct syscall_args *a)
{
	return do_semop(t, (int)a->a[0], a->a[1], a->a[2], -1);
}

long sys_semtimedop(struct task *t, struct syscall_args *a)
{
	struct timespec ts;

	if (!a->a[3])
		return do_semop(t, (int)a->a[0], a->a[1], a->a[2], -1);
	if (task_read(t, a->a[3], &ts, sizeof(ts)) < 0)
		return -EFAULT;
	if (ts.tv_sec < 0 || ts.tv_nsec < 0 || ts.tv_nsec >= 1000000000)
		return -EINVAL;
	return do_semop(t, (int)a->a[0], a->a[1], a->a[2],
			guest_timeout_ns(ts.tv_sec, ts.tv_nsec));
}

long sys_semctl(struct task *t, struct syscall_args *a)
{
	int semnum = (int)a->a[1], cmd = IPC_CMD((int)a->a[2]);
	struct ipcobj *o = find_id(K_SEM, (int)a->a[0]);
	uint64_t arg = a->a[3];
	struct semid_ds ds;
	int i;

	if (cmd == IPC_INFO || cmd == SEM_INFO) {
		struct seminfo si = { .semmni = (int)sysctl_k.sem[3],
				      .semmns = (int)sysctl_k.sem[1],
				      .semmsl = (int)sysctl_k.sem[0],
				      .semopm = (int)sysctl_k.sem[2],
				      .semvmx = 32767 };
		if (task_write(t, arg, &si, sizeof(si)) < 0)
			return -EFAULT;
		return next_id[K_SEM];
	}
	if (!o)
		return -EINVAL;
	switch (cmd) {
	case GETVAL:
	case GETPID:
	case GETNCNT:
	case GETZCNT:
	case SETVAL:
		if (semnum < 0 || semnum >= o->nsems)
			return -EINVAL;
		break;
	default:
		break;
	}
	switch (cmd) {
	case GETVAL:
		return may(t, o, true, false) ?: o->sems[semnum].val;
	case GETPID:
		return may(t, o, true, false) ?:
						pid_to_guest(t->proc->pidns,
							     o->sems[semnum].pid);
	case GETNCNT:
	case GETZCNT:
		return 0; /* waiters are not counted per semaphore */
	case SETVAL:
		if ((int)arg < 0 || (int)arg > 32767)
			return -ERANGE;
		if (may(t, o, false, true) < 0)
			return -EACCES;
		o->sems[semnum].val = (unsigned short)arg;
		o->sems[semnum].pid = t->proc->pid;
		o->ctime = now_s();
		sentry_wake();
		return 0;
	case GETALL:
	case SETALL: {
		unsigned short *v = calloc((size_t)o->nsems, sizeof(*v));
		long rc = 0;
		if (!v)
			return -ENOMEM;
		if (cmd == GETALL) {
			rc = may(t, o, true, false);
			for (i = 0; !rc && i < o->nsems; i++)
				v[i] = o->sems[i].val;
			if (!rc &&
			    task_write(t, arg, v,
				       sizeof(*v) * (size_t)o->nsems) < 0)
				rc = -EFAULT;
		} else {
			rc = may(t, o, false, true);
			if (!rc && task_read(t, arg, v,
					     sizeof(*v) * (size_t)o->nsems) < 0)
				rc = -EFAULT;
			for (i = 0; !rc && i < o->nsems; i++)
				if (v[i] > 32767)
					rc = -ERANGE;
			for (i = 0; !rc && i < o->nsems; i++) {
				o->sems[i].val = v[i];
				o->sems[i].pid = t->proc->pid;
			}
			if (!rc)
				sentry_wake();
		}
		free(v);
		return rc;
	}
	case IPC_STAT:
	case SEM_STAT:
		if (may(t, o, true, false) < 0)
			return -EACCES;
		memset(&ds, 0, sizeof(ds));
		perm_out(o, &ds.sem_perm);
		ds.sem_nsems = (unsigned long)o->nsems;
		ds.sem_otime = o->otime;
		ds.sem_ctime = o->ctime;
		if (task_write(t, arg, &ds, sizeof(ds)) < 0)
			return -EFAULT;
		return cmd == SEM_STAT ? o->id : 0;
	case IPC_SET:
		if (task_read(t, arg, &ds, sizeof(ds)) < 0)
			return -EFAULT;
		return ipc_set(t, o, &ds.sem_perm);
	case IPC_RMID:
		return ipc_rmid(t, o);
	default:
		return -EINVAL;
	}
}

/* ---- message queues --------------------------------------------------------- */

long sys_msgget(struct task *t, struct syscall_args *a)
{
	struct ipcobj *o;
	bool made;
	long rc = ipc_get(t, K_MSG, (key_t)a->a[0], (int)a->a[1], &o, &made);

	if (rc < 0)
		return rc;
	if (made) {
		o->qmax = sysctl_k.msgmnb;
		link_obj(o);
	}
	return o->id;
}

long sys_msgsnd(struct task *t, struct syscall_args *a)
{
	struct ipcobj *o = find_id(K_MSG, (int)a->a[0]);
	size_t sz = a->a[2];
	int flags = (int)a->a[3];
	struct msg *m;
	long type;

	if (!o)
		return t->block_started ? -EIDRM : -EINVAL;
	if (sz > sysctl_k.msgmax)
		return -EINVAL;
	if (may(t, o, false, true) < 0)
		return -EACCES;
	if (task_read(t, a->a[1], &type, sizeof(type)) < 0)
		return -EFAULT;
	if (type < 1)
		return -EINVAL;
	/* As Linux, the queue's byte limit bounds its message count too (a
	 * zero-length message is still a message), and only the queue makes
	 * a sender wait or get EAGAIN. All queues together are bounded, since
	 * each lives in the sentry's memory, and within the sentry's share of
	 * the memory limit: past those the message is memory the kernel would
	 * not give, ENOMEM, as Linux's allocation of it failing (before it
	 * looks at the queue). Waiting there would be waiting on memory that
	 * the sender itself may hold (its own pipes), for ever. */
	if (msg_total + sizeof(*m) + sz > MSG_TOTAL ||
	    !limits_heap_charge((int64_t)(sizeof(*m) + sz)))
		return -ENOMEM;
	if (o->qbytes + sz > o->qmax || o->qnum + 1 > o->qmax) {
		limits_heap_charge(-(int64_t)(sizeof(*m) + sz));
		return (flags & IPC_NOWAIT) ? -EAGAIN : SYS_BLOCK;
	}
	m = malloc(sizeof(*m) + sz);
	if (!m) {
		limits_heap_charge(-(int64_t)(sizeof(*m) + sz));
		return -ENOMEM;
	}
	if (sz && task_read(t, a->a[1] + sizeof(long), m->text, sz) < 0) {
		limits_heap_charge(-(int64_t)(sizeof(*m) + sz));
		free(m);
		return -EFAULT;
	}
	m->type = type;
	m->len = sz;
	m->next = NULL;
	if (o->tail)
		o->tail->next = m;
	else
		o->head = m;
	o->tail = m;
	o->qbytes += sz;
	o->qnum++;
	msg_total += sizeof(*m) + sz;
	o->otime = now_s();
	o->lpid = t->proc->pid;
	sentry_wake();
	return 0;
}

long sys_msgrcv(struct task *t, struct syscall_args *a)
{
	struct ipcobj *o = find_id(K_MSG, (int)a->a[0]);
	size_t sz = a->a[2];
	long type = (long)a->a[3], best = 0;
	int flags = (int)a->a[4];
	struct msg **pp, **pick = NULL, *m;
	bool copy = (flags & MSG_COPY) != 0;
	size_t n;

	/* MSG_COPY (checkpoint/restore): a copy of the message at index
	 * type, left in the queue; never waits. */
	if (copy && ((flags & MSG_EXCEPT) || !(flags & IPC_NOWAIT)))
		return -EINVAL;
	if (!o)
		return t->block_started ? -EIDRM : -EINVAL;
	if ((long)sz < 0)
		return -EINVAL;
	if (may(t, o, true, false) < 0)
		return -EACCES;
	for (pp = &o->head; copy && *pp; pp = &(*pp)->next, type--) {
		if (type == 0) {
			pick = pp;
			break;
		}
	}
	for (pp = &o->head; !copy && *pp; pp = &(*pp)->next) {
		long mt = (*pp)->type;
		if (type == 0 ||
		    (type > 0 &&
		     ((flags & MSG_EXCEPT) ? mt != type : mt == type))) {
			pick = pp;
			break;
		}
		/* type < 0: the lowest type <= |type| (LONG_MIN: any) */
		if (type < 0 && (type == LONG_MIN || mt <= -type) &&
		    (!pick || mt < best)) {
			pick = pp;
			best = mt;
		}
	}
	if (!pick)
		return (flags & IPC_NOWAIT) ? -ENOMSG : SYS_BLOCK;
	m = *pick;
	if (m->len > sz && !(flags & MSG_NOERROR))
		return -E2BIG;
	if (copy && m->len > sz)
		return -EINVAL; /* Linux: a copy is never cut */
	n = m->len < sz ? m->len : sz;
	if (task_write(t, a->a[1], &m->type, sizeof(long)) < 0 ||
	    (n && task_write(t, a->a[1] + sizeof(long), m->text, n) < 0))
		return -EFAULT;
	if (copy)
		return (long)n;
	*pick = m->next;
	if (o->tail == m) {
		struct msg *p = o->head;
		o->tail = NULL;
		while (p) {
			o->tail = p;
			p = p->next;
		}
	}
	o->qbytes -= m->len;
	o->qnum--;
	msg_total -= sizeof(*m) + m->len;
	limits_heap_charge(-(int64_t)(sizeof(*m) + m->len));
	o->rtime = now_s();
	o->lrpid = t->proc->pid;
	free(m);
	sentry_wake();
	return (long)n;
}

long sys_msgctl(struct task *t, struct syscall_args *a)
{
	int cmd = IPC_CMD((int)a->a[1]);
	struct ipcobj *o = find_id(K_MSG, (int)a->a[0]);
	struct msqid_ds ds;

	if (cmd == IPC_INFO || cmd == MSG_INFO) {
		struct msginfo mi = { .msgmax = (int)sysctl_k.msgmax,
				      .msgmnb = (int)sysctl_k.msgmnb,
				      .msgmni = (int)sysctl_k.msgmni };
		if (task_write(t, a->a[2], &mi, sizeof(mi)) < 0)
			return -EFAULT;
		return next_id[K_MSG];
	}
	if (!o)
		return -EINVAL;
	switch (cmd) {
	case IPC_STAT:
	case MSG_STAT:
		if (may(t, o, true, false) < 0)
			return -EACCES;
		memset(&ds, 0, sizeof(ds));
		perm_out(o, &ds.msg_perm);
		ds.msg_stime = o->otime;
		ds.msg_rtime = o->rtime;
		ds.msg_ctime = o->ctime;
		ds.__msg_cbytes = o->qbytes;
		ds.msg_qnum = o->qnum;
		ds.msg_qbytes = o->qmax;
		ds.msg_lspid = pid_to_guest(t->proc->pidns, o->lpid);
		ds.msg_lrpid = pid_to_guest(t->proc->pidns, o->lrpid);
		if (task_write(t, a->a[2], &ds, sizeof(ds)) < 0)
			return -EFAULT;
		return cmd == MSG_STAT ? o->id : 0;
	case IPC_SET: {
		long rc;
		if (task_read(t, a->a[2], &ds, sizeof(ds)) < 0)
			return -EFAULT;
		if (ds.msg_qbytes > sysctl_k.msgmnb &&
		    !creds_capable(&t->proc->cred, CAP_SYS_RESOURCE))
			return -EPERM;
		rc = ipc_set(t, o, &ds.msg_perm);
		if (rc == 0 && ds.msg_qbytes)
			o->qmax = ds.msg_qbytes > MSG_QBYTES_ROOT ?
					  MSG_QBYTES_ROOT :
					  ds.msg_qbytes;
		return rc;
	}
	case IPC_RMID:
		return ipc_rmid(t, o);
	default:
		return -EINVAL;
	}
}
