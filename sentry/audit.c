/* sentry/audit.c: the sandbox's audit log, one JSON object a line, and
 * the limiter every record goes through (sentry/audit.h).
 *
 * Cost bound: a record the limiter refuses costs its formatting and a
 * bit of its class's table, no write; one it admits, one write(2). A
 * guest looping on an unimplemented syscall wrote about 5 MB/s to the
 * shared log before; now AUDIT_RATE records a second a class (about
 * 25 KB/s), and max_bytes in all.
 */
#include "sentry/audit.h"

#include "lib/hostfile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "sentry/sentry.h"

/* ---- the limiter (pure) ------------------------------------------------ */

static uint64_t max_of(const struct audit_limiter *l)
{
	return l->max_bytes ? l->max_bytes : AUDIT_MAX_DEFAULT;
}

/* Each class's table, its last place the kind of every larger one. */
static const unsigned nkinds[AUDIT_CLASSES] = {
	[AUDIT_SYSCALL] = AUDIT_SYSCALL_KINDS,
	[AUDIT_NET] = AUDIT_NET_KINDS,
	[AUDIT_GUEST] = AUDIT_GUEST_KINDS,
	[AUDIT_HOST] = 1,
};

unsigned audit_syscall_kind(long nr)
{
	return nr >= 0 && nr < AUDIT_SYSCALL_NRS ? (unsigned)nr :
						   AUDIT_SYSCALL_NRS;
}

static void refill(struct audit_bucket *b, int64_t now)
{
	if (!b->last_ns || now < b->last_ns) {
		if (!b->last_ns)
			b->tokens = AUDIT_BURST;
	} else {
		b->tokens += (double)(now - b->last_ns) * AUDIT_RATE / 1e9;
		if (b->tokens > AUDIT_BURST)
			b->tokens = AUDIT_BURST;
	}
	b->last_ns = now;
}

enum audit_verdict audit_admit(struct audit_limiter *l, int64_t now,
			       enum audit_class c, unsigned kind)
{
	uint64_t *seen, bit;

	if ((unsigned)c >= AUDIT_HOST)
		return AUDIT_OWNER; /* no guest reaches these */
	if (kind >= nkinds[c])
		kind = nkinds[c] - 1;
	seen = &l->seen[c][kind / 64];
	bit = 1ULL << (kind % 64);
	if (!(*seen & bit)) {
		/* the first of its kind: written whatever the rate and the
		 * cap; every kind has its place, so none is ever refused */
		*seen |= bit;
		return AUDIT_FIRST;
	}
	if (l->capped) {
		l->dropped++;
		return AUDIT_DROP;
	}
	refill(&l->bucket[c], now);
	if (l->bucket[c].tokens >= 1) {
		l->bucket[c].tokens -= 1;
		return AUDIT_WRITE;
	}
	l->suppressed++;
	return AUDIT_SUPPRESS;
}

bool audit_report_due(struct audit_limiter *l, int64_t now)
{
	if (!l->suppressed ||
	    (l->reported_ns && now - l->reported_ns < 1000000000LL))
		return false;
	l->reported_ns = now;
	return true;
}

bool audit_fits(struct audit_limiter *l, enum audit_verdict v, size_t len)
{
	switch (v) {
	case AUDIT_FIRST:
		/* bounded by the kinds: AUDIT_LINE_MAX each, once */
		l->bytes += len;
		return true;
	case AUDIT_OWNER:
		if (l->host_bytes + len > max_of(l)) {
			l->dropped++;
			return false;
		}
		l->host_bytes += len;
		return true;
	case AUDIT_WRITE:
		break;
	case AUDIT_SUPPRESS:
	case AUDIT_DROP:
		return false;
	}
	if (l->capped) {
		l->dropped++; /* let through before the cap, dropped at it */
		return false;
	}
	if (l->bytes + len + AUDIT_RESERVE > max_of(l)) {
		l->capped = true;
		/* what was only counted is past the cap too, with the one
		 * that did not fit */
		l->dropped += l->suppressed + 1;
		l->suppressed = 0;
		return false;
	}
	l->bytes += len;
	return true;
}

/* "{"time":T,"sandbox":SB," into buf; its length. */
static size_t stamp(char *buf, size_t cap, const char *sb)
{
	struct timespec ts;
	int n;

	clock_gettime(CLOCK_REALTIME, &ts);
	n = snprintf(buf, cap, "{\"time\":%lld.%03ld,\"sandbox\":%s,",
		     (long long)ts.tv_sec, ts.tv_nsec / 1000000, sb);
	return n > 0 && (size_t)n < cap ? (size_t)n : 0;
}

