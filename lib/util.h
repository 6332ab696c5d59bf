/* lib/util.h: ownership helpers and the one error convention of moat.
 *
 * Conventions (see shared/STYLE.md):
 *  - Syscall handlers and anything a guest can reach return -errno, never
 *    build strings, never abort.
 *  - Host-side setup code returns a negative value and fills a
 *    struct moat_error with context, so a failure reads
 *    "gofer: open `/etc/x`: Permission denied".
 *  - Every owned resource is declared with a cleanup attribute and
 *    initialised; ownership moves only through steal_pointer()/take_fd().
 */
#ifndef MOAT_LIB_UTIL_H
#define MOAT_LIB_UTIL_H

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/types.h>
#include <unistd.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define UNUSED __attribute__((unused))
#define LIKELY(x) __builtin_expect(!!(x), 1)
#define UNLIKELY(x) __builtin_expect(!!(x), 0)
#define MOAT_PRINTF(a, b) __attribute__((format(printf, a, b)))

static inline void cleanup_freep(void *p)
{
	void **pp = (void **)p;
	free(*pp);
}

static inline void cleanup_closep(int *fd)
{
	if (*fd >= 0) {
		int saved = errno;
		close(*fd);
		errno = saved;
	}
}

#define cleanup_free __attribute__((cleanup(cleanup_freep)))
#define cleanup_close __attribute__((cleanup(cleanup_closep)))

/* Transfer ownership out of a cleanup variable. */
static inline void *steal_pointer_(void *pp)
{
	void **p = (void **)pp;
	void *r = *p;
	*p = NULL;
	return r;
}
#define steal_pointer(pp) steal_pointer_(pp)

static inline int take_fd(int *fd)
{
	int r = *fd;
	*fd = -1;
	return r;
}

/* Internal invariant: a bug in moat, not something a guest can cause.
 * Untrusted input is validated with ordinary checks returning -errno. */
#define MOAT_ASSERT(cond)                                                      \
	do {                                                                   \
		if (UNLIKELY(!(cond)))                                         \
			moat_assert_fail(#cond, __FILE__, __LINE__);           \
	} while (0)

__attribute__((noreturn)) void moat_assert_fail(const char *cond,
						const char *file, int line);

/* Error object for setup code. msg holds the full context chain. */
struct moat_error {
	int code; /* errno value, 0 when no error */
	char msg[512];
};

/* Set err to "<formatted>: strerror(code)" (code 0: no strerror suffix).
 * Returns -code (or -1 when code is 0) so callers can `return moat_error_set(...)`. */
int moat_error_set(struct moat_error *err, int code, const char *fmt, ...)
	MOAT_PRINTF(3, 4);
/* The same without the strerror suffix: for errors in the user's input,
 * where the message itself says what is wrong ("p.json:3: bad port"). */
int moat_error_input(struct moat_error *err, int code, const char *fmt, ...)
	MOAT_PRINTF(3, 4);
/* Prefix existing message with more context: "ctx: <old msg>". Returns -code. */
int moat_error_wrap(struct moat_error *err, const char *fmt, ...)
	MOAT_PRINTF(2, 3);

/* What a file of mode m is, for messages: "a FIFO", "a socket", "a
 * character device", "a directory", ... */
const char *file_type_name(mode_t m);

/* Loop over EINTR and partial transfers. Return bytes or -errno. */
ssize_t write_all(int fd, const void *buf, size_t len);
ssize_t read_all(int fd, void *buf, size_t len);

/* s as a JSON string, quoted and escaped, into out (cap at least 8); NULL:
 * null. Whatever s holds (a guest's name, an argv0), the result is one
 * valid JSON string: `"` and `\` are escaped, control bytes and bytes
 * that are no UTF-8 are \u00XX, and what does not fit is cut before
 * the escape or character that would not, never inside one. Returns
 * its length. Cost: one pass over s, no allocation. */
size_t json_quote(char *out, size_t cap, const char *s);

/* One message of the iovecs with nfds (at most SEND_FDS_MAX) fds attached
 * (SCM_RIGHTS), MSG_NOSIGNAL; bytes sent, or -errno. */
#define SEND_FDS_MAX 64 /* a pod member's stdio and gofers (cli/pod.c) */
struct iovec;
ssize_t send_with_fds(int sock, struct iovec *iov, int niov, const int *fds,
		      int nfds);

/* A janitor: a process that outlives the caller to clean up after it.
 * Returns 0 in the janitor once the caller is gone, however it ended (its
 * end of a pipe closed); 1 in the caller; -1 on error. The janitor keeps
 * no fd of the caller's (its stdio is /dev/null), has a session of its
 * own and ignores the terminal's signals; it should _exit when done. */
int janitor_fork(void);
/* The same, and the janitor keeps the caller's fd keep as its fd 4 (a
 * directory it checked, so that the cleanup need not trust a path). */
int janitor_fork_keep(int keep);
/* The same with a line to the janitor: a SOCK_SEQPACKET pair, the
 * caller's end through *ctl (kept for its life: messages for the janitor
 * go there, its replies come back), the janitor's at fd 3. Returns 0 in
 * the janitor at once: it reads fd 3 itself, and EOF there says the
 * caller is gone. */
int janitor_fork_ctl(int *ctl);
/* Run first in every janitor, if set: the sentry's cgroups put it back
 * in the caller's (sentry/limits.c). */
extern void (*janitor_on_fork)(void);

/* The host fds of one process are one table shared by everything it does.
 * In the sentry, what guests make it hold (donated files, stored tmpfs
 * data, shm segments) may fill it only up to a line below its limit, so
 * that the gofer's replies, the control socket and the netstack always
 * find an fd free. Fds are allocated lowest first, so an fd at or above
 * the line means at least that many are open.
 *
 * fd_admit(fd) returns fd while it is below the line; above it, closes
 * fd and returns -ENFILE (Linux's "too many open files in system"). A
 * negative fd is passed through. fd_admit_set(line): 0 means no line
 * (tests, tools); fd_admit_reserve(limit, reserve) sets the line at
 * limit - reserve (at least limit / 2). */
int fd_admit(int fd);
void fd_admit_set(int line);
int fd_admit_line(void);
void fd_admit_reserve(long limit, int reserve);

/* fn(prefix, ctx) for each of path's leading components in turn ("/a",
 * "/a/b", ... and path itself; path absolute, under PATH_MAX bytes): the
 * first nonzero value fn returns, 0 once every one was seen, or
 * -ENAMETOOLONG / -EINVAL for a path that is not one. */
int path_prefixes(const char *path, int (*fn)(const char *prefix, void *ctx),
		  void *ctx);

/* Allocation that aborts: setup code only, never on a guest-reachable path. */
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t m);
char *xstrdup(const char *s);

#endif
