/* netstack/netpol.c: the policy in force, decisions, audit lines. */
#include "netstack/netpol.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "netstack/linkctl.h"
#include "netstack/netstack.h"
#include "netstack/resolver.h"
#include "sentry/audit.h"
#include "sentry/sentry.h"

static struct moat_policy policy;

/* The host's own addresses: no name leads there, and `*` does not reach
 * them (policy/egress.h, rule 2). As the process beyond the link last
 * said them (LC_HOSTS, netstack/linkctl.h), and those it refused since:
 * whole addresses sorted for a binary search, and prefixes (AnyIP, the
 * loopback's /8), few, in a list. No cap but memory; without memory for
 * them, every address counts as the host's. */
static struct hostaddr *host_exact, *host_prefix;
static size_t nhost_exact, nhost_prefix, cap_exact;
static bool host_unknown;

static int host_cmp(const void *a, const void *b)
{
	const struct hostaddr *x = a, *y = b;

	if (x->family != y->family)
		return x->family < y->family ? -1 : 1;
	return memcmp(x->addr, y->addr, 16);
}

static void host_canon(struct hostaddr *h)
{
	static const uint8_t mapped[12] = { [10] = 0xff, [11] = 0xff };

	if (h->family == AF_INET6 && h->prefix >= 96 &&
	    !memcmp(h->addr, mapped, 12)) {
		memmove(h->addr, h->addr + 12, 4);
		memset(h->addr + 4, 0, 12);
		h->family = AF_INET;
		h->prefix -= 96;
	}
	if (h->family == AF_INET)
		memset(h->addr + 4, 0, 12);
}

void netpol_host_set(const struct hostaddr *v, size_t n, bool unknown)
{
	struct hostaddr *e = NULL, *p = NULL;
	size_t i, ne = 0, np = 0;

	if (unknown)
		goto fail;
	e = malloc((n ? n : 1) * sizeof(*e));
	p = malloc((n ? n : 1) * sizeof(*p));
	if (!e || !p)
		goto fail;
	for (i = 0; i < n; i++) {
		struct hostaddr h = v[i];

		if (h.family != AF_INET && h.family != AF_INET6)
			continue;
		host_canon(&h);
		if (h.prefix == (h.family == AF_INET ? 32 : 128))
			e[ne++] = h;
		else
			p[np++] = h;
	}
	qsort(e, ne, sizeof(*e), host_cmp);
	free(host_exact);
	free(host_prefix);
	host_exact = e;
	host_prefix = p;
	nhost_exact = cap_exact = ne;
	nhost_prefix = np;
	host_unknown = false;
	return;
fail:
	free(e);
	free(p);
	host_unknown = true;
	audit_log("\"event\":\"net-host-addresses\",\"reason\":\"too many "
		  "to hold: every address counts as the host's\"");
}

void netpol_host_addr_add(int family, const uint8_t *addr)
{
	struct hostaddr h = { .family = (uint8_t)family };
	struct hostaddr *n;

	if (family != AF_INET && family != AF_INET6)
		return;
	h.prefix = family == AF_INET ? 32 : 128;
	memcpy(h.addr, addr, family == AF_INET ? 4 : 16);
	host_canon(&h);
	if (nhost_exact &&
	    bsearch(&h, host_exact, nhost_exact, sizeof(h), host_cmp))
		return;
	if (nhost_exact == cap_exact) {
		size_t cap = cap_exact ? cap_exact * 2 : 16;

		n = realloc(host_exact, cap * sizeof(*n));
		if (!n) {
			host_unknown = true;
			return;
		}
		host_exact = n;
		cap_exact = cap;
	}
	host_exact[nhost_exact++] = h;
	qsort(host_exact, nhost_exact, sizeof(h), host_cmp);
}

void netpol_host_addrs_clear(void)
{
	netpol_host_set(NULL, 0, false);
}

static bool prefix_has(const struct hostaddr *p, const uint8_t *a)
{
	unsigned full = p->prefix / 8, rest = p->prefix % 8;

	if (memcmp(a, p->addr, full))
		return false;
	return !rest ||
	       ((a[full] ^ p->addr[full]) & (uint8_t)(0xff00u >> rest)) == 0;
}

