/* gofer/confine.c: `moat gofer` entry point and the gofer's confinement.
 *
 * The gofer is the one moat process with access to host files, so it is the
 * one a compromised sentry would attack. The confinement below makes the
 * host tree it serves the ONLY thing it can reach, read-only, and strips
 * every privilege it does not need for the serving loop. Order matters and
 * each step says why it sits where it does. Requires Linux >= 5.12
 * (open_tree/move_mount/mount_setattr; openat2 needs 5.6).
 */
#include "gofer/gofer.h"

#include <fcntl.h>
#include <grp.h>
#include <stdbool.h>
#include <limits.h>
#include <linux/mount.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <seccomp.h>

/* ---- seccomp ------------------------------------------------------------ */

#if defined(__SANITIZE_ADDRESS__)
#define GOFER_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GOFER_SANITIZED 1
#endif
#endif
#ifndef GOFER_SANITIZED
#define GOFER_SANITIZED 0
#endif

enum gofer_sys_arg {
	GOFER_ARG_ANY,
	GOFER_ARG_SOCK,	    /* arg0 must be the 9P socket */
	GOFER_ARG_NOEXEC,   /* arg2 (prot) must not have PROT_EXEC */
	GOFER_ARG_FCNTL_FL, /* arg1 is F_GETFL or F_SETFL */
};

/* The serving loop's syscalls, and why each is needed. This table IS the
 * policy; docs/gofer.md repeats it for reviewers. */
static const struct gofer_sys {
	const char *name;
	enum gofer_sys_arg arg;
	const char *why;
} gofer_syscalls[] = {
	{ "read", GOFER_ARG_SOCK, "requests from the sentry" },
	{ "write", GOFER_ARG_SOCK,
	  "replies (sendmsg is used; kept for safety)" },
	{ "sendmsg", GOFER_ARG_SOCK, "replies, with SCM_RIGHTS for Rlopen" },
	{ "openat2", GOFER_ARG_ANY, "walk and lopen, RESOLVE_BENEATH" },
	{ "close", GOFER_ARG_ANY, "clunk, donated fds" },
	{ "fstat", GOFER_ARG_ANY, "identity of walked and opened files" },
	{ "newfstatat", GOFER_ARG_ANY, "glibc's fstat" },
	{ "statx", GOFER_ARG_ANY, "Tgetattr" },
	{ "fstatfs", GOFER_ARG_ANY, "Tstatfs" },
	{ "readlinkat", GOFER_ARG_ANY, "Treadlink" },
	{ "getdents64", GOFER_ARG_ANY, "Treaddir" },
	{ "fgetxattr", GOFER_ARG_ANY, "Txattrwalk" },
	{ "flistxattr", GOFER_ARG_ANY, "Txattrwalk of the name list" },
	{ "lseek", GOFER_ARG_ANY, "Treaddir offsets" },
	{ "fcntl", GOFER_ARG_FCNTL_FL, "clear O_NONBLOCK on donated fds" },
	{ "mmap", GOFER_ARG_NOEXEC, "malloc" },
	{ "mprotect", GOFER_ARG_NOEXEC, "malloc" },
	{ "munmap", GOFER_ARG_ANY, "malloc" },
	{ "mremap", GOFER_ARG_ANY, "malloc" },
	{ "brk", GOFER_ARG_ANY, "malloc" },
	{ "madvise", GOFER_ARG_ANY, "malloc trimming" },
	{ "rt_sigreturn", GOFER_ARG_ANY, "return from a signal handler" },
	{ "restart_syscall", GOFER_ARG_ANY, "restart after a stop" },
	{ "exit", GOFER_ARG_ANY, "exit" },
	{ "exit_group", GOFER_ARG_ANY, "exit" },
#if GOFER_SANITIZED
	/* Test builds only: the ASan runtime tears down its signal stack. */
	{ "sigaltstack", GOFER_ARG_ANY,
	  "ASan runtime (sanitizer builds only)" },
#endif
};

