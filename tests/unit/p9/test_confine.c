/* tests/unit/p9/test_confine.c: the real `moat gofer` path (gofer_main:
 * namespaces, pivot_root, fds, caps, seccomp) in a forked child, driven
 * through the sentry client. Needs root; skipped otherwise. */
#include <criterion/criterion.h>

#include <fcntl.h>
#include <linux/openat2.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "gofer/gofer.h"
#include "prot/p9.h"
#include "sentry/p9client.h"
#include "tests/unit/p9/p9_test.h"

static char ktree[64];
static int kfds;
static pid_t kpid = -1;
static struct p9_client *kc;
static uint32_t kroot;

static void ksetup(void)
{
	kfds = p9t_count_fds();
	if (geteuid() != 0)
		cr_skip_test("needs root");
	/* This test worker gets its own mount namespace, so the tmpfs below
	 * never shows up on the host. */
	if (unshare(CLONE_NEWNS) < 0)
		cr_skip_test("cannot unshare a mount namespace");
	cr_assert_eq(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL), 0);
	cr_assert_eq(p9t_make_tree(ktree, sizeof(ktree)), 0);
}

/* Returns the gofer's wait status, or -1 if none was running. */
static int kstop(void)
{
	int status = -1;

	if (kc) {
		p9c_close(kc);
		kc = NULL;
	}
	if (kpid > 0) {
		while (waitpid(kpid, &status, 0) < 0 && errno == EINTR)
			;
		kpid = -1;
	}
	return status;
}

static void kteardown(void)
{
	char mnt[128];

	kstop();
	if (ktree[0]) {
		snprintf(mnt, sizeof(mnt), "%s/mnt", ktree);
		umount2(mnt, MNT_DETACH);
	}
	p9t_rm_tree(ktree);
}

static void kend(void)
{
	kteardown();
	cr_assert_eq(p9t_count_fds(), kfds, "fd leak: %d -> %d", kfds,
		     p9t_count_fds());
}

TestSuite(p9_confine, .init = ksetup, .fini = kteardown);
#define T(name) P9T_TEST(p9_confine, name, kend)

/* Start `moat gofer --root root --fd N [--rw]` and connect the client. */
static void start_gofer_mode(const char *root, bool rw)
{
	struct moat_error err = { 0 };
	int sv[2];

	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	kpid = fork();
	cr_assert_geq(kpid, 0);
	if (kpid == 0) {
		char fdstr[16];
		char *argv[] = {
			"moat", "gofer", "--root",	     (char *)root,
			"--fd", fdstr,	 rw ? "--rw" : NULL, NULL
		};

		close(sv[0]);
		snprintf(fdstr, sizeof(fdstr), "%d", sv[1]);
		_exit(gofer_main(rw ? 7 : 6, argv));
	}
	close(sv[1]);
	cr_assert_eq(p9c_open(&kc, sv[0], &kroot, NULL, &err), 0, "%s",
		     err.msg);
}

static void start_gofer(const char *root)
{
	start_gofer_mode(root, false);
}

static void read_status(pid_t pid, const char *key, char *val, size_t cap)
{
	char path[64], line[256];
	FILE *f;

	val[0] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "re");
	cr_assert_not_null(f);
	while (fgets(line, sizeof(line), f)) {
		size_t n = strlen(key);

		if (strncmp(line, key, n) == 0 && line[n] == ':') {
			char *v = line + n + 1;

			v += strspn(v, " \t");
			v[strcspn(v, "\n")] = '\0';
			snprintf(val, cap, "%s", v);
		}
	}
	fclose(f);
}

static void assert_clean_exit(void)
{
	int status = kstop();

	cr_assert(WIFEXITED(status), "gofer died: %s",
		  WIFSIGNALED(status) ? strsignal(WTERMSIG(status)) : "?");
	cr_assert_eq(WEXITSTATUS(status), 0);
}

