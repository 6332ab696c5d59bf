/* sentry/notify.c: change notification: fcntl F_NOTIFY, and inotify.
 *
 * A directory watched with F_NOTIFY hears, by a signal to the process
 * that asked (SIGIO, or the one set with F_SETSIG), of names created,
 * removed or renamed in it (DN_CREATE, DN_DELETE, DN_RENAME), of
 * attribute changes of its entries (DN_ATTRIB) and of truncations
 * (DN_MODIFY). The write paths call notify_* after a change succeeded; a
 * directory is known by (st_dev, st_ino), so a watch on a rootfs
 * directory hears of changes made in its overlay copy. Data written
 * through write(2) is not reported (docs/compat.md).
 */
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <stdio.h>
#include <string.h>

#include "sentry/syscalls.h"
#include "sentry/vfs.h"

#define WATCHES_MAX 4096

struct dwatch {
	struct dwatch *next;
	struct file *f; /* the watching open directory (not referenced) */
	dev_t dev;
	ino_t ino;
	unsigned long mask;
	struct process *owner; /* valid: notify_proc_gone drops its watches */
};

static struct dwatch *watches;
static int nwatches;

static int ident(struct vnode *vn, dev_t *dev, ino_t *ino)
{
	struct stat st;
	int rc = vfs_stat(vn, &st);

	if (rc == 0) {
		*dev = st.st_dev;
		*ino = st.st_ino;
	}
	return rc;
}

long notify_fcntl(struct task *t, struct file *f, unsigned long mask)
{
	struct dwatch **pp, *w;
	dev_t dev = 0;
	ino_t ino = 0;
	int rc;

	if (!f->vn || !S_ISDIR(f->vn->mode))
		return -ENOTDIR;
	for (pp = &watches; *pp; pp = &(*pp)->next)
		if ((*pp)->f == f && (*pp)->owner == t->proc)
			break;
	if (!mask) {
		if (*pp) {
			w = *pp;
			*pp = w->next;
			free(w);
			nwatches--;
		}
		return 0;
	}
	rc = ident(f->vn, &dev, &ino);
	if (rc < 0)
		return rc;
	w = *pp;
	if (!w) {
		if (nwatches >= WATCHES_MAX)
			return -ENOSPC;
		w = calloc(1, sizeof(*w));
		if (!w)
			return -ENOMEM;
		w->next = watches;
		watches = w;
		nwatches++;
	}
	w->f = f;
	w->dev = dev;
	w->ino = ino;
	w->mask = mask;
	w->owner = t->proc;
	return 0;
}

void notify_file_gone(struct file *f)
{
	struct dwatch **pp = &watches;

	while (*pp) {
		if ((*pp)->f == f) {
			struct dwatch *w = *pp;
			*pp = w->next;
			free(w);
			nwatches--;
		} else {
			pp = &(*pp)->next;
		}
	}
}

/* p exited: its watches go with it. In Linux the watch belongs to the open
 * file and its signal to the file's owner, who is gone: nobody would hear
 * it. Kept, the bare owner pointer outlives p once it is reaped. */
void notify_proc_gone(struct process *p)
{
	struct dwatch **pp = &watches;

	while (*pp) {
		if ((*pp)->owner == p) {
			struct dwatch *w = *pp;
			*pp = w->next;
			free(w);
			nwatches--;
		} else {
			pp = &(*pp)->next;
		}
	}
}

void notify_dir(struct vnode *dir, unsigned long ev)
{
	struct dwatch **pp = &watches;
	dev_t dev = 0;
	ino_t ino = 0;

	if (!watches || !dir || ident(dir, &dev, &ino) < 0)
		return;
	while (*pp) {
		struct dwatch *w = *pp;
		if (w->dev != dev || w->ino != ino || !(w->mask & ev)) {
			pp = &w->next;
			continue;
		}
		send_signal_proc(w->owner, w->f->sig ? w->f->sig : SIGIO, 0);
		if (!(w->mask & DN_MULTISHOT)) {
			*pp = w->next;
			free(w);
			nwatches--;
		} else {
			pp = &w->next;
		}
	}
}

