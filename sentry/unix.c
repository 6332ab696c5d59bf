/* sentry/unix.c: AF_UNIX socket pairs, in the sentry.
 *
 * socketpair(AF_UNIX, SOCK_STREAM | SOCK_DGRAM | SOCK_SEQPACKET): two
 * connected endpoints, each with a bounded receive queue of messages.
 * Named sockets (bind/connect on paths), SCM_RIGHTS and SCM_CREDENTIALS
 * come with the rest of the socket layer (the POSIX-surface and netstack
 * issues); until then they fail with a clear errno and an audit line.
 */
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "sentry/syscalls.h"
#include "sentry/vfs.h"

#define USOCK_BUF 212992 /* Linux's default net.core.rmem_default */

struct umsg {
	struct umsg *next;
	size_t len, off;
	struct file **files; /* SCM_RIGHTS in flight (references) */
	int nfiles;
	char data[];
};

/* Files in flight in every socket of the sandbox: a cycle (a socket sent
 * over itself) is never freed, so the total is bounded, as Linux bounds
 * in-flight descriptors (ETOOMANYREFS past it). */
#define INFLIGHT_MAX 4096
static int inflight;

/* Bytes queued in every socket of the sandbox. Each socket holds at most
 * USOCK_BUF, but sockets passed over themselves stay alive with their
 * queues; the total is bounded too, so that such cycles cannot pin the
 * sentry's memory (a full sandbox behaves as a full socket buffer). */
#define QUEUED_MAX (64UL << 20)
static size_t queued;

/* Drop the references of an array of passed files, and the array. */
static void put_files(struct file **files, int n)
{
	int i;

	for (i = 0; i < n; i++)
		file_put(files[i]);
	free(files);
}

static void umsg_free(struct umsg *m)
{
	put_files(m->files, m->nfiles);
	inflight -= m->nfiles;
	queued -= m->len - m->off; /* what a reader has not consumed */
	free(m);
}

struct usock {
	int type;
	struct usock *peer; /* NULL once the peer closed */
	struct file *file;  /* this endpoint's file (not referenced) */
	struct umsg *head, *tail;
	size_t bytes;
	bool shut_rd, shut_wr; /* this end's shutdowns */
	bool peer_shut_wr;     /* the peer will send no more */
	int cred_pid;	       /* creator, for SO_PEERCRED */
	uid_t cred_uid;
	gid_t cred_gid;
	unsigned long ino;
};

static unsigned long usock_ino = 20000;
static const struct file_ops usock_ops;

bool file_is_socket(struct file *f)
{
	return f && f->ops == &usock_ops;
}

static bool eof(struct usock *u)
{
	return !u->peer || u->peer_shut_wr || u->shut_rd;
}

/* How many bytes a send to p may queue now: p's buffer, within what all
 * sockets together may still hold. Sends and poll's POLLOUT agree. */
static size_t send_room(const struct usock *p)
{
	size_t room = p->bytes < USOCK_BUF ? USOCK_BUF - p->bytes : 0;

	return room < QUEUED_MAX - queued ? room : QUEUED_MAX - queued;
}

/* Send n bytes of buf to u's peer. Returns bytes, -errno or SYS_BLOCK. */
static long usend_files(struct task *t, struct file *f, const void *buf,
			size_t n, int flags, struct file **files, int nfiles);

static long usend(struct task *t, struct file *f, const void *buf, size_t n,
		  int flags)
{
	return usend_files(t, f, buf, n, flags, NULL, 0);
}

/* Send; files (references, taken over on success) ride with the data. */
static long usend_files(struct task *t, struct file *f, const void *buf,
			size_t n, int flags, struct file **files, int nfiles)
{
	struct usock *u = f->priv, *p = u->peer;
	bool nonblock = (f->flags & O_NONBLOCK) || (flags & MSG_DONTWAIT);
	struct umsg *m;
	size_t room;

	if (u->shut_wr || !p || p->shut_rd) {
		if (!(flags & MSG_NOSIGNAL))
			send_signal_task(t, SIGPIPE, t->proc->pid);
		return -EPIPE;
	}
	if (u->type != SOCK_STREAM && n > USOCK_BUF)
		return -EMSGSIZE;
	room = send_room(p);
	if (room == 0 || (u->type != SOCK_STREAM && room < n))
		return nonblock ? -EAGAIN : SYS_BLOCK;
	if (u->type == SOCK_STREAM && n > room)
		n = room; /* a partial write, as a full socket buffer gives */
	if (n == 0 && u->type == SOCK_STREAM && !nfiles)
		return 0;
	if (nfiles && inflight + nfiles > INFLIGHT_MAX)
		return -ETOOMANYREFS;
	m = malloc(sizeof(*m) + n);
	if (!m)
		return -ENOMEM;
	m->next = NULL;
	m->len = n;
	m->off = 0;
	m->files = files;
	m->nfiles = nfiles;
	inflight += nfiles;
	queued += n;
	memcpy(m->data, buf, n);
	if (p->tail)
		p->tail->next = m;
	else
		p->head = m;
	p->tail = m;
	p->bytes += n;
	sentry_wake();
	return (long)n;
}

