/* sentry/sys_fswrite.c: the write side of the file syscalls.
 *
 * Writable: tmpfs (/tmp, /dev/shm), the rootfs through the overlay (its
 * upper layer is a tmpfs), and host directories mounted rw (VN_HOST,
 * sentry/fs_host.c). Mounted ro: EROFS; procfs and devfs: EPERM. */
#include <fcntl.h>
#include <limits.h>
#include <linux/fs.h>
#include <stdio.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "sentry/fs_host.h"
#include "sentry/fs_tmpfs.h"
#include "sentry/p9client.h"
#include "sentry/overlay.h"
#include "sentry/syscalls.h"
#include "sentry/vfs.h"

/* Swap a resolved directory (or target) for the vnode writes act on: the
 * same tmpfs node, or the overlay's upper copy of a rootfs node (copied
 * up now). procfs and devfs refuse with EPERM. The reference moves. */
static int to_upper_dir(struct vnode **dir)
{
	struct vnode *u;
	int rc = ovl_write_dir(*dir, &u);

	vnode_put(*dir);
	*dir = rc < 0 ? NULL : u;
	return rc;
}

static int to_upper(struct vnode **vn)
{
	struct vnode *u;
	int rc = ovl_write_target(*vn, &u);

	vnode_put(*vn);
	*vn = rc < 0 ? NULL : u;
	return rc;
}

/* The permission checks of a change, made on a rootfs node before it is
 * copied up (tmpfs makes them again on the copy): a guest must not make
 * the sentry copy files it may not change. owner: only the owner (or
 * root) may; otherwise write access will do too. */
static int may_change(struct task *t, struct vnode *vn, bool owner)
{
	const struct creds *c = &t->proc->cred;

	if (vn->kind != VN_GOFER || c->fsuid == vn->st.st_uid)
		return 0;
	if (owner)
		return creds_capable(c, CAP_FOWNER) ? 0 : -EPERM;
	return vfs_access(c, vn, W_OK) < 0 ? -EACCES : 0;
}

/* Write and search permission on a directory, checked before a copy-up. */
static int may_write_in(struct task *t, struct vnode *dir)
{
	return dir->kind == VN_GOFER ?
		       vfs_access(&t->proc->cred, dir, W_OK | X_OK) :
		       0;
}

/* Does dir/name exist in the merged view (rootfs entries included)? */
static bool name_exists(struct task *t, struct vnode *dir, const char *name)
{
	char full[PATH_MAX];
	struct vnode *vn;

	if (vfs_child_path(dir, name, full, sizeof(full)) < 0 ||
	    vfs_resolve(t, AT_FDCWD, full, 0, &vn) < 0)
		return false;
	vnode_put(vn);
	return true;
}

static int get_path(struct task *t, uint64_t addr, char *buf)
{
	int n = task_read_str(t, addr, buf, PATH_MAX);
	return n < 0 ? n : 0;
}

/* Resolve the parent directory of a guest path into dir/name. */
static int parent_of(struct task *t, int dirfd, uint64_t upath,
		     struct vnode **dir, char *name, bool *trailing)
{
	char path[PATH_MAX];
	int rc = get_path(t, upath, path);

	if (rc < 0)
		return rc;
	return vfs_resolve_parent(t, dirfd, path, dir, name, trailing);
}

/* Called by open(O_CREAT) when the path does not exist. */
int fs_create(struct task *t, int dirfd, const char *path, mode_t mode,
	      int rflags, struct vnode **out)
{
	char name[NAME_MAX + 1];
	struct vnode *dir;
	bool trailing;
	int rc = vfs_resolve_parent_flags(t, dirfd, path, rflags, &dir, name,
					  &trailing);

	if (rc < 0)
		return rc == -EINVAL ? -EISDIR : rc;
	if (trailing) {
		vnode_put(dir);
		return -EISDIR;
	}
	if (dir->kind == VN_HOST) {
		rc = host_create(t, dir, name, mode & ~t->proc->umask, out);
		vnode_put(dir);
		return rc;
	}
	if (dir->kind == VN_MQUEUE) {
		rc = mqueuefs_create(t, dir, name, mode & ~t->proc->umask, out);
		vnode_put(dir);
		return rc;
	}
	rc = to_upper_dir(&dir);
	if (rc == 0)
		rc = tmpfs_create(t, dir, name, mode & ~t->proc->umask, out);
	vnode_put(dir);
	return rc;
}

static long do_mkdir(struct task *t, int dirfd, uint64_t upath, mode_t mode)
{
	char name[NAME_MAX + 1];
	struct vnode *dir;
	bool trailing;
	long rc = parent_of(t, dirfd, upath, &dir, name, &trailing);

	if (rc == -EINVAL || rc == -EBUSY)
		return -EEXIST;
	if (rc < 0)
		return rc;
	if (name_exists(t, dir, name)) {
		vnode_put(dir);
		return -EEXIST;
	}
	if (dir->kind == VN_HOST)
		rc = host_mkdir(t, dir, name, mode & ~t->proc->umask);
	else
		rc = to_upper_dir(&dir);
	if (rc == 0 && dir->kind != VN_HOST)
		rc = tmpfs_mkdir(t, dir, name, mode & ~t->proc->umask);
	vnode_put(dir);
	return rc;
}

/* inotify's view of one name change: the directory, the name, and the
 * object (looked up before a removal, after a creation). */
struct inote {
	struct vnode *dir, *obj;
	char name[NAME_MAX + 1];
	bool on;
};

static void inote_begin(struct task *t, int dirfd, uint64_t upath,
			struct inote *n, bool obj_now)
{
	char path[PATH_MAX], full[PATH_MAX];
	bool trailing;

	n->on = false;
	n->dir = n->obj = NULL;
	if (!inotify_active() || get_path(t, upath, path) < 0 ||
	    vfs_resolve_parent(t, dirfd, path, &n->dir, n->name, &trailing) < 0)
		return;
	n->on = true;
	if (obj_now &&
	    vfs_child_path(n->dir, n->name, full, sizeof(full)) == 0 &&
	    vfs_resolve(t, AT_FDCWD, full, 0, &n->obj) < 0)
		n->obj = NULL;
}

static void inote_end(struct task *t, struct inote *n, long rc, uint32_t ev,
		      uint32_t cookie)
{
	char full[PATH_MAX];

	if (n->on && rc == 0 && ev) {
		if (!n->obj && (ev & IN_CREATE) &&
		    vfs_child_path(n->dir, n->name, full, sizeof(full)) == 0 &&
		    vfs_resolve(t, AT_FDCWD, full, 0, &n->obj) < 0)
			n->obj = NULL;
		if ((ev & IN_DELETE) && n->obj &&
		    (S_ISDIR(n->obj->mode) || n->obj->st.st_nlink <= 1))
			ev |= IN_DELETE_SELF; /* its last name went */
		else if ((ev & IN_DELETE) && n->obj)
			ev |= IN_ATTRIB; /* a link count changed */
		inotify_report(n->obj, n->dir, n->name, ev, cookie);
	}
	vnode_put(n->obj);
	vnode_put(n->dir);
	n->obj = n->dir = NULL;
	n->on = false;
}

