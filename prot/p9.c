/* prot/p9.c: 9P2000.L codec. Pure functions, see prot/p9.h.
 *
 * Every read goes through struct p9_rd, whose accessors check the remaining
 * length first and latch an error flag instead of reading past the end; the
 * decoder checks the flag once per message. Writes go through struct p9_wr
 * the same way. Lengths from the wire are compared against what is left in
 * the buffer, never used to compute a pointer before that check.
 */
#include "prot/p9.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>

/* ---- little-endian cursors ---------------------------------------------- */

struct p9_rd {
	const uint8_t *p;
	size_t left;
	bool bad;
};

static bool rd_need(struct p9_rd *r, size_t n)
{
	if (r->bad || r->left < n) {
		r->bad = true;
		return false;
	}
	return true;
}

static uint8_t rd_u8(struct p9_rd *r)
{
	uint8_t v;

	if (!rd_need(r, 1))
		return 0;
	v = r->p[0];
	r->p += 1;
	r->left -= 1;
	return v;
}

static uint16_t rd_u16(struct p9_rd *r)
{
	uint16_t v;

	if (!rd_need(r, 2))
		return 0;
	v = (uint16_t)(r->p[0] | (uint16_t)r->p[1] << 8);
	r->p += 2;
	r->left -= 2;
	return v;
}

static uint32_t rd_u32(struct p9_rd *r)
{
	uint32_t v;

	if (!rd_need(r, 4))
		return 0;
	v = (uint32_t)r->p[0] | (uint32_t)r->p[1] << 8 |
	    (uint32_t)r->p[2] << 16 | (uint32_t)r->p[3] << 24;
	r->p += 4;
	r->left -= 4;
	return v;
}

static uint64_t rd_u64(struct p9_rd *r)
{
	uint64_t lo = rd_u32(r);
	uint64_t hi = rd_u32(r);

	return lo | hi << 32;
}

static const uint8_t *rd_bytes(struct p9_rd *r, size_t n)
{
	const uint8_t *p;

	if (!rd_need(r, n))
		return NULL;
	p = r->p;
	r->p += n;
	r->left -= n;
	return p;
}

static struct p9_str rd_str(struct p9_rd *r)
{
	struct p9_str s = { .s = "", .len = 0 };
	uint16_t n = rd_u16(r);
	const uint8_t *p = rd_bytes(r, n);

	if (p) {
		s.s = (const char *)p;
		s.len = n;
	}
	return s;
}

static struct p9_qid rd_qid(struct p9_rd *r)
{
	struct p9_qid q;

	q.type = rd_u8(r);
	q.version = rd_u32(r);
	q.path = rd_u64(r);
	return q;
}

struct p9_wr {
	uint8_t *p;
	size_t cap;
	size_t pos;
	bool bad;
};

static uint8_t *wr_need(struct p9_wr *w, size_t n)
{
	uint8_t *p;

	if (w->bad || w->cap - w->pos < n) {
		w->bad = true;
		return NULL;
	}
	p = w->p + w->pos;
	w->pos += n;
	return p;
}

static void wr_u8(struct p9_wr *w, uint8_t v)
{
	uint8_t *p = wr_need(w, 1);

	if (p)
		p[0] = v;
}

static void wr_u16(struct p9_wr *w, uint16_t v)
{
	uint8_t *p = wr_need(w, 2);

	if (p) {
		p[0] = (uint8_t)v;
		p[1] = (uint8_t)(v >> 8);
	}
}

static void wr_u32(struct p9_wr *w, uint32_t v)
{
	uint8_t *p = wr_need(w, 4);

	if (p) {
		p[0] = (uint8_t)v;
		p[1] = (uint8_t)(v >> 8);
		p[2] = (uint8_t)(v >> 16);
		p[3] = (uint8_t)(v >> 24);
	}
}

static void wr_u64(struct p9_wr *w, uint64_t v)
{
	wr_u32(w, (uint32_t)v);
	wr_u32(w, (uint32_t)(v >> 32));
}

/* memmove: Rreaddir data may already sit where it is being written. */
static void wr_bytes(struct p9_wr *w, const void *src, size_t n)
{
	uint8_t *p = wr_need(w, n);

	if (p && n)
		memmove(p, src, n);
}

static void wr_str(struct p9_wr *w, const struct p9_str *s)
{
	wr_u16(w, s->len);
	wr_bytes(w, s->s, s->len);
}

