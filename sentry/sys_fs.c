/* sentry/sys_fs.c: file syscalls. */
#include <fcntl.h>
#include <limits.h>
#include <linux/close_range.h>
#include <linux/openat2.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <linux/mman.h>
#include <sys/select.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/sysmacros.h>
#include <linux/stat.h>

#include "platform/platform.h"
#include "sentry/fs_dev.h"
#include "sentry/fs_tmpfs.h"
#include "sentry/overlay.h"
#include "sentry/syscalls.h"
#include "sentry/vfs.h"

#define IO_CHUNK (1 << 20)
/* The most one read or write moves on Linux (read(2)): INT_MAX less a
 * page. */
#define MAX_RW_COUNT (INT_MAX & ~4095)
#define IOV_MAX_GUEST 1024

static int read_path(struct task *t, uint64_t addr, char *buf)
{
	int n = task_read_str(t, addr, buf, PATH_MAX);
	return n < 0 ? n : 0;
}

/* ---- read and write ------------------------------------------------------- */

static long do_read(struct task *t, struct file *f, uint64_t ubuf, size_t n,
		    int64_t *off)
{
	static char buf[IO_CHUNK];
	size_t done = 0;
	long r;

	if ((f->flags & O_ACCMODE) == O_WRONLY || (f->flags & O_PATH))
		return -EBADF;
	if (!f->ops || !f->ops->read)
		return -EINVAL;
	if (n > MAX_RW_COUNT)
		n = MAX_RW_COUNT;
	while (done < n) {
		size_t chunk = n - done > sizeof(buf) ? sizeof(buf) : n - done;
		r = f->ops->read(t, f, buf, chunk, off);
		if (r < 0 || r == SYS_BLOCK) {
			if (done && f->vn && inotify_active())
				inotify_report_vn(f->vn, IN_ACCESS);
			return done ? (long)done : r;
		}
		if (r > 0 && task_write(t, ubuf + done, buf, (size_t)r) < 0)
			return done ? (long)done : -EFAULT;
		done += (size_t)r;
		if ((size_t)r < chunk || f->stream)
			break;
	}
	if (done && f->vn && inotify_active())
		inotify_report_vn(f->vn, IN_ACCESS);
	return (long)done;
}

static long do_write(struct task *t, struct file *f, uint64_t ubuf, size_t n,
		     int64_t *off)
{
	static char buf[IO_CHUNK];
	size_t done = 0;
	long r = 0;

	if ((f->flags & O_ACCMODE) == O_RDONLY || (f->flags & O_PATH))
		return -EBADF;
	if (!f->ops || !f->ops->write)
		return -EINVAL;
	if (n > MAX_RW_COUNT)
		n = MAX_RW_COUNT;
	while (done < n) {
		size_t chunk = n - done > sizeof(buf) ? sizeof(buf) : n - done;
		if (task_read(t, ubuf + done, buf, chunk) < 0)
			return done ? (long)done : -EFAULT;
		r = f->ops->write(t, f, buf, chunk, off);
		if (r < 0 || r == SYS_BLOCK)
			break;
		done += (size_t)r;
		if ((size_t)r < chunk)
			break;
	}
	if (done && f->vn && inotify_active())
		inotify_report_vn(f->vn, IN_MODIFY);
	return done ? (long)done : r;
}

/* A blocking write to a pipe returns only once every byte has gone in, or
 * the readers have gone, as Linux's pipe_write: a short write blocks for
 * room, and t->io_done carries what was written into the retries, which
 * go on after it. A signal that ends the wait returns that count
 * (maybe_interrupt in task.c), or EINTR or a restart if it is 0. */
static bool write_waits_for_all(struct file *f)
{
	return file_is_pipe(f) && (f->flags & O_ACCMODE) != O_RDONLY &&
	       !(f->flags & O_NONBLOCK);
}

static long write_all_iov(struct task *t, struct file *f,
			  const struct iovec *iov, int cnt)
{
	size_t done = t->block_started ? t->io_done : 0, pos = 0;
	long r = 0;
	int i;

	for (i = 0; i < cnt && pos < MAX_RW_COUNT; i++) {
		size_t len = iov[i].iov_len, skip;

		if (len > MAX_RW_COUNT - pos)
			len = MAX_RW_COUNT - pos;
		if (pos + len <= done) {
			pos += len;
			continue;
		}
		skip = done - pos;
		r = do_write(t, f, (uint64_t)(uintptr_t)iov[i].iov_base + skip,
			     len - skip, NULL);
		if (r < 0 || r == SYS_BLOCK)
			break;
		done += (size_t)r;
		pos += len;
		if ((size_t)r < len - skip) {
			r = SYS_BLOCK; /* the pipe is full: wait for the rest */
			break;
		}
	}
	if (r == SYS_BLOCK) {
		t->io_done = done;
		return SYS_BLOCK;
	}
	return done ? (long)done : r;
}

long sys_read(struct task *t, struct syscall_args *a)
{
	struct file *f = fd_get(t, (int)a->a[0]);

	if (!f)
		return -EBADF;
	return do_read(t, f, a->a[1], a->a[2], f->stream ? NULL : &f->pos);
}

long sys_write(struct task *t, struct syscall_args *a)
{
	struct file *f = fd_get(t, (int)a->a[0]);

	if (!f)
		return -EBADF;
	if (write_waits_for_all(f)) {
		struct iovec one = { (void *)(uintptr_t)a->a[1], a->a[2] };
		return write_all_iov(t, f, &one, 1);
	}
	return do_write(t, f, a->a[1], a->a[2], f->stream ? NULL : &f->pos);
}

long sys_pread64(struct task *t, struct syscall_args *a)
{
	struct file *f = fd_get(t, (int)a->a[0]);
	int64_t off = (int64_t)a->a[3];

	if (!f)
		return -EBADF;
	if (f->stream)
		return -ESPIPE;
	if (off < 0)
		return -EINVAL;
	return do_read(t, f, a->a[1], a->a[2], &off);
}

long sys_pwrite64(struct task *t, struct syscall_args *a)
{
	struct file *f = fd_get(t, (int)a->a[0]);
	int64_t off = (int64_t)a->a[3];

	if (!f)
		return -EBADF;
	if (f->stream)
		return -ESPIPE;
	if (off < 0)
		return -EINVAL;
	return do_write(t, f, a->a[1], a->a[2], &off);
}

/* readv/writev and the positioned forms: at *off, or at the file's own
 * position when off is NULL. */
static long do_iov_at(struct task *t, struct file *f, struct syscall_args *a,
		      bool write, int64_t *off)
{
	int cnt = (int)a->a[2];
	struct iovec iov[IOV_MAX_GUEST];
	long total = 0, r;
	int i;

	if (!off)
		off = f->stream ? NULL : &f->pos;
	if (cnt < 0 || cnt > IOV_MAX_GUEST)
		return -EINVAL;
	if (task_read(t, a->a[1], iov, sizeof(struct iovec) * (size_t)cnt) < 0)
		return -EFAULT;
	if (write && write_waits_for_all(f))
		return write_all_iov(t, f, iov, cnt);
	for (i = 0; i < cnt; i++) {
		if (!iov[i].iov_len)
			continue;
		r = write ? do_write(t, f, (uint64_t)(uintptr_t)iov[i].iov_base,
				     iov[i].iov_len, off) :
			    do_read(t, f, (uint64_t)(uintptr_t)iov[i].iov_base,
				    iov[i].iov_len, off);
		if (r < 0 || r == SYS_BLOCK)
			return total ? total : r;
		total += r;
		if ((size_t)r < iov[i].iov_len)
			break;
	}
	return total;
}

static long do_iov(struct task *t, struct syscall_args *a, bool write)
{
	struct file *f = fd_get(t, (int)a->a[0]);

	return f ? do_iov_at(t, f, a, write, NULL) : -EBADF;
}

long sys_readv(struct task *t, struct syscall_args *a)
{
	return do_iov(t, a, false);
}

long sys_writev(struct task *t, struct syscall_args *a)
{
	return do_iov(t, a, true);
}

