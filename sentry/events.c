/* sentry/events.c: epoll and eventfd, in the sentry.
 *
 * epoll holds no reference on the files it watches: as on Linux, a file
 * leaves every epoll set when its last descriptor closes (file_put calls
 * epoll_file_gone). Readiness comes from each file's poll op. An edge-
 * triggered item reports when a readiness bit appeared since its last
 * report, or when the file's event counter (file_ops.evseq: data in, room
 * out, a hangup) moved, as Linux reports on every wakeup of the file.
 */
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>

#include "sentry/syscalls.h"
#include "sentry/vfs.h"

/* Linux's bound on maxevents; what is written out goes through a buffer
 * of EP_OUT_CHUNK events, so a large maxevents costs nothing. */
#define EP_MAX_EVENTS ((int)(INT_MAX / sizeof(struct epoll_event)))
#define EP_OUT_CHUNK 1024
/* Watches in all the sandbox's epolls together, as Linux's per-user
 * max_user_watches (ENOSPC past it): one epoll can watch every fd, but
 * many epolls each watching every fd would otherwise cost the sentry
 * their product. */
#define EP_MAX_WATCHES (1 << 20)
#define EP_MAX_NEST 5

struct epitem {
	struct file *ep;     /* the epoll file */
	struct file *target; /* watched (not referenced) */
	int fd;
	uint32_t events;
	uint64_t data;
	/* EPOLLET: what the last look saw (mask), and the file's event
	 * counter at the last report; reported: any report since ADD/MOD */
	uint32_t last_mask;
	uint64_t last_seq;
	bool reported;
	bool disabled;				/* EPOLLONESHOT fired */
	struct epitem *prev_in_ep, *next_in_ep; /* the epoll's ring */
	struct epitem *next_in_file, **pprev_in_file;
	struct epitem *next_in_hash;
};

/* An epoll's items are a ring in the order they were added; a wait
 * starts at the head and leaves it after the last item it reported, so
 * that with more ready items than maxevents each comes round in turn, as
 * Linux's ready list moves reported items to its tail. */
struct epoll {
	struct epitem *head;
	int nitems;
};

static const struct file_ops epoll_ops;

/* ---- finding an item: (epoll, file, fd) -> item, in O(1) ------------------
 *
 * One table for every epoll of the sandbox, so that EPOLL_CTL_MOD and DEL
 * on an epoll of thousands of items, or on a file dup'ed thousands of
 * times into one, do not walk them. Chained, grown by doubling past one
 * item a bucket. */
static struct epitem **ep_hash;
static size_t ep_hash_cap, ep_watches;

static size_t ep_hash_of(const struct file *ep, const struct file *target,
			 int fd, size_t cap)
{
	uint64_t h = (uint64_t)(uintptr_t)ep * 0x9e3779b97f4a7c15ULL;

	h ^= (uint64_t)(uintptr_t)target * 0xc2b2ae3d27d4eb4fULL;
	h ^= (uint64_t)(unsigned)fd * 0x165667b19e3779f9ULL;
	h ^= h >> 29;
	return (size_t)(h & (cap - 1));
}

static struct epitem *ep_find(struct file *ep, struct file *target, int fd)
{
	struct epitem *it;

	if (!ep_hash_cap)
		return NULL;
	for (it = ep_hash[ep_hash_of(ep, target, fd, ep_hash_cap)]; it;
	     it = it->next_in_hash)
		if (it->ep == ep && it->target == target && it->fd == fd)
			return it;
	return NULL;
}

static int ep_hash_grow(void)
{
	size_t ncap = ep_hash_cap ? ep_hash_cap * 2 : 256, i;
	struct epitem **n = calloc(ncap, sizeof(*n));

	if (!n)
		return -ENOMEM;
	for (i = 0; i < ep_hash_cap; i++)
		while (ep_hash[i]) {
			struct epitem *it = ep_hash[i];
			size_t b = ep_hash_of(it->ep, it->target, it->fd, ncap);
			ep_hash[i] = it->next_in_hash;
			it->next_in_hash = n[b];
			n[b] = it;
		}
	free(ep_hash);
	ep_hash = n;
	ep_hash_cap = ncap;
	return 0;
}

