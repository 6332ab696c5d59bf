/* sentry/fs_tmpfs.c: tmpfs (see fs_tmpfs.h). */
#include "sentry/fs_tmpfs.h"
#include "sentry/overlay.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/xattr.h>
#include <sys/mman.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#define TMPFS_MAGIC 0x01021994

struct tdirent {
	char *name;
	struct vnode *vn;
	uint64_t cookie; /* getdents position: increasing, never reused */
	bool whiteout;	 /* overlay: the lower entry of this name is deleted
			  * (vn is NULL) */
	struct tdirent *prev;  /* list order (cookies) */
	struct tdirent *hnext; /* name hash chain */
	struct tdirent *next;
};

struct txattr {
	struct txattr *next;
	char *name;
	size_t len;
	char value[];
};

struct tnode {
	struct vnode *root;	  /* the root of this tmpfs instance */
	struct vnode *parent;	  /* directories: the containing directory */
	struct tdirent *children; /* in creation order (cookies increase) */
	struct tdirent *tail;
	struct tdirent **hash; /* by name: big directories stay O(1) */
	size_t hmask, hcount;
	size_t nchildren;
	uint64_t next_cookie;
	int memfd;    /* regular files: the data */
	char *target; /* symlinks */
	bool mount_root;
	bool overlay;	   /* root of the overlay's upper layer (overlay.c) */
	struct pipe *fifo; /* FIFOs: the pipe while anyone has it open */
	void *sock;	   /* sockets: the bound socket while it is open */
	struct txattr *xattrs; /* user.* extended attributes */
	bool linkable;	       /* O_TMPFILE: may get its first name */
	size_t xattr_bytes;
	bool opaque;   /* overlay dir that hides the lower one */
	bool readonly; /* no change: an instance root (OCI root.readonly, a
			  ro tmpfs) or one file (a ro bind of a file) */
	bool writable; /* a file that stays writable in a read-only one */
};

static uint64_t next_ino = 2;
static uint64_t tmpfs_bytes; /* sum of the sizes of all tmpfs files */

/* Bytes the sentry itself wrote while setting the sandbox up (its
 * /etc/hosts line): not the guest's, so not charged to --disk. */
static uint64_t setup_bytes;

void tmpfs_setup_done(void)
{
	setup_bytes = tmpfs_bytes;
}

/* --disk, or the default: what every tmpfs file of the sandbox may hold. */
static uint64_t tmpfs_max(void)
{
	return (S && S->opts.disk ? S->opts.disk : TMPFS_MAX_BYTES) +
	       setup_bytes;
}

static void stamp(struct stat *st, bool a, bool m, bool c)
{
	struct timespec now;

	clock_gettime(CLOCK_REALTIME, &now);
	if (a)
		st->st_atim = now;
	if (m)
		st->st_mtim = now;
	if (c)
		st->st_ctim = now;
}

static struct vnode *tnode_new(struct vnode *root, const char *path,
			       mode_t mode, uid_t uid, gid_t gid)
{
	struct vnode *vn = vnode_new(VN_TMPFS, mode, path);
	struct tnode *tn;

	if (!vn)
		return NULL;
	tn = calloc(1, sizeof(*tn));
	if (!tn) {
		vnode_put(vn);
		return NULL;
	}
	tn->memfd = -1;
	tn->root = root ? root : vn;
	vn->tn = tn;
	memset(&vn->st, 0, sizeof(vn->st));
	vn->st.st_mode = mode;
	vn->st.st_uid = uid;
	vn->st.st_gid = gid;
	vn->st.st_nlink = S_ISDIR(mode) ? 2 : 1;
	vn->st.st_ino = next_ino++;
	vn->st.st_dev = makedev(0, 0x30);
	if (root && root->tn->overlay) {
		/* One filesystem to the guest: the rootfs's device, and inode
		 * numbers far from the rootfs's own. */
		vn->st.st_dev = root->st.st_dev;
		vn->st.st_ino += 1ULL << 40;
	}
	vn->st.st_blksize = 4096;
	stamp(&vn->st, true, true, true);
	return vn;
}

struct vnode *tmpfs_new_root(const char *mount_path, mode_t mode)
{
	struct vnode *vn = tnode_new(NULL, mount_path, S_IFDIR | mode, 0, 0);

	if (vn) {
		vn->tn->mount_root = true;
		vn->cached =
			true; /* the mount holds it for the sentry's life */
	}
	return vn;
}

void tmpfs_free(struct vnode *vn)
{
	struct tnode *tn = vn->tn;

	if (!tn)
		return;
	if (tn->memfd >= 0) {
		tmpfs_bytes -= (uint64_t)vn->st.st_size;
		close(tn->memfd);
	}
	free(tn->hash);
	tn->hash = NULL;
	while (tn->children) { /* only at teardown: removal needs empty dirs */
		struct tdirent *e = tn->children;
		tn->children = e->next;
		free(e->name);
		vnode_put(e->vn);
		free(e);
	}
	if (tn->parent)
		vnode_put(tn->parent);
	if (tn->fifo)
		fifo_detach(tn->fifo);
	while (tn->xattrs) {
		struct txattr *x = tn->xattrs;
		tn->xattrs = x->next;
		free(x->name);
		free(x);
	}
	free(tn->target);
	free(tn);
	vn->tn = NULL;
}

bool tmpfs_same_fs(struct vnode *a, struct vnode *b)
{
	return a->kind == VN_TMPFS && b->kind == VN_TMPFS &&
	       a->tn->root == b->tn->root;
}

struct vnode *tmpfs_instance_root(struct vnode *vn)
{
	return vn->tn->root;
}

bool tmpfs_is_mount_root(struct vnode *vn)
{
	return vn->tn->mount_root;
}

