/* netstack/netpol.h: the sandbox's egress policy in force, its decisions,
 * and their audit lines.
 *
 * One policy per sandbox, replaceable while it runs. Every decision about
 * a destination (a TCP connect, the first datagram of a UDP flow, a DNS
 * name) is one JSON line in the audit log: time, sandbox, pid, what was
 * asked, the rule that decided (and its line in the policy file), and the
 * verdict. The names an address was resolved from come from the
 * resolver's cache, so a rule for api.example.com matches the addresses
 * api.example.com resolved to, for as long as their TTL.
 */
#ifndef MOAT_NETSTACK_NETPOL_H
#define MOAT_NETSTACK_NETPOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "policy/policy.h"

/* Take p as the policy in force (the previous one is freed). */
void netpol_set(struct moat_policy *p);
/* The same for a live change (moat policy set), whose credentials part
 * the caller has found cred_equal to the one in force: that one is kept
 * (what refers into it stays valid) and p's is freed. Credentials change
 * only through `moat secret`. */
void netpol_replace(struct moat_policy *p);
const struct moat_policy *netpol_get(void);
/* `moat secret set`: credential c (checked by the caller against the
 * policy in force) goes after the others, its fields moved out of *c.
 * Entries may move: nothing keeps a pointer to one. 0 or -ENOMEM. */
int netpol_cred_add(struct credential *c);

/* An audit line's members for a decision into out (what audit_guest
 * writes; every string quoted by json_quote, cut, never the record);
 * its length. Pure: tests/unit/audit feeds it hostile names. */
size_t netpol_audit_body(char *out, size_t cap, int pid, const char *event,
			 const char *proto, const char *dest, const char *name,
			 const struct egress_rule *rule, bool allow,
			 const char *reason, const char *by);
/* Its kind in the limiter's AUDIT_NET table: the event, the verdict,
 * the reason and the protocol, each one of a few constants. */
unsigned netpol_audit_kind(const char *event, const char *proto, bool allow,
			   const char *reason);

/* May pid reach sa over proto (IPPROTO_TCP, IPPROTO_UDP)? Audited.
 * Returns 0, or -EACCES when the policy denies it (the caller turns that
 * into its errno: ECONNREFUSED for connect, EPERM for sendto). */
int netpol_check(int pid, int proto, const struct sockaddr *sa, socklen_t len);

/* Does a deny rule of the policy in force name this name (on any port)?
 * The resolver keeps such names in its cache for their whole TTL. */
bool netpol_name_denied(const char *name);

/* May pid's resolver query for name be answered? Audited. */
bool netpol_name(int pid, const char *name);

/* May the resolver give pid addr (4 or 16 bytes) as an answer for name
 * (policy/egress.h: egress_answer_ok)? A refusal is audited ("dns-answer",
 * with the reason: special-range or host-address); the caller drops the
 * record, from the reply and from the name cache alike. */
bool netpol_answer(int pid, const char *name, int family, const uint8_t *addr);

/* The host's own addresses, which no name leads to (nor `*`): the set
 * the process beyond the link last reported (LC_HOSTS: the kernel's, in
 * the namespace where the sandbox's traffic leaves), v[n] copied;
 * unknown: there is no telling, so every address counts as the host's
 * (fails closed). netpol_host_addr_add adds one (a refused one, and
 * tests); netpol_host_addrs_clear empties the set. */
struct hostaddr;
void netpol_host_set(const struct hostaddr *v, size_t n, bool unknown);
void netpol_host_addr_add(int family, const uint8_t *addr);
void netpol_host_addrs_clear(void);

/* The policy's address rules (and the resolver's upstream) to the process
 * beyond the link (LC_RULES), for its own check of the host's addresses;
 * netpol_set does it at each change. */
void netpol_push_rules(void);

/* That process refused d's flow (LC_REFUSED): to one of the host's
 * addresses, with no address rule to name it. Audited; the address then
 * counts as the host's. */
struct lc_dest;
void netpol_link_refused(const struct lc_dest *d);

#endif
