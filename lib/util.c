#include "util.h"

#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/syscall.h>

static int admit_line; /* 0: no line */

int fd_admit(int fd)
{
	if (fd >= 0 && admit_line > 0 && fd >= admit_line) {
		close(fd);
		return -ENFILE;
	}
	return fd;
}

void fd_admit_set(int line)
{
	admit_line = line > 0 ? line : 0;
}

int fd_admit_line(void)
{
	return admit_line;
}

void fd_admit_reserve(long limit, int reserve)
{
	long line = limit - reserve;

	if (line < limit / 2)
		line = limit / 2;
	fd_admit_set(line > 0x7fffffff ? 0x7fffffff : (int)line);
}

void moat_assert_fail(const char *cond, const char *file, int line)
{
	fprintf(stderr, "moat: internal assertion failed: %s (%s:%d)\n", cond,
		file, line);
	abort();
}

int moat_error_input(struct moat_error *err, int code, const char *fmt, ...)
{
	va_list ap;

	if (err) {
		err->code = code;
		va_start(ap, fmt);
		vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
		va_end(ap);
	}
	return code ? -code : -1;
}

int moat_error_set(struct moat_error *err, int code, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (err) {
		err->code = code;
		va_start(ap, fmt);
		n = vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
		va_end(ap);
		if (n < 0)
			n = 0;
		if (code) {
			const char *why = strerror(code);
			size_t cap = sizeof(err->msg), at = (size_t)n;
			size_t need = strlen(why) + 2; /* ": " */

			/* A long path in the message (a mount point 4,000
			 * bytes long) cuts its middle, never the reason. */
			if (at + need >= cap && need + 4 < cap) {
				at = cap - need - 4;
				memcpy(err->msg + at, "...", 3);
				at += 3;
			}
			if (at + need < cap)
				snprintf(err->msg + at, cap - at, ": %s", why);
		}
	}
	return code ? -code : -1;
}

int moat_error_wrap(struct moat_error *err, const char *fmt, ...)
{
	char prefix[256];
	char old[sizeof(err->msg)];
	va_list ap;

	if (!err)
		return -1;
	va_start(ap, fmt);
	vsnprintf(prefix, sizeof(prefix), fmt, ap);
	va_end(ap);
	memcpy(old, err->msg, sizeof(old));
	{
		size_t pl = strnlen(prefix, sizeof(prefix) - 1);
		size_t rest = sizeof(err->msg) - pl - 3;
		memcpy(err->msg, prefix, pl);
		memcpy(err->msg + pl, ": ", 2);
		memcpy(err->msg + pl + 2, old, strnlen(old, rest));
		err->msg[pl + 2 + strnlen(old, rest)] = 0;
	}
	return err->code ? -err->code : -1;
}

ssize_t write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	size_t done = 0;

	while (done < len) {
		ssize_t n = write(fd, p + done, len - done);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		done += (size_t)n;
	}
	return (ssize_t)done;
}

/* The length of the UTF-8 sequence at p (at most n bytes), or 0 if it
 * is none (overlong, a surrogate, past U+10FFFF, cut short). */
static size_t utf8_len(const unsigned char *p, size_t n)
{
	size_t len, i;
	uint32_t c;

	if (p[0] < 0xc2 || p[0] > 0xf4)
		return 0;
	len = p[0] < 0xe0 ? 2 : p[0] < 0xf0 ? 3 : 4;
	if (n < len)
		return 0;
	c = p[0] & (0x7f >> len);
	for (i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (p[i] & 0x3f);
	}
	if ((len == 3 && (c < 0x800 || (c >= 0xd800 && c <= 0xdfff))) ||
	    (len == 4 && (c < 0x10000 || c > 0x10ffff)))
		return 0;
	return len;
}

size_t json_quote(char *out, size_t cap, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t o = 0, n, rest;
	char esc[8];

	if (!s)
		return (size_t)snprintf(out, cap, "null");
	out[o++] = '"';
	for (rest = strlen(s); rest; p += n, rest -= n) {
		const char *piece = esc;
		size_t len;

		n = 1;
		if (*p == '"' || *p == '\\') {
			esc[0] = '\\', esc[1] = (char)*p, len = 2;
		} else if (*p >= 0x20 && *p < 0x7f) {
			piece = (const char *)p, len = 1;
		} else if (*p >= 0x80 && (n = utf8_len(p, rest)) > 0) {
			piece = (const char *)p, len = n;
		} else {
			n = 1;
			len = (size_t)snprintf(esc, sizeof(esc), "\\u%04x", *p);
		}
		if (o + len + 2 > cap) /* its closing quote and NUL */
			break;
		memcpy(out + o, piece, len);
		o += len;
	}
	out[o++] = '"';
	out[o] = 0;
	return o;
}

