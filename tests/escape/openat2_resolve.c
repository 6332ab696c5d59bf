/* tests/escape/openat2_resolve.c BASE: every RESOLVE_* flag of openat2,
 * against escapes through "..", absolute paths, absolute and relative
 * symlinks, /proc magic links and a mount point. BASE must be a fresh
 * directory name in a filesystem mounted at /tmp (moat's tmpfs; natively a
 * tmpfs the test mounts in a mount namespace of its own), so that /tmp is
 * a mount point between BASE and /. Prints one line per case; the output
 * must be the same natively and under moat. With "cold PATH", it opens a
 * file not looked at before with RESOLVE_CACHED, then without, then with;
 * with "one DIR PATH RESOLVE", it opens PATH from DIR with those flags. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static int basefd, ddirfd, rootfd, tmpfd;

static long oa2(int dirfd, const char *path, uint64_t flags, uint64_t mode,
		uint64_t resolve)
{
	struct open_how how = { .flags = flags,
				.mode = mode,
				.resolve = resolve };
	return syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
}

/* What an open gave: the errno's name, or "ok" and the file's first word
 * (or its type when it has no data to show). */
static void show(const char *name, long fd)
{
	char buf[32] = "";
	struct stat st;
	ssize_t n;

	if (fd < 0) {
		printf("%s: %s\n", name, strerrorname_np(errno));
		return;
	}
	if (fstat((int)fd, &st) == 0 && !S_ISREG(st.st_mode)) {
		printf("%s: ok %s\n", name,
		       S_ISDIR(st.st_mode)  ? "dir" :
		       S_ISLNK(st.st_mode)  ? "symlink" :
		       S_ISFIFO(st.st_mode) ? "fifo" :
					      "other");
	} else {
		n = pread((int)fd, buf, sizeof(buf) - 1, 0);
		buf[n > 0 ? n : 0] = 0;
		buf[strcspn(buf, ":\n")] = 0;
		printf("%s: ok %s\n", name, n < 0 ? "(unreadable)" : buf);
	}
	close((int)fd);
}

