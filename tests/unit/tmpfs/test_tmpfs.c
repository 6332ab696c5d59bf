/* tests/unit/tmpfs/test_tmpfs.c: tmpfs (sentry/fs_tmpfs.c) through the vfs
 * API (vfs_resolve, vfs_resolve_parent, vfs_open, the file ops, vfs_stat),
 * the tmpfs_* functions and, where the syscall layer adds rules of its own,
 * the handlers of sentry/sys_fswrite.c and sentry/sys_fs.c.
 *
 * The fixture is that of tests/unit/vfs/test_resolve.c: a global S, an
 * in-process gofer serving an empty temp tree and vfs_init, which mounts the
 * tmpfs instances at /tmp and /dev/shm. vfs.c and fs_tmpfs.c keep static
 * state (the mounts, the byte count, the inode counter) for the life of the
 * process; Criterion forks one process per test, so each test starts afresh.
 *
 * The fake task's host_tid is this thread, so the syscall handlers read
 * their path and buffer arguments from this process's own memory.
 *
 * A second in-process gofer, writable, serves the store (sentry/store.h)
 * from another temp directory: small files stay inline, larger ones are
 * files there, each with an fd of the sentry's while in use or on the LRU.
 * The end of every test checks that /tmp and /dev/shm are empty again,
 * that the store holds no file and that the fd count is back where it
 * started (and, under ASan, that LeakSanitizer finds nothing).
 */
#include <criterion/criterion.h>

#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <linux/fs.h>
#include <linux/magic.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#endif

#include "gofer/gofer.h"
#include "sentry/fs_tmpfs.h"
#include "sentry/overlay.h"
#include "sentry/p9client.h"
#include "sentry/sentry.h"
#include "sentry/store.h"
#include "sentry/syscalls.h"
#include "sentry/vfs.h"

/* ---- fixture -------------------------------------------------------------- */

/* Criterion 2.4 ignores failures in .fini, so the no-leak check cannot live
 * there: TT runs the body, then tend() (release everything and assert that
 * nothing leaked). .fini only cleans up, idempotently, after a test that
 * failed before reaching tend(). */
#define TT(name)                                                               \
	static void tmpfs__##name(void);                                       \
	Test(tmpfs, name)                                                      \
	{                                                                      \
		tmpfs__##name();                                               \
		tend();                                                        \
	}                                                                      \
	static void tmpfs__##name(void)

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n - 1; /* the DIR's own fd */
}

