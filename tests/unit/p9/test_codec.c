/* tests/unit/p9/test_codec.c: prot/p9.c round trips and malformed input. */
#include <criterion/criterion.h>

#include <fcntl.h>
#include <string.h>

#include "prot/p9.h"
#include "tests/unit/p9/p9_test.h"

static int codec_fds;

static void codec_setup(void)
{
	codec_fds = p9t_count_fds();
}

static void codec_end(void)
{
	cr_assert_eq(p9t_count_fds(), codec_fds, "fd leak: %d -> %d", codec_fds,
		     p9t_count_fds());
}

TestSuite(p9_codec, .init = codec_setup);
#define T(name) P9T_TEST(p9_codec, name, codec_end)

static const uint8_t dirents[] = { 1, 2, 3, 4, 5, 6, 7, 8, 9 };

static struct p9_qid qid(uint8_t type, uint32_t v, uint64_t path)
{
	struct p9_qid q = { .type = type, .version = v, .path = path };
	return q;
}

/* One instance of every message of the subset, with distinctive values. */
static size_t samples(struct p9_msg *m)
{
	size_t n = 0;

	memset(m, 0, sizeof(*m) * 64);
	m[n].type = P9_TVERSION;
	m[n].tag = P9_NOTAG;
	m[n].u.version.msize = 8192;
	p9_str_set(&m[n++].u.version.version, "9P2000.L");

	m[n].type = P9_RVERSION;
	m[n].u.version.msize = 4096;
	p9_str_set(&m[n++].u.version.version, "9P2000.L");

	m[n].type = P9_TATTACH;
	m[n].tag = 7;
	m[n].u.tattach.fid = 1;
	m[n].u.tattach.afid = P9_NOFID;
	p9_str_set(&m[n].u.tattach.uname, "moat");
	p9_str_set(&m[n].u.tattach.aname, "/");
	m[n++].u.tattach.n_uname = 1000;

	m[n].type = P9_RATTACH;
	m[n++].u.rattach.qid = qid(P9_QTDIR, 3, 0x1122334455667788ull);

	m[n].type = P9_TWALK;
	m[n].u.twalk.fid = 1;
	m[n].u.twalk.newfid = 2;
	m[n].u.twalk.nwname = 3;
	p9_str_set(&m[n].u.twalk.wname[0], "usr");
	p9_str_set(&m[n].u.twalk.wname[1], "lib");
	p9_str_set(&m[n++].u.twalk.wname[2], "libc.so.6");

	m[n].type = P9_TWALK; /* clone form */
	m[n].u.twalk.fid = 1;
	m[n++].u.twalk.newfid = 9;

	m[n].type = P9_RWALK;
	m[n].u.rwalk.nwqid = 2;
	m[n].u.rwalk.wqid[0] = qid(P9_QTDIR, 0, 10);
	m[n++].u.rwalk.wqid[1] = qid(P9_QTSYMLINK, 1, 11);

	m[n].type = P9_TLOPEN;
	m[n].u.tlopen.fid = 5;
	m[n++].u.tlopen.flags = P9_DOTL_DIRECTORY | P9_DOTL_NOFOLLOW;

	m[n].type = P9_RLOPEN;
	m[n].u.rlopen.qid = qid(P9_QTFILE, 0, 42);
	m[n++].u.rlopen.iounit = 65536;

	m[n].type = P9_TGETATTR;
	m[n].u.tgetattr.fid = 5;
	m[n++].u.tgetattr.request_mask = P9_GETATTR_ALL;

	m[n].type = P9_RGETATTR;
	m[n].u.rgetattr.valid = P9_GETATTR_BASIC;
	m[n].u.rgetattr.qid = qid(P9_QTFILE, 1, 2);
	m[n].u.rgetattr.mode = 0100644;
	m[n].u.rgetattr.uid = 1000;
	m[n].u.rgetattr.gid = 1001;
	m[n].u.rgetattr.nlink = 3;
	m[n].u.rgetattr.rdev = 0x0801;
	m[n].u.rgetattr.size = 1ull << 40;
	m[n].u.rgetattr.blksize = 4096;
	m[n].u.rgetattr.blocks = 8;
	m[n].u.rgetattr.atime_sec = 1700000000;
	m[n].u.rgetattr.atime_nsec = 1;
	m[n].u.rgetattr.mtime_sec = 1700000001;
	m[n].u.rgetattr.mtime_nsec = 2;
	m[n].u.rgetattr.ctime_sec = 1700000002;
	m[n].u.rgetattr.ctime_nsec = 3;
	m[n].u.rgetattr.btime_sec = 1700000003;
	m[n].u.rgetattr.btime_nsec = 4;
	m[n].u.rgetattr.gen = 5;
	m[n++].u.rgetattr.data_version = 6;

	m[n].type = P9_TREADDIR;
	m[n].u.treaddir.fid = 3;
	m[n].u.treaddir.offset = 0xfedcba9876543210ull;
	m[n++].u.treaddir.count = 8000;

	m[n].type = P9_RREADDIR;
	m[n].u.rreaddir.count = sizeof(dirents);
	m[n++].u.rreaddir.data = dirents;

	m[n].type = P9_TREADLINK;
	m[n++].u.fid.fid = 77;

	m[n].type = P9_RREADLINK;
	p9_str_set(&m[n++].u.rreadlink.target, "/etc/passwd");

	m[n].type = P9_TSTATFS;
	m[n++].u.fid.fid = 78;

	m[n].type = P9_RSTATFS;
	m[n].u.rstatfs.type = 0xef53;
	m[n].u.rstatfs.bsize = 4096;
	m[n].u.rstatfs.blocks = 1000;
	m[n].u.rstatfs.bfree = 500;
	m[n].u.rstatfs.bavail = 400;
	m[n].u.rstatfs.files = 300;
	m[n].u.rstatfs.ffree = 200;
	m[n].u.rstatfs.fsid = 0xabcdef0123456789ull;
	m[n++].u.rstatfs.namelen = 255;

	m[n].type = P9_TCLUNK;
	m[n++].u.fid.fid = 79;

	m[n].type = P9_RCLUNK;
	m[n++].tag = 0x1234;

	m[n].type = P9_RLERROR;
	m[n++].u.rlerror.ecode = ENOENT;

	/* the write side */
	m[n].type = P9_TLCREATE;
	m[n].u.tcreate.dfid = 4;
	p9_str_set(&m[n].u.tcreate.name, "new.txt");
	m[n].u.tcreate.flags = P9_DOTL_RDWR | P9_DOTL_EXCL;
	m[n].u.tcreate.mode = 0644;
	m[n++].u.tcreate.gid = 1000;

	m[n].type = P9_RLCREATE;
	m[n].u.rlopen.qid = qid(P9_QTFILE, 0, 43);
	m[n++].u.rlopen.iounit = 0;

	m[n].type = P9_TMKDIR;
	m[n].u.tcreate.dfid = 4;
	p9_str_set(&m[n].u.tcreate.name, "sub");
	m[n].u.tcreate.mode = 0755;
	m[n++].u.tcreate.gid = 7;

	m[n].type = P9_RMKDIR;
	m[n++].u.rattach.qid = qid(P9_QTDIR, 0, 44);

	m[n].type = P9_TSYMLINK;
	m[n].u.tcreate.dfid = 4;
	p9_str_set(&m[n].u.tcreate.name, "ln");
	p9_str_set(&m[n].u.tcreate.target, "../x/y");
	m[n++].u.tcreate.gid = 8;

	m[n].type = P9_RSYMLINK;
	m[n++].u.rattach.qid = qid(P9_QTSYMLINK, 0, 45);

	m[n].type = P9_TMKNOD;
	m[n].u.tcreate.dfid = 4;
	p9_str_set(&m[n].u.tcreate.name, "fifo");
	m[n].u.tcreate.mode = 010600;
	m[n].u.tcreate.major = 1;
	m[n].u.tcreate.minor = 2;
	m[n++].u.tcreate.gid = 9;

	m[n].type = P9_RMKNOD;
	m[n++].u.rattach.qid = qid(P9_QTFILE, 0, 46);

	m[n].type = P9_TSETATTR;
	m[n].u.tsetattr.fid = 6;
	m[n].u.tsetattr.valid = P9_SETATTR_MODE | P9_SETATTR_SIZE;
	m[n].u.tsetattr.mode = 0600;
	m[n].u.tsetattr.uid = 1;
	m[n].u.tsetattr.gid = 2;
	m[n].u.tsetattr.size = 1ull << 33;
	m[n].u.tsetattr.atime_sec = 3;
	m[n].u.tsetattr.atime_nsec = 4;
	m[n].u.tsetattr.mtime_sec = 5;
	m[n++].u.tsetattr.mtime_nsec = 6;

	m[n].type = P9_TFSYNC;
	m[n].u.tfsync.fid = 6;
	m[n++].u.tfsync.datasync = 1;

	m[n].type = P9_TLINK;
	m[n].u.tlink.dfid = 4;
	m[n].u.tlink.fid = 6;
	p9_str_set(&m[n++].u.tlink.name, "hard");

	m[n].type = P9_TRENAMEAT;
	m[n].u.trenameat.olddfid = 4;
	p9_str_set(&m[n].u.trenameat.oldname, "a");
	m[n].u.trenameat.newdfid = 5;
	p9_str_set(&m[n++].u.trenameat.newname, "bb");

	m[n].type = P9_TUNLINKAT;
	m[n].u.tunlinkat.dfid = 4;
	p9_str_set(&m[n].u.tunlinkat.name, "sub");
	m[n++].u.tunlinkat.flags = 0x200;

	m[n++].type = P9_RSETATTR;
	m[n++].type = P9_RFSYNC;
	m[n++].type = P9_RLINK;
	m[n++].type = P9_RRENAMEAT;
	m[n++].type = P9_RUNLINKAT;

	m[n].type = P9_TXATTRWALK;
	m[n].u.txattrwalk.fid = 3;
	m[n].u.txattrwalk.newfid = 4;
	p9_str_set(&m[n++].u.txattrwalk.name, "user.x");
	m[n].type = P9_RXATTRWALK;
	m[n++].u.rxattrwalk.size = 12;
	m[n].type = P9_TXATTRCREATE;
	m[n].u.txattrcreate.fid = 3;
	p9_str_set(&m[n].u.txattrcreate.name, "user.y");
	m[n].u.txattrcreate.size = 5;
	m[n++].u.txattrcreate.flags = 1;
	m[n++].type = P9_RXATTRCREATE;
	m[n].type = P9_TREAD;
	m[n].u.rw.fid = 4;
	m[n].u.rw.offset = 2;
	m[n++].u.rw.count = 10;
	m[n].type = P9_RREAD;
	m[n].u.rrw.count = 3;
	m[n++].u.rrw.data = (const uint8_t *)"abc";
	m[n].type = P9_TWRITE;
	m[n].u.rw.fid = 4;
	m[n].u.rw.offset = 0;
	m[n].u.rw.count = 2;
	m[n++].u.rw.data = (const uint8_t *)"de";
	m[n].type = P9_RWRITE;
	m[n++].u.rrw.count = 2;
	cr_assert_leq(n, 64);
	return n;
}

