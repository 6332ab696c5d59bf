/* sentry/fs_sys.c: the sandbox's /sys, as a filesystem.
 *
 * The tree and its text are sentry/sysfs.c's; this is the VFS side: vnodes
 * (VN_SYS; vn->pk is the table's node, vn->num its instance), stat,
 * listings, opens and links. Every file is read whole at open into f->data
 * (the file owns it; file_put frees it), as sysfs's attributes are one
 * show() a read. The mount is read-only (vfs_access: EROFS for a write,
 * by root too, as runc's ro sysfs): nothing here writes.
 *
 * The root lives as long as the sentry; every other lookup returns a
 * fresh vnode (one reference, the caller's) that stays valid while its
 * node does: an interface's goes with the netstack (ENOENT).
 */
#include "sentry/sysfs.h"
#include "sentry/vfs.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static uint64_t path_ino(const char *path)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	while (*path)
		h = (h ^ (uint8_t)*path++) * 0x100000001b3ULL;
	h &= 0xffffffffULL;
	return h ? h : 1;
}

static unsigned char dtype(mode_t m)
{
	return S_ISDIR(m) ? DT_DIR : S_ISLNK(m) ? DT_LNK : DT_REG;
}

struct vnode *sysfs_root(void)
{
	static struct vnode *root;

	if (!root) {
		root = vnode_new(VN_SYS, sysfs_mode(SYSFS_ROOT), "/sys");
		if (!root)
			return NULL;
		/* /sys itself is 0555 on Linux, its directories 0755 */
		root->mode = S_IFDIR | 0555;
		root->pk = SYSFS_ROOT;
		root->num = 0;
		root->cached = true;
	}
	return root;
}

int sysfs_vn_lookup(struct vnode *dir, const char *name, struct vnode **out)
{
	char path[PATH_MAX];
	struct sysfs_ent e;
	struct vnode *vn;
	int rc = sysfs_find(dir->pk, dir->num, name, &e);

	if (rc < 0)
		return rc;
	if (snprintf(path, sizeof(path), "%s/%s", dir->path, e.name) >=
	    (int)sizeof(path))
		return -ENAMETOOLONG;
	vn = vnode_new(VN_SYS, e.mode, path);
	if (!vn)
		return -ENOMEM;
	vn->pk = e.node;
	vn->num = e.inst;
	*out = vn;
	return 0;
}

int sysfs_stat(struct vnode *vn, struct stat *st)
{
	static int64_t boot;
	char text[SYSFS_TEXT_MAX];

	/* Gone (an interface the netstack no longer has): ENOENT. */
	if (vn->pk != SYSFS_ROOT && !S_ISDIR(vn->mode) &&
	    sysfs_read(vn->pk, vn->num, text, sizeof(text)) < 0)
		return -ENOENT;
	if (!boot) {
		struct timespec now;
		clock_gettime(CLOCK_REALTIME, &now);
		boot = (int64_t)now.tv_sec * 1000000000LL + now.tv_nsec -
		       (now_ns() - S->boot_ns);
	}
	memset(st, 0, sizeof(*st));
	st->st_dev = VFS_DEV_SYS;
	st->st_ino = path_ino(vn->path);
	st->st_mode = vn->mode;
	st->st_nlink = S_ISDIR(vn->mode) ? 2 : 1;
	/* sysfs says a page for every attribute, whatever it holds */
	st->st_size = S_ISREG(vn->mode) ? 4096 : 0;
	st->st_blksize = 4096;
	st->st_atim.tv_sec = st->st_mtim.tv_sec = st->st_ctim.tv_sec =
		boot / 1000000000LL;
	st->st_atim.tv_nsec = st->st_mtim.tv_nsec = st->st_ctim.tv_nsec =
		boot % 1000000000LL;
	return 0;
}

int sysfs_readlink(struct vnode *vn, char *buf, size_t cap)
{
	char text[SYSFS_TEXT_MAX];
	int n;

	if (!S_ISLNK(vn->mode))
		return -EINVAL;
	n = sysfs_read(vn->pk, vn->num, text, sizeof(text));
	if (n < 0)
		return n;
	if ((size_t)n >= cap)
		return -ENAMETOOLONG;
	memcpy(buf, text, (size_t)n + 1);
	return n;
}

/* ---- open files ----------------------------------------------------------- */

static int sys_fstat(struct file *f, struct stat *st)
{
	return sysfs_stat(f->vn, st);
}

static long sys_getdents(struct task *t, struct file *f, struct dirent_sink *s)
{
	struct vnode *vn = f->vn;
	char path[PATH_MAX], *slash;
	struct sysfs_ent e;

	(void)t;
	s->skip = f->dir_index;
	s->index = 0;
	snprintf(path, sizeof(path), "%s", vn->path);
	slash = strrchr(path, '/');
	if (slash == path)
		slash[1] = 0;
	else if (slash)
		*slash = 0;
	if (!dirent_emit(s, path_ino(vn->path), DT_DIR, ".") ||
	    !dirent_emit(s, path_ino(path), DT_DIR, ".."))
		goto out;
	for (unsigned pos = 0; sysfs_child(vn->pk, vn->num, pos, &e) == 0;
	     pos++) {
		snprintf(path, sizeof(path), "%s/%s", vn->path, e.name);
		if (!dirent_emit(s, path_ino(path), dtype(e.mode), e.name))
			break;
	}
out:
	f->dir_index = s->index;
	return (long)s->len;
}

static const struct file_ops sys_data_ops = {
	.read = file_data_read,
	.write = file_write_ebadf,
	.poll = file_always_ready,
	.stat = sys_fstat,
};

static const struct file_ops sys_dir_ops = {
	.read = file_read_isdir,
	.write = file_write_ebadf,
	.poll = file_always_ready,
	.getdents = sys_getdents,
	.stat = sys_fstat,
};

int sysfs_open(struct task *t, struct vnode *vn, int flags, struct file **out)
{
	char text[SYSFS_TEXT_MAX];
	struct file *f;
	int n;

	(void)t;
	/* Reached only with O_NOFOLLOW (O_PATH is vfs_open's): the
	 * resolver follows every other link itself. */
	if (S_ISLNK(vn->mode))
		return -ELOOP;
	flags &= ~(O_CREAT | O_EXCL | O_NOCTTY | O_TRUNC | O_CLOEXEC);
	if ((flags & O_ACCMODE) != O_RDONLY)
		return S_ISDIR(vn->mode) ? -EISDIR : -EROFS;
	if (S_ISDIR(vn->mode)) {
		f = file_new(&sys_dir_ops, flags);
		if (!f)
			return -errno;
		f->vn = vnode_get(vn);
		*out = f;
		return 0;
	}
	if (flags & O_DIRECTORY)
		return -ENOTDIR;
	n = sysfs_read(vn->pk, vn->num, text, sizeof(text));
	if (n < 0)
		return n == -EOVERFLOW ? -EIO : n;
	f = file_new(&sys_data_ops, flags);
	if (!f)
		return -errno;
	f->data = strdup(text);
	if (!f->data) {
		file_discard(f); /* never used: data is its to free, not it */
		return -ENOMEM;
	}
	f->data_len = (size_t)n;
	f->vn = vnode_get(vn);
	*out = f;
	return 0;
}
