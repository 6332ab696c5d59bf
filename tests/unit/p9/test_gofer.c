/* tests/unit/p9/test_gofer.c: gofer_handle driven with raw requests:
 * malformed input, fid rules, read-only refusals, walk confinement. */
#include <criterion/criterion.h>

#include <fcntl.h>
#include <string.h>

#include "gofer/gofer.h"
#include "prot/p9.h"
#include "tests/unit/p9/p9_test.h"

static char gtree[64];
static int gfds;
static struct gofer *g;
static uint8_t rbuf[P9_MAX_MSIZE];
static struct p9_msg rep; /* last decoded reply; strings point into rbuf */

static void gsetup(void)
{
	int rootfd;

	gfds = p9t_count_fds();
	cr_assert_eq(p9t_make_tree(gtree, sizeof(gtree)), 0);
	rootfd = open(gtree, O_PATH | O_DIRECTORY | O_CLOEXEC);
	cr_assert_geq(rootfd, 0);
	cr_assert_eq(gofer_new(&g, rootfd, 0), 0);
	close(rootfd);
}

static void gteardown(void)
{
	gofer_free(g);
	g = NULL;
	p9t_rm_tree(gtree);
}

static void gend(void)
{
	gteardown();
	cr_assert_eq(p9t_count_fds(), gfds, "fd leak: %d -> %d", gfds,
		     p9t_count_fds());
}

TestSuite(p9_gofer, .init = gsetup, .fini = gteardown);
#define T(name) P9T_TEST(p9_gofer, name, gend)

/* Send raw bytes; return the reply type. The reply is decoded into rep. */
static uint8_t raw(const uint8_t *req, size_t len, int *fd)
{
	size_t rlen = 0;
	int donated = -1;

	cr_assert_eq(gofer_handle(g, req, len, rbuf, sizeof(rbuf), &rlen,
				  &donated),
		     0);
	cr_assert_eq(p9_decode(rbuf, rlen, &rep), 0, "reply must decode");
	if (fd)
		*fd = donated;
	else
		cr_assert_eq(donated, -1);
	return rep.type;
}

static uint8_t req(struct p9_msg *m, int *fd)
{
	uint8_t buf[4096];
	size_t len;

	if (!m->tag)
		m->tag = 42;
	cr_assert_eq(p9_encode(m, buf, sizeof(buf), &len), 0);
	return raw(buf, len, fd);
}

static void expect_err(struct p9_msg *m, int err)
{
	cr_assert_eq(req(m, NULL), P9_RLERROR, "%s: expected Rlerror",
		     p9_type_name(m->type));
	cr_assert_eq(rep.u.rlerror.ecode, (uint32_t)err,
		     "%s: ecode %u, expected %d", p9_type_name(m->type),
		     rep.u.rlerror.ecode, err);
}

static void version(uint32_t msize)
{
	struct p9_msg m = { .type = P9_TVERSION, .tag = P9_NOTAG };

	m.u.version.msize = msize;
	p9_str_set(&m.u.version.version, P9_VERSION_L);
	cr_assert_eq(req(&m, NULL), P9_RVERSION);
}

static void attach(uint32_t fid)
{
	struct p9_msg m = { .type = P9_TATTACH };

	m.u.tattach.fid = fid;
	m.u.tattach.afid = P9_NOFID;
	p9_str_set(&m.u.tattach.uname, "u");
	p9_str_set(&m.u.tattach.aname, "");
	cr_assert_eq(req(&m, NULL), P9_RATTACH);
	cr_assert_eq(rep.u.rattach.qid.type, P9_QTDIR);
}

static void session(void)
{
	version(65536);
	attach(0);
}

static void walk_msg(struct p9_msg *m, uint32_t fid, uint32_t newfid,
		     const char *a, const char *b)
{
	memset(m, 0, sizeof(*m));
	m->type = P9_TWALK;
	m->u.twalk.fid = fid;
	m->u.twalk.newfid = newfid;
	if (a)
		p9_str_set(&m->u.twalk.wname[m->u.twalk.nwname++], a);
	if (b)
		p9_str_set(&m->u.twalk.wname[m->u.twalk.nwname++], b);
}

static void fid_msg(struct p9_msg *m, uint8_t type, uint32_t fid)
{
	memset(m, 0, sizeof(*m));
	m->type = type;
	m->u.fid.fid = fid;
}

