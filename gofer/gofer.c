/* gofer/gofer.c: the 9P2000.L request handlers, fid table and serving loop.
 *
 * Everything here is reachable by the sentry, and through it possibly by a
 * compromised guest: every handler validates its message, returns -errno
 * (turned into Rlerror by gofer_handle), and allocates with plain malloc so
 * that exhaustion is an error reply, not an abort.
 *
 * Host access model:
 *  - A fid names a host object by an O_PATH fd (struct gofer_file), opened
 *    one component at a time with openat2(RESOLVE_BENEATH |
 *    RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV) and
 *    O_NOFOLLOW, so no symlink and no ".." is ever followed here, and a
 *    host mount point inside the tree is never crossed. The sentry resolves
 *    symlinks itself: it sees them as QTSYMLINK qids.
 *  - O_PATH fds are shared between fids by reference count: a walk from a
 *    fid references the fid's file as the new fid's parent directory, so
 *    a fid costs at most one new fd.
 *  - Tlopen re-opens the object (directories via "." beneath themselves,
 *    other files via parent + name) read-only, checks that the result is
 *    the very inode the fid named (else ESTALE: something renamed it in
 *    between), and donates the fd. The gofer keeps no open file.
 *  - A file gofer (gofer_new_file: a bind mount of one host file) has that
 *    file as its attach root, kept as a directory + name like any other
 *    file fid, so that it is reopened the same way. Its directory is
 *    never a fid: nothing walks from a file (ENOTDIR), and every request
 *    that names a directory fid (create, remove, rename, link, readdir)
 *    finds none. Confined (gofer/confine.c), that directory is an empty,
 *    read-only tmpfs with the file's bind mount as its only entry, so the
 *    host file's siblings are not in the gofer's namespace at all.
 */
#include "gofer/gofer.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdbool.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/xattr.h>
#include <stdio.h> /* renameat */

#ifndef SYS_fchmodat2
#define SYS_fchmodat2 452 /* Linux 6.6; glibc 2.36 lacks the name */
#endif

#include "prot/p9.h"

#define GOFER_BUCKETS 4096u   /* fid hash chains: <= 16 long at P9_MAX_FIDS */
#define GOFER_DENTS_MIN 1024u /* > one maximal linux_dirent64 (280 bytes) */
#define GOFER_DENTS_MAX 65536u
#define GOFER_OPENAT2_RETRIES 8 /* EAGAIN: a concurrent rename or mount */

/* Never follow a symlink, never leave the directory, never cross a mount. */
#define GOFER_RESOLVE                                                          \
	(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_SYMLINKS |       \
	 RESOLVE_NO_XDEV)

/* One host object, by O_PATH fd, with the identity it had when walked. */
struct gofer_file {
	int fd;
	unsigned refs;
	dev_t dev;
	ino_t ino;
	mode_t mode;
	/* The root of a file gofer: a mount point of its directory (the bind
	 * mount of the file), reopened through its name there without
	 * RESOLVE_NO_XDEV. Only gofer_new_file sets it. */
	bool bound;
};

struct gofer_fid {
	uint32_t num;
	struct gofer_fid *next;	 /* hash chain */
	struct gofer_file *file; /* owned reference */
	struct gofer_file *dir;	 /* owned reference; NULL for an attach root */
	char *name; /* component of file in dir; NULL for an attach root */
	int dirfd;  /* Treaddir stream, opened on first use; -1 if none */
	/* An extended attribute fid (Txattrwalk: a value or the name list
	 * to Tread; Txattrcreate: a value to Twrite, set at Tclunk). */
	int xmode; /* 0, XFID_READ or XFID_WRITE */
	char *xname;
	uint8_t *xval;
	size_t xlen, xsize;
	int xflags;
};

#define XFID_READ 1
#define XFID_WRITE 2
#define GOFER_XATTR_MAX 65536 /* XATTR_SIZE_MAX */

struct gofer {
	struct gofer_file *root;
	/* A file gofer's: the directory its root file is reopened in, and
	 * the file's name there; NULL for a directory gofer. */
	struct gofer_file *rootdir;
	char *rootname;
	bool writable;	/* GOFER_WRITABLE: the write side is served */
	bool store;	/* GOFER_STORE: only flat regular files */
	uint32_t msize; /* negotiated; P9_MAX_MSIZE before Tversion */
	bool versioned;
	size_t nfids;
	uint8_t *dents; /* getdents64 buffer, GOFER_DENTS_MAX bytes */
	struct gofer_fid *bucket[GOFER_BUCKETS];
};

/* Reply under construction. */
struct gofer_out {
	uint8_t *buf;
	size_t cap;
	size_t len;
	uint16_t tag;
	int donate; /* fd to send with the reply, owned, or -1 */
};

/* ---- host objects ------------------------------------------------------- */

static int openat2_mode(int dirfd, const char *name, int flags, mode_t mode,
			uint64_t resolve)
{
	struct open_how how = {
		.flags = (uint64_t)(unsigned)flags,
		.mode = (flags & O_CREAT) ? mode : 0,
		.resolve = resolve,
	};
	int tries = 0;
	long r;

	for (;;) {
		r = syscall(SYS_openat2, dirfd, name, &how, sizeof(how));
		if (r >= 0)
			return (int)r;
		if (errno == EINTR ||
		    (errno == EAGAIN && ++tries < GOFER_OPENAT2_RETRIES))
			continue;
		return -errno;
	}
}

static int sys_openat2(int dirfd, const char *name, int flags, uint64_t resolve)
{
	return openat2_mode(dirfd, name, flags, 0, resolve);
}

static struct gofer_file *file_ref(struct gofer_file *f)
{
	if (f)
		f->refs++;
	return f;
}

static void file_unref(struct gofer_file *f)
{
	if (!f)
		return;
	MOAT_ASSERT(f->refs > 0);
	if (--f->refs == 0) {
		close(f->fd);
		free(f);
	}
}

/* Open one component beneath dirfd as O_PATH (a symlink yields a handle on
 * the link itself). *out gets one reference. */
static int file_open(int dirfd, const char *name, struct gofer_file **out)
{
	cleanup_close int fd = -1;
	struct gofer_file *f;
	struct stat st;

	fd = sys_openat2(dirfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC,
			 GOFER_RESOLVE);
	if (fd < 0)
		return fd;
	if (fstat(fd, &st) < 0)
		return -errno;
	f = malloc(sizeof(*f));
	if (!f)
		return -ENOMEM;
	f->fd = take_fd(&fd);
	f->refs = 1;
	f->dev = st.st_dev;
	f->ino = st.st_ino;
	f->mode = st.st_mode;
	f->bound = false;
	*out = f;
	return 0;
}

/* How a fid's file is reopened by name in its directory: as it was
 * walked, except that a file gofer's root is itself a mount point. */
static uint64_t name_resolve(const struct gofer_file *f)
{
	return f->bound ? GOFER_RESOLVE & ~(uint64_t)RESOLVE_NO_XDEV :
			  GOFER_RESOLVE;
}

static uint8_t qid_type_of_mode(mode_t mode)
{
	if (S_ISDIR(mode))
		return P9_QTDIR;
	if (S_ISLNK(mode))
		return P9_QTSYMLINK;
	return P9_QTFILE;
}

static struct p9_qid file_qid(const struct gofer_file *f)
{
	struct p9_qid q = {
		.type = qid_type_of_mode(f->mode),
		.version = 0,
		.path = (uint64_t)f->ino,
	};
	return q;
}