static int rm_one(const char *path, const struct stat *st, int flag,
		  struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static char tree[64], store[64];
static int base_fds;
static pthread_t gofer_th, store_th;
static bool gofer_running, store_running;
static int gofer_sock = -1, gofer_rootfd = -1, gofer_ret;
static int store_sock = -1, store_rootfd = -1, store_ret;
static struct process P;
static struct task T;

static void *gofer_main_thread(void *p)
{
	(void)p;
	gofer_ret = gofer_serve(gofer_sock, gofer_rootfd, 0);
	return NULL;
}

static void *store_main_thread(void *p)
{
	(void)p;
	store_ret = gofer_serve(store_sock, store_rootfd, GOFER_WRITABLE);
	return NULL;
}

static struct statfs statfs_of(const char *path);

/* Nodes of every tmpfs instance alive now (statfs's f_ffree counts them). */
static long live_nodes(void)
{
	return (long)(TMPFS_NODES_MAX - statfs_of("/tmp").f_ffree);
}

/* Files in the store directory now. */
static int store_files(void)
{
	DIR *d = opendir(store);
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

static void as_user(uid_t u, gid_t g)
{
	struct creds *c = &P.cred;

	c->ruid = c->euid = c->suid = c->fsuid = u;
	c->rgid = c->egid = c->sgid = c->fsgid = g;
	c->ngroups = 0;
	/* as a setuid would leave them: root's capabilities, or none */
	c->cap = u == 0 ? CAP_SETS_ROOT : (struct cap_sets){ 0 };
}

static void as_root(void)
{
	as_user(0, 0);
}

static void tsetup(void)
{
	struct moat_error err = { 0 };
	struct p9_qid qid;
	int sv[2], rc;

	base_fds = count_fds();
	snprintf(tree, sizeof(tree), "/tmp/moat-tmpfs-XXXXXX");
	cr_assert(mkdtemp(tree), "mkdtemp: %m");
	cr_assert_eq(chmod(tree, 0755), 0);

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

	snprintf(store, sizeof(store), "/tmp/moat-store-XXXXXX");
	cr_assert(mkdtemp(store), "mkdtemp: %m");
	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	store_sock = sv[1];
	store_rootfd = open(store, O_PATH | O_DIRECTORY | O_CLOEXEC);
	cr_assert_geq(store_rootfd, 0);
	cr_assert_eq(pthread_create(&store_th, NULL, store_main_thread, NULL),
		     0);
	store_running = true;
	{
		struct p9_client *c;
		uint32_t fid;
		rc = p9c_open(&c, sv[0], &fid, &qid, &err);
		if (rc < 0)
			close(sv[0]);
		cr_assert_eq(rc, 0, "%s", err.msg);
		store_attach(c, fid);
	}
	cr_assert_eq(vfs_init(S->rootfid, &err), 0, "%s", err.msg);

	/* the fake task: root, umask 022, cwd "/", its memory is ours */
	memset(&P, 0, sizeof(P));
	memset(&T, 0, sizeof(T));
	P.pid = 1;
	P.host_pid = getpid();
	P.rlim[RLIMIT_NOFILE].cur = P.rlim[RLIMIT_NOFILE].max = 256;
	P.fdt = fdtable_new();
	cr_assert(P.fdt);
	P.umask = 022;
	P.cwd = vnode_get(vfs_ns0()->top_vn);
	P.leader = &T;
	T.proc = &P;
	T.tid = 1;
	T.host_tid = gettid();
	T.state = TS_RUNNING;
	T.wait_hostfd = -1;
	as_root();
}

/* Idempotent. Returns gofer_serve's result (0: clean EOF). */
static int tteardown_ret(void)
{
	int ret = 0;

	fdtable_put(P.fdt);
	P.fdt = NULL;
	vnode_put(P.cwd);
	P.cwd = NULL;
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
	store_close(); /* its gofer sees EOF */
	if (store_running) {
		pthread_join(store_th, NULL);
		store_running = false;
		if (!ret)
			ret = store_ret;
	}
	if (store_sock >= 0)
		close(store_sock);
	if (store_rootfd >= 0)
		close(store_rootfd);
	store_sock = store_rootfd = -1;
	if (S) {
		if (S->host_proc_fd >= 0)
			close(S->host_proc_fd);
		free(S);
		S = NULL;
	}
	if (tree[0])
		nftw(tree, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	tree[0] = 0;
	if (store[0])
		nftw(store, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	store[0] = 0;
	return ret;
}

static void tteardown(void)
{
	tteardown_ret();
}

static int count_entries(const char *path);

static void tend(void)
{
	int n;

	/* The mounts hold what is left in them for the sandbox's life, so
	 * LeakSanitizer would not see it: each test removes what it made. */
	as_root();
	cr_assert_eq(count_entries("/tmp"), 2, "the test left files in /tmp");
	cr_assert_eq(count_entries("/dev/shm"), 2,
		     "the test left files in /dev/shm");
	cr_assert_eq(store_files(), 0, "the store still holds files");
	cr_assert_eq(tteardown_ret(), 0, "gofer_serve failed");
	n = count_fds();
	cr_assert_eq(n, base_fds, "fd leak: %d -> %d", base_fds, n);
#if defined(__SANITIZE_ADDRESS__)
	cr_assert_eq(__lsan_do_recoverable_leak_check(), 0, "memory leak");
#endif
}

TestSuite(tmpfs, .init = tsetup, .fini = tteardown);

/* ---- helpers -------------------------------------------------------------- */

#define U(x) ((uint64_t)(uintptr_t)(x))

/* Call a syscall handler on the fake task: SC(sys_open, U(path), flags). */
#define SC(fn, ...) sc_((fn), (const uint64_t[6]){ __VA_ARGS__ })
static long sc_(syscall_fn fn, const uint64_t a[6])
{
	struct syscall_args sa = { 0 };

	memcpy(sa.a, a, sizeof(sa.a));
	return fn(&T, &sa);
}

static const char *err_name(int rc)
{
	return rc == 0 ? "success" : strerror(rc < 0 ? -rc : rc);
}

/* Resolve (from the cwd of the fake task) and return a reference. */
static struct vnode *res_at(int line, const char *path, int flags)
{
	struct vnode *vn = NULL;
	int rc = vfs_resolve(&T, AT_FDCWD, path, flags, &vn);

	cr_assert_eq(rc, 0, "line %d: resolve %s: %s", line, path,
		     err_name(rc));
	return vn;
}
#define RES(p) res_at(__LINE__, (p), LOOKUP_FOLLOW)
#define LRES(p) res_at(__LINE__, (p), 0)

/* vfs_resolve's result, dropping any reference. */
static int res_rc(const char *path, int flags)
{
	struct vnode *vn = NULL;
	int rc = vfs_resolve(&T, AT_FDCWD, path, flags, &vn);

	if (rc == 0)
		vnode_put(vn);
	return rc;
}

/* The canonical path of what path resolves to (following symlinks). */
static void expect_path_at(int line, const char *path, const char *canon)
{
	struct vnode *vn = res_at(line, path, LOOKUP_FOLLOW);
	char got[PATH_MAX];

	snprintf(got, sizeof(got), "%s", vn->path);
	vnode_put(vn);
	cr_assert_str_eq(got, canon, "line %d: resolve %s", line, path);
}
#define expect_path(p, c) expect_path_at(__LINE__, (p), (c))

static struct stat lstat_at(int line, const char *path)
{
	struct vnode *vn = res_at(line, path, 0);
	struct stat st;

	cr_assert_eq(vfs_stat(vn, &st), 0);
	vnode_put(vn);
	return st;
}
#define LSTAT(p) lstat_at(__LINE__, (p))

/* Namespace operations as sys_fswrite.c does them: resolve the parent,
 * then the tmpfs_* function. */
static int t_create(const char *path, mode_t mode)
{
	struct vnode *vn;
	int rc = fs_create(&T, AT_FDCWD, path, mode, 0, &vn);

	if (rc == 0)
		vnode_put(vn);
	return rc;
}

static int t_mkdir(const char *path, mode_t mode)
{
	char name[NAME_MAX + 1];
	struct vnode *dir;
	bool trailing;
	int rc = vfs_resolve_parent(&T, AT_FDCWD, path, &dir, name, &trailing);

	if (rc < 0)
		return rc;
	rc = tmpfs_mkdir(&T, dir, name, mode & ~P.umask);
	vnode_put(dir);
	return rc;
}

static int t_remove(const char *path, bool rmdir)
{
	char name[NAME_MAX + 1];
	struct vnode *dir;
	bool trailing;
	int rc = vfs_resolve_parent(&T, AT_FDCWD, path, &dir, name, &trailing);

	if (rc < 0)
		return rc;
	rc = tmpfs_unlink(&T, dir, name, rmdir);
	vnode_put(dir);
	return rc;
}
#define t_unlink(p) t_remove((p), false)
#define t_rmdir(p) t_remove((p), true)

static int t_symlink(const char *target, const char *path)
{
	char name[NAME_MAX + 1];
	struct vnode *dir;
	bool trailing;
	int rc = vfs_resolve_parent(&T, AT_FDCWD, path, &dir, name, &trailing);

	if (rc < 0)
		return rc;
	rc = tmpfs_symlink(&T, dir, name, target);
	vnode_put(dir);
	return rc;
}

static int t_link(const char *old, const char *new)
{
	char name[NAME_MAX + 1];
	struct vnode *dir, *target;
	bool trailing;
	int rc = vfs_resolve(&T, AT_FDCWD, old, 0, &target);

	if (rc < 0)
		return rc;
	rc = vfs_resolve_parent(&T, AT_FDCWD, new, &dir, name, &trailing);
	if (rc == 0) {
		rc = tmpfs_link(&T, dir, name, target);
		vnode_put(dir);
	}
	vnode_put(target);
	return rc;
}

static int t_rename(const char *old, const char *new, unsigned flags)
{
	char oname[NAME_MAX + 1], nname[NAME_MAX + 1];
	struct vnode *odir, *ndir;
	bool tr;
	int rc = vfs_resolve_parent(&T, AT_FDCWD, old, &odir, oname, &tr);

	if (rc < 0)
		return rc;
	rc = vfs_resolve_parent(&T, AT_FDCWD, new, &ndir, nname, &tr);
	if (rc == 0) {
		rc = tmpfs_rename(&T, odir, oname, ndir, nname, flags);
		vnode_put(ndir);
	}
	vnode_put(odir);
	return rc;
}

static struct file *open_at(int line, const char *path, int flags)
{
	struct vnode *vn = res_at(line, path, LOOKUP_FOLLOW);
	struct file *f = NULL;
	int rc = vfs_open(&T, vn, flags, &f);

	vnode_put(vn);
	cr_assert_eq(rc, 0, "line %d: vfs_open %s: %s", line, path,
		     err_name(rc));
	return f;
}
#define OPEN(p, fl) open_at(__LINE__, (p), (fl))

static long f_write(struct file *f, const char *s)
{
	return f->ops->write(&T, f, s, strlen(s), &f->pos);
}

static long f_pread(struct file *f, void *buf, size_t n, int64_t off)
{
	return f->ops->read(&T, f, buf, n, &off);
}

/* Create path with mode (under the umask) holding data. */
static void mkfile_at(int line, const char *path, mode_t mode, const char *data)
{
	struct file *f;
	int rc = t_create(path, mode);

	cr_assert_eq(rc, 0, "line %d: create %s: %s", line, path, err_name(rc));
	if (data && *data) {
		f = open_at(line, path, O_WRONLY);
		cr_assert_eq(f_write(f, data), (long)strlen(data),
			     "line %d: write %s", line, path);
		file_put(f);
	}
}
#define MKFILE(p, m, d) mkfile_at(__LINE__, (p), (m), (d))

#define MKDIR(p, m)                                                            \
	do {                                                                   \
		int rc_ = t_mkdir((p), (m));                                   \
		cr_assert_eq(rc_, 0, "mkdir %s: %s", (p), err_name(rc_));      \
	} while (0)
#define OK(expr)                                                               \
	do {                                                                   \
		long rc_ = (expr);                                             \
		cr_assert_eq(rc_, 0, "%s: %s", #expr, err_name((int)rc_));     \
	} while (0)
#define ERR(expr, e)                                                           \
	do {                                                                   \
		long rc_ = (expr);                                             \
		cr_assert_eq(rc_, -(e), "%s: got %s, want %s", #expr,          \
			     err_name((int)rc_), strerror(e));                 \
	} while (0)

/* The whole contents of a file, as a string. */
static char *slurp_at(int line, const char *path, char *buf, size_t cap)
{
	struct file *f = open_at(line, path, O_RDONLY);
	long n = f_pread(f, buf, cap - 1, 0);

	file_put(f);
	cr_assert_geq(n, 0, "line %d: read %s: %s", line, path,
		      err_name((int)n));
	buf[n] = 0;
	return buf;
}
#define SLURP(p, b) slurp_at(__LINE__, (p), (b), sizeof(b))

/* getdents as sys_getdents64 drives the file op. */
static long f_getdents(struct file *f, void *buf, size_t cap)
{
	struct dirent_sink s;
	long rc;

	memset(&s, 0, sizeof(s));
	s.buf = buf;
	s.cap = cap;
	s.skip = f->dir_index;
	rc = f->ops->getdents(&T, f, &s);
	if (rc == 0 && s.full)
		return -EINVAL;
	return rc;
}

struct ent {
	char name[NAME_MAX + 1];
	uint64_t ino;
	int64_t off;
	unsigned char type;
};

/* Append the linux_dirent64 records of buf[0..len) to out[*n..max). */
static void parse_dirents(const void *buf, long len, struct ent *out, int *n,
			  int max)
{
	const uint8_t *p = buf;
	long at = 0;

	while (at < len) {
		uint16_t reclen;
		struct ent *e;

		cr_assert_lt(*n, max, "too many entries");
		e = &out[(*n)++];
		memcpy(&e->ino, p + at, 8);
		memcpy(&e->off, p + at + 8, 8);
		memcpy(&reclen, p + at + 16, 2);
		e->type = p[at + 18];
		cr_assert_geq(reclen, 24);
		cr_assert_eq(reclen % 8, 0, "records are 8-aligned");
		snprintf(e->name, sizeof(e->name), "%s",
			 (const char *)p + at + 19);
		at += reclen;
	}
	cr_assert_eq(at, len, "records overrun the returned length");
}

/* Every entry of a directory, read with a buffer of cap bytes. */
static int list_dir_cap(const char *path, struct ent *out, int max, size_t cap)
{
	struct file *f = OPEN(path, O_RDONLY | O_DIRECTORY);
	char buf[8192];
	int n = 0, calls = 0;
	long len;

	cr_assert_leq(cap, sizeof(buf));
	while ((len = f_getdents(f, buf, cap)) > 0) {
		parse_dirents(buf, len, out, &n, max);
		cr_assert_lt(++calls, 10000, "getdents never ends");
	}
	file_put(f);
	cr_assert_eq(len, 0, "getdents %s: %s", path, err_name((int)len));
	return n;
}

static int list_dir(const char *path, struct ent *out, int max)
{
	return list_dir_cap(path, out, max, 4096);
}

static int count_entries(const char *path)
{
	static struct ent e[512];

	return list_dir(path, e, 512);
}

static const struct ent *find_ent(const struct ent *e, int n, const char *name)
{
	int i;

	for (i = 0; i < n; i++)
		if (!strcmp(e[i].name, name))
			return &e[i];
	return NULL;
}

/* rm -r, as root: collects every name before removing any. */
static void rm_rf(const char *path)
{
	static struct ent ents[16][256];
	static int depth;
	struct creds saved = P.cred;
	struct stat st;
	char sub[PATH_MAX];
	int n, i;

	as_root();
	if (res_rc(path, 0) == -ENOENT) {
		P.cred = saved;
		return;
	}
	st = LSTAT(path);
	if (S_ISDIR(st.st_mode)) {
		cr_assert_lt(depth, 16);
		n = list_dir(path, ents[depth], 256);
		depth++;
		for (i = 0; i < n; i++) {
			const char *nm = ents[depth - 1][i].name;
			if (!strcmp(nm, ".") || !strcmp(nm, ".."))
				continue;
			snprintf(sub, sizeof(sub), "%s/%s", path, nm);
			rm_rf(sub);
		}
		depth--;
		OK(t_rmdir(path));
	} else {
		OK(t_unlink(path));
	}
	P.cred = saved;
}

/* Make vn the fake task's cwd (takes the caller's reference). */
static void set_cwd(struct vnode *vn)
{
	vnode_put(P.cwd);
	P.cwd = vn;
}

static struct statfs statfs_of(const char *path)
{
	struct vnode *vn = RES(path);
	struct statfs sf;

	cr_assert_eq(vfs_statfs(vn, &sf), 0);
	vnode_put(vn);
	return sf;
}

static bool ts_ge(struct timespec a, struct timespec b)
{
	return a.tv_sec > b.tv_sec ||
	       (a.tv_sec == b.tv_sec && a.tv_nsec >= b.tv_nsec);
}

/* ---- the mounts ----------------------------------------------------------- */

TT(mounts_start_empty)
{
	struct ent e[8];
	struct stat st;
	struct vnode *tmp = RES("/tmp"), *shm = RES("/dev/shm");
	int n;

	cr_assert_eq(tmp->kind, VN_TMPFS);
	cr_assert_eq(shm->kind, VN_TMPFS);
	cr_assert_str_eq(tmp->path, "/tmp");
	cr_assert_str_eq(shm->path, "/dev/shm");
	st = LSTAT("/tmp");
	cr_assert(S_ISDIR(st.st_mode));
	cr_assert_eq(st.st_mode & 07777, 01777, "mode %o", st.st_mode);
	cr_assert_eq(st.st_uid, 0);
	cr_assert_eq(st.st_gid, 0);
	cr_assert_eq(st.st_nlink, 2);
	st = LSTAT("/dev/shm");
	cr_assert_eq(st.st_mode & 07777, 01777);

	n = list_dir("/tmp", e, 8);
	cr_assert_eq(n, 2, "/tmp has %d entries", n);
	cr_assert_str_eq(e[0].name, ".");
	cr_assert_str_eq(e[1].name, "..");
	cr_assert_eq(e[0].type, DT_DIR);
	cr_assert_eq(e[0].ino, tmp->st.st_ino);
	n = list_dir("/dev/shm", e, 8);
	cr_assert_eq(n, 2, "/dev/shm has %d entries", n);

	/* two instances: one tree each */
	cr_assert(tmpfs_same_fs(tmp, tmp));
	cr_assert_not(tmpfs_same_fs(tmp, shm));
	cr_assert_not(tmpfs_same_fs(tmp, vfs_ns0()->top_vn));
	cr_assert_null(tmpfs_parent(tmp));
	cr_assert_null(tmpfs_parent(shm));
	/* ".." leaves the mount for the tree it is mounted on */
	expect_path("/tmp/..", "/");
	expect_path("/dev/shm/..", "/dev");
	expect_path("/tmp/../tmp/.", "/tmp");
	vnode_put(tmp);
	vnode_put(shm);
}

TT(statfs_reports_tmpfs_magic)
{
	struct statfs sf = statfs_of("/tmp");
	struct statfs before;

	cr_assert_eq(sf.f_type, TMPFS_MAGIC);
	cr_assert_eq(sf.f_namelen, NAME_MAX);
	cr_assert_eq(sf.f_bsize, 4096);
	cr_assert_eq((uint64_t)sf.f_blocks, TMPFS_DEFAULT_MAX / 4096);
	cr_assert_eq(sf.f_bfree, sf.f_blocks, "nothing used yet");
	cr_assert_eq(statfs_of("/dev/shm").f_type, TMPFS_MAGIC);

	/* a file in it: statfs of the file, and the space it takes */
	before = sf;
	MKFILE("/tmp/f", 0644, NULL);
	{
		struct vnode *vn = RES("/tmp/f");
		OK(tmpfs_truncate(vn, 3 * 4096));
		vnode_put(vn);
	}
	sf = statfs_of("/tmp/f");
	cr_assert_eq(sf.f_type, TMPFS_MAGIC);
	cr_assert_eq(sf.f_bfree, before.f_bfree - 3);
	cr_assert_lt(sf.f_ffree, before.f_ffree);
	OK(t_unlink("/tmp/f"));
	cr_assert_eq(statfs_of("/tmp").f_bfree, before.f_bfree);
}

TT(mount_points_cannot_be_removed)
{
	char name[NAME_MAX + 1];
	struct vnode *dir = NULL;
	bool tr;

	ERR(vfs_resolve_parent(&T, AT_FDCWD, "/tmp", &dir, name, &tr), EBUSY);
	ERR(vfs_resolve_parent(&T, AT_FDCWD, "/tmp/", &dir, name, &tr), EBUSY);
	ERR(vfs_resolve_parent(&T, AT_FDCWD, "/tmp//", &dir, name, &tr), EBUSY);
	ERR(vfs_resolve_parent(&T, AT_FDCWD, "tmp", &dir, name, &tr), EBUSY);
	ERR(vfs_resolve_parent(&T, AT_FDCWD, "/tmp/../tmp", &dir, name, &tr),
	    EBUSY);
	ERR(vfs_resolve_parent(&T, AT_FDCWD, "/dev/shm", &dir, name, &tr),
	    EBUSY);
	ERR(vfs_resolve_parent(&T, AT_FDCWD, "/", &dir, name, &tr), EBUSY);
	cr_assert_null(dir);
	/* and so through the syscalls */
	ERR(SC(sys_rmdir, U("/tmp")), EBUSY);
	ERR(SC(sys_rmdir, U("/dev/shm")), EBUSY);
	ERR(SC(sys_unlink, U("/tmp")), EBUSY);
	ERR(SC(sys_rename, U("/tmp"), U("/tmp2")), EBUSY);
	ERR(SC(sys_rename, U("/dev/shm"), U("/tmp/shm")), EBUSY);
	ERR(SC(sys_mkdir, U("/tmp"), 0755), EEXIST);
	cr_assert(S_ISDIR(LSTAT("/tmp").st_mode));
}

/* ---- regular files -------------------------------------------------------- */

TT(create_write_read_and_size)
{
	struct vnode *vn, *again;
	struct file *f;
	struct stat st;
	char buf[64];
	int fds = count_fds();

	MKFILE("/tmp/f", 0666, NULL);
	cr_assert_eq(count_fds(), fds, "a small file holds no host fd");
	st = LSTAT("/tmp/f");
	cr_assert(S_ISREG(st.st_mode));
	cr_assert_eq(st.st_mode & 07777, 0644, "0666 under umask 022: %o",
		     st.st_mode & 07777);
	cr_assert_eq(st.st_size, 0);
	cr_assert_eq(st.st_nlink, 1);
	cr_assert_eq(st.st_uid, 0);
	cr_assert_eq(st.st_blksize, 4096);

	vn = RES("/tmp/f");
	again = RES("/tmp//./f");
	cr_assert_eq(vn, again, "one vnode per file");
	vnode_put(again);
	cr_assert_str_eq(vn->path, "/tmp/f");
	cr_assert_eq(vn->kind, VN_TMPFS);

	f = OPEN("/tmp/f", O_RDWR);
	cr_assert_eq(f->hostfd, -1, "not pinned: its data is inline");
	cr_assert_eq(f_write(f, "hello"), 5);
	cr_assert_eq(f->pos, 5);
	cr_assert_eq(LSTAT("/tmp/f").st_size, 5);
	/* a write past the end leaves a hole of zeros */
	{
		int64_t off = 10;
		cr_assert_eq(f->ops->write(&T, f, "world", 5, &off), 5);
		cr_assert_eq(off, 15);
	}
	cr_assert_eq(f->ops->stat(f, &st), 0);
	cr_assert_eq(st.st_size, 15);
	cr_assert_eq(st.st_blocks, 8, "one page, as on Linux's tmpfs");
	cr_assert_eq(f_pread(f, buf, sizeof(buf), 0), 15);
	cr_assert_eq(memcmp(buf, "hello\0\0\0\0\0world", 15), 0);
	cr_assert_eq(f_pread(f, buf, sizeof(buf), 15), 0, "EOF");
	cr_assert_eq(f_pread(f, buf, 3, 1), 3);
	cr_assert_eq(memcmp(buf, "ell", 3), 0);
	/* overwrite in the middle: the size stays */
	{
		int64_t off = 1;
		cr_assert_eq(f->ops->write(&T, f, "ELL", 3, &off), 3);
	}
	cr_assert_eq(LSTAT("/tmp/f").st_size, 15);
	cr_assert_str_eq(SLURP("/tmp/f", buf), "hELLo");
	file_put(f);

	/* creating it again: EEXIST from tmpfs_create */
	{
		struct vnode *tmp = RES("/tmp"), *dup;
		ERR(tmpfs_create(&T, tmp, "f", 0644, &dup), EEXIST);
		vnode_put(tmp);
	}
	/* a second file: another inode */
	MKFILE("/tmp/g", 0600, "x");
	cr_assert_neq(LSTAT("/tmp/g").st_ino, vn->st.st_ino);
	cr_assert_eq(LSTAT("/tmp/g").st_mode & 07777, 0600);
	vnode_put(vn);
	OK(t_unlink("/tmp/f"));
	OK(t_unlink("/tmp/g"));
	cr_assert_eq(count_fds(), fds);
}

TT(create_takes_the_umask_and_the_creds)
{
	P.umask = 077;
	as_user(1000, 1001);
	MKFILE("/tmp/f", 0666, NULL);
	cr_assert_eq(LSTAT("/tmp/f").st_mode & 07777, 0600);
	cr_assert_eq(LSTAT("/tmp/f").st_uid, 1000);
	cr_assert_eq(LSTAT("/tmp/f").st_gid, 1001);
	MKDIR("/tmp/d", 0777);
	cr_assert_eq(LSTAT("/tmp/d").st_mode & 07777, 0700);
	cr_assert_eq(LSTAT("/tmp/d").st_uid, 1000);
	P.umask = 0;
	/* through open(O_CREAT) */
	{
		long fd = SC(sys_open, U("/tmp/o"), O_CREAT | O_WRONLY, 0640);
		cr_assert_geq(fd, 0, "open: %s", err_name((int)fd));
		OK(SC(sys_close, (uint64_t)fd));
	}
	cr_assert_eq(LSTAT("/tmp/o").st_mode & 07777, 0640);
	OK(t_unlink("/tmp/f"));
	OK(t_unlink("/tmp/o"));
	OK(t_rmdir("/tmp/d"));
}

TT(append_writes_at_the_end)
{
	struct file *a, *w;
	char buf[64];

	MKFILE("/tmp/log", 0644, "0123456789");
	a = OPEN("/tmp/log", O_WRONLY | O_APPEND);
	w = OPEN("/tmp/log", O_WRONLY);
	cr_assert_eq(a->pos, 0);
	cr_assert_eq(f_write(a, "AB"), 2);
	cr_assert_eq(a->pos, 12, "the offset follows the appended data");
	/* the other file grows the file: append goes past that */
	w->pos = 14;
	cr_assert_eq(f_write(w, "xy"), 2);
	a->pos = 0;
	cr_assert_eq(f_write(a, "CD"), 2);
	cr_assert_eq(a->pos, 18);
	cr_assert_eq(LSTAT("/tmp/log").st_size, 18);
	cr_assert_eq(memcmp(SLURP("/tmp/log", buf), "0123456789AB\0\0xyCD", 18),
		     0);
	/* an explicit offset (pwrite) of an O_APPEND file still appends */
	{
		int64_t off = 0;
		cr_assert_eq(a->ops->write(&T, a, "E", 1, &off), 1);
	}
	cr_assert_eq(LSTAT("/tmp/log").st_size, 19);
	cr_assert_eq(SLURP("/tmp/log", buf)[0], '0');
	file_put(a);
	file_put(w);

	/* and through open(2) and write(2) */
	{
		long fd = SC(sys_open, U("/tmp/log"), O_WRONLY | O_APPEND);
		cr_assert_geq(fd, 0);
		cr_assert_eq(SC(sys_write, (uint64_t)fd, U("F"), 1), 1);
		OK(SC(sys_close, (uint64_t)fd));
	}
	cr_assert_eq(LSTAT("/tmp/log").st_size, 20);
	cr_assert_eq(SLURP("/tmp/log", buf)[19], 'F');
	OK(t_unlink("/tmp/log"));
}

TT(o_trunc_empties_the_file)
{
	struct statfs before;
	struct file *f, *r;
	char buf[32];
	long fd;

	before = statfs_of("/tmp");
	MKFILE("/tmp/f", 0644, NULL);
	f = OPEN("/tmp/f", O_WRONLY);
	{
		struct vnode *vn = RES("/tmp/f");
		OK(tmpfs_truncate(vn, 8192));
		vnode_put(vn);
	}
	cr_assert_eq(f_write(f, "data"), 4);
	file_put(f);
	cr_assert_eq(statfs_of("/tmp").f_bfree, before.f_bfree - 2);

	/* a read-only open keeps the data */
	r = OPEN("/tmp/f", O_RDONLY);
	cr_assert_str_eq(SLURP("/tmp/f", buf), "data");
	/* O_WRONLY|O_TRUNC empties it; the open reader sees it empty */
	f = OPEN("/tmp/f", O_WRONLY | O_TRUNC);
	cr_assert_eq(LSTAT("/tmp/f").st_size, 0);
	cr_assert_eq(f_pread(r, buf, sizeof(buf), 0), 0);
	cr_assert_eq(statfs_of("/tmp").f_bfree, before.f_bfree);
	cr_assert_eq(f_write(f, "new"), 3);
	file_put(f);
	/* O_RDWR|O_TRUNC through open(2) */
	fd = SC(sys_open, U("/tmp/f"), O_RDWR | O_TRUNC);
	cr_assert_geq(fd, 0, "open: %s", err_name((int)fd));
	cr_assert_eq(LSTAT("/tmp/f").st_size, 0);
	OK(SC(sys_close, (uint64_t)fd));
	/* creat(2) truncates too */
	MKFILE("/tmp/f2", 0644, "old contents");
	fd = SC(sys_creat, U("/tmp/f2"), 0644);
	cr_assert_geq(fd, 0);
	cr_assert_eq(LSTAT("/tmp/f2").st_size, 0);
	OK(SC(sys_close, (uint64_t)fd));
	file_put(r);
	OK(t_unlink("/tmp/f"));
	OK(t_unlink("/tmp/f2"));
}

TT(open_rules)
{
	struct vnode *vn;
	struct file *f;

	MKDIR("/tmp/d", 0755);
	MKFILE("/tmp/f", 0644, "x");
	OK(t_symlink("f", "/tmp/l"));
	vn = RES("/tmp/d");
	ERR(vfs_open(&T, vn, O_WRONLY, &f), EISDIR);
	ERR(vfs_open(&T, vn, O_RDWR, &f), EISDIR);
	OK(vfs_open(&T, vn, O_RDONLY | O_DIRECTORY, &f));
	{
		char buf[8];
		ERR(f_pread(f, buf, sizeof(buf), 0), EISDIR);
	}
	file_put(f);
	vnode_put(vn);
	vn = RES("/tmp/f");
	ERR(vfs_open(&T, vn, O_RDONLY | O_DIRECTORY, &f), ENOTDIR);
	vnode_put(vn);
	vn = LRES("/tmp/l");
	ERR(vfs_open(&T, vn, O_RDONLY, &f), ELOOP);
	vnode_put(vn);
	/* through open(2): O_EXCL on an existing name, O_NOFOLLOW */
	ERR(SC(sys_open, U("/tmp/f"), O_CREAT | O_EXCL | O_WRONLY, 0644),
	    EEXIST);
	ERR(SC(sys_open, U("/tmp/l"), O_CREAT | O_EXCL | O_WRONLY, 0644),
	    EEXIST);
	ERR(SC(sys_open, U("/tmp/l"), O_RDONLY | O_NOFOLLOW), ELOOP);
	ERR(SC(sys_open, U("/tmp/nope/x"), O_CREAT | O_WRONLY, 0644), ENOENT);
	ERR(SC(sys_open, U("/tmp/f/x"), O_CREAT | O_WRONLY, 0644), ENOTDIR);
	ERR(SC(sys_open, U("/tmp/new/"), O_CREAT | O_WRONLY, 0644), EISDIR);
	OK(t_unlink("/tmp/l"));
	OK(t_unlink("/tmp/f"));
	OK(t_rmdir("/tmp/d"));
}

/* ---- directories ---------------------------------------------------------- */

TT(mkdir_and_rmdir)
{
	struct stat st;

	MKDIR("/tmp/d", 0777);
	st = LSTAT("/tmp/d");
	cr_assert(S_ISDIR(st.st_mode));
	cr_assert_eq(st.st_mode & 07777, 0755);
	cr_assert_eq(st.st_nlink, 2);
	cr_assert_eq(LSTAT("/tmp").st_nlink, 3, "the child's \"..\"");
	ERR(t_mkdir("/tmp/d", 0755), EEXIST);
	ERR(SC(sys_mkdir, U("/tmp/d"), 0755), EEXIST);
	ERR(SC(sys_mkdir, U("/tmp/d/"), 0755), EEXIST);

	MKDIR("/tmp/d/sub", 0755);
	cr_assert_eq(LSTAT("/tmp/d").st_nlink, 3);
	MKFILE("/tmp/d/f", 0644, "x");
	cr_assert_eq(LSTAT("/tmp/d").st_nlink, 3, "files add no link");
	expect_path("/tmp/d/sub/..", "/tmp/d");
	expect_path("/tmp/d/sub/../f", "/tmp/d/f");

	ERR(t_rmdir("/tmp/d"), ENOTEMPTY);
	ERR(SC(sys_rmdir, U("/tmp/d")), ENOTEMPTY);
	ERR(t_rmdir("/tmp/d/f"), ENOTDIR);
	ERR(t_unlink("/tmp/d/sub"), EISDIR);
	ERR(SC(sys_unlink, U("/tmp/d/sub")), EISDIR);
	ERR(SC(sys_unlink, U("/tmp/d/f/")), ENOTDIR);
	ERR(t_mkdir("/tmp/d/f/x", 0755), ENOTDIR);
	{
		struct vnode *f = RES("/tmp/d/f");
		ERR(tmpfs_mkdir(&T, f, "x", 0755), ENOTDIR);
		ERR(tmpfs_unlink(&T, f, "x", false), ENOTDIR);
		vnode_put(f);
	}
	ERR(t_rmdir("/tmp/d/nope"), ENOENT);
	ERR(t_unlink("/tmp/d/nope"), ENOENT);
	ERR(SC(sys_rmdir, U("/tmp/d/.")), EINVAL);

	OK(t_unlink("/tmp/d/f"));
	OK(t_rmdir("/tmp/d/sub"));
	cr_assert_eq(LSTAT("/tmp/d").st_nlink, 2);
	OK(SC(sys_rmdir, U("/tmp/d/")));
	cr_assert_eq(LSTAT("/tmp").st_nlink, 2);
	ERR(res_rc("/tmp/d", 0), ENOENT);
}

TT(setgid_dirs_pass_their_group_on)
{
	struct vnode *d;

	MKDIR("/tmp/sg", 0775);
	d = RES("/tmp/sg");
	OK(tmpfs_chown(&T, d, (uid_t)-1, 50));
	OK(tmpfs_chmod(&T, d, 02775));
	vnode_put(d);
	as_user(1000, 1000);
	P.cred.ngroups = 1;
	P.cred.groups[0] = 50;
	MKFILE("/tmp/sg/f", 0644, NULL);
	cr_assert_eq(LSTAT("/tmp/sg/f").st_gid, 50);
	cr_assert_eq(LSTAT("/tmp/sg/f").st_mode & S_ISGID, 0);
	MKDIR("/tmp/sg/d", 0755);
	cr_assert_eq(LSTAT("/tmp/sg/d").st_gid, 50);
	cr_assert_neq(LSTAT("/tmp/sg/d").st_mode & S_ISGID, 0);
	rm_rf("/tmp/sg");
}

TT(removed_dir_refuses_new_entries)
{
	MKDIR("/tmp/gone", 0755);
	set_cwd(RES("/tmp/gone"));
	OK(t_rmdir("/tmp/gone"));
	cr_assert_eq(LSTAT(".").st_nlink, 0);
	ERR(t_create("f", 0644), ENOENT);
	ERR(t_mkdir("d", 0755), ENOENT);
	ERR(t_symlink("x", "l"), ENOENT);
	set_cwd(vnode_get(vfs_ns0()->top_vn));
}

/* Regression (rename into a removed directory): tmpfs_rename never checks
 * that the new parent still exists, so a file moves into a directory that
 * is gone; when the directory is freed, tmpfs_free does not free its
 * entries (it expects none), so the file's vnode and memfd leak. Linux:
 * ENOENT. */
TT(rename_into_a_removed_dir_is_enoent)
{
	long rc;

	MKDIR("/tmp/gone", 0755);
	MKFILE("/tmp/f", 0644, "x");
	set_cwd(RES("/tmp/gone"));
	OK(t_rmdir("/tmp/gone"));
	rc = SC(sys_rename, U("/tmp/f"), U("f"));
	set_cwd(vnode_get(vfs_ns0()->top_vn));
	if (rc == 0)
		cr_assert_fail("rename into a removed directory succeeded "
			       "(the file is lost with it)");
	ERR(rc, ENOENT);
	OK(t_unlink("/tmp/f"));
}

/* Regression (link into a removed directory): tmpfs_link, like
 * tmpfs_rename, adds an entry to a directory that was removed; it leaks
 * with the directory. Linux: ENOENT. */
TT(link_into_a_removed_dir_is_enoent)
{
	long rc;

	MKDIR("/tmp/gone", 0755);
	MKFILE("/tmp/f", 0644, "x");
	set_cwd(RES("/tmp/gone"));
	OK(t_rmdir("/tmp/gone"));
	rc = SC(sys_link, U("/tmp/f"), U("f"));
	set_cwd(vnode_get(vfs_ns0()->top_vn));
	OK(t_unlink("/tmp/f"));
	ERR(rc, ENOENT);
}

/* Regression (dangling parent pointer): a directory's tnode keeps a plain
 * pointer to its parent, without a reference. Removing the directory and
 * then its parent frees the parent while the child (a cwd here) still
 * points at it: ".." from the cwd then uses freed memory (vfs.c
 * vnode_parent -> tmpfs_parent). Linux: ".." in a removed directory is
 * ENOENT. */
TT(dotdot_from_a_removed_dir_whose_parent_is_gone)
{
	struct vnode *up = NULL;
	int rc;

	MKDIR("/tmp/a", 0755);
	MKDIR("/tmp/a/b", 0755);
	set_cwd(RES("/tmp/a/b"));
	OK(t_rmdir("/tmp/a/b"));
	OK(t_rmdir("/tmp/a")); /* frees a: nothing references it */
	/* As on Linux: ".." of a removed directory is its old parent, here
	 * removed too (st_nlink 0), and still valid memory. */
	rc = vfs_resolve(&T, AT_FDCWD, "..", LOOKUP_FOLLOW, &up);
	cr_assert_eq(rc, 0, "'..' of a removed directory: %d", rc);
	cr_assert_eq(up->st.st_nlink, 0, "its parent was removed too");
	cr_assert_str_eq(up->path, "/tmp/a");
	vnode_put(up);
	set_cwd(vnode_get(vfs_ns0()->top_vn));
}

/* Regression (dangling parent pointer, getdents): as above, t_getdents of
 * a removed directory reads the inode number of its freed parent for "..".
 * Linux: getdents of a removed directory is ENOENT. */
TT(getdents_of_a_removed_dir_whose_parent_is_gone)
{
	struct file *f;
	char buf[512];
	long rc;

	MKDIR("/tmp/a", 0755);
	MKDIR("/tmp/a/b", 0755);
	f = OPEN("/tmp/a/b", O_RDONLY | O_DIRECTORY);
	OK(t_rmdir("/tmp/a/b"));
	OK(t_rmdir("/tmp/a"));
	rc = f_getdents(f, buf, sizeof(buf));
	file_put(f);
	cr_assert_eq(rc, -ENOENT, "getdents of a removed dir: %ld", rc);
}

/* ---- unlink while open ---------------------------------------------------- */

TT(unlink_while_open_keeps_the_data_until_close)
{
	struct statfs before = statfs_of("/tmp");
	int fds = count_fds();
	long nodes = live_nodes();
	struct file *f, *r;
	struct stat st;
	char buf[64];

	MKFILE("/tmp/f", 0644, NULL);
	cr_assert_eq(count_fds(), fds);
	f = OPEN("/tmp/f", O_RDWR);
	r = OPEN("/tmp/f", O_RDONLY);
	cr_assert_eq(f_write(f, "data"), 4);
	{
		struct vnode *vn = RES("/tmp/f");
		OK(tmpfs_truncate(vn, 4096 * 2));
		OK(tmpfs_truncate(vn, 4)); /* back; bytes accounted are 4 */
		vnode_put(vn);
	}
	OK(t_unlink("/tmp/f"));
	ERR(res_rc("/tmp/f", 0), ENOENT);
	cr_assert_eq(count_entries("/tmp"), 2);
	cr_assert_eq(count_fds(), fds, "no host fd for inline data");

	cr_assert_eq(f_pread(r, buf, sizeof(buf), 0), 4);
	cr_assert_eq(memcmp(buf, "data", 4), 0);
	cr_assert_eq(f->ops->stat(f, &st), 0);
	cr_assert_eq(st.st_nlink, 0);
	cr_assert_eq(st.st_size, 4);
	cr_assert_eq(f_write(f, "more"), 4, "still writable");
	cr_assert_eq(f_pread(r, buf, sizeof(buf), 0), 8);
	cr_assert_eq(memcmp(buf, "datamore", 8), 0);
	file_put(f);
	cr_assert_eq(live_nodes(), nodes + 1, "one open file left");
	file_put(r);
	cr_assert_eq(live_nodes(), nodes, "freed with the last file");
	cr_assert_eq(statfs_of("/tmp").f_bfree, before.f_bfree,
		     "its bytes are free again");
	/* a new file of the same name is another file */
	MKFILE("/tmp/f", 0644, NULL);
	cr_assert_eq(LSTAT("/tmp/f").st_size, 0);
	OK(t_unlink("/tmp/f"));
}

/* Regression (linking an unlinked file back): linkat(fd, "", AT_EMPTY_PATH)
 * of a file whose last name is gone gives it a name again; Linux refuses
 * (ENOENT) unless the file was made by O_TMPFILE. tmpfs_link does not look
 * at st_nlink. */
TT(link_of_an_unlinked_file_is_enoent)
{
	long fd, rc;

	MKFILE("/tmp/f", 0644, "x");
	fd = SC(sys_open, U("/tmp/f"), O_RDWR);
	cr_assert_geq(fd, 0);
	OK(t_unlink("/tmp/f"));
	rc = SC(sys_linkat, (uint64_t)fd, U(""), (uint64_t)AT_FDCWD,
		U("/tmp/back"), AT_EMPTY_PATH);
	OK(SC(sys_close, (uint64_t)fd));
	if (rc == 0)
		OK(t_unlink("/tmp/back"));
	ERR(rc, ENOENT);
}

/* ---- hard links ----------------------------------------------------------- */

TT(hard_links_share_the_inode)
{
	struct vnode *a, *b, *d, *shm;
	char buf[32];
	int fds = count_fds();

	long nodes = live_nodes();

	MKFILE("/tmp/a", 0644, "shared");
	MKDIR("/tmp/d", 0755);
	OK(t_link("/tmp/a", "/tmp/d/b"));
	cr_assert_eq(count_fds(), fds, "inline: no host fd");
	a = RES("/tmp/a");
	b = RES("/tmp/d/b");
	cr_assert_eq(a, b);
	cr_assert_eq(LSTAT("/tmp/a").st_nlink, 2);
	cr_assert_eq(LSTAT("/tmp/d/b").st_nlink, 2);
	cr_assert_eq(LSTAT("/tmp/d").st_nlink, 2, "a file adds no link");
	cr_assert_str_eq(SLURP("/tmp/d/b", buf), "shared");
	{
		struct file *f = OPEN("/tmp/d/b", O_WRONLY);
		cr_assert_eq(f_write(f, "SH"), 2);
		file_put(f);
	}
	cr_assert_str_eq(SLURP("/tmp/a", buf), "SHared");

	/* the errors */
	d = RES("/tmp/d");
	shm = RES("/dev/shm");
	ERR(tmpfs_link(&T, d, "b", a), EEXIST);
	{
		struct vnode *tmp = RES("/tmp");
		ERR(tmpfs_link(&T, tmp, "dd", d), EPERM);
		vnode_put(tmp);
	}
	ERR(tmpfs_link(&T, shm, "x", a), EXDEV);
	ERR(SC(sys_link, U("/tmp/a"), U("/dev/shm/x")), EXDEV);
	ERR(SC(sys_link, U("/tmp/a"), U("/x")), EXDEV); /* another mount */
	ERR(SC(sys_link, U("/tmp/d"), U("/tmp/dd")), EPERM);
	ERR(SC(sys_link, U("/tmp/a"), U("/tmp/d/b")), EEXIST);
	OK(SC(sys_link, U("/tmp/a"), U("/tmp/c")));
	cr_assert_eq(LSTAT("/tmp/a").st_nlink, 3);

	/* unlinking a name leaves the others */
	OK(t_unlink("/tmp/a"));
	cr_assert_eq(LSTAT("/tmp/d/b").st_nlink, 2);
	cr_assert_str_eq(SLURP("/tmp/d/b", buf), "SHared");
	OK(t_unlink("/tmp/c"));
	cr_assert_eq(LSTAT("/tmp/d/b").st_nlink, 1);
	cr_assert_eq(live_nodes(), nodes + 2, "the file and /tmp/d");
	vnode_put(a);
	vnode_put(b);
	vnode_put(d);
	vnode_put(shm);
	OK(t_unlink("/tmp/d/b"));
	cr_assert_eq(live_nodes(), nodes + 1, "the last name frees it");
	OK(t_rmdir("/tmp/d"));
}

/* ---- symlinks ------------------------------------------------------------- */

TT(symlinks_relative_and_absolute)
{
	struct vnode *vn;
	struct stat st;
	char buf[PATH_MAX];

	MKDIR("/tmp/d", 0755);
	MKFILE("/tmp/d/f", 0644, "target");
	MKFILE("/dev/shm/s", 0644, "in shm");
	OK(t_symlink("d/f", "/tmp/rel"));
	OK(t_symlink("/tmp/d/f", "/tmp/abs"));
	OK(t_symlink("../d/f", "/tmp/d/up"));
	OK(t_symlink("d", "/tmp/dl"));
	OK(t_symlink("/dev/shm", "/tmp/shm"));
	OK(t_symlink("../../tmp/d", "/dev/shm/back"));
	OK(t_symlink("nowhere", "/tmp/dangling"));
	OK(t_symlink("loop", "/tmp/loop"));

	st = LSTAT("/tmp/rel");
	cr_assert(S_ISLNK(st.st_mode));
	cr_assert_eq(st.st_mode & 07777, 0777);
	cr_assert_eq(st.st_size, 3);
	vn = LRES("/tmp/abs");
	cr_assert_str_eq(vn->path, "/tmp/abs");
	cr_assert_eq(vfs_readlink(vn, buf, sizeof(buf)), 8);
	cr_assert_str_eq(buf, "/tmp/d/f");
	ERR(vfs_readlink(vn, buf, 8), ENAMETOOLONG);
	vnode_put(vn);
	vn = RES("/tmp/d/f");
	ERR(vfs_readlink(vn, buf, sizeof(buf)), EINVAL);
	vnode_put(vn);

	expect_path("/tmp/rel", "/tmp/d/f");
	expect_path("/tmp/abs", "/tmp/d/f");
	expect_path("/tmp/d/up", "/tmp/d/f");
	expect_path("/tmp/dl/f", "/tmp/d/f");
	expect_path("/tmp/dl/up", "/tmp/d/f");
	expect_path("/tmp/dl/../rel", "/tmp/d/f");
	expect_path("/tmp/shm/s", "/dev/shm/s");
	expect_path("/dev/shm/back/f", "/tmp/d/f");
	expect_path("/tmp/shm/back/up", "/tmp/d/f");
	cr_assert_str_eq(SLURP("/tmp/rel", buf), "target");
	cr_assert_str_eq(SLURP("/tmp/shm/s", buf), "in shm");
	/* relative to a cwd inside tmpfs */
	set_cwd(RES("/tmp/d"));
	expect_path("up", "/tmp/d/f");
	expect_path("../rel", "/tmp/d/f");
	set_cwd(vnode_get(vfs_ns0()->top_vn));

	ERR(res_rc("/tmp/dangling", LOOKUP_FOLLOW), ENOENT);
	cr_assert_eq(res_rc("/tmp/dangling", 0), 0);
	ERR(res_rc("/tmp/loop", LOOKUP_FOLLOW), ELOOP);
	ERR(res_rc("/tmp/rel/", 0), ENOTDIR);
	{
		struct vnode *tmp = RES("/tmp");
		ERR(tmpfs_symlink(&T, tmp, "empty", ""), ENOENT);
		ERR(tmpfs_symlink(&T, tmp, "rel", "x"), EEXIST);
		vnode_put(tmp);
	}
	/* a symlink is unlinked, not followed */
	OK(t_unlink("/tmp/dl"));
	cr_assert(S_ISDIR(LSTAT("/tmp/d").st_mode));
	rm_rf("/tmp/d");
	OK(t_unlink("/tmp/rel"));
	OK(t_unlink("/tmp/abs"));
	OK(t_unlink("/tmp/shm"));
	OK(t_unlink("/tmp/dangling"));
	OK(t_unlink("/tmp/loop"));
	OK(t_unlink("/dev/shm/back"));
	OK(t_unlink("/dev/shm/s"));
}

/* Regression-style check on vfs.c: ".." after a regular file. */
TT(dotdot_after_a_regular_file_is_enotdir)
{
	MKFILE("/tmp/x", 0755, "x");
	ERR(res_rc("/tmp/x/.", 0), ENOTDIR);
	ERR(res_rc("/tmp/x/y", 0), ENOTDIR);
	{
		int rc = res_rc("/tmp/x/..", 0);
		OK(t_unlink("/tmp/x"));
		ERR(rc, ENOTDIR);
	}
}

/* ---- rename --------------------------------------------------------------- */

TT(rename_file_over_file)
{
	struct vnode *a;
	struct file *old;
	char buf[32];
	long nodes;

	MKFILE("/tmp/a", 0644, "AAA");
	MKFILE("/tmp/b", 0644, "BB");
	nodes = live_nodes();
	a = RES("/tmp/a");
	old = OPEN("/tmp/b", O_RDONLY);
	OK(t_rename("/tmp/a", "/tmp/b", 0));
	ERR(res_rc("/tmp/a", 0), ENOENT);
	cr_assert_str_eq(SLURP("/tmp/b", buf), "AAA");
	cr_assert_str_eq(a->path, "/tmp/b", "the canonical path moved");
	cr_assert_eq(LSTAT("/tmp/b").st_ino, a->st.st_ino);
	cr_assert_eq(LSTAT("/tmp").st_nlink, 2);
	cr_assert_eq(count_entries("/tmp"), 3);
	/* the replaced file lives while open */
	cr_assert_eq(f_pread(old, buf, sizeof(buf), 0), 2);
	cr_assert_eq(live_nodes(), nodes);
	file_put(old);
	cr_assert_eq(live_nodes(), nodes - 1, "the replaced file is freed");

	/* rename to itself, and over a hard link of itself: no-ops */
	OK(t_rename("/tmp/b", "/tmp/b", 0));
	OK(t_link("/tmp/b", "/tmp/b2"));
	OK(t_rename("/tmp/b", "/tmp/b2", 0));
	cr_assert_eq(res_rc("/tmp/b", 0), 0);
	cr_assert_eq(LSTAT("/tmp/b").st_nlink, 2);
	OK(t_unlink("/tmp/b2"));
	/* through rename(2), into a directory */
	MKDIR("/tmp/d", 0755);
	OK(SC(sys_rename, U("/tmp/b"), U("/tmp/d/c")));
	cr_assert_str_eq(a->path, "/tmp/d/c");
	cr_assert_str_eq(SLURP("/tmp/d/c", buf), "AAA");
	ERR(SC(sys_rename, U("/tmp/nope"), U("/tmp/x")), ENOENT);
	ERR(SC(sys_rename, U("/tmp/d/c"), U("/tmp/nope/x")), ENOENT);
	vnode_put(a);
	rm_rf("/tmp/d");
}

TT(rename_dir_over_empty_dir)
{
	struct vnode *d1;

	MKDIR("/tmp/d1", 0755);
	MKFILE("/tmp/d1/f", 0644, "x");
	MKDIR("/tmp/d2", 0700);
	cr_assert_eq(LSTAT("/tmp").st_nlink, 4);
	d1 = RES("/tmp/d1");
	OK(t_rename("/tmp/d1", "/tmp/d2", 0));
	ERR(res_rc("/tmp/d1", 0), ENOENT);
	cr_assert_eq(LSTAT("/tmp").st_nlink, 3);
	cr_assert_eq(LSTAT("/tmp/d2").st_mode & 07777, 0755, "d1's inode");
	cr_assert_eq(LSTAT("/tmp/d2").st_ino, d1->st.st_ino);
	expect_path("/tmp/d2/f", "/tmp/d2/f");
	MKDIR("/tmp/d2/sub", 0755);
	expect_path("/tmp/d2/sub/../..", "/tmp");
	expect_path("/tmp/d2/sub/../f", "/tmp/d2/f");
	cr_assert_str_eq(d1->path, "/tmp/d2");
	vnode_put(d1);

	/* type mismatches */
	MKFILE("/tmp/file", 0644, NULL);
	MKDIR("/tmp/e", 0755);
	ERR(t_rename("/tmp/file", "/tmp/e", 0), EISDIR);
	ERR(t_rename("/tmp/e", "/tmp/file", 0), ENOTDIR);
	OK(t_rmdir("/tmp/e"));
	OK(t_unlink("/tmp/file"));
	rm_rf("/tmp/d2");
}

TT(rename_dir_over_non_empty_dir_is_enotempty)
{
	MKDIR("/tmp/d1", 0755);
	MKDIR("/tmp/d2", 0755);
	MKFILE("/tmp/d2/keep", 0644, "k");
	ERR(t_rename("/tmp/d1", "/tmp/d2", 0), ENOTEMPTY);
	ERR(SC(sys_rename, U("/tmp/d1"), U("/tmp/d2")), ENOTEMPTY);
	cr_assert_eq(res_rc("/tmp/d1", 0), 0);
	cr_assert_eq(res_rc("/tmp/d2/keep", 0), 0);
	cr_assert_eq(LSTAT("/tmp").st_nlink, 4);
	/* a subdirectory over its non-empty parent */
	MKDIR("/tmp/d2/sub", 0755);
	ERR(t_rename("/tmp/d2/sub", "/tmp/d2", 0), ENOTEMPTY);
	rm_rf("/tmp/d1");
	rm_rf("/tmp/d2");
}

TT(rename_dir_into_its_own_subdir_is_einval)
{
	MKDIR("/tmp/a", 0755);
	MKDIR("/tmp/a/b", 0755);
	ERR(t_rename("/tmp/a", "/tmp/a/b/c", 0), EINVAL);
	ERR(t_rename("/tmp/a", "/tmp/a/c", 0), EINVAL);
	ERR(t_rename("/tmp/a", "/tmp/a/b", 0), EINVAL);
	ERR(t_rename("/tmp/a", "/tmp/a/b", RENAME_EXCHANGE), EINVAL);
	ERR(t_rename("/tmp/a/b", "/tmp/a", RENAME_EXCHANGE), EINVAL);
	ERR(SC(sys_rename, U("/tmp/a"), U("/tmp/a/b/c")), EINVAL);
	expect_path("/tmp/a/b", "/tmp/a/b");
	cr_assert_eq(LSTAT("/tmp/a").st_nlink, 3);
	OK(t_rename("/tmp/a", "/tmp/a", 0));
	rm_rf("/tmp/a");
}

TT(rename_noreplace)
{
	char buf[8];

	MKFILE("/tmp/a", 0644, "a");
	MKFILE("/tmp/b", 0644, "b");
	ERR(t_rename("/tmp/a", "/tmp/b", RENAME_NOREPLACE), EEXIST);
	ERR(SC(sys_renameat2, (uint64_t)AT_FDCWD, U("/tmp/a"),
	       (uint64_t)AT_FDCWD, U("/tmp/b"), RENAME_NOREPLACE),
	    EEXIST);
	cr_assert_str_eq(SLURP("/tmp/a", buf), "a");
	cr_assert_str_eq(SLURP("/tmp/b", buf), "b");
	OK(t_rename("/tmp/a", "/tmp/c", RENAME_NOREPLACE));
	cr_assert_str_eq(SLURP("/tmp/c", buf), "a");
	ERR(SC(sys_renameat2, (uint64_t)AT_FDCWD, U("/tmp/c"),
	       (uint64_t)AT_FDCWD, U("/tmp/b"),
	       RENAME_NOREPLACE | RENAME_EXCHANGE),
	    EINVAL);
	ERR(SC(sys_renameat2, (uint64_t)AT_FDCWD, U("/tmp/c"),
	       (uint64_t)AT_FDCWD, U("/tmp/b"), 0x80),
	    EINVAL);
	OK(t_unlink("/tmp/b"));
	OK(t_unlink("/tmp/c"));
}

TT(rename_exchange_file_and_dir)
{
	struct vnode *x, *y, *k;
	char buf[8];

	MKFILE("/tmp/x", 0644, "X");
	MKDIR("/tmp/y", 0755);
	MKFILE("/tmp/y/k", 0644, "K");
	x = RES("/tmp/x");
	y = RES("/tmp/y");
	k = RES("/tmp/y/k");
	ERR(t_rename("/tmp/x", "/tmp/none", RENAME_EXCHANGE), ENOENT);
	OK(t_rename("/tmp/x", "/tmp/y", RENAME_EXCHANGE));
	cr_assert(S_ISDIR(LSTAT("/tmp/x").st_mode));
	cr_assert(S_ISREG(LSTAT("/tmp/y").st_mode));
	cr_assert_str_eq(SLURP("/tmp/y", buf), "X");
	cr_assert_str_eq(SLURP("/tmp/x/k", buf), "K");
	cr_assert_str_eq(x->path, "/tmp/y");
	cr_assert_str_eq(y->path, "/tmp/x");
	cr_assert_str_eq(k->path, "/tmp/x/k");
	expect_path("/tmp/x/..", "/tmp");
	expect_path("/tmp/x/../x/k", "/tmp/x/k");
	cr_assert_eq(LSTAT("/tmp").st_nlink, 3);

	/* across directories: the "..": links move with the directory */
	MKDIR("/tmp/p", 0755);
	MKDIR("/tmp/q", 0755);
	OK(t_rename("/tmp/y", "/tmp/p/file", 0));
	OK(t_rename("/tmp/x", "/tmp/q/dir", 0));
	cr_assert_eq(LSTAT("/tmp/p").st_nlink, 2);
	cr_assert_eq(LSTAT("/tmp/q").st_nlink, 3);
	OK(SC(sys_renameat2, (uint64_t)AT_FDCWD, U("/tmp/p/file"),
	      (uint64_t)AT_FDCWD, U("/tmp/q/dir"), RENAME_EXCHANGE));
	cr_assert_eq(LSTAT("/tmp/p").st_nlink, 3);
	cr_assert_eq(LSTAT("/tmp/q").st_nlink, 2);
	cr_assert(S_ISDIR(LSTAT("/tmp/p/file").st_mode));
	cr_assert(S_ISREG(LSTAT("/tmp/q/dir").st_mode));
	cr_assert_str_eq(y->path, "/tmp/p/file");
	cr_assert_str_eq(k->path, "/tmp/p/file/k");
	cr_assert_str_eq(x->path, "/tmp/q/dir");
	expect_path("/tmp/p/file/..", "/tmp/p");
	cr_assert_str_eq(SLURP("/tmp/p/file/k", buf), "K");
	vnode_put(x);
	vnode_put(y);
	vnode_put(k);
	rm_rf("/tmp/p");
	rm_rf("/tmp/q");
}

TT(rename_across_mounts_is_exdev)
{
	struct vnode *tmp = RES("/tmp"), *shm = RES("/dev/shm");

	MKFILE("/tmp/f", 0644, "x");
	MKDIR("/dev/shm/d", 0755);
	cr_assert_not(tmpfs_same_fs(tmp, shm));
	ERR(tmpfs_rename(&T, tmp, "f", shm, "f", 0), EXDEV);
	ERR(t_rename("/tmp/f", "/dev/shm/d/f", 0), EXDEV);
	ERR(SC(sys_rename, U("/tmp/f"), U("/dev/shm/f")), EXDEV);
	ERR(SC(sys_rename, U("/dev/shm/d"), U("/tmp/d")), EXDEV);
	ERR(SC(sys_renameat2, (uint64_t)AT_FDCWD, U("/tmp/f"),
	       (uint64_t)AT_FDCWD, U("/dev/shm/d"), RENAME_EXCHANGE),
	    EXDEV);
	/* the (overlaid, writable) rootfs is another mount: EXDEV */
	ERR(SC(sys_rename, U("/tmp/f"), U("/f")), EXDEV);
	cr_assert_eq(res_rc("/tmp/f", 0), 0);
	cr_assert_eq(res_rc("/dev/shm/d", 0), 0);
	vnode_put(tmp);
	vnode_put(shm);
	OK(t_unlink("/tmp/f"));
	OK(t_rmdir("/dev/shm/d"));
}

TT(rename_dir_moves_paths_and_dotdot)
{
	struct vnode *c, *f, *b;
	struct file *open_f;
	char buf[8];
	int bfd;

	MKDIR("/tmp/a", 0755);
	MKDIR("/tmp/a/b", 0755);
	MKDIR("/tmp/a/b/c", 0755);
	MKFILE("/tmp/a/b/c/f", 0644, "F");
	MKDIR("/tmp/z", 0755);
	c = RES("/tmp/a/b/c");
	f = RES("/tmp/a/b/c/f");
	b = RES("/tmp/a/b");
	open_f = OPEN("/tmp/a/b/c/f", O_RDONLY);
	bfd = SC(sys_open, U("/tmp/a/b"), O_RDONLY | O_DIRECTORY);
	cr_assert_geq(bfd, 0);
	set_cwd(vnode_get(c));

	OK(t_rename("/tmp/a", "/tmp/z/a2", 0));
	ERR(res_rc("/tmp/a", 0), ENOENT);
	cr_assert_str_eq(b->path, "/tmp/z/a2/b");
	cr_assert_str_eq(c->path, "/tmp/z/a2/b/c");
	cr_assert_str_eq(f->path, "/tmp/z/a2/b/c/f");
	cr_assert_eq(LSTAT("/tmp").st_nlink, 3);
	cr_assert_eq(LSTAT("/tmp/z").st_nlink, 3);
	/* ".." from inside it, relative to the cwd */
	expect_path("..", "/tmp/z/a2/b");
	expect_path("../..", "/tmp/z/a2");
	expect_path("../../..", "/tmp/z");
	expect_path("../../../..", "/tmp");
	expect_path("../../../../..", "/");
	expect_path("f", "/tmp/z/a2/b/c/f");
	expect_path(".", "/tmp/z/a2/b/c");
	/* relative to a dirfd opened before the move */
	{
		struct vnode *vn;
		OK(vfs_resolve(&T, bfd, "c/f", LOOKUP_FOLLOW, &vn));
		cr_assert_str_eq(vn->path, "/tmp/z/a2/b/c/f");
		vnode_put(vn);
		OK(vfs_resolve(&T, bfd, "..", LOOKUP_FOLLOW, &vn));
		cr_assert_str_eq(vn->path, "/tmp/z/a2");
		vnode_put(vn);
	}
	/* getcwd follows too */
	{
		char cwd[PATH_MAX];
		long n = SC(sys_getcwd, U(cwd), sizeof(cwd));
		cr_assert_gt(n, 0);
		cr_assert_str_eq(cwd, "/tmp/z/a2/b/c");
	}
	cr_assert_eq(f_pread(open_f, buf, sizeof(buf), 0), 1);
	/* and once more, within the same directory */
	OK(t_rename("/tmp/z/a2/b", "/tmp/z/a2/b2", 0));
	cr_assert_str_eq(c->path, "/tmp/z/a2/b2/c");
	expect_path("..", "/tmp/z/a2/b2");
	expect_path("../../b2/c/f", "/tmp/z/a2/b2/c/f");

	set_cwd(vnode_get(vfs_ns0()->top_vn));
	file_put(open_f);
	OK(SC(sys_close, (uint64_t)bfd));
	vnode_put(b);
	vnode_put(c);
	vnode_put(f);
	rm_rf("/tmp/z");
}

/* repath walks the moved tree in a loop, back up through each parent:
 * every node of a tree with siblings at each level gets its new path. */
TT(rename_dir_repaths_every_branch)
{
	static const char *const tail[] = { "x",       "x/p",  "x/q", "x/q/r",
					    "x/q/r/f", "x/s",  "y",   "z",
					    "z/w",     "z/w/g" };
	struct vnode *vn[ARRAY_SIZE(tail)];
	char path[PATH_MAX];
	size_t i;

	MKDIR("/tmp/t", 0755);
	MKDIR("/tmp/t/x", 0755);
	MKDIR("/tmp/t/x/p", 0755);
	MKDIR("/tmp/t/x/q", 0755);
	MKDIR("/tmp/t/x/q/r", 0755);
	MKFILE("/tmp/t/x/q/r/f", 0644, "F");
	MKFILE("/tmp/t/x/s", 0644, "S");
	MKFILE("/tmp/t/y", 0644, "Y");
	MKDIR("/tmp/t/z", 0755);
	MKDIR("/tmp/t/z/w", 0755);
	MKFILE("/tmp/t/z/w/g", 0644, "G");
	for (i = 0; i < ARRAY_SIZE(tail); i++) {
		snprintf(path, sizeof(path), "/tmp/t/%s", tail[i]);
		vn[i] = RES(path);
	}
	OK(t_rename("/tmp/t", "/tmp/t2", 0));
	for (i = 0; i < ARRAY_SIZE(tail); i++) {
		snprintf(path, sizeof(path), "/tmp/t2/%s", tail[i]);
		cr_assert_str_eq(vn[i]->path, path);
		vnode_put(vn[i]);
	}
	rm_rf("/tmp/t2");
}

/* ---- getdents ------------------------------------------------------------- */

TT(getdents_lists_dot_dotdot_and_entries)
{
	struct ent e[16];
	const struct ent *p;
	struct vnode *d, *tmp;
	int n, i;

	MKDIR("/tmp/d", 0755);
	MKFILE("/tmp/d/file", 0644, NULL);
	MKDIR("/tmp/d/sub", 0755);
	OK(t_symlink("file", "/tmp/d/link"));
	d = RES("/tmp/d");
	tmp = RES("/tmp");
	n = list_dir("/tmp/d", e, 16);
	cr_assert_eq(n, 5, "%d entries", n);
	p = find_ent(e, n, ".");
	cr_assert(p);
	cr_assert_eq(p->type, DT_DIR);
	cr_assert_eq(p->ino, d->st.st_ino);
	p = find_ent(e, n, "..");
	cr_assert(p);
	cr_assert_eq(p->type, DT_DIR);
	cr_assert_eq(p->ino, tmp->st.st_ino);
	p = find_ent(e, n, "file");
	cr_assert(p);
	cr_assert_eq(p->type, DT_REG);
	cr_assert_eq(p->ino, LSTAT("/tmp/d/file").st_ino);
	p = find_ent(e, n, "sub");
	cr_assert(p);
	cr_assert_eq(p->type, DT_DIR);
	p = find_ent(e, n, "link");
	cr_assert(p);
	cr_assert_eq(p->type, DT_LNK);
	for (i = 1; i < n; i++)
		cr_assert_gt(e[i].off, e[i - 1].off, "d_off increases");
	/* a regular file is not a directory */
	{
		struct file *f = OPEN("/tmp/d/file", O_RDONLY);
		char buf[256];
		ERR(f_getdents(f, buf, sizeof(buf)), ENOTDIR);
		file_put(f);
	}
	vnode_put(d);
	vnode_put(tmp);
	rm_rf("/tmp/d");
}

TT(getdents_resumes_with_a_small_buffer)
{
	static struct ent e[128];
	char name[64], seen[40] = { 0 };
	int n, i, j;
	long fd, len;
	char buf[512];

	MKDIR("/tmp/d", 0755);
	for (i = 0; i < 40; i++) {
		snprintf(name, sizeof(name), "/tmp/d/entry-%02d", i);
		MKFILE(name, 0644, NULL);
	}
	/* one record (24 + 16 bytes) at a time, and a few at a time */
	for (j = 0; j < 2; j++) {
		size_t cap = j == 0 ? 40 : 100;
		memset(seen, 0, sizeof(seen));
		n = list_dir_cap("/tmp/d", e, 128, cap);
		cr_assert_eq(n, 42, "cap %zu: %d entries", cap, n);
		cr_assert_str_eq(e[0].name, ".");
		cr_assert_str_eq(e[1].name, "..");
		for (i = 2; i < n; i++) {
			int k;
			cr_assert_eq(sscanf(e[i].name, "entry-%d", &k), 1);
			cr_assert(k >= 0 && k < 40);
			cr_assert_not(seen[k], "%s twice", e[i].name);
			seen[k] = 1;
		}
	}
	/* through getdents64(2): a buffer too small for one record */
	fd = SC(sys_open, U("/tmp/d"), O_RDONLY | O_DIRECTORY);
	cr_assert_geq(fd, 0);
	ERR(SC(sys_getdents64, (uint64_t)fd, U(buf), 20), EINVAL);
	n = 0;
	while ((len = SC(sys_getdents64, (uint64_t)fd, U(buf), 64)) > 0)
		parse_dirents(buf, len, e, &n, 128);
	cr_assert_eq(len, 0);
	cr_assert_eq(n, 42);
	cr_assert_eq(SC(sys_getdents64, (uint64_t)fd, U(buf), sizeof(buf)), 0,
		     "stays at the end");
	/* lseek(fd, 0, SEEK_SET) rewinds */
	OK(SC(sys_lseek, (uint64_t)fd, 0, SEEK_SET));
	len = SC(sys_getdents64, (uint64_t)fd, U(buf), sizeof(buf));
	cr_assert_gt(len, 0);
	OK(SC(sys_close, (uint64_t)fd));
	rm_rf("/tmp/d");
}

/* Regression (getdents resumes by index): the resume point of a tmpfs
 * directory is the count of entries already returned, and new entries go
 * at the head of the list. Removing entries already returned (what rm -r
 * does between getdents calls) shifts the rest, so the next call skips as
 * many entries that were never returned. POSIX: an entry neither added nor
 * removed is returned exactly once. */
TT(getdents_survives_unlink_between_calls)
{
	static struct ent e[64];
	char name[64], seen[10] = { 0 };
	struct file *f;
	char buf[96];
	long len;
	int n = 0, i, k, got = 0;

	MKDIR("/tmp/d", 0755);
	for (i = 0; i < 10; i++) {
		snprintf(name, sizeof(name), "/tmp/d/f%d", i);
		MKFILE(name, 0644, NULL);
	}
	f = OPEN("/tmp/d", O_RDONLY | O_DIRECTORY);
	/* 96 bytes: four 24-byte records per call */
	while ((len = f_getdents(f, buf, sizeof(buf))) > 0) {
		int first = n;
		parse_dirents(buf, len, e, &n, 64);
		for (i = first; i < n; i++) {
			if (sscanf(e[i].name, "f%d", &k) != 1)
				continue;
			cr_assert_not(seen[k], "%s twice", e[i].name);
			seen[k] = 1;
			got++;
			snprintf(name, sizeof(name), "/tmp/d/%s", e[i].name);
			OK(t_unlink(name));
		}
	}
	file_put(f);
	cr_assert_eq(len, 0);
	if (got != 10)
		rm_rf("/tmp/d");
	cr_assert_eq(got, 10, "rm -r saw %d of 10 files", got);
	OK(t_rmdir("/tmp/d"));
}

/* ---- permissions ---------------------------------------------------------- */

TT(sticky_tmp_protects_other_users_files)
{
	MKDIR("/tmp/rootdir", 0777);
	as_user(1000, 1000);
	MKFILE("/tmp/mine", 0666, "m");
	MKFILE("/tmp/mine2", 0666, "m");
	as_user(1001, 1001);
	MKFILE("/tmp/theirs", 0666, "t");

	as_user(1000, 1000);
	ERR(t_unlink("/tmp/theirs"), EPERM);
	ERR(SC(sys_unlink, U("/tmp/theirs")), EPERM);
	ERR(t_rename("/tmp/theirs", "/tmp/taken", 0), EPERM);
	ERR(t_rename("/tmp/mine", "/tmp/theirs", 0), EPERM);
	ERR(t_rmdir("/tmp/rootdir"), EPERM);
	cr_assert_eq(res_rc("/tmp/theirs", 0), 0);
	/* its own: fine, and the 0666 file of another is writable */
	OK(t_rename("/tmp/mine2", "/tmp/mine3", 0));
	OK(t_unlink("/tmp/mine3"));
	{
		struct file *f = OPEN("/tmp/theirs", O_WRONLY);
		cr_assert_eq(f_write(f, "T"), 1);
		file_put(f);
	}
	/* root may */
	as_root();
	OK(t_unlink("/tmp/theirs"));
	OK(t_rmdir("/tmp/rootdir"));
	OK(t_unlink("/tmp/mine"));
}

/* Regression (RENAME_EXCHANGE skips the sticky check of the target): in
 * sticky /tmp a user may exchange its own file with another user's, which
 * moves (and so replaces) the other user's entry. Linux checks both
 * entries (may_delete on each): EPERM. */
TT(rename_exchange_in_sticky_tmp_checks_both_entries)
{
	long rc;

	as_user(1000, 1000);
	MKFILE("/tmp/mine", 0644, "m");
	as_user(1001, 1001);
	MKFILE("/tmp/theirs", 0644, "t");
	as_user(1000, 1000);
	rc = t_rename("/tmp/mine", "/tmp/theirs", RENAME_EXCHANGE);
	as_root();
	OK(t_unlink("/tmp/mine"));
	OK(t_unlink("/tmp/theirs"));
	ERR(rc, EPERM);
}

TT(non_root_cannot_write_a_root_0755_dir)
{
	struct vnode *rd;

	MKDIR("/tmp/rd", 0755);
	MKFILE("/tmp/rd/rootfile", 0644, "r");
	as_user(1000, 1000);
	MKFILE("/tmp/mine", 0644, "m");
	rd = RES("/tmp/rd");
	cr_assert_eq(vfs_access(&P.cred, rd, W_OK), -EACCES);
	cr_assert_eq(vfs_access(&P.cred, rd, R_OK | X_OK), 0);
	ERR(t_create("/tmp/rd/x", 0644), EACCES);
	ERR(SC(sys_open, U("/tmp/rd/x"), O_CREAT | O_WRONLY, 0644), EACCES);
	ERR(t_mkdir("/tmp/rd/x", 0755), EACCES);
	ERR(t_symlink("y", "/tmp/rd/x"), EACCES);
	ERR(t_unlink("/tmp/rd/rootfile"), EACCES);
	ERR(t_rename("/tmp/rd/rootfile", "/tmp/y", 0), EACCES);
	ERR(t_rename("/tmp/mine", "/tmp/rd/x", 0), EACCES);
	ERR(tmpfs_create(&T, rd, "x", 0644, &(struct vnode *){ NULL }), EACCES);
	/* reading it is fine */
	expect_path("/tmp/rd/rootfile", "/tmp/rd/rootfile");
	vnode_put(rd);
	/* 0700: not even searchable */
	as_root();
	OK(SC(sys_chmod, U("/tmp/rd"), 0700));
	as_user(1000, 1000);
	ERR(res_rc("/tmp/rd/rootfile", 0), EACCES);
	ERR(t_create("/tmp/rd/x", 0644), EACCES);
	as_root();
	rm_rf("/tmp/rd");
	OK(t_unlink("/tmp/mine"));
}

/* Regression (link(2) without a permission check): do_link calls
 * tmpfs_link, which takes no task and checks nothing, so a user makes
 * names in a directory it cannot write. Linux: EACCES. */
TT(link_into_a_root_0755_dir_is_eacces)
{
	long rc;

	MKDIR("/tmp/rd", 0755);
	as_user(1000, 1000);
	MKFILE("/tmp/mine", 0644, "m");
	rc = SC(sys_link, U("/tmp/mine"), U("/tmp/rd/x"));
	as_root();
	if (rc == 0)
		OK(t_unlink("/tmp/rd/x"));
	OK(t_unlink("/tmp/mine"));
	OK(t_rmdir("/tmp/rd"));
	ERR(rc, EACCES);
}

/* Regression (open for writing skips the permission check on tmpfs):
 * do_open (sys_fs.c) checks access only when the mask is not W_OK alone
 * unless the node is a gofer one, so O_WRONLY of another user's 0644 file
 * in /tmp succeeds and the user overwrites (or O_TRUNC empties) it. Linux:
 * EACCES. */
TT(open_wronly_of_another_users_file_is_eacces)
{
	char buf[16];
	long fd;

	MKFILE("/tmp/rootfile", 0644, "root data");
	as_user(1000, 1000);
	fd = SC(sys_open, U("/tmp/rootfile"), O_RDONLY);
	cr_assert_geq(fd, 0, "reading is allowed");
	OK(SC(sys_close, (uint64_t)fd));
	ERR(SC(sys_open, U("/tmp/rootfile"), O_RDWR), EACCES);
	fd = SC(sys_open, U("/tmp/rootfile"), O_WRONLY | O_TRUNC);
	if (fd >= 0)
		OK(SC(sys_close, (uint64_t)fd));
	as_root();
	SLURP("/tmp/rootfile", buf);
	OK(t_unlink("/tmp/rootfile"));
	cr_assert_str_eq(buf, "root data", "a non-owner truncated the file");
	ERR(fd, EACCES);
}

TT(chmod_rules)
{
	struct vnode *vn;

	MKFILE("/tmp/f", 0644, NULL);
	vn = RES("/tmp/f");
	as_user(1000, 1000);
	ERR(tmpfs_chmod(&T, vn, 0777), EPERM);
	ERR(SC(sys_chmod, U("/tmp/f"), 0777), EPERM);
	cr_assert_eq(LSTAT("/tmp/f").st_mode & 07777, 0644);
	as_root();
	OK(tmpfs_chown(&T, vn, 1000, 1000));
	as_user(1000, 1000);
	OK(tmpfs_chmod(&T, vn, 0600));
	cr_assert_eq(LSTAT("/tmp/f").st_mode, S_IFREG | 0600,
		     "the type bits stay");
	cr_assert_eq(vn->mode, S_IFREG | 0600);
	OK(tmpfs_chmod(&T, vn, S_IFDIR | 0640));
	cr_assert_eq(vn->mode, S_IFREG | 0640, "chmod cannot change the type");
	{
		long fd = SC(sys_open, U("/tmp/f"), O_RDONLY);
		cr_assert_geq(fd, 0);
		OK(SC(sys_fchmod, (uint64_t)fd, 0604));
		OK(SC(sys_close, (uint64_t)fd));
	}
	cr_assert_eq(LSTAT("/tmp/f").st_mode & 07777, 0604);
	as_root();
	OK(tmpfs_chmod(&T, vn, 04755));
	cr_assert_eq(LSTAT("/tmp/f").st_mode & 07777, 04755);
	/* chmod of the rootfs: allowed (the overlay copies it up); of a
	 * mount root by non-root: EPERM */
	OK(SC(sys_chmod, U("/"), 0755));
	as_user(1000, 1000);
	ERR(SC(sys_chmod, U("/tmp"), 0777), EPERM);
	as_root();
	vnode_put(vn);
	OK(t_unlink("/tmp/f"));
}

/* Regression (chmod keeps setgid for a group the caller is not in): Linux
 * clears S_ISGID when a caller without CAP_FSETID sets it on a file whose
 * group is neither its fsgid nor a supplementary group. */
TT(chmod_by_a_non_member_drops_setgid)
{
	struct vnode *vn;
	mode_t mode;

	as_user(1000, 1000);
	MKFILE("/tmp/f", 0644, NULL);
	vn = RES("/tmp/f");
	as_root();
	OK(tmpfs_chown(&T, vn, (uid_t)-1, 50));
	as_user(1000, 1000);
	OK(tmpfs_chmod(&T, vn, 02755));
	mode = LSTAT("/tmp/f").st_mode;
	vnode_put(vn);
	OK(t_unlink("/tmp/f"));
	cr_assert_eq(mode & S_ISGID, 0, "mode %o", mode & 07777);
}

TT(chown_rules)
{
	struct vnode *vn, *d;
	struct stat st;

	P.umask = 0;
	MKFILE("/tmp/f", 06755, NULL);
	vn = RES("/tmp/f");
	cr_assert_eq(LSTAT("/tmp/f").st_mode & 07777, 06755);
	as_user(1000, 1000);
	ERR(tmpfs_chown(&T, vn, 1000, (gid_t)-1), EPERM);
	ERR(tmpfs_chown(&T, vn, (uid_t)-1, 1000), EPERM);
	ERR(SC(sys_chown, U("/tmp/f"), 1000, 1000), EPERM);
	st = LSTAT("/tmp/f");
	cr_assert_eq(st.st_uid, 0);
	cr_assert_eq(st.st_mode & 07777, 06755, "nothing changed");

	as_root();
	OK(tmpfs_chown(&T, vn, 1000, 1000));
	st = LSTAT("/tmp/f");
	cr_assert_eq(st.st_uid, 1000);
	cr_assert_eq(st.st_gid, 1000);
	cr_assert_eq(st.st_mode & 07777, 0755, "chown clears set-id bits: %o",
		     st.st_mode & 07777);
	OK(tmpfs_chown(&T, vn, (uid_t)-1, 7));
	cr_assert_eq(LSTAT("/tmp/f").st_uid, 1000, "-1 keeps the owner");
	cr_assert_eq(LSTAT("/tmp/f").st_gid, 7);
	/* the owner: no giving away, but its own group is fine */
	as_user(1000, 1000);
	ERR(tmpfs_chown(&T, vn, 1001, (gid_t)-1), EPERM);
	OK(tmpfs_chown(&T, vn, (uid_t)-1, 1000));
	OK(tmpfs_chown(&T, vn, 1000, (gid_t)-1));
	cr_assert_eq(LSTAT("/tmp/f").st_gid, 1000);
	/* fchown and lchown */
	{
		long fd = SC(sys_open, U("/tmp/f"), O_RDONLY);
		cr_assert_geq(fd, 0);
		ERR(SC(sys_fchown, (uint64_t)fd, 0, (uint64_t)-1), EPERM);
		OK(SC(sys_close, (uint64_t)fd));
	}
	as_root();
	OK(t_symlink("f", "/tmp/l"));
	OK(SC(sys_lchown, U("/tmp/l"), 5, 5));
	cr_assert_eq(LSTAT("/tmp/l").st_uid, 5);
	cr_assert_eq(LSTAT("/tmp/f").st_uid, 1000, "lchown: not the target");
	OK(SC(sys_chown, U("/tmp/l"), 6, (uint64_t)-1));
	cr_assert_eq(LSTAT("/tmp/f").st_uid, 6, "chown follows");
	/* a directory keeps its setgid bit */
	MKDIR("/tmp/d", 02775);
	d = RES("/tmp/d");
	OK(tmpfs_chown(&T, d, 1000, 1000));
	cr_assert_neq(LSTAT("/tmp/d").st_mode & S_ISGID, 0);
	vnode_put(d);
	vnode_put(vn);
	OK(t_rmdir("/tmp/d"));
	OK(t_unlink("/tmp/l"));
	OK(t_unlink("/tmp/f"));
}

/* Regression (chown by a non-owner to the current owner): tmpfs_chown lets
 * anyone "change" the owner to the one the file already has, which then
 * clears the set-id bits of another user's file. Linux (chown_ok): only
 * the owner may do that without CAP_CHOWN; EPERM. */
TT(chown_by_a_non_owner_to_the_same_uid_is_eperm)
{
	struct vnode *vn;
	mode_t mode;
	int rc;

	P.umask = 0;
	MKFILE("/tmp/suid", 04755, NULL);
	vn = RES("/tmp/suid");
	as_user(1001, 1001);
	rc = tmpfs_chown(&T, vn, 0, (gid_t)-1);
	as_root();
	mode = LSTAT("/tmp/suid").st_mode;
	vnode_put(vn);
	OK(t_unlink("/tmp/suid"));
	cr_assert_eq(mode & 07777, 04755, "a non-owner cleared setuid");
	ERR(rc, EPERM);
}

/* Regression (chgrp to any group): tmpfs_chown lets the owner give its
 * file to any group. Linux (chgrp_ok): only a group the caller is in
 * (fsgid or supplementary) without CAP_CHOWN; EPERM. */
TT(chown_by_the_owner_to_a_foreign_group_is_eperm)
{
	struct vnode *vn;
	gid_t gid;
	int rc;

	as_user(1000, 1000);
	P.cred.ngroups = 1;
	P.cred.groups[0] = 27;
	MKFILE("/tmp/f", 0644, NULL);
	vn = RES("/tmp/f");
	OK(tmpfs_chown(&T, vn, (uid_t)-1, 27)); /* a member: fine */
	rc = tmpfs_chown(&T, vn, (uid_t)-1, 4242);
	gid = LSTAT("/tmp/f").st_gid;
	vnode_put(vn);
	OK(t_unlink("/tmp/f"));
	cr_assert_eq(gid, 27, "the file went to group %u", (unsigned)gid);
	ERR(rc, EPERM);
}

TT(utimensat_now_and_omit)
{
	struct timespec ts[2], before, now;
	struct vnode *vn;
	struct stat st;

	P.umask = 0;
	MKFILE("/tmp/f", 0666, NULL);
	vn = RES("/tmp/f");
	ts[0] = (struct timespec){ 100, 5 };
	ts[1] = (struct timespec){ 200, 7 };
	OK(tmpfs_utimens(&T, vn, ts));
	st = LSTAT("/tmp/f");
	cr_assert_eq(st.st_atim.tv_sec, 100);
	cr_assert_eq(st.st_atim.tv_nsec, 5);
	cr_assert_eq(st.st_mtim.tv_sec, 200);
	cr_assert_eq(st.st_mtim.tv_nsec, 7);

	ts[0].tv_nsec = UTIME_OMIT;
	ts[1] = (struct timespec){ 300, 0 };
	OK(tmpfs_utimens(&T, vn, ts));
	st = LSTAT("/tmp/f");
	cr_assert_eq(st.st_atim.tv_sec, 100, "UTIME_OMIT keeps atime");
	cr_assert_eq(st.st_mtim.tv_sec, 300);

	clock_gettime(CLOCK_REALTIME, &before);
	ts[0] = (struct timespec){ 0, UTIME_NOW };
	ts[1] = (struct timespec){ 0, UTIME_OMIT };
	OK(tmpfs_utimens(&T, vn, ts));
	st = LSTAT("/tmp/f");
	cr_assert(ts_ge(st.st_atim, before), "UTIME_NOW sets atime to now");
	cr_assert_eq(st.st_mtim.tv_sec, 300, "UTIME_OMIT keeps mtime");
	cr_assert(ts_ge(st.st_ctim, before), "ctime is now");

	/* NULL: both now; through utimensat(2) */
	ts[0] = (struct timespec){ 1, 0 };
	ts[1] = (struct timespec){ 1, 0 };
	OK(SC(sys_utimensat, (uint64_t)AT_FDCWD, U("/tmp/f"), U(ts), 0));
	cr_assert_eq(LSTAT("/tmp/f").st_mtim.tv_sec, 1);
	clock_gettime(CLOCK_REALTIME, &before);
	OK(SC(sys_utimensat, (uint64_t)AT_FDCWD, U("/tmp/f"), 0, 0));
	st = LSTAT("/tmp/f");
	clock_gettime(CLOCK_REALTIME, &now);
	cr_assert(ts_ge(st.st_atim, before));
	cr_assert(ts_ge(st.st_mtim, before));
	cr_assert(ts_ge(now, st.st_mtim));

	/* a non-owner with write access: "now" only */
	as_user(1000, 1000);
	OK(tmpfs_utimens(&T, vn, NULL));
	ts[0] = (struct timespec){ 0, UTIME_NOW };
	ts[1] = (struct timespec){ 0, UTIME_NOW };
	OK(tmpfs_utimens(&T, vn, ts));
	ts[0] = (struct timespec){ 5, 0 };
	ERR(tmpfs_utimens(&T, vn, ts), EPERM);
	/* without write access: not even that */
	as_root();
	OK(tmpfs_chmod(&T, vn, 0644));
	as_user(1000, 1000);
	ERR(tmpfs_utimens(&T, vn, NULL), EACCES);
	ERR(SC(sys_utimensat, (uint64_t)AT_FDCWD, U("/tmp/f"), 0, 0), EACCES);
	as_root();
	/* bad nanoseconds */
	ts[0] = (struct timespec){ 5, 1000000000 };
	ts[1] = (struct timespec){ 0, UTIME_OMIT };
	ERR(tmpfs_utimens(&T, vn, ts), EINVAL);
	ts[0] = (struct timespec){ 5, -1 };
	ERR(tmpfs_utimens(&T, vn, ts), EINVAL);
	vnode_put(vn);
	OK(t_unlink("/tmp/f"));
}

/* Regression (utimensat half-applies a bad request): tmpfs_utimens checks
 * tv_nsec as it goes, so a valid atime is stored before an invalid mtime
 * fails with EINVAL. Linux validates both first and changes nothing. */
TT(utimensat_with_a_bad_mtime_changes_nothing)
{
	struct timespec ts[2] = { { 100, 0 }, { 200, 0 } };
	struct vnode *vn;
	struct stat st;
	int rc;

	MKFILE("/tmp/f", 0644, NULL);
	vn = RES("/tmp/f");
	OK(tmpfs_utimens(&T, vn, ts));
	ts[0] = (struct timespec){ 555, 0 };
	ts[1] = (struct timespec){ 1, 2000000000 };
	rc = tmpfs_utimens(&T, vn, ts);
	st = LSTAT("/tmp/f");
	vnode_put(vn);
	OK(t_unlink("/tmp/f"));
	ERR(rc, EINVAL);
	cr_assert_eq(st.st_atim.tv_sec, 100, "atime changed by a failed call");
}

/* Regression (UTIME_NOW with UTIME_OMIT needs ownership): Linux asks only
 * for write access when no timestamp is set to an explicit value (each is
 * UTIME_NOW or UTIME_OMIT); tmpfs_utimens asks for ownership unless both
 * are UTIME_NOW. touch -a / touch -m by a writer other than the owner
 * fail with EPERM. */
TT(utimensat_now_and_omit_needs_only_write_access)
{
	struct timespec ts[2] = { { 0, UTIME_NOW }, { 0, UTIME_OMIT } };
	struct vnode *vn;
	int rc;

	P.umask = 0;
	MKFILE("/tmp/f", 0666, NULL);
	vn = RES("/tmp/f");
	as_user(1000, 1000);
	rc = tmpfs_utimens(&T, vn, ts);
	as_root();
	vnode_put(vn);
	OK(t_unlink("/tmp/f"));
	OK(rc);
}

/* ---- sizes ---------------------------------------------------------------- */

TT(truncate_grows_and_shrinks)
{
	struct vnode *vn, *d, *l;
	char buf[128];
	long fd;
	int i;

	MKFILE("/tmp/f", 0644, "0123456789");
	vn = RES("/tmp/f");
	OK(tmpfs_truncate(vn, 100));
	cr_assert_eq(LSTAT("/tmp/f").st_size, 100);
	{
		struct file *f = OPEN("/tmp/f", O_RDONLY);
		cr_assert_eq(f_pread(f, buf, sizeof(buf), 0), 100);
		file_put(f);
	}
	cr_assert_eq(memcmp(buf, "0123456789", 10), 0);
	for (i = 10; i < 100; i++)
		cr_assert_eq(buf[i], 0, "byte %d of the grown part", i);
	OK(tmpfs_truncate(vn, 3));
	cr_assert_eq(LSTAT("/tmp/f").st_size, 3);
	cr_assert_str_eq(SLURP("/tmp/f", buf), "012");
	/* grow again: the cut part does not come back */
	OK(tmpfs_truncate(vn, 6));
	{
		struct file *f = OPEN("/tmp/f", O_RDONLY);
		cr_assert_eq(f_pread(f, buf, sizeof(buf), 0), 6);
		file_put(f);
	}
	cr_assert_eq(memcmp(buf, "012\0\0\0", 6), 0);
	ERR(tmpfs_truncate(vn, -1), EINVAL);
	/* truncate(2) and ftruncate(2) */
	OK(SC(sys_truncate, U("/tmp/f"), 4096));
	cr_assert_eq(LSTAT("/tmp/f").st_size, 4096);
	fd = SC(sys_open, U("/tmp/f"), O_RDWR);
	cr_assert_geq(fd, 0);
	OK(SC(sys_ftruncate, (uint64_t)fd, 1));
	cr_assert_eq(LSTAT("/tmp/f").st_size, 1);
	OK(SC(sys_close, (uint64_t)fd));
	fd = SC(sys_open, U("/tmp/f"), O_RDONLY);
	ERR(SC(sys_ftruncate, (uint64_t)fd, 0), EINVAL);
	OK(SC(sys_close, (uint64_t)fd));
	as_user(1000, 1000);
	ERR(SC(sys_truncate, U("/tmp/f"), 0), EACCES);
	as_root();
	cr_assert_eq(LSTAT("/tmp/f").st_size, 1);
	/* not regular files */
	MKDIR("/tmp/d", 0755);
	OK(t_symlink("f", "/tmp/l"));
	d = RES("/tmp/d");
	l = LRES("/tmp/l");
	ERR(tmpfs_truncate(d, 0), EISDIR);
	ERR(tmpfs_truncate(l, 0), EINVAL);
	ERR(SC(sys_truncate, U("/tmp/d"), 0), EISDIR);
	vnode_put(d);
	vnode_put(l);
	vnode_put(vn);
	OK(t_unlink("/tmp/l"));
	OK(t_rmdir("/tmp/d"));
	OK(t_unlink("/tmp/f"));
}

TT(the_size_limit_gives_enospc)
{
	struct vnode *big, *small;
	struct file *s, *b;
	char buf[16];
	static char chunk[1 << 16];
	long fd, w;
	int64_t off;

	S->opts.disk = 1 << 20; /* 256 pages, for both /tmp and /dev/shm */
	MKFILE("/tmp/big", 0644, NULL);
	MKFILE("/dev/shm/small", 0644, NULL);
	big = RES("/tmp/big");
	small = RES("/dev/shm/small");
	/* A size is not an allocation: a sparse file far past the limit is
	 * fine, as on Linux (it was ENOSPC when sizes were counted). */
	OK(tmpfs_truncate(big, (int64_t)64 << 30));
	cr_assert_eq(LSTAT("/tmp/big").st_blocks, 0);
	cr_assert_eq(statfs_of("/tmp").f_bfree, 256);
	fd = SC(sys_open, U("/tmp/big"), O_RDWR);
	cr_assert_geq(fd, 0);
	OK(SC(sys_ftruncate, (uint64_t)fd, (uint64_t)1 << 40));
	OK(SC(sys_ftruncate, (uint64_t)fd, 0));
	OK(SC(sys_close, (uint64_t)fd));

	/* Written data is: fill all but one page, through the store. */
	b = OPEN("/tmp/big", O_WRONLY);
	memset(chunk, 'x', sizeof(chunk));
	for (off = 0; off < (1 << 20) - 4096; off += w) {
		size_t n = sizeof(chunk);
		if ((uint64_t)off + n > (1 << 20) - 4096)
			n = (size_t)((1 << 20) - 4096 - off);
		w = b->ops->write(&T, b, chunk, n, &off);
		cr_assert_gt(w, 0, "at %lld: %s", (long long)off,
			     err_name((int)w));
		off -= w; /* the op moved it */
	}
	cr_assert_eq(statfs_of("/tmp").f_bfree, 1);
	cr_assert_eq(statfs_of("/dev/shm").f_bfree, 1, "one limit for both");
	/* the last page goes to whoever takes it: then nothing fits */
	s = OPEN("/dev/shm/small", O_WRONLY);
	cr_assert_eq(f_write(s, "0123456789"), 10);
	cr_assert_eq(statfs_of("/tmp").f_bfree, 0);
	off = 1 << 20;
	ERR(b->ops->write(&T, b, "tail", 4, &off), ENOSPC);
	/* a page already held takes more bytes without more space */
	cr_assert_eq(f_write(s, "abc"), 3);
	cr_assert_eq(LSTAT("/dev/shm/small").st_size, 13);
	/* rewriting what exists needs no space */
	off = 0;
	cr_assert_eq(b->ops->write(&T, b, "head", 4, &off), 4);
	cr_assert_eq(f_pread(b, buf, 4, 0), 4);
	cr_assert_eq(memcmp(buf, "head", 4), 0);
	/* shrinking gives the space back */
	OK(tmpfs_truncate(big, 0));
	cr_assert_eq(statfs_of("/tmp").f_bfree, 255);
	/* so does freeing a file (that was unlinked while held) */
	off = 0;
	cr_assert_eq(b->ops->write(&T, b, chunk, 8192, &off), 8192);
	cr_assert_eq(statfs_of("/tmp").f_bfree, 253);
	file_put(b);
	OK(t_unlink("/tmp/big"));
	cr_assert_eq(statfs_of("/tmp").f_bfree, 253, "still held");
	vnode_put(big);
	cr_assert_eq(statfs_of("/tmp").f_bfree, 255,
		     "freed with its last reference");
	file_put(s);
	vnode_put(small);
	OK(t_unlink("/dev/shm/small"));
	cr_assert_eq(statfs_of("/tmp").f_bfree, statfs_of("/tmp").f_blocks);
}

TT(the_disk_option_sets_the_limit)
{
	struct vnode *vn;
	struct file *f;

	S->opts.disk = 1 << 20; /* --disk 1M */
	cr_assert_eq(statfs_of("/tmp").f_blocks, 256);
	MKFILE("/tmp/f", 0644, NULL);
	vn = RES("/tmp/f");
	/* inline files hold their size in pages */
	OK(tmpfs_truncate(vn, 60000));
	cr_assert_eq(statfs_of("/dev/shm").f_bfree, 256 - 15);
	f = OPEN("/tmp/f", O_WRONLY | O_APPEND);
	cr_assert_eq(f_write(f, "abcd"), 4);
	file_put(f);
	OK(tmpfs_truncate(vn, 0));
	cr_assert_eq(statfs_of("/tmp").f_bfree, 256);
	/* fallocate takes blocks (ENOSPC past the limit), keeps nothing */
	ERR(tmpfs_fallocate(vn, 0, 0, (1 << 20) + 4096), ENOSPC);
	cr_assert_eq(LSTAT("/tmp/f").st_size, 0);
	OK(tmpfs_fallocate(vn, 0, 0, 1 << 19));
	cr_assert_eq(LSTAT("/tmp/f").st_size, 1 << 19);
	cr_assert_eq(statfs_of("/tmp").f_bfree, 128);
	OK(tmpfs_fallocate(vn, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0,
			   1 << 18));
	cr_assert_eq(statfs_of("/tmp").f_bfree, 192);
	vnode_put(vn);
	OK(t_unlink("/tmp/f"));
	cr_assert_eq(statfs_of("/tmp").f_bfree, 256);
}

/* ---- names ---------------------------------------------------------------- */

TT(names_longer_than_name_max_are_enametoolong)
{
	char longname[NAME_MAX + 2], maxname[NAME_MAX + 1];
	char path[PATH_MAX], name[NAME_MAX + 1];
	struct vnode *tmp = RES("/tmp"), *out = NULL;
	bool tr;

	memset(longname, 'x', NAME_MAX + 1);
	longname[NAME_MAX + 1] = 0;
	memset(maxname, 'y', NAME_MAX);
	maxname[NAME_MAX] = 0;

	snprintf(path, sizeof(path), "/tmp/%s", longname);
	ERR(vfs_resolve_parent(&T, AT_FDCWD, path, &out, name, &tr),
	    ENAMETOOLONG);
	ERR(res_rc(path, 0), ENAMETOOLONG);
	ERR(t_create(path, 0644), ENAMETOOLONG);
	ERR(SC(sys_open, U(path), O_CREAT | O_WRONLY, 0644), ENAMETOOLONG);
	ERR(SC(sys_mkdir, U(path), 0755), ENAMETOOLONG);
	ERR(SC(sys_symlink, U("x"), U(path)), ENAMETOOLONG);
	ERR(tmpfs_create(&T, tmp, longname, 0644, &out), ENAMETOOLONG);
	ERR(tmpfs_mkdir(&T, tmp, longname, 0755), ENAMETOOLONG);
	ERR(tmpfs_symlink(&T, tmp, longname, "x"), ENAMETOOLONG);
	MKFILE("/tmp/short", 0644, NULL);
	ERR(tmpfs_rename(&T, tmp, "short", tmp, longname, 0), ENAMETOOLONG);
	ERR(SC(sys_rename, U("/tmp/short"), U(path)), ENAMETOOLONG);
	snprintf(path, sizeof(path), "/tmp/%s/f", longname);
	ERR(res_rc(path, 0), ENAMETOOLONG);
	cr_assert_null(out);

	/* NAME_MAX itself is fine */
	snprintf(path, sizeof(path), "/tmp/%s", maxname);
	MKFILE(path, 0644, "y");
	expect_path(path, path);
	OK(t_rename("/tmp/short", path, 0));
	OK(t_unlink(path));
	vnode_put(tmp);
}

/* ---- the overlay's upper layer ------------------------------------------- */

/* A file or directory in the gofer's tree: the rootfs, the overlay's
 * lower layer (made before the sandbox looks, or its dcache says no). */
static void lower_mkdir(const char *rel)
{
	char p[PATH_MAX];

	snprintf(p, sizeof(p), "%s/%s", tree, rel);
	cr_assert_eq(mkdir(p, 0755), 0, "mkdir %s: %m", p);
}

static void lower_file(const char *rel, const char *data)
{
	char p[PATH_MAX];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", tree, rel);
	f = fopen(p, "w");
	cr_assert(f, "%s: %m", p);
	fputs(data, f);
	fclose(f);
}

/* Is name an entry (or a whiteout) of the upper layer's directory at
 * path? (Upper directories are found by path, as overlay.c does.) */
static bool in_upper(const char *dir, const char *name)
{
	struct vnode *d = ovl_root(), *up = NULL;
	char buf[PATH_MAX], *save = NULL, *c;
	int rc = 1;

	d = vnode_get(d);
	snprintf(buf, sizeof(buf), "%s", dir);
	for (c = strtok_r(buf, "/", &save); c && rc == 1;
	     c = strtok_r(NULL, "/", &save)) {
		rc = tmpfs_lookup_ov(d, c, &up);
		vnode_put(d);
		d = rc == 1 ? up : NULL;
	}
	if (rc != 1)
		return false;
	rc = tmpfs_lookup_ov(d, name, &up);
	vnode_put(d);
	if (rc == 1)
		vnode_put(up);
	return rc != 0;
}

/* Regression (a directory made under the host's /root, which the gofer
 * cannot read, gave EACCES for every name in it): one the guest makes in
 * the overlay is its own, and hides the rootfs below it; one setup makes
 * (a mount point, t NULL) stays merged, as a clone mount is grafted there. */
TT(guest_mkdir_in_the_overlay_hides_the_rootfs)
{
	struct vnode *vn, *root = RES("/");

	MKDIR("/new", 0755);
	vn = RES("/new");
	cr_assert(tmpfs_is_overlay(vn) && tmpfs_is_opaque(vn));
	vnode_put(vn);
	OK(SC(sys_mkdir, U("/new/sub"), 0755));
	vn = RES("/new/sub");
	cr_assert(tmpfs_is_opaque(vn), "mkdir(2) makes it opaque too");
	vnode_put(vn);
	ERR(res_rc("/new/sub/missing", 0), ENOENT);
	OK(tmpfs_mkdir(NULL, root, "setup", 0755));
	vn = RES("/setup");
	cr_assert(!tmpfs_is_opaque(vn), "a setup directory stays merged");
	vnode_put(vn);
	MKDIR("/tmp/plain", 0755);
	vn = RES("/tmp/plain");
	cr_assert(!tmpfs_is_overlay(vn) && !tmpfs_is_opaque(vn));
	vnode_put(vn);
	OK(t_rmdir("/tmp/plain"));
	vnode_put(root);
}

/* The guest's home when the gofer cannot read the host's: an upper
 * directory with the rootfs one's attributes, hiding its entries. */
TT(private_dir_hides_the_rootfs_one)
{
	char p[PATH_MAX];
	struct ent e[8];

	lower_mkdir("home");
	lower_file("home/dot", "host");
	snprintf(p, sizeof(p), "%s/home", tree);
	cr_assert_eq(chmod(p, 0700), 0);
	cr_assert(ovl_lower_listable("/home"), "the test's gofer is root");
	cr_assert(!ovl_lower_listable("/nosuch"));
	cr_assert(!ovl_lower_listable("/home/dot"), "not a directory");
	OK(res_rc("/home/dot", 0));
	OK(ovl_private_dir("/home"));
	cr_assert_eq(list_dir("/home", e, 8), 2, "only . and ..");
	ERR(res_rc("/home/dot", 0), ENOENT);
	cr_assert_eq(LSTAT("/home").st_mode, S_IFDIR | 0700, "its mode kept");
	MKFILE("/home/f", 0644, "mine");
	cr_assert_eq(count_entries("/home"), 3);
	OK(t_unlink("/home/f")); /* its memfd goes */
	/* made in the upper layer first (boot.c's missing home), or not */
	ERR(ovl_private_dir("/made"), ENOENT);
	MKDIR("/made", 0755);
	OK(ovl_private_dir("/made"));
}

/* Regression (a failing rename copied its source, and both directories,
 * up first): every check comes before the copy-up. */
TT(failed_rename_copies_nothing_up)
{
	static const struct {
		const char *from, *to;
		unsigned flags;
		int err;
	} cases[] = {
		{ "/l/f", "/l/g", RENAME_NOREPLACE, EEXIST },
		{ "/l/f", "/l/e", 0, EISDIR },
		{ "/l/d", "/l/f", 0, ENOTDIR },
		{ "/l/d", "/l/d/new", 0, EINVAL },
		{ "/l/d/x", "/l/d", 0, ENOTEMPTY },
		{ "/l/f", "/l/nosuch/", 0, ENOTDIR },
		{ "/l/f/", "/l/h", 0, ENOTDIR },
		{ "/l/f", "/l/nosuch", RENAME_EXCHANGE, ENOENT },
		{ "/l/f", "/tmp/f", 0, EXDEV },
		{ "/l/d", "/l/h", 0, EXDEV }, /* a rootfs directory */
		{ "/l/nosuch", "/l/h", 0, ENOENT },
	};
	size_t i;

	lower_mkdir("l");
	lower_mkdir("l/d");
	lower_mkdir("l/e");
	lower_file("l/f", "f");
	lower_file("l/g", "g");
	lower_file("l/d/x", "x");
	lower_file("l/e/y", "y");
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		long rc = SC(sys_renameat2, (uint64_t)AT_FDCWD,
			     U(cases[i].from), (uint64_t)AT_FDCWD,
			     U(cases[i].to), cases[i].flags);
		cr_assert_eq(rc, -cases[i].err, "rename %s %s: %s, want %s",
			     cases[i].from, cases[i].to, err_name((int)rc),
			     strerror(cases[i].err));
		cr_assert(!in_upper("/", "l"), "rename %s %s copied /l up",
			  cases[i].from, cases[i].to);
	}
	as_user(1000, 1000);
	ERR(SC(sys_rename, U("/l/f"), U("/l/h")), EACCES);
	as_root();
	cr_assert(!in_upper("/", "l"));
	/* what succeeds does copy up (a file's copy would keep a host fd
	 * on the idle list: a directory shows it) */
	OK(SC(sys_mkdir, U("/l/new"), 0755));
	cr_assert(in_upper("/", "l") && in_upper("/l", "new"));
	cr_assert(!in_upper("/l", "f"));
}

/* ---- where the data lives (inline, or the store) ------------------------ */

/* Fill the holes of the fd table (dups of 0, kept in held[], at most
 * cap): afterwards the next fd is above every one open. Returns how many
 * it took. */
static int fill_fd_holes(int *held, int cap)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int top = 0, n = 0;

	cr_assert(d);
	while ((e = readdir(d)))
		if (atoi(e->d_name) > top)
			top = atoi(e->d_name);
	closedir(d);
	while (n < cap) {
		held[n] = dup(0);
		cr_assert_geq(held[n], 0);
		if (held[n++] >= top)
			break;
	}
	return n;
}

/* Write n bytes of c at off through a file opened O_RDWR. */
static void fill(struct file *f, int64_t off, size_t n, char c)
{
	static char buf[1 << 16];
	long w;

	memset(buf, c, sizeof(buf));
	while (n) {
		size_t k = n < sizeof(buf) ? n : sizeof(buf);
		w = f->ops->write(&T, f, buf, k, &off);
		cr_assert_eq(w, (long)k, "write: %s", err_name((int)w));
		n -= k;
	}
}

/* Regression (host-fd exhaustion from /tmp): every tmpfs file held a memfd
 * of the sentry's for its life, so 20 000 files filled the sentry's fd
 * table, after which gofer opens failed with EPROTO and the control
 * socket stopped answering. Small files hold no host fd at all now. */
TT(many_small_files_hold_no_host_fd)
{
	char path[64];
	int fds = count_fds(), i;

	for (i = 0; i < 3000; i++) {
		snprintf(path, sizeof(path), "/tmp/f%d", i);
		MKFILE(path, 0644, "x");
	}
	cr_assert_eq(count_fds(), fds, "3000 files, no host fd");
	cr_assert_eq(store_files(), 0, "nothing in the store");
	cr_assert_eq(LSTAT("/tmp/f2999").st_blocks, 8);
	for (i = 0; i < 3000; i++) {
		snprintf(path, sizeof(path), "/tmp/f%d", i);
		OK(t_unlink(path));
	}
}

TT(a_large_file_moves_to_the_store_and_back_out)
{
	struct file *f;
	char buf[8];
	int fds = count_fds();

	MKFILE("/tmp/big", 0644, "head");
	f = OPEN("/tmp/big", O_RDWR);
	fill(f, 4, TMPFS_INLINE_MAX, 'b'); /* past the inline limit */
	cr_assert_eq(store_files(), 1, "one file in the store");
	cr_assert_eq(LSTAT("/tmp/big").st_size, TMPFS_INLINE_MAX + 4);
	cr_assert_eq(f_pread(f, buf, 5, 0), 5);
	cr_assert_eq(memcmp(buf, "headb", 5), 0, "the inline bytes moved");
	cr_assert_leq(count_fds(), fds + 1, "at most its fd, on the LRU");
	file_put(f);
	OK(t_unlink("/tmp/big"));
	cr_assert_eq(store_files(), 0, "removed with the file");
	cr_assert_eq(count_fds(), fds);
}

TT(stored_files_share_a_bounded_number_of_host_fds)
{
	char path[64], buf[4];
	struct file *f;
	int fds = count_fds(), i;

	for (i = 0; i < 2 * TMPFS_IDLE_FDS + 10; i++) {
		snprintf(path, sizeof(path), "/tmp/s%d", i);
		MKFILE(path, 0644, NULL);
		f = OPEN(path, O_RDWR);
		fill(f, 0, TMPFS_INLINE_MAX + 1, (char)('a' + i % 26));
		file_put(f);
	}
	cr_assert_leq(count_fds(), fds + TMPFS_IDLE_FDS, "the LRU's bound");
	/* every one reads back, reopened from the store as needed */
	for (i = 0; i < 2 * TMPFS_IDLE_FDS + 10; i++) {
		snprintf(path, sizeof(path), "/tmp/s%d", i);
		f = OPEN(path, O_RDONLY);
		cr_assert_eq(f_pread(f, buf, 1, TMPFS_INLINE_MAX), 1);
		cr_assert_eq(buf[0], 'a' + i % 26, "file %d", i);
		file_put(f);
	}
	cr_assert_leq(count_fds(), fds + TMPFS_IDLE_FDS);
	for (i = 0; i < 2 * TMPFS_IDLE_FDS + 10; i++) {
		snprintf(path, sizeof(path), "/tmp/s%d", i);
		OK(t_unlink(path));
	}
	cr_assert_eq(count_fds(), fds);
}

/* Sparse files cost what was written, not their size. */
TT(a_sparse_file_counts_its_blocks)
{
	struct file *f;
	struct statfs before = statfs_of("/tmp");
	int64_t off;

	MKFILE("/tmp/sparse", 0644, NULL);
	f = OPEN("/tmp/sparse", O_RDWR);
	off = (int64_t)3 << 30; /* 3 GiB in: past any default --disk */
	cr_assert_eq(f->ops->write(&T, f, "end", 3, &off), 3);
	cr_assert_eq(LSTAT("/tmp/sparse").st_size, ((int64_t)3 << 30) + 3);
	cr_assert_leq(LSTAT("/tmp/sparse").st_blocks, 8 * 2);
	cr_assert_geq(statfs_of("/tmp").f_bfree, before.f_bfree - 2);
	/* SEEK_DATA finds the one written page */
	cr_assert_eq(tmpfs_seek_data(f->vn, 0, SEEK_DATA),
		     ((int64_t)3 << 30) & ~4095LL);
	cr_assert_eq(tmpfs_seek_data(f->vn, 0, SEEK_HOLE), 0);
	file_put(f);
	OK(t_unlink("/tmp/sparse"));
}

/* A shared writable mapping could fill holes the sentry never sees: they
 * are allocated, within --disk, when it is made and when the file grows. */
TT(a_shared_mapping_preallocates_what_it_can_write)
{
	struct vnode *vn;
	int fd;

	S->opts.disk = 1 << 20;
	MKFILE("/tmp/m", 0644, NULL);
	vn = RES("/tmp/m");
	OK(tmpfs_truncate(vn, 512 << 10)); /* sparse */
	cr_assert_eq(LSTAT("/tmp/m").st_blocks, 0);
	fd = tmpfs_map_fd(vn, true);
	cr_assert_geq(fd, 0, "%s", err_name(fd));
	tmpfs_map_done(vn);
	cr_assert_eq(LSTAT("/tmp/m").st_blocks, (512 << 10) / 512,
		     "the mapped range is allocated and charged");
	cr_assert_eq(statfs_of("/tmp").f_bfree, 128);
	/* growth of a mapped file is allocated as well: past --disk, ENOSPC */
	ERR(tmpfs_truncate(vn, (int64_t)2 << 20), ENOSPC);
	cr_assert_eq(LSTAT("/tmp/m").st_size, 512 << 10, "unchanged");
	OK(tmpfs_truncate(vn, 768 << 10));
	cr_assert_eq(statfs_of("/tmp").f_bfree, 64);
	/* a mapping that cannot be covered is refused */
	{
		struct vnode *other;
		MKFILE("/tmp/n", 0644, NULL);
		other = RES("/tmp/n");
		OK(tmpfs_truncate(other, 1 << 20));
		ERR(tmpfs_map_fd(other, true), ENOMEM);
		/* a read-only or private one needs nothing */
		fd = tmpfs_map_fd(other, false);
		cr_assert_geq(fd, 0);
		tmpfs_map_done(other);
		vnode_put(other);
		OK(t_unlink("/tmp/n"));
	}
	vnode_put(vn);
	OK(t_unlink("/tmp/m"));
	cr_assert_eq(statfs_of("/tmp").f_bfree, 256);
}

/* Past the line of fds guests may make the sentry hold (fd_admit), a
 * stored file that must be opened again is ENFILE; inline files and
 * everything else go on. The LRU's own idle fds are given up first. */
TT(past_the_fd_line_stored_files_are_enfile)
{
	char path[64], buf[24];
	struct file *f;
	int i, n = TMPFS_IDLE_FDS + 2, held[256], nheld;

	for (i = 0; i < n; i++) { /* the first one's fd leaves the LRU */
		snprintf(path, sizeof(path), "/tmp/s%d", i);
		MKFILE(path, 0644, NULL);
		f = OPEN(path, O_RDWR);
		fill(f, 0, TMPFS_INLINE_MAX + 1, 'z');
		file_put(f);
	}
	f = OPEN("/tmp/s0", O_RDONLY);
	/* the next fd would be refused, but closing the LRU's makes room */
	nheld = fill_fd_holes(held, (int)ARRAY_SIZE(held));
	fd_admit_set(held[nheld - 1]);
	cr_assert_eq(f_pread(f, buf, 1, 0), 1, "idle fds went first");
	cr_assert_eq(buf[0], 'z');
	fd_admit_set(0);
	OK(t_rename("/tmp/s1", "/tmp/s1b", 0));
	file_put(f);
	f = OPEN("/tmp/s1b", O_RDONLY);
	cr_assert_eq(f_pread(f, buf, 1, 0), 1); /* its fd is open again */
	file_put(f);
	/* s0's fd is idle now: to the LRU's end. s2's was closed with the
	 * rest: it must be opened, and no fd is to be had. */
	f = OPEN("/tmp/s2", O_RDONLY);
	fd_admit_set(3);
	ERR(f_pread(f, buf, 1, 0), ENFILE);
	fd_admit_set(3);
	MKFILE("/tmp/small", 0644, "inline still works");
	cr_assert_str_eq(SLURP("/tmp/small", buf), "inline still works");
	fd_admit_set(0);
	while (nheld)
		close(held[--nheld]);
	file_put(f);
	OK(t_unlink("/tmp/small"));
	OK(t_rename("/tmp/s1b", "/tmp/s1", 0));
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "/tmp/s%d", i);
		OK(t_unlink(path));
	}
}

/* Regression (a hostile review): xattrs, long symlink targets and hard
 * links are the sentry's memory but were charged to nothing: 2000 files
 * with 64 KiB of xattrs each took 140 MB of the sentry's heap under
 * --disk 1M. xattrs and long targets hold --disk in pages (a target past
 * 128 bytes a page, as on Linux); a hard link takes a node, as on Linux. */
TT(metadata_is_charged)
{
	static char big[60000];
	struct vnode *vn;
	char target[300];
	long before;
	int i, made = 0;

	S->opts.disk = 1 << 20; /* 256 pages */
	memset(big, 'v', sizeof(big));
	for (i = 0; i < 40; i++) {
		char path[32];
		snprintf(path, sizeof(path), "/tmp/x%d", i);
		MKFILE(path, 0644, NULL);
		vn = RES(path);
		if (tmpfs_setxattr(vn, "user.big", big, sizeof(big), 0) == 0)
			made++;
		else
			cr_assert_eq(tmpfs_setxattr(vn, "user.big", big,
						    sizeof(big), 0),
				     -ENOSPC);
		vnode_put(vn);
	}
	cr_assert_eq(made, 17, "15 pages each: 17 fit in 256 (%d did)", made);
	cr_assert_lt(statfs_of("/tmp").f_bfree, 256 - 17 * 15 + 1);
	for (i = 0; i < 40; i++) {
		char path[32];
		snprintf(path, sizeof(path), "/tmp/x%d", i);
		OK(t_unlink(path));
	}
	cr_assert_eq(statfs_of("/tmp").f_bfree, 256, "given back");

	memset(target, 't', sizeof(target) - 1);
	target[sizeof(target) - 1] = 0;
	OK(SC(sys_symlink, U(target), U("/tmp/long")));
	OK(SC(sys_symlink, U("short"), U("/tmp/short")));
	cr_assert_eq(LSTAT("/tmp/long").st_blocks, 8);
	cr_assert_eq(LSTAT("/tmp/short").st_blocks, 0);
	cr_assert_eq(statfs_of("/tmp").f_bfree, 255);
	OK(t_unlink("/tmp/long"));
	OK(t_unlink("/tmp/short"));

	MKFILE("/tmp/a", 0644, "a");
	before = live_nodes();
	OK(t_link("/tmp/a", "/tmp/b"));
	OK(t_link("/tmp/a", "/tmp/c"));
	cr_assert_eq(live_nodes(), before + 2, "a link takes a node");
	OK(t_rename("/tmp/a", "/tmp/c", 0)); /* one file: nothing happens */
	cr_assert_eq(live_nodes(), before + 2);
	MKFILE("/tmp/d", 0644, "d");
	OK(t_rename("/tmp/d", "/tmp/c", 0)); /* over one of the links */
	cr_assert_eq(live_nodes(), before + 2, "d's node, one link less");
	OK(t_unlink("/tmp/b"));
	cr_assert_eq(live_nodes(), before + 1);
	OK(t_unlink("/tmp/c"));
	OK(t_unlink("/tmp/a"));
	cr_assert_eq(live_nodes(), before - 1);
}
