/* tests/unit/broker/test_http1.c: the broker's HTTP/1.x engine
 * (broker/http1.c): swapping, blocking, framing, redaction. Every case
 * asserts the exact bytes that go upstream and down to the guest. */
#include <criterion/criterion.h>

#include <brotli/encode.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

#include "broker/http1.h"
#include "broker/store.h"

/* Secret A: API_KEY for api.example (default locations). B: OTHER_KEY
 * for other.example. Same-length placeholders unless a test changes
 * them. */
#define VAL_A "S3cr3tValueAAAA1234"
#define PH_A "PHaaaaaaaaaaaaaaaaa"
#define VAL_B "OtherSecretValue999"
#define PH_B "PHbbbbbbbbbbbbbbbbb"

static char *hosts_a[] = { "api.example" };
static char *hosts_b[] = { "other.example", "*.other.example" };
static char *default_headers[] = { "authorization", "x-api-key",
				   "proxy-authorization" };
static char *query_a[] = { "key" };

static struct credential creds[3];
static struct secret secrets[3];
static struct store st;
static char val_a[] = VAL_A, val_b[] = VAL_B, ph_a[] = PH_A, ph_b[] = PH_B;

static struct h1_who who = {
	.flow = 7, .pid = 42, .exe = "/usr/bin/curl", .dest = "10.0.0.1:443"
};
static struct h1_config cfg;
static struct h1_conn *c;
static struct bbuf up, down;

static char audit_log[16384];
static int naudit;

static void record(void *ctx, const char *members)
{
	(void)ctx;
	naudit++;
	strncat(audit_log, members, sizeof(audit_log) - strlen(audit_log) - 2);
	strcat(audit_log, "\n");
}

static void setup(void)
{
	memset(creds, 0, sizeof(creds));
	creds[0] = (struct credential){ .name = "API_KEY",
					.hosts = hosts_a,
					.nhosts = 1,
					.where = CRED_IN_HEADER | CRED_IN_BASIC,
					.headers = default_headers,
					.nheaders = 3,
					.query = query_a,
					.nquery = 1 };
	creds[1] = (struct credential){ .name = "OTHER_KEY",
					.hosts = hosts_b,
					.nhosts = 2,
					.where = CRED_IN_HEADER | CRED_IN_BASIC,
					.headers = default_headers,
					.nheaders = 3 };
	secrets[0] = (struct secret){ .cred = &creds[0],
				      .placeholder = ph_a,
				      .plen = strlen(PH_A),
				      .value = val_a,
				      .vlen = strlen(VAL_A) };
	secrets[1] = (struct secret){ .cred = &creds[1],
				      .placeholder = ph_b,
				      .plen = strlen(PH_B),
				      .value = val_b,
				      .vlen = strlen(VAL_B) };
	memset(&st, 0, sizeof(st));
	pthread_rwlock_init(&st.lock, NULL);
	st.v = secrets;
	st.n = 2;
	cfg = (struct h1_config){ .store = &st,
				  .tls = true,
				  .host = "api.example",
				  .who = &who,
				  .audit = record };
	who.dest = "10.0.0.1:443";
	c = NULL;
	memset(&up, 0, sizeof(up));
	memset(&down, 0, sizeof(down));
	audit_log[0] = '\0';
	naudit = 0;
}

static void teardown(void)
{
	h1_free(c);
	bbuf_free(&up);
	bbuf_free(&down);
	pthread_rwlock_destroy(&st.lock);
}

TestSuite(http1, .init = setup, .fini = teardown);

static void conn(void)
{
	if (!c)
		c = h1_new(&cfg);
	cr_assert(c);
}

/* What a buffer holds, as a string (then emptied). */
static char *take(struct bbuf *b)
{
	char *s = malloc(b->len + 1);

	cr_assert(s);
	if (b->len)
		memcpy(s, b->p, b->len);
	s[b->len] = '\0';
	b->len = 0;
	return s;
}

static int guest(const char *s)
{
	conn();
	return h1_from_guest(c, (const uint8_t *)s, strlen(s), &up, &down);
}

static int guest_n(const void *s, size_t n)
{
	conn();
	return h1_from_guest(c, s, n, &up, &down);
}

/* The same bytes fed one at a time: the last status. */
static int guest_bytes(const char *s)
{
	int rc = H1_MORE;
	size_t i;

	conn();
	for (i = 0; s[i] && rc == H1_MORE; i++)
		rc = h1_from_guest(c, (const uint8_t *)s + i, 1, &up, &down);
	return rc;
}

static int upstream(const char *s)
{
	conn();
	return h1_from_upstream(c, (const uint8_t *)s, strlen(s), &down);
}

static int upstream_n(const void *s, size_t n)
{
	conn();
	return h1_from_upstream(c, s, n, &down);
}

#define expect_up(s)                                                           \
	do {                                                                   \
		char *got_ = take(&up);                                        \
		cr_assert_str_eq(got_, s);                                     \
		free(got_);                                                    \
	} while (0)
#define expect_down(s)                                                         \
	do {                                                                   \
		char *got_ = take(&down);                                      \
		cr_assert_str_eq(got_, s);                                     \
		free(got_);                                                    \
	} while (0)

static char *forbidden(const char *why)
{
	static char buf[1024];
	char body[512];

	snprintf(body, sizeof(body), "moat: blocked: %s\n", why);
	snprintf(buf, sizeof(buf),
		 "HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\n"
		 "Content-Length: %zu\r\nConnection: close\r\n\r\n%s",
		 strlen(body), body);
	return buf;
}

static char *bad(const char *why)
{
	static char buf[1024];
	char body[512];

	snprintf(body, sizeof(body), "moat: bad request: %s\n", why);
	snprintf(buf, sizeof(buf),
		 "HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain\r\n"
		 "Content-Length: %zu\r\nConnection: close\r\n\r\n%s",
		 strlen(body), body);
	return buf;
}

/* down holds first, then second */
static void expect_after(const char *first, const char *second)
{
	char want[2048];

	snprintf(want, sizeof(want), "%s%s", first, second);
	expect_down(want);
}

#define WHO                                                                    \
	",\"flow\":7,\"pid\":42,\"exe\":\"/usr/bin/curl\",\"dest\":\"10.0.0.1:443\""

/* ------------------------------------------------------------ swapping */

Test(http1, bearer_header_swapped)
{
	cr_assert_eq(guest("GET /v1/me HTTP/1.1\r\nHost: api.example\r\n"
			   "Authorization: Bearer " PH_A "\r\n\r\n"),
		     H1_MORE);
	expect_up("GET /v1/me HTTP/1.1\r\nHost: api.example\r\n"
		  "Authorization: Bearer " VAL_A "\r\n"
		  "Accept-Encoding: identity\r\n\r\n");
	expect_down("");
	cr_assert_eq(naudit, 1);
	cr_assert_str_eq(
		audit_log,
		"\"event\":\"credential\",\"verdict\":\"swapped\","
		"\"secret\":\"API_KEY\",\"location\":\"header:authorization\","
		"\"host\":\"api.example\",\"method\":\"GET\",\"path\":\"/v1/me\","
		"\"bytes\":112" WHO "\n");
	cr_assert_null(strstr(audit_log, VAL_A));
}

