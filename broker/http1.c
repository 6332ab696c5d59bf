/* broker/http1.c: HTTP/1.x through the broker (broker/http1.h).
 *
 * Two state machines share one connection: the request side parses what
 * the guest sends, checks and swaps it, and queues what it may send
 * upstream; the response side parses what upstream answers and redacts
 * it. They meet in a FIFO of the requests that wait for a response (for
 * pipelining, HEAD and upgrades) and in the answer the engine itself
 * gives (a 400 or 403), which waits until every earlier response is out.
 *
 * Every guest-reachable path returns -ENOMEM rather than abort, and every
 * buffer is bounded: a head by H1_HEAD_MAX, the bytes held back by the
 * longest placeholder or value, a decoded body by H1_DECODED_MAX.
 */
#include <brotli/decode.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <zlib.h>
#include <zstd.h>

#include "broker/http1.h"
#include "broker/scan.h"
#include "lib/util.h"
#include "policy/credentials.h"

/* A response body decoded from gzip, br, ... is cut (the connection
 * closes) past this: what one response may make the broker produce. */
#define H1_DECODED_MAX (64ull << 20)
#define H1_LINE_MAX 4096    /* a chunk-size line */
#define H1_PENDING_MAX 1024 /* requests pipelined ahead of responses */
#define ZSTD_WINDOW_LOG 23  /* 8 MiB: what zstd -19 makes, at most */
#define CHUNK_BODY_MAX (1ull << 60)
#define H1_TOKENS_MAX 8 /* Basic tokens remembered per connection */

enum rq_state {
	RQ_HEAD,
	RQ_BODY,       /* Content-Length bytes */
	RQ_CHUNK_SIZE, /* a chunk-size line */
	RQ_CHUNK_DATA,
	RQ_CHUNK_END, /* the CRLF after a chunk's data */
	RQ_TRAILER,   /* trailer fields up to the empty line */
	RQ_UPGRADE,   /* an Upgrade went up: hold until its answer */
	RQ_TUNNEL,
	RQ_DEAD, /* answered or failed: drop what comes */
};

enum rs_state {
	RS_HEAD,
	RS_BODY,  /* Content-Length bytes */
	RS_CLOSE, /* to the end of the connection */
	RS_CHUNK_SIZE,
	RS_CHUNK_DATA,
	RS_CHUNK_END,
	RS_TRAILER,
	RS_TUNNEL,
	RS_DEAD,
};

enum out_framing {
	OUT_SAME,    /* the upstream's Content-Length, or to the close */
	OUT_CHUNKED, /* re-framed as chunks */
	OUT_CLOSE,   /* re-framed as close-delimited (HTTP/1.0) */
};

enum dec_kind {
	DEC_NONE,
	DEC_GZIP,
	DEC_DEFLATE,
	DEC_BR,
	DEC_ZSTD
};

struct decoder {
	enum dec_kind kind;
	bool started, ended, fed;
	z_stream z;
	BrotliDecoderState *br;
	ZSTD_DStream *zs;
};

/* A request that waits for its response. */
struct pending {
	uint64_t seq;
	bool head;    /* HEAD: no body whatever the headers say */
	bool upgrade; /* a WebSocket upgrade: 101 makes a tunnel */
	bool cred;    /* to a credentialed host: decode bodies */
	bool v10;     /* HTTP/1.0: no chunked answer */
};

/* Where a placeholder was found, for the check and the record. */
enum loc_kind {
	LOC_HEADER,
	LOC_BASIC,
	LOC_QUERY,
	LOC_BODY,
	LOC_NEVER
};

struct h1_conn {
	const struct h1_config *cfg;
	long dport; /* the port connected to, or -1 */
	bool close, tunnel;

	/* requests */
	enum rq_state rq;
	struct bbuf rqbuf; /* a head, line or trailers being gathered */
	size_t rqscanned;  /* of rqbuf, looked at for the end */
	uint64_t rqleft;   /* bytes of the body or chunk to come */
	bool rq_rechunk;   /* a Content-Length body goes on as chunks */
	struct scan rqscan;
	struct bbuf rqout; /* a piece of body, swapped, before framing */
	uint64_t rq_seq, rq_bytes;
	uint64_t swapped;  /* bit i: secret i's value went up */
	uint64_t injected; /* bit i: by its inject rule */
	char swap_loc[SCAN_MAX][144];
	char host[256], method[40], path[201];
	struct bbuf held; /* guest bytes after an Upgrade, for the tunnel */

	/* the engine's own answer, after answer_after more responses */
	struct bbuf answer;
	size_t answer_after;
	bool answering;

	struct pending *q;
	size_t qhead, qlen, qcap;

	/* responses */
	enum rs_state rs;
	struct bbuf rsbuf;
	size_t rsscanned;
	uint64_t rsleft;
	uint64_t rs_room; /* what the body may still decode to */
	size_t down_base; /* down's length when this call began */
	bool rs_started;  /* some of the current response went down */
	bool rs_closes;	  /* the connection ends with this response */
	enum out_framing rsout;
	struct decoder dec;
	struct scan rsscan;
	struct bbuf rstmp;

	/* The Basic tokens the broker made (a value inside), each with the
	 * guest's own as its "placeholder": an echo of the header carries
	 * the value base64-encoded, which the search for values misses, so
	 * these are redacted from responses too (a store of their own). */
	struct secret btok[H1_TOKENS_MAX];
	struct store bst;
	size_t btok_next;
	struct scan bscan;
	struct bbuf rstmp2;
};

/* ------------------------------------------------------------ helpers */

static int put_str(struct bbuf *b, const char *s)
{
	return bbuf_put(b, s, strlen(s));
}