#ifndef RWF_HIPRI
#define RWF_HIPRI 0x1
#define RWF_DSYNC 0x2
#define RWF_SYNC 0x4
#define RWF_NOWAIT 0x8
#define RWF_APPEND 0x10
#endif

/* preadv, pwritev (flags 0), preadv2, pwritev2: on x86-64 the offset is
 * the whole of pos_l (a[3]); -1 in the v2 forms means the file's own
 * position. */
static long do_piov(struct task *t, struct syscall_args *a, bool write, bool v2)
{
	struct file *f = fd_get(t, (int)a->a[0]);
	int64_t off = (int64_t)a->a[3];
	unsigned flags = v2 ? (unsigned)a->a[5] : 0;

	if (!f)
		return -EBADF;
	if (flags & ~(unsigned)(RWF_HIPRI | RWF_DSYNC | RWF_SYNC | RWF_APPEND))
		return -EOPNOTSUPP; /* RWF_NOWAIT: every read here is cached */
	if ((flags & RWF_APPEND) && !write)
		return -EOPNOTSUPP;
	if (v2 && off == -1)
		return do_iov_at(t, f, a, write, NULL);
	if (f->stream)
		return -ESPIPE;
	if (off < 0)
		return -EINVAL;
	if (flags & RWF_APPEND) {
		/* as if opened O_APPEND, for this call */
		int saved = f->flags;
		long r;
		f->flags |= O_APPEND;
		r = do_iov_at(t, f, a, write, &off);
		f->flags = saved;
		return r;
	}
	return do_iov_at(t, f, a, write, &off);
}

long sys_preadv(struct task *t, struct syscall_args *a)
{
	return do_piov(t, a, false, false);
}

long sys_pwritev(struct task *t, struct syscall_args *a)
{
	return do_piov(t, a, true, false);
}

long sys_preadv2(struct task *t, struct syscall_args *a)
{
	return do_piov(t, a, false, true);
}

long sys_pwritev2(struct task *t, struct syscall_args *a)
{
	return do_piov(t, a, true, true);
}

long sys_lseek(struct task *t, struct syscall_args *a)
{
	struct file *f = fd_get(t, (int)a->a[0]);
	int64_t off = (int64_t)a->a[1], base;
	int whence = (int)a->a[2];
	struct stat st;

	if (!f)
		return -EBADF;
	/* null, zero, full, random, urandom: seeking succeeds and stays at
	 * 0, as for Linux's memory devices (io.open("/dev/null", "r+")
	 * checks). */
	if (f->vn && f->vn->kind == VN_DEV && S_ISCHR(f->vn->mode))
		return whence >= SEEK_SET && whence <= SEEK_END ? 0 : -EINVAL;
	if (f->stream)
		return -ESPIPE;
	switch (whence) {
	case SEEK_SET:
		base = 0;
		break;
	case SEEK_CUR:
		base = f->pos;
		break;
	case SEEK_END:
		if (f->data)
			base = (int64_t)f->data_len;
		else if (f->ops && f->ops->stat && f->ops->stat(f, &st) == 0)
			base = st.st_size;
		else
			return -EINVAL;
		break;
	case SEEK_DATA:
	case SEEK_HOLE:
		if (f->vn && f->vn->kind == VN_TMPFS && S_ISREG(f->vn->mode)) {
			int64_t r = tmpfs_seek_data(f->vn, off, whence);
			if (r >= 0)
				f->pos = r;
			return r;
		}
		if (f->hostfd >= 0 && !(f->vn && S_ISDIR(f->vn->mode))) {
			off_t r = lseek(f->hostfd, off, whence);
			if (r < 0)
				return -errno;
			f->pos = r;
			return r;
		}
		return -EINVAL;
	default:
		return -EINVAL;
	}
	if (__builtin_add_overflow(base, off, &off) || off < 0)
		return -EINVAL;
	if (f->vn && S_ISDIR(f->vn->mode)) {
		/* Directories: only rewinding is meaningful to the host fd;
		 * synthetic directories keep an index. */
		if (f->hostfd >= 0 && lseek(f->hostfd, off, SEEK_SET) < 0)
			return -errno;
		f->dir_index = off;
	}
	f->pos = off;
	return off;
}

/* ---- open and close ----------------------------------------------------- */

#define VALID_OPEN_FLAGS                                                       \
	(O_ACCMODE | O_CREAT | O_EXCL | O_NOCTTY | O_TRUNC | O_APPEND |        \
	 O_NONBLOCK | O_DSYNC | O_ASYNC | O_DIRECT | O_LARGEFILE |             \
	 O_DIRECTORY | O_NOFOLLOW | O_NOATIME | O_CLOEXEC | O_PATH |           \
	 __O_TMPFILE | O_SYNC)

/* O_TMPFILE: an unnamed file in the directory at path, in tmpfs or the
 * overlay; a host directory mounted in the sandbox: EOPNOTSUPP (callers
 * fall back to a named file). */
static long open_tmpfile(struct task *t, int dirfd, const char *path, int flags,
			 mode_t mode, int rflags)
{
	struct vnode *dir, *udir, *vn;
	struct file *f;
	long rc;
	int fd;

	if ((flags & O_ACCMODE) == O_RDONLY)
		return -EINVAL;
	rc = vfs_resolve(t, dirfd, path, LOOKUP_FOLLOW | rflags, &dir);
	if (rc < 0)
		return rc;
	if (!S_ISDIR(dir->mode)) {
		vnode_put(dir);
		return -ENOTDIR;
	}
	if (dir->kind == VN_SYS) { /* a read-only mount, first */
		vnode_put(dir);
		return -EROFS;
	}
	if (dir->kind == VN_HOST || dir->kind == VN_PROC ||
	    dir->kind == VN_DEV || dir->kind == VN_MQUEUE) {
		vnode_put(dir);
		return -EOPNOTSUPP;
	}
	rc = vfs_access(&t->proc->cred, dir, W_OK | X_OK);
	if (rc == 0)
		rc = ovl_write_dir(dir, &udir);
	vnode_put(dir);
	if (rc < 0)
		return rc;
	rc = tmpfs_tmpfile(t, udir, mode & ~t->proc->umask, !(flags & O_EXCL),
			   &vn);
	vnode_put(udir);
	if (rc < 0)
		return rc;
	rc = vfs_open(t, vn, (flags & ~(__O_TMPFILE | O_EXCL)) | O_CREAT, &f);
	vnode_put(vn);
	if (rc < 0)
		return rc;
	fd = fd_install(t, f, (flags & O_CLOEXEC) != 0, 0);
	file_put(f);
	return fd;
}