static void ep_hash_del(struct epitem *it)
{
	struct epitem **pp =
		&ep_hash[ep_hash_of(it->ep, it->target, it->fd, ep_hash_cap)];

	for (; *pp; pp = &(*pp)->next_in_hash)
		if (*pp == it) {
			*pp = it->next_in_hash;
			return;
		}
}

/* Link a new item into its epoll's ring (at the tail), its file's list
 * and the table. The caller has made room in the table. */
static void ep_link(struct epoll *ep, struct epitem *it)
{
	size_t b = ep_hash_of(it->ep, it->target, it->fd, ep_hash_cap);

	if (!ep->head) {
		it->prev_in_ep = it->next_in_ep = it;
		ep->head = it;
	} else {
		it->next_in_ep = ep->head;
		it->prev_in_ep = ep->head->prev_in_ep;
		it->prev_in_ep->next_in_ep = it;
		ep->head->prev_in_ep = it;
	}
	ep->nitems++;
	it->next_in_file = it->target->epitems;
	if (it->next_in_file)
		it->next_in_file->pprev_in_file = &it->next_in_file;
	it->pprev_in_file = &it->target->epitems;
	it->target->epitems = it;
	it->next_in_hash = ep_hash[b];
	ep_hash[b] = it;
	ep_watches++;
}

/* Unlink it from everything and free it: O(1) but for its hash bucket. */
static void ep_unlink(struct epitem *it)
{
	struct epoll *ep = it->ep->priv;

	if (it->next_in_ep == it) {
		ep->head = NULL;
	} else {
		it->prev_in_ep->next_in_ep = it->next_in_ep;
		it->next_in_ep->prev_in_ep = it->prev_in_ep;
		if (ep->head == it)
			ep->head = it->next_in_ep;
	}
	ep->nitems--;
	*it->pprev_in_file = it->next_in_file;
	if (it->next_in_file)
		it->next_in_file->pprev_in_file = it->pprev_in_file;
	ep_hash_del(it);
	ep_watches--;
	free(it);
}

void epoll_file_gone(struct file *f)
{
	while (f->epitems)
		ep_unlink(f->epitems);
}

static void epoll_release(struct file *f)
{
	struct epoll *ep = f->priv;

	while (ep->head)
		ep_unlink(ep->head);
	free(ep);
}

static uint32_t item_ready(struct epitem *it)
{
	short ev =
		(short)(it->events & (EPOLLIN | EPOLLOUT | EPOLLPRI |
				      EPOLLRDNORM | EPOLLWRNORM | EPOLLRDHUP));
	short r;

	if (it->disabled)
		return 0;
	r = it->target->ops && it->target->ops->poll ?
		    it->target->ops->poll(it->target, ev | POLLHUP | POLLERR) :
		    (short)(ev & (POLLIN | POLLOUT));
	return (uint32_t)(unsigned short)r & (it->events | EPOLLHUP | EPOLLERR);
}

/* Polling an epoll polls what it watches, which may be another epoll.
 * Cycles are refused at EPOLL_CTL_ADD (ep_reaches); the depth guard is a
 * second line so a nesting we failed to refuse can never overflow the
 * sentry's stack. */
static int poll_depth;

static short epoll_poll(struct file *f, short events)
{
	struct epoll *ep = f->priv;
	struct epitem *it;
	short r = 0;

	int i;

	if (poll_depth > EP_MAX_NEST)
		return 0;
	poll_depth++;
	for (it = ep->head, i = 0; i < ep->nitems; it = it->next_in_ep, i++)
		if (item_ready(it)) {
			r = events & (POLLIN | POLLRDNORM);
			break;
		}
	poll_depth--;
	return r;
}

static int ep_stat(struct file *f, struct stat *st)
{
	(void)f;
	memset(st, 0, sizeof(*st));
	st->st_mode = 0600; /* anon inode */
	st->st_nlink = 1;
	st->st_blksize = 4096;
	return 0;
}

