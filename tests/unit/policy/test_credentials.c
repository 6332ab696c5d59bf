/* tests/unit/policy/test_credentials.c: the credentials part of a policy:
 * --secret, --inspect, --passthrough, the policy file's fields, the
 * whole-policy checks (each refusal naming the field and its line) and
 * the host matcher. */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/credentials.h"
#include "policy/policy.h"

static struct moat_policy pol;
static struct cred_policy cp;

static void fini(void)
{
	policy_free(&pol);
	cred_free(&cp);
}

TestSuite(credentials, .fini = fini);

static int parse(const char *text, struct moat_error *err)
{
	policy_free(&pol);
	memset(err, 0, sizeof(*err));
	return policy_parse(text, strlen(text), "p.json", &pol, err);
}

/* ---- --secret ------------------------------------------------------------ */

Test(credentials, a_secret_option_with_its_defaults)
{
	struct moat_error err = { 0 };
	const struct credential *c;

	cr_assert_eq(cred_parse_arg(&cp,
				    "API_KEY=env:REAL_KEY@api.example,"
				    "*.Example.ORG.",
				    &err),
		     0, "%s", err.msg);
	cr_assert_eq(cp.n, 1);
	c = &cp.v[0];
	cr_assert_str_eq(c->name, "API_KEY");
	cr_assert_eq(c->source, CRED_FROM_ENV);
	cr_assert_str_eq(c->src, "REAL_KEY");
	cr_assert_str_eq(c->from, "env:REAL_KEY");
	cr_assert_eq(c->nhosts, 2);
	cr_assert_str_eq(c->hosts[0], "api.example");
	cr_assert_str_eq(c->hosts[1], "*.example.org");
	cr_assert_eq(c->where, CRED_IN_HEADER | CRED_IN_BASIC);
	cr_assert_eq(c->nheaders, 3);
	cr_assert_str_eq(c->headers[0], "authorization");
	cr_assert_str_eq(c->headers[1], "x-api-key");
	cr_assert_str_eq(c->headers[2], "proxy-authorization");
	cr_assert_eq(c->nquery, 0);
	cr_assert_eq(c->nports, 2);
	cr_assert_eq(c->ports[0], 443);
	cr_assert_eq(c->ports[1], 80);
	cr_assert_null(c->placeholder);
	cr_assert_null(c->inject);
	cr_assert_not(c->plain_http);
	cr_assert_not(c->require);
	cr_assert_eq(c->line, 0);
	cr_assert_eq(cred_validate(&cp, NULL, &err), 0, "%s", err.msg);
	cr_assert_eq(cred_parse_arg(&cp, "NODE_EXTRA_CA_CERTS=env:X@a.example",
				    &err),
		     0);
	cr_assert_lt(cred_validate(&cp, NULL, &err), 0);
	cr_assert_str_eq(err.msg,
			 "--secret NODE_EXTRA_CA_CERTS: "
			 "`NODE_EXTRA_CA_CERTS` is moat's: it points "
			 "the guest's TLS clients at the sandbox's CA");
}

Test(credentials, file_and_fd_sources)
{
	struct moat_error err = { 0 };

	/* the last '@' ends the source: a path may hold one */
	cr_assert_eq(cred_parse_arg(&cp, "K=file:/run/keys/a@b@h.example",
				    &err),
		     0, "%s", err.msg);
	cr_assert_eq(cp.v[0].source, CRED_FROM_FILE);
	cr_assert_str_eq(cp.v[0].src, "/run/keys/a@b");
	cr_assert_str_eq(cp.v[0].hosts[0], "h.example");
	cr_assert_eq(cred_parse_arg(&cp, "_K2=fd:7@h.example", &err), 0, "%s",
		     err.msg);
	cr_assert_eq(cp.v[1].source, CRED_FROM_FD);
	cr_assert_eq(cp.v[1].fd, 7);
	cr_assert_null(cp.v[1].src);
	cr_assert_str_eq(cp.v[1].from, "fd:7");
}