static void put(const char *path, const char *text)
{
	int fd = openat(basefd, path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	if (fd < 0 || write(fd, text, strlen(text)) < 0) {
		perror(path);
		exit(1);
	}
	close(fd);
}

static void link_(const char *target, const char *path)
{
	if (symlinkat(target, basefd, path) < 0) {
		perror(path);
		exit(1);
	}
}

static void setup(const char *base)
{
	if (mkdir(base, 0755) < 0) {
		perror(base);
		exit(1);
	}
	basefd = open(base, O_PATH | O_DIRECTORY);
	rootfd = open("/", O_PATH | O_DIRECTORY);
	tmpfd = open("/tmp", O_PATH | O_DIRECTORY);
	if (basefd < 0 || rootfd < 0 || tmpfd < 0 || chdir(base) < 0) {
		perror("setup");
		exit(1);
	}
	mkdirat(basefd, "d", 0755);
	mkdirat(basefd, "etc", 0755);
	put("f", "inside");
	put("d/g", "deeper");
	put("etc/passwd", "decoy");
	link_("d/g", "rel");		   /* relative, stays inside */
	link_("../f", "d/up");		   /* relative, up but inside BASE */
	link_("../../etc/passwd", "esc");  /* relative, out of BASE */
	link_("/etc/passwd", "abs");	   /* absolute */
	link_("/d", "absd");		   /* absolute, a directory */
	link_("loop", "loop");		   /* itself */
	link_("../../../../tmp", "uptmp"); /* up to the mount point */
	ddirfd = openat(basefd, "d", O_PATH | O_DIRECTORY);
}

#define BEN RESOLVE_BENEATH
#define INR RESOLVE_IN_ROOT
#define NSYM RESOLVE_NO_SYMLINKS
#define NMAG RESOLVE_NO_MAGICLINKS
#define NXDEV RESOLVE_NO_XDEV

static void beneath(void)
{
	show("beneath plain", oa2(basefd, "f", O_RDONLY, 0, BEN));
	show("beneath dir/../", oa2(basefd, "d/../f", O_RDONLY, 0, BEN));
	show("beneath .. out", oa2(basefd, "../x", O_RDONLY, 0, BEN));
	show("beneath .. out and back",
	     oa2(ddirfd, "../d/g", O_RDONLY, 0, BEN));
	show("beneath deep .. out",
	     oa2(basefd, "d/../../etc/passwd", O_RDONLY, 0, BEN));
	show("beneath absolute", oa2(basefd, "/etc/passwd", O_RDONLY, 0, BEN));
	show("beneath rel symlink", oa2(basefd, "rel", O_RDONLY, 0, BEN));
	show("beneath rel symlink up inside",
	     oa2(basefd, "d/up", O_RDONLY, 0, BEN));
	show("beneath rel symlink up out", oa2(ddirfd, "up", O_RDONLY, 0, BEN));
	show("beneath rel symlink escape",
	     oa2(basefd, "esc", O_RDONLY, 0, BEN));
	show("beneath abs symlink", oa2(basefd, "abs", O_RDONLY, 0, BEN));
	show("beneath abs dir symlink",
	     oa2(basefd, "absd/g", O_RDONLY, 0, BEN));
	show("beneath nofollow abs symlink",
	     oa2(basefd, "abs", O_PATH | O_NOFOLLOW, 0, BEN));
	show("beneath cwd", oa2(AT_FDCWD, "d/g", O_RDONLY, 0, BEN));
	show("beneath cwd ..", oa2(AT_FDCWD, "..", O_RDONLY, 0, BEN));
	show("beneath loop", oa2(basefd, "loop", O_RDONLY, 0, BEN));
	show("beneath create out",
	     oa2(basefd, "../created-out", O_WRONLY | O_CREAT, 0644, BEN));
	show("beneath create via symlink",
	     oa2(basefd, "uptmp/created-out", O_WRONLY | O_CREAT, 0644, BEN));
	show("beneath create inside",
	     oa2(basefd, "d/created", O_WRONLY | O_CREAT, 0644, BEN));
	show("beneath magic link",
	     oa2(rootfd, "proc/self/cwd/f", O_RDONLY, 0, BEN));
	show("beneath tmpfile out",
	     oa2(basefd, "..", O_TMPFILE | O_RDWR, 0600, BEN));
	printf("created-out exists: %d\n",
	       faccessat(tmpfd, "created-out", F_OK, 0) == 0);
}

static void in_root(void)
{
	show("in_root plain", oa2(basefd, "f", O_RDONLY, 0, INR));
	show("in_root .. clamps", oa2(basefd, "../../../f", O_RDONLY, 0, INR));
	show("in_root .. in the middle",
	     oa2(basefd, "d/../../d/g", O_RDONLY, 0, INR));
	show("in_root absolute", oa2(basefd, "/etc/passwd", O_RDONLY, 0, INR));
	show("in_root rel symlink escape",
	     oa2(basefd, "esc", O_RDONLY, 0, INR));
	show("in_root abs symlink", oa2(basefd, "abs", O_RDONLY, 0, INR));
	show("in_root abs dir symlink",
	     oa2(basefd, "absd/g", O_RDONLY, 0, INR));
	show("in_root up to the mount point",
	     oa2(basefd, "uptmp", O_RDONLY, 0, INR));
	show("in_root from d", oa2(ddirfd, "/g", O_RDONLY, 0, INR));
	show("in_root magic link",
	     oa2(rootfd, "proc/self/root/etc/passwd", O_RDONLY, 0, INR));
	show("in_root create absolute",
	     oa2(basefd, "/made", O_WRONLY | O_CREAT, 0644, INR));
	printf("made in base: %d\n", faccessat(basefd, "made", F_OK, 0) == 0);
	show("without flags abs symlink", oa2(basefd, "abs", O_RDONLY, 0, 0));
	show("without flags rel escape", oa2(basefd, "esc", O_RDONLY, 0, 0));
}

static void no_symlinks(void)
{
	show("nosym plain", oa2(basefd, "d/g", O_RDONLY, 0, NSYM));
	show("nosym rel", oa2(basefd, "rel", O_RDONLY, 0, NSYM));
	show("nosym abs", oa2(basefd, "abs", O_RDONLY, 0, NSYM));
	show("nosym in the middle", oa2(basefd, "absd/g", O_RDONLY, 0, NSYM));
	show("nosym nofollow",
	     oa2(basefd, "rel", O_RDONLY | O_NOFOLLOW, 0, NSYM));
	show("nosym path nofollow",
	     oa2(basefd, "rel", O_PATH | O_NOFOLLOW, 0, NSYM));
	show("nosym /proc/self",
	     oa2(AT_FDCWD, "/proc/self/status", O_RDONLY, 0, NSYM));
	show("nosym create through symlink",
	     oa2(basefd, "absd/new", O_WRONLY | O_CREAT, 0644, NSYM));
}

static void no_magiclinks(void)
{
	char p[64];
	int pfd[2], dfd = openat(basefd, "d", O_RDONLY | O_DIRECTORY);
	int fdir = open("/proc/self/fd", O_PATH | O_DIRECTORY);
	int st = open("/proc/self/status", O_RDONLY);

	if (pipe(pfd) < 0 || dfd < 0 || fdir < 0 || st < 0) {
		perror("magic setup");
		exit(1);
	}
	snprintf(p, sizeof(p), "/proc/self/fd/%d/g", dfd);
	show("magic fd without flags", oa2(AT_FDCWD, p, O_RDONLY, 0, 0));
	show("magic fd", oa2(AT_FDCWD, p, O_RDONLY, 0, NMAG));
	show("magic fd nosym", oa2(AT_FDCWD, p, O_RDONLY, 0, NSYM));
	snprintf(p, sizeof(p), "/proc/self/fd/%d", pfd[0]);
	show("magic pipe without flags", oa2(AT_FDCWD, p, O_RDONLY, 0, 0));
	show("magic pipe", oa2(AT_FDCWD, p, O_RDONLY, 0, NMAG));
	show("magic path nofollow",
	     oa2(AT_FDCWD, p, O_PATH | O_NOFOLLOW, 0, NMAG));
	show("magic exe", oa2(AT_FDCWD, "/proc/self/exe", O_RDONLY, 0, NMAG));
	show("magic cwd", oa2(AT_FDCWD, "/proc/self/cwd/f", O_RDONLY, 0, NMAG));
	show("magic root",
	     oa2(AT_FDCWD, "/proc/self/root/etc/passwd", O_RDONLY, 0, NMAG));
	show("magic cwd without flags",
	     oa2(AT_FDCWD, "/proc/self/cwd/f", O_RDONLY, 0, 0));
	show("not magic: /proc/self",
	     oa2(AT_FDCWD, "/proc/self/status", O_RDONLY, 0, NMAG));
	snprintf(p, sizeof(p), "%d", st);
	show("xdev magic fd same mount", oa2(fdir, p, O_RDONLY, 0, NXDEV));
	snprintf(p, sizeof(p), "%d/g", dfd);
	show("xdev magic fd other mount", oa2(fdir, p, O_RDONLY, 0, NXDEV));
	close(pfd[0]);
	close(pfd[1]);
	close(dfd);
	close(fdir);
	close(st);
}

static void no_xdev(void)
{
	show("xdev plain", oa2(basefd, "d/g", O_RDONLY, 0, NXDEV));
	show("xdev .. to the mount root",
	     oa2(basefd, "..", O_RDONLY, 0, NXDEV));
	show("xdev .. over the mount",
	     oa2(basefd, "../../etc/passwd", O_RDONLY, 0, NXDEV));
	show("xdev from the mount root up",
	     oa2(tmpfd, "..", O_RDONLY, 0, NXDEV));
	show("xdev into a mount", oa2(rootfd, "tmp", O_RDONLY, 0, NXDEV));
	show("xdev into a mount deeper",
	     oa2(rootfd, "tmp/../etc/passwd", O_RDONLY, 0, NXDEV));
	show("xdev absolute start",
	     oa2(tmpfd, "/etc/passwd", O_RDONLY, 0, NXDEV));
	show("xdev abs symlink", oa2(basefd, "abs", O_RDONLY, 0, NXDEV));
	show("xdev rel symlink over the mount",
	     oa2(basefd, "esc", O_RDONLY, 0, NXDEV));
	show("xdev rel symlink to the mount point",
	     oa2(basefd, "uptmp", O_RDONLY, 0, NXDEV));
	show("xdev into /proc",
	     oa2(rootfd, "proc/self/status", O_RDONLY, 0, NXDEV));
	show("xdev in_root clamped",
	     oa2(basefd, "../../f", O_RDONLY, 0, NXDEV | INR));
}

static void cached(void)
{
	int fd = openat(basefd, "f", O_RDONLY);

	close(fd); /* now in every cache there is */
	show("cached present", oa2(basefd, "f", O_RDONLY, 0, RESOLVE_CACHED));
	show("cached creat",
	     oa2(basefd, "f", O_RDONLY | O_CREAT, 0644, RESOLVE_CACHED));
	show("cached creat missing",
	     oa2(basefd, "nx", O_RDWR | O_CREAT, 0644, RESOLVE_CACHED));
	show("cached trunc",
	     oa2(basefd, "f", O_RDWR | O_TRUNC, 0, RESOLVE_CACHED));
	show("cached tmpfile",
	     oa2(basefd, ".", O_TMPFILE | O_RDWR, 0600, RESOLVE_CACHED));
	show("cached missing", oa2(basefd, "nx", O_RDONLY, 0, RESOLVE_CACHED));
	show("cached magic link",
	     oa2(AT_FDCWD, "/proc/self/cwd", O_RDONLY, 0, RESOLVE_CACHED));
	close(open("/etc/passwd", O_RDONLY));
	show("cached rootfs file seen",
	     oa2(AT_FDCWD, "/etc/passwd", O_RDONLY, 0, RESOLVE_CACHED));
	show("cached /proc/self",
	     oa2(AT_FDCWD, "/proc/self/status", O_RDONLY, 0, RESOLVE_CACHED));
}

/* A rootfs file the sandbox has not looked at yet: moat's walk would ask
 * the gofer (EAGAIN), Linux's finds it in the dcache or not, by chance. */
static int cold(const char *path)
{
	show("cold cached", oa2(AT_FDCWD, path, O_RDONLY, 0, RESOLVE_CACHED));
	show("cold plain", oa2(AT_FDCWD, path, O_RDONLY, 0, 0));
	show("cold cached again",
	     oa2(AT_FDCWD, path, O_RDONLY, 0, RESOLVE_CACHED));
	return 0;
}

static void arguments(void)
{
	struct {
		struct open_how how;
		uint64_t extra;
	} big = { { O_RDONLY, 0, 0 }, 0 };
	long fd;

	show("unknown resolve bit", oa2(basefd, "f", O_RDONLY, 0, 0x40));
	show("beneath and in_root", oa2(basefd, "f", O_RDONLY, 0, BEN | INR));
	show("unknown open flag",
	     oa2(basefd, "f", O_RDONLY | (1ULL << 40), 0, 0));
	show("unknown low open flag",
	     oa2(basefd, "f", O_RDONLY | 040000000, 0, 0));
	show("unknown open flag for openat",
	     openat(basefd, "f", O_RDONLY | 040000000));
	show("mode without creat", oa2(basefd, "f", O_RDONLY, 0644, 0));
	show("mode with type bits",
	     oa2(basefd, "n1", O_WRONLY | O_CREAT, S_IFREG | 0644, 0));
	show("mode 07777 with creat",
	     oa2(basefd, "n2", O_WRONLY | O_CREAT, 07777, 0));
	show("directory and creat",
	     oa2(basefd, "n3", O_RDONLY | O_DIRECTORY | O_CREAT, 0644, 0));
	show("tmpfile read-only",
	     oa2(basefd, ".", O_TMPFILE | O_RDONLY, 0600, 0));
	show("path with rdwr", oa2(basefd, "f", O_PATH | O_RDWR, 0, 0));
	show("path with cloexec nofollow",
	     oa2(basefd, "f", O_PATH | O_CLOEXEC | O_NOFOLLOW, 0, 0));
	errno = 0;
	fd = syscall(SYS_openat2, basefd, "f", &big.how, 23);
	show("size 23", fd);
	fd = syscall(SYS_openat2, basefd, "f", &big.how, 0);
	show("size 0", fd);
	fd = syscall(SYS_openat2, basefd, "f", &big, sizeof(big));
	show("size 32 zero tail", fd);
	big.extra = 1;
	fd = syscall(SYS_openat2, basefd, "f", &big, sizeof(big));
	show("size 32 non-zero tail", fd);
	fd = syscall(SYS_openat2, basefd, "f", &big.how, 4097);
	show("size past a page", fd);
	fd = syscall(SYS_openat2, basefd, "f", (void *)8, sizeof(big.how));
	show("bad how pointer", fd);
	fd = syscall(SYS_openat2, basefd, (void *)8, &big.how, sizeof(big.how));
	show("bad path pointer", fd);
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 3 && !strcmp(argv[1], "cold"))
		return cold(argv[2]);
	if (argc == 5 && !strcmp(argv[1], "one")) {
		int dfd = open(argv[2], O_PATH | O_DIRECTORY);
		show(argv[3], oa2(dfd, argv[3], O_RDONLY, 0,
				  strtoull(argv[4], NULL, 0)));
		return 0;
	}
	if (argc != 2) {
		fprintf(stderr,
			"usage: %s BASE | cold PATH | one DIR PATH RESOLVE\n",
			argv[0]);
		return 2;
	}
	setup(argv[1]);
	beneath();
	in_root();
	no_symlinks();
	no_magiclinks();
	no_xdev();
	cached();
	arguments();
	return 0;
}
