/* netstack/tap.c: the --net=tap link.
 *
 * A network namespace of the sandbox's own holds a TAP device, tap0: the
 * sentry keeps its fd and lwIP sends and receives Ethernet frames through
 * it, as through the slirp socketpair. In that namespace tap0 is
 * 10.0.2.2/24 (lwIP's gateway), a veth pair leads to the host
 * (198.18.A.B+2/30 inside, +1 on the host, named moat<pid>), the default
 * route goes through it, and 10.0.2.0/24 is masqueraded onto it. On the
 * host the /30 is masqueraded onto whatever uplink a packet leaves by, in
 * an nftables table of the sandbox's own (moat_<pid>).
 *
 * Cleanup: the namespace lives exactly as long as something holds it, and
 * after setup only the TAP fd does: when the sentry ends, however it ends,
 * the namespace, its rules and the veth pair (both ends) go with it. The
 * host's table is removed by a janitor process that waits for the sentry
 * to be gone. The host's net.ipv4.ip_forward is set to 1 and left so (as
 * Docker does): other routing on the host may have come to rely on it.
 *
 * Given a namespace (an OCI bundle's linux.namespaces network path, as a
 * Kubernetes pod's), the TAP device (moat<pid>) is made in it instead:
 * 10.0.2.2/24 on it, forwarding on, and 10.0.2.0/24 masqueraded onto the
 * namespace's other interfaces in a table moat_<pid> of its own, which a
 * janitor removes after the sentry. No veth, nothing on the host. One
 * --net=tap sandbox per namespace (the guest side is always 10.0.2.0/24).
 *
 * The host's own addresses (netstack/linkctl.h): traffic from the
 * sandbox to an address the kernel delivers locally, in the namespace
 * where it leaves (the host's, or the given one), takes the kernel's
 * check too, whatever the sentry decided: chains of the same table send
 * it, in prerouting (before any DNAT: a port published by DNAT on a host
 * address is the host's service too) for the local table's addresses,
 * and in input for whatever else is delivered locally, through the
 * policy's address rules, the only ones that may name those addresses;
 * the rest is dropped (prerouting) or refused (input). The janitor of the
 * table is a netctl process that holds a link control socket to the
 * sentry: it rewrites those chains at each LC_RULES, and reports the
 * namespace's addresses (LC_HOSTS) at start and at each change, for the
 * sentry's own check and its clear errno.
 *
 * Configuration runs `ip` (iproute2) and `nft` (nftables) with fixed
 * arguments, rules made of numbers only, and an empty environment; root
 * only (CAP_NET_ADMIN on the host). Replacing them with rtnetlink and
 * nf_tables messages of our own is a later step (docs/network.md).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "netstack/hostaddr.h"
#include "netstack/linkctl.h"
#include "netstack/netstack.h"

#define IP_BIN "/usr/sbin/ip"
#define NFT_BIN "/usr/sbin/nft"

struct tap_names {
	char host_if[IFNAMSIZ]; /* moat<pid> */
	char table[32];		/* moat_<pid> */
	char host_addr[20], host_cidr[24], ns_addr[24], net[24];
};

/* argv run to completion with stdin from text (or /dev/null); its exit
 * status, or -1. */
static int run(char *const argv[], const char *text)
{
	static char *const env[] = { "PATH=/usr/sbin:/usr/bin:/sbin:/bin",
				     NULL };
	int in[2], st;
	pid_t pid, parent = getpid();

	if (pipe2(in, O_CLOEXEC) < 0)
		return -1;
	pid = fork();
	if (pid < 0) {
		close(in[0]);
		close(in[1]);
		return -1;
	}
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY | O_CLOEXEC);

		/* It ends with its caller: an nft left running by a sentry
		 * killed mid-setup made its table after the janitor had
		 * removed what there was (the table stayed on the host). */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
			_exit(127);
		if (dup2(in[0], 0) < 0 ||
		    (null >= 0 && (dup2(null, 1) < 0 || dup2(null, 2) < 0)))
			_exit(127);
		execve(argv[0], argv, env);
		_exit(127);
	}
	close(in[0]);
	if (text && write_all(in[1], text, strlen(text)) < 0) {
		close(in[1]);
		waitpid(pid, &st, 0);
		return -1;
	}
	close(in[1]);
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