Test(credentials, secret_option_refusals)
{
	static const struct {
		const char *arg, *says;
	} bad[] = {
		{ "API_KEY", "--secret: expected NAME=SOURCE@HOST[,HOST...] "
			     "(SOURCE: env:VAR, file:PATH or fd:N)" },
		{ "1KEY=env:A@h.example",
		  "--secret: NAME (before `=`) is not a variable's name "
		  "([A-Za-z_][A-Za-z0-9_]*, at most 128 bytes)" },
		{ "=env:A@h.example", "--secret: NAME (before `=`) is not" },
		{ "A-B=env:A@h.example", "--secret: NAME (before `=`) is not" },
		{ "API_KEY=sk-live-abc@api.example",
		  "--secret API_KEY: the source must be env:VAR, file:PATH or "
		  "fd:N (a value is never written in the policy or on the "
		  "command line, where other processes can read it)" },
		{ "API_KEY=value:sk@api.example",
		  "--secret API_KEY: the source must be" },
		{ "API_KEY=env:@api.example",
		  "--secret API_KEY: env:VAR: VAR is not a variable's name" },
		{ "API_KEY=env:A B@api.example",
		  "--secret API_KEY: env:VAR: VAR is not" },
		{ "API_KEY=file:key@api.example",
		  "--secret API_KEY: file:PATH: PATH must be an absolute "
		  "path" },
		{ "API_KEY=fd:2@api.example",
		  "--secret API_KEY: fd:N: N must be 3 or more" },
		{ "API_KEY=fd:x@api.example",
		  "--secret API_KEY: fd:N: N must be a number" },
		{ "API_KEY=fd:3x@api.example",
		  "--secret API_KEY: fd:N: N must be a number" },
		{ "API_KEY=fd:99999999999@api.example",
		  "--secret API_KEY: fd:N: N must be a number" },
		{ "API_KEY=env:REAL",
		  "--secret API_KEY: no hosts: expected "
		  "NAME=SOURCE@HOST[,HOST...] (a secret without hosts would "
		  "be sent anywhere)" },
		{ "API_KEY=env:REAL@", "--secret API_KEY: no hosts" },
		{ "API_KEY=env:REAL@a.example,",
		  "--secret API_KEY: an empty host in `a.example,`" },
		{ "API_KEY=env:REAL@,a.example",
		  "--secret API_KEY: an empty host in `,a.example`" },
		{ "API_KEY=env:REAL@a.example,,b.example",
		  "--secret API_KEY: an empty host in" },
		{ "API_KEY=env:REAL@*",
		  "--secret API_KEY: `*` is for inspect only: name the "
		  "hosts" },
		{ "API_KEY=env:REAL@a..example",
		  "--secret API_KEY: `a..example` is not a DNS name or "
		  "*.domain" },
		{ "API_KEY=env:REAL@*.",
		  "--secret API_KEY: `*.` is not a DNS name or *.domain" },
		{ "API_KEY=env:REAL@a.*.example",
		  "--secret API_KEY: `a.*.example` is not a DNS name" },
		{ "API_KEY=env:REAL@10.0.0.1",
		  "--secret API_KEY: `10.0.0.1` is not a DNS name" },
		{ "API_KEY=env:REAL@h.example:443",
		  "--secret API_KEY: `h.example:443` is not a DNS name" },
	};
	struct moat_error err;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(&err, 0, sizeof(err));
		cr_assert_lt(cred_parse_arg(&cp, bad[i].arg, &err), 0, "%s",
			     bad[i].arg);
		cr_assert_eq(err.code, EINVAL, "%s", bad[i].arg);
		cr_assert(!strncmp(err.msg, bad[i].says, strlen(bad[i].says)),
			  "%s: %s", bad[i].arg, err.msg);
		cr_assert_eq(cp.n, 0, "%s", bad[i].arg);
	}
}

/* Whoever wrote the value where its source belongs must not find it
 * again on the terminal or in a log. */
Test(credentials, a_refused_source_is_never_repeated)
{
	static const char *const args[] = {
		"TOKEN=ghp_s3cr3tvalue@github.com",
		"TOKEN=ghp_s3cr3tvalue",
		"TOKEN=env:ghp_s3cr3tvalue!@github.com",
		"TOKEN=fd:ghp_s3cr3tvalue@github.com",
		"ghp_s3cr3tvalue",
		"ghp-s3cr3tvalue=x@github.com",
	};
	struct moat_error err;
	size_t i;

	for (i = 0; i < sizeof(args) / sizeof(args[0]); i++) {
		memset(&err, 0, sizeof(err));
		cr_assert_lt(cred_parse_arg(&cp, args[i], &err), 0);
		cr_assert_not(strstr(err.msg, "s3cr3t"), "%s", err.msg);
	}
}

Test(credentials, too_many_secrets_and_hosts)
{
	struct moat_error err = { 0 };
	char arg[64], *big;
	size_t i, o;

	for (i = 0; i < CRED_MAX; i++) {
		snprintf(arg, sizeof(arg), "K%zu=env:V@h.example", i);
		cr_assert_eq(cred_parse_arg(&cp, arg, &err), 0, "%s", err.msg);
	}
	cr_assert_lt(cred_parse_arg(&cp, "LAST=env:V@h.example", &err), 0);
	cr_assert_str_eq(err.msg,
			 "--secret LAST: too many credentials (at most 64)");
	cred_free(&cp);

	big = malloc(16 + (CRED_HOSTS_MAX + 1) * 16);
	cr_assert_not_null(big);
	o = (size_t)sprintf(big, "K=env:V@");
	for (i = 0; i <= CRED_HOSTS_MAX; i++)
		o += (size_t)sprintf(big + o, "%sh%zu.example", i ? "," : "",
				     i);
	cr_assert_lt(cred_parse_arg(&cp, big, &err), 0);
	cr_assert_str_eq(err.msg, "--secret K: too many hosts (at most 64)");
	/* the same host twice is one */
	cr_assert_eq(cred_parse_arg(&cp, "K=env:V@a.example,A.example", &err),
		     0);
	cr_assert_eq(cp.v[0].nhosts, 1);
	free(big);
}

/* ---- --inspect, --passthrough --------------------------------------------- */

