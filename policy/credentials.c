/* policy/credentials.c: the credentials part of a policy (credentials.h):
 * `--secret`, `--inspect`, `--passthrough`, the policy file's fields, the
 * whole-policy checks and the host matcher.
 *
 * Messages never quote a secret's source beyond its kind when the source
 * does not parse: a user who wrote the value itself where a source
 * belongs must not find it again in a log or on a terminal.
 */
#include "policy/credentials.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lib/jdoc.h"
#include "policy/egress.h"

static const char *const default_headers[] = CRED_DEFAULT_HEADERS;

/* The variables moat sets in a brokered guest's environment to point its
 * TLS clients at the bundle with the sandbox's CA (docs/credentials.md):
 * no secret may take one's place. */
static const char *const reserved_names[] = {
	"SSL_CERT_FILE",
	"REQUESTS_CA_BUNDLE",
	"CURL_CA_BUNDLE",
	"GIT_SSL_CAINFO",
	"PIP_CERT",
	"AWS_CA_BUNDLE",
	"NODE_EXTRA_CA_CERTS",
	"GRPC_DEFAULT_SSL_ROOTS_FILE_PATH",
};

static bool reserved(const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(reserved_names); i++)
		if (!strcmp(reserved_names[i], name))
			return true;
	return false;
}

#define RAND "{rand}"
#define RAND_MIN_LEN 16 /* random characters of a placeholder, at least */

/* ---- small pieces ------------------------------------------------------- */

/* [A-Za-z_][A-Za-z0-9_]*, as a shell and every libc take it */
static bool env_name_ok(const char *s)
{
	size_t i, n = strlen(s);

	if (!n || n > CRED_NAME_MAX || (s[0] >= '0' && s[0] <= '9'))
		return false;
	for (i = 0; i < n; i++) {
		char c = s[i];

		if (!(c == '_' || (c >= 'a' && c <= 'z') ||
		      (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')))
			return false;
	}
	return true;
}

/* An HTTP token (RFC 9110 tchar): a header's name, a method. */
static bool token_ok(const char *s)
{
	static const char extra[] = "!#$%&'*+-.^_`|~";
	size_t i, n = strlen(s);

	if (!n || n > CRED_NAME_MAX)
		return false;
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || (c && strchr(extra, c))))
			return false;
	}
	return true;
}

/* Printable ASCII without spaces: what a placeholder, a path prefix or a
 * query parameter's name may hold, so that each travels unquoted. */
static bool graph_ok(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s <= ' ' || (unsigned char)*s >= 0x7f)
			return false;
	return true;
}

static void lower(char *s)
{
	for (; *s; s++)
		if (*s >= 'A' && *s <= 'Z')
			*s = (char)(*s - 'A' + 'a');
}

static int strv_add(char ***v, size_t *n, const char *s)
{
	char **nv = realloc(*v, (*n + 1) * sizeof(**v));

	if (!nv)
		return -ENOMEM;
	*v = nv;
	nv[*n] = strdup(s);
	if (!nv[*n])
		return -ENOMEM;
	(*n)++;
	return 0;
}

static bool strv_has(char *const *v, size_t n, const char *s)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(v[i], s))
			return true;
	return false;
}

static void strv_free(char ***v, size_t *n)
{
	size_t i;

	for (i = 0; i < *n; i++)
		free((*v)[i]);
	free(*v);
	*v = NULL;
	*n = 0;
}

static int port_add(struct credential *c, uint16_t port)
{
	uint16_t *np;
	size_t i;

	for (i = 0; i < c->nports; i++)
		if (c->ports[i] == port)
			return 0;
	np = realloc(c->ports, (c->nports + 1) * sizeof(*np));
	if (!np)
		return -ENOMEM;
	c->ports = np;
	c->ports[c->nports++] = port;
	return 0;
}

static void inject_free(struct cred_inject *in)
{
	if (!in)
		return;
	free(in->method);
	free(in->path);
	free(in->header);
	free(in->value);
	free(in);
}

static void credential_free(struct credential *c)
{
	free(c->name);
	free(c->src);
	free(c->from);
	free(c->placeholder);
	strv_free(&c->hosts, &c->nhosts);
	strv_free(&c->headers, &c->nheaders);
	strv_free(&c->query, &c->nquery);
	free(c->ports);
	inject_free(c->inject);
	memset(c, 0, sizeof(*c));
	c->fd = -1;
}

void cred_free(struct cred_policy *p)
{
	size_t i;

	for (i = 0; i < p->n; i++)
		credential_free(&p->v[i]);
	free(p->v);
	strv_free(&p->inspect, &p->ninspect);
	strv_free(&p->passthrough, &p->npassthrough);
	memset(p, 0, sizeof(*p));
}

/* The locations and ports of a credential that names none. */
static int set_default_where(struct credential *c)
{
	size_t i;

	c->where = CRED_IN_HEADER | CRED_IN_BASIC;
	for (i = 0; i < ARRAY_SIZE(default_headers); i++)
		if (strv_add(&c->headers, &c->nheaders, default_headers[i]) < 0)
			return -ENOMEM;
	return 0;
}

static int set_default_ports(struct credential *c)
{
	if (port_add(c, 443) < 0 || port_add(c, 80) < 0)
		return -ENOMEM;
	return 0;
}

/* ---- the parts of a credential ------------------------------------------ */

/* from: env:VAR, file:PATH or fd:N. The message never repeats what was
 * written (it may be the value itself). */