size_t audit_format(char *buf, size_t cap, const char *sb, const char *fmt,
		    va_list ap)
{
	static const char ev[] = "\"event\":\"";
	size_t n = stamp(buf, cap, sb);
	const char *end;
	int m;

	m = vsnprintf(buf + n, cap - n, fmt, ap);
	if (m >= 0 && n + (size_t)m + 2 < cap) {
		n += (size_t)m;
	} else if (!strncmp(buf + n, ev, sizeof(ev) - 1) &&
		   (end = strchr(buf + n + sizeof(ev) - 1, '"')) &&
		   end < buf + cap - 20) {
		/* too long for a line: its event alone (a constant of the
		 * caller's, not a guest's), said to be cut */
		n = (size_t)(end + 1 - buf);
		n += (size_t)snprintf(buf + n, cap - n, ",\"truncated\":true");
	} else {
		n += (size_t)snprintf(buf + n, cap - n,
				      "\"event\":\"?\",\"truncated\":true");
	}
	buf[n++] = '}';
	buf[n++] = '\n';
	buf[n] = 0;
	return n;
}

/* ---- the log ------------------------------------------------------------ */

static struct audit_limiter lim;
static char sandbox[128] = "\"moat\""; /* a JSON string, quoted */

/* FILE.k's name into out. */
static bool generation(char *out, size_t cap, const char *path, int k)
{
	int n = k ? snprintf(out, cap, "%s.%d", path, k) :
		    snprintf(out, cap, "%s", path);

	return n > 0 && (size_t)n < cap;
}

/* Past AUDIT_ROTATE_AT, path becomes path.1 (and path.1 path.2, ...,
 * the oldest gone), under a lock of the file itself: two sandboxes that
 * start at once rotate it once. Only a regular file of the caller's: a
 * --audit of /dev/null, a pipe or someone else's file is left as it is.
 * Every name is taken in the directory hostpath_parent found, as
 * open_log's: another user's link on the way is not followed. */
#define ROTATE_TRIES 20 /* of 10 ms: what rotating takes, many times */