Test(credentials, inspect_and_passthrough_options)
{
	struct moat_error err = { 0 };

	cr_assert_eq(cred_add_inspect(&cp, "*", &err), 0, "%s", err.msg);
	cr_assert_eq(cred_add_inspect(&cp, "API.Other.Example", &err), 0);
	cr_assert_eq(cred_add_inspect(&cp, "api.other.example.", &err), 0);
	cr_assert_eq(cp.ninspect, 2);
	cr_assert_str_eq(cp.inspect[1], "api.other.example");
	cr_assert_eq(cred_add_passthrough(&cp, "*.Pinned.example", &err), 0);
	cr_assert_str_eq(cp.passthrough[0], "*.pinned.example");

	cr_assert_lt(cred_add_passthrough(&cp, "*", &err), 0);
	cr_assert_str_eq(err.msg, "--passthrough: `*` is for inspect only: "
				  "name the hosts");
	cr_assert_lt(cred_add_inspect(&cp, "a b", &err), 0);
	cr_assert_str_eq(err.msg,
			 "--inspect: `a b` is not a DNS name or *.domain");
	cr_assert_lt(cred_add_passthrough(&cp, "", &err), 0);
	cr_assert_str_eq(err.msg,
			 "--passthrough: `` is not a DNS name or *.domain");
	cr_assert_lt(cred_add_inspect(&cp, "**.example", &err), 0);
	cr_assert_eq(cred_validate(&cp, NULL, &err), 0, "%s", err.msg);
}

/* ---- matching ------------------------------------------------------------ */