struct vnode *tmpfs_parent(struct vnode *vn)
{
	return vn->tn->mount_root ? NULL : vn->tn->parent;
}

static uint32_t name_hash(const char *s)
{
	uint32_t h = 2166136261u;

	while (*s)
		h = (h ^ (uint8_t)*s++) * 16777619u;
	return h;
}

static void hash_insert(struct tnode *tn, struct tdirent *e)
{
	size_t i;

	if (tn->hcount >= 2 * (tn->hmask + 1) || !tn->hash) {
		size_t ncap = tn->hash ? 2 * (tn->hmask + 1) : 16;
		struct tdirent **nh = calloc(ncap, sizeof(*nh)), *x;

		free(tn->hash);
		tn->hash = NULL;
		tn->hcount = 0;
		if (!nh)
			return; /* no memory: find() uses the list (still right) */
		for (x = tn->children; x; x = x->next) {
			if (x == e)
				continue;
			i = name_hash(x->name) & (ncap - 1);
			x->hnext = nh[i];
			nh[i] = x;
			tn->hcount++;
		}
		tn->hash = nh;
		tn->hmask = ncap - 1;
	}
	i = name_hash(e->name) & tn->hmask;
	e->hnext = tn->hash[i];
	tn->hash[i] = e;
	tn->hcount++;
}

static void hash_remove(struct tnode *tn, struct tdirent *e)
{
	struct tdirent **pp;

	if (!tn->hash)
		return;
	for (pp = &tn->hash[name_hash(e->name) & tn->hmask]; *pp;
	     pp = &(*pp)->hnext) {
		if (*pp == e) {
			*pp = e->hnext;
			tn->hcount--;
			return;
		}
	}
}

/* Append e (list order is creation order) and index it. */
static void link_dirent(struct vnode *dir, struct tdirent *e)
{
	struct tnode *tn = dir->tn;

	e->next = NULL;
	e->prev = tn->tail;
	if (tn->tail)
		tn->tail->next = e;
	else
		tn->children = e;
	tn->tail = e;
	hash_insert(tn, e);
}

static void unlink_dirent(struct vnode *dir, struct tdirent *e)
{
	struct tnode *tn = dir->tn;

	if (e->prev)
		e->prev->next = e->next;
	else
		tn->children = e->next;
	if (e->next)
		e->next->prev = e->prev;
	else
		tn->tail = e->prev;
	hash_remove(tn, e);
}

/* The entry of name, whiteouts included, as its list link. */
static struct tdirent **find(struct vnode *dir, const char *name)
{
	struct tnode *tn = dir->tn;
	struct tdirent **pp, *e;

	if (tn->hash) {
		for (e = tn->hash[name_hash(name) & tn->hmask]; e; e = e->hnext)
			if (!strcmp(e->name, name))
				return e->prev ? &e->prev->next : &tn->children;
		return NULL; /* the index holds every entry */
	}
	for (pp = &tn->children; *pp; pp = &(*pp)->next)
		if (!strcmp((*pp)->name, name))
			return pp;
	return NULL;
}

/* The live entry of name (NULL for none or a whiteout). */
static struct tdirent **find_live(struct vnode *dir, const char *name)
{
	struct tdirent **pp = find(dir, name);

	return pp && !(*pp)->whiteout ? pp : NULL;
}

/* Remove a whiteout of name, if there is one. Returns whether there was. */
static bool drop_whiteout(struct vnode *dir, const char *name)
{
	struct tdirent **pp = find(dir, name), *e;

	if (!pp || !(*pp)->whiteout)
		return false;
	e = *pp;
	unlink_dirent(dir, e);
	free(e->name);
	free(e);
	return true;
}

int tmpfs_lookup(struct vnode *dir, const char *name, struct vnode **out)
{
	struct tdirent **e = find_live(dir, name);

	if (!e)
		return -ENOENT;
	*out = vnode_get((*e)->vn);
	return 0;
}

int tmpfs_stat(struct vnode *vn, struct stat *st)
{
	*st = vn->st;
	st->st_blocks = (st->st_size + 511) / 512;
	return 0;
}

int tmpfs_readlink(struct vnode *vn, char *buf, size_t cap)
{
	size_t n;

	if (!S_ISLNK(vn->mode) || !vn->tn->target)
		return -EINVAL;
	n = strlen(vn->tn->target);
	if (n >= cap)
		return -ENAMETOOLONG;
	memcpy(buf, vn->tn->target, n + 1);
	return (int)n;
}

/* ---- namespace ------------------------------------------------------------ */

/* Of a read-only instance (tmpfs_set_readonly): EROFS for any change. */
static bool ro_node(const struct vnode *vn)
{
	const struct vnode *root = vn->tn->root ? vn->tn->root : vn;

	if (vn->tn->readonly)
		return true;
	if (vn->tn->writable)
		return false; /* a rw file bind under a read-only root */
	return root->tn && root->tn->readonly;
}

bool tmpfs_readonly(const struct vnode *vn)
{
	return ro_node(vn);
}

void tmpfs_set_readonly(struct vnode *vn)
{
	vn->tn->readonly = true;
}

void tmpfs_set_writable(struct vnode *vn)
{
	vn->tn->writable = true;
}

static int may_write_dir(struct task *t, struct vnode *dir)
{
	if (ro_node(dir))
		return -EROFS;
	if (!t)
		return 0;
	return vfs_access(&t->proc->cred, dir, W_OK | X_OK);
}

/* Sticky directories (/tmp is 1777): only the owner of an entry, of the
 * directory, or root may remove or rename it. */
static int sticky_ok(struct task *t, struct vnode *dir, struct vnode *vn)
{
	return t ? vfs_sticky_ok(&t->proc->cred, dir, vn->st.st_uid) : 0;
}

