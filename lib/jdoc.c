/* lib/jdoc.c: JSON documents of the user's (see jdoc.h).
 *
 * json-c builds no source positions into its objects, so messages about a
 * field find its line afterwards: locate() walks the already validated text
 * along the field's path (keys and indices) and counts newlines. It only
 * skips over strings and brackets; json-c alone decides what the document
 * means.
 */
#include "lib/jdoc.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

/* ---- where a field is --------------------------------------------------- */

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

/* ---- messages ------------------------------------------------------------ */

unsigned jdoc_line(const struct jdoc *d, const struct jstep *path, size_t n)
{
	return line_of(d->text, locate(d->text, d->len, path, n));
}

/* "a.b[2]" into name (cap bytes, cut to fit). */
static void field_name(const struct jstep *path, size_t n, char *name,
		       size_t cap)
{
	size_t i, o = 0;

	name[0] = 0;
	for (i = 0; i < n && o < cap; i++) {
		int w = path[i].key ? snprintf(name + o, cap - o, "%s%s",
					       i ? "." : "", path[i].key) :
				      snprintf(name + o, cap - o, "[%zu]",
					       path[i].index);
		if (w < 0)
			break;
		o += (size_t)w;
	}
}

size_t jdoc_where(const struct jdoc *d, const struct jstep *path, size_t n,
		  char *out, size_t cap)
{
	char name[128];
	int w;

	field_name(path, n, name, sizeof(name));
	w = snprintf(out, cap, "%s:%u%s%s", d->origin, jdoc_line(d, path, n),
		     n ? ": " : "", name);
	if (w < 0)
		return 0;
	return (size_t)w < cap ? (size_t)w : cap - 1;
}

int jdoc_error(const struct jdoc *d, const struct jstep *path, size_t n,
	       const char *fmt, ...)
{
	char name[128], what[384];
	va_list ap;

	field_name(path, n, name, sizeof(name));
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	return moat_error_input(d->err, EINVAL, "%s:%u: %s%s%s", d->origin,
				jdoc_line(d, path, n), name, n ? ": " : "",
				what);
}

int jdoc_parse(struct jdoc *d, size_t max, json_object **out)
{
	const char *text = d->text, *origin = d->origin;
	size_t len = d->len, end;
	enum json_tokener_error jerr;
	json_tokener *tok;
	json_object *root;
	int rc = 0;

	*out = NULL;
	if (len > max)
		return moat_error_set(d->err, EFBIG,
				      "%s: larger than %zu bytes", origin, max);
	if (memchr(text, '\0', len))
		return moat_error_input(
			d->err, EINVAL, "%s:%u: a NUL byte", origin,
			line_of(text,
				(size_t)((const char *)memchr(text, '\0', len) -
					 text)));
	tok = json_tokener_new_ex(64);
	if (!tok)
		return moat_error_set(d->err, ENOMEM, "%s", origin);
	/* RFC 8259 exactly: no trailing commas, single quotes, comments */
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	root = json_tokener_parse_ex(tok, text, (int)len);
	jerr = json_tokener_get_error(tok);
	end = json_tokener_get_parse_end(tok);
	if (jerr == json_tokener_continue)
		rc = moat_error_input(d->err, EINVAL,
				      "%s:%u: unexpected end of file", origin,
				      line_of(text, len));
	else if (jerr != json_tokener_success)
		rc = moat_error_input(d->err, EINVAL, "%s:%u: %s", origin,
				      line_of(text, end < len ? end : len),
				      json_tokener_error_desc(jerr));
	else if (skip_ws(text + end, text + len) != text + len)
		rc = moat_error_input(d->err, EINVAL,
				      "%s:%u: text after the JSON document",
				      origin, line_of(text, end));
	json_tokener_free(tok);
	if (rc < 0) {
		json_object_put(root);
		return rc;
	}
	if (!json_object_is_type(root, json_type_object)) {
		json_object_put(root);
		return jdoc_error(d, NULL, 0, "a JSON object expected");
	}
	*out = root;
	return 0;
}

int jdoc_read_file(const char *path, size_t max, char **buf, size_t *len,
		   struct moat_error *err)
{
	cleanup_close int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	cleanup_free char *b = NULL;
	struct stat st;
	ssize_t n;

	if (fd < 0)
		return moat_error_set(err, errno, "`%s`", path);
	if (fstat(fd, &st) < 0)
		return moat_error_set(err, errno, "`%s`", path);
	if (!S_ISREG(st.st_mode))
		return moat_error_input(err, EINVAL, "`%s`: not a regular file",
					path);
	if ((size_t)st.st_size > max)
		return moat_error_set(err, EFBIG, "`%s`: larger than %zu bytes",
				      path, max);
	b = malloc((size_t)st.st_size + 1);
	if (!b)
		return moat_error_set(err, ENOMEM, "`%s`", path);
	n = read_all(fd, b, (size_t)st.st_size);
	if (n < 0)
		return moat_error_set(err, (int)-n, "`%s`", path);
	b[n] = 0;
	*len = (size_t)n;
	*buf = steal_pointer(&b);
	return 0;
}
