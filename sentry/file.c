/* sentry/file.c: open file descriptions, fd tables, gofer-backed files and
 * the host streams behind guest fds 0, 1 and 2. */
#include "sentry/vfs.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/inotify.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <termios.h>
#include <unistd.h>

#include "sentry/fs_tmpfs.h"
#include "sentry/limits.h"
#include "sentry/p9client.h"

static long files_live; /* open file descriptions, for FILES_MAX */

struct file *file_new(const struct file_ops *ops, int flags)
{
	struct file *f;

	if (files_live >= FILES_MAX) {
		errno = ENFILE;
		return NULL;
	}
	f = calloc(1, sizeof(*f));
	if (!f) {
		errno = ENOMEM;
		return NULL;
	}
	files_live++;
	f->ns = vfs_ns(); /* a member's namespace lives while it is open */
	f->ns->nfiles++;
	f->refs = 1;
	f->ops = ops;
	f->flags = flags;
	f->hostfd = -1;
	return f;
}

struct file *file_get(struct file *f)
{
	if (f)
		f->refs++;
	return f;
}

void file_put(struct file *f)
{
	if (!f || --f->refs > 0)
		return;
	/* Like Linux, epoll forgets a file when its last descriptor goes. */
	if (f->epitems)
		epoll_file_gone(f);
	locks_file_gone(f);
	notify_file_gone(f);
	if (f->vn && inotify_active())
		inotify_report_vn(f->vn, (f->flags & O_ACCMODE) == O_RDONLY ?
						 IN_CLOSE_NOWRITE :
						 IN_CLOSE_WRITE);
	if (f->ops && f->ops->release)
		f->ops->release(f);
	if (f->hostfd >= 0 && !f->hostfd_shared)
		close(f->hostfd);
	if (f->hostfd >= 0 && f->tmpfs)
		tmpfs_file_unpin(f);
	if (f->hostfd >= 0 && f->hostfd_shared && f->vn && !f->tmpfs)
		vnode_hostfd_put(f->vn);
	vnode_put(f->vn);
	free(f->data);
	file_discard(f);
}

long files_open(void)
{
	return files_live;
}

void file_discard(struct file *f)
{
	if (f) {
		struct mntns *ns = f->ns;

		files_live--;
		free(f);
		ns->nfiles--;
		vfs_ns_check(ns);
	}
}

/* ---- fd tables ---------------------------------------------------------- */

/* Slots of all tables, for FDT_SLOTS_TOTAL; they are also charged to the
 * sentry's share of the memory limit (limits_heap_charge), as a fork bomb
 * whose every process holds a high fd would otherwise make the sentry
 * hold 64 MiB under any limit. */
static long fdt_slots;

static int64_t slots_bytes(long n)
{
	return (int64_t)n * (int64_t)sizeof(struct fdent);
}

struct fdtable *fdtable_new(void)
{
	struct fdtable *fdt = calloc(1, sizeof(*fdt));

	if (fdt)
		fdt->refs = 1;
	return fdt;
}

void fdtable_put(struct fdtable *fdt)
{
	int i;

	if (!fdt || --fdt->refs > 0)
		return;
	for (i = 0; i < fdt->cap; i++)
		file_put(fdt->ents[i].f);
	fdt_slots -= fdt->cap;
	limits_heap_charge(-slots_bytes(fdt->cap));
	free(fdt->ents);
	free(fdt);
}

/* The slots a copy of src takes: up to its highest open fd, in the
 * powers of two fdt_grow uses (a table that grew once and was closed
 * down again is not copied whole). */
static int dup_cap(const struct fdtable *src)
{
	int hi = src->cap, cap = 64;

	while (hi > 0 && !src->ents[hi - 1].f)
		hi--;
	if (hi == 0)
		return 0;
	while (cap < hi)
		cap *= 2;
	return cap;
}

