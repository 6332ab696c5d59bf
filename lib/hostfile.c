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
	char base[NAME_MAX + 1];
	struct stat sb;
	int dfd, fd, rfd, e;

	if (!st)
		st = &sb;
	/* O_PATH first: the owner and mode are checked (and said) even of a
	 * directory we may not read. Its directory is hostpath_parent's: a
	 * link of another user's on the way is not followed. */
	dfd = hostpath_parent(path, base);
	if (dfd < 0)
		return moat_error_set(err, -dfd, "%s `%s`", what, path);
	fd = openat(dfd, base, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		e = errno;
		if (e == ELOOP ||
		    (e == ENOTDIR &&
		     fstatat(dfd, base, &sb, AT_SYMLINK_NOFOLLOW) == 0 &&
		     S_ISLNK(sb.st_mode))) {
			close(dfd);
			return moat_error_input(err, ELOOP,
						"%s `%s` is a symbolic link, "
						"not a directory",
						what, path);
		}
		close(dfd);
		if (e == ENOTDIR)
			return moat_error_input(err, ENOTDIR,
						"%s `%s` is not a directory",
						what, path);
		return moat_error_set(err, e, "%s `%s`", what, path);
	}
	close(dfd);
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

/* May a link that dir (open, O_PATH) holds, of owner link_uid, be
 * followed? protected_symlinks' rule, for every directory, not only
 * sticky world-writable ones: when the link is root's or ours, or when
 * no one else could have put it there (the directory is root's or ours
 * and writable by no one else). */
static bool link_trusted(int dir, uid_t link_uid)
{
	struct stat st;

	if (link_uid == 0 || link_uid == geteuid())
		return true;
	return fstat(dir, &st) == 0 &&
	       (st.st_uid == 0 || st.st_uid == geteuid()) &&
	       !(st.st_mode & 022);
}

int hostpath_parent(const char *path, char base[NAME_MAX + 1])
{
	/* what is left to walk: the path, with each followed link's target
	 * put in front of the rest */
	char rest[2 * PATH_MAX], target[PATH_MAX];
	size_t len = strlen(path);
	int cur, next, links = 0;
	char *p, *c;
	struct stat st;
	ssize_t n;

	while (len > 1 && path[len - 1] == '/')
		len--;
	if (!len)
		return -ENOENT;
	if (len >= PATH_MAX)
		return -ENAMETOOLONG;
	memcpy(rest, path, len);
	rest[len] = 0;
	/* the last component is the caller's, never resolved here: rest
	 * becomes its directory ("" for the working directory) */
	c = strrchr(rest, '/');
	if (!strcmp(rest, "/")) {
		strcpy(base, ".");
	} else if (strlen(c ? c + 1 : rest) > NAME_MAX) {
		return -ENAMETOOLONG;
	} else if (!c) {
		strcpy(base, rest);
		rest[0] = 0;
	} else {
		strcpy(base, c + 1);
		c[c == rest] = 0; /* "/x": "/" is left */
	}
	cur = open(rest[0] == '/' ? "/" : ".",
		   O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (cur < 0)
		return -errno;
	p = rest;
	while (*p) {
		while (*p == '/')
			p++;
		if (!*p)
			break;
		c = p;
		p += strcspn(p, "/");
		if (*p)
			*p++ = 0;
		if (!strcmp(c, "."))
			continue;
		next = openat(cur, c, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0 || fstat(next, &st) < 0)
			goto fail;
		if (S_ISDIR(st.st_mode)) {
			close(cur);
			cur = next;
			continue;
		}
		if (!S_ISLNK(st.st_mode)) {
			close(next);
			errno = ENOTDIR;
			goto fail;
		}
		/* a link: followed only when trusted, as at most 40 */
		close(next);
		if (++links > 40 || !link_trusted(cur, st.st_uid)) {
			errno = ELOOP;
			goto fail;
		}
		n = readlinkat(cur, c, target, sizeof(target) - 1);
		if (n <= 0) {
			errno = n == 0 ? ENOENT : errno;
			goto fail;
		}
		target[n] = 0;
		if ((size_t)n + 1 + strlen(p) >= sizeof(rest)) {
			errno = ENAMETOOLONG;
			goto fail;
		}
		/* target, then what was left (p is inside rest) */
		memmove(rest + n + 1, p, strlen(p) + 1);
		memcpy(rest, target, (size_t)n);
		rest[n] = '/';
		p = rest;
		if (target[0] == '/') {
			close(cur);
			cur = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
			if (cur < 0)
				return -errno;
		}
	}
	return cur;
fail:
	n = errno;
	close(cur);
	return (int)-n;
}

int write_file_path(const char *path, const void *buf, size_t len, mode_t mode)
{
	char base[NAME_MAX + 1];
	int dfd, rc;

	dfd = hostpath_parent(path, base);
	if (dfd < 0)
		return dfd;
	if (!strcmp(base, ".") || !strcmp(base, "..")) {
		close(dfd);
		return -EISDIR;
	}
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
	char base[NAME_MAX + 1];
	struct stat st;
	int fd, dfd, e;

	if (!strcmp(path, "/dev/stdout") || !strcmp(path, "/dev/stderr")) {
		fd = fcntl(path[5] == 'o' ? 1 : 2, F_DUPFD_CLOEXEC, 3);
		return fd < 0 ? -errno : fd;
	}
	dfd = hostpath_parent(path, base);
	if (dfd < 0)
		return dfd;
	fd = openat(dfd, base,
		    O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_NONBLOCK |
			    O_NOCTTY | O_CLOEXEC,
		    0600);
	e = errno;
	close(dfd);
	if (fd < 0)
		return -e;
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