T(short_message_gets_rlerror_notag)
{
	const uint8_t b[3] = { 3, 0, 0 };

	cr_assert_eq(raw(b, sizeof(b), NULL), P9_RLERROR);
	cr_assert_eq(rep.tag, P9_NOTAG);
	cr_assert_eq(rep.u.rlerror.ecode, EPROTO);
	cr_assert_eq(raw(b, 0, NULL), P9_RLERROR);
}

T(size_mismatch_gets_rlerror_with_tag)
{
	uint8_t b[] = { 99, 0, 0, 0, P9_TCLUNK, 9, 0, 0, 0, 0, 0 };

	session();
	cr_assert_eq(raw(b, sizeof(b), NULL), P9_RLERROR);
	cr_assert_eq(rep.tag, 9);
	cr_assert_eq(rep.u.rlerror.ecode, EPROTO);
}

T(version_first)
{
	struct p9_msg m;

	fid_msg(&m, P9_TCLUNK, 0);
	expect_err(&m, EPROTO);
	memset(&m, 0, sizeof(m));
	m.type = P9_TVERSION;
	m.u.version.msize = 100;
	p9_str_set(&m.u.version.version, P9_VERSION_L);
	expect_err(&m, EINVAL);
	p9_str_set(&m.u.version.version, "9P2000.u");
	m.u.version.msize = 8192;
	cr_assert_eq(req(&m, NULL), P9_RVERSION);
	cr_assert(p9_str_eq(&rep.u.version.version, "unknown"));
	fid_msg(&m, P9_TCLUNK, 0);
	expect_err(&m, EPROTO); /* still not versioned */
}

T(msize_negotiated_down)
{
	struct p9_msg m = { .type = P9_TVERSION };

	m.u.version.msize = 0xffffffffu;
	p9_str_set(&m.u.version.version, P9_VERSION_L);
	cr_assert_eq(req(&m, NULL), P9_RVERSION);
	cr_assert_eq(rep.u.version.msize, P9_MAX_MSIZE);
}

T(string_longer_than_message)
{
	/* Tattach whose uname claims 1000 bytes */
	uint8_t b[] = { 25,  0,	  0,	0,    P9_TATTACH, 1,	0,    1,    0,
			0,   0,	  0xff, 0xff, 0xff,	  0xff, 0xe8, 0x03, 'a',
			'b', 'c', 0,	0,    0,	  0,	0 };

	session();
	cr_assert_eq(raw(b, sizeof(b), NULL), P9_RLERROR);
	cr_assert_eq(rep.u.rlerror.ecode, EPROTO);
	cr_assert_eq(gofer_nfids(g), 1);
}

T(nwname_over_16)
{
	uint8_t b[64] = { 0 };
	size_t len = 7 + 4 + 4 + 2 + 17 * 2;

	session();
	b[0] = (uint8_t)len;
	b[4] = P9_TWALK;
	b[11] = 1; /* newfid 1 */
	b[15] = 17;
	cr_assert_eq(raw(b, len, NULL), P9_RLERROR);
	cr_assert_eq(rep.u.rlerror.ecode, EPROTO);
}

T(attach_rules)
{
	struct p9_msg m = { .type = P9_TATTACH };

	version(8192);
	attach(5);
	m.u.tattach.fid = 5; /* fid reuse */
	m.u.tattach.afid = P9_NOFID;
	expect_err(&m, EEXIST);
	m.u.tattach.fid = 6;
	m.u.tattach.afid = 1; /* auth */
	expect_err(&m, EOPNOTSUPP);
	m.u.tattach.afid = P9_NOFID;
	p9_str_set(&m.u.tattach.aname, "/etc");
	expect_err(&m, ENOENT);
	m.u.tattach.fid = P9_NOFID;
	p9_str_set(&m.u.tattach.aname, "/");
	expect_err(&m, EINVAL);
	cr_assert_eq(gofer_nfids(g), 1);
}