struct rfiles {
	struct file **files; /* taken over by the caller */
	int n;
};

/* Hand the files of m to *rf (or drop them when there is no rf: a plain
 * read() discards passed descriptors, as on Linux). */
static void take_files(struct umsg *m, struct rfiles *rf)
{
	if (!m->nfiles)
		return;
	if (rf && !rf->files) {
		rf->files = m->files;
		rf->n = m->nfiles;
	} else {
		put_files(m->files, m->nfiles);
	}
	inflight -= m->nfiles;
	m->files = NULL;
	m->nfiles = 0;
}

/* Receive into buf. *trunc is set when a datagram did not fit. */
static long urecv(struct file *f, void *buf, size_t n, int flags, bool *trunc,
		  struct rfiles *rf)
{
	struct usock *u = f->priv;
	bool nonblock = (f->flags & O_NONBLOCK) || (flags & MSG_DONTWAIT);
	size_t done = 0;
	struct umsg *m;

	*trunc = false;
	if (!u->head) {
		if (eof(u))
			return 0;
		return nonblock ? -EAGAIN : SYS_BLOCK;
	}
	if (u->type != SOCK_STREAM) {
		size_t len;
		m = u->head;
		len = m->len;
		done = len < n ? len : n;
		memcpy(buf, m->data, done);
		if (len > n)
			*trunc = true;
		if (!(flags & MSG_PEEK)) {
			take_files(m, rf);
			u->head = m->next;
			if (!u->head)
				u->tail = NULL;
			u->bytes -= len;
			umsg_free(m);
			sentry_wake();
		}
		return (flags & MSG_TRUNC) ? (long)len : (long)done;
	}
	for (m = u->head; m && done < n;) {
		size_t c = m->len - m->off;
		/* Passed files stay with their bytes: a read stops before a
		 * message that carries some, unless it begins there. */
		if (m->nfiles && done > 0)
			break;
		if (m->nfiles && !(flags & MSG_PEEK))
			take_files(m, rf);
		if (c > n - done)
			c = n - done;
		memcpy((char *)buf + done, m->data + m->off, c);
		done += c;
		if (flags & MSG_PEEK) {
			if (c < m->len - m->off)
				break;
			m = m->next;
			continue;
		}
		m->off += c;
		u->bytes -= c;
		queued -= c;
		if (m->off == m->len) {
			u->head = m->next;
			if (!u->head)
				u->tail = NULL;
			umsg_free(m);
			m = u->head;
		}
	}
	if (!(flags & MSG_PEEK))
		sentry_wake();
	/* MSG_WAITALL: a short stream read waits for the rest, unless EOF. */
	if ((flags & MSG_WAITALL) && done < n && !eof(u) && !nonblock &&
	    !(flags & MSG_PEEK))
		return (long)done; /* the caller's loop (libc) retries */
	return (long)done;
}

static long usock_read(struct task *t, struct file *f, void *buf, size_t n,
		       int64_t *off)
{
	bool trunc;

	(void)t;
	(void)off;
	return urecv(f, buf, n, 0, &trunc, NULL);
}

static long usock_write(struct task *t, struct file *f, const void *buf,
			size_t n, int64_t *off)
{
	(void)off;
	return usend(t, f, buf, n, 0);
}

static short usock_poll(struct file *f, short events)
{
	struct usock *u = f->priv;
	short r = 0;

	if (u->head || eof(u))
		r |= POLLIN | POLLRDNORM;
	if (u->peer && !u->shut_wr && !u->peer->shut_rd && send_room(u->peer))
		r |= POLLOUT | POLLWRNORM;
	if (!u->peer || (u->shut_wr && (u->shut_rd || u->peer_shut_wr)))
		r |= POLLHUP;
	if (u->peer_shut_wr || !u->peer)
		r |= POLLRDHUP;
	return r & (events | POLLHUP | POLLERR);
}

