/* tests/fuzz/fuzz_sniff.c: libFuzzer target for netstack/sniff.c.
 *
 *   make build/fuzz/fuzz_sniff && build/fuzz/fuzz_sniff tests/fuzz/corpus/sniff
 *
 * Each input is a guest's first bytes, given in an allocation of exactly
 * their size (ASan sees any read past them). The result must be one of
 * the kinds, with a name and ALPN only for TLS, the name as
 * egress_name_normalize leaves it; and a verdict, once given for a
 * prefix, must hold for every longer prefix (the sentry asks again as
 * bytes arrive, and acts on the first answer that is not SNIFF_MORE).
 * Violations abort().
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "netstack/sniff.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(const uint8_t *data, size_t n, struct sniff_result *r)
{
	char norm[EGRESS_NAME_MAX + 1];
	uint8_t *copy = malloc(n ? n : 1);

	if (!copy)
		abort();
	memcpy(copy, data, n);
	sniff(copy, n, r);
	free(copy);
	switch (r->kind) {
	case SNIFF_TLS:
		if (r->alpn_h2 != 0 && r->alpn_h2 != 1)
			abort();
		if (memchr(r->sni, '\0', sizeof(r->sni)) == NULL)
			abort();
		if (r->sni[0] && (egress_name_normalize(r->sni, norm) < 0 ||
				  strcmp(norm, r->sni)))
			abort();
		break;
	case SNIFF_MORE:
		if (n >= SNIFF_MAX)
			abort();
		/* fall through */
	case SNIFF_HTTP:
	case SNIFF_OTHER:
		if (r->sni[0] || r->alpn_h2)
			abort();
		break;
	default:
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sniff_result first = { .kind = SNIFF_MORE }, r;
	size_t step = size <= 128 ? 1 : size / 32;

	/* every prefix of short inputs, a sample of long ones, then all */
	for (size_t k = 0; k <= size; k += step) {
		check(data, k, &r);
		if (first.kind == SNIFF_MORE)
			first = r;
		else if (r.kind != first.kind || strcmp(r.sni, first.sni) ||
			 r.alpn_h2 != first.alpn_h2)
			abort();
	}
	check(data, size, &r);
	if (first.kind != SNIFF_MORE &&
	    (r.kind != first.kind || strcmp(r.sni, first.sni)))
		abort();
	return 0;
}
