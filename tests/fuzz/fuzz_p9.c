/* tests/fuzz/fuzz_p9.c: libFuzzer target for the gofer side of 9P.
 *
 * Each input is
 *  1. decoded as one message by p9_decode (the server-side decoder), and
 *  2. cut into frames by their size[4] fields (clamped to what is left, so
 *     short and oversized frames happen too) and fed to gofer_handle, after
 *     a Tversion + Tattach(fid 0) prelude, against a scratch tree with files,
 *     a directory, symlinks pointing out and up, and a FIFO.
 * Invariants checked (abort = finding): every request gets a reply that
 * fits in the buffer and decodes as a valid R-message with the right tag;
 * a donated fd only comes with Rlopen; no fd survives gofer_free.
 *
 * Build: clang -std=gnu11 -g -O1 -D_GNU_SOURCE -I. \
 *   -fsanitize=fuzzer,address,undefined tests/fuzz/fuzz_p9.c prot/p9.c \
 *   gofer/gofer.c lib/util.c -o fuzz_p9
 * Run:   ./fuzz_p9 -max_total_time=60 tests/fuzz/corpus/p9
 */
#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gofer/gofer.h"
#include "prot/p9.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_REPLY_CAP (P9_MAX_MSIZE)

/* The served tree is fuzz_top/root; fuzz_top also holds one sentinel
 * file. The gofer serves the tree writable, so after every input the
 * sentinel must be there, alone: nothing was made, moved or removed
 * outside the tree (the tree has a symlink to ".." to tempt it). */
static char fuzz_top[64];
static char fuzz_root[80];
static int fuzz_topfd = -1;
static int fuzz_rootfd = -1;
static uint8_t *fuzz_reply;

static void die(const char *what)
{
	fprintf(stderr, "fuzz_p9: %s\n", what);
	abort();
}

static void put(const char *name, const char *data)
{
	char path[128];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", fuzz_root, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, data, strlen(data)) < 0)
		die("setup write");
	close(fd);
}

