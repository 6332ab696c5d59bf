/* tests/unit/hostfile/test_hostfile.c: host files written and removed
 * without following links (lib/hostfile.c). */
#include <criterion/criterion.h>

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/hostfile.h"

static char dir[64];

static void init(void)
{
	snprintf(dir, sizeof(dir), "/tmp/moat-hostfile.XXXXXX");
	cr_assert(mkdtemp(dir));
}

static void fini(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	cr_assert_eq(system(cmd), 0);
}

TestSuite(hostfile, .init = init, .fini = fini);

/* dir/name, in one of a few buffers: two may be used in one call. */
static const char *at(const char *name)
{
	static char paths[4][256];
	static unsigned k;
	char *p = paths[k++ % 4];

	snprintf(p, sizeof(paths[0]), "%s/%s", dir, name);
	return p;
}

static void put(const char *name, const char *text)
{
	FILE *f = fopen(at(name), "w");

	cr_assert(f);
	fputs(text, f);
	fclose(f);
}

static char *get(const char *name)
{
	static char buf[256];
	FILE *f = fopen(at(name), "r");
	size_t n;

	cr_assert(f, "%s", name);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = 0;
	fclose(f);
	return buf;
}

static int entries(const char *sub)
{
	DIR *d = opendir(at(sub));
	struct dirent *e;
	int n = 0;

	cr_assert(d);
	while ((e = readdir(d)))
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(d);
	return n;
}

Test(hostfile, write_replaces_a_link_at_the_name_never_its_target)
{
	struct stat st;
	int dfd = open(dir, O_PATH | O_DIRECTORY);

	put("target", "precious");
	cr_assert_eq(symlink(at("target"), at("pid")), 0);
	cr_assert_eq(write_file_at(dfd, "pid", "42", 2, 0600), 0);
	cr_assert_str_eq(get("target"), "precious");
	cr_assert_eq(lstat(at("pid"), &st), 0);
	cr_assert(S_ISREG(st.st_mode), "the link is replaced by the file");
	cr_assert_eq(st.st_mode & 07777, 0600, "the mode given, not the umask");
	cr_assert_str_eq(get("pid"), "42");
	cr_assert_eq(entries("."), 2, "no temporary file is left");
	close(dfd);
}

Test(hostfile, write_never_opens_an_old_temporary_name)
{
	/* What moat and runc used before: PATH.tmp and .PATH */
	put("target", "precious");
	cr_assert_eq(symlink(at("target"), at("f.tmp")), 0);
	cr_assert_eq(symlink(at("target"), at(".f")), 0);
	cr_assert_eq(write_file_path(at("f"), "x\n", 2, 0644), 0);
	cr_assert_str_eq(get("target"), "precious");
	cr_assert_str_eq(get("f"), "x\n");
}

Test(hostfile, write_path_of_a_missing_directory)
{
	cr_assert_eq(write_file_path(at("no/such"), "x", 1, 0644), -ENOENT);
	cr_assert_eq(write_file_path(at(".."), "x", 1, 0644), -EISDIR);
}

Test(hostfile, remove_never_empties_through_a_link)
{
	int dfd = open(dir, O_PATH | O_DIRECTORY);

	cr_assert_eq(mkdir(at("victim"), 0755), 0);
	put("victim/keep", "keep");
	cr_assert_eq(mkdir(at("state"), 0700), 0);
	put("state/state.json", "{}");
	cr_assert_eq(symlink(at("victim"), at("state/into")), 0);
	cr_assert_eq(symlink(at("victim"), at("link")), 0);
	remove_tree_at(dfd, "state");
	cr_assert_eq(access(at("state"), F_OK), -1, "the state is gone");
	remove_tree_at(dfd, "link");
	cr_assert_eq(faccessat(dfd, "link", F_OK, AT_SYMLINK_NOFOLLOW), -1,
		     "a link is removed as a link");
	cr_assert_str_eq(get("victim/keep"), "keep");
	close(dfd);
}

Test(hostfile, directory_checks)
{
	struct moat_error err = { 0 };
	int fd;

	cr_assert_eq(mkdir(at("open"), 0777), 0);
	cr_assert_eq(chmod(at("open"), 0777), 0);
	cr_assert_lt(hostdir_open(at("open"), "--root", 0, NULL, &err), 0);
	cr_assert(strstr(err.msg, "is open to others (mode 0777)"), "%s",
		  err.msg);
	cr_assert_eq(mkdir(at("shared"), 0755), 0);
	cr_assert_eq(chmod(at("shared"), 0755), 0);
	fd = hostdir_open(at("shared"), "--root", 0, NULL, &err);
	cr_assert_geq(fd, 0, "%s", err.msg);
	close(fd);
	cr_assert_lt(hostdir_open(at("shared"), "d", HOSTDIR_PRIVATE, NULL,
				  &err),
		     0);
	cr_assert_eq(symlink(at("shared"), at("link")), 0);
	cr_assert_lt(hostdir_open(at("link"), "--root", 0, NULL, &err), 0);
	cr_assert(strstr(err.msg, "is a symbolic link"), "%s", err.msg);
	cr_assert_lt(hostdir_open(at("none"), "--root", 0, NULL, &err), 0);
	cr_assert_eq(err.code, ENOENT);
	if (geteuid() == 0) {
		cr_assert_eq(mkdir(at("theirs"), 0700), 0);
		cr_assert_eq(chown(at("theirs"), 65534, 65534), 0);
		cr_assert_lt(
			hostdir_open(at("theirs"), "--root", 0, NULL, &err), 0);
		cr_assert(strstr(err.msg, "is owned by uid 65534"), "%s",
			  err.msg);
	}
}