static void assert_str_eq(const struct p9_str *a, const struct p9_str *b)
{
	cr_assert_eq(a->len, b->len);
	cr_assert(memcmp(a->s, b->s, a->len) == 0);
}

static void assert_qid_eq(const struct p9_qid *a, const struct p9_qid *b)
{
	cr_assert_eq(a->type, b->type);
	cr_assert_eq(a->version, b->version);
	cr_assert_eq(a->path, b->path);
}

static void assert_msg_eq(const struct p9_msg *a, const struct p9_msg *b)
{
	uint16_t i;

	cr_assert_eq(a->type, b->type);
	cr_assert_eq(a->tag, b->tag);
	switch (a->type) {
	case P9_TVERSION:
	case P9_RVERSION:
		cr_assert_eq(a->u.version.msize, b->u.version.msize);
		assert_str_eq(&a->u.version.version, &b->u.version.version);
		break;
	case P9_TATTACH:
		cr_assert_eq(a->u.tattach.fid, b->u.tattach.fid);
		cr_assert_eq(a->u.tattach.afid, b->u.tattach.afid);
		assert_str_eq(&a->u.tattach.uname, &b->u.tattach.uname);
		assert_str_eq(&a->u.tattach.aname, &b->u.tattach.aname);
		cr_assert_eq(a->u.tattach.n_uname, b->u.tattach.n_uname);
		break;
	case P9_RATTACH:
		assert_qid_eq(&a->u.rattach.qid, &b->u.rattach.qid);
		break;
	case P9_TWALK:
		cr_assert_eq(a->u.twalk.fid, b->u.twalk.fid);
		cr_assert_eq(a->u.twalk.newfid, b->u.twalk.newfid);
		cr_assert_eq(a->u.twalk.nwname, b->u.twalk.nwname);
		for (i = 0; i < a->u.twalk.nwname; i++)
			assert_str_eq(&a->u.twalk.wname[i],
				      &b->u.twalk.wname[i]);
		break;
	case P9_RWALK:
		cr_assert_eq(a->u.rwalk.nwqid, b->u.rwalk.nwqid);
		for (i = 0; i < a->u.rwalk.nwqid; i++)
			assert_qid_eq(&a->u.rwalk.wqid[i], &b->u.rwalk.wqid[i]);
		break;
	case P9_TLOPEN:
		cr_assert_eq(a->u.tlopen.fid, b->u.tlopen.fid);
		cr_assert_eq(a->u.tlopen.flags, b->u.tlopen.flags);
		break;
	case P9_RLOPEN:
		assert_qid_eq(&a->u.rlopen.qid, &b->u.rlopen.qid);
		cr_assert_eq(a->u.rlopen.iounit, b->u.rlopen.iounit);
		break;
	case P9_TGETATTR:
		cr_assert_eq(a->u.tgetattr.fid, b->u.tgetattr.fid);
		cr_assert_eq(a->u.tgetattr.request_mask,
			     b->u.tgetattr.request_mask);
		break;
	case P9_RGETATTR:
		assert_qid_eq(&a->u.rgetattr.qid, &b->u.rgetattr.qid);
		cr_assert_eq(a->u.rgetattr.valid, b->u.rgetattr.valid);
		cr_assert_eq(a->u.rgetattr.mode, b->u.rgetattr.mode);
		cr_assert_eq(a->u.rgetattr.uid, b->u.rgetattr.uid);
		cr_assert_eq(a->u.rgetattr.gid, b->u.rgetattr.gid);
		cr_assert_eq(a->u.rgetattr.nlink, b->u.rgetattr.nlink);
		cr_assert_eq(a->u.rgetattr.rdev, b->u.rgetattr.rdev);
		cr_assert_eq(a->u.rgetattr.size, b->u.rgetattr.size);
		cr_assert_eq(a->u.rgetattr.blksize, b->u.rgetattr.blksize);
		cr_assert_eq(a->u.rgetattr.blocks, b->u.rgetattr.blocks);
		cr_assert_eq(a->u.rgetattr.atime_sec, b->u.rgetattr.atime_sec);
		cr_assert_eq(a->u.rgetattr.atime_nsec,
			     b->u.rgetattr.atime_nsec);
		cr_assert_eq(a->u.rgetattr.mtime_sec, b->u.rgetattr.mtime_sec);
		cr_assert_eq(a->u.rgetattr.mtime_nsec,
			     b->u.rgetattr.mtime_nsec);
		cr_assert_eq(a->u.rgetattr.ctime_sec, b->u.rgetattr.ctime_sec);
		cr_assert_eq(a->u.rgetattr.ctime_nsec,
			     b->u.rgetattr.ctime_nsec);
		cr_assert_eq(a->u.rgetattr.btime_sec, b->u.rgetattr.btime_sec);
		cr_assert_eq(a->u.rgetattr.btime_nsec,
			     b->u.rgetattr.btime_nsec);
		cr_assert_eq(a->u.rgetattr.gen, b->u.rgetattr.gen);
		cr_assert_eq(a->u.rgetattr.data_version,
			     b->u.rgetattr.data_version);
		break;
	case P9_TREADDIR:
		cr_assert_eq(a->u.treaddir.fid, b->u.treaddir.fid);
		cr_assert_eq(a->u.treaddir.offset, b->u.treaddir.offset);
		cr_assert_eq(a->u.treaddir.count, b->u.treaddir.count);
		break;
	case P9_RREADDIR:
		cr_assert_eq(a->u.rreaddir.count, b->u.rreaddir.count);
		cr_assert(memcmp(a->u.rreaddir.data, b->u.rreaddir.data,
				 a->u.rreaddir.count) == 0);
		break;
	case P9_TREADLINK:
	case P9_TSTATFS:
	case P9_TCLUNK:
		cr_assert_eq(a->u.fid.fid, b->u.fid.fid);
		break;
	case P9_RREADLINK:
		assert_str_eq(&a->u.rreadlink.target, &b->u.rreadlink.target);
		break;
	case P9_RSTATFS:
		cr_assert(memcmp(&a->u.rstatfs, &b->u.rstatfs,
				 sizeof(a->u.rstatfs)) == 0);
		break;
	case P9_RLERROR:
		cr_assert_eq(a->u.rlerror.ecode, b->u.rlerror.ecode);
		break;
	case P9_TXATTRWALK:
		cr_assert_eq(a->u.txattrwalk.fid, b->u.txattrwalk.fid);
		cr_assert_eq(a->u.txattrwalk.newfid, b->u.txattrwalk.newfid);
		assert_str_eq(&a->u.txattrwalk.name, &b->u.txattrwalk.name);
		break;
	case P9_RXATTRWALK:
		cr_assert_eq(a->u.rxattrwalk.size, b->u.rxattrwalk.size);
		break;
	case P9_TXATTRCREATE:
		cr_assert_eq(a->u.txattrcreate.fid, b->u.txattrcreate.fid);
		assert_str_eq(&a->u.txattrcreate.name, &b->u.txattrcreate.name);
		cr_assert_eq(a->u.txattrcreate.size, b->u.txattrcreate.size);
		cr_assert_eq(a->u.txattrcreate.flags, b->u.txattrcreate.flags);
		break;
	case P9_TREAD:
	case P9_TWRITE:
		cr_assert_eq(a->u.rw.fid, b->u.rw.fid);
		cr_assert_eq(a->u.rw.offset, b->u.rw.offset);
		cr_assert_eq(a->u.rw.count, b->u.rw.count);
		if (a->type == P9_TWRITE)
			cr_assert(memcmp(a->u.rw.data, b->u.rw.data,
					 a->u.rw.count) == 0);
		break;
	case P9_RREAD:
		cr_assert_eq(a->u.rrw.count, b->u.rrw.count);
		cr_assert(memcmp(a->u.rrw.data, b->u.rrw.data,
				 a->u.rrw.count) == 0);
		break;
	case P9_RWRITE:
		cr_assert_eq(a->u.rrw.count, b->u.rrw.count);
		break;
	case P9_RXATTRCREATE:
	case P9_RCLUNK:
	case P9_RSETATTR:
	case P9_RFSYNC:
	case P9_RLINK:
	case P9_RRENAMEAT:
	case P9_RUNLINKAT:
		break;
	case P9_TLCREATE:
	case P9_TMKDIR:
	case P9_TSYMLINK:
	case P9_TMKNOD:
		cr_assert_eq(a->u.tcreate.dfid, b->u.tcreate.dfid);
		assert_str_eq(&a->u.tcreate.name, &b->u.tcreate.name);
		if (a->type == P9_TSYMLINK)
			assert_str_eq(&a->u.tcreate.target,
				      &b->u.tcreate.target);
		if (a->type == P9_TLCREATE)
			cr_assert_eq(a->u.tcreate.flags, b->u.tcreate.flags);
		if (a->type != P9_TSYMLINK)
			cr_assert_eq(a->u.tcreate.mode, b->u.tcreate.mode);
		if (a->type == P9_TMKNOD) {
			cr_assert_eq(a->u.tcreate.major, b->u.tcreate.major);
			cr_assert_eq(a->u.tcreate.minor, b->u.tcreate.minor);
		}
		cr_assert_eq(a->u.tcreate.gid, b->u.tcreate.gid);
		break;
	case P9_RLCREATE:
		assert_qid_eq(&a->u.rlopen.qid, &b->u.rlopen.qid);
		cr_assert_eq(a->u.rlopen.iounit, b->u.rlopen.iounit);
		break;
	case P9_RMKDIR:
	case P9_RSYMLINK:
	case P9_RMKNOD:
		assert_qid_eq(&a->u.rattach.qid, &b->u.rattach.qid);
		break;
	case P9_TSETATTR:
		cr_assert(memcmp(&a->u.tsetattr, &b->u.tsetattr,
				 sizeof(a->u.tsetattr)) == 0);
		break;
	case P9_TFSYNC:
		cr_assert_eq(a->u.tfsync.fid, b->u.tfsync.fid);
		cr_assert_eq(a->u.tfsync.datasync, b->u.tfsync.datasync);
		break;
	case P9_TLINK:
		cr_assert_eq(a->u.tlink.dfid, b->u.tlink.dfid);
		cr_assert_eq(a->u.tlink.fid, b->u.tlink.fid);
		assert_str_eq(&a->u.tlink.name, &b->u.tlink.name);
		break;
	case P9_TRENAMEAT:
		cr_assert_eq(a->u.trenameat.olddfid, b->u.trenameat.olddfid);
		assert_str_eq(&a->u.trenameat.oldname, &b->u.trenameat.oldname);
		cr_assert_eq(a->u.trenameat.newdfid, b->u.trenameat.newdfid);
		assert_str_eq(&a->u.trenameat.newname, &b->u.trenameat.newname);
		break;
	case P9_TUNLINKAT:
		cr_assert_eq(a->u.tunlinkat.dfid, b->u.tunlinkat.dfid);
		assert_str_eq(&a->u.tunlinkat.name, &b->u.tunlinkat.name);
		cr_assert_eq(a->u.tunlinkat.flags, b->u.tunlinkat.flags);
		break;
	default:
		cr_assert_fail("unexpected type %u", a->type);
	}
}

