/* broker/http2.c: HTTP/2 through the broker (broker/http2.h).
 *
 * Two nghttp2 sessions fed from memory: g, the server the guest talks
 * to, and u, the client that talks upstream. A struct h2s is one guest
 * stream and the upstream stream made for it; it is each session's
 * stream user data, and lives on the connection's list until both
 * streams closed (or the connection ends).
 *
 * Bytes that wait: a request's DATA (swapped) until u's data source
 * takes it, a response's DATA (redacted) until g's takes it. Neither
 * session gives window back by itself (no_auto_window_update): a side
 * gets its window back only as the other side takes what it sent, so a
 * stream holds at most about H2_WINDOW bytes, and a slow reader stops
 * its own stream only (the connection windows are as large as all
 * streams' together).
 */
#include "broker/http2.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nghttp2/nghttp2.h>

#include "lib/util.h"

#define H2_HEAD_MAX H1_HEAD_MAX /* one header block, as received */
#define H2_LOW (H2_WINDOW / 2)	/* window given back below this */
#define H2_WHY 600

struct h2s {
	struct h2_conn *c;
	int32_t gid, uid; /* uid 0: nothing went upstream (yet) */
	struct h1_conn *chk;
	struct bbuf head; /* a header block being received: records */

	/* the request */
	struct bbuf req;   /* swapped DATA for upstream */
	size_t req_raw;	   /* guest bytes not yet given back */
	bool req_end;	   /* the guest ended its stream */
	bool req_done;	   /* its swap records are written */
	bool req_deferred; /* u's source waits for bytes */

	/* the response */
	struct redact *red;
	struct bbuf res; /* redacted DATA for the guest */
	size_t res_raw;
	bool res_head; /* a final response went to the guest */
	bool res_end;
	bool res_deferred;
	struct bbuf trailers; /* redacted, records; sent at the end */

	/* the broker's own answer */
	bool blocked;
	struct bbuf answer;
	size_t answer_off;

	bool gclosed, uclosed;
	struct h2s *prev, *next;
};

struct h2_conn {
	const struct h1_config *cfg;
	nghttp2_session *g, *u;
	struct h2s *streams;
	bool dead; /* a session failed: the flow ends */
	bool lengths_kept;
};

/* ---------------------------------------------------------- streams */

static struct h2s *st_new(struct h2_conn *c, int32_t gid)
{
	struct h2s *st = calloc(1, sizeof(*st));

	if (!st)
		return NULL;
	st->c = c;
	st->gid = gid;
	st->chk = h1_new(c->cfg);
	st->red = redact_new(c->cfg->store);
	if (!st->chk || !st->red) {
		h1_free(st->chk);
		redact_free(st->red);
		free(st);
		return NULL;
	}
	st->next = c->streams;
	if (c->streams)
		c->streams->prev = st;
	c->streams = st;
	return st;
}

static void st_free(struct h2s *st)
{
	struct h2_conn *c = st->c;

	if (st->prev)
		st->prev->next = st->next;
	else
		c->streams = st->next;
	if (st->next)
		st->next->prev = st->prev;
	h1_free(st->chk);
	redact_free(st->red);
	bbuf_free(&st->head);
	bbuf_free(&st->req);
	bbuf_free(&st->res);
	bbuf_free(&st->trailers);
	bbuf_free(&st->answer);
	free(st);
}

/* Both streams over: nothing refers to it any more. */
static void st_maybe_free(struct h2s *st)
{
	if (st->gclosed && (st->uclosed || !st->uid))
		st_free(st);
}

/* The records in b as nghttp2's name/value pairs (pointing into b): an
 * array the caller frees, or NULL. */
