/* broker/http1.h: HTTP/1.x through the broker, both directions of one
 * connection: placeholders swapped for values where a credential allows
 * it, blocked everywhere else, and values redacted from responses
 * (docs/credentials.md).
 *
 * Push-based and free of I/O: the flow's loop (broker/broker.c) feeds
 * what it read from the guest and from upstream, and writes what the
 * engine appended to the output buffers. So the parser is unit-tested and
 * fuzzed on its own (tests/unit/broker, fuzz/fuzz_http1.c).
 *
 * Requests (guest -> upstream), each one checked before any byte of it
 * goes upstream:
 *  - framing: a request line and headers of at most H1_HEAD_MAX bytes;
 *    Content-Length and chunked together, two Content-Lengths, a bad
 *    length or chunk size, a bare LF, an obsolete folded header, a
 *    Transfer-Encoding other than chunked: a 400, then close;
 *  - the Host header (and an absolute-form target's host) must equal the
 *    connection's host (the SNI, for TLS; for plain HTTP one of the names
 *    the destination was resolved from), on every request of a keep-alive
 *    connection: else a 403;
 *  - every placeholder found anywhere in the request (target, any header,
 *    the body) is swapped only where its credential allows: its host, an
 *    enabled location (header name, Basic, query parameter, body), over
 *    TLS unless the credential opts in to plain HTTP; anywhere else the
 *    request is blocked: a 403 whose body says why, one audit record, and
 *    the connection closes (after the responses to earlier requests);
 *  - inject and require (policy/credentials.h);
 *  - Accept-Encoding is set to identity on requests to credentialed hosts
 *    (so that a value echoed back can be found); an encoded response
 *    (gzip, deflate, br, zstd) is decoded anyway.
 * Chunked bodies, pipelining, Expect: 100-continue and the Upgrade of a
 * WebSocket (headers swapped, then frames pass as they are) work.
 *
 * Responses (upstream -> guest): every secret's value is replaced by its
 * placeholder in the status line, the headers and the body (fixed-length,
 * chunked, close-delimited, decoded as above; event streams without
 * waiting for more than the bytes that may begin a value). A body whose
 * length changes goes on chunked (HTTP/1.1) or close-delimited (1.0).
 */
#ifndef MOAT_BROKER_HTTP1_H
#define MOAT_BROKER_HTTP1_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "broker/store.h"

#define H1_HEAD_MAX (64 * 1024) /* a request's or response's head */
#define H1_HEADERS_MAX 128	/* header fields in one head */
/* What the bytes of one h1_from_upstream call may decode to (gzip, br,
 * zstd): past it the response is cut and the connection closes. A few
 * bytes of zstd make megabytes, and the loop's bound on what it queues
 * is checked between calls only; so a flow holds this much at most,
 * not a whole decoded body (a ratio of 64 to one on 16 KiB reads). */
#define H1_DOWN_BURST (1u << 20)

/* A growable byte buffer (the engine's output). */
struct bbuf {
	uint8_t *p;
	size_t len, cap;
};
int bbuf_put(struct bbuf *b, const void *data, size_t n); /* 0 or -ENOMEM */
void bbuf_consume(struct bbuf *b, size_t n); /* drop n written bytes */
void bbuf_free(struct bbuf *b);

/* Who the flow is, for audit records. */
struct h1_who {
	uint64_t flow;	  /* the sentry's flow id */
	int pid;	  /* the guest process */
	const char *exe;  /* its executable */
	const char *dest; /* "ADDR:PORT" as connected */
};

struct h1_config {
	struct store *store;
	bool tls;
	/* TLS: the SNI (checked against the destination already); plain:
	 * NULL, and the Host of each request must be one of names[] */
	const char *host;
	const char *const *names;
	size_t nnames;
	const struct h1_who *who;
	/* One audit record's members (JSON, no braces): "event":
	 * "credential", "verdict": "swapped" or "blocked", secret, location,
	 * rule, host, method, path (cut), bytes; never a value. */
	void (*audit)(void *ctx, const char *members);
	void *ctx;
};

