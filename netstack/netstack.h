/* netstack/netstack.h: the sandbox's TCP/IP stack beyond its loopback.
 *
 * lwIP (Debian's liblwip) runs inside the sentry, single-threaded: the
 * sentry's event loop feeds it frames from the link and runs its timers;
 * no lwIP thread exists. The link is one file descriptor that carries
 * Ethernet frames, one per read and write: a socketpair to the `moat
 * netslirp` helper (--net=slirp, libslirp in its own process) or a TAP
 * device (--net=tap). The sentry itself never opens a host socket.
 *
 * Guest sockets stay the sentry's (sentry/socket.c); a socket whose peer is
 * outside the sandbox gets an ns_conn, the lwIP side of it. The policy is
 * decided before an ns_conn connects or sends (policy/egress.h), and again
 * on every frame that leaves: a frame of no allowed flow is dropped and
 * counted (the flow table, netstack/flow.c).
 */
#ifndef MOAT_NETSTACK_NETSTACK_H
#define MOAT_NETSTACK_NETSTACK_H

#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "lib/util.h"

enum net_mode {
	NET_NONE,  /* loopback only: no netstack */
	NET_SLIRP, /* libslirp in the netslirp helper */
	NET_TAP,   /* a TAP device in a namespace moat made */
};

/* The sandbox's addresses on its link (IPv4; slirp's defaults). */
#define NS_ADDR "10.0.2.15"
#define NS_GATEWAY "10.0.2.2"
#define NS_NETMASK "255.255.255.0"
#define NS_RESOLVER "10.0.2.3" /* answered by the sentry itself */
/* IPv6 (slirp's site-local prefix; the route comes from its RAs) */
#define NS_ADDR6 "fec0::15"
#define NS_PREFIX6 "fec0::"
#define NS_GATEWAY6 "fec0::2"
/* eth0's MAC address: the sandbox's own, fixed (qemu's slirp default),
 * never the host's. */
#define NS_MAC                                                                 \
	{                                                                      \
		0x52, 0x54, 0x00, 0x12, 0x34, 0x56                             \
	}
#define NS_MTU 1500 /* what the guest is told, and sizes its datagrams by */
/* The link between lwIP and slirp is a socketpair, not a wire: frames as
 * large as TCP segments of 32 KiB cut the per-frame work 20-fold (as
 * slirp4netns's --mtu=65520 does). Kept below 64 KiB, where lwIP's
 * 16-bit buffer lengths would wrap. */
#define NS_LINK_MTU 32808
/* lwIP's ephemeral ports, which connections through the netstack get
 * (TCP_LOCAL_PORT_RANGE_START/END in its tcp.c, UDP_ in udp.c: defaults no
 * header of Debian's liblwip-dev exports). */
#define NS_EPHEMERAL_LO 0xc000
#define NS_EPHEMERAL_HI 0xffff

struct ns_conn;

/* What the netstack tells the socket that owns a connection. Called from
 * netstack_pump() and from the ns_* calls themselves; owner is the
 * pointer given to ns_tcp_new/ns_udp_new. */
struct ns_owner_ops {
	/* stream bytes arrived; the socket takes them all (the window is
	 * opened again only by ns_consumed, so at most a window is held) */
	void (*data)(void *owner, const void *buf, size_t len);
	/* a datagram arrived from (addr, port) */
	void (*dgram)(void *owner, const void *buf, size_t len,
		      const struct sockaddr *from, socklen_t fromlen);
	/* connected (err 0) or failed/reset (err: ECONNREFUSED, ECONNRESET,
	 * ETIMEDOUT...), the peer's FIN (err -1), room to send (err -2) */
	void (*event)(void *owner, int err);
};

struct netstack_config {
	enum net_mode mode;
	int link_fd; /* frames: the netslirp socketpair or the TAP fd */
	/* link control (netstack/linkctl.h): to the netslirp helper or the
	 * tap netctl, which say the host's addresses; -1: none */
	int ctl_fd;
};

/* Bring the stack up on the link. The ops are the socket layer's. */
int netstack_init(const struct netstack_config *cfg,
		  const struct ns_owner_ops *ops, struct moat_error *err);
bool netstack_up(void);

/* The event loop's side: fds to poll (the link, its control socket),
 * the next lwIP deadline (monotonic ns, 0: none), and the work after a
 * poll (which reads the pollfds netstack_pollfds filled: they must stay
 * in place until then). */
int netstack_pollfds(struct pollfd *p, int max);
int64_t netstack_deadline(void);
void netstack_pump(void);