static int add_entry(struct vnode *dir, const char *name, struct vnode *vn)
{
	struct tdirent *e = calloc(1, sizeof(*e));

	if (!e)
		return -ENOMEM;
	e->name = strdup(name);
	if (!e->name) {
		free(e);
		return -ENOMEM;
	}
	e->vn = vn; /* takes the caller's reference */
	if (!dir->tn->next_cookie)
		dir->tn->next_cookie = 3; /* after "." and ".." */
	e->cookie = dir->tn->next_cookie++;
	link_dirent(dir, e);
	dir->tn->nchildren++;
	if (S_ISDIR(vn->mode)) {
		/* A directory holds its parent: ".." must stay valid while
		 * the directory is anyone's cwd or open. */
		struct vnode *old = vn->tn->parent;
		vn->tn->parent = vnode_get(dir);
		vnode_put(old);
		dir->st.st_nlink++;
	}
	stamp(&dir->st, false, true, true);
	return 0;
}

/* Unlink entry *pp of dir; returns the vnode with the entry's reference. */
static struct vnode *drop_entry(struct vnode *dir, struct tdirent **pp)
{
	struct tdirent *e = *pp;
	struct vnode *vn = e->vn;

	unlink_dirent(dir, e);
	dir->tn->nchildren--;
	free(e->name);
	free(e);
	if (S_ISDIR(vn->mode))
		dir->st.st_nlink--; /* tn->parent stays: ".." of a removed
				     * directory is its old parent, as on
				     * Linux; add_entry or tmpfs_free let go */
	stamp(&dir->st, false, true, true);
	return vn;
}

static int new_child(struct task *t, struct vnode *dir, const char *name,
		     mode_t mode, struct vnode **out)
{
	char path[PATH_MAX];
	struct vnode *vn;
	int rc;

	if (!S_ISDIR(dir->mode))
		return -ENOTDIR;
	if (strlen(name) > NAME_MAX)
		return -ENAMETOOLONG;
	rc = may_write_dir(t, dir);
	if (rc < 0)
		return rc;
	if (find_live(dir, name))
		return -EEXIST;
	if (!dir->tn->mount_root && dir->st.st_nlink == 0)
		return -ENOENT; /* removed directory */
	rc = vfs_child_path(dir, name, path, sizeof(path));
	if (rc < 0)
		return rc;
	vn = tnode_new(dir->tn->root, path, mode, t ? t->proc->cred.fsuid : 0,
		       t ? t->proc->cred.fsgid : 0);
	if (!vn)
		return -ENOMEM;
	/* setgid directories pass their group on */
	if (dir->st.st_mode & S_ISGID) {
		vn->st.st_gid = dir->st.st_gid;
		if (S_ISDIR(mode))
			vn->st.st_mode |= S_ISGID;
	}
	/* Over a deleted lower entry: a new directory must not show the old
	 * one's contents. */
	if (drop_whiteout(dir, name) && S_ISDIR(mode))
		vn->tn->opaque = true;
	*out = vn;
	return 0;
}

int tmpfs_create(struct task *t, struct vnode *dir, const char *name,
		 mode_t mode, struct vnode **out)
{
	struct vnode *vn;
	int rc = new_child(t, dir, name, S_IFREG | (mode & 07777), &vn);

	if (rc < 0)
		return rc;
	vn->tn->memfd = memfd_create("moat-tmpfs", MFD_CLOEXEC);
	if (vn->tn->memfd < 0) {
		rc = -errno;
		vnode_put(vn);
		return rc == -EMFILE || rc == -ENFILE ? -ENOSPC : rc;
	}
	vn->hostfd = -1; /* the memfd is tn's, shared by every open */
	rc = add_entry(dir, name, vn);
	if (rc < 0) {
		vnode_put(vn);
		return rc;
	}
	*out = vnode_get(vn);
	return 0;
}

/* A node with no contents of its own yet (a directory, a FIFO), entered
 * in dir. */
static int add_new(struct task *t, struct vnode *dir, const char *name,
		   mode_t mode)
{
	struct vnode *vn;
	int rc = new_child(t, dir, name, mode, &vn);

	if (rc < 0)
		return rc;
	rc = add_entry(dir, name, vn);
	if (rc < 0)
		vnode_put(vn);
	return rc;
}

int tmpfs_mkfifo(struct task *t, struct vnode *dir, const char *name,
		 mode_t mode)
{
	return add_new(t, dir, name, S_IFIFO | (mode & 07777));
}

int tmpfs_mksock(struct task *t, struct vnode *dir, const char *name,
		 mode_t mode, struct vnode **out)
{
	struct vnode *vn;
	int rc = new_child(t, dir, name, S_IFSOCK | (mode & 07777), &vn);

	if (rc < 0)
		return rc;
	rc = add_entry(dir, name, vn);
	if (rc < 0) {
		vnode_put(vn);
		return rc;
	}
	*out = vnode_get(vn);
	return 0;
}

void *tmpfs_sock(struct vnode *vn)
{
	return vn->kind == VN_TMPFS && vn->tn ? vn->tn->sock : NULL;
}

void tmpfs_set_sock(struct vnode *vn, void *sock)
{
	vn->tn->sock = sock;
}

int tmpfs_mkdir(struct task *t, struct vnode *dir, const char *name,
		mode_t mode)
{
	return add_new(t, dir, name, S_IFDIR | (mode & 07777));
}

int tmpfs_symlink(struct task *t, struct vnode *dir, const char *name,
		  const char *target)
{
	struct vnode *vn;
	int rc;

	if (!*target)
		return -ENOENT;
	rc = new_child(t, dir, name, S_IFLNK | 0777, &vn);
	if (rc < 0)
		return rc;
	vn->tn->target = strdup(target);
	vn->st.st_size = (off_t)strlen(target);
	if (!vn->tn->target) {
		vnode_put(vn);
		return -ENOMEM;
	}
	rc = add_entry(dir, name, vn);
	if (rc < 0)
		vnode_put(vn);
	return rc;
}