static int parse_source(const char *from, struct credential *c, char *msg,
			size_t len)
{
	if (!strncmp(from, "env:", 4)) {
		if (!env_name_ok(from + 4)) {
			snprintf(msg, len,
				 "env:VAR: VAR is not a variable's name "
				 "([A-Za-z_][A-Za-z0-9_]*)");
			return -EINVAL;
		}
		c->source = CRED_FROM_ENV;
	} else if (!strncmp(from, "file:", 5)) {
		/* absolute: the broker that reads it need not share the
		 * caller's working directory */
		if (from[5] != '/' || strlen(from + 5) >= PATH_MAX) {
			snprintf(msg, len,
				 "file:PATH: PATH must be an absolute path");
			return -EINVAL;
		}
		c->source = CRED_FROM_FILE;
	} else if (!strncmp(from, "fd:", 3)) {
		char *end;
		long fd;

		if (from[3] < '0' || from[3] > '9') {
			snprintf(msg, len, "fd:N: N must be a number");
			return -EINVAL;
		}
		fd = strtol(from + 3, &end, 10);
		if (*end || fd > INT_MAX) {
			snprintf(msg, len, "fd:N: N must be a number");
			return -EINVAL;
		}
		/* 0, 1 and 2 are the guest's stdio */
		if (fd < 3) {
			snprintf(msg, len, "fd:N: N must be 3 or more");
			return -EINVAL;
		}
		c->source = CRED_FROM_FD;
		c->fd = (int)fd;
	} else {
		snprintf(msg, len,
			 "the source must be env:VAR, file:PATH or fd:N (a "
			 "value is never written in the policy or on the "
			 "command line, where other processes can read it)");
		return -EINVAL;
	}
	c->from = strdup(from);
	if (!c->from)
		return -ENOMEM;
	if (c->source != CRED_FROM_FD) {
		c->src = strdup(strchr(from, ':') + 1);
		if (!c->src)
			return -ENOMEM;
	}
	return 0;
}

/* An exact DNS name or "*.domain" (and "*" where star): normalized into
 * *out (malloc'd). */
static int host_pattern(const char *in, bool star, char **out, char *msg,
			size_t len)
{
	char name[EGRESS_NAME_MAX + 1];
	bool suffix = false;

	if (!strcmp(in, "*")) {
		if (!star) {
			snprintf(msg, len,
				 "`*` is for inspect only: name the hosts");
			return -EINVAL;
		}
		*out = strdup("*");
		return *out ? 0 : -ENOMEM;
	}
	if (!strncmp(in, "*.", 2)) {
		suffix = true;
		in += 2;
	}
	if (egress_name_normalize(in, name) < 0) {
		snprintf(msg, len, "`%s%s` is not a DNS name or *.domain",
			 suffix ? "*." : "", in);
		return -EINVAL;
	}
	if (asprintf(out, "%s%s", suffix ? "*." : "", name) < 0) {
		*out = NULL;
		return -ENOMEM;
	}
	return 0;
}

static int host_add(char ***v, size_t *n, size_t max, const char *host,
		    bool star, char *msg, size_t len)
{
	cleanup_free char *h = NULL;
	int rc = host_pattern(host, star, &h, msg, len);

	if (rc < 0) {
		if (rc == -ENOMEM)
			snprintf(msg, len, "out of memory");
		return rc;
	}
	if (strv_has(*v, *n, h))
		return 0;
	if (*n >= max) {
		snprintf(msg, len, "too many hosts (at most %zu)", max);
		return -E2BIG;
	}
	if (strv_add(v, n, h) < 0) {
		snprintf(msg, len, "out of memory");
		return -ENOMEM;
	}
	return 0;
}

/* A placeholder template: "{rand}" at most once, else printable ASCII
 * without spaces, short enough for its random part. */
static int placeholder_check(const char *t, char *msg, size_t len)
{
	const char *r = strstr(t, RAND);
	size_t n = strlen(t);

	if (!n) {
		snprintf(msg, len, "empty");
		return -EINVAL;
	}
	if (r && strstr(r + strlen(RAND), RAND)) {
		snprintf(msg, len, "{rand} more than once");
		return -EINVAL;
	}
	if (!graph_ok(t)) {
		snprintf(msg, len,
			 "only printable ASCII without spaces, and {rand}");
		return -EINVAL;
	}
	/* A short fixed one would turn up in ordinary traffic, where
	 * every copy of it would be swapped or blocked. */
	if (!r && n < RAND_MIN_LEN) {
		snprintf(msg, len,
			 "shorter than %d bytes without {rand}: write "
			 "{rand} for random letters and digits",
			 RAND_MIN_LEN);
		return -EINVAL;
	}
	if (r)
		n = n - strlen(RAND) + RAND_MIN_LEN;
	if (n > CRED_PLACEHOLDER_MAX) {
		snprintf(msg, len, "longer than %d bytes%s",
			 CRED_PLACEHOLDER_MAX,
			 r ? " with 16 random characters for {rand}" : "");
		return -EINVAL;
	}
	return 0;
}

/* An inject rule's value: a header value (no control characters) that
 * holds "{value}". */
static int inject_value_check(const char *v, char *msg, size_t len)
{
	const char *s;

	for (s = v; *s; s++)
		if (((unsigned char)*s < ' ' && *s != '\t') ||
		    (unsigned char)*s == 0x7f) {
			snprintf(msg, len, "a control character");
			return -EINVAL;
		}
	if (!strstr(v, "{value}")) {
		snprintf(msg, len, "no {value}: it stands for the secret");
		return -EINVAL;
	}
	return 0;
}

