/* sentry/socket.c: sockets, in the sentry.
 *
 * AF_UNIX: socketpair, names in the VFS (a socket node in tmpfs or the
 * overlay), abstract names and autobind; stream, dgram and seqpacket;
 * SCM_RIGHTS, SCM_CREDENTIALS and SO_PEERCRED.
 *
 * AF_INET and AF_INET6 on the loopback: a sandbox's own 127.0.0.0/8 and
 * ::1, for stream (TCP) and datagram (UDP) sockets. Both ends are the
 * sandbox's, so no TCP/IP is needed between them: a connection is two
 * queues, as an AF_UNIX one is, with ports and addresses for names. Other
 * destinations are the netstack's (netstack/, docs/network.md): with
 * --net=slirp a socket whose peer is outside gets an ns_conn (lwIP, in
 * the sentry) once the egress policy has allowed the destination; its
 * received bytes and datagrams land in the socket's own queue, so reads,
 * poll and epoll work as for any socket. A datagram to the sandbox's
 * resolver (NS_RESOLVER:53) is answered by the sentry (netstack/
 * resolver.c) in every mode. Without a netstack other destinations fail
 * with ENETUNREACH and an audit line. The host kernel sees no socket call
 * of the guest's.
 *
 * AF_NETLINK (NETLINK_ROUTE), read-only: link and address dumps that
 * describe the sandbox's one interface, lo, so that getifaddrs,
 * if_nameindex and their callers see what the sandbox has. The interface
 * ioctls (SIOCGIFINDEX and the like) answer the same.
 *
 * Every socket is a struct usock. A stream connection is two usocks that
 * point at each other (peer); the accepting side waits in its listener's
 * queue until accept(2) gives it a file. A datagram goes to the socket
 * bound to its destination, looked up at each send.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <net/if_arp.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "netstack/flow.h"
#include "netstack/netpol.h"
#include "netstack/netstack.h"
#include "netstack/resolver.h"
#include "netstack/sniff.h"
#include "sentry/audit.h"
#include "sentry/brokerlink.h"
#include "sentry/fs_tmpfs.h"
#include "sentry/limits.h"
#include "sentry/overlay.h"
#include "sentry/syscalls.h"
#include "sentry/sysctl.h"
#include "sentry/vfs.h"

#ifndef IFF_LOWER_UP
#define IFF_LOWER_UP 0x10000 /* linux/if.h, which clashes with net/if.h */
#endif

/* A socket address as the guest gave it (or as we made it). */
struct saddr {
	union {
		struct sockaddr sa;
		struct sockaddr_un un;
		struct sockaddr_in in;
		struct sockaddr_in6 in6;
		struct sockaddr_storage ss;
	} u;
	socklen_t len; /* 0: none */
};

struct umsg {
	struct umsg *next;
	size_t len, off;
	size_t cap;	     /* what data[] holds: len, or a TCP chunk's room */
	size_t cost;	     /* charged to its socket: msg_cost(cap) */
	struct file **files; /* SCM_RIGHTS in flight (references) */
	int nfiles;
	struct ucred cred;    /* the sender, for SCM_CREDENTIALS */
	struct saddr from;    /* datagrams: the sender's name */
	int hoplimit, tclass; /* IPv6 datagrams: as sent (RFC 3542) */
	char data[];
};

/* Files in flight in every socket of the sandbox: a cycle (a socket sent
 * over itself) is never freed, so the total is bounded, as Linux bounds
 * in-flight descriptors (ETOOMANYREFS past it). */
#define INFLIGHT_MAX 4096
static int inflight;

/* What is queued in every socket of the sandbox, in msg_cost()s. Each
 * socket holds about USOCK_BUF, but sockets passed over themselves stay
 * alive with their queues; the total is bounded too, so that such cycles
 * cannot pin the sentry's memory (a full sandbox behaves as a full
 * socket buffer). */
#define QUEUED_MAX (64UL << 20)
static size_t queued;

/* What a message costs its socket's buffer, as Linux charges an skb's
 * truesize rather than its bytes: a head from kmalloc (a power of two,
 * 512 at least) that holds the data and a skb_shared_info (320 bytes),
 * whole pages for what is past head_max (a page's worth for a stream's
 * skb, four for a datagram's or a seqpacket's), and the sk_buff (256).
 * So an empty datagram costs 768, and 278 of them fill a socket, as on
 * Linux; counting only bytes let a guest queue millions of empty ones,
 * ~200 bytes of sentry heap each. The cost is never less than what the
 * sentry allocates for the message. */
#define SKB_SHINFO 320
#define SKB_HEAD_STREAM (4096 - SKB_SHINFO)
#define SKB_HEAD_DGRAM (16384 - SKB_SHINFO)
static size_t msg_cost(size_t len, size_t head_max)
{
	size_t paged = 0, head = 512;

	if (len > head_max) {
		paged = (len - head_max + 4095) & ~(size_t)4095;
		if (paged > len)
			paged = len;
	}
	while (head < len - paged + SKB_SHINFO)
		head <<= 1;
	return head + paged + 256;
}

/* TCP is a byte stream: writes fill chunks of at least TCP_CHUNK (whose
 * cost is a page and the sk_buff), as Linux's tcp_sendmsg fills the tail
 * skb, so that single-byte writes hold a buffer's worth of bytes, not of
 * message headers. An AF_UNIX stream keeps a message a write, as Linux's
 * unix_stream_sendmsg makes an skb a write. */
#define TCP_CHUNK SKB_HEAD_STREAM

/* Options a program may set and read back; they change nothing between
 * two ends in one sentry (no congestion, no keepalive probes on a
 * loopback that never drops). */
#define SOCKOPTS_MAX 16
struct sockopt_val {
	int level, opt, val;
};

struct usock {
	int domain, type, proto;
	struct usock *peer; /* connected stream; a socketpair's dgram peer */
	struct file *file;  /* this endpoint's file (not referenced); NULL
			     * while it waits to be accepted */
	struct umsg *head, *tail;
	size_t bytes;	       /* data not yet read */
	size_t charged;	       /* msg_cost()s of the queue, as sk_rmem_alloc */
	bool shut_rd, shut_wr; /* this end's shutdowns */
	bool peer_shut_wr;     /* the peer will send no more */
	bool connected;	       /* was ever connected (EPIPE vs ENOTCONN) */
	/* a reset came (the listener went away before accept, or TCP's
	 * answer to a send after the peer closed): its errno, 0 if none */
	int reset;
	bool pair;	   /* made by socketpair: the peer's close is EOF */
	struct ucred cred; /* for SO_PEERCRED: at socket/connect/listen */
	unsigned long ino;
	struct saddr name;  /* bound name (len 0: unbound) */
	struct saddr pname; /* stream peer's name; dgram default destination */
	struct vnode *node; /* AF_UNIX path binding: the socket node */
	bool bound;	    /* in the bound list */
	struct usock *bnext;
	bool listening;
	int backlog, npending;
	struct usock *pend_head, *pend_tail, *pend_next;
	struct usock *listener; /* while pending */
	bool passcred, v6only, reuseaddr, reuseport;
	bool recv_hoplimit,
		recv_tclass; /* IPV6_RECVHOPLIMIT, IPV6_RECVTCLASS */
	int so_error;
	uint64_t seq; /* events for edge-triggered epoll (file_ops.evseq) */
	/* A peer outside the sandbox (the netstack's side), the flows the
	 * policy allowed it, and a TCP handshake under way. */
	struct ns_conn *ext;
	struct flow_key *flows;
	size_t nflows;
	bool ext_connecting, ext_dead;
	struct usock *ext_next, **ext_pprev; /* in ext_list while ext */
	/* With a broker (sentry/brokerlink.h): the guest's first bytes,
	 * held until they say what the flow is (sniffing), then either
	 * flushed to the connection as they are (of which sniff_sent went)
	 * or given to the broker, which relays the flow from then on. */
	enum {
		BRK_NONE,
		BRK_SNIFFING,
		BRK_PASSED,
		BRK_TAKEN
	} brk;
	uint8_t *sniff;
	size_t nsniff, sniff_sent;
	struct bflow *bflow;
	int64_t rcvtimeo, sndtimeo; /* SO_RCVTIMEO, SO_SNDTIMEO (ns; 0: none) */
	char cc[16];		    /* TCP_CONGESTION as set */
	struct sockopt_val opts[SOCKOPTS_MAX];
	int nopts;
};

static unsigned long usock_ino = 20000;
static const struct file_ops usock_ops;
static struct usock *bound_list;

/* How many bound inet sockets hold each ephemeral port, stream and
 * datagram apart: an ephemeral bind takes a port no socket of its kind
 * holds, found without walking bound_list for each candidate. */
#define EPHEMERAL_N (EPHEMERAL_HI - EPHEMERAL_LO + 1)
static unsigned eph_users[2][EPHEMERAL_N];
static unsigned *eph_slot(const struct usock *u);

bool file_is_socket(struct file *f)
{
	return f && f->ops == &usock_ops;
}

bool file_is_stream_socket(struct file *f)
{
	return file_is_socket(f) &&
	       ((struct usock *)f->priv)->type == SOCK_STREAM;
}

/* Drop the references of an array of passed files, and the array. */
static void put_files(struct file **files, int n)
{
	int i;

	for (i = 0; i < n; i++)
		file_put(files[i]);
	free(files);
}

/* Free m, unlinked from u's queue, and give back its cost. */
static void umsg_free(struct usock *u, struct umsg *m)
{
	put_files(m->files, m->nfiles);
	inflight -= m->nfiles;
	u->charged -= m->cost;
	queued -= m->cost;
	limits_heap_charge(-(int64_t)m->cost);
	free(m);
}

static bool is_stream(const struct usock *u)
{
	return u->type == SOCK_STREAM || u->type == SOCK_SEQPACKET;
}

static bool is_inet(const struct usock *u)
{
	return u->domain == AF_INET || u->domain == AF_INET6;
}

static bool eof(struct usock *u)
{
	if (u->ext || u->bflow)
		return u->peer_shut_wr || u->shut_rd || u->ext_dead;
	return !u->peer || u->peer_shut_wr || u->shut_rd;
}

static void ext_drop(struct usock *u);

/* What a send to p may still charge: p's buffer, within what all
 * sockets together may still hold, and within the sentry's share of the
 * memory limit (limits_heap_charge; what pipes, tmpfs and messages leave
 * of it): a sandbox whose queues hold that is as a full socket buffer,
 * EAGAIN or a wait, as Linux's sockets past their memory cgroup's
 * pressure. As on Linux (sk_wmem_alloc below sk_sndbuf), a send goes
 * ahead while there is any room, and a datagram may then overshoot it by
 * its own cost; a stream write takes at most the room. Sends and poll's
 * POLLOUT agree. */
static size_t send_room(const struct usock *p)
{
	size_t room = p->charged < USOCK_BUF ? USOCK_BUF - p->charged : 0;
	size_t left = queued < QUEUED_MAX ? QUEUED_MAX - queued : 0;
	uint64_t heap = limits_heap_room();

	if (heap < left)
		left = (size_t)heap;
	return room < left ? room : left;
}

static struct usock *usock_new(struct task *t, int domain, int type, int proto)
{
	struct usock *u = calloc(1, sizeof(*u));

	if (!u)
		return NULL;
	u->domain = domain;
	u->type = type;
	u->proto = proto;
	u->ino = usock_ino++;
	if (t) {
		u->cred.pid = t->proc->pid;
		u->cred.uid = t->proc->cred.euid;
		u->cred.gid = t->proc->cred.egid;
	}
	return u;
}

static void unbind(struct usock *u)
{
	struct usock **pp;

	if (u->bound) {
		unsigned *users = eph_slot(u);
		if (users)
			(*users)--;
		for (pp = &bound_list; *pp; pp = &(*pp)->bnext)
			if (*pp == u) {
				*pp = u->bnext;
				break;
			}
		u->bound = false;
	}
	if (u->node) {
		tmpfs_set_sock(u->node, NULL);
		vnode_put(u->node);
		u->node = NULL;
	}
}

/* Free a socket that no file refers to (closed, or never accepted). */
static void usock_free(struct usock *u)
{
	ext_drop(u);
	unbind(u);
	if (u->peer) {
		/* TCP closed with data unread resets the connection, as
		 * Linux's tcp_close does, rather than ending it with a FIN. */
		if (is_inet(u) && u->type == SOCK_STREAM && u->head &&
		    !u->peer->reset)
			u->peer->reset = ECONNRESET;
		u->peer->peer = NULL;
		u->peer->peer_shut_wr = true;
		u->peer->seq++;
	}
	while (u->head) {
		struct umsg *m = u->head;
		u->head = m->next;
		umsg_free(u, m);
	}
	/* Connections waiting to be accepted are reset. */
	while (u->pend_head) {
		struct usock *p = u->pend_head;
		u->pend_head = p->pend_next;
		if (p->peer)
			p->peer->reset = ECONNRESET;
		usock_free(p);
	}
	free(u);
	sentry_wake();
}

static struct file *usock_file(struct usock *u, int flags)
{
	struct file *f = file_new(&usock_ops, O_RDWR | flags);

	if (!f)
		return NULL;
	u->file = f;
	f->priv = u;
	f->stream = true;
	return f;
}

/* ---- addresses ---------------------------------------------------------- */

static void sa_unnamed(struct saddr *a, int domain)
{
	memset(a, 0, sizeof(*a));
	a->u.sa.sa_family = (sa_family_t)domain;
	if (domain == AF_INET)
		a->len = sizeof(struct sockaddr_in);
	else if (domain == AF_INET6)
		a->len = sizeof(struct sockaddr_in6);
	else
		a->len = sizeof(sa_family_t);
}

static long sa_read(struct task *t, uint64_t uaddr, uint64_t ulen,
		    struct saddr *a)
{
	memset(a, 0, sizeof(*a));
	if ((int)ulen < 0 || ulen > sizeof(a->u.ss))
		return -EINVAL;
	if (ulen && task_read(t, uaddr, &a->u.ss, ulen) < 0)
		return -EFAULT;
	a->len = (socklen_t)ulen;
	return 0;
}

/* Write a to (uaddr, *ulen) as accept/getsockname do: truncated to the
 * room given, with the full length written back. */
static long sa_write(struct task *t, uint64_t uaddr, uint64_t ulen,
		     const struct saddr *a)
{
	socklen_t room;

	if (!uaddr || !ulen)
		return 0;
	if (task_read(t, ulen, &room, sizeof(room)) < 0)
		return -EFAULT;
	if ((int)room < 0)
		return -EINVAL;
	if (task_write(t, uaddr, &a->u.ss, room < a->len ? room : a->len) < 0 ||
	    task_write(t, ulen, &a->len, sizeof(a->len)) < 0)
		return -EFAULT;
	return 0;
}

static bool v4_loopback(in_addr_t a)
{
	return (ntohl(a) >> 24) == 127;
}

/* An IPv6 address as the IPv4 one it maps (::ffff:a.b.c.d), if it does. */
static bool v6_mapped(const struct in6_addr *a, in_addr_t *v4)
{
	if (!IN6_IS_ADDR_V4MAPPED(a))
		return false;
	memcpy(v4, &a->s6_addr[12], 4);
	return true;
}

/* Check an inet address for the socket's family. 0, -EINVAL or
 * -EAFNOSUPPORT. */
static long inet_check(const struct usock *u, const struct saddr *a)
{
	if (u->domain == AF_INET) {
		if (a->len < sizeof(struct sockaddr_in))
			return -EINVAL;
		if (a->u.sa.sa_family != AF_INET)
			return -EAFNOSUPPORT;
		return 0;
	}
	if (a->len < sizeof(struct sockaddr_in6))
		return -EINVAL;
	if (a->u.sa.sa_family != AF_INET6)
		return -EAFNOSUPPORT;
	return 0;
}

static uint16_t inet_port(const struct saddr *a)
{
	return ntohs(a->u.sa.sa_family == AF_INET ? a->u.in.sin_port :
						    a->u.in6.sin6_port);
}

static void inet_set_port(struct saddr *a, uint16_t port)
{
	if (a->u.sa.sa_family == AF_INET)
		a->u.in.sin_port = htons(port);
	else
		a->u.in6.sin6_port = htons(port);
}

/* The address as IPv4 where it is one (mapped included). */
static bool inet_v4(const struct saddr *a, in_addr_t *v4)
{
	if (a->u.sa.sa_family == AF_INET) {
		*v4 = a->u.in.sin_addr.s_addr;
		return true;
	}
	return v6_mapped(&a->u.in6.sin6_addr, v4);
}

static bool inet_any(const struct saddr *a)
{
	in_addr_t v4;

	if (inet_v4(a, &v4))
		return v4 == htonl(INADDR_ANY);
	return IN6_IS_ADDR_UNSPECIFIED(&a->u.in6.sin6_addr);
}