bool fdtable_dup_fits(const struct fdtable *src)
{
	return fdt_slots + dup_cap(src) <= FDT_SLOTS_TOTAL &&
	       (uint64_t)slots_bytes(dup_cap(src)) <= limits_heap_room();
}

struct fdtable *fdtable_dup(struct fdtable *src)
{
	int i, cap = dup_cap(src);
	struct fdtable *fdt;

	if (fdt_slots + cap > FDT_SLOTS_TOTAL ||
	    !limits_heap_charge(slots_bytes(cap)))
		return NULL;
	fdt = fdtable_new();
	if (fdt && cap) {
		fdt->ents = calloc((size_t)cap, sizeof(*fdt->ents));
		if (!fdt->ents) {
			free(fdt);
			fdt = NULL;
		}
	}
	if (!fdt) {
		limits_heap_charge(-slots_bytes(cap));
		return NULL;
	}
	fdt->cap = cap;
	fdt_slots += cap;
	for (i = 0; i < cap && i < src->cap; i++) {
		fdt->ents[i] = src->ents[i];
		file_get(fdt->ents[i].f);
	}
	return fdt;
}

struct file *fd_get(struct task *t, int fd)
{
	struct fdtable *fdt = t->proc->fdt;

	if (!fdt || fd < 0 || fd >= fdt->cap)
		return NULL;
	return fdt->ents[fd].f;
}

static int fd_limit(struct task *t)
{
	uint64_t lim = t->proc->rlim[RLIMIT_NOFILE].cur;

	return lim > FDT_MAX ? FDT_MAX : (int)lim;
}

static int fdt_grow(struct fdtable *fdt, int need)
{
	int ncap = fdt->cap ? fdt->cap : 64;
	struct fdent *n;

	while (ncap <= need)
		ncap *= 2;
	if (ncap > FDT_MAX)
		ncap = FDT_MAX;
	if (need >= ncap)
		return -EMFILE;
	if (fdt_slots + (ncap - fdt->cap) > FDT_SLOTS_TOTAL ||
	    !limits_heap_charge(slots_bytes(ncap - fdt->cap)))
		return -ENOMEM;
	n = realloc(fdt->ents, (size_t)ncap * sizeof(*n));
	if (!n) {
		limits_heap_charge(-slots_bytes(ncap - fdt->cap));
		return -ENOMEM;
	}
	memset(n + fdt->cap, 0, (size_t)(ncap - fdt->cap) * sizeof(*n));
	fdt_slots += ncap - fdt->cap;
	fdt->ents = n;
	fdt->cap = ncap;
	return 0;
}

int fd_install(struct task *t, struct file *f, bool cloexec, int minfd)
{
	struct fdtable *fdt = t->proc->fdt;
	int fd, lim = fd_limit(t);

	for (fd = minfd; fd < lim; fd++) {
		if (fd >= fdt->cap) {
			int rc = fdt_grow(fdt, fd);
			if (rc < 0)
				return rc;
		}
		if (!fdt->ents[fd].f) {
			fdt->ents[fd].f = file_get(f);
			fdt->ents[fd].cloexec = cloexec;
			return fd;
		}
	}
	return -EMFILE;
}

/* A descriptor of f closes in p: its POSIX locks go, and the file hears
 * (file_ops.flush), whether or not it was the last descriptor. */
static void fd_closed_by(struct process *p, struct file *f)
{
	locks_closed_by(p, f);
	if (f->ops && f->ops->flush)
		f->ops->flush(p, f);
}

/* Install f at exactly fd, closing what was there (dup2 semantics). */
int fd_install_at(struct task *t, struct file *f, int fd, bool cloexec)
{
	struct fdtable *fdt = t->proc->fdt;
	struct file *old;

	if (fd < 0 || fd >= fd_limit(t))
		return -EBADF;
	if (fd >= fdt->cap) {
		int rc = fdt_grow(fdt, fd);
		if (rc < 0)
			return rc;
	}
	old = fdt->ents[fd].f;
	fdt->ents[fd].f = file_get(f);
	fdt->ents[fd].cloexec = cloexec;
	if (old)
		fd_closed_by(t->proc, old);
	file_put(old);
	sentry_wake();
	return fd;
}

