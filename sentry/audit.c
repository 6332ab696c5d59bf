/* sentry/audit.c: the sandbox's audit log, one JSON object a line, and
 * the one limiter every record goes through (sentry/audit.h).
 *
 * Cost bound: a record the limiter refuses costs its formatting and a
 * scan of at most AUDIT_KINDS hashes, no write; one it admits, one
 * write(2). A guest looping on an unimplemented syscall wrote about 5 MB/s
 * to the shared log before; now AUDIT_RATE records a second (about
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

enum audit_verdict audit_admit(struct audit_limiter *l, int64_t now,
			       uint64_t kind)
{
	size_t i;

	if (l->capped) {
		l->dropped++;
		return AUDIT_DROP;
	}
	if (!l->last_ns || now < l->last_ns) {
		if (!l->last_ns)
			l->tokens = AUDIT_BURST;
		l->last_ns = now;
	} else {
		l->tokens += (double)(now - l->last_ns) * AUDIT_RATE / 1e9;
		if (l->tokens > AUDIT_BURST)
			l->tokens = AUDIT_BURST;
		l->last_ns = now;
	}
	for (i = 0; i < l->nkinds && l->kinds[i] != kind; i++)
		;
	if (i == l->nkinds && l->nkinds < AUDIT_KINDS) {
		/* the first of its kind: written whatever the rate */
		l->kinds[l->nkinds++] = kind;
		return AUDIT_WRITE;
	}
	if (l->tokens >= 1) {
		l->tokens -= 1;
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

bool audit_fits(struct audit_limiter *l, size_t len)
{
	if (l->capped)
		return false;
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

uint64_t audit_kind(const char *body, const char *what)
{
	static const char ev[] = "\"event\":\"";
	uint64_t h = 1469598103934665603ULL; /* FNV-1a */
	const char *p;

	if (!strncmp(body, ev, sizeof(ev) - 1))
		for (p = body + sizeof(ev) - 1; *p && *p != '"'; p++)
			h = (h ^ (unsigned char)*p) * 1099511628211ULL;
	h = (h ^ 0xff) * 1099511628211ULL;
	for (p = what ? what : ""; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ULL;
	return h;
}

/* ---- the log ------------------------------------------------------------ */

static struct audit_limiter lim;
static char sandbox[80] = "moat"; /* a JSON string's contents */

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
	while (flock(fd, LOCK_EX) < 0)
		if (errno != EINTR) {
			close(fd);
			goto out;
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
	size_t o = 0;

	memset(&lim, 0, sizeof(lim));
	lim.max_bytes = max;
	/* the id is a sandbox name or a number (control_name_ok), but it is
	 * quoted as any string would be */
	for (const char *p = id ? id : "moat"; *p && o + 7 < sizeof(sandbox);
	     p++) {
		if (*p == '"' || *p == '\\')
			sandbox[o++] = '\\';
		sandbox[o++] = (unsigned char)*p < 0x20 ? '?' : *p;
	}
	sandbox[o] = 0;
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

/* "{"time":T," into buf; its length. */
static int stamp(char *buf, size_t cap)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return snprintf(buf, cap, "{\"time\":%lld.%03ld,", (long long)ts.tv_sec,
			ts.tv_nsec / 1000000);
}

/* A record of the limiter's own, written whatever it says (from the
 * reserve). */
static void own_record(const char *fmt, ...) MOAT_PRINTF(1, 2);
static void own_record(const char *fmt, ...)
{
	char buf[256];
	va_list ap;
	int n = stamp(buf, sizeof(buf));

	va_start(ap, fmt);
	n += vsnprintf(buf + n, sizeof(buf) - (size_t)n, fmt, ap);
	va_end(ap);
	if (n >= (int)sizeof(buf))
		return;
	lim.bytes += (uint64_t)n;
	write_all(S->audit_fd, buf, (size_t)n);
}

static void capped(void)
{
	own_record("\"event\":\"audit-capped\",\"sandbox\":\"%s\","
		   "\"bytes\":%llu,\"max\":%llu,\"reason\":\"the sandbox's "
		   "audit volume is spent: its records are dropped and "
		   "counted from here\"}\n",
		   sandbox, (unsigned long long)lim.bytes,
		   (unsigned long long)max_of(&lim));
}

static void audit_vlog(const char *what, const char *fmt, va_list ap)
{
	char buf[1024], sup[192];
	int64_t now = now_ns();
	int n, m;

	if (!S || S->audit_fd < 0)
		return;
	n = stamp(buf, sizeof(buf));
	n += vsnprintf(buf + n, sizeof(buf) - (size_t)n - 2, fmt, ap);
	if (n > (int)sizeof(buf) - 2)
		n = (int)sizeof(buf) - 2;
	buf[n++] = '}';
	buf[n++] = '\n';
	if (audit_admit(&lim, now, audit_kind(strchr(buf, ',') + 1, what)) !=
	    AUDIT_WRITE)
		return;
	if (audit_report_due(&lim, now)) {
		m = stamp(sup, sizeof(sup));
		m += snprintf(sup + m, sizeof(sup) - (size_t)m,
			      "\"event\":\"audit-suppressed\",\"sandbox\":"
			      "\"%s\",\"records\":%llu}\n",
			      sandbox, (unsigned long long)lim.suppressed);
		if (!audit_fits(&lim, (size_t)m)) {
			capped();
			return;
		}
		write_all(S->audit_fd, sup, (size_t)m);
		lim.suppressed = 0;
	}
	if (!audit_fits(&lim, (size_t)n)) {
		capped();
		return;
	}
	write_all(S->audit_fd, buf, (size_t)n);
}

void audit_log(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	audit_vlog(NULL, fmt, ap);
	va_end(ap);
}

void audit_log_kind(const char *what, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	audit_vlog(what, fmt, ap);
	va_end(ap);
}

void audit_end(void)
{
	if (!S || S->audit_fd < 0)
		return;
	if (lim.capped && lim.dropped)
		own_record("\"event\":\"audit-dropped\",\"sandbox\":\"%s\","
			   "\"records\":%llu}\n",
			   sandbox, (unsigned long long)lim.dropped);
	else if (lim.suppressed)
		own_record("\"event\":\"audit-suppressed\",\"sandbox\":\"%s\","
			   "\"records\":%llu,\"at\":\"end\"}\n",
			   sandbox, (unsigned long long)lim.suppressed);
	lim.dropped = lim.suppressed = 0;
}