/* The sandbox's own addresses: its loopback, "any" of it, and with the
 * netstack up its addresses on eth0 (a connection to them stays inside,
 * as on Linux, where they are local too). */
/* The sandbox's netstack addresses, parsed once (sentry_net_init): every
 * inet send asks inet_local and is_resolver. */
static struct {
	in_addr_t own, resolver;
	struct in6_addr own6;
} netaddr;

static bool inet_local(const struct saddr *a)
{
	in_addr_t v4;

	if (inet_any(a))
		return true;
	if (inet_v4(a, &v4))
		return v4_loopback(v4) || (netstack_up() && v4 == netaddr.own);
	if (IN6_IS_ADDR_LOOPBACK(&a->u.in6.sin6_addr))
		return true;
	return netstack_up() && !memcmp(&netaddr.own6, &a->u.in6.sin6_addr,
					sizeof(netaddr.own6));
}

/* src (address and port) in family fam: IPv4 <-> IPv4-mapped IPv6. */
static void inet_as(int fam, const struct saddr *src, struct saddr *out)
{
	in_addr_t v4;

	sa_unnamed(out, fam);
	if (fam == src->u.sa.sa_family) {
		*out = *src;
		out->len = fam == AF_INET ? sizeof(struct sockaddr_in) :
					    sizeof(struct sockaddr_in6);
		return;
	}
	if (fam == AF_INET6 && inet_v4(src, &v4)) {
		out->u.in6.sin6_addr.s6_addr[10] = 0xff;
		out->u.in6.sin6_addr.s6_addr[11] = 0xff;
		memcpy(&out->u.in6.sin6_addr.s6_addr[12], &v4, 4);
	} else if (fam == AF_INET && inet_v4(src, &v4)) {
		out->u.in.sin_addr.s_addr = v4;
	}
	inet_set_port(out, inet_port(src));
}

/* Does a socket bound to b take what is sent to dst? */
static bool inet_match(const struct usock *b, const struct saddr *dst)
{
	in_addr_t bv4 = 0, dv4 = 0;
	bool b4 = inet_v4(&b->name, &bv4), d4 = inet_v4(dst, &dv4);

	if (inet_port(&b->name) != inet_port(dst))
		return false;
	if (b4 != d4) {
		/* An AF_INET6 socket bound to "::" takes IPv4 too, unless
		 * IPV6_V6ONLY. */
		return !b4 && d4 && !b->v6only && inet_any(&b->name);
	}
	if (inet_any(&b->name))
		return true;
	if (b4)
		return bv4 == dv4;
	return !memcmp(&b->name.u.in6.sin6_addr, &dst->u.in6.sin6_addr,
		       sizeof(struct in6_addr));
}

/* The bound socket of the same kind (stream or datagram) that a message
 * or connection to dst reaches. */
static struct usock *find_inet(int type, int proto, const struct saddr *dst)
{
	struct usock *b;

	for (b = bound_list; b; b = b->bnext)
		if (is_inet(b) && is_stream(b) == (type != SOCK_DGRAM) &&
		    b->proto == proto && (!is_stream(b) || b->listening) &&
		    inet_match(b, dst))
			return b;
	return NULL;
}

/* Would binding u to a clash with a bound socket? */
static bool inet_in_use(const struct usock *u, const struct saddr *a)
{
	struct usock *b;
	in_addr_t bv4 = 0, av4 = 0;

	for (b = bound_list; b; b = b->bnext) {
		bool b4, a4;
		if (!is_inet(b) || is_stream(b) != is_stream(u) ||
		    b->proto != u->proto || inet_port(&b->name) != inet_port(a))
			continue;
		if (b->reuseport && u->reuseport)
			continue;
		b4 = inet_v4(&b->name, &bv4);
		a4 = inet_v4(a, &av4);
		if (inet_any(&b->name) || inet_any(a)) {
			/* "::" with IPV6_V6ONLY leaves IPv4 to others. */
			if (b4 != a4 &&
			    ((!b4 && b->v6only) || (!a4 && u->v6only)))
				continue;
			return true;
		}
		if (b4 != a4)
			continue;
		if (b4 ? bv4 == av4 :
			 !memcmp(&b->name.u.in6.sin6_addr, &a->u.in6.sin6_addr,
				 sizeof(struct in6_addr)))
			return true;
	}
	return false;
}

/* The count of u's port, when u is a bound inet socket on one. */
static unsigned *eph_slot(const struct usock *u)
{
	uint16_t port;

	if (!is_inet(u))
		return NULL;
	port = inet_port(&u->name);
	if (port < EPHEMERAL_LO || port > EPHEMERAL_HI)
		return NULL;
	return &eph_users[is_stream(u)][port - EPHEMERAL_LO];
}

static void bind_list_add(struct usock *u)
{
	unsigned *users = eph_slot(u);

	if (users)
		(*users)++;
	u->bound = true;
	u->bnext = bound_list;
	bound_list = u;
}

/* An ephemeral port for u: the next one, from a cursor, that no socket
 * of u's kind holds. Cost: at most EPHEMERAL_N array reads, however many
 * sockets are bound; every port held is EADDRINUSE, as Linux's bind. */
static long inet_ephemeral(struct usock *u, struct saddr *a)
{
	static unsigned next;
	unsigned tries;

	for (tries = 0; tries < EPHEMERAL_N; tries++) {
		unsigned i = next;
		next = (next + 1) % EPHEMERAL_N;
		if (!eph_users[is_stream(u)][i]) {
			inet_set_port(a, (uint16_t)(EPHEMERAL_LO + i));
			return 0;
		}
	}
	return -EADDRINUSE;
}

static long inet_bind(struct usock *u, struct saddr *a)
{
	long rc;

	if (!inet_local(a))
		return -EADDRNOTAVAIL; /* the sandbox has no other address */
	if (inet_port(a) == 0) {
		rc = inet_ephemeral(u, a);
		if (rc < 0)
			return rc;
	} else if (inet_in_use(u, a)) {
		return -EADDRINUSE;
	}
	u->name = *a;
	if (u->domain == AF_INET)
		u->name.len = sizeof(struct sockaddr_in);
	else
		u->name.len = sizeof(struct sockaddr_in6);
	bind_list_add(u);
	return 0;
}

/* Give an unbound inet socket a loopback address and a free port. */
static long inet_autobind(struct usock *u)
{
	struct saddr a;
	long rc;

	if (u->bound)
		return 0;
	sa_unnamed(&a, u->domain);
	if (u->domain == AF_INET)
		a.u.in.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	else
		a.u.in6.sin6_addr = in6addr_loopback;
	rc = inet_bind(u, &a);
	/* No port left: Linux's UDP autobind says EAGAIN, its TCP connect
	 * EADDRNOTAVAIL. */
	if (rc == -EADDRINUSE)
		rc = is_stream(u) ? -EADDRNOTAVAIL : -EAGAIN;
	return rc;
}

/* AF_UNIX names. */
static bool un_abstract(const struct saddr *a)
{
	return a->len > offsetof(struct sockaddr_un, sun_path) &&
	       a->u.un.sun_path[0] == 0;
}

/* The path of a pathname address (NUL-terminated into out). */
static long un_path(const struct saddr *a, char *out)
{
	size_t n = a->len - offsetof(struct sockaddr_un, sun_path);

	if (n >= sizeof(a->u.un.sun_path) + 1)
		return -EINVAL;
	memcpy(out, a->u.un.sun_path, n);
	out[n] = 0;
	if (!out[0])
		return -EINVAL;
	return 0;
}

static long un_check(const struct saddr *a)
{
	if (a->len < offsetof(struct sockaddr_un, sun_path) ||
	    a->len > sizeof(struct sockaddr_un))
		return -EINVAL;
	if (a->u.sa.sa_family != AF_UNIX)
		return -EINVAL;
	return 0;
}

static struct usock *find_abstract(const struct saddr *a)
{
	struct usock *b;

	for (b = bound_list; b; b = b->bnext)
		if (b->domain == AF_UNIX && b->name.len == a->len &&
		    !memcmp(b->name.u.un.sun_path, a->u.un.sun_path,
			    a->len - offsetof(struct sockaddr_un, sun_path)))
			return b;
	return NULL;
}

static long un_bind_abstract(struct usock *u, struct saddr *a)
{
	if (a->len == offsetof(struct sockaddr_un, sun_path)) {
		/* autobind: "\0" and five hex digits, as Linux */
		static unsigned next;
		int tries;
		for (tries = 0; tries < 0x100000; tries++) {
			char name[8];
			snprintf(name, sizeof(name), "%05x", next++ & 0xfffff);
			a->u.un.sun_path[0] = 0;
			memcpy(a->u.un.sun_path + 1, name, 5);
			a->len = offsetof(struct sockaddr_un, sun_path) + 6;
			if (!find_abstract(a))
				break;
		}
	} else if (find_abstract(a)) {
		return -EADDRINUSE;
	}
	u->name = *a;
	bind_list_add(u);
	return 0;
}

static long un_bind_path(struct task *t, struct usock *u, struct saddr *a)
{
	char path[sizeof(a->u.un.sun_path) + 1], name[NAME_MAX + 1];
	struct vnode *dir, *udir, *node;
	bool trailing;
	long rc = un_path(a, path);

	if (rc < 0)
		return rc;
	rc = vfs_resolve_parent(t, AT_FDCWD, path, &dir, name, &trailing);
	if (rc < 0)
		return rc == -EINVAL || rc == -EBUSY ? -EADDRINUSE : rc;
	{
		char full[PATH_MAX];
		struct vnode *old;
		if (vfs_child_path(dir, name, full, sizeof(full)) == 0 &&
		    vfs_resolve(t, AT_FDCWD, full, 0, &old) == 0) {
			vnode_put(old);
			vnode_put(dir);
			return -EADDRINUSE;
		}
	}
	/* A socket node lives in tmpfs or the overlay; a host directory
	 * mounted in the sandbox cannot hold one the sandbox could use. */
	if (dir->kind == VN_HOST) {
		vnode_put(dir);
		return -EPERM;
	}
	rc = vfs_access(&t->proc->cred, dir, W_OK | X_OK);
	if (rc == 0)
		rc = ovl_write_dir(dir, &udir);
	vnode_put(dir);
	if (rc < 0)
		return rc;
	rc = tmpfs_mksock(t, udir, name, 0777 & ~t->proc->umask, &node);
	vnode_put(udir);
	if (rc < 0)
		return rc;
	tmpfs_set_sock(node, u);
	u->node = node;
	u->name = *a;
	return 0;
}

/* The socket a connection or datagram to an AF_UNIX address reaches. */
static long un_lookup(struct task *t, const struct saddr *a, struct usock **out)
{
	char path[sizeof(a->u.un.sun_path) + 1];
	struct vnode *vn;
	long rc;

	if (un_abstract(a)) {
		*out = find_abstract(a);
		return *out ? 0 : -ECONNREFUSED;
	}
	rc = un_path(a, path);
	if (rc < 0)
		return rc;
	rc = vfs_resolve(t, AT_FDCWD, path, LOOKUP_FOLLOW, &vn);
	if (rc < 0)
		return rc;
	if (!S_ISSOCK(vn->mode)) {
		vnode_put(vn);
		return -ECONNREFUSED;
	}
	rc = vfs_access(&t->proc->cred, vn, W_OK);
	*out = tmpfs_sock(vn);
	vnode_put(vn);
	if (rc < 0)
		return rc;
	return *out ? 0 : -ECONNREFUSED;
}

/* ---- data --------------------------------------------------------------- */

/* What a sendmsg adds to its bytes: passed files (references, taken over
 * on success), claimed credentials, and IPv6 per-packet settings (-1:
 * the socket's). */
struct sendmeta {
	struct file **files;
	int nfiles;
	const struct ucred *cred;
	int hoplimit, tclass;
};

static int kept_val(struct usock *u, int level, int opt, int dflt);

/* A message for n bytes to p (zeroed but for len, cap and cost), or
 * NULL. */
static struct umsg *umsg_new(const struct usock *p, size_t n)
{
	size_t cap = n;
	struct umsg *m;

	if (is_inet(p) && p->type == SOCK_STREAM && cap < TCP_CHUNK)
		cap = TCP_CHUNK;
	m = malloc(sizeof(*m) + cap);
	if (!m)
		return NULL;
	memset(m, 0, sizeof(*m));
	m->len = n;
	m->cap = cap;
	m->cost = msg_cost(cap, p->type == SOCK_STREAM ? SKB_HEAD_STREAM :
							 SKB_HEAD_DGRAM);
	return m;
}

_Static_assert(sizeof(struct umsg) + 32 <= SKB_SHINFO + 256,
	       "msg_cost() covers the sentry's allocation");

/* m (its data filled in) to the end of p's queue, charged; readers are
 * woken. */
static void append_msg(struct usock *p, struct umsg *m)
{
	m->next = NULL;
	queued += m->cost;
	limits_heap_force((int64_t)m->cost); /* send_room() let it in */
	p->charged += m->cost;
	if (p->tail)
		p->tail->next = m;
	else
		p->head = m;
	p->tail = m;
	p->bytes += m->len;
	p->seq++;
	sentry_wake();
}

/* The first of n bytes of a TCP stream into the room of p's last chunk
 * (which carries no files: TCP passes none): how many went there. */
static size_t append_tcp(struct usock *p, const void *buf, size_t n)
{
	struct umsg *m = p->tail;
	size_t c;

	if (!is_inet(p) || p->type != SOCK_STREAM || !m || m->nfiles)
		return 0;
	c = m->cap - m->len < n ? m->cap - m->len : n;
	memcpy(m->data + m->len, buf, c);
	m->len += c;
	p->bytes += c;
	if (c) {
		p->seq++;
		sentry_wake();
	}
	return c;
}

/* Queue n bytes of buf (and files, taken over on success) on p. */
static long enqueue(struct task *t, struct usock *u, struct usock *p,
		    const void *buf, size_t n, const struct sendmeta *sm,
		    const struct saddr *from)
{
	struct file **files = sm ? sm->files : NULL;
	int nfiles = sm ? sm->nfiles : 0;
	const struct ucred *cred = sm ? sm->cred : NULL;
	size_t done = 0;
	struct umsg *m;

	if (nfiles && inflight + nfiles > INFLIGHT_MAX)
		return -ETOOMANYREFS;
	if (!nfiles && n) {
		done = append_tcp(p, buf, n);
		if (done == n)
			return (long)n;
		buf = (const char *)buf + done;
		n -= done;
	}
	m = umsg_new(p, n);
	if (!m)
		return done ? (long)done : -ENOMEM;
	m->files = files;
	m->nfiles = nfiles;
	if (cred) {
		m->cred = *cred;
	} else {
		m->cred.pid = t->proc->pid;
		m->cred.uid = t->proc->cred.euid;
		m->cred.gid = t->proc->cred.egid;
	}
	if (from)
		m->from = *from;
	else
		m->from.len = 0;
	m->hoplimit = sm && sm->hoplimit >= 0 ?
			      sm->hoplimit :
			      kept_val(u, IPPROTO_IPV6, IPV6_UNICAST_HOPS, 64);
	m->tclass = sm && sm->tclass >= 0 ?
			    sm->tclass :
			    kept_val(u, IPPROTO_IPV6, IPV6_TCLASS, 0);
	inflight += nfiles;
	memcpy(m->data, buf, n);
	append_msg(p, m);
	return (long)(done + n);
}

/* ---- peers outside the sandbox: the netstack ---------------------------- */

/* A TCP flow stays allowed this long after its socket closed: lwIP still
 * sends the FIN and the last ACKs (TIME_WAIT is 2 MSL). */
#define FLOW_LINGER_NS (120LL * 1000000000)

#define DNS_REPLY_MAX 512     /* what the resolver answers itself */
#define WAITALL_EXT_MAX 32768 /* below any TCP window lwIP opens */

/* The same address and port (an IPv4 one and its v4-mapped form too). */
static bool inet_match_addr(const struct saddr *a, const struct saddr *b)
{
	in_addr_t a4, b4;
	bool is4 = inet_v4(a, &a4);

	if (inet_port(a) != inet_port(b) || is4 != inet_v4(b, &b4))
		return false;
	if (is4)
		return a4 == b4;
	return !memcmp(&a->u.in6.sin6_addr, &b->u.in6.sin6_addr,
		       sizeof(struct in6_addr));
}

static bool ext_dest(const struct saddr *a)
{
	return !inet_local(a) && !inet_any(a);
}

/* The sentry's resolver, NS_RESOLVER port 53 (or its v4-mapped form). */
static bool is_resolver(const struct saddr *a)
{
	in_addr_t v4;

	return inet_port(a) == 53 && inet_v4(a, &v4) && v4 == netaddr.resolver;
}

static void resolver_name(int domain, struct saddr *out)
{
	struct saddr r = { .len = sizeof(struct sockaddr_in) };

	r.u.in.sin_family = AF_INET;
	r.u.in.sin_port = htons(53);
	r.u.in.sin_addr.s_addr = netaddr.resolver;
	inet_as(domain, &r, out);
}