static int rm_one(const char *path, const struct stat *st, int flag,
		  struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static void cleanup(void)
{
	if (fuzz_top[0])
		nftw(fuzz_top, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static int lowest_free_fd(void)
{
	int fd = fcntl(0, F_DUPFD_CLOEXEC, 0);

	if (fd < 0)
		fd = open("/", O_PATH | O_CLOEXEC);
	if (fd < 0)
		die("probe fd");
	close(fd);
	return fd;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char path[128];

	(void)argc;
	(void)argv;
	snprintf(fuzz_top, sizeof(fuzz_top), "/tmp/moat-fuzz-p9-XXXXXX");
	if (!mkdtemp(fuzz_top))
		die("mkdtemp");
	atexit(cleanup);
	snprintf(fuzz_root, sizeof(fuzz_root), "%s/root", fuzz_top);
	if (mkdir(fuzz_root, 0755) < 0)
		die("mkdir root");
	snprintf(path, sizeof(path), "%s/sentinel", fuzz_top);
	if (close(open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644)) < 0)
		die("sentinel");
	fuzz_topfd = open(fuzz_top, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fuzz_topfd < 0)
		die("open top");
	put("a", "hello");
	put("...", "dots");
	snprintf(path, sizeof(path), "%s/d", fuzz_root);
	mkdir(path, 0755);
	put("d/b", "inner");
	snprintf(path, sizeof(path), "%s/d/e", fuzz_root);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/l", fuzz_root);
	if (symlink("/etc/passwd", path) < 0)
		die("symlink");
	snprintf(path, sizeof(path), "%s/u", fuzz_root);
	if (symlink("..", path) < 0)
		die("symlink");
	snprintf(path, sizeof(path), "%s/f", fuzz_root);
	if (mkfifo(path, 0644) < 0)
		die("mkfifo");
	fuzz_rootfd = open(fuzz_root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fuzz_rootfd < 0)
		die("open root");
	fuzz_reply = malloc(FUZZ_REPLY_CAP);
	if (!fuzz_reply)
		die("malloc");
	return 0;
}

/* Outside the served tree, nothing changed. */
static void check_outside(void)
{
	struct dirent *d;
	int n = 0, fd = dup(fuzz_topfd);
	DIR *dir = NULL;

	if (fd < 0 || lseek(fd, 0, SEEK_SET) < 0 || !(dir = fdopendir(fd)))
		die("list top");
	while ((d = readdir(dir))) {
		if (!strcmp(d->d_name, ".") || !strcmp(d->d_name, ".."))
			continue;
		if (strcmp(d->d_name, "root") && strcmp(d->d_name, "sentinel"))
			die("a file appeared outside the served tree");
		n++;
	}
	closedir(dir);
	if (n != 2)
		die("the sentinel or the tree itself was moved or removed");
}

/* Feed one request; check the reply. */
static void handle(struct gofer *g, const uint8_t *req, size_t len, size_t cap)
{
	struct p9_msg r;
	size_t rlen = 0;
	int fd = -1, ret;

	ret = gofer_handle(g, req, len, fuzz_reply, cap, &rlen, &fd);
	if (ret < 0) {
		if (cap >= P9_HDR_SIZE + 4)
			die("gofer_handle refused a usable buffer");
		return;
	}
	if (rlen > cap)
		die("reply larger than the buffer");
	if (p9_decode(fuzz_reply, rlen, &r) < 0)
		die("reply does not decode");
	if (!(r.type & 1))
		die("reply is a T-message");
	if (len >= P9_HDR_SIZE) {
		uint16_t tag = (uint16_t)(req[5] | req[6] << 8);

		if (r.tag != tag)
			die("reply tag differs from request tag");
	}
	if (fd >= 0) {
		if (r.type != P9_RLOPEN && r.type != P9_RLCREATE)
			die("fd donated with a reply other than Rlopen/Rlcreate");
		close(fd);
	} else if (r.type == P9_RLOPEN || r.type == P9_RLCREATE) {
		die("Rlopen or Rlcreate without an fd");
	}
}

static void prelude(struct gofer *g)
{
	struct p9_msg m = { .type = P9_TVERSION, .tag = P9_NOTAG };
	uint8_t buf[128];
	size_t len;

	m.u.version.msize = 65536;
	p9_str_set(&m.u.version.version, P9_VERSION_L);
	if (p9_encode(&m, buf, sizeof(buf), &len) < 0)
		die("encode");
	handle(g, buf, len, FUZZ_REPLY_CAP);
	memset(&m, 0, sizeof(m));
	m.type = P9_TATTACH;
	m.tag = 1;
	m.u.tattach.afid = P9_NOFID;
	if (p9_encode(&m, buf, sizeof(buf), &len) < 0)
		die("encode");
	handle(g, buf, len, FUZZ_REPLY_CAP);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gofer *g = NULL;
	struct p9_msg m;
	size_t pos = 0;
	/* Per input: libFuzzer itself opens pipes between inputs (to its
	 * symbolizer, when it reports a new function). */
	int lowest = lowest_free_fd();

	/* 1. the decoder alone, on the raw bytes */
	(void)p9_decode(data, size, &m);

	/* 2. the request handler, on frames */
	if (gofer_new(&g, fuzz_rootfd, GOFER_WRITABLE) < 0)
		die("gofer_new");
	prelude(g);
	while (pos < size) {
		size_t left = size - pos, len;
		uint32_t want;

		if (left < 4) {
			handle(g, data + pos, left, FUZZ_REPLY_CAP);
			break;
		}
		want = (uint32_t)data[pos] | (uint32_t)data[pos + 1] << 8 |
		       (uint32_t)data[pos + 2] << 16 |
		       (uint32_t)data[pos + 3] << 24;
		len = want < 1 ? 1 : (want > left ? left : want);
		/* A tag of 0x7fNN also shrinks the reply buffer to 11 + NN
		 * bytes, to exercise the reply-does-not-fit paths. */
		handle(g, data + pos, len,
		       len >= P9_HDR_SIZE && data[pos + 6] == 0x7f ?
			       11u + data[pos + 5] :
			       FUZZ_REPLY_CAP);
		pos += len;
	}
	gofer_free(g);

	if (lowest_free_fd() != lowest)
		die("fd leak");
	check_outside();
	return 0;
}