enum h1_status {
	H1_MORE = 0, /* go on */
	H1_CLOSE,    /* write what is queued for the guest, then close both */
	H1_TUNNEL,   /* an upgrade took: bytes now pass as they are (the
		      * engine has queued what it held) */
};
/* After H1_TUNNEL from h1_from_upstream, the loop calls
 * h1_from_guest(c, NULL, 0, up, down) once: that queues the guest's bytes
 * held while the upgrade was pending. In a tunnel both h1_from_* copy
 * bytes as they are. -ENOMEM from any call: close both sides. */

struct h1_conn;

/* NULL on ENOMEM. The config (and what it points to) must outlive it. */
struct h1_conn *h1_new(const struct h1_config *cfg);
void h1_free(struct h1_conn *c);

/* n bytes from the guest: what goes upstream is appended to up, what the
 * engine answers the guest itself (400, 403, 100 Continue) to down.
 * Returns an enum h1_status, or -ENOMEM. */
int h1_from_guest(struct h1_conn *c, const uint8_t *buf, size_t n,
		  struct bbuf *up, struct bbuf *down);
/* n bytes from upstream: the redacted response bytes into down. */
int h1_from_upstream(struct h1_conn *c, const uint8_t *buf, size_t n,
		     struct bbuf *down);
/* The guest or upstream closed its side: a close-delimited body ends;
 * anything cut short makes H1_CLOSE. */
int h1_guest_eof(struct h1_conn *c, struct bbuf *up, struct bbuf *down);
int h1_upstream_eof(struct h1_conn *c, struct bbuf *down);

/* Redaction alone, for other framings (HTTP/2 DATA frames): a stream's
 * state carries the bytes that may begin a value across calls. */
struct redact;
struct redact *redact_new(struct store *s);
void redact_free(struct redact *r);
/* Append buf with every value replaced by its placeholder to out; the
 * bytes that may begin a value are held until the next call, or until
 * fin. 0 or -ENOMEM. */
int redact_feed(struct redact *r, const uint8_t *buf, size_t n, bool fin,
		struct bbuf *out);

/* The request checks alone, for other framings (HTTP/2: broker/http2.c
 * keeps one h1_conn per stream). A field: name and value, not
 * NUL-terminated. */
struct h1_field {
	const uint8_t *name, *value;
	size_t nl, vl;
};
/* One request's head as fields: pseudo-headers (:method, :path,
 * :authority, :scheme) and the rest, names in lower case. Checked as an
 * HTTP/1 head is: :authority (or Host) and any Host must be the
 * connection's host; every placeholder swapped where allowed (headers,
 * Basic, :path's query), else refused; require, inject; Accept-Encoding
 * identity to credentialed hosts; a Content-Length a body swap may make
 * wrong dropped. 0: the fields that go upstream appended to out
 * (h1_field_next walks them, pseudo-headers first); 1: refused, *code
 * is 400 or 403, why (cap bytes) the answer's body ("moat: blocked:
 * ...\n"), and the audit record is written; -ENOMEM. */
int h1_msg_head(struct h1_conn *c, const struct h1_field *f, size_t n,
		struct bbuf *out, int *code, char *why, size_t cap);
/* The request's body, a piece at a time (fin: its end): swapped into
 * out where the body is allowed, else 1 (a 403: why and the record as
 * above); 0 or -ENOMEM. */
int h1_msg_body(struct h1_conn *c, const uint8_t *p, size_t n, bool fin,
		struct bbuf *out, char *why, size_t cap);
/* The request went up whole: one record per secret swapped into it. */
void h1_msg_done(struct h1_conn *c);
/* The next record of h1_msg_head's out from *off; false at the end. */
bool h1_field_next(const struct bbuf *b, size_t *off, struct h1_field *f);
/* Does redaction keep lengths (every placeholder as long as its
 * value)? */
bool h1_lengths_kept(struct store *s);

#endif