/* After a change to an entry of a directory: F_NOTIFY watchers hear. */
static long notified(struct task *t, long rc, int dirfd, uint64_t upath,
		     unsigned long ev)
{
	if (rc == 0)
		notify_path(t, dirfd, upath, ev);
	return rc;
}

/* A creation or a removal: F_NOTIFY's event and inotify's. */
static long named(struct task *t, int dirfd, uint64_t upath, uint32_t in_ev,
		  long (*op)(struct task *, struct syscall_args *),
		  struct syscall_args *a)
{
	struct inote n;
	long rc;

	inote_begin(t, dirfd, upath, &n, (in_ev & IN_DELETE) != 0);
	rc = op(t, a);
	inote_end(t, &n, rc, in_ev, 0);
	return notified(t, rc, dirfd, upath,
			(in_ev & IN_DELETE) ? DN_DELETE : DN_CREATE);
}

static long op_mkdir(struct task *t, struct syscall_args *a)
{
	return do_mkdir(t, (int)a->a[0], a->a[1], (mode_t)a->a[2]);
}

long sys_mkdir(struct task *t, struct syscall_args *a)
{
	struct syscall_args b = { .a = { (uint64_t)AT_FDCWD, a->a[0],
					 a->a[1] } };

	return named(t, AT_FDCWD, a->a[0], IN_CREATE, op_mkdir, &b);
}

long sys_mkdirat(struct task *t, struct syscall_args *a)
{
	return named(t, (int)a->a[0], a->a[1], IN_CREATE, op_mkdir, a);
}

static long do_unlink(struct task *t, int dirfd, uint64_t upath, bool rmdir)
{
	char name[NAME_MAX + 1], full[PATH_MAX];
	struct vnode *dir, *vn;
	bool trailing, lower_only = false;
	uid_t owner;
	long rc = parent_of(t, dirfd, upath, &dir, name, &trailing);

	if (rc == -EINVAL)
		return rmdir ? -EINVAL : -EISDIR;
	if (rc < 0)
		return rc;
	rc = vfs_child_path(dir, name, full, sizeof(full));
	if (rc == 0)
		rc = vfs_resolve(t, AT_FDCWD, full, 0, &vn);
	if (rc < 0) {
		vnode_put(dir);
		return rc;
	}
	if (rmdir && !S_ISDIR(vn->mode))
		rc = -ENOTDIR;
	else if (!rmdir && S_ISDIR(vn->mode))
		rc = -EISDIR;
	else if (!rmdir && trailing)
		rc = -ENOTDIR;
	else if (dir->kind == VN_HOST)
		rc = 0; /* the host knows best whether it is empty */
	else if (rmdir && vn->kind != VN_TMPFS && !ovl_dir_empty(vn))
		rc = -ENOTEMPTY;
	else if (rmdir && vn->kind == VN_TMPFS && tmpfs_is_overlay(vn) &&
		 !ovl_dir_empty(vn))
		rc = -ENOTEMPTY;
	owner = vn->st.st_uid;
	vnode_put(vn);
	if (rc == 0 && dir->kind == VN_HOST) {
		rc = host_unlink(t, dir, name, rmdir, owner);
		vnode_put(dir);
		return rc;
	}
	if (rc == 0 && dir->kind == VN_MQUEUE) {
		rc = mqueuefs_unlink(t, dir, name);
		vnode_put(dir);
		return rc;
	}
	if (rc == 0)
		rc = to_upper_dir(&dir);
	if (rc == 0) {
		struct vnode *in_upper;
		if (tmpfs_lookup(dir, name, &in_upper) == 0) {
			vnode_put(in_upper);
			rc = tmpfs_unlink(t, dir, name, rmdir);
		} else {
			/* Only the rootfs has it: the permission checks of a
			 * removal, then a whiteout. */
			rc = vfs_access(&t->proc->cred, dir, W_OK | X_OK);
			if (rc == 0)
				rc = vfs_sticky_ok(&t->proc->cred, dir, owner);
		}
		if (rc == 0)
			rc = lower_only ? ovl_hide_known_lower(dir, name) :
					  ovl_hide_lower(dir, name);
	}
	vnode_put(dir);
	return rc;
}

static long op_unlink(struct task *t, struct syscall_args *a)
{
	return do_unlink(t, (int)a->a[0], a->a[1], a->a[2] != 0);
}

long sys_unlink(struct task *t, struct syscall_args *a)
{
	struct syscall_args b = { .a = { (uint64_t)AT_FDCWD, a->a[0], 0 } };

	return named(t, AT_FDCWD, a->a[0], IN_DELETE, op_unlink, &b);
}

long sys_rmdir(struct task *t, struct syscall_args *a)
{
	struct syscall_args b = { .a = { (uint64_t)AT_FDCWD, a->a[0], 1 } };

	return named(t, AT_FDCWD, a->a[0], IN_DELETE, op_unlink, &b);
}

long sys_unlinkat(struct task *t, struct syscall_args *a)
{
	int flags = (int)a->a[2];
	struct syscall_args b = { .a = { a->a[0], a->a[1],
					 (flags & AT_REMOVEDIR) != 0 } };

	if (flags & ~AT_REMOVEDIR)
		return -EINVAL;
	return named(t, (int)a->a[0], a->a[1], IN_DELETE, op_unlink, &b);
}

/* A directory whose merged view includes rootfs contents: the rootfs one
 * itself, or a copied-up one that does not hide it. */
static bool has_lower_dir(struct vnode *vn)
{
	if (!S_ISDIR(vn->mode))
		return false;
	if (vn->kind == VN_GOFER)
		return true;
	return tmpfs_is_overlay(vn) && !tmpfs_is_opaque(vn) &&
	       ovl_lower_exists(vn->path);
}

/* rename within a host directory mounted rw: 9P has no flags, so
 * NOREPLACE is checked here first and EXCHANGE is not offered. */
static long host_do_rename(struct task *t, struct vnode *odir,
			   const char *oname, struct vnode *ndir,
			   const char *nname, unsigned flags)
{
	char full[PATH_MAX];
	struct vnode *src, *dst;
	long rc;

	if (odir->kind != ndir->kind || odir->mnt != ndir->mnt ||
	    !vfs_same_mount(odir, ndir))
		return -EXDEV;
	if (flags & RENAME_EXCHANGE)
		return -EINVAL;
	rc = vfs_child_path(odir, oname, full, sizeof(full));
	if (rc == 0)
		rc = vfs_resolve(t, AT_FDCWD, full, 0, &src);
	if (rc < 0)
		return rc;
	if (S_ISDIR(src->mode) && vfs_mounts_below(src->path)) {
		vnode_put(src);
		return -EBUSY;
	}
	rc = vfs_child_path(ndir, nname, full, sizeof(full));
	if (rc == 0 && vfs_resolve(t, AT_FDCWD, full, 0, &dst) == 0) {
		if (flags & RENAME_NOREPLACE)
			rc = -EEXIST;
		else if (dst->kind == VN_HOST)
			rc = vfs_sticky_ok(&t->proc->cred, ndir,
					   dst->st.st_uid);
		vnode_put(dst);
	}
	if (rc == 0)
		rc = host_rename(t, odir, oname, ndir, nname, src->st.st_uid);
	vnode_put(src);
	return rc;
}

