/* tests/unit/netstack/test_linkctl.c: the link's own check of the host's
 * addresses (netstack/linkctl.h), the kernel's word on them
 * (netstack/hostaddr.h), and the sentry's set of them (netpol). */
#include <criterion/criterion.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "lib/util.h"
#include "netstack/hostaddr.h"
#include "netstack/linkctl.h"
#include "netstack/netpol.h"
#include "netstack/netstack.h"
#include "policy/policy.h"

/* An Ethernet + IPv4 TCP frame from 10.0.2.15:sport to dst:dport with
 * TCP flags (0x02 SYN, 0x12 SYN-ACK, 0x10 ACK). */
static size_t tcp4(uint8_t *f, const char *dst, uint16_t sport, uint16_t dport,
		   uint8_t flags)
{
	memset(f, 0, 54);
	memcpy(f, "\x52\x55\x0a\x00\x02\x02", 6);     /* slirp's */
	memcpy(f + 6, "\x52\x54\x00\x12\x34\x56", 6); /* lwIP's */
	f[12] = 0x08;
	f[14] = 0x45;
	f[14 + 9] = IPPROTO_TCP;
	inet_pton(AF_INET, "10.0.2.15", f + 14 + 12);
	inet_pton(AF_INET, dst, f + 14 + 16);
	f[34] = (uint8_t)(sport >> 8);
	f[35] = (uint8_t)sport;
	f[36] = (uint8_t)(dport >> 8);
	f[37] = (uint8_t)dport;
	memcpy(f + 38, "\x11\x22\x33\x44", 4); /* seq */
	f[46] = 5 << 4;
	f[47] = flags;
	return 54;
}

static size_t udp4(uint8_t *f, const char *dst, uint16_t dport)
{
	size_t n = tcp4(f, dst, 5353, dport, 0);

	f[14 + 9] = IPPROTO_UDP;
	return n;
}

static struct lc_dest dest4(uint8_t proto, const char *addr, uint16_t port)
{
	struct lc_dest d = { .proto = proto, .family = AF_INET, .dport = port };

	inet_pton(AF_INET, addr, d.addr);
	return d;
}

Test(linkctl, the_first_frame_of_each_flow_is_checked)
{
	uint8_t f[64];
	struct lc_dest d;

	cr_assert_eq(lc_frame_dest(f, tcp4(f, "10.9.0.1", 40000, 8080, 0x02),
				   &d),
		     1, "a SYN");
	cr_assert_eq(d.proto, IPPROTO_TCP);
	cr_assert_eq(d.family, AF_INET);
	cr_assert_eq(d.sport, 40000);
	cr_assert_eq(d.dport, 8080);
	cr_assert_eq(memcmp(d.addr, "\x0a\x09\x00\x01", 4), 0);
	cr_assert_eq(lc_frame_dest(f, tcp4(f, "10.9.0.1", 40000, 8080, 0x10),
				   &d),
		     0, "an ACK of a connection made already");
	cr_assert_eq(lc_frame_dest(f, tcp4(f, "10.9.0.1", 40000, 8080, 0x12),
				   &d),
		     0, "a SYN-ACK");
	cr_assert_eq(lc_frame_dest(f, udp4(f, "10.9.0.1", 53), &d), 1,
		     "every datagram");
	cr_assert_eq(d.proto, IPPROTO_UDP);
	cr_assert_eq(d.dport, 53);
	/* a later fragment carries no ports: not slirp's to connect */
	udp4(f, "10.9.0.1", 53);
	f[14 + 7] = 8;
	cr_assert_eq(lc_frame_dest(f, 54, &d), 0);
	/* ARP, and a frame cut short */
	tcp4(f, "10.9.0.1", 1, 2, 0x02);
	f[13] = 0x06;
	cr_assert_eq(lc_frame_dest(f, 54, &d), 0);
	cr_assert_eq(lc_frame_dest(f, tcp4(f, "10.9.0.1", 1, 2, 0x02) - 10, &d),
		     0);
}

