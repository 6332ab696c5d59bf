/* sentry/fs_dev.h: devfs helpers beyond the vfs.h entry points. */
#ifndef MOAT_FS_DEV_H
#define MOAT_FS_DEV_H

#include <stdbool.h>

struct vnode;

/* True for /dev/zero: mmap of it is an anonymous mapping, which the host
 * can make natively (the sentry has no host fd to donate for it). */
bool devfs_is_zero(struct vnode *vn);
/* A /dev/null named path (a masked file, sentry/vfs.c): reads end at once,
 * writes are taken and dropped. A new vnode (refs 1), or NULL on ENOMEM. */
struct vnode *devfs_null_at(const char *path);

#endif
