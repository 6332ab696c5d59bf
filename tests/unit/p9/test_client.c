/* tests/unit/p9/test_client.c: sentry/p9client.c against an in-process,
 * unconfined gofer (gofer_serve on a thread), and against a fake gofer that
 * sends broken replies. */
#include <criterion/criterion.h>

#include <fcntl.h>
#include <string.h>
#include <sys/statfs.h>

#include "gofer/gofer.h"
#include "prot/p9.h"
#include "sentry/p9client.h"
#include "tests/unit/p9/p9_test.h"

static char ctree[64];
static int cfds;
static struct p9t_server srv;
static struct p9_client *c;
static uint32_t root;

static void csetup(void)
{
	struct moat_error err = { 0 };
	struct p9_qid rq;

	cfds = p9t_count_fds();
	cr_assert_eq(p9t_make_tree(ctree, sizeof(ctree)), 0);
	cr_assert_eq(p9t_server_start(&srv, ctree), 0);
	cr_assert_eq(p9c_open(&c, srv.cli, &root, &rq, &err), 0, "%s", err.msg);
	cr_assert_eq(rq.type, P9_QTDIR);
}

/* Returns the server's result, or 0 if it was already stopped. */
static int cteardown_ret(void)
{
	int ret = 0;

	if (c) {
		p9c_close(c);
		c = NULL;
		ret = p9t_server_join(&srv);
	}
	p9t_rm_tree(ctree);
	return ret;
}

static void cteardown(void)
{
	cteardown_ret();
}

static void cend(void)
{
	cr_assert_eq(cteardown_ret(), 0, "gofer_serve failed");
	cr_assert_eq(p9t_count_fds(), cfds, "fd leak: %d -> %d", cfds,
		     p9t_count_fds());
}

TestSuite(p9_client, .init = csetup, .fini = cteardown);
#define TC(name) P9T_TEST(p9_client, name, cend)

