/* tests/unit/broker/test_http2.c: the broker's HTTP/2 engine
 * (broker/http2.c) between two nghttp2 sessions of the test's own: a
 * client playing the guest and a server playing upstream. Every case
 * checks what upstream received and what the guest got back. */
#include <criterion/criterion.h>

#include <nghttp2/nghttp2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "broker/http2.h"
#include "broker/store.h"

#define VAL_A "S3cr3tValueAAAA1234"
#define PH_A "PHaaaaaaaaaaaaaaaaa"

static char *hosts_a[] = { "api.example" };
static char *default_headers[] = { "authorization", "x-api-key",
				   "proxy-authorization" };

static struct credential cred;
static struct secret secret;
static struct store st;
static char val_a[] = VAL_A, ph_a[] = PH_A;
static struct h1_who who = {
	.flow = 7, .pid = 42, .exe = "/usr/bin/curl", .dest = "10.0.0.1:443"
};
static struct h1_config cfg;
static struct h2_conn *c;
static int naudit, nblocked;
static char audit_log[8192];

/* What the test's sessions saw, per stream (ids below 16). */
struct seen {
	char head[2048]; /* "name: value\n"... */
	char body[4096];
	char trailers[512];
	int status;
	bool ended, reset;
	uint32_t rst;
};
static struct seen upseen[16], gseen[16];
static nghttp2_session *gs, *us; /* guest (client), upstream (server) */
static bool up_trailers;	 /* upstream answers with x-echo trailers */

static void record(void *ctx, const char *m)
{
	(void)ctx;
	naudit++;
	if (strstr(m, "\"blocked\""))
		nblocked++;
	strncat(audit_log, m, sizeof(audit_log) - strlen(audit_log) - 2);
	strcat(audit_log, "\n");
}

static struct seen *seen_of(nghttp2_session *s, int32_t id)
{
	cr_assert(id > 0 && id < 16);
	return s == us ? &upseen[id] : &gseen[id];
}

static int on_header(nghttp2_session *s, const nghttp2_frame *fr,
		     const uint8_t *n, size_t nl, const uint8_t *v, size_t vl,
		     uint8_t flags, void *ud)
{
	struct seen *x = seen_of(s, fr->hd.stream_id);
	char line[600];
	bool trailer = fr->headers.cat == NGHTTP2_HCAT_HEADERS;

	(void)flags, (void)ud;
	snprintf(line, sizeof(line), "%.*s: %.*s\n", (int)nl, n, (int)vl, v);
	strncat(trailer ? x->trailers : x->head, line,
		(trailer ? sizeof(x->trailers) - strlen(x->trailers) :
			   sizeof(x->head) - strlen(x->head)) -
			1);
	if (nl == 7 && !memcmp(n, ":status", 7))
		x->status = atoi((const char *)v);
	return 0;
}

static int on_data(nghttp2_session *s, uint8_t flags, int32_t id,
		   const uint8_t *d, size_t len, void *ud)
{
	struct seen *x = seen_of(s, id);
	size_t have = strlen(x->body);

	(void)flags, (void)ud;
	if (have + len < sizeof(x->body)) {
		memcpy(x->body + have, d, len);
		x->body[have + len] = 0;
	}
	return 0;
}

static const char *echo_body(int32_t id)
{
	static char b[16][4200];
	const char *a = strstr(upseen[id].head, "authorization: ");
	size_t al = a ? strcspn(a + 15, "\n") : 0;

	snprintf(b[id], sizeof(b[id]), "auth=%.*s body=%s", (int)al,
		 a ? a + 15 : "", upseen[id].body);
	return b[id];
}

static ssize_t echo_read(nghttp2_session *s, int32_t id, uint8_t *buf,
			 size_t len, uint32_t *flags, nghttp2_data_source *src,
			 void *ud)
{
	const char *b = echo_body(id);
	size_t *off = src->ptr, n = strlen(b) - *off;

	(void)ud;
	if (n > len)
		n = len;
	memcpy(buf, b + *off, n);
	*off += n;
	if (*off == strlen(b)) {
		*flags |= NGHTTP2_DATA_FLAG_EOF;
		if (up_trailers) {
			const char *a =
				strstr(upseen[id].head, "authorization: ");
			nghttp2_nv t = { (uint8_t *)"x-echo",
					 (uint8_t *)(a ? a + 15 : ""), 6,
					 a ? strcspn(a + 15, "\n") : 0,
					 NGHTTP2_NV_FLAG_NONE };

			nghttp2_submit_trailer(s, id, &t, 1);
			*flags |= NGHTTP2_DATA_FLAG_NO_END_STREAM;
		}
		free(off);
	}
	return (ssize_t)n;
}