/* ---- fid table ---------------------------------------------------------- */

static unsigned fid_hash(uint32_t num)
{
	return (unsigned)((num * 2654435761u) >> 20) & (GOFER_BUCKETS - 1);
}

static struct gofer_fid *fid_lookup(struct gofer *g, uint32_t num)
{
	struct gofer_fid *f;

	for (f = g->bucket[fid_hash(num)]; f; f = f->next)
		if (f->num == num)
			return f;
	return NULL;
}

/* A fid that names a file. An xattr fid (from Txattrwalk or Txattrcreate)
 * holds a value, not a file to walk from, open, change or link: it counts
 * as no fid at all for those. */
static struct gofer_fid *fid_node(struct gofer *g, uint32_t num)
{
	struct gofer_fid *f = fid_lookup(g, num);

	return f && !f->xmode ? f : NULL;
}

/* Drop what a fid holds, leaving it empty (reused by Twalk fid==newfid). */
static void fid_release(struct gofer_fid *f)
{
	file_unref(f->file);
	file_unref(f->dir);
	free(f->name);
	if (f->dirfd >= 0)
		close(f->dirfd);
	free(f->xname);
	free(f->xval);
	f->file = NULL;
	f->dir = NULL;
	f->name = NULL;
	f->dirfd = -1;
	f->xmode = 0;
	f->xname = NULL;
	f->xval = NULL;
	f->xlen = f->xsize = 0;
}

static struct gofer_fid *fid_alloc(uint32_t num)
{
	struct gofer_fid *f = calloc(1, sizeof(*f));

	if (f) {
		f->num = num;
		f->dirfd = -1;
	}
	return f;
}

/* Takes ownership of f; num must not be in the table. */
static void fid_insert(struct gofer *g, struct gofer_fid *f)
{
	unsigned h = fid_hash(f->num);

	MOAT_ASSERT(!fid_lookup(g, f->num));
	f->next = g->bucket[h];
	g->bucket[h] = f;
	g->nfids++;
}

static void fid_free(struct gofer_fid *f)
{
	if (f) {
		fid_release(f);
		free(f);
	}
}

static bool fid_remove(struct gofer *g, uint32_t num)
{
	struct gofer_fid **pp;

	for (pp = &g->bucket[fid_hash(num)]; *pp; pp = &(*pp)->next) {
		if ((*pp)->num == num) {
			struct gofer_fid *f = *pp;

			*pp = f->next;
			fid_free(f);
			g->nfids--;
			return true;
		}
	}
	return false;
}

static void fids_clear(struct gofer *g)
{
	unsigned i;

	for (i = 0; i < GOFER_BUCKETS; i++) {
		while (g->bucket[i]) {
			struct gofer_fid *f = g->bucket[i];

			g->bucket[i] = f->next;
			fid_free(f);
		}
	}
	g->nfids = 0;
}

/* A new fid number must be unused, and the table bounded. */
static int fid_check_new(struct gofer *g, uint32_t num)
{
	if (num == P9_NOFID)
		return -EINVAL;
	if (fid_lookup(g, num))
		return -EEXIST;
	if (g->nfids >= P9_MAX_FIDS)
		return -EMFILE;
	return 0;
}

size_t gofer_nfids(const struct gofer *g)
{
	return g->nfids;
}

/* ---- session ------------------------------------------------------------ */

static struct gofer *gofer_alloc(unsigned flags)
{
	struct gofer *g = calloc(1, sizeof(*g));

	if (!g)
		return NULL;
	g->msize = P9_MAX_MSIZE;
	g->store = (flags & GOFER_STORE) != 0;
	g->writable = (flags & GOFER_WRITABLE) != 0 || g->store;
	g->dents = malloc(GOFER_DENTS_MAX);
	if (!g->dents) {
		free(g);
		return NULL;
	}
	return g;
}

int gofer_new(struct gofer **out, int rootfd, unsigned flags)
{
	struct gofer *g = gofer_alloc(flags);
	int ret;

	if (!g)
		return -ENOMEM;
	/* "." beneath rootfd: a fresh O_PATH handle on the directory itself,
	 * whatever mode rootfd was opened with. */
	ret = file_open(rootfd, ".", &g->root);
	if (ret == 0 && !S_ISDIR(g->root->mode))
		ret = -ENOTDIR;
	if (ret < 0) {
		gofer_free(g);
		return ret;
	}
	*out = g;
	return 0;
}

int gofer_new_file(struct gofer **out, int dirfd, const char *name,
		   unsigned flags)
{
	cleanup_close int fd = -1;
	struct gofer *g;
	struct stat st;
	int ret;

	/* A store is a directory of flat files, never one file. */
	if (flags & GOFER_STORE)
		return -EINVAL;
	if (!*name || strchr(name, '/') || !strcmp(name, ".") ||
	    !strcmp(name, ".."))
		return -EINVAL;
	g = gofer_alloc(flags);
	if (!g)
		return -ENOMEM;
	g->rootname = strdup(name);
	ret = g->rootname ? file_open(dirfd, ".", &g->rootdir) : -ENOMEM;
	if (ret == 0 && !S_ISDIR(g->rootdir->mode))
		ret = -ENOTDIR;
	if (ret < 0)
		goto fail;
	/* The one place a mount is crossed on purpose: the file's bind
	 * mount, the only entry of its directory. Still beneath it, and
	 * never through a symlink. */
	fd = sys_openat2(g->rootdir->fd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC,
			 GOFER_RESOLVE & ~(uint64_t)RESOLVE_NO_XDEV);
	if (fd < 0) {
		ret = fd;
		goto fail;
	}
	if (fstat(fd, &st) < 0) {
		ret = -errno;
		goto fail;
	}
	/* Regular files only: a directory has gofer_new, and a FIFO, socket
	 * or device would be a channel to something else on the host. */
	if (!S_ISREG(st.st_mode)) {
		ret = S_ISDIR(st.st_mode) ? -EISDIR : -EPERM;
		goto fail;
	}
	g->root = malloc(sizeof(*g->root));
	if (!g->root) {
		ret = -ENOMEM;
		goto fail;
	}
	g->root->fd = take_fd(&fd);
	g->root->refs = 1;
	g->root->dev = st.st_dev;
	g->root->ino = st.st_ino;
	g->root->mode = st.st_mode;
	g->root->bound = true;
	*out = g;
	return 0;
fail:
	gofer_free(g);
	return ret;
}

void gofer_free(struct gofer *g)
{
	if (!g)
		return;
	fids_clear(g);
	file_unref(g->root);
	file_unref(g->rootdir);
	free(g->rootname);
	free(g->dents);
	free(g);
}

/* ---- handlers ----------------------------------------------------------- */

static int out_msg(struct gofer_out *o, struct p9_msg *r)
{
	r->tag = o->tag;
	return p9_encode(r, o->buf, o->cap, &o->len);
}

static int h_version(struct gofer *g, const struct p9_msg *m,
		     struct gofer_out *o)
{
	struct p9_msg r = { .type = P9_RVERSION };
	uint32_t msize = m->u.version.msize;

	if (msize < P9_MIN_MSIZE)
		return -EINVAL;
	if (msize > P9_MAX_MSIZE)
		msize = P9_MAX_MSIZE;
	/* A Tversion starts a new session: all fids are clunked. */
	fids_clear(g);
	r.u.version.msize = msize;
	if (p9_str_eq(&m->u.version.version, P9_VERSION_L)) {
		p9_str_set(&r.u.version.version, P9_VERSION_L);
		g->versioned = true;
		g->msize = msize;
	} else {
		p9_str_set(&r.u.version.version, P9_VERSION_UNKNOWN);
		g->versioned = false;
	}
	return out_msg(o, &r);
}