/* rflags: LOOKUP_* resolve flags (openat2's RESOLVE_*), 0 for open(at). */
static long do_open(struct task *t, int dirfd, uint64_t upath, int flags,
		    mode_t mode, int rflags)
{
	char path[PATH_MAX];
	struct vnode *vn;
	struct file *f;
	int rc, fd, lflags = rflags;
	bool created = false;

	rc = read_path(t, upath, path);
	if (rc < 0)
		return rc;
	if (flags & ~VALID_OPEN_FLAGS)
		flags &= VALID_OPEN_FLAGS;
	if ((flags & __O_TMPFILE) == __O_TMPFILE)
		return open_tmpfile(t, dirfd, path, flags, mode, rflags);
	if (t->block_started && t->fifo_vn) {
		/* A FIFO open waiting for its other end: it waits on the
		 * node it opened (checked then), whatever the path now names. */
		vn = vnode_get(t->fifo_vn);
		goto open_node;
	}
	if (!(flags & O_NOFOLLOW))
		lflags |= LOOKUP_FOLLOW;
	if ((flags & O_CREAT) && (flags & O_EXCL))
		lflags &=
			~LOOKUP_FOLLOW; /* O_EXCL: a symlink there is EEXIST */
	rc = vfs_resolve(t, dirfd, path, lflags, &vn);
	if (rc == -ENOENT && (flags & O_CREAT)) {
		rc = fs_create(t, dirfd, path, mode, rflags, &vn);
		if (rc < 0)
			return rc;
		created = true;
	} else if (rc < 0) {
		return rc;
	} else if ((flags & O_CREAT) && (flags & O_EXCL)) {
		vnode_put(vn);
		return -EEXIST;
	}
	if (S_ISLNK(vn->mode) && !(flags & O_PATH)) {
		struct file *mf = procfs_fd_file(t, vn);
		vnode_put(vn);
		if (!mf)
			return -ELOOP;
		/* Reopening /proc/self/fd/N of a pipe or stream: the same
		 * open file, as a new descriptor. */
		if (((flags & O_ACCMODE) == O_RDONLY &&
		     (mf->flags & O_ACCMODE) == O_WRONLY) ||
		    ((flags & O_ACCMODE) != O_RDONLY &&
		     (mf->flags & O_ACCMODE) == O_RDONLY))
			return -EACCES;
		return fd_install(t, mf, (flags & O_CLOEXEC) != 0, 0);
	}
	if ((flags & O_DIRECTORY) && !S_ISDIR(vn->mode)) {
		vnode_put(vn);
		return -ENOTDIR;
	}
	if (S_ISDIR(vn->mode) && (flags & O_ACCMODE) != O_RDONLY &&
	    !(flags & O_PATH)) {
		vnode_put(vn);
		return -EISDIR;
	}
	/* Writing a rootfs file: the overlay gives the guest its own copy. */
	if (!(flags & O_PATH) && vn->kind == VN_GOFER && S_ISREG(vn->mode) &&
	    ((flags & O_ACCMODE) != O_RDONLY || (flags & O_TRUNC))) {
		struct vnode *up;
		/* O_TRUNC needs write permission even read-only (Linux). */
		rc = vfs_access(&t->proc->cred, vn,
				(flags & O_ACCMODE) == O_RDONLY &&
						!(flags & O_TRUNC) ?
					R_OK :
					W_OK);
		if (rc == 0)
			rc = ovl_write_target(vn, &up);
		vnode_put(vn);
		if (rc < 0)
			return rc;
		vn = up;
	}
	if (!(flags & O_PATH) && !created) {
		int mask = 0;
		if ((flags & O_ACCMODE) != O_WRONLY)
			mask |= R_OK;
		if ((flags & O_ACCMODE) != O_RDONLY || (flags & O_TRUNC))
			mask |= W_OK;
		{
			/* Always: a write-only open of another user's tmpfs
			 * file must be refused too (a review found it was not). */
			rc = vfs_task_access(t, &t->proc->cred, vn, mask);
			if (rc < 0) {
				vnode_put(vn);
				return rc;
			}
		}
	}
open_node:
	rc = vfs_open(t, vn, flags, &f);
	if (rc == 0 && created) {
		notify_parent(vn, DN_CREATE);
		inotify_report_vn(vn, IN_CREATE);
	}
	if (rc == 0 && inotify_active())
		inotify_report_vn(vn, IN_OPEN);
	vnode_put(vn);
	if (rc < 0)
		return rc;
	fd = fd_install(t, f, (flags & O_CLOEXEC) != 0, 0);
	file_put(f);
	return fd;
}

long sys_open(struct task *t, struct syscall_args *a)
{
	return do_open(t, AT_FDCWD, a->a[0], (int)a->a[1], (mode_t)a->a[2], 0);
}

long sys_openat(struct task *t, struct syscall_args *a)
{
	return do_open(t, (int)a->a[0], a->a[1], (int)a->a[2], (mode_t)a->a[3],
		       0);
}

/* openat2's RESOLVE_* flags and the walk's LOOKUP_* ones. */
static const struct {
	uint64_t resolve;
	int lookup;
} resolve_flags[] = {
	{ RESOLVE_NO_XDEV, LOOKUP_NO_XDEV },
	{ RESOLVE_NO_MAGICLINKS, LOOKUP_NO_MAGICLINKS },
	{ RESOLVE_NO_SYMLINKS, LOOKUP_NO_SYMLINKS },
	{ RESOLVE_BENEATH, LOOKUP_BENEATH },
	{ RESOLVE_IN_ROOT, LOOKUP_IN_ROOT },
	{ RESOLVE_CACHED, LOOKUP_CACHED },
};

#define OPEN_HOW_MAX 4096 /* Linux: a page */
/* O_PATH takes no other flags but these (Linux's O_PATH_FLAGS). */
#define O_PATH_FLAGS (O_DIRECTORY | O_NOFOLLOW | O_PATH | O_CLOEXEC)

/* A struct open_how larger than ours (a newer libc's): what lies past
 * ours must be zero (copy_struct_from_user). */
static long check_how_tail(struct task *t, uint64_t addr, uint64_t size)
{
	uint8_t buf[256];

	while (size > 0) {
		size_t n = size < sizeof(buf) ? size : sizeof(buf);
		if (task_read(t, addr, buf, n) < 0)
			return -EFAULT;
		for (size_t i = 0; i < n; i++)
			if (buf[i])
				return -E2BIG;
		addr += n;
		size -= n;
	}
	return 0;
}

/* openat2 checks every argument that open and openat let pass (in
 * build_open_flags' order), then resolves with the RESOLVE_* flags. */
long sys_openat2(struct task *t, struct syscall_args *a)
{
	struct open_how how;
	uint64_t size = a->a[3], flags;
	int rflags = 0;
	long rc;

	if (size < sizeof(how))
		return -EINVAL;
	if (size > OPEN_HOW_MAX)
		return -E2BIG;
	if (task_read(t, a->a[2], &how, sizeof(how)) < 0)
		return -EFAULT;
	rc = check_how_tail(t, a->a[2] + sizeof(how), size - sizeof(how));
	if (rc < 0)
		return rc;
	flags = how.flags;
	if (flags & ~(uint64_t)VALID_OPEN_FLAGS)
		return -EINVAL;
	for (size_t i = 0; i < ARRAY_SIZE(resolve_flags); i++)
		if (how.resolve & resolve_flags[i].resolve) {
			how.resolve &= ~resolve_flags[i].resolve;
			rflags |= resolve_flags[i].lookup;
		}
	if (how.resolve)
		return -EINVAL; /* a RESOLVE_* flag this kernel does not know */
	if ((rflags & LOOKUP_SCOPED) == LOOKUP_SCOPED)
		return -EINVAL;
	if (flags & (O_CREAT | __O_TMPFILE) ? how.mode & ~(uint64_t)07777 :
					      how.mode != 0)
		return -EINVAL;
	if ((flags & (O_DIRECTORY | O_CREAT)) == (O_DIRECTORY | O_CREAT))
		return -EINVAL;
	if ((flags & __O_TMPFILE) &&
	    (!(flags & O_DIRECTORY) || (flags & O_ACCMODE) == O_RDONLY))
		return -EINVAL;
	if ((flags & O_PATH) && (flags & ~(uint64_t)O_PATH_FLAGS))
		return -EINVAL;
	/* Creating or truncating is never a cached lookup (Linux). */
	if ((rflags & LOOKUP_CACHED) &&
	    (flags & (O_TRUNC | O_CREAT | __O_TMPFILE)))
		return -EAGAIN;
	return do_open(t, (int)a->a[0], a->a[1], (int)flags, (mode_t)how.mode,
		       rflags);
}

long sys_close(struct task *t, struct syscall_args *a)
{
	return fd_close(t, (int)a->a[0]);
}

long sys_close_range(struct task *t, struct syscall_args *a)
{
	unsigned first = (unsigned)a->a[0], last = (unsigned)a->a[1];
	unsigned flags = (unsigned)a->a[2];
	struct fdtable *fdt = t->proc->fdt;
	unsigned i;

	if (first > last ||
	    (flags & ~(CLOSE_RANGE_CLOEXEC | CLOSE_RANGE_UNSHARE)))
		return -EINVAL;
	if ((flags & CLOSE_RANGE_UNSHARE) && fdt->refs > 1) {
		/* Shared with another process (CLONE_FILES): this one gets
		 * its own copy first, and only that copy changes. The
		 * threads of one process share its table whatever they ask. */
		struct fdtable *own = fdtable_dup(fdt);
		if (!own)
			return -ENOMEM;
		fdtable_put(fdt);
		t->proc->fdt = fdt = own;
	}
	for (i = first; i <= last && i < (unsigned)fdt->cap; i++) {
		if (!fdt->ents[i].f)
			continue;
		if (flags & 4U)
			fdt->ents[i].cloexec = true;
		else
			fd_close(t, (int)i);
	}
	return 0;
}

