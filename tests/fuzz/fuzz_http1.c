/* tests/fuzz/fuzz_http1.c: libFuzzer target for broker/http1.c (the
 * broker's HTTP/1.x engine).
 *
 *   make build/fuzz/fuzz_http1 && build/fuzz/fuzz_http1 tests/fuzz/corpus/http1
 *
 * The first byte picks the connection and the credential's options (TLS
 * or plain, plain_http, body, query, require, inject, a placeholder
 * longer than the value, the host); the second how the bytes are split.
 * The rest is what the guest sends and, after a "~~~~" line (or, without
 * one, the same bytes), what upstream answers; both are fed interleaved
 * in pieces, then both ends close. Violations abort():
 *  - a secret's value in what the guest gets (before a tunnel);
 *  - a value upstream that was not allowed there (unless the guest's own
 *    bytes spell it);
 *  - an unknown status, or output out of proportion to the input.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "broker/http1.h"
#include "broker/store.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define VAL_A "S3cr3tValueAAAA1234"
#define VAL_B "OtherSecretValue999"

static char *hosts_a[] = { "api.example" };
static char *hosts_b[] = { "*.other.example" };
static char *headers[] = { "authorization", "x-api-key" };
static char *query[] = { "key" };
static const char *names[] = { "api.example", "www.other.example" };

/* Does s hold v as a subsequence (so that the guest's bytes might spell
 * v however the engine cut them)? */
static bool spells(const uint8_t *s, size_t n, const char *v)
{
	size_t i, k = 0, vl = strlen(v);

	for (i = 0; i < n && k < vl; i++)
		if (s[i] == (uint8_t)v[k])
			k++;
	return k == vl;
}

/* the guest's bytes: a record may quote what the guest sent */
static const uint8_t *guest_in;
static size_t guest_len;

static void no_audit(void *ctx, const char *m)
{
	(void)ctx;
	if ((strstr(m, VAL_A) && !spells(guest_in, guest_len, VAL_A)) ||
	    (strstr(m, VAL_B) && !spells(guest_in, guest_len, VAL_B)))
		abort();
}

static bool holds(const struct bbuf *b, const char *v)
{
	return b->len && memmem(b->p, b->len, v, strlen(v));
}