static int usock_stat(struct file *f, struct stat *st)
{
	struct usock *u = f->priv;

	memset(st, 0, sizeof(*st));
	st->st_mode = S_IFSOCK | 0777;
	st->st_ino = u->ino;
	st->st_nlink = 1;
	st->st_blksize = 4096;
	st->st_dev = 8;
	return 0;
}

static void usock_release(struct file *f)
{
	struct usock *u = f->priv;

	if (u->peer)
		u->peer->peer = NULL;
	while (u->head) {
		struct umsg *m = u->head;
		u->head = m->next;
		umsg_free(m);
	}
	free(u);
	sentry_wake();
}

static long usock_ioctl(struct task *t, struct file *f, unsigned long cmd,
			uint64_t arg)
{
	struct usock *u = f->priv;

	if (cmd == FIONREAD) {
		int n = (int)(u->type == SOCK_STREAM ? u->bytes :
			      u->head		     ? u->head->len :
						       0);
		return task_write(t, arg, &n, sizeof(n));
	}
	return -ENOTTY;
}

static const struct file_ops usock_ops = {
	.read = usock_read,
	.write = usock_write,
	.poll = usock_poll,
	.ioctl = usock_ioctl,
	.stat = usock_stat,
	.release = usock_release,
};

long sys_socketpair(struct task *t, struct syscall_args *a)
{
	int domain = (int)a->a[0], type = (int)a->a[1], proto = (int)a->a[2];
	int base = type & ~(SOCK_NONBLOCK | SOCK_CLOEXEC);
	struct usock *u[2];
	struct file *f[2];
	int fds[2], i;

	if (domain != AF_UNIX)
		return sys_socket(t, a); /* refused, with an audit line */
	if (base != SOCK_STREAM && base != SOCK_DGRAM && base != SOCK_SEQPACKET)
		return -EINVAL;
	if (proto != 0 && proto != PF_UNIX)
		return -EPROTONOSUPPORT;
	for (i = 0; i < 2; i++) {
		u[i] = calloc(1, sizeof(*u[i]));
		f[i] = u[i] ? file_new(&usock_ops,
				       O_RDWR | ((type & SOCK_NONBLOCK) ?
							 O_NONBLOCK :
							 0)) :
			      NULL;
		if (!f[i]) {
			free(u[i]);
			while (i--)
				file_put(f[i]);
			return -ENOMEM;
		}
		u[i]->type = base;
		u[i]->file = f[i];
		u[i]->cred_pid = t->proc->pid;
		u[i]->cred_uid = t->proc->cred.euid;
		u[i]->cred_gid = t->proc->cred.egid;
		u[i]->ino = usock_ino++;
		f[i]->priv = u[i];
		f[i]->stream = true;
	}
	u[0]->peer = u[1];
	u[1]->peer = u[0];
	fds[0] = fd_install(t, f[0], (type & SOCK_CLOEXEC) != 0, 0);
	fds[1] = fds[0] < 0 ?
			 fds[0] :
			 fd_install(t, f[1], (type & SOCK_CLOEXEC) != 0, 0);
	file_put(f[0]);
	file_put(f[1]);
	if (fds[1] < 0) {
		if (fds[0] >= 0)
			fd_close(t, fds[0]);
		return fds[1];
	}
	if (task_write(t, a->a[3], fds, sizeof(fds)) < 0) {
		fd_close(t, fds[0]);
		fd_close(t, fds[1]);
		return -EFAULT;
	}
	return 0;
}

static struct file *sock_of(struct task *t, int fd, long *err)
{
	struct file *f = fd_get(t, fd);

	*err = !f ? -EBADF : !file_is_socket(f) ? -ENOTSOCK : 0;
	return *err ? NULL : f;
}

#define XFER_MAX USOCK_BUF
static char xfer[XFER_MAX];

long sys_sendto(struct task *t, struct syscall_args *a)
{
	size_t n = a->a[2] > XFER_MAX ? XFER_MAX : a->a[2];
	long err;
	struct file *f = sock_of(t, (int)a->a[0], &err);

	if (!f)
		return err;
	if (a->a[4])
		return ((struct usock *)f->priv)->type == SOCK_STREAM ?
			       -EISCONN :
			       -EISCONN;
	if (n && task_read(t, a->a[1], xfer, n) < 0)
		return -EFAULT;
	return usend(t, f, xfer, n, (int)a->a[3]);
}