static bool removed_dir(struct vnode *dir)
{
	return !dir->tn->mount_root && dir->st.st_nlink == 0;
}

int tmpfs_link(struct task *t, struct vnode *dir, const char *name,
	       struct vnode *target)
{
	int rc;

	if (S_ISDIR(target->mode))
		return -EPERM;
	if (!tmpfs_same_fs(dir, target))
		return -EXDEV;
	if (strlen(name) > NAME_MAX)
		return -ENAMETOOLONG;
	if (removed_dir(dir) ||
	    (target->st.st_nlink == 0 && !target->tn->linkable))
		return -ENOENT;
	rc = may_write_dir(t, dir);
	if (rc < 0)
		return rc;
	if (find_live(dir, name))
		return -EEXIST;
	drop_whiteout(dir, name);
	rc = add_entry(dir, name, vnode_get(target));
	if (rc < 0) {
		vnode_put(target);
		return rc;
	}
	target->st.st_nlink++;
	target->tn->linkable = false;
	stamp(&target->st, false, false, true);
	return 0;
}

int tmpfs_unlink(struct task *t, struct vnode *dir, const char *name,
		 bool rmdir)
{
	struct tdirent **pp;
	struct vnode *vn;
	int rc;

	if (!S_ISDIR(dir->mode))
		return -ENOTDIR;
	pp = find_live(dir, name);
	if (!pp)
		return -ENOENT;
	vn = (*pp)->vn;
	rc = may_write_dir(t, dir);
	if (rc == 0)
		rc = sticky_ok(t, dir, vn);
	if (rc < 0)
		return rc;
	if (rmdir) {
		if (!S_ISDIR(vn->mode))
			return -ENOTDIR;
		if (vn->tn->nchildren)
			return -ENOTEMPTY;
	} else if (S_ISDIR(vn->mode)) {
		return -EISDIR;
	}
	vn = drop_entry(dir, pp);
	if (S_ISDIR(vn->mode))
		vn->st.st_nlink = 0;
	else
		vn->st.st_nlink--;
	stamp(&vn->st, false, false, true);
	vnode_put(vn);
	sentry_wake();
	return 0;
}

/* Rewrite the canonical paths below dir after it moved. */
static void repath(struct vnode *dir)
{
	struct tdirent *e;
	char path[PATH_MAX];

	for (e = dir->tn->children; e; e = e->next) {
		char *np;
		if (vfs_child_path(dir, e->name, path, sizeof(path)) < 0)
			continue;
		np = strdup(path);
		if (!np)
			continue;
		free(e->vn->path);
		e->vn->path = np;
		if (S_ISDIR(e->vn->mode))
			repath(e->vn);
	}
}

static bool is_ancestor(struct vnode *a, struct vnode *d)
{
	for (; d; d = tmpfs_parent(d))
		if (d == a)
			return true;
	return false;
}

int tmpfs_rename(struct task *t, struct vnode *odir, const char *oname,
		 struct vnode *ndir, const char *nname, unsigned flags)
{
	struct tdirent **op, **np;
	struct vnode *ovn, *nvn = NULL;
	char path[PATH_MAX];
	char *newpath;
	int rc;

	if (!tmpfs_same_fs(odir, ndir))
		return -EXDEV;
	if (!S_ISDIR(odir->mode) || !S_ISDIR(ndir->mode))
		return -ENOTDIR;
	if (strlen(nname) > NAME_MAX)
		return -ENAMETOOLONG;
	if (removed_dir(ndir))
		return -ENOENT;
	op = find_live(odir, oname);
	if (!op)
		return -ENOENT;
	ovn = (*op)->vn;
	rc = may_write_dir(t, odir);
	if (rc == 0)
		rc = may_write_dir(t, ndir);
	if (rc == 0)
		rc = sticky_ok(t, odir, ovn);
	if (rc < 0)
		return rc;
	np = find_live(ndir, nname);
	if (np)
		nvn = (*np)->vn;
	if (nvn == ovn)
		return 0; /* same file: nothing to do */
	if ((flags & RENAME_NOREPLACE) && nvn)
		return -EEXIST;
	if ((flags & RENAME_EXCHANGE) && !nvn)
		return -ENOENT;
	/* A directory cannot move below itself. */
	if (S_ISDIR(ovn->mode) && is_ancestor(ovn, ndir))
		return -EINVAL;
	if (flags & RENAME_EXCHANGE) {
		if (S_ISDIR(nvn->mode) && is_ancestor(nvn, odir))
			return -EINVAL;
		rc = sticky_ok(t, ndir, nvn);
		if (rc < 0)
			return rc;
		(*op)->vn = nvn;
		(*np)->vn = ovn;
		if (S_ISDIR(ovn->mode) != S_ISDIR(nvn->mode)) {
			odir->st.st_nlink += S_ISDIR(nvn->mode) ? 1 : -1;
			ndir->st.st_nlink += S_ISDIR(ovn->mode) ? 1 : -1;
		}
		if (S_ISDIR(ovn->mode)) {
			vnode_put(ovn->tn->parent);
			ovn->tn->parent = vnode_get(ndir);
		}
		if (S_ISDIR(nvn->mode)) {
			vnode_put(nvn->tn->parent);
			nvn->tn->parent = vnode_get(odir);
		}
		if (vfs_child_path(ndir, nname, path, sizeof(path)) == 0 &&
		    (newpath = strdup(path))) {
			free(ovn->path);
			ovn->path = newpath;
		}
		if (vfs_child_path(odir, oname, path, sizeof(path)) == 0 &&
		    (newpath = strdup(path))) {
			free(nvn->path);
			nvn->path = newpath;
		}
		if (S_ISDIR(ovn->mode))
			repath(ovn);
		if (S_ISDIR(nvn->mode))
			repath(nvn);
		stamp(&odir->st, false, true, true);
		stamp(&ndir->st, false, true, true);
		return 0;
	}
	if (nvn) {
		rc = sticky_ok(t, ndir, nvn);
		if (rc < 0)
			return rc;
		if (S_ISDIR(ovn->mode) && !S_ISDIR(nvn->mode))
			return -ENOTDIR;
		if (!S_ISDIR(ovn->mode) && S_ISDIR(nvn->mode))
			return -EISDIR;
		if (S_ISDIR(nvn->mode) && nvn->tn->nchildren)
			return -ENOTEMPTY;
	}
	rc = vfs_child_path(ndir, nname, path, sizeof(path));
	if (rc < 0)
		return rc;
	newpath = strdup(path);
	if (!newpath)
		return -ENOMEM;
	if (nvn) {
		struct vnode *gone = drop_entry(ndir, np);
		gone->st.st_nlink = S_ISDIR(gone->mode) ? 0 :
							  gone->st.st_nlink - 1;
		vnode_put(gone);
		op = find_live(odir, oname); /* the list may have changed */
	}
	ovn = drop_entry(odir, op);
	if (drop_whiteout(ndir, nname) && S_ISDIR(ovn->mode))
		ovn->tn->opaque = true;
	op = NULL;
	rc = add_entry(ndir, nname, ovn);
	if (rc < 0) {
		/* Put it back where it was: the names are already allocated
		 * memory the guest cannot make us lose. */
		if (add_entry(odir, oname, ovn) < 0)
			vnode_put(ovn);
		free(newpath);
		return rc;
	}
	free(ovn->path);
	ovn->path = newpath;
	if (S_ISDIR(ovn->mode))
		repath(ovn);
	stamp(&ovn->st, false, false, true);
	sentry_wake();
	return 0;
}