T(unknown_fid)
{
	struct p9_msg m;

	session();
	fid_msg(&m, P9_TCLUNK, 77);
	expect_err(&m, EBADF);
	fid_msg(&m, P9_TREADLINK, 77);
	expect_err(&m, EBADF);
	fid_msg(&m, P9_TSTATFS, 77);
	expect_err(&m, EBADF);
	memset(&m, 0, sizeof(m));
	m.type = P9_TGETATTR;
	m.u.tgetattr.fid = 77;
	expect_err(&m, EBADF);
	memset(&m, 0, sizeof(m));
	m.type = P9_TLOPEN;
	m.u.tlopen.fid = 77;
	expect_err(&m, EBADF);
	memset(&m, 0, sizeof(m));
	m.type = P9_TREADDIR;
	m.u.treaddir.fid = 77;
	m.u.treaddir.count = 100;
	expect_err(&m, EBADF);
	walk_msg(&m, 77, 78, NULL, NULL);
	expect_err(&m, EBADF);
}

T(walk_fid_reuse)
{
	struct p9_msg m;

	session();
	walk_msg(&m, 0, 1, "dir", NULL);
	cr_assert_eq(req(&m, NULL), P9_RWALK);
	walk_msg(&m, 0, 1, "file.txt", NULL);
	expect_err(&m, EEXIST);
	/* newfid == fid replaces the fid */
	walk_msg(&m, 1, 1, "inner.txt", NULL);
	cr_assert_eq(req(&m, NULL), P9_RWALK);
	cr_assert_eq(rep.u.rwalk.wqid[0].type, P9_QTFILE);
	cr_assert_eq(gofer_nfids(g), 2);
}

T(walk_rejects_non_components)
{
	static const char *bad[] = { "..",   ".",   "", "dir/inner.txt",
				     "/etc", "dir/" };
	const char nul[] = { 'd', 'i', 'r', '\0', 'x' };
	struct p9_msg m;
	size_t i;

	session();
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		walk_msg(&m, 0, 1, bad[i], NULL);
		expect_err(&m, EINVAL);
	}
	/* "dir\0x" must not be walked as "dir" */
	walk_msg(&m, 0, 1, "x", NULL);
	m.u.twalk.wname[0].s = nul;
	m.u.twalk.wname[0].len = sizeof(nul);
	expect_err(&m, EINVAL);
	cr_assert_eq(gofer_nfids(g), 1);
	/* "..." is a real name here */
	walk_msg(&m, 0, 1, "...", NULL);
	cr_assert_eq(req(&m, NULL), P9_RWALK);
}