Test(http1, x_api_key_swapped_split_byte_by_byte)
{
	cr_assert_eq(guest_bytes(
			     "POST /x?a=1 HTTP/1.1\r\nHost: API.Example:443\r\n"
			     "X-Api-Key: " PH_A "\r\n"
			     "Accept-Encoding: gzip, br\r\n"
			     "Content-Length: 2\r\n\r\nhi"),
		     H1_MORE);
	expect_up("POST /x?a=1 HTTP/1.1\r\nHost: API.Example:443\r\n"
		  "X-Api-Key: " VAL_A "\r\n"
		  "Content-Length: 2\r\n"
		  "Accept-Encoding: identity\r\n\r\nhi");
	cr_assert_eq(naudit, 1);
	cr_assert(strstr(audit_log, "\"location\":\"header:x-api-key\""));
}

Test(http1, basic_swapped_inside_the_encoding)
{
	/* base64("user:" PH_A) and base64("user:" VAL_A) */
	char in[256], out[256], enc[128];
	const char *plain_in = "user:" PH_A, *plain_out = "user:" VAL_A;

	EVP_EncodeBlock((unsigned char *)enc, (const unsigned char *)plain_in,
			(int)strlen(plain_in));
	snprintf(in, sizeof(in),
		 "GET / HTTP/1.1\r\nHost: api.example\r\n"
		 "Authorization: Basic %s\r\n\r\n",
		 enc);
	EVP_EncodeBlock((unsigned char *)enc, (const unsigned char *)plain_out,
			(int)strlen(plain_out));
	snprintf(out, sizeof(out),
		 "GET / HTTP/1.1\r\nHost: api.example\r\n"
		 "Authorization: Basic %s\r\nAccept-Encoding: identity\r\n\r\n",
		 enc);
	cr_assert_eq(guest(in), H1_MORE);
	expect_up(out);
	cr_assert(strstr(audit_log, "\"location\":\"basic\""));
}

/* An echo of the Authorization header that went up carries the value
 * base64-encoded: the token the broker made goes back to the guest as
 * the guest's own, in the headers and in a body split byte by byte. */
Test(http1, basic_token_echo_redacted)
{
	char in[256], resp[512], ph_tok[128], val_tok[128], *got;
	const char *plain_in = "user:" PH_A, *plain_out = "user:" VAL_A;
	size_t i;
	int n;

	EVP_EncodeBlock((unsigned char *)ph_tok,
			(const unsigned char *)plain_in, (int)strlen(plain_in));
	EVP_EncodeBlock((unsigned char *)val_tok,
			(const unsigned char *)plain_out,
			(int)strlen(plain_out));
	snprintf(in, sizeof(in),
		 "GET / HTTP/1.1\r\nHost: api.example\r\n"
		 "Authorization: Basic %s\r\n\r\n",
		 ph_tok);
	cr_assert_eq(guest(in), H1_MORE);
	up.len = 0;
	n = snprintf(resp, sizeof(resp),
		     "HTTP/1.1 200 OK\r\nX-Echo: Basic %s\r\n"
		     "Content-Length: %zu\r\n\r\n{\"auth\":\"Basic %s\"}",
		     val_tok, strlen(val_tok) + 18, val_tok);
	for (i = 0; i < (size_t)n; i++)
		cr_assert_eq(upstream_n(resp + i, 1), H1_MORE);
	got = take(&down);
	cr_assert(!strstr(got, val_tok), "%s", got);
	snprintf(resp, sizeof(resp),
		 "HTTP/1.1 200 OK\r\nX-Echo: Basic %s\r\n"
		 "Content-Length: %zu\r\n\r\n{\"auth\":\"Basic %s\"}",
		 ph_tok, strlen(ph_tok) + 18, ph_tok);
	cr_assert_str_eq(got, resp);
	free(got);
}

Test(http1, basic_blocked_when_not_enabled)
{
	char in[256], enc[128];
	const char *plain_in = "user:" PH_A;

	creds[0].where = CRED_IN_HEADER;
	EVP_EncodeBlock((unsigned char *)enc, (const unsigned char *)plain_in,
			(int)strlen(plain_in));
	snprintf(in, sizeof(in),
		 "GET / HTTP/1.1\r\nHost: api.example\r\n"
		 "Authorization: Basic %s\r\n\r\n",
		 enc);
	cr_assert_eq(guest(in), H1_CLOSE);
	expect_up("");
	expect_down(forbidden("secret API_KEY may not be sent in basic"));
}

Test(http1, header_not_enabled_blocked)
{
	cr_assert_eq(guest("GET /v1 HTTP/1.1\r\nHost: api.example\r\n"
			   "X-Custom: " PH_A "\r\n\r\n"),
		     H1_CLOSE);
	expect_up("");
	expect_down(
		forbidden("secret API_KEY may not be sent in header:x-custom"));
	cr_assert_eq(naudit, 1);
	cr_assert_str_eq(
		audit_log,
		"\"event\":\"credential\",\"verdict\":\"blocked\","
		"\"secret\":\"API_KEY\",\"location\":\"header:x-custom\","
		"\"reason\":\"location\",\"host\":\"api.example\","
		"\"method\":\"GET\",\"path\":\"/v1\"" WHO "\n");
}

Test(http1, query_disabled_blocked)
{
	cr_assert_eq(guest("GET /v1?key=" PH_A " HTTP/1.1\r\n"
			   "Host: api.example\r\n\r\n"),
		     H1_CLOSE);
	expect_up("");
	expect_down(forbidden("secret API_KEY may not be sent in query:key"));
	cr_assert(strstr(audit_log, "\"reason\":\"location\""));
	cr_assert(strstr(audit_log, "\"path\":\"/v1\""));
}

Test(http1, query_enabled_swapped)
{
	creds[0].where |= CRED_IN_QUERY;
	cr_assert_eq(guest("GET /v1?a=b&key=" PH_A "&c HTTP/1.1\r\n"
			   "Host: api.example\r\n\r\n"),
		     H1_MORE);
	expect_up("GET /v1?a=b&key=" VAL_A "&c HTTP/1.1\r\n"
		  "Host: api.example\r\nAccept-Encoding: identity\r\n\r\n");
	cr_assert(strstr(audit_log, "\"location\":\"query:key\""));
}

Test(http1, query_other_parameter_blocked)
{
	creds[0].where |= CRED_IN_QUERY;
	cr_assert_eq(guest("GET /v1?token=" PH_A " HTTP/1.1\r\n"
			   "Host: api.example\r\n\r\n"),
		     H1_CLOSE);
	expect_down(forbidden("secret API_KEY may not be sent in query:token"));
}

Test(http1, placeholder_in_path_blocked)
{
	creds[0].where |= CRED_IN_QUERY;
	cr_assert_eq(guest("GET /v1/" PH_A " HTTP/1.1\r\n"
			   "Host: api.example\r\n\r\n"),
		     H1_CLOSE);
	expect_down(forbidden("secret API_KEY may not be sent in target"));
}