long sys_dup(struct task *t, struct syscall_args *a)
{
	struct file *f = fd_get(t, (int)a->a[0]);

	if (!f)
		return -EBADF;
	return fd_install(t, f, false, 0);
}

static long do_dup3(struct task *t, int oldfd, int newfd, int flags)
{
	struct file *f = fd_get(t, oldfd);

	if (!f)
		return -EBADF;
	if (flags & ~O_CLOEXEC)
		return -EINVAL;
	return fd_install_at(t, f, newfd, (flags & O_CLOEXEC) != 0);
}

long sys_dup2(struct task *t, struct syscall_args *a)
{
	int oldfd = (int)a->a[0], newfd = (int)a->a[1];

	if (oldfd == newfd)
		return fd_get(t, oldfd) ? newfd : -EBADF;
	return do_dup3(t, oldfd, newfd, 0);
}

long sys_dup3(struct task *t, struct syscall_args *a)
{
	if (a->a[0] == a->a[1])
		return -EINVAL;
	return do_dup3(t, (int)a->a[0], (int)a->a[1], (int)a->a[2]);
}

long sys_fcntl(struct task *t, struct syscall_args *a)
{
	int fd = (int)a->a[0], cmd = (int)a->a[1];
	struct file *f = fd_get(t, fd);
	bool *cloexec;

	if (!f)
		return -EBADF;
	switch (cmd) {
	case F_DUPFD:
	case F_DUPFD_CLOEXEC:
		if ((int)a->a[2] < 0)
			return -EINVAL;
		return fd_install(t, f, cmd == F_DUPFD_CLOEXEC, (int)a->a[2]);
	case F_GETFD:
		cloexec = fd_cloexec_ptr(t, fd);
		return *cloexec ? FD_CLOEXEC : 0;
	case F_SETFD:
		cloexec = fd_cloexec_ptr(t, fd);
		*cloexec = (a->a[2] & FD_CLOEXEC) != 0;
		return 0;
	case F_GETFL:
		return f->flags | ((f->flags & O_PATH) ? 0 : O_LARGEFILE);
	case F_SETFL:
		f->flags = (f->flags & ~(O_APPEND | O_NONBLOCK | O_ASYNC |
					 O_DIRECT | O_NOATIME)) |
			   ((int)a->a[2] & (O_APPEND | O_NONBLOCK | O_ASYNC |
					    O_DIRECT | O_NOATIME));
		return 0;
	case F_GETLK:
	case F_SETLK:
	case F_SETLKW:
	case F_OFD_GETLK:
	case F_OFD_SETLK:
	case F_OFD_SETLKW:
		return lock_fcntl(t, f, cmd, a->a[2]);
	case F_NOTIFY:
		return notify_fcntl(t, f, a->a[2]);
	case F_SETOWN: {
		/* a pid, or a group's as -pgid, of the caller's pid
		 * namespace (Linux's f_setown): kept as the pod numbers it */
		int v = (int)a->a[2];

		if (v == INT_MIN)
			return -EINVAL;
		if (v && !(v < 0 ? guest_pgrp_exists(t->proc->pidns, -v) :
				   guest_pid_exists(t->proc->pidns, v)))
			return -ESRCH;
		f->owner = v < 0 ? -pid_from_guest(t->proc->pidns, -v) :
				   pid_from_guest(t->proc->pidns, v);
		return 0;
	}
	case F_GETOWN:
		return f->owner < 0 ? -pid_to_guest(t->proc->pidns, -f->owner) :
				      pid_to_guest(t->proc->pidns, f->owner);
	case F_SETSIG:
		if (a->a[2] > 64)
			return -EINVAL;
		f->sig = (int)a->a[2];
		return 0;
	case F_GETSIG:
		return f->sig;
	case F_GETPIPE_SZ:
		return pipe_size_ctl(f, 0, 0);
	case F_SETPIPE_SZ:
		return pipe_size_ctl(f, 1, a->a[2]);
	default:
		return -EINVAL;
	}
}

/* ---- stat ------------------------------------------------------------------ */

/* *fdself: vn is dirfd's own node (an empty path with AT_EMPTY_PATH), which
 * is never followed: an O_PATH | O_NOFOLLOW descriptor of a link stats as
 * the link. */
static int resolve_at_self(struct task *t, int dirfd, uint64_t upath,
			   int atflags, struct vnode **vn, bool *fdself)
{
	char path[PATH_MAX];
	int rc = read_path(t, upath, path);
	int lflags = (atflags & AT_SYMLINK_NOFOLLOW) ? 0 : LOOKUP_FOLLOW;

	*fdself = false;
	if (rc < 0)
		return rc;
	if (atflags & AT_EMPTY_PATH)
		lflags |= LOOKUP_EMPTY;
	if (!path[0] && (atflags & AT_EMPTY_PATH)) {
		*fdself = true;
		struct file *f;
		if (dirfd == AT_FDCWD) {
			*vn = vnode_get(t->proc->cwd);
			return 0;
		}
		f = fd_get(t, dirfd);
		if (!f)
			return -EBADF;
		if (!f->vn)
			return -EBADF; /* caller falls back to fstat */
		*vn = vnode_get(f->vn);
		return 0;
	}
	return vfs_resolve(t, dirfd, path, lflags, vn);
}

static int resolve_at(struct task *t, int dirfd, uint64_t upath, int atflags,
		      struct vnode **vn)
{
	bool fdself;

	return resolve_at_self(t, dirfd, upath, atflags, vn, &fdself);
}

static long fstat_file(struct file *f, struct stat *st)
{
	if (f->ops && f->ops->stat)
		return f->ops->stat(f, st);
	if (f->vn)
		return vfs_stat(f->vn, st);
	return -EBADF;
}

static long put_stat(struct task *t, uint64_t ust, struct stat *st)
{
	return task_write(t, ust, st, sizeof(*st));
}

long sys_fstat(struct task *t, struct syscall_args *a)
{
	struct file *f = fd_get(t, (int)a->a[0]);
	struct stat st;
	long rc;

	if (!f)
		return -EBADF;
	rc = fstat_file(f, &st);
	return rc < 0 ? rc : put_stat(t, a->a[1], &st);
}

static long stat_at(struct task *t, int dirfd, uint64_t upath, int flags,
		    uint64_t ust)
{
	struct vnode *vn;
	struct stat st;
	bool fdself;
	long rc;

	if (flags & ~(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH | AT_NO_AUTOMOUNT))
		return -EINVAL;
	rc = resolve_at_self(t, dirfd, upath, flags, &vn, &fdself);
	if (rc == -EBADF && (flags & AT_EMPTY_PATH)) {
		struct file *f = fd_get(t, dirfd);
		if (!f)
			return -EBADF;
		rc = fstat_file(f, &st);
		return rc < 0 ? rc : put_stat(t, ust, &st);
	}
	if (rc < 0)
		return rc;
	if (S_ISLNK(vn->mode) && !(flags & AT_SYMLINK_NOFOLLOW) && !fdself &&
	    procfs_fd_file(t, vn)) {
		rc = fstat_file(procfs_fd_file(t, vn), &st);
		vnode_put(vn);
		return rc < 0 ? rc : put_stat(t, ust, &st);
	}
	rc = vfs_stat(vn, &st);
	vnode_put(vn);
	return rc < 0 ? rc : put_stat(t, ust, &st);
}

long sys_stat(struct task *t, struct syscall_args *a)
{
	return stat_at(t, AT_FDCWD, a->a[0], 0, a->a[1]);
}

long sys_lstat(struct task *t, struct syscall_args *a)
{
	return stat_at(t, AT_FDCWD, a->a[0], AT_SYMLINK_NOFOLLOW, a->a[1]);
}

long sys_newfstatat(struct task *t, struct syscall_args *a)
{
	return stat_at(t, (int)a->a[0], a->a[1], (int)a->a[3], a->a[2]);
}

