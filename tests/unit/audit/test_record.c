/* tests/unit/audit/test_record.c: every audit record is one valid JSON
 * object, whatever a guest put in it (dns_name_breaks_json: a query name
 * of 253 quotes, escaped, ran past its buffer and the record was cut
 * unclosed; exec_argv0_forge: an argv0 went in unquoted). Names of
 * hostile bytes go through the record builder (netpol_audit_body,
 * audit_format) and json-c parses the line. */
#include <criterion/criterion.h>

#include <json-c/json.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util.h"
#include "netstack/netpol.h"
#include "sentry/audit.h"

TestSuite(audit_record);

static size_t format(char *buf, size_t cap, const char *sb, const char *fmt,
		     ...) MOAT_PRINTF(4, 5);
static size_t format(char *buf, size_t cap, const char *sb, const char *fmt,
		     ...)
{
	va_list ap;
	size_t n;

	va_start(ap, fmt);
	n = audit_format(buf, cap, sb, fmt, ap);
	va_end(ap);
	return n;
}

/* line (n bytes, its '\n' last) is one JSON object: returned, to put. */
static json_object *parse_line(const char *line, size_t n)
{
	struct json_tokener *tok = json_tokener_new();
	json_object *o;

	cr_assert(n > 1 && line[n - 1] == '\n', "one line: %.*s", (int)n, line);
	cr_assert(!memchr(line, '\n', n - 1), "one line: %.*s", (int)n, line);
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT |
					    JSON_TOKENER_VALIDATE_UTF8);
	o = json_tokener_parse_ex(tok, line, (int)n - 1);
	cr_assert(o && json_tokener_get_error(tok) == json_tokener_success &&
			  json_object_is_type(o, json_type_object),
		  "not JSON: %.*s", (int)n, line);
	cr_assert_eq(json_tokener_get_parse_end(tok), n - 1,
		     "one object, nothing after it");
	json_tokener_free(tok);
	return o;
}

static const char *member(json_object *o, const char *k)
{
	json_object *v;

	return json_object_object_get_ex(o, k, &v) ? json_object_get_string(v) :
						     NULL;
}

/* A name of n bytes from the bytes a guest finds worst. */
static void hostile(char *s, size_t n, unsigned *seed)
{
	static const char worst[] = "\"\\\n\r\t\x01\x1f\x7f\xc3\xa9\xe2\x82"
				    "\xac\xf0\x9f\x98\x80\xff\xc0\x80"
				    "a";

	for (size_t i = 0; i < n; i++)
		s[i] = rand_r(seed) % 4 ?
			       worst[rand_r(seed) % (sizeof(worst) - 1)] :
			       (char)(1 + rand_r(seed) % 255);
	s[n] = 0;
}

Test(audit_record, dns_names_of_quotes_are_json)
{
	char name[254], line[AUDIT_LINE_MAX], body[AUDIT_LINE_MAX];
	const char fill[] = { '"', '\\', '\x01', '\xff' };

	for (size_t f = 0; f < sizeof(fill); f++) {
		memset(name, fill[f], 253);
		name[253] = 0;
		netpol_audit_body(body, sizeof(body), 7, "dns", "dns", NULL,
				  name, NULL, false, "default-deny", NULL);
		size_t n = format(line, sizeof(line), "\"box\"", "%s", body);
		json_object *o = parse_line(line, n);
		cr_assert_str_eq(member(o, "event"), "dns");
		cr_assert_str_eq(member(o, "sandbox"), "box");
		cr_assert_str_eq(member(o, "verdict"), "deny");
		const char *got = member(o, "name");
		cr_assert(got && strlen(got) > 0 && strlen(got) <= 253);
		if (fill[f] != '\xff')
			for (const char *p = got; *p; p++)
				cr_assert_eq(*p, fill[f], "cut, not changed");
		json_object_put(o);
	}
}

Test(audit_record, hostile_names_fuzzed)
{
	char name[300], dest[100], line[AUDIT_LINE_MAX], body[AUDIT_LINE_MAX];
	unsigned seed = 11;

	for (int i = 0; i < 20000; i++) {
		hostile(name, (size_t)rand_r(&seed) % 254, &seed);
		hostile(dest, (size_t)rand_r(&seed) % 60, &seed);
		netpol_audit_body(body, sizeof(body), i, "egress", "tcp", dest,
				  i % 3 ? name : NULL, NULL, i & 1, "rule",
				  i % 5 ? NULL : "link");
		size_t n = format(line, sizeof(line), "\"1234\"", "%s", body);
		json_object_put(parse_line(line, n));
	}
}

Test(audit_record, json_quote_cuts_between_escapes)
{
	char s[64], out[64];
	unsigned seed = 5;

	for (int i = 0; i < 50000; i++) {
		size_t cap = 8 + (size_t)rand_r(&seed) % 50;
		hostile(s, (size_t)rand_r(&seed) % 60, &seed);
		size_t n = json_quote(out, cap, s);
		cr_assert(n < cap && out[n] == 0);
		/* a string as a record's member is */
		char rec[128];
		snprintf(rec, sizeof(rec), "{\"s\":%s}\n", out);
		json_object_put(parse_line(rec, strlen(rec)));
	}
	cr_assert_eq(json_quote(out, sizeof(out), NULL), 4);
	cr_assert_str_eq(out, "null");
	json_quote(out, sizeof(out), "a\"b\\c\n\xc3\xa9\xff");
	cr_assert_str_eq(out, "\"a\\\"b\\\\c\\u000a\xc3\xa9\\u00ff\"");
}

/* A body too long for a line is its event alone, said to be cut: never
 * a line cut off. */
Test(audit_record, a_record_too_long_is_its_event_alone)
{
	char big[3 * AUDIT_LINE_MAX], line[AUDIT_LINE_MAX];

	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = 0;
	size_t n = format(line, sizeof(line), "\"box\"",
			  "\"event\":\"exec\",\"argv0\":\"%s\"", big);
	json_object *o = parse_line(line, n);
	cr_assert_str_eq(member(o, "event"), "exec");
	cr_assert_str_eq(member(o, "truncated"), "true");
	cr_assert_null(member(o, "argv0"));
	json_object_put(o);
	n = format(line, sizeof(line), "\"box\"", "%s", big);
	json_object_put(parse_line(line, n));
}