TC(walk_getattr_lopen_read)
{
	struct p9_qid q;
	struct stat st, hst;
	char path[128], buf[64] = { 0 };
	uint32_t fid;
	int fd = -1;

	cr_assert_eq(p9c_walk1(c, root, "file.txt", &fid, &q), 0);
	cr_assert_eq(q.type, P9_QTFILE);
	cr_assert_eq(p9c_getattr(c, fid, &st), 0);
	snprintf(path, sizeof(path), "%s/file.txt", ctree);
	cr_assert_eq(lstat(path, &hst), 0);
	cr_assert(S_ISREG(st.st_mode));
	cr_assert_eq(st.st_mode, hst.st_mode);
	cr_assert_eq(st.st_size, (off_t)strlen(P9T_FILE_DATA));
	cr_assert_eq(st.st_ino, hst.st_ino);
	cr_assert_eq(q.path, hst.st_ino);
	cr_assert_eq(st.st_nlink, hst.st_nlink);
	cr_assert_eq(st.st_uid, hst.st_uid);
	cr_assert_eq(st.st_mtim.tv_sec, hst.st_mtim.tv_sec);
	cr_assert_eq(st.st_mtim.tv_nsec, hst.st_mtim.tv_nsec);

	cr_assert_eq(p9c_lopen(c, fid, O_RDONLY, &fd), 0);
	cr_assert_geq(fd, 0);
	cr_assert(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	cr_assert_eq(pread(fd, buf, sizeof(buf), 0),
		     (ssize_t)strlen(P9T_FILE_DATA));
	cr_assert_str_eq(buf, P9T_FILE_DATA);
	close(fd);
	cr_assert_eq(p9c_clunk(c, fid), 0);
	cr_assert_eq(p9c_clunk(c, fid), -EBADF); /* double clunk */
}

TC(walk_two_levels_and_clone)
{
	struct p9_qid q;
	uint32_t d, f, d2;
	struct stat st;

	cr_assert_eq(p9c_walk1(c, root, "dir", &d, &q), 0);
	cr_assert_eq(q.type, P9_QTDIR);
	cr_assert_eq(p9c_clone(c, d, &d2), 0);
	cr_assert_neq(d, d2);
	cr_assert_eq(p9c_clunk(c, d), 0);
	cr_assert_eq(p9c_walk1(c, d2, "inner.txt", &f, &q), 0);
	cr_assert_eq(p9c_getattr(c, f, &st), 0);
	cr_assert_eq(st.st_size, 5);
	/* fid numbers are reused */
	cr_assert_eq(p9c_walk1(c, root, "dir", &d, &q), 0);
	cr_assert_eq(p9c_clunk(c, d), 0);
	cr_assert_eq(p9c_clunk(c, f), 0);
	cr_assert_eq(p9c_clunk(c, d2), 0);
}

TC(walk_escapes_fail)
{
	struct p9_qid q;
	uint32_t f = 1234, l;

	cr_assert_eq(p9c_walk1(c, root, "..", &f, &q), -EINVAL);
	cr_assert_eq(p9c_walk1(c, root, ".", &f, &q), -EINVAL);
	cr_assert_eq(p9c_walk1(c, root, "", &f, &q), -EINVAL);
	cr_assert_eq(p9c_walk1(c, root, "dir/inner.txt", &f, &q), -EINVAL);
	cr_assert_eq(p9c_walk1(c, root, "/etc", &f, &q), -EINVAL);
	cr_assert_eq(p9c_walk1(c, root, "nope", &f, &q), -ENOENT);
	cr_assert_eq(f, 1234, "newfid untouched on failure");

	/* through symlinks: the gofer never follows them */
	cr_assert_eq(p9c_walk1(c, root, "link_out", &l, &q), 0);
	cr_assert_eq(q.type, P9_QTSYMLINK);
	cr_assert_eq(p9c_walk1(c, l, "x", &f, &q), -ENOTDIR);
	cr_assert_eq(p9c_clunk(c, l), 0);
	cr_assert_eq(p9c_walk1(c, root, "up", &l, &q), 0);
	cr_assert_eq(q.type, P9_QTSYMLINK);
	cr_assert_eq(p9c_walk1(c, l, "etc", &f, &q), -ENOTDIR);
	cr_assert_eq(p9c_clunk(c, l), 0);
}

TC(readlink)
{
	struct p9_qid q;
	char buf[64];
	uint32_t l;
	int fd = -1;

	cr_assert_eq(p9c_walk1(c, root, "link_out", &l, &q), 0);
	cr_assert_eq(p9c_readlink(c, l, buf, sizeof(buf)), 11);
	cr_assert_str_eq(buf, "/etc/passwd");
	cr_assert_eq(p9c_readlink(c, l, buf, 11), -ENAMETOOLONG);
	cr_assert_eq(p9c_readlink(c, l, buf, 12), 11);
	cr_assert_eq(p9c_lopen(c, l, O_RDONLY, &fd), -ELOOP);
	cr_assert_eq(fd, -1);
	cr_assert_eq(p9c_clunk(c, l), 0);
	cr_assert_eq(p9c_readlink(c, root, buf, sizeof(buf)), -EINVAL);
}

TC(lopen_write_is_erofs)
{
	static const int bad[] = { O_WRONLY, O_RDWR, O_RDONLY | O_TRUNC,
				   O_RDONLY | O_CREAT, O_WRONLY | O_APPEND };
	struct p9_qid q;
	uint32_t f;
	size_t i;
	int fd = -1;

	cr_assert_eq(p9c_walk1(c, root, "file.txt", &f, &q), 0);
	for (i = 0; i < ARRAY_SIZE(bad); i++)
		cr_assert_eq(p9c_lopen(c, f, bad[i], &fd), -EROFS, "flags %#x",
			     bad[i]);
	cr_assert_eq(p9c_lopen(c, f, O_RDONLY | O_DIRECTORY, &fd), -ENOTDIR);
	cr_assert_eq(fd, -1);
	cr_assert_eq(p9c_clunk(c, f), 0);
	cr_assert_eq(p9c_lopen(c, root, O_WRONLY, &fd), -EROFS);
}

TC(unknown_fid)
{
	struct stat st;
	struct statfs sf;
	struct p9_qid q;
	char buf[16];
	uint32_t f;
	int fd = -1;

	cr_assert_eq(p9c_getattr(c, 4242, &st), -EBADF);
	cr_assert_eq(p9c_statfs(c, 4242, &sf), -EBADF);
	cr_assert_eq(p9c_lopen(c, 4242, O_RDONLY, &fd), -EBADF);
	cr_assert_eq(p9c_readlink(c, 4242, buf, sizeof(buf)), -EBADF);
	cr_assert_eq(p9c_readdir(c, 4242, 0, buf, sizeof(buf)), -EBADF);
	cr_assert_eq(p9c_walk1(c, 4242, "x", &f, &q), -EBADF);
	cr_assert_eq(p9c_clunk(c, 4242), -EBADF);
	cr_assert_eq(p9c_clunk(c, P9_NOFID), -EBADF);
}

TC(readdir_all_entries)
{
	static const char *want[] = { "file.txt", "...",      "dir",
				      "mnt",	  "link_out", "link_rel",
				      "up",	  "link_in",  "fifo" };
	uint8_t buf[256];
	bool seen[ARRAY_SIZE(want)] = { false };
	uint64_t off = 0;
	size_t i, total = 0;
	int n, rounds = 0;

	/* 256 bytes: several calls, resuming from the last offset */
	while ((n = p9c_readdir(c, root, off, buf, sizeof(buf))) > 0) {
		size_t pos = 0;
		struct p9_qid q;
		uint8_t type;
		char name[256];
		int r;

		while ((r = p9c_readdir_next(buf, (size_t)n, &pos, &q, &off,
					     &type, name, sizeof(name))) == 1) {
			for (i = 0; i < ARRAY_SIZE(want); i++)
				if (strcmp(name, want[i]) == 0) {
					cr_assert_not(seen[i], "dup %s", name);
					seen[i] = true;
				}
			cr_assert(strcmp(name, ".") && strcmp(name, ".."));
			if (strcmp(name, "dir") == 0) {
				cr_assert_eq(type, DT_DIR);
				cr_assert_eq(q.type, P9_QTDIR);
			}
			if (strcmp(name, "up") == 0)
				cr_assert_eq(q.type, P9_QTSYMLINK);
			total++;
		}
		cr_assert_eq(r, 0);
		cr_assert(++rounds < 50);
	}
	cr_assert_eq(n, 0);
	cr_assert_eq(total, ARRAY_SIZE(want));
	for (i = 0; i < ARRAY_SIZE(want); i++)
		cr_assert(seen[i], "missing %s", want[i]);
}

TC(readdir_next_small_name_buffer)
{
	uint8_t buf[4096];
	char name[4];
	size_t pos = 0;
	int n;

	n = p9c_readdir(c, root, 0, buf, sizeof(buf));
	cr_assert_gt(n, 0);
	/* every name here is longer than 3 bytes except "...", "up", "dir",
	 * "mnt": walk until a long one fails */
	for (;;) {
		int r = p9c_readdir_next(buf, (size_t)n, &pos, NULL, NULL, NULL,
					 name, sizeof(name));
		if (r == -ENAMETOOLONG)
			break;
		cr_assert_eq(r, 1);
	}
}

TC(lopen_directory_and_getdents)
{
	struct p9_qid q;
	uint32_t d;
	int fd = -1;
	char dbuf[4096];

	cr_assert_eq(p9c_walk1(c, root, "dir", &d, &q), 0);
	cr_assert_eq(p9c_lopen(c, d, O_RDONLY | O_DIRECTORY, &fd), 0);
	cr_assert_gt(getdents64(fd, dbuf, sizeof(dbuf)), 0);
	close(fd);
	cr_assert_eq(p9c_clunk(c, d), 0);
}

TC(lopen_fifo_refused)
{
	struct p9_qid q;
	uint32_t f;
	int fd = -1;

	cr_assert_eq(p9c_walk1(c, root, "fifo", &f, &q), 0);
	cr_assert_eq(p9c_lopen(c, f, O_RDONLY, &fd), -EPERM);
	cr_assert_eq(p9c_clunk(c, f), 0);
}

TC(statfs)
{
	struct statfs sf, hsf;

	cr_assert_eq(p9c_statfs(c, root, &sf), 0);
	cr_assert_eq(statfs(ctree, &hsf), 0);
	cr_assert_eq(sf.f_type, hsf.f_type);
	cr_assert_eq(sf.f_bsize, hsf.f_bsize);
	cr_assert_eq(sf.f_namelen, hsf.f_namelen);
	cr_assert_eq(sf.f_blocks, hsf.f_blocks);
}

TC(getattr_root_and_symlink)
{
	struct stat st;
	struct p9_qid q;
	uint32_t l;

	cr_assert_eq(p9c_getattr(c, root, &st), 0);
	cr_assert(S_ISDIR(st.st_mode));
	cr_assert_eq(p9c_walk1(c, root, "link_rel", &l, &q), 0);
	cr_assert_eq(p9c_getattr(c, l, &st), 0);
	cr_assert(S_ISLNK(st.st_mode));
	cr_assert_eq(st.st_size, (off_t)strlen("../../../../etc/passwd"));
	cr_assert_eq(p9c_clunk(c, l), 0);
}

/* ---- a fake gofer that sends broken replies ------------------------------ */

static int ffds;
static int fsv[2] = { -1, -1 };
static struct p9_client *fc;
static uint32_t froot;

static void put_reply(struct p9_msg *m, uint16_t tag)
{
	uint8_t buf[512];
	size_t len;

	m->tag = tag;
	cr_assert_eq(p9_encode(m, buf, sizeof(buf), &len), 0);
	cr_assert_eq(write(fsv[1], buf, len), (ssize_t)len);
}

static void fake_setup(void)
{
	struct moat_error err = { 0 };
	struct p9_msg m = { .type = P9_RVERSION };

	ffds = p9t_count_fds();
	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fsv),
		     0);
	/* The replies are queued before the requests are sent: the client
	 * sends, then reads what is already there. */
	m.u.version.msize = 8192;
	p9_str_set(&m.u.version.version, P9_VERSION_L);
	put_reply(&m, P9_NOTAG);
	memset(&m, 0, sizeof(m));
	m.type = P9_RATTACH;
	m.u.rattach.qid.type = P9_QTDIR;
	put_reply(&m, 1);
	cr_assert_eq(p9c_open(&fc, fsv[0], &froot, NULL, &err), 0, "%s",
		     err.msg);
	cr_assert_eq(p9c_msize(fc), 8192);
}

