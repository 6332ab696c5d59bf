/* sentry/p9client.c: synchronous 9P2000.L client (see p9client.h).
 *
 * Guest-reachable: every failure is -errno, allocation failures included;
 * only p9c_open (setup) builds error strings.
 */
#include "sentry/p9client.h"

#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>

#define P9C_TAG 1u    /* one request in flight: a constant tag suffices */
#define P9C_MAX_FDS 4 /* control room for a misbehaving gofer's extra fds */

struct p9_client {
	int sock;
	uint32_t msize;
	bool broken;
	uint8_t *buf; /* P9_MAX_MSIZE bytes: requests and replies */
	/* fid allocator: numbers below next_fid are live unless in freelist;
	 * live[] catches double clunks and foreign fids. */
	uint32_t next_fid;
	uint32_t *freelist;
	size_t nfree;
	uint8_t live[P9_MAX_FIDS / 8];
};

/* ---- fid allocator ------------------------------------------------------ */

static bool fid_is_live(const struct p9_client *c, uint32_t fid)
{
	return fid < P9_MAX_FIDS && (c->live[fid / 8] & (1u << (fid % 8)));
}

static int fid_get(struct p9_client *c, uint32_t *fid)
{
	uint32_t f;

	if (c->nfree)
		f = c->freelist[--c->nfree];
	else if (c->next_fid < P9_MAX_FIDS)
		f = c->next_fid++;
	else
		return -EMFILE;
	c->live[f / 8] |= (uint8_t)(1u << (f % 8));
	*fid = f;
	return 0;
}

static void fid_put(struct p9_client *c, uint32_t fid)
{
	if (!fid_is_live(c, fid))
		return;
	c->live[fid / 8] &= (uint8_t) ~(1u << (fid % 8));
	/* The freelist never holds more than P9_MAX_FIDS entries; it was
	 * sized for that at open, so this cannot fail. */
	c->freelist[c->nfree++] = fid;
}

/* ---- transport ---------------------------------------------------------- */

#define P9C_FDS_LOST (1 << 20) /* recv_exact's *extra: MSG_CTRUNC */