T(serves_read_only_with_no_privileges)
{
	char buf[64] = { 0 }, val[64], path[128], a[64], b[64];
	struct statvfs sv;
	struct p9_qid q;
	uint32_t f;
	int fd = -1;

	start_gofer(ktree);
	cr_assert_eq(p9c_walk1(kc, kroot, "file.txt", &f, &q), 0);
	cr_assert_eq(p9c_lopen(kc, f, O_RDONLY, &fd), 0);
	cr_assert_eq(read(fd, buf, sizeof(buf)),
		     (ssize_t)strlen(P9T_FILE_DATA));
	cr_assert_str_eq(buf, P9T_FILE_DATA);
	/* the donated fd lives on the gofer's read-only, nodev, nosuid bind */
	cr_assert_eq(fstatvfs(fd, &sv), 0);
	cr_assert(sv.f_flag & ST_RDONLY);
	cr_assert(sv.f_flag & ST_NODEV);
	cr_assert(sv.f_flag & ST_NOSUID);
	close(fd);
	cr_assert_eq(p9c_lopen(kc, f, O_RDWR, &fd), -EROFS);
	cr_assert_eq(p9c_clunk(kc, f), 0);

	read_status(kpid, "NoNewPrivs", val, sizeof(val));
	cr_assert_str_eq(val, "1");
	read_status(kpid, "Seccomp", val, sizeof(val));
	cr_assert_str_eq(val, "2");
	read_status(kpid, "CapEff", val, sizeof(val));
	cr_assert_str_eq(val, "0000000000000000");
	read_status(kpid, "CapPrm", val, sizeof(val));
	cr_assert_str_eq(val, "0000000000000000");
	read_status(kpid, "CapBnd", val, sizeof(val));
	cr_assert_str_eq(val, "0000000000000000");

	snprintf(path, sizeof(path), "/proc/%d/ns/mnt", kpid);
	cr_assert_gt(readlink(path, a, sizeof(a) - 1), 0);
	cr_assert_gt(readlink("/proc/self/ns/mnt", b, sizeof(b) - 1), 0);
	cr_assert_str_neq(a, b);
	assert_clean_exit();
}

T(holds_only_its_socket_and_tree)
{
	char path[64], target[256];
	struct dirent *e;
	DIR *d;
	int n = 0;

	start_gofer(ktree);
	snprintf(path, sizeof(path), "/proc/%d/fd", kpid);
	d = opendir(path);
	cr_assert_not_null(d);
	while ((e = readdir(d))) {
		char link[128];
		ssize_t len;

		if (e->d_name[0] == '.')
			continue;
		cr_assert(P9T_PATH(link, "%s/%s", path, e->d_name));
		len = readlink(link, target, sizeof(target) - 1);
		cr_assert_gt(len, 0);
		target[len] = '\0';
		/* the socket, or an O_PATH handle inside the served tree (shown
		 * relative to the gofer's root, so never the host path) */
		cr_assert(strncmp(target, "socket:", 7) == 0 ||
				  (target[0] == '/' &&
				   strncmp(target, ktree, strlen(ktree)) != 0),
			  "unexpected gofer fd %s -> %s", e->d_name, target);
		n++;
	}
	closedir(d);
	cr_assert_leq(n, 4, "gofer holds %d fds", n);
	assert_clean_exit();
}

T(host_submounts_are_not_served)
{
	char mnt[128];
	struct p9_qid q;
	uint8_t buf[512];
	uint32_t m, s;

	snprintf(mnt, sizeof(mnt), "%s/mnt", ktree);
	cr_assert_eq(mount("tmpfs", mnt, "tmpfs", 0, "size=64k"), 0);
	cr_assert_eq(p9t_write_file(mnt, "secret", "s3cret"), 0);

	start_gofer(ktree);
	cr_assert_eq(p9c_walk1(kc, kroot, "mnt", &m, &q), 0);
	cr_assert_eq(q.type, P9_QTDIR);
	cr_assert_eq(p9c_walk1(kc, m, "secret", &s, &q), -ENOENT);
	cr_assert_eq(p9c_readdir(kc, m, 0, buf, sizeof(buf)), 0);
	cr_assert_eq(p9c_clunk(kc, m), 0);
	assert_clean_exit();
}

T(escapes_fail_when_confined)
{
	struct p9_qid q;
	uint32_t f;
	char buf[64];

	start_gofer(ktree);
	cr_assert_eq(p9c_walk1(kc, kroot, "..", &f, &q), -EINVAL);
	cr_assert_eq(p9c_walk1(kc, kroot, "link_rel", &f, &q), 0);
	cr_assert_eq(p9c_readlink(kc, f, buf, sizeof(buf)), 22);
	cr_assert_eq(p9c_walk1(kc, f, "x", &f, &q), -ENOTDIR);
	cr_assert_eq(p9c_walk1(kc, kroot, "up", &f, &q), 0);
	cr_assert_eq(p9c_walk1(kc, f, "etc", &f, &q), -ENOTDIR);
	assert_clean_exit();
}

