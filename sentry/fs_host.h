/* sentry/fs_host.h: changes to a host directory mounted `rw`.
 *
 * Each call is one request to the mount's gofer (gofer/gofer.c, started
 * --rw), after the sentry's own checks against the guest's credentials;
 * the host then checks again as the user who ran moat. A mount given `ro`
 * refuses every one with EROFS here, and its gofer would refuse them too.
 * dir is a VN_HOST directory, name one checked component. */
#ifndef MOAT_FS_HOST_H
#define MOAT_FS_HOST_H

#include "sentry/vfs.h"

struct p9c_setattr;

int host_create(struct task *t, struct vnode *dir, const char *name,
		mode_t mode, struct vnode **out);
int host_mkdir(struct task *t, struct vnode *dir, const char *name,
	       mode_t mode);
int host_mkfifo(struct task *t, struct vnode *dir, const char *name,
		mode_t mode);
int host_symlink(struct task *t, struct vnode *dir, const char *name,
		 const char *target);
int host_link(struct task *t, struct vnode *dir, const char *name,
	      struct vnode *target);
int host_unlink(struct task *t, struct vnode *dir, const char *name, bool rmdir,
		uid_t owner);
int host_rename(struct task *t, struct vnode *odir, const char *oname,
		struct vnode *ndir, const char *nname, uid_t owner);
/* chmod, chown, truncate, utimens of any VN_HOST node. */
int host_setattr(struct vnode *vn, const struct p9c_setattr *a);

#endif
