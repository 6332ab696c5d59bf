/* tests/unit/policy/test_policy.c: the policy file: what it accepts, and
 * that every refusal names the field and the line. */
#include <criterion/criterion.h>

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "policy/policy.h"

static struct moat_policy pol;

static void fini(void)
{
	policy_free(&pol);
}

TestSuite(policy, .fini = fini);

static int parse(const char *text, struct moat_error *err)
{
	memset(err, 0, sizeof(*err));
	return policy_parse(text, strlen(text), "p.json", &pol, err);
}

Test(policy, a_whole_file)
{
	struct moat_error err;
	const char *text = "{\n"
			   "  \"egress\": {\n"
			   "    \"allow\": [\"pypi.org:443\",\n"
			   "              \"*.pythonhosted.org:443\"],\n"
			   "    \"deny\": [\"169.254.169.254\"]\n"
			   "  }\n"
			   "}\n";

	cr_assert_eq(parse(text, &err), 0, "%s", err.msg);
	cr_assert_eq(pol.egress.n, 3);
	cr_assert_str_eq(pol.egress.rules[0].text, "pypi.org:443");
	cr_assert_eq(pol.egress.rules[0].line, 3);
	cr_assert_eq(pol.egress.rules[1].line, 4);
	cr_assert(pol.egress.rules[2].deny);
	cr_assert_eq(pol.egress.rules[2].line, 5);
}

Test(policy, empty_documents)
{
	struct moat_error err;

	cr_assert_eq(parse("{}", &err), 0, "%s", err.msg);
	cr_assert_eq(pol.egress.n, 0);
	cr_assert_eq(parse("{\"egress\": {}}", &err), 0, "%s", err.msg);
	cr_assert_eq(parse("{\"egress\": {\"allow\": []}}\n\n", &err), 0);
}

Test(policy, refusals_name_the_field_and_the_line)
{
	static const struct {
		const char *text, *says;
	} bad[] = {
		{ "", "p.json:1: unexpected end of file" },
		{ "{\n\"egress\": {\n\"allow\": [\"a.com\",]\n}}",
		  "p.json:3:" },
		{ "[]", "p.json:1: a JSON object expected" },
		{ "{} {}", "p.json:1: " },
		{ "{}\n\n x", "p.json:3: " },
		{ "{\n  \"egres\": {}\n}", "p.json:2: egres: unknown field" },
		{ "{\"egress\": []}", "p.json:1: egress: an object expected" },
		{ "{\"egress\":\n {\"allow\": \"x.com\"}}",
		  "p.json:2: egress.allow: a list of destinations expected" },
		{ "{\"egress\": {\n\"allow\": [\n\"a.com\",\n 7]}}",
		  "p.json:4: egress.allow[1]: a destination (a string, or an "
		  "object with \"dest\") expected" },
		{ "{\"egress\": {\"allow\": [\"a.com\"],\n"
		  "\"deny\": [\"b.com\",\n\"c.com:99999\"]}}",
		  "p.json:3: egress.deny[1]: `c.com:99999`: bad port" },
		{ "{\"egress\": {\"allow\": [\"a.com\"], \"allw\": []}}",
		  "p.json:1: egress.allw: unknown field" },
		{ "{\"egress\": {\n\"deny\": [{\"x\": [1, 2]}, \"ok.com\"],\n"
		  "\"allow\": [\"fine.com\", \"**\"]}}",
		  "p.json:2: egress.deny[0].x: unknown field (dest, private)" },
		{ "{\"egress\": {\"deny\": [\"ok.com\"],\n"
		  "\"allow\": [\"fine.com\",\n \"**\"]}}",
		  "p.json:3: egress.allow[1]: `**`" },
	};
	struct moat_error err;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		cr_assert_lt(parse(bad[i].text, &err), 0, "accepted: %s",
			     bad[i].text);
		cr_assert(strstr(err.msg, bad[i].says),
			  "case %zu: wanted `%s`, got `%s`", i, bad[i].says,
			  err.msg);
	}
}