/* The directory holding the file at a canonical path. */
void notify_parent(struct vnode *vn, unsigned long ev)
{
	char buf[PATH_MAX], *slash;
	struct vnode *dir;

	if (!watches || !vn || !vn->path)
		return;
	snprintf(buf, sizeof(buf), "%s", vn->path);
	slash = strrchr(buf, '/');
	if (!slash)
		return;
	if (slash == buf)
		slash[1] = 0;
	else
		*slash = 0;
	if (vfs_resolve(NULL, AT_FDCWD, buf, LOOKUP_FOLLOW, &dir) == 0) {
		notify_dir(dir, ev);
		vnode_put(dir);
	}
}

/* The directory a guest path names an entry of. */
void notify_path(struct task *t, int dirfd, uint64_t upath, unsigned long ev)
{
	char path[PATH_MAX], name[NAME_MAX + 1];
	struct vnode *dir;
	bool trailing;

	if (!watches || task_read_str(t, upath, path, sizeof(path)) < 0)
		return;
	if (vfs_resolve_parent(t, dirfd, path, &dir, name, &trailing) == 0) {
		notify_dir(dir, ev);
		vnode_put(dir);
	}
}

/* ---- inotify --------------------------------------------------------------
 *
 * Watches on files and directories, known by (st_dev, st_ino) like
 * F_NOTIFY's; events are queued on the inotify file as struct
 * inotify_event records for read(2), and make it readable for poll and
 * epoll. The change paths report through inotify_report(): the changed
 * object, and when known its directory and name. */

/* The limits are sentry/vfs.h's INOTIFY_*_MAX. Unread events of all
 * instances together, in bytes: Linux's limits allow 128 * 16384 events
 * of up to 272 bytes (over 500 MiB), charged to the reader's memory
 * cgroup; here the sentry holds them, so past this an instance overflows
 * (IN_Q_OVERFLOW) as a full queue does. */
#define INOTIFY_QUEUE_BYTES_MAX (16u << 20)

struct iwatch {
	struct iwatch *next;
	int wd;
	dev_t dev;
	ino_t ino;
	uint32_t mask;
	bool dir;
};

struct inot {
	struct inot *next; /* all inotify instances */
	struct iwatch *watches;
	int next_wd;
	/* Queued struct inotify_event records, q[qhead, qlen); qlast is the
	 * offset of the last one (valid when the queue is not empty), for
	 * merging a repeat in O(1). Reads advance qhead; the space before
	 * it is reclaimed when the buffer would otherwise grow. */
	char *q;
	size_t qhead, qlen, qcap, qlast;
	int nqueued;
	bool overflowed; /* its IN_Q_OVERFLOW is queued, not yet read */
	uint64_t seq;
};

static struct inot *inots;
static int ninots;
static int iwatches_total;
static size_t iqueued_bytes; /* q[qhead, qlen) of all instances */
static uint32_t next_cookie = 1;

bool inotify_active(void)
{
	return iwatches_total > 0;
}

