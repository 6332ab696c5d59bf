/* sentry/pipe.c: pipes, entirely in the sentry. */
#include "sentry/limits.h"
#include "sentry/vfs.h"

#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

/* Linux's sizes: 64 KiB a pipe, one page past a soft limit on what the
 * sandbox's pipes may hold together (pipe-user-pages-soft), and no new
 * pipe past a hard one. A buffer exists only while it holds data, so idle
 * pipes cost the sentry almost nothing; the limits bound what a guest that
 * fills thousands of pipes can make the sentry allocate. */
#define PIPE_DEF_SIZE 65536
#define PIPE_MIN_SIZE 4096
#define PIPE_SOFT_TOTAL (64u << 20)
#define PIPE_HARD_TOTAL (256u << 20)

static size_t pipe_total; /* capacity of every live pipe, in bytes */

/* A pipe's capacity goes from old to want bytes: within PIPE_HARD_TOTAL
 * and within what the sandbox's memory limit lets guests make the sentry
 * hold (limits_heap_charge). Capacity, not what is buffered: a guest can
 * fill what it was given at any time. */
static bool pipe_charge(size_t old, size_t want)
{
	if (pipe_total - old + want > PIPE_HARD_TOTAL ||
	    !limits_heap_charge((int64_t)want - (int64_t)old))
		return false;
	pipe_total = pipe_total - old + want;
	return true;
}

/* A new pipe's capacity, charged: a page past the soft limit (a quarter
 * of the sentry's share of the memory limit, if that is less), as Linux
 * past pipe-user-pages-soft; 0 past the hard one. */
static size_t pipe_first_cap(void)
{
	uint64_t soft = limits_heap_budget() / 4;

	if (soft > PIPE_SOFT_TOTAL)
		soft = PIPE_SOFT_TOTAL;
	if (pipe_total + PIPE_DEF_SIZE <= soft && pipe_charge(0, PIPE_DEF_SIZE))
		return PIPE_DEF_SIZE;
	return pipe_charge(0, PIPE_MIN_SIZE) ? PIPE_MIN_SIZE : 0;
}

struct pipe {
	char *buf; /* NULL while empty */
	size_t cap;
	size_t head, len;
	int readers, writers;
	unsigned long ino;
	/* FIFOs: the tmpfs node's slot that points here (NULL for pipes or
	 * once the node is gone), and opens waiting for the other side. */
	struct pipe **owner;
	int r_wait, w_wait;
	/* opens of each side so far: an open waiting for the other side
	 * goes on once one came, even if it has closed again since */
	uint64_t r_opens, w_opens;
	uint64_t seq; /* bumped on every change a waiter may care about */
};

static unsigned long pipe_ino = 1000;

static const struct file_ops pipe_ops;

static uint64_t pipe_evseq(struct file *f)
{
	struct pipe *p = f->priv;

	return p ? p->seq : 0;
}

static long pipe_read(struct task *t, struct file *f, void *buf, size_t n,
		      int64_t *off)
{
	struct pipe *p = f->priv;
	size_t done = 0;

	(void)t;
	(void)off;
	if (n == 0)
		return 0;
	if (p->len == 0) {
		if (p->writers == 0)
			return 0;
		return (f->flags & O_NONBLOCK) ? -EAGAIN : SYS_BLOCK;
	}
	while (done < n && p->len) {
		size_t chunk = p->cap - p->head;
		if (chunk > p->len)
			chunk = p->len;
		if (chunk > n - done)
			chunk = n - done;
		memcpy((char *)buf + done, p->buf + p->head, chunk);
		p->head = (p->head + chunk) % p->cap;
		p->len -= chunk;
		done += chunk;
	}
	if (p->len == 0) {
		free(p->buf);
		p->buf = NULL;
		p->head = 0;
	}
	p->seq++;
	sentry_wake();
	return (long)done;
}

static long pipe_write(struct task *t, struct file *f, const void *buf,
		       size_t n, int64_t *off)
{
	struct pipe *p = f->priv;
	size_t room = p->cap - p->len, done = 0;

	(void)off;
	if (p->readers == 0) {
		send_signal_task(t, SIGPIPE, t->proc->pid);
		return -EPIPE;
	}
	if (n == 0)
		return 0;
	/* Writes of PIPE_BUF or less are atomic: all or wait. */
	if (room == 0 || (n <= PIPE_BUF && room < n))
		return (f->flags & O_NONBLOCK) ? -EAGAIN : SYS_BLOCK;
	if (!p->buf) {
		p->buf = malloc(p->cap);
		if (!p->buf)
			return -ENOMEM;
	}
	while (done < n && p->len < p->cap) {
		size_t tail = (p->head + p->len) % p->cap;
		/* contiguous free space after tail */
		size_t chunk = tail < p->head ? p->head - tail : p->cap - tail;
		if (chunk > n - done)
			chunk = n - done;
		memcpy(p->buf + tail, (const char *)buf + done, chunk);
		p->len += chunk;
		done += chunk;
	}
	p->seq++;
	sentry_wake();
	return (long)done;
}