/* The write side, added for a `--mount SRC:DST:rw` gofer only. */
static const struct gofer_sys gofer_rw_syscalls[] = {
	{ "mkdirat", GOFER_ARG_ANY, "Tmkdir" },
	{ "symlinkat", GOFER_ARG_ANY, "Tsymlink" },
	{ "mknodat", GOFER_ARG_ANY, "Tmknod (FIFOs, regular files)" },
	{ "unlinkat", GOFER_ARG_ANY, "Tunlinkat" },
	{ "renameat", GOFER_ARG_ANY, "Trenameat" },
	{ "renameat2", GOFER_ARG_ANY, "Trenameat (glibc's renameat)" },
	{ "linkat", GOFER_ARG_ANY, "Tlink" },
	{ "fchmodat2", GOFER_ARG_ANY, "Tsetattr mode, on the O_PATH fd" },
	{ "fchownat", GOFER_ARG_ANY, "Tsetattr uid/gid, on the O_PATH fd" },
	{ "utimensat", GOFER_ARG_ANY, "Tsetattr times, on the O_PATH fd" },
	{ "ftruncate", GOFER_ARG_ANY, "Tsetattr size" },
	{ "fsync", GOFER_ARG_ANY, "Tfsync" },
	{ "fdatasync", GOFER_ARG_ANY, "Tfsync (datasync)" },
	{ "fsetxattr", GOFER_ARG_ANY, "Txattrcreate, at Tclunk" },
	{ "fremovexattr", GOFER_ARG_ANY, "Txattrcreate of size 0, at Tclunk" },
};

/* Like SCMP_An(), spelled out: the macros leave datum_b implicit, which
 * clang's -Wmissing-field-initializers rejects. */
static struct scmp_arg_cmp arg_cmp(unsigned arg, enum scmp_compare op,
				   scmp_datum_t a, scmp_datum_t b)
{
	struct scmp_arg_cmp c = {
		.arg = arg, .op = op, .datum_a = a, .datum_b = b
	};
	return c;
}

static int add_rule(scmp_filter_ctx ctx, const struct gofer_sys *s, int sockfd)
{
	int nr = seccomp_syscall_resolve_name(s->name);
	int ret = -EINVAL;

	if (nr == __NR_SCMP_ERROR)
		return -EINVAL;
	switch (s->arg) {
	case GOFER_ARG_ANY:
		ret = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 0);
		break;
	case GOFER_ARG_SOCK:
		ret = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 1,
				       arg_cmp(0, SCMP_CMP_EQ,
					       (scmp_datum_t)sockfd, 0));
		break;
	case GOFER_ARG_NOEXEC:
		ret = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 1,
				       arg_cmp(2, SCMP_CMP_MASKED_EQ, PROT_EXEC,
					       0));
		break;
	case GOFER_ARG_FCNTL_FL:
		ret = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 1,
				       arg_cmp(1, SCMP_CMP_EQ, F_GETFL, 0));
		if (ret == 0)
			ret = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 1,
					       arg_cmp(1, SCMP_CMP_EQ, F_SETFL,
						       0));
		break;
	}
	return ret;
}

int gofer_seccomp_install(int sockfd, bool writable, struct moat_error *err)
{
	scmp_filter_ctx ctx;
	size_t i;
	int ret;

	/* Kill, not EPERM: a gofer making any other syscall is compromised
	 * or broken, and must not keep serving. */
	ctx = seccomp_init(SCMP_ACT_KILL_PROCESS);
	if (!ctx)
		return moat_error_set(err, ENOMEM, "gofer: seccomp_init");
	for (i = 0; i < ARRAY_SIZE(gofer_syscalls) +
				(writable ? ARRAY_SIZE(gofer_rw_syscalls) : 0);
	     i++) {
		const struct gofer_sys *sys =
			i < ARRAY_SIZE(gofer_syscalls) ?
				&gofer_syscalls[i] :
				&gofer_rw_syscalls[i -
						   ARRAY_SIZE(gofer_syscalls)];

		ret = add_rule(ctx, sys, sockfd);
		if (ret < 0) {
			seccomp_release(ctx);
			return moat_error_set(err, -ret,
					      "gofer: seccomp rule `%s`",
					      sys->name);
		}
	}
	ret = seccomp_load(ctx);
	seccomp_release(ctx);
	if (ret < 0)
		return moat_error_set(err, -ret, "gofer: seccomp_load");
	return 0;
}

/* ---- capabilities ------------------------------------------------------- */

/* Serve as another user (--as UID:GID, the sandbox's helper uid): when the
 * tree is the host's own root, root's ownership of /etc/shadow, /root and
 * the like must not be the guest's way in. The helper uid owns no host
 * file, so the guest then reads what any host user may read. */
