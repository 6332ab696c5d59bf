/* netstack/stack.c: lwIP in the sentry, on a link of Ethernet frames.
 *
 * lwIP's raw API, called from the sentry's one thread only: frames are
 * read from the link in netstack_pump() and handed to ethernet_input; its
 * timers run from there too (sys_check_timeouts). Debian's liblwip is the
 * threaded build, but without tcpip_init() no lwIP thread exists and the
 * core-locking check stays off.
 *
 * Outbound frames pass flow_frame_allowed() before they are written; the
 * link never sees one the policy did not allow.
 *
 * lwIP's pbuf pool size in Debian's library differs from what its
 * installed lwipopts.h implies, so only PBUF_RAM buffers are allocated
 * here (one contiguous block of the asked size).
 */
#include "netstack/netstack.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <lwip/etharp.h>
#include <lwip/ethip6.h>
#include <lwip/init.h>
#include <lwip/ip_addr.h>
#include <lwip/nd6.h>
#include <lwip/netif.h>
#include <lwip/pbuf.h>
#include <lwip/raw.h>
#include <lwip/tcp.h>
#include <lwip/timeouts.h>
#include <lwip/udp.h>
#include <netif/ethernet.h>

#include "netstack/flow.h"
#include "netstack/hostaddr.h"
#include "netstack/linkctl.h"
#include "netstack/netpol.h"
#include "sentry/sentry.h"

#define FRAME_MAX (NS_LINK_MTU + 14 + 4) /* a VLAN tag at most */
#define MSS_SLOTS 64
#define FRAMES_PER_PUMP 256

static struct {
	bool up;
	int fd;
	int ctl;		      /* link control, or -1 */
	struct pollfd *ctl_pfd;	      /* its entry in the loop's poll */
	struct pollfd *fd_pfd;	      /* the link's, NULL: read it anyway */
	struct hostaddr_set hosts;    /* an LC_HOSTS set coming in */
	bool hosts_whole, have_hosts; /* FIRST seen; one whole set taken */
	struct netif nif;
	const struct ns_owner_ops *ops;
	uint64_t dropped;
	uint64_t rx_bytes, rx_frames, tx_bytes, tx_frames; /* at the link */
	bool down; /* the link's other end is gone */
	u16_t mtu; /* NS_LINK_MTU on the slirp socketpair, else NS_MTU */
} ns = { .fd = -1, .ctl = -1, .mtu = NS_MTU };

struct ns_conn {
	bool tcp;
	int family; /* of the guest's socket */
	void *owner;
	const struct ns_owner_ops *ops; /* the owner's; NULL: the stack's */
	struct tcp_pcb *tpcb;
	struct udp_pcb *upcb;
	struct raw_pcb *rpcb; /* an ICMP echo (ping) socket */
	u16_t icmp_id;
	bool connected; /* TCP: the handshake completed */
	/* Inside lwIP's recv or sent callback: on_recv hands a chain to
	 * the owner a pbuf at a time, and an owner that closes the conn
	 * meanwhile (the broker's relay, done with a flow) leaves its free
	 * to the callback, which stops there. */
	bool in_cb, closed;
	bool aborted; /* tcp_abort'ed inside it: lwIP wants ERR_ABRT */
};

static int64_t mono_ns(void);

#define OPS(c) ((c)->ops ? (c)->ops : ns.ops)

void ns_set_owner(struct ns_conn *c, void *owner,
		  const struct ns_owner_ops *ops)
{
	c->owner = owner;
	c->ops = ops;
}

bool netstack_up(void)
{
	return ns.up;
}

uint64_t netstack_dropped(void)
{
	return ns.dropped;
}

void netstack_counters(struct netstack_counters *c)
{
	c->rx_bytes = ns.rx_bytes;
	c->rx_frames = ns.rx_frames;
	c->tx_bytes = ns.tx_bytes;
	c->tx_frames = ns.tx_frames;
	c->dropped = ns.dropped;
}

/* ---- the link ------------------------------------------------------------------- */

/* The helper (or the TAP device) went away: said once; from then on the
 * link is dead and every frame is dropped, as on an unplugged cable. */
static void link_down(void)
{
	if (ns.down)
		return;
	ns.down = true;
	netif_set_link_down(&ns.nif);
	audit_log("\"event\":\"net-link-down\",\"reason\":\"the link's "
		  "helper is gone\"");
}

/* ---- segment sizes -------------------------------------------------------------
 * Debian's lwIP is built with TCP_MSS 1460, which it both advertises and
 * caps the peer's value at. The link carries larger frames (NS_LINK_MTU):
 * an outbound SYN's MSS option is raised to what the link carries, and
 * the MSS the peer's SYN-ACK offers is noted here so that on_connected
 * can give the pcb a segment size past lwIP's cap. */

static struct {
	u16_t port; /* ours */
	u16_t mss;
} peer_mss[MSS_SLOTS];

static u16_t get16(const uint8_t *p)
{
	return (u16_t)(p[0] << 8 | p[1]);
}