static const struct file_ops epoll_ops = {
	.poll = epoll_poll,
	.stat = ep_stat,
	.release = epoll_release,
};

/* Does epoll `from` watch `to`, directly or through nested epolls?  Too
 * deep a chain counts as yes, as Linux's ELOOP does for paths over 5. */
static bool ep_reaches(struct file *from, struct file *to, int depth)
{
	struct epoll *ep = from->priv;
	struct epitem *it;
	int i;

	if (depth > EP_MAX_NEST)
		return true;
	for (it = ep->head, i = 0; i < ep->nitems; it = it->next_in_ep, i++) {
		if (it->target == to)
			return true;
		if (it->target->ops == &epoll_ops &&
		    ep_reaches(it->target, to, depth + 1))
			return true;
	}
	return false;
}

/* A new anonymous stream file around priv (freed here on failure),
 * installed in t: the fd or -errno. */
void file_release_priv(struct file *f)
{
	free(f->priv);
}

long install_anon(struct task *t, const struct file_ops *ops, int fflags,
		  void *priv, bool cloexec)
{
	struct file *f;
	int fd;

	if (!priv)
		return -ENOMEM;
	f = file_new(ops, fflags);
	if (!f) {
		free(priv);
		return -errno;
	}
	f->priv = priv;
	f->stream = true;
	fd = fd_install(t, f, cloexec, 0);
	file_put(f);
	return fd;
}

static long new_epoll(struct task *t, int flags)
{
	if (flags & ~EPOLL_CLOEXEC)
		return -EINVAL;
	return install_anon(t, &epoll_ops, O_RDWR,
			    calloc(1, sizeof(struct epoll)),
			    (flags & EPOLL_CLOEXEC) != 0);
}

long sys_epoll_create(struct task *t, struct syscall_args *a)
{
	if ((int)a->a[0] <= 0)
		return -EINVAL;
	return new_epoll(t, 0);
}

long sys_epoll_create1(struct task *t, struct syscall_args *a)
{
	return new_epoll(t, (int)a->a[0]);
}

long sys_epoll_ctl(struct task *t, struct syscall_args *a)
{
	int epfd = (int)a->a[0], op = (int)a->a[1], fd = (int)a->a[2];
	struct file *epf = fd_get(t, epfd), *target = fd_get(t, fd);
	struct epoll_event ev;
	struct epoll *ep;
	struct epitem *it;

	if (!epf || !target)
		return -EBADF;
	if (epf->ops != &epoll_ops)
		return -EINVAL;
	if (target == epf)
		return -EINVAL;
	/* Regular files and directories: not pollable; but a message queue
	 * is a regular file that polls (Linux's file_can_poll). */
	if (target->vn && !target->vn->mq &&
	    (S_ISREG(target->vn->mode) || S_ISDIR(target->vn->mode)))
		return -EPERM;
	ep = epf->priv;
	if (op != EPOLL_CTL_DEL && task_read(t, a->a[3], &ev, sizeof(ev)) < 0)
		return -EFAULT;
	/* EPOLLEXCLUSIVE: on ADD only, with the flags Linux allows, never on
	 * an epoll file. "One or more" waiters wake (epoll(7)): here every
	 * waiter retries, which that allows. */
	if (op != EPOLL_CTL_DEL && (ev.events & EPOLLEXCLUSIVE) &&
	    (op != EPOLL_CTL_ADD || target->ops == &epoll_ops ||
	     (ev.events &
	      ~(uint32_t)(EPOLLEXCLUSIVE | EPOLLIN | EPOLLOUT | EPOLLERR |
			  EPOLLHUP | EPOLLWAKEUP | EPOLLET | EPOLLRDNORM |
			  EPOLLWRNORM | EPOLLRDBAND | EPOLLWRBAND | EPOLLPRI))))
		return -EINVAL;
	it = ep_find(epf, target, fd);
	if (op == EPOLL_CTL_MOD && it && (it->events & EPOLLEXCLUSIVE))
		return -EINVAL; /* an exclusive item cannot be modified */
	switch (op) {
	case EPOLL_CTL_ADD:
		if (it)
			return -EEXIST;
		if (ep_watches >= EP_MAX_WATCHES)
			return -ENOSPC;
		if (target->ops == &epoll_ops && ep_reaches(target, epf, 1))
			return -ELOOP;
		if (ep_watches >= ep_hash_cap && ep_hash_grow() < 0)
			return -ENOMEM;
		it = calloc(1, sizeof(*it));
		if (!it)
			return -ENOMEM;
		it->ep = epf;
		it->target = target;
		it->fd = fd;
		it->events = ev.events;
		it->data = ev.data.u64;
		ep_link(ep, it);
		return 0;
	case EPOLL_CTL_MOD:
		if (!it)
			return -ENOENT;
		it->events = ev.events;
		it->data = ev.data.u64;
		it->disabled = false;
		it->reported = false;
		return 0;
	case EPOLL_CTL_DEL:
		if (!it)
			return -ENOENT;
		ep_unlink(it);
		return 0;
	default:
		return -EINVAL;
	}
}

