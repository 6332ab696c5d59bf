/* tests/unit/policy/test_egress.c: the egress rule parser and matcher. */
#include <criterion/criterion.h>

#include <arpa/inet.h>
#include <string.h>
#include <sys/socket.h>

#include "lib/util.h"
#include "policy/egress.h"

static struct egress_policy pol;

static void fini(void)
{
	egress_free(&pol);
}

TestSuite(egress, .fini = fini);

static void add(const char *text, bool deny)
{
	struct egress_rule r;
	char err[256] = "";

	cr_assert_eq(egress_rule_parse(text, deny, &r, err, sizeof(err)), 0,
		     "%s: %s", text, err);
	cr_assert_eq(egress_add(&pol, &r), 0);
}

/* Decide addr:port/proto reached as names...; returns the verdict and the
 * deciding rule's text ("" for none) through rule. */
static bool decide3(const char *addr, uint16_t port, unsigned proto,
		    const char *name, const char **rule)
{
	struct egress_query q = { .port = port, .proto = proto };
	struct egress_decision d;
	const char *names[1] = { name };

	if (inet_pton(AF_INET, addr, q.addr) == 1) {
		q.family = AF_INET;
	} else {
		cr_assert_eq(inet_pton(AF_INET6, addr, q.addr), 1, "%s", addr);
		q.family = AF_INET6;
	}
	q.names = names;
	q.nnames = name ? 1 : 0;
	egress_decide(&pol, &q, &d);
	if (rule)
		*rule = d.rule ? d.rule->text : "";
	cr_assert_eq(d.rule == NULL, d.reason != EGRESS_BY_RULE);
	return d.allow;
}

static bool decide(const char *addr, uint16_t port, const char *name)
{
	return decide3(addr, port, EGRESS_TCP, name, NULL);
}

Test(egress, default_is_deny)
{
	const char *rule;

	cr_assert_not(decide3("93.184.216.34", 443, EGRESS_TCP, NULL, &rule));
	cr_assert_str_eq(rule, "");
	add("example.com", false);
	cr_assert_not(
		decide("93.184.216.34", 443, NULL),
		"a name rule does not match an address reached by no name");
}

Test(egress, exact_name_and_wildcard)
{
	const char *rule;

	add("api.example.com:443", false);
	add("*.pythonhosted.org", false);
	cr_assert(decide3("93.184.216.34", 443, EGRESS_TCP, "API.Example.COM.",
			  &rule));
	cr_assert_str_eq(rule, "api.example.com:443");
	cr_assert_not(decide("93.184.216.34", 80, "api.example.com"),
		      "port is part of the rule");
	cr_assert_not(decide("93.184.216.34", 443, "example.com"));
	cr_assert_not(decide("93.184.216.34", 443, "x.api.example.com"));
	cr_assert(decide("151.101.0.223", 443, "files.pythonhosted.org"));
	cr_assert(decide("151.101.0.223", 80, "a.b.pythonhosted.org"));
	cr_assert_not(decide("151.101.0.223", 443, "pythonhosted.org"),
		      "*.x matches names below x only");
	cr_assert_not(decide("151.101.0.223", 443, "evilpythonhosted.org"),
		      "a suffix matches whole labels");
}

Test(egress, cidr_v4_and_v6)
{
	add("203.0.113.0/24", false);
	add("[2001:db8::/32]:443", false);
	add("198.51.100.7:8000-8010/udp", false);
	cr_assert(decide("203.0.113.255", 1, NULL));
	cr_assert_not(decide("203.0.114.0", 1, NULL));
	cr_assert(decide("2001:db8:ffff::1", 443, NULL));
	cr_assert_not(decide("2001:db8::1", 80, NULL));
	cr_assert_not(decide("2001:db9::1", 443, NULL));
	cr_assert(decide3("198.51.100.7", 8005, EGRESS_UDP, NULL, NULL));
	cr_assert_not(decide3("198.51.100.7", 8005, EGRESS_TCP, NULL, NULL));
	cr_assert_not(decide3("198.51.100.7", 8011, EGRESS_UDP, NULL, NULL));
	/* a v4 rule covers the v4-mapped v6 form of its addresses */
	cr_assert(decide("::ffff:203.0.113.9", 1, NULL));
}

