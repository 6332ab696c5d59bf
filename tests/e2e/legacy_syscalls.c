/* tests/e2e/legacy_syscalls.c: the legacy syscalls old static binaries
 * make (glibc before 2.28, uClibc, busybox's ls and touch), issued raw:
 * getdents (struct linux_dirent, d_type in the record's last byte), utime,
 * utimes, futimesat, time. Built -static; prints the same natively and
 * under moat.
 *
 *   legacy_syscalls make DIR   make DIR's entries, then ls and touch in it
 *   legacy_syscalls ls DIR     a mini ls of an existing directory
 *   legacy_syscalls touch FILE a mini touch of an existing file
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
#include <utime.h>

struct linux_dirent {
	unsigned long d_ino;
	unsigned long d_off;
	unsigned short d_reclen;
	char d_name[];
};

struct entry {
	char name[256];
	unsigned char type;
	uint64_t ino;
	int64_t off;
};

static const char *errname(int e)
{
	const char *n = strerrorname_np(e);
	return n ? n : "?";
}

static void res(const char *name, long rc)
{
	if (rc < 0)
		printf("%s: %s\n", name, errname(errno));
	else
		printf("%s: ok\n", name);
}

static const char *type_name(unsigned char t)
{
	switch (t) {
	case DT_REG:
		return "file";
	case DT_DIR:
		return "dir";
	case DT_LNK:
		return "symlink";
	case DT_FIFO:
		return "fifo";
	case DT_UNKNOWN:
		return "unknown";
	default:
		return "other";
	}
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct entry *)a)->name,
		      ((const struct entry *)b)->name);
}

/* Every entry of fd, read with getdents (legacy) or getdents64, in a
 * small buffer so that one listing takes many calls. */
static int list(int fd, bool legacy, struct entry *e, int max, size_t bufsz)
{
	char buf[4096];
	int n = 0;

	lseek(fd, 0, SEEK_SET);
	for (;;) {
		long len = syscall(legacy ? SYS_getdents : SYS_getdents64, fd,
				   buf, bufsz);
		if (len < 0) {
			printf("%s: %s\n", legacy ? "getdents" : "getdents64",
			       errname(errno));
			exit(1);
		}
		if (len == 0)
			return n;
		for (long pos = 0; pos < len && n < max;) {
			if (legacy) {
				struct linux_dirent *d = (void *)(buf + pos);
				snprintf(e[n].name, sizeof(e[n].name), "%s",
					 d->d_name);
				e[n].type = (unsigned char)
					buf[pos + d->d_reclen - 1];
				e[n].ino = d->d_ino;
				e[n].off = (int64_t)d->d_off;
				pos += d->d_reclen;
			} else {
				struct dirent64 *d = (void *)(buf + pos);
				snprintf(e[n].name, sizeof(e[n].name), "%s",
					 d->d_name);
				e[n].type = d->d_type;
				e[n].ino = d->d_ino;
				e[n].off = d->d_off;
				pos += d->d_reclen;
			}
			n++;
		}
	}
}

#define MAX_ENTRIES 512

