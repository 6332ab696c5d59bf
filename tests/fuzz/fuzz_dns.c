/* tests/fuzz/fuzz_dns.c: libFuzzer target for netstack/dns.c.
 *
 *   make build/fuzz/fuzz_dns && build/fuzz/fuzz_dns tests/fuzz/corpus/dns
 *
 * Each input is read as a guest's query and as an upstream reply. A query
 * that parses is answered (with the records the reply gave, if any) into
 * a small and a large buffer; the answer must parse back as the reply to
 * that question, with no more records than were put in. Every name that
 * comes out must be printable text that encodes back to wire form, and a
 * reply's count of address records must cover the ones it kept (the
 * resolver relays a message whose count exceeds them only rebuilt).
 * Violations abort().
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "netstack/dns.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_name(const char *s)
{
	uint8_t wire[300];
	size_t i, n = strlen(s);

	if (n > DNS_TEXT_MAX)
		abort();
	for (i = 0; i < n; i++)
		if ((unsigned char)s[i] <= 0x20 || (unsigned char)s[i] >= 0x7f)
			abort();
	if (n && dns_name_encode(s, wire, sizeof(wire)) < 0)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t out[4096];
	struct dns_query q;
	struct dns_answer up, back;
	size_t i, caps[2] = { 64, sizeof(out) };
	long n;
	int rc;
	uint16_t id = size >= 2 ? (uint16_t)(data[0] << 8 | data[1]) : 0;

	up.n = 0;
	rc = dns_parse_query(data, size, &q);
	if (rc == 0)
		check_name(q.name);

	/* the same bytes as an upstream reply to the question they hold */
	if (rc == 0 || rc == -EPROTO) {
		size_t off = DNS_HDR_LEN;
		char name[DNS_TEXT_MAX + 1];

		if (size >= DNS_HDR_LEN + 5 &&
		    dns_name_decode(data, size, &off, name) == 0 &&
		    off + 4 <= size &&
		    dns_parse_reply(data, size, id, name,
				    (uint16_t)(data[off] << 8 | data[off + 1]),
				    &up) == 0) {
			size_t addrs = 0;

			if (up.n > DNS_ANSWERS_MAX)
				abort();
			for (i = 0; i < up.n; i++)
				addrs += up.rr[i].type != DNS_CNAME;
			if (addrs > up.addrs)
				abort();
			for (i = 0; i < up.n; i++) {
				check_name(up.rr[i].name);
				if (up.rr[i].type == DNS_CNAME)
					check_name(up.rr[i].target);
				if (up.rr[i].ttl & 0x80000000u)
					abort();
			}
		}
	}
	if (rc != 0)
		return 0;
	for (i = 0; i < 2; i++) {
		n = dns_build_reply(&q, DNS_NOERROR, up.rr, up.n, out, caps[i]);
		if (n == -ENOSPC || n == -EINVAL)
			continue;
		if (n < DNS_HDR_LEN || (size_t)n > caps[i])
			abort();
		if (dns_parse_reply(out, (size_t)n, q.id, q.name, q.qtype,
				    &back) == 0 &&
		    back.n > up.n)
			abort();
	}
	return 0;
}
