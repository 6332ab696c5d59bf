/* sentry/audit.h: the sandbox's audit log (sentry/audit.c).
 *
 * Every audit record of the sandbox goes through a limiter, so that a
 * guest in a loop cannot fill the host's disk or drown the records that
 * matter. A record is of a class: what the guest made happen is of one
 * of three (its syscalls, its egress and DNS, the rest), each with a
 * bucket and a table of kinds of its own, so that a flood of one leaves
 * the others' alone; what the owner did (the control socket, the host's
 * side) is of the fourth, which no guest reaches:
 *   - the first record of each kind is always written, past the cap too:
 *     a kind is a small number the caller names exactly (a syscall's
 *     number, one kind for every number out of the table; an egress
 *     verdict's; an event's), every one has a place in its table, so the
 *     first denial of each sort is never lost;
 *   - the rest of a guest's take a token of their class's bucket of
 *     AUDIT_BURST, refilled at AUDIT_RATE a second; without one a record
 *     is counted, and the count is one "audit-suppressed" record before
 *     the next that is written, or on the sentry's tick, at most one a
 *     second, and at the end;
 *   - what the buckets let through is at most max_bytes (--audit-max):
 *     past it, one "audit-capped" record, and at the end one
 *     "audit-dropped" with how many were dropped after it;
 *   - the owner's records take no token and have a max_bytes of their
 *     own.
 * So a sandbox writes at most 2 max_bytes, and AUDIT_LINE_MAX for each
 * kind.
 */
#ifndef MOAT_SENTRY_AUDIT_H
#define MOAT_SENTRY_AUDIT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/util.h"

#define AUDIT_RATE 200	/* records a second, sustained, a class */
#define AUDIT_BURST 200 /* and at once */
/* A record's longest line: a longer one is written as its event alone
 * with "truncated":true, never cut (sentry/audit.c, audit_format). */
#define AUDIT_LINE_MAX 2048
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

enum audit_class {
	AUDIT_SYSCALL, /* kind: the number (AUDIT_SYSCALL_KINDS) */
	AUDIT_NET,     /* egress and DNS: netstack/netpol.c's kind */
	AUDIT_GUEST,   /* the rest the guest causes: enum audit_guest_kind */
	AUDIT_HOST,    /* the owner's: no bucket, no kinds */
	AUDIT_CLASSES
};

/* Syscall numbers 0..AUDIT_SYSCALL_NRS-1 are a kind each; every other
 * number (negative, or past the table) is the one kind after them. */
#define AUDIT_SYSCALL_NRS 512
#define AUDIT_SYSCALL_KINDS (AUDIT_SYSCALL_NRS + 1)
/* netstack/netpol.c: event (4) x verdict (2) x reason (4) x proto (4),
 * and one for anything else */
#define AUDIT_NET_KINDS 129

enum audit_guest_kind {
	AUDIT_K_NET_UNREACHABLE,
	AUDIT_K_NETLINK_REFUSED,
	AUDIT_K_SOCKET_REFUSED,
	AUDIT_K_SOCKOPT,
	AUDIT_K_EXEC_FAILED,
	AUDIT_GUEST_KINDS
};

#define AUDIT_KINDS_MAX AUDIT_SYSCALL_KINDS /* the largest table */

struct audit_bucket {
	double tokens;
	int64_t last_ns; /* of the last refill; 0: full, never used */
};

/* The limiter's state: pure, no I/O (tests/unit/audit). */
struct audit_limiter {
	uint64_t max_bytes;  /* 0: AUDIT_MAX_DEFAULT */
	uint64_t bytes;	     /* the guest's written so far */
	uint64_t host_bytes; /* the owner's */
	struct audit_bucket bucket[AUDIT_CLASSES];
	uint64_t seen[AUDIT_CLASSES][(AUDIT_KINDS_MAX + 63) / 64];
	uint64_t suppressed; /* not yet said in an audit-suppressed */
	int64_t reported_ns; /* when one was last written */
	uint64_t dropped;    /* after the cap */
	bool capped;
};

enum audit_verdict {
	AUDIT_WRITE,	/* a token's: write it, under the cap */
	AUDIT_FIRST,	/* the first of its kind: write it, past the cap too */
	AUDIT_OWNER,	/* the owner's: under its own cap */
	AUDIT_SUPPRESS, /* counted in suppressed */
	AUDIT_DROP,	/* past the cap: counted in dropped */
};

/* The kind of a syscall numbered nr, in AUDIT_SYSCALL's table. */
unsigned audit_syscall_kind(long nr);
/* Whether a record of class c and kind (below its class's count; a
 * larger one is its table's last) may be written now (CLOCK_MONOTONIC
 * ns). AUDIT_WRITE takes its token, AUDIT_FIRST its kind's first pass;
 * the caller then checks the bytes with audit_fits. */
enum audit_verdict audit_admit(struct audit_limiter *l, int64_t now,
			       enum audit_class c, unsigned kind);
/* Whether the suppressed count is to be written now: there is one, and
 * none was written in the last second (so a flood costs one such record
 * a second, not one for each record let through). */
bool audit_report_due(struct audit_limiter *l, int64_t now);
/* Whether len more bytes of a record audit_admit said v of may be
 * written, and counts them. AUDIT_WRITE past the cap (its reserve kept)
 * sets capped: the caller writes the cap record, and every later
 * token's record is dropped; AUDIT_FIRST always fits; AUDIT_OWNER fits
 * under the owner's max_bytes, else it is dropped. */
bool audit_fits(struct audit_limiter *l, enum audit_verdict v, size_t len);
/* A whole record into buf (cap at least AUDIT_LINE_MAX): the time, the
 * sandbox (sb, a JSON string with its quotes), then body's members
 * ("\"event\":\"...\",..."; the event a constant). A body that does
 * not fit is its event alone and "truncated":true: a record is valid
 * JSON whatever its members held. Returns its length, newline included. */
size_t audit_format(char *buf, size_t cap, const char *sb, const char *fmt,
		    va_list ap) MOAT_PRINTF(4, 0);

/* Open the sandbox's log (path NULL: the default, /var/log/moat/
 * audit.jsonl, made 0700), rotating it first if it is a regular file of
 * ours past AUDIT_ROTATE_AT. id: the sandbox, in the limiter's records.
 * max: its byte cap (0: the default). Before the seccomp filter. */
void audit_open(const char *path, const char *id, uint64_t max);
/* One record the guest caused, body a JSON object's members
 * ("\"event\":\"...\",..."), of class c and kind (audit_admit). Every
 * string in it that a guest or a user chose is json_quote'd
 * (lib/util.h). audit_log (sentry.h) is the owner's (AUDIT_HOST). */
void audit_guest(enum audit_class c, unsigned kind, const char *fmt, ...)
	MOAT_PRINTF(3, 4);
/* On the sentry's tick: a suppressed count that is due is written even
 * when no record comes after it. */
void audit_tick(void);
/* At the sandbox's end: what is still counted, as records. */
void audit_end(void);

#endif