static long ext_unreachable(struct task *t, const struct saddr *dst)
{
	audit_guest(AUDIT_GUEST, AUDIT_K_NET_UNREACHABLE,
		    "\"event\":\"net-unreachable\",\"pid\":%d,\"port\":%u,"
		    "\"reason\":\"no network (--net=none)\"",
		    t->proc->pid, inet_port(dst));
	return -ENETUNREACH;
}

/* Bytes or a datagram from outside into u's queue, as enqueue() does for
 * a peer inside. A datagram that does not fit is lost, as UDP's are. */
static void ext_enqueue(struct usock *u, const void *buf, size_t n,
			const struct saddr *from)
{
	struct umsg *m;

	if (u->shut_rd || (from && send_room(u) == 0))
		return;
	if (!from) {
		size_t c = append_tcp(u, buf, n);
		buf = (const char *)buf + c;
		n -= c;
		if (!n)
			return;
	}
	m = umsg_new(u, n);
	if (!m)
		return;
	if (from)
		m->from = *from;
	m->hoplimit = 64;
	memcpy(m->data, buf, n);
	append_msg(u, m);
}

static void sniff_flush(struct usock *u);

/* The buffer of a flow's held first bytes: charged as queued socket data
 * (QUEUED_MAX) and to the sentry's share of the memory limit, as many
 * sockets' as the guest opens. */
static bool sniff_alloc(struct usock *u)
{
	if (queued + SNIFF_MAX > QUEUED_MAX || !limits_heap_charge(SNIFF_MAX))
		return false;
	u->sniff = malloc(SNIFF_MAX);
	if (!u->sniff) {
		limits_heap_charge(-(int64_t)SNIFF_MAX);
		return false;
	}
	queued += SNIFF_MAX;
	return true;
}

static void sniff_free(struct usock *u)
{
	if (u->sniff) {
		free(u->sniff);
		queued -= SNIFF_MAX;
		limits_heap_charge(-(int64_t)SNIFF_MAX);
	}
	u->sniff = NULL;
	u->nsniff = u->sniff_sent = 0;
}

static void on_ext_data(void *owner, const void *buf, size_t len)
{
	struct usock *u = owner;

	/* The server spoke first (SSH, SMTP): no request of the guest's
	 * for the broker to see. */
	if (u->brk == BRK_SNIFFING) {
		u->brk = BRK_PASSED;
		sniff_flush(u);
	}
	ext_enqueue(u, buf, len, NULL);
}

static void on_ext_dgram(void *owner, const void *buf, size_t len,
			 const struct sockaddr *from, socklen_t fromlen)
{
	struct usock *u = owner;
	struct saddr a = { .len = fromlen };

	if (fromlen > sizeof(a.u))
		return;
	memcpy(&a.u, from, fromlen);
	/* a connected UDP socket hears only its peer */
	if (u->pname.len && !inet_match_addr(&u->pname, &a))
		return;
	ext_enqueue(u, buf, len, &a);
}

static void on_ext_event(void *owner, int err)
{
	struct usock *u = owner;

	if (err == 0) {
		u->connected = true;
		u->ext_connecting = false;
		if (broker_wanted() && u->brk == BRK_NONE)
			u->brk = BRK_SNIFFING;
		if (kept_val(u, IPPROTO_TCP, TCP_NODELAY, 0))
			ns_set_nodelay(u->ext, true);
		if (kept_val(u, SOL_SOCKET, SO_KEEPALIVE, 0))
			ns_set_keepalive(u->ext, true);
	} else if (err == -1) {
		u->peer_shut_wr = true; /* FIN */
	} else if (err == -2) {
		sniff_flush(u); /* room for what was held */
	} else if (err > 0) {
		/* refused, reset, timed out: lwIP has freed its pcb */
		u->so_error = err;
		u->ext_connecting = false;
		u->ext_dead = true;
	}
	u->seq++;
	sentry_wake();
}

static void on_resolver_reply(void *owner, const uint8_t *msg, size_t len)
{
	struct usock *u = owner;
	struct saddr from;

	resolver_name(u->domain, &from);
	ext_enqueue(u, msg, len, &from);
}

static const struct ns_owner_ops ext_ops = {
	.data = on_ext_data,
	.dgram = on_ext_dgram,
	.event = on_ext_event,
};

int sentry_net_init(const struct netstack_config *cfg, struct moat_error *err)
{
	if (inet_pton(AF_INET, NS_ADDR, &netaddr.own) != 1 ||
	    inet_pton(AF_INET, NS_RESOLVER, &netaddr.resolver) != 1 ||
	    inet_pton(AF_INET6, NS_ADDR6, &netaddr.own6) != 1)
		return moat_error_set(err, EINVAL, "netstack: addresses");
	resolver_set_deliver(on_resolver_reply);
	return netstack_init(cfg, &ext_ops, err);
}

static bool ext_has_flow(const struct usock *u, int proto,
			 const struct saddr *dst)
{
	size_t i;
	struct flow_key k;

	in_addr_t v4;
	bool is4 = inet_v4(dst, &v4); /* a v4-mapped one is its IPv4 flow */

	for (i = 0; i < u->nflows; i++) {
		k = u->flows[i];
		if (k.proto != proto || k.rport != inet_port(dst) ||
		    k.family != (is4 ? AF_INET : AF_INET6))
			continue;
		if (is4 ? !memcmp(k.raddr, &v4, 4) :
			  !memcmp(k.raddr, &dst->u.in6.sin6_addr, 16))
			return true;
	}
	return false;
}