/* The one's complement sum of len bytes added to sum (RFC 1071). */
static u32_t sum16(const uint8_t *p, size_t len, u32_t sum)
{
	size_t i;

	for (i = 0; i + 1 < len; i += 2)
		sum += get16(p + i);
	if (len & 1)
		sum += (u32_t)p[len - 1] << 8;
	return sum;
}

uint16_t ns_csum_fold(const uint8_t *p, size_t len, uint32_t sum)
{
	sum = sum16(p, len, sum);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)(~sum & 0xffff);
}

/* The TCP header in frame (len bytes), its length and the IP header's
 * offset; NULL when the frame is not TCP over IPv4 or IPv6. */
static uint8_t *tcp_of(uint8_t *f, size_t len, size_t *tcplen, bool *v6)
{
	size_t ihl;

	if (len < 14 + 40)
		return NULL;
	if (get16(f + 12) == 0x0800 && (f[14] >> 4) == 4 && f[14 + 9] == 6) {
		ihl = (size_t)(f[14] & 0xf) * 4;
		if (ihl < 20 || 14 + ihl + 20 > len)
			return NULL;
		*v6 = false;
		*tcplen = len - 14 - ihl;
		return f + 14 + ihl;
	}
	if (get16(f + 12) == 0x86dd && (f[14] >> 4) == 6 && f[14 + 6] == 6 &&
	    len >= 14 + 40 + 20) {
		*v6 = true;
		*tcplen = len - 14 - 40;
		return f + 14 + 40;
	}
	return NULL;
}

/* The MSS option of a SYN segment (NULL if none). */
static uint8_t *mss_option(uint8_t *tcp, size_t tcplen)
{
	size_t off = (size_t)(tcp[12] >> 4) * 4, i = 20;

	if (!(tcp[13] & 0x02) || off < 20 || off > tcplen)
		return NULL;
	while (i < off) {
		if (tcp[i] == 0)
			break;
		if (tcp[i] == 1) {
			i++;
			continue;
		}
		if (i + 1 >= off || tcp[i + 1] < 2 || i + tcp[i + 1] > off)
			break;
		if (tcp[i] == 2 && tcp[i + 1] == 4)
			return tcp + i + 2;
		i += tcp[i + 1];
	}
	return NULL;
}

/* Outbound SYN: offer the link's segment size, checksum made anew. */
static void raise_syn_mss(uint8_t *f, size_t len)
{
	size_t tcplen;
	bool v6 = false;
	uint8_t *tcp = tcp_of(f, len, &tcplen, &v6), *mss;
	u16_t want;
	u32_t sum;

	if (!tcp || !(mss = mss_option(tcp, tcplen)))
		return;
	want = (u16_t)(ns.mtu - (v6 ? 60 : 40));
	if (get16(mss) >= want)
		return;
	mss[0] = (uint8_t)(want >> 8);
	mss[1] = (uint8_t)want;
	tcp[16] = tcp[17] = 0;
	/* pseudo-header: addresses, protocol, length */
	sum = v6 ? sum16(f + 14 + 8, 32, 0) : sum16(f + 14 + 12, 8, 0);
	sum += 6 + (u32_t)tcplen;
	sum = ns_csum_fold(tcp, tcplen, sum);
	tcp[16] = (uint8_t)(sum >> 8);
	tcp[17] = (uint8_t)sum;
}

/* Inbound SYN-ACK: note the MSS it offers, for our port. */
static void note_peer_mss(uint8_t *f, size_t len)
{
	size_t tcplen, i, slot = 0;
	bool v6 = false;
	uint8_t *tcp = tcp_of(f, len, &tcplen, &v6), *mss;
	u16_t port;

	if (!tcp || (tcp[13] & 0x12) != 0x12 ||
	    !(mss = mss_option(tcp, tcplen)))
		return;
	port = get16(tcp + 2);
	for (i = 0; i < MSS_SLOTS; i++) {
		if (peer_mss[i].port == port || !peer_mss[i].port) {
			slot = i;
			break;
		}
		slot = (size_t)port % MSS_SLOTS;
	}
	peer_mss[slot].port = port;
	peer_mss[slot].mss = get16(mss);
}

/* On connect: the larger segment size both ends and the link allow. */
static void use_peer_mss(struct tcp_pcb *pcb)
{
	u16_t cap = (u16_t)(ns.mtu - (IP_IS_V4(&pcb->remote_ip) ? 40 : 60));
	size_t i;

	for (i = 0; i < MSS_SLOTS; i++)
		if (peer_mss[i].port == pcb->local_port) {
			u16_t m = peer_mss[i].mss < cap ? peer_mss[i].mss : cap;

			if (m > pcb->mss) {
				/* and the congestion window lwIP set from the
				 * old size: at least two new segments, or
				 * none fits and nothing is ever sent */
				pcb->mss = m;
				if (pcb->cwnd < 2u * m)
					pcb->cwnd = 2u * m;
			}
			peer_mss[i].port = 0;
			return;
		}
}