Test(egress, host_bits_of_a_cidr_are_cleared)
{
	add("203.0.113.77/24", false);
	cr_assert(decide("203.0.113.1", 1, NULL));
	cr_assert_str_eq(pol.rules[0].text, "203.0.113.77/24");
}

Test(egress, deny_wins)
{
	const char *rule;

	add("*", false);
	add("*.example.com", false);
	add("bad.example.com", true);
	add("192.0.2.0/24:25", true);
	cr_assert_not(decide3("93.184.216.34", 443, EGRESS_TCP,
			      "bad.example.com", &rule));
	cr_assert_str_eq(rule, "bad.example.com");
	cr_assert(decide("93.184.216.34", 443, "ok.example.com"));
	cr_assert_not(decide("192.0.2.1", 25, NULL));
	cr_assert(decide("192.0.2.1", 587, NULL));
	/* deny listed after allow, or before: the same */
	egress_free(&pol);
	add("bad.example.com", true);
	add("*", false);
	cr_assert_not(decide("93.184.216.34", 443, "bad.example.com"));
}

Test(egress, special_ranges_need_a_rule_that_names_them)
{
	static const char *const special[] = {
		"127.0.0.1",
		"169.254.169.254",
		"10.1.2.3",
		"172.16.0.1",
		"172.31.255.255",
		"192.168.1.1",
		"100.64.0.1",
		"0.0.0.0",
		"224.0.0.1",
		"255.255.255.255",
		"::1",
		"::",
		"fe80::1",
		"fd00::1",
		"ff02::1",
		"::ffff:127.0.0.1",
		"::ffff:169.254.169.254",
		"64:ff9b::a00:1",
	};
	struct egress_query q = { .port = 80, .proto = EGRESS_TCP };
	struct egress_decision d;
	size_t i;

	add("*", false);
	for (i = 0; i < ARRAY_SIZE(special); i++) {
		memset(q.addr, 0, sizeof(q.addr));
		q.family = strchr(special[i], ':') ? AF_INET6 : AF_INET;
		cr_assert_eq(inet_pton(q.family, special[i], q.addr), 1);
		egress_decide(&pol, &q, &d);
		cr_assert_not(d.allow, "allow-all reached %s", special[i]);
		cr_assert_eq(d.reason, EGRESS_BY_SPECIAL, "%s", special[i]);
	}
	cr_assert(decide("172.32.0.1", 80, NULL), "just outside 172.16/12");
	cr_assert(decide("2606:4700::1", 80, NULL));
	/* a suffix rule does not name one either */
	add("*.corp", false);
	cr_assert_not(decide("192.168.7.7", 80, "x.corp"));
	cr_assert(decide("93.184.216.34", 80, "x.corp"));
	/* named: allowed */
	add("10.0.0.0/8", false);
	add("internal.corp", false);
	cr_assert(decide("10.1.2.3", 80, NULL));
	cr_assert(decide("192.168.7.7", 80, "internal.corp"));
	cr_assert_not(decide("192.168.7.7", 80, "other.corp"));
}

Test(egress, icmp_is_named_not_default)
{
	add("203.0.113.1", false);
	add("198.51.100.1/icmp", false);
	cr_assert_not(decide3("203.0.113.1", 0, EGRESS_ICMP, NULL, NULL));
	cr_assert(decide3("198.51.100.1", 0, EGRESS_ICMP, NULL, NULL));
	cr_assert_not(decide3("198.51.100.1", 80, EGRESS_TCP, NULL, NULL));
}