static nghttp2_nv *nv_of(const struct bbuf *b, size_t *n, bool drop_length)
{
	struct h1_field f;
	size_t off = 0, k = 0;
	nghttp2_nv *nv;

	while (h1_field_next(b, &off, &f))
		k++;
	nv = calloc(k ? k : 1, sizeof(*nv));
	if (!nv)
		return NULL;
	off = 0;
	*n = 0;
	while (h1_field_next(b, &off, &f)) {
		if (drop_length && f.nl == 14 &&
		    !memcmp(f.name, "content-length", 14))
			continue;
		nv[*n] = (nghttp2_nv){ .name = (uint8_t *)f.name,
				       .value = (uint8_t *)f.value,
				       .namelen = f.nl,
				       .valuelen = f.vl,
				       .flags = NGHTTP2_NV_FLAG_NONE };
		(*n)++;
	}
	return nv;
}

/* Give back window for bytes the other side took: all of a stream's
 * once few are left waiting. */
static void give_back(nghttp2_session *s, int32_t id, size_t *raw,
		      size_t waiting)
{
	if (*raw && waiting < H2_LOW) {
		nghttp2_session_consume(s, id, *raw);
		*raw = 0;
	}
}

/* -------------------------------------------------- the broker's answer */

static ssize_t answer_read(nghttp2_session *s, int32_t id, uint8_t *buf,
			   size_t len, uint32_t *flags,
			   nghttp2_data_source *src, void *ud)
{
	struct h2s *st = src->ptr;
	size_t n = st->answer.len - st->answer_off;

	(void)s, (void)id, (void)ud;
	if (n > len)
		n = len;
	memcpy(buf, st->answer.p + st->answer_off, n);
	st->answer_off += n;
	if (st->answer_off == st->answer.len)
		*flags |= NGHTTP2_DATA_FLAG_EOF;
	return (ssize_t)n;
}

/* The stream is refused: the guest gets code and why unless its
 * response began (then a reset), upstream a reset if it got the
 * request. The connection goes on. */
static int st_block(struct h2s *st, int code, const char *why)
{
	struct h2_conn *c = st->c;
	char status[8], len[24];
	int rc = 0;

	st->blocked = true;
	if (st->uid && !st->uclosed)
		nghttp2_submit_rst_stream(c->u, NGHTTP2_FLAG_NONE, st->uid,
					  NGHTTP2_CANCEL);
	st->req.len = 0;
	if (st->req_raw) {
		nghttp2_session_consume(c->g, st->gid, st->req_raw);
		st->req_raw = 0;
	}
	if (st->res_head || st->gclosed) {
		if (!st->gclosed)
			nghttp2_submit_rst_stream(c->g, NGHTTP2_FLAG_NONE,
						  st->gid, NGHTTP2_CANCEL);
		return 0;
	}
	st->answer.len = st->answer_off = 0;
	if (bbuf_put(&st->answer, why, strlen(why)) < 0)
		return -ENOMEM;
	snprintf(status, sizeof(status), "%d", code);
	snprintf(len, sizeof(len), "%zu", st->answer.len);
	{
		nghttp2_nv nv[] = {
			{ (uint8_t *)":status", (uint8_t *)status, 7,
			  strlen(status), NGHTTP2_NV_FLAG_NONE },
			{ (uint8_t *)"content-type", (uint8_t *)"text/plain",
			  12, 10, NGHTTP2_NV_FLAG_NONE },
			{ (uint8_t *)"content-length", (uint8_t *)len, 14,
			  strlen(len), NGHTTP2_NV_FLAG_NONE },
		};
		nghttp2_data_provider prd = { .source.ptr = st,
					      .read_callback = answer_read };

		st->res_head = true;
		if (nghttp2_submit_response(c->g, st->gid, nv, ARRAY_SIZE(nv),
					    &prd) != 0)
			rc = nghttp2_submit_rst_stream(c->g, NGHTTP2_FLAG_NONE,
						       st->gid,
						       NGHTTP2_INTERNAL_ERROR);
	}
	return rc == NGHTTP2_ERR_NOMEM ? -ENOMEM : 0;
}

/* ------------------------------------------------ guest -> upstream */