static void wr_qid(struct p9_wr *w, const struct p9_qid *q)
{
	wr_u8(w, q->type);
	wr_u32(w, q->version);
	wr_u64(w, q->path);
}

/* ---- strings ------------------------------------------------------------ */

bool p9_str_is_name(const struct p9_str *s)
{
	if (s->len == 0 || s->len > 255)
		return false;
	if (memchr(s->s, '\0', s->len) || memchr(s->s, '/', s->len))
		return false;
	if (s->len == 1 && s->s[0] == '.')
		return false;
	if (s->len == 2 && s->s[0] == '.' && s->s[1] == '.')
		return false;
	return true;
}

bool p9_str_eq(const struct p9_str *s, const char *c)
{
	size_t n = strlen(c);

	return n == s->len && memcmp(s->s, c, n) == 0;
}

int p9_str_set(struct p9_str *s, const char *c)
{
	size_t n = strlen(c);

	if (n > UINT16_MAX)
		return -ENAMETOOLONG;
	s->s = c;
	s->len = (uint16_t)n;
	return 0;
}

/* ---- open flags --------------------------------------------------------- */

static const struct {
	int host;
	uint32_t dotl;
} p9_flag_map[] = {
	{ O_WRONLY, P9_DOTL_WRONLY },	    { O_RDWR, P9_DOTL_RDWR },
	{ O_CREAT, P9_DOTL_CREATE },	    { O_EXCL, P9_DOTL_EXCL },
	{ O_NOCTTY, P9_DOTL_NOCTTY },	    { O_TRUNC, P9_DOTL_TRUNC },
	{ O_APPEND, P9_DOTL_APPEND },	    { O_NONBLOCK, P9_DOTL_NONBLOCK },
	{ O_DSYNC, P9_DOTL_DSYNC },	    { FASYNC, P9_DOTL_FASYNC },
	{ O_DIRECT, P9_DOTL_DIRECT },	    { O_LARGEFILE, P9_DOTL_LARGEFILE },
	{ O_DIRECTORY, P9_DOTL_DIRECTORY }, { O_NOFOLLOW, P9_DOTL_NOFOLLOW },
	{ O_NOATIME, P9_DOTL_NOATIME },	    { O_CLOEXEC, P9_DOTL_CLOEXEC },
};

uint32_t p9_flags_to_dotl(int flags)
{
	uint32_t d = 0;
	size_t i;

	/* O_SYNC includes the O_DSYNC bit on Linux: map it as a whole. */
	if ((flags & O_SYNC) == O_SYNC) {
		d |= P9_DOTL_SYNC | P9_DOTL_DSYNC;
		flags &= ~O_SYNC;
	}
	for (i = 0; i < sizeof(p9_flag_map) / sizeof(p9_flag_map[0]); i++)
		if (p9_flag_map[i].host &&
		    (flags & p9_flag_map[i].host) == p9_flag_map[i].host)
			d |= p9_flag_map[i].dotl;
	return d;
}

int p9_flags_from_dotl(uint32_t dotl, int *flags)
{
	int f = 0;
	size_t i;

	if ((dotl & P9_DOTL_ACCMODE) == P9_DOTL_ACCMODE)
		return -EINVAL;
	if (dotl & P9_DOTL_SYNC) {
		f |= O_SYNC;
		dotl &= ~(P9_DOTL_SYNC | P9_DOTL_DSYNC);
	}
	for (i = 0; i < sizeof(p9_flag_map) / sizeof(p9_flag_map[0]); i++)
		if (dotl & p9_flag_map[i].dotl) {
			f |= p9_flag_map[i].host;
			dotl &= ~p9_flag_map[i].dotl;
		}
	if (dotl)
		return -EINVAL;
	*flags = f;
	return 0;
}

/* ---- messages ----------------------------------------------------------- */

