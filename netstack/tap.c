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
 * Configuration runs `ip` (iproute2) and `nft` (nftables) with fixed
 * arguments and an empty environment; root only (CAP_NET_ADMIN on the
 * host). Replacing them with rtnetlink and nf_tables messages of our own
 * is a later step (docs/network.md).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

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
	pid_t pid;

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

/* Remove the host's table once the sentry is gone. */
static void start_janitor(const struct tap_names *n)
{
	if (janitor_fork() != 0)
		return;
	RUN(NFT_BIN, "delete", "table", "ip", (char *)n->table);
	/* the veth went with the namespace; in case it did not */
	RUN(IP_BIN, "link", "del", (char *)n->host_if);
	_exit(0);
}

/* --- in a network namespace given to us (an OCI bundle's, such as a
 * Kubernetes pod's made by its CNI) ------------------------------------ */

/* The child, in the namespace: the TAP device (its fd to the parent),
 * its address, forwarding, and masquerade onto the namespace's other
 * interfaces. */
static void child_in(int sock, int nsfd, const char *dev, const char *table)
{
	char rules[512];
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
		 "  }\n"
		 "}\n",
		 table, dev);
	if (RUN(IP_BIN, "addr", "add", NS_GATEWAY "/24", "dev", (char *)dev) ||
	    RUN(IP_BIN, "link", "set", (char *)dev, "up") ||
	    write_file("/proc/sys/net/ipv4/ip_forward", "1\n") < 0 ||
	    run((char *const[]){ NFT_BIN, "-f", "-", NULL }, rules))
		_exit(send_fd(sock, -1, 'C'));
	if (send_fd(sock, fd, 'F') < 0)
		_exit(1);
	_exit(0);
}

/* Remove our table from the namespace once the sentry is gone (the TAP
 * device goes with its fd; the namespace outlives the sandbox). */
static void start_janitor_in(const char *netns, const char *table)
{
	int nsfd;

	if (janitor_fork() != 0)
		return;
	/* By path again: a janitor holds no fd of the sentry's. A namespace
	 * that is gone took the table with it. */
	nsfd = open(netns, O_RDONLY | O_CLOEXEC);
	if (nsfd >= 0 && setns(nsfd, CLONE_NEWNET) == 0)
		RUN(NFT_BIN, "delete", "table", "ip", (char *)table);
	_exit(0);
}

static int tap_open_in(const char *netns, int *link_fd, struct moat_error *err)
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
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		close(nsfd);
		return moat_error_set(err, errno, "--net=tap: socketpair");
	}
	pid = fork();
	if (pid < 0) {
		close(nsfd);
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
	if (tag != 'F' || fd < 0) {
		close(nsfd);
		return moat_error_set(
			err, EIO, "--net=tap in `%s`: %s", netns,
			tag == 'N' ? "cannot join the network namespace" :
			tag == 'T' ? "cannot open a TAP device (/dev/net/tun)" :
				     "cannot set up its address and NAT (one "
				     "--net=tap sandbox per namespace)");
	}
	start_janitor_in(netns, table);
	close(nsfd);
	*link_fd = fd;
	return 0;
}

int tap_open(const char *netns, int *link_fd, struct moat_error *err)
{
	struct tap_names n;
	int sv[2], fd = -1, st;
	unsigned idx = (unsigned)getpid() % 16384;
	char pidbuf[16], rules[1024], tag;
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
		return tap_open_in(netns, link_fd, err);
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
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return moat_error_set(err, errno, "--net=tap: socketpair");
	pid = fork();
	if (pid < 0)
		return moat_error_set(err, errno, "--net=tap: fork");
	if (pid == 0) {
		close(sv[0]);
		child(sv[1], &n);
	}
	close(sv[1]);
	tag = recv_tag(sv[0], &fd);
	if (tag != 'F' || fd < 0) {
		close(sv[0]);
		waitpid(pid, &st, 0);
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
		RUN(IP_BIN, "link", "del", n.host_if);
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
		"  }\n"
		"}\n",
		n.table, n.net, n.host_if, n.host_if, n.host_if);
	if (write_file("/proc/sys/net/ipv4/ip_forward", "1\n") < 0 ||
	    run((char *const[]){ NFT_BIN, "-f", "-", NULL }, rules)) {
		close(fd);
		RUN(IP_BIN, "link", "del", n.host_if);
		return moat_error_set(err, EIO,
				      "--net=tap: cannot set up the host's "
				      "forwarding and NAT (nftables)");
	}
	start_janitor(&n);
	*link_fd = fd;
	return 0;
}