static int path_prefix_check(const char *v, char *msg, size_t len)
{
	if (v[0] != '/' || !graph_ok(v)) {
		snprintf(msg, len,
			 "a path starting with `/`, printable ASCII without "
			 "spaces, expected");
		return -EINVAL;
	}
	return 0;
}

/* ---- the command line --------------------------------------------------- */

static int grow(struct cred_policy *p)
{
	struct credential *nv;

	if (p->n >= CRED_MAX)
		return -E2BIG;
	nv = realloc(p->v, (p->n + 1) * sizeof(*nv));
	if (!nv)
		return -ENOMEM;
	p->v = nv;
	memset(&nv[p->n], 0, sizeof(*nv));
	nv[p->n].fd = -1;
	return 0;
}

int cred_parse_arg(struct cred_policy *p, const char *arg,
		   struct moat_error *err)
{
	cleanup_free char *copy = strdup(arg);
	struct credential c = { .fd = -1 };
	char msg[256], *eq, *at, *host, *save = NULL;
	int rc;

	if (!copy)
		return moat_error_set(err, ENOMEM, "--secret");
	eq = strchr(copy, '=');
	if (!eq)
		return moat_error_input(
			err, EINVAL,
			"--secret: expected NAME=SOURCE@HOST[,HOST...] "
			"(SOURCE: env:VAR, file:PATH or fd:N)");
	*eq = 0;
	if (!env_name_ok(copy))
		return moat_error_input(
			err, EINVAL,
			"--secret: NAME (before `=`) is not a variable's name "
			"([A-Za-z_][A-Za-z0-9_]*, at most %d bytes)",
			CRED_NAME_MAX);
	/* The last '@': a file's path may hold one, a host never does. */
	at = strrchr(eq + 1, '@');
	if (at)
		*at = 0;
	rc = parse_source(eq + 1, &c, msg, sizeof(msg));
	if (rc < 0) {
		credential_free(&c);
		if (rc == -ENOMEM)
			return moat_error_set(err, ENOMEM, "--secret %s", copy);
		return moat_error_input(err, EINVAL, "--secret %s: %s", copy,
					msg);
	}
	if (!at || !at[1]) {
		credential_free(&c);
		return moat_error_input(
			err, EINVAL,
			"--secret %s: no hosts: expected "
			"NAME=SOURCE@HOST[,HOST...] (a secret without hosts "
			"would be sent anywhere)",
			copy);
	}
	if (at[strlen(at + 1)] == ',' || at[1] == ',' || strstr(at + 1, ",,")) {
		credential_free(&c);
		return moat_error_input(err, EINVAL,
					"--secret %s: an empty host in `%s`",
					copy, at + 1);
	}
	for (host = strtok_r(at + 1, ",", &save); host;
	     host = strtok_r(NULL, ",", &save)) {
		rc = host_add(&c.hosts, &c.nhosts, CRED_HOSTS_MAX, host, false,
			      msg, sizeof(msg));
		if (rc < 0) {
			credential_free(&c);
			return moat_error_input(err, -rc, "--secret %s: %s",
						copy, msg);
		}
	}
	c.name = strdup(copy);
	if (!c.name || set_default_where(&c) < 0 || set_default_ports(&c) < 0) {
		credential_free(&c);
		return moat_error_set(err, ENOMEM, "--secret %s", copy);
	}
	rc = grow(p);
	if (rc < 0) {
		credential_free(&c);
		if (rc == -E2BIG)
			return moat_error_input(
				err, E2BIG,
				"--secret %s: too many credentials (at most "
				"%d)",
				copy, CRED_MAX);
		return moat_error_set(err, ENOMEM, "--secret %s", copy);
	}
	p->v[p->n++] = c;
	return 0;
}

static int list_add(char ***v, size_t *n, const char *opt, const char *host,
		    bool star, struct moat_error *err)
{
	char msg[256];
	int rc = host_add(v, n, CRED_LIST_MAX, host, star, msg, sizeof(msg));

	if (rc == -EINVAL)
		return moat_error_input(err, EINVAL, "--%s: %s", opt, msg);
	if (rc < 0)
		return moat_error_input(err, -rc, "--%s `%s`: %s", opt, host,
					msg);
	return 0;
}

int cred_add_inspect(struct cred_policy *p, const char *host,
		     struct moat_error *err)
{
	return list_add(&p->inspect, &p->ninspect, "inspect", host, true, err);
}

int cred_add_passthrough(struct cred_policy *p, const char *host,
			 struct moat_error *err)
{
	return list_add(&p->passthrough, &p->npassthrough, "passthrough", host,
			false, err);
}

/* ---- matching ----------------------------------------------------------- */

bool cred_host_match(const char *pattern, const char *host)
{
	size_t hl = strlen(host), dl;

	if (hl && host[hl - 1] == '.')
		hl--;
	if (!strcmp(pattern, "*"))
		return hl > 0;
	if (!strncmp(pattern, "*.", 2)) {
		dl = strlen(pattern + 2);
		/* below the domain: "a.example" for "*.example", not
		 * "example" itself, nor "aexample" */
		return hl > dl + 1 && host[hl - dl - 1] == '.' &&
		       !strncasecmp(host + hl - dl, pattern + 2, dl);
	}
	return strlen(pattern) == hl && !strncasecmp(pattern, host, hl);
}

/* Can one name match both patterns? */
static bool patterns_overlap(const char *a, const char *b)
{
	bool sa = !strncmp(a, "*.", 2), sb = !strncmp(b, "*.", 2);

	if (!strcmp(a, "*") || !strcmp(b, "*"))
		return true;
	if (!sa && !sb)
		return !strcasecmp(a, b);
	if (sa && !sb)
		return cred_host_match(a, b);
	if (!sa && sb)
		return cred_host_match(b, a);
	/* *.x and *.y share names when x and y are one name, or one lies
	 * below the other */
	return !strcasecmp(a + 2, b + 2) || cred_host_match(a, b + 2) ||
	       cred_host_match(b, a + 2);
}