static err_t link_output(struct netif *nif, struct pbuf *p)
{
	static uint8_t frame[FRAME_MAX];
	u16_t len;

	(void)nif;
	if (p->tot_len > sizeof(frame))
		return ERR_OK; /* nothing we send is larger than the MTU */
	len = pbuf_copy_partial(p, frame, sizeof(frame), 0);
	if (ns.down || !flow_frame_allowed(frame, len)) {
		ns.dropped++;
		return ERR_OK;
	}
	raise_syn_mss(frame, len);
	/* A full link drops the frame, as a full NIC queue does: TCP
	 * retransmits. */
	if (write(ns.fd, frame, len) < 0) {
		if (errno != EAGAIN)
			ns.dropped++;
	} else {
		ns.tx_bytes += len;
		ns.tx_frames++;
	}
	return ERR_OK;
}

/* ---- link control ------------------------------------------------------------ */

int netstack_ctl_send(const void *msg, size_t len)
{
	if (ns.ctl < 0)
		return 0;
	if (write(ns.ctl, msg, len) == (ssize_t)len)
		return 0;
	/* The other side keeps its last rules, which may name more than the
	 * policy now does: fail closed. */
	link_down();
	return -EIO;
}

/* One message from the process beyond the link. */
static void ctl_message(const uint8_t *msg, size_t len)
{
	const void *rec;
	struct lc_hdr h;
	size_t i;

	if (lc_parse(msg, len, &h, &rec) < 0)
		return;
	if (h.type == LC_REFUSED) {
		struct lc_dest d;

		memcpy(&d, rec, sizeof(d));
		netpol_link_refused(&d);
		return;
	}
	if (h.type != LC_HOSTS)
		return;
	if (h.flags & LC_FIRST) {
		ns.hosts.n = 0;
		ns.hosts_whole = true;
	}
	if (!ns.hosts_whole)
		return; /* a set whose start was not seen */
	for (i = 0; i < h.n; i++) {
		struct hostaddr a;

		memcpy(&a, (const uint8_t *)rec + i * sizeof(a), sizeof(a));
		if (hostaddr_set_add(&ns.hosts, a.family, a.prefix, a.addr) <
		    0) {
			/* more than can be held: every address counts as
			 * the host's (fails closed) */
			netpol_host_set(NULL, 0, true);
			ns.hosts_whole = false;
			ns.have_hosts = true;
			return;
		}
	}
	if (h.flags & LC_LAST) {
		netpol_host_set(ns.hosts.v, ns.hosts.n, false);
		ns.hosts_whole = false;
		ns.have_hosts = true;
	}
}

static void ctl_pump(void)
{
	static uint8_t msg[LC_MSG_MAX];
	ssize_t n;

	while (ns.ctl >= 0) {
		n = read(ns.ctl, msg, sizeof(msg));
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
			close(ns.ctl);
			ns.ctl = -1;
			link_down();
			return;
		}
		if (n < 0)
			return;
		ctl_message(msg, (size_t)n);
	}
}

int netstack_ctl_wait(int timeout_ms)
{
	struct pollfd p = { .events = POLLIN };
	int64_t end;

	if (ns.ctl < 0)
		return ns.have_hosts ? 0 : -ENOTCONN;
	end = mono_ns() + (int64_t)timeout_ms * 1000000;
	while (!ns.have_hosts) {
		int64_t left = end - mono_ns();

		if (left <= 0)
			return -ETIMEDOUT;
		p.fd = ns.ctl;
		if (poll(&p, 1, (int)(left / 1000000) + 1) < 0 &&
		    errno != EINTR)
			return -errno;
		ctl_pump();
		if (ns.ctl < 0)
			return -ECONNRESET;
	}
	return 0;
}

static err_t nif_init(struct netif *nif)
{
	static const uint8_t mac[6] = NS_MAC;

	nif->name[0] = 'e';
	nif->name[1] = 't';
	nif->linkoutput = link_output;
	nif->output = etharp_output;
	nif->mtu = ns.mtu;
	nif->hwaddr_len = 6;
	memcpy(nif->hwaddr, mac, 6);
	nif->output_ip6 = ethip6_output;
	nif->flags = NETIF_FLAG_BROADCAST | NETIF_FLAG_ETHARP |
		     NETIF_FLAG_ETHERNET | NETIF_FLAG_LINK_UP | NETIF_FLAG_MLD6;
	return ERR_OK;
}