static int h_attach(struct gofer *g, const struct p9_msg *m,
		    struct gofer_out *o)
{
	struct p9_msg r = { .type = P9_RATTACH };
	struct gofer_fid *f;
	int ret;

	ret = fid_check_new(g, m->u.tattach.fid);
	if (ret < 0)
		return ret;
	/* No authentication: the socket is the credential. */
	if (m->u.tattach.afid != P9_NOFID)
		return -EOPNOTSUPP;
	/* One tree per gofer; aname may only name its root. */
	if (m->u.tattach.aname.len && !p9_str_eq(&m->u.tattach.aname, "/"))
		return -ENOENT;
	r.u.rattach.qid = file_qid(g->root);
	ret = out_msg(o, &r);
	if (ret < 0)
		return ret;
	f = fid_alloc(m->u.tattach.fid);
	if (!f)
		return -ENOMEM;
	/* A file root is reopened by its name in its directory, as every
	 * file walked to is. */
	if (g->rootname) {
		f->name = strdup(g->rootname);
		if (!f->name) {
			fid_free(f);
			return -ENOMEM;
		}
		f->dir = file_ref(g->rootdir);
	}
	f->file = file_ref(g->root);
	fid_insert(g, f);
	return 0;
}

static int h_walk(struct gofer *g, const struct p9_msg *m, struct gofer_out *o)
{
	struct p9_msg r = { .type = P9_RWALK };
	struct gofer_fid *src, *dst = NULL;
	struct gofer_file *cur, *par;
	char name[NAME_MAX + 1];
	char *newname = NULL;
	uint16_t i, n = m->u.twalk.nwname;
	int err = 0, ret;

	src = fid_node(g, m->u.twalk.fid);
	if (!src)
		return -EBADF;
	if (m->u.twalk.newfid != m->u.twalk.fid) {
		ret = fid_check_new(g, m->u.twalk.newfid);
		if (ret < 0)
			return ret;
	}

	cur = file_ref(src->file);
	par = file_ref(src->dir);
	name[0] = '\0';
	for (i = 0; i < n; i++) {
		const struct p9_str *w = &m->u.twalk.wname[i];
		struct gofer_file *child;

		/* Single, plain components only: "..", "." and "a/b" would let
		 * the sentry's own path checks be bypassed. */
		if (!p9_str_is_name(w)) {
			err = w->len > NAME_MAX ? -ENAMETOOLONG : -EINVAL;
			break;
		}
		if (!S_ISDIR(cur->mode)) {
			err = -ENOTDIR;
			break;
		}
		memcpy(name, w->s, w->len);
		name[w->len] = '\0';
		err = file_open(cur->fd, name, &child);
		if (err < 0)
			break;
		file_unref(par);
		par = cur;
		cur = child;
		r.u.rwalk.wqid[i] = file_qid(child);
	}
	r.u.rwalk.nwqid = i;

	if (i < n) {
		/* Failure at the first name is an error; later, a short Rwalk
		 * and newfid is not created (9P walk semantics). */
		file_unref(cur);
		file_unref(par);
		return i == 0 ? err : out_msg(o, &r);
	}

	/* Allocate everything before encoding, encode before committing, so
	 * the reply and the fid table always agree. */
	if (n)
		newname = strdup(name);
	else if (src->name)
		newname = strdup(src->name);
	if ((n || src->name) && !newname)
		goto enomem;
	if (m->u.twalk.newfid != m->u.twalk.fid) {
		dst = fid_alloc(m->u.twalk.newfid);
		if (!dst)
			goto enomem;
	}
	ret = out_msg(o, &r);
	if (ret < 0) {
		free(newname);
		fid_free(dst);
		file_unref(cur);
		file_unref(par);
		return ret;
	}
	if (!dst) {
		fid_release(src);
		dst = src;
	} else {
		fid_insert(g, dst);
	}
	dst->file = cur;
	dst->dir = par;
	dst->name = newname;
	return 0;

enomem:
	free(newname);
	file_unref(cur);
	file_unref(par);
	return -ENOMEM;
}

static int reopen(struct gofer_fid *f, int flags);

/* O_TRUNC of Tlopen. Linux truncates even an O_RDONLY open when the file
 * is writable to the caller; ftruncate needs a writable fd for that. */
static int truncate_fid(struct gofer_fid *f, int fd, int flags)
{
	int wfd, ret = 0;

	if ((flags & O_ACCMODE) != O_RDONLY)
		return ftruncate(fd, 0) < 0 ? -errno : 0;
	wfd = reopen(f, O_WRONLY);
	if (wfd < 0)
		return wfd;
	if (ftruncate(wfd, 0) < 0)
		ret = -errno;
	close(wfd);
	return ret;
}

static int h_lopen(struct gofer *g, const struct p9_msg *m, struct gofer_out *o)
{
	struct p9_msg r = { .type = P9_RLOPEN };
	cleanup_close int fd = -1;
	struct gofer_fid *f;
	struct stat st;
	int flags, oflags, fl, ret;

	f = fid_node(g, m->u.tlopen.fid);
	if (!f)
		return -EBADF;
	if (p9_flags_from_dotl(m->u.tlopen.flags, &flags) < 0)
		return -EINVAL;
	/* Read-only service: anything that could modify the host is refused
	 * whatever the file's permissions. A writable one still creates only
	 * through Tlcreate. */
	if (flags & (O_CREAT | O_EXCL))
		return g->writable ? -EINVAL : -EROFS;
	if (!g->writable &&
	    ((flags & O_ACCMODE) != O_RDONLY || (flags & (O_TRUNC | O_APPEND))))
		return -EROFS;
	if (S_ISDIR(f->file->mode) &&
	    ((flags & O_ACCMODE) != O_RDONLY || (flags & O_TRUNC)))
		return -EISDIR;
	if (S_ISLNK(f->file->mode))
		return -ELOOP;
	/* FIFOs, sockets and device nodes would be channels to other host
	 * processes or hardware, not files of the tree: never opened (the
	 * mount is also nodev). */
	if (!S_ISREG(f->file->mode) && !S_ISDIR(f->file->mode))
		return -EPERM;

	/* O_NONBLOCK always, so that even a FIFO swapped in by a race cannot
	 * block the gofer; it is cleared again below unless asked for. */
	oflags = O_CLOEXEC | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK |
		 (flags & (O_ACCMODE | O_APPEND | O_DIRECTORY | O_NOATIME |
			   O_DIRECT | O_SYNC | O_DSYNC));
	if (S_ISDIR(f->file->mode))
		fd = sys_openat2(f->file->fd, ".", oflags, GOFER_RESOLVE);
	else if (f->dir && f->name)
		fd = sys_openat2(f->dir->fd, f->name, oflags,
				 name_resolve(f->file));
	else
		return -EBADF;
	if (fd < 0)
		return fd;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (st.st_dev != f->file->dev || st.st_ino != f->file->ino)
		return -ESTALE;
	/* O_TRUNC only now, on the checked file: opened with it, a file
	 * swapped in under the name would be emptied before the check. */
	if ((flags & O_TRUNC) && S_ISREG(st.st_mode)) {
		ret = truncate_fid(f, fd, flags);
		if (ret < 0)
			return ret;
	}
	if (!(flags & O_NONBLOCK)) {
		fl = fcntl(fd, F_GETFL);
		if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0)
			return -errno;
	}

	r.u.rlopen.qid = file_qid(f->file);
	r.u.rlopen.iounit = 0; /* reads go through the donated fd */
	ret = out_msg(o, &r);
	if (ret < 0)
		return ret;
	o->donate = take_fd(&fd);
	return 0;
}