/* Is addr (canonical: a mapped IPv6 address is given as IPv4) the host's? */
static bool host_own(int family, const uint8_t *addr)
{
	struct hostaddr h = { .family = (uint8_t)family };
	size_t i;

	if (host_unknown)
		return true;
	memcpy(h.addr, addr, family == AF_INET ? 4 : 16);
	if (nhost_exact &&
	    bsearch(&h, host_exact, nhost_exact, sizeof(h), host_cmp))
		return true;
	for (i = 0; i < nhost_prefix; i++)
		if (host_prefix[i].family == family &&
		    prefix_has(&host_prefix[i], h.addr))
			return true;
	return false;
}

void netpol_set(struct moat_policy *p)
{
	policy_free(&policy);
	policy = *p;
	memset(p, 0, sizeof(*p));
	resolver_policy_changed();
	netpol_push_rules();
}

int netpol_cred_add(struct credential *c)
{
	struct cred_policy *cp = &policy.cred;
	struct credential *v = realloc(cp->v, (cp->n + 1) * sizeof(*v));

	if (!v)
		return -ENOMEM;
	cp->v = v;
	v[cp->n++] = *c;
	memset(c, 0, sizeof(*c));
	return 0;
}

void netpol_replace(struct moat_policy *p)
{
	cred_free(&p->cred);
	p->cred = policy.cred;
	memset(&policy.cred, 0, sizeof(policy.cred));
	netpol_set(p);
}

void netpol_push_rules(void)
{
	/* static: 100 KiB, and the sentry is one thread */
	static struct lc_rule r[EGRESS_RULES_MAX + 1];
	static uint8_t msg[LC_MSG_MAX];
	size_t n = lc_rules_of(&policy.egress, r, EGRESS_RULES_MAX), off = 0;
	uint8_t up[4];

	/* The resolver's own flows to its upstream, which may be one of
	 * the host's addresses (a dnsmasq on the LAN address): UDP to its
	 * port 53, whatever the policy says. */
	if (resolver_upstream(up)) {
		memset(&r[n], 0, sizeof(r[n]));
		r[n].family = AF_INET;
		r[n].prefix = 32;
		r[n].protos = EGRESS_UDP;
		r[n].port_lo = r[n].port_hi = 53;
		memcpy(r[n].addr, up, 4);
		n++;
	}
	do {
		size_t k = n - off > LC_CHUNK ? LC_CHUNK : n - off;
		uint8_t flags = (off ? 0 : LC_FIRST) |
				(off + k == n ? LC_LAST : 0);
		long len = lc_put_rules(flags, r + off, k, msg, sizeof(msg));

		if (len < 0 || netstack_ctl_send(msg, (size_t)len) < 0)
			return;
		off += k;
	} while (off < n);
}

bool netpol_name_denied(const char *name)
{
	return egress_name_denied(&policy.egress, name);
}