Test(http1, body_disabled_blocked_across_chunks)
{
	/* the placeholder is split over two chunks, and the head went up */
	cr_assert_eq(guest("POST /v1 HTTP/1.1\r\nHost: api.example\r\n"
			   "Transfer-Encoding: chunked\r\n\r\n"
			   "5\r\n{\"k\":\r\n"),
		     H1_MORE);
	expect_up("POST /v1 HTTP/1.1\r\nHost: api.example\r\n"
		  "Transfer-Encoding: chunked\r\n"
		  "Accept-Encoding: identity\r\n\r\n"
		  "5\r\n{\"k\":\r\n");
	cr_assert_eq(guest("4\r\n\"PHa\r\n"), H1_MORE);
	expect_up("1\r\n\"\r\n");
	cr_assert_eq(guest("10\r\naaaaaaaaaaaaaaaa\r\n"), H1_CLOSE);
	expect_up("");
	expect_down(forbidden("secret API_KEY may not be sent in body"));
	cr_assert(strstr(audit_log, "\"location\":\"body\""));
	cr_assert_eq(naudit, 1);
}

/* A request blocked in its body had its head, the value swapped into
 * it, sent up already: that swap has its record too, before the block's. */
Test(http1, swap_before_body_block_audited)
{
	char *got;

	cr_assert_eq(guest("POST /v1 HTTP/1.1\r\nHost: api.example\r\n"
			   "Authorization: Bearer " PH_A "\r\n"
			   "Content-Length: 40\r\n\r\n{\"k\":"),
		     H1_MORE);
	got = take(&up);
	cr_assert(strstr(got, "Bearer " VAL_A), "%s", got);
	free(got);
	cr_assert_eq(guest("\"" PH_A "\"} padding......"), H1_CLOSE);
	expect_down(forbidden("secret API_KEY may not be sent in body"));
	cr_assert_eq(naudit, 2, "%s", audit_log);
	cr_assert(strstr(audit_log, "\"verdict\":\"swapped\",\"secret\":"
				    "\"API_KEY\",\"location\":"
				    "\"header:authorization\""),
		  "%s", audit_log);
	cr_assert(strstr(audit_log, "\"verdict\":\"blocked\""), "%s",
		  audit_log);
}

Test(http1, body_enabled_swapped_byte_by_byte)
{
	creds[0].where |= CRED_IN_BODY;
	cr_assert_eq(guest_bytes("POST /v1 HTTP/1.1\r\nHost: api.example\r\n"
				 "Content-Length: 27\r\n\r\n"
				 "{\"k\":\"" PH_A "\"}"),
		     H1_MORE);
	expect_up("POST /v1 HTTP/1.1\r\nHost: api.example\r\n"
		  "Content-Length: 27\r\nAccept-Encoding: identity\r\n\r\n"
		  "{\"k\":\"" VAL_A "\"}");
	cr_assert(strstr(audit_log, "\"location\":\"body\""));
	cr_assert(strstr(audit_log, "\"bytes\":"));
}

Test(http1, body_enabled_chunked_swapped)
{
	creds[0].where |= CRED_IN_BODY;
	cr_assert_eq(guest("POST /v1 HTTP/1.1\r\nHost: api.example\r\n"
			   "Transfer-Encoding: chunked\r\n\r\n"
			   "3\r\nPHa\r\n10\r\naaaaaaaaaaaaaaaa\r\n"
			   "2\r\n!!\r\n0\r\nX-T: 1\r\n\r\n"),
		     H1_MORE);
	expect_up("POST /v1 HTTP/1.1\r\nHost: api.example\r\n"
		  "Transfer-Encoding: chunked\r\n"
		  "Accept-Encoding: identity\r\n\r\n"
		  "13\r\n" VAL_A "\r\n2\r\n!!\r\n0\r\nX-T: 1\r\n\r\n");
}

Test(http1, body_swap_changing_length_goes_chunked)
{
	static char shorter[] = "tiny";

	creds[0].where |= CRED_IN_BODY;
	secrets[0].value = shorter;
	secrets[0].vlen = 4;
	cr_assert_eq(guest("POST /v1 HTTP/1.1\r\nHost: api.example\r\n"
			   "Content-Length: 21\r\n\r\n"
			   "<" PH_A ">"),
		     H1_MORE);
	expect_up("POST /v1 HTTP/1.1\r\nHost: api.example\r\n"
		  "Accept-Encoding: identity\r\n"
		  "Transfer-Encoding: chunked\r\n\r\n"
		  "6\r\n<tiny>\r\n0\r\n\r\n");
}

Test(http1, wrong_host_blocked)
{
	cfg.host = "evil.example";
	cr_assert_eq(guest("GET / HTTP/1.1\r\nHost: evil.example\r\n"
			   "Authorization: Bearer " PH_A "\r\n\r\n"),
		     H1_CLOSE);
	expect_up("");
	expect_down(
		forbidden("secret API_KEY may not be sent to evil.example"));
	cr_assert(strstr(audit_log, "\"reason\":\"wrong-host\""));
	cr_assert(strstr(audit_log, "\"host\":\"evil.example\""));
}

Test(http1, other_secrets_host_blocked)
{
	/* A's placeholder to B's host */
	cfg.host = "api.other.example";
	cr_assert_eq(guest("GET / HTTP/1.1\r\nHost: api.other.example\r\n"
			   "Authorization: Bearer " PH_A "\r\n\r\n"),
		     H1_CLOSE);
	expect_down(forbidden(
		"secret API_KEY may not be sent to api.other.example"));
	cr_assert(strstr(audit_log, "\"secret\":\"API_KEY\""));
	cr_assert(strstr(audit_log, "\"reason\":\"wrong-host\""));
}

Test(http1, plain_http_blocked)
{
	static const char *names[] = { "api.example" };

	cfg.tls = false;
	cfg.host = NULL;
	cfg.names = names;
	cfg.nnames = 1;
	who.dest = "10.0.0.1:80";
	cr_assert_eq(guest("GET / HTTP/1.1\r\nHost: api.example\r\n"
			   "Authorization: Bearer " PH_A "\r\n\r\n"),
		     H1_CLOSE);
	expect_up("");
	expect_down(
		forbidden("secret API_KEY may not be sent over plain HTTP"));
	cr_assert(strstr(audit_log, "\"reason\":\"plain-http\""));
}

Test(http1, plain_http_opted_in)
{
	static const char *names[] = { "www.example", "api.example" };

	cfg.tls = false;
	cfg.host = NULL;
	cfg.names = names;
	cfg.nnames = 2;
	who.dest = "10.0.0.1:80";
	creds[0].plain_http = true;
	cr_assert_eq(guest("GET / HTTP/1.1\r\nHost: api.example:80\r\n"
			   "Authorization: Bearer " PH_A "\r\n\r\n"),
		     H1_MORE);
	expect_up("GET / HTTP/1.1\r\nHost: api.example:80\r\n"
		  "Authorization: Bearer " VAL_A "\r\n"
		  "Accept-Encoding: identity\r\n\r\n");
}

Test(http1, plain_http_to_an_address)
{
	cfg.tls = false;
	cfg.host = NULL;
	who.dest = "10.0.0.1:8080";
	cr_assert_eq(guest("GET / HTTP/1.1\r\nHost: 10.0.0.1:8080\r\n\r\n"),
		     H1_MORE);
	expect_up("GET / HTTP/1.1\r\nHost: 10.0.0.1:8080\r\n\r\n");
	cr_assert_eq(guest("GET / HTTP/1.1\r\nHost: 10.0.0.1:8081\r\n\r\n"),
		     H1_MORE);
	expect_up("");
	/* the 403 waits for the first response */
	cr_assert_eq(upstream("HTTP/1.1 204 No Content\r\n\r\n"), H1_CLOSE);
	expect_after("HTTP/1.1 204 No Content\r\n\r\n",
		     forbidden("Host 10.0.0.1 is not this connection's"));
}

