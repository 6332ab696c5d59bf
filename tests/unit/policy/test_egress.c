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
	add("93.184.0.0/16:25", true);
	cr_assert_not(decide3("93.184.216.34", 443, EGRESS_TCP,
			      "bad.example.com", &rule));
	cr_assert_str_eq(rule, "bad.example.com");
	cr_assert(decide("93.184.216.34", 443, "ok.example.com"));
	cr_assert_not(decide("93.184.0.1", 25, NULL));
	cr_assert(decide("93.184.0.1", 587, NULL));
	/* deny listed after allow, or before: the same */
	egress_free(&pol);
	add("bad.example.com", true);
	add("*", false);
	cr_assert_not(decide("93.184.216.34", 443, "bad.example.com"));
}

Test(egress, special_ranges_need_a_rule_that_names_them)
{
	static const struct {
		const char *addr;
		enum egress_reason why;
	} special[] = {
		{ "127.0.0.1", EGRESS_BY_HOST },
		{ "169.254.169.254", EGRESS_BY_SPECIAL },
		{ "10.1.2.3", EGRESS_BY_SPECIAL },
		{ "172.16.0.1", EGRESS_BY_SPECIAL },
		{ "172.31.255.255", EGRESS_BY_SPECIAL },
		{ "192.168.1.1", EGRESS_BY_SPECIAL },
		{ "100.64.0.1", EGRESS_BY_SPECIAL },
		{ "0.0.0.0", EGRESS_BY_HOST },
		{ "224.0.0.1", EGRESS_BY_SPECIAL },
		{ "255.255.255.255", EGRESS_BY_SPECIAL },
		{ "::1", EGRESS_BY_HOST },
		{ "::", EGRESS_BY_HOST },
		{ "fe80::1", EGRESS_BY_SPECIAL },
		{ "fd00::1", EGRESS_BY_SPECIAL },
		{ "ff02::1", EGRESS_BY_SPECIAL },
		{ "::ffff:127.0.0.1", EGRESS_BY_HOST },
		{ "::ffff:169.254.169.254", EGRESS_BY_SPECIAL },
		{ "64:ff9b::a00:1", EGRESS_BY_SPECIAL },
		/* metadata services outside link-local */
		{ "100.100.100.200", EGRESS_BY_SPECIAL },
		{ "168.63.129.16", EGRESS_BY_SPECIAL },
		{ "192.0.0.192", EGRESS_BY_SPECIAL },
		{ "fd00:ec2::254", EGRESS_BY_SPECIAL },
		{ "fd20:ce::254", EGRESS_BY_SPECIAL },
		{ "fd00:c1::a9fe:a9fe", EGRESS_BY_SPECIAL },
		/* documentation, IPv4-translated */
		{ "192.0.2.1", EGRESS_BY_SPECIAL },
		{ "198.51.100.1", EGRESS_BY_SPECIAL },
		{ "203.0.113.1", EGRESS_BY_SPECIAL },
		{ "2001:db8::1", EGRESS_BY_SPECIAL },
		{ "3fff::1", EGRESS_BY_SPECIAL },
		{ "::ffff:0:7f00:1", EGRESS_BY_SPECIAL },
	};
	struct egress_query q = { .port = 80, .proto = EGRESS_TCP };
	struct egress_decision d;
	size_t i;

	add("*", false);
	for (i = 0; i < ARRAY_SIZE(special); i++) {
		memset(q.addr, 0, sizeof(q.addr));
		q.family = strchr(special[i].addr, ':') ? AF_INET6 : AF_INET;
		cr_assert_eq(inet_pton(q.family, special[i].addr, q.addr), 1);
		egress_decide(&pol, &q, &d);
		cr_assert_not(d.allow, "allow-all reached %s", special[i].addr);
		cr_assert_eq(d.reason, special[i].why, "%s", special[i].addr);
	}
	cr_assert(decide("172.32.0.1", 80, NULL), "just outside 172.16/12");
	cr_assert(decide("2606:4700::1", 80, NULL));
	/* a suffix rule does not name one either */
	add("*.corp", false);
	cr_assert_not(decide("192.168.7.7", 80, "x.corp"));
	cr_assert(decide("93.184.216.34", 80, "x.corp"));
	/* named: allowed */
	add("10.0.0.0/8", false);
	add("internal.corp+private", false);
	cr_assert(decide("10.1.2.3", 80, NULL));
	cr_assert(decide("192.168.7.7", 80, "internal.corp"));
	cr_assert_not(decide("192.168.7.7", 80, "other.corp"));
}