#define RUN(...) run((char *const[]){ __VA_ARGS__, NULL }, NULL)

static int write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write_all(fd, text, strlen(text));
	close(fd);
	return n < 0 ? (int)n : 0;
}

/* The namespace's side, run by the child inside it: tap0, the veth's
 * inner end (already moved in as eth0), routes and masquerade. */
static int inside(const struct tap_names *n)
{
	char rules[512];

	snprintf(
		rules, sizeof(rules),
		"table ip moat {\n"
		"  chain post {\n"
		"    type nat hook postrouting priority srcnat; policy accept;\n"
		"    ip saddr 10.0.2.0/24 oifname \"eth0\" masquerade\n"
		"  }\n"
		"}\n");
	if (RUN(IP_BIN, "link", "set", "lo", "up") ||
	    RUN(IP_BIN, "addr", "add", NS_GATEWAY "/24", "dev", "tap0") ||
	    RUN(IP_BIN, "link", "set", "tap0", "up") ||
	    RUN(IP_BIN, "addr", "add", (char *)n->ns_addr, "dev", "eth0") ||
	    RUN(IP_BIN, "link", "set", "eth0", "up") ||
	    RUN(IP_BIN, "route", "add", "default", "via",
		(char *)n->host_addr) ||
	    write_file("/proc/sys/net/ipv4/ip_forward", "1\n") < 0 ||
	    run((char *const[]){ NFT_BIN, "-f", "-", NULL }, rules))
		return -1;
	return 0;
}

/* A TAP device named name in this network namespace, non-blocking; its
 * fd, or -1. */
static int open_tap(const char *name)
{
	struct ifreq ifr;
	int fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);

	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	ifr.ifr_flags = IFF_TAP | IFF_NO_PI;
	if (fd >= 0 && ioctl(fd, TUNSETIFF, &ifr) < 0) {
		close(fd);
		fd = -1;
	}
	return fd;
}

static int send_fd(int sock, int fd, char tag)
{
	struct iovec iov = { &tag, 1 };

	return send_with_fds(sock, &iov, 1, &fd, fd >= 0 ? 1 : 0) == 1 ? 0 : -1;
}

static char recv_tag(int sock, int *fd)
{
	char cbuf[CMSG_SPACE(sizeof(int))], tag = 0;
	struct iovec iov = { &tag, 1 };
	struct msghdr mh = { .msg_iov = &iov,
			     .msg_iovlen = 1,
			     .msg_control = cbuf,
			     .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *c;

	if (fd)
		*fd = -1;
	if (recvmsg(sock, &mh, MSG_CMSG_CLOEXEC) != 1)
		return 0;
	c = CMSG_FIRSTHDR(&mh);
	if (fd && c && c->cmsg_type == SCM_RIGHTS)
		memcpy(fd, CMSG_DATA(c), sizeof(int));
	return tag;
}

/* The child: a new namespace, tap0 in it, its fd to the parent; then,
 * once the parent has moved the veth in, the configuration. */
static void child(int sock, const struct tap_names *n)
{
	int fd;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (unshare(CLONE_NEWNET) < 0)
		_exit(send_fd(sock, -1, 'N'));
	fd = open_tap("tap0");
	if (fd < 0)
		_exit(send_fd(sock, -1, 'T'));
	if (send_fd(sock, fd, 'F') < 0)
		_exit(1);
	close(fd);
	if (recv_tag(sock, NULL) != 'V')
		_exit(1);
	send_fd(sock, -1, inside(n) == 0 ? 'D' : 'C');
	_exit(0);
}

/* The chains of a table that send the sandbox's traffic to the host's
 * own addresses (it comes in by dev) through the policy's address rules:
 * tolocal_pre and tolocal_in, empty but for their final drop and refusal
 * until the netctl fills them (so nothing passes before the rules are
 * known). Appended to out (cap bytes) inside a `table ip` block. */
static void local_chains(char *out, size_t cap, const char *dev)
{
	size_t o = strlen(out);

	snprintf(out + o, cap - o,
		 "  chain tolocal_pre {\n"
		 "    drop\n"
		 "  }\n"
		 "  chain tolocal_in {\n"
		 "    meta l4proto tcp reject with tcp reset\n"
		 "    reject with icmp type admin-prohibited\n"
		 "  }\n"
		 "  chain pre {\n"
		 "    type filter hook prerouting priority raw; policy "
		 "accept;\n"
		 "    iifname \"%s\" fib daddr type { local, broadcast, "
		 "anycast, multicast } jump tolocal_pre\n"
		 "  }\n"
		 "  chain in {\n"
		 "    type filter hook input priority filter; policy "
		 "accept;\n"
		 "    iifname \"%s\" jump tolocal_in\n"
		 "  }\n",
		 dev, dev);
}

/* Text that grows; NULL data after a failed allocation. */
struct text {
	char *data;
	size_t len, cap;
};

static void text_add(struct text *t, const char *fmt, ...) MOAT_PRINTF(2, 3);

static void text_add(struct text *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (t->cap && !t->data)
		return;
	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(t->data ? t->data + t->len : NULL,
			      t->data ? t->cap - t->len : 0, fmt, ap);
		va_end(ap);
		if (n < 0) {
			free(t->data);
			t->data = NULL;
			t->cap = 1;
			return;
		}
		if (t->data && t->len + (size_t)n < t->cap) {
			t->len += (size_t)n;
			return;
		}
		t->cap = (t->cap ? t->cap : 4096) * 2 + (size_t)n;
		t->data = realloc(t->data, t->cap);
		if (!t->data) {
			t->cap = 1;
			return;
		}
	}
}

