/* sentry/events.c: epoll and eventfd, in the sentry.
 *
 * epoll holds no reference on the files it watches: as on Linux, a file
 * leaves every epoll set when its last descriptor closes (file_put calls
 * epoll_file_gone). Readiness comes from each file's poll op. An edge-
 * triggered item reports when a readiness bit appeared since its last
 * report, or when the file's event counter (file_ops.evseq: data in, room
 * out, a hangup) moved, as Linux reports on every wakeup of the file.
 *
 * Epolls may watch epolls. Linux looks only at ready lists; here an epoll's
 * readiness is a look at its items, so that a shape of epolls that share
 * what they watch (a DAG) would cost a look a path, exponentially many:
 * each epoll's readiness is kept for the rest of one look (ep_look_gen),
 * so a look costs the items of the epolls below, once each. Nesting is
 * bounded as Linux bounds it (EP_MAX_NESTS, ep_path_max).
 */
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>

#include "sentry/limits.h"
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
/* Linux's limits on nesting (fs/eventpoll.c): a chain of epolls watching
 * epolls has at most EP_MAX_NESTS links (ELOOP past it, or for a cycle),
 * and from any other file at most ep_path_max[n] paths of n links lead up
 * to epolls that nothing watches (EINVAL past them), so that a wakeup
 * reaches few. Paths of no link, straight to an unwatched epoll, are not
 * counted; there are none past EP_MAX_NESTS. */
#define EP_MAX_NESTS 4
static const uint32_t ep_path_max[EP_MAX_NESTS + 2] = {
	UINT32_MAX, 500, 100, 50, 10, 0,
};

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

/* An item and its hash slot, with malloc's overhead: charged to the
 * sentry's share of the memory limit (limits_heap_charge), ENOMEM past
 * it as Linux when an epitem cannot be had; EP_MAX_WATCHES (ENOSPC, as
 * max_user_watches) bounds them without a limit. */
#define EPITEM_COST ((int64_t)(sizeof(struct epitem) + 16 + 2 * sizeof(void *)))

/* An epoll's items are a ring in the order they were added; a wait
 * starts at the head and leaves it after the last item it reported, so
 * that with more ready items than maxevents each comes round in turn, as
 * Linux's ready list moves reported items to its tail. */
