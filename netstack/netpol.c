/* netstack/netpol.c: the policy in force, decisions, audit lines. */
#include "netstack/netpol.h"

#include <arpa/inet.h>
#include <json-c/json.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include "netstack/resolver.h"
#include "sentry/sentry.h"

static struct moat_policy policy;
static char sandbox[80] = "moat";

void netpol_set(struct moat_policy *p)
{
	policy_free(&policy);
	policy = *p;
	memset(p, 0, sizeof(*p));
}

const struct moat_policy *netpol_get(void)
{
	return &policy;
}

void netpol_set_sandbox(const char *name)
{
	snprintf(sandbox, sizeof(sandbox), "%s", name);
}

/* s as a JSON string (quoted, escaped), or null. */
static void jstr(char *out, size_t cap, const char *s)
{
	json_object *o;

	if (!s) {
		snprintf(out, cap, "null");
		return;
	}
	o = json_object_new_string(s);
	snprintf(out, cap, "%s",
		 o ? json_object_to_json_string_ext(
			     o, JSON_C_TO_STRING_NOSLASHESCAPE) :
		     "null");
	json_object_put(o);
}

static const char *reason_text(const struct egress_decision *d)
{
	switch (d->reason) {
	case EGRESS_BY_RULE:
		return "rule";
	case EGRESS_BY_SPECIAL:
		return "special-range";
	case EGRESS_BY_DEFAULT:
		break;
	}
	return "default-deny";
}

static void audit(int pid, const char *event, const char *proto,
		  const char *dest, const char *name,
		  const struct egress_rule *rule, bool allow,
		  const char *reason)
{
	char jsb[96], jdest[80], jname[300], jrule[400];

	jstr(jsb, sizeof(jsb), sandbox);
	jstr(jdest, sizeof(jdest), dest);
	jstr(jname, sizeof(jname), name);
	jstr(jrule, sizeof(jrule), rule ? rule->text : NULL);
	audit_log("\"event\":\"%s\",\"sandbox\":%s,\"pid\":%d,\"proto\":\"%s\","
		  "\"dest\":%s,\"name\":%s,\"rule\":%s,\"line\":%u,"
		  "\"verdict\":\"%s\",\"reason\":\"%s\"",
		  event, jsb, pid, proto, jdest, jname, jrule,
		  rule ? rule->line : 0, allow ? "allow" : "deny", reason);
}

int netpol_check(int pid, int proto, const struct sockaddr *sa, socklen_t len)
{
	struct egress_query q = { 0 };
	struct egress_decision d;
	const char *names[RESOLVER_NAMES_MAX];
	char dest[INET6_ADDRSTRLEN + 16], ip[INET6_ADDRSTRLEN];

	if (sa->sa_family == AF_INET && len >= sizeof(struct sockaddr_in)) {
		const struct sockaddr_in *in = (const void *)sa;

		q.family = AF_INET;
		memcpy(q.addr, &in->sin_addr, 4);
		q.port = ntohs(in->sin_port);
		inet_ntop(AF_INET, q.addr, ip, sizeof(ip));
		snprintf(dest, sizeof(dest), "%s:%u", ip, q.port);
	} else if (sa->sa_family == AF_INET6 &&
		   len >= sizeof(struct sockaddr_in6)) {
		const struct sockaddr_in6 *in6 = (const void *)sa;

		q.family = AF_INET6;
		memcpy(q.addr, &in6->sin6_addr, 16);
		q.port = ntohs(in6->sin6_port);
		inet_ntop(AF_INET6, q.addr, ip, sizeof(ip));
		snprintf(dest, sizeof(dest), "[%s]:%u", ip, q.port);
	} else {
		return -EAFNOSUPPORT;
	}
	q.proto = proto == IPPROTO_UDP ? EGRESS_UDP : EGRESS_TCP;
	q.names = names;
	q.nnames =
		resolver_names_of(q.family, q.addr, names, RESOLVER_NAMES_MAX);
	egress_decide(&policy.egress, &q, &d);
	audit(pid, "egress", proto == IPPROTO_UDP ? "udp" : "tcp", dest,
	      d.name ? d.name : (q.nnames ? names[0] : NULL), d.rule, d.allow,
	      reason_text(&d));
	return d.allow ? 0 : -EACCES;
}

bool netpol_name(int pid, const char *name)
{
	const struct egress_rule *r;
	bool ok = egress_name_allowed(&policy.egress, name, &r);

	audit(pid, "dns", "dns", NULL, name, r, ok,
	      r ? "rule" : "default-deny");
	return ok;
}