static bool in_overlay(struct vnode *vn)
{
	return vn->kind == VN_GOFER || tmpfs_is_overlay(vn);
}

/* Do directories a and b lie in one filesystem, as rename needs? The
 * overlay is one: its rootfs nodes and its upper layer together. */
static bool rename_same_fs(struct vnode *a, struct vnode *b)
{
	if (in_overlay(a) || in_overlay(b))
		return in_overlay(a) && in_overlay(b);
	if (a->kind == VN_TMPFS || b->kind == VN_TMPFS)
		return tmpfs_same_fs(a, b);
	return a->kind == b->kind; /* procfs, devfs: EPERM further on */
}

static bool read_only_dir(struct vnode *dir)
{
	if (dir->kind == VN_GOFER)
		return ovl_readonly() || vfs_bound_ro(dir);
	return dir->kind == VN_TMPFS && tmpfs_readonly(dir);
}

/* Is the canonical path p dir itself or below it? (No symlinks in
 * canonical paths: a prefix is an ancestor.) */
static bool at_or_below(const char *p, const char *dir)
{
	size_t n = strlen(dir);

	if (!strcmp(dir, "/"))
		return true;
	return !strncmp(p, dir, n) && (p[n] == '/' || !p[n]);
}

/* Both name one file of the rootfs (hard links: the same inode). */
static bool same_lower_file(struct vnode *a, struct vnode *b)
{
	return a->kind == VN_GOFER && b->kind == VN_GOFER &&
	       a->st.st_dev == b->st.st_dev && a->st.st_ino == b->st.st_ino;
}

/* Every check is made before anything is copied up, in the order Linux's
 * do_renameat2 and vfs_rename make them, then overlayfs's own (EXDEV for
 * a directory with rootfs contents, emptiness): a rename that fails must
 * leave the upper layer as it was, or a failed `mv` of a model file would
 * copy gigabytes into memory, and a copied rootfs file or directory
 * would show a changed st_nlink. */
static long do_rename(struct task *t, int ofd, uint64_t uold, int nfd,
		      uint64_t unew, unsigned flags)
{
	char oname[NAME_MAX + 1], nname[NAME_MAX + 1], full[PATH_MAX];
	const struct creds *c = &t->proc->cred;
	struct vnode *odir, *ndir, *src = NULL, *dst = NULL;
	bool otr, ntr, exchange = flags & RENAME_EXCHANGE;
	long rc;

	if (flags & ~(RENAME_NOREPLACE | RENAME_EXCHANGE))
		return -EINVAL;
	if ((flags & RENAME_NOREPLACE) && exchange)
		return -EINVAL;
	rc = parent_of(t, ofd, uold, &odir, oname, &otr);
	if (rc < 0)
		return rc == -EINVAL ? -EBUSY : rc;
	rc = parent_of(t, nfd, unew, &ndir, nname, &ntr);
	if (rc < 0) {
		vnode_put(odir);
		return rc == -EINVAL ? -EBUSY : rc;
	}
	if (odir->kind == VN_HOST || ndir->kind == VN_HOST) {
		rc = host_do_rename(t, odir, oname, ndir, nname, flags);
		vnode_put(odir);
		vnode_put(ndir);
		return rc;
	}
	if (!rename_same_fs(odir, ndir) || !vfs_same_mount(odir, ndir))
		rc = -EXDEV;
	else if (read_only_dir(odir) || read_only_dir(ndir))
		rc = -EROFS;
	if (rc == 0)
		rc = vfs_child_path(odir, oname, full, sizeof(full));
	if (rc == 0)
		rc = vfs_resolve(t, AT_FDCWD, full, 0, &src);
	if (rc == 0)
		rc = vfs_child_path(ndir, nname, full, sizeof(full));
	if (rc == 0) {
		int r = vfs_resolve(t, AT_FDCWD, full, 0, &dst);
		if (r < 0)
			dst = NULL; /* a new name (or one that cannot be) */
		if (dst && (flags & RENAME_NOREPLACE))
			rc = -EEXIST;
		else if (!dst && exchange)
			rc = r;
	}
	/* Trailing slashes name directories only. */
	if (rc == 0 && exchange && !S_ISDIR(dst->mode) && ntr)
		rc = -ENOTDIR;
	if (rc == 0 && !S_ISDIR(src->mode) && (otr || (!exchange && ntr)))
		rc = -ENOTDIR;
	/* A directory with a mount below it stays where it is (mounts are
	 * kept by path: one would stay behind). */
	if (rc == 0 &&
	    ((S_ISDIR(src->mode) && vfs_mounts_below(src->path)) ||
	     (exchange && S_ISDIR(dst->mode) && vfs_mounts_below(dst->path))))
		rc = -EBUSY;
	/* Neither may move below itself: the source below the source, or
	 * the target over a directory the source is in. */
	if (rc == 0 && S_ISDIR(src->mode) && at_or_below(ndir->path, src->path))
		rc = -EINVAL;
	if (rc == 0 && dst && S_ISDIR(dst->mode) &&
	    at_or_below(odir->path, dst->path))
		rc = exchange ? -EINVAL : -ENOTEMPTY;
	if (rc == 0 && dst && (dst == src || same_lower_file(src, dst)))
		goto out; /* one file: nothing to do, as Linux */
	if (rc == 0)
		rc = vfs_access(c, odir, W_OK | X_OK);
	if (rc == 0)
		rc = vfs_sticky_ok(c, odir, src->st.st_uid);
	if (rc == 0)
		rc = vfs_access(c, ndir, W_OK | X_OK);
	if (rc == 0 && dst)
		rc = vfs_sticky_ok(c, ndir, dst->st.st_uid);
	if (rc == 0 && dst && !exchange) {
		if (S_ISDIR(src->mode) && !S_ISDIR(dst->mode))
			rc = -ENOTDIR;
		else if (!S_ISDIR(src->mode) && S_ISDIR(dst->mode))
			rc = -EISDIR;
	}
	/* A directory with rootfs contents is not moved (overlayfs without
	 * redirect_dir: EXDEV, and mv copies instead); files and links are
	 * copied up. */
	if (rc == 0 && (has_lower_dir(src) || (exchange && has_lower_dir(dst))))
		rc = -EXDEV;
	if (rc == 0 && dst && !exchange && S_ISDIR(dst->mode) &&
	    in_overlay(dst) && !ovl_dir_empty(dst))
		rc = -ENOTEMPTY;
	/* Only now: copy up what the rename acts on. */
	if (rc == 0 && src->kind == VN_GOFER)
		rc = to_upper(&src);
	if (rc == 0 && exchange && dst->kind == VN_GOFER)
		rc = to_upper(&dst);
	if (rc == 0)
		rc = to_upper_dir(&odir);
	if (rc == 0)
		rc = to_upper_dir(&ndir);
	if (rc == 0 && !tmpfs_same_fs(odir, ndir))
		rc = -EXDEV;
	if (rc == 0)
		rc = tmpfs_rename(t, odir, oname, ndir, nname, flags);
	/* A directory moved over an (empty) rootfs one hides it. */
	if (rc == 0 && !exchange && S_ISDIR(src->mode) &&
	    tmpfs_is_overlay(src) && ovl_lower_exists(full))
		tmpfs_set_opaque(src);
	if (rc == 0 && !exchange)
		rc = ovl_hide_lower(odir, oname);
out:
	vnode_put(src);
	vnode_put(dst);
	vnode_put(odir);
	vnode_put(ndir);
	return rc;
}

