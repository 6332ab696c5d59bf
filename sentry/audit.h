/* sentry/audit.h: the sandbox's audit log (sentry/audit.c).
 *
 * Every audit record of the sandbox (syscalls it lacks, egress decisions,
 * control requests, ...) goes through one limiter, so that a guest in a
 * loop cannot fill the host's disk or drown the records that matter:
 *   - the first record of each kind (AUDIT_KINDS of them) is always
 *     written: the first denial of each sort is never lost;
 *   - the rest take a token of a bucket of AUDIT_BURST, refilled at
 *     AUDIT_RATE a second; without one a record is counted, and the count
 *     is one "audit-suppressed" record before the next that is written,
 *     at most one a second, and at the end;
 *   - a sandbox writes at most max_bytes in all (--audit-max): past it,
 *     one "audit-capped" record, and at the end one "audit-dropped" with
 *     how many were dropped after it, in room kept for them.
 */
#ifndef MOAT_SENTRY_AUDIT_H
#define MOAT_SENTRY_AUDIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define AUDIT_RATE 200	/* records a second, sustained */
#define AUDIT_BURST 200 /* and at once */
#define AUDIT_KINDS 256 /* kinds whose first record is always written */
/* A sandbox's audit bytes by default (--audit-max). */
#define AUDIT_MAX_DEFAULT ((uint64_t)16 << 20)
/* Room kept below the cap for its records and the end's. */
#define AUDIT_RESERVE 1024
/* The smallest --audit-max: the reserve, and a few records. */
#define AUDIT_MAX_MIN ((uint64_t)4096)
/* The log is rotated when a sandbox opens it past this size, keeping
 * AUDIT_KEEP older ones (FILE.1 the newest). */
#define AUDIT_ROTATE_AT ((uint64_t)32 << 20)
#define AUDIT_KEEP 3

/* The limiter's state: pure, no I/O (tests/unit/audit). */
struct audit_limiter {
	uint64_t max_bytes; /* 0: AUDIT_MAX_DEFAULT */
	uint64_t bytes;	    /* written so far */
	double tokens;
	int64_t last_ns; /* of the last refill; 0: full, never used */
	uint64_t kinds[AUDIT_KINDS];
	size_t nkinds;
	uint64_t suppressed; /* not yet said in an audit-suppressed */
	int64_t reported_ns; /* when one was last written */
	uint64_t dropped;    /* after the cap */
	bool capped;
};

enum audit_verdict {
	AUDIT_WRITE,	/* write it */
	AUDIT_SUPPRESS, /* counted in suppressed */
	AUDIT_DROP,	/* past the cap: counted in dropped */
};

/* Whether a record of kind (a hash; see audit_kind) may be written now
 * (CLOCK_MONOTONIC ns). AUDIT_WRITE takes its token (or its kind's first
 * pass); the caller then checks the bytes with audit_fits. */
enum audit_verdict audit_admit(struct audit_limiter *l, int64_t now,
			       uint64_t kind);
/* Whether the suppressed count is to be written now, before a record
 * that audit_admit let through: there is one, and none was written in
 * the last second (so a flood costs one such record a second, not one
 * for each record it lets through). */
bool audit_report_due(struct audit_limiter *l, int64_t now);
/* Whether len more bytes fit under the cap (its reserve kept); false
 * sets capped: the caller writes the cap record, and every later record
 * is dropped. */
bool audit_fits(struct audit_limiter *l, size_t len);
/* The kind of a record: its event (the "event" member at the start of
 * body, as every record has) and what else tells its sort apart (what;
 * NULL: nothing). */
uint64_t audit_kind(const char *body, const char *what);

/* Open the sandbox's log (path NULL: the default, /var/log/moat/
 * audit.jsonl, made 0700), rotating it first if it is a regular file of
 * ours past AUDIT_ROTATE_AT. id: the sandbox, in the limiter's records.
 * max: its byte cap (0: the default). Before the seccomp filter. */
void audit_open(const char *path, const char *id, uint64_t max);
/* One record, body a JSON object's members ("\"event\":\"...\",...");
 * its kind by its event and what (audit_kind). */
void audit_log_kind(const char *what, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* At the sandbox's end: what is still counted, as records. */
void audit_end(void);

#endif
