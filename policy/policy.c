/* policy/policy.c: the policy file (JSON, parsed by json-c through
 * lib/jdoc.c, which finds the line of a field for messages) and the
 * command-line rules. */
#include "policy/policy.h"

#include <string.h>

#include "lib/jdoc.h"

/* One rule of a list: a string as on the command line, or an object
 * {"dest": "db.internal:5432", "private": true}. path[0..3) names it. */
static int parse_rule(const struct jdoc *d, json_object *v, bool deny,
		      struct jstep path[4], struct egress_rule *r)
{
	json_object *dest = NULL;
	bool private = false;
	char msg[256];

	if (json_object_is_type(v, json_type_string)) {
		if (egress_rule_parse(json_object_get_string(v), deny, r, msg,
				      sizeof(msg)) < 0)
			return jdoc_error(d, path, 3, "%s", msg);
		return 0;
	}
	if (!json_object_is_type(v, json_type_object))
		return jdoc_error(d, path, 3,
				  "a destination (a string, or an object "
				  "with \"dest\") expected");
	{
		json_object_object_foreach(v, key, val)
		{
			path[3].key = key;
			if (!strcmp(key, "dest")) {
				if (!json_object_is_type(val, json_type_string))
					return jdoc_error(
						d, path, 4,
						"a destination (string) "
						"expected");
				dest = val;
			} else if (!strcmp(key, "private")) {
				if (!json_object_is_type(val,
							 json_type_boolean))
					return jdoc_error(d, path, 4,
							  "true or false "
							  "expected");
				private = json_object_get_boolean(val);
			} else {
				return jdoc_error(d, path, 4,
						  "unknown field (dest, "
						  "private)");
			}
		}
	}
	if (!dest)
		return jdoc_error(d, path, 3, "no \"dest\"");
	path[3].key = "dest";
	if (egress_rule_parse(json_object_get_string(dest), deny, r, msg,
			      sizeof(msg)) < 0)
		return jdoc_error(d, path, 4, "%s", msg);
	path[3].key = "private";
	if (private && egress_rule_mark_private(r, msg, sizeof(msg)) < 0)
		return jdoc_error(d, path, 4, "%s", msg);
	return 0;
}

static int parse_rules(const struct jdoc *d, json_object *arr, bool deny,
		       struct egress_policy *eg)
{
	struct jstep path[4] = { { "egress", 0 },
				 { deny ? "deny" : "allow", 0 },
				 { NULL, 0 },
				 { NULL, 0 } };
	struct egress_rule r;
	size_t i, n;
	int rc;

	if (!json_object_is_type(arr, json_type_array))
		return jdoc_error(d, path, 2,
				  "a list of destinations expected");
	n = json_object_array_length(arr);
	for (i = 0; i < n; i++) {
		json_object *v = json_object_array_get_idx(arr, i);

		path[2].index = i;
		rc = parse_rule(d, v, deny, path, &r);
		if (rc < 0)
			return rc;
		r.line = jdoc_line(d, path, 3);
		rc = egress_add(eg, &r);
		if (rc < 0)
			return jdoc_error(d, path, 3, "%s",
					  rc == -E2BIG ? "too many rules" :
							 "out of memory");
	}
	return 0;
}

static int parse_egress(const struct jdoc *d, json_object *eo,
			struct egress_policy *eg)
{
	struct jstep path[2] = { { "egress", 0 }, { NULL, 0 } };
	int rc;

	if (!json_object_is_type(eo, json_type_object))
		return jdoc_error(d, path, 1, "an object expected");
	json_object_object_foreach(eo, key, val)
	{
		path[1].key = key;
		if (!strcmp(key, "allow") || !strcmp(key, "deny")) {
			rc = parse_rules(d, val, key[0] == 'd', eg);
			if (rc < 0)
				return rc;
		} else {
			return jdoc_error(d, path, 2,
					  "unknown field (allow, deny)");
		}
	}
	return 0;
}

int policy_parse(const char *text, size_t len, const char *origin,
		 struct moat_policy *out, struct moat_error *err)
{
	struct jdoc d = { text, len, origin, err };
	struct moat_policy p = { 0 };
	struct jstep path[1] = { { NULL, 0 } };
	json_object *root;
	int rc;

	rc = jdoc_parse(&d, POLICY_FILE_MAX, &root);
	if (rc < 0)
		return rc;
	{
		json_object_object_foreach(root, key, val)
		{
			path[0].key = key;
			if (!strcmp(key, "egress"))
				rc = parse_egress(&d, val, &p.egress);
			else if (cred_json_key(key))
				rc = cred_parse_json(&d, key, val, &p.cred);
			else
				rc = jdoc_error(&d, path, 1,
						"unknown field (egress, "
						"credentials, inspect, "
						"passthrough)");
			if (rc < 0)
				break;
		}
	}
	json_object_put(root);
	/* the file alone: the command line's parts are checked with it
	 * later (cred_validate again) */
	if (rc == 0)
		rc = cred_validate(&p.cred, origin, err);
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
	cleanup_free char *buf = NULL;
	size_t len;

	if (jdoc_read_file(path, POLICY_FILE_MAX, &buf, &len, err) < 0)
		return moat_error_wrap(err, "policy");
	return policy_parse(buf, len, path, out, err);
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
	cred_free(&p->cred);
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
	/* sources as written: the policy never holds a value */
	if (cred_to_json(&p->cred, root) < 0)
		goto done;
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