static int h_getattr(struct gofer *g, const struct p9_msg *m,
		     struct gofer_out *o)
{
	struct p9_msg r = { .type = P9_RGETATTR };
	struct p9_attr *a = &r.u.rgetattr;
	struct gofer_fid *f;
	struct statx sx;

	f = fid_node(g, m->u.tgetattr.fid);
	if (!f)
		return -EBADF;
	if (statx(f->file->fd, "",
		  AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW | AT_STATX_SYNC_AS_STAT,
		  STATX_BASIC_STATS | STATX_BTIME, &sx) < 0)
		return -errno;
	a->valid = P9_GETATTR_BASIC;
	a->qid.type = qid_type_of_mode(sx.stx_mode);
	a->qid.path = sx.stx_ino;
	a->mode = sx.stx_mode;
	a->uid = sx.stx_uid;
	a->gid = sx.stx_gid;
	a->nlink = sx.stx_nlink;
	a->rdev = makedev(sx.stx_rdev_major, sx.stx_rdev_minor);
	a->size = sx.stx_size;
	a->blksize = sx.stx_blksize;
	a->blocks = sx.stx_blocks;
	a->atime_sec = (uint64_t)sx.stx_atime.tv_sec;
	a->atime_nsec = sx.stx_atime.tv_nsec;
	a->mtime_sec = (uint64_t)sx.stx_mtime.tv_sec;
	a->mtime_nsec = sx.stx_mtime.tv_nsec;
	a->ctime_sec = (uint64_t)sx.stx_ctime.tv_sec;
	a->ctime_nsec = sx.stx_ctime.tv_nsec;
	if (sx.stx_mask & STATX_BTIME) {
		a->valid |= P9_GETATTR_BTIME;
		a->btime_sec = (uint64_t)sx.stx_btime.tv_sec;
		a->btime_nsec = sx.stx_btime.tv_nsec;
	}
	return out_msg(o, &r);
}

static uint8_t qid_type_of_dtype(unsigned char d_type)
{
	if (d_type == DT_DIR)
		return P9_QTDIR;
	if (d_type == DT_LNK)
		return P9_QTSYMLINK;
	return P9_QTFILE;
}

/* Entries are returned from the host's getdents64 with its d_off cookies as
 * 9P offsets; the stream is re-positioned with lseek on every request, so
 * the client may resume from any entry it has seen. "." and ".." are never
 * returned: the sentry synthesises them (it owns the namespace above). */
static int h_readdir(struct gofer *g, const struct p9_msg *m,
		     struct gofer_out *o)
{
	struct p9_msg r = { .type = P9_RREADDIR };
	uint8_t *data = o->buf + P9_READDIR_HDR;
	struct gofer_fid *f;
	size_t count, pos = 0, bufsz;
	bool full = false;

	f = fid_node(g, m->u.treaddir.fid);
	if (!f)
		return -EBADF;
	if (!S_ISDIR(f->file->mode))
		return -ENOTDIR;
	if (o->cap < P9_READDIR_HDR)
		return -EMSGSIZE;
	count = m->u.treaddir.count;
	if (count > o->cap - P9_READDIR_HDR)
		count = o->cap - P9_READDIR_HDR;
	if (f->dirfd < 0) {
		int fd = sys_openat2(f->file->fd, ".",
				     O_RDONLY | O_DIRECTORY | O_CLOEXEC |
					     O_NOFOLLOW | O_NONBLOCK,
				     GOFER_RESOLVE);
		if (fd < 0)
			return fd;
		f->dirfd = fd;
	}
	if (lseek(f->dirfd, (off_t)m->u.treaddir.offset, SEEK_SET) < 0)
		return -errno;

	/* Read no more host entries than can roughly fit: a linux_dirent64 is
	 * never larger than the 9P entry for the same name. */
	bufsz = count < GOFER_DENTS_MIN ? GOFER_DENTS_MIN : count;
	if (bufsz > GOFER_DENTS_MAX)
		bufsz = GOFER_DENTS_MAX;
	while (!full) {
		ssize_t n = getdents64(f->dirfd, g->dents, bufsz);
		size_t bpos = 0;

		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		while (bpos < (size_t)n) {
			struct dirent64 *d =
				(struct dirent64 *)(void *)(g->dents + bpos);
			size_t namelen;
			struct p9_qid q;

			/* The kernel never does this; a loop must not hang. */
			if (d->d_reclen <= offsetof(struct dirent64, d_name) ||
			    d->d_reclen > (size_t)n - bpos)
				return -EIO;
			namelen =
				strnlen(d->d_name,
					d->d_reclen - offsetof(struct dirent64,
							       d_name));
			q.type = qid_type_of_dtype(d->d_type);
			q.version = 0;
			q.path = d->d_ino;
			bpos += d->d_reclen;
			if ((namelen == 1 && d->d_name[0] == '.') ||
			    (namelen == 2 && d->d_name[0] == '.' &&
			     d->d_name[1] == '.'))
				continue;
			if (p9_dirent_put(data, count, &pos, &q,
					  (uint64_t)d->d_off, d->d_type,
					  d->d_name, namelen) < 0) {
				full = true;
				break;
			}
		}
	}
	/* Like getdents: a buffer too small for the next entry is EINVAL, not
	 * an end of directory. */
	if (full && pos == 0)
		return -EINVAL;
	r.u.rreaddir.count = (uint32_t)pos;
	r.u.rreaddir.data = data;
	return out_msg(o, &r);
}

static int h_readlink(struct gofer *g, const struct p9_msg *m,
		      struct gofer_out *o)
{
	struct p9_msg r = { .type = P9_RREADLINK };
	struct gofer_fid *f;
	char target[PATH_MAX];
	ssize_t n;

	f = fid_node(g, m->u.fid.fid);
	if (!f)
		return -EBADF;
	if (!S_ISLNK(f->file->mode))
		return -EINVAL;
	n = readlinkat(f->file->fd, "", target, sizeof(target));
	if (n < 0)
		return -errno;
	if ((size_t)n >= sizeof(target))
		return -ENAMETOOLONG;
	r.u.rreadlink.target.s = target;
	r.u.rreadlink.target.len = (uint16_t)n;
	return out_msg(o, &r);
}

static int h_statfs(struct gofer *g, const struct p9_msg *m,
		    struct gofer_out *o)
{
	struct p9_msg r = { .type = P9_RSTATFS };
	struct gofer_fid *f;
	struct statfs sf;

	f = fid_node(g, m->u.fid.fid);
	if (!f)
		return -EBADF;
	if (fstatfs(f->file->fd, &sf) < 0)
		return -errno;
	r.u.rstatfs.type = (uint32_t)sf.f_type;
	r.u.rstatfs.bsize = (uint32_t)sf.f_bsize;
	r.u.rstatfs.blocks = sf.f_blocks;
	r.u.rstatfs.bfree = sf.f_bfree;
	r.u.rstatfs.bavail = sf.f_bavail;
	r.u.rstatfs.files = sf.f_files;
	r.u.rstatfs.ffree = sf.f_ffree;
	r.u.rstatfs.fsid = (uint64_t)(uint32_t)sf.f_fsid.__val[0] |
			   (uint64_t)(uint32_t)sf.f_fsid.__val[1] << 32;
	r.u.rstatfs.namelen = (uint32_t)sf.f_namelen;
	return out_msg(o, &r);
}