int fd_close(struct task *t, int fd)
{
	struct fdtable *fdt = t->proc->fdt;
	struct file *f;

	if (!fdt || fd < 0 || fd >= fdt->cap || !fdt->ents[fd].f)
		return -EBADF;
	f = fdt->ents[fd].f;
	fdt->ents[fd].f = NULL;
	fd_closed_by(t->proc, f);
	file_put(f);
	sentry_wake();
	return 0;
}

void fd_close_on_exec(struct process *p, struct fdtable *fdt)
{
	int i;

	for (i = 0; i < fdt->cap; i++) {
		if (fdt->ents[i].f && fdt->ents[i].cloexec) {
			fd_closed_by(p, fdt->ents[i].f);
			file_put(fdt->ents[i].f);
			fdt->ents[i].f = NULL;
		}
	}
	sentry_wake();
}

bool *fd_cloexec_ptr(struct task *t, int fd)
{
	struct fdtable *fdt = t->proc->fdt;

	if (!fdt || fd < 0 || fd >= fdt->cap || !fdt->ents[fd].f)
		return NULL;
	return &fdt->ents[fd].cloexec;
}

long file_read_isdir(struct task *t, struct file *f, void *buf, size_t n,
		     int64_t *off)
{
	(void)t;
	(void)f;
	(void)buf;
	(void)n;
	(void)off;
	return -EISDIR;
}

long file_data_read(struct task *t, struct file *f, void *buf, size_t n,
		    int64_t *off)
{
	size_t o;

	(void)t;
	if (!off)
		return -ESPIPE;
	if (*off < 0)
		return -EINVAL;
	o = (size_t)*off;
	if (o >= f->data_len)
		return 0;
	if (n > f->data_len - o)
		n = f->data_len - o;
	memcpy(buf, f->data + o, n);
	*off += (int64_t)n;
	return (long)n;
}

long file_write_ebadf(struct task *t, struct file *f, const void *buf, size_t n,
		      int64_t *off)
{
	(void)t;
	(void)f;
	(void)buf;
	(void)n;
	(void)off;
	return -EBADF;
}

/* ---- gofer files ---------------------------------------------------------- */

long file_hostfd_read(struct task *t, struct file *f, void *buf, size_t n,
		      int64_t *off)
{
	ssize_t r;

	(void)t;
	if (S_ISDIR(f->vn->mode))
		return -EISDIR;
	r = pread(f->hostfd, buf, n, *off);
	if (r < 0)
		return -errno;
	*off += r;
	return r;
}

static long gofer_write(struct task *t, struct file *f, const void *buf,
			size_t n, int64_t *off)
{
	(void)t;
	(void)f;
	(void)buf;
	(void)n;
	(void)off;
	return -EBADF; /* opened read-only: the rootfs is read-only */
}

short file_always_ready(struct file *f, short events)
{
	(void)f;
	return events & (POLLIN | POLLOUT | POLLRDNORM | POLLWRNORM);
}

static long gofer_getdents(struct task *t, struct file *f,
			   struct dirent_sink *s)
{
	char buf[32768];
	size_t room = s->cap - s->len;
	long n;

	(void)t;
	if (!S_ISDIR(f->vn->mode))
		return -ENOTDIR;
	/* The host fd's own offset is this open file's position. Host records
	 * are linux_dirent64 already, so a host batch no larger than the
	 * guest's room always fits. */
	n = syscall(SYS_getdents64, f->hostfd, buf,
		    room < sizeof(buf) ? room : sizeof(buf));
	if (n < 0)
		return -errno;
	memcpy((char *)s->buf + s->len, buf, (size_t)n);
	s->len += (size_t)n;
	return (long)s->len;
}

