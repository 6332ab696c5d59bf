/* tests/fuzz/fuzz_p9client.c: libFuzzer target for the sentry's 9P client,
 * i.e. reply decoding from a hostile gofer.
 *
 * Input: byte 0 picks the sequence of client calls, byte 1 bit 0 attaches a
 * donated fd (/dev/null) to the reply stream, the rest IS the reply stream
 * (after a valid Rversion + Rattach prelude the harness queues first). The
 * client must never crash, never read out of bounds, return only 0/positive
 * or -errno, and never leak a donated fd.
 *
 * Build: clang -std=gnu11 -g -O1 -D_GNU_SOURCE -I. \
 *   -fsanitize=fuzzer,address,undefined tests/fuzz/fuzz_p9client.c \
 *   sentry/p9client.c prot/p9.c lib/util.c -o fuzz_p9client
 * Run:   ./fuzz_p9client -max_total_time=60 tests/fuzz/corpus/p9client
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "prot/p9.h"
#include "sentry/p9client.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_MAX_STREAM (64 * 1024) /* fits the socket buffer: no blocking */
#define FUZZ_MAX_CALLS 64

static int fuzz_lowest_free_fd;

static void die(const char *what)
{
	fprintf(stderr, "fuzz_p9client: %s\n", what);
	abort();
}

static int lowest_free_fd(void)
{
	int fd = open("/", O_PATH | O_CLOEXEC);

	if (fd < 0)
		die("probe fd");
	close(fd);
	return fd;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_lowest_free_fd = lowest_free_fd();
	return 0;
}

static void put_msg(int fd, struct p9_msg *m)
{
	uint8_t buf[64];
	size_t len;

	if (p9_encode(m, buf, sizeof(buf), &len) < 0 ||
	    write(fd, buf, len) != (ssize_t)len)
		die("prelude");
}

static void put_stream(int fd, const uint8_t *p, size_t len, bool with_fd)
{
	union {
		struct cmsghdr h;
		char b[CMSG_SPACE(sizeof(int))];
	} ctl;
	struct iovec iov = { .iov_base = (void *)p, .iov_len = len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	int donated = -1;

	if (!len)
		return;
	if (with_fd) {
		struct cmsghdr *cm;

		donated = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (donated < 0)
			die("open /dev/null");
		memset(&ctl, 0, sizeof(ctl));
		mh.msg_control = ctl.b;
		mh.msg_controllen = sizeof(ctl.b);
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &donated, sizeof(int));
	}
	if (sendmsg(fd, &mh, MSG_NOSIGNAL) != (ssize_t)len)
		die("sendmsg");
	if (donated >= 0)
		close(donated);
}

static void check(int ret)
{
	if (ret < -4095)
		die("return value is not -errno");
}

static int call(struct p9_client *c, unsigned op, uint32_t root, uint32_t *fids,
		size_t *nfids)
{
	uint32_t fid = *nfids ? fids[*nfids - 1] : root;
	uint8_t dirbuf[512];
	char name[256];
	struct p9_qid q;
	struct stat st;
	struct statfs sf;
	uint32_t nf;
	int ret, fd = -1;

	switch (op % 8) {
	case 0:
		ret = p9c_walk1(c, fid, "x", &nf, &q);
		if (ret == 0 && *nfids < FUZZ_MAX_CALLS)
			fids[(*nfids)++] = nf;
		break;
	case 1:
		ret = p9c_clone(c, fid, &nf);
		if (ret == 0 && *nfids < FUZZ_MAX_CALLS)
			fids[(*nfids)++] = nf;
		break;
	case 2:
		ret = p9c_getattr(c, fid, &st);
		break;
	case 3:
		ret = p9c_lopen(c, fid, O_RDONLY, &fd);
		if (ret == 0) {
			if (fd < 0)
				die("lopen succeeded without an fd");
			close(fd);
		} else if (fd != -1) {
			die("lopen failed but set an fd");
		}
		break;
	case 4:
		ret = p9c_readlink(c, fid, name,
				   (op & 0x80) ? 8 : sizeof(name));
		if (ret >= 0 && strlen(name) != (size_t)ret)
			die("readlink length mismatch");
		break;
	case 5: {
		size_t pos = 0;
		uint64_t off;
		uint8_t type;
		int r;

		ret = p9c_readdir(c, fid, 0, dirbuf, sizeof(dirbuf));
		if (ret > (int)sizeof(dirbuf))
			die("readdir overran its buffer");
		if (ret > 0)
			while ((r = p9c_readdir_next(
					dirbuf, (size_t)ret, &pos, &q, &off,
					&type, name,
					(op & 0x80) ? 4 : sizeof(name))) == 1)
				if (pos > (size_t)ret)
					die("readdir_next ran past the end");
		break;
	}
	case 6:
		ret = p9c_statfs(c, fid, &sf);
		break;
	default:
		ret = p9c_clunk(c, fid);
		if (*nfids)
			(*nfids)--;
		break;
	}
	check(ret);
	return ret;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct moat_error err = { 0 };
	struct p9_msg m = { .type = P9_RVERSION, .tag = P9_NOTAG };
	struct p9_client *c = NULL;
	uint32_t fids[FUZZ_MAX_CALLS], root;
	size_t nfids = 0, i;
	unsigned seed;
	int sv[2];

	if (size < 2 || size - 2 > FUZZ_MAX_STREAM)
		return 0;
	seed = data[0];
	/* the decoder alone, as a client sees replies */
	(void)p9_decode(data + 2, size - 2, &m);

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		die("socketpair");
	memset(&m, 0, sizeof(m));
	m.type = P9_RVERSION;
	m.tag = P9_NOTAG;
	m.u.version.msize = 8192;
	p9_str_set(&m.u.version.version, P9_VERSION_L);
	put_msg(sv[1], &m);
	memset(&m, 0, sizeof(m));
	m.type = P9_RATTACH;
	m.tag = 1;
	put_msg(sv[1], &m);
	put_stream(sv[1], data + 2, size - 2, data[1] & 1);
	shutdown(sv[1], SHUT_WR); /* EOF after the stream: never block */

	if (p9c_open(&c, sv[0], &root, NULL, &err) < 0)
		die("p9c_open failed on a valid prelude");
	for (i = 0; i < FUZZ_MAX_CALLS; i++) {
		int ret = call(c,
			       seed + (unsigned)i * (seed | 1) + (seed & 0x80),
			       root, fids, &nfids);

		if (ret == -EIO)
			break; /* broken: every later call is -EIO too */
	}
	p9c_close(c);
	close(sv[1]);
	if (lowest_free_fd() != fuzz_lowest_free_fd)
		die("fd leak");
	return 0;
}
