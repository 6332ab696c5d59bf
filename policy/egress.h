/* policy/egress.h: the egress policy of one sandbox, and its matcher.
 *
 * A rule is a destination (a name, `*.suffix`, an address, a CIDR or `*`),
 * optionally with a port or port range and a protocol, and is either an
 * allow or a deny rule. The written form, on the command line and in a
 * policy file, is
 *
 *	DEST[:PORT[-PORT]][/tcp|/udp|/icmp][+private]
 *
 * with an IPv6 address or CIDR in brackets when a port follows
 * (`[2001:db8::/32]:443`). `+private` is only for an exact name that is
 * allowed to resolve to a private address (rule 2). Decisions:
 *
 *  1. a deny rule that matches denies (deny wins);
 *  2. an address in a special range (loopback, link-local, the cloud
 *     metadata services wherever they sit, private and shared ranges,
 *     documentation and benchmarking ranges, multicast, unspecified, and
 *     the IPv6 forms that carry an IPv4 address), or one of the host's own
 *     addresses (the caller says which), is allowed only by a rule that
 *     names it: an address or CIDR rule that covers it, or, for a private
 *     address (10/8, 172.16/12, 192.168/16, 100.64/10, fc00::/7, less the
 *     metadata addresses in them) that is not the host's, an exact name
 *     rule marked `+private` whose name resolved to it. `*`, `*.domain` and unmarked names are not enough:
 *     whoever runs a name's DNS could point it at the host, its LAN or the
 *     metadata address (DNS rebinding). The host's own addresses, loopback
 *     and the unspecified address are never reached through a name;
 *  3. otherwise the first allow rule that matches allows;
 *  4. otherwise the destination is denied (default deny).
 *
 * A name rule matches a connection to an address only through the names
 * that address was resolved from (the caller passes them: the DNS flow
 * table knows). `*.example.com` matches names below example.com, not
 * example.com itself. Names compare without case and trailing dot.
 *
 * Everything here is pure computation on caller memory: no I/O, no
 * global state, so the matcher is fuzzed and unit-tested directly.
 */
#ifndef MOAT_POLICY_EGRESS_H
#define MOAT_POLICY_EGRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define EGRESS_NAME_MAX 253 /* a DNS name in text form */

enum egress_proto {
	EGRESS_TCP = 1u << 0,
	EGRESS_UDP = 1u << 1,
	EGRESS_ICMP = 1u << 2,
	/* a rule without /proto: TCP and UDP, not ICMP (ICMP is named) */
	EGRESS_PROTO_DEFAULT = EGRESS_TCP | EGRESS_UDP,
};

enum egress_dest {
	EGRESS_ANY,    /* "*" */
	EGRESS_NAME,   /* "api.example.com" */
	EGRESS_SUFFIX, /* "*.example.com": name holds "example.com" */
	EGRESS_NET,    /* an address (full prefix) or a CIDR */
};

struct egress_rule {
	bool deny;
	enum egress_dest kind;
	char name[EGRESS_NAME_MAX + 1]; /* lower case, no trailing dot */
	int family;		   /* AF_INET or AF_INET6, for EGRESS_NET */
	uint8_t addr[16];	   /* network address, host bits cleared */
	unsigned prefix;	   /* bits */
	uint16_t port_lo, port_hi; /* 0..65535 when no port was given */
	unsigned protos;	   /* enum egress_proto bits */
	bool allow_private; /* "+private": EGRESS_NAME allow rules only */
	char text[EGRESS_NAME_MAX + 64]; /* as written, for the audit log */
	unsigned line; /* in the policy file; 0: command line */
};

struct egress_policy {
	struct egress_rule *rules; /* owned */
	size_t n, cap;
};

/* What is being decided. addr is the destination (family AF_INET: 4
 * bytes; AF_INET6: 16, an IPv4-mapped one is treated as IPv4); names are
 * the names it was resolved from (may be none). */
struct egress_query {
	int family;
	uint8_t addr[16];
	uint16_t port;
	unsigned proto; /* one enum egress_proto bit */
	const char *const *names;
	size_t nnames;
	bool host; /* addr is one of the host's own */
};

enum egress_reason {
	EGRESS_BY_RULE,	   /* rule says which */
	EGRESS_BY_DEFAULT, /* no rule matched: default deny */
	EGRESS_BY_SPECIAL, /* a special range no rule named */
	EGRESS_BY_HOST,	   /* the host's own (or loopback, unspecified),
			    * matched only by rules that may not name it */
};

struct egress_decision {
	bool allow;
	enum egress_reason reason;
	const struct egress_rule *rule; /* the rule that decided, or NULL */
	const char *name; /* the name a name rule matched, or NULL */
};

/* Parse one written rule. Returns 0, or -EINVAL with a message in err
 * (which names what is wrong with the text). */
int egress_rule_parse(const char *text, bool deny, struct egress_rule *out,
		      char *err, size_t errlen);

/* Mark a parsed rule `+private` (the policy file's {"private": true}):
 * 0, or -EINVAL with a message in err when r is not an exact name allow
 * rule. Its text gains "+private" for the audit log and `policy show`. */
int egress_rule_mark_private(struct egress_rule *r, char *err, size_t errlen);

/* Append a parsed rule (copied). -ENOMEM, or -E2BIG past EGRESS_RULES_MAX. */
#define EGRESS_RULES_MAX 4096
int egress_add(struct egress_policy *p, const struct egress_rule *r);
void egress_free(struct egress_policy *p);

/* Decide one connection or datagram. */
void egress_decide(const struct egress_policy *p, const struct egress_query *q,
		   struct egress_decision *d);

/* May the sandbox resolve this name? Denied names get NXDOMAIN. The
 * deciding rule (or NULL: default deny) is returned through rule. */
bool egress_name_allowed(const struct egress_policy *p, const char *name,
			 const struct egress_rule **rule);

/* Does a deny rule name this name (an exact or `*.domain` rule, whatever
 * its ports and protocols)? */
bool egress_name_denied(const struct egress_policy *p, const char *name);

/* Lower-case name into out without a trailing dot, checking it is a DNS
 * name in text form (labels of 1..63 letters, digits, '-' and '_', 253 in
 * all). Returns 0 or -EINVAL. */
int egress_name_normalize(const char *name, char out[EGRESS_NAME_MAX + 1]);

/* Is this address in a special range (rule 2 above)? */
bool egress_addr_special(int family, const uint8_t *addr);

/* May the resolver hand out addr (family AF_INET: 4 bytes, AF_INET6: 16)
 * as an answer for name, a name the policy lets resolve? Yes for an
 * address outside the special ranges, or one an address or CIDR allow rule
 * covers (whatever its port), or a private one (not the host's) of a name
 * that a `+private` rule allows. Never for the host's own (host), loopback
 * or unspecified addresses. Otherwise the answer is dropped before the
 * guest or the name cache sees it, and *why says which range refused it
 * (EGRESS_BY_SPECIAL or EGRESS_BY_HOST). */
bool egress_answer_ok(const struct egress_policy *p, const char *name,
		      int family, const uint8_t *addr, bool host,
		      enum egress_reason *why);

#endif