long sys_statx(struct task *t, struct syscall_args *a)
{
	int flags = (int)a->a[2];
	struct vnode *vn = NULL;
	struct stat st;
	struct statx sx;
	bool fdself;
	long rc;

	if ((flags & ~(AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT | AT_EMPTY_PATH |
		       AT_STATX_SYNC_TYPE)) ||
	    (flags & AT_STATX_SYNC_TYPE) == AT_STATX_SYNC_TYPE ||
	    ((unsigned)a->a[3] & STATX__RESERVED))
		return -EINVAL;
	rc = resolve_at_self(t, (int)a->a[0], a->a[1],
			     flags & (AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH), &vn,
			     &fdself);
	if (rc == -EBADF && (flags & AT_EMPTY_PATH)) {
		struct file *f = fd_get(t, (int)a->a[0]);
		if (!f)
			return -EBADF;
		rc = fstat_file(f, &st);
	} else if (rc == 0) {
		/* A magic link to a pipe or stream: its file, as stat_at. */
		struct file *mf =
			S_ISLNK(vn->mode) && !(flags & AT_SYMLINK_NOFOLLOW) &&
					!fdself ?
				procfs_fd_file(t, vn) :
				NULL;
		rc = mf ? fstat_file(mf, &st) : vfs_stat(vn, &st);
		vnode_put(vn);
	}
	if (rc < 0)
		return rc;
	memset(&sx, 0, sizeof(sx));
	sx.stx_mask = STATX_BASIC_STATS;
	sx.stx_blksize = (uint32_t)st.st_blksize;
	sx.stx_nlink = (uint32_t)st.st_nlink;
	sx.stx_uid = st.st_uid;
	sx.stx_gid = st.st_gid;
	sx.stx_mode = (uint16_t)st.st_mode;
	sx.stx_ino = st.st_ino;
	sx.stx_size = (uint64_t)st.st_size;
	sx.stx_blocks = (uint64_t)st.st_blocks;
	sx.stx_atime.tv_sec = st.st_atim.tv_sec;
	sx.stx_atime.tv_nsec = (uint32_t)st.st_atim.tv_nsec;
	sx.stx_mtime.tv_sec = st.st_mtim.tv_sec;
	sx.stx_mtime.tv_nsec = (uint32_t)st.st_mtim.tv_nsec;
	sx.stx_ctime.tv_sec = st.st_ctim.tv_sec;
	sx.stx_ctime.tv_nsec = (uint32_t)st.st_ctim.tv_nsec;
	sx.stx_rdev_major = major(st.st_rdev);
	sx.stx_rdev_minor = minor(st.st_rdev);
	sx.stx_dev_major = major(st.st_dev);
	sx.stx_dev_minor = minor(st.st_dev);
	return task_write(t, a->a[4], &sx, sizeof(sx));
}

long sys_statfs(struct task *t, struct syscall_args *a)
{
	struct vnode *vn;
	struct statfs sf;
	long rc = resolve_at(t, AT_FDCWD, a->a[0], 0, &vn);

	if (rc < 0)
		return rc;
	rc = vfs_statfs(vn, &sf);
	vnode_put(vn);
	return rc < 0 ? rc : task_write(t, a->a[1], &sf, sizeof(sf));
}

long sys_fstatfs(struct task *t, struct syscall_args *a)
{
	struct file *f = fd_get(t, (int)a->a[0]);
	struct statfs sf;
	long rc;

	if (!f)
		return -EBADF;
	if (!f->vn) {
		memset(&sf, 0, sizeof(sf));
		sf.f_type = 0x50495045; /* PIPEFS_MAGIC */
		sf.f_bsize = 4096;
	} else {
		rc = vfs_statfs(f->vn, &sf);
		if (rc < 0)
			return rc;
	}
	return task_write(t, a->a[1], &sf, sizeof(sf));
}

static long do_access(struct task *t, int dirfd, uint64_t upath, int mode,
		      int flags)
{
	struct vnode *vn;
	struct creds c = t->proc->cred;
	long rc;

	if (mode & ~(R_OK | W_OK | X_OK))
		return -EINVAL;
	if (flags & ~(AT_SYMLINK_NOFOLLOW | AT_EACCESS | AT_EMPTY_PATH))
		return -EINVAL;
	rc = resolve_at(t, dirfd, upath, flags, &vn);
	if (rc < 0)
		return rc;
	if (!(flags & AT_EACCESS))
		caps_access_creds(&c); /* the real ids, as Linux's access() */
	rc = mode ? vfs_task_access(t, &c, vn, mode) : 0;
	vnode_put(vn);
	return rc;
}

long sys_access(struct task *t, struct syscall_args *a)
{
	return do_access(t, AT_FDCWD, a->a[0], (int)a->a[1], 0);
}

long sys_faccessat(struct task *t, struct syscall_args *a)
{
	return do_access(t, (int)a->a[0], a->a[1], (int)a->a[2], 0);
}

long sys_faccessat2(struct task *t, struct syscall_args *a)
{
	return do_access(t, (int)a->a[0], a->a[1], (int)a->a[2], (int)a->a[3]);
}

static long do_readlink(struct task *t, int dirfd, uint64_t upath,
			uint64_t ubuf, long bufsiz)
{
	char target[PATH_MAX];
	struct vnode *vn;
	long rc, n;

	if (bufsiz <= 0)
		return -EINVAL;
	rc = resolve_at(t, dirfd, upath, AT_SYMLINK_NOFOLLOW, &vn);
	if (rc < 0)
		return rc;
	if (vn->kind == VN_PROC)
		n = procfs_readlink(t, vn, target, sizeof(target));
	else
		n = vfs_readlink(vn, target, sizeof(target));
	vnode_put(vn);
	if (n < 0)
		return n;
	if (n > bufsiz)
		n = bufsiz;
	rc = task_write(t, ubuf, target, (size_t)n);
	return rc < 0 ? rc : n;
}

long sys_readlink(struct task *t, struct syscall_args *a)
{
	return do_readlink(t, AT_FDCWD, a->a[0], a->a[1], (long)a->a[2]);
}

long sys_readlinkat(struct task *t, struct syscall_args *a)
{
	return do_readlink(t, (int)a->a[0], a->a[1], a->a[2], (long)a->a[3]);
}

/* The legacy getdents's struct linux_dirent is getdents64's record with
 * d_type moved from before the name to the record's last byte; both are
 * offsetof(d_name) + name + NUL + a byte, rounded up to 8, so a buffer of
 * one converts in place, with the same d_off cookies. */
static void dirents_to_legacy(char *buf, size_t len)
{
	size_t pos = 0;

	while (pos < len) {
		char *p = buf + pos;
		uint16_t reclen;
		unsigned char type = (unsigned char)p[18];

		memcpy(&reclen, p + 16, sizeof(reclen));
		memmove(p + 18, p + 19, strlen(p + 19) + 1);
		p[reclen - 1] = (char)type;
		pos += reclen;
	}
}

static long do_getdents(struct task *t, struct syscall_args *a, bool legacy)
{
	struct file *f = fd_get(t, (int)a->a[0]);
	struct dirent_sink s;
	static char buf[65536];
	size_t cap = a->a[2] > sizeof(buf) ? sizeof(buf) : a->a[2];
	long rc;

	if (!f)
		return -EBADF;
	if (!f->vn || !S_ISDIR(f->vn->mode))
		return -ENOTDIR;
	if (!f->ops || !f->ops->getdents)
		return -ENOTDIR;
	memset(&s, 0, sizeof(s));
	s.buf = buf;
	s.cap = cap;
	s.skip = f->dir_index;
	rc = f->ops->getdents(t, f, &s);
	if (rc < 0)
		return rc;
	if (s.len == 0 && s.full)
		return -EINVAL; /* buffer too small for one entry */
	if (legacy)
		dirents_to_legacy(buf, s.len);
	rc = task_write(t, a->a[1], buf, s.len);
	return rc < 0 ? rc : (long)s.len;
}

long sys_getdents64(struct task *t, struct syscall_args *a)
{
	return do_getdents(t, a, false);
}

