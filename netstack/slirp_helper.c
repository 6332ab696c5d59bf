/* netstack/slirp_helper.c: `moat netslirp --fd N`, the --net=slirp link.
 *
 * libslirp turns the sandbox's Ethernet frames into ordinary host sockets
 * (and back), without root: the user-mode networking of QEMU and of
 * slirp4netns. It runs in this process of its own, not in the sentry, so
 * that the sentry never holds a host socket and its seccomp filter stays
 * without socket(2). Frames come and go over fd N (SOCK_SEQPACKET, one
 * frame per message); the sentry has checked each outbound frame against
 * the policy before it gets here.
 *
 * Confinement: it keeps only fd N; it becomes nobody (no capabilities, no
 * file of the caller's to read), no_new_privs, dies with its parent, and
 * runs under a seccomp filter that allows what libslirp's event loop uses:
 * sockets of the internet families, poll, read/write, time, memory.
 * slirp's own DNS and DHCP are off (the sentry answers DNS itself), and so
 * is its mapping of the gateway address onto the host's loopback.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <slirp/libslirp.h>

#include "netstack/netstack.h"

#define POLL_MAX 1024
#define TIMERS_MAX 16
#define FRAME_BUF 65536

static int link_fd = -1;
static struct pollfd pfds[POLL_MAX];
static int npfds;

struct htimer {
	SlirpTimerCb cb;
	void *opaque;
	int64_t when_ms; /* -1: not armed */
	bool used;
};
static struct htimer timers[TIMERS_MAX];

static int64_t clock_ns(void *opaque)
{
	struct timespec ts;

	(void)opaque;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static ssize_t send_packet(const void *buf, size_t len, void *opaque)
{
	(void)opaque;
	/* The sentry reads as fast as it can; a full socket drops the
	 * frame, as a full NIC queue would. */
	if (send(link_fd, buf, len, MSG_DONTWAIT) < 0)
		return errno == EAGAIN ? (ssize_t)len : -1;
	return (ssize_t)len;
}

static void guest_error(const char *msg, void *opaque)
{
	(void)opaque;
	(void)msg; /* stderr is closed: nothing to tell */
}

static void *timer_new(SlirpTimerCb cb, void *cb_opaque, void *opaque)
{
	int i;

	(void)opaque;
	for (i = 0; i < TIMERS_MAX; i++)
		if (!timers[i].used) {
			timers[i] = (struct htimer){ cb, cb_opaque, -1, true };
			return &timers[i];
		}
	abort(); /* libslirp makes a handful; more is a bug here */
}

static void timer_free(void *t, void *opaque)
{
	(void)opaque;
	((struct htimer *)t)->used = false;
}

static void timer_mod(void *t, int64_t expire_ms, void *opaque)
{
	(void)opaque;
	((struct htimer *)t)->when_ms = expire_ms;
}

static void poll_fd_noop(int fd, void *opaque)
{
	(void)fd;
	(void)opaque;
}

static void notify(void *opaque)
{
	(void)opaque;
}

static int add_poll(int fd, int events, void *opaque)
{
	short e = 0;

	(void)opaque;
	if (npfds >= POLL_MAX)
		return -1;
	if (events & SLIRP_POLL_IN)
		e |= POLLIN;
	if (events & SLIRP_POLL_OUT)
		e |= POLLOUT;
	if (events & SLIRP_POLL_PRI)
		e |= POLLPRI;
	pfds[npfds] = (struct pollfd){ .fd = fd, .events = e };
	return npfds++;
}

static int get_revents(int idx, void *opaque)
{
	short e;
	int r = 0;

	(void)opaque;
	if (idx < 0 || idx >= npfds)
		return 0;
	e = pfds[idx].revents;
	if (e & POLLIN)
		r |= SLIRP_POLL_IN;
	if (e & POLLOUT)
		r |= SLIRP_POLL_OUT;
	if (e & POLLPRI)
		r |= SLIRP_POLL_PRI;
	if (e & POLLERR)
		r |= SLIRP_POLL_ERR;
	if (e & POLLHUP)
		r |= SLIRP_POLL_HUP;
	return r;
}

static int confine(void)
{
	static const int allow[] = {
		SYS_read,	  SYS_write,
		SYS_close,	  SYS_poll,
		SYS_ppoll,	  SYS_connect,
		SYS_sendto,	  SYS_recvfrom,
		SYS_sendmsg,	  SYS_recvmsg,
		SYS_setsockopt,	  SYS_getsockopt,
		SYS_getsockname,  SYS_getpeername,
		SYS_bind,	  SYS_shutdown,
		SYS_fcntl,	  SYS_clock_gettime,
		SYS_gettimeofday, SYS_brk,
		SYS_mmap,	  SYS_munmap,
		SYS_mremap,	  SYS_madvise,
		SYS_exit_group,	  SYS_exit,
		SYS_rt_sigreturn, SYS_futex,
		SYS_getrandom,	  SYS_getpid,
		SYS_gettid,	  SYS_rt_sigprocmask,
		SYS_listen,	  SYS_accept4,
		SYS_accept,
	};
	scmp_filter_ctx ctx;
	size_t i;
	int rc = 0;

	if (setgroups(0, NULL) < 0 || setresgid(65534, 65534, 65534) < 0 ||
	    setresuid(65534, 65534, 65534) < 0)
		return -errno;
	/* setresuid cleared the parent-death signal: again */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() == 1)
		return -ESRCH;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -errno;
	ctx = seccomp_init(SCMP_ACT_KILL_PROCESS);
	if (!ctx)
		return -ENOMEM;
	for (i = 0; i < ARRAY_SIZE(allow) && rc == 0; i++)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, allow[i], 0);
	/* ioctl: FIONREAD and FIONBIO on its sockets, nothing else */
	if (rc == 0)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(ioctl), 1,
				      SCMP_A1(SCMP_CMP_EQ, FIONREAD));
	if (rc == 0)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(ioctl), 1,
				      SCMP_A1(SCMP_CMP_EQ, FIONBIO));
	/* sockets of the internet families only: no AF_UNIX to a host
	 * service, no netlink, no packet sockets */
	if (rc == 0)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(socket), 1,
				      SCMP_A0(SCMP_CMP_EQ, AF_INET));
	if (rc == 0)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(socket), 1,
				      SCMP_A0(SCMP_CMP_EQ, AF_INET6));
	/* libslirp looks for the host's resolv.conf when it answers a router
	 * solicitation (its RDNSS option): no file is opened here, but the
	 * attempt must fail, not kill the link. */
	if (rc == 0)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EACCES),
				      SCMP_SYS(openat), 0);
	if (rc == 0)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EACCES),
				      SCMP_SYS(open), 0);
	if (rc == 0)
		rc = seccomp_load(ctx);
	seccomp_release(ctx);
	return rc;
}