/* Link control (netstack/linkctl.h). netstack_ctl_send: one message to
 * the process beyond the link; 0, or -errno (then the link is declared
 * down: that process would go on with what it had, so nothing more
 * leaves). netstack_ctl_wait: wait (at most timeout_ms) for its first
 * list of the host's addresses, before the guest runs: 0 or -errno. */
int netstack_ctl_send(const void *msg, size_t len);
int netstack_ctl_wait(int timeout_ms);

/* The Internet checksum (RFC 1071) of len bytes, with sum (a pseudo-
 * header's, or 0) added first: folded and complemented. */
uint16_t ns_csum_fold(const uint8_t *p, size_t len, uint32_t sum);

/* Frames refused at the link since start (no allowed flow). */
uint64_t netstack_dropped(void);
/* Bytes and frames through the link since start (`moat events`). */
struct netstack_counters {
	uint64_t rx_bytes, rx_frames, tx_bytes, tx_frames, dropped;
};
void netstack_counters(struct netstack_counters *c);

/* --net=tap: a namespace with a TAP device, routed and NATed on the host
 * (netstack/tap.c); the TAP fd through link_fd, and the link control
 * socket of its netctl process (which keeps the kernel's check of the
 * host's addresses in step with the policy) through ctl_fd. Root only.
 * netns: a network namespace (a path) to make the device in instead,
 * NATed there; NULL: one of the sandbox's own. */
int tap_open(const char *netns, int *link_fd, int *ctl_fd,
	     struct moat_error *err);

/* `moat netslirp --fd 3 --ctl 4`: the --net=slirp helper
 * (netstack/slirp_helper.c). */
int netslirp_main(int argc, char **argv);

/* ---- connections ---------------------------------------------------------- */

/* family AF_INET or AF_INET6. NULL on ENOMEM. */
struct ns_conn *ns_tcp_new(int family, void *owner);
struct ns_conn *ns_udp_new(int family, void *owner);

/* TCP: connect (the handshake starts; completion comes as an event 0).
 * The caller has decided the policy and registered the flow. 0 or
 * -errno. */
int ns_connect(struct ns_conn *c, const struct sockaddr *to, socklen_t len);

/* Make the conn's local endpoint for `to` now (an ephemeral port), so
 * that its flow can be registered before the first segment or datagram
 * leaves; the port through lport. */
int ns_prepare(struct ns_conn *c, const struct sockaddr *to, socklen_t tolen,
	       uint16_t *lport);
/* An IPv4 ping socket (SOCK_DGRAM, IPPROTO_ICMP) with echo id `id`:
 * ns_ping sends one echo request (msg: the ICMP message; its id and
 * checksum are set here), replies with that id come as datagrams. */
struct ns_conn *ns_ping_new(void *owner, uint16_t id);
long ns_ping(struct ns_conn *c, const uint8_t *msg, size_t len,
	     const struct sockaddr *to, socklen_t tolen);

/* TCP: the local port after ns_connect (0 before). */
uint16_t ns_local_port(struct ns_conn *c);

/* TCP: queue up to len bytes; returns how many (0: no room now, wait for
 * an event -2), or -errno (EPIPE after a shutdown or reset). */
long ns_send(struct ns_conn *c, const void *buf, size_t len, bool more);
/* UDP: one datagram to `to` (NULL: the connected destination). */
long ns_sendto(struct ns_conn *c, const void *buf, size_t len,
	       const struct sockaddr *to, socklen_t tolen);

/* The guest consumed n bytes of stream data: open the window again. */
void ns_consumed(struct ns_conn *c, size_t n);

/* Room to send now (TCP: bytes; UDP: 1 or 0). */
size_t ns_send_room(struct ns_conn *c);

int ns_shutdown(struct ns_conn *c, bool rd, bool wr);
void ns_close(struct ns_conn *c); /* frees; no more events */
/* Events of c go to owner through ops from now on (NULL: the stack's,
 * given to netstack_init): a flow the broker relays (sentry/brokerlink.c)
 * outlives its guest socket. */
void ns_set_owner(struct ns_conn *c, void *owner,
		  const struct ns_owner_ops *ops);
/* TCP: reset the connection now (a RST to the peer); no event follows. */
void ns_abort(struct ns_conn *c);

/* Our address and port, and the peer's, as socket addresses. */
int ns_sockname(struct ns_conn *c, struct sockaddr_storage *ss, socklen_t *len);
int ns_peername(struct ns_conn *c, struct sockaddr_storage *ss, socklen_t *len);

/* TCP_NODELAY and SO_KEEPALIVE map onto lwIP's pcb. */
void ns_set_nodelay(struct ns_conn *c, bool on);
void ns_set_keepalive(struct ns_conn *c, bool on);

#endif
