/* tests/escape/masked_paths.c TOKEN: a container's process trying to undo
 * its masks and read-only paths (tests/escape/test_masked_paths.sh).
 *
 * The bundle masks /etc/secret (a file holding TOKEN), /w/d/secret (one
 * in a host directory bound rw at /w) and /hidden (a directory whose file
 * `inner` holds TOKEN), and makes /ro read-only (the
 * file /ro/f holding "keep", mode 0644, and the empty directory /ro/sub).
 * The rootfs is writable, so what lands outside those paths lands.
 *
 * Each attempt prints "NAME held" when, after it, no name the attempts
 * make reads TOKEN and /ro is as it was; else "NAME BROKEN: why". What
 * the syscalls return is not printed: runc and moat may refuse one trick
 * with different errors (or runc may let a harmless one succeed, chmod of
 * the /dev/null over /etc/secret), but neither may let one work. Runs
 * static in a busybox rootfs, under runc and moat alike. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/xattr.h>
#include <unistd.h>

static const char *token;
static char why[512];

/* Names the attempts may have made the secret reachable by. */
static const char *const secret_names[] = {
	"/etc/secret",
	"/etc2/secret",
	"/tmp/s",
	"/tmp/hl",
	"/etc/hl",
	"/tmp/l",
	"/tmp/e/secret",
	"/hidden/inner",
	"/hidden2/inner",
	"/tmp/h/inner",
	"/proc/self/root/etc/secret",
	"/proc/self/root/hidden/inner",
	"/tmp/fdlink",
	"/tmp/over",
	"/w/d/secret",
	"/w/e/secret",
	"/w/e2/secret",
	NULL,
};

static int read_all(int fd, char *buf, size_t cap)
{
	size_t n = 0;
	ssize_t r;

	while (n < cap - 1 && (r = read(fd, buf + n, cap - 1 - n)) > 0)
		n += (size_t)r;
	buf[n] = 0;
	return (int)n;
}

/* Does the file at path (or fd >= 0) read TOKEN? */
static int leaks_fd(int fd)
{
	char buf[4096];

	if (fd < 0)
		return 0;
	read_all(fd, buf, sizeof(buf));
	close(fd);
	return strstr(buf, token) != NULL;
}

static int leaks(const char *path)
{
	return leaks_fd(open(path, O_RDONLY | O_NONBLOCK));
}

/* Is /ro as the bundle made it? */
static int ro_intact(void)
{
	char buf[64];
	struct stat st;
	struct dirent *e;
	DIR *d;
	int fd, n = 0;

	fd = open("/ro/f", O_RDONLY);
	if (fd < 0) {
		snprintf(why, sizeof(why), "/ro/f: %s", strerror(errno));
		return 0;
	}
	read_all(fd, buf, sizeof(buf));
	close(fd);
	if (strcmp(buf, "keep\n")) {
		snprintf(why, sizeof(why), "/ro/f holds `%s`", buf);
		return 0;
	}
	if (stat("/ro/f", &st) < 0 || (st.st_mode & 07777) != 0644 ||
	    st.st_uid != 0 || st.st_size != 5) {
		snprintf(why, sizeof(why), "/ro/f mode %o uid %u",
			 st.st_mode & 07777, st.st_uid);
		return 0;
	}
	if (stat("/ro", &st) < 0 || (st.st_mode & 07777) != 0755) {
		snprintf(why, sizeof(why), "/ro mode %o", st.st_mode & 07777);
		return 0;
	}
	d = opendir("/ro");
	if (!d) {
		snprintf(why, sizeof(why), "/ro: %s", strerror(errno));
		return 0;
	}
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (strcmp(e->d_name, "f") && strcmp(e->d_name, "sub")) {
			snprintf(why, sizeof(why), "/ro has `%s`", e->d_name);
			closedir(d);
			return 0;
		}
		n++;
	}
	closedir(d);
	if (n != 2) {
		snprintf(why, sizeof(why), "/ro has %d entries", n);
		return 0;
	}
	d = opendir("/ro/sub");
	while (d && (e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
			snprintf(why, sizeof(why), "/ro/sub has `%s`",
				 e->d_name);
			closedir(d);
			return 0;
		}
	if (d)
		closedir(d);
	return 1;
}