/* One look at every item, from the ring's head: O(items) a call (no
 * file here tells its epolls when it changes), with what is reported
 * written out through a buffer of EP_OUT_CHUNK. */
static long do_epoll_wait(struct task *t, int epfd, uint64_t uev, int max,
			  int64_t timeout_ns)
{
	static struct epoll_event out[EP_OUT_CHUNK];
	struct file *epf = fd_get(t, epfd);
	struct epitem *it, *last = NULL;
	struct epoll *ep;
	int n = 0, nout = 0, i, nitems;

	if (!epf)
		return -EBADF;
	if (epf->ops != &epoll_ops || max <= 0 || max > EP_MAX_EVENTS)
		return -EINVAL;
	ep = epf->priv;
	t->wait_hostfd = -1;
	nitems = ep->nitems;
	for (it = ep->head, i = 0; i < nitems && n < max;
	     it = it->next_in_ep, i++) {
		uint32_t r = item_ready(it);
		bool edge = true;
		uint64_t seq = 0;

		if (it->events & EPOLLET) {
			const struct file_ops *ops = it->target->ops;
			seq = ops && ops->evseq ? ops->evseq(it->target) : 0;
			edge = !it->reported || (r & ~it->last_mask) ||
			       seq != it->last_seq;
			it->last_mask = r; /* a bit that drops and comes back
					    * is a new edge */
		}
		if (!r) {
			if (it->target->hostfd >= 0 && it->target->stream &&
			    t->wait_hostfd < 0) {
				t->wait_hostfd = it->target->hostfd;
				t->wait_events = (short)(it->events &
							 (EPOLLIN | EPOLLOUT));
			}
			continue;
		}
		if (!edge)
			continue;
		it->last_seq = seq;
		it->reported = true;
		if (it->events & EPOLLONESHOT)
			it->disabled = true;
		if (nout == EP_OUT_CHUNK) {
			if (task_write(t,
				       uev + (uint64_t)(n - nout) *
						       sizeof(out[0]),
				       out, sizeof(out)) < 0)
				return n - nout ? n - nout : -EFAULT;
			nout = 0;
		}
		out[nout].events = r;
		out[nout].data.u64 = it->data;
		nout++;
		n++;
		last = it;
	}
	if (n == 0) {
		if (timeout_ns == 0)
			return 0;
		if (timeout_ns > 0) {
			if (!t->block_started)
				t->deadline_ns = now_ns() + timeout_ns;
			else if (now_ns() >= t->deadline_ns)
				return 0;
		}
		return SYS_BLOCK;
	}
	ep->head = last->next_in_ep;
	if (task_write(t, uev + (uint64_t)(n - nout) * sizeof(out[0]), out,
		       sizeof(out[0]) * (size_t)nout) < 0)
		return n - nout ? n - nout : -EFAULT;
	return n;
}

long sys_epoll_wait(struct task *t, struct syscall_args *a)
{
	int timeout = (int)a->a[3];

	return do_epoll_wait(t, (int)a->a[0], a->a[1], (int)a->a[2],
			     timeout < 0 ? -1 : (int64_t)timeout * 1000000);
}