const char *p9_type_name(uint8_t type)
{
	switch ((enum p9_msg_type)type) {
#define N(t, s)                                                                \
	case t:                                                                \
		return s
		N(P9_TLERROR, "Tlerror");
		N(P9_RLERROR, "Rlerror");
		N(P9_TSTATFS, "Tstatfs");
		N(P9_RSTATFS, "Rstatfs");
		N(P9_TLOPEN, "Tlopen");
		N(P9_RLOPEN, "Rlopen");
		N(P9_TLCREATE, "Tlcreate");
		N(P9_RLCREATE, "Rlcreate");
		N(P9_TSYMLINK, "Tsymlink");
		N(P9_RSYMLINK, "Rsymlink");
		N(P9_TMKNOD, "Tmknod");
		N(P9_RMKNOD, "Rmknod");
		N(P9_TRENAME, "Trename");
		N(P9_RRENAME, "Rrename");
		N(P9_TREADLINK, "Treadlink");
		N(P9_RREADLINK, "Rreadlink");
		N(P9_TGETATTR, "Tgetattr");
		N(P9_RGETATTR, "Rgetattr");
		N(P9_TSETATTR, "Tsetattr");
		N(P9_RSETATTR, "Rsetattr");
		N(P9_TXATTRWALK, "Txattrwalk");
		N(P9_RXATTRWALK, "Rxattrwalk");
		N(P9_TXATTRCREATE, "Txattrcreate");
		N(P9_RXATTRCREATE, "Rxattrcreate");
		N(P9_TREADDIR, "Treaddir");
		N(P9_RREADDIR, "Rreaddir");
		N(P9_TFSYNC, "Tfsync");
		N(P9_RFSYNC, "Rfsync");
		N(P9_TLOCK, "Tlock");
		N(P9_RLOCK, "Rlock");
		N(P9_TGETLOCK, "Tgetlock");
		N(P9_RGETLOCK, "Rgetlock");
		N(P9_TLINK, "Tlink");
		N(P9_RLINK, "Rlink");
		N(P9_TMKDIR, "Tmkdir");
		N(P9_RMKDIR, "Rmkdir");
		N(P9_TRENAMEAT, "Trenameat");
		N(P9_RRENAMEAT, "Rrenameat");
		N(P9_TUNLINKAT, "Tunlinkat");
		N(P9_RUNLINKAT, "Runlinkat");
		N(P9_TVERSION, "Tversion");
		N(P9_RVERSION, "Rversion");
		N(P9_TAUTH, "Tauth");
		N(P9_RAUTH, "Rauth");
		N(P9_TATTACH, "Tattach");
		N(P9_RATTACH, "Rattach");
		N(P9_TERROR, "Terror");
		N(P9_RERROR, "Rerror");
		N(P9_TFLUSH, "Tflush");
		N(P9_RFLUSH, "Rflush");
		N(P9_TWALK, "Twalk");
		N(P9_RWALK, "Rwalk");
		N(P9_TOPEN, "Topen");
		N(P9_ROPEN, "Ropen");
		N(P9_TCREATE, "Tcreate");
		N(P9_RCREATE, "Rcreate");
		N(P9_TREAD, "Tread");
		N(P9_RREAD, "Rread");
		N(P9_TWRITE, "Twrite");
		N(P9_RWRITE, "Rwrite");
		N(P9_TCLUNK, "Tclunk");
		N(P9_RCLUNK, "Rclunk");
		N(P9_TREMOVE, "Tremove");
		N(P9_RREMOVE, "Rremove");
		N(P9_TSTAT, "Tstat");
		N(P9_RSTAT, "Rstat");
		N(P9_TWSTAT, "Twstat");
		N(P9_RWSTAT, "Rwstat");
#undef N
	}
	return NULL;
}

int p9_peek_header(const uint8_t *buf, size_t len, uint32_t *size,
		   uint8_t *type, uint16_t *tag)
{
	struct p9_rd r = { .p = buf, .left = len };
	uint32_t sz;
	uint8_t ty;
	uint16_t tg;

	if (!buf || len < P9_HDR_SIZE)
		return -EPROTO;
	sz = rd_u32(&r);
	ty = rd_u8(&r);
	tg = rd_u16(&r);
	if (size)
		*size = sz;
	if (type)
		*type = ty;
	if (tag)
		*tag = tg;
	return 0;
}

static void rd_attr(struct p9_rd *r, struct p9_attr *a)
{
	a->valid = rd_u64(r);
	a->qid = rd_qid(r);
	a->mode = rd_u32(r);
	a->uid = rd_u32(r);
	a->gid = rd_u32(r);
	a->nlink = rd_u64(r);
	a->rdev = rd_u64(r);
	a->size = rd_u64(r);
	a->blksize = rd_u64(r);
	a->blocks = rd_u64(r);
	a->atime_sec = rd_u64(r);
	a->atime_nsec = rd_u64(r);
	a->mtime_sec = rd_u64(r);
	a->mtime_nsec = rd_u64(r);
	a->ctime_sec = rd_u64(r);
	a->ctime_nsec = rd_u64(r);
	a->btime_sec = rd_u64(r);
	a->btime_nsec = rd_u64(r);
	a->gen = rd_u64(r);
	a->data_version = rd_u64(r);
}

