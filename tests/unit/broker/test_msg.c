/* tests/unit/broker/test_msg.c: the broker's checks of the sentry's
 * BRK_SECRET messages (broker/msg.c): a name alone for rotate and revoke,
 * a name and the credential's JSON for set, and nothing else. */
#include <criterion/criterion.h>

#include <errno.h>
#include <string.h>

#include "broker/msg.h"

/* The payload of op with the bytes of tail (n of them) after it. */
static size_t payload(uint8_t *buf, uint32_t op, const void *tail, size_t n)
{
	struct brk_secret m = { .op = op };

	memcpy(buf, &m, sizeof(m));
	memcpy(buf + sizeof(m), tail, n);
	return sizeof(m) + n;
}

Test(brkmsg, secret_forms)
{
	uint8_t buf[256];
	struct brk_secret op;
	const char *name, *json;
	size_t n;

	n = payload(buf, BRK_SECRET_ROTATE, "API_KEY", 8);
	cr_assert_eq(brk_secret_decode(buf, n, &op, &name, &json), 0);
	cr_assert_str_eq(name, "API_KEY");
	cr_assert_null(json);
	n = payload(buf, BRK_SECRET_SET, "K\0{\"credentials\":[]}", 21);
	cr_assert_eq(brk_secret_decode(buf, n, &op, &name, &json), 0);
	cr_assert_str_eq(name, "K");
	cr_assert_str_eq(json, "{\"credentials\":[]}");
}

Test(brkmsg, secret_refusals)
{
	static const struct {
		uint32_t op;
		const char *tail;
		size_t n;
	} bad[] = {
		{ BRK_SECRET_REVOKE, "", 1 },	   /* no name */
		{ BRK_SECRET_REVOKE, "K", 1 },	   /* not terminated */
		{ BRK_SECRET_REVOKE, "K\0J", 4 },  /* JSON after a revoke */
		{ BRK_SECRET_ROTATE, "K\0\0", 3 }, /* a NUL more */
		{ BRK_SECRET_SET, "K", 2 },	   /* a set without JSON */
		{ BRK_SECRET_SET, "K\0", 3 },	   /* empty JSON */
		{ BRK_SECRET_SET, "K\0{}", 4 },	   /* JSON not terminated */
		{ BRK_SECRET_SET, "K\0{\0}", 6 },  /* a NUL inside it */
		{ BRK_SECRET_SET, "\0{}", 4 },	   /* no name */
		{ 0, "K", 2 },			   /* an unknown op */
		{ BRK_SECRET_REVOKE + 1, "K", 2 },
	};
	uint8_t buf[64];
	struct brk_secret op;
	const char *name, *json;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		size_t n = payload(buf, bad[i].op, bad[i].tail, bad[i].n);

		cr_assert_eq(brk_secret_decode(buf, n, &op, &name, &json),
			     -EPROTO, "case %zu", i);
	}
	/* shorter than the op itself */
	cr_assert_eq(brk_secret_decode(buf, 3, &op, &name, &json), -EPROTO);
}