static int xattr_commit(struct gofer_fid *f);

static int h_clunk(struct gofer *g, const struct p9_msg *m, struct gofer_out *o)
{
	struct p9_msg r = { .type = P9_RCLUNK };
	struct gofer_fid *f = fid_lookup(g, m->u.fid.fid);
	int ret = 0;

	if (!f)
		return -EBADF;
	/* An xattr being written is set now (9P2000.L); its error is the
	 * clunk's, and the fid goes either way. */
	if (f->xmode == XFID_WRITE)
		ret = xattr_commit(f);
	if (ret == 0)
		ret = out_msg(o, &r);
	fid_remove(g, m->u.fid.fid);
	return ret;
}

/* ---- extended attributes ---------------------------------------------------
 * Read through Txattrwalk + Tread (any gofer), written through
 * Txattrcreate + Twrite + Tclunk (a writable one). The attribute is read or
 * set on a descriptor reopened on the fid's own inode (reopen() below
 * checks it), never through a path. */

static int xattr_name(const struct p9_str *n, char *out, bool allow_empty)
{
	if (!n->len)
		return allow_empty ? (out[0] = 0, 0) : -EINVAL;
	if (n->len > 255 || memchr(n->s, 0, n->len))
		return -ERANGE;
	memcpy(out, n->s, n->len);
	out[n->len] = 0;
	return 0;
}

/* Only the user.* namespace is served. security.*, system.* (ACLs) and
 * trusted.* are the host's: its labels, capabilities and permissions,
 * neither shown to the guest nor set by it. */
static bool xattr_served(const char *name)
{
	return strncmp(name, "user.", 5) == 0;
}

/* Keep the user.* names of a listxattr buffer; returns the new length. */
static size_t xattr_filter_list(char *buf, size_t len)
{
	size_t in = 0, out = 0, l;

	while (in < len) {
		l = strnlen(buf + in, len - in);
		if (in + l < len)
			l++; /* with its NUL */
		if (xattr_served(buf + in) && buf[in + l - 1] == '\0') {
			memmove(buf + out, buf + in, l);
			out += l;
		}
		in += l;
	}
	return out;
}

static int h_xattrwalk(struct gofer *g, const struct p9_msg *m,
		       struct gofer_out *o)
{
	struct p9_msg r = { .type = P9_RXATTRWALK };
	struct gofer_fid *f = fid_lookup(g, m->u.txattrwalk.fid), *nf;
	char name[256];
	uint8_t *buf = NULL;
	ssize_t n;
	int fd, ret, tries;

	if (!f)
		return -EBADF;
	if (f->xmode)
		return -EINVAL;
	ret = fid_check_new(g, m->u.txattrwalk.newfid);
	if (ret == 0)
		ret = xattr_name(&m->u.txattrwalk.name, name, true);
	if (ret < 0)
		return ret;
	if (S_ISLNK(f->file->mode) || (name[0] && !xattr_served(name)))
		return -ENODATA; /* never opened: the gofer follows no link */
	fd = reopen(f, O_RDONLY);
	if (fd < 0)
		return fd == -EINVAL ? -EOPNOTSUPP : fd;
	for (tries = 0; tries < 4; tries++) {
		n = name[0] ? fgetxattr(fd, name, NULL, 0) :
			      flistxattr(fd, NULL, 0);
		if (n < 0 || n > GOFER_XATTR_MAX)
			break;
		free(buf);
		buf = malloc(n ? (size_t)n : 1);
		if (!buf) {
			close(fd);
			return -ENOMEM;
		}
		if (n == 0)
			break; /* empty: a size-0 call would only probe again */
		n = name[0] ? fgetxattr(fd, name, buf, (size_t)n) :
			      flistxattr(fd, (char *)buf, (size_t)n);
		if (n >= 0 || errno != ERANGE)
			break; /* ERANGE: it grew meanwhile, again */
	}
	ret = n < 0 ? -errno : n > GOFER_XATTR_MAX ? -E2BIG : 0;
	close(fd);
	if (ret < 0) {
		free(buf);
		return ret;
	}
	if (!name[0])
		n = (ssize_t)xattr_filter_list((char *)buf, (size_t)n);
	nf = fid_alloc(m->u.txattrwalk.newfid);
	if (!nf) {
		free(buf);
		return -ENOMEM;
	}
	r.u.rxattrwalk.size = (uint64_t)n;
	ret = out_msg(o, &r);
	if (ret < 0) {
		free(buf);
		fid_free(nf);
		return ret;
	}
	nf->file = file_ref(f->file);
	nf->dir = file_ref(f->dir);
	nf->name = f->name ? strdup(f->name) : NULL;
	nf->xmode = XFID_READ;
	nf->xval = buf;
	nf->xlen = (size_t)n;
	fid_insert(g, nf);
	return 0;
}

static int h_read(struct gofer *g, const struct p9_msg *m, struct gofer_out *o)
{
	struct p9_msg r = { .type = P9_RREAD };
	struct gofer_fid *f = fid_lookup(g, m->u.rw.fid);
	uint64_t off = m->u.rw.offset;
	size_t count = m->u.rw.count;

	if (!f)
		return -EBADF;
	if (f->xmode != XFID_READ)
		return -EOPNOTSUPP; /* file data comes with donated fds */
	if (count > o->cap - P9_READDIR_HDR)
		count = o->cap - P9_READDIR_HDR;
	if (off >= f->xlen)
		count = 0;
	else if (count > f->xlen - off)
		count = f->xlen - (size_t)off;
	r.u.rrw.count = (uint32_t)count;
	r.u.rrw.data = count ? f->xval + off : NULL;
	return out_msg(o, &r);
}

static int h_xattrcreate(struct gofer *g, const struct p9_msg *m,
			 struct gofer_out *o)
{
	struct p9_msg r = { .type = P9_RXATTRCREATE };
	struct gofer_fid *f = fid_lookup(g, m->u.txattrcreate.fid);
	char name[256], *dup;
	uint8_t *val;
	int ret;

	if (!f)
		return -EBADF;
	if (f->xmode)
		return -EINVAL;
	ret = xattr_name(&m->u.txattrcreate.name, name, false);
	if (ret < 0)
		return ret;
	if (!xattr_served(name))
		return -EOPNOTSUPP;
	/* Size 0 means "remove" here (as in QEMU's 9p): with XATTR_CREATE
	 * that is no request at all. */
	if (!m->u.txattrcreate.size && (m->u.txattrcreate.flags & XATTR_CREATE))
		return -EINVAL;
	if (m->u.txattrcreate.size > GOFER_XATTR_MAX)
		return -E2BIG;
	if (m->u.txattrcreate.flags & ~(uint32_t)(XATTR_CREATE | XATTR_REPLACE))
		return -EINVAL;
	dup = strdup(name);
	val = calloc(1, m->u.txattrcreate.size ? m->u.txattrcreate.size : 1);
	if (!dup || !val) {
		free(dup);
		free(val);
		return -ENOMEM;
	}
	ret = out_msg(o, &r);
	if (ret < 0) {
		free(dup);
		free(val);
		return ret;
	}
	f->xmode = XFID_WRITE;
	f->xname = dup;
	f->xval = val;
	f->xsize = m->u.txattrcreate.size;
	f->xlen = 0;
	f->xflags = (int)m->u.txattrcreate.flags;
	return 0;
}