Test(linkctl, a_refused_syn_gets_a_rst)
{
	uint8_t f[64], r[128];
	size_t n = tcp4(f, "10.9.0.1", 40000, 8080, 0x02), m;
	uint32_t sum = 0;
	size_t i;

	m = lc_build_rst(f, n, r, sizeof(r));
	cr_assert_eq(m, 54);
	cr_assert_eq(memcmp(r, f + 6, 6), 0, "back to the sender");
	cr_assert_eq(memcmp(r + 14 + 12, f + 14 + 16, 4), 0, "from the dest");
	cr_assert_eq(memcmp(r + 14 + 16, f + 14 + 12, 4), 0);
	cr_assert_eq(r[34] << 8 | r[35], 8080);
	cr_assert_eq(r[36] << 8 | r[37], 40000);
	cr_assert_eq(memcmp(r + 42, "\x11\x22\x33\x45", 4), 0,
		     "acknowledges the SYN");
	cr_assert_eq(r[47], 0x14, "RST, ACK");
	cr_assert_eq(ns_csum_fold(r + 14, 20, 0), 0, "IP checksum");
	for (i = 0; i < 8; i += 2)
		sum += (uint32_t)(r[14 + 12 + i] << 8 | r[14 + 13 + i]);
	sum += IPPROTO_TCP + 20;
	cr_assert_eq(ns_csum_fold(r + 34, 20, sum), 0, "TCP checksum");
	cr_assert_eq(lc_build_rst(f, udp4(f, "10.9.0.1", 53), r, sizeof(r)), 0,
		     "no RST for a datagram");
}

/* Only an address rule lets a flow reach one of the host's addresses. */
Test(linkctl, only_address_rules_reach_the_host)
{
	struct moat_policy p = { 0 };
	struct moat_error err = { 0 };
	struct lc_rule r[8];
	struct egress_policy net = { 0 };
	struct lc_dest d;
	size_t n;

	cr_assert_eq(policy_add_rule(&p, "*", false, &err), 0);
	cr_assert_eq(policy_add_rule(&p, "db.lan:5432+private", false, &err),
		     0);
	cr_assert_eq(policy_add_rule(&p, "10.9.0.0/16:22", false, &err), 0);
	cr_assert_eq(policy_add_rule(&p, "10.9.9.9", true, &err), 0);
	n = lc_rules_of(&p.egress, r, ARRAY_SIZE(r));
	cr_assert_eq(n, 2, "the address rules alone");
	cr_assert_eq(lc_rules_to_policy(r, n, &net), 0);
	d = dest4(IPPROTO_TCP, "10.9.0.1", 22);
	cr_assert(lc_rules_allow(&net, &d), "named by a CIDR rule");
	d = dest4(IPPROTO_TCP, "10.9.0.1", 5432);
	cr_assert_not(lc_rules_allow(&net, &d), "another port");
	d = dest4(IPPROTO_TCP, "10.9.9.9", 22);
	cr_assert_not(lc_rules_allow(&net, &d), "denied by address");
	d = dest4(IPPROTO_TCP, "93.184.216.34", 443);
	cr_assert_not(lc_rules_allow(&net, &d),
		      "a public address of the host's: `*` is no address rule");
	egress_free(&net);
	cr_assert_not(lc_rules_allow(&net, &d), "no rules (yet): nothing");
	policy_free(&p);
}

Test(linkctl, messages_are_checked_on_the_way_in)
{
	uint8_t m[LC_MSG_MAX];
	struct lc_rule r = { .family = AF_INET,
			     .prefix = 24,
			     .protos = EGRESS_TCP,
			     .port_lo = 1,
			     .port_hi = 2 };
	struct hostaddr h = { .family = AF_INET6, .prefix = 128 };
	struct lc_dest d = dest4(IPPROTO_TCP, "10.9.0.1", 22);
	const void *rec;
	struct lc_hdr hdr;
	long n;

	n = lc_put_rules(LC_FIRST | LC_LAST, &r, 1, m, sizeof(m));
	cr_assert_eq(lc_parse(m, (size_t)n, &hdr, &rec), 0);
	cr_assert_eq(hdr.type, LC_RULES);
	cr_assert_eq(hdr.n, 1);
	cr_assert_eq(lc_parse(m, (size_t)n - 1, &hdr, &rec), -EINVAL,
		     "cut short");
	r.prefix = 33;
	n = lc_put_rules(LC_FIRST, &r, 1, m, sizeof(m));
	cr_assert_eq(lc_parse(m, (size_t)n, &hdr, &rec), -EINVAL, "/33");
	n = lc_put_hosts(LC_LAST, &h, 1, m, sizeof(m));
	cr_assert_eq(lc_parse(m, (size_t)n, &hdr, &rec), 0);
	h.family = AF_UNIX;
	n = lc_put_hosts(LC_LAST, &h, 1, m, sizeof(m));
	cr_assert_eq(lc_parse(m, (size_t)n, &hdr, &rec), -EINVAL);
	n = lc_put_refused(&d, m, sizeof(m));
	cr_assert_eq(lc_parse(m, (size_t)n, &hdr, &rec), 0);
	m[0] = 9;
	cr_assert_eq(lc_parse(m, (size_t)n, &hdr, &rec), -EINVAL, "a type");
	cr_assert_eq(lc_put_rules(0, &r, LC_CHUNK + 1, m, sizeof(m)), -ENOSPC);
}

