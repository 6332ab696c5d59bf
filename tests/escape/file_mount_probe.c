/* tests/escape/file_mount_probe.c: every way a container might try to get
 * from a file bind mount at argv[1] to the host file's siblings (by "..",
 * through /proc/self/fd, a symlink, a link, a rename, a create), one line
 * each: "what errno-name" or "what ok ...". The same under runc and moat
 * (tests/escape/test_file_mount_escape.sh). Then it holds the file open
 * until the host writes "done" into it. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static const char *ename(int e)
{
	switch (e) {
	case ENOTDIR:
		return "ENOTDIR";
	case EXDEV:
		return "EXDEV";
	case EBUSY:
		return "EBUSY";
	case EEXIST:
		return "EEXIST";
	case EACCES:
		return "EACCES";
	case ENOENT:
		return "ENOENT";
	case EPERM:
		return "EPERM";
	case EROFS:
		return "EROFS";
	default:
		return strerror(e);
	}
}

static void say(const char *what, long r)
{
	if (r < 0)
		printf("%s %s\n", what, ename(errno));
	else
		printf("%s ok\n", what);
}

int main(int argc, char **argv)
{
	const char *t = argc > 1 ? argv[1] : "/dev/termination-log";
	char path[4096], lbuf[4096];
	int fd, pfd, n;
	ssize_t l;

	fd = open(t, O_RDWR);
	pfd = open(t, O_PATH);
	if (fd < 0 || pfd < 0) {
		perror(t);
		return 1;
	}
	snprintf(path, sizeof(path), "%s/..", t);
	symlink(path, "/tmp/up");
	snprintf(path, sizeof(path), "%s/../secret", t);
	say("dotdot", open(path, O_RDONLY));
	say("openat dotdot", openat(fd, "..", O_RDONLY));
	say("openat secret", openat(pfd, "secret", O_RDONLY));
	say("openat dot", openat(pfd, ".", O_RDONLY));
	say("getdents", syscall(SYS_getdents64, fd, lbuf, sizeof(lbuf)));
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	l = readlink(path, lbuf, sizeof(lbuf) - 1);
	if (l >= 0) {
		lbuf[l] = 0;
		printf("fd link %s\n", lbuf);
	} else {
		say("fd link", -1);
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d/../secret", fd);
	say("fd dotdot", open(path, O_RDONLY));
	say("symlink up", open("/tmp/up/secret", O_RDONLY));
	say("chdir", chdir(t));
	say("link out", link(t, "/tmp/t"));
	say("rename out", rename(t, "/dev/moved"));
	close(open("/tmp/other", O_WRONLY | O_CREAT, 0644));
	/* Linux: EXDEV (another mount) before EBUSY; moat: EBUSY */
	printf("rename over %s\n",
	       rename("/tmp/other", t) < 0 ? "refused" : "ok");
	say("unlink", unlink(t));
	say("create", open(t, O_RDWR | O_CREAT | O_EXCL, 0644));
	say("mkdir", mkdir(t, 0755));
	n = (int)write(fd, "from-guest\n", 11);
	printf("write %d\n", n);
	fflush(stdout);
	for (;;) {
		char buf[8] = { 0 };

		if (pread(fd, buf, 4, 0) == 4 && !memcmp(buf, "done", 4))
			break;
		usleep(20000);
	}
	return 0;
}