Test(credentials, host_matching)
{
	static const struct {
		const char *pattern, *host;
		bool match;
	} cases[] = {
		{ "api.example", "api.example", true },
		{ "api.example", "API.Example", true },
		{ "api.example", "api.example.", true },
		{ "api.example", "x.api.example", false },
		{ "api.example", "api.example.org", false },
		{ "api.example", "pi.example", false },
		{ "api.example", "", false },
		{ "*.example", "a.example", true },
		{ "*.example", "a.b.example", true },
		{ "*.example", "A.EXAMPLE.", true },
		{ "*.example", "example", false },
		{ "*.example", "aexample", false },
		{ "*.example", ".example", false },
		{ "*.example", "example.org", false },
		{ "*", "anything.example", true },
		{ "*", "", false },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		cr_assert_eq(cred_host_match(cases[i].pattern, cases[i].host),
			     cases[i].match, "%s %s", cases[i].pattern,
			     cases[i].host);
}

Test(credentials, which_flows_the_broker_takes)
{
	struct moat_error err = { 0 };
	const char *text = "{\"credentials\": ["
			   "{\"name\": \"A\", \"from\": \"env:A\","
			   " \"hosts\": [\"api.example\"], \"ports\": [8443]},"
			   "{\"name\": \"B\", \"from\": \"env:B\","
			   " \"hosts\": [\"*.b.example\", \"api.example\"]}],"
			   " \"inspect\": [\"*.inspect.example\"],"
			   " \"passthrough\": [\"pin.inspect.example\"]}";
	size_t idx[4];

	cr_assert_eq(parse(text, &err), 0, "%s", err.msg);
	cr_assert_eq(cred_for_host(&pol.cred, "api.example", idx, 4), 2);
	cr_assert_eq(idx[0], 0);
	cr_assert_eq(idx[1], 1);
	cr_assert_eq(cred_for_host(&pol.cred, "api.example", idx, 1), 1);
	cr_assert_eq(cred_for_host(&pol.cred, "x.b.example", idx, 4), 1);
	cr_assert_eq(idx[0], 1);
	cr_assert_eq(cred_for_host(&pol.cred, "b.example", idx, 4), 0);

	cr_assert(cred_brokered(&pol.cred, "api.example"));
	cr_assert(cred_brokered(&pol.cred, "y.b.example"));
	cr_assert(cred_brokered(&pol.cred, "a.inspect.example"));
	cr_assert_not(cred_brokered(&pol.cred, "pin.inspect.example"));
	cr_assert_not(cred_brokered(&pol.cred, "other.example"));
	cr_assert(cred_inspected(&pol.cred, "a.inspect.example"));
	cr_assert_not(cred_inspected(&pol.cred, "pin.inspect.example"));
	cr_assert_not(cred_inspected(&pol.cred, "api.example"));

	cr_assert(cred_port(&pol.cred, 8443));
	cr_assert(cred_port(&pol.cred, 443)); /* B's defaults */
	cr_assert(cred_port(&pol.cred, 80));
	cr_assert_not(cred_port(&pol.cred, 8080));
}

Test(credentials, inspect_all_but_passthrough)
{
	struct moat_error err = { 0 };

	cr_assert_eq(cred_add_inspect(&cp, "*", &err), 0);
	cr_assert_eq(cred_add_passthrough(&cp, "bank.example", &err), 0);
	cr_assert(cred_inspected(&cp, "any.example"));
	cr_assert(cred_brokered(&cp, "any.example"));
	cr_assert_not(cred_inspected(&cp, "bank.example"));
	cr_assert_not(cred_brokered(&cp, "bank.example"));
	cr_assert_not(cred_port(&cp, 443)); /* no credential: no ports */
}

/* ---- the policy file ----------------------------------------------------- */

Test(credentials, a_whole_file)
{
	struct moat_error err;
	const struct credential *c;
	const char *text =
		"{\n"
		"  \"egress\": {\"allow\": [\"api.example:443\"]},\n"
		"  \"credentials\": [\n"
		"    {\"name\": \"API_KEY\", \"from\": \"env:REAL_KEY\",\n"
		"     \"hosts\": [\"api.example\", \"*.API.example\"],\n"
		"     \"in\": [\"header:Authorization\", \"basic\",\n"
		"            \"query:api_key\", \"body\", \"header:X-Key\"],\n"
		"     \"placeholder\": \"sk-{rand}\",\n"
		"     \"ports\": [443, 8443, 443],\n"
		"     \"plain_http\": true,\n"
		"     \"inject\": {\"method\": \"post\", \"path\": \"/v1/\",\n"
		"                \"header\": \"Authorization\",\n"
		"                \"value\": \"Bearer {value}\"},\n"
		"     \"require\": true},\n"
		"    {\"name\": \"OTHER\", \"from\": \"file:/run/k\",\n"
		"     \"hosts\": [\"other.example\"]}\n"
		"  ],\n"
		"  \"inspect\": [\"api.other.example\", \"*\"],\n"
		"  \"passthrough\": [\"pinned.example\"]\n"
		"}\n";

	cr_assert_eq(parse(text, &err), 0, "%s", err.msg);
	cr_assert_eq(pol.egress.n, 1);
	cr_assert_eq(pol.cred.n, 2);
	c = &pol.cred.v[0];
	cr_assert_str_eq(c->name, "API_KEY");
	cr_assert_eq(c->line, 4);
	cr_assert_eq(c->hosts_line, 5);
	cr_assert_eq(c->nhosts, 2);
	cr_assert_str_eq(c->hosts[1], "*.api.example");
	cr_assert_eq(c->where, CRED_IN_HEADER | CRED_IN_BASIC | CRED_IN_QUERY |
				       CRED_IN_BODY);
	cr_assert_eq(c->nheaders, 2);
	cr_assert_str_eq(c->headers[0], "authorization");
	cr_assert_str_eq(c->headers[1], "x-key");
	cr_assert_eq(c->nquery, 1);
	cr_assert_str_eq(c->query[0], "api_key");
	cr_assert_str_eq(c->placeholder, "sk-{rand}");
	cr_assert_eq(c->nports, 2);
	cr_assert_eq(c->ports[0], 443);
	cr_assert_eq(c->ports[1], 8443);
	cr_assert(c->plain_http);
	cr_assert(c->require);
	cr_assert_not_null(c->inject);
	cr_assert_str_eq(c->inject->method, "POST");
	cr_assert_str_eq(c->inject->path, "/v1/");
	cr_assert_str_eq(c->inject->header, "Authorization");
	cr_assert_str_eq(c->inject->value, "Bearer {value}");

	c = &pol.cred.v[1];
	cr_assert_eq(c->source, CRED_FROM_FILE);
	cr_assert_str_eq(c->src, "/run/k");
	cr_assert_eq(c->line, 15);
	cr_assert_eq(c->where, CRED_IN_HEADER | CRED_IN_BASIC);
	cr_assert_eq(c->nheaders, 3);
	cr_assert_eq(c->nports, 2);
	cr_assert_eq(pol.cred.ninspect, 2);
	cr_assert_str_eq(pol.cred.inspect[1], "*");
	cr_assert_eq(pol.cred.npassthrough, 1);
}

Test(credentials, an_inject_rule_defaults_to_any_method_and_path)
{
	struct moat_error err;

	cr_assert_eq(parse("{\"credentials\": [{\"name\": \"A\", \"from\": "
			   "\"fd:3\", \"hosts\": [\"a.example\"], \"inject\": "
			   "{\"header\": \"X-Key\", \"value\": \"{value}\"}}]}",
			   &err),
		     0, "%s", err.msg);
	cr_assert_null(pol.cred.v[0].inject->method);
	cr_assert_str_eq(pol.cred.v[0].inject->path, "/");
}

Test(credentials, file_refusals_name_the_field_and_the_line)
{
	static const struct {
		const char *text, *says;
	} bad[] = {
		{ "{\"credentials\": {}}",
		  "p.json:1: credentials: a list of credentials expected" },
		{ "{\"credentials\": [\"API_KEY\"]}",
		  "p.json:1: credentials[0]: an object (name, from, hosts, "
		  "...) expected" },
		{ "{\"credentials\": [\n {\"name\": \"A\",\n  \"from\": "
		  "\"env:A\"}]}",
		  "p.json:2: credentials[0].hosts: required: a secret without "
		  "hosts would be sent to any host" },
		{ "{\"credentials\": [{\"name\": \"A\", \"from\": \"env:A\",\n"
		  "  \"hosts\": []}]}",
		  "p.json:2: credentials[0].hosts: empty: a list of hosts "
		  "(names, or *.domain) expected" },
		{ "{\"credentials\": [{\"name\": \"A\", \"from\": \"env:A\",\n"
		  "  \"hosts\": \"a.example\"}]}",
		  "p.json:2: credentials[0].hosts: a list of hosts (names, or "
		  "*.domain) expected" },
		{ "{\"credentials\": [{\"name\": \"A\", \"from\": \"env:A\",\n"
		  "  \"hosts\": [\"ok.example\",\n  \"*\"]}]}",
		  "p.json:3: credentials[0].hosts[1]: `*` is for inspect only: "
		  "name the hosts" },
		{ "{\"credentials\": [{\"name\": \"A\", \"from\": \"env:A\",\n"
		  "  \"hosts\": [7]}]}",
		  "p.json:2: credentials[0].hosts[0]: a host (a string) "
		  "expected" },
		{ "{\"credentials\": [{\"name\": \"A\", \"from\": \"env:A\",\n"
		  "  \"hosts\": [\"a\\u0000.evil\"]}]}",
		  "p.json:2: credentials[0].hosts[0]: a NUL byte" },
		{ "{\"credentials\": [{\"from\": \"env:A\", \"hosts\": "
		  "[\"a.example\"]}]}",
		  "p.json:1: credentials[0].name: required" },
		{ "{\"credentials\": [{\"name\": \"A\", \"hosts\": "
		  "[\"a.example\"]}]}",
		  "p.json:1: credentials[0].from: required" },
		{ "{\"credentials\": [{\"name\": \"2A\"}]}",
		  "p.json:1: credentials[0].name: `2A`: not a variable's name "
		  "([A-Za-z_][A-Za-z0-9_]*)" },
		{ "{\"credentials\": [{\"name\": 1}]}",
		  "p.json:1: credentials[0].name: a variable's name (a "
		  "string) expected" },
		{ "{\"credentials\": [{\"name\": \"A\",\n \"from\": "
		  "\"sk-live-1\"}]}",
		  "p.json:2: credentials[0].from: the source must be env:VAR, "
		  "file:PATH or fd:N" },
		{ "{\"credentials\": [{\"from\": \"file:rel\"}]}",
		  "p.json:1: credentials[0].from: file:PATH: PATH must be an "
		  "absolute path" },
		{ "{\"credentials\": [{\"from\": 3}]}",
		  "p.json:1: credentials[0].from: a source (env:VAR, "
		  "file:PATH or fd:N) expected" },
		{ "{\"credentials\": [{\"in\": []}]}",
		  "p.json:1: credentials[0].in: empty: a list of places "
		  "(header:NAME, basic, query:NAME, body) expected" },
		{ "{\"credentials\": [{\"in\": [\"cookie\"]}]}",
		  "p.json:1: credentials[0].in[0]: `cookie`: header:NAME, "
		  "basic, query:NAME or body expected" },
		{ "{\"credentials\": [{\"in\": [\"header:a b\"]}]}",
		  "p.json:1: credentials[0].in[0]: `a b`: not a header's "
		  "name" },
		{ "{\"credentials\": [{\"in\": [\"header:\"]}]}",
		  "p.json:1: credentials[0].in[0]: ``: not a header's name" },
		{ "{\"credentials\": [{\"in\": [\"query:a&b\"]}]}",
		  "p.json:1: credentials[0].in[0]: `a&b`: not a query "
		  "parameter's name" },
		{ "{\"credentials\": [{\"placeholder\": \"{rand}-{rand}\"}]}",
		  "p.json:1: credentials[0].placeholder: {rand} more than "
		  "once" },
		{ "{\"credentials\": [{\"placeholder\": \"sk {rand}\"}]}",
		  "p.json:1: credentials[0].placeholder: only printable ASCII "
		  "without spaces, and {rand}" },
		{ "{\"credentials\": [{\"placeholder\": \"\"}]}",
		  "p.json:1: credentials[0].placeholder: empty" },
		{ "{\"credentials\": [{\"placeholder\": \"short\"}]}",
		  "p.json:1: credentials[0].placeholder: shorter than 16 "
		  "bytes without {rand}: write {rand} for random letters and "
		  "digits" },
		{ "{\"credentials\": [{\"placeholder\": \"s\\u00e9-{rand}\"}]}",
		  "p.json:1: credentials[0].placeholder: only printable "
		  "ASCII" },
		{ "{\"credentials\": [{\"ports\": [0]}]}",
		  "p.json:1: credentials[0].ports[0]: a port (1 to 65535) "
		  "expected" },
		{ "{\"credentials\": [{\"ports\": [443, 65536]}]}",
		  "p.json:1: credentials[0].ports[1]: a port (1 to 65535) "
		  "expected" },
		{ "{\"credentials\": [{\"ports\": [\"443\"]}]}",
		  "p.json:1: credentials[0].ports[0]: a port (1 to 65535) "
		  "expected" },
		{ "{\"credentials\": [{\"ports\": []}]}",
		  "p.json:1: credentials[0].ports: empty: a list of ports "
		  "expected" },
		{ "{\"credentials\": [{\"plain_http\": 1}]}",
		  "p.json:1: credentials[0].plain_http: true or false "
		  "expected" },
		{ "{\"credentials\": [{\"require\": \"yes\"}]}",
		  "p.json:1: credentials[0].require: true or false expected" },
		{ "{\"credentials\": [{\"inject\": []}]}",
		  "p.json:1: credentials[0].inject: an object (method, path, "
		  "header, value) expected" },
		{ "{\"credentials\": [{\"inject\": {\"value\": \"x\"}}]}",
		  "p.json:1: credentials[0].inject.value: no {value}: it "
		  "stands for the secret" },
		{ "{\"credentials\": [{\"inject\": {\"value\": "
		  "\"a\\r\\n{value}\"}}]}",
		  "p.json:1: credentials[0].inject.value: a control "
		  "character" },
		{ "{\"credentials\": [{\"inject\": {\"header\": \"X: y\"}}]}",
		  "p.json:1: credentials[0].inject.header: `X: y`: not a "
		  "header's name" },
		{ "{\"credentials\": [{\"inject\": {\"method\": \"GE T\"}}]}",
		  "p.json:1: credentials[0].inject.method: `GE T`: not an "
		  "HTTP method" },
		{ "{\"credentials\": [{\"inject\": {\"path\": \"v1\"}}]}",
		  "p.json:1: credentials[0].inject.path: a path starting with "
		  "`/`, printable ASCII without spaces, expected" },
		{ "{\"credentials\": [{\"inject\": {\"url\": \"/\"}}]}",
		  "p.json:1: credentials[0].inject.url: unknown field "
		  "(method, path, header, value)" },
		{ "{\"credentials\": [{\"inject\":\n {\"header\": \"X\"}}]}",
		  "p.json:2: credentials[0].inject.value: required" },
		{ "{\"credentials\": [{\"inject\": {\"value\": \"{value}\"}}]}",
		  "p.json:1: credentials[0].inject.header: required" },
		{ "{\"credentials\": [{\"value\": \"sk-live\"}]}",
		  "p.json:1: credentials[0].value: unknown field (name, from, "
		  "hosts, in, placeholder, ports, plain_http, inject, "
		  "require)" },
		{ "{\"credentials\": [\n"
		  "  {\"name\": \"A\", \"from\": \"env:A\", \"hosts\": "
		  "[\"a.example\"]},\n"
		  "  {\"name\": \"A\", \"from\": \"env:B\", \"hosts\": "
		  "[\"b.example\"]}]}",
		  "p.json:3: credentials[1].name: `A` is named twice (also "
		  "line 2)" },
		{ "{\"credentials\": [{\"name\": \"SSL_CERT_FILE\", "
		  "\"from\": \"env:A\", \"hosts\": [\"a.example\"]}]}",
		  "p.json:1: credentials[0].name: `SSL_CERT_FILE` is moat's: "
		  "it points the guest's TLS clients at the sandbox's CA" },
		{ "{\"inspect\": \"a.example\"}",
		  "p.json:1: inspect: a list of hosts (names, or *.domain) "
		  "expected" },
		{ "{\"inspect\": [\"ok.example\",\n \"bad host\"]}",
		  "p.json:2: inspect[1]: `bad host` is not a DNS name or "
		  "*.domain" },
		{ "{\"passthrough\": [\"*\"]}",
		  "p.json:1: passthrough[0]: `*` is for inspect only: name "
		  "the hosts" },
		{ "{\"passthrough\": [null]}",
		  "p.json:1: passthrough[0]: a host (a string) expected" },
		{ "{\"secrets\": []}",
		  "p.json:1: secrets: unknown field (egress, credentials, "
		  "inspect, passthrough)" },
	};
	struct moat_error err;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cr_assert_lt(parse(bad[i].text, &err), 0, "%s", bad[i].text);
		cr_assert(!strncmp(err.msg, bad[i].says, strlen(bad[i].says)),
			  "%s\n  said: %s\n  want: %s", bad[i].text, err.msg,
			  bad[i].says);
		/* a refused file leaves nothing */
		cr_assert_eq(pol.cred.n, 0);
	}
}