static int gofer_fstat(struct file *f, struct stat *st)
{
	return vfs_stat(f->vn, st);
}

static const struct file_ops gofer_ops = {
	.read = file_hostfd_read,
	.write = gofer_write,
	.poll = file_always_ready,
	.getdents = gofer_getdents,
	.stat = gofer_fstat,
};

static int gofer_open(struct vnode *vn, int flags, struct file **out)
{
	struct file *f;
	int rc, hostfd;

	if ((flags & O_ACCMODE) != O_RDONLY || (flags & (O_TRUNC | O_CREAT)))
		return -EROFS;
	if (S_ISLNK(vn->mode))
		return -ELOOP;
	if (!S_ISREG(vn->mode) && !S_ISDIR(vn->mode))
		return -ENXIO; /* fifos and devices of the rootfs are not served */
	if ((flags & O_DIRECTORY) && !S_ISDIR(vn->mode))
		return -ENOTDIR;
	f = file_new(&gofer_ops, flags & ~(O_CREAT | O_EXCL | O_NOCTTY |
					   O_TRUNC | O_CLOEXEC));
	if (!f)
		return -errno;
	if (S_ISREG(vn->mode)) {
		/* One host fd per regular file, shared by every open: reads use
		 * pread at the guest's own offset. */
		hostfd = vnode_hostfd_get(vn);
		if (hostfd < 0) {
			file_put(f);
			return hostfd;
		}
		f->hostfd = hostfd;
		f->hostfd_shared = true;
	} else if (!(flags & O_PATH)) {
		uint32_t fid;
		rc = p9c_clone(vn_p9(vn), vn->fid, &fid);
		if (rc < 0) {
			file_put(f);
			return rc;
		}
		rc = p9c_lopen(vn_p9(vn), fid, O_RDONLY | O_DIRECTORY, &hostfd);
		p9c_clunk(vn_p9(vn), fid);
		if (rc < 0) {
			file_put(f);
			return rc;
		}
		f->hostfd = hostfd;
	}
	f->vn = vnode_get(vn);
	*out = f;
	return 0;
}

/* ---- files of a host directory mounted ro or rw --------------------------
 * Each open has a host fd of its own, opened by the mount's gofer with the
 * guest's access mode (a rw gofer only gives write access). */

static long host_file_write(struct task *t, struct file *f, const void *buf,
			    size_t n, int64_t *off)
{
	int64_t at = *off;
	ssize_t r;

	(void)t;
	if (f->flags & O_APPEND) {
		struct stat st;
		if (fstat(f->hostfd, &st) < 0)
			return -errno;
		at = st.st_size;
	}
	r = pwrite(f->hostfd, buf, n, at);
	if (r < 0)
		return r == -1 && errno == EFBIG ? -EFBIG : -errno;
	*off = at + r;
	return r;
}

static int host_file_fstat(struct file *f, struct stat *st)
{
	/* The open fd itself: it stays valid after an unlink. */
	if (fstat(f->hostfd, st) == 0) {
		st->st_dev = f->vn->mnt->dev;
		return 0;
	}
	return vfs_stat(f->vn, st);
}

static const struct file_ops host_file_ops = {
	.read = file_hostfd_read,
	.write = host_file_write,
	.poll = file_always_ready,
	.getdents = gofer_getdents,
	.stat = host_file_fstat,
};

