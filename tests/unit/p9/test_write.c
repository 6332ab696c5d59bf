/* tests/unit/p9/test_write.c: the write side of 9P2000.L, sentry client
 * against an in-process gofer started writable (a `--mount ...:rw`), and
 * the same requests refused by a read-only one. */
#include <criterion/criterion.h>

#include <fcntl.h>
#include <string.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "gofer/gofer.h"
#include "prot/p9.h"
#include "sentry/p9client.h"
#include "tests/unit/p9/p9_test.h"

static char wtree[64];
static int wfds;
static struct p9t_server wsrv;
static struct p9_client *wc;
static uint32_t wroot;

static void start(unsigned flags)
{
	struct moat_error err = { 0 };
	struct p9_qid rq;

	wfds = p9t_count_fds();
	cr_assert_eq(p9t_make_tree(wtree, sizeof(wtree)), 0);
	cr_assert_eq(p9t_server_start_flags(&wsrv, wtree, flags), 0);
	cr_assert_eq(p9c_open(&wc, wsrv.cli, &wroot, &rq, &err), 0, "%s",
		     err.msg);
}

static void wsetup(void)
{
	start(GOFER_WRITABLE);
}

static int wteardown_ret(void)
{
	int ret = 0;

	if (wc) {
		p9c_close(wc);
		wc = NULL;
		ret = p9t_server_join(&wsrv);
	}
	p9t_rm_tree(wtree);
	return ret;
}

static void wteardown(void)
{
	wteardown_ret();
}

static void wend(void)
{
	cr_assert_eq(wteardown_ret(), 0, "gofer_serve failed");
	cr_assert_eq(p9t_count_fds(), wfds, "fd leak: %d -> %d", wfds,
		     p9t_count_fds());
}

TestSuite(p9_write, .init = wsetup, .fini = wteardown);
#define TW(name) P9T_TEST(p9_write, name, wend)

static void host_path(char *out, size_t cap, const char *rel)
{
	snprintf(out, cap, "%s/%s", wtree, rel);
}

TW(lcreate_makes_and_opens_a_new_file)
{
	char path[128], buf[16] = { 0 };
	struct stat st;
	uint32_t fid;
	int fd = -1;

	cr_assert_eq(p9c_lcreate(wc, wroot, "new.txt", O_RDWR, 0640, &fid, &fd),
		     0);
	cr_assert_eq(write(fd, "hello", 5), 5);
	close(fd);
	host_path(path, sizeof(path), "new.txt");
	cr_assert_eq(lstat(path, &st), 0);
	cr_assert_eq(st.st_mode & 07777, 0640);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	cr_assert_eq(read(fd, buf, sizeof(buf)), 5);
	close(fd);
	cr_assert_str_eq(buf, "hello");
	/* the fid names the new file */
	cr_assert_eq(p9c_getattr(wc, fid, &st), 0);
	cr_assert_eq(st.st_size, 5);
	cr_assert_eq(p9c_clunk(wc, fid), 0);
	/* an existing name is never opened (O_EXCL always) */
	cr_assert_eq(p9c_lcreate(wc, wroot, "new.txt", O_RDWR, 0640, &fid, &fd),
		     -EEXIST);
	cr_assert_eq(p9c_lcreate(wc, wroot, "link_out", O_RDWR, 0640, &fid,
				 &fd),
		     -EEXIST);
}

TW(names_must_be_single_components)
{
	static const char *const bad[] = { "..", ".", "a/b", "" };
	uint32_t fid;
	size_t i;
	int fd;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		cr_assert_eq(p9c_lcreate(wc, wroot, bad[i], O_RDWR, 0600, &fid,
					 &fd),
			     -EINVAL, "%s", bad[i]);
		cr_assert_eq(p9c_mkdir(wc, wroot, bad[i], 0700), -EINVAL);
		cr_assert_eq(p9c_unlinkat(wc, wroot, bad[i], 0), -EINVAL);
		cr_assert_eq(p9c_symlink(wc, wroot, bad[i], "x"), -EINVAL);
	}
}