static int send_all(struct p9_client *c, const uint8_t *p, size_t len)
{
	while (len) {
		ssize_t n = send(c->sock, p, len, MSG_NOSIGNAL);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -EIO;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Receive exactly len bytes. Any SCM_RIGHTS fds that arrive are collected:
 * the first into *fd (if still -1), extras closed and counted in *extra. */
static int recv_exact(struct p9_client *c, uint8_t *p, size_t len, int *fd,
		      int *extra)
{
	while (len) {
		union {
			struct cmsghdr h;
			char b[CMSG_SPACE(sizeof(int) * P9C_MAX_FDS)];
		} ctl;
		struct iovec iov = { .iov_base = p, .iov_len = len };
		struct msghdr mh = {
			.msg_iov = &iov,
			.msg_iovlen = 1,
			.msg_control = ctl.b,
			.msg_controllen = sizeof(ctl.b),
		};
		struct cmsghdr *cm;
		ssize_t n;

		n = recvmsg(c->sock, &mh, MSG_CMSG_CLOEXEC);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -EIO;
		}
		for (cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm)) {
			size_t nfd, i;

			if (cm->cmsg_level != SOL_SOCKET ||
			    cm->cmsg_type != SCM_RIGHTS ||
			    cm->cmsg_len < CMSG_LEN(0))
				continue;
			nfd = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
			for (i = 0; i < nfd; i++) {
				int got;

				memcpy(&got, CMSG_DATA(cm) + i * sizeof(int),
				       sizeof(int));
				if (*fd < 0) {
					*fd = got;
				} else {
					close(got);
					(*extra)++;
				}
			}
		}
		if (mh.msg_flags & MSG_CTRUNC)
			*extra = P9C_FDS_LOST; /* the kernel dropped fds: the
						* sentry's fd table is full */
		if (n == 0)
			return -EIO; /* the gofer hung up mid-conversation */
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* One round trip: encode t, send, receive one framed reply, decode into r
 * (whose strings point into c->buf until the next call). An Rlerror becomes
 * its -ecode; a reply of another type than rtype is -EPROTO. A donated fd
 * is returned in *fd_out if fd_out is given, otherwise it is a protocol
 * error. */
static int rpc(struct p9_client *c, struct p9_msg *t, uint8_t rtype,
	       struct p9_msg *r, int *fd_out)
{
	cleanup_close int fd = -1;
	int extra = 0, ret;
	size_t len;
	uint32_t size;

	if (c->broken)
		return -EIO;
	t->tag = t->type == P9_TVERSION ? P9_NOTAG : P9C_TAG;
	ret = p9_encode(t, c->buf, c->msize, &len);
	if (ret < 0)
		return ret; /* nothing sent: the connection is still fine */
	if (send_all(c, c->buf, len) < 0)
		goto broken;
	if (recv_exact(c, c->buf, 4, &fd, &extra) < 0)
		goto broken;
	size = (uint32_t)c->buf[0] | (uint32_t)c->buf[1] << 8 |
	       (uint32_t)c->buf[2] << 16 | (uint32_t)c->buf[3] << 24;
	if (size < P9_HDR_SIZE || size > c->msize)
		goto broken; /* framing is lost */
	if (recv_exact(c, c->buf + 4, size - 4, &fd, &extra) < 0)
		goto broken;

	ret = p9_decode(c->buf, size, r);
	if (ret < 0 && r->tag == t->tag)
		return -EPROTO; /* framed but garbled: still in sync */
	if (r->tag != t->tag)
		goto broken; /* a reply to something else: out of sync */
	if (extra)
		return extra >= P9C_FDS_LOST ? -ENFILE : -EPROTO;
	if (r->type == P9_RLERROR) {
		uint32_t e = r->u.rlerror.ecode;

		return e == 0 || e > 4095 ? -EIO : -(int)e;
	}
	if (r->type != rtype)
		return -EPROTO;
	if (fd >= 0 && !fd_out)
		return -EPROTO;
	if (fd_out) {
		/* Past the line of fds guests may make the sentry hold
		 * (lib/util.h): ENFILE, and the reserve stays free. */
		int got = take_fd(&fd);
		if (got >= 0 && (got = fd_admit(got)) < 0)
			return got;
		*fd_out = got;
	}
	return 0;

broken:
	c->broken = true;
	return -EIO;
}

/* ---- API ---------------------------------------------------------------- */

static void client_free(struct p9_client *c)
{
	if (c) {
		free(c->buf);
		free(c->freelist);
		free(c);
	}
}

int p9c_open(struct p9_client **out, int sockfd, uint32_t *rootfid,
	     struct p9_qid *rootqid, struct moat_error *err)
{
	struct p9_msg t = { .type = P9_TVERSION };
	struct p9_msg r;
	struct p9_client *c;
	uint32_t fid;
	int ret;

	c = calloc(1, sizeof(*c));
	if (!c)
		return moat_error_set(err, ENOMEM, "9p: client");
	c->buf = malloc(P9_MAX_MSIZE);
	c->freelist = malloc(sizeof(*c->freelist) * P9_MAX_FIDS);
	if (!c->buf || !c->freelist) {
		client_free(c);
		return moat_error_set(err, ENOMEM, "9p: client");
	}
	c->sock = sockfd;
	c->msize = P9_MAX_MSIZE;

	t.u.version.msize = P9_MAX_MSIZE;
	p9_str_set(&t.u.version.version, P9_VERSION_L);
	ret = rpc(c, &t, P9_RVERSION, &r, NULL);
	if (ret < 0) {
		client_free(c);
		return moat_error_set(err, -ret, "9p: Tversion");
	}
	if (!p9_str_eq(&r.u.version.version, P9_VERSION_L)) {
		client_free(c);
		return moat_error_set(err, EPROTONOSUPPORT,
				      "9p: gofer does not speak " P9_VERSION_L);
	}
	if (r.u.version.msize < P9_MIN_MSIZE ||
	    r.u.version.msize > P9_MAX_MSIZE) {
		client_free(c);
		return moat_error_set(err, EPROTO, "9p: gofer msize %u",
				      r.u.version.msize);
	}
	c->msize = r.u.version.msize;

	ret = fid_get(c, &fid);
	MOAT_ASSERT(ret == 0);
	memset(&t, 0, sizeof(t));
	t.type = P9_TATTACH;
	t.u.tattach.fid = fid;
	t.u.tattach.afid = P9_NOFID;
	p9_str_set(&t.u.tattach.uname, "moat");
	p9_str_set(&t.u.tattach.aname, "");
	t.u.tattach.n_uname = P9_NONUNAME;
	ret = rpc(c, &t, P9_RATTACH, &r, NULL);
	if (ret < 0) {
		client_free(c);
		return moat_error_set(err, -ret, "9p: Tattach");
	}
	*rootfid = fid;
	if (rootqid)
		*rootqid = r.u.rattach.qid;
	*out = c;
	return 0;
}

void p9c_close(struct p9_client *c)
{
	if (!c)
		return;
	close(c->sock);
	client_free(c);
}

uint32_t p9c_msize(const struct p9_client *c)
{
	return c->msize;
}

static int walk(struct p9_client *c, uint32_t fid, const char *name,
		uint32_t *newfid, struct p9_qid *qid)
{
	struct p9_msg t = { .type = P9_TWALK };
	struct p9_msg r;
	uint32_t nf;
	int ret;

	if (!fid_is_live(c, fid))
		return -EBADF;
	t.u.twalk.fid = fid;
	if (name) {
		if (p9_str_set(&t.u.twalk.wname[0], name) < 0)
			return -ENAMETOOLONG;
		t.u.twalk.nwname = 1;
	}
	ret = fid_get(c, &nf);
	if (ret < 0)
		return ret;
	t.u.twalk.newfid = nf;
	ret = rpc(c, &t, P9_RWALK, &r, NULL);
	if (ret == 0 && r.u.rwalk.nwqid != t.u.twalk.nwname)
		/* Fewer qids: newfid was not created (first-name failures
		 * should be Rlerror; tolerate the older form). */
		ret = r.u.rwalk.nwqid < t.u.twalk.nwname ? -ENOENT : -EPROTO;
	if (ret < 0) {
		fid_put(c, nf);
		return ret;
	}
	if (name && qid)
		*qid = r.u.rwalk.wqid[0];
	*newfid = nf;
	return 0;
}

int p9c_walk1(struct p9_client *c, uint32_t fid, const char *name,
	      uint32_t *newfid, struct p9_qid *qid)
{
	if (!name)
		return -EINVAL;
	return walk(c, fid, name, newfid, qid);
}

int p9c_clone(struct p9_client *c, uint32_t fid, uint32_t *newfid)
{
	return walk(c, fid, NULL, newfid, NULL);
}

int p9c_getattr(struct p9_client *c, uint32_t fid, struct stat *st)
{
	struct p9_msg t = { .type = P9_TGETATTR };
	struct p9_msg r;
	const struct p9_attr *a = &r.u.rgetattr;
	int ret;

	t.u.tgetattr.fid = fid;
	t.u.tgetattr.request_mask = P9_GETATTR_BASIC;
	ret = rpc(c, &t, P9_RGETATTR, &r, NULL);
	if (ret < 0)
		return ret;
	memset(st, 0, sizeof(*st));
	st->st_dev = 0;
	st->st_ino = a->qid.path;
	st->st_mode = a->mode;
	st->st_nlink = a->nlink;
	st->st_uid = a->uid;
	st->st_gid = a->gid;
	st->st_rdev = a->rdev;
	st->st_size = (off_t)a->size;
	st->st_blksize = (blksize_t)a->blksize;
	st->st_blocks = (blkcnt_t)a->blocks;
	st->st_atim.tv_sec = (time_t)a->atime_sec;
	st->st_atim.tv_nsec = (long)(a->atime_nsec % 1000000000u);
	st->st_mtim.tv_sec = (time_t)a->mtime_sec;
	st->st_mtim.tv_nsec = (long)(a->mtime_nsec % 1000000000u);
	st->st_ctim.tv_sec = (time_t)a->ctime_sec;
	st->st_ctim.tv_nsec = (long)(a->ctime_nsec % 1000000000u);
	return 0;
}

int p9c_lopen(struct p9_client *c, uint32_t fid, int flags, int *hostfd)
{
	struct p9_msg t = { .type = P9_TLOPEN };
	struct p9_msg r;
	int fd = -1, ret;

	t.u.tlopen.fid = fid;
	t.u.tlopen.flags = p9_flags_to_dotl(flags);
	ret = rpc(c, &t, P9_RLOPEN, &r, &fd);
	if (ret < 0)
		return ret;
	if (fd < 0)
		return -EPROTO; /* Rlopen without its fd */
	*hostfd = fd;
	return 0;
}

int p9c_readlink(struct p9_client *c, uint32_t fid, char *buf, size_t len)
{
	struct p9_msg t = { .type = P9_TREADLINK };
	struct p9_msg r;
	const struct p9_str *s = &r.u.rreadlink.target;
	int ret;

	t.u.fid.fid = fid;
	ret = rpc(c, &t, P9_RREADLINK, &r, NULL);
	if (ret < 0)
		return ret;
	/* A target with a NUL would read differently as a C string. */
	if (s->len == 0 || memchr(s->s, '\0', s->len))
		return -EPROTO;
	if ((size_t)s->len >= len)
		return -ENAMETOOLONG;
	memcpy(buf, s->s, s->len);
	buf[s->len] = '\0';
	return s->len;
}

int p9c_readdir(struct p9_client *c, uint32_t fid, uint64_t offset, void *buf,
		uint32_t count)
{
	struct p9_msg t = { .type = P9_TREADDIR };
	struct p9_msg r;
	int ret;

	if (count > c->msize - P9_READDIR_HDR)
		count = c->msize - P9_READDIR_HDR;
	t.u.treaddir.fid = fid;
	t.u.treaddir.offset = offset;
	t.u.treaddir.count = count;
	ret = rpc(c, &t, P9_RREADDIR, &r, NULL);
	if (ret < 0)
		return ret;
	if (r.u.rreaddir.count > count)
		return -EPROTO;
	if (r.u.rreaddir.count)
		memcpy(buf, r.u.rreaddir.data, r.u.rreaddir.count);
	return (int)r.u.rreaddir.count;
}

int p9c_readdir_next(const void *buf, size_t len, size_t *pos,
		     struct p9_qid *qid, uint64_t *off, uint8_t *type,
		     char *name, size_t namecap)
{
	struct p9_str s;
	size_t p = *pos;
	int ret;

	ret = p9_dirent_get(buf, len, &p, qid, off, type, &s);
	if (ret <= 0)
		return ret;
	if (!p9_str_is_name(&s))
		return -EPROTO;
	if (name) {
		if ((size_t)s.len >= namecap)
			return -ENAMETOOLONG;
		memcpy(name, s.s, s.len);
		name[s.len] = '\0';
	}
	*pos = p;
	return 1;
}

int p9c_statfs(struct p9_client *c, uint32_t fid, struct statfs *st)
{
	struct p9_msg t = { .type = P9_TSTATFS };
	struct p9_msg r;
	const struct p9_statfs *s = &r.u.rstatfs;
	int ret;

	t.u.fid.fid = fid;
	ret = rpc(c, &t, P9_RSTATFS, &r, NULL);
	if (ret < 0)
		return ret;
	memset(st, 0, sizeof(*st));
	st->f_type = s->type;
	st->f_bsize = s->bsize;
	st->f_frsize = s->bsize;
	st->f_blocks = s->blocks;
	st->f_bfree = s->bfree;
	st->f_bavail = s->bavail;
	st->f_files = s->files;
	st->f_ffree = s->ffree;
	st->f_fsid.__val[0] = (int)(uint32_t)s->fsid;
	st->f_fsid.__val[1] = (int)(uint32_t)(s->fsid >> 32);
	st->f_namelen = s->namelen;
	return 0;
}

int p9c_clunk(struct p9_client *c, uint32_t fid)
{
	struct p9_msg t = { .type = P9_TCLUNK };
	struct p9_msg r;
	int ret;

	if (!fid_is_live(c, fid))
		return -EBADF;
	t.u.fid.fid = fid;
	ret = rpc(c, &t, P9_RCLUNK, &r, NULL);
	fid_put(c, fid);
	return ret;
}

/* ---- the write side (a gofer started --rw) ------------------------------ */

int p9c_lcreate(struct p9_client *c, uint32_t dfid, const char *name, int flags,
		mode_t mode, uint32_t *newfid, int *hostfd)
{
	struct p9_msg t = { .type = P9_TLCREATE };
	struct p9_msg r;
	uint32_t nf;
	int fd = -1, ret;

	if (p9_str_set(&t.u.tcreate.name, name) < 0)
		return -ENAMETOOLONG;
	/* Tlcreate turns its fid into the new file: walk a copy there. */
	ret = p9c_clone(c, dfid, &nf);
	if (ret < 0)
		return ret;
	t.u.tcreate.dfid = nf;
	t.u.tcreate.flags = p9_flags_to_dotl(flags);
	t.u.tcreate.mode = mode;
	t.u.tcreate.gid = 0;
	ret = rpc(c, &t, P9_RLCREATE, &r, &fd);
	if (ret == 0 && fd < 0)
		ret = -EPROTO;
	if (ret < 0) {
		p9c_clunk(c, nf);
		return ret;
	}
	*newfid = nf;
	*hostfd = fd;
	return 0;
}

static int mkobj(struct p9_client *c, uint8_t type, uint32_t dfid,
		 const char *name, const char *target, mode_t mode)
{
	struct p9_msg t = { .type = type };
	struct p9_msg r;

	if (!fid_is_live(c, dfid))
		return -EBADF;
	t.u.tcreate.dfid = dfid;
	if (p9_str_set(&t.u.tcreate.name, name) < 0 ||
	    (target && p9_str_set(&t.u.tcreate.target, target) < 0))
		return -ENAMETOOLONG;
	t.u.tcreate.mode = mode;
	return rpc(c, &t, (uint8_t)(type + 1), &r, NULL);
}

int p9c_mkdir(struct p9_client *c, uint32_t dfid, const char *name, mode_t mode)
{
	return mkobj(c, P9_TMKDIR, dfid, name, NULL, mode);
}

int p9c_symlink(struct p9_client *c, uint32_t dfid, const char *name,
		const char *target)
{
	return mkobj(c, P9_TSYMLINK, dfid, name, target, 0);
}

int p9c_mknod(struct p9_client *c, uint32_t dfid, const char *name, mode_t mode)
{
	return mkobj(c, P9_TMKNOD, dfid, name, NULL, mode);
}

int p9c_unlinkat(struct p9_client *c, uint32_t dfid, const char *name,
		 int flags)
{
	struct p9_msg t = { .type = P9_TUNLINKAT };
	struct p9_msg r;

	t.u.tunlinkat.dfid = dfid;
	if (p9_str_set(&t.u.tunlinkat.name, name) < 0)
		return -ENAMETOOLONG;
	t.u.tunlinkat.flags = (uint32_t)flags;
	return rpc(c, &t, P9_RUNLINKAT, &r, NULL);
}

int p9c_renameat(struct p9_client *c, uint32_t odfid, const char *oname,
		 uint32_t ndfid, const char *nname)
{
	struct p9_msg t = { .type = P9_TRENAMEAT };
	struct p9_msg r;

	t.u.trenameat.olddfid = odfid;
	t.u.trenameat.newdfid = ndfid;
	if (p9_str_set(&t.u.trenameat.oldname, oname) < 0 ||
	    p9_str_set(&t.u.trenameat.newname, nname) < 0)
		return -ENAMETOOLONG;
	return rpc(c, &t, P9_RRENAMEAT, &r, NULL);
}

int p9c_link(struct p9_client *c, uint32_t dfid, uint32_t fid, const char *name)
{
	struct p9_msg t = { .type = P9_TLINK };
	struct p9_msg r;

	t.u.tlink.dfid = dfid;
	t.u.tlink.fid = fid;
	if (p9_str_set(&t.u.tlink.name, name) < 0)
		return -ENAMETOOLONG;
	return rpc(c, &t, P9_RLINK, &r, NULL);
}

int p9c_setattr(struct p9_client *c, uint32_t fid, const struct p9c_setattr *a)
{
	struct p9_msg t = { .type = P9_TSETATTR };
	struct p9_msg r;

	t.u.tsetattr.fid = fid;
	t.u.tsetattr.valid = a->valid;
	t.u.tsetattr.mode = a->mode;
	t.u.tsetattr.uid = a->uid;
	t.u.tsetattr.gid = a->gid;
	t.u.tsetattr.size = a->size;
	t.u.tsetattr.atime_sec = (uint64_t)a->atime.tv_sec;
	t.u.tsetattr.atime_nsec = (uint64_t)a->atime.tv_nsec;
	t.u.tsetattr.mtime_sec = (uint64_t)a->mtime.tv_sec;
	t.u.tsetattr.mtime_nsec = (uint64_t)a->mtime.tv_nsec;
	return rpc(c, &t, P9_RSETATTR, &r, NULL);
}

int p9c_fsync(struct p9_client *c, uint32_t fid, bool datasync)
{
	struct p9_msg t = { .type = P9_TFSYNC };
	struct p9_msg r;

	t.u.tfsync.fid = fid;
	t.u.tfsync.datasync = datasync;
	return rpc(c, &t, P9_RFSYNC, &r, NULL);
}

/* ---- extended attributes ------------------------------------------------ */

long p9c_xattr_get(struct p9_client *c, uint32_t fid, const char *name,
		   void *buf, size_t cap)
{
	struct p9_msg t = { .type = P9_TXATTRWALK };
	struct p9_msg r;
	uint64_t size, off = 0;
	uint32_t nf;
	long ret;

	if (!fid_is_live(c, fid))
		return -EBADF;
	if (p9_str_set(&t.u.txattrwalk.name, name) < 0)
		return -ERANGE;
	ret = fid_get(c, &nf);
	if (ret < 0)
		return ret;
	t.u.txattrwalk.fid = fid;
	t.u.txattrwalk.newfid = nf;
	ret = rpc(c, &t, P9_RXATTRWALK, &r, NULL);
	if (ret < 0) {
		fid_put(c, nf);
		return ret;
	}
	size = r.u.rxattrwalk.size;
	if (size > 65536) {
		p9c_clunk(c, nf);
		return -EPROTO;
	}
	if (cap && size > cap) {
		p9c_clunk(c, nf);
		return -ERANGE;
	}
	while (cap && off < size) {
		struct p9_msg rt = { .type = P9_TREAD };
		rt.u.rw.fid = nf;
		rt.u.rw.offset = off;
		rt.u.rw.count = (uint32_t)(size - off);
		ret = rpc(c, &rt, P9_RREAD, &r, NULL);
		if (ret < 0)
			break;
		if (!r.u.rrw.count || r.u.rrw.count > size - off) {
			ret = r.u.rrw.count ? -EPROTO : 0;
			break;
		}
		memcpy((char *)buf + off, r.u.rrw.data, r.u.rrw.count);
		off += r.u.rrw.count;
	}
	p9c_clunk(c, nf);
	if (ret < 0)
		return ret;
	return cap && off != size ? -EPROTO : (long)size;
}

int p9c_xattr_set(struct p9_client *c, uint32_t fid, const char *name,
		  const void *value, size_t size, int flags)
{
	struct p9_msg t = { .type = P9_TXATTRCREATE };
	struct p9_msg r;
	size_t off = 0;
	uint32_t nf;
	int ret;

	if (p9_str_set(&t.u.txattrcreate.name, name) < 0)
		return -ERANGE;
	/* Txattrcreate turns its fid into the attribute's: a copy of it. */
	ret = p9c_clone(c, fid, &nf);
	if (ret < 0)
		return ret;
	t.u.txattrcreate.fid = nf;
	t.u.txattrcreate.size = size;
	t.u.txattrcreate.flags = (uint32_t)flags;
	ret = rpc(c, &t, P9_RXATTRCREATE, &r, NULL);
	while (ret == 0 && off < size) {
		struct p9_msg w = { .type = P9_TWRITE };
		size_t chunk = size - off;
		if (chunk > c->msize - P9_HDR_SIZE - 16)
			chunk = c->msize - P9_HDR_SIZE - 16;
		w.u.rw.fid = nf;
		w.u.rw.offset = off;
		w.u.rw.count = (uint32_t)chunk;
		w.u.rw.data = (const uint8_t *)value + off;
		ret = rpc(c, &w, P9_RWRITE, &r, NULL);
		if (ret == 0 && r.u.rrw.count != chunk)
			ret = -EPROTO;
		off += chunk;
	}
	/* the clunk sets it, and answers how that went */
	{
		int cr = p9c_clunk(c, nf);
		return ret < 0 ? ret : cr;
	}
}