static int host_open(struct vnode *vn, int flags, struct file **out)
{
	bool writing = (flags & O_ACCMODE) != O_RDONLY || (flags & O_TRUNC);
	struct file *f;
	int rc, hostfd;

	if (writing && vfs_host_readonly(vn))
		return -EROFS;
	if (S_ISLNK(vn->mode))
		return -ELOOP;
	if (!S_ISREG(vn->mode) && !S_ISDIR(vn->mode))
		return -ENXIO; /* host FIFOs and devices are not served */
	if ((flags & O_DIRECTORY) && !S_ISDIR(vn->mode))
		return -ENOTDIR;
	if (vn->hostfd >= 0) {
		/* Just made by Tlcreate (fs_create): its fd is this open's,
		 * whatever the new file's mode says (as open(O_CREAT)). */
		hostfd = vn->hostfd;
		vn->hostfd = -1;
	} else {
		rc = p9c_lopen(vn_p9(vn), vn->fid,
			       S_ISDIR(vn->mode) ?
				       O_RDONLY | O_DIRECTORY :
				       (flags & (O_ACCMODE | O_TRUNC | O_SYNC |
						 O_DSYNC)),
			       &hostfd);
		if (rc < 0)
			return rc;
	}
	f = file_new(&host_file_ops, flags & ~(O_CREAT | O_EXCL | O_NOCTTY |
					       O_TRUNC | O_CLOEXEC));
	if (!f) {
		close(hostfd);
		return -errno;
	}
	f->hostfd = hostfd;
	f->vn = vnode_get(vn);
	*out = f;
	return 0;
}

static int path_open(struct vnode *vn, int flags, struct file **out)
{
	struct file *f = file_new(NULL, O_PATH | (flags & O_NOFOLLOW));

	if (!f)
		return -errno;
	f->vn = vnode_get(vn);
	*out = f;
	return 0;
}

int vfs_open(struct task *t, struct vnode *vn, int flags, struct file **out)
{
	bool writing = (flags & O_ACCMODE) != O_RDONLY || (flags & O_TRUNC);

	if (flags & O_PATH)
		return path_open(vn, flags, out);
	/* Under a readonlyPaths bind (procfs's /proc/sys, say): EROFS
	 * before any filesystem is asked; devices, FIFOs and sockets stay
	 * writable, as on a read-only mount of Linux (a directory: EISDIR
	 * first, from the filesystem). tmpfs decides for itself: a rw file
	 * bind there stays writable (tmpfs_readonly). */
	if (writing && S_ISREG(vn->mode) && vn->kind != VN_TMPFS &&
	    vfs_bound_ro(vn))
		return -EROFS;
	switch (vn->kind) {
	case VN_GOFER:
		return gofer_open(vn, flags, out);
	case VN_HOST:
		return host_open(vn, flags, out);
	case VN_PROC: /* which files it writes is its own to say */
		return procfs_open(t, vn, flags, out);
	case VN_DEV:
		return devfs_open(t, vn, flags, out);
	case VN_TMPFS:
		return tmpfs_open(t, vn, flags, out);
	case VN_MQUEUE:
		return mqueuefs_open(t, vn, flags, out);
	case VN_SYS:
		return sysfs_open(t, vn, flags, out);
	}
	return -ENXIO;
}

/* ---- host streams (the caller's stdio) ---------------------------------- */

static long host_read(struct task *t, struct file *f, void *buf, size_t n,
		      int64_t *off)
{
	struct pollfd p = { f->hostfd, POLLIN, 0 };
	ssize_t r;

	(void)off;
	/* Never block the sentry: wait in its loop instead. */
	if (poll(&p, 1, 0) == 0) {
		if (f->flags & O_NONBLOCK)
			return -EAGAIN;
		t->wait_hostfd = f->hostfd;
		t->wait_events = POLLIN;
		return SYS_BLOCK;
	}
	do
		r = read(f->hostfd, buf, n);
	while (r < 0 && errno == EINTR);
	if (r < 0 && errno == EAGAIN && !(f->flags & O_NONBLOCK)) {
		t->wait_hostfd = f->hostfd;
		t->wait_events = POLLIN;
		return SYS_BLOCK;
	}
	return r < 0 ? -errno : r;
}

/* sock: a socket could not be reopened, so its description is the
 * caller's and may block: it is sent to without waiting. Anything else
 * was reopened non-blocking. */