static int on_frame(nghttp2_session *s, const nghttp2_frame *fr, void *ud)
{
	(void)ud;
	if (!fr->hd.stream_id || !(fr->hd.flags & NGHTTP2_FLAG_END_STREAM))
		return 0;
	if (fr->hd.type != NGHTTP2_HEADERS && fr->hd.type != NGHTTP2_DATA)
		return 0;
	seen_of(s, fr->hd.stream_id)->ended = true;
	if (s == us) {
		/* upstream answers a whole request: an echo */
		size_t *off = calloc(1, sizeof(*off));
		nghttp2_nv nv[] = { { (uint8_t *)":status", (uint8_t *)"200", 7,
				      3, NGHTTP2_NV_FLAG_NONE } };
		nghttp2_data_provider p = { .source.ptr = off,
					    .read_callback = echo_read };

		cr_assert(off);
		nghttp2_submit_response(s, fr->hd.stream_id, nv, 1, &p);
	}
	return 0;
}

static int on_close(nghttp2_session *s, int32_t id, uint32_t err, void *ud)
{
	struct seen *x = seen_of(s, id);

	(void)ud;
	if (err) {
		x->reset = true;
		x->rst = err;
	}
	return 0;
}

static nghttp2_session *session(bool server)
{
	nghttp2_session_callbacks *cb;
	nghttp2_session *s;

	cr_assert(nghttp2_session_callbacks_new(&cb) == 0);
	nghttp2_session_callbacks_set_on_header_callback(cb, on_header);
	nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, on_data);
	nghttp2_session_callbacks_set_on_frame_recv_callback(cb, on_frame);
	nghttp2_session_callbacks_set_on_stream_close_callback(cb, on_close);
	cr_assert((server ? nghttp2_session_server_new(&s, cb, NULL) :
			    nghttp2_session_client_new(&s, cb, NULL)) == 0);
	nghttp2_session_callbacks_del(cb);
	cr_assert(nghttp2_submit_settings(s, NGHTTP2_FLAG_NONE, NULL, 0) == 0);
	return s;
}

static void setup(void)
{
	cred = (struct credential){ .name = "API_KEY",
				    .hosts = hosts_a,
				    .nhosts = 1,
				    .where = CRED_IN_HEADER | CRED_IN_BASIC,
				    .headers = default_headers,
				    .nheaders = 3 };
	secret = (struct secret){ .cred = &cred,
				  .placeholder = ph_a,
				  .plen = strlen(PH_A),
				  .value = val_a,
				  .vlen = strlen(VAL_A) };
	memset(&st, 0, sizeof(st));
	pthread_rwlock_init(&st.lock, NULL);
	st.v = &secret;
	st.n = 1;
	cfg = (struct h1_config){ .store = &st,
				  .tls = true,
				  .host = "api.example",
				  .who = &who,
				  .audit = record };
	memset(upseen, 0, sizeof(upseen));
	memset(gseen, 0, sizeof(gseen));
	naudit = nblocked = 0;
	audit_log[0] = 0;
	up_trailers = false;
	c = h2_new(&cfg);
	cr_assert(c);
	gs = session(false);
	us = session(true);
}

static void teardown(void)
{
	h2_free(c);
	nghttp2_session_del(gs);
	nghttp2_session_del(us);
	pthread_rwlock_destroy(&st.lock);
}

TestSuite(http2, .init = setup, .fini = teardown);

/* Bytes every way until nothing moves: the engine's last status. */
static int pump(void)
{
	struct bbuf up = { 0 }, down = { 0 };
	int rc = H1_MORE;
	bool moved;

	do {
		const uint8_t *p;
		ssize_t n;

		moved = false;
		while ((n = nghttp2_session_mem_send(gs, &p)) > 0) {
			rc = h2_from_guest(c, p, (size_t)n, &up, &down);
			cr_assert(rc >= 0);
			moved = true;
		}
		while ((n = nghttp2_session_mem_send(us, &p)) > 0) {
			rc = h2_from_upstream(c, p, (size_t)n, &up, &down);
			cr_assert(rc >= 0);
			moved = true;
		}
		if (up.len) {
			cr_assert(nghttp2_session_mem_recv(us, up.p, up.len) ==
				  (ssize_t)up.len);
			up.len = 0;
			moved = true;
		}
		if (down.len) {
			cr_assert(nghttp2_session_mem_recv(gs, down.p,
							   down.len) ==
				  (ssize_t)down.len);
			down.len = 0;
			moved = true;
		}
	} while (moved && rc == H1_MORE);
	bbuf_free(&up);
	bbuf_free(&down);
	return rc;
}

#define NV(n, v)                                                               \
	{                                                                      \
		(uint8_t *)(n), (uint8_t *)(v), sizeof(n) - 1, strlen(v),      \
			NGHTTP2_NV_FLAG_NONE                                   \
	}

