/* netstack/netpol.c: the policy in force, decisions, audit lines. */
#include "netstack/netpol.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <json-c/json.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "netstack/resolver.h"
#include "sentry/sentry.h"

static struct moat_policy policy;
static char sandbox[80] = "moat";

/* The host's own addresses: no name leads there, and `*` does not reach
 * them (policy/egress.h, rule 2). */
#define HOST_ADDRS_MAX 256
static struct host_addr {
	int family;
	uint8_t addr[16];
} host_addrs[HOST_ADDRS_MAX];
static size_t nhost_addrs;

void netpol_set(struct moat_policy *p)
{
	policy_free(&policy);
	policy = *p;
	memset(p, 0, sizeof(*p));
	resolver_policy_changed();
}

bool netpol_name_denied(const char *name)
{
	return egress_name_denied(&policy.egress, name);
}

const struct moat_policy *netpol_get(void)
{
	return &policy;
}

void netpol_host_addr_add(int family, const uint8_t *addr)
{
	struct host_addr *h;

	if (nhost_addrs == HOST_ADDRS_MAX ||
	    (family != AF_INET && family != AF_INET6))
		return;
	h = &host_addrs[nhost_addrs++];
	h->family = family;
	memset(h->addr, 0, sizeof(h->addr));
	memcpy(h->addr, addr, family == AF_INET ? 4 : 16);
}

int netpol_host_addrs_scan(void)
{
	struct ifaddrs *ifa, *i;

	if (getifaddrs(&ifa) < 0)
		return -errno;
	for (i = ifa; i; i = i->ifa_next) {
		const struct sockaddr *sa = i->ifa_addr;

		if (!sa)
			continue;
		if (sa->sa_family == AF_INET)
			netpol_host_addr_add(
				AF_INET, (const uint8_t *)&(
						 (const struct sockaddr_in *)sa)
						 ->sin_addr);
		else if (sa->sa_family == AF_INET6)
			netpol_host_addr_add(AF_INET6,
					     ((const struct sockaddr_in6 *)sa)
						     ->sin6_addr.s6_addr);
	}
	freeifaddrs(ifa);
	return 0;
}

void netpol_host_addrs_clear(void)
{
	nhost_addrs = 0;
}

/* Is addr (canonical: a mapped IPv6 address is given as IPv4) the host's? */
static bool host_own(int family, const uint8_t *addr)
{
	size_t i;

	for (i = 0; i < nhost_addrs; i++)
		if (host_addrs[i].family == family &&
		    !memcmp(host_addrs[i].addr, addr,
			    family == AF_INET ? 4 : 16))
			return true;
	return false;
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
	case EGRESS_BY_HOST:
		return "host-address";
	case EGRESS_BY_DEFAULT:
		break;
	}
	return "default-deny";
}

/* A guest in a loop must not fill the host's disk through the audit log:
 * at most AUDIT_PER_SEC decision lines a second; the rest are counted,
 * and the count is one line when the next second begins. */
#define AUDIT_PER_SEC 200

static bool audit_budget(void)
{
	static time_t second;
	static unsigned used, suppressed;
	time_t now = time(NULL);

	if (now != second) {
		if (suppressed) {
			char jsb[96];

			jstr(jsb, sizeof(jsb), sandbox);
			audit_log("\"event\":\"audit-suppressed\","
				  "\"sandbox\":%s,\"lines\":%u",
				  jsb, suppressed);
		}
		second = now;
		used = suppressed = 0;
	}
	if (used < AUDIT_PER_SEC) {
		used++;
		return true;
	}
	suppressed++;
	return false;
}

static void audit(int pid, const char *event, const char *proto,
		  const char *dest, const char *name,
		  const struct egress_rule *rule, bool allow,
		  const char *reason)
{
	char jsb[96], jdest[80], jname[300], jrule[400];

	if (!audit_budget())
		return;

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

static const char *proto_name(int proto)
{
	return proto == IPPROTO_UDP  ? "udp" :
	       proto == IPPROTO_ICMP ? "icmp" :
				       "tcp";
}

/* 10.0.2.0/24 or fec0::/64: the sandbox's side of the link. */
static bool own_link(const struct egress_query *q)
{
	static const uint8_t fec0[8] = { 0xfe, 0xc0 };

	if (q->family == AF_INET)
		return q->addr[0] == 10 && q->addr[1] == 0 && q->addr[2] == 2;
	return !memcmp(q->addr, fec0, 8);
}

int netpol_check(int pid, int proto, const struct sockaddr *sa, socklen_t len)
{
	struct egress_query q = { 0 };
	struct egress_decision d;
	/* every name the address was resolved from: a deny rule for one of
	 * them must see it, however many others the guest resolved first */
	static const char *names[RESOLVER_CACHE_MAX];
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

		q.port = ntohs(in6->sin6_port);
		if (IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr)) {
			/* its IPv4 address: the cache and the audit line
			 * know it that way */
			q.family = AF_INET;
			memcpy(q.addr, &in6->sin6_addr.s6_addr[12], 4);
			inet_ntop(AF_INET, q.addr, ip, sizeof(ip));
			snprintf(dest, sizeof(dest), "%s:%u", ip, q.port);
		} else {
			q.family = AF_INET6;
			memcpy(q.addr, &in6->sin6_addr, 16);
			inet_ntop(AF_INET6, q.addr, ip, sizeof(ip));
			snprintf(dest, sizeof(dest), "[%s]:%u", ip, q.port);
		}
	} else {
		return -EAFNOSUPPORT;
	}
	q.proto = proto == IPPROTO_UDP	? EGRESS_UDP :
		  proto == IPPROTO_ICMP ? EGRESS_ICMP :
					  EGRESS_TCP;
	if (own_link(&q)) {
		/* the link's own network (slirp's gateway and services):
		 * never a destination, whatever the rules say */
		audit(pid, "egress", proto_name(proto), dest, NULL, NULL, false,
		      "sandbox-link");
		return -EACCES;
	}
	q.names = names;
	q.nnames =
		resolver_names_of(q.family, q.addr, names, RESOLVER_CACHE_MAX);
	q.host = host_own(q.family, q.addr);
	egress_decide(&policy.egress, &q, &d);
	audit(pid, "egress", proto_name(proto), dest,
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

bool netpol_answer(int pid, const char *name, int family, const uint8_t *addr)
{
	char ip[INET6_ADDRSTRLEN];
	const struct egress_rule *r = NULL;
	enum egress_reason why;
	struct egress_decision d = { 0 };
	uint8_t a[16] = { 0 };

	memcpy(a, addr, family == AF_INET ? 4 : 16);
	if (family == AF_INET6 && IN6_IS_ADDR_V4MAPPED((struct in6_addr *)a)) {
		/* the host's IPv4 addresses in their mapped form too */
		memmove(a, a + 12, 4);
		memset(a + 4, 0, 12);
		family = AF_INET;
	}
	if (egress_answer_ok(&policy.egress, name, family, a,
			     host_own(family, a), &why))
		return true;
	egress_name_allowed(&policy.egress, name, &r);
	d.reason = why;
	inet_ntop(family, a, ip, sizeof(ip));
	audit(pid, "dns-answer", "dns", ip, name, r, false, reason_text(&d));
	return false;
}