Test(policy, a_rule_as_an_object_opts_in_to_private_answers)
{
	struct moat_error err;
	const char *text =
		"{\"egress\": {\"allow\": [\n"
		"  {\"dest\": \"db.internal:5432\", \"private\": true},\n"
		"  {\"private\": false,\n"
		"   \"dest\": \"api.example.com\"},\n"
		"  \"cache.internal:6379/tcp+private\"]}}";

	cr_assert_eq(parse(text, &err), 0, "%s", err.msg);
	cr_assert_eq(pol.egress.n, 3);
	cr_assert_str_eq(pol.egress.rules[0].text, "db.internal:5432+private");
	cr_assert(pol.egress.rules[0].allow_private);
	cr_assert_eq(pol.egress.rules[0].port_lo, 5432);
	cr_assert_eq(pol.egress.rules[0].line, 2);
	cr_assert_str_eq(pol.egress.rules[1].text, "api.example.com");
	cr_assert_not(pol.egress.rules[1].allow_private);
	cr_assert_eq(pol.egress.rules[1].line, 3);
	cr_assert(pol.egress.rules[2].allow_private);
	cr_assert_eq(pol.egress.rules[2].protos, EGRESS_TCP);
}

Test(policy, the_private_opt_in_is_checked_where_it_is_written)
{
	static const struct {
		const char *text, *says;
	} bad[] = {
		{ "{\"egress\": {\"allow\": [\n{\"private\": true}]}}",
		  "p.json:2: egress.allow[0]: no \"dest\"" },
		{ "{\"egress\": {\"allow\": [{\"dest\":\n 5}]}}",
		  "p.json:2: egress.allow[0].dest: a destination (string) "
		  "expected" },
		{ "{\"egress\": {\"allow\": [\"a.com\", {\"dest\": \"x.com\",\n"
		  "\"private\": \"yes\"}]}}",
		  "p.json:2: egress.allow[1].private: true or false expected" },
		{ "{\"egress\": {\"allow\": [{\"dest\": \"x.com\", \"port\": 1}]}}",
		  "p.json:1: egress.allow[0].port: unknown field (dest, "
		  "private)" },
		{ "{\"egress\": {\"allow\": [\n{\"dest\": \"10.0.0.0/8\",\n"
		  "\"private\": true}]}}",
		  "p.json:3: egress.allow[0].private: `10.0.0.0/8`: `+private` "
		  "is for an exact name" },
		{ "{\"egress\": {\"allow\": [{\"dest\": \"*.corp\", \"private\": "
		  "true}]}}",
		  "egress.allow[0].private: `*.corp`: `+private` is for an "
		  "exact name" },
		{ "{\"egress\": {\"deny\": [{\"dest\": \"x.com\",\n"
		  "\"private\": true}]}}",
		  "p.json:2: egress.deny[0].private: `x.com`: `+private` is for "
		  "allow rules" },
		{ "{\"egress\": {\"allow\": [\n{\"dest\": \"x.com:0\"}]}}",
		  "p.json:2: egress.allow[0].dest: `x.com:0`: bad port" },
		{ "{\"egress\": {\"allow\": [\n\"x.com+privat\"]}}",
		  "p.json:2: egress.allow[0]: `x.com+privat`: unknown option "
		  "`+privat` (+private)" },
		{ "{\"egress\": {\"deny\": [\"x.com+private\"]}}",
		  "egress.deny[0]: `x.com+private`: `+private` is for allow "
		  "rules" },
	};
	struct moat_error err;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		cr_assert_lt(parse(bad[i].text, &err), 0, "accepted: %s",
			     bad[i].text);
		cr_assert(strstr(err.msg, bad[i].says),
			  "case %zu: wanted `%s`, got `%s`", i, bad[i].says,
			  err.msg);
	}
}

