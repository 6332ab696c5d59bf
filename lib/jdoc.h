/* lib/jdoc.h: JSON documents written by users (a policy file, an OCI
 * config.json), parsed by json-c strictly (RFC 8259: no comments, no
 * trailing commas), with messages that name the field and its line:
 * "config.json:12: process.args[0]: a string expected".
 */
#ifndef MOAT_LIB_JDOC_H
#define MOAT_LIB_JDOC_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

#include "lib/util.h"

/* One step of a field's path: an object member, or (key NULL) an array
 * element. */
struct jstep {
	const char *key;
	size_t index;
};

struct jdoc {
	const char *text; /* not necessarily NUL-terminated */
	size_t len;
	const char *origin; /* the file's name, for messages */
	struct moat_error *err;
};

/* Parse d's text (at most max bytes) into *out, a JSON object (the
 * caller puts it). On error *out is NULL and d->err says where. */
int jdoc_parse(struct jdoc *d, size_t max, json_object **out);
/* "origin:LINE: a.b[2]: <fmt>" into d->err, for the field at path[0..n);
 * returns -EINVAL. */
int jdoc_error(const struct jdoc *d, const struct jstep *path, size_t n,
	       const char *fmt, ...) MOAT_PRINTF(4, 5);
/* "origin:LINE: a.b[2]" for the field at path[0..n) into out (cap
 * bytes, cut to fit); its length. For a message that is no error (a
 * warning). */
size_t jdoc_where(const struct jdoc *d, const struct jstep *path, size_t n,
		  char *out, size_t cap);
/* The line of the field at path[0..n) (or of its closest enclosing one). */
unsigned jdoc_line(const struct jdoc *d, const struct jstep *path, size_t n);
/* A regular file of at most max bytes, NUL-terminated, into *buf (the
 * caller frees) and its length into *len. */
int jdoc_read_file(const char *path, size_t max, char **buf, size_t *len,
		   struct moat_error *err);

#endif