int netstack_init(const struct netstack_config *cfg,
		  const struct ns_owner_ops *ops, struct moat_error *err)
{
	ip4_addr_t addr, mask, gw;

	if (cfg->mode == NET_NONE)
		return 0;
	if (cfg->link_fd < 0)
		return moat_error_set(err, EBADF, "netstack: no link");
	ns.fd = cfg->link_fd;
	ns.ctl = cfg->ctl_fd;
	ns.ops = ops;
	if (ns.ctl >= 0) {
		/* never waiting on the other side; and room for a whole
		 * policy's rules in flight (a full socket fails closed) */
		int sz = 4 << 20;

		if (fcntl(ns.ctl, F_SETFL, O_NONBLOCK) < 0)
			return moat_error_set(err, errno,
					      "netstack: link control");
		if (setsockopt(ns.ctl, SOL_SOCKET, SO_SNDBUFFORCE, &sz,
			       sizeof(sz)) < 0)
			setsockopt(ns.ctl, SOL_SOCKET, SO_SNDBUF, &sz,
				   sizeof(sz));
	}
	/* a TAP device is a wire of the host's: its MTU; the slirp
	 * socketpair is no wire */
	ns.mtu = cfg->mode == NET_SLIRP ? NS_LINK_MTU : NS_MTU;
	lwip_init();
	if (!ip4addr_aton(NS_ADDR, &addr) || !ip4addr_aton(NS_NETMASK, &mask) ||
	    !ip4addr_aton(NS_GATEWAY, &gw))
		return moat_error_set(err, EINVAL, "netstack: addresses");
	if (!netif_add(&ns.nif, &addr, &mask, &gw, NULL, nif_init,
		       ethernet_input))
		return moat_error_set(err, ENOMEM, "netstack: netif_add");
	{
		/* IPv6: a link-local address and NS_ADDR6, both usable at
		 * once (no duplicate detection on a link of two); the default
		 * router comes from the link's router advertisements. */
		ip6_addr_t a6;
		s8_t idx;

		netif_create_ip6_linklocal_address(&ns.nif, 1);
		netif_ip6_addr_set_state(&ns.nif, 0, IP6_ADDR_PREFERRED);
		if (ip6addr_aton(NS_ADDR6, &a6) &&
		    netif_add_ip6_address(&ns.nif, &a6, &idx) == ERR_OK)
			netif_ip6_addr_set_state(&ns.nif, idx,
						 IP6_ADDR_PREFERRED);
	}
	netif_set_default(&ns.nif);
	netif_set_up(&ns.nif);
	netif_set_link_up(&ns.nif);
	/* the router solicitation now, not at the first ND tick a second
	 * later: the advertisement (the IPv6 default route) is in before
	 * the guest has started */
	nd6_tmr();
	ns.up = true;
	return 0;
}

int netstack_pollfds(struct pollfd *p, int max)
{
	int n = 0;

	if (!ns.up || ns.down || max < 1)
		return 0;
	p[n].fd = ns.fd;
	p[n].events = POLLIN;
	p[n].revents = 0;
	ns.fd_pfd = &p[n++];
	ns.ctl_pfd = NULL;
	if (ns.ctl >= 0 && max > 1) {
		p[n].fd = ns.ctl;
		p[n].events = POLLIN;
		p[n].revents = 0;
		/* read in netstack_pump only when poll says so: no syscall
		 * per turn of the loop for a socket that rarely speaks */
		ns.ctl_pfd = &p[n++];
	}
	return n;
}

static int64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int64_t netstack_deadline(void)
{
	u32_t ms;

	if (!ns.up)
		return 0;
	ms = sys_timeouts_sleeptime();
	if (ms == SYS_TIMEOUTS_SLEEPTIME_INFINITE)
		return 0;
	return mono_ns() + (int64_t)ms * 1000000;
}

void netstack_pump(void)
{
	static uint8_t frame[FRAME_MAX];
	struct pbuf *p;
	bool ready;
	ssize_t n;
	int i;

	if (!ns.up)
		return;
	/* what the process beyond the link says first: the host's
	 * addresses are then current for the frames that follow */
	if (ns.ctl_pfd && ns.ctl_pfd->revents)
		ctl_pump();
	ns.ctl_pfd = NULL;
	/* a read that finds nothing, each turn of the loop, was a tenth of
	 * the sentry's calls while a guest's syscalls kept it turning */
	ready = !ns.fd_pfd || ns.fd_pfd->revents;
	ns.fd_pfd = NULL;
	for (i = 0; ready && i < FRAMES_PER_PUMP; i++) {
		n = read(ns.fd, frame, sizeof(frame));
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
			link_down();
			return;
		}
		if (n < 0)
			break;
		if (n < 14)
			continue;
		ns.rx_bytes += (uint64_t)n;
		ns.rx_frames++;
		note_peer_mss(frame, (size_t)n);
		p = pbuf_alloc(PBUF_RAW, (u16_t)n, PBUF_RAM);
		if (!p)
			break;
		pbuf_take(p, frame, (u16_t)n);
		if (ns.nif.input(p, &ns.nif) != ERR_OK)
			pbuf_free(p);
	}
	sys_check_timeouts();
}

/* ---- addresses -------------------------------------------------------------------- */

