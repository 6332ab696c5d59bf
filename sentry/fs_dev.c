/* sentry/fs_dev.c: the sandbox's /dev.
 *
 * A fixed set of nodes served entirely by the sentry: the memory devices
 * (null, zero, full, random, urandom), the fd links into /proc/self, two
 * empty directories, and /dev/pts with its ptmx (/dev/ptmx links there).
 * Mounts directly in /dev (a bundle's bind of a file at
 * /dev/termination-log, a tmpfs at /dev/x) are found by the VFS before
 * devfs is asked (sentry/vfs.c mount_at), and listed after its nodes. No
 * host device is ever opened: random bytes come from
 * getrandom(2) in the sentry.
 *
 * The root is allocated once and never freed; every other lookup returns a
 * fresh vnode (refs=1) that the caller puts. Symlink targets are kept in
 * vn->link, where vfs_readlink() reads them; vnode_put frees them.
 */
#include "sentry/fs_dev.h"
#include "sentry/pty.h"
#include "sentry/vfs.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/sysmacros.h>
#include <time.h>

enum dev_kind {
	DK_ROOT,
	DK_NULL,
	DK_ZERO,
	DK_FULL,
	DK_RANDOM,
	DK_URANDOM,
	DK_LINK,
	DK_DIR,	 /* shm, mqueue: empty (their filesystems are mounted over) */
	DK_PTS,	 /* /dev/pts: the live ptys */
	DK_PTMX, /* a new pty's master */
	DK_TTY,	 /* the caller's controlling terminal */
	DK_PTY,	 /* /dev/pts/N (num: N) */
};

struct dent {
	const char *name;
	int dk;
	mode_t mode;
	int minor;	    /* character devices: major 1 */
	const char *target; /* symlinks */
};

static const struct dent dev_ents[] = {
	{ "null", DK_NULL, S_IFCHR | 0666, 3, NULL },
	{ "zero", DK_ZERO, S_IFCHR | 0666, 5, NULL },
	{ "full", DK_FULL, S_IFCHR | 0666, 7, NULL },
	{ "random", DK_RANDOM, S_IFCHR | 0666, 8, NULL },
	{ "urandom", DK_URANDOM, S_IFCHR | 0666, 9, NULL },
	{ "fd", DK_LINK, S_IFLNK | 0777, 0, "/proc/self/fd" },
	{ "stdin", DK_LINK, S_IFLNK | 0777, 0, "/proc/self/fd/0" },
	{ "stdout", DK_LINK, S_IFLNK | 0777, 0, "/proc/self/fd/1" },
	{ "stderr", DK_LINK, S_IFLNK | 0777, 0, "/proc/self/fd/2" },
	{ "shm", DK_DIR, S_IFDIR | 01777, 0, NULL },
	{ "mqueue", DK_DIR, S_IFDIR | 01777, 0, NULL },
	{ "pts", DK_PTS, S_IFDIR | 0755, 0, NULL },
	/* As in runc's containers (and devpts's own docs): the pts
	 * instance's ptmx, linked to. */
	{ "ptmx", DK_LINK, S_IFLNK | 0777, 0, "pts/ptmx" },
	{ "tty", DK_TTY, S_IFCHR | 0666, 0, NULL },
};

static uint64_t path_ino(const char *path)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	while (*path)
		h = (h ^ (uint8_t)*path++) * 0x100000001b3ULL;
	h &= 0xffffffffULL;
	return h ? h : 1;
}

bool devfs_is_zero(struct vnode *vn)
{
	return vn && vn->kind == VN_DEV && vn->pk == DK_ZERO;
}

struct vnode *devfs_null_at(const char *path)
{
	struct vnode *vn = vnode_new(VN_DEV, S_IFCHR | 0666, path);

	if (vn) {
		vn->pk = DK_NULL;
		vn->num = 3;
	}
	return vn;
}

/* ---- character devices ---------------------------------------------------- */

static long dev_read(struct task *t, struct file *f, void *buf, size_t n,
		     int64_t *off)
{
	ssize_t r;

	(void)t;
	(void)off;
	switch (f->vn->pk) {
	case DK_NULL:
		return 0;
	case DK_ZERO:
	case DK_FULL:
		memset(buf, 0, n);
		return (long)n;
	case DK_RANDOM:
	case DK_URANDOM: {
		/* All n, as Linux's (/dev/random too since 5.6): a short
		 * getrandom here is the sentry's own tick interrupting it,
		 * never the guest's business. */
		size_t done = 0;

		while (done < n) {
			r = getrandom((char *)buf + done, n - done, 0);
			if (r < 0 && errno != EINTR)
				return done ? (long)done : -errno;
			if (r > 0)
				done += (size_t)r;
		}
		return (long)done;
	}
	default:
		return -EINVAL;
	}
}