/* ---- attributes ---------------------------------------------------------- */

int tmpfs_truncate(struct vnode *vn, int64_t len)
{
	int64_t old = vn->st.st_size;

	if (ro_node(vn))
		return -EROFS;
	if (S_ISDIR(vn->mode))
		return -EISDIR;
	if (!S_ISREG(vn->mode))
		return -EINVAL;
	if (len < 0)
		return -EINVAL;
	if (len > old && tmpfs_bytes + (uint64_t)(len - old) > tmpfs_max())
		return -ENOSPC;
	if (ftruncate(vn->tn->memfd, len) < 0)
		return -errno;
	tmpfs_bytes = tmpfs_bytes - (uint64_t)old + (uint64_t)len;
	vn->st.st_size = len;
	stamp(&vn->st, false, true, true);
	return 0;
}

static bool is_owner(struct task *t, struct vnode *vn)
{
	return !t || t->proc->cred.fsuid == 0 ||
	       t->proc->cred.fsuid == vn->st.st_uid;
}

static bool in_group(struct task *t, gid_t g)
{
	const struct creds *c = &t->proc->cred;
	int i;

	if (g == c->fsgid)
		return true;
	for (i = 0; i < c->ngroups; i++)
		if (c->groups[i] == g)
			return true;
	return false;
}

int tmpfs_chmod(struct task *t, struct vnode *vn, mode_t mode)
{
	if (ro_node(vn))
		return -EROFS;
	if (!is_owner(t, vn))
		return -EPERM;
	/* Linux: set-group-id needs the group, unless one is root. */
	if (t && t->proc->cred.fsuid != 0 && !in_group(t, vn->st.st_gid))
		mode &= ~(mode_t)S_ISGID;
	vn->st.st_mode = (vn->st.st_mode & S_IFMT) | (mode & 07777);
	vn->mode = vn->st.st_mode;
	stamp(&vn->st, false, false, true);
	return 0;
}

int tmpfs_chown(struct task *t, struct vnode *vn, uid_t uid, gid_t gid)
{
	bool root = !t || t->proc->cred.euid == 0;

	if (ro_node(vn))
		return -EROFS;
	/* Linux's chown_ok/chgrp_ok: without privilege, only the owner may,
	 * only to itself, and only to a group it is in. */
	if (!root) {
		if (uid != (uid_t)-1 &&
		    (uid != vn->st.st_uid || !is_owner(t, vn)))
			return -EPERM;
		if (gid != (gid_t)-1 &&
		    (!is_owner(t, vn) ||
		     (gid != vn->st.st_gid && !in_group(t, gid))))
			return -EPERM;
	}
	if (uid != (uid_t)-1)
		vn->st.st_uid = uid;
	if (gid != (gid_t)-1)
		vn->st.st_gid = gid;
	/* A change of owner clears set-id bits, as Linux does. */
	if (!S_ISDIR(vn->mode))
		vn->st.st_mode &= ~(mode_t)(S_ISUID | S_ISGID);
	vn->mode = vn->st.st_mode;
	stamp(&vn->st, false, false, true);
	return 0;
}