static long renamed(struct task *t, int ofd, uint64_t uold, int nfd,
		    uint64_t unew, unsigned flags)
{
	struct inote from, to;
	long rc;

	inote_begin(t, ofd, uold, &from, true);
	inote_begin(t, nfd, unew, &to, false);
	rc = do_rename(t, ofd, uold, nfd, unew, flags);
	if (rc == 0) {
		uint32_t cookie = from.on ? inotify_cookie() : 0;
		struct vnode *moved = vnode_get(from.obj);
		to.obj = vnode_get(from.obj);
		inote_end(t, &from, rc, IN_MOVED_FROM, cookie);
		inote_end(t, &to, rc, IN_MOVED_TO, cookie);
		if (moved)
			inotify_report(moved, NULL, NULL, IN_MOVE_SELF, 0);
		vnode_put(moved);
		notify_path(t, ofd, uold, DN_RENAME);
		notify_path(t, nfd, unew, DN_RENAME);
	} else {
		inote_end(t, &from, rc, 0, 0);
		inote_end(t, &to, rc, 0, 0);
	}
	return rc;
}

long sys_rename(struct task *t, struct syscall_args *a)
{
	return renamed(t, AT_FDCWD, a->a[0], AT_FDCWD, a->a[1], 0);
}

long sys_renameat(struct task *t, struct syscall_args *a)
{
	return renamed(t, (int)a->a[0], a->a[1], (int)a->a[2], a->a[3], 0);
}

long sys_renameat2(struct task *t, struct syscall_args *a)
{
	return renamed(t, (int)a->a[0], a->a[1], (int)a->a[2], a->a[3],
		       (unsigned)a->a[4]);
}

static long do_symlink(struct task *t, uint64_t utarget, int dirfd,
		       uint64_t upath)
{
	char target[PATH_MAX], name[NAME_MAX + 1];
	struct vnode *dir;
	bool trailing;
	long rc = get_path(t, utarget, target);

	if (rc < 0)
		return rc;
	rc = parent_of(t, dirfd, upath, &dir, name, &trailing);
	if (rc < 0)
		return rc == -EINVAL ? -EEXIST : rc;
	if (name_exists(t, dir, name))
		rc = -EEXIST;
	else if (dir->kind == VN_HOST)
		rc = host_symlink(t, dir, name, target);
	else
		rc = to_upper_dir(&dir);
	if (rc == 0 && dir->kind != VN_HOST)
		rc = tmpfs_symlink(t, dir, name, target);
	vnode_put(dir);
	return rc;
}

static long op_symlink(struct task *t, struct syscall_args *a)
{
	return do_symlink(t, a->a[0], (int)a->a[1], a->a[2]);
}

long sys_symlink(struct task *t, struct syscall_args *a)
{
	struct syscall_args b = { .a = { a->a[0], (uint64_t)AT_FDCWD,
					 a->a[1] } };

	return named(t, AT_FDCWD, a->a[1], IN_CREATE, op_symlink, &b);
}

long sys_symlinkat(struct task *t, struct syscall_args *a)
{
	return named(t, (int)a->a[1], a->a[2], IN_CREATE, op_symlink, a);
}

static long do_link(struct task *t, int ofd, uint64_t uold, int nfd,
		    uint64_t unew, int flags)
{
	char path[PATH_MAX], name[NAME_MAX + 1];
	struct vnode *target, *dir;
	bool trailing;
	long rc;

	if (flags & ~(AT_SYMLINK_FOLLOW | AT_EMPTY_PATH))
		return -EINVAL;
	rc = get_path(t, uold, path);
	if (rc < 0)
		return rc;
	rc = vfs_resolve(t, ofd, path,
			 ((flags & AT_SYMLINK_FOLLOW) ? LOOKUP_FOLLOW : 0) |
				 ((flags & AT_EMPTY_PATH) ? LOOKUP_EMPTY : 0),
			 &target);
	if (rc < 0)
		return rc;
	rc = parent_of(t, nfd, unew, &dir, name, &trailing);
	if (rc < 0) {
		vnode_put(target);
		return rc == -EINVAL ? -EEXIST : rc;
	}
	rc = name_exists(t, dir, name) ? -EEXIST : may_write_in(t, dir);
	/* Linux's order: the new name's mount read-only, then another
	 * mount than the file's. */
	if (rc == 0 && read_only_dir(dir))
		rc = -EROFS;
	if (rc == 0 && !vfs_same_mount(target, dir))
		rc = -EXDEV;
	if (rc == 0 && S_ISDIR(target->mode))
		rc = -EPERM;
	if (rc == 0 && (dir->kind == VN_HOST || target->kind == VN_HOST)) {
		rc = host_link(t, dir, name, target);
		vnode_put(dir);
		vnode_put(target);
		return rc;
	}
	if (rc == 0)
		rc = to_upper(&target);
	if (rc == 0)
		rc = to_upper_dir(&dir);
	if (rc == 0)
		rc = tmpfs_link(t, dir, name, target);
	vnode_put(dir);
	vnode_put(target);
	return rc;
}

static long op_link(struct task *t, struct syscall_args *a)
{
	return do_link(t, (int)a->a[0], a->a[1], (int)a->a[2], a->a[3],
		       (int)a->a[4]);
}

long sys_link(struct task *t, struct syscall_args *a)
{
	struct syscall_args b = { .a = { (uint64_t)AT_FDCWD, a->a[0],
					 (uint64_t)AT_FDCWD, a->a[1], 0 } };

	return named(t, AT_FDCWD, a->a[1], IN_CREATE, op_link, &b);
}

long sys_linkat(struct task *t, struct syscall_args *a)
{
	return named(t, (int)a->a[2], a->a[3], IN_CREATE, op_link, a);
}

/* ---- attributes by path or fd -------------------------------------------- */

/* The vnode of a path (at_flags: AT_SYMLINK_NOFOLLOW, AT_EMPTY_PATH), or of
 * fd when upath is 0 (utimensat) or empty with AT_EMPTY_PATH. */
