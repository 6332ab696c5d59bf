/* policy/policy.h: what one sandbox may do, from a policy file (JSON) and
 * the command line.
 *
 * The file is one JSON object; today it holds the egress rules:
 *
 *	{
 *	  "egress": {
 *	    "allow": ["pypi.org:443", "*.pythonhosted.org:443",
 *	              {"dest": "db.internal:5432", "private": true}],
 *	    "deny":  ["169.254.169.254"]
 *	  }
 *	}
 *
 * Each rule is written as on the command line (policy/egress.h), or as an
 * object whose "dest" is so written and whose "private": true is the
 * written form's `+private` (db.internal:5432+private). A field
 * that is unknown, of the wrong type, or a rule that does not parse is
 * refused with a message naming the field and its line; nothing of a
 * refused file is used (the caller keeps its old policy).
 *
 * "credentials", "inspect" and "passthrough" are the credential broker's
 * (policy/credentials.h, docs/credentials.md).
 */
#ifndef MOAT_POLICY_POLICY_H
#define MOAT_POLICY_POLICY_H

#include <stdbool.h>
#include <stddef.h>

#include "lib/util.h"
#include "policy/credentials.h"
#include "policy/egress.h"

#define POLICY_FILE_MAX (1 << 20) /* bytes */

struct moat_policy {
	struct egress_policy egress;
	/* credentials, inspect, passthrough (policy/credentials.h) */
	struct cred_policy cred;
};

/* Parse text (len bytes, not necessarily NUL-terminated); origin names it
 * in messages ("policy.json"). On success *out holds the rules (free with
 * policy_free); on failure *out is untouched and err says what and where:
 * "policy.json:7: egress.allow[2]: `x:99999`: bad port ...". */
int policy_parse(const char *text, size_t len, const char *origin,
		 struct moat_policy *out, struct moat_error *err);
int policy_load_file(const char *path, struct moat_policy *out,
		     struct moat_error *err);

/* One --allow or --deny. */
int policy_add_rule(struct moat_policy *p, const char *dest, bool deny,
		    struct moat_error *err);

void policy_free(struct moat_policy *p);

/* The policy as a JSON document of the same shape as the file (malloc'd),
 * for `moat policy show`; NULL on ENOMEM. */
char *policy_to_json(const struct moat_policy *p);

#endif
