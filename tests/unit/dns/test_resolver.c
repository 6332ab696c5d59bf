/* tests/unit/dns/test_resolver.c: what the sentry's resolver takes from an
 * upstream datagram: only the answer to the query it asked (id, name
 * without case, type, class, server and port), and of that answer only
 * the addresses the policy lets the name have (DNS rebinding). Criterion
 * runs each test in a process of its own, so the name cache starts
 * empty. */
#include <criterion/criterion.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "lib/util.h"
#include "netstack/dns.h"
#include "netstack/netpol.h"
#include "netstack/resolver.h"

static const uint8_t server[4] = { 192, 0, 2, 53 };

/* The query the resolver asked: "api.example A", id 0x1234 upstream,
 * the guest's id 0x0707. */
static struct resolver_ask ask_for(const char *name, uint16_t qtype)
{
	struct resolver_ask ask = { .id = 0x1234, .pid = 7 };

	ask.q.id = 0x0707;
	ask.q.rd = true;
	snprintf(ask.q.name, sizeof(ask.q.name), "%s", name);
	ask.q.qtype = qtype;
	ask.q.qclass = DNS_CLASS_IN;
	memcpy(ask.server, server, 4);
	return ask;
}

static void policy(const char *const *rules, size_t n)
{
	struct moat_policy p = { 0 };
	struct moat_error err = { 0 };
	size_t i;

	for (i = 0; i < n; i++)
		cr_assert_eq(policy_add_rule(&p, rules[i], false, &err), 0,
			     "%s", err.msg);
	netpol_set(&p);
}

static struct dns_rr a_rr(const char *owner, const char *addr)
{
	struct dns_rr rr = { .ttl = 60 };

	snprintf(rr.name, sizeof(rr.name), "%s", owner);
	if (inet_pton(AF_INET, addr, rr.addr) == 1) {
		rr.type = DNS_A;
	} else {
		cr_assert_eq(inet_pton(AF_INET6, addr, rr.addr), 1, "%s", addr);
		rr.type = DNS_AAAA;
	}
	return rr;
}

/* An upstream reply with id to (name, qtype), holding rr. */
static size_t reply(uint8_t *m, uint16_t id, const char *name, uint16_t qtype,
		    const struct dns_rr *rr, size_t nrr)
{
	struct dns_query q = {
		.id = id, .rd = true, .qtype = qtype, .qclass = DNS_CLASS_IN
	};
	long n;

	snprintf(q.name, sizeof(q.name), "%s", name);
	n = dns_build_reply(&q, DNS_NOERROR, rr, nrr, m, 512);
	cr_assert_gt(n, 0);
	return (size_t)n;
}

static bool cached(const char *addr)
{
	uint8_t a[16] = { 0 };
	const char *names[RESOLVER_NAMES_MAX];
	int family = strchr(addr, ':') ? AF_INET6 : AF_INET;

	cr_assert_eq(inet_pton(family, addr, a), 1);
	return resolver_names_of(family, a, names, RESOLVER_NAMES_MAX) > 0;
}

/* What the guest got: its id, and the addresses in it as text, joined
 * by spaces. */
static void guest_sees(const uint8_t *m, long n, const struct resolver_ask *ask,
		       char *out, size_t cap)
{
	struct dns_answer a;
	char ip[INET6_ADDRSTRLEN];
	size_t i, o = 0, addrs = 0;

	cr_assert_gt(n, 0);
	cr_assert_eq(dns_parse_reply(m, (size_t)n, ask->q.id, ask->q.name,
				     ask->q.qtype, &a),
		     0, "the guest's reply does not parse");
	out[0] = 0;
	for (i = 0; i < a.n; i++) {
		if (a.rr[i].type == DNS_CNAME)
			continue;
		addrs++;
		inet_ntop(a.rr[i].type == DNS_A ? AF_INET : AF_INET6,
			  a.rr[i].addr, ip, sizeof(ip));
		o += (size_t)snprintf(out + o, cap - o, "%s%s", o ? " " : "",
				      ip);
	}
	cr_assert_eq(a.addrs, addrs, "the guest got an address not checked");
}