struct epoll {
	struct epitem *head;
	int nitems;
	/* readiness during the look ready_gen (ep_look_gen) */
	uint64_t ready_gen;
	bool ready;
	/* EPOLL_CTL_ADD's walks (ep_walk_gen): the longest chain of links
	 * below and above this epoll, and the paths up to unwatched epolls
	 * by their links */
	uint64_t below_gen, above_gen, paths_gen;
	int below, above;
	uint32_t paths[EP_MAX_NESTS + 2];
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
	limits_heap_charge(-EPITEM_COST);
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
 * Cycles and chains past EP_MAX_NESTS are refused at EPOLL_CTL_ADD; the
 * depth guard is a second line so a nesting we failed to refuse can never
 * overflow the sentry's stack.
 *
 * One look (ep_look_gen) is a poll or select call, an epoll_wait's pass
 * over its items, or a lone poll of an epoll (from outside any look):
 * nothing changes during it, so an epoll's readiness, once found, holds
 * for the rest of it. */
static int poll_depth, ep_looking;
static uint64_t ep_look_gen = 1;

void epoll_look_begin(void)
{
	if (ep_looking++ == 0)
		ep_look_gen++;
}

void epoll_look_end(void)
{
	ep_looking--;
}

static short epoll_poll(struct file *f, short events)
{
	struct epoll *ep = f->priv;
	struct epitem *it;
	bool ready = false;
	int i;

	if (!ep_looking && !poll_depth)
		ep_look_gen++; /* a look of its own */
	if (ep->ready_gen == ep_look_gen)
		return ep->ready ? (short)(events & (POLLIN | POLLRDNORM)) : 0;
	if (poll_depth > EP_MAX_NESTS)
		return 0;
	poll_depth++;
	for (it = ep->head, i = 0; i < ep->nitems; it = it->next_in_ep, i++)
		if (item_ready(it)) {
			ready = true;
			break;
		}
	poll_depth--;
	ep->ready_gen = ep_look_gen;
	ep->ready = ready;
	return ready ? (short)(events & (POLLIN | POLLRDNORM)) : 0;
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

/* ---- EPOLL_CTL_ADD's checks of nesting ---------------------------------
 *
 * Each walk (ep_walk_gen) notes what it found in every epoll it visits,
 * so that it visits each once however many paths lead there: its cost is
 * the items of the epolls below (or above) the ones it starts from. Depth
 * is bounded by the nesting limits (and the depth arguments, should they
 * ever fail). */
static uint64_t ep_walk_gen;

static bool is_epoll(const struct file *f)
{
	return f->ops == &epoll_ops;
}

/* The longest chain of links below epoll file x, or EP_MAX_NESTS + 1 if
 * `into` is below it (an add of x into `into` would close a cycle) or a
 * chain is too long. depth: x's links below where the walk began. */
static int ep_below(struct file *x, const struct file *into, int depth)
{
	struct epoll *ep = x->priv;
	struct epitem *it;
	int i, d = 0;

	if (ep->below_gen == ep_walk_gen)
		return ep->below;
	for (it = ep->head, i = 0; i < ep->nitems && d <= EP_MAX_NESTS;
	     it = it->next_in_ep, i++) {
		int c;
		if (!is_epoll(it->target))
			continue;
		if (it->target == into || depth >= EP_MAX_NESTS)
			c = EP_MAX_NESTS + 1;
		else
			c = 1 + ep_below(it->target, into, depth + 1);
		if (c > d)
			d = c;
	}
	ep->below_gen = ep_walk_gen;
	ep->below = d;
	return d;
}

/* The longest chain of links above epoll file x (epolls that watch it),
 * or EP_MAX_NESTS + 1 past the limit. */
static int ep_above(struct file *x, int depth)
{
	struct epoll *ep = x->priv;
	struct epitem *it;
	int d = 0;

	if (ep->above_gen == ep_walk_gen)
		return ep->above;
	for (it = x->epitems; it && d <= EP_MAX_NESTS; it = it->next_in_file) {
		int c = depth >= EP_MAX_NESTS ? EP_MAX_NESTS + 1 :
						1 + ep_above(it->ep, depth + 1);
		if (c > d)
			d = c;
	}
	ep->above_gen = ep_walk_gen;
	ep->above = d;
	return d;
}

static uint32_t sat_add(uint32_t a, uint32_t b)
{
	return a > UINT32_MAX - b ? UINT32_MAX : a + b;
}

/* The paths from epoll file x up to epolls that nothing watches, by their
 * number of links (the last slot: longer than EP_MAX_NESTS), saturating. */
static const uint32_t *ep_paths_above(struct file *x, int depth)
{
	struct epoll *ep = x->priv;
	struct epitem *it;
	int n;

	if (ep->paths_gen == ep_walk_gen)
		return ep->paths;
	memset(ep->paths, 0, sizeof(ep->paths));
	if (!x->epitems)
		ep->paths[0] = 1;
	for (it = x->epitems; it; it = it->next_in_file) {
		const uint32_t *c;
		if (depth > EP_MAX_NESTS) {
			ep->paths[EP_MAX_NESTS + 1] = 1;
			break;
		}
		c = ep_paths_above(it->ep, depth + 1);
		for (n = 0; n <= EP_MAX_NESTS; n++)
			ep->paths[n + 1] = sat_add(ep->paths[n + 1], c[n]);
		ep->paths[EP_MAX_NESTS + 1] = sat_add(
			ep->paths[EP_MAX_NESTS + 1], c[EP_MAX_NESTS + 1]);
	}
	ep->paths_gen = ep_walk_gen;
	return ep->paths;
}

/* Do the paths from file f (not an epoll) up through the epolls that
 * watch it stay within ep_path_max? Each file is looked at once a walk;
 * the cost is its items and the epolls above them, as Linux's
 * reverse_path_check (which walks every path, to the limits). */
static bool ep_file_paths_ok(struct file *f)
{
	uint32_t paths[EP_MAX_NESTS + 2] = { 0 };
	struct epitem *it;
	int n;

	if (f->ep_walk == ep_walk_gen)
		return true;
	f->ep_walk = ep_walk_gen;
	for (it = f->epitems; it; it = it->next_in_file) {
		const uint32_t *c = ep_paths_above(it->ep, 0);
		for (n = 1; n <= EP_MAX_NESTS + 1; n++) {
			paths[n] = sat_add(paths[n], c[n]);
			if (paths[n] > ep_path_max[n])
				return false;
		}
	}
	return true;
}

/* ep_file_paths_ok for every file (not an epoll) below epoll file x. It
 * marks the epolls it has been through as ep_below does (below_gen), in a
 * walk of its own. */
static bool ep_files_below_ok(struct file *x, int depth)
{
	struct epoll *ep = x->priv;
	struct epitem *it;
	int i;

	if (ep->below_gen == ep_walk_gen)
		return true;
	ep->below_gen = ep_walk_gen;
	for (it = ep->head, i = 0; i < ep->nitems; it = it->next_in_ep, i++) {
		bool ok;
		if (!is_epoll(it->target))
			ok = ep_file_paths_ok(it->target);
		else /* never past EP_MAX_NESTS: ep_below refused it */
			ok = depth >= EP_MAX_NESTS ||
			     ep_files_below_ok(it->target, depth + 1);
		if (!ok)
			return false;
	}
	return true;
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
		/* In Linux's order: the nesting (ELOOP) before EEXIST and
		 * ENOSPC, the paths (EINVAL) once the item is in. */
		if (is_epoll(target)) {
			ep_walk_gen++;
			if (ep_below(target, epf, 0) + 1 + ep_above(epf, 0) >
			    EP_MAX_NESTS)
				return -ELOOP;
		}
		if (it)
			return -EEXIST;
		if (ep_watches >= EP_MAX_WATCHES)
			return -ENOSPC;
		if (ep_watches >= ep_hash_cap && ep_hash_grow() < 0)
			return -ENOMEM;
		if (!limits_heap_charge(EPITEM_COST))
			return -ENOMEM;
		it = calloc(1, sizeof(*it));
		if (!it) {
			limits_heap_charge(-EPITEM_COST);
			return -ENOMEM;
		}
		it->ep = epf;
		it->target = target;
		it->fd = fd;
		it->events = ev.events;
		it->data = ev.data.u64;
		ep_link(ep, it);
		/* New paths lead up from the files below target, or from
		 * target if epf is watched (else its one new path has no
		 * link, and paths of none are not counted). */
		ep_walk_gen++;
		if (is_epoll(target) ?
			    !ep_files_below_ok(target, 0) :
			    epf->epitems && !ep_file_paths_ok(target)) {
			ep_unlink(it);
			return -EINVAL;
		}
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
 * file here tells its epolls when it changes), and for nested epolls the
 * items below, each epoll once; what is reported is written out through
 * a buffer of EP_OUT_CHUNK. */
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
	epoll_look_begin();
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
				       out, sizeof(out)) < 0) {
				epoll_look_end();
				return n - nout ? n - nout : -EFAULT;
			}
			nout = 0;
		}
		out[nout].events = r;
		out[nout].data.u64 = it->data;
		nout++;
		n++;
		last = it;
	}
	epoll_look_end();
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
