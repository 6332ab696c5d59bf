/* netstack/flow.h: the flows the policy has allowed, checked again on
 * every frame that leaves the sandbox (defense in depth: a bug in the
 * socket layer, or a packet lwIP makes on its own, cannot reach an address
 * the policy did not pass at connect or sendto).
 *
 * A flow is (protocol, local port, remote address, remote port). The
 * socket layer adds one after an allow decision and removes it when its
 * connection ends; the resolver adds its upstream queries' flows.
 */
#ifndef MOAT_NETSTACK_FLOW_H
#define MOAT_NETSTACK_FLOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FLOWS_MAX 65536

struct flow_key {
	uint8_t proto;	/* IPPROTO_TCP, IPPROTO_UDP, IPPROTO_ICMP */
	uint8_t family; /* AF_INET or AF_INET6 */
	uint16_t lport; /* ours, host order */
	uint16_t rport; /* theirs, host order (ICMP: the echo id) */
	uint8_t raddr[16];
};

/* 0, -ENOSPC past FLOWS_MAX, -ENOMEM. Adding an existing flow counts
 * it twice (two sockets may share one, as UDP to one peer). */
int flow_add(const struct flow_key *k);
void flow_del(const struct flow_key *k);
/* Drop one use; the last one leaves the flow allowed for linger_ns more
 * (a closed TCP connection still sends its FIN and last ACKs). */
void flow_release(const struct flow_key *k, int64_t linger_ns);
/* Forget flows whose linger has passed. */
void flow_sweep(void);
bool flow_allowed(const struct flow_key *k);
size_t flow_count(void);
void flow_clear(void);

/* Is this outbound Ethernet frame part of an allowed flow? ARP is
 * allowed (it is how the gateway is found); any other frame must be IPv4
 * or IPv6 TCP, UDP or ICMP echo of a flow in the table. */
bool flow_frame_allowed(const uint8_t *frame, size_t len);

#endif