int tmpfs_utimens(struct task *t, struct vnode *vn, const struct timespec ts[2])
{
	struct timespec now;
	bool explicit = false;
	int i;

	if (ro_node(vn))
		return -EROFS;
	if (ts) {
		/* Validate both before changing either. */
		for (i = 0; i < 2; i++) {
			if (ts[i].tv_nsec == UTIME_NOW ||
			    ts[i].tv_nsec == UTIME_OMIT)
				continue;
			if (ts[i].tv_nsec < 0 || ts[i].tv_nsec >= 1000000000)
				return -EINVAL;
			explicit = true;
		}
		if (ts[0].tv_nsec == UTIME_OMIT && ts[1].tv_nsec == UTIME_OMIT)
			return 0;
	}
	/* An explicit time needs ownership; "now" needs write access. */
	if (explicit) {
		if (!is_owner(t, vn))
			return -EPERM;
	} else if (!is_owner(t, vn) &&
		   vfs_access(&t->proc->cred, vn, W_OK) < 0) {
		return -EACCES;
	}
	clock_gettime(CLOCK_REALTIME, &now);
	for (i = 0; i < 2; i++) {
		struct timespec v = ts ? ts[i] : now;
		if (ts && v.tv_nsec == UTIME_OMIT)
			continue;
		if (!ts || v.tv_nsec == UTIME_NOW)
			v = now;
		if (i == 0)
			vn->st.st_atim = v;
		else
			vn->st.st_mtim = v;
	}
	vn->st.st_ctim = now;
	return 0;
}

int tmpfs_statfs(struct vnode *vn, struct statfs *st)
{
	(void)vn;
	memset(st, 0, sizeof(*st));
	st->f_type = TMPFS_MAGIC;
	st->f_bsize = 4096;
	st->f_frsize = 4096;
	st->f_blocks = tmpfs_max() / 4096;
	st->f_bfree = st->f_bavail = (tmpfs_max() - tmpfs_bytes) / 4096;
	st->f_files = 1 << 20;
	st->f_ffree = st->f_files - next_ino;
	st->f_namelen = NAME_MAX;
	return 0;
}

/* ---- open files ---------------------------------------------------------- */

static long t_write(struct task *t, struct file *f, const void *buf, size_t n,
		    int64_t *off)
{
	struct vnode *vn = f->vn;
	int64_t at = (f->flags & O_APPEND) ? vn->st.st_size : *off, end;
	ssize_t r;

	(void)t;
	if (__builtin_add_overflow(at, (int64_t)n, &end))
		return -EFBIG;
	if (end > vn->st.st_size &&
	    tmpfs_bytes + (uint64_t)(end - vn->st.st_size) > tmpfs_max()) {
		/* Write what fits, as a full disk does. */
		uint64_t room = tmpfs_max() - tmpfs_bytes;
		if (at >= vn->st.st_size + (int64_t)room)
			return -ENOSPC;
		n = (size_t)(vn->st.st_size + (int64_t)room - at);
	}
	r = pwrite(f->hostfd, buf, n, at);
	if (r < 0)
		return -errno;
	if (at + r > vn->st.st_size) {
		tmpfs_bytes += (uint64_t)(at + r - vn->st.st_size);
		vn->st.st_size = at + r;
	}
	*off = at + r;
	stamp(&vn->st, false, true, true);
	return r;
}

/* Positions are cookies: "." is 1, ".." 2, each entry its own (increasing,
 * never reused), so entries removed or added between calls neither hide
 * nor repeat others (rm -r reads and unlinks as it goes). */
static bool emit_at(struct dirent_sink *s, uint64_t cookie, uint64_t ino,
		    unsigned char type, const char *name)
{
	s->skip = 0;
	s->index =
		(int64_t)cookie - 1; /* dirent_emit writes d_off = index + 1 */
	return dirent_emit(s, ino, type, name);
}

#define LOWER_COOKIE (1ULL << 40) /* lower entries of a merged directory */

static long t_getdents(struct task *t, struct file *f, struct dirent_sink *s)
{
	struct vnode *dir = f->vn, *up;
	struct tdirent *e;
	uint64_t pos = (uint64_t)f->dir_index, last = pos;
	size_t i;

	(void)t;
	if (!S_ISDIR(dir->mode))
		return -ENOTDIR;
	if (removed_dir(dir))
		return -ENOENT; /* as Linux: iterate_dir on a dead directory */
	up = tmpfs_parent(dir);
	if (pos < 1) {
		if (!emit_at(s, 1, dir->st.st_ino, DT_DIR, "."))
			goto out;
		last = 1;
	}
	if (pos < 2) {
		if (!emit_at(s, 2, up ? up->st.st_ino : dir->st.st_ino, DT_DIR,
			     ".."))
			goto out;
		last = 2;
	}
	for (e = dir->tn->children; e; e = e->next) {
		/* every type (FIFOs, sockets), as find -type reads it */
		unsigned char type = e->vn ? IFTODT(e->vn->mode) : DT_UNKNOWN;
		if (e->cookie <= pos || e->whiteout)
			continue;
		if (!emit_at(s, e->cookie, e->vn->st.st_ino, type, e->name))
			goto out;
		last = e->cookie;
	}
	/* A merged overlay directory: then the lower entries the upper
	 * layer neither has nor whited out. Read once per pass: the upper
	 * entries made since (copy-ups of lower names during the listing,
	 * cookie >= mark) were not listed above, so their lower names are. */
	if (tmpfs_is_overlay(dir) && !dir->tn->opaque) {
		struct ovl_names *ln = f->priv;
		if (ln && pos < 3) {
			ovl_names_free(ln); /* rewound: a new pass */
			f->priv = ln = NULL;
		}
		if (!ln) {
			long rc = ovl_lower_names(dir->path, &ln);
			if (rc < 0) {
				ovl_names_free(ln);
				return rc;
			}
			ln->mark = dir->tn->next_cookie;
			f->priv = ln;
		}
		for (i = 0; i < ln->n; i++) {
			uint64_t c = LOWER_COOKIE + i;
			struct tdirent **ue = find(dir, ln->names[i]);
			if (c <= pos || (ue && ((*ue)->whiteout ||
						(*ue)->cookie < ln->mark)))
				continue;
			if (!emit_at(s, c, ln->inos[i], ln->types[i],
				     ln->names[i]))
				goto out;
			last = c;
		}
	}
out:
	f->dir_index = (int64_t)last;
	return (long)s->len;
}