static void queue_event(struct inot *in, int wd, uint32_t mask, uint32_t cookie,
			const char *name)
{
	size_t nlen = name ? strlen(name) + 1 : 0, pad, rlen, need;
	struct inotify_event ev = { .wd = wd, .mask = mask, .cookie = cookie };
	bool overflow = false;
	char *p;

	pad = nlen ? (nlen + 15) & ~(size_t)15 : 0;
	if (in->nqueued >= INOTIFY_QUEUE_MAX ||
	    iqueued_bytes + sizeof(ev) + pad > INOTIFY_QUEUE_BYTES_MAX) {
		if (in->overflowed)
			return;
		overflow = true;
		ev.wd = -1;
		ev.mask = IN_Q_OVERFLOW;
		ev.cookie = 0;
		nlen = 0;
		pad = 0;
		name = NULL;
	}
	/* Linux merges an event identical to the last one queued. */
	if (in->qlen > in->qhead) {
		struct inotify_event *e =
			(struct inotify_event *)(void *)(in->q + in->qlast);
		if (e->wd == ev.wd && e->mask == ev.mask &&
		    e->cookie == ev.cookie && e->len == pad &&
		    (!pad || !strcmp(e->name, name)))
			return;
	}
	rlen = sizeof(ev) + pad;
	if (in->qlen + rlen > in->qcap && in->qhead &&
	    in->qhead >= in->qlen - in->qhead) {
		/* Reclaim what was read. Only once it is as much as what is
		 * left to move: the move is paid for by those reads, so each
		 * event costs O(1) amortised, in any order of reads and
		 * changes. Otherwise the buffer grows. */
		memmove(in->q, in->q + in->qhead, in->qlen - in->qhead);
		in->qlen -= in->qhead;
		in->qlast -= in->qhead;
		in->qhead = 0;
	}
	need = in->qlen + rlen;
	if (need > in->qcap) {
		size_t cap = in->qcap ? in->qcap * 2 : 4096;
		while (cap < need)
			cap *= 2;
		p = realloc(in->q, cap);
		if (!p)
			return;
		in->q = p;
		in->qcap = cap;
	}
	ev.len = (uint32_t)pad;
	memcpy(in->q + in->qlen, &ev, sizeof(ev));
	memset(in->q + in->qlen + sizeof(ev), 0, pad);
	if (nlen)
		memcpy(in->q + in->qlen + sizeof(ev), name, nlen);
	in->qlast = in->qlen;
	in->qlen = need;
	in->overflowed |= overflow;
	iqueued_bytes += rlen;
	in->nqueued++;
	in->seq++;
	sentry_wake();
}

static void drop_watch(struct inot *in, struct iwatch **pp, bool ignored)
{
	struct iwatch *w = *pp;

	if (ignored)
		queue_event(in, w->wd, IN_IGNORED, 0, NULL);
	*pp = w->next;
	free(w);
	iwatches_total--;
}

/* One change: ev on obj (dev, ino); dir and name when it has them. The
 * directory's watches hear first, and the object's own after, as Linux
 * orders them; a removal is the other way round (the object goes first). */
static void report_pass(bool self, dev_t odev, ino_t oino, bool odir,
			bool have_obj, dev_t ddev, ino_t dino, bool have_dir,
			const char *name, uint32_t ev, uint32_t cookie)
{
	struct inot *in;

	for (in = inots; in; in = in->next) {
		struct iwatch **pp = &in->watches;
		while (*pp) {
			struct iwatch *w = *pp;
			/* a directory hears of its entries' events, not of
			 * their own DELETE_SELF/MOVE_SELF */
			uint32_t m = ev & w->mask & IN_ALL_EVENTS &
				     ~(uint32_t)(IN_DELETE_SELF | IN_MOVE_SELF);
			bool gone = false;
			if (!self) {
				if (!(have_dir && w->dir && w->dev == ddev &&
				      w->ino == dino && m && name)) {
					pp = &w->next;
					continue;
				}
				queue_event(in, w->wd,
					    m | (odir ? IN_ISDIR : 0), cookie,
					    name);
			} else {
				uint32_t sm = ev & w->mask &
					      (IN_ALL_EVENTS &
					       ~(IN_MOVED_FROM | IN_MOVED_TO |
						 IN_CREATE | IN_DELETE));
				if (!(have_obj && w->dev == odev &&
				      w->ino == oino)) {
					pp = &w->next;
					continue;
				}
				m = sm;
				if (sm)
					queue_event(
						in, w->wd,
						sm | (w->dir && !(sm &
								  (IN_DELETE_SELF |
								   IN_MOVE_SELF)) ?
							      IN_ISDIR :
							      0),
						0, NULL);
				gone = (ev & IN_DELETE_SELF) != 0;
			}
			if (gone || (m && (w->mask & IN_ONESHOT))) {
				drop_watch(in, pp, true);
				continue;
			}
			pp = &w->next;
		}
	}
}

static void report(dev_t odev, ino_t oino, bool odir, bool have_obj, dev_t ddev,
		   ino_t dino, bool have_dir, const char *name, uint32_t ev,
		   uint32_t cookie)
{
	bool self_first = (ev & IN_DELETE_SELF) != 0;

	report_pass(self_first, odev, oino, odir, have_obj, ddev, dino,
		    have_dir, name, ev, cookie);
	report_pass(!self_first, odev, oino, odir, have_obj, ddev, dino,
		    have_dir, name, ev, cookie);
}

