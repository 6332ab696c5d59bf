/* sentry/fs_host.c: changes to a host directory mounted `rw`. */
#include "sentry/fs_host.h"

#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

#include "sentry/p9client.h"

/* Write and search permission in dir, on a mount that takes writes. */
static int may_change_in(struct task *t, struct vnode *dir)
{
	if (dir->kind != VN_HOST)
		return -EXDEV;
	if (vfs_host_readonly(dir))
		return -EROFS;
	if (!t)
		return 0;
	return vfs_access(&t->proc->cred, dir, W_OK | X_OK);
}

int host_create(struct task *t, struct vnode *dir, const char *name,
		mode_t mode, struct vnode **out)
{
	char path[PATH_MAX];
	struct vnode *vn;
	uint32_t fid;
	int rc, fd;

	rc = may_change_in(t, dir);
	if (rc == 0)
		rc = vfs_child_path(dir, name, path, sizeof(path));
	if (rc < 0)
		return rc;
	/* O_RDWR: the guest's open takes this fd, and its own access mode
	 * limits what it may do with it. */
	rc = p9c_lcreate(vn_p9(dir), dir->fid, name, O_RDWR, mode & 01777, &fid,
			 &fd);
	if (rc < 0)
		return rc;
	vn = vnode_new(VN_HOST, S_IFREG | (mode & 01777), path);
	if (!vn) {
		close(fd);
		p9c_clunk(vn_p9(dir), fid);
		return -ENOMEM;
	}
	vn->mnt = dir->mnt;
	vn->fid = fid;
	vn->hostfd = fd; /* taken by the open that follows (file.c) */
	rc = vfs_stat(vn, &vn->st);
	if (rc < 0) {
		vnode_put(vn);
		return rc;
	}
	vn->mode = vn->st.st_mode;
	*out = vn;
	return 0;
}

int host_mkdir(struct task *t, struct vnode *dir, const char *name, mode_t mode)
{
	int rc = may_change_in(t, dir);

	return rc < 0 ? rc : p9c_mkdir(vn_p9(dir), dir->fid, name, mode);
}

int host_mkfifo(struct task *t, struct vnode *dir, const char *name,
		mode_t mode)
{
	int rc = may_change_in(t, dir);

	return rc < 0 ? rc :
			p9c_mknod(vn_p9(dir), dir->fid, name,
				  S_IFIFO | (mode & 01777));
}

int host_symlink(struct task *t, struct vnode *dir, const char *name,
		 const char *target)
{
	int rc = may_change_in(t, dir);

	if (rc == 0 && !*target)
		rc = -ENOENT;
	return rc < 0 ? rc : p9c_symlink(vn_p9(dir), dir->fid, name, target);
}

int host_link(struct task *t, struct vnode *dir, const char *name,
	      struct vnode *target)
{
	int rc = may_change_in(t, dir);

	if (rc < 0)
		return rc;
	if (target->kind != VN_HOST || target->mnt != dir->mnt)
		return -EXDEV;
	return p9c_link(vn_p9(dir), dir->fid, target->fid, name);
}

int host_unlink(struct task *t, struct vnode *dir, const char *name, bool rmdir,
		uid_t owner)
{
	int rc = may_change_in(t, dir);

	if (rc == 0 && t)
		rc = vfs_sticky_ok(&t->proc->cred, dir, owner);
	if (rc < 0)
		return rc;
	return p9c_unlinkat(vn_p9(dir), dir->fid, name,
			    rmdir ? AT_REMOVEDIR : 0);
}

int host_rename(struct task *t, struct vnode *odir, const char *oname,
		struct vnode *ndir, const char *nname, uid_t owner)
{
	int rc = may_change_in(t, odir);

	if (rc == 0)
		rc = may_change_in(t, ndir);
	if (rc == 0 && odir->mnt != ndir->mnt)
		rc = -EXDEV;
	if (rc == 0 && t)
		rc = vfs_sticky_ok(&t->proc->cred, odir, owner);
	if (rc < 0)
		return rc;
	return p9c_renameat(vn_p9(odir), odir->fid, oname, ndir->fid, nname);
}

int host_setattr(struct vnode *vn, const struct p9c_setattr *a)
{
	if (vn->kind != VN_HOST)
		return -EXDEV;
	if (vfs_host_readonly(vn))
		return -EROFS;
	return p9c_setattr(vn_p9(vn), vn->fid, a);
}