/* What static binaries of old libcs call (glibc before 2.28 on x86-64,
 * busybox's ls among them). */
long sys_getdents(struct task *t, struct syscall_args *a)
{
	return do_getdents(t, a, true);
}

/* ---- cwd ------------------------------------------------------------------- */

long sys_getcwd(struct task *t, struct syscall_args *a)
{
	const char *p = t->proc->cwd->path;
	size_t n = strlen(p) + 1;

	if (a->a[1] < n)
		return -ERANGE;
	if (task_write(t, a->a[0], p, n) < 0)
		return -EFAULT;
	return (long)n;
}

static long set_cwd(struct task *t, struct vnode *vn)
{
	long rc;

	if (!S_ISDIR(vn->mode)) {
		vnode_put(vn);
		return -ENOTDIR;
	}
	rc = vfs_task_access(t, &t->proc->cred, vn, X_OK);
	if (rc < 0) {
		vnode_put(vn);
		return rc;
	}
	vnode_put(t->proc->cwd);
	t->proc->cwd = vn;
	return 0;
}

long sys_chdir(struct task *t, struct syscall_args *a)
{
	struct vnode *vn;
	long rc = resolve_at(t, AT_FDCWD, a->a[0], 0, &vn);

	return rc < 0 ? rc : set_cwd(t, vn);
}

long sys_fchdir(struct task *t, struct syscall_args *a)
{
	struct file *f = fd_get(t, (int)a->a[0]);

	if (!f)
		return -EBADF;
	if (!f->vn)
		return -ENOTDIR;
	return set_cwd(t, vnode_get(f->vn));
}

/* ---- mounts ---------------------------------------------------------------
 * The sandbox's mount table is made at setup (its masks and read-only
 * paths among it) and never changes after: mount(2), umount2(2) and
 * pivot_root(2) fail as Linux's do for a process without CAP_SYS_ADMIN
 * over its mount namespace, which every guest is, after the checks Linux
 * makes before that one (an argument it cannot read, a bad flag, a path
 * that is not there). */

/* A mount string of the guest's (type, source): EFAULT or EINVAL (longer
 * than a page, strndup_user's) if it cannot be read; NULL is none. */
static int mount_string(struct task *t, uint64_t addr)
{
	static char buf[4096];
	int n;

	if (!addr)
		return 0;
	n = task_read_str(t, addr, buf, sizeof(buf));
	return n == -ENAMETOOLONG ? -EINVAL : n < 0 ? n : 0;
}

long sys_mount(struct task *t, struct syscall_args *a)
{
	struct vnode *vn;
	char byte;
	long rc;

	/* ksys_mount's order: type, source, data, then the target */
	rc = mount_string(t, a->a[2]);
	if (rc == 0)
		rc = mount_string(t, a->a[0]);
	if (rc == 0 && a->a[4] && task_read(t, a->a[4], &byte, 1) < 0)
		rc = -EFAULT;
	if (rc == 0)
		rc = resolve_at(t, AT_FDCWD, a->a[1], 0, &vn);
	if (rc < 0)
		return rc;
	vnode_put(vn);
	if (a->a[3] & MS_NOUSER)
		return -EINVAL;
	return -EPERM;
}

long sys_umount2(struct task *t, struct syscall_args *a)
{
	int flags = (int)a->a[1];
	struct vnode *vn;
	long rc;

	if (flags & ~(MNT_FORCE | MNT_DETACH | MNT_EXPIRE | UMOUNT_NOFOLLOW))
		return -EINVAL;
	rc = resolve_at(t, AT_FDCWD, a->a[0],
			(flags & UMOUNT_NOFOLLOW) ? AT_SYMLINK_NOFOLLOW : 0,
			&vn);
	if (rc < 0)
		return rc;
	vnode_put(vn);
	return -EPERM;
}

long sys_pivot_root(struct task *t, struct syscall_args *a)
{
	(void)t;
	(void)a;
	return -EPERM; /* may_mount() is its first check */
}

long sys_umask(struct task *t, struct syscall_args *a)
{
	mode_t old = t->proc->umask;

	t->proc->umask = (mode_t)a->a[0] & 0777;
	return old;
}

/* ---- pipes ---------------------------------------------------------------- */

static long do_pipe(struct task *t, uint64_t ufds, int flags)
{
	struct file *r, *w;
	int fds[2], rc;

	if (flags & ~(O_CLOEXEC | O_NONBLOCK | O_DIRECT))
		return -EINVAL;
	rc = pipe_create(&r, &w, flags);
	if (rc < 0)
		return rc;
	fds[0] = fd_install(t, r, flags & O_CLOEXEC, 0);
	fds[1] = fds[0] < 0 ? -1 : fd_install(t, w, flags & O_CLOEXEC, 0);
	file_put(r);
	file_put(w);
	if (fds[1] < 0) {
		if (fds[0] >= 0)
			fd_close(t, fds[0]);
		return fds[0] < 0 ? fds[0] : fds[1];
	}
	if (task_write(t, ufds, fds, sizeof(fds)) < 0) {
		fd_close(t, fds[0]);
		fd_close(t, fds[1]);
		return -EFAULT;
	}
	return 0;
}

long sys_pipe(struct task *t, struct syscall_args *a)
{
	return do_pipe(t, a->a[0], 0);
}

long sys_pipe2(struct task *t, struct syscall_args *a)
{
	return do_pipe(t, a->a[0], (int)a->a[1]);
}

/* ---- poll and select ------------------------------------------------------- */

/* poll and select read the guest's array in chunks of these, so that
 * what the sentry holds stays the same however many fds are asked about:
 * nfds may be RLIMIT_NOFILE, and is mostly -1 or the same fd. */
#define POLL_CHUNK 4096
#define SELECT_CHUNK 4096 /* fds, a multiple of 64 */

/* Start or check the deadline of a blocking wait. timeout_ns < 0: none. */
static bool deadline_passed(struct task *t, int64_t timeout_ns)
{
	if (timeout_ns < 0)
		return false;
	if (!t->block_started)
		t->deadline_ns = now_ns() + timeout_ns;
	return timeout_ns == 0 || now_ns() >= t->deadline_ns;
}

static short file_poll(struct task *t, struct file *f, short events)
{
	short r;

	if (!f->ops || !f->ops->poll)
		return events & (POLLIN | POLLOUT);
	r = f->ops->poll(f, events);
	if (!r && f->hostfd >= 0 && f->stream && t->wait_hostfd < 0) {
		t->wait_hostfd = f->hostfd;
		t->wait_events = events;
	}
	return r;
}

/* One look at entries [from, from + n) of the guest's pollfd array, into
 * pfds: the number of them with events. */
static long poll_chunk(struct task *t, uint64_t ufds, uint64_t from, size_t n,
		       struct pollfd *pfds)
{
	long ready = 0;
	size_t i;

	if (task_read(t, ufds + from * sizeof(*pfds), pfds, n * sizeof(*pfds)) <
	    0)
		return -EFAULT;
	for (i = 0; i < n; i++) {
		struct file *f;
		pfds[i].revents = 0;
		if (pfds[i].fd < 0)
			continue;
		f = fd_get(t, pfds[i].fd);
		if (!f) {
			pfds[i].revents = POLLNVAL;
		} else {
			pfds[i].revents = file_poll(t, f, pfds[i].events) &
					  (pfds[i].events | POLLHUP | POLLERR);
		}
		if (pfds[i].revents)
			ready++;
	}
	return ready;
}

/* A first pass counts; only a call that returns writes revents, in a
 * second pass (the sentry is single-threaded, so the files it looks at
 * again are as they were). One chunk, the usual case, is one pass. Cost:
 * O(nfds) a call, as Linux's (and the items of the epolls among them,
 * each epoll once: do_poll makes the call one look). */