T(root_slash_hides_proc_sys_dev)
{
	static const char *subs[] = { "proc", "sys", "dev" };
	uint8_t buf[4096];
	struct p9_qid q;
	struct stat st;
	uint32_t f, p;
	size_t i;
	int fd = -1;

	start_gofer("/");
	for (i = 0; i < ARRAY_SIZE(subs); i++) {
		if (p9c_walk1(kc, kroot, subs[i], &f, &q) < 0)
			continue;
		/* the directory of the root fs, not the mount on it: /proc
		 * and /sys are empty, /dev has at most static nodes */
		if (strcmp(subs[i], "dev") != 0)
			cr_assert_eq(p9c_readdir(kc, f, 0, buf, sizeof(buf)), 0,
				     "/%s is served", subs[i]);
		cr_assert_eq(p9c_clunk(kc, f), 0);
	}
	cr_assert_eq(p9c_walk1(kc, kroot, "etc", &f, &q), 0);
	cr_assert_eq(p9c_walk1(kc, f, "passwd", &p, &q), 0);
	cr_assert_eq(p9c_getattr(kc, p, &st), 0);
	cr_assert_eq(p9c_lopen(kc, p, O_RDONLY, &fd), 0);
	cr_assert_gt(read(fd, buf, sizeof(buf)), 0);
	close(fd);
	assert_clean_exit();
}

/* A file bind mount's gofer: its root is the one file, reopened on that
 * inode, writable only --rw; nothing beside it is reachable, by walk,
 * by fd, or in the gofer's namespace. */
static void file_gofer_checks(bool rw)
{
	char path[128], buf[64] = { 0 }, target[256];
	struct statvfs sv;
	struct p9_qid q;
	struct stat st, hst;
	uint32_t f, c;
	int fd = -1;
	struct dirent *e;
	DIR *d;

	cr_assert(P9T_PATH(path, "%s/file.txt", ktree));
	start_gofer_mode(path, rw);
	cr_assert_eq(p9c_getattr(kc, kroot, &st), 0);
	cr_assert_eq(stat(path, &hst), 0);
	cr_assert(S_ISREG(st.st_mode));
	cr_assert_eq(st.st_ino, hst.st_ino, "the root is the host file");
	/* nothing is walked from a file, "..", a sibling or otherwise */
	cr_assert_eq(p9c_walk1(kc, kroot, "..", &f, &q), -EINVAL);
	cr_assert_eq(p9c_walk1(kc, kroot, "dir", &f, &q), -ENOTDIR);
	cr_assert_eq(p9c_walk1(kc, kroot, "file.txt", &f, &q), -ENOTDIR);
	cr_assert_lt(p9c_readdir(kc, kroot, 0, buf, sizeof(buf)), 0);
	cr_assert_eq(p9c_clone(kc, kroot, &c), 0);
	cr_assert_eq(p9c_lopen(kc, c, O_RDONLY, &fd), 0);
	cr_assert_eq(read(fd, buf, sizeof(buf) - 1),
		     (ssize_t)strlen(P9T_FILE_DATA));
	cr_assert_str_eq(buf, P9T_FILE_DATA);
	cr_assert_eq(fstat(fd, &st), 0);
	cr_assert_eq(st.st_ino, hst.st_ino);
	cr_assert_eq(fstatvfs(fd, &sv), 0);
	cr_assert(sv.f_flag & ST_NODEV);
	cr_assert(sv.f_flag & ST_NOSUID);
	cr_assert_eq(!!(sv.f_flag & ST_RDONLY), !rw);
	close(fd);
	fd = -1;
	if (rw) {
		cr_assert_eq(p9c_lopen(kc, c, O_WRONLY | O_TRUNC, &fd), 0);
		cr_assert_eq(write(fd, "new\n", 4), 4);
		close(fd);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		cr_assert_eq(read(fd, buf, sizeof(buf)), 4, "written through");
		close(fd);
		cr_assert_eq(p9c_fsync(kc, c, false), 0);
	} else {
		cr_assert_eq(p9c_lopen(kc, c, O_RDWR, &fd), -EROFS);
		cr_assert_eq(p9c_lopen(kc, c, O_RDONLY | O_TRUNC, &fd), -EROFS);
	}
	/* the write side that needs a directory has none */
	cr_assert_neq(p9c_unlinkat(kc, kroot, "file.txt", 0), 0);
	cr_assert_neq(p9c_link(kc, kroot, kroot, "x"), 0);
	cr_assert_eq(p9c_clunk(kc, c), 0);
	/* and the gofer's own fds name only the file and its empty "/" */
	snprintf(path, sizeof(path), "/proc/%d/fd", kpid);
	d = opendir(path);
	cr_assert_not_null(d);
	while ((e = readdir(d))) {
		char link[300];
		ssize_t len;

		if (e->d_name[0] == '.')
			continue;
		cr_assert(P9T_PATH(link, "%s/%s", path, e->d_name));
		len = readlink(link, target, sizeof(target) - 1);
		cr_assert_gt(len, 0);
		target[len] = '\0';
		cr_assert(strncmp(target, "socket:", 7) == 0 ||
				  !strcmp(target, "/") ||
				  !strcmp(target, "/" GOFER_FILE_NAME),
			  "unexpected gofer fd %s -> %s", e->d_name, target);
	}
	closedir(d);
	assert_clean_exit();
}

T(serves_one_file_read_only)
{
	file_gofer_checks(false);
}