static void rotate(const char *path)
{
	char base[NAME_MAX + 1], from[NAME_MAX + 1], to[NAME_MAX + 1];
	struct stat st, now;
	int dfd, fd, k;

	dfd = hostpath_parent(path, base);
	if (dfd < 0)
		return;
	if (fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
	    !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    (uint64_t)st.st_size < AUDIT_ROTATE_AT)
		goto out;
	fd = openat(dfd, base, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		goto out;
	/* Anyone who can read the file can hold a lock of it: a sandbox
	 * waits for it a little (another one rotating), never for good
	 * (a reader's lock), and then runs on without rotating. */
	for (k = 0; flock(fd, LOCK_EX | LOCK_NB) < 0; k++) {
		if ((errno != EWOULDBLOCK && errno != EINTR) ||
		    k == ROTATE_TRIES) {
			close(fd);
			goto out;
		}
		usleep(10000);
	}
	/* still the file it was, not rotated by another sandbox meanwhile */
	if (fstat(fd, &st) == 0 &&
	    fstatat(dfd, base, &now, AT_SYMLINK_NOFOLLOW) == 0 &&
	    st.st_ino == now.st_ino && st.st_dev == now.st_dev &&
	    (uint64_t)st.st_size >= AUDIT_ROTATE_AT) {
		for (k = AUDIT_KEEP - 1; k >= 0; k--)
			if (generation(from, sizeof(from), base, k) &&
			    generation(to, sizeof(to), base, k + 1))
				/* a missing one: ENOENT */
				renameat(dfd, from, dfd, to);
	}
	close(fd);
out:
	close(dfd);
}

void audit_open(const char *path, const char *id, uint64_t max)
{
	memset(&lim, 0, sizeof(lim));
	lim.max_bytes = max;
	/* the id is a sandbox name, a container ID or a number, but it is
	 * quoted as any string would be */
	json_quote(sandbox, sizeof(sandbox), id ? id : "moat");
	if (!path) {
		mkdir("/var/log/moat", 0700);
		path = "/var/log/moat/audit.jsonl";
	}
	rotate(path);
	/* root appends to a path a user may have named in a directory others
	 * write (--audit /tmp/x): no link there is followed (lib/hostfile.h).
	 * The fd is O_NONBLOCK: a FIFO whose reader does not read fails a
	 * record's one write(2) with EAGAIN (write_all retries only EINTR),
	 * and that record is lost, not waited for. A record is at most 1 KiB,
	 * below PIPE_BUF, so a FIFO takes it whole or not at all. */
	S->audit_fd = open_log(path);
	if (S->audit_fd < 0)
		fprintf(stderr, "moat: audit log `%s`: %s: not written\n", path,
			S->audit_fd == -ELOOP ?
				"a symbolic link" :
			S->audit_fd == -EMLINK ?
				"not a file of its own, a FIFO or a device" :
				strerror(-S->audit_fd));
}

/* One line to the log. The log may be a FIFO no one reads (a write
 * that would block fails with EAGAIN: lib/hostfile.c) or a full disk:
 * what a write does not take is lost, never waited for, and the line is
 * not written again. A line is at most AUDIT_LINE_MAX, below PIPE_BUF:
 * a FIFO takes it whole or not at all. */
static void log_write(const char *buf, size_t len)
{
	ssize_t n;

	do
		n = write(S->audit_fd, buf, len);
	while (n < 0 && errno == EINTR);
}

/* A record of the limiter's own into buf; its length. */
static size_t own_line(char *buf, size_t cap, const char *fmt, ...)
	MOAT_PRINTF(3, 4);
static size_t own_line(char *buf, size_t cap, const char *fmt, ...)
{
	va_list ap;
	size_t n;

	va_start(ap, fmt);
	n = audit_format(buf, cap, sandbox, fmt, ap);
	va_end(ap);
	return n;
}

/* One of the limiter's own, written whatever it says (from the
 * reserve: at most one audit-capped, and the end's). */
#define own_record(...)                                                        \
	do {                                                                   \
		char own_[256];                                                \
		size_t own_n_ = own_line(own_, sizeof(own_), __VA_ARGS__);     \
		lim.bytes += own_n_;                                           \
		log_write(own_, own_n_);                                       \
	} while (0)

static void capped(void)
{
	own_record("\"event\":\"audit-capped\",\"bytes\":%llu,\"max\":%llu,"
		   "\"reason\":\"the sandbox's audit volume is spent: its "
		   "records are dropped and counted from here, but for the "
		   "first of each kind and the owner's\"",
		   (unsigned long long)lim.bytes,
		   (unsigned long long)max_of(&lim));
}

/* The suppressed count, if it is due: before a record that is let
 * through, or on the tick. Under the cap, as what it counts. */
static void report(int64_t now)
{
	char buf[256];
	size_t n;

	if (!audit_report_due(&lim, now))
		return;
	n = own_line(buf, sizeof(buf),
		     "\"event\":\"audit-suppressed\",\"records\":%llu",
		     (unsigned long long)lim.suppressed);
	if (!audit_fits(&lim, AUDIT_WRITE, n)) {
		lim.dropped--; /* the count moved to dropped; it is no record */
		capped();
		return;
	}
	log_write(buf, n);
	lim.suppressed = 0;
}

static void audit_vlog(enum audit_class c, unsigned kind, const char *fmt,
		       va_list ap)
{
	char buf[AUDIT_LINE_MAX];
	int64_t now = now_ns();
	enum audit_verdict v;
	bool was_capped;
	size_t n;

	if (!S || S->audit_fd < 0)
		return;
	v = audit_admit(&lim, now, c, kind);
	if (v == AUDIT_SUPPRESS || v == AUDIT_DROP)
		return; /* counted: not formatted */
	n = audit_format(buf, sizeof(buf), sandbox, fmt, ap);
	if (v != AUDIT_OWNER)
		report(now); /* which may reach the cap */
	was_capped = lim.capped;
	if (!audit_fits(&lim, v, n)) {
		if (v == AUDIT_WRITE && !was_capped)
			capped(); /* this one reached it */
		return;
	}
	log_write(buf, n);
}

void audit_log(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	audit_vlog(AUDIT_HOST, 0, fmt, ap);
	va_end(ap);
}

void audit_guest(enum audit_class c, unsigned kind, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	audit_vlog(c, kind, fmt, ap);
	va_end(ap);
}

void audit_tick(void)
{
	if (S && S->audit_fd >= 0 && lim.suppressed)
		report(now_ns());
}

void audit_end(void)
{
	if (!S || S->audit_fd < 0)
		return;
	if (lim.dropped)
		own_record("\"event\":\"audit-dropped\",\"records\":%llu",
			   (unsigned long long)lim.dropped);
	if (lim.suppressed)
		own_record("\"event\":\"audit-suppressed\",\"records\":%llu,"
			   "\"at\":\"end\"",
			   (unsigned long long)lim.suppressed);
	lim.dropped = lim.suppressed = 0;
}