TW(mkdir_symlink_mknod_link)
{
	char path[128], tgt[64];
	struct stat st;
	uint32_t fid, dfid;
	ssize_t n;

	cr_assert_eq(p9c_mkdir(wc, wroot, "d2", 0750), 0);
	host_path(path, sizeof(path), "d2");
	cr_assert_eq(lstat(path, &st), 0);
	cr_assert(S_ISDIR(st.st_mode));
	cr_assert_eq(p9c_walk1(wc, wroot, "d2", &dfid, NULL), 0);
	cr_assert_eq(p9c_symlink(wc, dfid, "ln", "../../../etc/shadow"), 0);
	host_path(path, sizeof(path), "d2/ln");
	n = readlink(path, tgt, sizeof(tgt) - 1);
	cr_assert_eq(n, 19);
	tgt[n] = 0;
	cr_assert_str_eq(tgt, "../../../etc/shadow");
	cr_assert_eq(p9c_mknod(wc, dfid, "fifo", S_IFIFO | 0600), 0);
	host_path(path, sizeof(path), "d2/fifo");
	cr_assert_eq(lstat(path, &st), 0);
	cr_assert(S_ISFIFO(st.st_mode));
	/* no device nodes, no sockets */
	cr_assert_eq(p9c_mknod(wc, dfid, "null", S_IFCHR | 0666), -EPERM);
	cr_assert_eq(p9c_mknod(wc, dfid, "sock", S_IFSOCK | 0666), -EPERM);
	/* a hard link of file.txt */
	cr_assert_eq(p9c_walk1(wc, wroot, "file.txt", &fid, NULL), 0);
	cr_assert_eq(p9c_link(wc, dfid, fid, "hard"), 0);
	host_path(path, sizeof(path), "d2/hard");
	cr_assert_eq(lstat(path, &st), 0);
	cr_assert_eq(st.st_nlink, 2);
	/* directories are never linked */
	cr_assert_eq(p9c_link(wc, wroot, dfid, "dirlink"), -EPERM);
	cr_assert_eq(p9c_clunk(wc, fid), 0);
	cr_assert_eq(p9c_clunk(wc, dfid), 0);
}

TW(unlink_rename_setattr_fsync)
{
	struct p9c_setattr a = { 0 };
	char path[128];
	struct stat st;
	uint32_t fid, dfid;

	cr_assert_eq(p9c_walk1(wc, wroot, "dir", &dfid, NULL), 0);
	cr_assert_eq(p9c_renameat(wc, wroot, "file.txt", dfid, "moved"), 0);
	host_path(path, sizeof(path), "dir/moved");
	cr_assert_eq(lstat(path, &st), 0);
	cr_assert_eq(p9c_walk1(wc, dfid, "moved", &fid, NULL), 0);
	a.valid = P9_SETATTR_MODE | P9_SETATTR_SIZE | P9_SETATTR_MTIME |
		  P9_SETATTR_MTIME_SET;
	a.mode = 0600;
	a.size = 2;
	a.mtime.tv_sec = 1000000000;
	cr_assert_eq(p9c_setattr(wc, fid, &a), 0);
	cr_assert_eq(lstat(path, &st), 0);
	cr_assert_eq(st.st_mode & 07777, 0600);
	cr_assert_eq(st.st_size, 2);
	cr_assert_eq(st.st_mtim.tv_sec, 1000000000);
	cr_assert_eq(p9c_fsync(wc, fid, false), 0);
	cr_assert_eq(p9c_clunk(wc, fid), 0);
	/* a directory's size cannot be set */
	a.valid = P9_SETATTR_SIZE;
	cr_assert_eq(p9c_setattr(wc, dfid, &a), -EISDIR);
	cr_assert_eq(p9c_unlinkat(wc, dfid, "moved", 0), 0);
	cr_assert_eq(lstat(path, &st), -1);
	cr_assert_eq(p9c_unlinkat(wc, dfid, "sub", 0), -EISDIR);
	cr_assert_eq(p9c_unlinkat(wc, dfid, "sub", AT_REMOVEDIR), 0);
	cr_assert_eq(p9c_unlinkat(wc, wroot, "dir", AT_REMOVEDIR), -ENOTEMPTY);
	cr_assert_eq(p9c_unlinkat(wc, wroot, "dir", 0x1234), -EINVAL);
	cr_assert_eq(p9c_clunk(wc, dfid), 0);
}