T(walk_long_name)
{
	char name[300];
	struct p9_msg m;

	session();
	memset(name, 'a', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	walk_msg(&m, 0, 1, name, NULL);
	expect_err(&m, ENAMETOOLONG);
}

T(walk_does_not_follow_symlinks)
{
	struct p9_msg m;

	session();
	walk_msg(&m, 0, 1, "link_out", NULL);
	cr_assert_eq(req(&m, NULL), P9_RWALK);
	cr_assert_eq(rep.u.rwalk.wqid[0].type, P9_QTSYMLINK);
	/* through the link: Rwalk with only the first qid, no newfid */
	walk_msg(&m, 0, 2, "up", "etc");
	cr_assert_eq(req(&m, NULL), P9_RWALK);
	cr_assert_eq(rep.u.rwalk.nwqid, 1);
	cr_assert_eq(rep.u.rwalk.wqid[0].type, P9_QTSYMLINK);
	walk_msg(&m, 1, 3, "passwd", NULL);
	expect_err(&m, ENOTDIR);
	cr_assert_eq(gofer_nfids(g), 2);
}

T(partial_walk_creates_no_fid)
{
	struct p9_msg m;

	session();
	walk_msg(&m, 0, 1, "dir", "missing");
	cr_assert_eq(req(&m, NULL), P9_RWALK);
	cr_assert_eq(rep.u.rwalk.nwqid, 1);
	cr_assert_eq(gofer_nfids(g), 1);
	walk_msg(&m, 0, 1, "missing", NULL);
	expect_err(&m, ENOENT);
	walk_msg(&m, 0, 1, "dir", "inner.txt");
	cr_assert_eq(req(&m, NULL), P9_RWALK);
	cr_assert_eq(rep.u.rwalk.nwqid, 2);
	cr_assert_eq(gofer_nfids(g), 2);
}

T(write_ops_are_erofs_others_eopnotsupp)
{
	static const uint8_t writes[] = { P9_TWRITE,	P9_TMKDIR,
					  P9_TLCREATE,	P9_TUNLINKAT,
					  P9_TRENAMEAT, P9_TSETATTR,
					  P9_TSYMLINK,	P9_TREMOVE };
	static const uint8_t others[] = { P9_TFLUSH, P9_TAUTH, P9_TLOCK, 250,
					  0 };
	uint8_t b[16] = { 11, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0 };
	size_t i;

	session();
	for (i = 0; i < sizeof(writes); i++) {
		b[4] = writes[i];
		cr_assert_eq(raw(b, 11, NULL), P9_RLERROR);
		cr_assert_eq(rep.u.rlerror.ecode, EROFS, "%s",
			     p9_type_name(writes[i]));
		cr_assert_eq(rep.tag, 3);
	}
	for (i = 0; i < sizeof(others); i++) {
		b[4] = others[i];
		cr_assert_eq(raw(b, 11, NULL), P9_RLERROR);
		cr_assert_eq(rep.u.rlerror.ecode, EOPNOTSUPP);
	}
	/* an R-message sent to the server */
	b[4] = P9_RLERROR;
	cr_assert_eq(raw(b, 11, NULL), P9_RLERROR);
	cr_assert_eq(rep.u.rlerror.ecode, EPROTO);
}

T(lopen_write_flags_are_erofs)
{
	static const uint32_t bad[] = {
		P9_DOTL_WRONLY, P9_DOTL_RDWR,	P9_DOTL_CREATE,
		P9_DOTL_TRUNC,	P9_DOTL_APPEND, P9_DOTL_EXCL,
	};
	struct p9_msg m;
	size_t i;

	session();
	walk_msg(&m, 0, 1, "file.txt", NULL);
	cr_assert_eq(req(&m, NULL), P9_RWALK);
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		memset(&m, 0, sizeof(m));
		m.type = P9_TLOPEN;
		m.u.tlopen.fid = 1;
		m.u.tlopen.flags = bad[i];
		expect_err(&m, EROFS);
	}
	m.u.tlopen.flags = 0x40000000u; /* not a dotl flag */
	expect_err(&m, EINVAL);
}

T(lopen_donates_fd)
{
	struct p9_msg m;
	char buf[64] = { 0 };
	int fd = -1;

	session();
	walk_msg(&m, 0, 1, "file.txt", NULL);
	cr_assert_eq(req(&m, NULL), P9_RWALK);
	memset(&m, 0, sizeof(m));
	m.type = P9_TLOPEN;
	m.u.tlopen.fid = 1;
	cr_assert_eq(req(&m, &fd), P9_RLOPEN);
	cr_assert_geq(fd, 0);
	cr_assert_eq(read(fd, buf, sizeof(buf)), strlen(P9T_FILE_DATA));
	cr_assert_str_eq(buf, P9T_FILE_DATA);
	cr_assert_eq(fcntl(fd, F_GETFL) & (O_NONBLOCK | O_ACCMODE), O_RDONLY);
	cr_assert_eq(write(fd, "x", 1), -1);
	close(fd);
}

T(lopen_refuses_fifo_and_symlink)
{
	struct p9_msg m;

	session();
	walk_msg(&m, 0, 1, "fifo", NULL);
	cr_assert_eq(req(&m, NULL), P9_RWALK);
	walk_msg(&m, 0, 2, "link_in", NULL);
	cr_assert_eq(req(&m, NULL), P9_RWALK);
	memset(&m, 0, sizeof(m));
	m.type = P9_TLOPEN;
	m.u.tlopen.fid = 1;
	expect_err(&m, EPERM);
	m.u.tlopen.fid = 2;
	expect_err(&m, ELOOP);
}

/* Regression: a file swapped between walk and lopen must not be opened. */
T(lopen_after_rename_swap_is_estale)
{
	char a[128], b[128];
	struct p9_msg m;

	session();
	walk_msg(&m, 0, 1, "file.txt", NULL);
	cr_assert_eq(req(&m, NULL), P9_RWALK);
	snprintf(a, sizeof(a), "%s/file.txt", gtree);
	snprintf(b, sizeof(b), "%s/...", gtree);
	cr_assert_eq(rename(b, a), 0);
	memset(&m, 0, sizeof(m));
	m.type = P9_TLOPEN;
	m.u.tlopen.fid = 1;
	expect_err(&m, ESTALE);
}