/* Destinations lwIP must never be given: its loopback path (127/8, ::1,
 * and its own addresses) hands the packet to a tcpip thread that does
 * not exist here, and asserts. The socket layer keeps the sandbox's own
 * addresses on its loopback; this is the stack's own guard. Broadcast,
 * multicast and "any" are no destination for a guest either. */
static bool never_to_lwip(const ip_addr_t *ip)
{
	s8_t i;

	if (IP_IS_V4(ip)) {
		u32_t a = lwip_ntohl(ip_2_ip4(ip)->addr);

		return (a >> 24) == 127 || (a >> 24) == 0 ||
		       (a >> 28) >= 14 /* multicast, reserved, broadcast */ ||
		       ip4_addr_cmp(ip_2_ip4(ip), netif_ip4_addr(&ns.nif)) ||
		       ip4_addr_isbroadcast(ip_2_ip4(ip), &ns.nif);
	}
	if (ip6_addr_isloopback(ip_2_ip6(ip)) || ip6_addr_isany(ip_2_ip6(ip)) ||
	    ip6_addr_ismulticast(ip_2_ip6(ip)))
		return true;
	for (i = 0; i < LWIP_IPV6_NUM_ADDRESSES; i++)
		if (ip6_addr_cmp_zoneless(ip_2_ip6(ip),
					  netif_ip6_addr(&ns.nif, i)))
			return true;
	return false;
}

/* A guest socket address into lwIP's; an IPv4-mapped IPv6 one becomes
 * IPv4. */
static int to_ip(const struct sockaddr *sa, socklen_t len, ip_addr_t *ip,
		 u16_t *port)
{
	if (sa->sa_family == AF_INET && len >= sizeof(struct sockaddr_in)) {
		const struct sockaddr_in *in = (const void *)sa;

		ip_addr_set_ip4_u32_val(*ip, in->sin_addr.s_addr);
		*port = ntohs(in->sin_port);
		return never_to_lwip(ip) ? -ENETUNREACH : 0;
	}
	if (sa->sa_family == AF_INET6 && len >= sizeof(struct sockaddr_in6)) {
		const struct sockaddr_in6 *in6 = (const void *)sa;
		const uint32_t *w = (const uint32_t *)in6->sin6_addr.s6_addr;

		if (IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr))
			ip_addr_set_ip4_u32_val(*ip, w[3]);
		else
			IP_ADDR6(ip, w[0], w[1], w[2], w[3]);
		*port = ntohs(in6->sin6_port);
		return never_to_lwip(ip) ? -ENETUNREACH : 0;
	}
	return -EAFNOSUPPORT;
}

/* lwIP's address as a socket address of the guest socket's family. */
static void from_ip(int family, const ip_addr_t *ip, u16_t port,
		    struct sockaddr_storage *ss, socklen_t *len)
{
	memset(ss, 0, sizeof(*ss));
	if (family == AF_INET) {
		struct sockaddr_in *in = (void *)ss;

		in->sin_family = AF_INET;
		in->sin_port = htons(port);
		in->sin_addr.s_addr = IP_IS_V4(ip) ? ip_2_ip4(ip)->addr : 0;
		*len = sizeof(*in);
		return;
	}
	{
		struct sockaddr_in6 *in6 = (void *)ss;

		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(port);
		if (IP_IS_V4(ip)) {
			in6->sin6_addr.s6_addr[10] = 0xff;
			in6->sin6_addr.s6_addr[11] = 0xff;
			memcpy(&in6->sin6_addr.s6_addr[12], &ip_2_ip4(ip)->addr,
			       4);
		} else {
			memcpy(&in6->sin6_addr, ip_2_ip6(ip)->addr, 16);
		}
		*len = sizeof(*in6);
	}
}

/* ---- TCP ---------------------------------------------------------------------------- */

static int lwip_errno(err_t e, bool connected)
{
	switch (e) {
	case ERR_RST:
		return connected ? ECONNRESET : ECONNREFUSED;
	case ERR_ABRT:
		return connected ? ECONNABORTED : ETIMEDOUT;
	case ERR_CLSD:
		return ENOTCONN;
	case ERR_MEM:
	case ERR_BUF:
		return ENOBUFS;
	case ERR_RTE:
		return ENETUNREACH;
	case ERR_USE:
		return EADDRINUSE;
	case ERR_ISCONN:
		return EISCONN;
	case ERR_CONN:
		return ENOTCONN;
	case ERR_VAL:
	case ERR_ARG:
		return EINVAL;
	case ERR_TIMEOUT:
		return ETIMEDOUT;
	default:
		return EIO;
	}
}

struct ns_conn *ns_tcp_new(int family, void *owner)
{
	struct ns_conn *c = calloc(1, sizeof(*c));

	if (c) {
		c->tcp = true;
		c->family = family;
		c->owner = owner;
	}
	return c;
}

struct ns_conn *ns_udp_new(int family, void *owner)
{
	struct ns_conn *c = calloc(1, sizeof(*c));

	if (c) {
		c->family = family;
		c->owner = owner;
	}
	return c;
}