T(round_trip_every_message)
{
	struct p9_msg m[64], d;
	uint8_t buf[1024];
	size_t n = samples(m), i, len;
	uint32_t size;
	uint8_t type;
	uint16_t tag;

	for (i = 0; i < n; i++) {
		cr_assert_eq(p9_encode(&m[i], buf, sizeof(buf), &len), 0,
			     "encode %s", p9_type_name(m[i].type));
		cr_assert_eq(p9_peek_header(buf, len, &size, &type, &tag), 0);
		cr_assert_eq(size, len);
		cr_assert_eq(type, m[i].type);
		cr_assert_eq(tag, m[i].tag);
		cr_assert_eq(p9_decode(buf, len, &d), 0, "decode %s",
			     p9_type_name(m[i].type));
		assert_msg_eq(&m[i], &d);
	}
}

T(wire_sizes_match_the_spec)
{
	struct p9_msg m[64];
	uint8_t buf[1024];
	size_t n = samples(m), i, len;

	for (i = 0; i < n; i++) {
		size_t want = 0;

		cr_assert_eq(p9_encode(&m[i], buf, sizeof(buf), &len), 0);
		switch (m[i].type) {
		case P9_RGETATTR:
			want = 7 + 8 + 13 + 3 * 4 + 15 * 8; /* 160 */
			break;
		case P9_RSTATFS:
			want = 7 + 4 + 4 + 6 * 8 + 4;
			break;
		case P9_RLOPEN:
			want = 7 + 13 + 4;
			break;
		case P9_TREADDIR:
			want = 7 + 4 + 8 + 4;
			break;
		case P9_RLERROR:
			want = 7 + 4;
			break;
		case P9_RCLUNK:
			want = 7;
			break;
		case P9_TATTACH:
			want = 7 + 4 + 4 + 2 + 4 + 2 + 1 + 4;
			break;
		case P9_TSETATTR: /* fid valid mode uid gid, 5 x u64 */
			want = 7 + 5 * 4 + 5 * 8;
			break;
		case P9_TLCREATE: /* dfid name[s] flags mode gid */
			want = 7 + 4 + 2 + 7 + 3 * 4;
			break;
		case P9_TRENAMEAT:
			want = 7 + 4 + 2 + 1 + 4 + 2 + 2;
			break;
		case P9_RRENAMEAT:
			want = 7;
			break;
		default:
			continue;
		}
		cr_assert_eq(len, want, "%s: %zu != %zu",
			     p9_type_name(m[i].type), len, want);
	}
}