static int t_fstat(struct file *f, struct stat *st)
{
	return tmpfs_stat(f->vn, st);
}

static void t_release(struct file *f)
{
	if (f->vn && S_ISDIR(f->vn->mode))
		ovl_names_free(f->priv); /* merged directory listing */
}

static const struct file_ops tmpfs_ops = {
	.read = file_hostfd_read,
	.write = t_write,
	.poll = file_always_ready,
	.getdents = t_getdents,
	.stat = t_fstat,
	.release = t_release,
};

int tmpfs_open(struct task *t, struct vnode *vn, int flags, struct file **out)
{
	struct file *f;
	int rc;

	(void)t;
	if (S_ISLNK(vn->mode))
		return -ELOOP;
	if ((flags & O_DIRECTORY) && !S_ISDIR(vn->mode))
		return -ENOTDIR;
	if (S_ISREG(vn->mode) && ro_node(vn) &&
	    ((flags & O_ACCMODE) != O_RDONLY || (flags & O_TRUNC)))
		return -EROFS;
	if (S_ISSOCK(vn->mode))
		return -ENXIO; /* a socket is connected to, not opened */
	if (S_ISFIFO(vn->mode)) {
		int rc = fifo_open(t, &vn->tn->fifo, flags, &f);
		if (rc == SYS_BLOCK && t && !t->fifo_vn)
			t->fifo_vn = vnode_get(vn); /* see do_open */
		if (rc < 0 || rc == SYS_BLOCK)
			return rc;
		f->vn = vnode_get(vn);
		*out = f;
		return 0;
	}
	if (S_ISDIR(vn->mode) && (flags & O_ACCMODE) != O_RDONLY)
		return -EISDIR;
	if ((flags & O_TRUNC) && S_ISREG(vn->mode)) { /* even O_RDONLY */
		rc = tmpfs_truncate(vn, 0);
		if (rc < 0)
			return rc;
	}
	f = file_new(&tmpfs_ops, flags & ~(O_CREAT | O_EXCL | O_NOCTTY |
					   O_TRUNC | O_CLOEXEC));
	if (!f)
		return -ENOMEM;
	if (S_ISREG(vn->mode)) {
		f->hostfd = vn->tn->memfd;
		f->hostfd_shared = true;
		f->tmpfs = true;
	}
	f->vn = vnode_get(vn);
	*out = f;
	return 0;
}

/* ---- the overlay's upper layer (sentry/overlay.c) ---------------------- */

struct vnode *tmpfs_new_overlay_root(const struct stat *lower_root)
{
	struct vnode *vn = tmpfs_new_root("/", lower_root->st_mode & 07777);

	if (vn) {
		vn->tn->overlay = true;
		vn->st.st_dev = lower_root->st_dev;
		vn->st.st_ino = lower_root->st_ino;
		vn->st.st_uid = lower_root->st_uid;
		vn->st.st_gid = lower_root->st_gid;
		vn->st.st_atim = lower_root->st_atim;
		vn->st.st_mtim = lower_root->st_mtim;
		vn->st.st_ctim = lower_root->st_ctim;
	}
	return vn;
}

bool tmpfs_is_overlay(struct vnode *vn)
{
	return vn->kind == VN_TMPFS && vn->tn->root->tn->overlay;
}

void tmpfs_set_opaque(struct vnode *dir)
{
	dir->tn->opaque = true;
}

bool tmpfs_is_opaque(struct vnode *dir)
{
	return dir->tn->opaque;
}

size_t tmpfs_nchildren(struct vnode *dir)
{
	return dir->tn->nchildren;
}

int tmpfs_lookup_ov(struct vnode *dir, const char *name, struct vnode **out)
{
	struct tdirent **e = find(dir, name);

	if (!e)
		return 0;
	if ((*e)->whiteout)
		return -ENOENT;
	*out = vnode_get((*e)->vn);
	return 1;
}

bool tmpfs_has_whiteout(struct vnode *dir, const char *name)
{
	struct tdirent **e = find(dir, name);

	return e && (*e)->whiteout;
}

int tmpfs_add_whiteout(struct vnode *dir, const char *name)
{
	struct tdirent *e;

	if (ro_node(dir))
		return -EROFS; /* removing a rootfs name of a read-only root */
	if (find(dir, name))
		return 0;
	e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	e->name = strdup(name);
	if (!e->name) {
		free(e);
		return -ENOMEM;
	}
	e->whiteout = true;
	if (!dir->tn->next_cookie)
		dir->tn->next_cookie = 3;
	e->cookie = dir->tn->next_cookie++;
	link_dirent(dir, e);
	stamp(&dir->st, false, true, true);
	return 0;
}

/* Copy-up: a node with the lower one's attributes, no permission check
 * (the guest's right to change the file was checked by the caller). */
int tmpfs_make_raw(struct vnode *dir, const char *name, const struct stat *st,
		   const char *target, struct vnode **out)
{
	struct vnode *vn;
	int rc = new_child(NULL, dir, name, st->st_mode, &vn);

	if (rc < 0)
		return rc;
	vn->st.st_uid = st->st_uid;
	vn->st.st_gid = st->st_gid;
	vn->st.st_mode = st->st_mode;
	vn->mode = st->st_mode;
	/* A copy keeps its identity, as on overlayfs: tools that compare
	 * device and inode (fts, find) see the same directory. */
	vn->st.st_dev = st->st_dev;
	vn->st.st_ino = st->st_ino;
	vn->st.st_atim = st->st_atim;
	vn->st.st_mtim = st->st_mtim;
	vn->st.st_ctim = st->st_ctim;
	if (S_ISREG(st->st_mode)) {
		vn->tn->memfd = memfd_create("moat-upper", MFD_CLOEXEC);
		if (vn->tn->memfd < 0) {
			rc = -errno;
			vnode_put(vn);
			return rc;
		}
	} else if (S_ISLNK(st->st_mode)) {
		vn->tn->target = strdup(target ? target : "");
		vn->st.st_size = (off_t)strlen(vn->tn->target);
	}
	rc = add_entry(dir, name, vn);
	if (rc < 0) {
		vnode_put(vn);
		return rc;
	}
	*out = vnode_get(vn);
	return 0;
}

