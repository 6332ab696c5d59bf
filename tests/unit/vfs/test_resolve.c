/* tests/unit/vfs/test_resolve.c: path resolution of sentry/vfs.c
 * (vfs_resolve, vfs_readlink, vfs_stat, vfs_access, vfs_statfs) against an
 * in-process, unconfined gofer (gofer_serve on a thread, over a socketpair)
 * serving a temp tree.
 *
 * vfs.c keeps static state (the dentry cache, the root and mount vnodes)
 * for the life of the process. Criterion forks one process per test, so
 * every test starts with an empty cache: the fixture runs in .init, in the
 * test's own process.
 */
#include <criterion/criterion.h>

#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#endif

#include "gofer/gofer.h"
#include "sentry/p9client.h"
#include "sentry/sentry.h"
#include "sentry/vfs.h"
#include "tests/unit/vfs/vfs_test.h"

#define F_DATA "moat vfs: the contents of /a/b/f\n"
#define PASSWD_DATA "root:x:0:0:inside the sandbox tree:/root:/bin/sh\n"

/* ---- helpers -------------------------------------------------------------- */

/* Criterion 2.4 ignores failures in .fini, so the no-leak check cannot live
 * there: VT_TEST runs the body, then rend() (release everything and assert
 * nothing leaked). .fini only cleans up, idempotently, after a test that
 * failed before reaching rend(). */
#define VT_TEST(suite, name)                                                   \
	static void suite##__##name(void);                                     \
	Test(suite, name)                                                      \
	{                                                                      \
		suite##__##name();                                             \
		rend();                                                        \
	}                                                                      \
	static void suite##__##name(void)

static int tree_path(char *buf, size_t cap, const char *root, const char *rel)
{
	int n = snprintf(buf, cap, "%s/%s", root, rel);

	return n < 0 || (size_t)n >= cap ? -1 : 0;
}

static int mk_file(const char *root, const char *rel, const char *data,
		   mode_t mode)
{
	char path[PATH_MAX];
	ssize_t n;
	int fd;

	if (tree_path(path, sizeof(path), root, rel) < 0)
		return -1;
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	n = write(fd, data, strlen(data));
	close(fd);
	if (n != (ssize_t)strlen(data))
		return -1;
	return chmod(path, mode); /* exact mode, whatever the umask */
}

static int mk_dir(const char *root, const char *rel, mode_t mode)
{
	char path[PATH_MAX];

	if (tree_path(path, sizeof(path), root, rel) < 0)
		return -1;
	if (mkdir(path, mode) < 0)
		return -1;
	return chmod(path, mode);
}

static int mk_link(const char *root, const char *rel, const char *target)
{
	char path[PATH_MAX];

	if (tree_path(path, sizeof(path), root, rel) < 0)
		return -1;
	return symlink(target, path);
}

