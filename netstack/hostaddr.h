/* netstack/hostaddr.h: the host's own addresses, as its kernel says them.
 *
 * "The host's own addresses" (no name leads there; policy/egress.h rule
 * 2) are whatever the kernel delivers locally in the network namespace
 * where the sandbox's traffic leaves: the slirp helper's (the host's, or
 * an OCI bundle's namespace), or the one a --net=tap device routes into.
 * That is more than the interfaces' addresses (an AnyIP prefix, `ip route
 * add local 198.51.100.0/24 dev lo`, has none), and it changes while the
 * sandbox runs (a DHCP lease, a docker0 made later). So it is asked of
 * the kernel over rtnetlink, in that namespace, by the process that lives
 * there (netstack/slirp_helper.c, netstack/tap.c's netctl):
 *
 *  - hostaddr_is_local: the route the kernel would use to reach one
 *    address (RTM_GETROUTE), local or not: exact, policy routing and all;
 *  - hostaddr_dump: every interface address and every local, broadcast
 *    and anycast route of the local table, for the sentry's own check;
 *  - hostaddr_events: a subscription that says when either changed.
 *
 * These sockets are opened before the caller confines itself; reading and
 * writing them needs only sendto and recvfrom.
 */
#ifndef MOAT_NETSTACK_HOSTADDR_H
#define MOAT_NETSTACK_HOSTADDR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* An address (prefix 32 or 128) or a local prefix. */
struct hostaddr {
	uint8_t family; /* AF_INET or AF_INET6 */
	uint8_t prefix; /* bits */
	uint8_t addr[16];
};

struct hostaddr_set {
	struct hostaddr *v; /* owned */
	size_t n, cap;
};

/* A NETLINK_ROUTE socket of this network namespace: for requests
 * (events false), or subscribed to address, route and rule changes
 * (events true, non-blocking). The fd, or -errno. */
int hostaddr_socket(bool events);

/* Is addr (4 or 16 bytes) delivered to this host: is the route to it
 * local, broadcast, anycast or multicast? 1 or 0 (no route at all is 0:
 * a connection there fails anyway); -errno when the kernel could not be
 * asked (the caller fails closed). */
int hostaddr_is_local(int fd, int family, const uint8_t *addr);

/* The host's addresses and local prefixes into out (emptied first):
 * 0, or -errno (out then holds nothing). */
int hostaddr_dump(int fd, struct hostaddr_set *out);

/* Read what the subscription has. Returns a mask: HOSTADDR_ROUTES when
 * a route or rule changed (lookups may differ now), HOSTADDR_ADDRS when
 * an address or a local route did (or messages were lost: both), 0 for
 * nothing; -errno on failure. */
#define HOSTADDR_ROUTES 1
#define HOSTADDR_ADDRS 2
int hostaddr_events(int fd);

/* 0, or -ENOMEM past HOSTADDR_SET_MAX. */
#define HOSTADDR_SET_MAX (1u << 20)
int hostaddr_set_add(struct hostaddr_set *s, int family, unsigned prefix,
		     const uint8_t *addr);
void hostaddr_set_free(struct hostaddr_set *s);

#endif