static long dev_write(struct task *t, struct file *f, const void *buf, size_t n,
		      int64_t *off)
{
	(void)t;
	(void)buf;
	(void)off;
	/* Writes to random/urandom would credit the host pool: accepted and
	 * discarded, like null. */
	return f->vn->pk == DK_FULL ? -ENOSPC : (long)n;
}

static short dev_poll(struct file *f, short events)
{
	(void)f;
	return events & (POLLIN | POLLOUT | POLLRDNORM | POLLWRNORM);
}

static int dev_fstat(struct file *f, struct stat *st)
{
	return devfs_stat(f->vn, st);
}

static const struct file_ops dev_chr_ops = {
	.read = dev_read,
	.write = dev_write,
	.poll = dev_poll,
	.stat = dev_fstat,
};

/* ---- directories ----------------------------------------------------------- */

static unsigned char dtype(mode_t m)
{
	if (S_ISDIR(m))
		return DT_DIR;
	if (S_ISLNK(m))
		return DT_LNK;
	if (S_ISCHR(m))
		return DT_CHR;
	return DT_REG;
}

/* A mount directly in /dev (vfs_dev_mounts), as a listing entry. */
static bool emit_mount(void *ctx, const char *name, mode_t mode)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "/dev/%s", name);
	return dirent_emit(ctx, path_ino(path), dtype(mode), name);
}

static long dev_getdents(struct task *t, struct file *f, struct dirent_sink *s)
{
	struct vnode *vn = f->vn;
	char path[PATH_MAX];
	size_t i;

	(void)t;
	s->skip = f->dir_index;
	s->index = 0;
	if (!dirent_emit(s, path_ino(vn->path), DT_DIR, ".") ||
	    !dirent_emit(s, path_ino("/"), DT_DIR, ".."))
		goto out;
	if (vn->pk == DK_PTS) {
		int idx[64], n = pty_count_index(idx, 64), k;

		snprintf(path, sizeof(path), "%s/ptmx", vn->path);
		if (!dirent_emit(s, path_ino(path), DT_CHR, "ptmx"))
			goto out;
		for (k = 0; k < n; k++) {
			char name[16];
			snprintf(name, sizeof(name), "%d", idx[k]);
			snprintf(path, sizeof(path), "%s/%s", vn->path, name);
			if (!dirent_emit(s, path_ino(path), DT_CHR, name))
				break;
		}
		goto out;
	}
	if (vn->pk != DK_ROOT)
		goto out; /* shm is empty */
	for (i = 0; i < ARRAY_SIZE(dev_ents); i++) {
		snprintf(path, sizeof(path), "%s/%s", vn->path,
			 dev_ents[i].name);
		if (!dirent_emit(s, path_ino(path), dtype(dev_ents[i].mode),
				 dev_ents[i].name))
			goto out;
	}
	/* then what is mounted in /dev besides (a bound termination-log) */
	vfs_dev_mounts(emit_mount, s);
out:
	f->dir_index = s->index;
	return (long)s->len;
}

static const struct file_ops dev_dir_ops = {
	.read = file_read_isdir,
	.write = file_write_ebadf,
	.poll = dev_poll,
	.getdents = dev_getdents,
	.stat = dev_fstat,
};

/* ---- the vfs entry points --------------------------------------------------- */

struct vnode *devfs_root(void)
{
	static struct vnode *root;

	if (!root) {
		root = vnode_new(VN_DEV, S_IFDIR | 0755, "/dev");
		if (!root)
			return NULL;
		root->pk = DK_ROOT;
		root->cached = true; /* lives as long as the sentry */
	}
	return root;
}