/* DNS rebinding: whoever answers for an allowed name picks the address. */
Test(egress, a_name_reaches_a_private_address_only_when_marked)
{
	static const struct {
		const char *addr;
		bool plain,
			marked; /* via api.example, via db.example+private */
	} cases[] = {
		{ "93.184.216.34", true, true },
		{ "10.1.2.3", false, true },
		{ "172.20.0.9", false, true },
		{ "192.168.1.1", false, true },
		{ "100.100.100.100", false, true }, /* shared: Tailscale */
		{ "fd12:3456::1", false, true },
		{ "::ffff:10.1.2.3", false, true },
		/* not private: link-local, metadata, loopback, ... */
		{ "169.254.169.254", false, false },
		{ "fe80::1", false, false },
		{ "127.0.0.1", false, false },
		{ "::ffff:127.0.0.1", false, false },
		{ "::1", false, false },
		{ "0.0.0.0", false, false },
		{ "224.0.0.1", false, false },
		{ "198.18.0.1", false, false },
		{ "64:ff9b::a00:1", false, false },
		{ "2002:a00:1::1", false, false },  /* 6to4 of 10.0.0.1 */
		{ "::ffff:0:a00:1", false, false }, /* translated 10.0.0.1 */
		/* metadata inside the private ranges: never through a name */
		{ "100.100.100.200", false, false }, /* Alibaba */
		{ "100.100.100.201", false, true },
		{ "fd00:ec2::254", false, false }, /* AWS */
		{ "fd00:ec2::23", false, false },
		{ "fd00:ec3::254", false, true },
		{ "fd20:ce::254", false, false },	/* GCP */
		{ "fd00:c1::a9fe:a9fe", false, false }, /* Oracle */
		{ "fd00:42::42", false, false },	/* Scaleway */
		{ "fd00:a9fe:a9fe::1", false, false },	/* Akamai */
		{ "fd00:100::100:200", false, false },	/* Alibaba */
		{ "168.63.129.16", false, false },	/* Azure, public */
		{ "168.63.129.17", true, true },
	};
	size_t i;

	add("api.example", false);
	add("db.example+private", false);
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		cr_assert_eq(decide(cases[i].addr, 443, "api.example"),
			     cases[i].plain, "%s through a plain name",
			     cases[i].addr);
		cr_assert_eq(decide(cases[i].addr, 443, "db.example"),
			     cases[i].marked, "%s through a +private name",
			     cases[i].addr);
	}
	/* the mark is the rule's, not the address's: another name does not
	 * borrow it */
	cr_assert_not(decide("10.1.2.3", 443, "other.example"));
	/* an address rule still reaches what it names */
	add("169.254.169.254:80", false);
	cr_assert(decide("169.254.169.254", 80, NULL));
	cr_assert(decide("169.254.169.254", 80, "api.example"));
}

Test(egress, the_hosts_own_addresses_need_an_address_rule)
{
	struct egress_query q = { .port = 22, .proto = EGRESS_TCP };
	struct egress_decision d;
	const char *names[1] = { "db.example" };

	add("*", false);
	add("db.example+private", false);
	q.family = AF_INET;
	inet_pton(AF_INET, "93.184.216.34", q.addr); /* a public one */
	q.host = true;
	egress_decide(&pol, &q, &d);
	cr_assert_not(d.allow, "`*` reached the host");
	cr_assert_eq(d.reason, EGRESS_BY_HOST);
	inet_pton(AF_INET, "10.9.9.9", q.addr); /* a private one */
	q.names = names;
	q.nnames = 1;
	egress_decide(&pol, &q, &d);
	cr_assert_not(d.allow, "a +private name reached the host");
	cr_assert_eq(d.reason, EGRESS_BY_HOST);
	q.host = false;
	egress_decide(&pol, &q, &d);
	cr_assert(d.allow, "not the host's: the +private name reaches it");
	q.host = true;
	add("10.9.9.9:22", false);
	egress_decide(&pol, &q, &d);
	cr_assert(d.allow, "named by address: reached");
	cr_assert_str_eq(d.rule->text, "10.9.9.9:22");
}

static bool answer_ok(const char *name, const char *addr, bool host,
		      enum egress_reason *why)
{
	uint8_t a[16] = { 0 };
	int family = strchr(addr, ':') ? AF_INET6 : AF_INET;

	cr_assert_eq(inet_pton(family, addr, a), 1, "%s", addr);
	return egress_answer_ok(&pol, name, family, a, host, why);
}

