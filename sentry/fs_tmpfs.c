/* sentry/fs_tmpfs.c: tmpfs (see fs_tmpfs.h). */
#include "sentry/fs_tmpfs.h"
#include "sentry/limits.h"
#include "sentry/overlay.h"
#include "sentry/store.h"

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
	/* Regular files: the data (see "file data" below). */
	char *inl; /* inline bytes [0, st_size), inl_cap allocated */
	size_t inl_cap;
	uint64_t sid;	  /* its store file (sentry/store.h), 0: inline */
	int fd;		  /* the store file's fd while open, else -1 */
	int fd_users;	  /* handlers and pinned files using fd */
	uint64_t charged; /* bytes of --disk this file holds */
	bool shared_map;  /* mapped MAP_SHARED writable: all preallocated */
	bool no_falloc;	  /* the store cannot preallocate: charge the size */
	bool sparse;   /* may have holes below its size (or blocks past it) */
	uint64_t meta; /* --disk held by xattrs and a long symlink target */
	char *target;  /* symlinks */
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
	uint64_t heap_charged; /* node_cost() taken of the heap budget */
};

static uint64_t next_ino = 2;
static uint64_t next_sid = 1; /* store file ids */
static uint64_t tmpfs_bytes;  /* charged to --disk by every file */
static uint64_t inline_bytes; /* inline buffers, allocated */
static uint64_t tmpfs_nodes;  /* live nodes, for TMPFS_NODES_MAX */
/* Names of files past their first (hard links): each costs the sentry a
 * name as a node does, and Linux's tmpfs takes an inode for each too. */
static uint64_t tmpfs_links;
static uint64_t default_max = TMPFS_DEFAULT_MAX;

/* Bytes the sentry itself wrote while setting the sandbox up (its
 * /etc/hosts line, files a bundle binds): not the guest's, so not
 * charged to --disk. */
static uint64_t setup_bytes;

void tmpfs_setup_done(void)
{
	setup_bytes = tmpfs_bytes;
}

void tmpfs_set_default_max(uint64_t bytes)
{
	default_max = bytes;
}

