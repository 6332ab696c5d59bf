/* sentry/lock.c: file locks between the sandbox's processes.
 *
 * Three kinds, as Linux has them, each a namespace of its own:
 *  - POSIX record locks (F_SETLK, F_SETLKW, F_GETLK): byte ranges owned by
 *    a process; any close of the file by that process drops them all, as
 *    does its exit; a process's own ranges merge and split.
 *  - OFD locks (F_OFD_*): the same ranges, owned by the open file
 *    description; they go with its last close.
 *  - flock(2): the whole file, owned by the open file description.
 * A file is known by (st_dev, st_ino) of the open file, so every open of
 * it meets the same locks (an overlay copy keeps its rootfs identity). A
 * lock that conflicts makes F_SETLK/LOCK_NB fail with EAGAIN
 * (EWOULDBLOCK); F_SETLKW and a blocking flock wait, interruptibly, and
 * a POSIX wait that would close a cycle of waiters fails with EDEADLK.
 * The host never sees a lock: no process outside the sandbox can open
 * these files through it.
 */
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/file.h>

#include "sentry/syscalls.h"
#include "sentry/vfs.h"

#define LOCKS_MAX 65536 /* a guest may not fill the sentry */

enum lkind {
	LK_POSIX,
	LK_OFD,
	LK_FLOCK
};

struct frec {
	struct frec *next;
	dev_t dev;
	ino_t ino;
	enum lkind kind;
	short type;	      /* F_RDLCK or F_WRLCK */
	int64_t start, end;   /* inclusive; end INT64_MAX: to EOF and on */
	struct process *proc; /* LK_POSIX owner */
	struct file *ofd;     /* LK_OFD and LK_FLOCK owner */
	int pid;	      /* for F_GETLK: the owner's virtual pid, or -1 */
};

static struct frec *locks;
static size_t nlocks;

struct lkey {
	dev_t dev;
	ino_t ino;
};

static int key_of(struct file *f, struct lkey *k)
{
	struct stat st;
	int rc;

	if (f->vn)
		rc = vfs_stat(f->vn, &st);
	else if (f->ops && f->ops->stat)
		rc = f->ops->stat(f, &st);
	else
		return -EBADF;
	if (rc < 0)
		return rc;
	k->dev = st.st_dev;
	k->ino = st.st_ino;
	return 0;
}

static bool same_owner(const struct frec *r, enum lkind kind, struct process *p,
		       struct file *f)
{
	if (r->kind != kind)
		return false;
	return kind == LK_POSIX ? r->proc == p : r->ofd == f;
}

/* POSIX and OFD locks see each other (Linux: one lock space for both);
 * flock is a space of its own. */
static bool same_space(enum lkind a, enum lkind b)
{
	return (a == LK_FLOCK) == (b == LK_FLOCK);
}

static struct frec *conflict(const struct lkey *k, enum lkind kind,
			     struct process *p, struct file *f, short type,
			     int64_t start, int64_t end)
{
	struct frec *r;

	for (r = locks; r; r = r->next) {
		if (r->dev != k->dev || r->ino != k->ino ||
		    !same_space(r->kind, kind) || same_owner(r, kind, p, f))
			continue;
		if (r->end < start || r->start > end)
			continue;
		if (r->type == F_WRLCK || type == F_WRLCK)
			return r;
	}
	return NULL;
}

static void drop(struct frec **pp)
{
	struct frec *r = *pp;

	*pp = r->next;
	free(r);
	nlocks--;
}

/* Remove the owner's coverage of [start, end], splitting what straddles. */
static int punch(const struct lkey *k, enum lkind kind, struct process *p,
		 struct file *f, int64_t start, int64_t end)
{
	struct frec **pp = &locks, *r;