Test(egress, answers_into_special_ranges_are_dropped)
{
	enum egress_reason why;

	add("api.example:443", false);
	add("*.cdn.example", false);
	add("db.example:5432+private", false);
	add("*", false);
	cr_assert(answer_ok("api.example", "93.184.216.34", false, &why));
	cr_assert(answer_ok("x.cdn.example", "2606:4700::1", false, &why));
	cr_assert_not(answer_ok("api.example", "10.0.0.1", false, &why));
	cr_assert_eq(why, EGRESS_BY_SPECIAL);
	cr_assert_not(answer_ok("x.cdn.example", "192.168.0.1", false, &why));
	cr_assert_not(answer_ok("other.example", "172.16.0.1", false, &why),
		      "allowed by `*`");
	cr_assert_not(answer_ok("api.example", "169.254.169.254", false, &why));
	cr_assert_eq(why, EGRESS_BY_SPECIAL);
	cr_assert_not(answer_ok("api.example", "fe80::1", false, &why));
	/* +private: its name's private answers pass, whatever the port */
	cr_assert(answer_ok("DB.example.", "10.0.0.1", false, &why));
	cr_assert(answer_ok("db.example", "fd00::5", false, &why));
	cr_assert(answer_ok("db.example", "::ffff:192.168.3.4", false, &why));
	cr_assert_not(answer_ok("db.example", "169.254.169.254", false, &why),
		      "link-local is not private");
	cr_assert_eq(why, EGRESS_BY_SPECIAL);
	cr_assert_not(answer_ok("db.example", "100.100.100.200", false, &why),
		      "metadata in the shared range is not private");
	cr_assert_eq(why, EGRESS_BY_SPECIAL);
	cr_assert_not(answer_ok("db.example", "fd00:ec2::254", false, &why),
		      "metadata in the unique-local range is not private");
	cr_assert_not(
		answer_ok("db.example", "::ffff:100.100.100.200", false, &why));
	/* never the host's own, loopback or unspecified */
	cr_assert_not(answer_ok("db.example", "10.0.0.1", true, &why));
	cr_assert_eq(why, EGRESS_BY_HOST);
	cr_assert_not(answer_ok("api.example", "93.184.216.9", true, &why));
	cr_assert_eq(why, EGRESS_BY_HOST);
	cr_assert_not(answer_ok("db.example", "127.0.0.1", false, &why));
	cr_assert_eq(why, EGRESS_BY_HOST);
	cr_assert_not(answer_ok("db.example", "::ffff:127.0.0.2", false, &why));
	cr_assert_not(answer_ok("db.example", "::1", false, &why));
	cr_assert_not(answer_ok("db.example", "0.0.0.0", false, &why));
	/* an address rule that names the range keeps the answer (the
	 * connection is then that rule's to allow) */
	add("10.20.0.0/16:22", false);
	cr_assert(answer_ok("api.example", "10.20.1.1", false, &why));
	cr_assert_not(answer_ok("api.example", "10.21.1.1", false, &why));
	add("127.0.0.0/8", false);
	cr_assert_not(answer_ok("api.example", "127.0.0.1", false, &why),
		      "not even then: a name never leads to the host");
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
		{ "example.com+privat", "unknown option `+privat`" },
		{ "example.com+", "unknown option `+`" },
		{ "example.com+private+private", "not an address, CIDR" },
		{ "example.com+private:443", "unknown option" },
		{ "10.0.0.0/8+private", "`+private` is for an exact name" },
		{ "[fd00::1]:80+private", "`+private` is for an exact name" },
		{ "*+private", "`+private` is for an exact name" },
		{ "*.corp:443+private", "`+private` is for an exact name" },
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
	cr_assert_not(r.allow_private);
	cr_assert_eq(egress_rule_parse("DB.lan:5432/tcp+PRIVATE", false, &r,
				       err, sizeof(err)),
		     0, "%s", err);
	cr_assert_eq(r.kind, EGRESS_NAME);
	cr_assert_str_eq(r.name, "db.lan");
	cr_assert_eq(r.port_lo, 5432);
	cr_assert_eq(r.protos, EGRESS_TCP);
	cr_assert(r.allow_private);
	cr_assert_str_eq(r.text, "DB.lan:5432/tcp+PRIVATE", "as written");
	cr_assert_eq(egress_rule_parse("db.lan+private", true, &r, err,
				       sizeof(err)),
		     -EINVAL);
	cr_assert(strstr(err, "`+private` is for allow rules"), "%s", err);
	/* the policy file's {"private": true} */
	cr_assert_eq(egress_rule_parse("db.lan", false, &r, err, sizeof(err)),
		     0);
	cr_assert_eq(egress_rule_mark_private(&r, err, sizeof(err)), 0);
	cr_assert(r.allow_private);
	cr_assert_str_eq(r.text, "db.lan+private");
	cr_assert_eq(egress_rule_mark_private(&r, err, sizeof(err)), 0);
	cr_assert_str_eq(r.text, "db.lan+private", "marked once");
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