Test(http1, host_mismatch_blocked)
{
	cr_assert_eq(guest("GET / HTTP/1.1\r\nHost: other.example\r\n"
			   "Authorization: Bearer " PH_B "\r\n\r\n"),
		     H1_CLOSE);
	expect_up("");
	expect_down(forbidden("Host other.example is not this connection's"));
	cr_assert(strstr(audit_log, "\"reason\":\"host-mismatch\""));
	cr_assert_eq(naudit, 1);
}

Test(http1, host_port_must_be_default_or_the_destinations)
{
	cr_assert_eq(guest("GET / HTTP/1.1\r\nHost: api.example:8443\r\n\r\n"),
		     H1_CLOSE);
	expect_down(forbidden("Host api.example is not this connection's"));
}

Test(http1, absolute_target_host_checked)
{
	cr_assert_eq(guest("GET http://other.example/x HTTP/1.1\r\n"
			   "Host: api.example\r\n\r\n"),
		     H1_CLOSE);
	expect_up("");
	expect_down(forbidden(
		"the target's host other.example is not this connection's"));
	teardown();
	setup();
	cr_assert_eq(guest("GET https://API.example/x HTTP/1.1\r\n"
			   "Host: api.example\r\n\r\n"),
		     H1_MORE);
	expect_up("GET https://API.example/x HTTP/1.1\r\n"
		  "Host: api.example\r\nAccept-Encoding: identity\r\n\r\n");
}

Test(http1, second_keepalive_request_to_another_host)
{
	cr_assert_eq(guest("GET /a HTTP/1.1\r\nHost: api.example\r\n"
			   "Authorization: Bearer " PH_A "\r\n\r\n"
			   "GET /b HTTP/1.1\r\nHost: other.example\r\n"
			   "Authorization: Bearer " PH_B "\r\n\r\n"),
		     H1_MORE);
	expect_up("GET /a HTTP/1.1\r\nHost: api.example\r\n"
		  "Authorization: Bearer " VAL_A "\r\n"
		  "Accept-Encoding: identity\r\n\r\n");
	expect_down("");
	cr_assert_eq(upstream("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"),
		     H1_CLOSE);
	expect_after("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
		     forbidden("Host other.example is not this connection's"));
	cr_assert_eq(naudit, 2);
}

Test(http1, revoked_blocked)
{
	secrets[0].revoked = true;
	cr_assert_eq(guest("GET / HTTP/1.1\r\nHost: api.example\r\n"
			   "Authorization: Bearer " PH_A "\r\n\r\n"),
		     H1_CLOSE);
	expect_down(forbidden("secret API_KEY is revoked"));
	cr_assert(strstr(audit_log, "\"reason\":\"revoked\""));
}

Test(http1, inject_sets_the_header_when_absent)
{
	struct cred_inject in = { .method = "GET",
				  .path = "/v1/",
				  .header = "Authorization",
				  .value = "Bearer {value}" };

	creds[0].inject = &in;
	cr_assert_eq(guest("GET /v1/x HTTP/1.1\r\nHost: api.example\r\n\r\n"
			   "POST /v1/x HTTP/1.1\r\nHost: api.example\r\n\r\n"
			   "GET /v2 HTTP/1.1\r\nHost: api.example\r\n\r\n"),
		     H1_MORE);
	expect_up("GET /v1/x HTTP/1.1\r\nHost: api.example\r\n"
		  "Authorization: Bearer " VAL_A "\r\n"
		  "Accept-Encoding: identity\r\n\r\n"
		  "POST /v1/x HTTP/1.1\r\nHost: api.example\r\n"
		  "Accept-Encoding: identity\r\n\r\n"
		  "GET /v2 HTTP/1.1\r\nHost: api.example\r\n"
		  "Accept-Encoding: identity\r\n\r\n");
	cr_assert_eq(naudit, 1);
	cr_assert(strstr(audit_log, "\"rule\":\"inject\""));
}

Test(http1, inject_leaves_a_placeholder_header_to_the_swap)
{
	struct cred_inject in = { .path = "/",
				  .header = "Authorization",
				  .value = "Bearer {value}" };

	creds[0].inject = &in;
	cr_assert_eq(guest("GET /v1/x HTTP/1.1\r\nHost: api.example\r\n"
			   "authorization: token " PH_A "\r\n\r\n"),
		     H1_MORE);
	expect_up("GET /v1/x HTTP/1.1\r\nHost: api.example\r\n"
		  "authorization: token " VAL_A "\r\n"
		  "Accept-Encoding: identity\r\n\r\n");
}

Test(http1, require_refuses_another_credential)
{
	creds[0].require = true;
	cr_assert_eq(guest("GET / HTTP/1.1\r\nHost: api.example\r\n"
			   "Authorization: Bearer sk-real-smuggled\r\n\r\n"),
		     H1_CLOSE);
	expect_up("");
	expect_down(forbidden("requests to api.example must carry secret "
			      "API_KEY's placeholder in header:authorization"));
	cr_assert(strstr(audit_log, "\"reason\":\"other-credential\""));
	teardown();
	setup();
	creds[0].require = true;
	cr_assert_eq(guest("GET / HTTP/1.1\r\nHost: api.example\r\n"
			   "Authorization: Bearer " PH_A "\r\n\r\n"),
		     H1_MORE);
}

/* ------------------------------------------------------------- framing */

static void expect_400(const char *req, const char *why)
{
	teardown();
	setup();
	cr_assert_eq(guest(req), H1_CLOSE, "%s", req);
	expect_up("");
	expect_down(bad(why));
}

Test(http1, smuggling_forms_get_a_400)
{
	expect_400("POST / HTTP/1.1\r\nHost: api.example\r\n"
		   "Content-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n",
		   "both Content-Length and chunked");
	expect_400("POST / HTTP/1.1\r\nHost: api.example\r\n"
		   "Content-Length: 3\r\nContent-Length: 3\r\n\r\n",
		   "two Content-Lengths");
	expect_400("POST / HTTP/1.1\r\nHost: api.example\r\n"
		   "Content-Length: 3\r\nContent-Length: 4\r\n\r\n",
		   "two Content-Lengths");
	expect_400("POST / HTTP/1.1\r\nHost: api.example\r\n"
		   "Content-Length: +3\r\n\r\n",
		   "a bad Content-Length");
	expect_400("POST / HTTP/1.1\r\nHost: api.example\r\n"
		   "Content-Length: 3, 3\r\n\r\n",
		   "a bad Content-Length");
	expect_400("GET / HTTP/1.1\nHost: api.example\r\n\r\n", "a bare LF");
	expect_400("GET / HTTP/1.1\r\nHost: api.example\r\nX: a\r\n"
		   " folded\r\n\r\n",
		   "a folded header line");
	expect_400("POST / HTTP/1.1\r\nHost: api.example\r\n"
		   "Transfer-Encoding: gzip, chunked\r\n\r\n",
		   "a Transfer-Encoding other than chunked");
	expect_400("POST / HTTP/1.1\r\nHost: api.example\r\n"
		   "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked"
		   "\r\n\r\n",
		   "a Transfer-Encoding other than chunked");
	expect_400("POST / HTTP/1.1\r\nHost: api.example\r\n"
		   "Transfer-Encoding : chunked\r\n\r\n",
		   "a bad header name");
	expect_400("GET / HTTP/1.1\r\nHost: api.example\r\nX: a\rb\r\n\r\n",
		   "a bare CR");
	expect_400("GET / HTTP/1.1\r\nHost: api.example\r\nX: a\x01"
		   "b\r\n\r\n",
		   "a control byte in a header");
	expect_400("GET / HTTP/1.1\r\n\r\n", "no Host header");
	expect_400("GET / HTTP/1.1\r\nHost: api.example\r\nHost: api.example"
		   "\r\n\r\n",
		   "two Host headers");
	expect_400("GET /  HTTP/1.1\r\nHost: api.example\r\n\r\n",
		   "a malformed request line");
	expect_400("GET / HTTP/2.0\r\nHost: api.example\r\n\r\n",
		   "a malformed request line");
	expect_400("CONNECT api.example:443 HTTP/1.1\r\nHost: api.example\r\n"
		   "\r\n",
		   "a target that is not a path or a URL");
}