static long put_unnamed(struct task *t, uint64_t uaddr, uint64_t ulen)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	socklen_t len, want = sizeof(sa_family_t);

	if (!uaddr || !ulen)
		return 0;
	if (task_read(t, ulen, &len, sizeof(len)) < 0)
		return -EFAULT;
	if ((int)len < 0)
		return -EINVAL;
	if (task_write(t, uaddr, &sa, len < want ? len : want) < 0 ||
	    task_write(t, ulen, &want, sizeof(want)) < 0)
		return -EFAULT;
	return 0;
}

long sys_recvfrom(struct task *t, struct syscall_args *a)
{
	size_t n = a->a[2] > XFER_MAX ? XFER_MAX : a->a[2];
	long err, r;
	bool trunc;
	struct file *f = sock_of(t, (int)a->a[0], &err);

	if (!f)
		return err;
	r = urecv(f, xfer, n, (int)a->a[3], &trunc, NULL);
	if (r <= 0 || r == SYS_BLOCK)
		return r;
	if (task_write(t, a->a[1], xfer, (size_t)r < n ? (size_t)r : n) < 0)
		return -EFAULT;
	err = put_unnamed(t, a->a[4], a->a[5]);
	return err < 0 ? err : r;
}

/* Gather or scatter a msghdr's iovecs through xfer. */
static long read_msghdr(struct task *t, uint64_t umsg, struct msghdr *mh,
			struct iovec *iov, size_t *total)
{
	size_t i;

	if (task_read(t, umsg, mh, sizeof(*mh)) < 0)
		return -EFAULT;
	if (mh->msg_iovlen > 64)
		return -EMSGSIZE;
	if (task_read(t, (uint64_t)(uintptr_t)mh->msg_iov, iov,
		      sizeof(*iov) * mh->msg_iovlen) < 0)
		return -EFAULT;
	*total = 0;
	for (i = 0; i < mh->msg_iovlen; i++)
		*total += iov[i].iov_len;
	return 0;
}

/* SCM_RIGHTS of a guest msghdr: references to the files its fds name. */
static long read_rights(struct task *t, const struct msghdr *mh,
			struct file ***out, int *nout)
{
	char cbuf[4096];
	struct msghdr km = { .msg_control = cbuf,
			     .msg_controllen = mh->msg_controllen };
	struct cmsghdr *c;
	struct file **files = NULL;
	int n = 0;

	*out = NULL;
	*nout = 0;
	if (mh->msg_controllen > sizeof(cbuf))
		return -ENOBUFS;
	if (task_read(t, (uint64_t)(uintptr_t)mh->msg_control, cbuf,
		      mh->msg_controllen) < 0)
		return -EFAULT;
	for (c = CMSG_FIRSTHDR(&km); c; c = CMSG_NXTHDR(&km, c)) {
		size_t k, cnt;
		if (c->cmsg_len < CMSG_LEN(0) ||
		    (char *)c + c->cmsg_len > cbuf + mh->msg_controllen)
			goto einval;
		if (c->cmsg_level != SOL_SOCKET)
			goto einval;
		if (c->cmsg_type == SCM_CREDENTIALS)
			continue; /* the receiver never asks (no SO_PASSCRED) */
		if (c->cmsg_type != SCM_RIGHTS)
			goto einval;
		cnt = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		if (n + cnt > 253) /* SCM_MAX_FD */
			goto einval;
		{
			struct file **nf =
				realloc(files, (n + cnt) * sizeof(*nf));
			if (!nf)
				goto enomem;
			files = nf;
		}
		for (k = 0; k < cnt; k++) {
			int fd;
			struct file *f;
			memcpy(&fd, CMSG_DATA(c) + k * sizeof(int),
			       sizeof(int));
			f = fd_get(t, fd);
			if (!f) {
				put_files(files, n);
				return -EBADF;
			}
			files[n++] = file_get(f);
		}
	}
	*out = files;
	*nout = n;
	return 0;
einval:
	put_files(files, n);
	return -EINVAL;
enomem:
	put_files(files, n);
	return -ENOMEM;
}