Test(credentials, too_many_in_a_file)
{
	struct moat_error err;
	size_t cap = 64 + (CRED_MAX + 1) * 80, o, i;
	char *text = malloc(cap);

	cr_assert_not_null(text);
	o = (size_t)snprintf(text, cap, "{\"credentials\": [");
	for (i = 0; i <= CRED_MAX; i++)
		o += (size_t)snprintf(text + o, cap - o,
				      "%s\n{\"name\": \"K%zu\", \"from\": "
				      "\"env:V\", \"hosts\": [\"h.example\"]}",
				      i ? "," : "", i);
	snprintf(text + o, cap - o, "]}");
	cr_assert_lt(parse(text, &err), 0);
	cr_assert_str_eq(err.msg, "p.json:66: credentials[64]: too many "
				  "credentials (at most 64)");
	free(text);
}

/* ---- whole-policy checks ------------------------------------------------- */

Test(credentials, a_secret_bound_to_a_passed_through_host_is_refused)
{
	static const struct {
		const char *text, *says;
	} bad[] = {
		{ "{\"credentials\": [\n"
		  "  {\"name\": \"A\", \"from\": \"env:A\",\n"
		  "   \"hosts\": [\"a.example\", \"pin.example\"]}],\n"
		  " \"passthrough\": [\"pin.example\"]}",
		  "p.json:3: credentials[0].hosts: `pin.example` is passed "
		  "through (passthrough `pin.example`): a secret bound to a "
		  "host that is passed through would never be swapped" },
		/* the passthrough list first makes no difference */
		{ "{\"passthrough\": [\"*.example\"],\n"
		  " \"credentials\": [{\"name\": \"A\", \"from\": \"env:A\","
		  " \"hosts\": [\"a.example\"]}]}",
		  "p.json:2: credentials[0].hosts: `a.example` is passed "
		  "through (passthrough `*.example`)" },
		{ "{\"passthrough\": [\"x.a.example\"],\n"
		  " \"credentials\": [{\"name\": \"A\", \"from\": \"env:A\","
		  " \"hosts\": [\"*.a.example\"]}]}",
		  "p.json:2: credentials[0].hosts: `*.a.example` is passed "
		  "through (passthrough `x.a.example`)" },
		{ "{\"passthrough\": [\"*.example\"],\n"
		  " \"credentials\": [{\"name\": \"A\", \"from\": \"env:A\","
		  " \"hosts\": [\"*.a.example\"]}]}",
		  "p.json:2: credentials[0].hosts: `*.a.example` is passed "
		  "through (passthrough `*.example`)" },
		{ "{\"passthrough\": [\"*.a.example\"],\n"
		  " \"credentials\": [{\"name\": \"A\", \"from\": \"env:A\","
		  " \"hosts\": [\"*.example\"]}]}",
		  "p.json:2: credentials[0].hosts: `*.example` is passed "
		  "through (passthrough `*.a.example`)" },
		{ "{\"inspect\": [\"a.example\"],\n"
		  " \"passthrough\": [\"a.example\"]}",
		  "`a.example` is under both inspect and passthrough" },
		{ "{\"credentials\": [\n"
		  "  {\"name\": \"A\", \"from\": \"env:A\", \"hosts\": "
		  "[\"a.example\"],\n"
		  "   \"placeholder\": \"fixed-placeholder-1\"},\n"
		  "  {\"name\": \"B\", \"from\": \"env:B\", \"hosts\": "
		  "[\"b.example\"],\n"
		  "   \"placeholder\": \"fixed-placeholder-1\"}]}",
		  "p.json:4: credentials[1].placeholder: "
		  "`fixed-placeholder-1` is also p.json:2: "
		  "credentials[0].placeholder's placeholder" },
	};
	struct moat_error err;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cr_assert_lt(parse(bad[i].text, &err), 0, "%s", bad[i].text);
		cr_assert(!strncmp(err.msg, bad[i].says, strlen(bad[i].says)),
			  "%s\n  said: %s\n  want: %s", bad[i].text, err.msg,
			  bad[i].says);
	}
	/* names that only look alike do not overlap */
	cr_assert_eq(parse("{\"passthrough\": [\"*.pin.example\", "
			   "\"b.example\"], \"credentials\": [{\"name\": "
			   "\"A\", \"from\": \"env:A\", \"hosts\": "
			   "[\"pin.example\", \"*.a.example\", "
			   "\"xb.example\"]}]}",
			   &err),
		     0, "%s", err.msg);
}