static void wr_attr(struct p9_wr *w, const struct p9_attr *a)
{
	wr_u64(w, a->valid);
	wr_qid(w, &a->qid);
	wr_u32(w, a->mode);
	wr_u32(w, a->uid);
	wr_u32(w, a->gid);
	wr_u64(w, a->nlink);
	wr_u64(w, a->rdev);
	wr_u64(w, a->size);
	wr_u64(w, a->blksize);
	wr_u64(w, a->blocks);
	wr_u64(w, a->atime_sec);
	wr_u64(w, a->atime_nsec);
	wr_u64(w, a->mtime_sec);
	wr_u64(w, a->mtime_nsec);
	wr_u64(w, a->ctime_sec);
	wr_u64(w, a->ctime_nsec);
	wr_u64(w, a->btime_sec);
	wr_u64(w, a->btime_nsec);
	wr_u64(w, a->gen);
	wr_u64(w, a->data_version);
}

static void rd_statfs(struct p9_rd *r, struct p9_statfs *s)
{
	s->type = rd_u32(r);
	s->bsize = rd_u32(r);
	s->blocks = rd_u64(r);
	s->bfree = rd_u64(r);
	s->bavail = rd_u64(r);
	s->files = rd_u64(r);
	s->ffree = rd_u64(r);
	s->fsid = rd_u64(r);
	s->namelen = rd_u32(r);
}

static void wr_statfs(struct p9_wr *w, const struct p9_statfs *s)
{
	wr_u32(w, s->type);
	wr_u32(w, s->bsize);
	wr_u64(w, s->blocks);
	wr_u64(w, s->bfree);
	wr_u64(w, s->bavail);
	wr_u64(w, s->files);
	wr_u64(w, s->ffree);
	wr_u64(w, s->fsid);
	wr_u32(w, s->namelen);
}

/* Body codec of one message. Returns -EOPNOTSUPP for types outside the
 * subset; truncation is reported through r->bad by the caller. */