Test(http1, nul_in_a_header_gets_a_400)
{
	static const char req[] = "GET / HTTP/1.1\r\nHost: api.example\r\n"
				  "X: a\0b\r\n\r\n";

	cr_assert_eq(guest_n(req, sizeof(req) - 1), H1_CLOSE);
	expect_up("");
	expect_down(bad("a control byte in a header"));
}

Test(http1, bad_chunk_size_after_the_head)
{
	cr_assert_eq(guest("POST / HTTP/1.1\r\nHost: api.example\r\n"
			   "Transfer-Encoding: chunked\r\n\r\nzz\r\n"),
		     H1_CLOSE);
	expect_up("POST / HTTP/1.1\r\nHost: api.example\r\n"
		  "Transfer-Encoding: chunked\r\n"
		  "Accept-Encoding: identity\r\n\r\n");
	expect_down(bad("a bad chunk size"));
	teardown();
	setup();
	cr_assert_eq(guest("POST / HTTP/1.1\r\nHost: api.example\r\n"
			   "Transfer-Encoding: chunked\r\n\r\n"
			   "ffffffffffffffffff\r\n"),
		     H1_CLOSE);
	expect_down(bad("a bad chunk size"));
	teardown();
	setup();
	cr_assert_eq(guest("POST / HTTP/1.1\r\nHost: api.example\r\n"
			   "Transfer-Encoding: chunked\r\n\r\n"
			   "2\r\nabc\r\n"),
		     H1_CLOSE);
	expect_down(bad("a chunk longer than its size"));
}

Test(http1, head_too_large_and_too_many_headers)
{
	char *big = malloc(H1_HEAD_MAX + 100);
	struct bbuf b = { 0 };
	int i;

	cr_assert(big);
	strcpy(big, "GET / HTTP/1.1\r\nHost: api.example\r\nX: ");
	memset(big + strlen(big), 'a', H1_HEAD_MAX);
	big[H1_HEAD_MAX + 40] = '\0';
	cr_assert_eq(guest(big), H1_CLOSE);
	expect_down(bad("a head too large"));
	free(big);
	teardown();
	setup();
	bbuf_put(&b, "GET / HTTP/1.1\r\nHost: api.example\r\n", 35);
	for (i = 0; i < H1_HEADERS_MAX; i++)
		bbuf_put(&b, "X: y\r\n", 6);
	bbuf_put(&b, "\r\n", 2);
	cr_assert_eq(guest_n(b.p, b.len), H1_CLOSE);
	expect_down(bad("too many header fields"));
	bbuf_free(&b);
}

Test(http1, pipelined_requests_and_responses)
{
	cr_assert_eq(guest("\r\nGET /1 HTTP/1.1\r\nHost: api.example\r\n\r\n"
			   "HEAD /2 HTTP/1.1\r\nHost: api.example\r\n\r\n"
			   "GET /3 HTTP/1.1\r\nHost: api.example\r\n\r\n"),
		     H1_MORE);
	expect_up("GET /1 HTTP/1.1\r\nHost: api.example\r\n"
		  "Accept-Encoding: identity\r\n\r\n"
		  "HEAD /2 HTTP/1.1\r\nHost: api.example\r\n"
		  "Accept-Encoding: identity\r\n\r\n"
		  "GET /3 HTTP/1.1\r\nHost: api.example\r\n"
		  "Accept-Encoding: identity\r\n\r\n");
	/* HEAD's Content-Length announces a body that never comes */
	cr_assert_eq(upstream("HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\n1"
			      "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n"
			      "HTTP/1.1 304 Not Modified\r\n"
			      "Content-Length: 5\r\n\r\n"),
		     H1_MORE);
	expect_down("HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\n1"
		    "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n"
		    "HTTP/1.1 304 Not Modified\r\nContent-Length: 5\r\n\r\n");
}

Test(http1, chunked_request_passes)
{
	cr_assert_eq(guest_bytes("POST /u HTTP/1.1\r\nHost: api.example\r\n"
				 "Transfer-Encoding: chunked\r\n\r\n"
				 "4;ext=1\r\nabcd\r\n0\r\n\r\n"),
		     H1_MORE);
	expect_up("POST /u HTTP/1.1\r\nHost: api.example\r\n"
		  "Transfer-Encoding: chunked\r\n"
		  "Accept-Encoding: identity\r\n\r\n"
		  "1\r\na\r\n1\r\nb\r\n1\r\nc\r\n1\r\nd\r\n0\r\n\r\n");
}

Test(http1, expect_100_continue)
{
	cr_assert_eq(guest("PUT /u HTTP/1.1\r\nHost: api.example\r\n"
			   "Expect: 100-continue\r\nContent-Length: 3\r\n\r\n"),
		     H1_MORE);
	expect_up("PUT /u HTTP/1.1\r\nHost: api.example\r\n"
		  "Expect: 100-continue\r\nContent-Length: 3\r\n"
		  "Accept-Encoding: identity\r\n\r\n");
	cr_assert_eq(upstream("HTTP/1.1 100 Continue\r\n\r\n"), H1_MORE);
	expect_down("HTTP/1.1 100 Continue\r\n\r\n");
	cr_assert_eq(guest("abc"), H1_MORE);
	expect_up("abc");
	cr_assert_eq(
		upstream("HTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n"),
		H1_MORE);
	expect_down("HTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n");
}

Test(http1, websocket_upgrade_tunnels)
{
	cr_assert_eq(guest("GET /ws HTTP/1.1\r\nHost: api.example\r\n"
			   "Connection: Upgrade\r\nUpgrade: websocket\r\n"
			   "Authorization: Bearer " PH_A "\r\n\r\n\x81\x01x"),
		     H1_MORE);
	expect_up("GET /ws HTTP/1.1\r\nHost: api.example\r\n"
		  "Connection: Upgrade\r\nUpgrade: websocket\r\n"
		  "Authorization: Bearer " VAL_A "\r\n"
		  "Accept-Encoding: identity\r\n\r\n");
	cr_assert_eq(upstream("HTTP/1.1 101 Switching Protocols\r\n"
			      "Upgrade: websocket\r\nConnection: Upgrade\r\n"
			      "\r\n\x81\x02hi"),
		     H1_TUNNEL);
	expect_down(
		"HTTP/1.1 101 Switching Protocols\r\n"
		"Upgrade: websocket\r\nConnection: Upgrade\r\n\r\n\x81\x02hi");
	cr_assert_eq(h1_from_guest(c, NULL, 0, &up, &down), H1_TUNNEL);
	expect_up("\x81\x01x");
	cr_assert_eq(guest("GET " PH_A), H1_TUNNEL);
	expect_up("GET " PH_A);
}