static int h_write(struct gofer *g, const struct p9_msg *m, struct gofer_out *o)
{
	struct p9_msg r = { .type = P9_RWRITE };
	struct gofer_fid *f = fid_lookup(g, m->u.rw.fid);
	uint64_t off = m->u.rw.offset, end;

	if (!f)
		return -EBADF;
	if (f->xmode != XFID_WRITE)
		return -EOPNOTSUPP;
	if (__builtin_add_overflow(off, (uint64_t)m->u.rw.count, &end) ||
	    end > f->xsize)
		return -EINVAL;
	memcpy(f->xval + off, m->u.rw.data, m->u.rw.count);
	if (end > f->xlen)
		f->xlen = end;
	r.u.rrw.count = m->u.rw.count;
	return out_msg(o, &r);
}

/* Set (or, with size 0, remove: QEMU's 9p does the same) the attribute. */
static int xattr_commit(struct gofer_fid *f)
{
	int fd, ret = 0;

	if (f->xlen != f->xsize)
		return -EINVAL; /* not all of the value was written */
	fd = reopen(f, O_RDONLY);
	if (fd < 0)
		return fd == -EINVAL ? -EOPNOTSUPP : fd;
	if (f->xsize ? fsetxattr(fd, f->xname, f->xval, f->xsize, f->xflags) :
		       fremovexattr(fd, f->xname))
		ret = -errno;
	close(fd);
	return ret;
}

/* ---- the write side (GOFER_WRITABLE only) ------------------------------- */

/* The directory fid of a create/remove, and the new name in it. */
static int dir_and_name(struct gofer *g, uint32_t dfid,
			const struct p9_str *name, struct gofer_fid **dir,
			char out[NAME_MAX + 1])
{
	*dir = fid_node(g, dfid);
	if (!*dir)
		return -EBADF;
	if (!S_ISDIR((*dir)->file->mode))
		return -ENOTDIR;
	/* One plain component, as in Twalk: never "..", "." or "a/b". */
	if (!p9_str_is_name(name))
		return name->len > NAME_MAX ? -ENAMETOOLONG : -EINVAL;
	memcpy(out, name->s, name->len);
	out[name->len] = '\0';
	return 0;
}

/* The qid of what was just made as name in dir. */
static int made_qid(int dirfd, const char *name, struct p9_qid *q)
{
	struct stat st;

	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	q->type = qid_type_of_mode(st.st_mode);
	q->version = 0;
	q->path = (uint64_t)st.st_ino;
	return 0;
}

/* Permission bits only: set-id bits are the host's business, and a
 * mode's file type comes from the request type, never from its bits. */
#define GOFER_MODE_BITS 01777u

static int h_lcreate(struct gofer *g, const struct p9_msg *m,
		     struct gofer_out *o)
{
	struct p9_msg r = { .type = P9_RLCREATE };
	struct gofer_file *nf = NULL;
	cleanup_close int fd = -1;
	struct gofer_fid *d;
	char name[NAME_MAX + 1];
	struct stat st;
	char *dup;
	int flags, ret;

	ret = dir_and_name(g, m->u.tcreate.dfid, &m->u.tcreate.name, &d, name);
	if (ret < 0)
		return ret;
	if (p9_flags_from_dotl(m->u.tcreate.flags, &flags) < 0)
		return -EINVAL;
	if (flags & O_DIRECTORY)
		return -EINVAL;
	/* O_EXCL always: Tlcreate makes a new file, and an existing name
	 * (a symlink planted by someone else included) is never opened. */
	fd = openat2_mode(d->file->fd, name,
			  (flags & (O_ACCMODE | O_APPEND | O_SYNC | O_DSYNC)) |
				  O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC |
				  O_NOCTTY,
			  m->u.tcreate.mode & GOFER_MODE_BITS, GOFER_RESOLVE);
	if (fd < 0)
		return fd;
	ret = file_open(d->file->fd, name, &nf);
	if (ret < 0)
		return ret;
	if (fstat(fd, &st) < 0 || st.st_dev != nf->dev ||
	    st.st_ino != nf->ino) {
		file_unref(nf);
		return -ESTALE; /* renamed or replaced between the two opens */
	}
	dup = strdup(name);
	if (!dup) {
		file_unref(nf);
		return -ENOMEM;
	}
	r.u.rlopen.qid = file_qid(nf);
	ret = out_msg(o, &r);
	if (ret < 0) {
		free(dup);
		file_unref(nf);
		return ret;
	}
	/* The fid now names the new file (9P: Tlcreate walks it there). */
	{
		struct gofer_file *dirf = file_ref(d->file);

		fid_release(d);
		d->file = nf;
		d->dir = dirf;
		d->name = dup;
	}
	o->donate = take_fd(&fd);
	return 0;
}

static int h_mkobj(struct gofer *g, const struct p9_msg *m, struct gofer_out *o)
{
	struct p9_msg r = { .type = (uint8_t)(m->type + 1) };
	struct gofer_fid *d;
	char name[NAME_MAX + 1];
	char target[PATH_MAX];
	mode_t mode = m->u.tcreate.mode & GOFER_MODE_BITS;
	int ret;

	ret = dir_and_name(g, m->u.tcreate.dfid, &m->u.tcreate.name, &d, name);
	if (ret < 0)
		return ret;
	switch (m->type) {
	case P9_TMKDIR:
		ret = mkdirat(d->file->fd, name, mode);
		break;
	case P9_TSYMLINK:
		if (!m->u.tcreate.target.len ||
		    m->u.tcreate.target.len >= sizeof(target) ||
		    memchr(m->u.tcreate.target.s, 0, m->u.tcreate.target.len))
			return -EINVAL;
		memcpy(target, m->u.tcreate.target.s, m->u.tcreate.target.len);
		target[m->u.tcreate.target.len] = '\0';
		/* A symlink is only text: the gofer never follows one, and
		 * the sentry resolves it inside the guest's namespace. */
		ret = symlinkat(target, d->file->fd, name);
		break;
	case P9_TMKNOD:
		/* FIFOs and regular files only: a device node would be a way
		 * to hardware (the mount is nodev as well), a socket one to
		 * a host service. */
		if (!S_ISFIFO(m->u.tcreate.mode) && !S_ISREG(m->u.tcreate.mode))
			return -EPERM;
		ret = mknodat(d->file->fd, name,
			      (m->u.tcreate.mode & S_IFMT) | mode, 0);
		break;
	default:
		return -EPROTO;
	}
	if (ret < 0)
		return -errno;
	ret = made_qid(d->file->fd, name, &r.u.rattach.qid);
	if (ret < 0)
		return ret;
	return out_msg(o, &r);
}

static int h_unlinkat(struct gofer *g, const struct p9_msg *m,
		      struct gofer_out *o)
{
	struct p9_msg r = { .type = P9_RUNLINKAT };
	struct gofer_fid *d;
	char name[NAME_MAX + 1];
	int ret;