static long poll_look(struct task *t, uint64_t ufds, uint64_t nfds_arg,
		      int64_t timeout_ns)
{
	static struct pollfd pfds[POLL_CHUNK];
	unsigned nfds = (unsigned)nfds_arg; /* Linux's is an unsigned int */
	long ready = 0, r;
	uint64_t i;

	if (nfds > t->proc->rlim[RLIMIT_NOFILE].cur)
		return -EINVAL;
	t->wait_hostfd = -1;
	for (i = 0; i < nfds; i += POLL_CHUNK) {
		size_t n = nfds - i < POLL_CHUNK ? nfds - i : POLL_CHUNK;
		r = poll_chunk(t, ufds, i, n, pfds);
		if (r < 0)
			return r;
		ready += r;
	}
	if (!ready && !deadline_passed(t, timeout_ns))
		return SYS_BLOCK;
	if (nfds <= POLL_CHUNK)
		return task_write(t, ufds, pfds, sizeof(*pfds) * nfds) < 0 ?
			       -EFAULT :
			       ready;
	ready = 0;
	for (i = 0; i < nfds; i += POLL_CHUNK) {
		size_t n = nfds - i < POLL_CHUNK ? nfds - i : POLL_CHUNK;
		r = poll_chunk(t, ufds, i, n, pfds);
		if (r < 0)
			return r;
		if (task_write(t, ufds + i * sizeof(*pfds), pfds,
			       n * sizeof(*pfds)) < 0)
			return -EFAULT;
		ready += r;
	}
	return ready;
}

static long do_poll(struct task *t, uint64_t ufds, uint64_t nfds,
		    int64_t timeout_ns)
{
	long rc;

	epoll_look_begin();
	rc = poll_look(t, ufds, nfds, timeout_ns);
	epoll_look_end();
	return rc;
}

long sys_poll(struct task *t, struct syscall_args *a)
{
	int timeout = (int)a->a[2];

	return do_poll(t, a->a[0], a->a[1],
		       timeout < 0 ? -1 : (int64_t)timeout * 1000000);
}

long sys_ppoll(struct task *t, struct syscall_args *a)
{
	struct timespec ts;
	int64_t timeout = -1;

	if (a->a[2]) {
		if (task_read(t, a->a[2], &ts, sizeof(ts)) < 0)
			return -EFAULT;
		if (ts.tv_sec < 0 || ts.tv_nsec < 0 || ts.tv_nsec >= 1000000000)
			return -EINVAL;
		timeout = guest_timeout_ns(ts.tv_sec, ts.tv_nsec);
	}
	{
		long rc = task_wait_sigmask(t, a->a[3], a->a[4]);
		if (rc < 0)
			return rc;
	}
	return do_poll(t, a->a[0], a->a[1], timeout);
}

/* One look at fds [base, base + n) of select's three sets (n a multiple
 * of 64 but for the last chunk), the results into out: the count, or
 * -errno. */
static long select_chunk(struct task *t, const uint64_t uset[3], int base,
			 int n, uint64_t out[3][SELECT_CHUNK / 64])
{
	uint64_t in[3][SELECT_CHUNK / 64];
	size_t bytes = (size_t)((n + 63) / 64) * 8;
	long ready = 0;
	int i, k;

	for (k = 0; k < 3; k++) {
		memset(in[k], 0, bytes);
		memset(out[k], 0, bytes);
		if (uset[k] && task_read(t, uset[k] + (uint64_t)base / 8, in[k],
					 bytes) < 0)
			return -EFAULT;
	}
	for (i = 0; i < n; i++) {
		uint64_t bit = 1ULL << (i % 64);
		struct file *f;
		short ev = 0, r;
		if (in[0][i / 64] & bit)
			ev |= POLLIN;
		if (in[1][i / 64] & bit)
			ev |= POLLOUT;
		if (in[2][i / 64] & bit)
			ev |= POLLPRI;
		if (!ev)
			continue;
		f = fd_get(t, base + i);
		if (!f)
			return -EBADF;
		r = file_poll(t, f, ev);
		if ((ev & POLLIN) && (r & (POLLIN | POLLHUP | POLLERR))) {
			out[0][i / 64] |= bit;
			ready++;
		}
		if ((ev & POLLOUT) && (r & (POLLOUT | POLLERR))) {
			out[1][i / 64] |= bit;
			ready++;
		}
		if ((ev & POLLPRI) && (r & POLLPRI)) {
			out[2][i / 64] |= bit;
			ready++;
		}
	}
	return ready;
}

static long select_store(struct task *t, const uint64_t uset[3], int base,
			 int n, uint64_t out[3][SELECT_CHUNK / 64])
{
	size_t bytes = (size_t)((n + 63) / 64) * 8;
	int k;

	for (k = 0; k < 3; k++)
		if (uset[k] && task_write(t, uset[k] + (uint64_t)base / 8,
					  out[k], bytes) < 0)
			return -EFAULT;
	return 0;
}

/* As poll: a pass that counts, and a second that writes when the call
 * returns and the sets are more than one chunk. nfds past the fd table's
 * size is cut to it, as Linux cuts it to its table's max_fds (which grows
 * the same way, in powers of two from 64); the sets are read and written
 * only that far. */
static long select_look(struct task *t, int nfds, uint64_t urd, uint64_t uwr,
			uint64_t uex, int64_t timeout_ns)
{
	static uint64_t out[3][SELECT_CHUNK / 64];
	const uint64_t uset[3] = { urd, uwr, uex };
	int cap = t->proc->fdt ? t->proc->fdt->cap : 0, base;
	long ready = 0, r;

	if (nfds < 0)
		return -EINVAL;
	if (nfds > cap)
		nfds = cap;
	t->wait_hostfd = -1;
	for (base = 0; base < nfds; base += SELECT_CHUNK) {
		int n = nfds - base < SELECT_CHUNK ? nfds - base : SELECT_CHUNK;
		r = select_chunk(t, uset, base, n, out);
		if (r < 0)
			return r;
		ready += r;
	}
	if (!ready && !deadline_passed(t, timeout_ns))
		return SYS_BLOCK;
	if (nfds <= SELECT_CHUNK)
		return select_store(t, uset, 0, nfds, out) < 0 ? -EFAULT :
								 ready;
	ready = 0;
	for (base = 0; base < nfds; base += SELECT_CHUNK) {
		int n = nfds - base < SELECT_CHUNK ? nfds - base : SELECT_CHUNK;
		r = select_chunk(t, uset, base, n, out);
		if (r < 0)
			return r;
		if (select_store(t, uset, base, n, out) < 0)
			return -EFAULT;
		ready += r;
	}
	return ready;
}

static long do_select(struct task *t, int nfds, uint64_t urd, uint64_t uwr,
		      uint64_t uex, int64_t timeout_ns)
{
	long rc;

	epoll_look_begin();
	rc = select_look(t, nfds, urd, uwr, uex, timeout_ns);
	epoll_look_end();
	return rc;
}

long sys_select(struct task *t, struct syscall_args *a)
{
	struct timeval tv;
	int64_t timeout = -1;

	if (a->a[4]) {
		if (task_read(t, a->a[4], &tv, sizeof(tv)) < 0)
			return -EFAULT;
		if (tv.tv_sec < 0 || tv.tv_usec < 0)
			return -EINVAL;
		timeout =
			guest_timeout_ns(tv.tv_sec, (int64_t)tv.tv_usec * 1000);
	}
	return do_select(t, (int)a->a[0], a->a[1], a->a[2], a->a[3], timeout);
}

long sys_pselect6(struct task *t, struct syscall_args *a)
{
	struct timespec ts;
	int64_t timeout = -1;

	if (a->a[4]) {
		if (task_read(t, a->a[4], &ts, sizeof(ts)) < 0)
			return -EFAULT;
		if (ts.tv_sec < 0 || ts.tv_nsec < 0 || ts.tv_nsec >= 1000000000)
			return -EINVAL;
		timeout = guest_timeout_ns(ts.tv_sec, ts.tv_nsec);
	}
	if (a->a[5]) {
		/* { const sigset_t *ss; size_t ss_len; } */
		uint64_t sm[2];
		long rc;
		if (task_read(t, a->a[5], sm, sizeof(sm)) < 0)
			return -EFAULT;
		rc = task_wait_sigmask(t, sm[0], sm[1]);
		if (rc < 0)
			return rc;
	} else {
		task_wait_sigmask(t, 0, 0);
	}
	return do_select(t, (int)a->a[0], a->a[1], a->a[2], a->a[3], timeout);
}