static err_t on_connected(void *arg, struct tcp_pcb *pcb, err_t e)
{
	struct ns_conn *c = arg;

	c->connected = e == ERR_OK;
	if (e == ERR_OK)
		use_peer_mss(pcb);
	OPS(c)->event(c->owner, e == ERR_OK ? 0 : lwip_errno(e, false));
	return ERR_OK;
}

/* The end of a callback of lwIP's into c: what lwIP is told, and c freed
 * when its owner closed it meanwhile. */
static err_t cb_done(struct ns_conn *c)
{
	err_t e = c->aborted ? ERR_ABRT : ERR_OK;

	c->in_cb = false;
	c->aborted = false;
	if (c->closed)
		free(c);
	return e;
}

static err_t on_recv(void *arg, struct tcp_pcb *pcb, struct pbuf *p, err_t e)
{
	struct ns_conn *c = arg;
	struct pbuf *q;

	(void)pcb;
	(void)e;
	c->in_cb = true;
	if (!p) {
		OPS(c)->event(c->owner, -1); /* FIN */
		return cb_done(c);
	}
	/* The socket takes everything: the window is opened again only as
	 * the guest reads (ns_consumed), so no more than a window's worth is
	 * ever held. */
	for (q = p; q && !c->closed; q = q->next)
		OPS(c)->data(c->owner, q->payload, q->len);
	pbuf_free(p);
	return cb_done(c);
}

static err_t on_sent(void *arg, struct tcp_pcb *pcb, u16_t len)
{
	struct ns_conn *c = arg;

	(void)pcb;
	(void)len;
	c->in_cb = true;
	OPS(c)->event(c->owner, -2);
	return cb_done(c);
}

static void on_err(void *arg, err_t e)
{
	struct ns_conn *c = arg;

	c->tpcb = NULL; /* lwIP has freed it */
	OPS(c)->event(c->owner, lwip_errno(e, c->connected));
}

/* No more callbacks into the conn: it is going away or failed. */
static void detach(struct tcp_pcb *pcb)
{
	tcp_arg(pcb, NULL);
	tcp_recv(pcb, NULL);
	tcp_sent(pcb, NULL);
	tcp_err(pcb, NULL);
}

static int tcp_ready(struct ns_conn *c, const ip_addr_t *ip)
{
	if (c->tpcb)
		return 0;
	c->tpcb = tcp_new_ip_type(IP_GET_TYPE(ip));
	if (!c->tpcb)
		return -ENOBUFS;
	tcp_arg(c->tpcb, c);
	tcp_recv(c->tpcb, on_recv);
	tcp_sent(c->tpcb, on_sent);
	tcp_err(c->tpcb, on_err);
	/* an ephemeral port now, so the flow can be registered before the
	 * SYN leaves */
	if (tcp_bind(c->tpcb, IP_IS_V4(ip) ? IP4_ADDR_ANY : IP6_ADDR_ANY, 0) !=
	    ERR_OK) {
		detach(c->tpcb);
		tcp_abort(c->tpcb);
		c->tpcb = NULL;
		return -EADDRNOTAVAIL;
	}
	return 0;
}

int ns_connect(struct ns_conn *c, const struct sockaddr *to, socklen_t len)
{
	ip_addr_t ip;
	u16_t port;
	err_t e;
	int rc;

	rc = to_ip(to, len, &ip, &port);
	if (rc < 0)
		return rc;
	if (!c->tcp)
		return -EINVAL;
	rc = tcp_ready(c, &ip);
	if (rc < 0)
		return rc;
	e = tcp_connect(c->tpcb, &ip, port, on_connected);
	if (e != ERR_OK) {
		detach(c->tpcb);
		tcp_abort(c->tpcb);
		c->tpcb = NULL;
		return -lwip_errno(e, false);
	}
	return 0;
}

long ns_send(struct ns_conn *c, const void *buf, size_t len, bool more)
{
	size_t room;
	err_t e;

	if (!c->tpcb)
		return -EPIPE;
	room = tcp_sndbuf(c->tpcb);
	if (room > 0xffff)
		room = 0xffff;
	if (len > room)
		len = room;
	if (!len)
		return 0;
	e = tcp_write(c->tpcb, buf, (u16_t)len,
		      TCP_WRITE_FLAG_COPY | (more ? TCP_WRITE_FLAG_MORE : 0));
	if (e == ERR_MEM)
		return 0;
	if (e != ERR_OK)
		return -lwip_errno(e, true);
	if (!more)
		tcp_output(c->tpcb);
	return (long)len;
}

size_t ns_send_room(struct ns_conn *c)
{
	if (!c->tcp)
		return 1;
	if (!c->tpcb || !c->connected)
		return 0;
	return tcp_sndbuf(c->tpcb);
}

void ns_consumed(struct ns_conn *c, size_t n)
{
	while (c->tpcb && n) {
		u16_t part = n > 0xffff ? 0xffff : (u16_t)n;

		tcp_recved(c->tpcb, part);
		n -= part;
	}
}