long sys_sendmsg(struct task *t, struct syscall_args *a)
{
	struct msghdr mh;
	struct iovec iov[64];
	struct file **files = NULL;
	size_t total, done = 0, i;
	int nfiles = 0;
	long err, r;
	struct file *f = sock_of(t, (int)a->a[0], &err);

	if (!f)
		return err;
	err = read_msghdr(t, a->a[1], &mh, iov, &total);
	if (err < 0)
		return err;
	if (mh.msg_name)
		return -EISCONN;
	for (i = 0; i < mh.msg_iovlen && done < XFER_MAX; i++) {
		size_t c = iov[i].iov_len;
		if (c > XFER_MAX - done)
			c = XFER_MAX - done;
		if (c && task_read(t, (uint64_t)(uintptr_t)iov[i].iov_base,
				   xfer + done, c) < 0)
			return -EFAULT;
		done += c;
	}
	if (mh.msg_controllen) {
		err = read_rights(t, &mh, &files, &nfiles);
		if (err < 0)
			return err;
	}
	r = usend_files(t, f, xfer, done, (int)a->a[2], files, nfiles);
	if (r < 0 || r == SYS_BLOCK) {
		/* Not sent: the references go back (a retry reads them anew). */
		put_files(files, nfiles);
	}
	return r;
}

/* Install received files in t and describe them in the guest's control
 * buffer. What does not fit is closed and MSG_CTRUNC set. */
static long deliver_rights(struct task *t, struct msghdr *mh, struct rfiles *rf,
			   bool cloexec)
{
	char cbuf[CMSG_SPACE(253 * sizeof(int))];
	size_t room = mh->msg_controllen, fit;
	struct cmsghdr *c = (struct cmsghdr *)cbuf;
	int i, fd, n = 0;

	if (!rf->files) {
		mh->msg_controllen = 0;
		return 0;
	}
	fit = room >= CMSG_LEN(0) ? (room - CMSG_LEN(0)) / sizeof(int) : 0;
	memset(cbuf, 0, sizeof(cbuf));
	for (i = 0; i < rf->n; i++) {
		if ((size_t)n < fit &&
		    (fd = fd_install(t, rf->files[i], cloexec, 0)) >= 0)
			memcpy(CMSG_DATA(c) + (size_t)n++ * sizeof(int), &fd,
			       sizeof(int));
		else
			mh->msg_flags |= MSG_CTRUNC;
		file_put(rf->files[i]);
	}
	free(rf->files);
	if (!n) {
		mh->msg_controllen = 0;
		return 0;
	}
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN((size_t)n * sizeof(int));
	if (task_write(t, (uint64_t)(uintptr_t)mh->msg_control, cbuf,
		       CMSG_SPACE((size_t)n * sizeof(int)) <= room ?
			       CMSG_SPACE((size_t)n * sizeof(int)) :
			       c->cmsg_len) < 0)
		return -EFAULT;
	mh->msg_controllen = CMSG_SPACE((size_t)n * sizeof(int)) <= room ?
				     CMSG_SPACE((size_t)n * sizeof(int)) :
				     c->cmsg_len;
	return 0;
}

long sys_recvmsg(struct task *t, struct syscall_args *a)
{
	struct msghdr mh;
	struct iovec iov[64];
	struct rfiles rf = { NULL, 0 };
	size_t total, done = 0, i;
	long err, r;
	bool trunc;
	int flags = (int)a->a[2];
	struct file *f = sock_of(t, (int)a->a[0], &err);

	if (!f)
		return err;
	err = read_msghdr(t, a->a[1], &mh, iov, &total);
	if (err < 0)
		return err;
	r = urecv(f, xfer, total > XFER_MAX ? XFER_MAX : total, flags, &trunc,
		  &rf);
	if (r < 0 || r == SYS_BLOCK)
		return r;
	for (i = 0; i < mh.msg_iovlen && done < (size_t)r; i++) {
		size_t c = iov[i].iov_len;
		if (c > (size_t)r - done)
			c = (size_t)r - done;
		if (c && task_write(t, (uint64_t)(uintptr_t)iov[i].iov_base,
				    xfer + done, c) < 0) {
			/* The message is consumed (as Linux's is); its
			 * files are closed, not leaked. */
			put_files(rf.files, rf.n);
			return -EFAULT;
		}
		done += c;
	}
	mh.msg_flags = trunc ? MSG_TRUNC : 0;
	err = deliver_rights(t, &mh, &rf, (flags & MSG_CMSG_CLOEXEC) != 0);
	if (err < 0)
		return err;
	if (mh.msg_name && mh.msg_namelen) {
		struct sockaddr_un sa = { .sun_family = AF_UNIX };
		socklen_t want = sizeof(sa_family_t);
		if (task_write(t, (uint64_t)(uintptr_t)mh.msg_name, &sa,
			       mh.msg_namelen < want ? mh.msg_namelen : want) <
		    0)
			return -EFAULT;
		mh.msg_namelen = want;
	}
	if (task_write(t, a->a[1], &mh, sizeof(mh)) < 0)
		return -EFAULT;
	return r;
}