T(known_bytes_little_endian)
{
	struct p9_msg m = { .type = P9_TCLUNK, .tag = 0x0102 };
	const uint8_t want[] = { 11,   0,    0,	   0,	 120, 0x02,
				 0x01, 0x78, 0x56, 0x34, 0x12 };
	uint8_t buf[32];
	size_t len;

	m.u.fid.fid = 0x12345678;
	cr_assert_eq(p9_encode(&m, buf, sizeof(buf), &len), 0);
	cr_assert_eq(len, sizeof(want));
	cr_assert(memcmp(buf, want, len) == 0);
}

T(every_truncation_is_rejected)
{
	struct p9_msg m[64], d;
	uint8_t buf[1024], cut[1024];
	size_t n = samples(m), i, len, k;

	for (i = 0; i < n; i++) {
		cr_assert_eq(p9_encode(&m[i], buf, sizeof(buf), &len), 0);
		for (k = 0; k < len; k++) {
			/* size field left as is: size != len */
			cr_assert_eq(p9_decode(buf, k, &d), -EPROTO,
				     "%s cut at %zu", p9_type_name(m[i].type),
				     k);
			/* size field patched to the short length: the body
			 * itself is short. Rclunk has no body to cut. */
			if (k < P9_HDR_SIZE)
				continue;
			memcpy(cut, buf, k);
			cut[0] = (uint8_t)k;
			cut[1] = (uint8_t)(k >> 8);
			cut[2] = cut[3] = 0;
			cr_assert_eq(p9_decode(cut, k, &d), -EPROTO,
				     "%s body cut at %zu",
				     p9_type_name(m[i].type), k);
		}
	}
}