/* The rules of one address rule r (IPv4: the namespace routes no IPv6)
 * into chain, each ending in verdict. */
static void nft_rule(struct text *t, const char *table, const char *chain,
		     const struct lc_rule *r, const char *verdict)
{
	static const struct {
		unsigned bit;
		const char *name;
	} protos[] = { { EGRESS_TCP, "tcp" },
		       { EGRESS_UDP, "udp" },
		       { EGRESS_ICMP, "icmp" } };
	char ip[INET_ADDRSTRLEN];
	size_t i;

	if (r->family != AF_INET ||
	    !inet_ntop(AF_INET, r->addr, ip, sizeof(ip)))
		return;
	for (i = 0; i < ARRAY_SIZE(protos); i++) {
		if (!(r->protos & protos[i].bit))
			continue;
		text_add(t, "add rule ip %s %s ip daddr %s/%u ", table, chain,
			 ip, r->prefix);
		if (protos[i].bit == EGRESS_ICMP ||
		    (r->port_lo <= 1 && r->port_hi == 65535))
			text_add(t, "ip protocol %s %s\n", protos[i].name,
				 verdict);
		else
			text_add(t, "%s dport %u-%u %s\n", protos[i].name,
				 r->port_lo, r->port_hi, verdict);
	}
}

/* Rewrite the two chains for the policy's address rules, in one nft
 * transaction (no moment without them). 0, or -1. */
static int netctl_apply(const char *table, const struct lc_rule *r, size_t n)
{
	static const char *const chains[] = { "tolocal_pre", "tolocal_in" };
	struct text t = { 0 };
	size_t c, i;
	int rc;

	for (c = 0; c < ARRAY_SIZE(chains); c++) {
		text_add(&t, "flush chain ip %s %s\n", table, chains[c]);
		/* denies first: deny wins */
		for (i = 0; i < n; i++)
			if (r[i].deny)
				nft_rule(&t, table, chains[c], &r[i], "drop");
		for (i = 0; i < n; i++)
			if (!r[i].deny)
				nft_rule(&t, table, chains[c], &r[i], "accept");
	}
	text_add(&t, "add rule ip %s tolocal_pre drop\n", table);
	text_add(&t,
		 "add rule ip %s tolocal_in meta l4proto tcp reject with tcp "
		 "reset\n",
		 table);
	text_add(&t,
		 "add rule ip %s tolocal_in reject with icmp type "
		 "admin-prohibited\n",
		 table);
	rc = t.data ? run((char *const[]){ NFT_BIN, "-f", "-", NULL }, t.data) :
		      -1;
	free(t.data);
	return rc ? -1 : 0;
}