long sys_shutdown(struct task *t, struct syscall_args *a)
{
	long err;
	struct file *f = sock_of(t, (int)a->a[0], &err);
	struct usock *u;
	int how = (int)a->a[1];

	if (!f)
		return err;
	if (how < SHUT_RD || how > SHUT_RDWR)
		return -EINVAL;
	u = f->priv;
	if (how != SHUT_WR)
		u->shut_rd = true;
	if (how != SHUT_RD) {
		u->shut_wr = true;
		if (u->peer)
			u->peer->peer_shut_wr = true;
	}
	sentry_wake();
	return 0;
}

long sys_getsockopt(struct task *t, struct syscall_args *a)
{
	int level = (int)a->a[1], opt = (int)a->a[2];
	long err;
	struct file *f = sock_of(t, (int)a->a[0], &err);
	struct usock *u;
	socklen_t len;
	int v;

	if (!f)
		return err;
	u = f->priv;
	if (task_read(t, a->a[4], &len, sizeof(len)) < 0)
		return -EFAULT;
	if ((int)len < 0)
		return -EINVAL;
	if (level == SOL_SOCKET && opt == SO_PEERCRED) {
		struct ucred c = { 0, 0, 0 };
		if (u->peer) {
			c.pid = u->peer->cred_pid;
			c.uid = u->peer->cred_uid;
			c.gid = u->peer->cred_gid;
		}
		if (len > sizeof(c))
			len = sizeof(c);
		if (task_write(t, a->a[3], &c, len) < 0 ||
		    task_write(t, a->a[4], &len, sizeof(len)) < 0)
			return -EFAULT;
		return 0;
	}
	if (level != SOL_SOCKET)
		goto unsupported;
	switch (opt) {
	case SO_TYPE:
		v = u->type;
		break;
	case SO_DOMAIN:
		v = AF_UNIX;
		break;
	case SO_PROTOCOL:
	case SO_ERROR:
	case SO_ACCEPTCONN:
	case SO_PASSCRED:
		v = 0;
		break;
	case SO_RCVBUF:
	case SO_SNDBUF:
		v = USOCK_BUF;
		break;
	default:
		goto unsupported;
	}
	if (len > sizeof(v))
		len = sizeof(v);
	if (task_write(t, a->a[3], &v, len) < 0 ||
	    task_write(t, a->a[4], &len, sizeof(len)) < 0)
		return -EFAULT;
	return 0;
unsupported:
	audit_log(
		"\"event\":\"sockopt-unimplemented\",\"pid\":%d,\"level\":%d,\"opt\":%d",
		t->proc->pid, level, opt);
	return -ENOPROTOOPT;
}

long sys_setsockopt(struct task *t, struct syscall_args *a)
{
	int level = (int)a->a[1], opt = (int)a->a[2];
	long err;
	struct file *f = sock_of(t, (int)a->a[0], &err);

	if (!f)
		return err;
	if (level == SOL_SOCKET &&
	    (opt == SO_RCVBUF || opt == SO_SNDBUF || opt == SO_PASSCRED ||
	     opt == SO_REUSEADDR || opt == SO_KEEPALIVE ||
	     opt == SO_RCVBUFFORCE || opt == SO_SNDBUFFORCE))
		return 0; /* accepted; buffers stay the sentry's size */
	audit_log(
		"\"event\":\"sockopt-unimplemented\",\"pid\":%d,\"level\":%d,\"opt\":%d",
		t->proc->pid, level, opt);
	return -ENOPROTOOPT;
}

static long sock_name(struct task *t, struct syscall_args *a)
{
	long err;
	struct file *f = sock_of(t, (int)a->a[0], &err);

	if (!f)
		return err;
	return put_unnamed(t, a->a[1], a->a[2]);
}

long sys_getsockname(struct task *t, struct syscall_args *a)
{
	return sock_name(t, a);
}

long sys_getpeername(struct task *t, struct syscall_args *a)
{
	long err;
	struct file *f = sock_of(t, (int)a->a[0], &err);

	if (!f)
		return err;
	if (!((struct usock *)f->priv)->peer)
		return -ENOTCONN;
	return sock_name(t, a);
}