static void mini_ls(const char *dir)
{
	static struct entry a[MAX_ENTRIES], b[MAX_ENTRIES], c[MAX_ENTRIES];
	int fd = open(dir, O_RDONLY | O_DIRECTORY), n, m, k, i, bad = 0;
	struct stat st;
	char buf[64];

	if (fd < 0) {
		printf("open %s\n", errname(errno));
		exit(1);
	}
	n = list(fd, true, a, MAX_ENTRIES, 96);
	m = list(fd, false, b, MAX_ENTRIES, 4096);
	printf("ls: %d entries, getdents64 has %d\n", n, m);
	/* what busybox's ls prints: names in order, with their types */
	qsort(a, (size_t)n, sizeof(a[0]), by_name);
	qsort(b, (size_t)m, sizeof(b[0]), by_name);
	for (i = 0; i < n; i++) {
		if (i >= m || strcmp(a[i].name, b[i].name) ||
		    a[i].type != b[i].type || a[i].ino != b[i].ino)
			bad++;
		if (fstatat(fd, a[i].name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    st.st_ino != a[i].ino)
			bad++;
		if (strcmp(a[i].name, ".") && strcmp(a[i].name, ".."))
			printf("  %s %s\n", a[i].name, type_name(a[i].type));
	}
	printf("ls: same as getdents64, inodes as stat: %s\n",
	       bad ? "NO" : "yes");
	/* seekdir to a d_off, as old libcs do when their buffer is full */
	k = list(fd, true, c, MAX_ENTRIES, 4096);
	if (k > 3) {
		lseek(fd, c[1].off, SEEK_SET);
		long len = syscall(SYS_getdents, fd, buf, sizeof(buf));
		struct linux_dirent *d = (void *)buf;
		printf("ls: lseek to the second entry's d_off resumes at the "
		       "third: %s\n",
		       len > 0 && !strcmp(d->d_name, c[2].name) ? "yes" : "NO");
	}
	res("getdents too small a buffer", syscall(SYS_getdents, fd, buf, 8));
	res("getdents bad buffer",
	    syscall(SYS_getdents, fd, (void *)8, sizeof(buf)));
	res("getdents bad fd", syscall(SYS_getdents, 999, buf, sizeof(buf)));
	close(fd);
}

static void show_times(const char *what, const char *path)
{
	struct stat st;

	if (stat(path, &st) < 0) {
		printf("%s: stat %s\n", what, errname(errno));
		return;
	}
	printf("%s: atime %lld.%09ld mtime %lld.%09ld\n", what,
	       (long long)st.st_atim.tv_sec, st.st_atim.tv_nsec,
	       (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
}

/* "now" is not printed: it only must be close to the clock. */
static void show_now(const char *what, const char *path)
{
	struct stat st;
	time_t now = (time_t)syscall(SYS_time, NULL);

	if (stat(path, &st) < 0) {
		printf("%s: stat %s\n", what, errname(errno));
		return;
	}
	printf("%s: mtime is now: %s\n", what,
	       st.st_mtime >= now - 60 && st.st_mtime <= now + 1 ? "yes" :
								   "NO");
}

static void mini_touch(const char *path)
{
	struct utimbuf ub = { 1000000000, 1200000000 };
	struct timeval tv[2] = { { 1300000000, 250000 },
				 { 1400000000, 500000 } };
	struct timeval badtv[2] = { { 1, 1000000 }, { 1, 0 } };
	char dir[4096], *slash;
	int dfd, fd;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	*slash = 0;
	dfd = open(dir, O_RDONLY | O_DIRECTORY);
	res("utime explicit", syscall(SYS_utime, path, &ub));
	show_times("after utime", path);
	res("utime now", syscall(SYS_utime, path, NULL));
	show_now("after utime now", path);
	res("utimes explicit", syscall(SYS_utimes, path, tv));
	show_times("after utimes", path);
	res("utimes now", syscall(SYS_utimes, path, NULL));
	show_now("after utimes now", path);
	res("utimes bad usec", syscall(SYS_utimes, path, badtv));
	badtv[0].tv_usec = -1;
	res("utimes negative usec", syscall(SYS_utimes, path, badtv));
	res("utimes bad pointer", syscall(SYS_utimes, path, (void *)8));
	res("utime missing file", syscall(SYS_utime, "/nonexistent/x", NULL));
	res("utime null path", syscall(SYS_utime, NULL, NULL));
	res("utimes null path", syscall(SYS_utimes, NULL, NULL));
	tv[1].tv_sec = 1500000000;
	res("futimesat by name", syscall(SYS_futimesat, dfd, slash + 1, tv));
	show_times("after futimesat", path);
	fd = open(path, O_RDONLY);
	tv[1].tv_sec = 1600000000;
	res("futimesat of an fd", syscall(SYS_futimesat, fd, NULL, tv));
	show_times("after futimesat of an fd", path);
	res("futimesat cwd null path",
	    syscall(SYS_futimesat, AT_FDCWD, NULL, tv));
	res("futimesat bad dirfd", syscall(SYS_futimesat, 999, "x", tv));
	res("utimensat cwd null path",
	    syscall(SYS_utimensat, AT_FDCWD, NULL, NULL, 0));
	res("utimensat of an fd with flags",
	    syscall(SYS_utimensat, fd, NULL, NULL, AT_SYMLINK_NOFOLLOW));
	res("utimensat bad nsec of a missing file",
	    syscall(SYS_utimensat, AT_FDCWD, "/nonexistent/x",
		    (struct timespec[2]){ { 0, -5 }, { 0, 0 } }, 0));
	close(fd);
	close(dfd);
	printf("time: %s\n",
	       syscall(SYS_time, NULL) > 1600000000 ? "ok" : "NO");
}

static void make(const char *dir)
{
	char p[4096];
	int i;

	if (mkdir(dir, 0755) < 0) {
		perror(dir);
		exit(1);
	}
	for (i = 0; i < 40; i++) {
		snprintf(p, sizeof(p), "%s/file-%02d-with-a-longer-name", dir,
			 i);
		close(creat(p, 0644));
	}
	snprintf(p, sizeof(p), "%s/a", dir);
	close(creat(p, 0644));
	snprintf(p, sizeof(p), "%s/sub", dir);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/link", dir);
	if (symlink("a", p) < 0)
		perror("symlink");
	snprintf(p, sizeof(p), "%s/fifo", dir);
	if (mkfifo(p, 0644) < 0)
		perror("mkfifo");
	mini_ls(dir);
	snprintf(p, sizeof(p), "%s/a", dir);
	mini_touch(p);
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 3 && !strcmp(argv[1], "make"))
		make(argv[2]);
	else if (argc == 3 && !strcmp(argv[1], "ls"))
		mini_ls(argv[2]);
	else if (argc == 3 && !strcmp(argv[1], "touch"))
		mini_touch(argv[2]);
	else {
		fprintf(stderr, "usage: %s make|ls DIR | touch FILE\n",
			argv[0]);
		return 2;
	}
	return 0;
}