static int rm_one(const char *path, const struct stat *st, int flag,
		  struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

/* The served tree ("/" is the temp dir):
 *   a/b/c/                      dirs, 0755
 *   a/b/f                       F_DATA, 0644
 *   a/b/exe                     0755
 *   a/b/up   -> ../../../../../../etc/passwd   (relative, climbs out)
 *   a/l      -> b                (relative)
 *   a/abs    -> /a/b             (absolute: from the sandbox root)
 *   a/cl     -> b/c              (".." after it is /a/b, not /a)
 *   a/lf     -> b/f              (symlink to a file)
 *   x -> y, y -> x               (a loop)
 *   chain40/n1 -> n2 ... n40 -> ../a/b/f      (40 links: resolves)
 *   chain41/n1 -> n2 ... n41 -> ../a/b/f      (41 links: ELOOP)
 *   dangling -> does/not/exist
 *   etc/passwd                   PASSWD_DATA (the tree's, not the host's)
 *   pw       -> /etc/passwd
 *   esc      -> ../../../../..   (must clamp at the root)
 *   dev/hostnode                 (shadowed by the devfs mount)
 *   secret/                      0700 root
 *   secret/pub                   0644 root (readable, in an unsearchable dir)
 *   f600                         0600 root
 *   f1000                        0600 owned by uid 1000
 *   g640                         0640 root:root
 *   n255 (a name of 255 'n')     a regular file
 */
static int make_tree(char *dir, size_t cap)
{
	char name[NAME_MAX + 1], path[PATH_MAX], target[32];
	int i;

	snprintf(dir, cap, "/tmp/moat-vfs-XXXXXX");
	if (!mkdtemp(dir) || chmod(dir, 0755) < 0)
		return -1;
	if (mk_dir(dir, "a", 0755) || mk_dir(dir, "a/b", 0755) ||
	    mk_dir(dir, "a/b/c", 0755) || mk_dir(dir, "etc", 0755) ||
	    mk_dir(dir, "dev", 0755) || mk_dir(dir, "secret", 0700) ||
	    mk_dir(dir, "chain40", 0755) || mk_dir(dir, "chain41", 0755))
		return -1;
	if (mk_file(dir, "a/b/f", F_DATA, 0644) ||
	    mk_file(dir, "a/b/exe", "#!/bin/sh\n", 0755) ||
	    mk_file(dir, "etc/passwd", PASSWD_DATA, 0644) ||
	    mk_file(dir, "dev/hostnode", "host", 0644) ||
	    mk_file(dir, "secret/pub", "pub", 0644) ||
	    mk_file(dir, "f600", "secret", 0600) ||
	    mk_file(dir, "f1000", "mine", 0600) ||
	    mk_file(dir, "g640", "group", 0640))
		return -1;
	if (tree_path(path, sizeof(path), dir, "f1000") < 0 ||
	    chown(path, 1000, 1000) < 0)
		return -1;
	memset(name, 'n', NAME_MAX);
	name[NAME_MAX] = 0;
	if (mk_file(dir, name, "long", 0644))
		return -1;
	if (mk_link(dir, "a/l", "b") || mk_link(dir, "a/abs", "/a/b") ||
	    mk_link(dir, "a/cl", "b/c") || mk_link(dir, "a/lf", "b/f") ||
	    mk_link(dir, "a/b/up", "../../../../../../etc/passwd") ||
	    mk_link(dir, "x", "y") || mk_link(dir, "y", "x") ||
	    mk_link(dir, "dangling", "does/not/exist") ||
	    mk_link(dir, "pw", "/etc/passwd") ||
	    mk_link(dir, "esc", "../../../../.."))
		return -1;
	for (i = 1; i <= 41; i++) {
		if (i <= 40) {
			snprintf(path, sizeof(path), "chain40/n%d", i);
			if (i < 40)
				snprintf(target, sizeof(target), "n%d", i + 1);
			else
				snprintf(target, sizeof(target), "../a/b/f");
			if (mk_link(dir, path, target))
				return -1;
		}
		snprintf(path, sizeof(path), "chain41/n%d", i);
		if (i < 41)
			snprintf(target, sizeof(target), "n%d", i + 1);
		else
			snprintf(target, sizeof(target), "../a/b/f");
		if (mk_link(dir, path, target))
			return -1;
	}
	return 0;
}

/* ---- fixture -------------------------------------------------------------- */

static char tree[64];
static int base_fds;
static int held_fds; /* host fds the dentry cache keeps for good */
static pthread_t gofer_th;
static bool gofer_running;
static int gofer_sock = -1, gofer_rootfd = -1, gofer_ret;

static void fake_fini(void);

static void *gofer_main_thread(void *p)
{
	(void)p;
	gofer_ret = gofer_serve(gofer_sock, gofer_rootfd, 0);
	return NULL;
}

static void rsetup(void)
{
	struct moat_error err = { 0 };
	struct p9_qid qid;
	int sv[2], rc;

	base_fds = vfst_count_fds();
	held_fds = 0;
	cr_assert_eq(make_tree(tree, sizeof(tree)), 0, "make_tree: %m");

	S = calloc(1, sizeof(*S));
	cr_assert(S);
	S->audit_fd = -1;
	S->boot_ns = now_ns();
	S->host_proc_fd = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
	cr_assert_geq(S->host_proc_fd, 0);

	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	gofer_sock = sv[1];
	gofer_rootfd = open(tree, O_PATH | O_DIRECTORY | O_CLOEXEC);
	cr_assert_geq(gofer_rootfd, 0);
	cr_assert_eq(pthread_create(&gofer_th, NULL, gofer_main_thread, NULL),
		     0);
	gofer_running = true;
	rc = p9c_open(&S->p9, sv[0], &S->rootfid, &qid, &err);
	if (rc < 0)
		close(sv[0]); /* still ours; lets the gofer see EOF */
	cr_assert_eq(rc, 0, "%s", err.msg);
	cr_assert_eq(vfs_init(S->rootfid, &err), 0, "%s", err.msg);
	cr_assert_eq(vfs_ns0()->top_vn->kind,
		     VN_TMPFS); /* the merged view's "/" */
	cr_assert_str_eq(vfs_ns0()->top_vn->path, "/");
}

/* Idempotent. Returns gofer_serve's result (0: clean EOF). */
static int rteardown_ret(void)
{
	int ret = 0;

	fake_fini();
	if (S && S->p9) {
		p9c_close(S->p9); /* the gofer sees EOF */
		S->p9 = NULL;
	}
	if (gofer_running) {
		pthread_join(gofer_th, NULL);
		gofer_running = false;
		ret = gofer_ret;
	}
	if (gofer_sock >= 0)
		close(gofer_sock);
	if (gofer_rootfd >= 0)
		close(gofer_rootfd);
	gofer_sock = gofer_rootfd = -1;
	if (S) {
		if (S->host_proc_fd >= 0)
			close(S->host_proc_fd);
		free(S);
		S = NULL;
	}
	if (tree[0])
		nftw(tree, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	tree[0] = 0;
	return ret;
}

static void rteardown(void)
{
	rteardown_ret();
}

static void rend(void)
{
	int n;

	cr_assert_eq(rteardown_ret(), 0, "gofer_serve failed");
	n = vfst_count_fds();
	cr_assert_eq(n, base_fds + held_fds, "fd leak: %d -> %d (%d held)",
		     base_fds, n, held_fds);
#if defined(__SANITIZE_ADDRESS__)
	/* The dentry cache is reachable from vfs.c's statics: not a leak.
	 * Anything a test forgot to vnode_put/file_put is. */
	cr_assert_eq(__lsan_do_recoverable_leak_check(), 0, "memory leak");
#endif
}

TestSuite(vfs_resolve, .init = rsetup, .fini = rteardown);
#define TR(name) VT_TEST(vfs_resolve, name)

/* Resolve from the root (t == NULL), as the CLI does. */
static int res(const char *path, int flags, struct vnode **out)
{
	*out = NULL;
	return vfs_resolve(NULL, AT_FDCWD, path, flags, out);
}

/* Resolve and check the canonical path and file type; drops the ref. The
 * macros below pass the caller's line, so a failure points at the case. */
static void expect_at_(int line, struct task *t, int dirfd, const char *path,
		       int flags, const char *canon, mode_t type)
{
	struct vnode *vn = NULL;
	int rc = vfs_resolve(t, dirfd, path, flags, &vn);
	char got[PATH_MAX];
	mode_t mode;

	cr_assert_eq(rc, 0, "line %d: resolve \"%.200s\": %s", line, path,
		     strerror(-rc));
	cr_assert_not_null(vn);
	snprintf(got, sizeof(got), "%s", vn->path);
	mode = vn->mode;
	vnode_put(vn);
	cr_assert_str_eq(got, canon, "line %d: resolve \"%.200s\"", line, path);
	cr_assert_eq(mode & S_IFMT, type,
		     "line %d: resolve \"%.200s\": mode %o", line, path, mode);
}

static void expect_err_at_(int line, struct task *t, int dirfd,
			   const char *path, int flags, int err)
{
	struct vnode *vn = NULL;
	int rc = vfs_resolve(t, dirfd, path, flags, &vn);
	char got[PATH_MAX];

	if (rc == 0) {
		snprintf(got, sizeof(got), "%s", vn ? vn->path : "?");
		vnode_put(vn);
		cr_assert_fail("line %d: resolve \"%.200s\": got %s, want %s",
			       line, path, got, strerror(err));
	}
	cr_assert_eq(rc, -err, "line %d: resolve \"%.200s\": got %s, want %s",
		     line, path, strerror(-rc), strerror(err));
}

#define expect_at(...) expect_at_(__LINE__, __VA_ARGS__)
#define expect(...) expect_at_(__LINE__, NULL, AT_FDCWD, __VA_ARGS__)
#define expect_err_at(...) expect_err_at_(__LINE__, __VA_ARGS__)
#define expect_err(...) expect_err_at_(__LINE__, NULL, AT_FDCWD, __VA_ARGS__)

static ino_t host_ino(const char *rel)
{
	char path[PATH_MAX];
	struct stat st;

	cr_assert_eq(tree_path(path, sizeof(path), tree, rel), 0);
	cr_assert_eq(lstat(path, &st), 0, "lstat %s: %m", path);
	return st.st_ino;
}

/* ---- plain resolution ------------------------------------------------------ */

TR(regular_file_from_root)
{
	struct vnode *vn;
	struct stat st;

	cr_assert_eq(res("/a/b/f", LOOKUP_FOLLOW, &vn), 0);
	cr_assert_eq(vn->kind, VN_GOFER);
	cr_assert(S_ISREG(vn->mode));
	cr_assert_str_eq(vn->path, "/a/b/f");
	cr_assert_eq(vfs_stat(vn, &st), 0);
	cr_assert(S_ISREG(st.st_mode));
	cr_assert_eq(st.st_mode & 07777, 0644);
	cr_assert_eq(st.st_size, (off_t)strlen(F_DATA));
	cr_assert_eq(st.st_ino, host_ino("a/b/f"));
	vnode_put(vn);
}

TR(root_and_dots)
{
	expect("/", LOOKUP_FOLLOW, "/", S_IFDIR);
	expect("/.", LOOKUP_FOLLOW, "/", S_IFDIR);
	expect("/..", LOOKUP_FOLLOW, "/", S_IFDIR);
	expect("//a//b///f", LOOKUP_FOLLOW, "/a/b/f", S_IFREG);
	expect("/a/./b/./f", LOOKUP_FOLLOW, "/a/b/f", S_IFREG);
	expect("/a/b/c/..", LOOKUP_FOLLOW, "/a/b", S_IFDIR);
	expect("/a/b/c/../../b/f", LOOKUP_FOLLOW, "/a/b/f", S_IFREG);
	expect("/a/b/", LOOKUP_FOLLOW, "/a/b", S_IFDIR);
	expect("/a/b/.", 0, "/a/b", S_IFDIR);
	/* t == NULL: a relative path is taken from the root */
	expect("a/b/f", LOOKUP_FOLLOW, "/a/b/f", S_IFREG);
}

TR(same_vnode_from_cache)
{
	struct vnode *v1, *v2;

	cr_assert_eq(res("/a/b/f", LOOKUP_FOLLOW, &v1), 0);
	cr_assert_eq(res("/a/l/f", LOOKUP_FOLLOW, &v2), 0);
	cr_assert_eq(v1, v2, "one cached vnode per canonical path");
	cr_assert(v1->cached);
	vnode_put(v1);
	vnode_put(v2);
}

/* ---- symlinks --------------------------------------------------------------- */

TR(relative_symlink_in_the_middle)
{
	expect("/a/l/f", LOOKUP_FOLLOW, "/a/b/f", S_IFREG);
	expect("/a/l/f", 0, "/a/b/f", S_IFREG);
	expect("/a/l/c/", 0, "/a/b/c", S_IFDIR);
}

TR(absolute_symlink_is_relative_to_sandbox_root)
{
	struct vnode *vn;
	struct stat st;

	expect("/a/abs/f", LOOKUP_FOLLOW, "/a/b/f", S_IFREG);
	expect("/a/abs", LOOKUP_FOLLOW, "/a/b", S_IFDIR);
	/* /etc/passwd is the tree's own, never the host's */
	cr_assert_eq(res("/pw", LOOKUP_FOLLOW, &vn), 0);
	cr_assert_str_eq(vn->path, "/etc/passwd");
	cr_assert_eq(vfs_stat(vn, &st), 0);
	cr_assert(S_ISREG(st.st_mode));
	cr_assert_eq(st.st_size, (off_t)strlen(PASSWD_DATA));
	cr_assert_eq(st.st_ino, host_ino("etc/passwd"));
	vnode_put(vn);
}

TR(dotdot_after_symlink_is_parent_of_target)
{
	/* /a/cl -> b/c: ".." is /a/b (Linux semantics), not lexically /a */
	expect("/a/cl/../f", LOOKUP_FOLLOW, "/a/b/f", S_IFREG);
	expect("/a/cl/..", LOOKUP_FOLLOW, "/a/b", S_IFDIR);
	expect("/a/l/..", LOOKUP_FOLLOW, "/a", S_IFDIR);
}

TR(symlink_to_file_with_trailing_slash)
{
	expect("/a/lf", LOOKUP_FOLLOW, "/a/b/f", S_IFREG);
	expect_err("/a/lf/", LOOKUP_FOLLOW, ENOTDIR);
	expect_err("/a/lf/", 0, ENOTDIR);
}

TR(last_symlink_not_followed_without_lookup_follow)
{
	struct vnode *vn;
	struct stat st;
	char buf[64];

	cr_assert_eq(res("/a/l", 0, &vn), 0);
	cr_assert(S_ISLNK(vn->mode));
	cr_assert_str_eq(vn->path, "/a/l");
	cr_assert_eq(vfs_stat(vn, &st), 0);
	cr_assert(S_ISLNK(st.st_mode));
	cr_assert_eq(st.st_size, 1);
	cr_assert_eq(vfs_readlink(vn, buf, sizeof(buf)), 1);
	cr_assert_str_eq(buf, "b");
	/* cached after the first read: same answer */
	cr_assert_eq(vfs_readlink(vn, buf, sizeof(buf)), 1);
	cr_assert_str_eq(buf, "b");
	vnode_put(vn);

	cr_assert_eq(res("/a/abs", 0, &vn), 0);
	cr_assert(S_ISLNK(vn->mode));
	cr_assert_eq(vfs_readlink(vn, buf, sizeof(buf)), 4);
	cr_assert_str_eq(buf, "/a/b");
	cr_assert_eq(vfs_readlink(vn, buf, 4), -ENAMETOOLONG,
		     "no room for NUL");
	cr_assert_eq(vfs_readlink(vn, buf, 5), 4);
	vnode_put(vn);

	/* a trailing slash forces the follow */
	expect("/a/l/", 0, "/a/b", S_IFDIR);
	/* symlinks before the last component are always followed */
	expect("/a/l/f", 0, "/a/b/f", S_IFREG);
	expect("/x", 0, "/x", S_IFLNK);
	expect("/dangling", 0, "/dangling", S_IFLNK);
}

TR(readlink_of_non_symlink_is_einval)
{
	struct vnode *vn;
	char buf[64];

	cr_assert_eq(res("/a/b/f", 0, &vn), 0);
	cr_assert_eq(vfs_readlink(vn, buf, sizeof(buf)), -EINVAL);
	vnode_put(vn);
	cr_assert_eq(res("/a", 0, &vn), 0);
	cr_assert_eq(vfs_readlink(vn, buf, sizeof(buf)), -EINVAL);
	vnode_put(vn);
}

TR(symlink_loop_is_eloop)
{
	expect_err("/x", LOOKUP_FOLLOW, ELOOP);
	expect_err("/y", LOOKUP_FOLLOW, ELOOP);
	expect_err("/x/", 0, ELOOP);
	expect_err("/x/anything", 0, ELOOP);
}

TR(forty_links_resolve_forty_one_eloop)
{
	struct vnode *vn;

	expect("/chain40/n1", LOOKUP_FOLLOW, "/a/b/f", S_IFREG);
	/* the budget is per resolution, not per link: 39 more is fine */
	expect("/chain40/n2", LOOKUP_FOLLOW, "/a/b/f", S_IFREG);
	expect_err("/chain41/n1", LOOKUP_FOLLOW, ELOOP);
	/* n2 of the 41-chain is 40 links long */
	expect("/chain41/n2", LOOKUP_FOLLOW, "/a/b/f", S_IFREG);
	/* not following the last: no budget used */
	cr_assert_eq(res("/chain41/n1", 0, &vn), 0);
	cr_assert(S_ISLNK(vn->mode));
	vnode_put(vn);
	/* links earlier in the path count too: /a/l is one more */
	expect("/a/l/../../chain40/n2", LOOKUP_FOLLOW, "/a/b/f", S_IFREG);
	expect_err("/a/l/../../chain41/n2", LOOKUP_FOLLOW, ELOOP);
}

TR(dangling_symlink_is_enoent)
{
	expect_err("/dangling", LOOKUP_FOLLOW, ENOENT);
	expect_err("/dangling/", 0, ENOENT);
	expect_err("/dangling/x", LOOKUP_FOLLOW, ENOENT);
}

/* ---- clamping at the root ----------------------------------------------------- */

TR(dotdot_clamps_at_root)
{
	expect("/../../a/b/f", LOOKUP_FOLLOW, "/a/b/f", S_IFREG);
	expect("/a/../../../a/b/f", LOOKUP_FOLLOW, "/a/b/f", S_IFREG);
	expect("../../..", LOOKUP_FOLLOW, "/", S_IFDIR);
	expect("/../etc/passwd", LOOKUP_FOLLOW, "/etc/passwd", S_IFREG);
}

TR(symlink_escape_clamps_at_root)
{
	expect("esc/a/b/f", LOOKUP_FOLLOW, "/a/b/f", S_IFREG);
	expect("/esc/a/b/f", LOOKUP_FOLLOW, "/a/b/f", S_IFREG);
	expect("/esc", LOOKUP_FOLLOW, "/", S_IFDIR);
	expect("/esc/esc/esc/..", LOOKUP_FOLLOW, "/", S_IFDIR);
	/* relative target climbing out from a subdir lands on the tree's own
	 * /etc/passwd */
	expect("/a/b/up", LOOKUP_FOLLOW, "/etc/passwd", S_IFREG);
}

/* ---- errors ------------------------------------------------------------------- */

TR(trailing_slash_on_file_is_enotdir)
{
	expect_err("/a/b/f/", LOOKUP_FOLLOW, ENOTDIR);
	expect_err("/a/b/f/", 0, ENOTDIR);
	expect_err("/a/b/f//", 0, ENOTDIR);
	expect_err("/a/b/f/.", 0, ENOTDIR);
}

TR(component_under_file_is_enotdir)
{
	expect_err("/a/b/f/x", LOOKUP_FOLLOW, ENOTDIR);
	expect_err("/a/lf/x", LOOKUP_FOLLOW, ENOTDIR);
	expect_err("/dev/null/x", LOOKUP_FOLLOW, ENOTDIR);
}

/* Linux: every component but the last must be a directory, ".." included
 * ("/etc/passwd/.." is ENOTDIR). */
TR(dotdot_after_file_is_enotdir)
{
	expect_err("/a/b/f/..", LOOKUP_FOLLOW, ENOTDIR);
	expect_err("/a/b/f/../f", LOOKUP_FOLLOW, ENOTDIR);
	expect_err("/a/lf/..", LOOKUP_FOLLOW, ENOTDIR);
}

TR(nonexistent_is_enoent_twice)
{
	expect_err("/nonexistent", LOOKUP_FOLLOW, ENOENT);
	expect_err("/nonexistent", LOOKUP_FOLLOW, ENOENT); /* negative cache */
	expect_err("/nonexistent/x", LOOKUP_FOLLOW, ENOENT);
	expect_err("/a/b/nonexistent", 0, ENOENT);
	expect_err("", LOOKUP_FOLLOW, ENOENT);
}

TR(negative_cache_is_sticky)
{
	char path[PATH_MAX];

	/* The rootfs is read-only for the sandbox's life: a failed lookup is
	 * cached for good, so a file appearing on the host later stays
	 * invisible (no second round trip). */
	expect_err("/late", LOOKUP_FOLLOW, ENOENT);
	cr_assert_eq(mk_file(tree, "late", "x", 0644), 0);
	expect_err("/late", LOOKUP_FOLLOW, ENOENT);
	cr_assert_eq(tree_path(path, sizeof(path), tree, "late"), 0);
	cr_assert_eq(unlink(path), 0);
}

TR(name_too_long)
{
	char name[NAME_MAX + 3];

	name[0] = '/';
	memset(name + 1, 'n', NAME_MAX + 1);
	name[NAME_MAX + 2] = 0;
	expect_err(name, LOOKUP_FOLLOW, ENAMETOOLONG); /* 256 chars */
	name[NAME_MAX + 1] = 0;
	expect(name, LOOKUP_FOLLOW, name, S_IFREG); /* 255: exists */
	name[1] = 'm';
	expect_err(name, LOOKUP_FOLLOW, ENOENT); /* 255: does not */
}

TR(path_too_long)
{
	char *p = malloc(5001);
	size_t i;

	cr_assert(p);
	for (i = 0; i < 5000; i += 2)
		memcpy(p + i, "/a", 2);
	p[5000] = 0;
	expect_err(p, LOOKUP_FOLLOW, ENAMETOOLONG);

	/* the boundary: PATH_MAX - 1 bytes resolve, PATH_MAX do not */
	memset(p, '/', PATH_MAX);
	memcpy(p + PATH_MAX - 1 - 5, "a/b/f", 6);
	cr_assert_eq(strlen(p), PATH_MAX - 1);
	expect(p, LOOKUP_FOLLOW, "/a/b/f", S_IFREG);
	memset(p, '/', PATH_MAX + 1);
	memcpy(p + PATH_MAX - 5, "a/b/f", 6);
	cr_assert_eq(strlen(p), PATH_MAX);
	expect_err(p, LOOKUP_FOLLOW, ENAMETOOLONG);
	free(p);
}

/* ---- mounts ------------------------------------------------------------------- */

TR(proc_and_dev_are_mount_roots)
{
	struct vnode *vn;
	struct stat st;

	cr_assert_eq(res("/proc", LOOKUP_FOLLOW, &vn), 0);
	cr_assert_eq(vn->kind, VN_PROC);
	cr_assert(S_ISDIR(vn->mode));
	cr_assert_str_eq(vn->path, "/proc");
	cr_assert_eq(vfs_stat(vn, &st), 0);
	cr_assert(S_ISDIR(st.st_mode));
	vnode_put(vn);

	cr_assert_eq(res("/dev", LOOKUP_FOLLOW, &vn), 0);
	cr_assert_eq(vn->kind, VN_DEV);
	cr_assert(S_ISDIR(vn->mode));
	cr_assert_str_eq(vn->path, "/dev");
	cr_assert_eq(vfs_stat(vn, &st), 0);
	cr_assert(S_ISDIR(st.st_mode));
	vnode_put(vn);

	/* reached by any route */
	cr_assert_eq(res("/a/../proc/", LOOKUP_FOLLOW, &vn), 0);
	cr_assert_eq(vn->kind, VN_PROC);
	vnode_put(vn);
	cr_assert_eq(res("/esc/dev", LOOKUP_FOLLOW, &vn), 0);
	cr_assert_eq(vn->kind, VN_DEV);
	vnode_put(vn);
	expect("/proc/..", LOOKUP_FOLLOW, "/", S_IFDIR);
	expect("/dev/../a", LOOKUP_FOLLOW, "/a", S_IFDIR);
}

TR(devfs_shadows_the_tree)
{
	/* the tree has dev/hostnode; the mount hides it */
	expect_err("/dev/hostnode", LOOKUP_FOLLOW, ENOENT);
	expect_err("/proc/hostnode", LOOKUP_FOLLOW, ENOENT);
}

TR(dev_null_is_a_char_device)
{
	struct vnode *vn;
	struct stat st;
	char buf[64];

	cr_assert_eq(res("/dev/null", LOOKUP_FOLLOW, &vn), 0);
	cr_assert_eq(vn->kind, VN_DEV);
	cr_assert(S_ISCHR(vn->mode));
	cr_assert_str_eq(vn->path, "/dev/null");
	cr_assert_eq(vfs_stat(vn, &st), 0);
	cr_assert(S_ISCHR(st.st_mode));
	cr_assert_eq(major(st.st_rdev), 1);
	cr_assert_eq(minor(st.st_rdev), 3);
	vnode_put(vn);

	/* devfs symlinks */
	cr_assert_eq(res("/dev/stdin", 0, &vn), 0);
	cr_assert(S_ISLNK(vn->mode));
	cr_assert_eq(vfs_readlink(vn, buf, sizeof(buf)),
		     (int)strlen("/proc/self/fd/0"));
	cr_assert_str_eq(buf, "/proc/self/fd/0");
	vnode_put(vn);
	/* without a task there is no /proc/self */
	expect_err("/dev/stdin", LOOKUP_FOLLOW, ENOENT);
	expect_err("/dev/nonexistent", LOOKUP_FOLLOW, ENOENT);
}

/* ---- vfs_access ------------------------------------------------------------------ */

static struct vnode *must(const char *path)
{
	struct vnode *vn;
	int rc = res(path, LOOKUP_FOLLOW, &vn);

	cr_assert_eq(rc, 0, "resolve %s: %s", path, strerror(-rc));
	return vn;
}

TR(access_as_root)
{
	struct creds c = { .cap = CAP_SETS_ROOT };
	struct vnode *f = must("/a/b/f"), *exe = must("/a/b/exe"),
		     *d = must("/a/b"), *s = must("/f600"),
		     *n = must("/dev/null");

	cr_assert_eq(vfs_access(&c, f, R_OK), 0);
	/* The rootfs is writable in the sandbox (an overlay): root may. */
	cr_assert_eq(vfs_access(&c, f, W_OK), 0);
	cr_assert_eq(vfs_access(&c, f, X_OK), -EACCES);
	cr_assert_eq(vfs_access(&c, f, F_OK), 0);
	cr_assert_eq(vfs_access(&c, exe, X_OK), 0);
	cr_assert_eq(vfs_access(&c, d, R_OK | X_OK), 0);
	cr_assert_eq(vfs_access(&c, d, W_OK), 0);
	cr_assert_eq(vfs_access(&c, s, R_OK), 0, "root reads a 0600 file");
	cr_assert_eq(vfs_access(&c, n, R_OK | W_OK), 0, "devfs is writable");
	vnode_put(f);
	vnode_put(exe);
	vnode_put(d);
	vnode_put(s);
	vnode_put(n);
}

/* The capabilities decide, not uid 0: root without them is held to the
 * mode, a user with them is not (Linux's generic_permission). */
TR(access_by_capability)
{
	struct creds c = { .ruid = 1000,
			   .euid = 1000,
			   .suid = 1000,
			   .fsuid = 1000,
			   .rgid = 1000,
			   .egid = 1000,
			   .sgid = 1000,
			   .fsgid = 1000 };
	struct vnode *f = must("/a/b/f"), *s = must("/f600"),
		     *mine = must("/f1000"), *exe = must("/a/b/exe"),
		     *sec = must("/secret");

	c.cap.eff = 1ULL << CAP_DAC_READ_SEARCH;
	cr_assert_eq(vfs_access(&c, s, R_OK), 0, "reads a 0600 file");
	cr_assert_eq(vfs_access(&c, s, W_OK), -EACCES, "but does not write");
	cr_assert_eq(vfs_access(&c, sec, R_OK | X_OK), 0, "searches 0700");
	cr_assert_eq(vfs_access(&c, sec, W_OK), -EACCES);
	c.cap.eff = 1ULL << CAP_DAC_OVERRIDE;
	cr_assert_eq(vfs_access(&c, s, R_OK | W_OK), 0);
	cr_assert_eq(vfs_access(&c, sec, W_OK | X_OK), 0);
	cr_assert_eq(vfs_access(&c, f, X_OK), -EACCES, "no x bit: never");
	cr_assert_eq(vfs_access(&c, exe, X_OK), 0);
	/* uid 0 with no capability: another's 0600 file is closed */
	c = (struct creds){ 0 };
	cr_assert_eq(vfs_access(&c, mine, R_OK), -EACCES);
	cr_assert_eq(vfs_access(&c, s, R_OK | W_OK), 0, "its own still open");
	c.cap.eff = 1ULL << CAP_DAC_OVERRIDE;
	cr_assert_eq(vfs_access(&c, mine, R_OK | W_OK), 0);
	vnode_put(f);
	vnode_put(s);
	vnode_put(mine);
	vnode_put(exe);
	vnode_put(sec);
}

TR(access_as_user)
{
	struct creds c = { .ruid = 1000,
			   .euid = 1000,
			   .suid = 1000,
			   .fsuid = 1000,
			   .rgid = 1000,
			   .egid = 1000,
			   .sgid = 1000,
			   .fsgid = 1000 };
	struct vnode *f = must("/a/b/f"), *s = must("/f600"),
		     *mine = must("/f1000"), *g = must("/g640"),
		     *exe = must("/a/b/exe"), *n = must("/dev/null");

	cr_assert_eq(vfs_access(&c, s, R_OK), -EACCES);
	cr_assert_eq(vfs_access(&c, f, R_OK), 0);
	cr_assert_eq(vfs_access(&c, f, X_OK), -EACCES);
	cr_assert_eq(vfs_access(&c, f, W_OK), -EACCES, "not the owner, 0644");
	cr_assert_eq(vfs_access(&c, exe, R_OK | X_OK), 0);
	cr_assert_eq(vfs_access(&c, mine, R_OK), 0, "owner bits");
	cr_assert_eq(vfs_access(&c, mine, X_OK), -EACCES);
	cr_assert_eq(vfs_access(&c, g, R_OK), -EACCES, "other bits: none");
	c.fsgid = 0;
	cr_assert_eq(vfs_access(&c, g, R_OK), 0, "group bits via fsgid");
	c.fsgid = 1000;
	c.ngroups = 2;
	c.groups[0] = 27;
	c.groups[1] = 0;
	cr_assert_eq(vfs_access(&c, g, R_OK), 0, "group bits via groups");
	cr_assert_eq(vfs_access(&c, n, R_OK | W_OK), 0);
	vnode_put(f);
	vnode_put(s);
	vnode_put(mine);
	vnode_put(g);
	vnode_put(exe);
	vnode_put(n);
}

TR(statfs_of_the_rootfs_is_writable_in_the_sandbox)
{
	struct vnode *vn = must("/a/b/f");
	struct statfs sf;

	cr_assert_eq(vfs_statfs(vn, &sf), 0);
	cr_assert(!(sf.f_flags & ST_RDONLY), "the overlay makes it writable");
	vnode_put(vn);
	vn = must("/proc");
	cr_assert_eq(vfs_statfs(vn, &sf), 0);
	cr_assert_eq(sf.f_type, 0x9fa0);
	vnode_put(vn);
}

/* The mount table and what stat and statfs say of each mount's root: one
 * st_dev per mount, shared by its files, and f_flags that are the listed
 * options (with ST_VALID). A fixed table would disagree at the root. */
TR(mount_table_agrees_with_stat_and_statfs)
{
	struct vfs_mount_info t[VFS_MOUNTS_TABLE_MAX], m;
	size_t n = vfs_mount_table(t, VFS_MOUNTS_TABLE_MAX);
	const char *want[] = { "/",	   "/proc",	  "/dev", "/dev/pts",
			       "/dev/shm", "/dev/mqueue", "/sys", "/tmp" };
	struct vnode *vn;
	struct statfs sf;
	struct stat st;

	cr_assert_eq(n, 8, "the sentry's own mounts");
	cr_assert_eq(t[0].id, 1);
	cr_assert_eq(t[0].parent, 1, "the root is its own parent");
	for (size_t i = 0; i < n; i++) {
		cr_assert_str_eq(t[i].path, want[i]);
		cr_assert_eq(t[i].id, i + 1);
		for (size_t j = 0; j < i; j++)
			cr_assert_neq(t[i].dev, t[j].dev, "%s and %s",
				      t[i].path, t[j].path);
		vn = must(t[i].path);
		cr_assert_eq(vfs_stat(vn, &st), 0);
		cr_assert_eq(st.st_dev, t[i].dev, "%s: st_dev", t[i].path);
		cr_assert_eq(vfs_statfs(vn, &sf), 0);
		cr_assert_eq(sf.f_flags, t[i].flags | 0x20, "%s: f_flags %lx",
			     t[i].path, (unsigned long)sf.f_flags);
		cr_assert_eq((uint32_t)sf.f_type, (uint32_t)t[i].magic);
		cr_assert_eq(vfs_mount_of(vn, &m), 0);
		cr_assert_str_eq(m.path, t[i].path);
		vnode_put(vn);
	}
	cr_assert_eq(t[3].parent, 3, "/dev/pts is in /dev");
	cr_assert_eq(t[6].parent, 1, "/sys is in /");
	cr_assert_eq(t[7].parent, 1, "/tmp is in /");
	cr_assert_str_eq(t[6].fstype, "sysfs");
	cr_assert_eq((uint32_t)t[6].magic, 0x62656572u);
	cr_assert_eq(t[6].flags & (ST_RDONLY | ST_NOEXEC | ST_NODEV),
		     ST_RDONLY | ST_NOEXEC | ST_NODEV, "ro,nodev,noexec");
	cr_assert(t[6].super_ro, "its superblock is ro too");
	vn = must("/a/b/f");
	cr_assert_eq(vfs_stat(vn, &st), 0);
	cr_assert_eq(st.st_dev, t[0].dev, "a rootfs file is in the root mount");
	vnode_put(vn);
	cr_assert(t[1].flags & ST_NOEXEC);
	cr_assert(!(t[0].flags & (ST_NOEXEC | ST_RDONLY)));
}

/* ---- relative to a task ------------------------------------------------------ */

/* A minimal task and process; file-static so that .fini can release them
 * after a test that failed half-way. */
static struct process kproc;
static struct task kt;

static struct task *fake_init(const char *cwd)
{
	memset(&kproc, 0, sizeof(kproc));
	memset(&kt, 0, sizeof(kt));
	kproc.pid = 1;
	kproc.rlim[RLIMIT_NOFILE].cur = kproc.rlim[RLIMIT_NOFILE].max = 64;
	kproc.fdt = fdtable_new();
	cr_assert(kproc.fdt);
	kproc.cwd = must(cwd);
	cr_assert(S_ISDIR(kproc.cwd->mode));
	kt.proc = &kproc;
	kt.tid = 1;
	kt.wait_hostfd = -1;
	kproc.leader = &kt;
	return &kt;
}

/* Idempotent; must run while the gofer is still up. */
static void fake_fini(void)
{
	fdtable_put(kproc.fdt);
	kproc.fdt = NULL;
	vnode_put(kproc.cwd);
	kproc.cwd = NULL;
}

/* Open path (resolved from the root) and install it; returns the fd. */
static int open_dirfd(struct task *t, const char *path, int flags)
{
	struct vnode *vn = must(path);
	struct file *f;
	int fd, rc;

	rc = vfs_open(t, vn, flags, &f);
	vnode_put(vn);
	cr_assert_eq(rc, 0, "vfs_open %s: %s", path, strerror(-rc));
	fd = fd_install(t, f, false, 0);
	cr_assert_geq(fd, 0);
	file_put(f); /* the table holds it now */
	return fd;
}

TR(relative_to_cwd)
{
	struct task *t;

	t = fake_init("/a");
	expect_at(t, AT_FDCWD, "b/f", LOOKUP_FOLLOW, "/a/b/f", S_IFREG);
	expect_at(t, AT_FDCWD, "./b/./f", LOOKUP_FOLLOW, "/a/b/f", S_IFREG);
	expect_at(t, AT_FDCWD, "l/f", LOOKUP_FOLLOW, "/a/b/f", S_IFREG);
	expect_at(t, AT_FDCWD, "..", LOOKUP_FOLLOW, "/", S_IFDIR);
	expect_at(t, AT_FDCWD, "../a/b", LOOKUP_FOLLOW, "/a/b", S_IFDIR);
	expect_at(t, AT_FDCWD, "../../../..", LOOKUP_FOLLOW, "/", S_IFDIR);
	expect_at(t, AT_FDCWD, "../../../../a/b/f", LOOKUP_FOLLOW, "/a/b/f",
		  S_IFREG);
	expect_at(t, AT_FDCWD, ".", LOOKUP_FOLLOW, "/a", S_IFDIR);
	expect_at(t, AT_FDCWD, "/etc/passwd", LOOKUP_FOLLOW, "/etc/passwd",
		  S_IFREG);
	/* the absolute symlink goes to the root, not the cwd */
	expect_at(t, AT_FDCWD, "abs/f", LOOKUP_FOLLOW, "/a/b/f", S_IFREG);
	expect_err_at(t, AT_FDCWD, "f", LOOKUP_FOLLOW, ENOENT);
	expect_err_at(t, AT_FDCWD, "", LOOKUP_FOLLOW, ENOENT);
	expect_at(t, AT_FDCWD, "", LOOKUP_EMPTY, "/a", S_IFDIR);
	fake_fini();
}

TR(relative_to_cwd_in_a_mount)
{
	struct task *t;

	t = fake_init("/dev");
	expect_at(t, AT_FDCWD, "null", LOOKUP_FOLLOW, "/dev/null", S_IFCHR);
	expect_at(t, AT_FDCWD, "../a/b", LOOKUP_FOLLOW, "/a/b", S_IFDIR);
	expect_at(t, AT_FDCWD, "..", LOOKUP_FOLLOW, "/", S_IFDIR);
	fake_fini();
}

TR(relative_to_dirfd)
{
	struct task *t;
	int dfd, pfd, ffd;

	t = fake_init("/");
	dfd = open_dirfd(t, "/a/b", O_RDONLY | O_DIRECTORY);
	cr_assert_eq(dfd, 0, "lowest free fd");
	cr_assert_geq(fd_get(t, dfd)->hostfd, 0);
	pfd = open_dirfd(t, "/a", O_PATH);
	cr_assert_eq(pfd, 1);
	ffd = open_dirfd(t, "/a/b/f", O_PATH);
	cr_assert_eq(ffd, 2);

	expect_at(t, dfd, "f", LOOKUP_FOLLOW, "/a/b/f", S_IFREG);
	expect_at(t, dfd, "c/..", LOOKUP_FOLLOW, "/a/b", S_IFDIR);
	expect_at(t, dfd, "..", LOOKUP_FOLLOW, "/a", S_IFDIR);
	expect_at(t, dfd, "../../../..", LOOKUP_FOLLOW, "/", S_IFDIR);
	expect_at(t, dfd, "/a/l", 0, "/a/l", S_IFLNK); /* dirfd ignored */
	expect_at(t, dfd, "", LOOKUP_EMPTY, "/a/b", S_IFDIR);
	expect_at(t, pfd, "l/f", LOOKUP_FOLLOW, "/a/b/f", S_IFREG);
	expect_at(t, pfd, "l", 0, "/a/l", S_IFLNK);
	/* a dirfd that is not a directory */
	expect_err_at(t, ffd, "x", LOOKUP_FOLLOW, ENOTDIR);
	expect_at(t, ffd, "", LOOKUP_EMPTY, "/a/b/f", S_IFREG);
	/* absolute paths ignore even a bad dirfd */
	expect_at(t, 42, "/a", LOOKUP_FOLLOW, "/a", S_IFDIR);
	expect_err_at(t, 42, "f", LOOKUP_FOLLOW, EBADF);
	expect_err_at(t, -5, "f", LOOKUP_FOLLOW, EBADF);
	cr_assert_eq(fd_close(t, dfd), 0);
	expect_err_at(t, dfd, "f", LOOKUP_FOLLOW, EBADF);
	fake_fini();
}

TR(dirfd_of_a_pipe_is_enotdir)
{
	struct task *t;
	struct file *r, *w;
	int rfd;

	t = fake_init("/");
	cr_assert_eq(pipe_create(&r, &w, 0), 0);
	rfd = fd_install(t, r, false, 0);
	cr_assert_geq(rfd, 0);
	file_put(r);
	file_put(w);
	expect_err_at(t, rfd, "x", LOOKUP_FOLLOW, ENOTDIR);
	fake_fini();
}

TR(open_and_read_a_regular_file)
{
	struct task *t;
	struct vnode *vn = must("/a/l/f");
	struct file *f;
	char buf[128] = { 0 };
	int64_t off = 0;

	t = fake_init("/");
	cr_assert_eq(vfs_open(t, vn, O_WRONLY, &f), -EROFS);
	cr_assert_eq(vfs_open(t, vn, O_RDONLY | O_DIRECTORY, &f), -ENOTDIR);
	cr_assert_eq(vfs_open(t, vn, O_RDONLY, &f), 0);
	cr_assert_eq(f->ops->read(t, f, buf, sizeof(buf), &off),
		     (long)strlen(F_DATA));
	cr_assert_str_eq(buf, F_DATA);
	cr_assert_eq(off, (int64_t)strlen(F_DATA));
	file_put(f);
	/* the shared host fd may stay in the cached vnode */
	if (vn->hostfd >= 0)
		held_fds++;
	vnode_put(vn);
	fake_fini();
}

/* Regression (closed files pinned host fds): a regular file's host fd used
 * to live in its cached vnode for the sandbox's life, so a guest opening and
 * closing files one at a time (a build, `cat` over a tree) exhausted the
 * sentry's RLIMIT_NOFILE. Closed files now keep at most VFS_IDLE_FDS_MAX host
 * fds (an LRU). Here the limit leaves that many plus 40 free fds, and more
 * files than both are opened and closed in turn. */
#define NMANY (VFS_IDLE_FDS_MAX + 150)
TR(closed_files_do_not_pin_host_fds)
{
	struct vnode *vn[NMANY];
	struct rlimit old, rl;
	struct task *t;
	char name[64];
	int i, rc = 0, opened = 0;

	cr_assert_eq(mk_dir(tree, "many", 0755), 0);
	for (i = 0; i < NMANY; i++) {
		snprintf(name, sizeof(name), "many/f%d", i);
		cr_assert_eq(mk_file(tree, name, "x", 0644), 0);
	}
	t = fake_init("/");
	/* resolve first: the gofer's own handles (in this process here, not
	 * in the real sandbox) are taken before the limit */
	for (i = 0; i < NMANY; i++) {
		snprintf(name, sizeof(name), "/many/f%d", i);
		vn[i] = must(name);
	}
	cr_assert_eq(getrlimit(RLIMIT_NOFILE, &old), 0);
	rl = old;
	rl.rlim_cur = (rlim_t)vfst_count_fds() + VFS_IDLE_FDS_MAX + 40;
	cr_assert_eq(setrlimit(RLIMIT_NOFILE, &rl), 0);
	for (i = 0; i < NMANY; i++) {
		struct file *f;

		rc = vfs_open(t, vn[i], O_RDONLY, &f);
		if (rc < 0)
			break;
		opened++;
		file_put(f);
	}
	cr_assert_eq(setrlimit(RLIMIT_NOFILE, &old), 0);
	for (i = 0; i < NMANY; i++) {
		if (vn[i]->hostfd >= 0)
			held_fds++;
		vnode_put(vn[i]);
	}
	fake_fini();
	cr_assert_eq(opened, NMANY,
		     "open #%d failed: %s; %d closed files still pin %d host "
		     "fds",
		     opened + 1, strerror(-rc), opened, held_fds);
	cr_assert_leq(held_fds, VFS_IDLE_FDS_MAX, "%d idle host fds kept",
		      held_fds);
}

/* Regression (no search permission check): vfs_resolve did not check the
 * x bit of the directories it walked, so a guest with fsuid 1000 reached
 * files inside a 0700 root-owned directory (on Linux: EACCES). */
TR(search_permission_denied_for_non_root)
{
	struct task *t;

	t = fake_init("/");
	t->proc->cred.ruid = t->proc->cred.euid = t->proc->cred.fsuid = 1000;
	t->proc->cred.rgid = t->proc->cred.egid = t->proc->cred.fsgid = 1000;
	expect_err_at(t, AT_FDCWD, "/secret/pub", LOOKUP_FOLLOW, EACCES);
	fake_fini();
}

TR(search_permission_root_passes)
{
	struct task *t;

	t = fake_init("/");
	expect_at(t, AT_FDCWD, "/secret/pub", LOOKUP_FOLLOW, "/secret/pub",
		  S_IFREG);
	fake_fini();
}

/* ---- openat2's RESOLVE_* flags ------------------------------------------- */

#define F LOOKUP_FOLLOW

/* Regression (RESOLVE_* accepted and ignored): each of these escapes the
 * start directory, and each reached its target. */
TR(resolve_beneath_refuses_every_way_out)
{
	struct task *t = fake_init("/a");
	int dfd = open_dirfd(t, "/a", O_PATH);

	expect_at(t, dfd, "b/f", F | LOOKUP_BENEATH, "/a/b/f", S_IFREG);
	expect_at(t, dfd, "b/../b/f", F | LOOKUP_BENEATH, "/a/b/f", S_IFREG);
	expect_at(t, dfd, "l/f", F | LOOKUP_BENEATH, "/a/b/f", S_IFREG);
	expect_err_at(t, dfd, "..", F | LOOKUP_BENEATH, EXDEV);
	expect_err_at(t, dfd, "b/../../a", F | LOOKUP_BENEATH, EXDEV);
	expect_err_at(t, dfd, "/a/b/f", F | LOOKUP_BENEATH, EXDEV);
	expect_err_at(t, dfd, "abs/f", F | LOOKUP_BENEATH, EXDEV);
	expect_err_at(t, dfd, "b/up", F | LOOKUP_BENEATH, EXDEV);
	expect_err_at(t, AT_FDCWD, "../a/b", F | LOOKUP_BENEATH, EXDEV);
	/* not followed: the link itself is beneath */
	expect_at(t, dfd, "abs", LOOKUP_BENEATH, "/a/abs", S_IFLNK);
	fake_fini();
}

TR(resolve_in_root_makes_the_start_the_root)
{
	struct task *t = fake_init("/");
	int dfd = open_dirfd(t, "/a", O_PATH);

	expect_at(t, dfd, "/b/f", F | LOOKUP_IN_ROOT, "/a/b/f", S_IFREG);
	expect_at(t, dfd, "../../b/f", F | LOOKUP_IN_ROOT, "/a/b/f", S_IFREG);
	expect_at(t, dfd, "..", F | LOOKUP_IN_ROOT, "/a", S_IFDIR);
	/* /a/abs -> /a/b is /a/a/b from here; b/up clamps at /a */
	expect_err_at(t, dfd, "abs/f", F | LOOKUP_IN_ROOT, ENOENT);
	expect_err_at(t, dfd, "b/up", F | LOOKUP_IN_ROOT, ENOENT);
	expect_at(t, AT_FDCWD, "pw", F | LOOKUP_IN_ROOT, "/etc/passwd",
		  S_IFREG);
	fake_fini();
}

TR(resolve_no_symlinks_and_no_xdev)
{
	struct task *t = fake_init("/dev");

	expect_err_at(t, AT_FDCWD, "/a/l/f", F | LOOKUP_NO_SYMLINKS, ELOOP);
	expect_err_at(t, AT_FDCWD, "/a/lf", F | LOOKUP_NO_SYMLINKS, ELOOP);
	expect_at(t, AT_FDCWD, "/a/lf", LOOKUP_NO_SYMLINKS, "/a/lf", S_IFLNK);
	expect_at(t, AT_FDCWD, "/a/b/f", F | LOOKUP_NO_SYMLINKS, "/a/b/f",
		  S_IFREG);
	/* /dev is a mount (devfs) over the rootfs */
	expect_at(t, AT_FDCWD, "null", F | LOOKUP_NO_XDEV, "/dev/null",
		  S_IFCHR);
	expect_err_at(t, AT_FDCWD, "..", F | LOOKUP_NO_XDEV, EXDEV);
	expect_err_at(t, AT_FDCWD, "/dev/null", F | LOOKUP_NO_XDEV, EXDEV);
	/* an absolute symlink jumps to "/": from the rootfs, the same mount;
	 * from devfs (/dev/fd -> /proc/self/fd), another */
	expect_at(t, AT_FDCWD, "/a/abs/f", F | LOOKUP_NO_XDEV, "/a/b/f",
		  S_IFREG);
	expect_err_at(t, AT_FDCWD, "fd", F | LOOKUP_NO_XDEV, EXDEV);
	fake_fini();
}

/* RESOLVE_CACHED never asks the gofer: EAGAIN until a plain walk has. */
TR(resolve_cached_only_from_the_dcache)
{
	struct task *t = fake_init("/");

	expect_err_at(t, AT_FDCWD, "/a/b/f", F | LOOKUP_CACHED, EAGAIN);
	expect_at(t, AT_FDCWD, "/a/b/f", F, "/a/b/f", S_IFREG);
	expect_at(t, AT_FDCWD, "/a/b/f", F | LOOKUP_CACHED, "/a/b/f", S_IFREG);
	/* a name known to be missing is EAGAIN too, as on Linux */
	expect_err_at(t, AT_FDCWD, "/a/nx", F, ENOENT);
	expect_err_at(t, AT_FDCWD, "/a/nx", F | LOOKUP_CACHED, EAGAIN);
	/* and the flag ends with its walk */
	expect_at(t, AT_FDCWD, "/a/b/c", F, "/a/b/c", S_IFDIR);
	fake_fini();
}