Test(http1, h2c_upgrade_is_dropped)
{
	cr_assert_eq(
		guest("GET / HTTP/1.1\r\nHost: api.example\r\n"
		      "Connection: Upgrade, HTTP2-Settings\r\n"
		      "Upgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQAAP__\r\n"
		      "\r\n"),
		H1_MORE);
	expect_up("GET / HTTP/1.1\r\nHost: api.example\r\n"
		  "Connection: Upgrade, HTTP2-Settings\r\n"
		  "Accept-Encoding: identity\r\n\r\n");
	cr_assert_eq(upstream("HTTP/1.1 101 Switching Protocols\r\n\r\n"),
		     H1_CLOSE);
}

/* ------------------------------------------------------------ redaction */

static void one_get(void)
{
	cr_assert_eq(guest("GET / HTTP/1.1\r\nHost: api.example\r\n\r\n"),
		     H1_MORE);
	up.len = 0;
}

Test(http1, redacted_in_status_and_headers)
{
	one_get();
	cr_assert_eq(upstream("HTTP/1.1 200 " VAL_A "\r\nX-Echo: Bearer " VAL_A
			      "\r\nContent-Length: 0\r\n\r\n"),
		     H1_MORE);
	expect_down("HTTP/1.1 200 " PH_A "\r\nX-Echo: Bearer " PH_A
		    "\r\nContent-Length: 0\r\n\r\n");
}

Test(http1, redacted_in_json_split_across_feeds)
{
	const char *body = "{\"authorization\":\"Bearer " VAL_A "\"}";
	char head[128], *resp;
	size_t i;

	one_get();
	snprintf(head, sizeof(head),
		 "HTTP/1.1 200 OK\r\nContent-Length: %zu\r\n\r\n",
		 strlen(body));
	cr_assert_eq(upstream(head), H1_MORE);
	for (i = 0; body[i]; i++)
		cr_assert_eq(upstream_n(body + i, 1), H1_MORE);
	resp = malloc(256);
	snprintf(resp, 256, "%s{\"authorization\":\"Bearer " PH_A "\"}", head);
	expect_down(resp);
	free(resp);
}

Test(http1, redacted_in_chunked_body_and_trailers)
{
	one_get();
	cr_assert_eq(upstream(
			     "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n"
			     "\r\n5\r\nS3cr3\r\n"),
		     H1_MORE);
	/* the bytes that may begin the value wait */
	expect_down("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n");
	cr_assert_eq(upstream("f\r\ntValueAAAA1234.\r\n0\r\nX-Sig: " VAL_A
			      "\r\n\r\n"),
		     H1_MORE);
	expect_down("14\r\n" PH_A ".\r\n0\r\nX-Sig: " PH_A "\r\n\r\n");
}

Test(http1, event_stream_goes_promptly)
{
	one_get();
	cr_assert_eq(
		upstream("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream"
			 "\r\n\r\ndata: one\n\n"),
		H1_MORE);
	expect_down("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n"
		    "data: one\n\n");
	cr_assert_eq(upstream("data: " VAL_A "\n\ndata: S3c"), H1_MORE);
	expect_down("data: " PH_A "\n\ndata: ");
	cr_assert_eq(upstream("ret\n\n"), H1_MORE);
	expect_down("S3cret\n\n");
	cr_assert_eq(h1_upstream_eof(c, &down), H1_CLOSE);
	expect_down("");
}

Test(http1, longer_placeholder_rechunks)
{
	static char ph_long[] = "PH-a-much-longer-placeholder";

	secrets[0].placeholder = ph_long;
	secrets[0].plen = strlen(ph_long);
	one_get();
	cr_assert_eq(upstream("HTTP/1.1 200 OK\r\nContent-Length: 21\r\n\r\n"
			      "[" VAL_A "]"),
		     H1_MORE);
	expect_down("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
		    "1e\r\n[PH-a-much-longer-placeholder]\r\n0\r\n\r\n");
}

Test(http1, longer_placeholder_http10_closes)
{
	static char ph_long[] = "PH-a-much-longer-placeholder";

	secrets[0].placeholder = ph_long;
	secrets[0].plen = strlen(ph_long);
	cr_assert_eq(guest("GET / HTTP/1.0\r\nHost: api.example\r\n\r\n"),
		     H1_MORE);
	cr_assert_eq(upstream("HTTP/1.1 200 OK\r\nContent-Length: 21\r\n\r\n"
			      "[" VAL_A "]"),
		     H1_CLOSE);
	expect_down("HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n"
		    "[PH-a-much-longer-placeholder]");
}

static size_t gzip_of(const char *s, uint8_t *out, size_t cap)
{
	z_stream z = { 0 };

	cr_assert_eq(deflateInit2(&z, 6, Z_DEFLATED, 16 + MAX_WBITS, 8,
				  Z_DEFAULT_STRATEGY),
		     Z_OK);
	z.next_in = (Bytef *)s;
	z.avail_in = (uInt)strlen(s);
	z.next_out = out;
	z.avail_out = (uInt)cap;
	cr_assert_eq(deflate(&z, Z_FINISH), Z_STREAM_END);
	deflateEnd(&z);
	return cap - z.avail_out;
}

static int encoded_response(const char *coding, const uint8_t *body, size_t n,
			    bool split)
{
	char head[256];
	size_t i;
	int rc = H1_MORE;

	one_get();
	snprintf(head, sizeof(head),
		 "HTTP/1.1 200 OK\r\nContent-Encoding: %s\r\n"
		 "Content-Length: %zu\r\n\r\n",
		 coding, n);
	cr_assert_eq(upstream(head), H1_MORE);
	if (split)
		for (i = 0; i < n && rc == H1_MORE; i++)
			rc = upstream_n(body + i, 1);
	else
		rc = upstream_n(body, n);
	return rc;
}

/* The chunks of down, joined: the decoded body. */
static char *dechunk(const char *s)
{
	char *out = calloc(1, strlen(s) + 1), *end;
	size_t o = 0, n;

	while (*s) {
		n = strtoul(s, &end, 16);
		cr_assert(end[0] == '\r' && end[1] == '\n');
		if (n == 0)
			break;
		memcpy(out + o, end + 2, n);
		o += n;
		s = end + 2 + n + 2;
	}
	return out;
}

static void expect_decoded(const char *body)
{
	static const char head[] =
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
	char *got = take(&down), *dec;

	cr_assert_eq(strncmp(got, head, strlen(head)), 0, "%s", got);
	cr_assert(strstr(got, "\r\n0\r\n\r\n"));
	dec = dechunk(got + strlen(head));
	cr_assert_str_eq(dec, body);
	free(dec);
	free(got);
}

Test(http1, gzip_body_decoded_and_redacted)
{
	uint8_t gz[512];
	size_t n = gzip_of("{\"echo\":\"" VAL_A "\"}", gz, sizeof(gz));

	cr_assert_eq(encoded_response("gzip", gz, n, true), H1_MORE);
	expect_decoded("{\"echo\":\"" PH_A "\"}");
}