/* A GET from the guest with one extra header. Its stream id. */
static int32_t get(const char *path, const char *auth, const char *hn,
		   const char *hv)
{
	nghttp2_nv nv[] = { NV(":method", "GET"),
			    NV(":scheme", "https"),
			    NV(":authority", auth),
			    NV(":path", path),
			    { (uint8_t *)hn, (uint8_t *)hv, strlen(hn),
			      strlen(hv), NGHTTP2_NV_FLAG_NONE } };
	int32_t id = nghttp2_submit_request(gs, NULL, nv, 5, NULL, NULL);

	cr_assert(id > 0);
	return id;
}

Test(http2, every_stream_swapped_and_redacted)
{
	int32_t a, b;

	up_trailers = true;
	a = get("/a", "api.example", "authorization", "Bearer " PH_A);
	b = get("/b", "api.example", "authorization", "Bearer " PH_A);
	cr_assert_eq(pump(), H1_MORE);
	cr_assert(strstr(upseen[a].head, "authorization: Bearer " VAL_A "\n"),
		  "%s", upseen[a].head);
	cr_assert(strstr(upseen[b].head, "authorization: Bearer " VAL_A "\n"));
	cr_assert(strstr(upseen[a].head, "accept-encoding: identity\n"));
	cr_assert_eq(gseen[a].status, 200);
	cr_assert_str_eq(gseen[a].body, "auth=Bearer " PH_A " body=");
	cr_assert_str_eq(gseen[b].body, "auth=Bearer " PH_A " body=");
	cr_assert_str_eq(gseen[a].trailers, "x-echo: Bearer " PH_A "\n");
	cr_assert(gseen[a].ended && gseen[b].ended);
	cr_assert(!strstr(audit_log, VAL_A));
	cr_assert_eq(naudit, 2, "%s", audit_log);
}

Test(http2, misplaced_placeholder_blocks_its_stream_only)
{
	int32_t a, b;

	a = get("/bad", "api.example", "x-other", PH_A);
	b = get("/good", "api.example", "authorization", "Bearer " PH_A);
	cr_assert_eq(pump(), H1_MORE);
	cr_assert_eq(gseen[a].status, 403);
	cr_assert(strstr(gseen[a].body, "moat: blocked: secret API_KEY may not "
					"be sent in header:x-other"),
		  "%s", gseen[a].body);
	/* upstream got only the good one */
	cr_assert(!strstr(upseen[1].head, "/bad") &&
		  !strstr(upseen[3].head, "/bad"));
	cr_assert_eq(gseen[b].status, 200);
	cr_assert_eq(nblocked, 1, "%s", audit_log);
}

Test(http2, authority_must_be_the_sni)
{
	int32_t a = get("/", "other.example", "x-y", "z");

	cr_assert_eq(pump(), H1_MORE);
	cr_assert_eq(gseen[a].status, 403);
	cr_assert(strstr(gseen[a].body, "not this connection"));
	cr_assert_eq(upseen[1].head[0], 0);
	cr_assert_eq(nblocked, 1);
}

Test(http2, host_beside_authority_checked)
{
	int32_t a = get("/", "api.example", "host", "other.example");

	cr_assert_eq(pump(), H1_MORE);
	cr_assert_eq(gseen[a].status, 403);
	cr_assert_eq(upseen[1].head[0], 0);
}

Test(http2, placeholder_in_path_blocked)
{
	int32_t a = get("/x?key=" PH_A, "api.example", "x-y", "z");

	cr_assert_eq(pump(), H1_MORE);
	cr_assert_eq(gseen[a].status, 403);
	cr_assert(strstr(gseen[a].body, "query:key"), "%s", gseen[a].body);
}

/* A POST whose body is sent as two DATA frames split inside P. */
static const char *const body_parts[] = { "token=PHaaaaaaaa", "aaaaaaaaa&x=1" };

static ssize_t post_read(nghttp2_session *s, int32_t id, uint8_t *buf,
			 size_t len, uint32_t *flags, nghttp2_data_source *src,
			 void *ud)
{
	int *i = src->ptr;
	size_t n;

	(void)s, (void)id, (void)ud;
	if (*i == 2) {
		*flags |= NGHTTP2_DATA_FLAG_EOF;
		return 0;
	}
	n = strlen(body_parts[*i]);
	cr_assert(n <= len);
	memcpy(buf, body_parts[(*i)++], n);
	return (ssize_t)n;
}