Test(resolver, only_the_answer_to_our_query_is_taken)
{
	static const char *const rules[] = { "api.example" };
	struct resolver_ask ask = ask_for("api.example", DNS_A);
	struct dns_rr rr = a_rr("api.example", "93.184.216.34");
	uint8_t m[512], other[4] = { 192, 0, 2, 54 };
	char seen[256];
	size_t n;
	long got;

	policy(rules, 1);
	n = reply(m, 0x1235, "api.example", DNS_A, &rr, 1);
	cr_assert_eq(resolver_take_reply(&ask, server, 53, m, n, sizeof(m)), -1,
		     "wrong id");
	n = reply(m, 0x1234, "api.example.org", DNS_A, &rr, 1);
	cr_assert_eq(resolver_take_reply(&ask, server, 53, m, n, sizeof(m)), -1,
		     "wrong name");
	n = reply(m, 0x1234, "api.example", DNS_AAAA, &rr, 1);
	cr_assert_eq(resolver_take_reply(&ask, server, 53, m, n, sizeof(m)), -1,
		     "wrong type");
	n = reply(m, 0x1234, "api.example", DNS_A, &rr, 1);
	m[DNS_HDR_LEN + 13 + 3] = 3; /* the question's class: CH */
	cr_assert_eq(resolver_take_reply(&ask, server, 53, m, n, sizeof(m)), -1,
		     "wrong class");
	n = reply(m, 0x1234, "api.example", DNS_A, &rr, 1);
	cr_assert_eq(resolver_take_reply(&ask, server, 5353, m, n, sizeof(m)),
		     -1, "wrong source port");
	cr_assert_eq(resolver_take_reply(&ask, other, 53, m, n, sizeof(m)), -1,
		     "wrong server");
	cr_assert_eq(resolver_take_reply(&ask, server, 53, m, 11, sizeof(m)),
		     -1, "cut short");
	cr_assert_not(cached("93.184.216.34"), "a refused datagram was cached");
	/* the name is compared without case, as resolvers do */
	n = reply(m, 0x1234, "API.Example", DNS_A, &rr, 1);
	got = resolver_take_reply(&ask, server, 53, m, n, sizeof(m));
	cr_assert_eq(got, (long)n, "relayed as it came");
	cr_assert_eq(m[0] << 8 | m[1], 0x0707, "under the guest's id");
	cr_assert(cached("93.184.216.34"));
	guest_sees(m, got, &ask, seen, sizeof(seen));
	cr_assert_str_eq(seen, "93.184.216.34");
}

Test(resolver, answers_into_special_ranges_are_dropped)
{
	static const char *const rules[] = { "api.example:443", "*.cdn.test" };
	struct resolver_ask ask = ask_for("api.example", DNS_A);
	struct dns_rr rr[5] = {
		a_rr("api.example", "10.0.0.7"),
		a_rr("api.example", "93.184.216.34"),
		a_rr("api.example", "169.254.169.254"),
		a_rr("api.example", "127.0.0.1"),
		a_rr("api.example", "192.168.1.1"),
	};
	uint8_t m[512];
	char seen[256];
	size_t n;
	long got;

	policy(rules, 2);
	n = reply(m, 0x1234, "api.example", DNS_A, rr, 5);
	got = resolver_take_reply(&ask, server, 53, m, n, sizeof(m));
	guest_sees(m, got, &ask, seen, sizeof(seen));
	cr_assert_str_eq(seen, "93.184.216.34", "only the public one");
	cr_assert(cached("93.184.216.34"));
	cr_assert_not(cached("10.0.0.7"));
	cr_assert_not(cached("169.254.169.254"));
	cr_assert_not(cached("127.0.0.1"));
	cr_assert_not(cached("192.168.1.1"));
	/* every address dropped: an answer with none (NOERROR, no data) */
	ask = ask_for("x.cdn.test", DNS_AAAA);
	rr[0] = a_rr("x.cdn.test", "fd00::1");
	rr[1] = a_rr("x.cdn.test", "::ffff:10.1.1.1");
	rr[2] = a_rr("x.cdn.test", "fe80::1");
	n = reply(m, 0x1234, "x.cdn.test", DNS_AAAA, rr, 3);
	got = resolver_take_reply(&ask, server, 53, m, n, sizeof(m));
	guest_sees(m, got, &ask, seen, sizeof(seen));
	cr_assert_str_eq(seen, "");
	cr_assert_eq(m[3] & 0xf, DNS_NOERROR);
	cr_assert_not(cached("fd00::1"));
}