T(serves_one_file_read_write)
{
	file_gofer_checks(true);
}

T(refuses_a_fifo_root)
{
	char path[128];
	char *argv[] = { "moat", "gofer", "--root", path, "--fd", "0", NULL };
	int sv[2], status;
	pid_t pid;

	cr_assert(P9T_PATH(path, "%s/fifo", ktree));
	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		char fdstr[16];

		snprintf(fdstr, sizeof(fdstr), "%d", sv[1]);
		argv[5] = fdstr;
		_exit(gofer_main(6, argv));
	}
	close(sv[1]);
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status));
	cr_assert_eq(WEXITSTATUS(status), 1, "setup error");
	close(sv[0]);
}

T(usage_errors)
{
	char *none[] = { "moat", "gofer", NULL };
	char *notsock[] = { "moat", "gofer", "--root", "/", "--fd", "0", NULL };
	char *badfd[] = { "gofer", "--root=/", "--fd=x1", NULL };
	char *extra[] = { "moat", "--root", "/", "--fd", "3", "--bogus", NULL };
	int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
	int saved = dup(0);

	/* fd 0 made a non-socket for the second case */
	dup2(devnull, 0);
	cr_assert_eq(gofer_main(2, none), 2);
	cr_assert_eq(gofer_main(6, notsock), 2);
	cr_assert_eq(gofer_main(3, badfd), 2);
	cr_assert_eq(gofer_main(6, extra), 2);
	dup2(saved, 0);
	close(saved);
	close(devnull);
}

/* ---- the seccomp filter alone -------------------------------------------- */

static int sfds;

static void ssetup(void)
{
	sfds = p9t_count_fds();
}

static void send_(void)
{
	cr_assert_eq(p9t_count_fds(), sfds, "fd leak: %d -> %d", sfds,
		     p9t_count_fds());
}

TestSuite(p9_seccomp, .init = ssetup);
#define TS(name) P9T_TEST(p9_seccomp, name, send_)

/* Run fn(sock) in a child under the gofer's filter; its wait status. */
static int run_filtered(void (*fn)(int sock))
{
	int sv[2], status;
	pid_t pid;

	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		struct moat_error err = { 0 };

		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
		    gofer_seccomp_install(sv[1], false, &err) < 0)
			_exit(99);
		fn(sv[1]);
		syscall(SYS_exit_group, 0);
	}
	close(sv[0]);
	close(sv[1]);
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	return status;
}

static void killed_by_sigsys(void (*fn)(int sock), const char *what)
{
	int status = run_filtered(fn);

	cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGSYS,
		  "%s was not killed by the filter (status %#x)", what, status);
}

static void do_serving_syscalls(int sock)
{
	char dents[1024];
	void *p;
	int fd;

	if (write(sock, "x", 1) != 1)
		_exit(1);
	p = malloc(4 << 20); /* mmap'd by glibc */
	free(p);
	fd = (int)syscall(SYS_openat2, AT_FDCWD, "/",
			  &(struct open_how){ .flags = O_RDONLY | O_DIRECTORY },
			  sizeof(struct open_how));
	if (fd < 0 || getdents64(fd, dents, sizeof(dents)) <= 0 ||
	    lseek(fd, 0, SEEK_SET) < 0 || fcntl(fd, F_GETFL) < 0)
		_exit(2);
	close(fd);
}

static void do_getpid(int sock)
{
	(void)sock;
	syscall(SYS_getpid);
}

static void do_write_stderr(int sock)
{
	(void)sock;
	syscall(SYS_write, 2, "x", 1);
}

static void do_mmap_exec(int sock)
{
	(void)sock;
	syscall(SYS_mmap, NULL, 4096, PROT_READ | PROT_EXEC,
		MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
}

static void do_openat(int sock)
{
	(void)sock;
	syscall(SYS_openat, AT_FDCWD, "/", O_RDONLY);
}

static void do_socket(int sock)
{
	(void)sock;
	syscall(SYS_socket, AF_UNIX, SOCK_STREAM, 0);
}

static void do_fcntl_dupfd(int sock)
{
	syscall(SYS_fcntl, sock, F_DUPFD, 0);
}

TS(serving_loop_syscalls_are_allowed)
{
	int status = run_filtered(do_serving_syscalls);

	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %#x",
		  status);
}

TS(other_syscalls_kill)
{
	killed_by_sigsys(do_getpid, "getpid");
	killed_by_sigsys(do_write_stderr, "write(2)");
	killed_by_sigsys(do_mmap_exec, "mmap(PROT_EXEC)");
	killed_by_sigsys(do_openat, "openat");
	killed_by_sigsys(do_socket, "socket");
	killed_by_sigsys(do_fcntl_dupfd, "fcntl(F_DUPFD)");
}
