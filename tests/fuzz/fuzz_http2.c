/* tests/fuzz/fuzz_http2.c: libFuzzer target for broker/http2.c (the
 * broker's HTTP/2 engine).
 *
 *   make build/fuzz/fuzz_http2 && build/fuzz/fuzz_http2 tests/fuzz/corpus/http2
 *
 * The first byte picks the credential's options (body, query, a
 * placeholder longer than the value) and how the bytes are split. The
 * rest is what the guest sends after its connection preface and, after a
 * "~~~~" line (or, without one, the same bytes), what upstream sends
 * after a SETTINGS frame of its own; both are fed interleaved in pieces,
 * then both ends close. The engine's output is HPACK-coded, so the check
 * is the sanitizers' and the status: only H1_MORE, H1_CLOSE or -ENOMEM,
 * and no output out of proportion to the input.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "broker/http2.h"
#include "broker/store.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char *hosts_a[] = { "api.example" };
static char *headers[] = { "authorization", "x-api-key" };
static char *query[] = { "key" };

static void no_audit(void *ctx, const char *m)
{
	(void)ctx, (void)m;
}

static void check_status(int rc)
{
	if (rc != H1_MORE && rc != H1_CLOSE && rc != -ENOMEM)
		abort();
}

/* The client preface and an empty SETTINGS frame; a server's SETTINGS. */
static const uint8_t guest_preface[] =
	"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\0\0\0\4\0\0\0\0\0";
static const uint8_t up_preface[] = "\0\0\0\4\0\0\0\0\0";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char ph_a[] = "PHaaaaaaaaaaaaaaaaa";
	static char ph_long[] = "PH-a-much-longer-placeholder";
	static char val_a[] = "S3cr3tValueAAAA1234";
	struct credential cred = { 0 };
	struct secret sec;
	struct store st = { 0 };
	struct h1_who who = {
		.flow = 1, .pid = 2, .exe = "/bin/x", .dest = "10.0.0.1:443"
	};
	struct h1_config cfg;
	struct bbuf up = { 0 }, down = { 0 };
	struct h2_conn *c;
	const uint8_t *g, *u, *sep;
	size_t gl, ul, gi = 0, ui = 0, step;
	uint8_t opt;
	int rc;

	if (size < 1)
		return 0;
	opt = data[0];
	data++;
	size--;
	cred = (struct credential){ .name = "API_KEY",
				    .hosts = hosts_a,
				    .nhosts = 1,
				    .where = CRED_IN_HEADER | CRED_IN_BASIC,
				    .headers = headers,
				    .nheaders = 2,
				    .query = query,
				    .nquery = 1 };
	if (opt & 1)
		cred.where |= CRED_IN_BODY;
	if (opt & 2)
		cred.where |= CRED_IN_QUERY;
	sec = (struct secret){ .cred = &cred,
			       .placeholder = opt & 4 ? ph_long : ph_a,
			       .plen = strlen(opt & 4 ? ph_long : ph_a),
			       .value = val_a,
			       .vlen = strlen(val_a) };
	pthread_rwlock_init(&st.lock, NULL);
	st.v = &sec;
	st.n = 1;
	cfg = (struct h1_config){ .store = &st,
				  .tls = true,
				  .host = "api.example",
				  .who = &who,
				  .audit = no_audit };
	sep = memmem(data, size, "~~~~\n", 5);
	g = data;
	gl = sep ? (size_t)(sep - data) : size;
	u = sep ? sep + 5 : data;
	ul = sep ? size - gl - 5 : size;
	step = 1 + (opt >> 3) * 7;

	c = h2_new(&cfg);
	if (!c)
		goto out;
	check_status(h2_from_guest(c, guest_preface, sizeof(guest_preface) - 1,
				   &up, &down));
	check_status(h2_from_upstream(c, up_preface, sizeof(up_preface) - 1,
				      &up, &down));
	rc = H1_MORE;
	while (rc == H1_MORE && (gi < gl || ui < ul)) {
		if (gi < gl) {
			size_t n = gl - gi < step ? gl - gi : step;

			rc = h2_from_guest(c, g + gi, n, &up, &down);
			check_status(rc);
			gi += n;
		}
		if (rc == H1_MORE && ui < ul) {
			size_t n = ul - ui < step ? ul - ui : step;

			rc = h2_from_upstream(c, u + ui, n, &up, &down);
			check_status(rc);
			ui += n;
		}
		/* out of proportion: a frame of input makes a bounded
		 * number of frames of output */
		if (up.len + down.len > 64 * (size + 64) + 4 * 65536)
			abort();
		up.len = down.len = 0;
	}
	if (rc == H1_MORE) {
		check_status(h2_upstream_eof(c, &up, &down));
		check_status(h2_guest_eof(c, &up, &down));
	}
	h2_free(c);
out:
	bbuf_free(&up);
	bbuf_free(&down);
	pthread_rwlock_destroy(&st.lock);
	return 0;
}