T(trailing_bytes_are_rejected)
{
	struct p9_msg m[64], d;
	uint8_t buf[1024];
	size_t n = samples(m), i, len;

	for (i = 0; i < n; i++) {
		cr_assert_eq(p9_encode(&m[i], buf, sizeof(buf), &len), 0);
		buf[len] = 0;
		buf[0] = (uint8_t)(len + 1);
		cr_assert_eq(p9_decode(buf, len + 1, &d), -EPROTO, "%s",
			     p9_type_name(m[i].type));
	}
}

T(encode_never_overflows_cap)
{
	struct p9_msg m[64];
	uint8_t buf[1024];
	size_t n = samples(m), i, len, cap, len2;

	for (i = 0; i < n; i++) {
		cr_assert_eq(p9_encode(&m[i], buf, sizeof(buf), &len), 0);
		for (cap = 0; cap < len; cap++) {
			memset(buf, 0xaa, sizeof(buf));
			cr_assert_eq(p9_encode(&m[i], buf, cap, &len2),
				     -EMSGSIZE);
			cr_assert_eq(buf[cap], 0xaa, "%s wrote past cap %zu",
				     p9_type_name(m[i].type), cap);
		}
	}
}

T(header_too_short)
{
	const uint8_t b[6] = { 6, 0, 0, 0, 120, 0 };
	struct p9_msg d;

	cr_assert_eq(p9_peek_header(b, 6, NULL, NULL, NULL), -EPROTO);
	cr_assert_eq(p9_decode(b, 6, &d), -EPROTO);
	cr_assert_eq(p9_decode(NULL, 0, &d), -EPROTO);
}