T(readdir_small_count_and_offsets)
{
	struct p9_msg m;
	uint64_t off = 0;
	int n = 0, rounds = 0;

	session();
	memset(&m, 0, sizeof(m));
	m.type = P9_TREADDIR;
	m.u.treaddir.fid = 0;
	m.u.treaddir.count = 10; /* smaller than any entry */
	expect_err(&m, EINVAL);
	/* room for about one entry at a time */
	for (;;) {
		size_t pos = 0;
		struct p9_str name;
		uint64_t eoff;

		m.u.treaddir.offset = off;
		m.u.treaddir.count = 40;
		cr_assert_eq(req(&m, NULL), P9_RREADDIR);
		if (rep.u.rreaddir.count == 0)
			break;
		while (p9_dirent_get(rep.u.rreaddir.data, rep.u.rreaddir.count,
				     &pos, NULL, &eoff, NULL, &name) == 1) {
			cr_assert(p9_str_is_name(&name));
			off = eoff;
			n++;
		}
		cr_assert(++rounds < 100);
	}
	cr_assert_eq(n, 9, "entries: %d", n); /* all but . and .. */
}

T(readdir_on_file_is_enotdir)
{
	struct p9_msg m;

	session();
	walk_msg(&m, 0, 1, "file.txt", NULL);
	cr_assert_eq(req(&m, NULL), P9_RWALK);
	memset(&m, 0, sizeof(m));
	m.type = P9_TREADDIR;
	m.u.treaddir.fid = 1;
	m.u.treaddir.count = 4000;
	expect_err(&m, ENOTDIR);
}

T(readlink_only_on_symlinks)
{
	struct p9_msg m;

	session();
	fid_msg(&m, P9_TREADLINK, 0);
	expect_err(&m, EINVAL);
	walk_msg(&m, 0, 1, "link_rel", NULL);
	cr_assert_eq(req(&m, NULL), P9_RWALK);
	fid_msg(&m, P9_TREADLINK, 1);
	cr_assert_eq(req(&m, NULL), P9_RREADLINK);
	cr_assert(p9_str_eq(&rep.u.rreadlink.target, "../../../../etc/passwd"));
}

T(clunk_frees_and_version_resets)
{
	struct p9_msg m;

	session();
	walk_msg(&m, 0, 1, "dir", NULL);
	cr_assert_eq(req(&m, NULL), P9_RWALK);
	walk_msg(&m, 1, 2, NULL, NULL); /* clone */
	cr_assert_eq(req(&m, NULL), P9_RWALK);
	cr_assert_eq(rep.u.rwalk.nwqid, 0);
	cr_assert_eq(gofer_nfids(g), 3);
	fid_msg(&m, P9_TCLUNK, 1);
	cr_assert_eq(req(&m, NULL), P9_RCLUNK);
	cr_assert_eq(gofer_nfids(g), 2);
	fid_msg(&m, P9_TCLUNK, 1);
	expect_err(&m, EBADF);
	/* the clone still works after its source was clunked */
	walk_msg(&m, 2, 3, "inner.txt", NULL);
	cr_assert_eq(req(&m, NULL), P9_RWALK);
	version(8192);
	cr_assert_eq(gofer_nfids(g), 0);
}

T(tiny_reply_buffer)
{
	uint8_t in[64], out[16];
	struct p9_msg m = { .type = P9_TGETATTR, .tag = 1 }, d;
	size_t len, rlen;
	int fd;

	session();
	m.u.tgetattr.fid = 0;
	cr_assert_eq(p9_encode(&m, in, sizeof(in), &len), 0);
	cr_assert_eq(gofer_handle(g, in, len, out, 10, &rlen, &fd), -EMSGSIZE);
	cr_assert_eq(gofer_handle(g, in, len, out, 11, &rlen, &fd), 0);
	cr_assert_eq(p9_decode(out, rlen, &d), 0);
	cr_assert_eq(d.type, P9_RLERROR);
	cr_assert_eq(d.u.rlerror.ecode, EMSGSIZE);
}

/* A file gofer (gofer_new_file), unconfined: its root is the file, which
 * nothing walks from; no request names its directory. */
