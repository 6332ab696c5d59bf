/* policy/credentials.h: the credentials a sandbox may use, where each one's
 * placeholder may be swapped for its value, and which TLS hosts the broker
 * inspects or must leave alone (docs/credentials.md).
 *
 * A credential is named by the environment variable the guest sees; the
 * guest gets only its placeholder. The value never appears here: only
 * where it comes from (`env:VAR`, `file:PATH`, `fd:N`), which the broker
 * alone reads. Three forms write the same thing:
 *
 *	--secret API_KEY=env:REAL_KEY@api.example,*.example.org
 *
 *	{"credentials": [{"name": "API_KEY", "from": "env:REAL_KEY",
 *	                  "hosts": ["api.example"],
 *	                  "in": ["header:authorization", "basic"],
 *	                  "placeholder": "sk-{rand}",
 *	                  "ports": [443],
 *	                  "plain_http": false,
 *	                  "inject": {"method": "GET", "path": "/v1/",
 *	                             "header": "Authorization",
 *	                             "value": "Bearer {value}"},
 *	                  "require": false}],
 *	 "inspect": ["api.other.example"], "passthrough": ["pinned.example"]}
 *
 * and the OCI annotation dev.moat.credentials (the "credentials" list as
 * JSON). Everything here is pure computation on caller memory, unit-tested
 * and fuzzed directly.
 */
#ifndef MOAT_POLICY_CREDENTIALS_H
#define MOAT_POLICY_CREDENTIALS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/util.h"

#define CRED_MAX 64		 /* credentials a sandbox holds */
#define CRED_HOSTS_MAX 64	 /* hosts of one credential */
#define CRED_NAME_MAX 128	 /* an environment variable's name */
#define CRED_VALUE_MAX 8192	 /* bytes of a secret's value */
#define CRED_PLACEHOLDER_MAX 256 /* bytes of a placeholder */
#define CRED_LIST_MAX 256	 /* inspect, passthrough entries */

/* Where a placeholder may be swapped for its value. */
enum cred_where {
	CRED_IN_HEADER = 1u << 0, /* the headers named in headers[] */
	CRED_IN_BASIC = 1u << 1,  /* Authorization/Proxy-Authorization: Basic,
				   * decoded, swapped, encoded again */
	CRED_IN_QUERY = 1u << 2,  /* the query parameters named in query[] */
	CRED_IN_BODY = 1u << 3,	  /* request bodies (opt-in only) */
};

/* The default: these headers, and Basic auth. */
#define CRED_DEFAULT_HEADERS                                                   \
	{                                                                      \
		"authorization", "x-api-key", "proxy-authorization"            \
	}

/* A header set on matching requests even when the guest sends none. */
struct cred_inject {
	char *method; /* upper case; NULL: any */
	char *path;   /* a prefix of the request target's path; "/" any */
	char *header; /* as written (sent so); compared without case */
	char *value;  /* a template: "{value}" stands for the secret */
};

enum cred_source {
	CRED_FROM_ENV,	/* src: the variable's name, in moat's environment */
	CRED_FROM_FILE, /* src: a path on the host (read by the broker) */
	CRED_FROM_FD,	/* fd: an fd moat was given */
};

struct credential {
	char *name; /* the guest's environment variable */
	enum cred_source source;
	char *src;  /* CRED_FROM_ENV, CRED_FROM_FILE */
	int fd;	    /* CRED_FROM_FD */
	char *from; /* as written: "env:REAL_KEY" (for `policy show`) */
	/* A template: "{rand}" stands for random letters and digits (as many
	 * as make the placeholder as long as the value, at least 16); NULL:
	 * "{rand}" alone. */
	char *placeholder;
	/* exact names (lower case, no trailing dot) or "*.domain" */
	char **hosts;
	size_t nhosts;
	unsigned where; /* enum cred_where bits */
	char **headers; /* lower case; for CRED_IN_HEADER */
	size_t nheaders;
	char **query; /* for CRED_IN_QUERY */
	size_t nquery;
	bool plain_http; /* may be swapped over plain HTTP too (opt-in) */
	uint16_t *ports; /* the ports the broker takes flows on; default
			  * 443 and 80 */
	size_t nports;
	struct cred_inject *inject; /* NULL: none */
	bool require;  /* refuse requests to its hosts that carry another
		       * credential in its headers instead of the
		       * placeholder */
	unsigned line; /* in the policy file; 0: command line */
	/* the line of its "hosts" (0: command line) */
	unsigned hosts_line;
};