/* Register the flow (proto, lport, dst) for u; removed when u goes. */
static long ext_flow(struct usock *u, int proto, uint16_t lport,
		     const struct saddr *dst)
{
	struct flow_key k = { .proto = (uint8_t)proto,
			      .lport = lport,
			      .rport = inet_port(dst) };
	struct flow_key *n;
	in_addr_t v4;
	int rc;

	if (inet_v4(dst, &v4)) {
		k.family = AF_INET;
		memcpy(k.raddr, &v4, 4);
	} else {
		k.family = AF_INET6;
		memcpy(k.raddr, &dst->u.in6.sin6_addr, 16);
	}
	n = realloc(u->flows, (u->nflows + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	u->flows = n;
	rc = flow_add(&k);
	if (rc < 0)
		return rc == -ENOSPC ? -ENOBUFS : rc;
	u->flows[u->nflows++] = k;
	return 0;
}

/* Every socket with a peer outside, for a policy change. */
static struct usock *ext_list;

static void ext_attach(struct usock *u, struct ns_conn *c)
{
	u->ext = c;
	u->ext_next = ext_list;
	if (ext_list)
		ext_list->ext_pprev = &u->ext_next;
	u->ext_pprev = &ext_list;
	ext_list = u;
}

static void ext_drop(struct usock *u)
{
	size_t i;

	if (u->ext) {
		/* Bytes held too few to tell by go out before the FIN, as
		 * a close sends what was written. */
		if (u->brk == BRK_SNIFFING && u->nsniff) {
			u->brk = BRK_PASSED;
			sniff_flush(u);
		}
		/* a brokered flow's connection goes with its relay */
		if (u->bflow)
			bflow_guest_gone(u->bflow);
		else
			ns_close(u->ext);
		*u->ext_pprev = u->ext_next;
		if (u->ext_next)
			u->ext_next->ext_pprev = u->ext_pprev;
	}
	u->ext = NULL;
	u->bflow = NULL;
	sniff_free(u);
	u->brk = BRK_NONE;
	for (i = 0; i < u->nflows; i++)
		flow_release(&u->flows[i], u->flows[i].proto == IPPROTO_TCP ?
						   FLOW_LINGER_NS :
						   0);
	free(u->flows);
	u->flows = NULL;
	u->nflows = 0;
	u->ext_dead = false;
	u->ext_connecting = false;
	resolver_owner_gone(u);
}

/* The destination of flow k as a socket address. */
static void flow_dest(const struct flow_key *k, struct saddr *a)
{
	memset(a, 0, sizeof(*a));
	if (k->family == AF_INET) {
		a->u.in.sin_family = AF_INET;
		a->u.in.sin_port = htons(k->rport);
		memcpy(&a->u.in.sin_addr, k->raddr, 4);
		a->len = sizeof(a->u.in);
	} else {
		a->u.in6.sin6_family = AF_INET6;
		a->u.in6.sin6_port = htons(k->rport);
		memcpy(&a->u.in6.sin6_addr, k->raddr, 16);
		a->len = sizeof(a->u.in6);
	}
}

int sockets_policy_changed(void)
{
	struct usock *u;
	struct saddr dst;
	size_t i;
	int revoked = 0;

	for (u = ext_list; u; u = u->ext_next) {
		for (i = 0; i < u->nflows;) {
			struct flow_key *k = &u->flows[i];

			flow_dest(k, &dst);
			if (netpol_check(u->cred.pid, k->proto, &dst.u.sa,
					 dst.len) == 0) {
				i++;
				continue;
			}
			revoked++;
			if (k->proto == IPPROTO_TCP && !u->ext_dead) {
				/* reset, as a firewall rule added now would */
				if (u->bflow)
					bflow_abort(u->bflow);
				else
					ns_abort(u->ext);
				u->so_error = ECONNRESET;
				u->ext_dead = true;
				u->ext_connecting = false;
				u->seq++;
			}
			flow_release(k, 0);
			u->flows[i] = u->flows[--u->nflows];
		}
	}
	revoked += broker_policy_changed();
	sentry_wake();
	return revoked;
}

/* connect(2) of a stream socket to a peer outside: the policy, then the
 * handshake. Also the retry of a blocked one, and a second connect. */
static long ext_connect(struct task *t, struct file *f, struct usock *u,
			const struct saddr *dst)
{
	bool nonblock = (f->flags & O_NONBLOCK) != 0;
	uint16_t lport;
	long rc;

	if (u->ext) {
		if (u->ext_connecting)
			return t->block_started && !nonblock ? SYS_BLOCK :
							       -EALREADY;
		if (u->so_error && !u->connected) {
			rc = -u->so_error;
			u->so_error = 0;
			return rc;
		}
		return t->block_started ? 0 : -EISCONN;
	}
	if (u->connected)
		return -EISCONN;
	if (!netstack_up())
		return ext_unreachable(t, dst);
	/* Denied: refused at once (never a timeout), with an audit line. */
	if (netpol_check(t->proc->pid, IPPROTO_TCP, &dst->u.sa, dst->len) < 0)
		return -ECONNREFUSED;
	{
		struct ns_conn *c = ns_tcp_new(u->domain, u);

		if (!c)
			return -ENOMEM;
		ext_attach(u, c);
	}
	rc = ns_prepare(u->ext, &dst->u.sa, dst->len, &lport);
	if (rc == 0)
		rc = ext_flow(u, IPPROTO_TCP, lport, dst);
	if (rc == 0)
		rc = ns_connect(u->ext, &dst->u.sa, dst->len);
	if (rc < 0) {
		ext_drop(u);
		u->so_error = 0;
		return rc;
	}
	u->ext_connecting = true;
	u->pname = *dst;
	return nonblock ? -EINPROGRESS : SYS_BLOCK;
}

/* ---- flows the broker takes (sentry/brokerlink.h) ------------------------ */

static size_t bf_room(void *owner)
{
	return send_room(owner);
}

static void bf_data(void *owner, const void *buf, size_t n)
{
	struct usock *u = owner;

	ext_enqueue(u, buf, n, NULL);
	u->seq++;
}

static void bf_event(void *owner, int ev)
{
	struct usock *u = owner;

	if (ev == BFLOW_EOF)
		u->peer_shut_wr = true;
	if (ev == BFLOW_RESET && !u->ext_dead) {
		u->so_error = ECONNRESET;
		u->ext_dead = true;
	}
	u->seq++;
	sentry_wake();
}

static const struct bflow_guest_ops bf_ops = {
	.room = bf_room,
	.data = bf_data,
	.event = bf_event,
};

/* Held bytes of a flow that passes by the broker, to the connection, as
 * much as it takes now. */
static void sniff_flush(struct usock *u)
{
	long rc;

	if (u->brk != BRK_PASSED || u->sniff_sent >= u->nsniff || !u->ext ||
	    u->ext_dead)
		return;
	rc = ns_send(u->ext, u->sniff + u->sniff_sent,
		     u->nsniff - u->sniff_sent, false);
	if (rc > 0)
		u->sniff_sent += (size_t)rc;
	if (u->sniff_sent == u->nsniff) {
		sniff_free(u);
		u->seq++;
	}
}

/* A send while the flow's first bytes are held: they (with this send's)
 * say what the flow is. Returns the bytes taken (held, or the broker's),
 * 0 when the flow passes by and nothing is held (the caller sends buf as
 * ever), or -errno. */
static long sniff_take(struct task *t, struct usock *u, const void *buf,
		       size_t n)
{
	struct sniff_result r;
	const uint8_t *p = buf;
	size_t len = n < SNIFF_MAX ? n : SNIFF_MAX, take = len;
	const char *exe;
	struct bflow *b;
	int err;

	if (u->nsniff) {
		take = n < SNIFF_MAX - u->nsniff ? n : SNIFF_MAX - u->nsniff;
		memcpy(u->sniff + u->nsniff, buf, take);
		u->nsniff += take;
		p = u->sniff;
		len = u->nsniff;
	}
	sniff(p, len, &r);
	if (r.kind == SNIFF_MORE) {
		if (!u->nsniff) {
			if (!sniff_alloc(u))
				return -ENOBUFS;
			memcpy(u->sniff, buf, take);
			u->nsniff = take;
		}
		return (long)take;
	}
	if (!broker_takes(&r, inet_port(&u->pname))) {
		u->brk = BRK_PASSED;
		if (!u->nsniff)
			return 0;
		sniff_flush(u);
		return (long)take;
	}
	exe = t->proc->exe && t->proc->exe->path ? t->proc->exe->path :
						   t->proc->comm;
	b = bflow_start(u->ext, u, &bf_ops, t->proc->pid, exe, &u->pname.u.sa,
			u->pname.len, &r, p, len, &err);
	sniff_free(u);
	if (!b) {
		/* Never passed by: what the broker would see is reset. */
		ns_abort(u->ext);
		u->ext_dead = true;
		u->brk = BRK_PASSED;
		u->seq++;
		return err < 0 ? err : -ECONNRESET;
	}
	u->bflow = b;
	u->brk = BRK_TAKEN;
	return (long)take;
}

static long ext_send(struct task *t, struct file *f, struct usock *u,
		     const void *buf, size_t n, int flags)
{
	bool nonblock = (f->flags & O_NONBLOCK) || (flags & MSG_DONTWAIT);
	long rc;

	if (u->ext_connecting)
		return nonblock ? -EAGAIN : SYS_BLOCK;
	if (u->so_error) {
		rc = -u->so_error;
		u->so_error = 0;
		return rc;
	}
	if (!u->connected)
		return -ENOTCONN;
	if (u->bflow) {
		rc = u->shut_wr ? -EPIPE : bflow_send(u->bflow, buf, n);
		if (rc == -EAGAIN)
			return nonblock ? -EAGAIN : SYS_BLOCK;
		if (rc == -EPIPE && !(flags & MSG_NOSIGNAL))
			send_signal_task(t, SIGPIPE, t->proc->pid);
		return rc;
	}
	if (u->brk == BRK_SNIFFING && !u->shut_wr) {
		/* nothing to tell by, nor to hold (each would take a
		 * buffer), nor to wait for: Linux's 0 */
		if (!n)
			return 0;
		rc = sniff_take(t, u, buf, n);
		if (rc != 0)
			return rc;
	}
	if (u->sniff_sent < u->nsniff) {
		/* what was held goes first */
		sniff_flush(u);
		if (u->sniff_sent < u->nsniff)
			return nonblock ? -EAGAIN : SYS_BLOCK;
	}
	ns_set_nodelay(u->ext, kept_val(u, IPPROTO_TCP, TCP_NODELAY, 0));
	rc = u->shut_wr ? -EPIPE : ns_send(u->ext, buf, n, flags & MSG_MORE);
	if (rc == -EPIPE && !(flags & MSG_NOSIGNAL))
		send_signal_task(t, SIGPIPE, t->proc->pid);
	if (rc == 0 && n)
		return nonblock ? -EAGAIN : SYS_BLOCK;
	return rc;
}

/* A ping socket's echo request: answered by the sentry for the sandbox's
 * own addresses, sent through the netstack (under the policy's /icmp
 * rules) for others. The echo id is the socket's, as on Linux. */
static long ping_send(struct task *t, struct usock *u, const void *buf,
		      size_t n, const struct saddr *dst)
{
	uint8_t reply[2048];
	struct saddr key;
	uint16_t id = (uint16_t)(u->ino & 0xffff);
	uint32_t sum = 0;
	long rc;

	if (!dst)
		return -EDESTADDRREQ;
	rc = inet_check(u, dst);
	if (rc < 0)
		return rc;
	if (n < 8 || ((const uint8_t *)buf)[0] != 8 ||
	    ((const uint8_t *)buf)[1] != 0)
		return -EINVAL; /* echo requests only */
	if (!ext_dest(dst)) {
		/* the sandbox's own: the reply is ours to make */
		if (n > sizeof(reply))
			return -EMSGSIZE;
		memcpy(reply, buf, n);
		reply[0] = 0;
		reply[4] = (uint8_t)(id >> 8);
		reply[5] = (uint8_t)id;
		reply[2] = reply[3] = 0;
		sum = ns_csum_fold(reply, n, 0);
		reply[2] = (uint8_t)(sum >> 8);
		reply[3] = (uint8_t)sum;
		key = *dst;
		inet_set_port(&key, 0);
		ext_enqueue(u, reply, n, &key);
		return (long)n;
	}
	if (!netstack_up())
		return ext_unreachable(t, dst);
	if (!u->ext) {
		struct ns_conn *c = ns_ping_new(u, id);

		if (!c)
			return -ENOMEM;
		ext_attach(u, c);
	}
	/* the flow of an echo is (ICMP, the address, the id) */
	key = *dst;
	inet_set_port(&key, id);
	if (!ext_has_flow(u, IPPROTO_ICMP, &key)) {
		if (netpol_check(t->proc->pid, IPPROTO_ICMP, &dst->u.sa,
				 dst->len) < 0)
			return -EPERM;
		rc = ext_flow(u, IPPROTO_ICMP, 0, &key);
		if (rc < 0)
			return rc;
	}
	return ns_ping(u->ext, buf, n, &dst->u.sa, dst->len);
}

/* A datagram to a peer outside, or to the resolver. */
static long ext_sendto(struct task *t, struct usock *u, const void *buf,
		       size_t n, const struct saddr *dst)
{
	uint8_t reply[DNS_REPLY_MAX];
	uint16_t lport;
	long rc;

	if (is_resolver(dst) && u->proto != IPPROTO_UDPLITE) {
		struct saddr from;

		rc = resolver_query(u, t->proc->pid, buf, n, reply,
				    sizeof(reply));
		if (rc > 0) {
			resolver_name(u->domain, &from);
			ext_enqueue(u, reply, (size_t)rc, &from);
		}
		return (long)n;
	}
	if (!netstack_up())
		return ext_unreachable(t, dst);
	if (u->proto == IPPROTO_UDPLITE)
		return -ENETUNREACH; /* lwIP's UDP-Lite is not wired up */
	if (!u->ext) {
		struct ns_conn *c = ns_udp_new(u->domain, u);

		if (!c)
			return -ENOMEM;
		ext_attach(u, c);
	}
	/* QUIC to a brokered host is lost, as a firewall would lose it:
	 * the client falls back to TCP, which the broker sees. */
	if (broker_drops_udp(t->proc->pid, &dst->u.sa, dst->len))
		return (long)n;
	if (!ext_has_flow(u, IPPROTO_UDP, dst)) {
		/* a new destination: decided (and audited) once */
		if (netpol_check(t->proc->pid, IPPROTO_UDP, &dst->u.sa,
				 dst->len) < 0)
			return -EPERM;
		rc = ns_prepare(u->ext, &dst->u.sa, dst->len, &lport);
		if (rc == 0)
			rc = ext_flow(u, IPPROTO_UDP, lport, dst);
		if (rc < 0)
			return rc;
	}
	return ns_sendto(u->ext, buf, n, &dst->u.sa, dst->len);
}

/* Where a datagram goes: to, the connected destination, or a
 * socketpair's peer. */
static long dgram_target(struct task *t, struct usock *u,
			 const struct saddr *to, struct usock **out)
{
	const struct saddr *dst = to && to->len ? to : NULL;
	long rc;

	*out = NULL;
	if (!dst) {
		if (u->peer) {
			*out = u->peer;
			return 0;
		}
		if (!u->pname.len) /* never connected, or disconnected */
			return u->connected ? -ECONNREFUSED :
			       is_inet(u)   ? -EDESTADDRREQ :
					      -ENOTCONN;
		dst = &u->pname;
	}
	if (u->domain == AF_UNIX) {
		rc = un_check(dst);
		if (rc == 0)
			rc = un_lookup(t, dst, out);
		if (rc == 0 && (*out)->type != u->type)
			rc = -EPROTOTYPE;
		return rc;
	}
	rc = inet_check(u, dst);
	if (rc < 0)
		return rc;
	if (ext_dest(dst)) {
		/* outside: the netstack's (ext_sendto), or the resolver's;
		 * connect(2) only records it */
		return is_resolver(dst) || netstack_up() ?
			       0 :
			       ext_unreachable(t, dst);
	}
	if (inet_any(dst))
		return -ENETUNREACH;
	rc = inet_autobind(u);
	if (rc < 0)
		return rc;
	*out = find_inet(SOCK_DGRAM, u->proto, dst);
	/* UDP to a port nobody has: the datagram is lost (a connected
	 * socket hears of it as ECONNREFUSED). */
	return 0;
}

/* ---- netlink: the sandbox's interfaces, as rtnetlink describes them ----- */

/* Its port id, when it has none: its maker's pid, as t's pid namespace
 * numbers it (a member's init is 1 there, as in Linux). */
static void nl_name(struct task *t, struct usock *u)
{
	if (!u->name.len) {
		sa_unnamed(&u->name, AF_NETLINK);
		u->name.len = sizeof(struct sockaddr_nl);
		u->name.u.sa.sa_family = AF_NETLINK;
		((struct sockaddr_nl *)&u->name.u)->nl_pid =
			(unsigned)pid_to_guest(t->proc->pidns, u->cred.pid);
	}
}

struct nlbuf {
	char b[1024];
	size_t len;
};

static struct nlmsghdr *nl_put(struct nlbuf *nb, int type, int flags,
			       const struct nlmsghdr *req, const void *body,
			       size_t blen, unsigned portid)
{
	struct nlmsghdr *h = (struct nlmsghdr *)(void *)nb->b;

	memset(nb, 0, sizeof(*nb));
	h->nlmsg_type = (uint16_t)type;
	h->nlmsg_flags = (uint16_t)flags;
	h->nlmsg_seq = req->nlmsg_seq;
	h->nlmsg_pid = portid;
	memcpy(nb->b + NLMSG_HDRLEN, body, blen);
	nb->len = NLMSG_HDRLEN + NLMSG_ALIGN(blen);
	h->nlmsg_len = (uint32_t)nb->len;
	return h;
}

static void nl_attr(struct nlbuf *nb, int type, const void *data, size_t len)
{
	struct rtattr *a = (struct rtattr *)(void *)(nb->b + nb->len);
	struct nlmsghdr *h = (struct nlmsghdr *)(void *)nb->b;

	a->rta_type = (unsigned short)type;
	a->rta_len = (unsigned short)RTA_LENGTH(len);
	memcpy(RTA_DATA(a), data, len);
	nb->len += RTA_ALIGN(a->rta_len);
	h->nlmsg_len = (uint32_t)nb->len;
}

/* Queue one reply on u. A reply that does not fit is dropped and the
 * next recv fails with ENOBUFS, as Linux's netlink_overrun does: the
 * guest cannot grow the sentry by sending requests it never reads. */
static long nl_queue(struct task *t, struct usock *u, struct nlbuf *nb)
{
	struct saddr kernel;

	if (send_room(u) == 0) {
		u->so_error = ENOBUFS;
		u->seq++;
		sentry_wake();
		return 0;
	}
	memset(&kernel, 0, sizeof(kernel));
	kernel.u.sa.sa_family = AF_NETLINK;
	kernel.len = sizeof(struct sockaddr_nl);
	return enqueue(t, u, u, nb->b, nb->len, NULL, &kernel);
}

int netlink_sock_check(struct file *f)
{
	if (!file_is_socket(f))
		return -ENOTSOCK;
	return ((struct usock *)f->priv)->domain == AF_NETLINK ? 0 : -EINVAL;
}

void netlink_kernel_send(struct file *f, const void *buf, size_t n)
{
	struct saddr kernel;

	if (netlink_sock_check(f) < 0)
		return;
	memset(&kernel, 0, sizeof(kernel));
	kernel.u.sa.sa_family = AF_NETLINK;
	kernel.len = sizeof(struct sockaddr_nl);
	ext_enqueue(f->priv, buf, n, &kernel);
}

static void nl_link(struct nlbuf *nb, const struct nlmsghdr *req, int flags,
		    unsigned portid)
{
	struct ifinfomsg ifi = {
		.ifi_family = AF_UNSPEC,
		.ifi_type = ARPHRD_LOOPBACK,
		.ifi_index = 1,
		.ifi_flags = IFF_UP | IFF_LOOPBACK | IFF_RUNNING | IFF_LOWER_UP,
	};
	unsigned mtu = LO_MTU, txq = 1000;
	unsigned char zero[6] = { 0 }, oper = 0 /* IF_OPER_UNKNOWN */;

	nl_put(nb, RTM_NEWLINK, flags, req, &ifi, sizeof(ifi), portid);
	nl_attr(nb, IFLA_IFNAME, "lo", 3);
	nl_attr(nb, IFLA_MTU, &mtu, sizeof(mtu));
	nl_attr(nb, IFLA_TXQLEN, &txq, sizeof(txq));
	nl_attr(nb, IFLA_OPERSTATE, &oper, 1);
	nl_attr(nb, IFLA_ADDRESS, zero, sizeof(zero));
	nl_attr(nb, IFLA_BROADCAST, zero, sizeof(zero));
}

static void nl_addr(struct nlbuf *nb, const struct nlmsghdr *req, int family,
		    unsigned portid)
{
	struct ifaddrmsg ifa = {
		.ifa_family = (unsigned char)family,
		.ifa_prefixlen = family == AF_INET ? 8 : 128,
		.ifa_flags = IFA_F_PERMANENT,
		.ifa_scope = RT_SCOPE_HOST,
		.ifa_index = 1,
	};
	struct in_addr v4 = { htonl(INADDR_LOOPBACK) };

	nl_put(nb, RTM_NEWADDR, NLM_F_MULTI, req, &ifa, sizeof(ifa), portid);
	if (family == AF_INET) {
		nl_attr(nb, IFA_ADDRESS, &v4, sizeof(v4));
		nl_attr(nb, IFA_LOCAL, &v4, sizeof(v4));
		nl_attr(nb, IFA_LABEL, "lo", 3);
	} else {
		nl_attr(nb, IFA_ADDRESS, &in6addr_loopback,
			sizeof(in6addr_loopback));
	}
}

/* eth0, the netstack's interface (index 2), when there is one. */
static void nl_link_eth(struct nlbuf *nb, const struct nlmsghdr *req, int flags,
			unsigned portid)
{
	struct ifinfomsg ifi = {
		.ifi_family = AF_UNSPEC,
		.ifi_type = ARPHRD_ETHER,
		.ifi_index = 2,
		.ifi_flags = IFF_UP | IFF_BROADCAST | IFF_RUNNING |
			     IFF_MULTICAST | IFF_LOWER_UP,
	};
	unsigned mtu = NS_MTU, txq = 1000;
	unsigned char mac[6] = NS_MAC;
	unsigned char bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	unsigned char oper = 6 /* IF_OPER_UP */;

	nl_put(nb, RTM_NEWLINK, flags, req, &ifi, sizeof(ifi), portid);
	nl_attr(nb, IFLA_IFNAME, "eth0", 5);
	nl_attr(nb, IFLA_MTU, &mtu, sizeof(mtu));
	nl_attr(nb, IFLA_TXQLEN, &txq, sizeof(txq));
	nl_attr(nb, IFLA_OPERSTATE, &oper, 1);
	nl_attr(nb, IFLA_ADDRESS, mac, sizeof(mac));
	nl_attr(nb, IFLA_BROADCAST, bcast, sizeof(bcast));
}

static void nl_addr_eth(struct nlbuf *nb, const struct nlmsghdr *req,
			unsigned portid)
{
	struct ifaddrmsg ifa = {
		.ifa_family = AF_INET,
		.ifa_prefixlen = 24,
		.ifa_flags = IFA_F_PERMANENT,
		.ifa_scope = RT_SCOPE_UNIVERSE,
		.ifa_index = 2,
	};
	struct in_addr a, b;

	inet_pton(AF_INET, NS_ADDR, &a);
	b.s_addr = a.s_addr | htonl(0xff);
	nl_put(nb, RTM_NEWADDR, NLM_F_MULTI, req, &ifa, sizeof(ifa), portid);
	nl_attr(nb, IFA_ADDRESS, &a, sizeof(a));
	nl_attr(nb, IFA_LOCAL, &a, sizeof(a));
	nl_attr(nb, IFA_BROADCAST, &b, sizeof(b));
	nl_attr(nb, IFA_LABEL, "eth0", 5);
}

static long nl_error(struct task *t, struct usock *u,
		     const struct nlmsghdr *req, int err, unsigned portid)
{
	struct nlmsgerr e = { .error = err, .msg = *req };
	struct nlbuf nb;

	nl_put(&nb, NLMSG_ERROR, 0, req, &e, sizeof(e), portid);
	return nl_queue(t, u, &nb);
}

/* One request (or several, back to back); the answers are queued on u,
 * as the kernel's are, for the recvmsg that follows. */
static long netlink_request(struct task *t, struct usock *u, const void *buf,
			    size_t n)
{
	const char *p = buf;
	size_t left = n;
	unsigned portid;
	long rc;

	nl_name(t, u);
	portid = ((struct sockaddr_nl *)&u->name.u)->nl_pid;
	while (left >= NLMSG_HDRLEN) {
		struct nlmsghdr req;
		struct nlbuf nb;
		bool dump;
		int family = AF_UNSPEC;

		memcpy(&req, p, sizeof(req));
		/* As the kernel: what follows a header that does not hold
		 * together is ignored (ip(8) sends padding after its
		 * request). */
		if (req.nlmsg_len < NLMSG_HDRLEN || req.nlmsg_len > left)
			break;
		if (!(req.nlmsg_flags & NLM_F_REQUEST))
			goto next;
		dump = (req.nlmsg_flags & NLM_F_DUMP) == NLM_F_DUMP;
		if (req.nlmsg_len >= NLMSG_HDRLEN + 1)
			family = (unsigned char)p[NLMSG_HDRLEN];
		switch (req.nlmsg_type) {
		case RTM_GETLINK:
			if (!dump &&
			    req.nlmsg_len >=
				    NLMSG_HDRLEN + sizeof(struct ifinfomsg)) {
				struct ifinfomsg q;
				memcpy(&q, p + NLMSG_HDRLEN, sizeof(q));
				if (q.ifi_index == 2 && netstack_up()) {
					nl_link_eth(&nb, &req, 0, portid);
					rc = nl_queue(t, u, &nb);
					break;
				}
				if (q.ifi_index != 1 && q.ifi_index != 0) {
					rc = nl_error(t, u, &req, -ENODEV,
						      portid);
					goto queued;
				}
			}
			nl_link(&nb, &req, dump ? NLM_F_MULTI : 0, portid);
			rc = nl_queue(t, u, &nb);
			if (rc >= 0 && dump && netstack_up()) {
				nl_link_eth(&nb, &req, NLM_F_MULTI, portid);
				rc = nl_queue(t, u, &nb);
			}
			break;
		case RTM_GETADDR:
			rc = 0;
			if (family == AF_UNSPEC || family == AF_INET) {
				nl_addr(&nb, &req, AF_INET, portid);
				rc = nl_queue(t, u, &nb);
				if (rc >= 0 && netstack_up()) {
					nl_addr_eth(&nb, &req, portid);
					rc = nl_queue(t, u, &nb);
				}
			}
			if (rc >= 0 &&
			    (family == AF_UNSPEC || family == AF_INET6)) {
				nl_addr(&nb, &req, AF_INET6, portid);
				rc = nl_queue(t, u, &nb);
			}
			break;
		case RTM_GETROUTE:
		case RTM_GETNEIGH:
			/* Loopback only: no route of the main table, no
			 * neighbours (the netstack's links will add them). */
			rc = dump ? 0 :
				    nl_error(t, u, &req, -ENETUNREACH, portid);
			if (!dump)
				goto queued;
			break;
		default:
			/* Any change, and what the sandbox does not model:
			 * its network is not the guest's to configure. */
			audit_guest(
				AUDIT_GUEST, AUDIT_K_NETLINK_REFUSED,
				"\"event\":\"netlink-refused\",\"pid\":%d,\"type\":%u",
				t->proc->pid, (unsigned)req.nlmsg_type);
			rc = nl_error(t, u, &req,
				      req.nlmsg_type >= RTM_NEWLINK &&
						      (req.nlmsg_type & 3) ==
							      2 /* GET */ ?
					      -EOPNOTSUPP :
					      -EPERM,
				      portid);
			goto queued;
		}
		if (rc >= 0 && dump) {
			int zero = 0;
			nl_put(&nb, NLMSG_DONE, NLM_F_MULTI, &req, &zero,
			       sizeof(zero), portid);
			rc = nl_queue(t, u, &nb);
		} else if (rc >= 0 && (req.nlmsg_flags & NLM_F_ACK)) {
			rc = nl_error(t, u, &req, 0, portid);
		}
queued:
		if (rc < 0)
			return rc;
next:
		left -= NLMSG_ALIGN(req.nlmsg_len) < left ?
				NLMSG_ALIGN(req.nlmsg_len) :
				left;
		p = (const char *)buf + (n - left);
	}
	return (long)n;
}

/* Interface ioctls on any socket: the one interface is lo. */
static long if_ioctl(struct task *t, unsigned long cmd, uint64_t arg)
{
	struct ifreq ifr;

	if (cmd == SIOCGIFCONF) {
		struct ifconf ifc;
		struct ifreq lo;
		if (task_read(t, arg, &ifc, sizeof(ifc)) < 0)
			return -EFAULT;
		memset(&lo, 0, sizeof(lo));
		snprintf(lo.ifr_name, sizeof(lo.ifr_name), "lo");
		((struct sockaddr_in *)&lo.ifr_addr)->sin_family = AF_INET;
		((struct sockaddr_in *)&lo.ifr_addr)->sin_addr.s_addr =
			htonl(INADDR_LOOPBACK);
		if (ifc.ifc_buf) {
			if (ifc.ifc_len < (int)sizeof(lo)) {
				ifc.ifc_len = 0;
			} else {
				if (task_write(t,
					       (uint64_t)(uintptr_t)ifc.ifc_buf,
					       &lo, sizeof(lo)) < 0)
					return -EFAULT;
				ifc.ifc_len = sizeof(lo);
			}
		} else {
			ifc.ifc_len = sizeof(lo);
		}
		return task_write(t, arg, &ifc, sizeof(ifc)) < 0 ? -EFAULT : 0;
	}
	if (task_read(t, arg, &ifr, sizeof(ifr)) < 0)
		return -EFAULT;
	if (cmd == SIOCGIFNAME) {
		if (ifr.ifr_ifindex != 1)
			return -ENODEV;
		memset(ifr.ifr_name, 0, sizeof(ifr.ifr_name));
		snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
		return task_write(t, arg, &ifr, sizeof(ifr)) < 0 ? -EFAULT : 0;
	}
	ifr.ifr_name[IFNAMSIZ - 1] = 0;
	if (strcmp(ifr.ifr_name, "lo"))
		return -ENODEV;
	switch (cmd) {
	case SIOCGIFINDEX:
		ifr.ifr_ifindex = 1;
		break;
	case SIOCGIFFLAGS:
		ifr.ifr_flags = IFF_UP | IFF_LOOPBACK | IFF_RUNNING;
		break;
	case SIOCGIFMTU:
		ifr.ifr_mtu = LO_MTU;
		break;
	case SIOCGIFADDR:
	case SIOCGIFNETMASK: {
		struct sockaddr_in *sin = (struct sockaddr_in *)&ifr.ifr_addr;
		memset(sin, 0, sizeof(*sin));
		sin->sin_family = AF_INET;
		sin->sin_addr.s_addr = cmd == SIOCGIFADDR ?
					       htonl(INADDR_LOOPBACK) :
					       htonl(0xff000000);
		break;
	}
	case SIOCGIFHWADDR:
		memset(&ifr.ifr_hwaddr, 0, sizeof(ifr.ifr_hwaddr));
		ifr.ifr_hwaddr.sa_family = ARPHRD_LOOPBACK;
		break;
	default:
		return -EINVAL;
	}
	return task_write(t, arg, &ifr, sizeof(ifr)) < 0 ? -EFAULT : 0;
}

/* The largest message one send on u may carry; 0 for byte streams and
 * netlink, which have no such limit. As Linux: a UDP payload fits one IP
 * packet (65535 less the IPv4 and UDP headers; IPv6's header is not
 * counted in its payload length), an AF_UNIX datagram fits the send
 * buffer less 32 bytes. Larger is EMSGSIZE, never a silent cut. */
static size_t msg_max(const struct usock *u)
{
	if (u->type == SOCK_STREAM || u->domain == AF_NETLINK)
		return 0;
	if (u->domain == AF_INET)
		return 65535 - 20 - 8;
	if (u->domain == AF_INET6)
		return 65535 - 8;
	return USOCK_BUF - 32;
}

/* A reset is reported once, to the first send or receive that sees it,
 * as Linux's sk_err; the connection is closed after it (tcp_done), so
 * later sends fail EPIPE, with SIGPIPE, and never go out again. */
static long take_reset(struct usock *u)
{
	int err = u->reset;

	u->reset = 0;
	u->shut_wr = true;
	return -err;
}

/* Send; files (references, taken over on success) ride with the data. */
static long usend_to(struct task *t, struct file *f, const void *buf, size_t n,
		     int flags, const struct sendmeta *sm,
		     const struct saddr *to)
{
	struct usock *u = f->priv, *p;
	bool nonblock = (f->flags & O_NONBLOCK) || (flags & MSG_DONTWAIT);
	size_t room;
	long rc;

	if (u->domain == AF_NETLINK)
		return netlink_request(t, u, buf, n);
	/* No urgent data in the sandbox: sending some is refused rather
	 * than mixed into the stream, which Linux would keep it out of. */
	if (flags & MSG_OOB)
		return -EOPNOTSUPP;
	if (!is_stream(u)) {
		if (u->shut_wr) {
			if (!(flags & MSG_NOSIGNAL))
				send_signal_task(t, SIGPIPE, t->proc->pid);
			return -EPIPE;
		}
		if (n > msg_max(u))
			return -EMSGSIZE;
		if (is_inet(u)) {
			const struct saddr *dst = to && to->len ? to :
						  u->pname.len	? &u->pname :
								  NULL;
			if (u->proto == IPPROTO_ICMP)
				return ping_send(t, u, buf, n, dst);
			if (dst && inet_check(u, dst) == 0 && ext_dest(dst))
				return ext_sendto(t, u, buf, n, dst);
		}
		rc = dgram_target(t, u, to, &p);
		if (rc < 0)
			return rc;
		if (!p)
			return u->pname.len && !(to && to->len) ?
				       -ECONNREFUSED :
				       (long)n;
		if (p->shut_rd)
			return is_inet(u) ? (long)n : -EPIPE;
		room = send_room(p);
		if (room == 0) {
			if (is_inet(u))
				return (long)n; /* UDP drops, never waits */
			return nonblock ? -EAGAIN : SYS_BLOCK;
		}
		if (u->domain == AF_UNIX && !u->name.len)
			sa_unnamed(&u->name, AF_UNIX);
		return enqueue(t, u, p, buf, n, sm, &u->name);
	}
	if (to && to->len && u->domain == AF_UNIX)
		return u->peer ? -EISCONN : -EOPNOTSUPP;
	if (u->ext)
		return ext_send(t, f, u, buf, n, flags);
	p = u->peer;
	if (is_inet(u) && u->connected && !p && !u->shut_wr && !u->reset) {
		/* TCP in CLOSE_WAIT: the first send after the peer closed goes
		 * out and is answered with a reset; the next one fails,
		 * EPIPE (Linux's tcp_reset in CLOSE_WAIT). */
		u->reset = EPIPE;
		return (long)n;
	}
	if (u->shut_wr || !p || p->shut_rd || u->reset) {
		if (!u->connected)
			return -ENOTCONN;
		if (u->reset && take_reset(u) == -ECONNRESET)
			return -ECONNRESET;
		if (!(flags & MSG_NOSIGNAL))
			send_signal_task(t, SIGPIPE, t->proc->pid);
		return -EPIPE;
	}
	if (u->type == SOCK_SEQPACKET && n > msg_max(u))
		return -EMSGSIZE;
	room = send_room(p);
	if (room == 0)
		return nonblock ? -EAGAIN : SYS_BLOCK;
	if (u->type == SOCK_STREAM && n > room)
		n = room; /* a partial write, as a full socket buffer gives */
	if (n == 0 && u->type == SOCK_STREAM && !(sm && sm->nfiles))
		return 0;
	return enqueue(t, u, p, buf, n, sm, NULL);
}

struct rmeta {
	struct file **files; /* SCM_RIGHTS, taken over by the caller */
	int n;
	struct ucred cred; /* the sender of the (first) message */
	bool have_cred;
	struct saddr from;
	int hoplimit, tclass;
};

/* Hand the files of m to *rm (or drop them when there is no rm: a plain
 * read() discards passed descriptors, as on Linux). */
static void take_files(struct umsg *m, struct rmeta *rm)
{
	if (!m->nfiles)
		return;
	if (rm && !rm->files) {
		rm->files = m->files;
		rm->n = m->nfiles;
	} else {
		put_files(m->files, m->nfiles);
	}
	inflight -= m->nfiles;
	m->files = NULL;
	m->nfiles = 0;
}

static void take_meta(struct umsg *m, struct rmeta *rm)
{
	if (!rm || rm->have_cred)
		return;
	rm->cred = m->cred;
	rm->have_cred = true;
	rm->from = m->from;
	rm->hoplimit = m->hoplimit;
	rm->tclass = m->tclass;
}

/* u's queue shrank: whoever sends to it may have room again. A datagram
 * sender is not known here: all are told (senders poll send_room). */
static void room_made(struct usock *u)
{
	u->seq++;
	if (u->peer)
		u->peer->seq++;
	sentry_wake();
}

/* Receive into buf. *trunc is set when a datagram did not fit. */
static long urecv(struct file *f, void *buf, size_t n, int flags, bool *trunc,
		  struct rmeta *rm)
{
	struct usock *u = f->priv;
	bool nonblock = (f->flags & O_NONBLOCK) || (flags & MSG_DONTWAIT);
	bool had_files = false;
	size_t done = 0;
	struct umsg *m;

	*trunc = false;
	if (u->listening)
		return -ENOTCONN;
	/* None is ever pending (see usend_to): Linux's answer then, never
	 * the ordinary data. */
	if (flags & MSG_OOB)
		return is_stream(u) ? -EINVAL : -EOPNOTSUPP;
	if (u->so_error) {
		/* A pending error (a netlink overrun) comes first, once,
		 * before what is queued, as sock_error() does. */
		long err = -u->so_error;
		u->so_error = 0;
		return err;
	}
	/* a reset after what was queued; after a FIN (CLOSE_WAIT's EPIPE)
	 * a receive sees the end, not the reset */
	if (u->reset == ECONNRESET && !u->head)
		return take_reset(u);
	if (!u->head) {
		if (u->ext_connecting)
			return nonblock ? -EAGAIN : SYS_BLOCK;
		if (is_stream(u) && !u->connected && !u->shut_rd)
			return -ENOTCONN;
		if (!is_stream(u) && !u->pair ? u->shut_rd : eof(u))
			return 0;
		return nonblock ? -EAGAIN : SYS_BLOCK;
	}
	if (u->type != SOCK_STREAM) {
		size_t len;
		m = u->head;
		len = m->len;
		done = len < n ? len : n;
		memcpy(buf, m->data, done);
		if (len > n)
			*trunc = true;
		take_meta(m, rm);
		if (!(flags & MSG_PEEK)) {
			take_files(m, rm);
			u->head = m->next;
			if (!u->head)
				u->tail = NULL;
			u->bytes -= len;
			umsg_free(u, m);
			room_made(u);
		}
		return (flags & MSG_TRUNC) ? (long)len : (long)done;
	}
	/* MSG_WAITALL on a blocking stream: wait for all of n, the end, or
	 * an error, as Linux does; or until the queue is full (no sender
	 * could add to it: its buffer, or all sockets', is charged; for a
	 * peer outside, the TCP window), so that a request larger than that
	 * returns what came instead of waiting forever: Linux copies as it
	 * goes, the sentry fills from one queue. */
	if ((flags & MSG_WAITALL) && !nonblock && !(flags & MSG_PEEK) &&
	    u->bytes < n && !eof(u) && !u->so_error &&
	    (u->ext ? u->bytes < WAITALL_EXT_MAX : send_room(u) > 0))
		return SYS_BLOCK;
	for (m = u->head; m && done < n;) {
		size_t c = m->len - m->off;
		/* Passed files stay with their bytes: a read stops before a
		 * message that carries some, unless it begins there and has
		 * taken no files yet (after a zero-byte message with files,
		 * done is still 0). One recvmsg never takes the files of two
		 * messages, as on Linux: rm holds one set. A plain read
		 * (no rm) drops them all, and need not stop. */
		if (m->nfiles && (done > 0 || had_files))
			break;
		if (m->nfiles && rm)
			had_files = true;
		take_meta(m, rm);
		if (m->nfiles && !(flags & MSG_PEEK))
			take_files(m, rm);
		if (c > n - done)
			c = n - done;
		memcpy((char *)buf + done, m->data + m->off, c);
		done += c;
		if (flags & MSG_PEEK) {
			if (c < m->len - m->off)
				break;
			m = m->next;
			continue;
		}
		m->off += c;
		u->bytes -= c;
		if (m->off == m->len) {
			u->head = m->next;
			if (!u->head)
				u->tail = NULL;
			umsg_free(u, m);
			m = u->head;
		}
	}
	if (!(flags & MSG_PEEK)) {
		room_made(u);
		if (u->bflow && done)
			bflow_consumed(u->bflow);
		else if (u->ext && done)
			ns_consumed(u->ext, done); /* open the window again */
	}
	return (long)done;
}

/* SO_RCVTIMEO and SO_SNDTIMEO: a blocking call that has waited that long
 * fails with EAGAIN, as on Linux. rc is what the call returned. */
static long timed(struct task *t, int64_t timeout, long rc)
{
	if (rc != SYS_BLOCK || timeout <= 0)
		return rc;
	if (!t->block_started)
		t->deadline_ns = now_ns() + timeout;
	else if (now_ns() >= t->deadline_ns)
		return -EAGAIN;
	return SYS_BLOCK;
}

static long usock_read(struct task *t, struct file *f, void *buf, size_t n,
		       int64_t *off)
{
	struct usock *u = f->priv;
	bool trunc;

	(void)off;
	return timed(t, u->rcvtimeo, urecv(f, buf, n, 0, &trunc, NULL));
}

static long usock_write(struct task *t, struct file *f, const void *buf,
			size_t n, int64_t *off)
{
	struct usock *u = f->priv;

	(void)off;
	return timed(t, u->sndtimeo, usend_to(t, f, buf, n, 0, NULL, NULL));
}

static short usock_poll(struct file *f, short events)
{
	struct usock *u = f->priv;
	short r = 0;

	if (u->listening)
		return u->pend_head ? (short)(events & (POLLIN | POLLRDNORM)) :
				      0;
	if (!is_stream(u) && !u->pair) {
		if (u->head || u->shut_rd)
			r |= POLLIN | POLLRDNORM;
		if (u->so_error)
			r |= POLLERR;
		if (!u->shut_wr && (!u->peer || send_room(u->peer)))
			r |= POLLOUT | POLLWRNORM;
		return r & (events | POLLHUP | POLLERR);
	}
	if (u->ext) {
		if (u->ext_connecting)
			return 0;
		if (!u->connected) /* the connect failed */
			return (POLLOUT | POLLHUP | POLLERR) &
			       (events | POLLHUP | POLLERR);
		if (u->head || eof(u) || u->so_error)
			r |= POLLIN | POLLRDNORM;
		if (!u->shut_wr && !u->ext_dead &&
		    (u->bflow		       ? bflow_writable(u->bflow) :
		     u->sniff_sent < u->nsniff ? false :
						 ns_send_room(u->ext) > 0))
			r |= POLLOUT | POLLWRNORM;
		if (u->so_error)
			r |= POLLERR;
		if (u->peer_shut_wr || u->ext_dead)
			r |= POLLRDHUP;
		if (u->ext_dead || (u->shut_wr && u->peer_shut_wr))
			r |= POLLHUP;
		return r & (events | POLLHUP | POLLERR);
	}
	if (!u->connected) /* never connected: as Linux's TCP_CLOSE */
		return (POLLOUT | POLLHUP) & (events | POLLHUP);
	if (u->head || eof(u) || u->reset)
		r |= POLLIN | POLLRDNORM;
	/* writable when a send would not wait: there is room, or it fails
	 * (Linux's tcp_poll past SEND_SHUTDOWN, unix_poll's writable) */
	if (!u->peer || u->shut_wr || u->peer->shut_rd || send_room(u->peer))
		r |= POLLOUT | POLLWRNORM;
	if (!u->peer || (u->shut_wr && (u->shut_rd || u->peer_shut_wr)))
		r |= POLLHUP;
	if (u->reset)
		r |= POLLERR;
	if (u->peer_shut_wr || !u->peer)
		r |= POLLRDHUP;
	return r & (events | POLLHUP | POLLERR);
}

static int usock_stat(struct file *f, struct stat *st)
{
	struct usock *u = f->priv;

	memset(st, 0, sizeof(*st));
	st->st_mode = S_IFSOCK | 0777;
	st->st_ino = u->ino;
	st->st_nlink = 1;
	st->st_blksize = 4096;
	st->st_dev = 8;
	return 0;
}

static void usock_release(struct file *f)
{
	usock_free(f->priv);
}

static long usock_ioctl(struct task *t, struct file *f, unsigned long cmd,
			uint64_t arg)
{
	struct usock *u = f->priv;

	if (cmd == FIONREAD) {
		int n = (int)(u->type == SOCK_STREAM ? u->bytes :
			      u->head		     ? u->head->len :
						       0);
		return task_write(t, arg, &n, sizeof(n));
	}
	if (cmd == SIOCGIFCONF || cmd == SIOCGIFNAME || cmd == SIOCGIFINDEX ||
	    cmd == SIOCGIFFLAGS || cmd == SIOCGIFMTU || cmd == SIOCGIFADDR ||
	    cmd == SIOCGIFNETMASK || cmd == SIOCGIFHWADDR)
		return if_ioctl(t, cmd, arg);
	return -ENOTTY;
}

static uint64_t usock_evseq(struct file *f)
{
	return ((struct usock *)f->priv)->seq;
}

static const struct file_ops usock_ops = {
	.read = usock_read,
	.write = usock_write,
	.poll = usock_poll,
	.ioctl = usock_ioctl,
	.stat = usock_stat,
	.release = usock_release,
	.evseq = usock_evseq,
};

/* ---- socket, socketpair, bind, listen, connect, accept ------------------- */

static struct file *sock_of(struct task *t, int fd, long *err)
{
	struct file *f = fd_get(t, fd);

	*err = !f ? -EBADF : !file_is_socket(f) ? -ENOTSOCK : 0;
	return *err ? NULL : f;
}

/* net.ipv4.ping_group_range (an OCI sysctl; everyone by default): the
 * caller's egid or one of its groups must be in it, as Linux checks. */
static bool ping_allowed(struct task *t)
{
	const struct creds *c = &t->proc->cred;
	int i;

	if (!S->opts.ping_range)
		return true;
	if (c->egid >= S->opts.ping_lo && c->egid <= S->opts.ping_hi)
		return true;
	for (i = 0; i < c->ngroups; i++)
		if (c->groups[i] >= S->opts.ping_lo &&
		    c->groups[i] <= S->opts.ping_hi)
			return true;
	return false;
}

static long check_type(int domain, int base, int proto)
{
	if (domain == AF_UNIX) {
		if (base != SOCK_STREAM && base != SOCK_DGRAM &&
		    base != SOCK_SEQPACKET)
			return -ESOCKTNOSUPPORT;
		if (proto != 0 && proto != PF_UNIX)
			return -EPROTONOSUPPORT;
		return 0;
	}
	if (base == SOCK_STREAM)
		return proto == 0 || proto == IPPROTO_TCP ? 0 :
							    -EPROTONOSUPPORT;
	if (base == SOCK_DGRAM && proto == IPPROTO_ICMP)
		/* a ping socket: echo requests and their replies only (the
		 * sandbox's own ping_group_range: sys_socket checks it) */
		return domain == AF_INET ? 0 : -EPROTONOSUPPORT;
	if (base == SOCK_DGRAM)
		return proto == 0 || proto == IPPROTO_UDP ||
				       proto == IPPROTO_UDPLITE ?
			       0 :
			       -EPROTONOSUPPORT;
	if (base == SOCK_RAW)
		return -EPERM; /* no CAP_NET_RAW in a sandbox */
	return -ESOCKTNOSUPPORT;
}

long sys_socket(struct task *t, struct syscall_args *a)
{
	int domain = (int)a->a[0], type = (int)a->a[1], proto = (int)a->a[2];
	int base = type & ~(SOCK_NONBLOCK | SOCK_CLOEXEC);
	struct usock *u;
	struct file *f;
	long rc;
	int fd;

	if (domain == AF_NETLINK) {
		if (base != SOCK_RAW && base != SOCK_DGRAM)
			return -ESOCKTNOSUPPORT;
		if (proto != NETLINK_ROUTE) {
			audit_guest(
				AUDIT_GUEST, AUDIT_K_SOCKET_REFUSED,
				"\"event\":\"socket-refused\",\"pid\":%d,\"domain\":%d,"
				"\"protocol\":%d,\"reason\":\"netlink family not offered\"",
				t->proc->pid, domain, proto);
			return -EPROTONOSUPPORT;
		}
	} else if (domain != AF_UNIX && domain != AF_INET &&
		   domain != AF_INET6) {
		audit_guest(
			AUDIT_GUEST, AUDIT_K_SOCKET_REFUSED,
			"\"event\":\"socket-refused\",\"pid\":%d,\"domain\":%d,"
			"\"type\":%d,\"reason\":\"family not offered\"",
			t->proc->pid, domain, type);
		return -EAFNOSUPPORT;
	}
	rc = domain == AF_NETLINK ? 0 : check_type(domain, base, proto);
	if (rc < 0)
		return rc;
	if (type & ~(SOCK_NONBLOCK | SOCK_CLOEXEC | 0xf))
		return -EINVAL;
	if (base == SOCK_DGRAM && proto == IPPROTO_ICMP && !ping_allowed(t))
		return -EACCES;
	u = usock_new(t, domain, base,
		      proto || domain == AF_NETLINK ? proto :
		      domain == AF_UNIX		    ? 0 :
		      base == SOCK_STREAM	    ? IPPROTO_TCP :
						      IPPROTO_UDP);
	if (!u)
		return -ENOMEM;
	f = usock_file(u, (type & SOCK_NONBLOCK) ? O_NONBLOCK : 0);
	if (!f) {
		free(u);
		return -ENOMEM;
	}
	fd = fd_install(t, f, (type & SOCK_CLOEXEC) != 0, 0);
	file_put(f);
	return fd;
}

long sys_socketpair(struct task *t, struct syscall_args *a)
{
	int domain = (int)a->a[0], type = (int)a->a[1], proto = (int)a->a[2];
	int base = type & ~(SOCK_NONBLOCK | SOCK_CLOEXEC);
	struct usock *u[2];
	struct file *f[2];
	int fds[2], i;
	long rc;

	if (domain == AF_INET || domain == AF_INET6)
		return -EOPNOTSUPP; /* as Linux: TCP and UDP have no pairs */
	if (domain != AF_UNIX)
		return sys_socket(t, a); /* refused, with an audit line */
	rc = check_type(domain, base, proto);
	if (rc < 0)
		return rc == -ESOCKTNOSUPPORT ? -EINVAL : rc;
	for (i = 0; i < 2; i++) {
		u[i] = usock_new(t, AF_UNIX, base, 0);
		f[i] = u[i] ? usock_file(u[i], (type & SOCK_NONBLOCK) ?
						       O_NONBLOCK :
						       0) :
			      NULL;
		if (!f[i]) {
			free(u[i]);
			while (i--)
				file_put(f[i]);
			return -ENOMEM;
		}
		u[i]->connected = true;
		u[i]->pair = true;
		sa_unnamed(&u[i]->name, AF_UNIX);
		sa_unnamed(&u[i]->pname, AF_UNIX);
	}
	u[0]->peer = u[1];
	u[1]->peer = u[0];
	fds[0] = fd_install(t, f[0], (type & SOCK_CLOEXEC) != 0, 0);
	fds[1] = fds[0] < 0 ?
			 fds[0] :
			 fd_install(t, f[1], (type & SOCK_CLOEXEC) != 0, 0);
	file_put(f[0]);
	file_put(f[1]);
	if (fds[1] < 0) {
		if (fds[0] >= 0)
			fd_close(t, fds[0]);
		return fds[1];
	}
	if (task_write(t, a->a[3], fds, sizeof(fds)) < 0) {
		fd_close(t, fds[0]);
		fd_close(t, fds[1]);
		return -EFAULT;
	}
	return 0;
}

long sys_bind(struct task *t, struct syscall_args *a)
{
	struct saddr addr;
	struct usock *u;
	long err;
	struct file *f = sock_of(t, (int)a->a[0], &err);

	if (!f)
		return err;
	u = f->priv;
	err = sa_read(t, a->a[1], a->a[2], &addr);
	if (err < 0)
		return err;
	if (u->domain == AF_NETLINK) {
		struct sockaddr_nl nl;
		if (addr.len < sizeof(nl) || addr.u.sa.sa_family != AF_NETLINK)
			return -EINVAL;
		memcpy(&nl, &addr.u, sizeof(nl));
		if (nl.nl_groups)
			return -EPERM; /* no multicast groups: nothing changes */
		u->name.len = 0;
		nl_name(t, u);
		if (nl.nl_pid)
			((struct sockaddr_nl *)&u->name.u)->nl_pid = nl.nl_pid;
		return 0;
	}
	if (u->bound || u->node || (u->domain == AF_UNIX && u->name.len > 2))
		return -EINVAL;
	if (u->domain == AF_UNIX) {
		err = un_check(&addr);
		if (err < 0)
			return err;
		if (addr.len == offsetof(struct sockaddr_un, sun_path) ||
		    un_abstract(&addr))
			return un_bind_abstract(u, &addr);
		return un_bind_path(t, u, &addr);
	}
	err = inet_check(u, &addr);
	if (err < 0)
		return err;
	if (inet_port(&addr) && inet_port(&addr) < sysctl_k.unpriv_port_start &&
	    !creds_capable(&t->proc->cred, CAP_NET_BIND_SERVICE))
		return -EACCES;
	return inet_bind(u, &addr);
}

long sys_listen(struct task *t, struct syscall_args *a)
{
	int backlog = (int)a->a[1];
	struct usock *u;
	long err;
	struct file *f = sock_of(t, (int)a->a[0], &err);

	if (!f)
		return err;
	u = f->priv;
	if (!is_stream(u) || u->connected)
		return -EINVAL;
	if (!u->name.len) {
		/* listen() on an unbound socket binds it first, as Linux */
		if (u->domain == AF_UNIX) {
			struct saddr any = { .len = offsetof(struct sockaddr_un,
							     sun_path) };
			any.u.sa.sa_family = AF_UNIX;
			err = un_bind_abstract(u, &any);
		} else {
			struct saddr any;
			sa_unnamed(&any, u->domain);
			err = inet_bind(u, &any);
		}
		if (err < 0)
			return err;
	}
	if (backlog < 0 || backlog > BACKLOG_MAX)
		backlog = BACKLOG_MAX;
	u->backlog = backlog;
	u->listening = true;
	u->cred.pid = t->proc->pid;
	u->cred.uid = t->proc->cred.euid;
	u->cred.gid = t->proc->cred.egid;
	sentry_wake();
	return 0;
}

static long stream_connect(struct task *t, struct file *f, struct usock *u,
			   const struct saddr *dst)
{
	bool nonblock = (f->flags & O_NONBLOCK) != 0;
	struct usock *l, *s;
	long rc;

	if (u->ext || (is_inet(u) && ext_dest(dst)))
		return ext_connect(t, f, u, dst);
	if (u->connected)
		return -EISCONN;
	if (u->listening)
		return -EINVAL;
	if (u->domain == AF_UNIX) {
		rc = un_lookup(t, dst, &l);
		if (rc < 0)
			return rc;
		if (l->type != u->type)
			return -EPROTOTYPE;
		if (!l->listening)
			return -ECONNREFUSED;
	} else {
		l = find_inet(SOCK_STREAM, u->proto, dst);
		if (!l || inet_port(dst) == 0)
			return -ECONNREFUSED;
	}
	/* A full queue: Linux makes AF_UNIX callers wait (or EAGAIN), and a
	 * TCP SYN is retried until there is room: the same here. */
	if (l->npending > l->backlog)
		return nonblock ? -EAGAIN : SYS_BLOCK;
	if (is_inet(u)) {
		rc = inet_autobind(u);
		if (rc < 0)
			return rc;
	}
	s = usock_new(NULL, l->domain, l->type, l->proto);
	if (!s)
		return -ENOMEM;
	s->cred = l->cred;
	s->connected = true;
	if (is_inet(u)) {
		/* The accepted side's own name is the address connected to
		 * (a listener on "any" has no single one), its peer's the
		 * client's: both in the listener's family. */
		s->name = l->name;
		if (inet_any(&l->name))
			inet_as(l->domain, dst, &s->name);
		inet_as(l->domain, &u->name, &s->pname);
	} else {
		s->name = l->name;
		if (u->name.len)
			s->pname = u->name;
		else
			sa_unnamed(&s->pname, AF_UNIX);
	}
	s->peer = u;
	u->peer = s;
	u->connected = true;
	u->pname = s->name;
	u->cred.pid = t->proc->pid;
	u->cred.uid = t->proc->cred.euid;
	u->cred.gid = t->proc->cred.egid;
	s->listener = l;
	if (l->pend_tail)
		l->pend_tail->pend_next = s;
	else
		l->pend_head = s;
	l->pend_tail = s;
	l->npending++;
	l->seq++;
	sentry_wake();
	/* A non-blocking TCP connect reports progress, even on loopback
	 * where it is done at once: callers then wait for POLLOUT and read
	 * SO_ERROR, which is 0. */
	return is_inet(u) && nonblock ? -EINPROGRESS : 0;
}

long sys_connect(struct task *t, struct syscall_args *a)
{
	struct saddr dst;
	struct usock *u, *p;
	long err;
	struct file *f = sock_of(t, (int)a->a[0], &err);

	if (!f)
		return err;
	u = f->priv;
	err = sa_read(t, a->a[1], a->a[2], &dst);
	if (err < 0)
		return err;
	if (dst.len >= sizeof(sa_family_t) && dst.u.sa.sa_family == AF_UNSPEC &&
	    !is_stream(u)) {
		/* Dissolve the association (UDP's and AF_UNIX's alike). A
		 * socketpair's peer is kept: the pair's link goes both
		 * ways, and usock_free relies on it. */
		u->pname.len = 0;
		u->connected = false;
		return 0;
	}
	if (u->domain == AF_UNIX) {
		err = un_check(&dst);
		if (err == 0 &&
		    dst.len == offsetof(struct sockaddr_un, sun_path))
			err = -EINVAL;
	} else {
		err = inet_check(u, &dst);
	}
	if (err < 0)
		return err;
	if (is_stream(u))
		return stream_connect(t, f, u, &dst);
	/* A datagram socket: the default destination. */
	err = dgram_target(t, u, &dst, &p);
	if (err < 0)
		return err;
	u->pname = dst;
	u->connected = true;
	if (u->domain == AF_UNIX && !u->name.len)
		sa_unnamed(&u->name, AF_UNIX);
	return 0;
}

long sys_accept4(struct task *t, struct syscall_args *a)
{
	int flags = (int)a->a[3];
	struct usock *u, *s;
	struct file *nf;
	long err;
	int fd;
	struct file *f = sock_of(t, (int)a->a[0], &err);

	if (!f)
		return err;
	if (flags & ~(SOCK_NONBLOCK | SOCK_CLOEXEC))
		return -EINVAL;
	u = f->priv;
	if (!is_stream(u))
		return -EOPNOTSUPP;
	if (!u->listening)
		return -EINVAL;
	s = u->pend_head;
	if (!s)
		return (f->flags & O_NONBLOCK) ?
			       -EAGAIN :
			       timed(t, u->rcvtimeo, SYS_BLOCK);
	nf = usock_file(s, (flags & SOCK_NONBLOCK) ? O_NONBLOCK : 0);
	if (!nf)
		return -ENOMEM;
	u->pend_head = s->pend_next;
	if (!u->pend_head)
		u->pend_tail = NULL;
	u->npending--;
	s->pend_next = NULL;
	s->listener = NULL;
	sentry_wake();
	fd = fd_install(t, nf, (flags & SOCK_CLOEXEC) != 0, 0);
	file_put(nf);
	if (fd < 0)
		return fd;
	err = sa_write(t, a->a[1], a->a[2], &s->pname);
	return err < 0 ? err : fd;
}

long sys_accept(struct task *t, struct syscall_args *a)
{
	struct syscall_args b = *a;

	b.a[3] = 0;
	return sys_accept4(t, &b);
}

/* ---- send and receive ----------------------------------------------------- */

#define XFER_MAX USOCK_BUF
static char xfer[XFER_MAX];

long sys_sendto(struct task *t, struct syscall_args *a)
{
	size_t n = a->a[2] > XFER_MAX ? XFER_MAX : a->a[2];
	struct saddr to = { .len = 0 };
	long err;
	struct file *f = sock_of(t, (int)a->a[0], &err);

	if (!f)
		return err;
	/* A message is whole or refused: only a byte stream may be cut to
	 * what xfer holds (usend_to checks what fits in it). */
	if (a->a[2] > XFER_MAX && msg_max(f->priv))
		return -EMSGSIZE;
	if (a->a[4]) {
		err = sa_read(t, a->a[4], a->a[5], &to);
		if (err < 0)
			return err;
	}
	if (n && task_read(t, a->a[1], xfer, n) < 0)
		return -EFAULT;
	return timed(t, ((struct usock *)f->priv)->sndtimeo,
		     usend_to(t, f, xfer, n, (int)a->a[3], NULL, &to));
}

/* The name a received message came from, for recvfrom/recvmsg. */
static const struct saddr *from_of(struct usock *u, const struct rmeta *rm)
{
	if (!is_stream(u))
		return rm->from.len ? &rm->from : NULL;
	return NULL; /* stream sockets: the peer is known, no name given */
}

long sys_recvfrom(struct task *t, struct syscall_args *a)
{
	size_t n = a->a[2] > XFER_MAX ? XFER_MAX : a->a[2];
	struct rmeta rm = { 0 };
	const struct saddr *from;
	struct saddr none = { .len = 0 };
	long err, r;
	bool trunc;
	struct file *f = sock_of(t, (int)a->a[0], &err);

	if (!f)
		return err;
	r = timed(t, ((struct usock *)f->priv)->rcvtimeo,
		  urecv(f, xfer, n, (int)a->a[3], &trunc, &rm));
	put_files(rm.files, rm.n); /* recvfrom has no control buffer */
	if (r < 0 || r == SYS_BLOCK)
		return r;
	if (r &&
	    task_write(t, a->a[1], xfer, (size_t)r < n ? (size_t)r : n) < 0)
		return -EFAULT;
	from = from_of(f->priv, &rm);
	err = sa_write(t, a->a[4], a->a[5], from ? from : &none);
	return err < 0 ? err : r;
}

#define MSG_IOV_MAX 1024 /* Linux's UIO_MAXIOV */
static struct iovec xiov[MSG_IOV_MAX];

/* A guest msghdr, and its iovecs into xiov (which, like xfer, serves one
 * call at a time); *total is the sum of their lengths. As Linux: more than
 * UIO_MAXIOV iovecs is EMSGSIZE, a length past SSIZE_MAX EINVAL. A sum
 * past it is EINVAL too (Linux's access_ok faults first): no sum may wrap
 * to a small one, which recvmsg would then trust. */
static long read_msghdr(struct task *t, uint64_t umsg, struct msghdr *mh,
			size_t *total)
{
	size_t i;

	if (task_read(t, umsg, mh, sizeof(*mh)) < 0)
		return -EFAULT;
	if (mh->msg_iovlen > MSG_IOV_MAX)
		return -EMSGSIZE;
	if (task_read(t, (uint64_t)(uintptr_t)mh->msg_iov, xiov,
		      sizeof(*xiov) * mh->msg_iovlen) < 0)
		return -EFAULT;
	*total = 0;
	for (i = 0; i < mh->msg_iovlen; i++) {
		if (xiov[i].iov_len > (size_t)SSIZE_MAX - *total)
			return -EINVAL;
		*total += xiov[i].iov_len;
	}
	return 0;
}

/* Control messages of a guest msghdr: references to the files its
 * SCM_RIGHTS fds name, and the SCM_CREDENTIALS it claims (checked: a
 * process may claim only its own ids, unless it is root). */
static long read_control(struct task *t, struct usock *u,
			 const struct msghdr *mh, struct sendmeta *sm,
			 struct ucred *cred)
{
	char cbuf[4096];
	struct msghdr km = { .msg_control = cbuf,
			     .msg_controllen = mh->msg_controllen };
	struct cmsghdr *c;
	struct file **files = NULL;
	int n = 0;

	sm->files = NULL;
	sm->nfiles = 0;
	sm->cred = NULL;
	sm->hoplimit = sm->tclass = -1;
	if (mh->msg_controllen > sizeof(cbuf))
		return -ENOBUFS;
	if (task_read(t, (uint64_t)(uintptr_t)mh->msg_control, cbuf,
		      mh->msg_controllen) < 0)
		return -EFAULT;
	for (c = CMSG_FIRSTHDR(&km); c; c = CMSG_NXTHDR(&km, c)) {
		size_t k, cnt;
		if (c->cmsg_len < CMSG_LEN(0) ||
		    (char *)c + c->cmsg_len > cbuf + mh->msg_controllen)
			goto einval;
		if (c->cmsg_level == IPPROTO_IPV6 && u->domain == AF_INET6 &&
		    !is_stream(u) &&
		    (c->cmsg_type == IPV6_HOPLIMIT ||
		     c->cmsg_type == IPV6_TCLASS)) {
			/* RFC 3542: this datagram's hop limit or traffic
			 * class, -1 for the socket's */
			int v;
			if (c->cmsg_len != CMSG_LEN(sizeof(int)))
				goto einval;
			memcpy(&v, CMSG_DATA(c), sizeof(v));
			if (v < -1 || v > 255)
				goto einval;
			if (c->cmsg_type == IPV6_HOPLIMIT)
				sm->hoplimit = v;
			else
				sm->tclass = v;
			continue;
		}
		if (c->cmsg_level != SOL_SOCKET)
			goto einval;
		if (c->cmsg_type == SCM_CREDENTIALS) {
			const struct creds *me = &t->proc->cred;
			if (c->cmsg_len != CMSG_LEN(sizeof(*cred)))
				goto einval;
			memcpy(cred, CMSG_DATA(c), sizeof(*cred));
			/* Linux's scm_check_creds: each claim is the
			 * sender's own, or takes its capability */
			if ((cred->pid !=
				     pid_in_ns(t->proc->pidns, t->proc->pid) &&
			     !creds_capable(me, CAP_SYS_ADMIN)) ||
			    (cred->uid != me->ruid && cred->uid != me->euid &&
			     cred->uid != me->suid &&
			     !creds_capable(me, CAP_SETUID)) ||
			    (cred->gid != me->rgid && cred->gid != me->egid &&
			     cred->gid != me->sgid &&
			     !creds_capable(me, CAP_SETGID))) {
				put_files(files, n);
				return -EPERM;
			}
			/* a process or thread of the sender's pid
			 * namespace (Linux's find_get_pid: ESRCH), kept
			 * as the pod numbers it, shown as each
			 * receiver's namespace does */
			if (!guest_pid_exists(t->proc->pidns, cred->pid)) {
				put_files(files, n);
				return -ESRCH;
			}
			cred->pid = pid_from_guest(t->proc->pidns, cred->pid);
			sm->cred = cred;
			continue;
		}
		if (c->cmsg_type != SCM_RIGHTS)
			goto einval;
		cnt = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		/* An empty SCM_RIGHTS is ignored, as Linux's scm_fp_copy
		 * does: nothing to take, and realloc(files, 0) would free
		 * the array the error paths free again. */
		if (cnt == 0)
			continue;
		if (n + cnt > 253) /* SCM_MAX_FD */
			goto einval;
		{
			struct file **nf =
				realloc(files, (n + cnt) * sizeof(*nf));
			if (!nf)
				goto enomem;
			files = nf;
		}
		for (k = 0; k < cnt; k++) {
			int fd;
			struct file *f;
			memcpy(&fd, CMSG_DATA(c) + k * sizeof(int),
			       sizeof(int));
			f = fd_get(t, fd);
			if (!f) {
				put_files(files, n);
				return -EBADF;
			}
			files[n++] = file_get(f);
		}
	}
	if (n && u->domain != AF_UNIX) {
		put_files(files, n);
		return -EINVAL;
	}
	sm->files = files;
	sm->nfiles = n;
	return 0;
einval:
	put_files(files, n);
	return -EINVAL;
enomem:
	put_files(files, n);
	return -ENOMEM;
}

long sys_sendmsg(struct task *t, struct syscall_args *a)
{
	struct msghdr mh;
	struct sendmeta sm = { NULL, 0, NULL, -1, -1 };
	struct saddr to = { .len = 0 };
	struct ucred cred;
	size_t total, done = 0, i;
	long err, r;
	struct file *f = sock_of(t, (int)a->a[0], &err);

	if (!f)
		return err;
	err = read_msghdr(t, a->a[1], &mh, &total);
	if (err < 0)
		return err;
	if (total > XFER_MAX && msg_max(f->priv))
		return -EMSGSIZE; /* as in sys_sendto */
	if (mh.msg_name && mh.msg_namelen) {
		err = sa_read(t, (uint64_t)(uintptr_t)mh.msg_name,
			      mh.msg_namelen, &to);
		if (err < 0)
			return err;
	}
	for (i = 0; i < mh.msg_iovlen && done < XFER_MAX; i++) {
		size_t c = xiov[i].iov_len;
		if (c > XFER_MAX - done)
			c = XFER_MAX - done;
		if (c && task_read(t, (uint64_t)(uintptr_t)xiov[i].iov_base,
				   xfer + done, c) < 0)
			return -EFAULT;
		done += c;
	}
	if (mh.msg_controllen) {
		err = read_control(t, f->priv, &mh, &sm, &cred);
		if (err < 0)
			return err;
	}
	r = timed(t, ((struct usock *)f->priv)->sndtimeo,
		  usend_to(t, f, xfer, done, (int)a->a[2], &sm, &to));
	if (r < 0 || r == SYS_BLOCK) {
		/* Not sent: the references go back (a retry reads them anew). */
		put_files(sm.files, sm.nfiles);
	}
	return r;
}

/* The guest's control buffer under construction. */
struct cbuild {
	char buf[CMSG_SPACE(sizeof(struct ucred)) +
		 2 * CMSG_SPACE(sizeof(int)) + CMSG_SPACE(253 * sizeof(int))];
	size_t room, len;
	int *flags;
};

/* Append one control message as Linux's put_cmsg does: a header that
 * does not fit is dropped, data that does not fit is cut; either sets
 * MSG_CTRUNC. */
static void put_cmsg(struct cbuild *cb, int level, int type, const void *data,
		     size_t dlen)
{
	struct cmsghdr h = { .cmsg_level = level, .cmsg_type = type };
	size_t left = cb->room - cb->len, cmlen = CMSG_LEN(dlen);

	if (left < sizeof(h)) {
		*cb->flags |= MSG_CTRUNC;
		return;
	}
	if (left < cmlen) {
		*cb->flags |= MSG_CTRUNC;
		cmlen = left;
	}
	h.cmsg_len = cmlen;
	memcpy(cb->buf + cb->len, &h, sizeof(h));
	memcpy(cb->buf + cb->len + CMSG_LEN(0), data, cmlen - CMSG_LEN(0));
	cmlen = CMSG_SPACE(dlen);
	cb->len += cmlen < left ? cmlen : left;
}

/* Install received files in t and build the guest's control messages:
 * SCM_CREDENTIALS when the receiver asked (SO_PASSCRED), the IPv6
 * per-packet values it asked for (RFC 3542), then SCM_RIGHTS. Files that
 * do not fit are closed and MSG_CTRUNC set. */
static long deliver_control(struct task *t, struct usock *u, struct msghdr *mh,
			    struct rmeta *rm, bool cloexec)
{
	struct cbuild cb;
	int i, fd, n = 0;

	cb.room = mh->msg_control ? mh->msg_controllen : 0;
	if (cb.room > sizeof(cb.buf))
		cb.room = sizeof(cb.buf);
	cb.len = 0;
	cb.flags = &mh->msg_flags;
	memset(cb.buf, 0, sizeof(cb.buf));
	if (u->passcred && rm->have_cred && u->domain == AF_UNIX) {
		struct ucred c = rm->cred;

		c.pid = pid_to_guest(t->proc->pidns, c.pid);
		put_cmsg(&cb, SOL_SOCKET, SCM_CREDENTIALS, &c, sizeof(c));
	}
	if (u->domain == AF_INET6 && !is_stream(u) && rm->have_cred) {
		if (u->recv_hoplimit)
			put_cmsg(&cb, IPPROTO_IPV6, IPV6_HOPLIMIT,
				 &rm->hoplimit, sizeof(int));
		if (u->recv_tclass)
			put_cmsg(&cb, IPPROTO_IPV6, IPV6_TCLASS, &rm->tclass,
				 sizeof(int));
	}
	if (rm->files) {
		struct cmsghdr *c = (struct cmsghdr *)(void *)(cb.buf + cb.len);
		size_t left = cb.room - cb.len;
		size_t fit = left >= CMSG_LEN(0) ?
				     (left - CMSG_LEN(0)) / sizeof(int) :
				     0;
		for (i = 0; i < rm->n; i++) {
			if ((size_t)n < fit &&
			    (fd = fd_install(t, rm->files[i], cloexec, 0)) >= 0)
				memcpy(CMSG_DATA(c) + (size_t)n++ * sizeof(int),
				       &fd, sizeof(int));
			else
				mh->msg_flags |= MSG_CTRUNC;
			file_put(rm->files[i]);
		}
		free(rm->files);
		rm->files = NULL;
		if (n) {
			size_t sp = CMSG_SPACE((size_t)n * sizeof(int));
			c->cmsg_level = SOL_SOCKET;
			c->cmsg_type = SCM_RIGHTS;
			c->cmsg_len = CMSG_LEN((size_t)n * sizeof(int));
			cb.len += sp <= left ? sp : c->cmsg_len;
		}
	}
	if (cb.len && task_write(t, (uint64_t)(uintptr_t)mh->msg_control,
				 cb.buf, cb.len) < 0)
		return -EFAULT;
	mh->msg_controllen = cb.len;
	return 0;
}

long sys_recvmsg(struct task *t, struct syscall_args *a)
{
	struct msghdr mh;
	struct rmeta rm = { 0 };
	const struct saddr *from;
	size_t total, held, done = 0, i;
	long err, r;
	bool trunc;
	int flags = (int)a->a[2];
	struct file *f = sock_of(t, (int)a->a[0], &err);
	struct usock *u;

	if (!f)
		return err;
	u = f->priv;
	err = read_msghdr(t, a->a[1], &mh, &total);
	if (err < 0)
		return err;
	r = timed(t, u->rcvtimeo,
		  urecv(f, xfer, total > XFER_MAX ? XFER_MAX : total, flags,
			&trunc, &rm));
	if (r < 0 || r == SYS_BLOCK)
		return r;
	/* What xfer holds of this message: r is more with MSG_TRUNC (a
	 * datagram's whole length), and xfer past it is another's data. */
	held = total > XFER_MAX ? XFER_MAX : total;
	if ((size_t)r < held)
		held = (size_t)r;
	for (i = 0; i < mh.msg_iovlen && done < held; i++) {
		size_t c = xiov[i].iov_len;
		if (c > held - done)
			c = held - done;
		if (c && task_write(t, (uint64_t)(uintptr_t)xiov[i].iov_base,
				    xfer + done, c) < 0) {
			/* The message is consumed (as Linux's is); its
			 * files are closed, not leaked. */
			put_files(rm.files, rm.n);
			return -EFAULT;
		}
		done += c;
	}
	mh.msg_flags = trunc ? MSG_TRUNC : 0;
	err = deliver_control(t, u, &mh, &rm, (flags & MSG_CMSG_CLOEXEC) != 0);
	if (err < 0)
		return err;
	/* Only the fields recvmsg returns are written back, as Linux does:
	 * the guest's msg_iov and msg_iovlen are its own. The name's length
	 * is the whole name's, however much of it fit. */
	if (mh.msg_name) {
		size_t nl = mh.msg_namelen;
		from = from_of(u, &rm);
		mh.msg_namelen = from ? from->len : 0;
		if (nl > mh.msg_namelen)
			nl = mh.msg_namelen;
		if ((nl && task_write(t, (uint64_t)(uintptr_t)mh.msg_name,
				      &from->u.ss, nl) < 0) ||
		    task_write(t,
			       a->a[1] + offsetof(struct msghdr, msg_namelen),
			       &mh.msg_namelen, sizeof(mh.msg_namelen)) < 0)
			return -EFAULT;
	}
	if (task_write(t, a->a[1] + offsetof(struct msghdr, msg_controllen),
		       &mh.msg_controllen, sizeof(mh.msg_controllen)) < 0 ||
	    task_write(t, a->a[1] + offsetof(struct msghdr, msg_flags),
		       &mh.msg_flags, sizeof(mh.msg_flags)) < 0)
		return -EFAULT;
	return r;
}

/* sendmmsg and recvmmsg: the single-message calls, one mmsghdr at a time,
 * each one's length written back into its msg_len. Only the first may
 * block; the count so far is returned at the first that cannot go on
 * (an error after the first is left for the next call, as on Linux). */
static long each_mmsg(struct task *t, struct syscall_args *a, bool send)
{
	unsigned vlen = (unsigned)a->a[2], i;
	int flags = (int)a->a[3];
	uint64_t vec = a->a[1];
	struct syscall_args one = *a;
	uint32_t len;
	long rc;

	if (vlen > MSG_IOV_MAX)
		vlen = MSG_IOV_MAX; /* Linux's UIO_MAXIOV bounds vlen too */
	for (i = 0; i < vlen; i++) {
		one.a[1] = vec + (uint64_t)i * sizeof(struct mmsghdr);
		one.a[2] = (uint64_t)(unsigned)(flags & ~MSG_WAITFORONE) |
			   (i ? MSG_DONTWAIT : 0);
		rc = send ? sys_sendmsg(t, &one) : sys_recvmsg(t, &one);
		if (rc < 0 || rc == SYS_BLOCK)
			return i ? (long)i : rc;
		len = (uint32_t)rc;
		if (task_write(t, one.a[1] + offsetof(struct mmsghdr, msg_len),
			       &len, sizeof(len)) < 0)
			return i ? (long)i : -EFAULT;
	}
	return (long)i;
}

long sys_sendmmsg(struct task *t, struct syscall_args *a)
{
	return each_mmsg(t, a, true);
}

long sys_recvmmsg(struct task *t, struct syscall_args *a)
{
	return each_mmsg(t, a, false);
}

long sys_shutdown(struct task *t, struct syscall_args *a)
{
	long err;
	struct file *f = sock_of(t, (int)a->a[0], &err);
	struct usock *u;
	int how = (int)a->a[1];

	if (!f)
		return err;
	if (how < SHUT_RD || how > SHUT_RDWR)
		return -EINVAL;
	u = f->priv;
	if (is_stream(u) && !u->connected && !u->listening)
		return -ENOTCONN;
	if (how != SHUT_WR)
		u->shut_rd = true;
	if (how != SHUT_RD) {
		u->shut_wr = true;
		if (u->peer) {
			u->peer->peer_shut_wr = true;
			u->peer->seq++;
		}
	}
	if (u->brk == BRK_SNIFFING && how != SHUT_RD) {
		/* no more bytes to tell by: what is held passes */
		u->brk = BRK_PASSED;
		sniff_flush(u);
	}
	if (u->bflow)
		bflow_shutdown(u->bflow, how != SHUT_WR, how != SHUT_RD);
	else if (u->ext && is_stream(u))
		ns_shutdown(u->ext, how != SHUT_WR, how != SHUT_RD);
	u->seq++;
	sentry_wake();
	return 0;
}

/* ---- options and names ----------------------------------------------------- */

static int *stored_opt(struct usock *u, int level, int opt, bool make)
{
	int i;

	for (i = 0; i < u->nopts; i++)
		if (u->opts[i].level == level && u->opts[i].opt == opt)
			return &u->opts[i].val;
	if (!make || u->nopts == SOCKOPTS_MAX)
		return NULL;
	u->opts[u->nopts].level = level;
	u->opts[u->nopts].opt = opt;
	u->opts[u->nopts].val = 0;
	return &u->opts[u->nopts++].val;
}

static int kept_val(struct usock *u, int level, int opt, int dflt)
{
	int *v = stored_opt(u, level, opt, false);

	return v && *v >= 0 ? *v : dflt;
}

/* Options kept as set, read back as set, with no effect between two ends
 * in one sentry: the value a program reads is the one it wrote. */
static bool kept_opt(const struct usock *u, int level, int opt)
{
	if (level == SOL_SOCKET)
		return opt == SO_KEEPALIVE || opt == SO_BROADCAST ||
		       opt == SO_OOBINLINE || opt == SO_DONTROUTE ||
		       opt == SO_PRIORITY || opt == SO_RCVLOWAT;
	if (!is_inet(u))
		return false;
	if (level == IPPROTO_TCP && u->type == SOCK_STREAM)
		return opt == TCP_NODELAY || opt == TCP_KEEPIDLE ||
		       opt == TCP_KEEPINTVL || opt == TCP_KEEPCNT ||
		       opt == TCP_QUICKACK || opt == TCP_USER_TIMEOUT ||
		       opt == TCP_CORK;
	/* IP_RECVERR asks for ICMP errors on MSG_ERRQUEUE, where none are
	 * ever queued (glibc's resolver sets it, and gives up without it);
	 * path MTU discovery is the netstack's own. */
	if (level == IPPROTO_IP && u->domain == AF_INET)
		return opt == IP_TOS || opt == IP_TTL || opt == IP_RECVERR ||
		       opt == IP_MTU_DISCOVER;
	if (level == IPPROTO_IPV6 && u->domain == AF_INET6)
		return opt == IPV6_TCLASS || opt == IPV6_UNICAST_HOPS ||
		       opt == IPV6_RECVERR || opt == IPV6_MTU_DISCOVER;
	/* UDP-Lite's checksum coverage: nothing is checksummed between two
	 * ends of one sentry. */
	if (level == IPPROTO_UDPLITE && u->proto == IPPROTO_UDPLITE)
		return opt == 10 /* UDPLITE_SEND_CSCOV */ ||
		       opt == 11 /* UDPLITE_RECV_CSCOV */;
	return false;
}

/* SO_RCVTIMEO and SO_SNDTIMEO, old and new (the same struct on x86-64). */
static bool is_timeo(int opt)
{
	return opt == SO_RCVTIMEO_OLD || opt == SO_SNDTIMEO_OLD ||
	       opt == SO_RCVTIMEO_NEW || opt == SO_SNDTIMEO_NEW;
}

static long unsupported_opt(struct task *t, int level, int opt)
{
	audit_guest(
		AUDIT_GUEST, AUDIT_K_SOCKOPT,
		"\"event\":\"sockopt-unimplemented\",\"pid\":%d,\"level\":%d,\"opt\":%d",
		t->proc->pid, level, opt);
	return -ENOPROTOOPT;
}

long sys_getsockopt(struct task *t, struct syscall_args *a)
{
	int level = (int)a->a[1], opt = (int)a->a[2];
	long err;
	struct file *f = sock_of(t, (int)a->a[0], &err);
	struct usock *u;
	socklen_t len;
	int v, *kept;

	if (!f)
		return err;
	u = f->priv;
	if (task_read(t, a->a[4], &len, sizeof(len)) < 0)
		return -EFAULT;
	if ((int)len < 0)
		return -EINVAL;
	if (level == SOL_SOCKET && opt == SO_PEERCRED) {
		struct ucred c = { 0, (uid_t)-1, (gid_t)-1 };
		if (u->domain != AF_UNIX)
			return -ENOPROTOOPT;
		if (u->peer)
			c = u->peer->cred;
		else if (u->connected && !is_stream(u))
			c.pid = 0;
		c.pid = pid_to_guest(t->proc->pidns, c.pid);
		if (len > sizeof(c))
			len = sizeof(c);
		if (task_write(t, a->a[3], &c, len) < 0 ||
		    task_write(t, a->a[4], &len, sizeof(len)) < 0)
			return -EFAULT;
		return 0;
	}
	if (level == IPPROTO_TCP && is_inet(u) && u->type == SOCK_STREAM &&
	    (opt == TCP_INFO || opt == TCP_CONGESTION)) {
		/* TCP_INFO: the state and segment sizes (the counters are
		 * lwIP's or, on the loopback, nobody's: zero); TCP_CONGESTION:
		 * what was set, or lwIP's (New)Reno. */
		struct tcp_info ti = { 0 };
		char cc[16] = "reno";
		const void *src = &ti;
		socklen_t max = sizeof(ti);

		if (opt == TCP_INFO) {
			ti.tcpi_state = u->listening	  ? TCP_LISTEN :
					u->ext_connecting ? TCP_SYN_SENT :
					u->connected && !u->ext_dead &&
							!u->reset ?
							    TCP_ESTABLISHED :
							    TCP_CLOSE;
			ti.tcpi_snd_mss = ti.tcpi_rcv_mss = u->ext ? 1460 :
								     65483;
			ti.tcpi_advmss = ti.tcpi_snd_mss;
			ti.tcpi_pmtu = u->ext ? NS_MTU : 65536;
			ti.tcpi_snd_cwnd = 10;
		} else {
			if (u->cc[0])
				memcpy(cc, u->cc, sizeof(cc));
			src = cc;
			max = sizeof(cc);
		}
		if (len > max)
			len = max;
		if (task_write(t, a->a[3], src, len) < 0 ||
		    task_write(t, a->a[4], &len, sizeof(len)) < 0)
			return -EFAULT;
		return 0;
	}
	if (level == SOL_SOCKET && is_timeo(opt)) {
		int64_t ns = opt == SO_RCVTIMEO_OLD || opt == SO_RCVTIMEO_NEW ?
				     u->rcvtimeo :
				     u->sndtimeo;
		struct timeval tv = { .tv_sec = ns / 1000000000LL,
				      .tv_usec = ns % 1000000000LL / 1000 };
		if (len > sizeof(tv))
			len = sizeof(tv);
		if (task_write(t, a->a[3], &tv, len) < 0 ||
		    task_write(t, a->a[4], &len, sizeof(len)) < 0)
			return -EFAULT;
		return 0;
	}
	if (level == SOL_SOCKET && opt == SO_LINGER) {
		struct linger lg = { 0, 0 };
		kept = stored_opt(u, SOL_SOCKET, SO_LINGER, false);
		if (kept) {
			lg.l_onoff = *kept >= 0;
			lg.l_linger = *kept >= 0 ? *kept : 0;
		}
		if (len > sizeof(lg))
			len = sizeof(lg);
		if (task_write(t, a->a[3], &lg, len) < 0 ||
		    task_write(t, a->a[4], &len, sizeof(len)) < 0)
			return -EFAULT;
		return 0;
	}
	if (kept_opt(u, level, opt)) {
		kept = stored_opt(u, level, opt, false);
		v = kept ? *kept : 0;
		if (!kept && level == IPPROTO_IP && opt == IP_TTL)
			v = 64;
		if (!kept && level == IPPROTO_IPV6 && opt == IPV6_UNICAST_HOPS)
			v = 64;
	} else if (level == SOL_SOCKET) {
		switch (opt) {
		case SO_TYPE:
			v = u->type;
			break;
		case SO_DOMAIN:
			v = u->domain;
			break;
		case SO_PROTOCOL:
			v = u->proto;
			break;
		case SO_ERROR:
			v = u->so_error;
			u->so_error = 0;
			break;
		case SO_ACCEPTCONN:
			v = u->listening;
			break;
		case SO_PASSCRED:
			v = u->passcred;
			break;
		case SO_REUSEADDR:
			v = u->reuseaddr;
			break;
		case SO_REUSEPORT:
			v = u->reuseport;
			break;
		case SO_RCVBUF:
		case SO_SNDBUF:
			v = USOCK_BUF;
			break;
		default:
			return unsupported_opt(t, level, opt);
		}
	} else if (level == IPPROTO_IPV6 && opt == IPV6_V6ONLY &&
		   u->domain == AF_INET6) {
		v = u->v6only;
	} else if (level == IPPROTO_IPV6 && u->domain == AF_INET6 &&
		   (opt == IPV6_RECVHOPLIMIT || opt == IPV6_RECVTCLASS)) {
		v = opt == IPV6_RECVHOPLIMIT ? u->recv_hoplimit :
					       u->recv_tclass;
	} else if (level == IPPROTO_TCP && opt == TCP_MAXSEG &&
		   u->type == SOCK_STREAM && is_inet(u)) {
		v = 65483; /* loopback's MTU less the headers */
	} else {
		return unsupported_opt(t, level, opt);
	}
	if (len > sizeof(v))
		len = sizeof(v);
	if (task_write(t, a->a[3], &v, len) < 0 ||
	    task_write(t, a->a[4], &len, sizeof(len)) < 0)
		return -EFAULT;
	return 0;
}

long sys_setsockopt(struct task *t, struct syscall_args *a)
{
	int level = (int)a->a[1], opt = (int)a->a[2];
	socklen_t len = (socklen_t)a->a[4];
	long err;
	struct file *f = sock_of(t, (int)a->a[0], &err);
	struct usock *u;
	int v = 0, *kept;

	if (!f)
		return err;
	u = f->priv;
	if (level == IPPROTO_TCP && opt == TCP_CONGESTION && is_inet(u) &&
	    u->type == SOCK_STREAM) {
		/* kept as set (lwIP has one algorithm); the names Linux
		 * ships are accepted, others are ENOENT as on Linux */
		static const char *const known[] = { "reno", "cubic", "bbr" };
		char cc[16] = "";
		size_t i;

		if (task_read(t, a->a[3], cc,
			      len < sizeof(cc) - 1 ? len : sizeof(cc) - 1) < 0)
			return -EFAULT;
		for (i = 0; i < ARRAY_SIZE(known); i++)
			if (!strcmp(cc, known[i])) {
				memcpy(u->cc, cc, sizeof(u->cc));
				return 0;
			}
		return -ENOENT;
	}
	if (level == SOL_SOCKET && is_timeo(opt)) {
		struct timeval tv;
		if (len < sizeof(tv))
			return -EINVAL;
		if (task_read(t, a->a[3], &tv, sizeof(tv)) < 0)
			return -EFAULT;
		if (tv.tv_usec < 0 || tv.tv_usec >= 1000000)
			return -EDOM;
		/* negative: no timeout, as Linux; a century at most */
		*(opt == SO_RCVTIMEO_OLD || opt == SO_RCVTIMEO_NEW ?
			  &u->rcvtimeo :
			  &u->sndtimeo) =
			tv.tv_sec < 0 ? 0 :
			tv.tv_sec > 3153600000LL ?
					3153600000LL * 1000000000LL :
					(int64_t)tv.tv_sec * 1000000000LL +
						(int64_t)tv.tv_usec * 1000;
		return 0;
	}
	if (level == SOL_SOCKET && opt == SO_LINGER) {
		struct linger lg;
		if (len < sizeof(lg))
			return -EINVAL;
		if (task_read(t, a->a[3], &lg, sizeof(lg)) < 0)
			return -EFAULT;
		kept = stored_opt(u, level, opt, true);
		if (!kept)
			return -ENOMEM;
		*kept = lg.l_onoff ? lg.l_linger : -1;
		return 0;
	}
	if (len < sizeof(int))
		return -EINVAL;
	if (task_read(t, a->a[3], &v, sizeof(v)) < 0)
		return -EFAULT;
	if (kept_opt(u, level, opt)) {
		kept = stored_opt(u, level, opt, true);
		if (!kept)
			return -ENOMEM;
		*kept = v;
		return 0;
	}
	if (level == SOL_SOCKET) {
		switch (opt) {
		case SO_RCVBUF:
		case SO_SNDBUF:
		case SO_RCVBUFFORCE:
		case SO_SNDBUFFORCE:
			return 0; /* buffers stay the sentry's size */
		case SO_PASSCRED:
			u->passcred = v != 0;
			return 0;
		case SO_REUSEADDR:
			u->reuseaddr = v != 0;
			return 0;
		case SO_REUSEPORT:
			u->reuseport = v != 0;
			return 0;
		default:
			break;
		}
	} else if (level == IPPROTO_IPV6 && opt == IPV6_V6ONLY &&
		   u->domain == AF_INET6) {
		if (u->bound)
			return -EINVAL;
		u->v6only = v != 0;
		return 0;
	} else if (level == IPPROTO_IPV6 && u->domain == AF_INET6 &&
		   (opt == IPV6_RECVHOPLIMIT || opt == IPV6_RECVTCLASS)) {
		if (opt == IPV6_RECVHOPLIMIT)
			u->recv_hoplimit = v != 0;
		else
			u->recv_tclass = v != 0;
		return 0;
	}
	return unsupported_opt(t, level, opt);
}

long sys_getsockname(struct task *t, struct syscall_args *a)
{
	struct saddr none;
	struct usock *u;
	long err;
	struct file *f = sock_of(t, (int)a->a[0], &err);

	if (!f)
		return err;
	u = f->priv;
	if (u->ext && (is_stream(u) || !u->name.len)) {
		struct saddr ext = { 0 };
		socklen_t len = sizeof(ext.u.ss);

		if (ns_sockname(u->ext, &ext.u.ss, &len) == 0) {
			ext.len = len;
			return sa_write(t, a->a[1], a->a[2], &ext);
		}
	}
	if (u->name.len)
		return sa_write(t, a->a[1], a->a[2], &u->name);
	sa_unnamed(&none, u->domain);
	return sa_write(t, a->a[1], a->a[2], &none);
}

long sys_getpeername(struct task *t, struct syscall_args *a)
{
	struct usock *u;
	long err;
	struct file *f = sock_of(t, (int)a->a[0], &err);

	if (!f)
		return err;
	u = f->priv;
	/* TCP keeps its peer's name after the peer closed (CLOSE_WAIT); an
	 * AF_UNIX stream forgets it with the peer. */
	if (!is_stream(u) ? !u->pname.len :
	    is_inet(u)	  ? !u->connected :
			    !u->peer)
		return -ENOTCONN;
	return sa_write(t, a->a[1], a->a[2], &u->pname);
}