/* The kernel's word, in this test's own namespace. */
Test(linkctl, the_kernel_says_what_is_local)
{
	uint8_t lo[4] = { 127, 0, 0, 1 }, lo2[4] = { 127, 3, 4, 5 };
	uint8_t doc[4] = { 192, 0, 2, 200 }, lo6[16] = { [15] = 1 };
	struct hostaddr_set set = { 0 };
	int fd = hostaddr_socket(false);
	bool seen = false, seen8 = false;
	size_t i;

	cr_assert_geq(fd, 0, "no rtnetlink socket: %s", strerror(-fd));
	cr_assert_eq(hostaddr_is_local(fd, AF_INET, lo), 1);
	cr_assert_eq(hostaddr_is_local(fd, AF_INET, lo2), 1,
		     "the loopback's whole /8 (a local route, no address)");
	cr_assert_eq(hostaddr_is_local(fd, AF_INET6, lo6), 1);
	cr_assert_eq(hostaddr_is_local(fd, AF_INET, doc), 0);
	cr_assert_eq(hostaddr_dump(fd, &set), 0);
	for (i = 0; i < set.n; i++) {
		if (set.v[i].family == AF_INET && set.v[i].prefix == 32 &&
		    !memcmp(set.v[i].addr, lo, 4))
			seen = true;
		if (set.v[i].family == AF_INET && set.v[i].prefix == 8 &&
		    set.v[i].addr[0] == 127)
			seen8 = true;
	}
	cr_assert(seen, "127.0.0.1 not among the host's addresses");
	cr_assert(seen8, "127.0.0.0/8 not among the local prefixes");
	hostaddr_set_free(&set);
	close(fd);
}

static bool host_check(const char *rule, const char *addr, uint16_t port)
{
	struct moat_policy p = { 0 };
	struct moat_error err = { 0 };
	struct sockaddr_in in = { .sin_family = AF_INET,
				  .sin_port = htons(port) };

	cr_assert_eq(policy_add_rule(&p, rule, false, &err), 0);
	netpol_set(&p);
	inet_pton(AF_INET, addr, &in.sin_addr);
	return netpol_check(1, IPPROTO_TCP, (struct sockaddr *)&in,
			    sizeof(in)) == 0;
}

/* The sentry's set: exact addresses and prefixes, no cap, replaced whole
 * by each report; without one to trust, every address is the host's. */
Test(linkctl, the_sentrys_set_of_host_addresses)
{
	struct hostaddr v[2] = { { .family = AF_INET, .prefix = 32 },
				 { .family = AF_INET, .prefix = 24 } };
	struct lc_dest d = dest4(IPPROTO_TCP, "93.184.0.9", 443);

	inet_pton(AF_INET, "93.184.216.34", v[0].addr);
	inet_pton(AF_INET, "93.185.7.0", v[1].addr);
	netpol_host_set(v, 2, false);
	cr_assert_not(host_check("*", "93.184.216.34", 443), "the address");
	cr_assert_not(host_check("*", "93.185.7.200", 443), "in the prefix");
	cr_assert(host_check("*", "93.185.8.1", 443), "outside it");
	cr_assert(host_check("93.185.7.0/24:443", "93.185.7.200", 443),
		  "an address rule names it");
	netpol_host_set(NULL, 0, true);
	cr_assert_not(host_check("*", "93.185.8.1", 443),
		      "no set to trust: everything is the host's");
	netpol_host_set(v, 1, false);
	cr_assert(host_check("*", "93.185.7.200", 443), "replaced whole");
	/* the link refused one: from then on, the sentry refuses it too */
	cr_assert(host_check("*", "93.184.0.9", 443));
	netpol_link_refused(&d);
	cr_assert_not(host_check("*", "93.184.0.9", 443));
	netpol_host_addrs_clear();
	cr_assert(host_check("*", "93.184.0.9", 443));
}