TW(setattr_on_a_symlink_fid_never_reaches_its_target)
{
	struct p9c_setattr a = { .valid = P9_SETATTR_MODE, .mode = 0777 };
	char path[128];
	struct stat before, after;
	uint32_t fid;

	cr_assert_eq(p9c_walk1(wc, wroot, "link_in", &fid, NULL), 0);
	host_path(path, sizeof(path), "file.txt");
	cr_assert_eq(stat(path, &before), 0);
	cr_assert_eq(p9c_setattr(wc, fid, &a), -EOPNOTSUPP);
	a.valid = P9_SETATTR_SIZE;
	a.size = 0;
	cr_assert_eq(p9c_setattr(wc, fid, &a), -EINVAL);
	cr_assert_eq(stat(path, &after), 0);
	cr_assert_eq(before.st_mode, after.st_mode);
	cr_assert_eq(after.st_size, (off_t)strlen(P9T_FILE_DATA));
	cr_assert_eq(p9c_clunk(wc, fid), 0);
}

TW(lopen_for_writing_is_served)
{
	char path[128], buf[16] = { 0 };
	uint32_t fid;
	int fd = -1;

	cr_assert_eq(p9c_walk1(wc, wroot, "file.txt", &fid, NULL), 0);
	cr_assert_eq(p9c_lopen(wc, fid, O_WRONLY | O_TRUNC, &fd), 0);
	cr_assert_eq(write(fd, "xy", 2), 2);
	close(fd);
	host_path(path, sizeof(path), "file.txt");
	fd = open(path, O_RDONLY | O_CLOEXEC);
	cr_assert_eq(read(fd, buf, sizeof(buf)), 2);
	close(fd);
	/* creation goes through Tlcreate only */
	cr_assert_eq(p9c_lopen(wc, fid, O_WRONLY | O_CREAT, &fd), -EINVAL);
	cr_assert_eq(p9c_clunk(wc, fid), 0);
	cr_assert_eq(p9c_lopen(wc, wroot, O_WRONLY, &fd), -EISDIR);
}

TW(xattrs_set_get_list_remove)
{
	char path[128], buf[64];
	uint32_t fid;
	long n;

	cr_assert_eq(p9c_walk1(wc, wroot, "file.txt", &fid, NULL), 0);
	cr_assert_eq(p9c_xattr_set(wc, fid, "user.moat", "value", 5, 0), 0);
	host_path(path, sizeof(path), "file.txt");
	n = getxattr(path, "user.moat", buf, sizeof(buf));
	cr_assert_eq(n, 5);
	cr_assert(memcmp(buf, "value", 5) == 0);
	cr_assert_eq(p9c_xattr_get(wc, fid, "user.moat", NULL, 0), 5);
	memset(buf, 0, sizeof(buf));
	cr_assert_eq(p9c_xattr_get(wc, fid, "user.moat", buf, sizeof(buf)), 5);
	cr_assert_str_eq(buf, "value");
	cr_assert_eq(p9c_xattr_get(wc, fid, "user.moat", buf, 2), -ERANGE);
	n = p9c_xattr_get(wc, fid, "", buf, sizeof(buf));
	cr_assert_eq(n, (long)sizeof("user.moat"));
	cr_assert_str_eq(buf, "user.moat");
	cr_assert_eq(p9c_xattr_set(wc, fid, "user.moat", "x", 1, XATTR_CREATE),
		     -EEXIST);
	cr_assert_eq(p9c_xattr_set(wc, fid, "user.moat", NULL, 0, 0), 0);
	cr_assert_eq(getxattr(path, "user.moat", buf, sizeof(buf)), -1);
	cr_assert_eq(p9c_xattr_get(wc, fid, "user.none", buf, sizeof(buf)),
		     -ENODATA);
	cr_assert_eq(p9c_clunk(wc, fid), 0);
}