bool file_is_pipe(struct file *f)
{
	return f && f->ops == &pipe_ops && f->priv;
}

long pipe_peek(struct file *f, void *buf, size_t n, bool *eof)
{
	struct pipe *p = f->priv;
	size_t done = 0, pos = p->head;

	*eof = p->len == 0 && p->writers == 0;
	while (done < n && done < p->len) {
		size_t chunk = p->cap - pos;
		if (chunk > p->len - done)
			chunk = p->len - done;
		if (chunk > n - done)
			chunk = n - done;
		memcpy((char *)buf + done, p->buf + pos, chunk);
		pos = (pos + chunk) % p->cap;
		done += chunk;
	}
	return (long)done;
}

size_t pipe_room(struct file *f)
{
	struct pipe *p = f->priv;

	return p->readers ? p->cap - p->len : 0;
}

static short pipe_poll(struct file *f, short events)
{
	struct pipe *p = f->priv;
	short r = 0;

	int acc = f->flags & O_ACCMODE;

	if (acc != O_WRONLY) {
		if (p->len)
			r |= POLLIN | POLLRDNORM;
		if (!p->writers)
			r |= POLLHUP;
	}
	if (acc != O_RDONLY) {
		if (!p->readers)
			r |= POLLERR;
		else if (p->cap - p->len >= PIPE_BUF)
			r |= POLLOUT | POLLWRNORM;
	}
	return r & (events | POLLHUP | POLLERR);
}

static long pipe_ioctl(struct task *t, struct file *f, unsigned long cmd,
		       uint64_t arg)
{
	struct pipe *p = f->priv;

	if (cmd == FIONREAD) {
		int n = (int)p->len;
		return task_write(t, arg, &n, sizeof(n));
	}
	return -ENOTTY;
}

static int pipe_stat(struct file *f, struct stat *st)
{
	struct pipe *p = f->priv;

	memset(st, 0, sizeof(*st));
	st->st_mode = S_IFIFO | 0600;
	st->st_ino = p->ino;
	st->st_nlink = 1;
	st->st_blksize = 4096;
	st->st_dev = 12;
	return 0;
}

static void pipe_free(struct pipe *p)
{
	if (p->owner)
		*p->owner = NULL; /* a FIFO's next open starts a new pipe */
	pipe_charge(p->cap, 0);
	free(p->buf);
	free(p);
}

/* Free p once nothing can reach it any more: no end open and no open
 * waiting for one. A FIFO's pipe is then dropped even while its node
 * lives (what it buffered went with its last end, as on Linux), so a
 * node that is opened and given up on never keeps a pipe charged. */
static void pipe_put_unused(struct pipe *p)
{
	if (!p->readers && !p->writers && !p->r_wait && !p->w_wait)
		pipe_free(p);
}

static void pipe_release(struct file *f)
{
	struct pipe *p = f->priv;

	if ((f->flags & O_ACCMODE) != O_WRONLY)
		p->readers--;
	if ((f->flags & O_ACCMODE) != O_RDONLY)
		p->writers--;
	p->seq++;
	pipe_put_unused(p);
	sentry_wake();
}

static const struct file_ops pipe_ops = {
	.read = pipe_read,
	.write = pipe_write,
	.poll = pipe_poll,
	.ioctl = pipe_ioctl,
	.stat = pipe_stat,
	.release = pipe_release,
	.evseq = pipe_evseq,
};

int pipe_create(struct file **rd, struct file **wr, int flags)
{
	struct pipe *p = calloc(1, sizeof(*p));
	struct file *r, *w;

	if (!p)
		return -ENOMEM;
	r = file_new(&pipe_ops, O_RDONLY | (flags & O_NONBLOCK));
	w = file_new(&pipe_ops, O_WRONLY | (flags & O_NONBLOCK));
	if (!r || !w) {
		int rc = -errno;
		file_discard(r);
		file_discard(w);
		free(p);
		return rc;
	}
	p->cap = pipe_first_cap();
	if (!p->cap) {
		file_discard(r);
		file_discard(w);
		free(p);
		return -ENFILE;
	}
	p->ino = pipe_ino++;
	p->readers = p->writers = 1;
	r->priv = w->priv = p;
	r->stream = w->stream = true;
	*rd = r;
	*wr = w;
	return 0;
}

long pipe_size_ctl(struct file *f, int set, uint64_t arg)
{
	struct pipe *p;

	if (f->ops != &pipe_ops)
		return -EBADF;
	p = f->priv;
	if (!set)
		return (long)p->cap;
	/* F_SETPIPE_SZ: between a page and 1 MiB (Linux's pipe-max-size),
	 * rounded up to a power of two, never below what the pipe holds. */
	if (arg > PIPE_MAX_SIZE)
		return -EPERM;
	{
		size_t want = PIPE_MIN_SIZE, old = p->cap;
		char *nb;
		while (want < arg)
			want <<= 1;
		if (want < p->len)
			return -EBUSY;
		if (!pipe_charge(old, want))
			return -EPERM;
		if (p->buf) {
			/* Re-lay the ring at offset 0 in a buffer of the new size. */
			size_t i;
			nb = malloc(want);
			if (!nb) {
				pipe_charge(want, old);
				return -ENOMEM;
			}
			for (i = 0; i < p->len; i++)
				nb[i] = p->buf[(p->head + i) % old];
			free(p->buf);
			p->buf = nb;
			p->head = 0;
		}
		p->cap = want;
		p->seq++;
		sentry_wake();
		return (long)want;
	}
}

