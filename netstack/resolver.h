/* netstack/resolver.h: the sandbox's DNS resolver, in the sentry.
 *
 * The guest's /etc/resolv.conf names NS_RESOLVER; a datagram a guest socket
 * sends to NS_RESOLVER port 53 never reaches a link: the socket layer hands
 * it here. A name the policy does not allow is answered NXDOMAIN at once
 * (and audited). An allowed one is asked upstream (the host's resolver, or
 * --dns) as a new query of the sentry's own, built from the parsed name and
 * type alone; the reply's A and AAAA records enter the name cache for
 * their TTL (so that "allow api.example.com" allows exactly the addresses
 * it resolved to), and the reply goes back to the guest with its own id.
 */
#ifndef MOAT_NETSTACK_RESOLVER_H
#define MOAT_NETSTACK_RESOLVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "netstack/dns.h"

#define RESOLVER_NAMES_MAX 4	/* names a caller usually wants */
#define RESOLVER_CACHE_MAX 4096 /* (address, name) pairs held */
#define RESOLVER_TIMEOUT_NS (5LL * 1000000000) /* then SERVFAIL */

/* How a later reply reaches the guest socket that asked (owner). */
typedef void (*resolver_deliver_fn)(void *owner, const uint8_t *msg,
				    size_t len);
void resolver_set_deliver(resolver_deliver_fn fn);

/* The upstream resolver (an IPv4 address); without one, allowed names get
 * SERVFAIL. 0 or -EINVAL. */
int resolver_set_upstream(const char *addr);
/* The upstream resolver's address into out: false when there is none. */
bool resolver_upstream(uint8_t out[4]);
/* The first IPv4 nameserver of a resolv.conf, into out (16 bytes). */
int resolver_upstream_from(const char *resolv_conf, char out[16]);

/* A guest's datagram to the resolver. Returns the length of a reply
 * written to out now, 0 when it was forwarded (the reply comes through the
 * deliver function, or SERVFAIL after RESOLVER_TIMEOUT_NS), or -1 when it
 * is dropped (not a query). */
long resolver_query(void *owner, int pid, const uint8_t *msg, size_t len,
		    uint8_t *out, size_t cap);

/* The socket went away: its pending queries are forgotten. */
void resolver_owner_gone(void *owner);

/* Timeouts of forwarded queries (monotonic ns; 0: none pending). */
int64_t resolver_deadline(void);
void resolver_run(void);

/* One query the resolver asked upstream. */
struct resolver_ask {
	uint16_t id;	    /* ours, from getrandom */
	struct dns_query q; /* the guest's, which it answers */
	int pid;	    /* who asked, for audit lines */
	uint8_t server[4];  /* the upstream resolver it was sent to */
};

/* A datagram that arrived from from:port on ask's socket: msg, len bytes,
 * in a buffer of cap. It answers ask only when it comes from the server's
 * port 53 and dns_parse_reply takes it as the reply to ask's id and
 * question (name without case, type, class IN); anything else is -1,
 * ignored and never cached: the caller keeps waiting, until the timeout,
 * for the right one. The reply's A and AAAA records enter the name cache,
 * but those netpol_answer refuses are dropped (and audited). Returns the
 * length of the reply for the guest, written over msg under the guest's
 * id: rebuilt from the records kept when the question is one for
 * addresses (A, AAAA, ANY, HTTPS, SVCB), when an address was dropped, or
 * when the message holds addresses not checked; else the message as it
 * came. (Guest queries for one name and type in flight at once share one
 * upstream query, and each gets this reply under its own id.) */
long resolver_take_reply(const struct resolver_ask *ask, const uint8_t from[4],
			 uint16_t port, uint8_t *msg, size_t len, size_t cap);

/* The names addr (4 or 16 bytes; an IPv4-mapped one is its IPv4
 * address) was resolved from, while their TTL lasts: at most max of them
 * (RESOLVER_CACHE_MAX: every one). */
size_t resolver_names_of(int family, const uint8_t *addr, const char **names,
			 size_t max);
/* Record one (for tests, and for the upstream replies). ttl in seconds.
 * A full cache gives up the expired entries first, then the oldest, but
 * never a live one whose name a deny rule names (netpol_name_denied):
 * 0, or -ENOSPC when every entry is such a one (the caller drops the
 * answer: an address the cache does not hold is one no name allows). */
int resolver_cache_add(int family, const uint8_t *addr, const char *name,
		       uint32_t ttl);
/* The policy changed: which names a deny rule names, again. */
void resolver_policy_changed(void);

#endif