static int decode_body(struct p9_rd *r, struct p9_msg *m)
{
	uint16_t i;

	switch ((enum p9_msg_type)m->type) {
	case P9_TVERSION:
	case P9_RVERSION:
		m->u.version.msize = rd_u32(r);
		m->u.version.version = rd_str(r);
		return 0;
	case P9_TATTACH:
		m->u.tattach.fid = rd_u32(r);
		m->u.tattach.afid = rd_u32(r);
		m->u.tattach.uname = rd_str(r);
		m->u.tattach.aname = rd_str(r);
		m->u.tattach.n_uname = rd_u32(r);
		return 0;
	case P9_RATTACH:
		m->u.rattach.qid = rd_qid(r);
		return 0;
	case P9_TWALK:
		m->u.twalk.fid = rd_u32(r);
		m->u.twalk.newfid = rd_u32(r);
		m->u.twalk.nwname = rd_u16(r);
		if (m->u.twalk.nwname > P9_MAX_WELEM) {
			r->bad = true;
			return 0;
		}
		for (i = 0; i < m->u.twalk.nwname; i++)
			m->u.twalk.wname[i] = rd_str(r);
		return 0;
	case P9_RWALK:
		m->u.rwalk.nwqid = rd_u16(r);
		if (m->u.rwalk.nwqid > P9_MAX_WELEM) {
			r->bad = true;
			return 0;
		}
		for (i = 0; i < m->u.rwalk.nwqid; i++)
			m->u.rwalk.wqid[i] = rd_qid(r);
		return 0;
	case P9_TLOPEN:
		m->u.tlopen.fid = rd_u32(r);
		m->u.tlopen.flags = rd_u32(r);
		return 0;
	case P9_RLOPEN:
		m->u.rlopen.qid = rd_qid(r);
		m->u.rlopen.iounit = rd_u32(r);
		return 0;
	case P9_TGETATTR:
		m->u.tgetattr.fid = rd_u32(r);
		m->u.tgetattr.request_mask = rd_u64(r);
		return 0;
	case P9_RGETATTR:
		rd_attr(r, &m->u.rgetattr);
		return 0;
	case P9_TREADDIR:
		m->u.treaddir.fid = rd_u32(r);
		m->u.treaddir.offset = rd_u64(r);
		m->u.treaddir.count = rd_u32(r);
		return 0;
	case P9_RREADDIR:
		m->u.rreaddir.count = rd_u32(r);
		m->u.rreaddir.data = rd_bytes(r, m->u.rreaddir.count);
		return 0;
	case P9_TREADLINK:
	case P9_TSTATFS:
	case P9_TCLUNK:
		m->u.fid.fid = rd_u32(r);
		return 0;
	case P9_RREADLINK:
		m->u.rreadlink.target = rd_str(r);
		return 0;
	case P9_RSTATFS:
		rd_statfs(r, &m->u.rstatfs);
		return 0;
	case P9_RLERROR:
		m->u.rlerror.ecode = rd_u32(r);
		return 0;
	case P9_RCLUNK:
		return 0;
	case P9_TLCREATE:
		m->u.tcreate.dfid = rd_u32(r);
		m->u.tcreate.name = rd_str(r);
		m->u.tcreate.flags = rd_u32(r);
		m->u.tcreate.mode = rd_u32(r);
		m->u.tcreate.gid = rd_u32(r);
		return 0;
	case P9_TMKDIR:
		m->u.tcreate.dfid = rd_u32(r);
		m->u.tcreate.name = rd_str(r);
		m->u.tcreate.mode = rd_u32(r);
		m->u.tcreate.gid = rd_u32(r);
		return 0;
	case P9_TSYMLINK:
		m->u.tcreate.dfid = rd_u32(r);
		m->u.tcreate.name = rd_str(r);
		m->u.tcreate.target = rd_str(r);
		m->u.tcreate.gid = rd_u32(r);
		return 0;
	case P9_TMKNOD:
		m->u.tcreate.dfid = rd_u32(r);
		m->u.tcreate.name = rd_str(r);
		m->u.tcreate.mode = rd_u32(r);
		m->u.tcreate.major = rd_u32(r);
		m->u.tcreate.minor = rd_u32(r);
		m->u.tcreate.gid = rd_u32(r);
		return 0;
	case P9_RLCREATE:
		m->u.rlopen.qid = rd_qid(r);
		m->u.rlopen.iounit = rd_u32(r);
		return 0;
	case P9_RMKDIR:
	case P9_RSYMLINK:
	case P9_RMKNOD:
		m->u.rattach.qid = rd_qid(r);
		return 0;
	case P9_TSETATTR:
		m->u.tsetattr.fid = rd_u32(r);
		m->u.tsetattr.valid = rd_u32(r);
		m->u.tsetattr.mode = rd_u32(r);
		m->u.tsetattr.uid = rd_u32(r);
		m->u.tsetattr.gid = rd_u32(r);
		m->u.tsetattr.size = rd_u64(r);
		m->u.tsetattr.atime_sec = rd_u64(r);
		m->u.tsetattr.atime_nsec = rd_u64(r);
		m->u.tsetattr.mtime_sec = rd_u64(r);
		m->u.tsetattr.mtime_nsec = rd_u64(r);
		return 0;
	case P9_TFSYNC:
		m->u.tfsync.fid = rd_u32(r);
		m->u.tfsync.datasync = rd_u32(r);
		return 0;
	case P9_TLINK:
		m->u.tlink.dfid = rd_u32(r);
		m->u.tlink.fid = rd_u32(r);
		m->u.tlink.name = rd_str(r);
		return 0;
	case P9_TRENAMEAT:
		m->u.trenameat.olddfid = rd_u32(r);
		m->u.trenameat.oldname = rd_str(r);
		m->u.trenameat.newdfid = rd_u32(r);
		m->u.trenameat.newname = rd_str(r);
		return 0;
	case P9_TUNLINKAT:
		m->u.tunlinkat.dfid = rd_u32(r);
		m->u.tunlinkat.name = rd_str(r);
		m->u.tunlinkat.flags = rd_u32(r);
		return 0;
	case P9_TXATTRWALK:
		m->u.txattrwalk.fid = rd_u32(r);
		m->u.txattrwalk.newfid = rd_u32(r);
		m->u.txattrwalk.name = rd_str(r);
		return 0;
	case P9_RXATTRWALK:
		m->u.rxattrwalk.size = rd_u64(r);
		return 0;
	case P9_TXATTRCREATE:
		m->u.txattrcreate.fid = rd_u32(r);
		m->u.txattrcreate.name = rd_str(r);
		m->u.txattrcreate.size = rd_u64(r);
		m->u.txattrcreate.flags = rd_u32(r);
		return 0;
	case P9_TREAD:
		m->u.rw.fid = rd_u32(r);
		m->u.rw.offset = rd_u64(r);
		m->u.rw.count = rd_u32(r);
		return 0;
	case P9_TWRITE:
		m->u.rw.fid = rd_u32(r);
		m->u.rw.offset = rd_u64(r);
		m->u.rw.count = rd_u32(r);
		m->u.rw.data = rd_bytes(r, m->u.rw.count);
		return 0;
	case P9_RREAD:
		m->u.rrw.count = rd_u32(r);
		m->u.rrw.data = rd_bytes(r, m->u.rrw.count);
		return 0;
	case P9_RWRITE:
		m->u.rrw.count = rd_u32(r);
		return 0;
	case P9_RXATTRCREATE:
		return 0;
	case P9_RSETATTR:
	case P9_RFSYNC:
	case P9_RLINK:
	case P9_RRENAMEAT:
	case P9_RUNLINKAT:
		return 0;
	case P9_TLERROR:
	case P9_TRENAME:
	case P9_RRENAME:
	case P9_TLOCK:
	case P9_RLOCK:
	case P9_TGETLOCK:
	case P9_RGETLOCK:
	case P9_TAUTH:
	case P9_RAUTH:
	case P9_TERROR:
	case P9_RERROR:
	case P9_TFLUSH:
	case P9_RFLUSH:
	case P9_TOPEN:
	case P9_ROPEN:
	case P9_TCREATE:
	case P9_RCREATE:
	case P9_TREMOVE:
	case P9_RREMOVE:
	case P9_TSTAT:
	case P9_RSTAT:
	case P9_TWSTAT:
	case P9_RWSTAT:
		break;
	}
	return -EOPNOTSUPP;
}