/* The file and the command line together: what each alone allows. */
Test(credentials, the_file_and_the_command_line_together)
{
	struct moat_error err;
	const char *text = "{\"credentials\": [\n"
			   "  {\"name\": \"API_KEY\", \"from\": \"env:A\",\n"
			   "   \"hosts\": [\"api.example\"]}]}";

	cr_assert_eq(parse(text, &err), 0, "%s", err.msg);
	cr_assert_eq(cred_parse_arg(&pol.cred, "OTHER=env:B@b.example", &err),
		     0);
	cr_assert_eq(cred_validate(&pol.cred, "p.json", &err), 0, "%s",
		     err.msg);
	cr_assert_eq(cred_add_passthrough(&pol.cred, "*.example", &err), 0);
	cr_assert_lt(cred_validate(&pol.cred, "p.json", &err), 0);
	cr_assert_str_eq(err.msg,
			 "p.json:3: credentials[0].hosts: `api.example` is "
			 "passed through (passthrough `*.example`): a secret "
			 "bound to a host that is passed through would never "
			 "be swapped");

	cr_assert_eq(parse(text, &err), 0, "%s", err.msg);
	cr_assert_eq(cred_parse_arg(&pol.cred, "API_KEY=env:B@b.example", &err),
		     0);
	cr_assert_lt(cred_validate(&pol.cred, "p.json", &err), 0);
	cr_assert_str_eq(err.msg, "--secret API_KEY: `API_KEY` is named twice "
				  "(also p.json:2: credentials[0].name)");

	cr_assert_eq(parse(text, &err), 0, "%s", err.msg);
	cr_assert_eq(cred_parse_arg(&pol.cred, "B=env:B@b.example", &err), 0);
	cr_assert_eq(cred_add_passthrough(&pol.cred, "b.example", &err), 0);
	cr_assert_lt(cred_validate(&pol.cred, "p.json", &err), 0);
	cr_assert_str_eq(err.msg,
			 "--secret B: `b.example` is passed through "
			 "(passthrough `b.example`): a secret bound to a host "
			 "that is passed through would never be swapped");
}