static bool serve_as;
static uid_t as_uid;
static gid_t as_gid;

/* --expect DEV:INO: the directory the sentry checked, and decided --as
 * (or not) for. The path is the sentry's, in a directory others may
 * write: swapped for a link to "/" after the check, open_tree would
 * follow it and serve the host's root as uid 0. The tree opened must be
 * the one checked. */
static bool expect_set;
static dev_t expect_dev;
static ino_t expect_ino;

static int drop_all_caps(struct moat_error *err)
{
	cap_value_t c, last = (cap_value_t)cap_max_bits();
	cap_t none;

	/* The bounding set first: dropping from it needs CAP_SETPCAP, which
	 * goes away with the effective set below. */
	for (c = 0; c < last; c++)
		if (cap_drop_bound(c) < 0 && errno != EINVAL)
			return moat_error_set(err, errno,
					      "gofer: drop bounding cap %d", c);
	if (cap_reset_ambient() < 0 && errno != EINVAL)
		return moat_error_set(err, errno, "gofer: clear ambient caps");
	/* Before the effective set goes: changing ids needs CAP_SETUID.
	 * (Without root, --as names the caller's own ids: nothing to do.) */
	if (serve_as && (as_uid != geteuid() || as_gid != getegid()) &&
	    (setgroups(0, NULL) < 0 || setresgid(as_gid, as_gid, as_gid) < 0 ||
	     setresuid(as_uid, as_uid, as_uid) < 0 ||
	     /* the change of ids set it to fs.suid_dumpable: not dumpable
	      * again, as step 7 had it */
	     prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0))
		return moat_error_set(err, errno, "gofer: become uid %u",
				      (unsigned)as_uid);
	none = cap_init();
	if (!none)
		return moat_error_set(err, errno, "gofer: cap_init");
	if (cap_set_proc(none) < 0) {
		int e = errno;

		cap_free(none);
		return moat_error_set(err, e, "gofer: drop capabilities");
	}
	cap_free(none);
	return 0;
}

/* ---- the sequence ------------------------------------------------------- */

static int close_all_but(int keep, struct moat_error *err)
{
	if (keep > 0 && close_range(0, (unsigned)keep - 1, 0) < 0)
		return moat_error_set(err, errno, "gofer: close_range");
	if (close_range((unsigned)keep + 1, ~0u, 0) < 0)
		return moat_error_set(err, errno, "gofer: close_range");
	return 0;
}

/* mount_setattr on the tree fd; nosymfollow is 5.10+, older kernels get
 * the rest. */
static int setattr_tree(int tree, struct mount_attr *attr, unsigned extra)
{
	if (syscall(SYS_mount_setattr, tree, "", AT_EMPTY_PATH | extra, attr,
		    sizeof(*attr)) == 0)
		return 0;
	if (errno != EINVAL)
		return -1;
	attr->attr_set &= ~(uint64_t)MOUNT_ATTR_NOSYMFOLLOW;
	return (int)syscall(SYS_mount_setattr, tree, "", AT_EMPTY_PATH | extra,
			    attr, sizeof(*attr));
}

/* Step 5 for a file: a new "/" to pivot into, since a file cannot be
 * one. An empty tmpfs of the gofer's own, stacked on "/", gets one empty
 * file, GOFER_FILE_NAME, and the file's bind (tree) is moved onto it;
 * then the tmpfs is made read-only (not recursively: the bind keeps its
 * own mode). The gofer's namespace then holds the one host file and
 * nothing beside it: its host siblings were never bound. Returns the
 * tmpfs's fd (its root), or -1 and err. */