int p9_decode(const uint8_t *buf, size_t len, struct p9_msg *m)
{
	struct p9_rd r;
	uint32_t size;
	int ret;

	memset(m, 0, sizeof(*m));
	if (p9_peek_header(buf, len, &size, &m->type, &m->tag) < 0)
		return -EPROTO;
	if (size != len)
		return -EPROTO;
	r.p = buf + P9_HDR_SIZE;
	r.left = len - P9_HDR_SIZE;
	r.bad = false;
	ret = decode_body(&r, m);
	if (ret < 0)
		return ret;
	if (r.bad || r.left != 0)
		return -EPROTO;
	return 0;
}

static int encode_body(struct p9_wr *w, const struct p9_msg *m)
{
	uint16_t i;

	switch ((enum p9_msg_type)m->type) {
	case P9_TVERSION:
	case P9_RVERSION:
		wr_u32(w, m->u.version.msize);
		wr_str(w, &m->u.version.version);
		return 0;
	case P9_TATTACH:
		wr_u32(w, m->u.tattach.fid);
		wr_u32(w, m->u.tattach.afid);
		wr_str(w, &m->u.tattach.uname);
		wr_str(w, &m->u.tattach.aname);
		wr_u32(w, m->u.tattach.n_uname);
		return 0;
	case P9_RATTACH:
		wr_qid(w, &m->u.rattach.qid);
		return 0;
	case P9_TWALK:
		if (m->u.twalk.nwname > P9_MAX_WELEM)
			return -EINVAL;
		wr_u32(w, m->u.twalk.fid);
		wr_u32(w, m->u.twalk.newfid);
		wr_u16(w, m->u.twalk.nwname);
		for (i = 0; i < m->u.twalk.nwname; i++)
			wr_str(w, &m->u.twalk.wname[i]);
		return 0;
	case P9_RWALK:
		if (m->u.rwalk.nwqid > P9_MAX_WELEM)
			return -EINVAL;
		wr_u16(w, m->u.rwalk.nwqid);
		for (i = 0; i < m->u.rwalk.nwqid; i++)
			wr_qid(w, &m->u.rwalk.wqid[i]);
		return 0;
	case P9_TLOPEN:
		wr_u32(w, m->u.tlopen.fid);
		wr_u32(w, m->u.tlopen.flags);
		return 0;
	case P9_RLOPEN:
		wr_qid(w, &m->u.rlopen.qid);
		wr_u32(w, m->u.rlopen.iounit);
		return 0;
	case P9_TGETATTR:
		wr_u32(w, m->u.tgetattr.fid);
		wr_u64(w, m->u.tgetattr.request_mask);
		return 0;
	case P9_RGETATTR:
		wr_attr(w, &m->u.rgetattr);
		return 0;
	case P9_TREADDIR:
		wr_u32(w, m->u.treaddir.fid);
		wr_u64(w, m->u.treaddir.offset);
		wr_u32(w, m->u.treaddir.count);
		return 0;
	case P9_RREADDIR:
		if (m->u.rreaddir.count && !m->u.rreaddir.data)
			return -EINVAL;
		wr_u32(w, m->u.rreaddir.count);
		wr_bytes(w, m->u.rreaddir.data, m->u.rreaddir.count);
		return 0;
	case P9_TREADLINK:
	case P9_TSTATFS:
	case P9_TCLUNK:
		wr_u32(w, m->u.fid.fid);
		return 0;
	case P9_RREADLINK:
		wr_str(w, &m->u.rreadlink.target);
		return 0;
	case P9_RSTATFS:
		wr_statfs(w, &m->u.rstatfs);
		return 0;
	case P9_RLERROR:
		wr_u32(w, m->u.rlerror.ecode);
		return 0;
	case P9_RCLUNK:
		return 0;
	case P9_TLCREATE:
		wr_u32(w, m->u.tcreate.dfid);
		wr_str(w, &m->u.tcreate.name);
		wr_u32(w, m->u.tcreate.flags);
		wr_u32(w, m->u.tcreate.mode);
		wr_u32(w, m->u.tcreate.gid);
		return 0;
	case P9_TMKDIR:
		wr_u32(w, m->u.tcreate.dfid);
		wr_str(w, &m->u.tcreate.name);
		wr_u32(w, m->u.tcreate.mode);
		wr_u32(w, m->u.tcreate.gid);
		return 0;
	case P9_TSYMLINK:
		wr_u32(w, m->u.tcreate.dfid);
		wr_str(w, &m->u.tcreate.name);
		wr_str(w, &m->u.tcreate.target);
		wr_u32(w, m->u.tcreate.gid);
		return 0;
	case P9_TMKNOD:
		wr_u32(w, m->u.tcreate.dfid);
		wr_str(w, &m->u.tcreate.name);
		wr_u32(w, m->u.tcreate.mode);
		wr_u32(w, m->u.tcreate.major);
		wr_u32(w, m->u.tcreate.minor);
		wr_u32(w, m->u.tcreate.gid);
		return 0;
	case P9_RLCREATE:
		wr_qid(w, &m->u.rlopen.qid);
		wr_u32(w, m->u.rlopen.iounit);
		return 0;
	case P9_RMKDIR:
	case P9_RSYMLINK:
	case P9_RMKNOD:
		wr_qid(w, &m->u.rattach.qid);
		return 0;
	case P9_TSETATTR:
		wr_u32(w, m->u.tsetattr.fid);
		wr_u32(w, m->u.tsetattr.valid);
		wr_u32(w, m->u.tsetattr.mode);
		wr_u32(w, m->u.tsetattr.uid);
		wr_u32(w, m->u.tsetattr.gid);
		wr_u64(w, m->u.tsetattr.size);
		wr_u64(w, m->u.tsetattr.atime_sec);
		wr_u64(w, m->u.tsetattr.atime_nsec);
		wr_u64(w, m->u.tsetattr.mtime_sec);
		wr_u64(w, m->u.tsetattr.mtime_nsec);
		return 0;
	case P9_TFSYNC:
		wr_u32(w, m->u.tfsync.fid);
		wr_u32(w, m->u.tfsync.datasync);
		return 0;
	case P9_TLINK:
		wr_u32(w, m->u.tlink.dfid);
		wr_u32(w, m->u.tlink.fid);
		wr_str(w, &m->u.tlink.name);
		return 0;
	case P9_TRENAMEAT:
		wr_u32(w, m->u.trenameat.olddfid);
		wr_str(w, &m->u.trenameat.oldname);
		wr_u32(w, m->u.trenameat.newdfid);
		wr_str(w, &m->u.trenameat.newname);
		return 0;
	case P9_TUNLINKAT:
		wr_u32(w, m->u.tunlinkat.dfid);
		wr_str(w, &m->u.tunlinkat.name);
		wr_u32(w, m->u.tunlinkat.flags);
		return 0;
	case P9_TXATTRWALK:
		wr_u32(w, m->u.txattrwalk.fid);
		wr_u32(w, m->u.txattrwalk.newfid);
		wr_str(w, &m->u.txattrwalk.name);
		return 0;
	case P9_RXATTRWALK:
		wr_u64(w, m->u.rxattrwalk.size);
		return 0;
	case P9_TXATTRCREATE:
		wr_u32(w, m->u.txattrcreate.fid);
		wr_str(w, &m->u.txattrcreate.name);
		wr_u64(w, m->u.txattrcreate.size);
		wr_u32(w, m->u.txattrcreate.flags);
		return 0;
	case P9_TREAD:
		wr_u32(w, m->u.rw.fid);
		wr_u64(w, m->u.rw.offset);
		wr_u32(w, m->u.rw.count);
		return 0;
	case P9_TWRITE:
		if (m->u.rw.count && !m->u.rw.data)
			return -EINVAL;
		wr_u32(w, m->u.rw.fid);
		wr_u64(w, m->u.rw.offset);
		wr_u32(w, m->u.rw.count);
		wr_bytes(w, m->u.rw.data, m->u.rw.count);
		return 0;
	case P9_RREAD:
		if (m->u.rrw.count && !m->u.rrw.data)
			return -EINVAL;
		wr_u32(w, m->u.rrw.count);
		wr_bytes(w, m->u.rrw.data, m->u.rrw.count);
		return 0;
	case P9_RWRITE:
		wr_u32(w, m->u.rrw.count);
		return 0;
	case P9_RXATTRCREATE:
		return 0;
	case P9_RSETATTR:
	case P9_RFSYNC:
	case P9_RLINK:
	case P9_RRENAMEAT:
	case P9_RUNLINKAT:
		return 0;
	case P9_TLERROR:
	case P9_TRENAME:
	case P9_RRENAME:
	case P9_TLOCK:
	case P9_RLOCK:
	case P9_TGETLOCK:
	case P9_RGETLOCK:
	case P9_TAUTH:
	case P9_RAUTH:
	case P9_TERROR:
	case P9_RERROR:
	case P9_TFLUSH:
	case P9_RFLUSH:
	case P9_TOPEN:
	case P9_ROPEN:
	case P9_TCREATE:
	case P9_RCREATE:
	case P9_TREMOVE:
	case P9_RREMOVE:
	case P9_TSTAT:
	case P9_RSTAT:
	case P9_TWSTAT:
	case P9_RWSTAT:
		break;
	}
	return -EINVAL;
}