int netslirp_main(int argc, char **argv)
{
	static const SlirpCb cb = {
		.send_packet = send_packet,
		.guest_error = guest_error,
		.clock_get_ns = clock_ns,
		.timer_new = timer_new,
		.timer_free = timer_free,
		.timer_mod = timer_mod,
		.register_poll_fd = poll_fd_noop,
		.unregister_poll_fd = poll_fd_noop,
		.notify = notify,
	};
	static uint8_t frame[FRAME_BUF];
	SlirpConfig cfg = { .version = 1, .in_enabled = true };
	Slirp *sl;
	int i;

	for (i = 1; i + 1 < argc; i++)
		if (!strcmp(argv[i], "--fd"))
			link_fd = atoi(argv[i + 1]);
	if (link_fd < 3)
		return 2;
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() == 1)
		return 1; /* the sentry is already gone */
	if (close_range(0, (unsigned)link_fd - 1, 0) < 0 ||
	    close_range((unsigned)link_fd + 1, ~0u, 0) < 0)
		return 1;
	if (inet_pton(AF_INET, "10.0.2.0", &cfg.vnetwork) != 1 ||
	    inet_pton(AF_INET, NS_NETMASK, &cfg.vnetmask) != 1 ||
	    inet_pton(AF_INET, NS_GATEWAY, &cfg.vhost) != 1 ||
	    inet_pton(AF_INET, NS_ADDR, &cfg.vdhcp_start) != 1 ||
	    inet_pton(AF_INET, NS_RESOLVER, &cfg.vnameserver) != 1)
		return 1;
	cfg.in6_enabled = true;
	if (inet_pton(AF_INET6, NS_PREFIX6, &cfg.vprefix_addr6) != 1 ||
	    inet_pton(AF_INET6, NS_GATEWAY6, &cfg.vhost6) != 1 ||
	    inet_pton(AF_INET6, "fec0::3", &cfg.vnameserver6) != 1)
		return 1;
	cfg.vprefix_len = 64;
	cfg.if_mtu = NS_LINK_MTU;
	cfg.if_mru = NS_LINK_MTU;
	cfg.disable_host_loopback = true;
	cfg.version = 4; /* disable_dns needs 3, disable_dhcp 4 */
	cfg.disable_dns = true;
	cfg.disable_dhcp = true;
	sl = slirp_new(&cfg, &cb, NULL);
	if (!sl)
		return 1;
	if (confine() < 0)
		return 1;
	for (;;) {
		uint32_t timeout = 1000;
		int64_t now_ms;
		int n;

		npfds = 0;
		add_poll(link_fd, SLIRP_POLL_IN, NULL);
		slirp_pollfds_fill(sl, &timeout, add_poll, NULL);
		for (i = 0; i < TIMERS_MAX; i++) {
			int64_t left;

			if (!timers[i].used || timers[i].when_ms < 0)
				continue;
			left = timers[i].when_ms - clock_ns(NULL) / 1000000;
			if (left < 0)
				left = 0;
			if ((uint64_t)left < timeout)
				timeout = (uint32_t)left;
		}
		n = poll(pfds, (nfds_t)npfds, (int)timeout);
		if (n < 0 && errno != EINTR)
			return 1;
		if (pfds[0].revents & (POLLHUP | POLLERR))
			return 0; /* the sentry closed the link */
		if (pfds[0].revents & POLLIN) {
			for (i = 0; i < 256; i++) {
				ssize_t len = recv(link_fd, frame,
						   sizeof(frame), MSG_DONTWAIT);
				if (len <= 0)
					break;
				slirp_input(sl, frame, (int)len);
			}
		}
		slirp_pollfds_poll(sl, n < 0, get_revents, NULL);
		now_ms = clock_ns(NULL) / 1000000;
		for (i = 0; i < TIMERS_MAX; i++)
			if (timers[i].used && timers[i].when_ms >= 0 &&
			    timers[i].when_ms <= now_ms) {
				timers[i].when_ms = -1;
				timers[i].cb(timers[i].opaque);
			}
	}
}
