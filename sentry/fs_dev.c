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
 * Besides them, the OCI config's linux.devices (S->opts.devices), with the
 * directories their paths imply: each has the type, number, mode and owner
 * the config gives it. Opened, a device is the sentry's own device of that
 * type and number (c 1:3 is null wherever it is), else ENXIO, Linux's
 * answer for a number no driver has; a FIFO is a FIFO. One of the config's
 * replaces a fixed node of its name, as runc's mknod does, except the
 * mounted directories (the config refuses those) and ptmx, which runc
 * makes its symlink to pts/ptmx again afterwards.
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
	DK_DIR,	  /* shm, mqueue: empty (their filesystems are mounted over) */
	DK_PTS,	  /* /dev/pts: the live ptys */
	DK_PTMX,  /* a new pty's master */
	DK_TTY,	  /* the caller's controlling terminal */
	DK_PTY,	  /* /dev/pts/N (num: N) */
	DK_UDEV,  /* a config device of no driver here: ENXIO */
	DK_UFIFO, /* a config FIFO */
	DK_UDIR,  /* a directory a config device's path implies */
};

/* Nodes from the config (linux.devices) have vn->pid = their index + 1:
 * stat shows the config's mode, owner and number for them, whichever
 * device pk says they open as. */
static const struct dev_spec *vn_spec(const struct vnode *vn)
{
	if (vn->pid <= 0 || (size_t)vn->pid > S->opts.ndevices)
		return NULL;
	return &S->opts.devices[vn->pid - 1];
}

/* A FIFO's pipe, while anyone has it open (fifo_open), by device index. */
static struct pipe **ufifos;

/* The sentry's own device of d's type and number, as DK_*, with the
 * number its vnode keeps in num (the minor: a pty's index). */
static int spec_kind(const struct dev_spec *d, int *num)
{
	*num = (int)d->minor;
	if (S_ISFIFO(d->mode))
		return DK_UFIFO;
	if (!S_ISCHR(d->mode))
		return DK_UDEV; /* no block device here */
	if (d->major == 1) {
		switch (d->minor) {
		case 3:
			return DK_NULL;
		case 5:
			return DK_ZERO;
		case 7:
			return DK_FULL;
		case 8:
			return DK_RANDOM;
		case 9:
			return DK_URANDOM;
		}
	}
	if (d->major == 5 && d->minor == 0)
		return DK_TTY;
	if (d->major == 5 && d->minor == 2)
		return DK_PTMX;
	if (d->major == 136) /* UNIX98_PTY_SLAVE_MAJOR: /dev/pts/N */
		return DK_PTY;
	return DK_UDEV;
}

/* Path of d below /dev ("net/tun"). */
static const char *spec_rel(const struct dev_spec *d)
{
	return d->path + strlen("/dev/");
}

/* What the name rel (below /dev) is among the config's devices: the index
 * of the device at rel (*is_dir false), or of one below it (*is_dir
 * true), or -1. */
static int spec_find(const char *rel, bool *is_dir)
{
	size_t i, n = strlen(rel);

	for (i = 0; i < S->opts.ndevices; i++) {
		const char *r = spec_rel(&S->opts.devices[i]);

		if (strncmp(r, rel, n))
			continue;
		if (!r[n] || r[n] == '/') {
			*is_dir = r[n] == '/';
			return (int)i;
		}
	}
	return -1;
}

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

static int dev_fstat(struct file *f, struct stat *st)
{
	return devfs_stat(f->vn, st);
}

static const struct file_ops dev_chr_ops = {
	.read = dev_read,
	.write = dev_write,
	.poll = file_always_ready,
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
	if (S_ISBLK(m))
		return DT_BLK;
	if (S_ISFIFO(m))
		return DT_FIFO;
	return DT_REG;
}

/* A mount directly in /dev (vfs_dev_mounts), as a listing entry. */
static bool emit_mount(void *ctx, const char *name, mode_t mode)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "/dev/%s", name);
	return dirent_emit(ctx, path_ino(path), dtype(mode), name);
}

/* The config's nodes directly in dir (the root or a DK_UDIR), each name
 * once. Cost: quadratic in the config's devices (OCI_DEVICES_MAX). */