int p9_encode(const struct p9_msg *m, uint8_t *buf, size_t cap, size_t *len)
{
	struct p9_wr w = { .p = buf, .cap = cap };
	int ret;

	/* A message larger than 4 GiB cannot carry its size field. */
	if (cap > UINT32_MAX)
		w.cap = UINT32_MAX;
	wr_u32(&w, 0); /* size, patched below */
	wr_u8(&w, m->type);
	wr_u16(&w, m->tag);
	ret = encode_body(&w, m);
	if (ret < 0)
		return ret;
	if (w.bad)
		return -EMSGSIZE;
	buf[0] = (uint8_t)w.pos;
	buf[1] = (uint8_t)(w.pos >> 8);
	buf[2] = (uint8_t)(w.pos >> 16);
	buf[3] = (uint8_t)(w.pos >> 24);
	*len = w.pos;
	return 0;
}

/* ---- Rreaddir entries --------------------------------------------------- */

int p9_dirent_put(uint8_t *buf, size_t cap, size_t *pos,
		  const struct p9_qid *qid, uint64_t off, uint8_t type,
		  const char *name, size_t namelen)
{
	struct p9_wr w = { .p = buf, .cap = cap, .pos = *pos };
	struct p9_str s = { .s = name, .len = (uint16_t)namelen };

	if (namelen > UINT16_MAX)
		return -ENAMETOOLONG;
	if (*pos > cap)
		return -EMSGSIZE;
	wr_qid(&w, qid);
	wr_u64(&w, off);
	wr_u8(&w, type);
	wr_str(&w, &s);
	if (w.bad)
		return -EMSGSIZE;
	*pos = w.pos;
	return 0;
}

int p9_dirent_get(const uint8_t *buf, size_t len, size_t *pos,
		  struct p9_qid *qid, uint64_t *off, uint8_t *type,
		  struct p9_str *name)
{
	struct p9_rd r;
	struct p9_qid q;
	uint64_t o;
	uint8_t t;
	struct p9_str s;

	if (*pos > len)
		return -EPROTO;
	if (*pos == len)
		return 0;
	r.p = buf + *pos;
	r.left = len - *pos;
	r.bad = false;
	q = rd_qid(&r);
	o = rd_u64(&r);
	t = rd_u8(&r);
	s = rd_str(&r);
	if (r.bad)
		return -EPROTO;
	if (qid)
		*qid = q;
	if (off)
		*off = o;
	if (type)
		*type = t;
	if (name)
		*name = s;
	*pos = len - r.left;
	return 1;
}