T(size_field_mismatch)
{
	uint8_t b[] = { 12, 0, 0, 0, 120, 1, 0, 1, 0, 0, 0 };
	struct p9_msg d;

	cr_assert_eq(p9_decode(b, sizeof(b), &d), -EPROTO);
	b[0] = 0xff;
	b[3] = 0xff;
	cr_assert_eq(p9_decode(b, sizeof(b), &d), -EPROTO);
	/* the tag is still reported, so a server can address its Rlerror */
	cr_assert_eq(d.tag, 1);
}

T(string_longer_than_message)
{
	/* Treadlink is fixed-size; use Rreadlink: target len 0xffff, 3 bytes */
	uint8_t b[] = { 12, 0,	  0,	0,   P9_RREADLINK, 0,
			0,  0xff, 0xff, 'a', 'b',	   'c' };
	struct p9_msg d;

	cr_assert_eq(p9_decode(b, sizeof(b), &d), -EPROTO);
}

T(too_many_walk_names)
{
	uint8_t b[64] = { 0 };
	struct p9_msg d;
	size_t len = 7 + 4 + 4 + 2 + 17 * 2;

	b[0] = (uint8_t)len;
	b[4] = P9_TWALK;
	b[15] = 17; /* nwname, all names empty */
	cr_assert_eq(p9_decode(b, len, &d), -EPROTO);
	b[15] = 16;
	b[0] = (uint8_t)(len - 2);
	cr_assert_eq(p9_decode(b, len - 2, &d), 0);
	cr_assert_eq(d.u.twalk.nwname, 16);
}