	while ((r = *pp)) {
		if (r->dev != k->dev || r->ino != k->ino ||
		    !same_owner(r, kind, p, f) || r->end < start ||
		    r->start > end) {
			pp = &r->next;
			continue;
		}
		if (r->start < start && r->end > end) {
			/* A split adds a record: bounded as a new lock is, or
			 * unlocking every other byte would grow without end. */
			struct frec *tail = nlocks < LOCKS_MAX ?
						    malloc(sizeof(*tail)) :
						    NULL;
			if (!tail)
				return -ENOLCK;
			*tail = *r;
			tail->start = end + 1;
			r->end = start - 1;
			tail->next = r->next;
			r->next = tail;
			nlocks++;
			return 0;
		}
		if (r->start < start) {
			r->end = start - 1;
		} else if (r->end > end) {
			r->start = end + 1;
		} else {
			drop(pp);
			continue;
		}
		pp = &r->next;
	}
	return 0;
}

static int add(const struct lkey *k, enum lkind kind, struct process *p,
	       struct file *f, short type, int64_t start, int64_t end)
{
	struct frec *r;
	int rc;

	if (nlocks >= LOCKS_MAX)
		return -ENOLCK;
	rc = punch(k, kind, p, f, start, end);
	if (rc < 0)
		return rc;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOLCK;
	r->dev = k->dev;
	r->ino = k->ino;
	r->kind = kind;
	r->type = type;
	r->start = start;
	r->end = end;
	r->proc = kind == LK_POSIX ? p : NULL;
	r->ofd = kind == LK_POSIX ? NULL : f;
	r->pid = kind == LK_POSIX ? p->pid : -1;
	r->next = locks;
	locks = r;
	nlocks++;
	return 0;
}

/* Would p waiting on holder close a cycle of POSIX lock waiters? */
static bool deadlock(struct process *p, struct process *holder)
{
	struct process *q = holder;
	int hops = 0;

	while (q && hops++ < 64) {
		struct process *next = NULL;
		struct task *t;
		if (q == p)
			return true;
		for (t = S->tasks; t; t = t->next)
			if (t->proc == q && t->state == TS_BLOCKED &&
			    t->lock_wait)
				next = t->lock_wait;
		q = next;
	}
	return false;
}

/* Release everything a closing open file description owned. */
void locks_file_gone(struct file *f)
{
	struct frec **pp = &locks;
	bool any = false;

	while (*pp) {
		if ((*pp)->ofd == f) {
			drop(pp);
			any = true;
		} else {
			pp = &(*pp)->next;
		}
	}
	if (any)
		sentry_wake();
}

/* p closed a descriptor of f: POSIX drops all p's locks on the file. */
void locks_closed_by(struct process *p, struct file *f)
{
	struct frec **pp = &locks;
	struct lkey k;
	bool any = false;

	if (!locks || key_of(f, &k) < 0)
		return;
	while (*pp) {
		struct frec *r = *pp;
		if (r->kind == LK_POSIX && r->proc == p && r->dev == k.dev &&
		    r->ino == k.ino) {
			drop(pp);
			any = true;
		} else {
			pp = &r->next;
		}
	}
	if (any)
		sentry_wake();
}

void locks_proc_gone(struct process *p)
{
	struct frec **pp = &locks;
	bool any = false;

	while (*pp) {
		if ((*pp)->proc == p) {
			drop(pp);
			any = true;
		} else {
			pp = &(*pp)->next;
		}
	}
	if (any)
		sentry_wake();
}