static long target_of(struct task *t, int dirfd, uint64_t upath, int at_flags,
		      struct vnode **vn)
{
	char path[PATH_MAX];
	long rc;

	if (upath) {
		rc = get_path(t, upath, path);
		if (rc < 0)
			return rc;
	}
	if (!upath || (!path[0] && (at_flags & AT_EMPTY_PATH))) {
		struct file *f;
		if (dirfd == AT_FDCWD && upath) {
			*vn = vnode_get(t->proc->cwd);
			return 0;
		}
		f = fd_get(t, dirfd);
		if (!f)
			return -EBADF;
		if (!f->vn)
			return -EPERM; /* pipes and the caller's stdio */
		*vn = vnode_get(f->vn);
		return 0;
	}
	return vfs_resolve(t, dirfd, path,
			   (at_flags & AT_SYMLINK_NOFOLLOW) ? 0 : LOOKUP_FOLLOW,
			   vn);
}

/* Ownership for a change of a host file (vfs_access covers the rest). */
static long host_owner_ok(struct task *t, struct vnode *vn)
{
	const struct creds *c = &t->proc->cred;

	return creds_capable(c, CAP_FOWNER) || c->fsuid == vn->st.st_uid ?
		       0 :
		       -EPERM;
}

static long chmod_vn(struct task *t, struct vnode *vn, mode_t mode)
{
	long rc = may_change(t, vn, true);

	if (rc == 0 && vn->kind == VN_HOST) {
		/* Never set-id bits on a host file: the host does not mount
		 * it nosuid, and its owner may be a host user. */
		struct p9c_setattr a = { .valid = P9_SETATTR_MODE,
					 .mode = mode & 01777 };
		rc = host_owner_ok(t, vn);
		if (rc == 0)
			rc = host_setattr(vn, &a);
		vnode_put(vn);
		return rc;
	}
	if (rc == 0 && vn->kind == VN_MQUEUE) {
		rc = mqueuefs_chmod(t, vn, mode);
	} else {
		if (rc == 0)
			rc = to_upper(&vn);
		if (rc == 0)
			rc = tmpfs_chmod(t, vn, mode);
	}
	if (rc == 0) {
		notify_parent(vn, DN_ATTRIB);
		inotify_report_vn(vn, IN_ATTRIB);
	}
	vnode_put(vn);
	return rc;
}

long sys_chmod(struct task *t, struct syscall_args *a)
{
	struct vnode *vn;
	long rc = target_of(t, AT_FDCWD, a->a[0], 0, &vn);

	return rc < 0 ? rc : chmod_vn(t, vn, (mode_t)a->a[1]);
}

long sys_fchmodat(struct task *t, struct syscall_args *a)
{
	struct vnode *vn;
	long rc = target_of(t, (int)a->a[0], a->a[1], 0, &vn);

	return rc < 0 ? rc : chmod_vn(t, vn, (mode_t)a->a[2]);
}

long sys_fchmod(struct task *t, struct syscall_args *a)
{
	struct file *f = fd_get(t, (int)a->a[0]);

	if (!f)
		return -EBADF;
	if (!f->vn)
		return -EPERM;
	return chmod_vn(t, vnode_get(f->vn), (mode_t)a->a[1]);
}

static long chown_vn(struct task *t, struct vnode *vn, uid_t u, gid_t g)
{
	bool may_chown = creds_capable(&t->proc->cred, CAP_CHOWN);
	long rc = may_chown ? 0 : may_change(t, vn, true);

	if (rc == 0 && vn->kind == VN_HOST) {
		struct p9c_setattr a = { .uid = u, .gid = g };
		if (u != (uid_t)-1)
			a.valid |= P9_SETATTR_UID;
		if (g != (gid_t)-1)
			a.valid |= P9_SETATTR_GID;
		if (!may_chown)
			rc = host_owner_ok(t, vn);
		if (rc == 0 && a.valid)
			rc = host_setattr(vn, &a);
		vnode_put(vn);
		return rc;
	}
	if (rc == 0 && vn->kind == VN_MQUEUE) {
		rc = mqueuefs_chown(t, vn, u, g);
	} else {
		if (rc == 0)
			rc = to_upper(&vn);
		if (rc == 0)
			rc = tmpfs_chown(t, vn, u, g);
	}
	if (rc == 0) {
		notify_parent(vn, DN_ATTRIB);
		inotify_report_vn(vn, IN_ATTRIB);
	}
	vnode_put(vn);
	return rc;
}

long sys_chown(struct task *t, struct syscall_args *a)
{
	struct vnode *vn;
	long rc = target_of(t, AT_FDCWD, a->a[0], 0, &vn);

	return rc < 0 ? rc : chown_vn(t, vn, (uid_t)a->a[1], (gid_t)a->a[2]);
}

long sys_lchown(struct task *t, struct syscall_args *a)
{
	struct vnode *vn;
	long rc = target_of(t, AT_FDCWD, a->a[0], AT_SYMLINK_NOFOLLOW, &vn);

	return rc < 0 ? rc : chown_vn(t, vn, (uid_t)a->a[1], (gid_t)a->a[2]);
}

long sys_fchownat(struct task *t, struct syscall_args *a)
{
	struct vnode *vn;
	int flags = (int)a->a[4];
	long rc;

	if (flags & ~(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH))
		return -EINVAL;
	rc = target_of(t, (int)a->a[0], a->a[1], flags, &vn);
	return rc < 0 ? rc : chown_vn(t, vn, (uid_t)a->a[2], (gid_t)a->a[3]);
}

long sys_fchown(struct task *t, struct syscall_args *a)
{
	struct file *f = fd_get(t, (int)a->a[0]);

	if (!f)
		return -EBADF;
	if (!f->vn)
		return -EPERM;
	return chown_vn(t, vnode_get(f->vn), (uid_t)a->a[1], (gid_t)a->a[2]);
}

long sys_truncate(struct task *t, struct syscall_args *a)
{
	struct vnode *vn;
	long rc = target_of(t, AT_FDCWD, a->a[0], 0, &vn);

	if (rc < 0)
		return rc;
	rc = vfs_access(&t->proc->cred, vn, W_OK);
	if (rc == 0 && (int64_t)a->a[1] < 0)
		rc = -EINVAL;
	if (rc == 0 && vn->kind == VN_HOST) {
		struct p9c_setattr sa = { .valid = P9_SETATTR_SIZE,
					  .size = a->a[1] };
		rc = S_ISDIR(vn->mode) ? -EISDIR : host_setattr(vn, &sa);
		vnode_put(vn);
		return rc;
	}
	if (rc == 0)
		rc = to_upper(&vn);
	if (rc == 0)
		rc = tmpfs_truncate(vn, (int64_t)a->a[1]);
	if (rc == 0) {
		notify_parent(vn, DN_MODIFY);
		inotify_report_vn(vn, IN_MODIFY);
	}
	vnode_put(vn);
	return rc;
}