/* ---- show, and a live set ------------------------------------------------ */

Test(credentials, show_prints_sources_never_values)
{
	struct moat_error err;
	struct moat_policy again = { 0 };
	char *json;

	setenv("H3_REAL_KEY", "s3cr3t-value", 1);
	cr_assert_eq(parse("{\"credentials\": [{\"name\": \"A\", \"from\": "
			   "\"env:H3_REAL_KEY\", \"hosts\": [\"a.example\"], "
			   "\"in\": [\"header:x-a\", \"query:k\", \"body\"], "
			   "\"placeholder\": \"sk-{rand}\", \"ports\": [8443],"
			   " \"plain_http\": true, \"inject\": {\"method\": "
			   "\"GET\", \"path\": \"/v1\", \"header\": \"X-A\", "
			   "\"value\": \"Key {value}\"}, \"require\": true}],"
			   " \"inspect\": [\"*\"], \"passthrough\": "
			   "[\"pin.example\"]}",
			   &err),
		     0, "%s", err.msg);
	cr_assert_eq(cred_parse_arg(&pol.cred, "B=fd:9@*.b.example", &err), 0);
	json = policy_to_json(&pol);
	cr_assert_not_null(json);
	cr_assert(strstr(json, "\"from\": \"env:H3_REAL_KEY\""), "%s", json);
	cr_assert(strstr(json, "\"from\": \"fd:9\""), "%s", json);
	cr_assert(strstr(json, "\"placeholder\": \"sk-{rand}\""), "%s", json);
	cr_assert(strstr(json, "\"inspect\": [\n    \"*\"\n  ]"), "%s", json);
	cr_assert(strstr(json, "\"passthrough\": [\n    \"pin.example\""), "%s",
		  json);
	cr_assert(strstr(json, "\"header:authorization\",\n        "
			       "\"header:x-api-key\",\n        "
			       "\"header:proxy-authorization\",\n        "
			       "\"basic\""),
		  "%s", json);
	cr_assert_not(strstr(json, "s3cr3t"), "%s", json);
	/* what show prints parses back to the same policy: policy set
	 * given it keeps the credentials */
	cr_assert_eq(policy_parse(json, strlen(json), "shown", &again, &err), 0,
		     "%s", err.msg);
	cr_assert(cred_equal(&pol.cred, &again.cred));
	again.cred.v[1].ports[0] = 444;
	cr_assert_not(cred_equal(&pol.cred, &again.cred));
	again.cred.v[1].ports[0] = 443;
	cr_assert(cred_equal(&pol.cred, &again.cred));
	again.cred.v[0].require = false;
	cr_assert_not(cred_equal(&pol.cred, &again.cred));
	again.cred.v[0].require = true;
	free(again.cred.v[0].inject->value);
	again.cred.v[0].inject->value = strdup("Other {value}");
	cr_assert_not(cred_equal(&pol.cred, &again.cred));
	policy_free(&again);
	free(json);

	/* an empty part shows nothing new */
	cr_assert_eq(parse("{}", &err), 0);
	json = policy_to_json(&pol);
	cr_assert_not(strstr(json, "credentials"), "%s", json);
	cr_assert_not(strstr(json, "inspect"), "%s", json);
	free(json);
	unsetenv("H3_REAL_KEY");
}