Test(resolver, a_private_name_opts_in_but_never_to_the_host)
{
	static const char *const rules[] = { "db.lan:5432+private" };
	static const uint8_t host[4] = { 10, 9, 0, 1 };
	struct resolver_ask ask = ask_for("db.lan", DNS_A);
	struct dns_rr rr[4] = {
		a_rr("db.lan", "10.9.0.5"),
		a_rr("db.lan", "10.9.0.1"), /* the host's own */
		a_rr("db.lan", "127.0.0.1"),
		a_rr("db.lan", "169.254.169.254"),
	};
	uint8_t m[512];
	char seen[256];
	size_t n;
	long got;

	policy(rules, 1);
	netpol_host_addr_add(AF_INET, host);
	n = reply(m, 0x1234, "db.lan", DNS_A, rr, 4);
	got = resolver_take_reply(&ask, server, 53, m, n, sizeof(m));
	guest_sees(m, got, &ask, seen, sizeof(seen));
	cr_assert_str_eq(seen, "10.9.0.5");
	cr_assert(cached("10.9.0.5"));
	cr_assert_not(cached("10.9.0.1"));
	cr_assert_not(cached("127.0.0.1"));
	cr_assert_not(cached("169.254.169.254"));
	netpol_host_addrs_clear();
}

Test(resolver, addresses_not_checked_never_reach_the_guest)
{
	static const char *const rules[] = { "api.example" };
	struct resolver_ask ask = ask_for("api.example", DNS_A);
	struct dns_rr rr[3] = {
		a_rr("api.example", "93.184.216.34"),
		/* another owner's: not the question's, and not checked */
		a_rr("evil.example", "10.0.0.1"),
		{ .type = DNS_CNAME,
		  .ttl = 9,
		  .name = "api.example",
		  .target = "edge.example" },
	};
	uint8_t m[512];
	char seen[256];
	size_t n;
	long got;

	policy(rules, 1);
	n = reply(m, 0x1234, "api.example", DNS_A, rr, 3);
	got = resolver_take_reply(&ask, server, 53, m, n, sizeof(m));
	cr_assert_lt(got, (long)n, "rebuilt without the stray record");
	guest_sees(m, got, &ask, seen, sizeof(seen));
	cr_assert_str_eq(seen, "93.184.216.34");
	cr_assert_not(cached("10.0.0.1"));
}

static int connect_check(const char *addr, uint16_t port)
{
	struct sockaddr_storage ss = { 0 };
	struct sockaddr_in *in = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;

	if (strchr(addr, ':')) {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(port);
		cr_assert_eq(inet_pton(AF_INET6, addr, &in6->sin6_addr), 1);
		return netpol_check(7, IPPROTO_TCP, (struct sockaddr *)in6,
				    sizeof(*in6));
	}
	in->sin_family = AF_INET;
	in->sin_port = htons(port);
	cr_assert_eq(inet_pton(AF_INET, addr, &in->sin_addr), 1);
	return netpol_check(7, IPPROTO_TCP, (struct sockaddr *)in, sizeof(*in));
}

/* A deny by name matches an address through the names it was resolved
 * from: all of them, however many other names of the same address the
 * guest resolved before, and however many other names it resolves after
 * (a denied name's entry is never evicted for theirs). */
Test(resolver, a_deny_by_name_sees_every_name_of_the_address)
{
	static const char *const rules[] = { "a1.test:8080", "a2.test:8080",
					     "a3.test:8080", "a4.test:8080",
					     "bad.test:8080" };
	uint8_t a[4] = { 93, 184, 216, 34 }, other[4] = { 93, 184, 0, 0 };
	struct moat_policy p = { 0 };
	struct moat_error err = { 0 };
	char name[32];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(rules); i++)
		cr_assert_eq(policy_add_rule(&p, rules[i], false, &err), 0,
			     "%s", err.msg);
	cr_assert_eq(policy_add_rule(&p, "bad.test:8080", true, &err), 0);
	netpol_set(&p);
	for (i = 1; i <= 4; i++) {
		snprintf(name, sizeof(name), "a%zu.test", i);
		resolver_cache_add(AF_INET, a, name, 60);
	}
	cr_assert_eq(connect_check("93.184.216.34", 8080), 0,
		     "allowed by the a*.test names");
	resolver_cache_add(AF_INET, a, "bad.test", 60);
	cr_assert_eq(connect_check("93.184.216.34", 8080), -EACCES,
		     "the fifth name, denied, was not seen");
	/* a flood of other names (longer TTLs than bad.test's) fills the
	 * cache; bad.test's entry stays */
	for (i = 0; i < 4096 + 16; i++) { /* RESOLVER_CACHE_MAX and more */
		other[2] = (uint8_t)(i >> 8);
		other[3] = (uint8_t)i;
		snprintf(name, sizeof(name), "f%zu.test", i);
		resolver_cache_add(AF_INET, other, name, 3600);
	}
	resolver_cache_add(AF_INET, a, "a1.test", 3600);
	cr_assert_eq(connect_check("93.184.216.34", 8080), -EACCES,
		     "the denied name was evicted by the flood");
}