TW(setattr_and_lcreate_never_set_setid_bits)
{
	struct p9c_setattr a = { .valid = P9_SETATTR_MODE, .mode = 06755 };
	char path[128];
	struct stat st;
	uint32_t fid;
	int fd = -1;

	cr_assert_eq(p9c_walk1(wc, wroot, "file.txt", &fid, NULL), 0);
	cr_assert_eq(p9c_setattr(wc, fid, &a), 0);
	host_path(path, sizeof(path), "file.txt");
	cr_assert_eq(stat(path, &st), 0);
	cr_assert_eq(st.st_mode & 07777, 0755);
	cr_assert_eq(p9c_clunk(wc, fid), 0);
	cr_assert_eq(p9c_lcreate(wc, wroot, "suid", O_RDWR, 04755, &fid, &fd),
		     0);
	close(fd);
	cr_assert_eq(p9c_clunk(wc, fid), 0);
	host_path(path, sizeof(path), "suid");
	cr_assert_eq(stat(path, &st), 0);
	cr_assert_eq(st.st_mode & 07000, 0);
}

TW(lopen_rdonly_trunc_truncates_the_walked_file)
{
	char path[128];
	struct stat st;
	uint32_t fid;
	int fd = -1;

	cr_assert_eq(p9c_walk1(wc, wroot, "file.txt", &fid, NULL), 0);
	cr_assert_eq(p9c_lopen(wc, fid, O_RDONLY | O_TRUNC, &fd), 0);
	close(fd);
	host_path(path, sizeof(path), "file.txt");
	cr_assert_eq(stat(path, &st), 0);
	cr_assert_eq(st.st_size, 0);
	cr_assert_eq(p9c_clunk(wc, fid), 0);
}

TW(only_user_xattrs_are_served)
{
	char path[128], buf[256];
	uint32_t fid;
	long n;

	host_path(path, sizeof(path), "file.txt");
	cr_assert_eq(setxattr(path, "user.a", "1", 1, 0), 0);
	cr_assert_eq(setxattr(path, "user.empty", "", 0, 0), 0);
	/* the test runs as root: a trusted.* name the guest must not see */
	cr_assert_eq(setxattr(path, "trusted.host", "s", 1, 0), 0);
	cr_assert_eq(p9c_walk1(wc, wroot, "file.txt", &fid, NULL), 0);
	cr_assert_eq(p9c_xattr_get(wc, fid, "trusted.host", buf, sizeof(buf)),
		     -ENODATA);
	cr_assert_eq(p9c_xattr_get(wc, fid, "user.empty", buf, sizeof(buf)), 0);
	n = p9c_xattr_get(wc, fid, "", buf, sizeof(buf));
	cr_assert_eq(n, (long)(sizeof("user.a") + sizeof("user.empty")));
	cr_assert(memmem(buf, (size_t)n, "trusted", 7) == NULL);
	cr_assert_eq(p9c_xattr_set(wc, fid, "trusted.x", "v", 1, 0),
		     -EOPNOTSUPP);
	cr_assert_eq(p9c_xattr_set(wc, fid, "security.x", "v", 1, 0),
		     -EOPNOTSUPP);
	cr_assert_eq(p9c_xattr_set(wc, fid, "user.b", NULL, 0, XATTR_CREATE),
		     -EINVAL);
	cr_assert_eq(getxattr(path, "trusted.host", buf, sizeof(buf)), 1);
	cr_assert_eq(p9c_clunk(wc, fid), 0);
}