Test(egress, names_that_resolve)
{
	const struct egress_rule *r;

	add("api.example.com:443", false);
	add("*.example.org", false);
	add("tracker.example.org", true);
	add("mail.example.org:25", true);
	cr_assert(egress_name_allowed(&pol, "api.example.com", &r));
	cr_assert_str_eq(r->text, "api.example.com:443");
	cr_assert(egress_name_allowed(&pol, "WWW.example.org.", &r));
	cr_assert_not(egress_name_allowed(&pol, "example.org", &r));
	cr_assert_null(r);
	cr_assert_not(egress_name_allowed(&pol, "tracker.example.org", &r));
	cr_assert_str_eq(r->text, "tracker.example.org");
	cr_assert(egress_name_allowed(&pol, "mail.example.org", &r),
		  "a deny of one port does not hide the name");
	cr_assert_not(egress_name_allowed(&pol, "other.com", &r));
	cr_assert_not(egress_name_allowed(&pol, "bad name.com", &r));
	add("*", false);
	cr_assert(egress_name_allowed(&pol, "other.com", &r));
	cr_assert_not(egress_name_allowed(&pol, "tracker.example.org", &r));
}

Test(egress, malformed_rules_are_refused_with_a_reason)
{
	static const struct {
		const char *text, *says;
	} bad[] = {
		{ "", "empty" },
		{ "example.com:0", "bad port" },
		{ "example.com:65536", "bad port" },
		{ "example.com:80-70", "bad port" },
		{ "example.com:http", "bad port" },
		{ "example.com:", "bad port" },
		{ "10.0.0.0/33", "prefix" },
		{ "10.0.0.0/", "prefix" },
		{ "[2001:db8::/129]", "not an address" },
		{ "[2001:db8::1", "no `]`" },
		{ "[2001:db8::1]443", "`:PORT` expected" },
		{ "[example.com]:80", "not an address" },
		{ "1.2.3", "not an address, CIDR or domain" },
		{ "300.1.1.1", "not an address, CIDR or domain" },
		{ "exa mple.com", "not an address, CIDR or domain" },
		{ "a..b", "not an address, CIDR or domain" },
		{ "api.*.com", "`*` only" },
		{ "*example.com", "`*` only" },
		{ "*.", "not a domain name" },
		{ "example.com/sctp", "unknown protocol" },
		{ "example.com:80/icmp", "icmp has no ports" },
	};
	struct egress_rule r;
	char err[256];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		err[0] = 0;
		cr_assert_eq(egress_rule_parse(bad[i].text, false, &r, err,
					       sizeof(err)),
			     -EINVAL, "`%s` was accepted", bad[i].text);
		cr_assert(strstr(err, bad[i].says), "`%s`: %s", bad[i].text,
			  err);
	}
}

Test(egress, written_forms)
{
	static const char *const good[] = {
		"*",
		"*:443",
		"*/udp",
		"example.com",
		"EXAMPLE.com.",
		"*.example.com:1-1024/tcp",
		"10.0.0.1",
		"10.0.0.0/8:53/udp",
		"2001:db8::1",
		"2001:db8::/32",
		"[::1]:80",
		"[2001:db8::/48]:1-2",
		"xn--bcher-kva.example",
		"_sip._tcp.example.com",
	};
	struct egress_rule r;
	char err[256];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(good); i++)
		cr_assert_eq(egress_rule_parse(good[i], false, &r, err,
					       sizeof(err)),
			     0, "`%s`: %s", good[i], err);
	cr_assert_eq(egress_rule_parse("*.EXAMPLE.com:1-1024/TCP", true, &r,
				       err, sizeof(err)),
		     0);
	cr_assert_eq(r.kind, EGRESS_SUFFIX);
	cr_assert_str_eq(r.name, "example.com");
	cr_assert_eq(r.port_lo, 1);
	cr_assert_eq(r.port_hi, 1024);
	cr_assert_eq(r.protos, EGRESS_TCP);
	cr_assert(r.deny);
}

Test(egress, rules_are_bounded)
{
	struct egress_rule r;
	char err[64];
	size_t i;

	cr_assert_eq(egress_rule_parse("*", false, &r, err, sizeof(err)), 0);
	for (i = 0; i < EGRESS_RULES_MAX; i++)
		cr_assert_eq(egress_add(&pol, &r), 0);
	cr_assert_eq(egress_add(&pol, &r), -E2BIG);
}