void inotify_report(struct vnode *obj, struct vnode *dir, const char *name,
		    uint32_t ev, uint32_t cookie)
{
	dev_t od = 0, dd = 0;
	ino_t oi = 0, di = 0;
	bool odir = obj && S_ISDIR(obj->mode);
	bool ho = obj && ident(obj, &od, &oi) == 0;
	bool hd = dir && ident(dir, &dd, &di) == 0;

	if (!inotify_active())
		return;
	report(od, oi, odir, ho, dd, di, hd, name, ev, cookie);
}

/* A change to the object at a canonical path (writes, attributes,
 * opens and closes): its watches, and its directory's with its name. */
void inotify_report_vn(struct vnode *vn, uint32_t ev)
{
	char buf[PATH_MAX], *slash;
	struct vnode *dir = NULL;

	if (!inotify_active() || !vn || !vn->path)
		return;
	snprintf(buf, sizeof(buf), "%s", vn->path);
	slash = strrchr(buf, '/');
	if (slash && slash[1]) {
		const char *name = slash + 1;
		char dpath[PATH_MAX];
		snprintf(dpath, sizeof(dpath), "%.*s",
			 slash == buf ? 1 : (int)(slash - buf), buf);
		if (vfs_resolve(NULL, AT_FDCWD, dpath, LOOKUP_FOLLOW, &dir) < 0)
			dir = NULL;
		inotify_report(vn, dir, name, ev, 0);
		vnode_put(dir);
		return;
	}
	inotify_report(vn, NULL, NULL, ev, 0);
}

uint32_t inotify_cookie(void)
{
	return next_cookie++;
}

static long inot_read(struct task *t, struct file *f, void *buf, size_t n,
		      int64_t *off)
{
	struct inot *in = f->priv;
	size_t take = 0, avail = in->qlen - in->qhead;
	const char *head = in->q + in->qhead;

	(void)t;
	(void)off;
	if (!avail)
		return (f->flags & O_NONBLOCK) ? -EAGAIN : SYS_BLOCK;
	/* whole records only; the first must fit */
	while (take < avail) {
		struct inotify_event *e =
			(struct inotify_event *)(void *)(head + take);
		size_t l = sizeof(*e) + e->len;
		if (take + l > n)
			break;
		if (e->mask & IN_Q_OVERFLOW)
			in->overflowed = false; /* another may be queued */
		take += l;
		in->nqueued--;
	}
	if (!take)
		return -EINVAL;
	memcpy(buf, head, take);
	in->qhead += take;
	iqueued_bytes -= take;
	if (in->qhead == in->qlen) {
		in->qhead = in->qlen = 0;
		in->overflowed = false;
		if (in->qcap > 65536) { /* a burst's buffer, not kept idle */
			free(in->q);
			in->q = NULL;
			in->qcap = 0;
		}
	}
	in->seq++;
	return (long)take;
}

static short inot_poll(struct file *f, short events)
{
	struct inot *in = f->priv;

	return in->qlen > in->qhead ? (short)(events & (POLLIN | POLLRDNORM)) :
				      0;
}

static long inot_ioctl(struct task *t, struct file *f, unsigned long cmd,
		       uint64_t arg)
{
	struct inot *in = f->priv;
	int v = (int)(in->qlen - in->qhead);

	if (cmd != FIONREAD)
		return -ENOTTY;
	return task_write(t, arg, &v, sizeof(v)) < 0 ? -EFAULT : 0;
}

static int inot_stat(struct file *f, struct stat *st)
{
	(void)f;
	memset(st, 0, sizeof(*st));
	st->st_mode = 0600;
	st->st_nlink = 1;
	return 0;
}

static uint64_t inot_evseq(struct file *f)
{
	return ((struct inot *)f->priv)->seq;
}

static void inot_release(struct file *f)
{
	struct inot *in = f->priv, **pp;

	while (in->watches)
		drop_watch(in, &in->watches, false);
	for (pp = &inots; *pp; pp = &(*pp)->next)
		if (*pp == in) {
			*pp = in->next;
			ninots--;
			break;
		}
	iqueued_bytes -= in->qlen - in->qhead;
	free(in->q);
	free(in);
}