	ret = dir_and_name(g, m->u.tunlinkat.dfid, &m->u.tunlinkat.name, &d,
			   name);
	if (ret < 0)
		return ret;
	if (m->u.tunlinkat.flags & ~(uint32_t)AT_REMOVEDIR)
		return -EINVAL;
	if (unlinkat(d->file->fd, name, (int)m->u.tunlinkat.flags) < 0)
		return -errno;
	return out_msg(o, &r);
}

static int h_renameat(struct gofer *g, const struct p9_msg *m,
		      struct gofer_out *o)
{
	struct p9_msg r = { .type = P9_RRENAMEAT };
	struct gofer_fid *od, *nd;
	char oname[NAME_MAX + 1], nname[NAME_MAX + 1];
	int ret;

	ret = dir_and_name(g, m->u.trenameat.olddfid, &m->u.trenameat.oldname,
			   &od, oname);
	if (ret == 0)
		ret = dir_and_name(g, m->u.trenameat.newdfid,
				   &m->u.trenameat.newname, &nd, nname);
	if (ret < 0)
		return ret;
	if (renameat(od->file->fd, oname, nd->file->fd, nname) < 0)
		return -errno;
	return out_msg(o, &r);
}

static int h_link(struct gofer *g, const struct p9_msg *m, struct gofer_out *o)
{
	struct p9_msg r = { .type = P9_RLINK };
	struct gofer_fid *d, *f;
	char name[NAME_MAX + 1];
	struct stat st;
	int ret;

	ret = dir_and_name(g, m->u.tlink.dfid, &m->u.tlink.name, &d, name);
	if (ret < 0)
		return ret;
	f = fid_node(g, m->u.tlink.fid);
	if (!f)
		return -EBADF;
	if (S_ISDIR(f->file->mode))
		return -EPERM;
	if (!f->dir || !f->name)
		return -EPERM;
	/* A file gofer's root is a mount of its own: no link leaves it. */
	if (f->file->bound)
		return -EXDEV;
	/* By name (AT_EMPTY_PATH would need CAP_DAC_READ_SEARCH), then
	 * check it is still the file the fid names. */
	if (fstatat(f->dir->fd, f->name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	if (st.st_dev != f->file->dev || st.st_ino != f->file->ino)
		return -ESTALE;
	if (linkat(f->dir->fd, f->name, d->file->fd, name, 0) < 0)
		return -errno;
	return out_msg(o, &r);
}

/* A writable fd on exactly the object f names (for truncate and fsync). */
static int reopen(struct gofer_fid *f, int flags)
{
	cleanup_close int fd = -1;
	struct stat st;

	if (S_ISDIR(f->file->mode))
		fd = sys_openat2(f->file->fd, ".",
				 O_RDONLY | O_DIRECTORY | O_CLOEXEC,
				 GOFER_RESOLVE);
	else if (S_ISREG(f->file->mode) && f->dir && f->name)
		fd = sys_openat2(f->dir->fd, f->name,
				 flags | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK |
					 O_NOCTTY,
				 name_resolve(f->file));
	else
		return -EINVAL;
	if (fd < 0)
		return fd;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (st.st_dev != f->file->dev || st.st_ino != f->file->ino)
		return -ESTALE;
	return take_fd(&fd);
}

static int h_setattr(struct gofer *g, const struct p9_msg *m,
		     struct gofer_out *o)
{
	struct p9_msg r = { .type = P9_RSETATTR };
	const uint32_t v = m->u.tsetattr.valid;
	struct gofer_fid *f;
	int fd = -1;

	f = fid_node(g, m->u.tsetattr.fid);
	if (!f)
		return -EBADF;
	/* Every change acts on the O_PATH fd the fid holds (AT_EMPTY_PATH):
	 * the very inode walked, never a name that could be swapped. */
	if (v & P9_SETATTR_MODE) {
		if (S_ISLNK(f->file->mode))
			return -EOPNOTSUPP;
		if (syscall(SYS_fchmodat2, f->file->fd, "",
			    m->u.tsetattr.mode & GOFER_MODE_BITS,
			    AT_EMPTY_PATH) < 0)
			return -errno;
	}
	if (v & (P9_SETATTR_UID | P9_SETATTR_GID)) {
		uid_t uid = (v & P9_SETATTR_UID) ? m->u.tsetattr.uid :
						   (uid_t)-1;
		gid_t gid = (v & P9_SETATTR_GID) ? m->u.tsetattr.gid :
						   (gid_t)-1;

		if (fchownat(f->file->fd, "", uid, gid,
			     AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0)
			return -errno;
	}
	if (v & P9_SETATTR_SIZE) {
		if (S_ISDIR(f->file->mode))
			return -EISDIR;
		fd = reopen(f, O_WRONLY);
		if (fd < 0)
			return fd;
		if (ftruncate(fd, (off_t)m->u.tsetattr.size) < 0) {
			int e = errno;

			close(fd);
			return -e;
		}
		close(fd);
	}
	if (v & (P9_SETATTR_ATIME | P9_SETATTR_MTIME)) {
		struct timespec ts[2] = { { .tv_nsec = UTIME_OMIT },
					  { .tv_nsec = UTIME_OMIT } };

		if (v & P9_SETATTR_ATIME) {
			ts[0].tv_nsec = UTIME_NOW;
			if (v & P9_SETATTR_ATIME_SET) {
				ts[0].tv_sec = (time_t)m->u.tsetattr.atime_sec;
				ts[0].tv_nsec = (long)m->u.tsetattr.atime_nsec;
			}
		}
		if (v & P9_SETATTR_MTIME) {
			ts[1].tv_nsec = UTIME_NOW;
			if (v & P9_SETATTR_MTIME_SET) {
				ts[1].tv_sec = (time_t)m->u.tsetattr.mtime_sec;
				ts[1].tv_nsec = (long)m->u.tsetattr.mtime_nsec;
			}
		}
		if (utimensat(f->file->fd, "", ts,
			      AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0)
			return -errno;
	}
	return out_msg(o, &r);
}

static int h_fsync(struct gofer *g, const struct p9_msg *m, struct gofer_out *o)
{
	struct p9_msg r = { .type = P9_RFSYNC };
	struct gofer_fid *f;
	int fd, ret;

	f = fid_node(g, m->u.tfsync.fid);
	if (!f)
		return -EBADF;
	fd = reopen(f, O_RDONLY);
	if (fd < 0)
		return fd;
	ret = m->u.tfsync.datasync ? fdatasync(fd) : fsync(fd);
	ret = ret < 0 ? -errno : 0;
	close(fd);
	if (ret < 0)
		return ret;
	return out_msg(o, &r);
}

typedef int (*gofer_handler)(struct gofer *g, const struct p9_msg *m,
			     struct gofer_out *o);

/* The served subset. Anything else decodes to -EOPNOTSUPP and is answered
 * by gofer_is_write[] below. */
static const gofer_handler gofer_handlers[256] = {
	[P9_TVERSION] = h_version,
	[P9_TATTACH] = h_attach,
	[P9_TWALK] = h_walk,
	[P9_TLOPEN] = h_lopen,
	[P9_TGETATTR] = h_getattr,
	[P9_TREADDIR] = h_readdir,
	[P9_TREADLINK] = h_readlink,
	[P9_TSTATFS] = h_statfs,
	[P9_TCLUNK] = h_clunk,
	/* the write side: reached only when the gofer is writable */
	[P9_TLCREATE] = h_lcreate,
	[P9_TMKDIR] = h_mkobj,
	[P9_TSYMLINK] = h_mkobj,
	[P9_TMKNOD] = h_mkobj,
	[P9_TUNLINKAT] = h_unlinkat,
	[P9_TRENAMEAT] = h_renameat,
	[P9_TLINK] = h_link,
	[P9_TSETATTR] = h_setattr,
	[P9_TFSYNC] = h_fsync,
	[P9_TXATTRWALK] = h_xattrwalk,
	[P9_TREAD] = h_read,
	[P9_TXATTRCREATE] = h_xattrcreate,
	[P9_TWRITE] = h_write,
};

/* Requests that would modify the tree: EROFS, so the sentry can report a
 * read-only file system rather than a missing feature. */
static const bool gofer_is_write[256] = {
	[P9_TLCREATE] = true,  [P9_TSYMLINK] = true, [P9_TMKNOD] = true,
	[P9_TRENAME] = true,   [P9_TSETATTR] = true, [P9_TXATTRCREATE] = true,
	[P9_TLINK] = true,     [P9_TMKDIR] = true,   [P9_TRENAMEAT] = true,
	[P9_TUNLINKAT] = true, [P9_TCREATE] = true,  [P9_TWRITE] = true,
	[P9_TREMOVE] = true,   [P9_TWSTAT] = true,   [P9_TFSYNC] = true,
};

/* What a store gofer serves (GOFER_STORE). */
static const bool gofer_store_ok[256] = {
	[P9_TVERSION] = true, [P9_TATTACH] = true,  [P9_TWALK] = true,
	[P9_TLOPEN] = true,   [P9_TLCREATE] = true, [P9_TUNLINKAT] = true,
	[P9_TGETATTR] = true, [P9_TSTATFS] = true,  [P9_TCLUNK] = true,
	[P9_TFSYNC] = true,
};

static int dispatch(struct gofer *g, const uint8_t *req, size_t len,
		    struct gofer_out *o)
{
	struct p9_msg m;
	int ret;

	ret = p9_decode(req, len, &m);
	if (len >= P9_HDR_SIZE)
		o->tag = m.tag;
	/* A read-only gofer refuses the whole write side before looking at
	 * the message: whatever the sentry asks, the answer is EROFS. */
	if (len >= P9_HDR_SIZE && gofer_is_write[m.type] && !g->writable)
		return -EROFS;
	if (ret == -EOPNOTSUPP)
		return gofer_is_write[m.type] ? -EROFS : -EOPNOTSUPP;
	if (ret < 0)
		return -EPROTO;
	/* Tversion must come first: it fixes msize and the dialect. */
	if (!g->versioned && m.type != P9_TVERSION)
		return -EPROTO;
	if (g->store && !gofer_store_ok[m.type])
		return -EPERM;
	if (g->store && m.type == P9_TWALK && m.u.twalk.nwname > 1)
		return -EPERM; /* one name, or none: its root is flat */
	if (g->store && m.type == P9_TUNLINKAT && m.u.tunlinkat.flags)
		return -EPERM; /* no AT_REMOVEDIR: there are no directories */
	if (g->store && m.type == P9_TLCREATE && (m.u.tcreate.mode & 07177))
		return -EPERM; /* 0600 or less: the owner's alone */
	if (!gofer_handlers[m.type])
		return -EPROTO; /* a decodable R-message sent to the server */
	return gofer_handlers[m.type](g, &m, o);
}

int gofer_handle(struct gofer *g, const uint8_t *req, size_t len,
		 uint8_t *reply, size_t cap, size_t *reply_len, int *donate_fd)
{
	struct gofer_out o = {
		.buf = reply,
		.cap = cap < g->msize ? cap : g->msize,
		.tag = P9_NOTAG,
		.donate = -1,
	};
	struct p9_msg e = { .type = P9_RLERROR };
	int ret;

	*reply_len = 0;
	*donate_fd = -1;
	if (o.cap < P9_HDR_SIZE + 4)
		return -EMSGSIZE;
	ret = dispatch(g, req, len, &o);
	if (ret < 0) {
		MOAT_ASSERT(o.donate < 0);
		e.u.rlerror.ecode = (uint32_t)-ret;
		ret = out_msg(&o, &e);
		MOAT_ASSERT(ret == 0);
	}
	*reply_len = o.len;
	*donate_fd = o.donate;
	return 0;
}

/* ---- serving loop ------------------------------------------------------- */

static int send_reply(int sock, const uint8_t *buf, size_t len, int fd)
{
	size_t done = 0;

	while (done < len) {
		union {
			struct cmsghdr h;
			char b[CMSG_SPACE(sizeof(int))];
		} c;
		struct iovec iov = {
			.iov_base = (void *)(buf + done),
			.iov_len = len - done,
		};
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
		ssize_t n;

		/* The fd rides on the first byte of the reply, so it arrives
		 * with the Rlopen it belongs to. */
		if (fd >= 0 && done == 0) {
			struct cmsghdr *cm;

			memset(&c, 0, sizeof(c));
			mh.msg_control = c.b;
			mh.msg_controllen = sizeof(c.b);
			cm = CMSG_FIRSTHDR(&mh);
			cm->cmsg_level = SOL_SOCKET;
			cm->cmsg_type = SCM_RIGHTS;
			cm->cmsg_len = CMSG_LEN(sizeof(int));
			memcpy(CMSG_DATA(cm), &fd, sizeof(int));
		}
		n = sendmsg(sock, &mh, MSG_NOSIGNAL);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		done += (size_t)n;
	}
	return 0;
}

/* The framing loop; g is freed at the end. */
static int serve(int sockfd, struct gofer *g)
{
	cleanup_free uint8_t *req = NULL;
	cleanup_free uint8_t *reply = NULL;
	int ret;

	req = malloc(P9_MAX_MSIZE);
	reply = malloc(P9_MAX_MSIZE);
	if (!req || !reply) {
		gofer_free(g);
		return -ENOMEM;
	}

	for (;;) {
		cleanup_close int donate = -1;
		size_t rlen;
		uint32_t size;
		ssize_t n;

		n = read_all(sockfd, req, 4);
		if (n == 0) {
			ret = 0; /* the sentry hung up */
			break;
		}
		if (n != 4) {
			ret = n < 0 ? (int)n : -EPROTO;
			break;
		}
		size = (uint32_t)req[0] | (uint32_t)req[1] << 8 |
		       (uint32_t)req[2] << 16 | (uint32_t)req[3] << 24;
		/* A bad size cannot be skipped on a stream: hang up. */
		if (size < P9_HDR_SIZE || size > g->msize) {
			ret = -EPROTO;
			break;
		}
		n = read_all(sockfd, req + 4, size - 4);
		if (n != (ssize_t)(size - 4)) {
			ret = n < 0 ? (int)n : -EPROTO;
			break;
		}
		ret = gofer_handle(g, req, size, reply, P9_MAX_MSIZE, &rlen,
				   &donate);
		if (ret < 0)
			break;
		ret = send_reply(sockfd, reply, rlen, donate);
		if (ret < 0)
			break;
	}
	gofer_free(g);
	return ret;
}

int gofer_serve(int sockfd, int rootfd, unsigned flags)
{
	struct gofer *g = NULL;
	int ret = gofer_new(&g, rootfd, flags);

	return ret < 0 ? ret : serve(sockfd, g);
}

int gofer_serve_file(int sockfd, int dirfd, const char *name, unsigned flags)
{
	struct gofer *g = NULL;
	int ret = gofer_new_file(&g, dirfd, name, flags);

	return ret < 0 ? ret : serve(sockfd, g);
}