/* --disk, or the default: what every tmpfs file of the sandbox may hold. */
static uint64_t tmpfs_max(void)
{
	return (S && S->opts.disk ? S->opts.disk : default_max) + setup_bytes;
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

/* What a node and a name cost the sentry's heap, charged to its share
 * of the memory limit (limits_heap_charge) so that empty files cannot
 * outgrow it: the structures, malloc's overhead, and the strings. A node
 * keeps its full guest path, so a file deep in long-named directories
 * costs up to PATH_MAX; a name also takes a slot of its directory's hash.
 * Past the budget, as a tmpfs out of inodes: ENOSPC. */
#define MALLOC_OVERHEAD 16
static uint64_t node_cost(const struct vnode *vn)
{
	return sizeof(*vn) + sizeof(struct tnode) + strlen(vn->path) + 1 +
	       3 * MALLOC_OVERHEAD;
}

static uint64_t dirent_cost(const char *name)
{
	return sizeof(struct tdirent) + strlen(name) + 1 + 2 * MALLOC_OVERHEAD +
	       sizeof(struct tdirent *);
}

/* Charge a new node (an error for the caller to give: no node). */
static bool node_charge(struct vnode *vn)
{
	uint64_t cost = node_cost(vn);

	if (!limits_heap_charge((int64_t)cost))
		return false;
	vn->tn->heap_charged = cost;
	return true;
}

/* vn's path changed (a rename): its charge follows, even past the budget,
 * since a rename of a directory has already renamed what is below it. */
static void node_recharge(struct vnode *vn)
{
	uint64_t cost;

	if (!vn->tn->heap_charged)
		return;
	cost = node_cost(vn);
	limits_heap_force((int64_t)cost - (int64_t)vn->tn->heap_charged);
	vn->tn->heap_charged = cost;
}

static void dirent_free(struct tdirent *e)
{
	limits_heap_charge(-(int64_t)dirent_cost(e->name));
	free(e->name);
	free(e);
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
	tn->fd = -1;
	tn->root = root ? root : vn;
	vn->tn = tn;
	memset(&vn->st, 0, sizeof(vn->st));
	vn->st.st_mode = mode;
	vn->st.st_uid = uid;
	vn->st.st_gid = gid;
	vn->st.st_nlink = S_ISDIR(mode) ? 2 : 1;
	vn->st.st_ino = next_ino++;
	/* A mount's root has its device set by its maker (vfs.c); every
	 * file made in it takes the same. */
	vn->st.st_dev = root ? root->st.st_dev : VFS_DEV_TMP;
	if (root && root->tn->overlay) {
		/* One filesystem to the guest: the rootfs's device, and inode
		 * numbers far from the rootfs's own. */
		vn->st.st_ino += 1ULL << 40;
	}
	vn->st.st_blksize = 4096;
	stamp(&vn->st, true, true, true);
	tmpfs_nodes++;
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

/* ---- file data -------------------------------------------------------------
 *
 * A regular file's bytes live in one of two places:
 *  - inline, a buffer of the sentry's heap, while the file is at most
 *    TMPFS_INLINE_MAX bytes and the sandbox's inline buffers stay within
 *    TMPFS_INLINE_TOTAL. Most temporary files (locks, sources, small
 *    outputs) never leave it: no host fd, no round trip;
 *  - stored, a file of the sandbox's store (sentry/store.h) on the host's
 *    disk: larger files, and every file that is mapped or executed, since
 *    a mapping needs a host fd. A file goes there once and stays.
 * A stored file's fd is open only while a handler or a pinned file uses it,
 * then kept on an LRU of TMPFS_IDLE_FDS: the sentry's host fds do not grow
 * with the number of files (a guest made 20 000 of them once, when every
 * file held a memfd, and the sentry's fd table was full).
 *
 * --disk counts allocated blocks, as Linux's tmpfs does, never sizes: an
 * inline file holds its size in whole pages, a stored one its host file's
 * st_blocks, so a sparse file costs what was written. Writes through a
 * shared mapping would allocate blocks the sentry never sees: a file
 * mapped MAP_SHARED from a writable open is preallocated over the range
 * mapped and over every later growth, and those blocks are charged when
 * they are taken, within --disk.
 */

#define PAGE_SZ 4096ULL

static bool ro_node(const struct vnode *vn);

static uint64_t pages_of(uint64_t n)
{
	return (n + PAGE_SZ - 1) & ~(PAGE_SZ - 1);
}

static uint64_t disk_room(void)
{
	uint64_t max = tmpfs_max();

	return tmpfs_bytes >= max ? 0 : max - tmpfs_bytes;
}

static void charge_set(struct tnode *tn, uint64_t bytes)
{
	tmpfs_bytes = tmpfs_bytes - tn->charged + bytes;
	tn->charged = bytes;
}

/* What a node's metadata holds of --disk, as Linux's tmpfs charges it: a
 * page for a symlink target past 128 bytes; and, more than Linux, its
 * xattrs in whole pages (they are the sentry's memory, up to 64 KiB a
 * node). Growing it past the room is ENOSPC, and nothing changes. */
#define SHORT_SYMLINK_LEN 128

static uint64_t meta_of(const struct tnode *tn, size_t xattr_bytes)
{
	uint64_t m = pages_of(xattr_bytes);

	if (tn->target && strlen(tn->target) > SHORT_SYMLINK_LEN)
		m += PAGE_SZ;
	return m;
}

static int meta_set(struct tnode *tn, uint64_t bytes)
{
	if (bytes > tn->meta && bytes - tn->meta > disk_room())
		return -ENOSPC;
	tmpfs_bytes = tmpfs_bytes - tn->meta + bytes;
	tn->meta = bytes;
	return 0;
}

/* Stored files whose fd is open and unused, oldest first (vnode idle_*). */
static struct vnode *lru_head, *lru_tail;
static int lru_count;

static void lru_unlink(struct vnode *vn)
{
	if (vn->idle_prev)
		vn->idle_prev->idle_next = vn->idle_next;
	else if (lru_head == vn)
		lru_head = vn->idle_next;
	else
		return; /* not on it */
	if (vn->idle_next)
		vn->idle_next->idle_prev = vn->idle_prev;
	else
		lru_tail = vn->idle_prev;
	vn->idle_prev = vn->idle_next = NULL;
	lru_count--;
}

static int lru_cap(void)
{
	int c = fd_admit_line() / 8;

	return c < TMPFS_IDLE_FDS     ? TMPFS_IDLE_FDS :
	       c > TMPFS_IDLE_FDS_MAX ? TMPFS_IDLE_FDS_MAX :
					c;
}

/* Close idle fds until at most keep are left. */
static void lru_trim(int keep)
{
	while (lru_count > keep) {
		struct vnode *old = lru_head;
		lru_unlink(old);
		close(old->tn->fd);
		old->tn->fd = -1;
	}
}

/* The stored file's fd, opened again if it was closed; each get is matched
 * by one sfd_put. -errno (ENFILE when the sentry has no fd to spare). */
static int sfd_get(struct vnode *vn)
{
	struct tnode *tn = vn->tn;
	int fd;

	if (tn->fd < 0) {
		fd = store_open(tn->sid, O_RDWR);
		if (fd == -ENFILE && lru_count) {
			lru_trim(0); /* our own idle fds first */
			fd = store_open(tn->sid, O_RDWR);
		}
		if (fd < 0)
			return fd;
		tn->fd = fd;
	}
	lru_unlink(vn);
	tn->fd_users++;
	return tn->fd;
}

static void sfd_put(struct vnode *vn)
{
	struct tnode *tn = vn->tn;

	if (--tn->fd_users > 0 || tn->fd < 0)
		return;
	vn->idle_prev = lru_tail;
	vn->idle_next = NULL;
	if (lru_tail)
		lru_tail->idle_next = vn;
	else
		lru_head = vn;
	lru_tail = vn;
	lru_count++;
	lru_trim(lru_cap());
}

/* A stored file's charge: its allocated blocks, or its whole size where
 * a shared mapping could fill it and the store cannot preallocate. */
static void recharge(struct vnode *vn, int fd)
{
	struct tnode *tn = vn->tn;
	struct stat st;
	uint64_t b;

	if (fstat(fd, &st) < 0)
		return;
	b = (uint64_t)st.st_blocks * 512;
	/* A shared writable mapping reaches every page of the file, whatever
	 * range it was made over (mremap runs natively) and whatever a punch
	 * or MADV_REMOVE freed since: its whole size stays charged. */
	if (tn->shared_map && b < pages_of((uint64_t)vn->st.st_size))
		b = pages_of((uint64_t)vn->st.st_size);
	charge_set(tn, b);
}

/* Bytes of [off, end) that the stored file has not allocated, rounded out
 * to pages: an upper bound, from SEEK_HOLE/SEEK_DATA (extents allocated
 * but never written may count as holes), giving up after 256 holes. */
static uint64_t hole_bytes(int fd, uint64_t off, uint64_t end)
{
	uint64_t holes = 0;
	int i;

	off &= ~(PAGE_SZ - 1);
	end = pages_of(end);
	for (i = 0; off < end && i < 256; i++) {
		off_t h = lseek(fd, (off_t)off, SEEK_HOLE), d;
		uint64_t to;

		if (h < 0)
			break; /* past the end: all hole */
		if ((uint64_t)h >= end)
			return holes;
		d = lseek(fd, h, SEEK_DATA);
		to = d < 0 || (uint64_t)d > end ? end : (uint64_t)d;
		holes += pages_of(to) - ((uint64_t)h & ~(PAGE_SZ - 1));
		off = pages_of(to);
	}
	return off < end ? holes + (end - off) : holes;
}

/* Allocate [off, off + len) of a stored file ahead of a shared mapping's
 * writes, within --disk (ENOSPC past it, nothing taken). */
static int prealloc(struct vnode *vn, int fd, uint64_t off, uint64_t len)
{
	struct tnode *tn = vn->tn;
	uint64_t room = disk_room();

	if (!len)
		return 0;
	if (pages_of(off + len) - (off & ~(PAGE_SZ - 1)) > room &&
	    hole_bytes(fd, off, off + len) > room)
		return -ENOSPC;
	if (!tn->no_falloc &&
	    fallocate(fd, FALLOC_FL_KEEP_SIZE, (off_t)off, (off_t)len) < 0) {
		if (errno != EOPNOTSUPP)
			return -errno;
		/* Then the size is charged whole (recharge). */
		tn->no_falloc = true;
	}
	recharge(vn, fd);
	return 0;
}

/* Move an inline file to the store (no-op when it is there already). */
static int to_store(struct vnode *vn)
{
	struct tnode *tn = vn->tn;
	uint64_t size = (uint64_t)vn->st.st_size, off = 0;
	int fd;

	if (tn->sid)
		return 0;
	if (!store_ready())
		return -ENOSPC; /* no store: only what fits inline */
	fd = store_create(next_sid);
	if (fd == -ENFILE && lru_count) {
		lru_trim(0);
		fd = store_create(next_sid);
	}
	if (fd < 0)
		return fd;
	while (off < size) {
		ssize_t w = pwrite(fd, tn->inl + off, size - off, (off_t)off);
		if (w <= 0) {
			int rc = w < 0 ? -errno : -EIO;
			close(fd);
			store_remove(next_sid++);
			return rc;
		}
		off += (uint64_t)w;
	}
	tn->sid = next_sid++;
	tn->fd = fd;
	free(tn->inl);
	inline_bytes -= tn->inl_cap;
	limits_heap_charge(-(int64_t)tn->inl_cap);
	tn->inl = NULL;
	tn->inl_cap = 0;
	tn->fd_users = 1;
	recharge(vn, fd);
	sfd_put(vn); /* onto the LRU */
	return 0;
}

/* Make the inline buffer hold at least n bytes. false: it cannot (the
 * file must go to the store). */
static bool inline_reserve(struct tnode *tn, size_t n)
{
	size_t cap = tn->inl_cap ? tn->inl_cap : 64;
	char *p;

	if (n <= tn->inl_cap)
		return true;
	if (n > TMPFS_INLINE_MAX)
		return false;
	while (cap < n)
		cap *= 2;
	if (cap > TMPFS_INLINE_MAX)
		cap = TMPFS_INLINE_MAX;
	/* Within the sandbox's memory limit too: past it the file goes to
	 * the store, whose bytes are page cache the host can reclaim. Inline
	 * data has that way out, and nodes, names and sockets have none: it
	 * leaves them the last eighth of the sentry's share. */
	if (inline_bytes - tn->inl_cap + cap > TMPFS_INLINE_TOTAL ||
	    limits_heap_room() < cap - tn->inl_cap + limits_heap_budget() / 8 ||
	    !limits_heap_charge((int64_t)cap - (int64_t)tn->inl_cap))
		return false;
	p = realloc(tn->inl, cap);
	if (!p) {
		limits_heap_charge((int64_t)tn->inl_cap - (int64_t)cap);
		return false;
	}
	inline_bytes = inline_bytes - tn->inl_cap + cap;
	tn->inl = p;
	tn->inl_cap = cap;
	return true;
}

static void data_free(struct vnode *vn)
{
	struct tnode *tn = vn->tn;

	if (tn->sid) {
		lru_unlink(vn);
		if (tn->fd >= 0)
			close(tn->fd);
		tn->fd = -1;
		store_remove(tn->sid);
		tn->sid = 0;
	}
	free(tn->inl);
	inline_bytes -= tn->inl_cap;
	limits_heap_charge(-(int64_t)tn->inl_cap);
	tn->inl = NULL;
	tn->inl_cap = 0;
	charge_set(tn, 0);
}

static long data_read(struct vnode *vn, void *buf, size_t n, int64_t at)
{
	struct tnode *tn = vn->tn;
	int64_t size = vn->st.st_size;
	ssize_t r;
	int fd;

	if (at >= size || !n)
		return 0;
	if ((uint64_t)(size - at) < n)
		n = (size_t)(size - at);
	if (!tn->sid) {
		memcpy(buf, tn->inl + at, n);
		return (long)n;
	}
	fd = sfd_get(vn);
	if (fd < 0)
		return fd;
	r = pread(fd, buf, n, at);
	if (r < 0)
		r = -errno;
	sfd_put(vn);
	return (long)r;
}

/* Write n bytes at at, growing the file; what fits within --disk is
 * written, as on a full disk (ENOSPC when nothing fits). No permission
 * checks: the callers made them. */
static long data_write(struct vnode *vn, const void *buf, size_t n, int64_t at)
{
	struct tnode *tn = vn->tn;
	uint64_t size = (uint64_t)vn->st.st_size, end, need, room;
	ssize_t r;
	int fd, rc;

	if (!n)
		return 0;
	if (at < 0 || __builtin_add_overflow((uint64_t)at, n, &end) ||
	    end > (uint64_t)INT64_MAX)
		return -EFBIG;
	room = disk_room();
	if (!tn->sid && (end <= size || end <= TMPFS_INLINE_MAX)) {
		uint64_t nsize = end > size ? end : size;
		need = pages_of(nsize) > tn->charged ?
			       pages_of(nsize) - tn->charged :
			       0;
		if (need > room) {
			uint64_t lim = tn->charged + (room & ~(PAGE_SZ - 1));
			if ((uint64_t)at >= lim)
				return -ENOSPC;
			n = (size_t)(lim - (uint64_t)at);
			end = lim;
			nsize = end > size ? end : size;
		}
		if (inline_reserve(tn, (size_t)nsize)) {
			if ((uint64_t)at > size)
				memset(tn->inl + size, 0, (size_t)at - size);
			memcpy(tn->inl + at, buf, n);
			vn->st.st_size = (off_t)nsize;
			charge_set(tn, pages_of(nsize));
			return (long)n;
		}
	}
	rc = to_store(vn);
	if (rc < 0)
		return rc;
	fd = sfd_get(vn);
	if (fd < 0)
		return fd;
	/* Growth a shared mapping could write is allocated first. */
	if (tn->shared_map && end > size) {
		rc = prealloc(vn, fd, size, end - size);
		if (rc < 0) {
			sfd_put(vn);
			return rc;
		}
		room = disk_room();
	}
	/* The blocks this write may take: none below the end of a file
	 * without holes (or of a shared-mapped one, charged whole), else at
	 * most every page it touches; ask the host only when that bound
	 * does not fit. Past the room, write what fits. */
	if (tn->shared_map || (!tn->sparse && end <= size))
		need = 0;
	else if (!tn->sparse && (uint64_t)at <= size)
		need = pages_of(end) - pages_of(size);
	else
		need = pages_of(end) - ((uint64_t)at & ~(PAGE_SZ - 1));
	if ((uint64_t)at > size)
		tn->sparse = true; /* the gap below at */
	if (need > room && hole_bytes(fd, (uint64_t)at, end) > room) {
		uint64_t lim = ((uint64_t)at & ~(PAGE_SZ - 1)) +
			       (room & ~(PAGE_SZ - 1));
		if (lim <= (uint64_t)at) {
			sfd_put(vn);
			return -ENOSPC;
		}
		if (lim < end) {
			n = (size_t)(lim - (uint64_t)at);
			end = lim;
		}
	}
	r = pwrite(fd, buf, n, at);
	if (r < 0) {
		rc = -errno;
		sfd_put(vn);
		return rc;
	}
	if ((uint64_t)at + (uint64_t)r > size)
		vn->st.st_size = (off_t)((uint64_t)at + (uint64_t)r);
	recharge(vn, fd);
	sfd_put(vn);
	return (long)r;
}

long tmpfs_pwrite(struct vnode *vn, const void *buf, size_t n, int64_t off)
{
	long r;

	if (!S_ISREG(vn->mode))
		return -EINVAL;
	r = data_write(vn, buf, n, off);
	if (r > 0)
		stamp(&vn->st, false, true, true);
	return r;
}

long tmpfs_pread(struct vnode *vn, void *buf, size_t n, int64_t off)
{
	return S_ISREG(vn->mode) ? data_read(vn, buf, n, off) : -EINVAL;
}

static int data_truncate(struct vnode *vn, uint64_t len)
{
	struct tnode *tn = vn->tn;
	uint64_t size = (uint64_t)vn->st.st_size;
	int fd, rc = 0;

	if (!tn->sid && len <= TMPFS_INLINE_MAX) {
		if (pages_of(len) > tn->charged &&
		    pages_of(len) - tn->charged > disk_room())
			return -ENOSPC;
		if (len > size) {
			if (!inline_reserve(tn, (size_t)len))
				goto stored;
			memset(tn->inl + size, 0, (size_t)(len - size));
		} else if (len == 0 && tn->inl) {
			free(tn->inl);
			inline_bytes -= tn->inl_cap;
			limits_heap_charge(-(int64_t)tn->inl_cap);
			tn->inl = NULL;
			tn->inl_cap = 0;
		}
		vn->st.st_size = (off_t)len;
		charge_set(tn, pages_of(len));
		return 0;
	}
stored:
	rc = to_store(vn);
	if (rc < 0)
		return rc;
	fd = sfd_get(vn);
	if (fd < 0)
		return fd;
	if (ftruncate(fd, (off_t)len) < 0) {
		rc = -errno;
	} else {
		if (len > size)
			tn->sparse = true;
		vn->st.st_size = (off_t)len;
		if (tn->shared_map && len > size) {
			rc = prealloc(vn, fd, size, len - size);
			if (rc < 0 && ftruncate(fd, (off_t)size) == 0)
				vn->st.st_size = (off_t)size;
		}
		recharge(vn, fd);
	}
	sfd_put(vn);
	return rc;
}

int tmpfs_map_fd(struct vnode *vn, bool writable)
{
	struct tnode *tn = vn->tn;
	uint64_t size = (uint64_t)vn->st.st_size;
	int fd, rc;

	if (!S_ISREG(vn->mode))
		return -ENODEV;
	rc = to_store(vn);
	if (rc < 0)
		return rc == -ENOSPC ? -ENOMEM : rc;
	fd = sfd_get(vn);
	if (fd < 0)
		return fd;
	if (writable && !tn->shared_map) {
		/* All of the file, not the range mapped: see recharge. */
		if (pages_of(size) > tn->charged &&
		    pages_of(size) - tn->charged > disk_room()) {
			sfd_put(vn);
			return -ENOMEM;
		}
		rc = prealloc(vn, fd, 0, size);
		if (rc < 0) {
			sfd_put(vn);
			return rc == -ENOSPC ? -ENOMEM : rc;
		}
		tn->shared_map = true;
		recharge(vn, fd);
	}
	return fd;
}

void tmpfs_map_done(struct vnode *vn)
{
	sfd_put(vn);
}

int tmpfs_file_pin(struct file *f)
{
	int fd;

	if (f->hostfd >= 0)
		return f->hostfd;
	fd = tmpfs_map_fd(f->vn, false);
	if (fd < 0)
		return fd;
	f->hostfd = fd;
	f->hostfd_shared = true;
	f->tmpfs = true;
	return fd;
}

void tmpfs_file_unpin(struct file *f)
{
	if (f->tmpfs && f->hostfd >= 0)
		sfd_put(f->vn);
	f->hostfd = -1;
	f->tmpfs = false;
}

int tmpfs_fallocate(struct vnode *vn, int mode, int64_t off, int64_t len)
{
	struct tnode *tn = vn->tn;
	uint64_t size = (uint64_t)vn->st.st_size, end = (uint64_t)(off + len);
	int fd, rc = 0;

	if (ro_node(vn))
		return -EROFS;
	switch (mode) {
	case 0:
	case FALLOC_FL_KEEP_SIZE:
		if (!tn->sid && end <= TMPFS_INLINE_MAX) {
			/* Inline bytes are allocated as they are kept. */
			if (mode == 0 && end > size)
				rc = data_truncate(vn, end);
			return rc;
		}
		rc = to_store(vn);
		if (rc < 0)
			return rc;
		fd = sfd_get(vn);
		if (fd < 0)
			return fd;
		/* Growth of a shared-mapped file is allocated whole: the gap
		 * between its end and off too. Blocks past the end make the
		 * charge no guide to holes below it. */
		if (tn->shared_map && mode == 0 && (uint64_t)off > size)
			rc = prealloc(vn, fd, size, end - size);
		else
			rc = prealloc(vn, fd, (uint64_t)off, (uint64_t)len);
		if (end > size || (uint64_t)off > size)
			tn->sparse = true;
		if (rc == 0 && mode == 0 && end > size) {
			if (ftruncate(fd, (off_t)end) < 0)
				rc = -errno;
			else
				vn->st.st_size = (off_t)end;
		}
		recharge(vn, fd);
		sfd_put(vn);
		break;
	case FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE:
		/* Past the end there is nothing to punch (and the store's
		 * filesystem may not take an offset that large). */
		if ((uint64_t)off >= size)
			return 0;
		if (end > size)
			end = size;
		if (!tn->sid) {
			memset(tn->inl + off, 0, (size_t)(end - (uint64_t)off));
			return 0;
		}
		fd = sfd_get(vn);
		if (fd < 0)
			return fd;
		tn->sparse = true;
		if (fallocate(fd, mode, off, (off_t)(end - (uint64_t)off)) < 0)
			rc = -errno;
		recharge(vn, fd);
		sfd_put(vn);
		break;
	default:
		return -EOPNOTSUPP;
	}
	if (rc == 0)
		stamp(&vn->st, false, true, true);
	return rc;
}

int64_t tmpfs_seek_data(struct vnode *vn, int64_t off, int whence)
{
	int64_t r;
	int fd;

	if (off < 0)
		return -ENXIO;
	if (!vn->tn->sid) {
		/* Inline bytes have no holes: data up to the end. */
		if (off >= vn->st.st_size)
			return -ENXIO;
		return whence == SEEK_DATA ? off : vn->st.st_size;
	}
	fd = sfd_get(vn);
	if (fd < 0)
		return fd;
	r = lseek(fd, off, whence);
	if (r < 0)
		r = -errno;
	sfd_put(vn);
	return r;
}

void tmpfs_free(struct vnode *vn)
{
	struct tnode *tn = vn->tn;

	if (!tn)
		return;
	data_free(vn);
	meta_set(tn, 0);
	tmpfs_nodes--;
	limits_heap_charge(-(int64_t)tn->heap_charged);
	free(tn->hash);
	tn->hash = NULL;
	while (tn->children) { /* only at teardown: removal needs empty dirs */
		struct tdirent *e = tn->children;
		tn->children = e->next;
		vnode_put(e->vn);
		dirent_free(e);
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

/* Drop the data of every regular file under root (an instance no one
 * can reach any more: an ended member's), giving back its memory, store
 * files and --disk. The nodes stay, empty: cached vnodes are not
 * counted, so none is freed before the sandbox ends. Iterative: a guest
 * may have nested directories a million deep. */
void tmpfs_release_data(struct vnode *root)
{
	struct vnode **stack = NULL;
	size_t n = 0, cap = 0;

	if (!root || !root->tn)
		return;
	for (struct vnode *dir = root; dir; dir = n ? stack[--n] : NULL) {
		for (struct tdirent *e = dir->tn->children; e; e = e->next) {
			struct vnode *vn = e->vn;

			if (!vn || !vn->tn)
				continue;
			if (S_ISREG(vn->mode) && !vn->tn->fd_users) {
				data_free(vn);
				vn->st.st_size = 0;
			} else if (S_ISDIR(vn->mode) && vn->tn->children) {
				if (n == cap) {
					size_t c = cap ? cap * 2 : 64;
					struct vnode **ns =
						realloc(stack, c * sizeof(*ns));
					if (!ns)
						continue; /* its subtree stays */
					stack = ns;
					cap = c;
				}
				stack[n++] = vn;
			}
		}
	}
	free(stack);
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
	dirent_free(e);
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
	/* What the file holds of --disk: its allocated blocks (see "file
	 * data"); other nodes none, as on Linux's tmpfs. */
	st->st_blocks = S_ISREG(vn->mode) ? (blkcnt_t)(vn->tn->charged / 512) :
			S_ISLNK(vn->mode) ? (blkcnt_t)(vn->tn->meta / 512) :
					    0;
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

/* Of a read-only instance (tmpfs_set_readonly), or under a readonlyPaths
 * bind: EROFS for any change. */
static bool ro_node(const struct vnode *vn)
{
	const struct vnode *root = vn->tn->root ? vn->tn->root : vn;

	if (vn->tn->readonly)
		return true;
	/* A rw file bind (a mount of its own under runc) under a read-only
	 * root or readonlyPaths bind, whose remount is not recursive. */
	if (vn->tn->writable)
		return false;
	return (root->tn && root->tn->readonly) || vfs_bound_ro(vn);
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

/* A new entry name in dir, charged, with the next cookie, linked in its
 * table (no node yet: the caller's to fill): 0, -ENOSPC past the
 * sentry's share, or -ENOMEM. */
static int new_dirent(struct vnode *dir, const char *name, struct tdirent **out)
{
	struct tdirent *e;

	if (!limits_heap_charge((int64_t)dirent_cost(name)))
		return -ENOSPC;
	e = calloc(1, sizeof(*e));
	if (e)
		e->name = strdup(name);
	if (!e || !e->name) {
		free(e);
		limits_heap_charge(-(int64_t)dirent_cost(name));
		return -ENOMEM;
	}
	if (!dir->tn->next_cookie)
		dir->tn->next_cookie = 3; /* after "." and ".." */
	e->cookie = dir->tn->next_cookie++;
	link_dirent(dir, e);
	*out = e;
	return 0;
}

static int add_entry(struct vnode *dir, const char *name, struct vnode *vn)
{
	struct tdirent *e;
	int rc = new_dirent(dir, name, &e);

	if (rc < 0)
		return rc;
	e->vn = vn; /* takes the caller's reference */
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
	dirent_free(e);
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
	if (tmpfs_nodes + tmpfs_links >= TMPFS_NODES_MAX)
		return -ENOSPC; /* out of inodes, as a full tmpfs says */
	vn = tnode_new(dir->tn->root, path, mode, t ? t->proc->cred.fsuid : 0,
		       t ? t->proc->cred.fsgid : 0);
	if (!vn)
		return -ENOMEM;
	if (!node_charge(vn)) {
		vnode_put(vn);
		return -ENOSPC;
	}
	/* In the overlay, a clone's directory has the clone's device (its
	 * copy keeps it, tmpfs_make_raw): so does what is made in it. */
	if (dir->tn->root->tn->overlay)
		vn->st.st_dev = dir->st.st_dev;
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
	rc = add_entry(dir, name, vn);
	if (rc < 0) {
		vnode_put(vn);
		return rc;
	}
	*out = vnode_get(vn);
	return 0;
}

/* A node with no contents of its own yet (a FIFO), entered in dir. */
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
	struct vnode *vn;
	int rc = new_child(t, dir, name, S_IFDIR | (mode & 07777), &vn);

	if (rc < 0)
		return rc;
	/* A directory the guest makes in the overlay is its own: nothing of
	 * the rootfs is below it (mkdir found no such name there, or one the
	 * gofer may not see, as under the host's /root), so lookups in it
	 * never ask the rootfs, and never get its EACCES. Setup's mount
	 * points (t NULL) stay merged: a clone mount is grafted below. */
	if (t && tmpfs_is_overlay(dir))
		vn->tn->opaque = true;
	rc = add_entry(dir, name, vn);
	if (rc < 0)
		vnode_put(vn);
	return rc;
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
	rc = meta_set(vn->tn, meta_of(vn->tn, 0));
	if (rc < 0) {
		vnode_put(vn);
		return rc;
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
	if (target->st.st_nlink && tmpfs_nodes + tmpfs_links >= TMPFS_NODES_MAX)
		return -ENOSPC;
	drop_whiteout(dir, name);
	rc = add_entry(dir, name, vnode_get(target));
	if (rc < 0) {
		vnode_put(target);
		return rc;
	}
	if (target->st.st_nlink)
		tmpfs_links++;
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
	else if (vn->st.st_nlink-- > 1)
		tmpfs_links--;
	stamp(&vn->st, false, false, true);
	vnode_put(vn);
	sentry_wake();
	return 0;
}

/* Rewrite the canonical paths below top after it moved: depth first, in a
 * loop with no stack of its own, since a chain of directories as deep as
 * PATH_MAX allows is 2,000 levels (a recursion per level with a PATH_MAX
 * buffer each overflowed the sentry's stack). A directory's way back up
 * is its parent, and its entry there is found by its name. A node whose
 * new path would pass PATH_MAX keeps its old one and is not entered. */
static void repath(struct vnode *top)
{
	char path[PATH_MAX];
	struct vnode *dir = top;
	struct tdirent *e = top->tn->children;

	for (;;) {
		struct vnode *vn;
		char *np;

		if (!e) {
			struct tdirent **pp;
			if (dir == top)
				return;
			pp = find(dir->tn->parent, strrchr(dir->path, '/') + 1);
			e = pp ? (*pp)->next : NULL;
			dir = dir->tn->parent;
			continue;
		}
		vn = e->vn; /* NULL for a whiteout */
		np = vn && vfs_child_path(dir, e->name, path, sizeof(path)) ==
					     0 ?
			     strdup(path) :
			     NULL;
		if (!np) {
			e = e->next;
			continue;
		}
		free(vn->path);
		vn->path = np;
		node_recharge(vn);
		if (S_ISDIR(vn->mode) && vn->tn->children) {
			dir = vn;
			e = vn->tn->children;
			continue;
		}
		e = e->next;
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
			node_recharge(ovn);
		}
		if (vfs_child_path(odir, oname, path, sizeof(path)) == 0 &&
		    (newpath = strdup(path))) {
			free(nvn->path);
			nvn->path = newpath;
			node_recharge(nvn);
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
		if (!S_ISDIR(gone->mode) && gone->st.st_nlink > 1)
			tmpfs_links--;
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
	node_recharge(ovn);
	if (S_ISDIR(ovn->mode))
		repath(ovn);
	stamp(&ovn->st, false, false, true);
	sentry_wake();
	return 0;
}

/* ---- attributes ---------------------------------------------------------- */

int tmpfs_truncate(struct vnode *vn, int64_t len)
{
	int rc;

	if (ro_node(vn))
		return -EROFS;
	if (S_ISDIR(vn->mode))
		return -EISDIR;
	if (!S_ISREG(vn->mode))
		return -EINVAL;
	if (len < 0)
		return -EINVAL;
	rc = data_truncate(vn, (uint64_t)len);
	if (rc == 0)
		stamp(&vn->st, false, true, true);
	return rc;
}

/* Linux's inode_owner_or_capable: the fs uid owns it, or CAP_FOWNER. */
static bool is_owner(struct task *t, struct vnode *vn)
{
	return !t || task_capable(t, CAP_FOWNER) ||
	       t->proc->cred.fsuid == vn->st.st_uid;
}

static bool in_group(struct task *t, gid_t g)
{
	return creds_in_group(&t->proc->cred, g);
}

int tmpfs_chmod(struct task *t, struct vnode *vn, mode_t mode)
{
	if (ro_node(vn))
		return -EROFS;
	if (!is_owner(t, vn))
		return -EPERM;
	/* Linux: set-group-id needs the group, or CAP_FSETID. */
	if (!task_capable(t, CAP_FSETID) && !in_group(t, vn->st.st_gid))
		mode &= ~(mode_t)S_ISGID;
	vn->st.st_mode = (vn->st.st_mode & S_IFMT) | (mode & 07777);
	vn->mode = vn->st.st_mode;
	stamp(&vn->st, false, false, true);
	return 0;
}

int tmpfs_chown(struct task *t, struct vnode *vn, uid_t uid, gid_t gid)
{
	bool root = task_capable(t, CAP_CHOWN);
	bool owns = t && t->proc->cred.fsuid == vn->st.st_uid;

	if (ro_node(vn))
		return -EROFS;
	/* Linux's chown_ok/chgrp_ok: without privilege, only the owner may,
	 * only to itself, and only to a group it is in. */
	if (!root) {
		if (uid != (uid_t)-1 && (uid != vn->st.st_uid || !owns))
			return -EPERM;
		if (gid != (gid_t)-1 &&
		    (!owns || (gid != vn->st.st_gid && !in_group(t, gid))))
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
	st->f_files = TMPFS_NODES_MAX;
	st->f_ffree = tmpfs_nodes + tmpfs_links < TMPFS_NODES_MAX ?
			      TMPFS_NODES_MAX - tmpfs_nodes - tmpfs_links :
			      0;
	st->f_namelen = NAME_MAX;
	return 0;
}

/* ---- open files ---------------------------------------------------------- */

static long t_read(struct task *t, struct file *f, void *buf, size_t n,
		   int64_t *off)
{
	long r;

	(void)t;
	if (S_ISDIR(f->vn->mode))
		return -EISDIR;
	r = data_read(f->vn, buf, n, *off);
	if (r > 0)
		*off += r;
	return r;
}

static long t_write(struct task *t, struct file *f, const void *buf, size_t n,
		    int64_t *off)
{
	struct vnode *vn = f->vn;
	int64_t at = (f->flags & O_APPEND) ? vn->st.st_size : *off;
	long r;

	(void)t;
	r = data_write(vn, buf, n, at);
	if (r < 0)
		return r;
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
	.read = t_read,
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
		return -errno;
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
	int rc;

	if (ro_node(dir))
		return -EROFS; /* removing a rootfs name of a read-only root */
	if (find(dir, name))
		return 0;
	rc = new_dirent(dir, name, &e);
	if (rc < 0)
		return rc;
	e->whiteout = true;
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
	if (S_ISLNK(st->st_mode)) {
		vn->tn->target = strdup(target ? target : "");
		if (!vn->tn->target) {
			vnode_put(vn);
			return -ENOMEM;
		}
		vn->st.st_size = (off_t)strlen(vn->tn->target);
		rc = meta_set(vn->tn, meta_of(vn->tn, 0));
		if (rc < 0) {
			vnode_put(vn);
			return rc;
		}
	}
	rc = add_entry(dir, name, vn);
	if (rc < 0) {
		vnode_put(vn);
		return rc;
	}
	*out = vnode_get(vn);
	return 0;
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
	if (tmpfs_nodes + tmpfs_links >= TMPFS_NODES_MAX)
		return -ENOSPC;
	vn = tnode_new(dir->tn->root, path, S_IFREG | (mode & 07777),
		       t ? t->proc->cred.fsuid : 0,
		       t ? t->proc->cred.fsgid : 0);
	if (!vn)
		return -ENOMEM;
	if (!node_charge(vn)) {
		vnode_put(vn);
		return -ENOSPC;
	}
	vn->st.st_nlink = 0;
	vn->tn->linkable = linkable;
	*out = vn;
	return 0;
}

int tmpfs_anon_file(const char *name, struct vnode **out)
{
	char path[PATH_MAX];
	struct vnode *vn;

	snprintf(path, sizeof(path), "/memfd:%s (deleted)", name);
	if (tmpfs_nodes + tmpfs_links >= TMPFS_NODES_MAX)
		return -ENFILE; /* memfd_create's word for it */
	vn = tnode_new(NULL, path, S_IFREG | 0777, 0, 0);
	if (!vn || !node_charge(vn)) {
		vnode_put(vn);
		return -ENOMEM;
	}
	vn->st.st_nlink = 0;
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
	if (meta_of(tn, tn->xattr_bytes - old + add) > tn->meta &&
	    meta_of(tn, tn->xattr_bytes - old + add) - tn->meta > disk_room())
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
	meta_set(tn, meta_of(tn, tn->xattr_bytes)); /* room checked above */
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
	meta_set(tn, meta_of(tn, tn->xattr_bytes));
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