static void emit_specs(struct dirent_sink *s, struct vnode *dir)
{
	const char *drel = dir->pk == DK_ROOT ? "" :
						dir->path + strlen("/dev/");
	size_t dn = strlen(drel), i, j;
	char path[PATH_MAX], name[NAME_MAX + 1];

	for (i = 0; i < S->opts.ndevices; i++) {
		const struct dev_spec *d = &S->opts.devices[i];
		const char *r = spec_rel(d), *c;
		bool seen = false, sub;
		size_t n;

		if (dn && (strncmp(r, drel, dn) || r[dn] != '/'))
			continue;
		c = dn ? r + dn + 1 : r;
		n = strcspn(c, "/");
		if (n > NAME_MAX)
			continue;
		if (!dn && n == 4 && !strncmp(c, "ptmx", 4))
			continue; /* the fixed one stays (see the top) */
		sub = c[n] == '/';
		/* Said already, by an earlier device of that name? */
		for (j = 0; j < i && !seen; j++) {
			const char *q = spec_rel(&S->opts.devices[j]);
			seen = !strncmp(q, r, (size_t)(c - r) + n) &&
			       (!q[c - r + n] || q[c - r + n] == '/');
		}
		if (seen)
			continue;
		memcpy(name, c, n);
		name[n] = 0;
		snprintf(path, sizeof(path), "%s/%s", dir->path, name);
		if (!dirent_emit(s, path_ino(path),
				 sub ? DT_DIR : dtype(d->mode), name))
			return;
	}
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
	if (vn->pk != DK_ROOT && vn->pk != DK_UDIR)
		goto out; /* shm is empty */
	for (i = 0; vn->pk == DK_ROOT && i < ARRAY_SIZE(dev_ents); i++) {
		bool is_dir;

		if (spec_find(dev_ents[i].name, &is_dir) >= 0 &&
		    dev_ents[i].dk != DK_PTMX)
			continue; /* the config's replaces it */
		snprintf(path, sizeof(path), "%s/%s", vn->path,
			 dev_ents[i].name);
		if (!dirent_emit(s, path_ino(path), dtype(dev_ents[i].mode),
				 dev_ents[i].name))
			goto out;
	}
	/* then what is mounted in /dev besides (a bound termination-log) */
	vfs_dev_mounts(emit_mount, s);
	emit_specs(s, vn);
out:
	f->dir_index = s->index;
	return (long)s->len;
}

static const struct file_ops dev_dir_ops = {
	.read = file_read_isdir,
	.write = file_write_ebadf,
	.poll = file_always_ready,
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

/* name in dir (the root or a DK_UDIR) among the config's devices: 0 and
 * *out (a new vnode), or -ENOENT. */
static int lookup_spec(struct vnode *dir, const char *name, struct vnode **out)
{
	char path[PATH_MAX];
	const struct dev_spec *d;
	struct vnode *vn;
	bool is_dir = false;
	int i, n, num;

	if (dir->pk == DK_ROOT && !strcmp(name, "ptmx"))
		return -ENOENT; /* the fixed one stays (see the top) */
	n = snprintf(path, sizeof(path), "%s/%s", dir->path, name);
	if (n < 0 || (size_t)n >= sizeof(path))
		return -ENAMETOOLONG;
	i = spec_find(path + strlen("/dev/"), &is_dir);
	if (i < 0)
		return -ENOENT;
	d = &S->opts.devices[i];
	/* A directory only the config's paths make: root's, 0755, as
	 * runc's MkdirAll makes it. */
	vn = vnode_new(VN_DEV, is_dir ? S_IFDIR | 0755 : d->mode, path);
	if (!vn)
		return -ENOMEM;
	if (is_dir) {
		vn->pk = DK_UDIR;
	} else {
		vn->pk = spec_kind(d, &num);
		vn->num = num;
		vn->pid = i + 1;
	}
	*out = vn;
	return 0;
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
	if (dir->pk == DK_ROOT || dir->pk == DK_UDIR) {
		int rc = lookup_spec(dir, name, out);
		if (rc != -ENOENT || dir->pk == DK_UDIR)
			return rc;
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
	const struct dev_spec *d;
	struct timespec now;

	if (!boot) {
		clock_gettime(CLOCK_REALTIME, &now);
		boot = (int64_t)now.tv_sec * 1000000000LL + now.tv_nsec -
		       (now_ns() - S->boot_ns);
	}
	memset(st, 0, sizeof(*st));
	/* /dev/pts is a filesystem of its own, as devpts is */
	st->st_dev = (vn->pk == DK_PTS || vn->pk == DK_PTY) && !vn_spec(vn) ?
			     VFS_DEV_PTS :
			     VFS_DEV_DEV;
	st->st_ino = path_ino(vn->path);
	st->st_mode = vn->mode;
	st->st_nlink = S_ISDIR(vn->mode) ? 2 : 1;
	if ((d = vn_spec(vn))) {
		st->st_uid = d->uid;
		st->st_gid = d->gid;
		if (!S_ISFIFO(d->mode))
			st->st_rdev = makedev(d->major, d->minor);
	} else if (vn->pk == DK_PTY)
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
	if ((flags & O_DIRECTORY) && !S_ISDIR(vn->mode))
		return -ENOTDIR;
	if (vn->pk == DK_UDEV)
		return -ENXIO; /* chrdev_open/blkdev_open: no driver */
	if (vn->pk == DK_UFIFO) {
		int rc;

		if (!ufifos) {
			ufifos = calloc(S->opts.ndevices, sizeof(*ufifos));
			if (!ufifos)
				return -ENOMEM;
		}
		rc = fifo_open(t, &ufifos[vn->pid - 1], flags, &f);
		if (rc == SYS_BLOCK && t && !t->fifo_vn)
			t->fifo_vn = vnode_get(vn); /* see do_open */
		if (rc < 0 || rc == SYS_BLOCK)
			return rc;
		f->vn = vnode_get(vn);
		*out = f;
		return 0;
	}
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