/* ---- FIFOs (named pipes of tmpfs) ----------------------------------------- */

void fifo_detach(struct pipe *p)
{
	p->owner = NULL;
	pipe_put_unused(p);
}

/* t's wait on its FIFO ends: done (its count goes to the file it opened)
 * or not (an open interrupted, a task gone: the count goes). */
static void wait_end(struct task *t, bool done)
{
	struct pipe *p = t->fifo_wait;

	vnode_put(t->fifo_vn);
	t->fifo_vn = NULL;
	if (!p)
		return;
	if (t->fifo_side == 1) {
		p->r_wait--;
		if (!done)
			p->readers--;
	} else {
		p->w_wait--;
		if (!done)
			p->writers--;
	}
	t->fifo_wait = NULL;
	t->fifo_side = 0;
	p->seq++;
	pipe_put_unused(p);
	sentry_wake();
}

void fifo_unwait(struct task *t)
{
	wait_end(t, false);
}

/* Is t waiting on side of p? */
static bool waits(const struct task *t, const struct pipe *p, int side)
{
	return t->fifo_wait == p && t->fifo_side == side;
}

/* Count t as an opener of one side of p that waits for the other (once
 * across retries), as Linux's fifo_open counts it before it waits: a
 * writer that comes then finds a reader, and a reader's read finds a
 * writer (a wait for data, not EOF), whichever came first. */
static void wait_begin(struct task *t, struct pipe *p, int side)
{
	if (waits(t, p, side))
		return;
	fifo_unwait(t); /* a wait on a FIFO since replaced */
	if (side == 1) {
		p->r_wait++;
		p->readers++;
		p->r_opens++;
		t->fifo_gen = p->w_opens;
	} else {
		p->w_wait++;
		p->writers++;
		p->w_opens++;
		t->fifo_gen = p->r_opens;
	}
	t->fifo_wait = p;
	t->fifo_side = side;
	p->seq++;
	sentry_wake();
}

/* Has the other side been opened since t began to wait on side? (It may
 * have closed again since: its bytes are in the pipe.) */
static bool met(const struct task *t, const struct pipe *p, int side)
{
	return (side == 1 ? p->w_opens : p->r_opens) != t->fifo_gen;
}

/* Open an end of the FIFO whose pipe is at *slot (made on first open).
 * As on Linux, a read-only open waits for a writer and a write-only open
 * for a reader (O_NONBLOCK: a reader goes on, a writer gets ENXIO); an
 * open waiting on one side counts as present for the other, so the two
 * meet. The wait is recorded on the task (fifo_wait) so that an open
 * that ends any other way (a signal, death) is uncounted. */
int fifo_open(struct task *t, struct pipe **slot, int flags, struct file **out)
{
	int acc = flags & O_ACCMODE;
	struct pipe *p = *slot;
	struct file *f;

	if (!p) {
		p = calloc(1, sizeof(*p));
		if (!p)
			return -ENOMEM;
		p->cap = pipe_first_cap();
		if (!p->cap) {
			free(p);
			return -ENFILE;
		}
		p->ino = pipe_ino++;
		p->owner = slot;
		*slot = p;
	}
	if (acc == O_RDONLY && !(flags & O_NONBLOCK)) {
		wait_begin(t, p, 1);
		if (!p->writers && !met(t, p, 1))
			return SYS_BLOCK;
	}
	if (acc == O_WRONLY && !(flags & O_NONBLOCK)) {
		wait_begin(t, p, 2);
		if (!p->readers && !met(t, p, 2))
			return SYS_BLOCK;
	}
	if (acc == O_WRONLY && (flags & O_NONBLOCK) && !p->readers) {
		/* The pipe was made for this open if no one else has it. */
		pipe_put_unused(p);
		return -ENXIO;
	}
	f = file_new(&pipe_ops, acc | (flags & O_NONBLOCK));
	if (!f) {
		int rc = -errno;
		fifo_unwait(t);
		pipe_put_unused(p);
		return rc;
	}
	if (waits(t, p, acc == O_RDONLY ? 1 : 2)) {
		wait_end(t, true); /* its count is the file's now */
	} else {
		if (acc != O_WRONLY) {
			p->readers++;
			p->r_opens++;
		}
		if (acc != O_RDONLY) {
			p->writers++;
			p->w_opens++;
		}
	}
	f->priv = p;
	f->stream = true;
	p->seq++;
	sentry_wake();
	*out = f;
	return 0;
}