const char *file_type_name(mode_t m)
{
	switch (m & S_IFMT) {
	case S_IFREG:
		return "a regular file";
	case S_IFDIR:
		return "a directory";
	case S_IFLNK:
		return "a symlink";
	case S_IFIFO:
		return "a FIFO";
	case S_IFSOCK:
		return "a socket";
	case S_IFCHR:
		return "a character device";
	case S_IFBLK:
		return "a block device";
	}
	return "a file of unknown type";
}

ssize_t read_all(int fd, void *buf, size_t len)
{
	char *p = buf;
	size_t done = 0;

	while (done < len) {
		ssize_t n = read(fd, p + done, len - done);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			break;
		done += (size_t)n;
	}
	return (ssize_t)done;
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p) {
		fputs("moat: out of memory\n", stderr);
		abort();
	}
	return p;
}

void *xcalloc(size_t n, size_t m)
{
	void *p = calloc(n ? n : 1, m ? m : 1);
	if (!p) {
		fputs("moat: out of memory\n", stderr);
		abort();
	}
	return p;
}

char *xstrdup(const char *s)
{
	char *p = strdup(s);
	if (!p) {
		fputs("moat: out of memory\n", stderr);
		abort();
	}
	return p;
}

void (*janitor_on_fork)(void);

/* The janitor's side: end (its end of the line to the caller) at fd 3,
 * nothing else of the caller's, a session of its own. */
static void janitor_setup(int end, int keep)
{
	int r, k = -1;

	if (janitor_on_fork)
		janitor_on_fork();

	/* end to fd 3 and keep to 4 (out of each other's way first):
	 * closing everything above would close them too, and an early EOF
	 * would clean up at once */
	r = fcntl(end, F_DUPFD, 64);
	if (keep >= 0)
		k = fcntl(keep, F_DUPFD, 64);
	if (r < 0 || (keep >= 0 && k < 0) || dup2(r, 3) < 0 ||
	    (k >= 0 && dup2(k, 4) < 0))
		_exit(1);
	syscall(SYS_close_range, k >= 0 ? 5 : 4, ~0U, 0);
	/* Nor the caller's stdio: a pipe on moat's stdout must end when the
	 * sandbox does, not when its last janitor is done. */
	{
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);
		for (int i = 0; null >= 0 && i < 3; i++)
			dup2(null, i);
		if (null > 3)
			close(null);
	}
	setsid();
	signal(SIGINT, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
}

int janitor_fork(void)
{
	return janitor_fork_keep(-1);
}

int janitor_fork_keep(int keep)
{
	int p[2];
	pid_t pid;
	char c;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		return -1;
	}
	if (pid > 0) {
		/* the caller keeps the write end for its life, never
		 * writing to it */
		close(p[0]);
		return 1;
	}
	close(p[1]);
	janitor_setup(p[0], keep);
	while (read(3, &c, 1) < 0 && errno == EINTR)
		;
	return 0;
}

int janitor_fork_ctl(int *ctl)
{
	int sv[2];
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return -1;
	pid = fork();
	if (pid < 0) {
		close(sv[0]);
		close(sv[1]);
		return -1;
	}
	if (pid > 0) {
		close(sv[1]);
		*ctl = sv[0];
		return 1;
	}
	close(sv[0]);
	janitor_setup(sv[1], -1);
	return 0;
}

ssize_t send_with_fds(int sock, struct iovec *iov, int niov, const int *fds,
		      int nfds)
{
	union {
		char b[CMSG_SPACE(SEND_FDS_MAX * sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr mh = { .msg_iov = iov, .msg_iovlen = (size_t)niov };
	struct cmsghdr *cm;
	ssize_t n;

	if (nfds < 0 || nfds > SEND_FDS_MAX)
		return -EINVAL;
	if (nfds > 0) {
		memset(&u, 0, sizeof(u));
		mh.msg_control = u.b;
		mh.msg_controllen = CMSG_SPACE((size_t)nfds * sizeof(int));
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN((size_t)nfds * sizeof(int));
		memcpy(CMSG_DATA(cm), fds, (size_t)nfds * sizeof(int));
	}
	do
		n = sendmsg(sock, &mh, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	return n < 0 ? -errno : n;
}

int path_prefixes(const char *path, int (*fn)(const char *prefix, void *ctx),
		  void *ctx)
{
	char buf[PATH_MAX];
	char *p;
	int rc;

	if (path[0] != '/')
		return -EINVAL;
	if (strlen(path) >= sizeof(buf))
		return -ENAMETOOLONG;
	strcpy(buf, path);
	for (p = buf + 1;; p++) {
		char save = *p;

		if (save != '/' && save)
			continue;
		*p = 0;
		rc = fn(buf, ctx);
		if (rc || !save)
			return rc;
		*p = save;
	}
}
