/* sentry/xattr.c: extended attributes.
 *
 * user.* attributes live with tmpfs nodes, and so in the overlay: setting
 * one on a rootfs file copies it up first (the host's own attributes are
 * not read). trusted.* are the same, for the sandbox's root only (they
 * never reach the host either). security.* and system.* read as absent
 * and cannot be set. Like Linux, user.* attributes are for regular files
 * and directories, and setting one needs write permission or ownership.
 * A host directory mounted in the sandbox has the host's own user.*
 * attributes (its gofer serves no other namespace), read through its
 * gofer, and set through it when mounted rw (an empty value there removes
 * the attribute, as over 9P in QEMU); trusted.* never reach the host.
 * Reading a user.* attribute needs read permission, as on Linux.
 */
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/xattr.h>

#include "sentry/fs_tmpfs.h"
#include "sentry/overlay.h"
#include "sentry/p9client.h"
#include "sentry/syscalls.h"
#include "sentry/vfs.h"

#define XATTR_VALUE_MAX 65536

static long read_name(struct task *t, uint64_t uname, char *name)
{
	int n = task_read_str(t, uname, name, XATTR_NAME_MAX + 1);

	if (n == -ENAMETOOLONG)
		return -ERANGE;
	if (n < 0)
		return n;
	if (!name[0])
		return -ERANGE;
	return 0;
}

static bool is_user(const char *name)
{
	return !strncmp(name, "user.", 5) && name[5];
}

static bool is_trusted(const char *name)
{
	return !strncmp(name, "trusted.", 8) && name[8];
}

/* May t see (and, for root, set) attributes of this name? */
static bool stored(struct task *t, const char *name)
{
	return is_user(name) || (is_trusted(name) &&
				 creds_capable(&t->proc->cred, CAP_SYS_ADMIN));
}

/* The vnode a path names (follow: not for the l* forms), or fd's. */
static long target(struct task *t, uint64_t upath, int fd, bool follow,
		   struct vnode **vn)
{
	char path[PATH_MAX];
	struct file *f;
	long rc;

	if (!upath) {
		f = fd_get(t, fd);
		if (!f)
			return -EBADF;
		if (!f->vn)
			return -EOPNOTSUPP; /* pipes, sockets: no attributes */
		*vn = vnode_get(f->vn);
		return 0;
	}
	rc = task_read_str(t, upath, path, sizeof(path));
	if (rc < 0)
		return rc;
	return vfs_resolve(t, AT_FDCWD, path, follow ? LOOKUP_FOLLOW : 0, vn);
}

static long do_get(struct task *t, struct vnode *vn, uint64_t uname,
		   uint64_t ubuf, size_t size)
{
	char name[XATTR_NAME_MAX + 1];
	static char buf[XATTR_VALUE_MAX];
	long rc = read_name(t, uname, name);

	if (rc < 0)
		return rc;
	if (is_user(name) && (rc = vfs_access(&t->proc->cred, vn, R_OK)) < 0)
		return rc;
	if (size > sizeof(buf))
		size = sizeof(buf);
	if (vn->kind == VN_HOST && !is_user(name))
		return -ENODATA; /* the host's own: neither shown nor set */
	if (vn->kind == VN_HOST)
		rc = p9c_xattr_get(vn_p9(vn), vn->fid, name, buf, size);
	else if (vn->kind != VN_TMPFS || !stored(t, name))
		return -ENODATA;
	else
		rc = tmpfs_getxattr(vn, name, buf, size);
	if (rc > 0 && size && task_write(t, ubuf, buf, (size_t)rc) < 0)
		return -EFAULT;
	return rc;
}

static long do_list(struct task *t, struct vnode *vn, uint64_t ubuf,
		    size_t size)
{
	static char buf[XATTR_VALUE_MAX];
	long rc;

	if (vn->kind == VN_HOST) {
		rc = p9c_xattr_get(vn_p9(vn), vn->fid, "", buf, sizeof(buf));
		if (rc == -ENODATA || rc == -EOPNOTSUPP)
			rc = 0; /* a link, or a filesystem without them */
	} else if (vn->kind != VN_TMPFS) {
		return 0;
	} else {
		rc = tmpfs_listxattr(vn, buf, sizeof(buf));
	}
	if (rc > 0 && !creds_capable(&t->proc->cred, CAP_SYS_ADMIN)) {
		/* trusted.* names are root's to see */
		size_t i = 0, o = 0;
		while (i < (size_t)rc) {
			size_t l = strlen(buf + i) + 1;
			if (!is_trusted(buf + i)) {
				memmove(buf + o, buf + i, l);
				o += l;
			}
			i += l;
		}
		rc = (long)o;
	}
	if (rc < 0 || !size)
		return rc;
	if ((size_t)rc > size)
		return -ERANGE;
	if (rc > 0 && task_write(t, ubuf, buf, (size_t)rc) < 0)
		return -EFAULT;
	return rc;
}