long sys_ftruncate(struct task *t, struct syscall_args *a)
{
	struct file *f = fd_get(t, (int)a->a[0]);

	if (!f)
		return -EBADF;
	if ((f->flags & O_ACCMODE) == O_RDONLY || !f->vn)
		return -EINVAL;
	if (f->vn->kind == VN_HOST) {
		if ((int64_t)a->a[1] < 0)
			return -EINVAL;
		return ftruncate(f->hostfd, (off_t)a->a[1]) < 0 ? -errno : 0;
	}
	if (f->vn->kind != VN_TMPFS)
		return -EINVAL; /* rootfs files are opened for writing as copies */
	return tmpfs_truncate(f->vn, (int64_t)a->a[1]);
}

static long host_utimens(struct task *t, struct vnode *vn,
			 const struct timespec *ts)
{
	struct p9c_setattr a = { .valid = P9_SETATTR_ATIME | P9_SETATTR_MTIME };
	long rc;
	int i;

	for (i = 0; ts && i < 2; i++) {
		uint32_t bit = i ? P9_SETATTR_MTIME : P9_SETATTR_ATIME;
		if (ts[i].tv_nsec == UTIME_OMIT) {
			a.valid &= ~bit;
		} else if (ts[i].tv_nsec != UTIME_NOW) {
			if (ts[i].tv_nsec < 0 || ts[i].tv_nsec >= 1000000000)
				return -EINVAL;
			a.valid |= i ? P9_SETATTR_MTIME_SET :
				       P9_SETATTR_ATIME_SET;
			if (i)
				a.mtime = ts[i];
			else
				a.atime = ts[i];
		}
	}
	/* "now" needs write access, explicit times ownership. */
	rc = (a.valid & (P9_SETATTR_ATIME_SET | P9_SETATTR_MTIME_SET)) ?
		     host_owner_ok(t, vn) :
		     vfs_access(&t->proc->cred, vn, W_OK);
	if (rc == -EACCES)
		rc = host_owner_ok(t, vn) == 0 ? 0 : -EACCES;
	if (rc == 0 && (a.valid & (P9_SETATTR_ATIME | P9_SETATTR_MTIME)))
		rc = host_setattr(vn, &a);
	return rc;
}

/* utimensat, and the legacy calls made over it: ts NULL means now. A
 * NULL path names dirfd itself, which AT_FDCWD cannot be (Linux: EFAULT,
 * from reading the path). */
static long do_utimens(struct task *t, int dirfd, uint64_t upath,
		       const struct timespec *ts, int flags)
{
	struct vnode *vn;
	long rc;

	if (!upath && dirfd == AT_FDCWD)
		return -EFAULT;
	if (!upath && flags)
		return -EINVAL; /* an fd's own times take no flags */
	rc = target_of(t, dirfd, upath, flags, &vn);
	if (rc < 0)
		return rc;
	/* Explicit times need ownership, "now" write access (as tmpfs). */
	rc = may_change(t, vn,
			ts && ((ts[0].tv_nsec != UTIME_NOW &&
				ts[0].tv_nsec != UTIME_OMIT) ||
			       (ts[1].tv_nsec != UTIME_NOW &&
				ts[1].tv_nsec != UTIME_OMIT)));
	if (rc == 0 && vn->kind == VN_HOST) {
		rc = host_utimens(t, vn, ts);
		vnode_put(vn);
		return rc;
	}
	if (rc == 0)
		rc = to_upper(&vn);
	if (rc == 0)
		rc = tmpfs_utimens(t, vn, ts);
	if (rc == 0) {
		notify_parent(vn, DN_ATTRIB);
		inotify_report_vn(vn, IN_ATTRIB);
	}
	vnode_put(vn);
	return rc;
}

long sys_utimensat(struct task *t, struct syscall_args *a)
{
	struct timespec ts[2];
	int flags = (int)a->a[3];

	if (flags & ~(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH))
		return -EINVAL;
	if (a->a[2] && task_read(t, a->a[2], ts, sizeof(ts)) < 0)
		return -EFAULT;
	return do_utimens(t, (int)a->a[0], a->a[1], a->a[2] ? ts : NULL, flags);
}

/* The legacy calls old static binaries make (busybox's touch, a uClibc's
 * utime): whole seconds in struct utimbuf, or microseconds in struct
 * timeval, which Linux checks before anything else (EINVAL also for the
 * UTIME_NOW and UTIME_OMIT values only utimensat takes). */
long sys_utime(struct task *t, struct syscall_args *a)
{
	struct {
		int64_t actime, modtime;
	} ub;
	struct timespec ts[2] = { { 0, 0 }, { 0, 0 } };

	if (a->a[1]) {
		if (task_read(t, a->a[1], &ub, sizeof(ub)) < 0)
			return -EFAULT;
		ts[0].tv_sec = ub.actime;
		ts[1].tv_sec = ub.modtime;
	}
	return do_utimens(t, AT_FDCWD, a->a[0], a->a[1] ? ts : NULL, 0);
}

static long do_futimesat(struct task *t, int dirfd, uint64_t upath,
			 uint64_t utv)
{
	struct timeval tv[2];
	struct timespec ts[2];

	if (utv) {
		if (task_read(t, utv, tv, sizeof(tv)) < 0)
			return -EFAULT;
		for (int i = 0; i < 2; i++) {
			if (tv[i].tv_usec < 0 || tv[i].tv_usec >= 1000000)
				return -EINVAL;
			ts[i].tv_sec = tv[i].tv_sec;
			ts[i].tv_nsec = tv[i].tv_usec * 1000;
		}
	}
	return do_utimens(t, dirfd, upath, utv ? ts : NULL, 0);
}

long sys_utimes(struct task *t, struct syscall_args *a)
{
	return do_futimesat(t, AT_FDCWD, a->a[0], a->a[1]);
}

long sys_futimesat(struct task *t, struct syscall_args *a)
{
	return do_futimesat(t, (int)a->a[0], a->a[1], a->a[2]);
}

static long do_mknod(struct task *t, int dirfd, uint64_t upath, mode_t mode)
{
	char path[PATH_MAX], name[NAME_MAX + 1];
	struct vnode *vn, *dir;
	bool trailing;
	long rc;

	if ((mode & S_IFMT) && !S_ISREG(mode) && !S_ISFIFO(mode))
		return -EPERM; /* devices and sockets: not in a sandbox */
	rc = get_path(t, upath, path);
	if (rc < 0)
		return rc;
	if (vfs_resolve(t, dirfd, path, 0, &vn) == 0) {
		vnode_put(vn);
		return -EEXIST;
	}
	if (!S_ISFIFO(mode)) {
		rc = fs_create(t, dirfd, path, mode & 07777, 0, &vn);
		if (rc == 0)
			vnode_put(vn);
		return rc;
	}
	rc = vfs_resolve_parent(t, dirfd, path, &dir, name, &trailing);
	if (rc < 0)
		return rc == -EINVAL ? -EEXIST : rc;
	if (dir->kind == VN_HOST)
		rc = host_mkfifo(t, dir, name, mode & ~t->proc->umask);
	else
		rc = to_upper_dir(&dir);
	if (rc == 0 && dir->kind != VN_HOST)
		rc = tmpfs_mkfifo(t, dir, name, mode & ~t->proc->umask);
	vnode_put(dir);
	return rc;
}

