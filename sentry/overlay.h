/* sentry/overlay.h: the root filesystem, writable in the sandbox.
 *
 * The rootfs (the gofer's, read-only on the host) is the lower layer; an
 * upper layer in the sentry's memory (a tmpfs instance with whiteouts and
 * opaque directories) takes every change. Lookups try the upper layer by
 * path, then the lower one. A write to a lower file copies it up first
 * (data into a memfd; attributes kept); removing a lower name leaves a
 * whiteout. Renaming a lower directory gives EXDEV, as overlayfs does
 * without redirect_dir: mv falls back to copy and delete. Nothing written
 * ever reaches the host.
 */
#ifndef MOAT_OVERLAY_H
#define MOAT_OVERLAY_H

#include "sentry/vfs.h"

void ovl_init(struct vnode *lower_root);
bool ovl_enabled(void);
/* From now on the rootfs is read-only (EROFS), as an OCI root.readonly
 * asks; what setup wrote (/etc/hosts, copied files) stays. */
void ovl_set_readonly(void);
bool ovl_readonly(void);
/* The merged view's "/" (the upper layer's root): lookups from it go
 * through the overlay, and its listing merges both layers. */
struct vnode *ovl_root(void);
/* Lookup of a canonical path in the merged view (0 and a reference, or
 * -errno). */
int ovl_lookup(const char *path, struct vnode **out);
bool ovl_lower_exists(const char *path);
/* The upper version of a directory or a file of the merged view, copied
 * up as needed: what writes must act on. */
int ovl_write_dir(struct vnode *dir, struct vnode **udir);
int ovl_write_target(struct vnode *vn, struct vnode **uvn);
/* name was removed from (or never was in) udir: hide the lower one. */
int ovl_hide_lower(struct vnode *udir, const char *name);
/* The same when the caller already knows the rootfs has the name (it
 * resolved it to a rootfs node): no second lookup. */
int ovl_hide_known_lower(struct vnode *udir, const char *name);
/* May the gofer list the rootfs directory at path? (The host's /root,
 * served as nobody, is not listable.) */
bool ovl_lower_listable(const char *path);
/* The directory at path (a rootfs one, or one of the upper layer) becomes
 * the sandbox's own: an upper directory, with the rootfs one's attributes
 * if there is one, that hides whatever the rootfs has there. */
int ovl_private_dir(const char *path);
/* Is the directory at path empty in the merged view? */
bool ovl_dir_empty(struct vnode *dir);

/* The lower entries of a merged directory, for getdents (owned by the
 * caller: ovl_names_free). */
struct ovl_names {
	size_t n;
	char **names;
	unsigned char *types;
	uint64_t *inos;
	uint64_t mark; /* the upper directory's next cookie when listed */
};
int ovl_lower_names(const char *path, struct ovl_names **out);
void ovl_names_free(struct ovl_names *ln);

#endif