static void fake_teardown(void)
{
	p9c_close(fc);
	fc = NULL;
	if (fsv[1] >= 0)
		close(fsv[1]);
	fsv[1] = -1;
}

static void fake_end(void)
{
	fake_teardown();
	cr_assert_eq(p9t_count_fds(), ffds, "fd leak: %d -> %d", ffds,
		     p9t_count_fds());
}

TestSuite(p9_client_fake, .init = fake_setup, .fini = fake_teardown);
#define TF(name) P9T_TEST(p9_client_fake, name, fake_end)

TF(readdir_count_larger_than_asked)
{
	uint8_t data[64] = { 0 }, buf[16];
	struct p9_msg m = { .type = P9_RREADDIR };

	m.u.rreaddir.count = sizeof(data);
	m.u.rreaddir.data = data;
	put_reply(&m, 1);
	cr_assert_eq(p9c_readdir(fc, froot, 0, buf, sizeof(buf)), -EPROTO);
}

TF(lerror_codes)
{
	struct p9_msg m = { .type = P9_RLERROR };
	struct stat st;

	m.u.rlerror.ecode = EACCES;
	put_reply(&m, 1);
	cr_assert_eq(p9c_getattr(fc, froot, &st), -EACCES);
	m.u.rlerror.ecode = 0;
	put_reply(&m, 1);
	cr_assert_eq(p9c_getattr(fc, froot, &st), -EIO);
	m.u.rlerror.ecode = 100000;
	put_reply(&m, 1);
	cr_assert_eq(p9c_getattr(fc, froot, &st), -EIO);
}

