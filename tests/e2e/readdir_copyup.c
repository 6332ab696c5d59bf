/* List a merged overlay directory with small getdents buffers while every
 * subdirectory in it is copied up (chmod to its own mode) after the first
 * buffer: no entry may be lost or listed twice. Prints the three counts:
 * before, during the copy-ups, after. */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

struct d64 {
	unsigned long ino;
	long off;
	unsigned short reclen;
	unsigned char type;
	char name[];
};

static void copy_up_all(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	struct stat st;
	char path[4096];

	while (d && (e = readdir(d))) {
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (e->d_name[0] != '.' && lstat(path, &st) == 0 &&
		    S_ISDIR(st.st_mode))
			chmod(path, st.st_mode & 07777);
	}
	if (d)
		closedir(d);
}

static int count(const char *dir, int copy_up)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY), n = 0;
	char buf[256];
	long r, p;

	while ((r = syscall(SYS_getdents64, fd, buf, sizeof(buf))) > 0) {
		for (p = 0; p < r; n++)
			p += ((struct d64 *)(buf + p))->reclen;
		if (copy_up) {
			copy_up_all(dir);
			copy_up = 0;
		}
	}
	close(fd);
	return n;
}

int main(int argc, char **argv)
{
	char p[4096];
	int a, b, c;

	if (argc != 2)
		return 2;
	snprintf(p, sizeof(p), "%s/moat-marker", argv[1]); /* merge it */
	close(open(p, O_CREAT | O_WRONLY, 0644));
	a = count(argv[1], 0);
	b = count(argv[1], 1);
	c = count(argv[1], 0);
	printf("%d %d %d\n", a, b, c);
	return 0;
}
