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
	char data[];
};

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

/* Send n bytes of buf to u's peer. Returns bytes, -errno or SYS_BLOCK. */
static long usend(struct task *t, struct file *f, const void *buf, size_t n,
		  int flags)
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
	room = p->bytes < USOCK_BUF ? USOCK_BUF - p->bytes : 0;
	if (room == 0 || (u->type != SOCK_STREAM && room < n))
		return nonblock ? -EAGAIN : SYS_BLOCK;
	if (u->type == SOCK_STREAM && n > room)
		n = room; /* a partial write, as a full socket buffer gives */
	if (n == 0 && u->type == SOCK_STREAM)
		return 0;
	m = malloc(sizeof(*m) + n);
	if (!m)
		return -ENOMEM;
	m->next = NULL;
	m->len = n;
	m->off = 0;
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

/* Receive into buf. *trunc is set when a datagram did not fit. */
static long urecv(struct file *f, void *buf, size_t n, int flags, bool *trunc)
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
		m = u->head;
		done = m->len < n ? m->len : n;
		memcpy(buf, m->data, done);
		if (m->len > n)
			*trunc = true;
		if (!(flags & MSG_PEEK)) {
			u->head = m->next;
			if (!u->head)
				u->tail = NULL;
			u->bytes -= m->len;
			free(m);
			sentry_wake();
		}
		return (flags & MSG_TRUNC) ? (long)m->len : (long)done;
	}
	for (m = u->head; m && done < n;) {
		size_t c = m->len - m->off;
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
		if (m->off == m->len) {
			u->head = m->next;
			if (!u->head)
				u->tail = NULL;
			free(m);
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
	return urecv(f, buf, n, 0, &trunc);
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
	if (u->peer && !u->shut_wr && !u->peer->shut_rd &&
	    u->peer->bytes < USOCK_BUF)
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
		free(m);
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
	r = urecv(f, xfer, n, (int)a->a[3], &trunc);
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

long sys_sendmsg(struct task *t, struct syscall_args *a)
{
	struct msghdr mh;
	struct iovec iov[64];
	size_t total, done = 0, i;
	long err;
	struct file *f = sock_of(t, (int)a->a[0], &err);

	if (!f)
		return err;
	err = read_msghdr(t, a->a[1], &mh, iov, &total);
	if (err < 0)
		return err;
	if (mh.msg_controllen) {
		audit_log(
			"\"event\":\"unsupported\",\"pid\":%d,\"what\":\"SCM control "
			"messages on AF_UNIX\"",
			t->proc->pid);
		return -EOPNOTSUPP;
	}
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
	return usend(t, f, xfer, done, (int)a->a[2]);
}

long sys_recvmsg(struct task *t, struct syscall_args *a)
{
	struct msghdr mh;
	struct iovec iov[64];
	size_t total, done = 0, i;
	long err, r;
	bool trunc;
	struct file *f = sock_of(t, (int)a->a[0], &err);

	if (!f)
		return err;
	err = read_msghdr(t, a->a[1], &mh, iov, &total);
	if (err < 0)
		return err;
	r = urecv(f, xfer, total > XFER_MAX ? XFER_MAX : total, (int)a->a[2],
		  &trunc);
	if (r < 0 || r == SYS_BLOCK)
		return r;
	for (i = 0; i < mh.msg_iovlen && done < (size_t)r; i++) {
		size_t c = iov[i].iov_len;
		if (c > (size_t)r - done)
			c = (size_t)r - done;
		if (c && task_write(t, (uint64_t)(uintptr_t)iov[i].iov_base,
				    xfer + done, c) < 0)
			return -EFAULT;
		done += c;
	}
	mh.msg_controllen = 0;
	mh.msg_flags = trunc ? MSG_TRUNC : 0;
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