TF(wrong_type_then_still_usable)
{
	struct p9_msg m = { .type = P9_RCLUNK };
	struct stat st;

	put_reply(&m, 1);
	cr_assert_eq(p9c_getattr(fc, froot, &st), -EPROTO);
	m.type = P9_RLERROR;
	m.u.rlerror.ecode = ENOENT;
	put_reply(&m, 1);
	cr_assert_eq(p9c_getattr(fc, froot, &st), -ENOENT);
}

TF(wrong_tag_breaks_connection)
{
	struct p9_msg m = { .type = P9_RCLUNK };
	struct stat st;

	put_reply(&m, 2);
	cr_assert_eq(p9c_getattr(fc, froot, &st), -EIO);
	cr_assert_eq(p9c_getattr(fc, froot, &st), -EIO);
}

TF(oversized_frame_breaks_connection)
{
	const uint8_t b[] = { 0, 0, 0x10, 0, P9_RGETATTR, 1, 0 };
	struct stat st;

	cr_assert_eq(write(fsv[1], b, sizeof(b)), (ssize_t)sizeof(b));
	cr_assert_eq(p9c_getattr(fc, froot, &st), -EIO);
}

TF(eof_mid_reply)
{
	const uint8_t b[] = { 160, 0, 0, 0, P9_RGETATTR, 1, 0, 1, 2 };
	struct stat st;

	cr_assert_eq(write(fsv[1], b, sizeof(b)), (ssize_t)sizeof(b));
	shutdown(fsv[1], SHUT_WR);
	cr_assert_eq(p9c_getattr(fc, froot, &st), -EIO);
}