int tmpfs_memfd(struct vnode *vn)
{
	return vn->tn->memfd;
}

/* An unnamed tmpfs file (memfd_create): it belongs to no directory. */
int tmpfs_tmpfile(struct task *t, struct vnode *dir, mode_t mode, bool linkable,
		  struct vnode **out)
{
	char path[PATH_MAX];
	struct vnode *vn;
	int rc;

	if (!S_ISDIR(dir->mode))
		return -ENOTDIR;
	if (removed_dir(dir))
		return -ENOENT;
	rc = may_write_dir(t, dir);
	if (rc < 0)
		return rc;
	snprintf(path, sizeof(path), "%s/#%llu (deleted)",
		 strcmp(dir->path, "/") ? dir->path : "",
		 (unsigned long long)next_ino);
	vn = tnode_new(dir->tn->root, path, S_IFREG | (mode & 07777),
		       t ? t->proc->cred.fsuid : 0,
		       t ? t->proc->cred.fsgid : 0);
	if (!vn)
		return -ENOMEM;
	vn->st.st_nlink = 0;
	vn->tn->linkable = linkable;
	vn->tn->memfd = memfd_create("moat-tmpfs", MFD_CLOEXEC);
	if (vn->tn->memfd < 0) {
		rc = -errno;
		vnode_put(vn);
		return rc;
	}
	*out = vn;
	return 0;
}

int tmpfs_anon_file(const char *name, struct vnode **out)
{
	char path[PATH_MAX];
	struct vnode *vn;

	snprintf(path, sizeof(path), "/memfd:%s (deleted)", name);
	vn = tnode_new(NULL, path, S_IFREG | 0777, 0, 0);
	if (!vn)
		return -ENOMEM;
	vn->st.st_nlink = 0;
	vn->tn->memfd = memfd_create("moat-memfd", MFD_CLOEXEC);
	if (vn->tn->memfd < 0) {
		int rc = -errno;
		vnode_put(vn);
		return rc;
	}
	*out = vn;
	return 0;
}

/* ---- extended attributes (user.* only; sentry/xattr.c checks names) ----- */

#define TMPFS_XATTR_BYTES 65536 /* per file: names and values together */

static struct txattr **xfind(struct tnode *tn, const char *name)
{
	struct txattr **pp;

	for (pp = &tn->xattrs; *pp; pp = &(*pp)->next)
		if (!strcmp((*pp)->name, name))
			return pp;
	return NULL;
}

long tmpfs_getxattr(struct vnode *vn, const char *name, void *buf, size_t size)
{
	struct txattr **pp = xfind(vn->tn, name);

	if (!pp)
		return -ENODATA;
	if (!size)
		return (long)(*pp)->len;
	if (size < (*pp)->len)
		return -ERANGE;
	memcpy(buf, (*pp)->value, (*pp)->len);
	return (long)(*pp)->len;
}

long tmpfs_setxattr(struct vnode *vn, const char *name, const void *value,
		    size_t size, int flags)
{
	struct tnode *tn = vn->tn;
	struct txattr **pp = xfind(tn, name), *x;
	size_t old = pp ? strlen((*pp)->name) + (*pp)->len : 0;
	size_t add = strlen(name) + size;

	if (ro_node(vn))
		return -EROFS;
	if ((flags & XATTR_CREATE) && pp)
		return -EEXIST;
	if ((flags & XATTR_REPLACE) && !pp)
		return -ENODATA;
	if (tn->xattr_bytes - old + add > TMPFS_XATTR_BYTES)
		return -ENOSPC;
	x = malloc(sizeof(*x) + size);
	if (!x)
		return -ENOMEM;
	x->name = strdup(name);
	if (!x->name) {
		free(x);
		return -ENOMEM;
	}
	x->len = size;
	memcpy(x->value, value, size);
	if (pp) {
		struct txattr *o = *pp;
		x->next = o->next;
		*pp = x;
		free(o->name);
		free(o);
	} else {
		x->next = tn->xattrs;
		tn->xattrs = x;
	}
	tn->xattr_bytes = tn->xattr_bytes - old + add;
	stamp(&vn->st, false, false, true);
	return 0;
}

long tmpfs_removexattr(struct vnode *vn, const char *name)
{
	struct tnode *tn = vn->tn;
	struct txattr **pp = xfind(tn, name), *x;

	if (ro_node(vn))
		return -EROFS;
	if (!pp)
		return -ENODATA;
	x = *pp;
	*pp = x->next;
	tn->xattr_bytes -= strlen(x->name) + x->len;
	free(x->name);
	free(x);
	stamp(&vn->st, false, false, true);
	return 0;
}

long tmpfs_listxattr(struct vnode *vn, char *buf, size_t size)
{
	struct txattr *x;
	size_t need = 0;

	for (x = vn->tn->xattrs; x; x = x->next)
		need += strlen(x->name) + 1;
	if (!size)
		return (long)need;
	if (size < need)
		return -ERANGE;
	need = 0;
	for (x = vn->tn->xattrs; x; x = x->next) {
		size_t l = strlen(x->name) + 1;
		memcpy(buf + need, x->name, l);
		need += l;
	}
	return (long)need;
}