static bool any_match(char *const *v, size_t n, const char *host)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (cred_host_match(v[i], host))
			return true;
	return false;
}

size_t cred_for_host(const struct cred_policy *p, const char *host, size_t *out,
		     size_t max)
{
	size_t i, k = 0;

	for (i = 0; i < p->n && k < max; i++)
		if (any_match(p->v[i].hosts, p->v[i].nhosts, host))
			out[k++] = i;
	return k;
}

bool cred_inspected(const struct cred_policy *p, const char *host)
{
	return !any_match(p->passthrough, p->npassthrough, host) &&
	       any_match(p->inspect, p->ninspect, host);
}

bool cred_brokered(const struct cred_policy *p, const char *host)
{
	size_t i;

	for (i = 0; i < p->n; i++)
		if (any_match(p->v[i].hosts, p->v[i].nhosts, host))
			return true;
	return cred_inspected(p, host);
}

bool cred_port(const struct cred_policy *p, uint16_t port)
{
	size_t i, j;

	for (i = 0; i < p->n; i++)
		for (j = 0; j < p->v[i].nports; j++)
			if (p->v[i].ports[j] == port)
				return true;
	return false;
}

/* ---- whole-policy checks ------------------------------------------------ */

/* Who credential i is in messages: "p.json:4: credentials[0].hosts" (the
 * field's line, else the credential's), or "--secret API_KEY". */
static void who(const struct cred_policy *p, size_t i, const char *origin,
		const char *field, unsigned line, char *buf, size_t len)
{
	const struct credential *c = &p->v[i];
	size_t j, k = 0;

	if (!c->line) {
		snprintf(buf, len, "--secret %s", c->name ? c->name : "?");
		return;
	}
	/* its index in the file: the file's credentials come first, but
	 * count only those to be sure */
	for (j = 0; j < i; j++)
		k += p->v[j].line != 0;
	snprintf(buf, len, "%s:%u: credentials[%zu].%s",
		 origin ? origin : "policy", line ? line : c->line, k, field);
}

int cred_validate(const struct cred_policy *p, const char *origin,
		  struct moat_error *err)
{
	char at[300], other[300], msg[256];
	size_t i, j, h, k;

	for (i = 0; i < p->n; i++) {
		const struct credential *c = &p->v[i];

		if (!c->name || !env_name_ok(c->name)) {
			who(p, i, origin, "name", 0, at, sizeof(at));
			return moat_error_input(err, EINVAL,
						"%s: not a variable's name "
						"([A-Za-z_][A-Za-z0-9_]*)",
						at);
		}
		if (reserved(c->name)) {
			who(p, i, origin, "name", 0, at, sizeof(at));
			return moat_error_input(
				err, EINVAL,
				"%s: `%s` is moat's: it points the guest's TLS "
				"clients at the sandbox's CA",
				at, c->name);
		}
		if (!c->from) {
			who(p, i, origin, "from", 0, at, sizeof(at));
			return moat_error_input(err, EINVAL, "%s: required",
						at);
		}
		if (!c->nhosts) {
			who(p, i, origin, "hosts", c->hosts_line, at,
			    sizeof(at));
			return moat_error_input(
				err, EINVAL,
				"%s: required: a secret without hosts would "
				"be sent to any host",
				at);
		}
		if (!c->where) {
			who(p, i, origin, "in", 0, at, sizeof(at));
			return moat_error_input(
				err, EINVAL,
				"%s: no place where the placeholder may be "
				"swapped",
				at);
		}
		if (!c->nports) {
			who(p, i, origin, "ports", 0, at, sizeof(at));
			return moat_error_input(err, EINVAL, "%s: no ports",
						at);
		}
		if (c->placeholder &&
		    placeholder_check(c->placeholder, msg, sizeof(msg)) < 0) {
			who(p, i, origin, "placeholder", 0, at, sizeof(at));
			return moat_error_input(err, EINVAL, "%s: %s", at, msg);
		}
		if (c->inject && (!c->inject->header || !c->inject->value ||
				  inject_value_check(c->inject->value, msg,
						     sizeof(msg)) < 0)) {
			who(p, i, origin, "inject", 0, at, sizeof(at));
			return moat_error_input(
				err, EINVAL, "%s: %s", at,
				c->inject->header && c->inject->value ?
					msg :
					"a header and a value required");
		}
		for (j = 0; j < i; j++) {
			const struct credential *o = &p->v[j];

			if (o->name && !strcmp(o->name, c->name)) {
				who(p, i, origin, "name", 0, at, sizeof(at));
				who(p, j, origin, "name", 0, other,
				    sizeof(other));
				return moat_error_input(
					err, EINVAL,
					"%s: `%s` is named twice (also %s)", at,
					c->name, other);
			}
			/* a fixed placeholder would say which secret it is
			 * for no better than a coin */
			if (c->placeholder && o->placeholder &&
			    !strstr(c->placeholder, RAND) &&
			    !strcmp(c->placeholder, o->placeholder)) {
				who(p, i, origin, "placeholder", 0, at,
				    sizeof(at));
				who(p, j, origin, "placeholder", 0, other,
				    sizeof(other));
				return moat_error_input(
					err, EINVAL,
					"%s: `%s` is also %s's placeholder", at,
					c->placeholder, other);
			}
		}
		for (h = 0; h < c->nhosts; h++)
			for (k = 0; k < p->npassthrough; k++) {
				if (!patterns_overlap(c->hosts[h],
						      p->passthrough[k]))
					continue;
				who(p, i, origin, "hosts", c->hosts_line, at,
				    sizeof(at));
				return moat_error_input(
					err, EINVAL,
					"%s: `%s` is passed through "
					"(passthrough `%s`): a secret bound to "
					"a host that is passed through would "
					"never be swapped",
					at, c->hosts[h], p->passthrough[k]);
			}
	}
	for (i = 0; i < p->ninspect; i++)
		if (strv_has(p->passthrough, p->npassthrough, p->inspect[i]))
			return moat_error_input(
				err, EINVAL,
				"`%s` is under both inspect and passthrough",
				p->inspect[i]);
	return 0;
}