Test(hostfile, a_full_fifo_log_never_blocks)
{
	char page[4096] = { 0 };
	int rd, fd;

	cr_assert_eq(mkfifo(at("fifo"), 0600), 0);
	cr_assert_eq(open_log(at("fifo")), -ENXIO, "no reader: not opened");
	/* a reader that never reads, its buffer full */
	rd = open(at("fifo"), O_RDONLY | O_NONBLOCK);
	cr_assert_geq(rd, 0);
	fd = open_log(at("fifo"));
	cr_assert_geq(fd, 0);
	cr_assert(fcntl(fd, F_GETFL) & O_NONBLOCK,
		  "the log stays non-blocking");
	while (write(fd, page, sizeof(page)) == (ssize_t)sizeof(page))
		;
	cr_assert_eq(write(fd, "line\n", 5), -1);
	cr_assert_eq(errno, EAGAIN, "a line it cannot take fails at once");
	cr_assert_eq(write_all(fd, "line\n", 5), -EAGAIN);
	close(fd);
	close(rd);
}

Test(hostfile, links_before_the_last_component)
{
	char base[NAME_MAX + 1];
	int fd;

	cr_assert_eq(mkdir(at("real"), 0755), 0);
	cr_assert_eq(mkdir(at("real/sub"), 0755), 0);
	/* a relative link, through "..", and a chain of two */
	cr_assert_eq(symlink("../real/sub", at("real/up")), 0);
	cr_assert_eq(symlink("real/up", at("chain")), 0);
	cr_assert_eq(write_file_path(at("chain/f"), "x\n", 2, 0644), 0);
	cr_assert_str_eq(get("real/sub/f"), "x\n");
	fd = hostpath_parent(at("real/sub/f"), base);
	cr_assert_geq(fd, 0);
	cr_assert_str_eq(base, "f");
	close(fd);
	fd = hostpath_parent("/", base);
	cr_assert_geq(fd, 0);
	cr_assert_str_eq(base, ".");
	close(fd);
	fd = hostpath_parent("f", base);
	cr_assert_geq(fd, 0, "a relative path: the working directory");
	cr_assert_str_eq(base, "f");
	close(fd);
	cr_assert_eq(symlink("loop", at("loop")), 0);
	cr_assert_eq(write_file_path(at("loop/f"), "x", 1, 0644), -ELOOP);
	if (geteuid() != 0)
		return;
	/* another user's link in another user's directory: not followed,
	 * whoever it points at */
	put("precious", "precious");
	cr_assert_eq(mkdir(at("theirs"), 0755), 0);
	cr_assert_eq(chown(at("theirs"), 65534, 65534), 0);
	cr_assert_eq(symlink(dir, at("theirs/up")), 0);
	cr_assert_eq(lchown(at("theirs/up"), 65534, 65534), 0);
	cr_assert_eq(write_file_path(at("theirs/up/precious"), "x", 1, 0644),
		     -ELOOP);
	cr_assert_eq(open_log(at("theirs/up/precious")), -ELOOP);
	cr_assert_str_eq(get("precious"), "precious");
	/* root's link there is root's choice: followed */
	cr_assert_eq(lchown(at("theirs/up"), 0, 0), 0);
	fd = open_log(at("theirs/up/log"));
	cr_assert_geq(fd, 0);
	close(fd);
	/* their link in a directory of root's, 0755: only root put it there */
	cr_assert_eq(symlink(dir, at("real/theirs")), 0);
	cr_assert_eq(lchown(at("real/theirs"), 65534, 65534), 0);
	fd = open_log(at("real/theirs/log2"));
	cr_assert_geq(fd, 0);
	close(fd);
}

/* lib/util.c path_prefixes: each leading component, in order, then the
 * path; the first nonzero answer stops the walk. */
static int collect(const char *prefix, void *ctx)
{
	char *out = ctx;

	strcat(out, prefix);
	strcat(out, "|");
	return !strcmp(prefix, "/a/stop") ? 7 : 0;
}

Test(hostfile, path_prefixes)
{
	char seen[256] = "";

	cr_assert_eq(path_prefixes("/a/b/c", collect, seen), 0);
	cr_assert_str_eq(seen, "/a|/a/b|/a/b/c|");
	seen[0] = 0;
	cr_assert_eq(path_prefixes("/a/stop/c", collect, seen), 7);
	cr_assert_str_eq(seen, "/a|/a/stop|");
	seen[0] = 0;
	cr_assert_eq(path_prefixes("/", collect, seen), 0);
	cr_assert_str_eq(seen, "/|", "the root alone");
	cr_assert_eq(path_prefixes("rel/x", collect, seen), -EINVAL);
}