static const struct file_ops inot_ops = {
	.read = inot_read,
	.poll = inot_poll,
	.ioctl = inot_ioctl,
	.stat = inot_stat,
	.release = inot_release,
	.evseq = inot_evseq,
};

long sys_inotify_init1(struct task *t, struct syscall_args *a)
{
	int flags = (int)a->a[0];
	struct inot *in;
	long fd;

	if (flags & ~(IN_NONBLOCK | IN_CLOEXEC))
		return -EINVAL;
	if (ninots >= INOTIFY_INSTANCES_MAX)
		return -EMFILE;
	in = calloc(1, sizeof(*in));
	if (!in)
		return -ENOMEM;
	in->next_wd = 1;
	fd = install_anon(t, &inot_ops,
			  O_RDONLY | ((flags & IN_NONBLOCK) ? O_NONBLOCK : 0),
			  in, (flags & IN_CLOEXEC) != 0);
	if (fd >= 0) {
		in->next = inots;
		inots = in;
		ninots++;
	}
	return fd;
}

long sys_inotify_init(struct task *t, struct syscall_args *a)
{
	struct syscall_args b = *a;

	b.a[0] = 0;
	return sys_inotify_init1(t, &b);
}

static struct inot *inot_of(struct task *t, int fd, long *err)
{
	struct file *f = fd_get(t, fd);

	*err = !f ? -EBADF : f->ops != &inot_ops ? -EINVAL : 0;
	return *err ? NULL : f->priv;
}

long sys_inotify_add_watch(struct task *t, struct syscall_args *a)
{
	uint32_t mask = (uint32_t)a->a[2];
	char path[PATH_MAX];
	struct iwatch *w;
	struct vnode *vn;
	dev_t dev = 0;
	ino_t ino = 0;
	long rc;
	struct inot *in = inot_of(t, (int)a->a[0], &rc);

	if (!in)
		return rc;
	if (!(mask & IN_ALL_EVENTS))
		return -EINVAL;
	if ((mask & IN_MASK_ADD) && (mask & IN_MASK_CREATE))
		return -EINVAL;
	rc = task_read_str(t, a->a[1], path, sizeof(path));
	if (rc < 0)
		return rc;
	rc = vfs_resolve(t, AT_FDCWD, path,
			 (mask & IN_DONT_FOLLOW) ? 0 : LOOKUP_FOLLOW, &vn);
	if (rc < 0)
		return rc;
	if ((mask & IN_ONLYDIR) && !S_ISDIR(vn->mode)) {
		vnode_put(vn);
		return -ENOTDIR;
	}
	rc = vfs_task_access(t, &t->proc->cred, vn, R_OK);
	if (rc == 0)
		rc = ident(vn, &dev, &ino);
	if (rc < 0) {
		vnode_put(vn);
		return rc;
	}
	for (w = in->watches; w; w = w->next)
		if (w->dev == dev && w->ino == ino)
			break;
	if (w) {
		vnode_put(vn);
		if (mask & IN_MASK_CREATE)
			return -EEXIST;
		w->mask = (mask & IN_MASK_ADD) ? w->mask | mask : mask;
		return w->wd;
	}
	if (iwatches_total >= INOTIFY_WATCHES_MAX) {
		vnode_put(vn);
		return -ENOSPC;
	}
	w = calloc(1, sizeof(*w));
	if (!w) {
		vnode_put(vn);
		return -ENOMEM;
	}
	w->wd = in->next_wd++;
	w->dev = dev;
	w->ino = ino;
	w->mask = mask;
	w->dir = S_ISDIR(vn->mode);
	w->next = in->watches;
	in->watches = w;
	iwatches_total++;
	vnode_put(vn);
	return w->wd;
}

long sys_inotify_rm_watch(struct task *t, struct syscall_args *a)
{
	int wd = (int)a->a[1];
	struct iwatch **pp;
	long rc;
	struct inot *in = inot_of(t, (int)a->a[0], &rc);

	if (!in)
		return rc;
	for (pp = &in->watches; *pp; pp = &(*pp)->next)
		if ((*pp)->wd == wd) {
			drop_watch(in, pp, true);
			return 0;
		}
	return -EINVAL;
}