static void check_status(int rc)
{
	if (rc != H1_MORE && rc != H1_CLOSE && rc != H1_TUNNEL && rc != -ENOMEM)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char ph_a[] = "PHaaaaaaaaaaaaaaaaa",
		    ph_b[] = "PHbbbbbbbbbbbbbbbbb";
	static char ph_long[] = "PH-a-much-longer-placeholder";
	static char val_a[] = VAL_A, val_b[] = VAL_B;
	struct cred_inject inj = { .method = NULL,
				   .path = "/",
				   .header = "Authorization",
				   .value = "Bearer {value}" };
	struct credential creds[2];
	struct secret secrets[2];
	struct store st;
	struct h1_who who = { 1, 2, "/bin/x", "10.0.0.1:443" };
	struct h1_config cfg;
	struct h1_conn *c;
	struct bbuf up = { 0 }, down = { 0 };
	const uint8_t *g, *u, *sep;
	size_t gl, ul, gi = 0, ui = 0, step, k;
	uint8_t flags, split;
	bool tunnel = false, closed = false, allowed_a;
	int rc;

	if (size < 2)
		return 0;
	flags = data[0];
	split = data[1];
	data += 2;
	size -= 2;
	sep = memmem(data, size, "\n~~~~\n", 6);
	g = data;
	gl = sep ? (size_t)(sep - data) : size;
	u = sep ? sep + 6 : data;
	ul = sep ? size - gl - 6 : size;
	guest_in = g;
	guest_len = gl;

	memset(creds, 0, sizeof(creds));
	creds[0] = (struct credential){
		.name = "API_KEY",
		.hosts = hosts_a,
		.nhosts = 1,
		.where = CRED_IN_HEADER | CRED_IN_BASIC |
			 (flags & 4 ? CRED_IN_BODY : 0) |
			 (flags & 8 ? CRED_IN_QUERY : 0),
		.headers = headers,
		.nheaders = 2,
		.query = query,
		.nquery = 1,
		.plain_http = flags & 2,
		.require = flags & 16,
		.inject = flags & 32 ? &inj : NULL,
	};
	creds[1] = (struct credential){ .name = "OTHER_KEY",
					.hosts = hosts_b,
					.nhosts = 1,
					.where = CRED_IN_HEADER,
					.headers = headers,
					.nheaders = 2 };
	secrets[0] =
		(struct secret){ .cred = &creds[0],
				 .placeholder = flags & 64 ? ph_long : ph_a,
				 .plen = strlen(flags & 64 ? ph_long : ph_a),
				 .value = val_a,
				 .vlen = strlen(val_a) };
	secrets[1] = (struct secret){ .cred = &creds[1],
				      .placeholder = ph_b,
				      .plen = strlen(ph_b),
				      .value = val_b,
				      .vlen = strlen(val_b) };
	memset(&st, 0, sizeof(st));
	pthread_rwlock_init(&st.lock, NULL);
	st.v = secrets;
	st.n = 2;
	cfg = (struct h1_config){ .store = &st,
				  .tls = flags & 1,
				  .host = flags & 128 ? "www.other.example" :
							"api.example",
				  .names = names,
				  .nnames = flags & 128 ? 2 : 1,
				  .who = &who,
				  .audit = no_audit };
	if (!cfg.tls) {
		cfg.host = NULL;
		who.dest = "10.0.0.1:80";
	}
	/* may A's value go up on this connection at all? */
	allowed_a = (cfg.tls || creds[0].plain_http) && !(flags & 128);
	if (!cfg.tls && (flags & 128))
		allowed_a = creds[0].plain_http; /* names[] has api.example */

	c = h1_new(&cfg);
	if (!c)
		goto out;
	step = 1 + split % 97;
	while (!closed && (gi < gl || ui < ul)) {
		if (gi < gl) {
			k = gl - gi < step ? gl - gi : step;
			rc = h1_from_guest(c, g + gi, k, &up, &down);
			check_status(rc);
			gi += k;
			closed |= rc == H1_CLOSE || rc < 0;
			tunnel |= rc == H1_TUNNEL;
		}
		if (!closed && ui < ul) {
			k = ul - ui < step + 3 ? ul - ui : step + 3;
			rc = h1_from_upstream(c, u + ui, k, &down);
			check_status(rc);
			ui += k;
			closed |= rc == H1_CLOSE || rc < 0;
			tunnel |= rc == H1_TUNNEL;
		}
		if (!tunnel && (holds(&down, VAL_A) || holds(&down, VAL_B)))
			abort();
		step = 1 + (step * 7 + split) % 97;
	}
	if (!closed) {
		check_status(h1_guest_eof(c, &up, &down));
		check_status(h1_upstream_eof(c, &down));
	}
	if (!tunnel && (holds(&down, VAL_A) || holds(&down, VAL_B)))
		abort();
	if (holds(&up, VAL_A) && !allowed_a && !spells(g, gl, VAL_A))
		abort();
	/* B's host is never this connection's in TLS mode with api.example */
	if (holds(&up, VAL_B) && cfg.tls && !(flags & 128) &&
	    !spells(g, gl, VAL_B))
		abort();
	/* bounded: swaps and framing add a little per byte, decoding may
	 * add up to its cap */
	if (up.len > 64 * gl + 4096 || down.len > (65u << 20) + 64 * ul)
		abort();
	h1_free(c);
out:
	bbuf_free(&up);
	bbuf_free(&down);
	pthread_rwlock_destroy(&st.lock);
	return 0;
}