static int file_root(const char *root, int tree, struct moat_error *err)
{
	struct mount_attr ro = {
		.attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID |
			    MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC,
	};
	cleanup_close int fs = -1, mnt = -1, f = -1;

	fs = (int)syscall(SYS_fsopen, "tmpfs", FSOPEN_CLOEXEC);
	if (fs < 0)
		return moat_error_set(err, errno, "gofer: fsopen tmpfs");
	if (syscall(SYS_fsconfig, fs, FSCONFIG_SET_STRING, "mode", "0555", 0) <
		    0 ||
	    syscall(SYS_fsconfig, fs, FSCONFIG_SET_STRING, "size", "4k", 0) <
		    0 ||
	    syscall(SYS_fsconfig, fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
		return moat_error_set(err, errno, "gofer: make a tmpfs");
	mnt = (int)syscall(SYS_fsmount, fs, FSMOUNT_CLOEXEC,
			   MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
				   MOUNT_ATTR_NOEXEC);
	if (mnt < 0)
		return moat_error_set(err, errno, "gofer: mount a tmpfs");
	if (syscall(SYS_move_mount, mnt, "", AT_FDCWD, "/",
		    MOVE_MOUNT_F_EMPTY_PATH) < 0)
		return moat_error_set(err, errno, "gofer: attach a tmpfs");
	f = openat(mnt, GOFER_FILE_NAME,
		   O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0);
	if (f < 0)
		return moat_error_set(err, errno, "gofer: mount point of `%s`",
				      root);
	close(take_fd(&f)); /* open for writing, it would keep the tmpfs rw */
	if (syscall(SYS_move_mount, tree, "", mnt, GOFER_FILE_NAME,
		    MOVE_MOUNT_F_EMPTY_PATH) < 0)
		return moat_error_set(err, errno, "gofer: attach `%s`", root);
	if (syscall(SYS_mount_setattr, mnt, "", AT_EMPTY_PATH, &ro,
		    sizeof(ro)) < 0)
		return moat_error_set(err, errno,
				      "gofer: make its tmpfs read-only");
	return take_fd(&mnt);
}

int gofer_confine(const char *root, int sockfd, bool writable, int *rootfd,
		  bool *is_file, struct moat_error *err)
{
	struct mount_attr attr = {
		/* nodev: a device node in the tree must not open hardware;
		 * nosuid: nothing mapped from here gains privilege; nosymfollow:
		 * path resolution never follows a link on this mount (the gofer
		 * never asks it to; this makes it a property of the mount).
		 * Not noexec: the sentry maps guest binaries from donated fds. */
		.attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID |
			    MOUNT_ATTR_NODEV | MOUNT_ATTR_NOSYMFOLLOW,
	};
	cleanup_close int tree = -1;
	cleanup_close int fd = -1;
	pid_t parent = getppid();
	struct stat st;

	/* 1. A private mount namespace: the bind and pivot_root below must
	 * change only the gofer's view of the host, never the host's. */
	if (unshare(CLONE_NEWNS) < 0)
		return moat_error_set(err, errno,
				      "gofer: unshare(CLONE_NEWNS)");

	/* 2. Stop propagation both ways: with shared mounts (systemd's
	 * default) our unmount of the host tree would reach the host, and host
	 * mounts made later would appear inside the gofer. */
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return moat_error_set(err, errno, "gofer: make / private");

	/* 3. Bind DIR onto itself. Read-only service: NON-recursively, so
	 * host submounts under DIR (/proc, /sys and /dev when DIR is "/") are
	 * not part of the copy and cannot be served. Writable service:
	 * recursively, so that each host submount is a mount point here too
	 * and rmdir/rename/unlink of it fail with EBUSY; under a plain bind,
	 * removing the directory beneath would detach the host's own mount
	 * (the kernel lazily unmounts mounts on a removed dentry in every
	 * other namespace). Walks never cross into a submount either way
	 * (RESOLVE_NO_XDEV). open_tree + move_mount rather than mount(MS_BIND):
	 * the fd names the new mount even when it is stacked on "/", where a
	 * path lookup would find the old one. */
	tree = (int)syscall(SYS_open_tree, AT_FDCWD, root,
			    OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC |
				    (writable ? AT_RECURSIVE : 0));
	if (tree < 0)
		return moat_error_set(err, errno, "gofer: bind `%s`", root);
	if (fstat(tree, &st) < 0)
		return moat_error_set(err, errno, "gofer: stat `%s`", root);
	/* A directory, or one regular file: anything else would be a way to
	 * a host device, FIFO or socket. */
	*is_file = S_ISREG(st.st_mode);
	if (!*is_file && !S_ISDIR(st.st_mode))
		return moat_error_input(err, EPERM,
					"gofer: `%s` is neither a directory "
					"nor a regular file",
					root);
	if (expect_set) {
		if (st.st_dev != expect_dev || st.st_ino != expect_ino)
			return moat_error_input(err, ESTALE,
						"gofer: `%s` changed while the "
						"sandbox started: it is no "
						"longer the directory checked",
						root);
	}

	/* 4. Read-only (and nodev, nosuid) before anything can use it: the
	 * kernel, not only the gofer's flag checks, refuses writes. Only a
	 * gofer told --rw (a `--mount SRC:DST:rw`) then makes its top mount
	 * writable again; its submounts stay read-only. */
	if (setattr_tree(tree, &attr, writable ? AT_RECURSIVE : 0) < 0)
		return moat_error_set(err, errno, "gofer: make `%s` read-only",
				      root);
	if (writable) {
		struct mount_attr rw = { .attr_clr = MOUNT_ATTR_RDONLY };

		if (syscall(SYS_mount_setattr, tree, "", AT_EMPTY_PATH, &rw,
			    sizeof(rw)) < 0)
			return moat_error_set(
				err, errno, "gofer: make `%s` writable", root);
	}
	if (*is_file) {
		int top = file_root(root, tree, err);

		if (top < 0)
			return -1;
		close(tree);
		tree = top;
	} else if (syscall(SYS_move_mount, tree, "", AT_FDCWD, root,
			   MOVE_MOUNT_F_EMPTY_PATH) < 0) {
		return moat_error_set(err, errno, "gofer: attach `%s`", root);
	}

	/* 5. Enter it, and make it "/": pivot_root(".", ".") stacks the old
	 * root on top of the new one, and the lazy unmount takes it and every
	 * host mount with it out of the namespace. Nothing outside DIR is
	 * reachable afterwards, by any path. */
	if (fchdir(tree) < 0)
		return moat_error_set(err, errno, "gofer: chdir `%s`", root);
	if (syscall(SYS_pivot_root, ".", ".") < 0)
		return moat_error_set(err, errno, "gofer: pivot_root `%s`",
				      root);
	if (umount2(".", MNT_DETACH) < 0)
		return moat_error_set(err, errno, "gofer: detach old root");
	if (chdir("/") < 0)
		return moat_error_set(err, errno, "gofer: chdir /");

	/* 6. Close every inherited fd but the socket: an fd opened before the
	 * pivot (a host directory, a log, another sandbox's socket) would be a
	 * way around all of the above. stderr goes too: after this point
	 * errors are only in err and the exit status. */
	close(take_fd(&tree));
	if (close_all_but(sockfd, err) < 0)
		return err->code ? -err->code : -1;
	fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return moat_error_set(err, errno, "gofer: open new root");

	/* 7. no_new_privs: nothing the gofer does from now on (it will not
	 * exec, seccomp forbids it) can gain privileges; also required for a
	 * seccomp filter without CAP_SYS_ADMIN, which step 8 removes. */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return moat_error_set(err, errno, "gofer: no_new_privs");
	/* Not dumpable, before step 8 leaves a uid-0 gofer with no
	 * capability: else any host process of uid 0 without capabilities
	 * (a hardened service, a --cap-drop=ALL container in the host's pid
	 * namespace) would pass ptrace's check against it (same uid, caps a
	 * subset), read and write its /proc/PID/mem, and so forge the 9P
	 * replies the sentry trusts. Only CAP_SYS_PTRACE (the sentry's)
	 * reaches it now. Dropping capabilities leaves the flag as it is. */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
		return moat_error_set(err, errno, "gofer: not dumpable");

	/* 8. All capabilities, bounding set included. Mounting is done; from
	 * here uid 0 is an ordinary user: it reads only what the file modes
	 * grant it (no CAP_DAC_OVERRIDE) and cannot undo any step above. */
	if (drop_all_caps(err) < 0)
		return err->code ? -err->code : -1;

	/* 9. Die with the sentry: a gofer outliving its sandbox would keep a
	 * host tree open for whoever inherits the socket. The getppid check
	 * closes the race with a parent that died before the prctl. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
		return moat_error_set(err, errno, "gofer: pdeathsig");
	if (getppid() != parent)
		return moat_error_set(err, ESRCH, "gofer: parent exited");

	/* 10. Last, because the filter forbids everything above: only the
	 * serving loop's syscalls remain (table above, docs/gofer.md). */
	if (gofer_seccomp_install(sockfd, writable, err) < 0)
		return err->code ? -err->code : -1;

	*rootfd = take_fd(&fd);
	return 0;
}

/* ---- entry point -------------------------------------------------------- */

static int parse_fd(const char *s, int *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 0 || v > INT_MAX)
		return -EINVAL;
	*out = (int)v;
	return 0;
}

/* UID:GID, neither of them root nor -1 */
static int parse_ids(const char *s, uid_t *uid, gid_t *gid)
{
	unsigned long u, g;
	char *end;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	u = strtoul(s, &end, 10);
	if (errno || end == s || *end != ':' || u == 0 || u >= UINT32_MAX)
		return -EINVAL;
	s = end + 1;
	if (*s < '0' || *s > '9')
		return -EINVAL;
	g = strtoul(s, &end, 10);
	if (errno || end == s || *end || g == 0 || g >= UINT32_MAX)
		return -EINVAL;
	*uid = (uid_t)u;
	*gid = (gid_t)g;
	return 0;
}

/* DEV:INO, as start_gofer prints them */
static int parse_expect(const char *s)
{
	unsigned long long d, n;
	char *end;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	d = strtoull(s, &end, 10);
	if (errno || end == s || *end != ':')
		return -EINVAL;
	s = end + 1;
	if (*s < '0' || *s > '9')
		return -EINVAL;
	n = strtoull(s, &end, 10);
	if (errno || end == s || *end)
		return -EINVAL;
	expect_dev = (dev_t)d;
	expect_ino = (ino_t)n;
	expect_set = true;
	return 0;
}

static void usage(void)
{
	fputs("usage: moat gofer --root DIR|FILE --fd N [--as UID:GID] "
	      "[--expect DEV:INO] [--rw|--store]\n",
	      stderr);
}

int gofer_main(int argc, char **argv)
{
	struct moat_error err = { 0 };
	cleanup_close int rootfd = -1;
	const char *root = NULL;
	const char *fdarg = NULL;
	bool writable = false, store = false, is_file = false;
	struct stat st;
	int sock = -1;
	int i = 1, ret;

	if (i < argc && strcmp(argv[i], "gofer") == 0)
		i++;
	for (; i < argc; i++) {
		const char *a = argv[i];

		if (strcmp(a, "--root") == 0 && i + 1 < argc)
			root = argv[++i];
		else if (strncmp(a, "--root=", 7) == 0)
			root = a + 7;
		else if (strcmp(a, "--fd") == 0 && i + 1 < argc)
			fdarg = argv[++i];
		else if (strncmp(a, "--fd=", 5) == 0)
			fdarg = a + 5;
		else if (strcmp(a, "--as") == 0 && i + 1 < argc) {
			if (parse_ids(argv[++i], &as_uid, &as_gid) < 0) {
				usage();
				return 2;
			}
			serve_as = true;
		} else if (strcmp(a, "--expect") == 0 && i + 1 < argc) {
			if (parse_expect(argv[++i]) < 0) {
				usage();
				return 2;
			}
		} else if (strcmp(a, "--rw") == 0)
			writable = true;
		else if (strcmp(a, "--store") == 0)
			writable = store = true;
		else {
			usage();
			return 2;
		}
	}
	if (!root || !*root || !fdarg || parse_fd(fdarg, &sock) < 0) {
		usage();
		return 2;
	}
	if (fstat(sock, &st) < 0 || !S_ISSOCK(st.st_mode)) {
		fprintf(stderr, "gofer: --fd %d is not a socket\n", sock);
		return 2;
	}
	/* Keep the socket off 0-2, which are closed during confinement and
	 * must not alias it if something later writes to "stderr". */
	if (sock <= STDERR_FILENO) {
		int moved = fcntl(sock, F_DUPFD_CLOEXEC, STDERR_FILENO + 1);

		if (moved < 0) {
			perror("gofer: move socket");
			return 1;
		}
		close(sock);
		sock = moved;
	}

	if (gofer_confine(root, sock, writable, &rootfd, &is_file, &err) < 0) {
		/* stderr is gone once step 6 ran; print only if it is still
		 * the descriptor we were given. */
		if (fcntl(STDERR_FILENO, F_GETFD) >= 0)
			fprintf(stderr, "%s\n", err.msg);
		return 1;
	}
	if (is_file)
		ret = gofer_serve_file(sock, rootfd, GOFER_FILE_NAME,
				       store	? GOFER_STORE :
				       writable ? GOFER_WRITABLE :
						  0);
	else
		ret = gofer_serve(sock, rootfd,
				  store	   ? GOFER_STORE :
				  writable ? GOFER_WRITABLE :
					     0);
	return ret < 0 ? 3 : 0;
}