static int32_t post(int *i)
{
	nghttp2_nv nv[] = { NV(":method", "POST"), NV(":scheme", "https"),
			    NV(":authority", "api.example"),
			    NV(":path", "/up") };
	nghttp2_data_provider p = { .source.ptr = i,
				    .read_callback = post_read };
	int32_t id = nghttp2_submit_request(gs, NULL, nv, 4, &p, NULL);

	cr_assert(id > 0);
	return id;
}

Test(http2, body_across_frames_blocked_unless_enabled)
{
	int i = 0;
	int32_t a = post(&i);

	cr_assert_eq(pump(), H1_MORE);
	cr_assert_eq(gseen[a].status, 403, "%d", gseen[a].status);
	cr_assert(strstr(gseen[a].body, "in body"));
	/* its head had gone up: upstream got a reset, never the value */
	cr_assert(upseen[1].reset);
	cr_assert(!strstr(upseen[1].body, VAL_A));
	cr_assert_eq(nblocked, 1);
}

Test(http2, body_swapped_when_enabled)
{
	int i = 0;
	int32_t a;

	cred.where |= CRED_IN_BODY;
	a = post(&i);
	cr_assert_eq(pump(), H1_MORE);
	cr_assert_str_eq(upseen[1].body, "token=" VAL_A "&x=1");
	cr_assert_eq(gseen[a].status, 200);
	cr_assert_str_eq(gseen[a].body, "auth= body=token=" PH_A "&x=1");
}

Test(http2, connect_refused)
{
	nghttp2_nv nv[] = { NV(":method", "CONNECT"),
			    NV(":authority", "api.example:443") };
	int32_t id = nghttp2_submit_request(gs, NULL, nv, 2, NULL, NULL);

	cr_assert(id > 0);
	cr_assert_eq(pump(), H1_MORE);
	cr_assert_eq(gseen[id].status, 400);
	cr_assert_eq(upseen[1].head[0], 0);
}

Test(http2, garbage_from_the_guest_closes)
{
	struct bbuf up = { 0 }, down = { 0 };
	static const char junk[] =
		"GET / HTTP/1.1\r\nHost: api.example\r\n\r\n";

	cr_assert_eq(h2_from_guest(c, (const uint8_t *)junk, sizeof(junk) - 1,
				   &up, &down),
		     H1_CLOSE);
	cr_assert_eq(h2_from_guest(c, (const uint8_t *)"x", 1, &up, &down),
		     H1_CLOSE);
	bbuf_free(&up);
	bbuf_free(&down);
}

Test(http2, upstream_end_resets_open_streams)
{
	struct bbuf up = { 0 }, down = { 0 };
	nghttp2_nv nv[] = { NV(":method", "GET"), NV(":scheme", "https"),
			    NV(":authority", "api.example"), NV(":path", "/") };
	const uint8_t *p;
	ssize_t n;
	int32_t id = nghttp2_submit_request(gs, NULL, nv, 4, NULL, NULL);

	while ((n = nghttp2_session_mem_send(gs, &p)) > 0)
		cr_assert(h2_from_guest(c, p, (size_t)n, &up, &down) >= 0);
	cr_assert_eq(h2_upstream_eof(c, &up, &down), H1_CLOSE);
	cr_assert(nghttp2_session_mem_recv(gs, down.p, down.len) ==
		  (ssize_t)down.len);
	cr_assert(gseen[id].reset);
	bbuf_free(&up);
	bbuf_free(&down);
}

Test(http2, inject_sets_the_header)
{
	struct cred_inject inj = { .method = "GET",
				   .path = "/v1",
				   .header = "X-Api-Key",
				   .value = "key {value}" };
	int32_t a, b;

	cred.inject = &inj;
	a = get("/v1/models", "api.example", "x-y", "z");
	b = get("/other", "api.example", "x-y", "z");
	cr_assert_eq(pump(), H1_MORE);
	/* lower case, as HTTP/2 wants its names */
	cr_assert(strstr(upseen[a].head, "x-api-key: key " VAL_A "\n"), "%s",
		  upseen[a].head);
	cr_assert(!strstr(upseen[b].head, "x-api-key"));
	cr_assert(strstr(audit_log, "\"rule\":\"inject\""), "%s", audit_log);
	cr_assert(!strstr(audit_log, VAL_A));
}

Test(http2, basic_swapped)
{
	/* "user:PHaaaaaaaaaaaaaaaaa" and "user:S3cr3tValueAAAA1234" */
	int32_t a = get("/", "api.example", "authorization",
			"Basic dXNlcjpQSGFhYWFhYWFhYWFhYWFhYWFh");

	cr_assert_eq(pump(), H1_MORE);
	cr_assert(strstr(upseen[a].head, "authorization: Basic "
					 "dXNlcjpTM2NyM3RWYWx1ZUFBQUExMjM0\n"),
		  "%s", upseen[a].head);
	cr_assert_eq(gseen[a].status, 200);
}