int ns_shutdown(struct ns_conn *c, bool rd, bool wr)
{
	err_t e;

	if (!c->tcp || !c->tpcb)
		return 0;
	if (rd && wr) {
		/* tcp_shutdown would close the pcb and keep calling back into
		 * c after the socket has gone: detach first, as ns_close. */
		detach(c->tpcb);
		if (tcp_close(c->tpcb) != ERR_OK)
			tcp_abort(c->tpcb);
		c->tpcb = NULL;
		return 0;
	}
	e = tcp_shutdown(c->tpcb, rd, wr);
	if (e != ERR_OK)
		return -lwip_errno(e, c->connected);
	return 0;
}

void ns_set_nodelay(struct ns_conn *c, bool on)
{
	if (!c->tpcb)
		return;
	if (on)
		tcp_nagle_disable(c->tpcb);
	else
		tcp_nagle_enable(c->tpcb);
}

void ns_set_keepalive(struct ns_conn *c, bool on)
{
	if (!c->tpcb)
		return;
	if (on)
		ip_set_option(c->tpcb, SOF_KEEPALIVE);
	else
		ip_reset_option(c->tpcb, SOF_KEEPALIVE);
}

/* ---- UDP ---------------------------------------------------------------------------- */

static void on_dgram(void *arg, struct udp_pcb *pcb, struct pbuf *p,
		     const ip_addr_t *from, u16_t port)
{
	struct ns_conn *c = arg;
	struct sockaddr_storage ss;
	socklen_t sl;
	static uint8_t buf[65535];
	u16_t n;

	(void)pcb;
	n = pbuf_copy_partial(p, buf, sizeof(buf), 0);
	from_ip(c->family, from, port, &ss, &sl);
	OPS(c)->dgram(c->owner, buf, n, (struct sockaddr *)&ss, sl);
	pbuf_free(p);
}

static int udp_ready(struct ns_conn *c, const ip_addr_t *ip)
{
	if (c->upcb)
		return 0;
	/* an AF_INET6 socket sends to both families from one port */
	c->upcb = udp_new_ip_type(c->family == AF_INET6 ? IPADDR_TYPE_ANY :
							  IP_GET_TYPE(ip));
	if (!c->upcb)
		return -ENOBUFS;
	udp_recv(c->upcb, on_dgram, c);
	/* an ephemeral port now, so the flow can be named before sending */
	if (udp_bind(c->upcb,
		     c->family == AF_INET6 ? IP_ANY_TYPE :
		     IP_IS_V4(ip)	   ? IP4_ADDR_ANY :
					     IP6_ADDR_ANY,
		     0) != ERR_OK) {
		udp_remove(c->upcb);
		c->upcb = NULL;
		return -EADDRINUSE;
	}
	return 0;
}

long ns_sendto(struct ns_conn *c, const void *buf, size_t len,
	       const struct sockaddr *to, socklen_t tolen)
{
	ip_addr_t ip;
	u16_t port;
	struct pbuf *p;
	err_t e;
	int rc;

	/* The frame check passes a datagram's first fragment only (later
	 * ones carry no ports), so nothing is sent that lwIP would have to
	 * fragment: EMSGSIZE, as for a socket with IP_PMTUDISC_DO. */
	if (len > NS_MTU - 28)
		return -EMSGSIZE;
	if (to) {
		rc = to_ip(to, tolen, &ip, &port);
		if (rc < 0)
			return rc;
		rc = udp_ready(c, &ip);
		if (rc < 0)
			return rc;
	} else if (!c->upcb) {
		return -EDESTADDRREQ;
	}
	if (len > NS_MTU - 48 && !IP_IS_V4(to ? &ip : &c->upcb->remote_ip))
		return -EMSGSIZE;
	p = pbuf_alloc(PBUF_TRANSPORT, (u16_t)len, PBUF_RAM);
	if (!p)
		return -ENOBUFS;
	pbuf_take(p, buf, (u16_t)len);
	e = to ? udp_sendto(c->upcb, p, &ip, port) : udp_send(c->upcb, p);
	pbuf_free(p);
	if (e != ERR_OK)
		return -lwip_errno(e, false);
	return (long)len;
}

uint16_t ns_local_port(struct ns_conn *c)
{
	return c->tpcb ? c->tpcb->local_port : 0;
}

int ns_prepare(struct ns_conn *c, const struct sockaddr *to, socklen_t tolen,
	       uint16_t *lport)
{
	ip_addr_t ip;
	u16_t port;
	int rc = to_ip(to, tolen, &ip, &port);

	if (rc == 0)
		rc = c->tcp ? tcp_ready(c, &ip) : udp_ready(c, &ip);
	if (rc == 0)
		*lport = c->tcp ? c->tpcb->local_port : c->upcb->local_port;
	return rc;
}

void ns_abort(struct ns_conn *c)
{
	if (!c->tpcb)
		return;
	detach(c->tpcb);
	tcp_abort(c->tpcb); /* sends a RST */
	c->tpcb = NULL;
	c->aborted = c->in_cb;
}