/* set (value != NULL) or remove. The reference on vn is taken over. */
static long do_change(struct task *t, struct vnode *vn, uint64_t uname,
		      uint64_t uvalue, size_t size, int flags, bool remove)
{
	char name[XATTR_NAME_MAX + 1];
	static char value[XATTR_VALUE_MAX];
	const struct creds *c = &t->proc->cred;
	struct vnode *up;
	struct stat st;
	long rc = read_name(t, uname, name);

	if (rc == 0 && (flags & ~(XATTR_CREATE | XATTR_REPLACE)))
		rc = -EINVAL;
	if (rc == 0 && !remove && size > XATTR_VALUE_MAX)
		rc = -E2BIG;
	if (rc == 0 && vn->kind == VN_HOST && vfs_host_readonly(vn))
		rc = -EROFS;
	if (rc == 0 && !stored(t, name))
		rc = is_trusted(name) ? -EPERM : -EOPNOTSUPP;
	if (rc == 0 && vn->kind == VN_HOST && !is_user(name))
		rc = -EPERM; /* trusted.* stays in the sandbox */
	if (rc == 0 && vn->kind != VN_TMPFS && vn->kind != VN_GOFER &&
	    vn->kind != VN_HOST)
		rc = -EPERM; /* procfs, devfs */
	if (rc == 0 && is_user(name) && !S_ISREG(vn->mode) &&
	    !S_ISDIR(vn->mode))
		rc = -EPERM; /* user.* on links, devices, FIFOs: as Linux */
	if (rc == 0 && (rc = vfs_stat(vn, &st)) == 0 && c->fsuid != st.st_uid)
		rc = vfs_access(c, vn, W_OK);
	if (rc == 0 && !remove && size && task_read(t, uvalue, value, size) < 0)
		rc = -EFAULT;
	if (rc == 0 && vn->kind == VN_HOST) {
		rc = p9c_xattr_set(vn_p9(vn), vn->fid, name,
				   remove ? NULL : value, remove ? 0 : size,
				   remove ? 0 : flags);
	} else if (rc == 0) {
		rc = ovl_write_target(vn, &up); /* a rootfs file: its copy */
		if (rc == 0) {
			rc = remove ? tmpfs_removexattr(up, name) :
				      tmpfs_setxattr(up, name, value, size,
						     flags);
			vnode_put(up);
		}
	}
	vnode_put(vn);
	return rc;
}

long sys_getxattr(struct task *t, struct syscall_args *a)
{
	struct vnode *vn;
	long rc = target(t, a->a[0], -1, true, &vn);

	if (rc < 0)
		return rc;
	rc = do_get(t, vn, a->a[1], a->a[2], a->a[3]);
	vnode_put(vn);
	return rc;
}

long sys_lgetxattr(struct task *t, struct syscall_args *a)
{
	struct vnode *vn;
	long rc = target(t, a->a[0], -1, false, &vn);

	if (rc < 0)
		return rc;
	rc = do_get(t, vn, a->a[1], a->a[2], a->a[3]);
	vnode_put(vn);
	return rc;
}

long sys_fgetxattr(struct task *t, struct syscall_args *a)
{
	struct vnode *vn;
	long rc = target(t, 0, (int)a->a[0], true, &vn);

	if (rc < 0)
		return rc;
	rc = do_get(t, vn, a->a[1], a->a[2], a->a[3]);
	vnode_put(vn);
	return rc;
}

static long list_common(struct task *t, struct syscall_args *a, uint64_t up,
			int fd, bool follow)
{
	struct vnode *vn;
	long rc = target(t, up, fd, follow, &vn);

	if (rc < 0)
		return rc;
	rc = do_list(t, vn, a->a[1], a->a[2]);
	vnode_put(vn);
	return rc;
}

long sys_listxattr(struct task *t, struct syscall_args *a)
{
	return list_common(t, a, a->a[0], -1, true);
}

long sys_llistxattr(struct task *t, struct syscall_args *a)
{
	return list_common(t, a, a->a[0], -1, false);
}

long sys_flistxattr(struct task *t, struct syscall_args *a)
{
	return list_common(t, a, 0, (int)a->a[0], true);
}

static long set_common(struct task *t, struct syscall_args *a, uint64_t up,
		       int fd, bool follow)
{
	struct vnode *vn;
	long rc = target(t, up, fd, follow, &vn);

	if (rc < 0)
		return rc;
	return do_change(t, vn, a->a[1], a->a[2], a->a[3], (int)a->a[4], false);
}

long sys_setxattr(struct task *t, struct syscall_args *a)
{
	return set_common(t, a, a->a[0], -1, true);
}

long sys_lsetxattr(struct task *t, struct syscall_args *a)
{
	return set_common(t, a, a->a[0], -1, false);
}

long sys_fsetxattr(struct task *t, struct syscall_args *a)
{
	return set_common(t, a, 0, (int)a->a[0], true);
}

static long remove_common(struct task *t, struct syscall_args *a, uint64_t up,
			  int fd, bool follow)
{
	struct vnode *vn;
	long rc = target(t, up, fd, follow, &vn);

	if (rc < 0)
		return rc;
	return do_change(t, vn, a->a[1], 0, 0, 0, true);
}

long sys_removexattr(struct task *t, struct syscall_args *a)
{
	return remove_common(t, a, a->a[0], -1, true);
}

long sys_lremovexattr(struct task *t, struct syscall_args *a)
{
	return remove_common(t, a, a->a[0], -1, false);
}

long sys_fremovexattr(struct task *t, struct syscall_args *a)
{
	return remove_common(t, a, 0, (int)a->a[0], true);
}
