/* tests/fuzz/fuzz_linkctl.c: libFuzzer target for netstack/linkctl.c.
 *
 *   make build/fuzz/fuzz_linkctl && build/fuzz/fuzz_linkctl tests/fuzz/corpus/linkctl
 *
 * Each input is read as a link control message (the sentry reads the
 * helper's, which it does not trust) and as an outbound frame (the
 * helper's check of a flow's first frame). A message that parses has
 * records of the size its header says, every one valid; its rules, as a
 * policy, decide any destination without crashing, and never let one
 * through that no allow rule covers. A frame that begins a flow has a
 * destination of its family; the RST for a SYN is a well-formed reply
 * (checksums that verify) and never larger than the buffer. Violations
 * abort().
 */
#include <netinet/in.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "netstack/linkctl.h"
#include "netstack/netstack.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_message(const uint8_t *data, size_t size)
{
	static struct lc_rule rules[LC_CHUNK];
	struct egress_policy p = { 0 };
	const void *rec;
	struct lc_hdr h;
	struct lc_dest d = { .proto = IPPROTO_TCP, .family = AF_INET };
	size_t i;
	bool any_allow = false;

	if (lc_parse(data, size, &h, &rec) < 0)
		return;
	if (h.n > LC_CHUNK || (const uint8_t *)rec != data + sizeof(h))
		abort();
	if (h.type != LC_RULES)
		return;
	memcpy(rules, rec, h.n * sizeof(*rules));
	for (i = 0; i < h.n; i++) {
		if ((rules[i].family != AF_INET &&
		     rules[i].family != AF_INET6) ||
		    rules[i].port_lo > rules[i].port_hi)
			abort();
		any_allow |= !rules[i].deny;
	}
	if (lc_rules_to_policy(rules, h.n, &p) < 0)
		return;
	for (i = 0; i < 4; i++) {
		d.family = i & 1 ? AF_INET6 : AF_INET;
		d.proto = i & 2 ? IPPROTO_UDP : IPPROTO_TCP;
		d.dport = (uint16_t)(i * 1000);
		memcpy(d.addr, data + sizeof(h),
		       size - sizeof(h) < 16 ? size - sizeof(h) : 16);
		if (lc_rules_allow(&p, &d) && !any_allow)
			abort(); /* let through with no rule to allow it */
	}
	egress_free(&p);
}

static void check_frame(const uint8_t *data, size_t size)
{
	static uint8_t rst[128];
	struct lc_dest d;
	size_t n;
	uint32_t sum = 0;

	if (lc_frame_dest(data, size, &d) == 1 && d.family != AF_INET &&
	    d.family != AF_INET6)
		abort();
	n = lc_build_rst(data, size, rst, sizeof(rst));
	if (!n)
		return;
	if (n != 54 && n != 74)
		abort();
	if (n == 54) {
		if (ns_csum_fold(rst + 14, 20, 0) != 0)
			abort();
		for (size_t i = 0; i < 8; i += 2)
			sum += (uint32_t)(rst[26 + i] << 8 | rst[27 + i]);
		sum += IPPROTO_TCP + 20;
		if (ns_csum_fold(rst + 34, 20, sum) != 0)
			abort();
	}
	if (!(rst[n - 7] & 0x04))
		abort(); /* a RST */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	check_message(data, size);
	check_frame(data, size);
	return 0;
}