TF(rlopen_without_fd)
{
	struct p9_msg m = { .type = P9_RLOPEN };
	int fd = -1;

	put_reply(&m, 1);
	cr_assert_eq(p9c_lopen(fc, froot, O_RDONLY, &fd), -EPROTO);
	cr_assert_eq(fd, -1);
}

static void put_reply_fd(struct p9_msg *m, int fd)
{
	uint8_t buf[512];
	size_t len;
	union {
		struct cmsghdr h;
		char b[CMSG_SPACE(sizeof(int))];
	} ctl;
	struct iovec iov;
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *cm;

	m->tag = 1;
	cr_assert_eq(p9_encode(m, buf, sizeof(buf), &len), 0);
	iov.iov_base = buf;
	iov.iov_len = len;
	memset(&ctl, 0, sizeof(ctl));
	mh.msg_control = ctl.b;
	mh.msg_controllen = sizeof(ctl.b);
	cm = CMSG_FIRSTHDR(&mh);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	cr_assert_eq(sendmsg(fsv[1], &mh, 0), (ssize_t)len);
}

TF(fd_on_wrong_reply_is_closed)
{
	struct p9_msg m = { .type = P9_RGETATTR };
	struct stat st;
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);

	put_reply_fd(&m, fd);
	close(fd);
	cr_assert_eq(p9c_getattr(fc, froot, &st), -EPROTO);
	/* teardown's fd count proves the donated copy was closed */
}

TF(fd_on_rlerror_is_closed)
{
	struct p9_msg m = { .type = P9_RLERROR };
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC), got = -1;

	m.u.rlerror.ecode = EACCES;
	put_reply_fd(&m, fd);
	close(fd);
	cr_assert_eq(p9c_lopen(fc, froot, O_RDONLY, &got), -EACCES);
	cr_assert_eq(got, -1);
}

TF(rlopen_with_fd)
{
	struct p9_msg m = { .type = P9_RLOPEN };
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC), got = -1;

	put_reply_fd(&m, fd);
	close(fd);
	cr_assert_eq(p9c_lopen(fc, froot, O_RDONLY, &got), 0);
	cr_assert_geq(got, 0);
	cr_assert(fcntl(got, F_GETFD) & FD_CLOEXEC);
	close(got);
}

TF(readlink_with_nul_is_eproto)
{
	struct p9_msg m = { .type = P9_RREADLINK };
	const char t[] = { '/', 'a', '\0', 'b' };
	char buf[32];

	m.u.rreadlink.target.s = t;
	m.u.rreadlink.target.len = sizeof(t);
	put_reply(&m, 1);
	cr_assert_eq(p9c_readlink(fc, froot, buf, sizeof(buf)), -EPROTO);
}

TF(readdir_next_rejects_bad_names)
{
	static const char *bad[] = { "..", ".", "a/b", "" };
	uint8_t buf[128];
	struct p9_qid q = { 0 };
	size_t i, pos, w;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		w = 0;
		cr_assert_eq(p9_dirent_put(buf, sizeof(buf), &w, &q, 1, DT_REG,
					   bad[i], strlen(bad[i])),
			     0);
		pos = 0;
		cr_assert_eq(p9c_readdir_next(buf, w, &pos, NULL, NULL, NULL,
					      NULL, 0),
			     -EPROTO, "%s", bad[i]);
		cr_assert_eq(pos, 0);
	}
	/* truncated */
	pos = 0;
	cr_assert_eq(p9c_readdir_next(buf, 5, &pos, NULL, NULL, NULL, NULL, 0),
		     -EPROTO);
}