static int put_fmt(struct bbuf *b, const char *fmt, ...) MOAT_PRINTF(2, 3);
static int put_fmt(struct bbuf *b, const char *fmt, ...)
{
	char tmp[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n < 0)
		return -EINVAL;
	return bbuf_put(b, tmp,
			(size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

static bool is_tchar(uint8_t ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
	       (ch >= '0' && ch <= '9') || strchr("!#$%&'*+-.^_`|~", ch);
}

static bool eq_nocase(const uint8_t *a, size_t al, const char *b)
{
	return al == strlen(b) && strncasecmp((const char *)a, b, al) == 0;
}

/* Bytes (not NUL-terminated) as a lower-case C string, cut to cap. */
static void lower_into(char *out, size_t cap, const uint8_t *s, size_t n)
{
	size_t i;

	if (n > cap - 1)
		n = cap - 1;
	for (i = 0; i < n; i++)
		out[i] = (char)(s[i] >= 'A' && s[i] <= 'Z' ? s[i] + 32 : s[i]);
	out[n] = '\0';
}

/* Does host (lower case) match a credential's host pattern: an exact
 * name, or "*.domain" for names strictly below domain? A credential bound
 * to "*" would go everywhere, so "*" matches nothing here. */
static bool h1_host_match(const char *pattern, const char *host)
{
	size_t pl, hl;

	if (pattern[0] == '*' && pattern[1] == '.') {
		pl = strlen(pattern + 1);
		hl = strlen(host);
		return hl > pl && strcasecmp(host + hl - pl, pattern + 1) == 0;
	}
	return strcasecmp(pattern, host) == 0;
}

static bool cred_for(const struct credential *cr, const char *host)
{
	size_t i;

	if (!cr)
		return false;
	for (i = 0; i < cr->nhosts; i++)
		if (h1_host_match(cr->hosts[i], host))
			return true;
	return false;
}

static const struct store *store_of(const struct h1_conn *c)
{
	return c->cfg->store;
}

/* ------------------------------------------------------------- audit */

static void add_str(char *m, size_t cap, size_t *o, const char *key,
		    const char *val)
{
	char q[1024];

	if (!val || *o >= cap)
		return;
	json_quote(q, sizeof(q), val);
	*o += (size_t)snprintf(m + *o, cap - *o, "%s\"%s\":%s", *o ? "," : "",
			       key, q);
}

static void audit(struct h1_conn *c, const char *verdict, long secret,
		  const char *loc, const char *reason, const char *rule,
		  long long bytes)
{
	const struct h1_who *who = c->cfg->who;
	char m[4096];
	size_t o = 0, cap = sizeof(m);

	if (!c->cfg->audit)
		return;
	add_str(m, cap, &o, "event", "credential");
	add_str(m, cap, &o, "verdict", verdict);
	if (secret >= 0 && store_of(c)->v[secret].cred)
		add_str(m, cap, &o, "secret",
			store_of(c)->v[secret].cred->name);
	add_str(m, cap, &o, "location", loc);
	add_str(m, cap, &o, "reason", reason);
	add_str(m, cap, &o, "rule", rule);
	add_str(m, cap, &o, "host", c->host[0] ? c->host : NULL);
	add_str(m, cap, &o, "method", c->method[0] ? c->method : NULL);
	add_str(m, cap, &o, "path", c->path[0] ? c->path : NULL);
	if (bytes >= 0 && o < cap)
		o += (size_t)snprintf(m + o, cap - o, ",\"bytes\":%lld", bytes);
	if (who) {
		if (o < cap)
			o += (size_t)snprintf(m + o, cap - o,
					      ",\"flow\":%" PRIu64
					      ",\"pid\":%d",
					      who->flow, who->pid);
		add_str(m, cap, &o, "exe", who->exe);
		add_str(m, cap, &o, "dest", who->dest);
	}
	if (o >= cap)
		o = cap - 1;
	m[o] = '\0';
	c->cfg->audit(c->cfg->ctx, m);
}

/* ---------------------------------------------------------- the FIFO */

static int q_push(struct h1_conn *c, struct pending p)
{
	struct pending *nq;
	size_t i, cap;

	if (c->qlen == c->qcap) {
		cap = c->qcap ? c->qcap * 2 : 8;
		nq = malloc(cap * sizeof(*nq));
		if (!nq)
			return -ENOMEM;
		for (i = 0; i < c->qlen; i++)
			nq[i] = c->q[(c->qhead + i) % c->qcap];
		free(c->q);
		c->q = nq;
		c->qcap = cap;
		c->qhead = 0;
	}
	c->q[(c->qhead + c->qlen) % c->qcap] = p;
	c->qlen++;
	return 0;
}

static struct pending *q_front(struct h1_conn *c)
{
	return c->qlen ? &c->q[c->qhead] : NULL;
}

static struct pending *q_back(struct h1_conn *c)
{
	return c->qlen ? &c->q[(c->qhead + c->qlen - 1) % c->qcap] : NULL;
}

static void q_pop(struct h1_conn *c)
{
	if (!c->qlen)
		return;
	c->qhead = (c->qhead + 1) % c->qcap;
	c->qlen--;
}

/* ------------------------------------------------- the engine's answer */

/* Queue our own answer (400, 403) to the guest: now when nothing is
 * waiting for upstream, else after the responses to earlier requests;
 * then the connection closes. The request side takes nothing more. */
static int answer(struct h1_conn *c, struct bbuf *down, int code,
		  const char *status, const char *prefix, const char *why)
{
	char body[600];
	int n;

	n = snprintf(body, sizeof(body), "moat: %s: %s\n", prefix, why);
	if (n < 0 || (size_t)n >= sizeof(body))
		n = (int)sizeof(body) - 1;
	c->rq = RQ_DEAD;
	c->answer.len = 0;
	if (put_fmt(&c->answer,
		    "HTTP/1.1 %d %s\r\nContent-Type: text/plain\r\n"
		    "Content-Length: %d\r\nConnection: close\r\n\r\n",
		    code, status, n) < 0 ||
	    bbuf_put(&c->answer, body, (size_t)n) < 0)
		return -ENOMEM;
	if (c->qlen == 0 && c->rs == RS_HEAD && c->rsbuf.len == 0) {
		if (bbuf_put(down, c->answer.p, c->answer.len) < 0)
			return -ENOMEM;
		c->close = true;
		return 1;
	}
	c->answering = true;
	c->answer_after = c->qlen;
	return 1;
}

/* The request being sent up fails in its body: it is taken back from the
 * FIFO (upstream gets it cut short) unless its response already began,
 * when all there is left to do is close. */
static int answer_mid(struct h1_conn *c, struct bbuf *down, int code,
		      const char *status, const char *prefix, const char *why)
{
	struct pending *b = q_back(c);

	if (!b || b->seq != c->rq_seq || (c->qlen == 1 && c->rs_started) ||
	    (c->qlen == 1 && c->rsbuf.len)) {
		c->rq = RQ_DEAD;
		c->close = true;
		return 1;
	}
	c->qlen--;
	return answer(c, down, code, status, prefix, why);
}

static int bad_request(struct h1_conn *c, struct bbuf *down, bool mid,
		       const char *why)
{
	return (mid ? answer_mid : answer)(c, down, 400, "Bad Request",
					   "bad request", why);
}

/* ------------------------------------------------- placeholders in requests */

/* What a placeholder found at loc may not be (NULL: it may be swapped):
 * the checks in the order that gives the most useful reason. */
static const char *refusal(const struct h1_conn *c, size_t i,
			   enum loc_kind kind, const char *name)
{
	const struct secret *x = &store_of(c)->v[i];
	const struct credential *cr = x->cred;
	size_t k;

	if (x->revoked)
		return "revoked";
	if (!cred_for(cr, c->host))
		return "wrong-host";
	if (!c->cfg->tls && !cr->plain_http)
		return "plain-http";
	switch (kind) {
	case LOC_HEADER:
		if (!(cr->where & CRED_IN_HEADER))
			return "location";
		for (k = 0; k < cr->nheaders; k++)
			if (strcasecmp(cr->headers[k], name) == 0)
				return NULL;
		return "location";
	case LOC_BASIC:
		return cr->where & CRED_IN_BASIC ? NULL : "location";
	case LOC_QUERY:
		if (!(cr->where & CRED_IN_QUERY))
			return "location";
		for (k = 0; k < cr->nquery; k++)
			if (strcmp(cr->query[k], name) == 0)
				return NULL;
		return "location";
	case LOC_BODY:
		return cr->where & CRED_IN_BODY ? NULL : "location";
	case LOC_NEVER:
		return "location";
	}
	return "location";
}

static void why_text(char *out, size_t cap, const struct h1_conn *c,
		     const char *name, const char *reason, const char *loc)
{
	if (strcmp(reason, "revoked") == 0)
		snprintf(out, cap, "secret %s is revoked", name);
	else if (strcmp(reason, "wrong-host") == 0)
		snprintf(out, cap, "secret %s may not be sent to %s", name,
			 c->host);
	else if (strcmp(reason, "plain-http") == 0)
		snprintf(out, cap, "secret %s may not be sent over plain HTTP",
			 name);
	else if (strcmp(reason, "length") == 0)
		snprintf(out, cap,
			 "a swap in this HTTP/1.0 body would change its "
			 "length");
	else if (strcmp(reason, "other-credential") == 0)
		snprintf(out, cap,
			 "requests to %s must carry secret %s's placeholder "
			 "in %s",
			 c->host, name, loc);
	else
		snprintf(out, cap, "secret %s may not be sent in %s", name,
			 loc);
}

static void audit_swapped(struct h1_conn *c);

/* Block the request for secret i found at loc: the record and the 403. */
static int block(struct h1_conn *c, struct bbuf *down, bool mid, long i,
		 const char *loc, const char *reason)
{
	const char *name = "?";
	char why[512];

	if (i >= 0 && store_of(c)->v[i].cred)
		name = store_of(c)->v[i].cred->name;
	/* in the body: the head, with what was swapped into it, went up */
	if (mid)
		audit_swapped(c);
	audit(c, "blocked", i, loc, reason, NULL, -1);
	why_text(why, sizeof(why), c, name, reason, loc);
	return (mid ? answer_mid : answer)(c, down, 403, "Forbidden", "blocked",
					   why);
}

/* The context of one scan of a part of a request. */
struct swap_ctx {
	struct h1_conn *c;
	enum loc_kind kind;
	const char *name; /* the header or parameter */
	char loc[144];
	long blocked; /* the secret, when the scan stopped */
	const char *reason;
};

static void loc_name(char *out, size_t cap, enum loc_kind kind,
		     const char *name)
{
	switch (kind) {
	case LOC_HEADER:
		snprintf(out, cap, "header:%s", name);
		break;
	case LOC_BASIC:
		snprintf(out, cap, "basic");
		break;
	case LOC_QUERY:
		snprintf(out, cap, "query:%s", name);
		break;
	case LOC_BODY:
		snprintf(out, cap, "body");
		break;
	case LOC_NEVER:
		snprintf(out, cap, "%s", name);
		break;
	}
}

static int to_value(void *ctx, size_t i, const uint8_t **rep, size_t *rlen)
{
	struct swap_ctx *sx = ctx;
	struct h1_conn *c = sx->c;
	const struct secret *x = &store_of(c)->v[i];

	sx->reason = refusal(c, i, sx->kind, sx->name);
	if (sx->reason) {
		sx->blocked = (long)i;
		return 1;
	}
	if (!(c->swapped & (1ull << i))) {
		c->swapped |= 1ull << i;
		snprintf(c->swap_loc[i], sizeof(c->swap_loc[i]), "%s", sx->loc);
	}
	*rep = (const uint8_t *)x->value;
	*rlen = x->vlen;
	return 0;
}

static void swap_init(struct swap_ctx *sx, struct h1_conn *c,
		      enum loc_kind kind, const char *name)
{
	sx->c = c;
	sx->kind = kind;
	sx->name = name;
	sx->blocked = -1;
	sx->reason = NULL;
	loc_name(sx->loc, sizeof(sx->loc), kind, name);
}

/* s (n bytes, whole) with its placeholders swapped into out: 0, 1 when
 * one may not be (sx says which), or -ENOMEM. */
static int swap_whole(struct swap_ctx *sx, const uint8_t *s, size_t n,
		      struct bbuf *out)
{
	struct scan sc = { 0 };
	int rc;

	rc = scan_run(&sc, store_of(sx->c), false, s, n, true, to_value, sx,
		      out);
	scan_free(&sc);
	return rc;
}

static bool has_placeholder(const struct store *s, size_t i, const uint8_t *v,
			    size_t n)
{
	const struct secret *x = &s->v[i];

	return x->plen && memmem(v, n, x->placeholder, x->plen);
}

/* ------------------------------------------------------------- base64 */

static const char b64[] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static int b64_val(uint8_t ch)
{
	const char *p = ch ? strchr(b64, ch) : NULL;

	return p ? (int)(p - b64) : -1;
}

/* Decode (padding optional); -1 when it is no base64. */
static int b64_decode(const uint8_t *s, size_t n, struct bbuf *out)
{
	uint32_t acc = 0;
	size_t i, bits = 0;
	uint8_t byte;
	int v;

	while (n && s[n - 1] == '=')
		n--;
	for (i = 0; i < n; i++) {
		v = b64_val(s[i]);
		if (v < 0)
			return -1;
		acc = (acc << 6) | (uint32_t)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			byte = (uint8_t)(acc >> bits);
			if (bbuf_put(out, &byte, 1) < 0)
				return -ENOMEM;
		}
	}
	return n % 4 == 1 ? -1 : 0;
}

static int b64_encode(const uint8_t *s, size_t n, struct bbuf *out)
{
	char q[4];
	size_t i;
	uint32_t v;

	for (i = 0; i < n; i += 3) {
		v = (uint32_t)s[i] << 16;
		if (i + 1 < n)
			v |= (uint32_t)s[i + 1] << 8;
		if (i + 2 < n)
			v |= s[i + 2];
		q[0] = b64[(v >> 18) & 63];
		q[1] = b64[(v >> 12) & 63];
		q[2] = i + 1 < n ? b64[(v >> 6) & 63] : '=';
		q[3] = i + 2 < n ? b64[v & 63] : '=';
		if (bbuf_put(out, q, 4) < 0)
			return -ENOMEM;
	}
	return 0;
}

/* Remember the Basic token sent (sn bytes, a value inside) and the
 * guest's (on). 0 or -ENOMEM. */
static int remember_token(struct h1_conn *c, const uint8_t *sent, size_t sn,
			  const uint8_t *orig, size_t on)
{
	struct secret *t;
	size_t k;

	for (k = 0; k < c->bst.n; k++)
		if (c->btok[k].vlen == sn &&
		    !memcmp(c->btok[k].value, sent, sn))
			return 0;
	if (c->bst.n < H1_TOKENS_MAX) {
		t = &c->btok[c->bst.n];
	} else {
		t = &c->btok[c->btok_next++ % H1_TOKENS_MAX];
		explicit_bzero(t->value, t->vlen);
		free(t->value);
		free(t->placeholder);
	}
	*t = (struct secret){ 0 };
	t->value = malloc(sn);
	t->placeholder = malloc(on + 1);
	if (!t->value || !t->placeholder) {
		free(t->value);
		free(t->placeholder);
		*t = (struct secret){ 0 };
		return -ENOMEM;
	}
	memcpy(t->value, sent, sn);
	t->vlen = sn;
	memcpy(t->placeholder, orig, on);
	t->placeholder[on] = '\0';
	t->plen = on;
	if (t == &c->btok[c->bst.n]) {
		c->bst.n++;
		c->bst.v = c->btok;
	}
	return 0;
}

/* Values, then the Basic tokens made on this connection, replaced in
 * p[0..n) into out: s1 and s2 hold what may begin either. */
static int redact_all(struct h1_conn *c, struct scan *s1, struct scan *s2,
		      const uint8_t *p, size_t n, bool fin, struct bbuf *out)
{
	int rc;

	if (!c->bst.n)
		return redact_run(s1, store_of(c), p, n, fin, out);
	c->rstmp2.len = 0;
	rc = redact_run(s1, store_of(c), p, n, fin, &c->rstmp2);
	if (rc == 0)
		rc = redact_run(s2, &c->bst, c->rstmp2.p, c->rstmp2.len, fin,
				out);
	return rc;
}

/* --------------------------------------------------------- head parsing */

struct field {
	const uint8_t *n, *v;
	size_t nl, vl;
};

struct head {
	const uint8_t *start; /* the request or status line */
	size_t startl;
	struct field f[H1_HEADERS_MAX];
	size_t nf;
};

/* Split a whole head (it ends in an empty line) into its start line and
 * fields. NULL, or what is wrong with it. strict (requests): every line
 * ends in CRLF. */
static const char *split_head(const uint8_t *b, size_t n, bool strict,
			      struct head *h)
{
	const uint8_t *e, *colon;
	size_t i = 0, end, le, k;
	bool first = true;
	struct field *f;

	h->nf = 0;
	while (i < n) {
		e = memchr(b + i, '\n', n - i);
		if (!e)
			return "a head without its end";
		end = (size_t)(e - b);
		le = end;
		if (le > i && b[le - 1] == '\r')
			le--;
		else if (strict)
			return "a bare LF";
		if (le == i)
			return first ? "no request line" : NULL;
		for (k = i; k < le; k++)
			if (b[k] == '\r')
				return "a bare CR";
		if (first) {
			h->start = b + i;
			h->startl = le - i;
			first = false;
			i = end + 1;
			continue;
		}
		if (b[i] == ' ' || b[i] == '\t')
			return "a folded header line";
		if (h->nf == H1_HEADERS_MAX)
			return "too many header fields";
		colon = memchr(b + i, ':', le - i);
		if (!colon || colon == b + i)
			return "a header line without a name";
		f = &h->f[h->nf++];
		f->n = b + i;
		f->nl = (size_t)(colon - (b + i));
		for (k = 0; k < f->nl; k++)
			if (!is_tchar(f->n[k]))
				return "a bad header name";
		f->v = colon + 1;
		f->vl = (size_t)(b + le - f->v);
		while (f->vl && (f->v[0] == ' ' || f->v[0] == '\t')) {
			f->v++;
			f->vl--;
		}
		while (f->vl &&
		       (f->v[f->vl - 1] == ' ' || f->v[f->vl - 1] == '\t'))
			f->vl--;
		for (k = 0; k < f->vl; k++)
			if ((f->v[k] < 0x20 && f->v[k] != '\t') ||
			    f->v[k] == 0x7f)
				return "a control byte in a header";
		i = end + 1;
	}
	return "a head without its end";
}

/* Where the head that b holds ends (the index after its empty line), 0
 * while it has not yet, or (size_t)-1 for a bare LF (strict). from: the
 * bytes before it were looked at already. */
static size_t head_end(const uint8_t *b, size_t len, size_t from, bool strict)
{
	size_t i;

	for (i = from; i < len; i++) {
		if (b[i] != '\n')
			continue;
		if (i == 0 || b[i - 1] != '\r') {
			if (strict)
				return (size_t)-1;
			if (i >= 1 && b[i - 1] == '\n')
				return i + 1;
			if (i >= 2 && b[i - 1] == '\r' && b[i - 2] == '\n')
				return i + 1;
			continue;
		}
		if (i >= 3 && b[i - 2] == '\n' && b[i - 3] == '\r')
			return i + 1;
		if (!strict && i >= 2 && b[i - 2] == '\n')
			return i + 1;
	}
	return 0;
}

/* A Content-Length: digits only, and not absurd. */
static bool parse_len(const uint8_t *v, size_t n, uint64_t *out)
{
	uint64_t x = 0;
	size_t i;

	if (n == 0 || n > 18)
		return false;
	for (i = 0; i < n; i++) {
		if (v[i] < '0' || v[i] > '9')
			return false;
		x = x * 10 + (uint64_t)(v[i] - '0');
	}
	*out = x;
	return true;
}

/* A chunk-size line (without its CRLF): hex, then extensions we drop. */
static bool parse_chunk_size(const uint8_t *b, size_t n, uint64_t *out)
{
	uint64_t x = 0;
	size_t i = 0, k;
	int d;

	while (i < n) {
		uint8_t ch = b[i];

		if (ch >= '0' && ch <= '9')
			d = ch - '0';
		else if (ch >= 'a' && ch <= 'f')
			d = ch - 'a' + 10;
		else if (ch >= 'A' && ch <= 'F')
			d = ch - 'A' + 10;
		else
			break;
		if (x >= CHUNK_BODY_MAX / 16)
			return false;
		x = x * 16 + (uint64_t)d;
		i++;
	}
	if (i == 0)
		return false;
	while (i < n && (b[i] == ' ' || b[i] == '\t'))
		i++;
	if (i < n && b[i] != ';')
		return false;
	for (k = i; k < n; k++)
		if ((b[k] < 0x20 && b[k] != '\t') || b[k] == 0x7f)
			return false;
	*out = x;
	return true;
}

/* host[:port] as in a Host header or an authority: the name lower-cased,
 * brackets and a trailing dot dropped; *port -1 when none. false when
 * malformed. */
static bool split_authority(const uint8_t *s, size_t n, char *name, size_t cap,
			    long *port)
{
	size_t i, hn, k;
	const uint8_t *colon = NULL;
	long p = 0;

	*port = -1;
	if (n == 0)
		return false;
	if (s[0] == '[') {
		const uint8_t *rb = memchr(s, ']', n);

		if (!rb)
			return false;
		hn = (size_t)(rb - s) + 1;
		if (hn < n) {
			if (s[hn] != ':')
				return false;
			colon = s + hn;
		}
		for (k = 1; k + 1 < hn; k++)
			if (!strchr("0123456789abcdefABCDEF:.", s[k]))
				return false;
		if (hn - 2 == 0 || hn - 2 >= cap)
			return false;
		lower_into(name, cap, s + 1, hn - 2);
	} else {
		colon = memchr(s, ':', n);
		hn = colon ? (size_t)(colon - s) : n;
		for (k = 0; k < hn; k++)
			if (!((s[k] >= 'a' && s[k] <= 'z') ||
			      (s[k] >= 'A' && s[k] <= 'Z') ||
			      (s[k] >= '0' && s[k] <= '9') || s[k] == '-' ||
			      s[k] == '.' || s[k] == '_'))
				return false;
		if (hn && s[hn - 1] == '.')
			hn--;
		if (hn == 0 || hn >= cap)
			return false;
		lower_into(name, cap, s, hn);
	}
	if (colon) {
		i = (size_t)(colon - s) + 1;
		if (i < n) {
			if (n - i > 5)
				return false;
			for (; i < n; i++) {
				if (s[i] < '0' || s[i] > '9')
					return false;
				p = p * 10 + (s[i] - '0');
			}
			if (p > 65535)
				return false;
			*port = p;
		}
	}
	return true;
}

/* Is name (lower case) the connection's host: the SNI for TLS; for plain
 * HTTP, a name the destination was resolved from, or its address? */
static bool host_is_ours(const struct h1_conn *c, const char *name, long port)
{
	const struct h1_config *cfg = c->cfg;
	const char *dest = cfg->who ? cfg->who->dest : NULL;
	size_t i, al;

	if (port >= 0 && port != (cfg->tls ? 443 : 80) && port != c->dport)
		return false;
	if (cfg->tls)
		return cfg->host && strcasecmp(cfg->host, name) == 0;
	for (i = 0; i < cfg->nnames; i++)
		if (cfg->names[i] && strcasecmp(cfg->names[i], name) == 0)
			return true;
	if (dest) {
		/* "ADDR:PORT" or "[ADDR]:PORT" */
		const char *colon = strrchr(dest, ':');

		if (dest[0] == '[') {
			dest++;
			colon = strchr(dest, ']');
		}
		al = colon ? (size_t)(colon - dest) : strlen(dest);
		if (al && strlen(name) == al && strncmp(dest, name, al) == 0)
			return true;
	}
	return false;
}

/* -------------------------------------------------------- request heads */

static bool field_is(const struct field *f, const char *name)
{
	return eq_nocase(f->n, f->nl, name);
}

/* Is the value a comma list holding token (without case)? */
static bool list_has(const uint8_t *v, size_t n, const char *token)
{
	size_t i = 0, s, e;

	while (i < n) {
		while (i < n && (v[i] == ' ' || v[i] == '\t' || v[i] == ','))
			i++;
		s = i;
		while (i < n && v[i] != ',')
			i++;
		e = i;
		while (e > s && (v[e - 1] == ' ' || v[e - 1] == '\t'))
			e--;
		if (e > s && eq_nocase(v + s, e - s, token))
			return true;
	}
	return false;
}

/* Swap the placeholders of the request target: the path and parameter
 * names may carry none; a parameter's value only where enabled. */
static int swap_target(struct h1_conn *c, const uint8_t *t, size_t n,
		       struct bbuf *out, struct swap_ctx *sx)
{
	const uint8_t *q = memchr(t, '?', n), *p, *end, *eq, *amp;
	char key[128];
	int rc;

	swap_init(sx, c, LOC_NEVER, "target");
	rc = swap_whole(sx, t, q ? (size_t)(q - t) : n, out);
	if (rc || !q)
		return rc;
	if (bbuf_put(out, "?", 1) < 0)
		return -ENOMEM;
	p = q + 1;
	end = t + n;
	while (p <= end) {
		amp = memchr(p, '&', (size_t)(end - p));
		if (!amp)
			amp = end;
		eq = memchr(p, '=', (size_t)(amp - p));
		swap_init(sx, c, LOC_NEVER, "target");
		rc = swap_whole(sx, p, (size_t)((eq ? eq : amp) - p), out);
		if (rc)
			return rc;
		if (eq) {
			size_t kl = (size_t)(eq - p);

			if (kl > sizeof(key) - 1)
				kl = sizeof(key) - 1;
			memcpy(key, p, kl);
			key[kl] = '\0';
			swap_init(sx, c, LOC_QUERY, key);
			if (bbuf_put(out, "=", 1) < 0)
				return -ENOMEM;
			rc = swap_whole(sx, eq + 1, (size_t)(amp - eq - 1),
					out);
			if (rc)
				return rc;
		}
		if (amp == end)
			break;
		if (bbuf_put(out, "&", 1) < 0)
			return -ENOMEM;
		p = amp + 1;
	}
	return 0;
}

/* Is f an Authorization (or Proxy-) header with the Basic scheme? Its
 * credentials token then. */
static bool basic_token(const struct field *f, const uint8_t **tok, size_t *tl)
{
	if (!field_is(f, "authorization") &&
	    !field_is(f, "proxy-authorization"))
		return false;
	if (f->vl < 6 || strncasecmp((const char *)f->v, "basic ", 6) != 0)
		return false;
	*tok = f->v + 6;
	*tl = f->vl - 6;
	while (*tl && **tok == ' ') {
		(*tok)++;
		(*tl)--;
	}
	return true;
}

/* One header's value with its placeholders swapped into out: raw ones
 * as the header's, and those inside a Basic token as Basic. */
static int swap_field(struct h1_conn *c, const struct field *f,
		      const char *lname, struct bbuf *out, struct swap_ctx *sx)
{
	struct bbuf raw = { 0 }, dec = { 0 }, sw = { 0 };
	const uint8_t *tok;
	size_t tl;
	int rc;

	swap_init(sx, c, LOC_HEADER, lname);
	rc = swap_whole(sx, f->v, f->vl, &raw);
	if (rc)
		goto out;
	{
		struct field g = { f->n, raw.p, f->nl, raw.len };

		if (!raw.len || !basic_token(&g, &tok, &tl) ||
		    b64_decode(tok, tl, &dec) != 0) {
			rc = bbuf_put(out, raw.p, raw.len);
			goto out;
		}
		swap_init(sx, c, LOC_BASIC, lname);
		rc = swap_whole(sx, dec.p, dec.len, &sw);
		if (rc)
			goto out;
		if (sw.len == dec.len &&
		    (dec.len == 0 || memcmp(sw.p, dec.p, dec.len) == 0)) {
			rc = bbuf_put(out, raw.p, raw.len);
			goto out;
		}
		rc = bbuf_put(out, raw.p, (size_t)(tok - raw.p));
		if (rc == 0) {
			size_t at = out->len;
			struct bbuf mine = { 0 };

			rc = b64_encode(sw.p, sw.len, out);
			if (rc == 0)
				rc = b64_encode(dec.p, dec.len, &mine);
			if (rc == 0)
				rc = remember_token(c, out->p + at,
						    out->len - at, mine.p,
						    mine.len);
			bbuf_free(&mine);
		}
	}
out:
	bbuf_free(&raw);
	bbuf_free(&dec);
	bbuf_free(&sw);
	return rc;
}

/* Does field f carry secret i's placeholder (raw, or in a Basic token)? */
static bool carries(const struct h1_conn *c, size_t i, const struct field *f)
{
	struct bbuf dec = { 0 };
	const uint8_t *tok;
	size_t tl;
	bool yes = has_placeholder(store_of(c), i, f->v, f->vl);

	if (!yes && basic_token(f, &tok, &tl) && b64_decode(tok, tl, &dec) == 0)
		yes = dec.len &&
		      has_placeholder(store_of(c), i, dec.p, dec.len);
	bbuf_free(&dec);
	return yes;
}

/* require: a request to a secret's host whose enabled headers carry
 * something that is not the placeholder. The secret's index, or -1. */
static long required(struct h1_conn *c, const struct head *h, char *loc,
		     size_t cap)
{
	const struct store *s = store_of(c);
	const struct credential *cr;
	const uint8_t *tok;
	size_t i, k, j, tl;
	char lname[128];
	bool enabled;

	for (i = 0; i < scan_count(s); i++) {
		cr = s->v[i].cred;
		if (!cr || !cr->require || !cred_for(cr, c->host))
			continue;
		for (k = 0; k < h->nf; k++) {
			lower_into(lname, sizeof(lname), h->f[k].n, h->f[k].nl);
			enabled = false;
			if (cr->where & CRED_IN_HEADER)
				for (j = 0; j < cr->nheaders; j++)
					if (strcmp(cr->headers[j], lname) == 0)
						enabled = true;
			if ((cr->where & CRED_IN_BASIC) &&
			    basic_token(&h->f[k], &tok, &tl))
				enabled = true;
			/* another secret's placeholder for this host is
			 * no "other credential": it is swapped or blocked
			 * on its own */
			for (j = 0; enabled && j < scan_count(s); j++)
				if (cred_for(s->v[j].cred, c->host) &&
				    carries(c, j, &h->f[k]))
					enabled = false;
			if (enabled) {
				snprintf(loc, cap, "header:%s", lname);
				return (long)i;
			}
		}
	}
	return -1;
}

/* Does some credential bind the request's host? */
static bool host_credentialed(const struct h1_conn *c)
{
	const struct store *s = store_of(c);
	size_t i;

	for (i = 0; i < scan_count(s); i++)
		if (cred_for(s->v[i].cred, c->host))
			return true;
	return false;
}

/* Would a body swap change the body's length: a secret allowed in the
 * body of this request whose placeholder and value differ in length? */
static bool body_may_grow(const struct h1_conn *c)
{
	const struct store *s = store_of(c);
	size_t i;

	for (i = 0; i < scan_count(s); i++)
		if (s->v[i].plen != s->v[i].vlen &&
		    !refusal(c, i, LOC_BODY, "body"))
			return true;
	return false;
}

/* inject: the header set on matching requests that lack it. */
static int inject(struct h1_conn *c, const struct head *h, const uint8_t *path,
		  size_t pathl, struct bbuf *out)
{
	const struct store *s = store_of(c);
	const struct credential *cr;
	const struct cred_inject *in;
	const char *v, *at;
	size_t i, k, pl;
	bool present;
	char lname[128];
	int rc;

	for (i = 0; i < scan_count(s); i++) {
		cr = s->v[i].cred;
		in = cr ? cr->inject : NULL;
		if (!in || !in->header || !in->value || s->v[i].revoked ||
		    !cred_for(cr, c->host) || (!c->cfg->tls && !cr->plain_http))
			continue;
		if (in->method && strcmp(in->method, c->method) != 0)
			continue;
		pl = in->path ? strlen(in->path) : 0;
		if (pl > pathl || memcmp(path, in->path, pl) != 0)
			continue;
		present = false;
		for (k = 0; k < h->nf; k++)
			if (field_is(&h->f[k], in->header))
				present = true;
		if (present)
			continue;
		rc = put_str(out, in->header);
		if (rc == 0)
			rc = bbuf_put(out, ": ", 2);
		for (v = in->value; rc == 0 && (at = strstr(v, "{value}"));
		     v = at + 7) {
			rc = bbuf_put(out, v, (size_t)(at - v));
			if (rc == 0)
				rc = bbuf_put(out, s->v[i].value, s->v[i].vlen);
		}
		if (rc == 0)
			rc = put_str(out, v);
		if (rc == 0)
			rc = bbuf_put(out, "\r\n", 2);
		if (rc)
			return rc;
		lower_into(lname, sizeof(lname), (const uint8_t *)in->header,
			   strlen(in->header));
		c->injected |= 1ull << i;
		if (!(c->swapped & (1ull << i))) {
			c->swapped |= 1ull << i;
			snprintf(c->swap_loc[i], sizeof(c->swap_loc[i]),
				 "header:%s", lname);
		}
	}
	return 0;
}

/* One record per secret swapped into what went up of the request. */
static void audit_swapped(struct h1_conn *c)
{
	const struct store *s = store_of(c);
	size_t i;

	for (i = 0; i < scan_count(s); i++) {
		if (!(c->swapped & (1ull << i)))
			continue;
		audit(c, "swapped", (long)i, c->swap_loc[i], NULL,
		      c->injected & (1ull << i) ? "inject" : NULL,
		      (long long)c->rq_bytes);
	}
	c->swapped = c->injected = 0;
}

/* The request is all sent up: its records. */
static void rq_done(struct h1_conn *c)
{
	audit_swapped(c);
	c->rq = q_back(c) && q_back(c)->seq == c->rq_seq && q_back(c)->upgrade ?
			RQ_UPGRADE :
			RQ_HEAD;
}

static int put_up(struct h1_conn *c, struct bbuf *up, const void *p, size_t n)
{
	c->rq_bytes += n;
	return bbuf_put(up, p, n);
}

/* A whole request head h (hl bytes): checked, swapped, sent up. 0, 1
 * when answered here, -ENOMEM. */
static int rq_head(struct h1_conn *c, const uint8_t *b, size_t hl,
		   struct bbuf *up, struct bbuf *down)
{
	struct head *h = NULL;
	struct bbuf out = { 0 };
	struct swap_ctx sx;
	const uint8_t *sp1, *sp2, *t, *path, *hostv = NULL;
	const char *why;
	size_t ml, tl, k, hostl = 0, nhost = 0, pathl, ncl = 0, nte = 0;
	uint64_t cl = 0;
	bool chunked = false, v10, cred, upgrade = false;
	char lname[128], tname[256], loc[400];
	long port, tport, req;
	int rc;

	h = malloc(sizeof(*h));
	if (!h)
		return -ENOMEM;
	c->host[0] = c->method[0] = c->path[0] = '\0';
	c->swapped = c->injected = 0;
	c->rq_bytes = 0;
	c->rq_seq++;
	why = split_head(b, hl, true, h);
	if (why) {
		rc = bad_request(c, down, false, why);
		goto out;
	}
	/* METHOD SP target SP HTTP/1.x */
	sp1 = memchr(h->start, ' ', h->startl);
	sp2 = sp1 ? memchr(sp1 + 1, ' ',
			   h->startl - (size_t)(sp1 + 1 - h->start)) :
		    NULL;
	ml = sp1 ? (size_t)(sp1 - h->start) : 0;
	if (!sp2 || ml == 0 || ml >= sizeof(c->method) ||
	    h->start + h->startl - sp2 != 9 ||
	    memcmp(sp2 + 1, "HTTP/1.", 7) != 0 ||
	    (sp2[8] != '0' && sp2[8] != '1')) {
		rc = bad_request(c, down, false, "a malformed request line");
		goto out;
	}
	for (k = 0; k < ml; k++)
		if (!is_tchar(h->start[k])) {
			rc = bad_request(c, down, false, "a bad method");
			goto out;
		}
	memcpy(c->method, h->start, ml);
	c->method[ml] = '\0';
	v10 = sp2[8] == '0';
	t = sp1 + 1;
	tl = (size_t)(sp2 - t);
	for (k = 0; k < tl; k++)
		if (t[k] <= 0x20 || t[k] >= 0x7f) {
			rc = bad_request(c, down, false, "a bad target");
			goto out;
		}
	/* framing */
	for (k = 0; k < h->nf; k++) {
		const struct field *f = &h->f[k];

		if (field_is(f, "content-length")) {
			ncl++;
			if (!parse_len(f->v, f->vl, &cl)) {
				rc = bad_request(c, down, false,
						 "a bad Content-Length");
				goto out;
			}
		} else if (field_is(f, "transfer-encoding")) {
			nte++;
			chunked = eq_nocase(f->v, f->vl, "chunked");
		} else if (field_is(f, "host")) {
			hostv = f->v;
			hostl = f->vl;
			nhost++;
		} else if (field_is(f, "upgrade")) {
			upgrade = list_has(f->v, f->vl, "websocket");
		}
	}
	if (ncl > 1) {
		rc = bad_request(c, down, false, "two Content-Lengths");
		goto out;
	}
	if (nte > 1 || (nte && !chunked)) {
		rc = bad_request(c, down, false,
				 "a Transfer-Encoding other than chunked");
		goto out;
	}
	if (nte && ncl) {
		rc = bad_request(c, down, false,
				 "both Content-Length and chunked");
		goto out;
	}
	if (nte && v10) {
		rc = bad_request(c, down, false, "chunked in HTTP/1.0");
		goto out;
	}
	if (nhost != 1) {
		rc = bad_request(c, down, false,
				 nhost ? "two Host headers" : "no Host header");
		goto out;
	}
	if (!split_authority(hostv, hostl, c->host, sizeof(c->host), &port)) {
		rc = bad_request(c, down, false, "a bad Host");
		goto out;
	}
	/* the target: origin-form, absolute-form, or OPTIONS * */
	path = t;
	pathl = tl;
	if (tl && t[0] == '/') {
		/* origin-form */
	} else if (tl == 1 && t[0] == '*' &&
		   strcmp(c->method, "OPTIONS") == 0) {
		/* asterisk-form */
	} else if ((tl > 7 &&
		    strncasecmp((const char *)t, "http://", 7) == 0) ||
		   (tl > 8 &&
		    strncasecmp((const char *)t, "https://", 8) == 0)) {
		const uint8_t *a = t + (t[4] == ':' ? 7 : 8), *slash;

		slash = memchr(a, '/', (size_t)(t + tl - a));
		if (!slash)
			slash = memchr(a, '?', (size_t)(t + tl - a));
		if (!slash)
			slash = t + tl;
		if (memchr(a, '@', (size_t)(slash - a)) ||
		    !split_authority(a, (size_t)(slash - a), tname,
				     sizeof(tname), &tport)) {
			rc = bad_request(c, down, false, "a bad target");
			goto out;
		}
		path = slash;
		pathl = (size_t)(t + tl - slash);
		if (strcmp(tname, c->host) != 0 ||
		    !host_is_ours(c, tname, tport)) {
			audit(c, "blocked", -1, "target", "host-mismatch", NULL,
			      -1);
			snprintf(loc, sizeof(loc),
				 "the target's host %s is not this "
				 "connection's",
				 tname);
			rc = answer(c, down, 403, "Forbidden", "blocked", loc);
			goto out;
		}
	} else {
		rc = bad_request(c, down, false,
				 "a target that is not a path or a URL");
		goto out;
	}
	{
		const uint8_t *qm = memchr(path, '?', pathl);
		size_t n = qm ? (size_t)(qm - path) : pathl;

		if (n > sizeof(c->path) - 1)
			n = sizeof(c->path) - 1;
		memcpy(c->path, path, n);
		c->path[n] = '\0';
	}
	if (!host_is_ours(c, c->host, port)) {
		audit(c, "blocked", -1, "header:host", "host-mismatch", NULL,
		      -1);
		snprintf(loc, sizeof(loc), "Host %s is not this connection's",
			 c->host);
		rc = answer(c, down, 403, "Forbidden", "blocked", loc);
		goto out;
	}
	cred = host_credentialed(c);
	req = required(c, h, loc, sizeof(loc));
	if (req >= 0) {
		rc = block(c, down, false, req, loc, "other-credential");
		goto out;
	}
	c->rq_rechunk = ncl && cl && body_may_grow(c);
	if (c->rq_rechunk && v10) {
		rc = block(c, down, false, -1, "body", "length");
		goto out;
	}

	/* the head as it goes up */
	rc = bbuf_put(&out, h->start, (size_t)(t - h->start));
	if (rc == 0)
		rc = swap_target(c, t, tl, &out, &sx);
	if (rc == 1)
		goto blocked;
	if (rc == 0)
		rc = bbuf_put(&out, sp2, 9);
	if (rc == 0)
		rc = bbuf_put(&out, "\r\n", 2);
	for (k = 0; rc == 0 && k < h->nf; k++) {
		const struct field *f = &h->f[k];

		lower_into(lname, sizeof(lname), f->n, f->nl);
		/* dropped: what would let upstream encode what we must
		 * read, and upgrades other than WebSocket (an h2c tunnel
		 * would carry requests nobody checks) */
		if ((cred && field_is(f, "accept-encoding")) ||
		    (field_is(f, "te") &&
		     !eq_nocase(f->v, f->vl, "trailers")) ||
		    (field_is(f, "upgrade") && !upgrade) ||
		    field_is(f, "http2-settings") ||
		    (c->rq_rechunk && field_is(f, "content-length")))
			continue;
		swap_init(&sx, c, LOC_NEVER, "header-name");
		rc = swap_whole(&sx, f->n, f->nl, &out);
		if (rc)
			break;
		rc = bbuf_put(&out, ": ", 2);
		if (rc == 0)
			rc = swap_field(c, f, lname, &out, &sx);
		if (rc == 0)
			rc = bbuf_put(&out, "\r\n", 2);
	}
	if (rc == 1)
		goto blocked;
	if (rc == 0)
		rc = inject(c, h, path, pathl, &out);
	if (rc == 0 && cred)
		rc = put_str(&out, "Accept-Encoding: identity\r\n");
	if (rc == 0 && c->rq_rechunk)
		rc = put_str(&out, "Transfer-Encoding: chunked\r\n");
	if (rc == 0)
		rc = bbuf_put(&out, "\r\n", 2);
	if (rc)
		goto out;
	if (c->qlen >= H1_PENDING_MAX) {
		rc = bad_request(c, down, false, "too many requests ahead");
		goto out;
	}
	rc = q_push(c, (struct pending){ .seq = c->rq_seq,
					 .head = strcmp(c->method, "HEAD") == 0,
					 .upgrade = upgrade,
					 .cred = cred,
					 .v10 = v10 });
	if (rc == 0)
		rc = put_up(c, up, out.p, out.len);
	if (rc)
		goto out;
	scan_reset(&c->rqscan);
	if (chunked) {
		c->rq = RQ_CHUNK_SIZE;
	} else if (cl) {
		c->rq = RQ_BODY;
		c->rqleft = cl;
	} else {
		rq_done(c);
	}
	goto out;
blocked:
	rc = block(c, down, false, sx.blocked, sx.loc, sx.reason);
out:
	bbuf_free(&out);
	free(h);
	return rc;
}

/* Body bytes (the content, unframed): swapped and sent up, as a chunk
 * when the body goes on chunked. */
static int rq_body(struct h1_conn *c, const uint8_t *p, size_t n, bool fin,
		   bool chunks, struct bbuf *up, struct bbuf *down)
{
	struct swap_ctx sx;
	char size[24];
	int rc;

	swap_init(&sx, c, LOC_BODY, "body");
	c->rqout.len = 0;
	rc = scan_run(&c->rqscan, store_of(c), false, p, n, fin, to_value, &sx,
		      &c->rqout);
	if (rc == 1)
		return block(c, down, true, sx.blocked, sx.loc, sx.reason);
	if (rc)
		return rc;
	if (!c->rqout.len)
		return 0;
	if (chunks) {
		snprintf(size, sizeof(size), "%zx\r\n", c->rqout.len);
		if (put_up(c, up, size, strlen(size)) < 0 ||
		    put_up(c, up, c->rqout.p, c->rqout.len) < 0 ||
		    put_up(c, up, "\r\n", 2) < 0)
			return -ENOMEM;
		return 0;
	}
	return put_up(c, up, c->rqout.p, c->rqout.len);
}

/* Gather into rqbuf up to a line's end (LF). The line's length with its
 * CRLF once whole, 0 while not, (size_t)-1 when malformed (bare LF or
 * longer than max). *used: bytes taken from p. */
static size_t gather_line(struct bbuf *b, const uint8_t *p, size_t n,
			  size_t max, size_t *used, int *err)
{
	const uint8_t *lf = memchr(p, '\n', n);
	size_t take = lf ? (size_t)(lf - p) + 1 : n;

	*err = 0;
	if (b->len + take > max)
		return (size_t)-1;
	if (bbuf_put(b, p, take) < 0) {
		*err = -ENOMEM;
		return 0;
	}
	*used = take;
	if (!lf)
		return 0;
	if (b->len < 2 || b->p[b->len - 2] != '\r')
		return (size_t)-1;
	return b->len;
}

/* A chunk's size line, gathered in b, into *left: 1 once it is in, 0
 * while more bytes are needed, -EINVAL when it is bad, or -ENOMEM. Both
 * directions' chunked bodies read it so. */
static int chunk_size(struct bbuf *b, const uint8_t *p, size_t n, size_t *used,
		      uint64_t *left)
{
	int err = 0;
	size_t ln = gather_line(b, p, n, H1_LINE_MAX, used, &err);

	if (err)
		return err;
	if (ln == (size_t)-1)
		return -EINVAL;
	if (ln == 0)
		return 0;
	if (!parse_chunk_size(b->p, ln - 2, left))
		return -EINVAL;
	b->len = 0;
	return 1;
}

/* The CRLF after a chunk's data, gathered in b: 1 once it is in, 0 while
 * more bytes are needed, -EINVAL when the chunk is longer than its size,
 * or -ENOMEM. */
static int chunk_end(struct bbuf *b, const uint8_t *p, size_t n, size_t *used)
{
	while (*used < n && b->len < 2) {
		if (bbuf_put(b, p + *used, 1) < 0)
			return -ENOMEM;
		(*used)++;
	}
	if (b->len < 2)
		return 0;
	if (memcmp(b->p, "\r\n", 2) != 0)
		return -EINVAL;
	b->len = 0;
	return 1;
}

/* One step of the request side over p[0..n): bytes taken into *used. */
static int rq_step(struct h1_conn *c, const uint8_t *p, size_t n, size_t *used,
		   struct bbuf *up, struct bbuf *down)
{
	size_t old, end, take, k, ln;
	int rc = 0, err;
	struct swap_ctx sx;

	*used = 0;
	switch (c->rq) {
	case RQ_HEAD:
		old = c->rqbuf.len;
		take = n;
		if (take > H1_HEAD_MAX + 1 - old)
			take = H1_HEAD_MAX + 1 - old;
		if (bbuf_put(&c->rqbuf, p, take) < 0)
			return -ENOMEM;
		/* empty lines before a request are allowed (RFC 9112 2.2) */
		for (k = 0; c->rqbuf.len - k >= 2 && c->rqbuf.p[k] == '\r' &&
			    c->rqbuf.p[k + 1] == '\n';
		     k += 2)
			;
		if (k) {
			bbuf_consume(&c->rqbuf, k);
			c->rqscanned = 0;
			if (c->rqbuf.len == 0) {
				*used = take;
				return 0;
			}
		}
		end = head_end(c->rqbuf.p, c->rqbuf.len,
			       c->rqscanned > 3 ? c->rqscanned - 3 : 0, true);
		if (end == (size_t)-1)
			return bad_request(c, down, false, "a bare LF");
		if (end == 0) {
			*used = take;
			c->rqscanned = c->rqbuf.len;
			if (c->rqbuf.len > H1_HEAD_MAX)
				return bad_request(c, down, false,
						   "a head too large");
			return 0;
		}
		*used = end + k - old;
		c->rqbuf.len = end;
		c->rqscanned = 0;
		rc = rq_head(c, c->rqbuf.p, end, up, down);
		c->rqbuf.len = 0;
		return rc;
	case RQ_BODY:
		take = n < c->rqleft ? n : (size_t)c->rqleft;
		c->rqleft -= take;
		*used = take;
		rc = rq_body(c, p, take, c->rqleft == 0, c->rq_rechunk, up,
			     down);
		if (rc || c->rqleft)
			return rc;
		if (c->rq_rechunk && put_up(c, up, "0\r\n\r\n", 5) < 0)
			return -ENOMEM;
		rq_done(c);
		return 0;
	case RQ_CHUNK_SIZE:
		rc = chunk_size(&c->rqbuf, p, n, used, &c->rqleft);
		if (rc == -EINVAL)
			return bad_request(c, down, true, "a bad chunk size");
		if (rc <= 0)
			return rc;
		c->rq = c->rqleft ? RQ_CHUNK_DATA : RQ_TRAILER;
		return 0;
	case RQ_CHUNK_DATA:
		take = n < c->rqleft ? n : (size_t)c->rqleft;
		c->rqleft -= take;
		*used = take;
		rc = rq_body(c, p, take, false, true, up, down);
		if (rc == 0 && c->rqleft == 0)
			c->rq = RQ_CHUNK_END;
		return rc;
	case RQ_CHUNK_END:
		rc = chunk_end(&c->rqbuf, p, n, used);
		if (rc == -EINVAL)
			return bad_request(c, down, true,
					   "a chunk longer than its size");
		if (rc <= 0)
			return rc;
		c->rq = RQ_CHUNK_SIZE;
		return 0;
	case RQ_TRAILER:
		ln = gather_line(&c->rqbuf, p, n, H1_HEAD_MAX, used, &err);
		if (err)
			return err;
		if (ln == (size_t)-1)
			return bad_request(c, down, true, "bad trailers");
		if (ln == 0)
			return 0;
		/* a line ended: the last one is empty when the block ends */
		if (!(ln == 2 || (ln >= 4 && c->rqbuf.p[ln - 3] == '\n')))
			return 0;
		if (ln > 2) {
			struct head *h = malloc(sizeof(*h));
			const char *why;

			if (!h)
				return -ENOMEM;
			/* split_head wants a start line: give it one */
			why = NULL;
			{
				struct bbuf t = { 0 };

				rc = put_str(&t, "T\r\n");
				if (rc == 0)
					rc = bbuf_put(&t, c->rqbuf.p, ln);
				if (rc == 0)
					why = split_head(t.p, t.len, true, h);
				bbuf_free(&t);
			}
			free(h);
			if (rc)
				return rc;
			if (why)
				return bad_request(c, down, true, why);
		}
		/* the body's held bytes, then the last chunk and trailers */
		rc = rq_body(c, NULL, 0, true, true, up, down);
		if (rc)
			return rc;
		swap_init(&sx, c, LOC_NEVER, "trailer");
		c->rqout.len = 0;
		rc = swap_whole(&sx, c->rqbuf.p, ln, &c->rqout);
		if (rc == 1)
			return block(c, down, true, sx.blocked, sx.loc,
				     sx.reason);
		if (rc)
			return rc;
		if (put_up(c, up, "0\r\n", 3) < 0 ||
		    put_up(c, up, c->rqbuf.p, ln) < 0)
			return -ENOMEM;
		c->rqbuf.len = 0;
		rq_done(c);
		return 0;
	case RQ_UPGRADE:
		if (c->held.len + n > H1_HEAD_MAX)
			return bad_request(c, down, false,
					   "too much before the upgrade");
		*used = n;
		return bbuf_put(&c->held, p, n);
	case RQ_TUNNEL:
		*used = n;
		return bbuf_put(up, p, n);
	case RQ_DEAD:
		*used = n;
		return 0;
	}
	*used = n;
	return 0;
}

static int status(const struct h1_conn *c)
{
	if (c->close)
		return H1_CLOSE;
	return c->tunnel ? H1_TUNNEL : H1_MORE;
}

int h1_from_guest(struct h1_conn *c, const uint8_t *buf, size_t n,
		  struct bbuf *up, struct bbuf *down)
{
	size_t i = 0, used;
	int rc = 0;

	if (c->close)
		return H1_CLOSE;
	if (c->rq == RQ_TUNNEL) {
		if (c->held.len) {
			if (bbuf_put(up, c->held.p, c->held.len) < 0)
				return -ENOMEM;
			c->held.len = 0;
		}
		if (n && bbuf_put(up, buf, n) < 0)
			return -ENOMEM;
		return status(c);
	}
	pthread_rwlock_rdlock(&c->cfg->store->lock);
	while (i < n && rc == 0 && !c->close) {
		enum rq_state was = c->rq;

		rc = rq_step(c, buf + i, n - i, &used, up, down);
		if (rc >= 0)
			rc = 0;
		i += used;
		if (used == 0 && c->rq == was)
			break; /* a step that took nothing: never loop */
	}
	pthread_rwlock_unlock(&c->cfg->store->lock);
	return rc < 0 ? rc : status(c);
}

int h1_guest_eof(struct h1_conn *c, struct bbuf *up, struct bbuf *down)
{
	(void)up;
	(void)down;
	switch (c->rq) {
	case RQ_HEAD:
		if (c->rqbuf.len)
			c->close = true;
		break;
	case RQ_BODY:
	case RQ_CHUNK_SIZE:
	case RQ_CHUNK_DATA:
	case RQ_CHUNK_END:
	case RQ_TRAILER:
		c->close = true;
		break;
	case RQ_UPGRADE:
	case RQ_TUNNEL:
	case RQ_DEAD:
		break;
	}
	return status(c);
}

/* ------------------------------------------------------------ decoding */

static void dec_end(struct decoder *d)
{
	switch (d->kind) {
	case DEC_GZIP:
	case DEC_DEFLATE:
		if (d->started)
			inflateEnd(&d->z);
		break;
	case DEC_BR:
		if (d->br)
			BrotliDecoderDestroyInstance(d->br);
		break;
	case DEC_ZSTD:
		if (d->zs)
			ZSTD_freeDStream(d->zs);
		break;
	case DEC_NONE:
		break;
	}
	memset(d, 0, sizeof(*d));
}

static enum dec_kind dec_kind_of(const uint8_t *v, size_t n)
{
	if (eq_nocase(v, n, "gzip") || eq_nocase(v, n, "x-gzip"))
		return DEC_GZIP;
	if (eq_nocase(v, n, "deflate"))
		return DEC_DEFLATE;
	if (eq_nocase(v, n, "br"))
		return DEC_BR;
	if (eq_nocase(v, n, "zstd"))
		return DEC_ZSTD;
	return DEC_NONE;
}

/* Where decoded bytes go, a piece at a time (so that a body never sits
 * decoded in memory whole): 0 or -errno. */
typedef int (*dec_sink)(void *ctx, const uint8_t *p, size_t n);

#define OUT(b, n)                                                              \
	do {                                                                   \
		size_t n_ = (n);                                               \
		int rc_;                                                       \
		if (n_ > *room)                                                \
			return -EFBIG;                                         \
		*room -= n_;                                                   \
		rc_ = n_ ? sink(ctx, (b), n_) : 0;                             \
		if (rc_)                                                       \
			return rc_;                                            \
	} while (0)

/* Decode p[0..n) into sink, which may get no more than *room bytes in
 * all (a small body may decode to gigabytes). 0, -EPROTO (bad or cut
 * data), -EFBIG, -ENOMEM. */
static int dec_feed(struct decoder *d, const uint8_t *p, size_t n, bool fin,
		    dec_sink sink, void *ctx, uint64_t *room)
{
	static const uint8_t none[1];
	uint8_t tmp[16384];
	int zr;

	if (!p)
		p = none;
	if (n)
		d->fed = true;
	if (fin && !d->fed)
		return 0; /* an empty body is empty in every coding */
	switch (d->kind) {
	case DEC_NONE:
		OUT(p, n);
		return 0;
	case DEC_GZIP:
	case DEC_DEFLATE:
		if (!d->started) {
			int wbits = 16 + MAX_WBITS;

			if (n == 0)
				return fin ? -EPROTO : 0;
			/* "deflate" is zlib's format; some servers send it
			 * raw: a zlib header has CM 8 and a check */
			if (d->kind == DEC_DEFLATE)
				wbits = (p[0] & 0x0f) == 8 && (p[0] >> 4) <= 7 ?
						MAX_WBITS :
						-MAX_WBITS;
			if (inflateInit2(&d->z, wbits) != Z_OK)
				return -ENOMEM;
			d->started = true;
		}
		d->z.next_in = (Bytef *)p;
		d->z.avail_in = (uInt)n;
		while (d->z.avail_in > 0 && !d->ended) {
			d->z.next_out = tmp;
			d->z.avail_out = sizeof(tmp);
			zr = inflate(&d->z, Z_NO_FLUSH);
			if (zr == Z_MEM_ERROR)
				return -ENOMEM;
			if (zr != Z_OK && zr != Z_STREAM_END &&
			    zr != Z_BUF_ERROR)
				return -EPROTO;
			OUT(tmp, sizeof(tmp) - d->z.avail_out);
			if (zr == Z_STREAM_END) {
				/* gzip may hold several members */
				if (d->kind == DEC_GZIP && d->z.avail_in) {
					if (inflateReset(&d->z) != Z_OK)
						return -EPROTO;
				} else {
					d->ended = true;
				}
			} else if (zr == Z_BUF_ERROR) {
				break;
			}
		}
		/* what inflate holds back is out before its input ends */
		while (!d->ended) {
			d->z.next_out = tmp;
			d->z.avail_out = sizeof(tmp);
			zr = inflate(&d->z, Z_SYNC_FLUSH);
			if (zr != Z_OK && zr != Z_STREAM_END)
				break;
			OUT(tmp, sizeof(tmp) - d->z.avail_out);
			if (zr == Z_STREAM_END)
				d->ended = true;
			if (d->z.avail_out)
				break;
		}
		return fin && !d->ended ? -EPROTO : 0;
	case DEC_BR: {
		size_t ain = n, aout;
		const uint8_t *nin = p;
		uint8_t *nout;
		BrotliDecoderResult r;

		if (!d->br) {
			d->br = BrotliDecoderCreateInstance(NULL, NULL, NULL);
			if (!d->br)
				return -ENOMEM;
		}
		for (;;) {
			nout = tmp;
			aout = sizeof(tmp);
			r = BrotliDecoderDecompressStream(d->br, &ain, &nin,
							  &aout, &nout, NULL);
			if (r == BROTLI_DECODER_RESULT_ERROR)
				return -EPROTO;
			OUT(tmp, sizeof(tmp) - aout);
			if (r == BROTLI_DECODER_RESULT_SUCCESS) {
				d->ended = true;
				break;
			}
			if (r == BROTLI_DECODER_RESULT_NEEDS_MORE_INPUT)
				break;
		}
		return fin && !d->ended ? -EPROTO : 0;
	}
	case DEC_ZSTD: {
		ZSTD_inBuffer in = { p, n, 0 };
		ZSTD_outBuffer o;
		size_t r;

		if (!d->zs) {
			d->zs = ZSTD_createDStream();
			if (!d->zs)
				return -ENOMEM;
			/* bounds the window the decoder allocates */
			ZSTD_DCtx_setParameter(d->zs, ZSTD_d_windowLogMax,
					       ZSTD_WINDOW_LOG);
			d->ended = true; /* nothing yet: an empty body */
		}
		for (;;) {
			o = (ZSTD_outBuffer){ tmp, sizeof(tmp), 0 };
			r = ZSTD_decompressStream(d->zs, &o, &in);
			if (ZSTD_isError(r))
				return -EPROTO;
			OUT(tmp, o.pos);
			if (in.pos || o.pos)
				d->ended = r == 0;
			if (in.pos == in.size && o.pos < o.size)
				break;
		}
		return fin && !d->ended ? -EPROTO : 0;
	}
	}
	return -EPROTO;
}
#undef OUT

/* ------------------------------------------------------------ responses */

/* The response side fails: cut the connection. A 502 goes down when
 * nothing of this response did yet. */
static int rs_fail(struct h1_conn *c, struct bbuf *down, const char *why)
{
	char body[300];
	int n;

	c->rs = RS_DEAD;
	c->close = true;
	if (c->rs_started)
		return 1;
	n = snprintf(body, sizeof(body),
		     "moat: bad response from upstream: %s\n", why);
	if (put_fmt(down,
		    "HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/plain\r\n"
		    "Content-Length: %d\r\nConnection: close\r\n\r\n",
		    n) < 0 ||
	    bbuf_put(down, body, (size_t)n) < 0)
		return -ENOMEM;
	return 1;
}

/* Redacted body bytes, framed as the guest gets them. */
static int rs_emit(struct h1_conn *c, const uint8_t *p, size_t n,
		   struct bbuf *down)
{
	char size[24];

	if (!n)
		return 0;
	c->rs_started = true;
	if (c->rsout != OUT_CHUNKED)
		return bbuf_put(down, p, n);
	snprintf(size, sizeof(size), "%zx\r\n", n);
	if (put_str(down, size) < 0 || bbuf_put(down, p, n) < 0 ||
	    bbuf_put(down, "\r\n", 2) < 0)
		return -ENOMEM;
	return 0;
}

/* Content bytes of the response, decoded: redacted and framed. */
static int rs_clear(struct h1_conn *c, const uint8_t *p, size_t n, bool fin,
		    struct bbuf *down)
{
	int rc;

	c->rstmp.len = 0;
	rc = redact_all(c, &c->rsscan, &c->bscan, p, n, fin, &c->rstmp);
	if (rc)
		return rc;
	return rs_emit(c, c->rstmp.p, c->rstmp.len, down);
}

struct rs_sink {
	struct h1_conn *c;
	struct bbuf *down;
};

static int rs_sink(void *ctx, const uint8_t *p, size_t n)
{
	struct rs_sink *k = ctx;

	/* what one call's upstream bytes may decode to: the loop stops
	 * reading upstream while down is full, but a read of a few bytes
	 * may decode to megabytes, and that sits in down at once */
	if (k->down->len - k->c->down_base > H1_DOWN_BURST)
		return -EFBIG;
	return rs_clear(k->c, p, n, false, k->down);
}

/* Content bytes of the response: decoded, redacted, framed. */
static int rs_body(struct h1_conn *c, const uint8_t *p, size_t n, bool fin,
		   struct bbuf *down)
{
	struct rs_sink k = { c, down };
	int rc;

	if (c->dec.kind == DEC_NONE)
		return rs_clear(c, p, n, fin, down);
	rc = dec_feed(&c->dec, p, n, fin, rs_sink, &k, &c->rs_room);
	if (rc == -ENOMEM)
		return rc;
	if (rc == -EFBIG)
		return rs_fail(c, down, "a body too large decoded");
	if (rc)
		return rs_fail(c, down, "a body that does not decode");
	return fin ? rs_clear(c, NULL, 0, true, down) : 0;
}

/* The response is all down: the next one, or our answer, or the end. */
static int rs_done(struct h1_conn *c, struct bbuf *down)
{
	struct pending *f = q_front(c);
	bool upgrade = f && f->upgrade;

	q_pop(c);
	dec_end(&c->dec);
	scan_reset(&c->rsscan);
	scan_reset(&c->bscan);
	c->rs = RS_HEAD;
	c->rs_started = false;
	c->rs_room = H1_DECODED_MAX;
	if (c->rs_closes)
		c->close = true;
	if (upgrade && c->rq == RQ_UPGRADE) {
		/* refused: what the guest sent meanwhile is unchecked */
		if (c->held.len)
			c->close = true;
		c->rq = RQ_HEAD;
	}
	if (c->answering && (c->answer_after == 0 || --c->answer_after == 0)) {
		c->answering = false;
		if (bbuf_put(down, c->answer.p, c->answer.len) < 0)
			return -ENOMEM;
		c->close = true;
	}
	return 0;
}

/* Same length everywhere: redaction keeps a body's length. */
static bool lengths_kept(const struct h1_conn *c)
{
	const struct store *s = store_of(c);
	size_t i;

	for (i = 0; i < scan_count(s); i++)
		if ((s->v[i].vlen && s->v[i].plen != s->v[i].vlen) ||
		    (s->v[i].olen && s->v[i].plen != s->v[i].olen))
			return false;
	return true;
}

/* A whole response head: redacted, re-framed, sent down. */
static int rs_head(struct h1_conn *c, const uint8_t *b, size_t hl,
		   struct bbuf *down)
{
	/* a response nobody asked for is read as one from a credentialed
	 * host: decoded, so that no coding hides a value in it */
	struct pending unsolicited = { .cred = true }, *f = q_front(c);
	struct head *h;
	struct bbuf out = { 0 };
	const char *why;
	const uint8_t *ce = NULL;
	size_t k, ncl = 0, nte = 0, cel = 0, nce = 0;
	uint64_t cl = 0, v = 0;
	bool chunked = false, body, v10, r10, badcl = false;
	int code, rc;

	if (!f)
		f = &unsolicited;
	h = malloc(sizeof(*h));
	if (!h)
		return -ENOMEM;
	why = split_head(b, hl, false, h);
	if (why) {
		rc = rs_fail(c, down, why);
		goto out;
	}
	if (h->startl < 12 || memcmp(h->start, "HTTP/1.", 7) != 0 ||
	    (h->start[7] != '0' && h->start[7] != '1') || h->start[8] != ' ' ||
	    h->start[9] < '1' || h->start[9] > '5' || h->start[10] < '0' ||
	    h->start[10] > '9' || h->start[11] < '0' || h->start[11] > '9' ||
	    (h->startl > 12 && h->start[12] != ' ')) {
		rc = rs_fail(c, down, "a malformed status line");
		goto out;
	}
	code = (h->start[9] - '0') * 100 + (h->start[10] - '0') * 10 +
	       (h->start[11] - '0');
	r10 = h->start[7] == '0';
	v10 = f->v10 || r10;
	for (k = 0; k < h->nf; k++) {
		const struct field *fl = &h->f[k];

		if (field_is(fl, "content-length")) {
			if (!parse_len(fl->v, fl->vl, &v) || (ncl && v != cl))
				badcl = true;
			cl = v;
			ncl++;
		} else if (field_is(fl, "transfer-encoding")) {
			nte++;
			chunked = eq_nocase(fl->v, fl->vl, "chunked");
		} else if (field_is(fl, "content-encoding")) {
			ce = fl->v;
			cel = fl->vl;
			nce++;
		}
	}
	/* status line and fields, each redacted */
	rc = redact_all(c, &c->rsscan, &c->bscan, h->start, h->startl, true,
			&out);
	if (rc == 0)
		rc = bbuf_put(&out, "\r\n", 2);
	if (rc)
		goto out;
	if (code == 101) {
		if (!f->upgrade || c->rq != RQ_UPGRADE) {
			rc = rs_fail(c, down, "a 101 to no upgrade");
			goto out;
		}
		for (k = 0; rc == 0 && k < h->nf; k++) {
			rc = redact_all(
				c, &c->rsscan, &c->bscan, h->f[k].n,
				(size_t)(h->f[k].v + h->f[k].vl - h->f[k].n),
				true, &out);
			if (rc == 0)
				rc = bbuf_put(&out, "\r\n", 2);
		}
		if (rc == 0)
			rc = bbuf_put(&out, "\r\n", 2);
		if (rc == 0)
			rc = bbuf_put(down, out.p, out.len);
		if (rc)
			goto out;
		q_pop(c);
		c->rs = RS_TUNNEL;
		c->rq = RQ_TUNNEL;
		c->tunnel = true;
		goto out;
	}
	body = !(f->head || code / 100 == 1 || code == 204 || code == 304);
	if (body && (nte > 1 || (nte && !chunked))) {
		rc = rs_fail(c, down, "a transfer coding other than chunked");
		goto out;
	}
	if (body && !nte && badcl) {
		rc = rs_fail(c, down, "a bad Content-Length");
		goto out;
	}
	c->dec.kind = DEC_NONE;
	c->rs_room = H1_DECODED_MAX;
	if (body && f->cred && nce == 1)
		c->dec.kind = dec_kind_of(ce, cel);
	/* a body the engine cannot decode (two codings, or one it does not
	 * know) would carry a value past the redaction encoded */
	if (body && f->cred && nce && c->dec.kind == DEC_NONE &&
	    (nce > 1 || !eq_nocase(ce, cel, "identity"))) {
		rc = rs_fail(c, down,
			     "a Content-Encoding the broker cannot "
			     "decode");
		goto out;
	}
	c->rsout = OUT_SAME;
	c->rs_closes = false;
	if (body &&
	    (nte || (ncl && (c->dec.kind != DEC_NONE || !lengths_kept(c))))) {
		c->rsout = v10 ? OUT_CLOSE : OUT_CHUNKED;
	} else if (body && !ncl) {
		c->rs_closes = true; /* close-delimited as it came */
	}
	if (c->rsout == OUT_CLOSE)
		c->rs_closes = true;
	for (k = 0; k < h->nf; k++) {
		const struct field *fl = &h->f[k];

		if (body && c->rsout != OUT_SAME &&
		    (field_is(fl, "content-length") ||
		     field_is(fl, "transfer-encoding")))
			continue;
		if (c->dec.kind != DEC_NONE && field_is(fl, "content-encoding"))
			continue;
		if (body && c->rsout == OUT_CLOSE &&
		    (field_is(fl, "connection") || field_is(fl, "keep-alive")))
			continue; /* "Connection: close" follows */
		rc = redact_all(c, &c->rsscan, &c->bscan, fl->n,
				(size_t)(fl->v + fl->vl - fl->n), true, &out);
		if (rc == 0)
			rc = bbuf_put(&out, "\r\n", 2);
		if (rc)
			goto out;
	}
	if (body && c->rsout == OUT_CHUNKED)
		rc = put_str(&out, "Transfer-Encoding: chunked\r\n");
	if (rc == 0 && body && c->rsout == OUT_CLOSE)
		rc = put_str(&out, "Connection: close\r\n");
	if (rc == 0)
		rc = bbuf_put(&out, "\r\n", 2);
	if (rc == 0)
		rc = bbuf_put(down, out.p, out.len);
	if (rc)
		goto out;
	c->rs_started = true;
	if (code / 100 == 1) {
		/* 100 Continue and the like: the final response follows */
		c->rs_started = false;
		goto out;
	}
	if (!body) {
		rc = rs_done(c, down);
	} else if (nte) {
		c->rs = RS_CHUNK_SIZE;
	} else if (ncl) {
		c->rs = RS_BODY;
		c->rsleft = cl;
		if (cl == 0) {
			rc = rs_body(c, NULL, 0, true, down);
			if (rc == 0 && c->rsout == OUT_CHUNKED)
				rc = put_str(down, "0\r\n\r\n");
			if (rc == 0)
				rc = rs_done(c, down);
		}
	} else {
		c->rs = RS_CLOSE;
	}
out:
	bbuf_free(&out);
	free(h);
	return rc;
}

static int rs_step(struct h1_conn *c, const uint8_t *p, size_t n, size_t *used,
		   struct bbuf *down)
{
	size_t old, end, take, ln;
	int rc, err;

	*used = 0;
	switch (c->rs) {
	case RS_HEAD:
		old = c->rsbuf.len;
		take = n;
		if (take > H1_HEAD_MAX + 1 - old)
			take = H1_HEAD_MAX + 1 - old;
		if (bbuf_put(&c->rsbuf, p, take) < 0)
			return -ENOMEM;
		end = head_end(c->rsbuf.p, c->rsbuf.len,
			       c->rsscanned > 3 ? c->rsscanned - 3 : 0, false);
		if (end == 0) {
			*used = take;
			c->rsscanned = c->rsbuf.len;
			if (c->rsbuf.len > H1_HEAD_MAX)
				return rs_fail(c, down, "a head too large");
			return 0;
		}
		*used = end - old;
		c->rsscanned = 0;
		rc = rs_head(c, c->rsbuf.p, end, down);
		c->rsbuf.len = 0;
		return rc;
	case RS_BODY:
		take = n < c->rsleft ? n : (size_t)c->rsleft;
		c->rsleft -= take;
		*used = take;
		rc = rs_body(c, p, take, c->rsleft == 0, down);
		if (rc || c->rsleft)
			return rc;
		if (c->rsout == OUT_CHUNKED && put_str(down, "0\r\n\r\n") < 0)
			return -ENOMEM;
		return rs_done(c, down);
	case RS_CLOSE:
		*used = n;
		return rs_body(c, p, n, false, down);
	case RS_CHUNK_SIZE:
		rc = chunk_size(&c->rsbuf, p, n, used, &c->rsleft);
		if (rc == -EINVAL)
			return rs_fail(c, down, "a bad chunk size");
		if (rc <= 0)
			return rc;
		c->rs = c->rsleft ? RS_CHUNK_DATA : RS_TRAILER;
		return 0;
	case RS_CHUNK_DATA:
		take = n < c->rsleft ? n : (size_t)c->rsleft;
		c->rsleft -= take;
		*used = take;
		rc = rs_body(c, p, take, false, down);
		if (rc == 0 && c->rsleft == 0)
			c->rs = RS_CHUNK_END;
		return rc;
	case RS_CHUNK_END:
		rc = chunk_end(&c->rsbuf, p, n, used);
		if (rc == -EINVAL)
			return rs_fail(c, down, "a chunk longer than its size");
		if (rc <= 0)
			return rc;
		c->rs = RS_CHUNK_SIZE;
		return 0;
	case RS_TRAILER:
		ln = gather_line(&c->rsbuf, p, n, H1_HEAD_MAX, used, &err);
		if (err)
			return err;
		if (ln == (size_t)-1)
			return rs_fail(c, down, "bad trailers");
		if (ln == 0)
			return 0;
		if (!(ln == 2 || (ln >= 4 && c->rsbuf.p[ln - 3] == '\n')))
			return 0;
		rc = rs_body(c, NULL, 0, true, down);
		if (rc)
			return rc;
		if (c->rs == RS_DEAD)
			return 1;
		/* trailers go on redacted, after the last chunk */
		c->rstmp.len = 0;
		rc = redact_all(c, &c->rsscan, &c->bscan, c->rsbuf.p, ln, true,
				&c->rstmp);
		c->rsbuf.len = 0;
		if (rc)
			return rc;
		if (c->rsout == OUT_CHUNKED) {
			if (put_str(down, "0\r\n") < 0 ||
			    bbuf_put(down, c->rstmp.p, c->rstmp.len) < 0)
				return -ENOMEM;
		}
		return rs_done(c, down);
	case RS_TUNNEL:
		*used = n;
		return bbuf_put(down, p, n);
	case RS_DEAD:
		*used = n;
		return 0;
	}
	*used = n;
	return 0;
}

int h1_from_upstream(struct h1_conn *c, const uint8_t *buf, size_t n,
		     struct bbuf *down)
{
	size_t i = 0, used;
	int rc = 0;

	if (c->close)
		return H1_CLOSE;
	if (c->rs == RS_TUNNEL) {
		if (bbuf_put(down, buf, n) < 0)
			return -ENOMEM;
		return status(c);
	}
	c->down_base = down->len;
	pthread_rwlock_rdlock(&c->cfg->store->lock);
	while (i < n && rc == 0 && !c->close) {
		enum rs_state was = c->rs;

		rc = rs_step(c, buf + i, n - i, &used, down);
		if (rc > 0)
			rc = 0;
		i += used;
		if (used == 0 && c->rs == was)
			break;
		if (c->rs == RS_TUNNEL && i < n) {
			rc = bbuf_put(down, buf + i, n - i);
			break;
		}
	}
	pthread_rwlock_unlock(&c->cfg->store->lock);
	return rc < 0 ? rc : status(c);
}

int h1_upstream_eof(struct h1_conn *c, struct bbuf *down)
{
	int rc = 0;

	if (c->close)
		return H1_CLOSE;
	c->down_base = down->len;
	pthread_rwlock_rdlock(&c->cfg->store->lock);
	if (c->rs == RS_CLOSE) {
		rc = rs_body(c, NULL, 0, true, down);
		if (rc == 0 && c->rs != RS_DEAD) {
			if (c->rsout == OUT_CHUNKED)
				rc = put_str(down, "0\r\n\r\n");
			if (rc == 0)
				rc = rs_done(c, down);
		}
	} else if (c->rs == RS_HEAD && !c->rsbuf.len && c->answering) {
		/* the earlier responses never came; our answer can */
		c->answering = false;
		rc = bbuf_put(down, c->answer.p, c->answer.len);
	}
	pthread_rwlock_unlock(&c->cfg->store->lock);
	c->close = true;
	return rc < 0 ? rc : H1_CLOSE;
}

/* ------------------------------------------------------------ lifetime */

struct h1_conn *h1_new(const struct h1_config *cfg)
{
	struct h1_conn *c = calloc(1, sizeof(*c));
	const char *colon;

	if (!c)
		return NULL;
	c->cfg = cfg;
	c->dport = -1;
	if (cfg->who && cfg->who->dest) {
		colon = strrchr(cfg->who->dest, ':');
		if (colon && colon[1])
			c->dport = strtol(colon + 1, NULL, 10);
	}
	return c;
}

void h1_free(struct h1_conn *c)
{
	if (!c)
		return;
	bbuf_free(&c->rqbuf);
	bbuf_free(&c->rqout);
	bbuf_free(&c->held);
	bbuf_free(&c->answer);
	bbuf_free(&c->rsbuf);
	bbuf_free(&c->rstmp);
	scan_free(&c->rqscan);
	scan_free(&c->rsscan);
	scan_free(&c->bscan);
	bbuf_free(&c->rstmp2);
	for (size_t k = 0; k < c->bst.n; k++) {
		explicit_bzero(c->btok[k].value, c->btok[k].vlen);
		free(c->btok[k].value);
		free(c->btok[k].placeholder);
	}
	dec_end(&c->dec);
	free(c->q);
	free(c);
}

/* ------------------------------------------ requests in other framings */

static int rec_put(struct bbuf *out, const void *n, size_t nl, const void *v,
		   size_t vl)
{
	uint32_t a = (uint32_t)nl, b = (uint32_t)vl;

	if (bbuf_put(out, &a, sizeof(a)) < 0 || bbuf_put(out, n, nl) < 0 ||
	    bbuf_put(out, &b, sizeof(b)) < 0 || bbuf_put(out, v, vl) < 0)
		return -ENOMEM;
	return 0;
}

bool h1_field_next(const struct bbuf *b, size_t *off, struct h1_field *f)
{
	uint32_t l;

	if (*off + sizeof(l) > b->len)
		return false;
	memcpy(&l, b->p + *off, sizeof(l));
	f->name = b->p + *off + sizeof(l);
	f->nl = l;
	*off += sizeof(l) + l;
	memcpy(&l, b->p + *off, sizeof(l));
	f->value = b->p + *off + sizeof(l);
	f->vl = l;
	*off += sizeof(l) + l;
	return true;
}

/* A refusal of a request in another framing: its record (but for a
 * 400, which has none in HTTP/1 either) and the answer's text. */
static int msg_deny(struct h1_conn *c, int status, long i, const char *loc,
		    const char *reason, const char *text, int *code, char *why,
		    size_t cap)
{
	char t[512];
	const char *name = "?";

	*code = status;
	if (status == 400) {
		snprintf(why, cap, "moat: bad request: %s\n", text);
		return 1;
	}
	audit(c, "blocked", i, loc, reason, NULL, -1);
	if (!text) {
		if (i >= 0 && store_of(c)->v[i].cred)
			name = store_of(c)->v[i].cred->name;
		why_text(t, sizeof(t), c, name, reason, loc);
		text = t;
	}
	snprintf(why, cap, "moat: blocked: %s\n", text);
	return 1;
}

/* A pseudo-header's value with no placeholder allowed, as a record. */
static int msg_never(struct h1_conn *c, const struct h1_field *f,
		     struct bbuf *out, struct swap_ctx *sx)
{
	struct bbuf v = { 0 };
	int rc;

	swap_init(sx, c, LOC_NEVER, "target");
	rc = swap_whole(sx, f->value, f->vl, &v);
	if (rc == 0)
		rc = rec_put(out, f->name, f->nl, v.p, v.len);
	bbuf_free(&v);
	return rc;
}

/* inject()'s "Name: value\r\n" lines as records, names in lower case. */
static int msg_injected(const struct bbuf *lines, struct bbuf *out)
{
	const uint8_t *p = lines->p, *end = lines->p + lines->len;
	char lname[128];

	while (p < end) {
		const uint8_t *colon = memchr(p, ':', (size_t)(end - p));
		const uint8_t *eol = memchr(p, '\r', (size_t)(end - p));

		if (!colon || !eol || colon > eol || colon + 2 > eol)
			return 0;
		lower_into(lname, sizeof(lname), p, (size_t)(colon - p));
		if (rec_put(out, lname, strlen(lname), colon + 2,
			    (size_t)(eol - colon - 2)) < 0)
			return -ENOMEM;
		p = eol + 2;
	}
	return 0;
}

static int msg_head(struct h1_conn *c, const struct h1_field *in, size_t n,
		    struct bbuf *out, int *code, char *why, size_t cap)
{
	struct head *h;
	struct bbuf tmp = { 0 };
	struct swap_ctx sx;
	const struct h1_field *method = NULL, *path = NULL, *auth = NULL;
	const struct h1_field *hostf = NULL;
	char loc[400], hname[256];
	long port, hport, req;
	bool cred, grow;
	size_t k, nhost = 0;
	int rc = 0;

	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	c->host[0] = c->method[0] = c->path[0] = '\0';
	c->swapped = c->injected = 0;
	c->rq_bytes = 0;
	c->rq_seq++;
	scan_reset(&c->rqscan);
	for (k = 0; k < n; k++) {
		const struct h1_field *f = &in[k];

		if (eq_nocase(f->name, f->nl, ":method"))
			method = f;
		else if (eq_nocase(f->name, f->nl, ":path"))
			path = f;
		else if (eq_nocase(f->name, f->nl, ":authority"))
			auth = f;
		else if (f->nl && f->name[0] == ':')
			continue;
		else {
			if (eq_nocase(f->name, f->nl, "host")) {
				hostf = f;
				nhost++;
			}
			if (h->nf == H1_HEADERS_MAX) {
				rc = msg_deny(c, 400, -1, NULL, NULL,
					      "too many headers", code, why,
					      cap);
				goto out;
			}
			h->f[h->nf++] = (struct field){ f->name, f->value,
							f->nl, f->vl };
		}
	}
	if (!method || !method->vl || method->vl >= sizeof(c->method) ||
	    !path || !path->vl) {
		/* CONNECT (no :path) among them: a tunnel nobody checks */
		rc = msg_deny(c, 400, -1, NULL, NULL,
			      "no :method or :path (CONNECT is not brokered)",
			      code, why, cap);
		goto out;
	}
	memcpy(c->method, method->value, method->vl);
	c->method[method->vl] = '\0';
	if (nhost > 1 || (!auth && !hostf)) {
		rc = msg_deny(c, 400, -1, NULL, NULL,
			      nhost ? "two Host headers" : "no :authority",
			      code, why, cap);
		goto out;
	}
	if (!auth)
		auth = hostf;
	if (!split_authority(auth->value, auth->vl, c->host, sizeof(c->host),
			     &port)) {
		rc = msg_deny(c, 400, -1, NULL, NULL, "a bad :authority", code,
			      why, cap);
		goto out;
	}
	if (path->value[0] != '/' && !(path->vl == 1 && path->value[0] == '*' &&
				       strcmp(c->method, "OPTIONS") == 0)) {
		rc = msg_deny(c, 400, -1, NULL, NULL, "a :path that is no path",
			      code, why, cap);
		goto out;
	}
	{
		const uint8_t *qm = memchr(path->value, '?', path->vl);
		size_t pl = qm ? (size_t)(qm - path->value) : path->vl;

		if (pl > sizeof(c->path) - 1)
			pl = sizeof(c->path) - 1;
		memcpy(c->path, path->value, pl);
		c->path[pl] = '\0';
	}
	if (!host_is_ours(c, c->host, port)) {
		snprintf(loc, sizeof(loc), "%s %s is not this connection's",
			 auth == hostf ? "Host" : ":authority", c->host);
		rc = msg_deny(c, 403, -1,
			      auth == hostf ? "header:host" : ":authority",
			      "host-mismatch", loc, code, why, cap);
		goto out;
	}
	/* a Host beside :authority must say the same */
	if (hostf && hostf != auth &&
	    (!split_authority(hostf->value, hostf->vl, hname, sizeof(hname),
			      &hport) ||
	     strcmp(hname, c->host) != 0 || !host_is_ours(c, hname, hport))) {
		rc = msg_deny(c, 403, -1, "header:host", "host-mismatch",
			      "the Host header is not this connection's", code,
			      why, cap);
		goto out;
	}
	cred = host_credentialed(c);
	req = required(c, h, loc, sizeof(loc));
	if (req >= 0) {
		rc = msg_deny(c, 403, req, loc, "other-credential", NULL, code,
			      why, cap);
		goto out;
	}
	grow = body_may_grow(c);

	/* the pseudo-headers first, as they must go */
	for (k = 0; rc == 0 && k < n; k++) {
		const struct h1_field *f = &in[k];

		if (!f->nl || f->name[0] != ':')
			continue;
		if (f == path) {
			tmp.len = 0;
			rc = swap_target(c, f->value, f->vl, &tmp, &sx);
			if (rc == 0)
				rc = rec_put(out, f->name, f->nl, tmp.p,
					     tmp.len);
		} else {
			rc = msg_never(c, f, out, &sx);
		}
	}
	for (k = 0; rc == 0 && k < h->nf; k++) {
		const struct field *f = &h->f[k];
		char lname[128];

		/* dropped: what would let upstream encode what we must
		 * read; a length a swap may make wrong (HTTP/2 needs
		 * none) */
		if ((cred && field_is(f, "accept-encoding")) ||
		    (field_is(f, "te") &&
		     !eq_nocase(f->v, f->vl, "trailers")) ||
		    (grow && field_is(f, "content-length")))
			continue;
		lower_into(lname, sizeof(lname), f->n, f->nl);
		tmp.len = 0;
		swap_init(&sx, c, LOC_NEVER, "header-name");
		rc = swap_whole(&sx, f->n, f->nl, &tmp);
		if (rc)
			break;
		{
			size_t nl = tmp.len;

			rc = swap_field(c, f, lname, &tmp, &sx);
			if (rc == 0)
				rc = rec_put(out, tmp.p, nl, tmp.p + nl,
					     tmp.len - nl);
		}
	}
	if (rc == 1) {
		rc = msg_deny(c, 403, sx.blocked, sx.loc, sx.reason, NULL, code,
			      why, cap);
		goto out;
	}
	if (rc)
		goto out;
	tmp.len = 0;
	rc = inject(c, h, path->value, path->vl, &tmp);
	if (rc == 0)
		rc = msg_injected(&tmp, out);
	if (rc == 0 && cred)
		rc = rec_put(out, "accept-encoding", 15, "identity", 8);
out:
	bbuf_free(&tmp);
	free(h);
	return rc;
}

int h1_msg_head(struct h1_conn *c, const struct h1_field *in, size_t n,
		struct bbuf *out, int *code, char *why, size_t cap)
{
	int rc;

	pthread_rwlock_rdlock(&c->cfg->store->lock);
	rc = msg_head(c, in, n, out, code, why, cap);
	pthread_rwlock_unlock(&c->cfg->store->lock);
	return rc;
}

int h1_msg_body(struct h1_conn *c, const uint8_t *p, size_t n, bool fin,
		struct bbuf *out, char *why, size_t cap)
{
	struct swap_ctx sx;
	size_t was = out->len;
	int code, rc;

	pthread_rwlock_rdlock(&c->cfg->store->lock);
	swap_init(&sx, c, LOC_BODY, "body");
	rc = scan_run(&c->rqscan, store_of(c), false, p, n, fin, to_value, &sx,
		      out);
	if (rc == 1)
		rc = msg_deny(c, 403, sx.blocked, sx.loc, sx.reason, NULL,
			      &code, why, cap);
	else if (rc == 0)
		c->rq_bytes += out->len - was;
	pthread_rwlock_unlock(&c->cfg->store->lock);
	return rc;
}

void h1_msg_done(struct h1_conn *c)
{
	pthread_rwlock_rdlock(&c->cfg->store->lock);
	rq_done(c);
	pthread_rwlock_unlock(&c->cfg->store->lock);
}

bool h1_lengths_kept(struct store *s)
{
	bool kept = true;

	pthread_rwlock_rdlock(&s->lock);
	for (size_t i = 0; i < scan_count(s); i++)
		if (s->v[i].vlen && s->v[i].plen != s->v[i].vlen)
			kept = false;
	pthread_rwlock_unlock(&s->lock);
	return kept;
}