Test(http1, deflate_br_zstd_bodies_decoded)
{
	uint8_t enc[512];
	size_t n = sizeof(enc);
	const char *body = "echo " VAL_A " done";
	z_stream z = { 0 };

	/* deflate, zlib format */
	cr_assert_eq(compress(enc, (uLongf *)&n, (const Bytef *)body,
			      strlen(body)),
		     Z_OK);
	cr_assert_eq(encoded_response("deflate", enc, n, false), H1_MORE);
	expect_decoded("echo " PH_A " done");
	teardown();
	setup();
	/* deflate, raw */
	deflateInit2(&z, 6, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
	z.next_in = (Bytef *)body;
	z.avail_in = (uInt)strlen(body);
	z.next_out = enc;
	z.avail_out = sizeof(enc);
	cr_assert_eq(deflate(&z, Z_FINISH), Z_STREAM_END);
	n = sizeof(enc) - z.avail_out;
	deflateEnd(&z);
	cr_assert_eq(encoded_response("deflate", enc, n, true), H1_MORE);
	expect_decoded("echo " PH_A " done");
	teardown();
	setup();
	n = sizeof(enc);
	cr_assert(BrotliEncoderCompress(5, 22, BROTLI_MODE_TEXT, strlen(body),
					(const uint8_t *)body, &n, enc));
	cr_assert_eq(encoded_response("br", enc, n, true), H1_MORE);
	expect_decoded("echo " PH_A " done");
	teardown();
	setup();
	n = ZSTD_compress(enc, sizeof(enc), body, strlen(body), 3);
	cr_assert(!ZSTD_isError(n));
	cr_assert_eq(encoded_response("zstd", enc, n, true), H1_MORE);
	expect_decoded("echo " PH_A " done");
}

Test(http1, broken_gzip_closes)
{
	cr_assert_eq(encoded_response("gzip",
				      (const uint8_t *)"not gzip at all", 15,
				      false),
		     H1_CLOSE);
	/* the head went down: the guest's client sees the body cut */
	expect_down("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n");
}

Test(http1, gzip_bomb_is_cut)
{
	size_t n = 80u << 20, cap = n / 100;
	uint8_t *zeros = calloc(1, n), *gz = malloc(cap);
	z_stream z = { 0 };
	char head[128];
	int rc = H1_MORE;
	size_t off;

	cr_assert(zeros && gz);
	deflateInit2(&z, 9, Z_DEFLATED, 16 + MAX_WBITS, 9, Z_DEFAULT_STRATEGY);
	z.next_in = zeros;
	z.avail_in = (uInt)n;
	z.next_out = gz;
	z.avail_out = (uInt)cap;
	cr_assert_eq(deflate(&z, Z_FINISH), Z_STREAM_END);
	off = cap - z.avail_out;
	deflateEnd(&z);
	free(zeros);
	one_get();
	snprintf(head, sizeof(head),
		 "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\n"
		 "Content-Length: %zu\r\n\r\n",
		 off);
	cr_assert_eq(upstream(head), H1_MORE);
	for (size_t i = 0; i < off && rc == H1_MORE; i += 4096) {
		rc = upstream_n(gz + i, off - i < 4096 ? off - i : 4096);
		cr_assert_leq(down.len, (64u << 20) + (1u << 20));
		down.len = 0;
	}
	cr_assert_eq(rc, H1_CLOSE);
	free(gz);
}

/* A few KiB of zstd decode to 63 MiB: one call (one read of upstream)
 * may queue no more than H1_DOWN_BURST for the guest, else 256 flows
 * hold gigabytes. */
Test(http1, decoded_burst_bounded)
{
	size_t n = 63u << 20, cap = ZSTD_compressBound(n), zn;
	uint8_t *zeros = calloc(1, n), *z = malloc(cap);
	char head[128];

	cr_assert(zeros && z);
	zn = ZSTD_compress(z, cap, zeros, n, 19);
	cr_assert(!ZSTD_isError(zn));
	free(zeros);
	cr_assert_lt(zn, 16384, "%zu", zn);
	one_get();
	snprintf(head, sizeof(head),
		 "HTTP/1.1 200 OK\r\nContent-Encoding: zstd\r\n"
		 "Content-Length: %zu\r\n\r\n",
		 zn);
	cr_assert_eq(upstream(head), H1_MORE);
	down.len = 0;
	cr_assert_eq(upstream_n(z, zn), H1_CLOSE);
	cr_assert_leq(down.len, H1_DOWN_BURST + 65536, "%zu", down.len);
	free(z);
}

/* A response nobody asked for (an upstream that read a request's body as
 * another request: a desync the guest can make) is decoded too: else a
 * gzip body carried the value past the redaction. */
Test(http1, unsolicited_response_decoded)
{
	uint8_t gz[512];
	size_t n = gzip_of("{\"echo\":\"" VAL_A "\"}", gz, sizeof(gz));
	char head[128];
	char *got;

	one_get();
	cr_assert_eq(upstream("HTTP/1.1 204 No Content\r\n\r\n"), H1_MORE);
	down.len = 0;
	snprintf(head, sizeof(head),
		 "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\n"
		 "Content-Length: %zu\r\n\r\n",
		 n);
	cr_assert_eq(upstream(head), H1_MORE);
	upstream_n(gz, n);
	got = take(&down);
	cr_assert(!strstr(got, "Content-Encoding: gzip"), "%s", got);
	cr_assert(strstr(got, PH_A), "%s", got);
	free(got);
}

/* After a rotate the old value is redacted still: a response under way
 * at the rotate, or a later echo, carries it. */
Test(http1, old_value_redacted)
{
	static char old[] = "OldValueOfSecretAAA";

	secrets[0].old = old;
	secrets[0].olen = strlen(old);
	one_get();
	cr_assert_eq(
		upstream("HTTP/1.1 200 OK\r\nX-Echo: OldValueOfSecretAAA\r\n"
			 "Content-Length: 21\r\n\r\n[OldValueOfSecretAAA]"),
		H1_MORE);
	expect_down("HTTP/1.1 200 OK\r\nX-Echo: " PH_A "\r\n"
		    "Content-Length: 21\r\n\r\n[" PH_A "]");
}

/* A coding the engine does not decode (two of them, or one it does not
 * know) would carry the value past the redaction: the response is cut,
 * never passed on encoded. */
Test(http1, undecodable_codings_refused)
{
	static const char *const codings[] = {
		"Content-Encoding: gzip, gzip\r\n",
		"Content-Encoding: gzip\r\nContent-Encoding: gzip\r\n",
		"Content-Encoding: compress\r\n",
		"Content-Encoding: gzip, identity\r\n",
	};
	uint8_t gz[512];
	size_t n = gzip_of("{\"echo\":\"" VAL_A "\"}", gz, sizeof(gz));
	char head[256];
	char *got;

	for (size_t i = 0; i < sizeof(codings) / sizeof(codings[0]); i++) {
		if (i) {
			teardown();
			setup();
		}
		one_get();
		snprintf(head, sizeof(head),
			 "HTTP/1.1 200 OK\r\n%sContent-Length: %zu\r\n\r\n",
			 codings[i], n);
		cr_assert_eq(upstream(head), H1_CLOSE, "%s", codings[i]);
		got = take(&down);
		cr_assert(strstr(got, "502 Bad Gateway"), "%s", got);
		free(got);
	}
	/* identity is no coding */
	teardown();
	setup();
	one_get();
	cr_assert_eq(upstream(
			     "HTTP/1.1 200 OK\r\nContent-Encoding: identity\r\n"
			     "Content-Length: 21\r\n\r\n[" VAL_A "]"),
		     H1_MORE);
	expect_down("HTTP/1.1 200 OK\r\nContent-Encoding: identity\r\n"
		    "Content-Length: 21\r\n\r\n[" PH_A "]");
}

Test(http1, no_decoding_for_uncredentialed_hosts)
{
	uint8_t gz[512];
	size_t n;
	char head[128];
	struct bbuf want = { 0 };

	cfg.host = "plain.example";
	cr_assert_eq(guest("GET / HTTP/1.1\r\nHost: plain.example\r\n"
			   "Accept-Encoding: gzip\r\n\r\n"),
		     H1_MORE);
	expect_up("GET / HTTP/1.1\r\nHost: plain.example\r\n"
		  "Accept-Encoding: gzip\r\n\r\n");
	n = gzip_of("hello", gz, sizeof(gz));
	snprintf(head, sizeof(head),
		 "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\n"
		 "Content-Length: %zu\r\n\r\n",
		 n);
	cr_assert_eq(upstream(head), H1_MORE);
	cr_assert_eq(upstream_n(gz, n), H1_MORE);
	bbuf_put(&want, head, strlen(head));
	bbuf_put(&want, gz, n);
	cr_assert_eq(down.len, want.len);
	cr_assert_eq(memcmp(down.p, want.p, want.len), 0);
	bbuf_free(&want);
}

Test(http1, close_delimited_response)
{
	one_get();
	cr_assert_eq(upstream("HTTP/1.1 200 OK\r\n\r\nsome " VAL_A), H1_MORE);
	cr_assert_eq(upstream(" more S3c"), H1_MORE);
	expect_down("HTTP/1.1 200 OK\r\n\r\nsome " PH_A " more ");
	cr_assert_eq(h1_upstream_eof(c, &down), H1_CLOSE);
	expect_down("S3c");
}

Test(http1, bad_response_gets_a_502)
{
	one_get();
	cr_assert_eq(upstream("HTTP/1.1 200 OK\r\nContent-Length: 1\r\n"
			      "Content-Length: 2\r\n\r\n"),
		     H1_CLOSE);
	expect_down("HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/plain\r\n"
		    "Content-Length: 55\r\nConnection: close\r\n\r\n"
		    "moat: bad response from upstream: a bad Content-Length\n");
}

Test(http1, body_block_waits_for_earlier_responses)
{
	cr_assert_eq(guest("GET /1 HTTP/1.1\r\nHost: api.example\r\n\r\n"
			   "POST /2 HTTP/1.1\r\nHost: api.example\r\n"
			   "Content-Length: 19\r\n\r\nPHaaaaaaa"),
		     H1_MORE);
	up.len = 0;
	cr_assert_eq(guest("aaaaaaaaaa"), H1_MORE);
	expect_up("");
	expect_down("");
	cr_assert_eq(upstream("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"),
		     H1_CLOSE);
	expect_after("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
		     forbidden("secret API_KEY may not be sent in body"));
}

Test(http1, redact_alone_across_calls)
{
	struct redact *r = redact_new(&st);
	char *got;

	cr_assert(r);
	cr_assert_eq(redact_feed(r, (const uint8_t *)"x S3cr3tV", 9, false,
				 &down),
		     0);
	cr_assert_eq(redact_feed(r, (const uint8_t *)"alueAAAA1234 OtherSec",
				 21, false, &down),
		     0);
	cr_assert_eq(redact_feed(r, (const uint8_t *)"", 0, true, &down), 0);
	got = take(&down);
	cr_assert_str_eq(got, "x " PH_A " OtherSec");
	free(got);
	redact_free(r);
}

Test(http1, guest_eof_mid_body_closes)
{
	cr_assert_eq(guest("POST / HTTP/1.1\r\nHost: api.example\r\n"
			   "Content-Length: 10\r\n\r\nabc"),
		     H1_MORE);
	cr_assert_eq(h1_guest_eof(c, &up, &down), H1_CLOSE);
}

Test(http1, placeholder_in_a_trailer_blocked)
{
	creds[0].where |= CRED_IN_BODY;
	cr_assert_eq(guest("POST / HTTP/1.1\r\nHost: api.example\r\n"
			   "Transfer-Encoding: chunked\r\n\r\n"
			   "2\r\nhi\r\n0\r\nX-Key: " PH_A "\r\n\r\n"),
		     H1_CLOSE);
	expect_down(forbidden("secret API_KEY may not be sent in trailer"));
}

Test(http1, te_other_than_trailers_dropped)
{
	cr_assert_eq(guest("GET / HTTP/1.1\r\nHost: api.example\r\n"
			   "TE: gzip\r\nTE: trailers\r\n\r\n"),
		     H1_MORE);
	expect_up("GET / HTTP/1.1\r\nHost: api.example\r\nTE: trailers\r\n"
		  "Accept-Encoding: identity\r\n\r\n");
}

Test(http1, proxy_authorization_basic_swapped)
{
	char in[256], out[256], enc[128];

	EVP_EncodeBlock((unsigned char *)enc, (const unsigned char *)PH_A ":x",
			strlen(PH_A) + 2);
	snprintf(in, sizeof(in),
		 "GET / HTTP/1.1\r\nHost: api.example\r\n"
		 "Proxy-Authorization: basic %s\r\n\r\n",
		 enc);
	EVP_EncodeBlock((unsigned char *)enc, (const unsigned char *)VAL_A ":x",
			strlen(VAL_A) + 2);
	snprintf(out, sizeof(out),
		 "GET / HTTP/1.1\r\nHost: api.example\r\n"
		 "Proxy-Authorization: basic %s\r\n"
		 "Accept-Encoding: identity\r\n\r\n",
		 enc);
	cr_assert_eq(guest(in), H1_MORE);
	expect_up(out);
}

Test(http1, upgrade_refused_goes_on_as_http)
{
	cr_assert_eq(guest("GET /ws HTTP/1.1\r\nHost: api.example\r\n"
			   "Upgrade: websocket\r\n\r\n"),
		     H1_MORE);
	up.len = 0;
	cr_assert_eq(upstream("HTTP/1.1 426 Upgrade Required\r\n"
			      "Content-Length: 0\r\n\r\n"),
		     H1_MORE);
	expect_down(
		"HTTP/1.1 426 Upgrade Required\r\nContent-Length: 0\r\n\r\n");
	cr_assert_eq(guest("GET / HTTP/1.1\r\nHost: api.example\r\n\r\n"),
		     H1_MORE);
	expect_up("GET / HTTP/1.1\r\nHost: api.example\r\n"
		  "Accept-Encoding: identity\r\n\r\n");
}

Test(http1, response_redacted_for_every_host)
{
	/* an inspected host with no credential: no decoding, still redacted */
	cfg.host = "plain.example";
	cr_assert_eq(guest("GET / HTTP/1.1\r\nHost: plain.example\r\n\r\n"),
		     H1_MORE);
	cr_assert_eq(
		upstream("HTTP/1.1 200 OK\r\nContent-Length: 19\r\n\r\n" VAL_B),
		H1_MORE);
	expect_down("HTTP/1.1 200 OK\r\nContent-Length: 19\r\n\r\n" PH_B);
}