/* The namespace's addresses to the sentry (LC_HOSTS, in chunks). */
static bool netctl_hosts(int nl)
{
	static struct hostaddr_set set;
	static uint8_t msg[LC_MSG_MAX];
	size_t off = 0;

	if (hostaddr_dump(nl, &set) < 0)
		return false;
	do {
		size_t k = set.n - off > LC_CHUNK ? LC_CHUNK : set.n - off;
		uint8_t flags = (off ? 0 : LC_FIRST) |
				(off + k == set.n ? LC_LAST : 0);
		long len =
			lc_put_hosts(flags, set.v + off, k, msg, sizeof(msg));

		if (len < 0 ||
		    send(3, msg, (size_t)len, MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
			return false;
		off += k;
	} while (off < set.n);
	return true;
}

static int64_t netctl_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The netctl, in the namespace the table is in, until the sentry's end
 * of fd 3 closes: then the table goes (and the host's veth end, if
 * host_if). Never returns. */
static void netctl_run(const char *table, const char *host_if)
	__attribute__((noreturn));

static void netctl_run(const char *table, const char *host_if)
{
	static struct lc_rule rules[EGRESS_RULES_MAX + 1];
	static uint8_t msg[LC_MSG_MAX];
	size_t nrules = 0;
	int64_t hosts_due = -1;
	bool first = true;
	int nl = hostaddr_socket(false), ev = hostaddr_socket(true);

	for (;;) {
		struct pollfd p[2] = { { .fd = 3, .events = POLLIN },
				       { .fd = ev, .events = POLLIN } };
		int timeout = -1;
		const void *rec;
		struct lc_hdr h;
		ssize_t n;

		if (hosts_due >= 0) {
			int64_t left = hosts_due - netctl_ms();

			timeout = left < 0 ? 0 : (int)left;
		}
		if (poll(p, ev >= 0 ? 2 : 1, timeout) < 0 && errno != EINTR)
			break;
		if (p[1].revents & POLLIN) {
			int m = hostaddr_events(ev);

			if (m < 0) {
				close(ev);
				ev = -1;
			} else if ((m & HOSTADDR_ADDRS) && hosts_due < 0 &&
				   !first) {
				hosts_due = netctl_ms() + 20;
			}
		}
		if (p[0].revents & (POLLIN | POLLHUP | POLLERR)) {
			n = recv(3, msg, sizeof(msg), MSG_DONTWAIT);
			if (n == 0 ||
			    (n < 0 && errno != EAGAIN && errno != EINTR))
				break; /* the sentry is gone */
			if (n > 0 && lc_parse(msg, (size_t)n, &h, &rec) == 0 &&
			    h.type == LC_RULES) {
				if (h.flags & LC_FIRST)
					nrules = 0;
				if (nrules + h.n <= ARRAY_SIZE(rules)) {
					memcpy(&rules[nrules], rec,
					       h.n * sizeof(*rules));
					nrules += h.n;
				}
				if ((h.flags & LC_LAST) &&
				    netctl_apply(table, rules, nrules) < 0)
					/* at least nothing more than before:
					 * the chains' last words refuse */
					netctl_apply(table, NULL, 0);
				if ((h.flags & LC_LAST) && first) {
					/* answered with the addresses: the
					 * sentry starts the guest then */
					first = false;
					hosts_due = netctl_ms();
				}
			}
		}
		if (hosts_due >= 0 && netctl_ms() >= hosts_due)
			hosts_due = nl >= 0 && netctl_hosts(nl) ?
					    -1 :
					    netctl_ms() + 50;
	}
	RUN(NFT_BIN, "delete", "table", "ip", (char *)table);
	/* the veth went with the namespace; in case it did not */
	if (host_if)
		RUN(IP_BIN, "link", "del", (char *)host_if);
	_exit(0);
}

/* The host's table's netctl (its janitor too): its socket, or -1. */
static int start_netctl(const struct tap_names *n)
{
	int ctl = -1, rc = janitor_fork_ctl(&ctl);

	if (rc == 0)
		netctl_run(n->table, n->host_if);
	return rc > 0 ? ctl : -1;
}

/* --- in a network namespace given to us (an OCI bundle's, such as a
 * Kubernetes pod's made by its CNI) ------------------------------------ */

/* The child, in the namespace: the TAP device (its fd to the parent),
 * its address, forwarding, and masquerade onto the namespace's other
 * interfaces. */
static void child_in(int sock, int nsfd, const char *dev, const char *table)
{
	char rules[2048];
	int fd;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (setns(nsfd, CLONE_NEWNET) < 0)
		_exit(send_fd(sock, -1, 'N'));
	fd = open_tap(dev);
	if (fd < 0)
		_exit(send_fd(sock, -1, 'T'));
	snprintf(rules, sizeof(rules),
		 "table ip %s {\n"
		 "  chain post {\n"
		 "    type nat hook postrouting priority srcnat; policy "
		 "accept;\n"
		 "    ip saddr 10.0.2.0/24 oifname != \"%s\" masquerade\n"
		 "  }\n",
		 table, dev);
	local_chains(rules, sizeof(rules) - 4, dev);
	strcat(rules, "}\n");
	if (RUN(IP_BIN, "addr", "add", NS_GATEWAY "/24", "dev", (char *)dev) ||
	    RUN(IP_BIN, "link", "set", (char *)dev, "up") ||
	    write_file("/proc/sys/net/ipv4/ip_forward", "1\n") < 0 ||
	    run((char *const[]){ NFT_BIN, "-f", "-", NULL }, rules))
		_exit(send_fd(sock, -1, 'C'));
	if (send_fd(sock, fd, 'F') < 0)
		_exit(1);
	_exit(0);
}

/* Our table's netctl in the given namespace, which removes the table once
 * the sentry is gone (the TAP device goes with its fd; the namespace
 * outlives the sandbox): its socket, or -1. */
static int start_netctl_in(const char *netns, const char *table)
{
	int ctl = -1, nsfd, rc = janitor_fork_ctl(&ctl);

	if (rc != 0)
		return rc > 0 ? ctl : -1;
	/* By path again: a janitor holds no fd of the sentry's. A namespace
	 * that is gone took the table with it. */
	nsfd = open(netns, O_RDONLY | O_CLOEXEC);
	if (nsfd < 0 || setns(nsfd, CLONE_NEWNET) < 0)
		_exit(0);
	close(nsfd);
	netctl_run(table, NULL);
}

static int tap_open_in(const char *netns, int *link_fd, int *ctl_fd,
		       struct moat_error *err)
{
	char dev[IFNAMSIZ], table[32], tag;
	int sv[2], fd = -1, nsfd, st;
	pid_t pid;

	nsfd = open(netns, O_RDONLY | O_CLOEXEC);
	if (nsfd < 0)
		return moat_error_set(err, errno, "network namespace `%s`",
				      netns);
	snprintf(dev, sizeof(dev), "moat%d", (int)getpid());
	snprintf(table, sizeof(table), "moat_%d", (int)getpid());
	/* The netctl, which removes the table however the sentry ends, comes
	 * before the table: a sentry killed while the child makes it would
	 * otherwise leave it in a namespace that outlives the sandbox. */
	*ctl_fd = start_netctl_in(netns, table);
	if (*ctl_fd < 0) {
		close(nsfd);
		return moat_error_set(err, errno, "--net=tap: netctl");
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		close(nsfd);
		close(*ctl_fd);
		return moat_error_set(err, errno, "--net=tap: socketpair");
	}
	pid = fork();
	if (pid < 0) {
		close(nsfd);
		close(*ctl_fd);
		return moat_error_set(err, errno, "--net=tap: fork");
	}
	if (pid == 0) {
		close(sv[0]);
		child_in(sv[1], nsfd, dev, table);
	}
	close(sv[1]);
	tag = recv_tag(sv[0], &fd);
	close(sv[0]);
	waitpid(pid, &st, 0);
	close(nsfd);
	if (tag != 'F' || fd < 0) {
		close(*ctl_fd); /* what the child made, the netctl removes */
		return moat_error_set(
			err, EIO, "--net=tap in `%s`: %s", netns,
			tag == 'N' ? "cannot join the network namespace" :
			tag == 'T' ? "cannot open a TAP device (/dev/net/tun)" :
				     "cannot set up its address and NAT (one "
				     "--net=tap sandbox per namespace)");
	}
	*link_fd = fd;
	return 0;
}

int tap_open(const char *netns, int *link_fd, int *ctl_fd,
	     struct moat_error *err)
{
	struct tap_names n;
	int sv[2], fd = -1, st;
	unsigned idx = (unsigned)getpid() % 16384;
	char pidbuf[16], rules[3072], tag;
	pid_t pid;

	if (geteuid() != 0)
		return moat_error_set(err, EPERM,
				      "--net=tap needs root (--net=slirp "
				      "does not)");
	if (access(IP_BIN, X_OK) < 0 || access(NFT_BIN, X_OK) < 0)
		return moat_error_set(err, ENOENT,
				      "--net=tap needs %s and %s (Debian's "
				      "iproute2 and nftables)",
				      IP_BIN, NFT_BIN);
	if (netns)
		return tap_open_in(netns, link_fd, ctl_fd, err);
	snprintf(n.host_if, sizeof(n.host_if), "moat%d", (int)getpid());
	snprintf(n.table, sizeof(n.table), "moat_%d", (int)getpid());
	/* 198.18.0.0/15 (benchmarking, never routed): a /30 per sandbox */
	snprintf(n.host_addr, sizeof(n.host_addr), "198.18.%u.%u", idx >> 6,
		 ((idx & 63) << 2) + 1);
	snprintf(n.host_cidr, sizeof(n.host_cidr), "%s/30", n.host_addr);
	snprintf(n.ns_addr, sizeof(n.ns_addr), "198.18.%u.%u/30", idx >> 6,
		 ((idx & 63) << 2) + 2);
	snprintf(n.net, sizeof(n.net), "198.18.%u.%u/30", idx >> 6,
		 (idx & 63) << 2);
	/* The netctl, which removes the host's link and table however the
	 * sentry ends, comes before them: a sentry killed between the table
	 * and its janitor left the table on the host. Every failure below
	 * closes its socket, and it removes what was made. */
	*ctl_fd = start_netctl(&n);
	if (*ctl_fd < 0)
		return moat_error_set(err, errno, "--net=tap: netctl");
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		close(*ctl_fd);
		return moat_error_set(err, errno, "--net=tap: socketpair");
	}
	pid = fork();
	if (pid < 0) {
		close(*ctl_fd);
		return moat_error_set(err, errno, "--net=tap: fork");
	}
	if (pid == 0) {
		close(sv[0]);
		child(sv[1], &n);
	}
	close(sv[1]);
	tag = recv_tag(sv[0], &fd);
	if (tag != 'F' || fd < 0) {
		close(sv[0]);
		waitpid(pid, &st, 0);
		close(*ctl_fd);
		return moat_error_set(err, EIO, "--net=tap: %s",
				      tag == 'N' ? "cannot make a network "
						   "namespace" :
						   "cannot open a TAP device "
						   "(/dev/net/tun)");
	}
	snprintf(pidbuf, sizeof(pidbuf), "%d", (int)pid);
	if (RUN(IP_BIN, "link", "add", n.host_if, "type", "veth", "peer",
		"name", "eth0", "netns", pidbuf) ||
	    RUN(IP_BIN, "addr", "add", n.host_cidr, "dev", n.host_if) ||
	    RUN(IP_BIN, "link", "set", n.host_if, "up") ||
	    send_fd(sv[0], -1, 'V') < 0 || recv_tag(sv[0], NULL) != 'D') {
		close(sv[0]);
		close(fd);
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
		close(*ctl_fd);
		return moat_error_set(err, EIO,
				      "--net=tap: cannot set up the veth pair "
				      "and the namespace's routes");
	}
	close(sv[0]);
	waitpid(pid, &st, 0);
	/* The host's side: forward, and masquerade the /30 onto the uplink;
	 * replies to it come back by the connected route. */
	snprintf(
		rules, sizeof(rules),
		"table ip %s {\n"
		"  chain post {\n"
		"    type nat hook postrouting priority srcnat; policy accept;\n"
		"    ip saddr %s oifname != \"%s\" masquerade\n"
		"  }\n"
		"  chain forwarding {\n"
		"    type filter hook forward priority filter; policy accept;\n"
		"    iifname \"%s\" accept\n"
		"    oifname \"%s\" ct state established,related accept\n"
		"  }\n",
		n.table, n.net, n.host_if, n.host_if, n.host_if);
	local_chains(rules, sizeof(rules) - 4, n.host_if);
	strcat(rules, "}\n");
	if (write_file("/proc/sys/net/ipv4/ip_forward", "1\n") < 0 ||
	    run((char *const[]){ NFT_BIN, "-f", "-", NULL }, rules)) {
		close(fd);
		close(*ctl_fd);
		return moat_error_set(err, EIO,
				      "--net=tap: cannot set up the host's "
				      "forwarding and NAT (nftables)");
	}
	*link_fd = fd;
	return 0;
}
