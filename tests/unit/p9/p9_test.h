/* tests/unit/p9/p9_test.h: helpers shared by the p9 suites (static inline,
 * so every suite file may include it without prototypes or link clashes). */
#ifndef MOAT_TESTS_UNIT_P9_TEST_H
#define MOAT_TESTS_UNIT_P9_TEST_H

#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gofer/gofer.h"
#include "lib/util.h"
#include "prot/p9.h"

#define P9T_FILE_DATA "hello gofer\n"

/* Criterion 2.4 ignores failures in a suite's .fini (even an abort is only
 * a warning), so the no-leak check cannot live there. P9T_TEST runs the
 * test body and then `end`, the suite's function that releases everything
 * the fixture holds and asserts that no fd leaked; .fini only cleans up
 * (idempotently) after a test that failed before reaching `end`. */
#define P9T_TEST(suite, name, end)                                             \
	static void suite##__##name(void);                                     \
	Test(suite, name)                                                      \
	{                                                                      \
		suite##__##name();                                             \
		end();                                                         \
	}                                                                      \
	static void suite##__##name(void)

/* Open fds of this process, for the no-leak check of every teardown. */
static inline int p9t_count_fds(void)
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

static inline int p9t_write_file(const char *dir, const char *name,
				 const char *data)
{
	char path[4096];
	int fd;
	ssize_t n;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >=
	    sizeof(path))
		return -1;
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	n = write(fd, data, strlen(data));
	close(fd);
	return n == (ssize_t)strlen(data) ? 0 : -1;
}

/* The served tree:
 *   file.txt          "hello gofer\n"
 *   ...               a legitimate name that only looks like ".."
 *   dir/inner.txt     "inner"
 *   dir/sub/
 *   link_out -> /etc/passwd            (absolute, points outside)
 *   link_rel -> ../../../../etc/passwd (relative, climbs out)
 *   up       -> ..                     (the ".." trick as a symlink)
 *   link_in  -> file.txt
 *   fifo                               (must never be opened)
 *   mnt/                               (empty: used as a mount point)
 */
#define P9T_PATH(buf, ...)                                                     \
	((size_t)snprintf(buf, sizeof(buf), __VA_ARGS__) < sizeof(buf))

static inline int p9t_make_tree(char *dir, size_t cap)
{
	char path[4096];

	snprintf(dir, cap, "/tmp/moat-p9-XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	if (p9t_write_file(dir, "file.txt", P9T_FILE_DATA) < 0 ||
	    p9t_write_file(dir, "...", "dots") < 0)
		return -1;
	if (!P9T_PATH(path, "%s/dir", dir) || mkdir(path, 0755) < 0)
		return -1;
	if (p9t_write_file(path, "inner.txt", "inner") < 0)
		return -1;
	if (!P9T_PATH(path, "%s/dir/sub", dir) || mkdir(path, 0755) < 0)
		return -1;
	if (!P9T_PATH(path, "%s/mnt", dir) || mkdir(path, 0755) < 0)
		return -1;
	if (!P9T_PATH(path, "%s/link_out", dir) ||
	    symlink("/etc/passwd", path) < 0)
		return -1;
	if (!P9T_PATH(path, "%s/link_rel", dir) ||
	    symlink("../../../../etc/passwd", path) < 0)
		return -1;
	if (!P9T_PATH(path, "%s/up", dir) || symlink("..", path) < 0)
		return -1;
	if (!P9T_PATH(path, "%s/link_in", dir) || symlink("file.txt", path) < 0)
		return -1;
	if (!P9T_PATH(path, "%s/fifo", dir) || mkfifo(path, 0644) < 0)
		return -1;
	return 0;
}

static inline int p9t_rm_one(const char *path, const struct stat *st, int flag,
			     struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

/* Idempotent: clears dir once removed. */
static inline void p9t_rm_tree(char *dir)
{
	if (dir[0])
		nftw(dir, p9t_rm_one, 16, FTW_DEPTH | FTW_PHYS);
	dir[0] = '\0';
}

/* An unconfined gofer serving `root` on a thread, over a socketpair. */
struct p9t_server {
	pthread_t th;
	int cli; /* the client's end */
	int srv;
	int rootfd;
	unsigned flags; /* gofer_serve flags (GOFER_WRITABLE) */
	int ret;
};

static inline void *p9t_server_main(void *p)
{
	struct p9t_server *s = p;

	s->ret = gofer_serve(s->srv, s->rootfd, s->flags);
	return NULL;
}

static inline int p9t_server_start_flags(struct p9t_server *s, const char *root,
					 unsigned flags)
{
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return -1;
	s->cli = sv[0];
	s->srv = sv[1];
	s->flags = flags;
	s->rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (s->rootfd < 0)
		return -1;
	return pthread_create(&s->th, NULL, p9t_server_main, s) ? -1 : 0;
}

static inline int p9t_server_start(struct p9t_server *s, const char *root)
{
	return p9t_server_start_flags(s, root, 0);
}

/* Call after the client end was closed (p9c_close): the server sees EOF. */
static inline int p9t_server_join(struct p9t_server *s)
{
	pthread_join(s->th, NULL);
	close(s->srv);
	close(s->rootfd);
	return s->ret;
}

#endif