/* An AAAA answer in IPv4-mapped form is the IPv4 address it carries: the
 * cache holds it so, and a connect in either form finds its name. */
Test(resolver, a_mapped_aaaa_answer_is_cached_as_ipv4)
{
	static const char *const rules[] = { "api.example:443" };
	struct resolver_ask ask = ask_for("api.example", DNS_AAAA);
	struct dns_rr rr = a_rr("api.example", "::ffff:93.184.216.34");
	uint8_t m[512];
	char seen[256];
	size_t n;
	long got;

	policy(rules, 1);
	n = reply(m, 0x1234, "api.example", DNS_AAAA, &rr, 1);
	got = resolver_take_reply(&ask, server, 53, m, n, sizeof(m));
	guest_sees(m, got, &ask, seen, sizeof(seen));
	cr_assert_str_eq(seen, "::ffff:93.184.216.34", "the answer, as given");
	cr_assert(cached("93.184.216.34"), "not under its IPv4 form");
	cr_assert_eq(connect_check("::ffff:93.184.216.34", 443), 0);
	cr_assert_eq(connect_check("93.184.216.34", 443), 0);
	cr_assert_eq(connect_check("93.184.216.34", 80), -EACCES);
}

/* rr appended to a reply's additional (or authority) section. */
static size_t append_rr(uint8_t *m, size_t n, bool authority,
			const struct dns_rr *rr)
{
	struct dns_query q = { .qclass = 0 };
	uint8_t tmp[512];
	long r = dns_build_reply(&q, 0, rr, 1, tmp, sizeof(tmp));
	size_t len = (size_t)r - DNS_HDR_LEN;
	int at = authority ? 8 : 10;

	cr_assert_gt(r, DNS_HDR_LEN);
	memcpy(m + n, tmp + DNS_HDR_LEN, len);
	m[at + 1]++;
	return n + len;
}

/* The reply to a question for addresses (A, AAAA, ANY, HTTPS, SVCB) is
 * always rebuilt from its checked records: an additional or authority
 * section's addresses, or an HTTPS record's hints, never reach the guest
 * unchecked. Other replies go as they came. */
Test(resolver, address_replies_are_rebuilt_from_checked_records)
{
	static const char *const rules[] = { "api.example" };
	struct resolver_ask ask = ask_for("api.example", DNS_A);
	struct dns_rr rr = a_rr("api.example", "93.184.216.34");
	struct dns_rr extra = a_rr("ns.example", "127.0.0.1");
	uint8_t m[512], orig[512];
	char seen[256];
	size_t n;
	long got;

	policy(rules, 1);
	n = reply(m, 0x1234, "api.example", DNS_A, &rr, 1);
	n = append_rr(m, n, false, &extra);
	n = append_rr(m, n, true, &extra);
	got = resolver_take_reply(&ask, server, 53, m, n, sizeof(m));
	guest_sees(m, got, &ask, seen, sizeof(seen));
	cr_assert_str_eq(seen, "93.184.216.34");
	cr_assert_eq(m[8] << 8 | m[9], 0, "an authority section went through");
	cr_assert_eq(m[10] << 8 | m[11], 0,
		     "an additional section went through");
	/* an HTTPS question: its records (hints and all) are not relayed */
	ask = ask_for("api.example", 65);
	n = reply(m, 0x1234, "api.example", 65, NULL, 0);
	m[7] = 1; /* one answer: an HTTPS record with an ipv4hint */
	memcpy(m + n,
	       "\xc0\x0c\x00\x41\x00\x01\x00\x00\x00\x3c\x00\x0b"
	       "\x00\x01\x00\x00\x04\x00\x04\x7f\x00\x00\x01",
	       23);
	n += 23;
	got = resolver_take_reply(&ask, server, 53, m, n, sizeof(m));
	cr_assert_gt(got, 0);
	cr_assert_eq(m[6] << 8 | m[7], 0, "an HTTPS record reached the guest");
	/* a TXT question: relayed as it came, under the guest's id */
	ask = ask_for("api.example", 16);
	n = reply(m, 0x1234, "api.example", 16, NULL, 0);
	n = append_rr(m, n, false, &extra);
	memcpy(orig, m, n);
	got = resolver_take_reply(&ask, server, 53, m, n, sizeof(m));
	cr_assert_eq(got, (long)n);
	cr_assert_eq(m[0] << 8 | m[1], 0x0707);
	cr_assert_eq(memcmp(m + 2, orig + 2, n - 2), 0);
}