/* ---- ICMP echo (ping sockets) ------------------------------------------------ */

struct ns_conn *ns_ping_new(void *owner, u16_t id)
{
	struct ns_conn *c = calloc(1, sizeof(*c));

	if (c) {
		c->family = AF_INET;
		c->owner = owner;
		c->icmp_id = id;
	}
	return c;
}

/* An echo reply with our id: the ICMP message (IP header off) to the
 * owner, as a ping socket reads it. Anything else is lwIP's. */
static u8_t on_icmp(void *arg, struct raw_pcb *pcb, struct pbuf *p,
		    const ip_addr_t *from)
{
	struct ns_conn *c = arg;
	struct sockaddr_storage ss;
	static uint8_t buf[65535];
	socklen_t sl;
	u16_t ihl, n;
	uint8_t h[24];

	(void)pcb;
	if (pbuf_copy_partial(p, h, sizeof(h), 0) < 20)
		return 0;
	ihl = (u16_t)((h[0] & 0xf) * 4);
	if (ihl < 20 || p->tot_len < ihl + 8 ||
	    pbuf_copy_partial(p, h, 8, ihl) != 8 || h[0] != 0 /* reply */ ||
	    (u16_t)(h[4] << 8 | h[5]) != c->icmp_id)
		return 0;
	n = pbuf_copy_partial(p, buf, sizeof(buf), ihl);
	from_ip(c->family, from, 0, &ss, &sl);
	OPS(c)->dgram(c->owner, buf, n, (struct sockaddr *)&ss, sl);
	pbuf_free(p);
	return 1;
}

long ns_ping(struct ns_conn *c, const uint8_t *msg, size_t len,
	     const struct sockaddr *to, socklen_t tolen)
{
	ip_addr_t ip;
	u16_t port;
	struct pbuf *p;
	uint8_t *m;
	u32_t sum = 0;
	err_t e;
	int rc;

	if (len < 8 || len > NS_MTU - 28)
		return len < 8 ? -EINVAL : -EMSGSIZE;
	if (msg[0] != 8 || msg[1] != 0)
		return -EINVAL; /* echo requests only, as a ping socket */
	rc = to_ip(to, tolen, &ip, &port);
	if (rc < 0)
		return rc;
	if (!IP_IS_V4(&ip))
		return -EAFNOSUPPORT;
	if (!c->rpcb) {
		c->rpcb = raw_new_ip_type(IPADDR_TYPE_V4, IP_PROTO_ICMP);
		if (!c->rpcb)
			return -ENOBUFS;
		raw_recv(c->rpcb, on_icmp, c);
	}
	p = pbuf_alloc(PBUF_IP, (u16_t)len, PBUF_RAM);
	if (!p)
		return -ENOBUFS;
	m = p->payload;
	memcpy(m, msg, len);
	/* the socket's id, and the checksum, are the stack's to set (as
	 * for a Linux ping socket) */
	m[4] = (uint8_t)(c->icmp_id >> 8);
	m[5] = (uint8_t)c->icmp_id;
	m[2] = m[3] = 0;
	sum = ns_csum_fold(m, len, 0);
	m[2] = (uint8_t)(sum >> 8);
	m[3] = (uint8_t)sum;
	e = raw_sendto(c->rpcb, p, &ip);
	pbuf_free(p);
	return e == ERR_OK ? (long)len : -lwip_errno(e, false);
}

/* ---- both ------------------------------------------------------------------------------- */

void ns_close(struct ns_conn *c)
{
	if (!c)
		return;
	if (c->tpcb) {
		detach(c->tpcb);
		/* a graceful close: what was written is still sent */
		if (tcp_close(c->tpcb) != ERR_OK) {
			tcp_abort(c->tpcb);
			c->aborted = c->in_cb;
		}
	}
	if (c->upcb)
		udp_remove(c->upcb);
	if (c->rpcb)
		raw_remove(c->rpcb);
	if (c->in_cb) {
		c->tpcb = NULL;
		c->upcb = NULL;
		c->rpcb = NULL;
		c->closed = true; /* the callback frees it */
		return;
	}
	free(c);
}

int ns_sockname(struct ns_conn *c, struct sockaddr_storage *ss, socklen_t *len)
{
	if (c->tpcb)
		from_ip(c->family, &c->tpcb->local_ip, c->tpcb->local_port, ss,
			len);
	else if (c->upcb)
		from_ip(c->family, &c->upcb->local_ip, c->upcb->local_port, ss,
			len);
	else
		return -ENOTCONN;
	return 0;
}

int ns_peername(struct ns_conn *c, struct sockaddr_storage *ss, socklen_t *len)
{
	if (c->tpcb && c->connected)
		from_ip(c->family, &c->tpcb->remote_ip, c->tpcb->remote_port,
			ss, len);
	else
		return -ENOTCONN;
	return 0;
}
