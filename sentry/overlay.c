/* sentry/overlay.c: the writable root (see overlay.h). */
#include "sentry/overlay.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sentry/fs_tmpfs.h"
#include "sentry/p9client.h"

/* The upper layer's root and root.readonly are the current mount
 * namespace's (struct mntns): each pod member has its own overlay. */
#define upper_root (vfs_ns()->upper_root)
#define ovl_ro (vfs_ns()->ovl_ro)

void ovl_init(struct vnode *lower_root)
{
	upper_root = tmpfs_new_overlay_root(&lower_root->st);
}

struct vnode *ovl_root(void)
{
	return upper_root;
}

bool ovl_enabled(void)
{
	return upper_root != NULL;
}

/* Split a canonical path into components, in buf (a copy). */
static int components(const char *path, char buf[PATH_MAX], char **comp,
		      int max)
{
	int n = 0;
	char *save = NULL, *c;

	if (strlen(path) >= PATH_MAX)
		return -ENAMETOOLONG;
	strcpy(buf, path);
	for (c = strtok_r(buf, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
		if (n == max)
			return -ENAMETOOLONG;
		comp[n++] = c;
	}
	return n;
}

/* Walk the upper layer. 1: found; 0: absent (*hidden when an opaque
 * directory on the way hides the lower layer); -ENOENT: whited out. */
static int upper_walk(const char *path, struct vnode **out, bool *hidden)
{
	char buf[PATH_MAX], *comp[PATH_MAX / 2];
	struct vnode *cur, *next;
	int n, i, rc;

	*hidden = false;
	n = components(path, buf, comp, (int)ARRAY_SIZE(comp));
	if (n < 0)
		return n;
	cur = vnode_get(upper_root);
	for (i = 0; i < n; i++) {
		if (!S_ISDIR(cur->mode)) {
			vnode_put(cur);
			return -ENOTDIR;
		}
		/* A clone mount is grafted into the lower layer at its mount
		 * point: an opaque directory above it (a private home) does
		 * not hide it; one at or below it (the guest replaced it)
		 * does. */
		if (i > 0 && vfs_is_clone_root(cur->path))
			*hidden = false;
		if (tmpfs_is_opaque(cur))
			*hidden = true;
		rc = tmpfs_lookup_ov(cur, comp[i], &next);
		vnode_put(cur);
		if (rc <= 0)
			return rc;
		cur = next;
	}
	*out = cur;
	return 1;
}

int ovl_lookup(const char *path, struct vnode **out)
{
	bool hidden;
	int rc = upper_walk(path, out, &hidden);

	if (rc == 1)
		return 0;
	if (rc < 0)
		return rc;
	if (hidden)
		return -ENOENT;
	return vfs_lower_lookup(path, out);
}

bool ovl_lower_exists(const char *path)
{
	struct vnode *vn;

	if (vfs_lower_lookup(path, &vn) < 0)
		return false;
	vnode_put(vn);
	return true;
}

/* The upper directory at path, copying up the lower ones on the way. */
static int upper_dir(const char *path, struct vnode **out)
{
	char buf[PATH_MAX], prefix[PATH_MAX] = "", *comp[PATH_MAX / 2];
	struct vnode *cur, *next, *lower;
	int n, i, rc;

	n = components(path, buf, comp, (int)ARRAY_SIZE(comp));
	if (n < 0)
		return n;
	cur = vnode_get(upper_root);
	for (i = 0; i < n; i++) {
		size_t pl = strlen(prefix);
		snprintf(prefix + pl, sizeof(prefix) - pl, "/%s", comp[i]);
		rc = tmpfs_lookup_ov(cur, comp[i], &next);
		if (rc == 0) {
			/* Not in the upper layer yet: copy the lower
			 * directory's attributes up. */
			rc = tmpfs_is_opaque(cur) ?
				     -ENOENT :
				     vfs_lower_lookup(prefix, &lower);
			if (rc == 0) {
				if (!S_ISDIR(lower->mode))
					rc = -ENOTDIR;
				else
					rc = tmpfs_make_raw(cur, comp[i],
							    &lower->st, NULL,
							    &next);
				vnode_put(lower);
			}
			if (rc == 0)
				rc = 1;
		}
		vnode_put(cur);
		if (rc < 0)
			return rc;
		cur = next;
		if (!S_ISDIR(cur->mode)) {
			vnode_put(cur);
			return -ENOTDIR;
		}
	}
	*out = cur;
	return 0;
}

static int copy_data(struct vnode *lower, struct vnode *up)
{
	static char buf[1 << 20];
	int64_t size = lower->st.st_size, off = 0;
	int in = vnode_hostfd_get(lower), rc = 0;
	struct timespec keep = up->st.st_mtim;

	if (in < 0)
		return in;
	/* Sized first, so that a large file goes to the store at once; a
	 * copy past --disk fails with ENOSPC and copy_up removes it. */
	rc = tmpfs_truncate(up, size);
	while (rc == 0 && off < size) {
		/* Only the data: a sparse file's holes stay holes, as on
		 * overlayfs (and cost no --disk). */
		off_t d = lseek(in, off, SEEK_DATA), h = size;
		size_t want = sizeof(buf);
		ssize_t r;
		long w;

		if (d < 0 && errno == ENXIO)
			break; /* a hole to the end */
		if (d >= 0) {
			off = d;
			h = lseek(in, off, SEEK_HOLE);
			if (h < 0 || h > size)
				h = size;
		} else if (errno != EINVAL) { /* EINVAL: no SEEK_DATA there */
			rc = -errno;
			break;
		}
		if (off >= size)
			break;
		if ((uint64_t)(h - off) < want)
			want = (size_t)(h - off);
		r = pread(in, buf, want, off);
		if (r <= 0) {
			rc = r < 0 ? -errno : -EIO;
			break;
		}
		w = tmpfs_pwrite(up, buf, (size_t)r, off);
		if (w != r)
			rc = w < 0 ? (int)w : -ENOSPC;
		off += r;
	}
	vnode_hostfd_put(lower);
	up->st.st_mtim = keep;
	return rc;
}

static int copy_up(struct vnode *lower, struct vnode **out)
{
	char dir[PATH_MAX], target[PATH_MAX];
	const char *name;
	struct vnode *pdir, *up;
	char *slash;
	int rc;

	if (S_ISDIR(lower->mode))
		return upper_dir(lower->path, out);
	if (!S_ISREG(lower->mode) && !S_ISLNK(lower->mode))
		return -EPERM;
	snprintf(dir, sizeof(dir), "%s", lower->path);
	slash = strrchr(dir, '/');
	if (!slash)
		return -EINVAL;
	name = lower->path + (slash - dir) + 1;
	if (slash == dir)
		dir[1] = 0;
	else
		*slash = 0;
	rc = upper_dir(dir, &pdir);
	if (rc < 0)
		return rc;
	if (S_ISLNK(lower->mode)) {
		rc = vfs_readlink(lower, target, sizeof(target));
		if (rc >= 0)
			rc = tmpfs_make_raw(pdir, name, &lower->st, target,
					    &up);
	} else {
		rc = tmpfs_make_raw(pdir, name, &lower->st, NULL, &up);
		if (rc == 0) {
			rc = copy_data(lower, up);
			if (rc < 0) {
				tmpfs_unlink(NULL, pdir, name, false);
				vnode_put(up);
			}
		}
	}
	vnode_put(pdir);
	if (rc < 0)
		return rc;
	*out = up;
	return 0;
}

/* An OCI root.readonly rootfs: no change after setup (ovl_ro). */
bool ovl_readonly(void)
{
	return ovl_ro;
}

int ovl_private_dir(const char *path)
{
	struct vnode *up;
	int rc;

	if (!ovl_enabled() || ovl_ro)
		return -EROFS;
	rc = upper_dir(path, &up);
	if (rc < 0)
		return rc;
	tmpfs_set_opaque(up);
	vnode_put(up);
	return 0;
}

bool ovl_lower_listable(const char *path)
{
	struct vnode *dir;
	uint32_t fid;
	int fd, rc;

	if (vfs_lower_lookup(path, &dir) < 0)
		return false;
	rc = S_ISDIR(dir->mode) ? p9c_clone(vn_p9(dir), dir->fid, &fid) :
				  -ENOTDIR;
	if (rc == 0) {
		rc = p9c_lopen(vn_p9(dir), fid, O_RDONLY | O_DIRECTORY, &fd);
		p9c_clunk(vn_p9(dir), fid);
		if (rc == 0)
			close(fd);
	}
	vnode_put(dir);
	return rc == 0;
}

void ovl_set_readonly(void)
{
	ovl_ro = true;
	/* what setup copied up (/etc, the files bound in) is read-only too */
	tmpfs_set_readonly(ovl_root());
}

int ovl_write_dir(struct vnode *dir, struct vnode **udir)
{
	switch (dir->kind) {
	case VN_TMPFS:
		*udir = vnode_get(dir);
		return 0;
	case VN_GOFER:
		if (!ovl_enabled() || ovl_ro || vfs_bound_ro(dir))
			return -EROFS;
		return upper_dir(dir->path, udir);
	case VN_PROC:
	case VN_DEV:
	case VN_MQUEUE: /* queues are made and removed by mqueuefs_* alone */
		return -EPERM;
	case VN_SYS:  /* mounted read-only */
	case VN_HOST: /* a host directory: ro, or rw (sentry/fs_host.c) */
		return -EROFS;
	}
	return -EROFS;
}

int ovl_write_target(struct vnode *vn, struct vnode **uvn)
{
	bool hidden;
	int rc;

	switch (vn->kind) {
	case VN_TMPFS:
		*uvn = vnode_get(vn);
		return 0;
	case VN_GOFER:
		if (!ovl_enabled() || ovl_ro || vfs_bound_ro(vn))
			return -EROFS;
		/* Copied up since this vnode was looked up? Use that. */
		rc = upper_walk(vn->path, uvn, &hidden);
		if (rc == 1)
			return 0;
		if (rc < 0)
			return rc;
		/* Removed since (its directory was replaced by an opaque
		 * one): copying it up would bring it back. */
		if (hidden)
			return -ENOENT;
		return copy_up(vn, uvn);
	case VN_PROC:
	case VN_DEV:
	case VN_MQUEUE:
		return -EPERM;
	case VN_SYS:
	case VN_HOST: /* a host directory: ro, or rw (sentry/fs_host.c) */
		return -EROFS;
	}
	return -EROFS;
}

int ovl_hide_known_lower(struct vnode *udir, const char *name)
{
	if (!tmpfs_is_overlay(udir) || tmpfs_is_opaque(udir))
		return 0;
	return tmpfs_add_whiteout(udir, name);
}

int ovl_hide_lower(struct vnode *udir, const char *name)
{
	char path[PATH_MAX];

	if (!tmpfs_is_overlay(udir) || tmpfs_is_opaque(udir))
		return 0;
	if (vfs_child_path(udir, name, path, sizeof(path)) < 0 ||
	    !ovl_lower_exists(path))
		return 0;
	return tmpfs_add_whiteout(udir, name);
}

int ovl_lower_names(const char *path, struct ovl_names **out)
{
	struct ovl_names *ln = calloc(1, sizeof(*ln));
	struct vnode *dir;
	struct p9_client *p9;
	uint32_t fid;
	size_t cap = 0;
	char buf[32768];
	int fd, rc;

	if (!ln)
		return -ENOMEM;
	*out = ln;
	if (vfs_lower_lookup(path, &dir) < 0)
		return 0; /* nothing below */
	if (!S_ISDIR(dir->mode)) {
		vnode_put(dir);
		return 0;
	}
	p9 = vn_p9(dir);
	rc = p9c_clone(p9, dir->fid, &fid);
	vnode_put(dir); /* (its client outlives it: the namespace's) */
	if (rc < 0)
		return rc;
	rc = p9c_lopen(p9, fid, O_RDONLY | O_DIRECTORY, &fd);
	p9c_clunk(p9, fid);
	if (rc < 0)
		return rc;
	for (;;) {
		long n = syscall(SYS_getdents64, fd, buf, sizeof(buf)), pos = 0;
		if (n <= 0)
			break;
		while (pos < n) {
			struct {
				uint64_t ino;
				int64_t off;
				uint16_t reclen;
				uint8_t type;
				char name[];
			} *d = (void *)(buf + pos);
			pos += d->reclen;
			if (!strcmp(d->name, ".") || !strcmp(d->name, ".."))
				continue;
			if (ln->n == cap) {
				size_t nc = cap ? cap * 2 : 64;
				char **nn =
					realloc(ln->names, nc * sizeof(char *));
				unsigned char *nt =
					nn ? realloc(ln->types, nc) : NULL;
				uint64_t *ni = nt ? realloc(ln->inos, nc * 8) :
						    NULL;
				if (nn)
					ln->names = nn;
				if (nt)
					ln->types = nt;
				if (!ni) {
					close(fd);
					return -ENOMEM;
				}
				ln->inos = ni;
				cap = nc;
			}
			ln->names[ln->n] = strdup(d->name);
			if (!ln->names[ln->n]) {
				close(fd);
				return -ENOMEM;
			}
			ln->types[ln->n] = d->type;
			ln->inos[ln->n] = d->ino;
			ln->n++;
		}
	}
	close(fd);
	return 0;
}

void ovl_names_free(struct ovl_names *ln)
{
	size_t i;

	if (!ln)
		return;
	for (i = 0; i < ln->n; i++)
		free(ln->names[i]);
	free(ln->names);
	free(ln->types);
	free(ln->inos);
	free(ln);
}

bool ovl_dir_empty(struct vnode *dir)
{
	struct ovl_names *ln = NULL;
	struct vnode *up = NULL;
	bool hidden, empty = true;
	size_t i;

	if (upper_walk(dir->path, &up, &hidden) == 1) {
		if (tmpfs_nchildren(up))
			empty = false;
		if (tmpfs_is_opaque(up))
			hidden = true;
	}
	if (empty && !hidden) {
		/* A rootfs we cannot list is not known to be empty. */
		if (ovl_lower_names(dir->path, &ln) < 0)
			empty = false;
		for (i = 0; ln && i < ln->n && empty; i++)
			if (!up || !tmpfs_has_whiteout(up, ln->names[i]))
				empty = false;
	}
	ovl_names_free(ln);
	vnode_put(up);
	return empty;
}