Test(policy, a_refused_document_leaves_the_old_policy)
{
	struct moat_error err;

	cr_assert_eq(parse("{\"egress\": {\"allow\": [\"a.com\"]}}", &err), 0);
	cr_assert_lt(parse("{\"egress\": {\"allow\": [\"b.com\", 1]}}", &err),
		     0);
	cr_assert_eq(pol.egress.n, 1);
	cr_assert_str_eq(pol.egress.rules[0].text, "a.com");
}

Test(policy, nul_bytes_and_size)
{
	struct moat_error err = { 0 };
	static char big[POLICY_FILE_MAX + 2];

	cr_assert_lt(policy_parse("{\n}\0", 4, "p.json", &pol, &err), 0);
	cr_assert(strstr(err.msg, "p.json:2: a NUL byte"), "%s", err.msg);
	memset(big, ' ', sizeof(big));
	cr_assert_lt(policy_parse(big, sizeof(big), "p.json", &pol, &err), 0);
	cr_assert(strstr(err.msg, "larger than"), "%s", err.msg);
}

Test(policy, deep_nesting_is_refused_not_recursed)
{
	struct moat_error err;
	char text[4096];
	size_t i;

	for (i = 0; i < 2000; i++)
		text[i] = '[';
	text[i] = 0;
	cr_assert_lt(parse(text, &err), 0);
}

Test(policy, command_line_rules_and_show)
{
	struct moat_error err = { 0 };
	char *json;

	cr_assert_eq(policy_add_rule(&pol, "pypi.org:443", false, &err), 0);
	cr_assert_eq(policy_add_rule(&pol, "10.0.0.0/8", true, &err), 0);
	cr_assert_eq(policy_add_rule(&pol, "db.lan:5432+private", false, &err),
		     0);
	cr_assert_lt(policy_add_rule(&pol, "x.com:0", false, &err), 0);
	cr_assert(strstr(err.msg, "--allow: `x.com:0`: bad port"), "%s",
		  err.msg);
	cr_assert_lt(policy_add_rule(&pol, "10.1.2.3+private", false, &err), 0);
	cr_assert(strstr(err.msg, "--allow: `10.1.2.3+private`: `+private` "
				  "is for an exact name"),
		  "%s", err.msg);
	json = policy_to_json(&pol);
	cr_assert_not_null(json);
	cr_assert(strstr(json, "\"pypi.org:443\""), "%s", json);
	cr_assert(strstr(json, "\"10.0.0.0/8\""), "%s", json);
	cr_assert(strstr(json, "\"db.lan:5432+private\""), "%s", json);
	/* what show prints parses back to the same rules */
	policy_free(&pol);
	cr_assert_eq(parse(json, &err), 0, "%s", err.msg);
	cr_assert_eq(pol.egress.n, 3);
	cr_assert_str_eq(pol.egress.rules[0].text, "pypi.org:443");
	cr_assert_not(pol.egress.rules[0].deny);
	cr_assert_str_eq(pol.egress.rules[1].text, "db.lan:5432+private");
	cr_assert(pol.egress.rules[1].allow_private);
	cr_assert_str_eq(pol.egress.rules[2].text, "10.0.0.0/8");
	cr_assert(pol.egress.rules[2].deny);
	free(json);
}

Test(policy, load_file_errors)
{
	struct moat_error err = { 0 };
	char path[] = "/tmp/moat-policy-XXXXXX";
	int fd = mkstemp(path);

	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, "{\"egress\": {\"allow\": [\"a.com\"]}}", 32),
		     32);
	close(fd);
	cr_assert_eq(policy_load_file(path, &pol, &err), 0, "%s", err.msg);
	cr_assert_eq(pol.egress.n, 1);
	unlink(path);
	cr_assert_lt(policy_load_file(path, &pol, &err), 0);
	cr_assert(strstr(err.msg, "No such file"), "%s", err.msg);
	cr_assert_lt(policy_load_file("/tmp", &pol, &err), 0);
	cr_assert(strstr(err.msg, "not a regular file"), "%s", err.msg);
}