/* The same requests to a read-only gofer: EROFS, and nothing changes. */
Test(p9_write_ro, every_write_is_erofs, .fini = wteardown)
{
	struct p9c_setattr a = { .valid = P9_SETATTR_MODE, .mode = 0777 };
	char path[128];
	struct stat st;
	uint32_t fid, ffid;
	int fd;

	start(0);
	cr_assert_eq(p9c_lcreate(wc, wroot, "n", O_RDWR, 0600, &fid, &fd),
		     -EROFS);
	cr_assert_eq(p9c_mkdir(wc, wroot, "n", 0700), -EROFS);
	cr_assert_eq(p9c_symlink(wc, wroot, "n", "x"), -EROFS);
	cr_assert_eq(p9c_mknod(wc, wroot, "n", S_IFIFO | 0600), -EROFS);
	cr_assert_eq(p9c_unlinkat(wc, wroot, "file.txt", 0), -EROFS);
	cr_assert_eq(p9c_renameat(wc, wroot, "file.txt", wroot, "m"), -EROFS);
	cr_assert_eq(p9c_walk1(wc, wroot, "file.txt", &ffid, NULL), 0);
	cr_assert_eq(p9c_link(wc, wroot, ffid, "h"), -EROFS);
	cr_assert_eq(p9c_setattr(wc, ffid, &a), -EROFS);
	cr_assert_eq(p9c_fsync(wc, ffid, false), -EROFS);
	cr_assert_eq(p9c_lopen(wc, ffid, O_RDWR, &fd), -EROFS);
	cr_assert_eq(p9c_xattr_set(wc, ffid, "user.x", "1", 1, 0), -EROFS);
	cr_assert_eq(p9c_xattr_get(wc, ffid, "user.x", NULL, 0), -ENODATA);
	cr_assert_eq(p9c_clunk(wc, ffid), 0);
	host_path(path, sizeof(path), "file.txt");
	cr_assert_eq(lstat(path, &st), 0);
	cr_assert_eq(st.st_mode & 07777, 0644);
	host_path(path, sizeof(path), "n");
	cr_assert_eq(lstat(path, &st), -1);
	wend();
}

/* A store gofer (sentry/store.h): flat regular files of its root, made
 * 0600 at most, opened and removed; every other change is EPERM, so that
 * a sentry taken over cannot leave directories, links or symlinks behind
 * (the janitor removes one level) or open modes up. */
Test(p9_write_store, only_flat_files, .fini = wteardown)
{
	struct p9c_setattr a = { .valid = P9_SETATTR_MODE, .mode = 0777 };
	char path[128];
	struct stat st;
	uint32_t fid, f2;
	int fd;

	start(GOFER_STORE);
	cr_assert_eq(p9c_lcreate(wc, wroot, "0001", O_RDWR | O_EXCL, 0600, &fid,
				 &fd),
		     0);
	cr_assert_eq(write(fd, "x", 1), 1);
	close(fd);
	cr_assert_eq(p9c_clunk(wc, fid), 0);
	cr_assert_eq(p9c_walk1(wc, wroot, "0001", &fid, NULL), 0);
	cr_assert_eq(p9c_lopen(wc, fid, O_RDWR, &fd), 0, "reopened");
	close(fd);
	cr_assert_eq(p9c_setattr(wc, fid, &a), -EPERM);
	cr_assert_eq(p9c_link(wc, wroot, fid, "h"), -EPERM);
	cr_assert_eq(p9c_xattr_set(wc, fid, "user.x", "1", 1, 0), -EPERM);
	cr_assert_eq(p9c_clunk(wc, fid), 0);
	cr_assert_eq(p9c_lcreate(wc, wroot, "0002", O_RDWR, 0755, &fid, &fd),
		     -EPERM, "a mode past 0600");
	cr_assert_eq(p9c_lcreate(wc, wroot, "0002", O_RDWR, 04600, &fid, &fd),
		     -EPERM, "set-id");
	cr_assert_eq(p9c_mkdir(wc, wroot, "d", 0700), -EPERM);
	cr_assert_eq(p9c_symlink(wc, wroot, "s", "/etc/passwd"), -EPERM);
	cr_assert_eq(p9c_mknod(wc, wroot, "n", S_IFIFO | 0600), -EPERM);
	cr_assert_eq(p9c_renameat(wc, wroot, "0001", wroot, "0003"), -EPERM);
	cr_assert_eq(p9c_unlinkat(wc, wroot, "dir", AT_REMOVEDIR), -EPERM);
	/* one name at a time: never below the root */
	cr_assert_eq(p9c_walk1(wc, wroot, "dir", &f2, NULL), 0);
	cr_assert_eq(p9c_walk1(wc, f2, "inner.txt", &fid, NULL), 0,
		     "walks are one name each");
	cr_assert_eq(p9c_clunk(wc, fid), 0);
	cr_assert_eq(p9c_clunk(wc, f2), 0);
	cr_assert_eq(p9c_unlinkat(wc, wroot, "0001", 0), 0);
	host_path(path, sizeof(path), "0001");
	cr_assert_eq(lstat(path, &st), -1, "removed");
	host_path(path, sizeof(path), "d");
	cr_assert_eq(lstat(path, &st), -1, "no directory was made");
	wend();
}
