/* policy/policy.c: the policy file (JSON, parsed by json-c) and the
 * command-line rules.
 *
 * json-c builds no source positions into its objects, so messages about a
 * field find its line afterwards: locate() walks the already validated text
 * along the field's path (keys and indices) and counts newlines. It only
 * skips over strings and brackets; json-c alone decides what the document
 * means.
 */
#include "policy/policy.h"

#include <fcntl.h>
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

/* ---- where a field is --------------------------------------------------- */

struct jstep {
	const char *key; /* an object member, or NULL: */
	size_t index;	 /* an array element */
};

static const char *skip_ws(const char *s, const char *e)
{
	while (s < e && (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r'))
		s++;
	return s;
}

/* s at '"': past the closing quote. */
static const char *skip_string(const char *s, const char *e)
{
	for (s++; s < e && *s != '"'; s++)
		if (*s == '\\' && s + 1 < e)
			s++;
	return s < e ? s + 1 : e;
}

/* s at a value: past it (a string, an object or array with everything in
 * it, or a number or literal up to the next delimiter). */
static const char *skip_value(const char *s, const char *e)
{
	int depth = 0;

	while (s < e) {
		char c = *s;

		if (c == '"') {
			s = skip_string(s, e);
			if (depth == 0)
				return s;
			continue;
		}
		if (c == '{' || c == '[') {
			depth++;
		} else if (c == '}' || c == ']') {
			if (depth == 0)
				return s;
			if (--depth == 0)
				return s + 1;
		} else if (depth == 0 && (c == ',' || c == ' ' || c == '\t' ||
					  c == '\n' || c == '\r')) {
			return s;
		}
		s++;
	}
	return e;
}

/* Offset of the value at path, or of the closest enclosing one found. */
static size_t locate(const char *text, size_t len, const struct jstep *path,
		     size_t n)
{
	const char *s = text, *e = text + len, *k, *found;
	size_t i, idx, kl;

	s = skip_ws(s, e);
	for (i = 0; i < n; i++) {
		found = NULL;
		if (s >= e || *s != (path[i].key ? '{' : '['))
			break;
		s = skip_ws(s + 1, e);
		for (idx = 0; s < e && *s != '}' && *s != ']'; idx++) {
			if (path[i].key) {
				if (*s != '"')
					break;
				k = s + 1;
				s = skip_string(s, e);
				kl = (size_t)(s - 1 - k);
				s = skip_ws(s, e);
				if (s >= e || *s != ':')
					break;
				s = skip_ws(s + 1, e);
				if (kl == strlen(path[i].key) &&
				    !memcmp(k, path[i].key, kl)) {
					found = s;
					break;
				}
			} else if (idx == path[i].index) {
				found = s;
				break;
			}
			s = skip_ws(skip_value(s, e), e);
			if (s < e && *s == ',')
				s = skip_ws(s + 1, e);
		}
		if (!found)
			break;
		s = found;
	}
	return (size_t)(s - text);
}

static unsigned line_of(const char *text, size_t off)
{
	unsigned line = 1;
	size_t i;

	for (i = 0; i < off; i++)
		line += text[i] == '\n';
	return line;
}

/* ---- the document ------------------------------------------------------- */

struct doc {
	const char *text;
	size_t len;
	const char *origin;
	struct moat_error *err;
};

static int field_error(const struct doc *d, const struct jstep *path, size_t n,
		       const char *fmt, ...) MOAT_PRINTF(4, 5);

static int field_error(const struct doc *d, const struct jstep *path, size_t n,
		       const char *fmt, ...)
{
	char name[128] = "", what[384];
	size_t i, o = 0;
	va_list ap;

	for (i = 0; i < n && o < sizeof(name); i++) {
		int w = path[i].key ?
				snprintf(name + o, sizeof(name) - o, "%s%s",
					 i ? "." : "", path[i].key) :
				snprintf(name + o, sizeof(name) - o, "[%zu]",
					 path[i].index);
		if (w < 0)
			break;
		o += (size_t)w;
	}
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	return moat_error_input(d->err, EINVAL, "%s:%u: %s%s%s", d->origin,
				line_of(d->text,
					locate(d->text, d->len, path, n)),
				name, n ? ": " : "", what);
}

static int parse_rules(const struct doc *d, json_object *arr, bool deny,
		       struct egress_policy *eg)
{
	struct jstep path[3] = { { "egress", 0 },
				 { deny ? "deny" : "allow", 0 },
				 { NULL, 0 } };
	struct egress_rule r;
	char msg[256];
	size_t i, n;
	int rc;

	if (!json_object_is_type(arr, json_type_array))
		return field_error(d, path, 2,
				   "a list of destinations expected");
	n = json_object_array_length(arr);
	for (i = 0; i < n; i++) {
		json_object *v = json_object_array_get_idx(arr, i);

		path[2].index = i;
		if (!json_object_is_type(v, json_type_string))
			return field_error(d, path, 3,
					   "a destination (string) expected");
		if (egress_rule_parse(json_object_get_string(v), deny, &r, msg,
				      sizeof(msg)) < 0)
			return field_error(d, path, 3, "%s", msg);
		r.line = line_of(d->text, locate(d->text, d->len, path, 3));
		rc = egress_add(eg, &r);
		if (rc < 0)
			return field_error(d, path, 3, "%s",
					   rc == -E2BIG ? "too many rules" :
							  "out of memory");
	}
	return 0;
}

static int parse_egress(const struct doc *d, json_object *eo,
			struct egress_policy *eg)
{
	struct jstep path[2] = { { "egress", 0 }, { NULL, 0 } };
	int rc;

	if (!json_object_is_type(eo, json_type_object))
		return field_error(d, path, 1, "an object expected");
	json_object_object_foreach(eo, key, val)
	{
		path[1].key = key;
		if (!strcmp(key, "allow") || !strcmp(key, "deny")) {
			rc = parse_rules(d, val, key[0] == 'd', eg);
			if (rc < 0)
				return rc;
		} else {
			return field_error(d, path, 2,
					   "unknown field (allow, deny)");
		}
	}
	return 0;
}

int policy_parse(const char *text, size_t len, const char *origin,
		 struct moat_policy *out, struct moat_error *err)
{
	struct doc d = { text, len, origin, err };
	struct moat_policy p = { 0 };
	struct jstep path[1] = { { NULL, 0 } };
	json_tokener *tok;
	json_object *root;
	enum json_tokener_error jerr;
	size_t end;
	int rc = 0;

	if (len > POLICY_FILE_MAX)
		return moat_error_set(err, EFBIG, "%s: larger than %d bytes",
				      origin, POLICY_FILE_MAX);
	if (memchr(text, '\0', len))
		return moat_error_input(
			err, EINVAL, "%s:%u: a NUL byte", origin,
			line_of(text,
				(size_t)((const char *)memchr(text, '\0', len) -
					 text)));
	tok = json_tokener_new_ex(32);
	if (!tok)
		return moat_error_set(err, ENOMEM, "%s", origin);
	/* RFC 8259 exactly: no trailing commas, single quotes, comments */
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	root = json_tokener_parse_ex(tok, text, (int)len);
	jerr = json_tokener_get_error(tok);
	end = json_tokener_get_parse_end(tok);
	if (jerr == json_tokener_continue)
		rc = moat_error_input(err, EINVAL,
				      "%s:%u: unexpected end of file", origin,
				      line_of(text, len));
	else if (jerr != json_tokener_success)
		rc = moat_error_input(err, EINVAL, "%s:%u: %s", origin,
				      line_of(text, end < len ? end : len),
				      json_tokener_error_desc(jerr));
	else if (skip_ws(text + end, text + len) != text + len)
		rc = moat_error_input(err, EINVAL,
				      "%s:%u: text after the JSON document",
				      origin, line_of(text, end));
	json_tokener_free(tok);
	if (rc < 0) {
		json_object_put(root);
		return rc;
	}
	if (!json_object_is_type(root, json_type_object)) {
		json_object_put(root);
		return field_error(&d, path, 0, "a JSON object expected");
	}
	{
		json_object_object_foreach(root, key, val)
		{
			path[0].key = key;
			if (!strcmp(key, "egress"))
				rc = parse_egress(&d, val, &p.egress);
			else
				rc = field_error(&d, path, 1,
						 "unknown field (egress)");
			if (rc < 0)
				break;
		}
	}
	json_object_put(root);
	if (rc < 0) {
		policy_free(&p);
		return rc;
	}
	*out = p;
	return 0;
}

int policy_load_file(const char *path, struct moat_policy *out,
		     struct moat_error *err)
{
	cleanup_close int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	cleanup_free char *buf = NULL;
	struct stat st;
	ssize_t n;

	if (fd < 0)
		return moat_error_set(err, errno, "policy `%s`", path);
	if (fstat(fd, &st) < 0)
		return moat_error_set(err, errno, "policy `%s`", path);
	if (!S_ISREG(st.st_mode))
		return moat_error_input(
			err, EINVAL, "policy `%s`: not a regular file", path);
	if (st.st_size > POLICY_FILE_MAX)
		return moat_error_set(err, EFBIG,
				      "policy `%s`: larger than %d bytes", path,
				      POLICY_FILE_MAX);
	buf = malloc((size_t)st.st_size + 1);
	if (!buf)
		return moat_error_set(err, ENOMEM, "policy `%s`", path);
	n = read_all(fd, buf, (size_t)st.st_size);
	if (n < 0)
		return moat_error_set(err, (int)-n, "policy `%s`", path);
	return policy_parse(buf, (size_t)n, path, out, err);
}

int policy_add_rule(struct moat_policy *p, const char *dest, bool deny,
		    struct moat_error *err)
{
	struct egress_rule r;
	char msg[256];
	int rc;

	if (egress_rule_parse(dest, deny, &r, msg, sizeof(msg)) < 0)
		return moat_error_input(err, EINVAL, "--%s: %s",
					deny ? "deny" : "allow", msg);
	rc = egress_add(&p->egress, &r);
	if (rc < 0)
		return moat_error_set(err, -rc, "--%s `%s`",
				      deny ? "deny" : "allow", dest);
	return 0;
}

void policy_free(struct moat_policy *p)
{
	egress_free(&p->egress);
}

char *policy_to_json(const struct moat_policy *p)
{
	json_object *root = json_object_new_object();
	json_object *eg = json_object_new_object();
	json_object *allow = json_object_new_array();
	json_object *deny = json_object_new_array();
	char *out = NULL;
	size_t i;

	if (!root || !eg || !allow || !deny)
		goto done;
	for (i = 0; i < p->egress.n; i++) {
		const struct egress_rule *r = &p->egress.rules[i];

		json_object_array_add(r->deny ? deny : allow,
				      json_object_new_string(r->text));
	}
	json_object_object_add(eg, "allow", allow);
	json_object_object_add(eg, "deny", deny);
	allow = deny = NULL;
	json_object_object_add(root, "egress", eg);
	eg = NULL;
	out = strdup(json_object_to_json_string_ext(
		root, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
			      JSON_C_TO_STRING_NOSLASHESCAPE));
done:
	json_object_put(allow);
	json_object_put(deny);
	json_object_put(eg);
	json_object_put(root);
	return out;
}
