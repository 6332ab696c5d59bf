/* tests/unit/netstack/test_flow.c: the flow table and the check every
 * outbound frame passes. */
#include <criterion/criterion.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>

#include "netstack/flow.h"

static void fini(void)
{
	flow_clear();
}

TestSuite(flow, .fini = fini);

/* An Ethernet + IPv4 frame of proto from sport to dst:dport. */
static size_t frame4(uint8_t *f, uint8_t proto, uint16_t sport, const char *dst,
		     uint16_t dport)
{
	memset(f, 0, 64);
	f[12] = 0x08;
	f[13] = 0x00;
	f[14] = 0x45; /* v4, 20-byte header */
	f[14 + 9] = proto;
	inet_pton(AF_INET, "10.0.2.15", f + 14 + 12);
	inet_pton(AF_INET, dst, f + 14 + 16);
	f[34] = (uint8_t)(sport >> 8);
	f[35] = (uint8_t)sport;
	f[36] = (uint8_t)(dport >> 8);
	f[37] = (uint8_t)dport;
	return 64;
}

static struct flow_key key4(uint8_t proto, uint16_t lport, const char *dst,
			    uint16_t rport)
{
	struct flow_key k = { .proto = proto,
			      .family = AF_INET,
			      .lport = lport,
			      .rport = rport };

	inet_pton(AF_INET, dst, k.raddr);
	return k;
}

Test(flow, only_registered_flows_pass)
{
	uint8_t f[64];
	struct flow_key k = key4(IPPROTO_TCP, 40000, "192.0.2.7", 443);

	cr_assert_not(flow_frame_allowed(f, frame4(f, IPPROTO_TCP, 40000,
						   "192.0.2.7", 443)));
	cr_assert_eq(flow_add(&k), 0);
	cr_assert(flow_frame_allowed(f, frame4(f, IPPROTO_TCP, 40000,
					       "192.0.2.7", 443)));
	cr_assert_not(flow_frame_allowed(f, frame4(f, IPPROTO_TCP, 40000,
						   "192.0.2.7", 80)),
		      "another port");
	cr_assert_not(flow_frame_allowed(f, frame4(f, IPPROTO_TCP, 40001,
						   "192.0.2.7", 443)),
		      "another local port");
	cr_assert_not(flow_frame_allowed(f, frame4(f, IPPROTO_UDP, 40000,
						   "192.0.2.7", 443)),
		      "another protocol");
	cr_assert_not(flow_frame_allowed(f, frame4(f, IPPROTO_TCP, 40000,
						   "192.0.2.8", 443)),
		      "another address");
	flow_del(&k);
	cr_assert_not(flow_frame_allowed(f, frame4(f, IPPROTO_TCP, 40000,
						   "192.0.2.7", 443)));
}

Test(flow, counted_uses)
{
	struct flow_key k = key4(IPPROTO_UDP, 5353, "198.51.100.1", 53);

	cr_assert_eq(flow_add(&k), 0);
	cr_assert_eq(flow_add(&k), 0);
	cr_assert_eq(flow_count(), 1);
	flow_del(&k);
	cr_assert(flow_allowed(&k), "one use is left");
	flow_del(&k);
	cr_assert_not(flow_allowed(&k));
	cr_assert_eq(flow_count(), 0);
}

Test(flow, a_closed_tcp_flow_lingers_then_goes)
{
	struct flow_key k = key4(IPPROTO_TCP, 40000, "192.0.2.7", 443);

	cr_assert_eq(flow_add(&k), 0);
	flow_release(&k, 1000000000LL);
	cr_assert(flow_allowed(&k), "its FIN may still leave");
	flow_release(&k, 0); /* no effect: it has no use left */
	cr_assert(flow_allowed(&k));
	cr_assert_eq(flow_add(&k), 0); /* in use again */
	flow_release(&k, 1);	       /* 1 ns */
	flow_sweep();
	cr_assert_not(flow_allowed(&k));
	cr_assert_eq(flow_count(), 0);
}

Test(flow, frames_that_never_pass)
{
	uint8_t f[80];
	struct flow_key k = key4(IPPROTO_TCP, 40000, "192.0.2.7", 443);

	cr_assert_eq(flow_add(&k), 0);
	/* truncated: no Ethernet header, no IP header, no ports */
	frame4(f, IPPROTO_TCP, 40000, "192.0.2.7", 443);
	cr_assert_not(flow_frame_allowed(f, 10));
	cr_assert_not(flow_frame_allowed(f, 14 + 19));
	cr_assert_not(flow_frame_allowed(f, 14 + 20 + 3));
	cr_assert(flow_frame_allowed(f, 14 + 20 + 4));
	/* a header length past the frame */
	f[14] = 0x4f;
	cr_assert_not(flow_frame_allowed(f, 40));
	/* a later fragment: no ports in it */
	frame4(f, IPPROTO_TCP, 40000, "192.0.2.7", 443);
	f[14 + 7] = 0x10;
	cr_assert_not(flow_frame_allowed(f, 64));
	/* not IPv4 in an IPv4 frame */
	frame4(f, IPPROTO_TCP, 40000, "192.0.2.7", 443);
	f[14] = 0x65;
	cr_assert_not(flow_frame_allowed(f, 64));
	/* ICMP other than an echo request */
	frame4(f, IPPROTO_ICMP, 0, "192.0.2.7", 0);
	f[34] = 3;
	cr_assert_not(flow_frame_allowed(f, 64));
	/* an unknown ethertype, and IPv6's ICMP */
	frame4(f, IPPROTO_TCP, 40000, "192.0.2.7", 443);
	f[12] = 0x88;
	f[13] = 0xcc;
	cr_assert_not(flow_frame_allowed(f, 64));
	memset(f, 0, sizeof(f));
	f[12] = 0x86;
	f[13] = 0xdd;
	f[14] = 0x60;
	f[14 + 6] = 58;
	cr_assert_not(flow_frame_allowed(f, 80));
}

Test(flow, arp_passes)
{
	uint8_t f[42] = { [12] = 0x08, [13] = 0x06 };

	cr_assert(flow_frame_allowed(f, sizeof(f)));
}

Test(flow, icmp_echo_by_its_id)
{
	uint8_t f[64];
	struct flow_key k = { .proto = IPPROTO_ICMP,
			      .family = AF_INET,
			      .rport = 0x1234 };

	inet_pton(AF_INET, "192.0.2.9", k.raddr);
	frame4(f, IPPROTO_ICMP, 0, "192.0.2.9", 0);
	f[34] = 8; /* echo request */
	f[38] = 0x12;
	f[39] = 0x34;
	cr_assert_not(flow_frame_allowed(f, 64));
	cr_assert_eq(flow_add(&k), 0);
	cr_assert(flow_frame_allowed(f, 64));
}

Test(flow, v6_flows)
{
	uint8_t f[80] = { [12] = 0x86, [13] = 0xdd, [14] = 0x60 };
	struct flow_key k = { .proto = IPPROTO_UDP,
			      .family = AF_INET6,
			      .lport = 1000,
			      .rport = 53 };

	inet_pton(AF_INET6, "2001:db8::1", k.raddr);
	f[14 + 6] = IPPROTO_UDP;
	inet_pton(AF_INET6, "2001:db8::1", f + 14 + 24);
	f[54] = 1000 >> 8;
	f[55] = 1000 & 0xff;
	f[57] = 53;
	cr_assert_not(flow_frame_allowed(f, 80));
	cr_assert_eq(flow_add(&k), 0);
	cr_assert(flow_frame_allowed(f, 80));
}