struct cred_policy {
	struct credential *v;
	size_t n;
	/* TLS hosts the broker inspects though no credential names them
	 * ("*": all but passthrough); exact names or "*.domain" */
	char **inspect;
	size_t ninspect;
	char **passthrough; /* never inspected; no credential may name one */
	size_t npassthrough;
};

/* `--secret NAME=SOURCE@HOST[,HOST...]` (SOURCE: env:VAR, file:PATH,
 * fd:N), appended to p with the default locations. 0, or -EINVAL with a
 * message in err naming what is wrong. */
int cred_parse_arg(struct cred_policy *p, const char *arg,
		   struct moat_error *err);

/* --inspect HOST and --passthrough HOST. */
int cred_add_inspect(struct cred_policy *p, const char *host,
		     struct moat_error *err);
int cred_add_passthrough(struct cred_policy *p, const char *host,
			 struct moat_error *err);

/* Whole-policy checks after every part is in (file and command line):
 * unique names, every credential has hosts, no credential bound to a
 * host that is passed through, every name a valid environment variable.
 * 0, or -EINVAL naming the credential, the field and its line. */
int cred_validate(const struct cred_policy *p, const char *origin,
		  struct moat_error *err);

/* Does host (lower case, no trailing dot) match pattern (an exact name,
 * "*.domain" for names below domain, or "*")? */
bool cred_host_match(const char *pattern, const char *host);
/* The credentials bound to host: their indices into out (at most max),
 * and how many. */
size_t cred_for_host(const struct cred_policy *p, const char *host, size_t *out,
		     size_t max);
/* Is host under inspect (and not under passthrough)? */
bool cred_inspected(const struct cred_policy *p, const char *host);
/* Must TLS to host go to the broker: a credential's host, or inspected? */
bool cred_brokered(const struct cred_policy *p, const char *host);
/* Does a flow to port go to the broker for some credential (its ports)? */
bool cred_port(const struct cred_policy *p, uint16_t port);

/* Do a and b say the same (every field but the lines, in order)? A live
 * `moat policy set` may not change the credentials part: that is
 * `moat secret`'s. */
bool cred_equal(const struct cred_policy *a, const struct cred_policy *b);

/* The policy file's fields of this part: is key one of "credentials",
 * "inspect", "passthrough"? */
bool cred_json_key(const char *key);
/* Parse the top-level field key (cred_json_key) of the document d into
 * out (appended; on failure out may hold a part of it: the caller frees
 * it whole). 0, or -EINVAL with d->err naming the field and its line
 * ("p.json:4: credentials[0].hosts: ..."). The whole-policy checks are
 * cred_validate's. */
struct jdoc;
struct json_object;
int cred_parse_json(const struct jdoc *d, const char *key,
		    struct json_object *val, struct cred_policy *out);
/* This part as the policy file writes it (sources as written, never a
 * value) into root, a JSON object; nothing for an empty part. -ENOMEM. */
int cred_to_json(const struct cred_policy *p, struct json_object *root);

/* Is v[0..n) a value a request may carry (the broker's store and `moat
 * secret` alike)? NULL, or why not: empty, longer than CRED_VALUE_MAX, a
 * NUL (which C strings would cut) or a line break (which, swapped into a
 * header, would end it and begin another). */
const char *cred_value_refusal(const void *v, size_t n);

void cred_free(struct cred_policy *p);

#endif