const struct moat_policy *netpol_get(void)
{
	return &policy;
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

/* One of n names: its place in names, n if it is none. */
static unsigned place(const char *const *names, unsigned n, const char *s)
{
	unsigned i;

	for (i = 0; i < n && strcmp(names[i], s); i++)
		;
	return i;
}

unsigned netpol_audit_kind(const char *event, const char *proto, bool allow,
			   const char *reason)
{
	static const char *const events[] = { "egress", "dns", "dns-answer",
					      "credential" };
	static const char *const protos[] = { "tcp", "udp", "icmp", "dns" };
	static const char *const reasons[] = { "rule", "special-range",
					       "host-address", "default-deny" };
	unsigned e = place(events, 4, event), p = place(protos, 4, proto);
	unsigned r = place(reasons, 4, reason);

	/* each is one of the sentry's constants; anything else (none is)
	 * is the table's last kind */
	if (e == 4 || p == 4 || r == 4)
		return AUDIT_NET_KINDS - 1;
	return ((e * 2 + allow) * 4 + r) * 4 + p;
}

/* The longest quoted forms: what is longer is cut (json_quote), never
 * the record. A DNS name is at most 253 bytes: one of quotes or
 * backslashes (two a byte escaped) fits whole; one of control bytes (six)
 * is cut. The whole line stays under AUDIT_LINE_MAX. */
#define JDEST 96
#define JNAME 520
#define JRULE 400

size_t netpol_audit_body(char *out, size_t cap, int pid, const char *event,
			 const char *proto, const char *dest, const char *name,
			 const struct egress_rule *rule, bool allow,
			 const char *reason, const char *by)
{
	char jdest[JDEST], jname[JNAME], jrule[JRULE], jby[32] = "";
	int n;

	json_quote(jdest, sizeof(jdest), dest);
	json_quote(jname, sizeof(jname), name);
	json_quote(jrule, sizeof(jrule), rule ? rule->text : NULL);
	if (by)
		snprintf(jby, sizeof(jby), ",\"by\":\"%s\"", by);
	n = snprintf(out, cap,
		     "\"event\":\"%s\",\"pid\":%d,\"proto\":\"%s\","
		     "\"dest\":%s,\"name\":%s,\"rule\":%s,\"line\":%u,"
		     "\"verdict\":\"%s\",\"reason\":\"%s\"%s",
		     event, pid, proto, jdest, jname, jrule,
		     rule ? rule->line : 0, allow ? "allow" : "deny", reason,
		     jby);
	return n > 0 ? (size_t)n : 0;
}

/* by: which line decided, when not the sentry's own check ("link": the
 * process beyond the link, asking its kernel), or NULL. */
static void audit_by(int pid, const char *event, const char *proto,
		     const char *dest, const char *name,
		     const struct egress_rule *rule, bool allow,
		     const char *reason, const char *by)
{
	char body[AUDIT_LINE_MAX];

	netpol_audit_body(body, sizeof(body), pid, event, proto, dest, name,
			  rule, allow, reason, by);
	/* A guest in a loop must not fill the host's disk through the audit
	 * log: these go through the sandbox's limiter (sentry/audit.h), in
	 * a class of their own, the first of each verdict, reason and
	 * protocol always written. */
	audit_guest(AUDIT_NET, netpol_audit_kind(event, proto, allow, reason),
		    "%s", body);
}

static void audit(int pid, const char *event, const char *proto,
		  const char *dest, const char *name,
		  const struct egress_rule *rule, bool allow,
		  const char *reason)
{
	audit_by(pid, event, proto, dest, name, rule, allow, reason, NULL);
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

void netpol_link_refused(const struct lc_dest *d)
{
	static const char *names[RESOLVER_CACHE_MAX];
	struct egress_query q = { .family = d->family, .port = d->dport };
	struct egress_decision dec;
	char dest[INET6_ADDRSTRLEN + 16], ip[INET6_ADDRSTRLEN];
	const char *proto = d->proto == IPPROTO_TCP ? "tcp" :
			    d->proto == IPPROTO_UDP ? "udp" :
						      "icmp";

	if (d->family != AF_INET && d->family != AF_INET6)
		return;
	memcpy(q.addr, d->addr, 16);
	q.proto = d->proto == IPPROTO_TCP ? EGRESS_TCP :
		  d->proto == IPPROTO_UDP ? EGRESS_UDP :
					    EGRESS_ICMP;
	/* the rule the sentry's own check let it through by (it did not
	 * know the address as the host's): the audit line names it */
	q.names = names;
	q.nnames =
		resolver_names_of(q.family, q.addr, names, RESOLVER_CACHE_MAX);
	egress_decide(&policy.egress, &q, &dec);
	inet_ntop(d->family, d->addr, ip, sizeof(ip));
	if (d->proto == IPPROTO_TCP || d->proto == IPPROTO_UDP)
		snprintf(dest, sizeof(dest),
			 d->family == AF_INET ? "%s:%u" : "[%s]:%u", ip,
			 d->dport);
	else
		snprintf(dest, sizeof(dest), "%s", ip);
	audit_by(0, "egress", proto, dest,
		 dec.name ? dec.name : (q.nnames ? names[0] : NULL), dec.rule,
		 false, "host-address", "link");
	/* the host's, then: the next connect is refused here, at once */
	netpol_host_addr_add(d->family, d->addr);
}