static void check(const char *name)
{
	why[0] = 0;
	for (const char *const *p = secret_names; *p; p++)
		if (leaks(*p)) {
			snprintf(why, sizeof(why), "%s reads the secret", *p);
			break;
		}
	if (!why[0] && leaks("/tmp/hidden-ls"))
		snprintf(why, sizeof(why), "/hidden lists `inner`");
	if (!why[0])
		ro_intact();
	if (why[0])
		printf("%s BROKEN: %s\n", name, why);
	else
		printf("%s held\n", name);
	fflush(stdout);
}

static void put(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	if (fd >= 0) {
		(void)!write(fd, s, strlen(s));
		close(fd);
	}
}

/* Write through fd (if open) and close it. */
static void scribble(int fd)
{
	if (fd >= 0) {
		(void)!write(fd, "gone\n", 5);
		close(fd);
	}
}

int main(int argc, char **argv)
{
	char path[256];
	int fd, dfd;

	if (argc < 2)
		return 2;
	token = argv[1];
	put("/tmp/decoy", "decoy\n");
	mkdir("/tmp/d", 0755);
	check("start");

	/* unmount them, detached or not, or mount over them */
	umount2("/etc/secret", 0);
	umount2("/etc/secret", MNT_DETACH);
	umount2("/hidden", MNT_DETACH);
	umount2("/ro", MNT_DETACH);
	check("umount");
	mount("/tmp/decoy", "/etc/secret", NULL, MS_BIND, NULL);
	mount("/tmp/d", "/hidden", NULL, MS_BIND, NULL);
	mount(NULL, "/ro", NULL, MS_REMOUNT | MS_BIND, NULL);
	mount("tmpfs", "/ro", "tmpfs", 0, NULL);
	mount("/ro", "/tmp/d", NULL, MS_BIND, NULL);
	scribble(open("/tmp/d/f", O_WRONLY | O_TRUNC));
	check("mount");

	/* rename or remove them, or their parents; rename over them */
	rename("/tmp/decoy", "/etc/secret");
	rename("/etc/secret", "/tmp/s");
	unlink("/etc/secret");
	rename("/tmp/d", "/hidden");
	rmdir("/hidden");
	rename("/hidden", "/hidden2");
	rename("/ro", "/ro2");
	rename("/ro/f", "/tmp/over");
	syscall(SYS_renameat2, AT_FDCWD, "/tmp/decoy", AT_FDCWD, "/etc/secret",
		2 /* RENAME_EXCHANGE */);
	rename("/etc", "/etc2");
	rename("/etc2", "/etc");
	/* in a host directory bound rw, whose directories do move */
	rename("/w/d", "/w/e");
	mkdir("/w/e2", 0755);
	syscall(SYS_renameat2, AT_FDCWD, "/w/d", AT_FDCWD, "/w/e2",
		2 /* RENAME_EXCHANGE */);
	check("rename");

	/* other names for them: fds, /proc/self, symlinks, dot-dot */
	fd = open("/etc/secret", O_PATH);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	if (leaks(path))
		printf("fd-reopen BROKEN: %s reads the secret\n", path);
	symlink(path, "/tmp/fdlink");
	linkat(fd, "", AT_FDCWD, "/tmp/hl", AT_EMPTY_PATH);
	close(fd);
	dfd = open("/etc", O_DIRECTORY | O_RDONLY);
	if (leaks_fd(openat(dfd, "secret", O_RDONLY)))
		printf("openat BROKEN: /etc's fd opens the secret\n");
	close(dfd);
	if (leaks("/etc/../etc/./secret") || leaks("//etc//secret"))
		printf("dotdot BROKEN\n");
	if (!chdir("/etc") && leaks("secret"))
		printf("cwd BROKEN\n");
	if (leaks("/proc/self/cwd/secret"))
		printf("proc-cwd BROKEN\n");
	chdir("/");
	symlink("/etc/secret", "/tmp/l");
	symlink("/etc", "/tmp/e");
	symlink("/hidden", "/tmp/h");
	{
		struct {
			struct file_handle fh;
			char buf[128];
		} h = { .fh.handle_bytes = 128 };
		int mid;

		if (name_to_handle_at(AT_FDCWD, "/etc", &h.fh, &mid, 0) == 0) {
			dfd = open_by_handle_at(AT_FDCWD, &h.fh, O_RDONLY);
			if (dfd >= 0 &&
			    leaks_fd(openat(dfd, "secret", O_RDONLY)))
				printf("handle BROKEN: /etc by handle\n");
		}
	}
	check("other-names");

	/* hard links to them, from inside and outside */
	link("/etc/secret", "/tmp/hl");
	link("/etc/secret", "/etc/hl");
	link("/ro/f", "/tmp/rolink");
	scribble(open("/tmp/rolink", O_WRONLY | O_TRUNC));
	fd = open("/ro/f", O_PATH);
	linkat(fd, "", AT_FDCWD, "/tmp/rolink2", AT_EMPTY_PATH);
	close(fd);
	scribble(open("/tmp/rolink2", O_WRONLY | O_TRUNC));
	link("/tmp/decoy", "/ro/new");
	check("link");

	/* mode, owner, times, attributes */
	chmod("/etc/secret", 0777);
	chmod("/hidden", 0777);
	chmod("/ro", 0777);
	chmod("/ro/f", 0777);
	chown("/ro/f", 1000, 1000);
	fd = open("/ro/f", O_RDONLY);
	fchmod(fd, 0777);
	fchown(fd, 1000, 1000);
	close(fd);
	fd = open("/ro/f", O_PATH);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	chmod(path, 0777);
	close(fd);
	utimes("/ro/f", NULL);
	setxattr("/ro/f", "user.x", "1", 1, 0);
	check("chmod");

	/* writes into the read-only directory, every way in */
	scribble(open("/ro/f", O_WRONLY | O_TRUNC));
	scribble(open("/ro/f", O_RDWR | O_APPEND));
	truncate("/ro/f", 0);
	dfd = open("/ro", O_PATH | O_DIRECTORY);
	scribble(openat(dfd, "f", O_WRONLY | O_TRUNC));
	scribble(openat(dfd, "new", O_WRONLY | O_CREAT, 0644));
	snprintf(path, sizeof(path), "/proc/self/fd/%d/f", dfd);
	scribble(open(path, O_WRONLY | O_TRUNC));
	close(dfd);
	fd = open("/ro/f", O_RDONLY);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	scribble(open(path, O_RDWR));
	close(fd);
	scribble(open("/proc/self/root/ro/f", O_RDWR));
	scribble(open("/ro/new", O_WRONLY | O_CREAT, 0644));
	scribble(open("/ro/sub/new", O_WRONLY | O_CREAT, 0644));
	mkdir("/ro/d", 0755);
	mkdir("/ro/sub/d", 0755);
	mknod("/ro/fifo", S_IFIFO | 0644, 0);
	symlink("/etc", "/ro/l");
	rename("/ro/f", "/ro/g");
	rename("/ro/sub", "/ro/sub2");
	rename("/tmp/decoy", "/ro/f");
	rmdir("/ro/sub");
	unlink("/ro/f");
	check("write");

	/* the masked directory: its files, and new ones */
	scribble(open("/hidden/new", O_WRONLY | O_CREAT, 0644));
	mkdir("/hidden/d", 0755);
	{
		DIR *d = opendir("/hidden");
		struct dirent *e;

		while (d && (e = readdir(d)))
			if (!strcmp(e->d_name, "inner")) {
				char s[128];
				snprintf(s, sizeof(s), "%s\n", token);
				put("/tmp/hidden-ls", s);
			}
		if (d)
			closedir(d);
	}
	check("masked-dir");

	/* the masked file reads empty, and takes writes (it is /dev/null) */
	fd = open("/etc/secret", O_RDWR);
	if (fd < 0 || write(fd, "x", 1) != 1 || lseek(fd, 0, SEEK_SET) < 0) {
		printf("masked-file BROKEN: /etc/secret does not take writes\n");
	} else {
		char c;
		printf("masked-file %s\n",
		       read(fd, &c, 1) == 0 ? "held" : "BROKEN: not empty");
	}
	return 0;
}