T(too_many_walk_qids)
{
	uint8_t b[7 + 2 + 17 * 13] = { 0 };
	struct p9_msg d;

	b[0] = sizeof(b) & 0xff;
	b[1] = sizeof(b) >> 8;
	b[4] = P9_RWALK;
	b[7] = 17;
	cr_assert_eq(p9_decode(b, sizeof(b), &d), -EPROTO);
}

T(encode_rejects_too_many_names)
{
	struct p9_msg m = { .type = P9_TWALK };
	uint8_t buf[512];
	size_t len;

	m.u.twalk.nwname = 17;
	cr_assert_eq(p9_encode(&m, buf, sizeof(buf), &len), -EINVAL);
	m.type = P9_RWALK;
	m.u.rwalk.nwqid = 17;
	cr_assert_eq(p9_encode(&m, buf, sizeof(buf), &len), -EINVAL);
}

T(readdir_count_overruns_message)
{
	uint8_t b[] = { 13,   0,    0,	  0,	P9_RREADDIR, 0, 0,
			0xff, 0xff, 0xff, 0xff, 1,	     2 };
	struct p9_msg d;

	cr_assert_eq(p9_decode(b, sizeof(b), &d), -EPROTO);
	b[7] = 2;
	b[8] = b[9] = b[10] = 0;
	cr_assert_eq(p9_decode(b, sizeof(b), &d), 0);
	cr_assert_eq(d.u.rreaddir.count, 2);
}