long sys_epoll_pwait(struct task *t, struct syscall_args *a)
{
	long rc = task_wait_sigmask(t, a->a[4], a->a[5]);

	return rc < 0 ? rc : sys_epoll_wait(t, a);
}

long sys_epoll_pwait2(struct task *t, struct syscall_args *a)
{
	struct timespec ts;
	int64_t timeout = -1;

	if (a->a[3]) {
		if (task_read(t, a->a[3], &ts, sizeof(ts)) < 0)
			return -EFAULT;
		if (ts.tv_sec < 0 || ts.tv_nsec < 0 || ts.tv_nsec >= 1000000000)
			return -EINVAL;
		timeout = guest_timeout_ns(ts.tv_sec, ts.tv_nsec);
	}
	{
		long rc = task_wait_sigmask(t, a->a[4], a->a[5]);
		if (rc < 0)
			return rc;
	}
	return do_epoll_wait(t, (int)a->a[0], a->a[1], (int)a->a[2], timeout);
}

/* ---- eventfd --------------------------------------------------------------- */

struct evfd {
	uint64_t count;
	bool semaphore;
	uint64_t seq; /* events, for edge-triggered epoll */
};

static long evfd_read(struct task *t, struct file *f, void *buf, size_t n,
		      int64_t *off)
{
	struct evfd *e = f->priv;
	uint64_t v;

	(void)t;
	(void)off;
	if (n < 8)
		return -EINVAL;
	if (e->count == 0)
		return (f->flags & O_NONBLOCK) ? -EAGAIN : SYS_BLOCK;
	v = e->semaphore ? 1 : e->count;
	e->count -= v;
	memcpy(buf, &v, 8);
	e->seq++;
	sentry_wake();
	return 8;
}

static long evfd_write(struct task *t, struct file *f, const void *buf,
		       size_t n, int64_t *off)
{
	struct evfd *e = f->priv;
	uint64_t v;

	(void)t;
	(void)off;
	if (n < 8)
		return -EINVAL;
	memcpy(&v, buf, 8);
	if (v == UINT64_MAX)
		return -EINVAL;
	if (e->count > UINT64_MAX - 1 - v)
		return (f->flags & O_NONBLOCK) ? -EAGAIN : SYS_BLOCK;
	e->count += v;
	e->seq++;
	sentry_wake();
	return 8;
}

static short evfd_poll(struct file *f, short events)
{
	struct evfd *e = f->priv;
	short r = 0;

	if (e->count > 0)
		r |= POLLIN | POLLRDNORM;
	if (e->count < UINT64_MAX - 1)
		r |= POLLOUT | POLLWRNORM;
	return r & events;
}

static uint64_t evfd_evseq(struct file *f)
{
	return ((struct evfd *)f->priv)->seq;
}

static const struct file_ops evfd_ops = {
	.evseq = evfd_evseq,
	.read = evfd_read,
	.write = evfd_write,
	.poll = evfd_poll,
	.stat = ep_stat,
	.release = file_release_priv,
};

static long new_eventfd(struct task *t, unsigned initval, int flags)
{
	struct evfd *e;

	if (flags & ~(EFD_CLOEXEC | EFD_NONBLOCK | EFD_SEMAPHORE))
		return -EINVAL;
	e = calloc(1, sizeof(*e));
	if (e) {
		e->count = initval;
		e->semaphore = flags & EFD_SEMAPHORE;
	}
	return install_anon(t, &evfd_ops,
			    O_RDWR | ((flags & EFD_NONBLOCK) ? O_NONBLOCK : 0),
			    e, (flags & EFD_CLOEXEC) != 0);
}

long sys_eventfd(struct task *t, struct syscall_args *a)
{
	return new_eventfd(t, (unsigned)a->a[0], 0);
}

long sys_eventfd2(struct task *t, struct syscall_args *a)
{
	return new_eventfd(t, (unsigned)a->a[0], (int)a->a[1]);
}