static void file_gofer(const char *name, unsigned flags)
{
	int dirfd = open(gtree, O_PATH | O_DIRECTORY | O_CLOEXEC);

	cr_assert_geq(dirfd, 0);
	gofer_free(g);
	g = NULL;
	cr_assert_eq(gofer_new_file(&g, dirfd, name, flags), 0);
	close(dirfd);
}

T(file_gofer_roots_only_regular_files)
{
	int dirfd = open(gtree, O_PATH | O_DIRECTORY | O_CLOEXEC);
	struct gofer *x = NULL;

	cr_assert_geq(dirfd, 0);
	cr_assert_eq(gofer_new_file(&x, dirfd, "dir", 0), -EISDIR);
	cr_assert_eq(gofer_new_file(&x, dirfd, "fifo", 0), -EPERM);
	cr_assert_eq(gofer_new_file(&x, dirfd, "link_in", 0), -EPERM);
	cr_assert_eq(gofer_new_file(&x, dirfd, "..", 0), -EINVAL);
	cr_assert_eq(gofer_new_file(&x, dirfd, "dir/inner.txt", 0), -EINVAL);
	cr_assert_eq(gofer_new_file(&x, dirfd, "file.txt", GOFER_STORE),
		     -EINVAL);
	cr_assert_null(x);
	close(dirfd);
}

T(file_gofer_serves_the_file_alone)
{
	struct p9_msg m = { .type = P9_TATTACH };
	char buf[64] = { 0 };
	int fd = -1;

	file_gofer("file.txt", GOFER_WRITABLE);
	version(65536);
	m.u.tattach.fid = 0;
	m.u.tattach.afid = P9_NOFID;
	p9_str_set(&m.u.tattach.uname, "u");
	p9_str_set(&m.u.tattach.aname, "");
	cr_assert_eq(req(&m, NULL), P9_RATTACH);
	cr_assert_eq(rep.u.rattach.qid.type, P9_QTFILE);
	/* no walk from it: a sibling, "..", or the file's own name */
	walk_msg(&m, 0, 1, "dir", NULL);
	expect_err(&m, ENOTDIR);
	walk_msg(&m, 0, 1, "..", NULL);
	expect_err(&m, EINVAL);
	walk_msg(&m, 0, 1, NULL, NULL);
	cr_assert_eq(req(&m, NULL), P9_RWALK);
	memset(&m, 0, sizeof(m));
	m.type = P9_TLOPEN;
	m.u.tlopen.fid = 1;
	m.u.tlopen.flags = P9_DOTL_RDWR;
	cr_assert_eq(req(&m, &fd), P9_RLOPEN);
	cr_assert_eq(read(fd, buf, sizeof(buf)), strlen(P9T_FILE_DATA));
	close(fd);
	fid_msg(&m, P9_TREADDIR, 0);
	expect_err(&m, ENOTDIR);
	memset(&m, 0, sizeof(m));
	m.type = P9_TUNLINKAT;
	m.u.tunlinkat.dfid = 0;
	p9_str_set(&m.u.tunlinkat.name, "file.txt");
	expect_err(&m, ENOTDIR);
	memset(&m, 0, sizeof(m));
	m.type = P9_TLINK;
	m.u.tlink.dfid = 0;
	m.u.tlink.fid = 1;
	p9_str_set(&m.u.tlink.name, "x");
	expect_err(&m, ENOTDIR);
}

/* The file its name held when served is the one reopened: one renamed
 * over it is another inode (confined, the bind keeps the first). */
T(file_gofer_reopens_only_its_inode)
{
	struct p9_msg m = { .type = P9_TATTACH };
	char a[128], b[128];

	file_gofer("file.txt", 0);
	version(65536);
	m.u.tattach.fid = 0;
	m.u.tattach.afid = P9_NOFID;
	p9_str_set(&m.u.tattach.uname, "u");
	p9_str_set(&m.u.tattach.aname, "");
	cr_assert_eq(req(&m, NULL), P9_RATTACH);
	snprintf(a, sizeof(a), "%s/file.txt", gtree);
	snprintf(b, sizeof(b), "%s/...", gtree);
	cr_assert_eq(rename(b, a), 0);
	memset(&m, 0, sizeof(m));
	m.type = P9_TLOPEN;
	m.u.tlopen.fid = 0;
	expect_err(&m, ESTALE);
	m.u.tlopen.flags = P9_DOTL_WRONLY;
	expect_err(&m, EROFS);
}