static long op_mknod(struct task *t, struct syscall_args *a)
{
	return do_mknod(t, (int)a->a[0], a->a[1], (mode_t)a->a[2]);
}

long sys_mknod(struct task *t, struct syscall_args *a)
{
	struct syscall_args b = { .a = { (uint64_t)AT_FDCWD, a->a[0],
					 a->a[1] } };

	return named(t, AT_FDCWD, a->a[0], IN_CREATE, op_mknod, &b);
}

long sys_mknodat(struct task *t, struct syscall_args *a)
{
	return named(t, (int)a->a[0], a->a[1], IN_CREATE, op_mknod, a);
}

long sys_creat(struct task *t, struct syscall_args *a)
{
	struct syscall_args o = *a;

	o.nr = SYS_open;
	o.a[2] = a->a[1];
	o.a[1] = O_CREAT | O_WRONLY | O_TRUNC;
	return sys_open(t, &o);
}

long sys_memfd_create(struct task *t, struct syscall_args *a)
{
	char name[256];
	unsigned flags = (unsigned)a->a[1];
	struct vnode *vn;
	struct file *f;
	long rc;
	int fd;

	if (flags & ~(MFD_CLOEXEC | MFD_ALLOW_SEALING))
		return -EINVAL; /* no hugetlb, no exec sealing */
	rc = task_read_str(t, a->a[0], name, sizeof(name));
	if (rc < 0)
		return rc == -ENAMETOOLONG ? -EINVAL : rc;
	if (strlen(name) > 249)
		return -EINVAL;
	rc = tmpfs_anon_file(name, &vn);
	if (rc < 0)
		return rc;
	vn->st.st_uid = t->proc->cred.fsuid;
	vn->st.st_gid = t->proc->cred.fsgid;
	rc = tmpfs_open(t, vn, O_RDWR, &f);
	vnode_put(vn);
	if (rc < 0)
		return rc;
	fd = fd_install(t, f, (flags & MFD_CLOEXEC) != 0, 0);
	file_put(f);
	return fd;
}

/* sendfile and copy_file_range: a copy through the sentry, in chunks, with
 * the same offsets and blocking rules as read and write. Returns the bytes
 * moved, or -errno or SYS_BLOCK when none were; *stalled says it stopped
 * because out took less than it was given (it is full), not at the end of
 * in or on an error. */
static long copy_between(struct task *t, struct file *in, int64_t *ioff,
			 struct file *out, int64_t *ooff, size_t count,
			 bool *stalled)
{
	static char buf[1 << 16];
	size_t done = 0;

	*stalled = false;
	if ((in->flags & O_ACCMODE) == O_WRONLY ||
	    (out->flags & O_ACCMODE) == O_RDONLY)
		return -EBADF;
	if (!in->ops || !in->ops->read || !out->ops || !out->ops->write)
		return -EINVAL;
	if (count > INT32_MAX)
		count = INT32_MAX;
	while (done < count) {
		size_t chunk = count - done > sizeof(buf) ? sizeof(buf) :
							    count - done;
		int64_t isave = *ioff;
		long r = in->ops->read(t, in, buf, chunk, ioff), w;

		if (r < 0 || r == SYS_BLOCK)
			return done ? (long)done : r;
		if (r == 0)
			break;
		w = out->ops->write(t, out, buf, (size_t)r, ooff);
		if (w < 0 || w == SYS_BLOCK) {
			*ioff = isave; /* nothing of this chunk was taken */
			*stalled = w == SYS_BLOCK;
			return done ? (long)done : w;
		}
		done += (size_t)w;
		if (w < r) {
			*ioff = isave + w;
			*stalled = true;
			break;
		}
	}
	return (long)done;
}

/* To a blocking stream socket, sendfile returns once all count bytes are
 * sent, at the end of the file, or on an error (after what was sent; the
 * error is the next call's), as Linux's splice loop does: while the
 * socket is full it blocks, t->io_done counting what went, and the
 * offset written back as it moves, so that a signal can end the call
 * with that count (task.c maybe_interrupt). Elsewhere one pass. */
long sys_sendfile(struct task *t, struct syscall_args *a)
{
	struct file *out = fd_get(t, (int)a->a[0]),
		    *in = fd_get(t, (int)a->a[1]);
	size_t count = a->a[3], done = 0, moved;
	int64_t off, *ioff;
	bool wait_all, stalled;
	long r;

	if (!out || !in)
		return -EBADF;
	if (in->stream)
		return -EINVAL; /* Linux: the input must be mmap-able */
	if (a->a[2]) {
		if (task_read(t, a->a[2], &off, sizeof(off)) < 0)
			return -EFAULT;
		if (off < 0)
			return -EINVAL;
		ioff = &off;
	} else {
		ioff = &in->pos;
	}
	if (count > (INT_MAX & ~4095))
		count = INT_MAX & ~4095; /* MAX_RW_COUNT */
	wait_all = file_is_stream_socket(out) && !(out->flags & O_NONBLOCK);
	if (wait_all && t->block_started)
		done = t->io_done;
	r = copy_between(t, in, ioff, out, out->stream ? NULL : &out->pos,
			 count - done, &stalled);
	moved = r > 0 ? (size_t)r : 0;
	if (a->a[2] && moved && task_write(t, a->a[2], &off, sizeof(off)) < 0)
		return -EFAULT;
	if (wait_all && done + moved < count &&
	    (r == SYS_BLOCK || (moved && stalled))) {
		t->io_done = done + moved;
		return SYS_BLOCK;
	}
	if (r < 0 || r == SYS_BLOCK)
		return done ? (long)done : r;
	return (long)(done + moved);
}

long sys_copy_file_range(struct task *t, struct syscall_args *a)
{
	struct file *in = fd_get(t, (int)a->a[0]),
		    *out = fd_get(t, (int)a->a[2]);
	int64_t ioffv, ooffv, *ioff, *ooff;
	bool stalled;
	long r;

	if (!in || !out)
		return -EBADF;
	if (a->a[5])
		return -EINVAL;
	/* regular files only (the memory devices are not streams either) */
	if (in->stream || out->stream || !in->vn || !out->vn ||
	    !S_ISREG(in->vn->mode) || !S_ISREG(out->vn->mode))
		return -EINVAL;
	if (out->flags & O_APPEND)
		return -EBADF;
	if (a->a[1]) {
		if (task_read(t, a->a[1], &ioffv, sizeof(ioffv)) < 0)
			return -EFAULT;
		ioff = &ioffv;
	} else {
		ioff = &in->pos;
	}
	if (a->a[3]) {
		if (task_read(t, a->a[3], &ooffv, sizeof(ooffv)) < 0)
			return -EFAULT;
		ooff = &ooffv;
	} else {
		ooff = &out->pos;
	}
	if (*ioff < 0 || *ooff < 0)
		return -EINVAL;
	r = copy_between(t, in, ioff, out, ooff, a->a[4], &stalled);
	if (r >= 0 && a->a[1] &&
	    task_write(t, a->a[1], &ioffv, sizeof(ioffv)) < 0)
		return -EFAULT;
	if (r >= 0 && a->a[3] &&
	    task_write(t, a->a[3], &ooffv, sizeof(ooffv)) < 0)
		return -EFAULT;
	return r;
}

