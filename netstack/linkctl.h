/* netstack/linkctl.h: what the sentry and the process beyond its link
 * tell each other, and the link's own check of the host's addresses.
 *
 * The process beyond the link (the `moat netslirp` helper, or the netctl
 * process of --net=tap) lives in the network namespace where the
 * sandbox's traffic leaves, and so it alone can ask that namespace's
 * kernel which addresses are the host's (netstack/hostaddr.h). Over a
 * SOCK_SEQPACKET pair of its own (not the link: frames there may be
 * dropped when it is full, these messages must not be), one message each:
 *
 *  sentry -> helper  LC_RULES: the policy's address and CIDR rules (the
 *                    only rules that may name the host's own addresses),
 *                    in chunks, FIRST to LAST; again at each policy change.
 *  helper -> sentry  LC_HOSTS: the host's addresses and local prefixes,
 *                    in chunks, FIRST to LAST; the first set answers the
 *                    first rules, then again whenever they change.
 *                    The sentry's own check (netpol) uses the last set.
 *  helper -> sentry  LC_REFUSED: a connection (or datagram) the helper
 *                    refused: to one of the host's addresses, and no
 *                    address rule names it. The sentry writes the audit
 *                    line and counts the address as the host's.
 *
 * The helper's check is the last line: whatever the sentry decided, a
 * flow's first frame to an address the kernel delivers locally passes
 * only when an address rule allows it (lc_rules_allow); a TCP SYN gets a
 * RST back (lc_build_rst), so that the guest's connect fails at once.
 *
 * Encoding: fixed little records, host byte order (both ends are one
 * binary on one machine), checked for length on the way in. Everything
 * here is pure (fuzzed: fuzz_linkctl).
 */
#ifndef MOAT_NETSTACK_LINKCTL_H
#define MOAT_NETSTACK_LINKCTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "netstack/hostaddr.h"
#include "policy/egress.h"

enum lc_type {
	LC_RULES = 1,
	LC_HOSTS = 2,
	LC_REFUSED = 3,
};

#define LC_FIRST 1 /* the first chunk of a set: what came before is void */
#define LC_LAST 2  /* the last: the set is whole */

struct lc_hdr {
	uint8_t type;
	uint8_t flags;
	uint16_t n; /* records that follow */
};

/* An address or CIDR rule. */
struct lc_rule {
	uint8_t deny, family, prefix, protos;
	uint16_t port_lo, port_hi;
	uint8_t addr[16];
};

/* The first frame of a flow: where it goes. */
struct lc_dest {
	uint8_t proto;	/* IPPROTO_TCP, IPPROTO_UDP, IPPROTO_ICMP(V6) */
	uint8_t family; /* AF_INET or AF_INET6 */
	uint16_t sport, dport;
	uint8_t addr[16];
};

#define LC_CHUNK 1024 /* records in one message at most */
#define LC_MSG_MAX (sizeof(struct lc_hdr) + LC_CHUNK * sizeof(struct lc_rule))

/* Messages into out (cap bytes): their length, or -ENOSPC. */
long lc_put_rules(uint8_t flags, const struct lc_rule *r, size_t n,
		  uint8_t *out, size_t cap);
long lc_put_hosts(uint8_t flags, const struct hostaddr *h, size_t n,
		  uint8_t *out, size_t cap);
long lc_put_refused(const struct lc_dest *d, uint8_t *out, size_t cap);

/* A message read: its header, and where its records start (inside msg).
 * 0, or -EINVAL when it is not one whole message of a known type (or a
 * record in it is malformed: a family other than AF_INET/AF_INET6, a
 * prefix longer than its family's). */
int lc_parse(const uint8_t *msg, size_t len, struct lc_hdr *h,
	     const void **records);

/* The address rules of p as records (at most max); how many there are. */
size_t lc_rules_of(const struct egress_policy *p, struct lc_rule *out,
		   size_t max);
/* Records into a policy of address rules (p emptied first): 0, -ENOMEM. */
int lc_rules_to_policy(const struct lc_rule *r, size_t n,
		       struct egress_policy *p);

/* Does this outbound Ethernet frame begin a flow that the helper must
 * check (a TCP SYN without ACK; any UDP datagram; an ICMP or ICMPv6 echo
 * request)? 1 with d filled, or 0 (ARP, neighbour discovery, a segment
 * of a connection made already, a malformed frame: slirp's to judge). */
int lc_frame_dest(const uint8_t *frame, size_t len, struct lc_dest *d);

/* May a flow to d, an address of the host's, begin? Only when an address
 * or CIDR rule of p (records from LC_RULES) allows it, and none denies. */
bool lc_rules_allow(const struct egress_policy *p, const struct lc_dest *d);

/* The RST that answers the TCP SYN in frame (lc_frame_dest gave its
 * dest): into out, its length; 0 when frame is no TCP SYN. */
size_t lc_build_rst(const uint8_t *frame, size_t len, uint8_t *out, size_t cap);

#endif