static long host_write_to(struct task *t, struct file *f, const void *buf,
			  size_t n, bool sock)
{
	ssize_t r;

	do
		r = sock ? send(f->hostfd, buf, n, MSG_DONTWAIT) :
			   write(f->hostfd, buf, n);
	while (r < 0 && errno == EINTR);
	if (r < 0 && errno == EAGAIN && !(f->flags & O_NONBLOCK)) {
		/* The sentry's description is non-blocking (sentry/boot.c);
		 * the guest's is not: it waits, the sandbox goes on. */
		t->wait_hostfd = f->hostfd;
		t->wait_events = POLLOUT;
		return SYS_BLOCK;
	}
	if (r < 0) {
		if (errno == EPIPE)
			send_signal_task(t, SIGPIPE, t->proc->pid);
		return -errno;
	}
	return r;
}

static long host_write(struct task *t, struct file *f, const void *buf,
		       size_t n, int64_t *off)
{
	(void)off;
	return host_write_to(t, f, buf, n, false);
}

static long host_sock_write(struct task *t, struct file *f, const void *buf,
			    size_t n, int64_t *off)
{
	(void)off;
	return host_write_to(t, f, buf, n, true);
}

static short host_poll(struct file *f, short events)
{
	struct pollfd p = { f->hostfd, events, 0 };

	if (poll(&p, 1, 0) < 0)
		return POLLERR;
	return p.revents;
}

static long host_ioctl(struct task *t, struct file *f, unsigned long cmd,
		       uint64_t arg)
{
	switch (cmd) {
	case TCGETS: {
		struct termios tio;
		if (ioctl(f->hostfd, TCGETS, &tio) < 0)
			return -errno;
		return task_write(t, arg, &tio, sizeof(tio));
	}
	case TIOCGWINSZ: {
		struct winsize ws;
		if (ioctl(f->hostfd, TIOCGWINSZ, &ws) < 0)
			return -errno;
		return task_write(t, arg, &ws, sizeof(ws));
	}
	case TIOCGPGRP: {
		int pg = pid_in_ns(t->proc->pidns, t->proc->pgid);
		if (!isatty(f->hostfd))
			return -ENOTTY;
		return task_write(t, arg, &pg, sizeof(pg));
	}
	case TIOCSPGRP:
		if (!isatty(f->hostfd))
			return -ENOTTY;
		return 0;
	case FIONREAD: {
		int n;
		if (ioctl(f->hostfd, FIONREAD, &n) < 0)
			return -errno;
		return task_write(t, arg, &n, sizeof(n));
	}
	default:
		return -ENOTTY;
	}
}

/* The caller's stdio, as the guest sees it: its type, size and device
 * (a tty's), but not the host's device and inode numbers, which would
 * say where on the host it is. Equal files stay equal (cat compares its
 * input and output this way). */
#define HOST_STDIO_DEV makedev(0, 0x31)

static int host_stat(struct file *f, struct stat *st)
{
	if (fstat(f->hostfd, st) < 0)
		return -errno;
	st->st_ino =
		opaque_id((uint64_t)st->st_ino ^ ((uint64_t)st->st_dev << 40));
	st->st_dev = HOST_STDIO_DEV;
	return 0;
}

static const struct file_ops host_stream_ops = {
	.read = host_read,
	.write = host_write,
	.poll = host_poll,
	.ioctl = host_ioctl,
	.stat = host_stat,
};
/* A socket's: told apart once, at creation, not at every write. */
static const struct file_ops host_sock_ops = {
	.read = host_read,
	.write = host_sock_write,
	.poll = host_poll,
	.ioctl = host_ioctl,
	.stat = host_stat,
};

struct file *file_host_stream(int hostfd, int flags)
{
	struct stat st;
	struct file *f =
		file_new(fstat(hostfd, &st) == 0 && S_ISSOCK(st.st_mode) ?
				 &host_sock_ops :
				 &host_stream_ops,
			 flags);

	if (!f)
		return NULL;
	f->hostfd = hostfd;
	f->stream = true;
	return f;
}