long sys_fallocate(struct task *t, struct syscall_args *a)
{
	struct file *f = fd_get(t, (int)a->a[0]);
	int mode = (int)a->a[1];
	int64_t off = (int64_t)a->a[2], len = (int64_t)a->a[3], end;

	if (!f)
		return -EBADF;
	if ((f->flags & O_ACCMODE) == O_RDONLY)
		return -EBADF;
	if (off < 0 || len <= 0)
		return -EINVAL;
	if (!f->vn)
		return f->stream ? -ESPIPE : -ENODEV;
	if (S_ISDIR(f->vn->mode))
		return -EISDIR;
	if (!S_ISREG(f->vn->mode))
		return -ENODEV;
	if (__builtin_add_overflow(off, len, &end))
		return -EFBIG;
	if (f->vn->kind == VN_HOST)
		return fallocate(f->hostfd, mode, off, len) < 0 ? -errno : 0;
	if (f->vn->kind != VN_TMPFS)
		return -EOPNOTSUPP;
	/* Blocks taken count against --disk (ENOSPC past it). */
	return tmpfs_fallocate(f->vn, mode, off, len);
}

/* splice and tee: one end (tee: both) a pipe. Data moves through the
 * sentry in chunks; nothing is taken from a pipe until it was written
 * out, and nothing is read into one that has no room for it. */
#define SPLICE_CHUNK (1 << 16)
static char splice_buf[SPLICE_CHUNK];

long sys_splice(struct task *t, struct syscall_args *a)
{
	struct file *in = fd_get(t, (int)a->a[0]),
		    *out = fd_get(t, (int)a->a[2]);
	size_t len = a->a[4] < SPLICE_CHUNK ? a->a[4] : SPLICE_CHUNK;
	unsigned flags = (unsigned)a->a[5];
	bool nb = (flags & SPLICE_F_NONBLOCK) != 0, eof;
	int64_t ioffv, ooffv, *ioff, *ooff;
	long r, w;

	if (!in || !out)
		return -EBADF;
	if (flags & ~(unsigned)(SPLICE_F_MOVE | SPLICE_F_NONBLOCK |
				SPLICE_F_MORE | SPLICE_F_GIFT))
		return -EINVAL;
	if ((in->flags & O_ACCMODE) == O_WRONLY ||
	    (out->flags & O_ACCMODE) == O_RDONLY)
		return -EBADF;
	if (!file_is_pipe(in) && !file_is_pipe(out))
		return -EINVAL;
	if ((file_is_pipe(in) && a->a[1]) || (file_is_pipe(out) && a->a[3]))
		return -ESPIPE;
	if (!in->ops->read || !out->ops->write)
		return -EINVAL;
	if (out->flags & O_APPEND)
		return -EINVAL;
	if (a->a[1]) {
		if (task_read(t, a->a[1], &ioffv, sizeof(ioffv)) < 0)
			return -EFAULT;
		if (ioffv < 0)
			return -EINVAL;
		ioff = &ioffv;
	} else {
		ioff = in->stream ? NULL : &in->pos;
	}
	if (a->a[3]) {
		if (task_read(t, a->a[3], &ooffv, sizeof(ooffv)) < 0)
			return -EFAULT;
		if (ooffv < 0)
			return -EINVAL;
		ooff = &ooffv;
	} else {
		ooff = out->stream ? NULL : &out->pos;
	}
	if (!len)
		return 0;
	if (file_is_pipe(in)) {
		r = pipe_peek(in, splice_buf, len, &eof);
		if (r == 0)
			return eof				? 0 :
			       (nb || (in->flags & O_NONBLOCK)) ? -EAGAIN :
								  SYS_BLOCK;
		if (file_is_pipe(out) && pipe_room(out) < (size_t)r) {
			if (!pipe_room(out))
				return out->ops->write(
					t, out, splice_buf, 1,
					NULL); /* EPIPE, or wait */
			r = (long)pipe_room(out);
		}
		w = out->ops->write(t, out, splice_buf, (size_t)r, ooff);
		if (w <= 0 || w == SYS_BLOCK)
			return w == SYS_BLOCK && nb ? -EAGAIN : w;
		/* now take what went out */
		r = in->ops->read(t, in, splice_buf, (size_t)w, NULL);
	} else {
		size_t room = pipe_room(out);
		if (!room) {
			if (nb)
				return -EAGAIN;
			return out->ops->write(t, out, splice_buf, 1, NULL);
		}
		if (len > room)
			len = room;
		r = in->ops->read(t, in, splice_buf, len, ioff);
		if (r <= 0 || r == SYS_BLOCK)
			return r == SYS_BLOCK && nb ? -EAGAIN : r;
		w = out->ops->write(t, out, splice_buf, (size_t)r, NULL);
		r = w;
	}
	if (r > 0 && a->a[1] &&
	    task_write(t, a->a[1], &ioffv, sizeof(ioffv)) < 0)
		return -EFAULT;
	if (r > 0 && a->a[3] &&
	    task_write(t, a->a[3], &ooffv, sizeof(ooffv)) < 0)
		return -EFAULT;
	return r;
}

long sys_tee(struct task *t, struct syscall_args *a)
{
	struct file *in = fd_get(t, (int)a->a[0]),
		    *out = fd_get(t, (int)a->a[1]);
	size_t len = a->a[2] < SPLICE_CHUNK ? a->a[2] : SPLICE_CHUNK;
	unsigned flags = (unsigned)a->a[3];
	bool nb = (flags & SPLICE_F_NONBLOCK) != 0, eof;
	size_t room;
	long r;

	if (!in || !out)
		return -EBADF;
	if (!file_is_pipe(in) || !file_is_pipe(out) || in->priv == out->priv)
		return -EINVAL;
	if ((in->flags & O_ACCMODE) == O_WRONLY ||
	    (out->flags & O_ACCMODE) == O_RDONLY)
		return -EBADF;
	if (!len)
		return 0;
	r = pipe_peek(in, splice_buf, len, &eof);
	if (r == 0)
		return eof ? 0 : nb ? -EAGAIN : SYS_BLOCK;
	room = pipe_room(out);
	if (!room)
		return nb ? -EAGAIN :
			    out->ops->write(t, out, splice_buf, 1, NULL);
	if ((size_t)r > room)
		r = (long)room;
	return out->ops->write(t, out, splice_buf, (size_t)r, NULL);
}