int devfs_lookup(struct vnode *dir, const char *name, struct vnode **out)
{
	char path[PATH_MAX];
	const struct dent *e = NULL;
	struct vnode *vn;
	size_t i;
	int n;

	if (!S_ISDIR(dir->mode))
		return -ENOTDIR;
	if (dir->pk == DK_PTS) {
		char *end;
		long idx = strtol(name, &end, 10);
		bool ptmx = !strcmp(name, "ptmx");

		if (!ptmx &&
		    (*end || end == name || idx < 0 || !pty_exists((int)idx)))
			return -ENOENT;
		n = snprintf(path, sizeof(path), "%s/%s", dir->path, name);
		if (n < 0 || (size_t)n >= sizeof(path))
			return -ENAMETOOLONG;
		/* ptmx: 0666, as runc's ptmxmode=0666 (devpts's own default,
		 * 0000, would leave only /dev/ptmx's node, which is this) */
		vn = vnode_new(VN_DEV, S_IFCHR | (ptmx ? 0666 : 0620), path);
		if (!vn)
			return -ENOMEM;
		vn->pk = ptmx ? DK_PTMX : DK_PTY;
		vn->num = ptmx ? 0 : (int)idx;
		*out = vn;
		return 0;
	}
	if (dir->pk != DK_ROOT)
		return -ENOENT;
	for (i = 0; i < ARRAY_SIZE(dev_ents); i++)
		if (!strcmp(dev_ents[i].name, name))
			e = &dev_ents[i];
	if (!e)
		return -ENOENT;
	n = snprintf(path, sizeof(path), "%s/%s", dir->path, name);
	if (n < 0 || (size_t)n >= sizeof(path))
		return -ENAMETOOLONG;
	vn = vnode_new(VN_DEV, e->mode, path);
	if (!vn)
		return -ENOMEM;
	vn->pk = e->dk;
	vn->num = e->minor;
	if (e->target) {
		vn->link = strdup(e->target);
		if (!vn->link) {
			vnode_put(vn);
			return -ENOMEM;
		}
	}
	*out = vn;
	return 0;
}

int devfs_stat(struct vnode *vn, struct stat *st)
{
	/* Boot time, fixed at first use so timestamps do not jitter. */
	static int64_t boot;
	struct timespec now;

	if (!boot) {
		clock_gettime(CLOCK_REALTIME, &now);
		boot = (int64_t)now.tv_sec * 1000000000LL + now.tv_nsec -
		       (now_ns() - S->boot_ns);
	}
	memset(st, 0, sizeof(*st));
	/* /dev/pts is a filesystem of its own, as devpts is */
	st->st_dev = vn->pk == DK_PTS || vn->pk == DK_PTY ? VFS_DEV_PTS :
							    VFS_DEV_DEV;
	st->st_ino = path_ino(vn->path);
	st->st_mode = vn->mode;
	st->st_nlink = S_ISDIR(vn->mode) ? 2 : 1;
	if (vn->pk == DK_PTY)
		st->st_rdev = makedev(136, (unsigned)vn->num);
	else if (vn->pk == DK_PTMX)
		st->st_rdev = makedev(5, 2);
	else if (vn->pk == DK_TTY)
		st->st_rdev = makedev(5, 0);
	else if (S_ISCHR(vn->mode))
		st->st_rdev = makedev(1, (unsigned)vn->num);
	if (S_ISLNK(vn->mode) && vn->link)
		st->st_size = (off_t)strlen(vn->link);
	st->st_blksize = 4096;
	st->st_atim.tv_sec = st->st_mtim.tv_sec = st->st_ctim.tv_sec =
		boot / 1000000000LL;
	st->st_atim.tv_nsec = st->st_mtim.tv_nsec = st->st_ctim.tv_nsec =
		boot % 1000000000LL;
	return 0;
}

int devfs_open(struct task *t, struct vnode *vn, int flags, struct file **out)
{
	struct file *f;

	/* Reached only with O_NOFOLLOW: the resolver follows symlinks. */
	if (S_ISLNK(vn->mode))
		return -ELOOP;
	if (vn->pk == DK_PTMX || vn->pk == DK_PTY || vn->pk == DK_TTY) {
		int rc = vn->pk == DK_PTMX ?
				 pty_open_master(t, flags, &f) :
			 vn->pk == DK_PTY ?
				 pty_open_slave(t, vn->num, flags, &f) :
				 pty_open_ctty(t, flags, &f);
		if (rc < 0)
			return rc;
		if (!f->vn)
			f->vn = vnode_get(vn);
		*out = f;
		return 0;
	}
	flags &= ~(O_CREAT | O_EXCL | O_NOCTTY | O_TRUNC | O_CLOEXEC);
	if (S_ISDIR(vn->mode)) {
		if ((flags & O_ACCMODE) != O_RDONLY)
			return -EISDIR;
		f = file_new(&dev_dir_ops, flags);
	} else {
		if (flags & O_DIRECTORY)
			return -ENOTDIR;
		/* Not a stream: like Linux's memory devices these read the
		 * whole count (do_read goes on past its first chunk) and
		 * take pread at any offset. */
		f = file_new(&dev_chr_ops, flags);
	}
	if (!f)
		return -errno;
	f->vn = vnode_get(vn);
	*out = f;
	return 0;
}
