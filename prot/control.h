/* prot/control.h: the answers of a sandbox's control socket
 * (sentry/control.c serves it; cli/ asks).
 *
 * A request is one line; the sentry answers it and closes the connection.
 * An answer is
 *   - one line ended by '\n': "ok", "error: MESSAGE", a state word;
 *   - for a request that returns data (ps, stats, policy-show): the line
 *     "ok LEN" and exactly LEN bytes after it, or an "error: ..." line.
 * exec's answer is a stream of lines ("ok GUESTPID", then "exit STATUS"),
 * each checked with ctl_word_uint.
 *
 * The client reads an answer to its end (EOF) and checks it whole: an
 * answer that was cut off (a line without its '\n', a body shorter than
 * its length), that runs past its end, or that is no answer at all is
 * an error, never data. A cut-off list of pids read as a list is how a
 * client would name processes that are not the sandbox's.
 *
 * Pure: no I/O, no allocation; what the parsers return points into the
 * caller's buffer.
 */
#ifndef MOAT_PROT_CONTROL_H
#define MOAT_PROT_CONTROL_H

#include <stdbool.h>
#include <stddef.h>

/* The longest one-line answer, its '\n' included. */
#define CTL_LINE_MAX 4096
/* The longest body ("ok LEN"): a ps of a million processes fits. */
#define CTL_BODY_MAX ((size_t)64 << 20)

/* The highest pid Linux gives (PID_MAX_LIMIT on 64-bit). */
#define CTL_PID_MAX 4194304

enum ctl_reply {
	CTL_REPLY_LINE = 1, /* *out: the line, without its '\n' */
	CTL_REPLY_BODY = 2, /* *out: the LEN bytes after "ok LEN" */
};

/* buf[0..n): a whole answer, as read until EOF. framed: the request is
 * one that returns data; then a line answer must be an "error: " one.
 * Returns CTL_REPLY_LINE or CTL_REPLY_BODY with *out, *outlen (into buf),
 * or -EPROTO: cut off, bytes past its end, a NUL or '\n' inside a line,
 * a length that is not a plain decimal number or is over CTL_BODY_MAX. */
int ctl_reply_parse(const char *buf, size_t n, bool framed, const char **out,
		    size_t *outlen);

/* s[0..n) with every control byte (below 0x20, 0x7f) made '?': a
 * message from a sentry, to print. */
void ctl_printable(char *s, size_t n);

/* The header of a body of len bytes into buf ("ok LEN\n"); its length. */
size_t ctl_body_head(char *buf, size_t cap, size_t len);

/* line[0..n), without its '\n': exactly "WORD N" (one space, N a plain
 * decimal number no more than max). 0 with *v, or -EPROTO. */
int ctl_word_uint(const char *line, size_t n, const char *word,
		  unsigned long max, unsigned long *v);

/* One process of a ps answer. */
struct ctl_ps_entry {
	int host_pid;  /* 1..CTL_PID_MAX */
	int guest_pid; /* 1..CTL_PID_MAX */
	char comm[16]; /* 1 to 15 bytes of printable ASCII, no space */
};

/* A ps body: "HOSTPID GUESTPID COMM\n" a process, nothing else. Returns
 * how many processes, filling out[0..max) (out NULL: only counted and
 * checked, max unused), or -EPROTO when any line is malformed (then none of it is
 * to be used) or there are more than max. */
long ctl_ps_parse(const char *body, size_t len, struct ctl_ps_entry *out,
		  size_t max);

#endif