/* F_GETLK, F_SETLK(W) and the OFD forms. */
long lock_fcntl(struct task *t, struct file *f, int cmd, uint64_t arg)
{
	enum lkind kind = (cmd == F_OFD_GETLK || cmd == F_OFD_SETLK ||
			   cmd == F_OFD_SETLKW) ?
				  LK_OFD :
				  LK_POSIX;
	bool get = cmd == F_GETLK || cmd == F_OFD_GETLK;
	bool wait = cmd == F_SETLKW || cmd == F_OFD_SETLKW;
	struct flock fl;
	struct lkey k;
	struct frec *c;
	int64_t base = 0, start, end;
	int rc;

	if (task_read(t, arg, &fl, sizeof(fl)) < 0)
		return -EFAULT;
	if (fl.l_type != F_RDLCK && fl.l_type != F_WRLCK &&
	    fl.l_type != F_UNLCK)
		return -EINVAL;
	if (kind == LK_OFD && fl.l_pid != 0)
		return -EINVAL;
	if (get && fl.l_type == F_UNLCK)
		return -EINVAL;
	if (!get && fl.l_type == F_RDLCK && (f->flags & O_ACCMODE) == O_WRONLY)
		return -EBADF;
	if (!get && fl.l_type == F_WRLCK && (f->flags & O_ACCMODE) == O_RDONLY)
		return -EBADF;
	switch (fl.l_whence) {
	case SEEK_SET:
		break;
	case SEEK_CUR:
		base = f->pos;
		break;
	case SEEK_END: {
		struct stat st;
		rc = f->vn ? vfs_stat(f->vn, &st) : -EINVAL;
		if (rc < 0)
			return rc;
		base = st.st_size;
		break;
	}
	default:
		return -EINVAL;
	}
	if (__builtin_add_overflow(base, (int64_t)fl.l_start, &start))
		return -EOVERFLOW;
	if (fl.l_len > 0) {
		if (__builtin_add_overflow(start, (int64_t)fl.l_len - 1, &end))
			return -EOVERFLOW;
	} else if (fl.l_len < 0) {
		end = start - 1;
		start += (int64_t)fl.l_len;
	} else {
		end = INT64_MAX;
	}
	if (start < 0)
		return -EINVAL;
	rc = key_of(f, &k);
	if (rc < 0)
		return rc;
	c = conflict(&k, kind, t->proc, f, fl.l_type, start, end);
	if (get) {
		if (!c) {
			fl.l_type = F_UNLCK;
		} else {
			fl.l_type = c->type;
			fl.l_whence = SEEK_SET;
			fl.l_start = c->start;
			fl.l_len = c->end == INT64_MAX ? 0 :
							 c->end - c->start + 1;
			fl.l_pid = pid_to_guest(t->proc->pidns, c->pid);
		}
		return task_write(t, arg, &fl, sizeof(fl)) < 0 ? -EFAULT : 0;
	}
	if (fl.l_type == F_UNLCK) {
		rc = punch(&k, kind, t->proc, f, start, end);
		sentry_wake();
		return rc;
	}
	if (c) {
		if (!wait)
			return -EAGAIN;
		if (kind == LK_POSIX && c->kind == LK_POSIX &&
		    deadlock(t->proc, c->proc))
			return -EDEADLK;
		t->lock_wait = c->kind == LK_POSIX ? c->proc : NULL;
		return SYS_BLOCK;
	}
	t->lock_wait = NULL;
	rc = add(&k, kind, t->proc, f, fl.l_type, start, end);
	sentry_wake();
	return rc;
}

long sys_flock(struct task *t, struct syscall_args *a)
{
	struct file *f = fd_get(t, (int)a->a[0]);
	int op = (int)a->a[1], how = op & ~LOCK_NB;
	short type;
	struct lkey k;
	struct frec *c;
	int rc;

	if (!f)
		return -EBADF;
	if (how != LOCK_SH && how != LOCK_EX && how != LOCK_UN)
		return -EINVAL;
	if (f->flags & O_PATH)
		return -EBADF;
	rc = key_of(f, &k);
	if (rc < 0)
		return rc;
	if (how == LOCK_UN) {
		rc = punch(&k, LK_FLOCK, t->proc, f, 0, INT64_MAX);
		sentry_wake();
		return rc;
	}
	type = how == LOCK_SH ? F_RDLCK : F_WRLCK;
	c = conflict(&k, LK_FLOCK, t->proc, f, type, 0, INT64_MAX);
	if (c) {
		if (op & LOCK_NB)
			return -EWOULDBLOCK;
		return SYS_BLOCK;
	}
	t->lock_wait = NULL;
	rc = add(&k, LK_FLOCK, t->proc, f, type, 0, INT64_MAX);
	sentry_wake();
	return rc;
}