static ssize_t req_read(nghttp2_session *s, int32_t id, uint8_t *buf,
			size_t len, uint32_t *flags, nghttp2_data_source *src,
			void *ud)
{
	struct h2s *st = src->ptr;
	struct h2_conn *c = ud;
	size_t n = st->req.len < len ? st->req.len : len;

	(void)s, (void)id;
	if (st->blocked)
		return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
	if (!n && !st->req_end) {
		st->req_deferred = true;
		return NGHTTP2_ERR_DEFERRED;
	}
	memcpy(buf, st->req.p, n);
	bbuf_consume(&st->req, n);
	if (!st->gclosed)
		give_back(c->g, st->gid, &st->req_raw, st->req.len);
	if (st->req_end && !st->req.len)
		*flags |= NGHTTP2_DATA_FLAG_EOF;
	return (ssize_t)n;
}

static void req_resume(struct h2s *st)
{
	if (st->uid && st->req_deferred && !st->uclosed) {
		st->req_deferred = false;
		nghttp2_session_resume_data(st->c->u, st->uid);
	}
}

/* The guest's request head, whole: checked, swapped, sent up. */
static int req_head(struct h2s *st, bool end)
{
	struct h2_conn *c = st->c;
	struct bbuf out = { 0 };
	struct h1_field *f = NULL;
	nghttp2_nv *nv = NULL;
	size_t n = 0, off = 0, k = 0;
	char why[H2_WHY];
	int code = 403, rc;

	{
		struct h1_field x;

		while (h1_field_next(&st->head, &off, &x))
			n++;
	}
	f = calloc(n ? n : 1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	off = 0;
	while (k < n && h1_field_next(&st->head, &off, &f[k]))
		k++;
	rc = h1_msg_head(st->chk, f, n, &out, &code, why, sizeof(why));
	free(f);
	if (rc == 1) {
		rc = st_block(st, code, why);
		goto out;
	}
	if (rc < 0)
		goto out;
	nv = nv_of(&out, &n, false);
	if (!nv) {
		rc = -ENOMEM;
		goto out;
	}
	st->req_end = end;
	{
		nghttp2_data_provider prd = { .source.ptr = st,
					      .read_callback = req_read };
		int32_t id = nghttp2_submit_request(c->u, NULL, nv, n,
						    end ? NULL : &prd, st);

		if (id < 0) {
			rc = st_block(st, 502,
				      "moat: blocked: upstream takes no more "
				      "streams\n");
			goto out;
		}
		st->uid = id;
	}
	if (end) {
		h1_msg_done(st->chk);
		st->req_done = true;
	}
	rc = 0;
out:
	free(nv);
	bbuf_free(&out);
	return rc;
}

/* The guest ended its request: what the search held goes up. */
static int req_end(struct h2s *st)
{
	char why[H2_WHY];
	int rc;

	if (st->blocked || st->req_end)
		return 0;
	rc = h1_msg_body(st->chk, NULL, 0, true, &st->req, why, sizeof(why));
	if (rc == 1)
		return st_block(st, 403, why);
	if (rc < 0)
		return rc;
	st->req_end = true;
	if (!st->req_done) {
		h1_msg_done(st->chk);
		st->req_done = true;
	}
	req_resume(st);
	return 0;
}

static int g_begin_headers(nghttp2_session *s, const nghttp2_frame *fr,
			   void *ud)
{
	struct h2_conn *c = ud;
	struct h2s *st;

	if (fr->hd.type != NGHTTP2_HEADERS)
		return 0;
	st = nghttp2_session_get_stream_user_data(s, fr->hd.stream_id);
	if (st) {
		st->head.len = 0;
		return 0;
	}
	if (fr->headers.cat != NGHTTP2_HCAT_REQUEST)
		return 0;
	st = st_new(c, fr->hd.stream_id);
	if (!st)
		return NGHTTP2_ERR_CALLBACK_FAILURE;
	nghttp2_session_set_stream_user_data(s, fr->hd.stream_id, st);
	return 0;
}

/* A header field into st->head, bounded. */
static int head_put(struct h2s *st, const uint8_t *n, size_t nl,
		    const uint8_t *v, size_t vl)
{
	uint32_t a = (uint32_t)nl, b = (uint32_t)vl;

	if (st->head.len + nl + vl + 8 > H2_HEAD_MAX)
		return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
	if (bbuf_put(&st->head, &a, 4) < 0 || bbuf_put(&st->head, n, nl) < 0 ||
	    bbuf_put(&st->head, &b, 4) < 0 || bbuf_put(&st->head, v, vl) < 0)
		return NGHTTP2_ERR_CALLBACK_FAILURE;
	return 0;
}

static int g_header(nghttp2_session *s, const nghttp2_frame *fr,
		    const uint8_t *n, size_t nl, const uint8_t *v, size_t vl,
		    uint8_t flags, void *ud)
{
	struct h2s *st =
		nghttp2_session_get_stream_user_data(s, fr->hd.stream_id);

	(void)flags, (void)ud;
	if (!st || st->blocked)
		return 0;
	return head_put(st, n, nl, v, vl);
}

static int g_frame(nghttp2_session *s, const nghttp2_frame *fr, void *ud)
{
	struct h2s *st =
		nghttp2_session_get_stream_user_data(s, fr->hd.stream_id);
	bool end = fr->hd.flags & NGHTTP2_FLAG_END_STREAM;
	int rc = 0;

	(void)ud;
	if (!st)
		return 0;
	switch (fr->hd.type) {
	case NGHTTP2_HEADERS:
		if (st->blocked)
			break;
		if (fr->headers.cat == NGHTTP2_HCAT_REQUEST) {
			rc = req_head(st, end);
		} else {
			/* request trailers: nobody checks them, so the
			 * stream ends */
			st->blocked = true;
			nghttp2_submit_rst_stream(s, NGHTTP2_FLAG_NONE, st->gid,
						  NGHTTP2_REFUSED_STREAM);
			if (st->uid && !st->uclosed)
				nghttp2_submit_rst_stream(st->c->u,
							  NGHTTP2_FLAG_NONE,
							  st->uid,
							  NGHTTP2_CANCEL);
		}
		st->head.len = 0;
		break;
	case NGHTTP2_DATA:
		if (end)
			rc = req_end(st);
		break;
	default:
		break;
	}
	return rc < 0 ? NGHTTP2_ERR_CALLBACK_FAILURE : 0;
}

static int g_data(nghttp2_session *s, uint8_t flags, int32_t id,
		  const uint8_t *data, size_t len, void *ud)
{
	struct h2s *st = nghttp2_session_get_stream_user_data(s, id);
	char why[H2_WHY];
	int rc;

	(void)flags, (void)ud;
	if (!st || st->blocked || st->req_end) {
		nghttp2_session_consume(s, id, len);
		return 0;
	}
	st->req_raw += len;
	rc = h1_msg_body(st->chk, data, len, false, &st->req, why, sizeof(why));
	if (rc == 1)
		rc = st_block(st, 403, why);
	if (rc < 0)
		return NGHTTP2_ERR_CALLBACK_FAILURE;
	req_resume(st);
	return 0;
}

static int g_close(nghttp2_session *s, int32_t id, uint32_t err, void *ud)
{
	struct h2s *st = nghttp2_session_get_stream_user_data(s, id);
	struct h2_conn *c = ud;

	(void)err;
	if (!st)
		return 0;
	st->gclosed = true;
	if (st->uid && !st->uclosed && !(st->res_end && st->req_end))
		nghttp2_submit_rst_stream(c->u, NGHTTP2_FLAG_NONE, st->uid,
					  NGHTTP2_CANCEL);
	st_maybe_free(st);
	return 0;
}

/* ------------------------------------------------ upstream -> guest */

static ssize_t res_read(nghttp2_session *s, int32_t id, uint8_t *buf,
			size_t len, uint32_t *flags, nghttp2_data_source *src,
			void *ud)
{
	struct h2s *st = src->ptr;
	struct h2_conn *c = ud;
	size_t n = st->res.len < len ? st->res.len : len;

	if (st->blocked)
		return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
	if (!n && !st->res_end) {
		st->res_deferred = true;
		return NGHTTP2_ERR_DEFERRED;
	}
	memcpy(buf, st->res.p, n);
	bbuf_consume(&st->res, n);
	if (!st->uclosed)
		give_back(c->u, st->uid, &st->res_raw, st->res.len);
	if (st->res_end && !st->res.len) {
		*flags |= NGHTTP2_DATA_FLAG_EOF;
		if (st->trailers.len) {
			size_t k;
			nghttp2_nv *nv = nv_of(&st->trailers, &k, false);

			if (nv && nghttp2_submit_trailer(s, id, nv, k) == 0)
				*flags |= NGHTTP2_DATA_FLAG_NO_END_STREAM;
			free(nv);
		}
	}
	return (ssize_t)n;
}

static void res_resume(struct h2s *st)
{
	if (st->res_head && st->res_deferred && !st->gclosed) {
		st->res_deferred = false;
		nghttp2_session_resume_data(st->c->g, st->gid);
	}
}

/* A response's header block, whole, redacted: into st->head's records
 * again (values only: a name holds no value). */
static int redact_head(struct h2s *st, struct bbuf *out)
{
	struct bbuf v = { 0 };
	struct h1_field f;
	size_t off = 0;
	int rc = 0;

	while (rc == 0 && h1_field_next(&st->head, &off, &f)) {
		struct redact *r = redact_new(st->c->cfg->store);
		uint32_t a = (uint32_t)f.nl, b;

		if (!r) {
			rc = -ENOMEM;
			break;
		}
		v.len = 0;
		rc = redact_feed(r, f.value, f.vl, true, &v);
		redact_free(r);
		b = (uint32_t)v.len;
		if (rc == 0 &&
		    (bbuf_put(out, &a, 4) < 0 ||
		     bbuf_put(out, f.name, f.nl) < 0 ||
		     bbuf_put(out, &b, 4) < 0 || bbuf_put(out, v.p, v.len) < 0))
			rc = -ENOMEM;
	}
	bbuf_free(&v);
	return rc;
}

static int res_headers(struct h2s *st, const nghttp2_frame *fr)
{
	struct h2_conn *c = st->c;
	bool end = fr->hd.flags & NGHTTP2_FLAG_END_STREAM;
	struct bbuf out = { 0 };
	nghttp2_nv *nv = NULL;
	size_t n = 0;
	int rc;

	if (st->blocked || st->gclosed)
		return 0;
	rc = redact_head(st, &out);
	if (rc < 0)
		goto out;
	if (st->res_head) {
		/* trailers (a gRPC status): sent after the last DATA */
		bbuf_free(&st->trailers);
		st->trailers = out;
		out = (struct bbuf){ 0 };
		st->res_end = true;
		res_resume(st);
		goto out;
	}
	nv = nv_of(&out, &n, !c->lengths_kept);
	if (!nv) {
		rc = -ENOMEM;
		goto out;
	}
	if (n && nv[0].valuelen == 3 && nv[0].value[0] == '1') {
		/* 1xx: not the response yet */
		rc = nghttp2_submit_headers(c->g, NGHTTP2_FLAG_NONE, st->gid,
					    NULL, nv, n, NULL);
	} else {
		nghttp2_data_provider prd = { .source.ptr = st,
					      .read_callback = res_read };

		st->res_head = true;
		st->res_end = end;
		rc = nghttp2_submit_response(c->g, st->gid, nv, n,
					     end ? NULL : &prd);
	}
	if (rc < 0)
		nghttp2_submit_rst_stream(c->g, NGHTTP2_FLAG_NONE, st->gid,
					  NGHTTP2_INTERNAL_ERROR);
	rc = 0;
out:
	free(nv);
	bbuf_free(&out);
	return rc;
}

static int u_begin_headers(nghttp2_session *s, const nghttp2_frame *fr,
			   void *ud)
{
	struct h2s *st =
		nghttp2_session_get_stream_user_data(s, fr->hd.stream_id);

	(void)ud;
	if (st)
		st->head.len = 0;
	return 0;
}

static int u_header(nghttp2_session *s, const nghttp2_frame *fr,
		    const uint8_t *n, size_t nl, const uint8_t *v, size_t vl,
		    uint8_t flags, void *ud)
{
	struct h2s *st =
		nghttp2_session_get_stream_user_data(s, fr->hd.stream_id);

	(void)flags, (void)ud;
	if (!st || st->blocked)
		return 0;
	return head_put(st, n, nl, v, vl);
}

static int res_end(struct h2s *st)
{
	int rc;

	if (st->res_end || st->blocked)
		return 0;
	rc = redact_feed(st->red, NULL, 0, true, &st->res);
	if (rc < 0)
		return rc;
	st->res_end = true;
	res_resume(st);
	return 0;
}

static int u_frame(nghttp2_session *s, const nghttp2_frame *fr, void *ud)
{
	struct h2s *st =
		nghttp2_session_get_stream_user_data(s, fr->hd.stream_id);
	bool end = fr->hd.flags & NGHTTP2_FLAG_END_STREAM;
	int rc = 0;

	(void)ud;
	if (!st)
		return 0;
	switch (fr->hd.type) {
	case NGHTTP2_HEADERS:
		/* the held DATA bytes go before the trailers */
		if (st->res_head && !st->res_end && !st->blocked)
			rc = redact_feed(st->red, NULL, 0, true, &st->res);
		if (rc == 0)
			rc = res_headers(st, fr);
		st->head.len = 0;
		break;
	case NGHTTP2_DATA:
		if (end)
			rc = res_end(st);
		break;
	default:
		break;
	}
	return rc < 0 ? NGHTTP2_ERR_CALLBACK_FAILURE : 0;
}

static int u_data(nghttp2_session *s, uint8_t flags, int32_t id,
		  const uint8_t *data, size_t len, void *ud)
{
	struct h2s *st = nghttp2_session_get_stream_user_data(s, id);

	(void)flags, (void)ud;
	if (!st || st->blocked || st->gclosed || st->res_end) {
		nghttp2_session_consume(s, id, len);
		return 0;
	}
	st->res_raw += len;
	if (redact_feed(st->red, data, len, false, &st->res) < 0)
		return NGHTTP2_ERR_CALLBACK_FAILURE;
	res_resume(st);
	return 0;
}

static int u_close(nghttp2_session *s, int32_t id, uint32_t err, void *ud)
{
	struct h2s *st = nghttp2_session_get_stream_user_data(s, id);
	struct h2_conn *c = ud;

	if (!st)
		return 0;
	st->uclosed = true;
	if (!st->gclosed && !st->blocked) {
		if (!st->res_end || err != NGHTTP2_NO_ERROR)
			/* cut short upstream: so for the guest */
			nghttp2_submit_rst_stream(
				c->g, NGHTTP2_FLAG_NONE, st->gid,
				err ? err : NGHTTP2_INTERNAL_ERROR);
		else
			res_resume(st);
	}
	st_maybe_free(st);
	return 0;
}

/* A request that never went up (reset while upstream's stream limit
 * held it back): its stream never opens, so no close comes for it. */
static int u_not_sent(nghttp2_session *s, const nghttp2_frame *fr, int err,
		      void *ud)
{
	struct h2_conn *c = ud;

	(void)err;
	/* a stream that exists gets its close (u_close) */
	if (fr->hd.type != NGHTTP2_HEADERS ||
	    nghttp2_session_get_stream_user_data(s, fr->hd.stream_id))
		return 0;
	for (struct h2s *st = c->streams; st; st = st->next)
		if (st->uid == fr->hd.stream_id && !st->uclosed) {
			st->uclosed = true;
			if (!st->gclosed && !st->blocked)
				nghttp2_submit_rst_stream(
					c->g, NGHTTP2_FLAG_NONE, st->gid,
					NGHTTP2_REFUSED_STREAM);
			st_maybe_free(st);
			break;
		}
	return 0;
}

/* ------------------------------------------------------- the sessions */

static int pump(struct h2_conn *c, struct bbuf *up, struct bbuf *down)
{
	bool more;

	if (c->dead)
		return H1_CLOSE;
	do {
		const uint8_t *p;
		ssize_t n;

		more = false;
		while ((n = nghttp2_session_mem_send(c->g, &p)) > 0) {
			if (bbuf_put(down, p, (size_t)n) < 0)
				return -ENOMEM;
			more = true;
		}
		if (n < 0)
			return n == NGHTTP2_ERR_NOMEM ? -ENOMEM : H1_CLOSE;
		while ((n = nghttp2_session_mem_send(c->u, &p)) > 0) {
			if (bbuf_put(up, p, (size_t)n) < 0)
				return -ENOMEM;
			more = true;
		}
		if (n < 0)
			return n == NGHTTP2_ERR_NOMEM ? -ENOMEM : H1_CLOSE;
	} while (more);
	if (!nghttp2_session_want_read(c->g) &&
	    !nghttp2_session_want_write(c->g))
		return H1_CLOSE;
	/* upstream's GOAWAY, its streams done: the guest's GOAWAY */
	if (!nghttp2_session_want_read(c->u) &&
	    !nghttp2_session_want_write(c->u)) {
		const uint8_t *p;
		ssize_t n;

		nghttp2_session_terminate_session(c->g, NGHTTP2_NO_ERROR);
		while ((n = nghttp2_session_mem_send(c->g, &p)) > 0)
			if (bbuf_put(down, p, (size_t)n) < 0)
				return -ENOMEM;
		c->dead = true;
		return H1_CLOSE;
	}
	return H1_MORE;
}

static int feed(struct h2_conn *c, nghttp2_session *s, const uint8_t *buf,
		size_t n, struct bbuf *up, struct bbuf *down)
{
	if (c->dead)
		return H1_CLOSE;
	if (n) {
		ssize_t r = nghttp2_session_mem_recv(s, buf, n);

		if (r < 0) {
			/* a protocol error: the session queued its GOAWAY */
			pump(c, up, down);
			c->dead = true;
			return r == NGHTTP2_ERR_NOMEM ? -ENOMEM : H1_CLOSE;
		}
	}
	return pump(c, up, down);
}

int h2_from_guest(struct h2_conn *c, const uint8_t *buf, size_t n,
		  struct bbuf *up, struct bbuf *down)
{
	return feed(c, c->g, buf, n, up, down);
}

int h2_from_upstream(struct h2_conn *c, const uint8_t *buf, size_t n,
		     struct bbuf *up, struct bbuf *down)
{
	return feed(c, c->u, buf, n, up, down);
}

int h2_guest_eof(struct h2_conn *c, struct bbuf *up, struct bbuf *down)
{
	(void)down;
	if (!c->dead) {
		nghttp2_session_terminate_session(c->u, NGHTTP2_NO_ERROR);
		pump(c, up, &(struct bbuf){ 0 });
	}
	c->dead = true;
	return H1_CLOSE;
}

int h2_upstream_eof(struct h2_conn *c, struct bbuf *up, struct bbuf *down)
{
	int rc = H1_CLOSE;

	(void)up;
	if (!c->dead) {
		for (struct h2s *st = c->streams; st; st = st->next)
			if (!st->gclosed && !(st->res_end && !st->res.len))
				nghttp2_submit_rst_stream(c->g,
							  NGHTTP2_FLAG_NONE,
							  st->gid,
							  NGHTTP2_CANCEL);
		/* after the resets (a terminate_session would send its
		 * GOAWAY alone) */
		nghttp2_submit_goaway(
			c->g, NGHTTP2_FLAG_NONE,
			nghttp2_session_get_last_proc_stream_id(c->g),
			NGHTTP2_NO_ERROR, NULL, 0);
		{
			const uint8_t *p;
			ssize_t n;

			while ((n = nghttp2_session_mem_send(c->g, &p)) > 0)
				if (bbuf_put(down, p, (size_t)n) < 0) {
					rc = -ENOMEM;
					break;
				}
		}
	}
	c->dead = true;
	return rc;
}

static nghttp2_session_callbacks *callbacks(bool guest)
{
	nghttp2_session_callbacks *cb;

	if (nghttp2_session_callbacks_new(&cb) != 0)
		return NULL;
	nghttp2_session_callbacks_set_on_begin_headers_callback(
		cb, guest ? g_begin_headers : u_begin_headers);
	nghttp2_session_callbacks_set_on_header_callback(cb, guest ? g_header :
								     u_header);
	nghttp2_session_callbacks_set_on_frame_recv_callback(
		cb, guest ? g_frame : u_frame);
	nghttp2_session_callbacks_set_on_data_chunk_recv_callback(
		cb, guest ? g_data : u_data);
	nghttp2_session_callbacks_set_on_stream_close_callback(
		cb, guest ? g_close : u_close);
	if (!guest)
		nghttp2_session_callbacks_set_on_frame_not_send_callback(
			cb, u_not_sent);
	return cb;
}

struct h2_conn *h2_new(const struct h1_config *cfg)
{
	struct h2_conn *c = calloc(1, sizeof(*c));
	nghttp2_session_callbacks *gcb = callbacks(true),
				  *ucb = callbacks(false);
	nghttp2_option *opt = NULL;
	/* the guest may open H2_STREAMS_MAX streams; upstream pushes
	 * nothing */
	nghttp2_settings_entry gset[] = {
		{ NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, H2_STREAMS_MAX },
		{ NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, H2_WINDOW },
	};
	nghttp2_settings_entry uset[] = {
		{ NGHTTP2_SETTINGS_ENABLE_PUSH, 0 },
		{ NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, H2_STREAMS_MAX },
		{ NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, H2_WINDOW },
	};
	/* a connection window for every stream's: one stream that waits
	 * does not stop the others */
	int32_t conn_window = H2_STREAMS_MAX * H2_WINDOW;
	bool ok = false;

	if (!c || !gcb || !ucb || nghttp2_option_new(&opt) != 0)
		goto out;
	c->cfg = cfg;
	c->lengths_kept = h1_lengths_kept(cfg->store);
	nghttp2_option_set_no_auto_window_update(opt, 1);
	if (nghttp2_session_server_new2(&c->g, gcb, c, opt) != 0 ||
	    nghttp2_session_client_new2(&c->u, ucb, c, opt) != 0)
		goto out;
	if (nghttp2_submit_settings(c->g, NGHTTP2_FLAG_NONE, gset,
				    ARRAY_SIZE(gset)) != 0 ||
	    nghttp2_submit_settings(c->u, NGHTTP2_FLAG_NONE, uset,
				    ARRAY_SIZE(uset)) != 0 ||
	    nghttp2_session_set_local_window_size(c->g, NGHTTP2_FLAG_NONE, 0,
						  conn_window) != 0 ||
	    nghttp2_session_set_local_window_size(c->u, NGHTTP2_FLAG_NONE, 0,
						  conn_window) != 0)
		goto out;
	ok = true;
out:
	nghttp2_session_callbacks_del(gcb);
	nghttp2_session_callbacks_del(ucb);
	nghttp2_option_del(opt);
	if (!ok) {
		h2_free(c);
		return NULL;
	}
	return c;
}

void h2_free(struct h2_conn *c)
{
	if (!c)
		return;
	/* no callback runs in a delete: the streams go after */
	nghttp2_session_del(c->g);
	nghttp2_session_del(c->u);
	while (c->streams)
		st_free(c->streams);
	free(c);
}