/* ---- mmap of files ---------------------------------------------------------- */

long sys_mmap(struct task *t, struct syscall_args *a)
{
	uint64_t addr = a->a[0], len = a->a[1], off = a->a[5];
	int prot = (int)a->a[2], flags = (int)a->a[3], fd = (int)a->a[4];
	/* MAP_SHARED_VALIDATE (0x03) is a shared mapping too: the host
	 * maps it writable from a writable fd like MAP_SHARED. */
	bool shared = (flags & MAP_TYPE) == MAP_SHARED ||
		      (flags & MAP_TYPE) == MAP_SHARED_VALIDATE;
	struct file *f;
	long r;
	int gfd, hfd;

	if ((flags & (MAP_FIXED | MAP_FIXED_NOREPLACE)) &&
	    stub_overlaps(addr, len))
		return -EINVAL; /* the stub's range is the sentry's */
	if (stub_overlaps(addr, len)) {
		/* Only a hint: never let the kernel honour it there (the stub
		 * could be missing in this process). */
		struct user_regs_struct r = t->regs;
		addr = 0;
		r.rdi = 0;
		if (ptrace(PTRACE_SETREGS, t->host_tid, 0, &r) < 0)
			return -ESRCH;
		t->regs.rdi = 0;
	}
	if (flags & MAP_ANONYMOUS) /* trapped only for being near the stub */
		return SYS_PASSTHROUGH;
	f = fd_get(t, fd);
	if (!f)
		return -EBADF;
	if (off & 4095)
		return -EINVAL;
	if (f->vn && f->vn->kind == VN_DEV && devfs_is_zero(f->vn))
		return plat_inject(t, SYS_mmap, addr, len, (uint64_t)prot,
				   (uint64_t)(flags | MAP_ANONYMOUS),
				   (uint64_t)-1, 0);
	if (f->stream || !f->vn ||
	    (f->vn->kind != VN_GOFER && f->vn->kind != VN_TMPFS &&
	     f->vn->kind != VN_HOST) ||
	    (f->hostfd < 0 && f->vn->kind != VN_TMPFS))
		return -ENODEV;
	if ((f->flags & O_ACCMODE) == O_WRONLY || (f->flags & O_PATH))
		return -EACCES;
	/* Linux: EPERM for PROT_EXEC of a file on a noexec mount. (mprotect
	 * runs natively: adding PROT_EXEC later is not refused.) */
	if ((prot & PROT_EXEC) && vfs_noexec(f->vn))
		return -EPERM;
	/* A shared writable mapping needs a file opened for writing: rootfs
	 * files never are; a tmpfs file's host fd is writable, so check the
	 * guest's own open mode. */
	if (shared && (prot & PROT_WRITE) &&
	    (f->vn->kind == VN_GOFER || (f->flags & O_ACCMODE) != O_RDWR))
		return -EACCES;
	hfd = f->hostfd;
	if (f->vn->kind == VN_TMPFS) {
		/* The file's store fd. A shared mapping of a writable open
		 * may be written (mprotect runs natively, so PROT_READ now
		 * says nothing): what it can reach is allocated first, so
		 * that --disk counts it (fs_tmpfs.c, "file data"). */
		bool shared_rw = shared && (f->flags & O_ACCMODE) == O_RDWR;
		hfd = tmpfs_map_fd(f->vn, shared_rw);
		if (hfd < 0)
			return hfd;
	}
	/* The donated host fd is mapped: the file is never copied. A tmpfs
	 * file's fd is open read-write on the host: a guest that opened the
	 * file without write access gets a read-only reopen of it, or a
	 * shared mapping could be mprotect'ed writable and write a file it
	 * may not write. */
	if (shared && f->vn->kind == VN_TMPFS &&
	    (f->flags & O_ACCMODE) != O_RDWR) {
		char self[32];
		int ro;

		snprintf(self, sizeof(self), "self/fd/%d", hfd);
		ro = fd_admit(
			openat(S->host_proc_fd, self, O_RDONLY | O_CLOEXEC));
		gfd = ro < 0 ? -ENOMEM : plat_donate_fd(t, ro);
		if (ro >= 0)
			close(ro);
	} else {
		gfd = plat_donate_fd(t, hfd);
	}
	if (f->vn->kind == VN_TMPFS)
		tmpfs_map_done(f->vn);
	if (gfd < 0)
		return gfd;
	r = plat_inject(t, SYS_mmap, addr, len, (uint64_t)prot, (uint64_t)flags,
			(uint64_t)gfd, off);
	plat_inject(t, SYS_close, (uint64_t)gfd, 0, 0, 0, 0, 0);
	if (r >= 0 || r < -4095)
		maps_add_vn(t->proc, (uint64_t)r,
			    (uint64_t)r + ((len + 4095) & ~4095ULL), f->vn);
	return r;
}

long sys_ioctl(struct task *t, struct syscall_args *a)
{
	struct file *f = fd_get(t, (int)a->a[0]);
	unsigned long cmd = (unsigned long)a->a[1];
	bool *cloexec;

	if (!f)
		return -EBADF;
	switch (cmd) {
	case FIOCLEX:
	case FIONCLEX:
		cloexec = fd_cloexec_ptr(t, (int)a->a[0]);
		*cloexec = cmd == FIOCLEX;
		return 0;
	case FIONBIO: {
		int on;
		if (task_read(t, a->a[2], &on, sizeof(on)) < 0)
			return -EFAULT;
		f->flags = on ? f->flags | O_NONBLOCK : f->flags & ~O_NONBLOCK;
		return 0;
	}
	default:
		break;
	}
	if (f->ops && f->ops->ioctl)
		return f->ops->ioctl(t, f, cmd, a->a[2]);
	return -ENOTTY;
}

long sys_fsync(struct task *t, struct syscall_args *a)
{
	struct file *f = fd_get(t, (int)a->a[0]);
	int r;

	if (!f)
		return -EBADF;
	/* Only a host directory mounted rw has anything to make durable;
	 * the overlay and tmpfs live in memory. */
	if (!f->vn || f->vn->kind != VN_HOST || f->hostfd < 0)
		return 0;
	r = a->nr == SYS_fdatasync ? fdatasync(f->hostfd) : fsync(f->hostfd);
	return r < 0 ? -errno : 0;
}

long sys_sync(struct task *t, struct syscall_args *a)
{
	(void)t;
	(void)a;
	return 0; /* the overlay and tmpfs are memory; rw mounts: see fsync */
}

long sys_syncfs(struct task *t, struct syscall_args *a)
{
	struct file *f = fd_get(t, (int)a->a[0]);

	if (!f)
		return -EBADF;
	if (f->vn && f->vn->kind == VN_HOST && f->hostfd >= 0)
		return syncfs(f->hostfd) < 0 ? -errno : 0;
	return 0;
}

/* Advice only: every one Linux knows is taken, and none changes what a
 * read gives. */
long sys_fadvise64(struct task *t, struct syscall_args *a)
{
	struct file *f = fd_get(t, (int)a->a[0]);
	int advice = (int)a->a[3];

	if (!f)
		return -EBADF;
	if (f->stream)
		return -ESPIPE;
	if ((int64_t)a->a[2] < 0)
		return -EINVAL;
	return advice >= POSIX_FADV_NORMAL && advice <= POSIX_FADV_NOREUSE ?
		       0 :
		       -EINVAL;
}

/* munmap, mprotect, mremap that the filter did not let run natively: they
 * named a range near the stub. Refused if they would touch it; otherwise
 * the host runs exactly the checked registers (the task is stopped). */
long sys_mm_checked(struct task *t, struct syscall_args *a)
{
	(void)t;
	if (stub_overlaps(a->a[0], a->a[1]))
		return -EINVAL;
	if (a->nr == SYS_mremap && (a->a[3] & MREMAP_FIXED) &&
	    stub_overlaps(a->a[4], a->a[2]))
		return -EINVAL;
	return SYS_PASSTHROUGH;
}
