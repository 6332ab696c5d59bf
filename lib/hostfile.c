/* lib/hostfile.c: host files written and removed without following planted
 * links (see hostfile.h). */
#include "lib/hostfile.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

int hostdir_open(const char *path, const char *what, unsigned flags,
		 struct stat *st, struct moat_error *err)
{
	struct stat sb;
	int fd, rfd, e;

	if (!st)
		st = &sb;
	/* O_PATH first: the owner and mode are checked (and said) even of a
	 * directory we may not read */
	fd = open(path, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		e = errno;
		if (e == ELOOP || (e == ENOTDIR && lstat(path, &sb) == 0 &&
				   S_ISLNK(sb.st_mode)))
			return moat_error_input(err, ELOOP,
						"%s `%s` is a symbolic link, "
						"not a directory",
						what, path);
		if (e == ENOTDIR)
			return moat_error_input(err, ENOTDIR,
						"%s `%s` is not a directory",
						what, path);
		return moat_error_set(err, e, "%s `%s`", what, path);
	}
	if (fstat(fd, st) < 0) {
		e = errno;
		close(fd);
		return moat_error_set(err, e, "%s `%s`", what, path);
	}
	/* Another owner could replace any entry at will, and so can anyone
	 * with write permission: what moat would find there is theirs. */
	if (st->st_uid != geteuid()) {
		close(fd);
		return moat_error_input(err, EPERM,
					"%s `%s` is owned by uid %u, not by "
					"uid %u",
					what, path, (unsigned)st->st_uid,
					(unsigned)geteuid());
	}
	if (st->st_mode & (flags & HOSTDIR_PRIVATE ? 077 : 022)) {
		close(fd);
		return moat_error_input(err, EPERM,
					"%s `%s` is open to others (mode %04o)",
					what, path,
					(unsigned)(st->st_mode & 07777));
	}
	/* the same directory, now for reading and fchmod */
	rfd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	e = errno;
	close(fd);
	if (rfd < 0)
		return moat_error_set(err, e, "%s `%s`", what, path);
	return rfd;
}

int write_file_at(int dirfd, const char *name, const void *buf, size_t len,
		  mode_t mode)
{
	char tmp[NAME_MAX + 1];
	uint32_t r;
	int fd = -1, e, i;

	/* A random name, opened O_EXCL: whoever can write the directory can
	 * neither guess it in advance nor have us open what they put there
	 * (O_EXCL fails on any existing entry, a link included). */
	for (i = 0; i < 16 && fd < 0; i++) {
		if (getrandom(&r, sizeof(r), 0) != sizeof(r))
			return -errno;
		if ((size_t)snprintf(tmp, sizeof(tmp), ".%.*s.%08x",
				     NAME_MAX - 10, name, r) >= sizeof(tmp))
			return -ENAMETOOLONG;
		fd = openat(dirfd, tmp,
			    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
				    O_NOCTTY | O_CLOEXEC,
			    mode);
		if (fd < 0 && errno != EEXIST)
			return -errno;
	}
	if (fd < 0)
		return -EEXIST;
	/* The mode given, whatever the umask (state files must be 0600 and
	 * pid files readable as runc's are). */
	if (fchmod(fd, mode) < 0 || write_all(fd, buf, len) < 0 ||
	    fsync(fd) < 0) {
		e = errno;
		close(fd);
		unlinkat(dirfd, tmp, 0);
		return -e;
	}
	close(fd);
	if (renameat(dirfd, tmp, dirfd, name) < 0) {
		e = errno;
		unlinkat(dirfd, tmp, 0);
		return -e;
	}
	return 0;
}

int write_file_path(const char *path, const void *buf, size_t len, mode_t mode)
{
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	char dir[PATH_MAX] = ".";
	int dfd, rc;

	if (!*base || !strcmp(base, ".") || !strcmp(base, ".."))
		return -EISDIR;
	if (slash == path)
		strcpy(dir, "/");
	else if (slash &&
		 (size_t)snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path),
				  path) >= sizeof(dir))
		return -ENAMETOOLONG;
	dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	rc = write_file_at(dfd, base, buf, len, mode);
	close(dfd);
	return rc;
}

void remove_tree_at(int parent, const char *name)
{
	int fd = openat(parent, name,
			O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d;
	struct dirent *e;

	if (fd < 0) {
		/* not a directory (a link, say): the name itself goes */
		if (errno == ELOOP || errno == ENOTDIR)
			unlinkat(parent, name, 0);
		return;
	}
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return;
	}
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		/* unlinkat never follows a link; a directory is tried as
		 * empty */
		if (unlinkat(fd, e->d_name, 0) < 0 && errno == EISDIR)
			unlinkat(fd, e->d_name, AT_REMOVEDIR);
	}
	closedir(d);
	unlinkat(parent, name, AT_REMOVEDIR);
}

int open_log(const char *path)
{
	struct stat st;
	int fd;

	if (!strcmp(path, "/dev/stdout") || !strcmp(path, "/dev/stderr")) {
		fd = fcntl(path[5] == 'o' ? 1 : 2, F_DUPFD_CLOEXEC, 3);
		return fd < 0 ? -errno : fd;
	}
	fd = open(path,
		  O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_NONBLOCK |
			  O_NOCTTY | O_CLOEXEC,
		  0600);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 ||
	    !((S_ISREG(st.st_mode) && st.st_nlink == 1) ||
	      S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode))) {
		close(fd);
		return -EMLINK;
	}
	/* O_NONBLOCK stays: a FIFO's reader (anyone who could make the FIFO
	 * in a directory they write) that never reads would otherwise hold
	 * root's next write for ever. A full FIFO fails with EAGAIN and the
	 * line is dropped; a regular file ignores the flag. */
	return fd;
}