/* ---- comparison --------------------------------------------------------- */

static bool str_eq(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

static bool strv_eq(char *const *a, size_t na, char *const *b, size_t nb)
{
	size_t i;

	if (na != nb)
		return false;
	for (i = 0; i < na; i++)
		if (strcmp(a[i], b[i]))
			return false;
	return true;
}

static bool inject_eq(const struct cred_inject *a, const struct cred_inject *b)
{
	if (!a || !b)
		return a == b;
	return str_eq(a->method, b->method) && str_eq(a->path, b->path) &&
	       str_eq(a->header, b->header) && str_eq(a->value, b->value);
}

static bool credential_eq(const struct credential *a,
			  const struct credential *b)
{
	return str_eq(a->name, b->name) && a->source == b->source &&
	       str_eq(a->src, b->src) && a->fd == b->fd &&
	       str_eq(a->from, b->from) &&
	       str_eq(a->placeholder, b->placeholder) &&
	       strv_eq(a->hosts, a->nhosts, b->hosts, b->nhosts) &&
	       a->where == b->where &&
	       strv_eq(a->headers, a->nheaders, b->headers, b->nheaders) &&
	       strv_eq(a->query, a->nquery, b->query, b->nquery) &&
	       a->plain_http == b->plain_http && a->nports == b->nports &&
	       (!a->nports ||
		!memcmp(a->ports, b->ports, a->nports * sizeof(*a->ports))) &&
	       inject_eq(a->inject, b->inject) && a->require == b->require;
}

bool cred_equal(const struct cred_policy *a, const struct cred_policy *b)
{
	size_t i;

	if (a->n != b->n ||
	    !strv_eq(a->inspect, a->ninspect, b->inspect, b->ninspect) ||
	    !strv_eq(a->passthrough, a->npassthrough, b->passthrough,
		     b->npassthrough))
		return false;
	for (i = 0; i < a->n; i++)
		if (!credential_eq(&a->v[i], &b->v[i]))
			return false;
	return true;
}

/* ---- the policy file ---------------------------------------------------- */

bool cred_json_key(const char *key)
{
	return !strcmp(key, "credentials") || !strcmp(key, "inspect") ||
	       !strcmp(key, "passthrough");
}

/* A string field, refused when it holds a NUL byte (C would cut it). */
static int get_str(const struct jdoc *d, json_object *v,
		   const struct jstep *path, size_t n, const char *what,
		   const char **out)
{
	if (!json_object_is_type(v, json_type_string))
		return jdoc_error(d, path, n, "%s expected", what);
	*out = json_object_get_string(v);
	if (strlen(*out) != (size_t)json_object_get_string_len(v))
		return jdoc_error(d, path, n, "a NUL byte");
	return 0;
}

static int get_bool(const struct jdoc *d, json_object *v,
		    const struct jstep *path, size_t n, bool *out)
{
	if (!json_object_is_type(v, json_type_boolean))
		return jdoc_error(d, path, n, "true or false expected");
	*out = json_object_get_boolean(v);
	return 0;
}

static int get_list(const struct jdoc *d, json_object *v,
		    const struct jstep *path, size_t n, const char *what)
{
	if (!json_object_is_type(v, json_type_array))
		return jdoc_error(d, path, n, "a list of %s expected", what);
	if (!json_object_array_length(v))
		return jdoc_error(d, path, n, "empty: a list of %s expected",
				  what);
	return 0;
}

/* A required field that is absent, at the line of the object that lacks
 * it (path[0..n) names the object): "p.json:3: credentials[0].hosts:
 * required". */
static int missing(const struct jdoc *d, const struct jstep *path, size_t n,
		   const char *field, const char *why)
{
	char name[128] = "";
	size_t i, o = 0;

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
	return moat_error_input(d->err, EINVAL, "%s:%u: %s.%s: required%s",
				d->origin, jdoc_line(d, path, n), name, field,
				why);
}

static int oom(const struct jdoc *d, const struct jstep *path, size_t n)
{
	jdoc_error(d, path, n, "out of memory");
	d->err->code = ENOMEM;
	return -ENOMEM;
}

/* "hosts": path[0..3) names it */
static int parse_hosts(const struct jdoc *d, json_object *v, struct jstep *path,
		       struct credential *c)
{
	char msg[256];
	size_t i, n;
	int rc;

	rc = get_list(d, v, path, 3, "hosts (names, or *.domain)");
	if (rc < 0)
		return rc;
	n = json_object_array_length(v);
	for (i = 0; i < n; i++) {
		const char *h;

		path[3].index = i;
		rc = get_str(d, json_object_array_get_idx(v, i), path, 4,
			     "a host (a string)", &h);
		if (rc < 0)
			return rc;
		rc = host_add(&c->hosts, &c->nhosts, CRED_HOSTS_MAX, h, false,
			      msg, sizeof(msg));
		if (rc < 0)
			return jdoc_error(d, path, 4, "%s", msg);
	}
	return 0;
}

/* "in": ["header:NAME", "basic", "query:NAME", "body"] */
static int parse_in(const struct jdoc *d, json_object *v, struct jstep *path,
		    struct credential *c)
{
	size_t i, n;
	int rc;

	rc = get_list(d, v, path, 3,
		      "places (header:NAME, basic, query:NAME, "
		      "body)");
	if (rc < 0)
		return rc;
	n = json_object_array_length(v);
	for (i = 0; i < n; i++) {
		cleanup_free char *name = NULL;
		const char *s;

		path[3].index = i;
		rc = get_str(d, json_object_array_get_idx(v, i), path, 4,
			     "a place (a string)", &s);
		if (rc < 0)
			return rc;
		if (!strcmp(s, "basic")) {
			c->where |= CRED_IN_BASIC;
		} else if (!strcmp(s, "body")) {
			c->where |= CRED_IN_BODY;
		} else if (!strncmp(s, "header:", 7)) {
			if (!token_ok(s + 7))
				return jdoc_error(d, path, 4,
						  "`%s`: not a header's name",
						  s + 7);
			name = strdup(s + 7);
			if (!name)
				return oom(d, path, 4);
			lower(name);
			c->where |= CRED_IN_HEADER;
			if (!strv_has(c->headers, c->nheaders, name) &&
			    strv_add(&c->headers, &c->nheaders, name) < 0)
				return oom(d, path, 4);
		} else if (!strncmp(s, "query:", 6)) {
			/* as it is written in the query: no encoding of its
			 * own, and nothing that would end it */
			if (!s[6] || strlen(s + 6) > CRED_NAME_MAX ||
			    !graph_ok(s + 6) || strpbrk(s + 6, "&=#"))
				return jdoc_error(
					d, path, 4,
					"`%s`: not a query parameter's name",
					s + 6);
			c->where |= CRED_IN_QUERY;
			if (!strv_has(c->query, c->nquery, s + 6) &&
			    strv_add(&c->query, &c->nquery, s + 6) < 0)
				return oom(d, path, 4);
		} else {
			return jdoc_error(d, path, 4,
					  "`%s`: header:NAME, basic, "
					  "query:NAME or body expected",
					  s);
		}
	}
	return 0;
}

static int parse_ports(const struct jdoc *d, json_object *v, struct jstep *path,
		       struct credential *c)
{
	size_t i, n;
	int rc;

	rc = get_list(d, v, path, 3, "ports");
	if (rc < 0)
		return rc;
	n = json_object_array_length(v);
	for (i = 0; i < n; i++) {
		json_object *e = json_object_array_get_idx(v, i);
		int64_t port;

		path[3].index = i;
		if (!json_object_is_type(e, json_type_int))
			return jdoc_error(d, path, 4,
					  "a port (1 to 65535) expected");
		port = json_object_get_int64(e);
		if (port < 1 || port > 65535)
			return jdoc_error(d, path, 4,
					  "a port (1 to 65535) expected");
		if (port_add(c, (uint16_t)port) < 0)
			return oom(d, path, 4);
	}
	return 0;
}

/* "inject": {"method", "path", "header", "value"}; path[0..3) names it */
static int parse_inject(const struct jdoc *d, json_object *v,
			struct jstep *path, struct credential *c)
{
	struct cred_inject *in;
	char msg[256];
	int rc;

	if (!json_object_is_type(v, json_type_object))
		return jdoc_error(d, path, 3,
				  "an object (method, path, header, value) "
				  "expected");
	in = c->inject = calloc(1, sizeof(*in));
	if (!in)
		return oom(d, path, 3);
	{
		json_object_object_foreach(v, key, val)
		{
			const char *s;
			char **slot;

			path[3].key = key;
			if (!strcmp(key, "method"))
				slot = &in->method;
			else if (!strcmp(key, "path"))
				slot = &in->path;
			else if (!strcmp(key, "header"))
				slot = &in->header;
			else if (!strcmp(key, "value"))
				slot = &in->value;
			else
				return jdoc_error(d, path, 4,
						  "unknown field (method, "
						  "path, header, value)");
			rc = get_str(d, val, path, 4, "a string", &s);
			if (rc < 0)
				return rc;
			if (slot == &in->method || slot == &in->header) {
				if (!token_ok(s))
					return jdoc_error(
						d, path, 4, "`%s`: not %s", s,
						slot == &in->method ?
							"an HTTP method" :
							"a header's name");
			} else if (slot == &in->path) {
				if (path_prefix_check(s, msg, sizeof(msg)) < 0)
					return jdoc_error(d, path, 4, "%s",
							  msg);
			} else if (inject_value_check(s, msg, sizeof(msg)) <
				   0) {
				return jdoc_error(d, path, 4, "%s", msg);
			}
			free(*slot);
			*slot = strdup(s);
			if (!*slot)
				return oom(d, path, 4);
			if (slot == &in->method) {
				char *m;

				for (m = in->method; *m; m++)
					if (*m >= 'a' && *m <= 'z')
						*m = (char)(*m - 'a' + 'A');
			}
		}
	}
	if (!in->header || !in->value)
		return missing(d, path, 3, !in->header ? "header" : "value",
			       "");
	if (!in->path && !(in->path = strdup("/")))
		return oom(d, path, 3);
	return 0;
}

/* One element of "credentials"; path[0..2) names it. The checks that
 * need the whole policy are cred_validate's; those of one element are
 * here, where the line of each field is known. */
static int parse_credential(const struct jdoc *d, json_object *v,
			    struct jstep path[4], struct cred_policy *out,
			    struct credential *c)
{
	bool has_in = false, has_ports = false;
	char msg[256];
	size_t i;
	int rc;

	if (!json_object_is_type(v, json_type_object))
		return jdoc_error(d, path, 2,
				  "an object (name, from, hosts, ...) "
				  "expected");
	c->line = jdoc_line(d, path, 2);
	json_object_object_foreach(v, key, val)
	{
		const char *s;

		path[2].key = key;
		if (!strcmp(key, "name")) {
			rc = get_str(d, val, path, 3,
				     "a variable's name (a string)", &s);
			if (rc < 0)
				return rc;
			if (!env_name_ok(s))
				return jdoc_error(
					d, path, 3,
					"`%s`: not a variable's "
					"name ([A-Za-z_][A-Za-z0-9_]*)",
					s);
			for (i = 0; &out->v[i] != c; i++)
				if (!strcmp(out->v[i].name, s))
					return jdoc_error(
						d, path, 3,
						"`%s` is named twice (also "
						"line %u)",
						s, out->v[i].line);
			free(c->name);
			if (!(c->name = strdup(s)))
				return oom(d, path, 3);
		} else if (!strcmp(key, "from")) {
			rc = get_str(d, val, path, 3,
				     "a source (env:VAR, file:PATH or fd:N)",
				     &s);
			if (rc < 0)
				return rc;
			free(c->from);
			free(c->src);
			c->from = c->src = NULL;
			rc = parse_source(s, c, msg, sizeof(msg));
			if (rc == -ENOMEM)
				return oom(d, path, 3);
			if (rc < 0)
				return jdoc_error(d, path, 3, "%s", msg);
		} else if (!strcmp(key, "hosts")) {
			c->hosts_line = jdoc_line(d, path, 3);
			strv_free(&c->hosts, &c->nhosts);
			rc = parse_hosts(d, val, path, c);
			if (rc < 0)
				return rc;
		} else if (!strcmp(key, "in")) {
			c->where = 0;
			strv_free(&c->headers, &c->nheaders);
			strv_free(&c->query, &c->nquery);
			rc = parse_in(d, val, path, c);
			if (rc < 0)
				return rc;
			has_in = true;
		} else if (!strcmp(key, "placeholder")) {
			rc = get_str(d, val, path, 3,
				     "a template (a string: sk-{rand})", &s);
			if (rc < 0)
				return rc;
			if (placeholder_check(s, msg, sizeof(msg)) < 0)
				return jdoc_error(d, path, 3, "%s", msg);
			free(c->placeholder);
			if (!(c->placeholder = strdup(s)))
				return oom(d, path, 3);
		} else if (!strcmp(key, "ports")) {
			free(c->ports);
			c->ports = NULL;
			c->nports = 0;
			rc = parse_ports(d, val, path, c);
			if (rc < 0)
				return rc;
			has_ports = true;
		} else if (!strcmp(key, "plain_http")) {
			rc = get_bool(d, val, path, 3, &c->plain_http);
			if (rc < 0)
				return rc;
		} else if (!strcmp(key, "require")) {
			rc = get_bool(d, val, path, 3, &c->require);
			if (rc < 0)
				return rc;
		} else if (!strcmp(key, "inject")) {
			inject_free(c->inject);
			c->inject = NULL;
			rc = parse_inject(d, val, path, c);
			if (rc < 0)
				return rc;
		} else {
			return jdoc_error(d, path, 3,
					  "unknown field (name, from, hosts, "
					  "in, placeholder, ports, "
					  "plain_http, inject, require)");
		}
	}
	if (!c->name || !c->from)
		return missing(d, path, 2, !c->name ? "name" : "from", "");
	if (!c->nhosts)
		return missing(d, path, 2, "hosts",
			       ": a secret without hosts would be sent to "
			       "any host");
	if (!has_in && set_default_where(c) < 0)
		return oom(d, path, 2);
	if (!has_ports && set_default_ports(c) < 0)
		return oom(d, path, 2);
	return 0;
}

static int parse_credentials(const struct jdoc *d, json_object *v,
			     struct cred_policy *out)
{
	struct jstep path[4] = {
		{ "credentials", 0 }, { NULL, 0 }, { NULL, 0 }, { NULL, 0 }
	};
	size_t i, n;
	int rc;

	if (!json_object_is_type(v, json_type_array))
		return jdoc_error(d, path, 1, "a list of credentials expected");
	n = json_object_array_length(v);
	for (i = 0; i < n; i++) {
		path[1].index = i;
		rc = grow(out);
		if (rc == -E2BIG)
			return jdoc_error(d, path, 2,
					  "too many credentials (at most %d)",
					  CRED_MAX);
		if (rc < 0)
			return oom(d, path, 2);
		/* counted in at once, so that the caller frees whatever
		 * the element holds when it is refused */
		out->n++;
		rc = parse_credential(d, json_object_array_get_idx(v, i), path,
				      out, &out->v[out->n - 1]);
		if (rc < 0)
			return rc;
	}
	return 0;
}

static int parse_hostlist(const struct jdoc *d, const char *key, json_object *v,
			  char ***list, size_t *n, bool star)
{
	struct jstep path[2] = { { key, 0 }, { NULL, 0 } };
	char msg[256];
	size_t i, len;
	int rc;

	if (!json_object_is_type(v, json_type_array))
		return jdoc_error(d, path, 1,
				  "a list of hosts (names, or *.domain) "
				  "expected");
	len = json_object_array_length(v);
	for (i = 0; i < len; i++) {
		const char *h;

		path[1].index = i;
		rc = get_str(d, json_object_array_get_idx(v, i), path, 2,
			     "a host (a string)", &h);
		if (rc < 0)
			return rc;
		rc = host_add(list, n, CRED_LIST_MAX, h, star, msg,
			      sizeof(msg));
		if (rc < 0)
			return jdoc_error(d, path, 2, "%s", msg);
	}
	return 0;
}

int cred_parse_json(const struct jdoc *d, const char *key, json_object *val,
		    struct cred_policy *out)
{
	if (!strcmp(key, "credentials"))
		return parse_credentials(d, val, out);
	if (!strcmp(key, "inspect"))
		return parse_hostlist(d, key, val, &out->inspect,
				      &out->ninspect, true);
	if (!strcmp(key, "passthrough"))
		return parse_hostlist(d, key, val, &out->passthrough,
				      &out->npassthrough, false);
	return -ENOENT;
}

/* ---- back to JSON ------------------------------------------------------- */

static json_object *strv_json(char *const *v, size_t n)
{
	json_object *a = json_object_new_array();
	size_t i;

	for (i = 0; a && i < n; i++)
		if (json_object_array_add(a, json_object_new_string(v[i])) <
		    0) {
			json_object_put(a);
			return NULL;
		}
	return a;
}

static int add(json_object *o, const char *key, json_object *v)
{
	if (!v)
		return -ENOMEM;
	if (json_object_object_add(o, key, v) < 0) {
		json_object_put(v);
		return -ENOMEM;
	}
	return 0;
}

static int add_str(json_object *o, const char *key, const char *s)
{
	return s ? add(o, key, json_object_new_string(s)) : 0;
}

/* Where the placeholder may be swapped, in the order parse_in reads it
 * back, so that `policy show` given to `policy set` is the same policy. */
static json_object *places_json(const struct credential *c)
{
	json_object *in = json_object_new_array();
	char buf[CRED_NAME_MAX + 16];
	size_t i;
	int rc = 0;

	if (!in)
		return NULL;
	for (i = 0; i < c->nheaders && (c->where & CRED_IN_HEADER); i++) {
		snprintf(buf, sizeof(buf), "header:%s", c->headers[i]);
		rc |= json_object_array_add(in, json_object_new_string(buf));
	}
	if (c->where & CRED_IN_BASIC)
		rc |= json_object_array_add(in,
					    json_object_new_string("basic"));
	for (i = 0; i < c->nquery && (c->where & CRED_IN_QUERY); i++) {
		snprintf(buf, sizeof(buf), "query:%s", c->query[i]);
		rc |= json_object_array_add(in, json_object_new_string(buf));
	}
	if (c->where & CRED_IN_BODY)
		rc |= json_object_array_add(in, json_object_new_string("body"));
	if (rc < 0) {
		json_object_put(in);
		return NULL;
	}
	return in;
}

static json_object *ports_json(const struct credential *c)
{
	json_object *a = json_object_new_array();
	size_t i;

	for (i = 0; a && i < c->nports; i++)
		if (json_object_array_add(a, json_object_new_int(c->ports[i])) <
		    0) {
			json_object_put(a);
			return NULL;
		}
	return a;
}

static json_object *credential_json(const struct credential *c)
{
	json_object *o = json_object_new_object(), *inj;

	if (!o)
		return NULL;
	if (add_str(o, "name", c->name) < 0 ||
	    add_str(o, "from", c->from) < 0 ||
	    add(o, "hosts", strv_json(c->hosts, c->nhosts)) < 0 ||
	    add(o, "in", places_json(c)) < 0 ||
	    add_str(o, "placeholder", c->placeholder) < 0 ||
	    add(o, "ports", ports_json(c)) < 0 ||
	    add(o, "plain_http", json_object_new_boolean(c->plain_http)) < 0)
		goto fail;
	if (c->inject) {
		inj = json_object_new_object();
		if (add(o, "inject", inj) < 0 ||
		    add_str(inj, "method", c->inject->method) < 0 ||
		    add_str(inj, "path", c->inject->path) < 0 ||
		    add_str(inj, "header", c->inject->header) < 0 ||
		    add_str(inj, "value", c->inject->value) < 0)
			goto fail;
	}
	if (add(o, "require", json_object_new_boolean(c->require)) < 0)
		goto fail;
	return o;
fail:
	json_object_put(o);
	return NULL;
}

int cred_to_json(const struct cred_policy *p, json_object *root)
{
	json_object *list;
	size_t i;

	if (p->n) {
		list = json_object_new_array();
		if (add(root, "credentials", list) < 0)
			return -ENOMEM;
		for (i = 0; i < p->n; i++) {
			json_object *c = credential_json(&p->v[i]);

			if (!c || json_object_array_add(list, c) < 0) {
				json_object_put(c);
				return -ENOMEM;
			}
		}
	}
	if (p->ninspect &&
	    add(root, "inspect", strv_json(p->inspect, p->ninspect)) < 0)
		return -ENOMEM;
	if (p->npassthrough &&
	    add(root, "passthrough",
		strv_json(p->passthrough, p->npassthrough)) < 0)
		return -ENOMEM;
	return 0;
}

const char *cred_value_refusal(const void *v, size_t n)
{
	if (n == 0)
		return "is empty";
	if (n > CRED_VALUE_MAX)
		return "is longer than 8192 bytes";
	if (memchr(v, 0, n))
		return "contains a NUL byte";
	if (memchr(v, '\n', n) || memchr(v, '\r', n))
		return "contains a line break";
	return NULL;
}