Test(credentials, equal_parts)
{
	struct moat_error err = { 0 };
	struct cred_policy b = { 0 };

	cr_assert(cred_equal(&cp, &b));
	cr_assert_eq(cred_parse_arg(&cp, "A=env:X@a.example", &err), 0);
	cr_assert_not(cred_equal(&cp, &b));
	cr_assert_eq(cred_parse_arg(&b, "A=env:Y@a.example", &err), 0);
	cr_assert_not(cred_equal(&cp, &b));
	cred_free(&b);
	cr_assert_eq(cred_parse_arg(&b, "A=env:X@a.example,b.example", &err),
		     0);
	cr_assert_not(cred_equal(&cp, &b));
	cred_free(&b);
	cr_assert_eq(cred_parse_arg(&b, "A=env:X@a.example", &err), 0);
	cr_assert(cred_equal(&cp, &b));
	cr_assert_eq(cred_add_inspect(&b, "i.example", &err), 0);
	cr_assert_not(cred_equal(&cp, &b));
	cred_free(&b);
}

/* Found by fuzz_policy: a query parameter's name longer than show's
 * buffer came out cut, and the policy shown was another one. */
Test(credentials, a_long_query_name_shows_whole)
{
	struct moat_error err;
	struct moat_policy again = { 0 };
	char text[512], name[CRED_NAME_MAX + 2], *json;

	memset(name, 'q', sizeof(name) - 1);
	name[CRED_NAME_MAX + 1] = 0;
	snprintf(text, sizeof(text),
		 "{\"credentials\": [{\"name\": \"A\", \"from\": \"env:A\", "
		 "\"hosts\": [\"a.example\"], \"in\": [\"query:%s\"]}]}",
		 name);
	cr_assert_lt(parse(text, &err), 0);
	cr_assert(strstr(err.msg, "p.json:1: credentials[0].in[0]: `qqq"), "%s",
		  err.msg);
	cr_assert(strstr(err.msg, "`: not a query parameter's name"), "%s",
		  err.msg);
	name[CRED_NAME_MAX] = 0;
	snprintf(text, sizeof(text),
		 "{\"credentials\": [{\"name\": \"A\", \"from\": \"env:A\", "
		 "\"hosts\": [\"a.example\"], \"in\": [\"query:%s\"]}]}",
		 name);
	cr_assert_eq(parse(text, &err), 0, "%s", err.msg);
	json = policy_to_json(&pol);
	cr_assert_not_null(json);
	cr_assert_eq(policy_parse(json, strlen(json), "shown", &again, &err), 0,
		     "%s", err.msg);
	cr_assert(cred_equal(&pol.cred, &again.cred));
	policy_free(&again);
	free(json);
}