T(unsupported_types)
{
	uint8_t b[7] = { 7, 0, 0, 0, P9_TREMOVE, 5, 0 };
	struct p9_msg d, m = { .type = P9_TFLUSH };
	size_t len;

	cr_assert_eq(p9_decode(b, sizeof(b), &d), -EOPNOTSUPP);
	cr_assert_eq(d.type, P9_TREMOVE);
	cr_assert_eq(d.tag, 5);
	b[4] = 250;
	cr_assert_eq(p9_decode(b, sizeof(b), &d), -EOPNOTSUPP);
	cr_assert_eq(p9_encode(&m, b, sizeof(b), &len), -EINVAL);
	cr_assert_null(p9_type_name(250));
	cr_assert_str_eq(p9_type_name(P9_TGETATTR), "Tgetattr");
}

T(dirent_round_trip_and_truncation)
{
	uint8_t buf[256];
	struct p9_qid q = qid(P9_QTDIR, 0, 99), q2;
	struct p9_str name;
	uint64_t off;
	uint8_t type;
	size_t pos = 0, end, k;

	cr_assert_eq(p9_dirent_put(buf, sizeof(buf), &pos, &q, 7, DT_DIR, "etc",
				   3),
		     0);
	cr_assert_eq(pos, p9_dirent_size(3));
	cr_assert_eq(p9_dirent_put(buf, sizeof(buf), &pos, &q, 8, DT_REG,
				   "passwd", 6),
		     0);
	end = pos;
	/* does not fit: unchanged */
	cr_assert_eq(p9_dirent_put(buf, end + 5, &pos, &q, 9, DT_REG, "x", 1),
		     -EMSGSIZE);
	cr_assert_eq(pos, end);

	pos = 0;
	cr_assert_eq(p9_dirent_get(buf, end, &pos, &q2, &off, &type, &name), 1);
	assert_qid_eq(&q, &q2);
	cr_assert_eq(off, 7);
	cr_assert_eq(type, DT_DIR);
	cr_assert(p9_str_eq(&name, "etc"));
	cr_assert_eq(p9_dirent_get(buf, end, &pos, &q2, &off, &type, &name), 1);
	cr_assert(p9_str_eq(&name, "passwd"));
	cr_assert_eq(off, 8);
	cr_assert_eq(p9_dirent_get(buf, end, &pos, &q2, &off, &type, &name), 0);

	for (k = 1; k < p9_dirent_size(3); k++) {
		pos = 0;
		cr_assert_eq(p9_dirent_get(buf, k, &pos, NULL, NULL, NULL,
					   NULL),
			     -EPROTO);
		cr_assert_eq(pos, 0);
	}
	pos = end + 1;
	cr_assert_eq(p9_dirent_get(buf, end, &pos, NULL, NULL, NULL, NULL),
		     -EPROTO);
}

T(names)
{
	struct p9_str s;
	const char nul[] = { 'a', '\0', 'b' };
	char longname[300];

	p9_str_set(&s, "file");
	cr_assert(p9_str_is_name(&s));
	p9_str_set(&s, "...");
	cr_assert(p9_str_is_name(&s));
	p9_str_set(&s, "..");
	cr_assert_not(p9_str_is_name(&s));
	p9_str_set(&s, ".");
	cr_assert_not(p9_str_is_name(&s));
	p9_str_set(&s, "");
	cr_assert_not(p9_str_is_name(&s));
	p9_str_set(&s, "a/b");
	cr_assert_not(p9_str_is_name(&s));
	s.s = nul;
	s.len = sizeof(nul);
	cr_assert_not(p9_str_is_name(&s));
	memset(longname, 'x', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	p9_str_set(&s, longname);
	cr_assert_not(p9_str_is_name(&s));
	longname[255] = '\0';
	p9_str_set(&s, longname);
	cr_assert(p9_str_is_name(&s));
}

T(open_flags)
{
	int f = -1;

	cr_assert_eq(p9_flags_to_dotl(O_RDONLY), P9_DOTL_RDONLY);
	cr_assert_eq(p9_flags_to_dotl(O_WRONLY | O_CREAT | O_TRUNC),
		     P9_DOTL_WRONLY | P9_DOTL_CREATE | P9_DOTL_TRUNC);
	cr_assert_eq(p9_flags_from_dotl(P9_DOTL_DIRECTORY | P9_DOTL_NOFOLLOW,
					&f),
		     0);
	cr_assert_eq(f, O_DIRECTORY | O_NOFOLLOW);
	cr_assert_eq(p9_flags_from_dotl(p9_flags_to_dotl(O_SYNC | O_RDWR), &f),
		     0);
	cr_assert_eq(f, O_SYNC | O_RDWR);
	cr_assert_eq(p9_flags_from_dotl(P9_DOTL_ACCMODE, &f), -EINVAL);
	cr_assert_eq(p9_flags_from_dotl(0x80000000u, &f), -EINVAL);
}
