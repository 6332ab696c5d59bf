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
 * Confinement: it keeps only fd N, the control socket M and two
 * rtnetlink sockets it opens first; it becomes the sandbox's helper uid
 * (--as UID:GID: no capabilities, no file of the caller's to read), no_new_privs, dies with its parent,
 * and runs under a seccomp filter that allows what libslirp's event loop
 * uses: sockets of the internet families, poll, read/write, time,
 * memory. slirp's own DNS and DHCP are off (the sentry answers DNS
 * itself), and so is its mapping of the gateway address onto the host's
 * loopback.
 *
 * The host's own addresses (netstack/linkctl.h): this is where slirp's
 * host sockets connect, in this namespace, so the first frame of every
 * flow is checked here against this namespace's kernel before slirp sees
 * it: a destination the kernel delivers locally (hostaddr_is_local,
 * cached for LOCAL_TTL_MS and forgotten at any address, route or rule
 * change) passes only when an address rule of the policy allows it. A
 * refused SYN gets a RST (the guest's connect fails with ECONNREFUSED),
 * and the sentry an LC_REFUSED for its audit line. Whatever the sentry's
 * own check said: this one asks the kernel, now, in the right namespace.
 * The host's addresses also go to the sentry (LC_HOSTS), at start and at
 * each change, for that own check and its clear errno.
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

#include "netstack/hostaddr.h"
#include "netstack/linkctl.h"
#include "netstack/netstack.h"

#define POLL_MAX 1024
#define TIMERS_MAX 16
#define FRAME_BUF 65536
/* How long the kernel's "local or not" for a destination is reused. Any
 * change of addresses, routes or rules that the subscription reports
 * forgets it at once; the TTL bounds what a lost report could cost. */
#define LOCAL_TTL_MS 2000
#define LOCAL_CACHE 1024
#define HOSTS_DELAY_MS 20 /* a burst of changes: one report */

static int link_fd = -1, ctl_fd = -1, nl_fd = -1, nl_events = -1;
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

/* ---- the host's addresses ------------------------------------------------------- */

/* The policy's address rules (LC_RULES): until the first arrive, none, so
 * no local destination passes. */
static struct egress_policy rules;
static struct lc_rule rules_in[EGRESS_RULES_MAX + 1];
static size_t rules_n;
static bool rules_seen;

static struct {
	uint32_t gen; /* 0: empty */
	uint8_t family, local;
	uint8_t addr[16];
	int64_t expires_ms;
} lcache[LOCAL_CACHE];
static uint32_t lcache_gen = 1;
static bool events_lost; /* no subscription: ask the kernel each time */

static int64_t hosts_due_ms = -1; /* when to send LC_HOSTS; -1: not due */

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Is d's address delivered to this host? 1, 0; a kernel that cannot be
 * asked counts as yes (fails closed). */
static int is_local(const struct lc_dest *d)
{
	uint32_t h = 2166136261u;
	size_t i, alen = d->family == AF_INET ? 4 : 16;
	int64_t now = now_ms();
	int rc;

	for (i = 0; i < alen; i++)
		h = (h ^ d->addr[i]) * 16777619u;
	i = h % LOCAL_CACHE;
	if (!events_lost && lcache[i].gen == lcache_gen &&
	    lcache[i].family == d->family && lcache[i].expires_ms > now &&
	    !memcmp(lcache[i].addr, d->addr, alen))
		return lcache[i].local;
	rc = hostaddr_is_local(nl_fd, d->family, d->addr);
	if (rc < 0)
		return 1;
	lcache[i].gen = lcache_gen;
	lcache[i].family = d->family;
	lcache[i].local = (uint8_t)rc;
	memcpy(lcache[i].addr, d->addr, 16);
	lcache[i].expires_ms = now + LOCAL_TTL_MS;
	return rc;
}

/* The host's addresses to the sentry, in chunks; false when the kernel
 * could not say them or the sentry's socket is full (sent again later,
 * whole: the sentry takes a set only from FIRST to LAST). */
static bool send_hosts(void)
{
	static struct hostaddr_set set;
	static uint8_t msg[LC_MSG_MAX];
	size_t off = 0;

	if (hostaddr_dump(nl_fd, &set) < 0)
		return false; /* tried again; the sentry keeps the last */
	do {
		size_t n = set.n - off > LC_CHUNK ? LC_CHUNK : set.n - off;
		uint8_t flags = (off ? 0 : LC_FIRST) |
				(off + n == set.n ? LC_LAST : 0);
		long len =
			lc_put_hosts(flags, set.v + off, n, msg, sizeof(msg));

		if (len < 0 || send(ctl_fd, msg, (size_t)len,
				    MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
			return false;
		off += n;
	} while (off < set.n);
	return true;
}

/* What the sentry sent: the policy's address rules. */
static void ctl_read(void)
{
	static uint8_t msg[LC_MSG_MAX];
	const void *rec;
	struct lc_hdr h;
	ssize_t n;

	for (;;) {
		n = recv(ctl_fd, msg, sizeof(msg), MSG_DONTWAIT);
		if (n <= 0)
			return;
		if (lc_parse(msg, (size_t)n, &h, &rec) < 0 ||
		    h.type != LC_RULES)
			continue;
		if (h.flags & LC_FIRST)
			rules_n = 0;
		if (rules_n + h.n > ARRAY_SIZE(rules_in))
			continue; /* more than a policy holds: not taken */
		memcpy(&rules_in[rules_n], rec, h.n * sizeof(struct lc_rule));
		rules_n += h.n;
		if (!(h.flags & LC_LAST))
			continue;
		/* on failure, no rules: no local destination passes */
		lc_rules_to_policy(rules_in, rules_n, &rules);
		if (!rules_seen) {
			/* the first rules are answered with the host's
			 * addresses: the sentry waits for them to start */
			rules_seen = true;
			hosts_due_ms = now_ms();
		}
	}
}

/* Addresses, routes or rules changed. */
static void nl_read(void)
{
	int m = hostaddr_events(nl_events);

	if (m < 0) {
		/* the subscription is gone: no cache from now on, and the
		 * sentry's list is what it is */
		events_lost = true;
		return;
	}
	if (m & HOSTADDR_ROUTES)
		lcache_gen++;
	if ((m & HOSTADDR_ADDRS) && hosts_due_ms < 0 && rules_seen)
		hosts_due_ms = now_ms() + HOSTS_DELAY_MS;
}

/* The sentry hears of a refusal (at most one a second for one
 * destination: a guest in a loop must not flood it). */
static void tell_refused(const struct lc_dest *d)
{
	static struct {
		struct lc_dest d;
		int64_t at;
	} last[16];
	static unsigned next;
	uint8_t msg[64];
	int64_t now = now_ms();
	long len;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(last); i++)
		if (!memcmp(&last[i].d, d, sizeof(*d)) &&
		    now - last[i].at < 1000)
			return;
	last[next % ARRAY_SIZE(last)].d = *d;
	last[next % ARRAY_SIZE(last)].at = now;
	next++;
	len = lc_put_refused(d, msg, sizeof(msg));
	if (len > 0)
		send(ctl_fd, msg, (size_t)len, MSG_DONTWAIT | MSG_NOSIGNAL);
}

/* May this frame from the sandbox go to slirp? */
static bool frame_ok(const uint8_t *f, size_t len)
{
	static uint8_t rst[128];
	struct lc_dest d;
	size_t n;

	if (!lc_frame_dest(f, len, &d) || !is_local(&d) ||
	    lc_rules_allow(&rules, &d))
		return true;
	n = lc_build_rst(f, len, rst, sizeof(rst));
	if (n)
		send_packet(rst, n, NULL);
	d.sport = 0; /* one line per destination, not per socket */
	tell_refused(&d);
	return false;
}

static int confine(uid_t uid, gid_t gid)
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

	/* The sandbox's helper uid (sentry/hostids.h): no capability, no
	 * host file of its own, and neither the guests' uid nor another
	 * sandbox's. Without root it is the caller's own: nothing to do. */
	if ((uid != geteuid() || gid != getegid()) &&
	    (setgroups(0, NULL) < 0 || setresgid(gid, gid, gid) < 0 ||
	     setresuid(uid, uid, uid) < 0))
		return -errno;
	/* setresuid cleared the parent-death signal: again */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() == 1)
		return -ESRCH;
	/* and set the dumpable flag to fs.suid_dumpable: not dumpable, so
	 * that nothing without CAP_SYS_PTRACE (another process of the
	 * caller's uid, without root) reads or writes its memory or fds */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
		return -errno;
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
	unsigned as_uid = 0, as_gid = 0;
	bool as_set = false;
	Slirp *sl;
	int i;

	for (i = 1; i + 1 < argc; i++) {
		if (!strcmp(argv[i], "--fd"))
			link_fd = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--ctl"))
			ctl_fd = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--as") &&
			 sscanf(argv[i + 1], "%u:%u%c", &as_uid, &as_gid,
				&(char){ 0 }) == 2)
			as_set = true;
	}
	/* the sentry makes them fds 3 and 4, and names ids that are not
	 * root's (nor -1, which setresuid reads as "unchanged") */
	if (link_fd != 3 || ctl_fd != 4 || !as_set || !as_uid || !as_gid ||
	    as_uid == (unsigned)-1 || as_gid == (unsigned)-1)
		return 2;
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() == 1)
		return 1; /* the sentry is already gone */
	if (close_range(0, 2, 0) < 0 || close_range(5, ~0u, 0) < 0)
		return 1;
	/* this namespace's kernel, asked before the filter forbids
	 * netlink sockets; without them no flow is checked, so none runs */
	nl_fd = hostaddr_socket(false);
	nl_events = hostaddr_socket(true);
	if (nl_fd < 0 || nl_events < 0)
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
	if (confine(as_uid, as_gid) < 0)
		return 1;
	for (;;) {
		uint32_t timeout = 1000;
		int64_t now;
		int n, ctl_idx, nl_idx;

		npfds = 0;
		add_poll(link_fd, SLIRP_POLL_IN, NULL);
		ctl_idx = add_poll(ctl_fd, SLIRP_POLL_IN, NULL);
		nl_idx = add_poll(nl_events, SLIRP_POLL_IN, NULL);
		slirp_pollfds_fill(sl, &timeout, add_poll, NULL);
		if (hosts_due_ms >= 0) {
			int64_t left = hosts_due_ms - now_ms();

			timeout = left <= 0		   ? 0 :
				  (uint64_t)left < timeout ? (uint32_t)left :
							     timeout;
		}
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
		if (pfds[0].revents & (POLLHUP | POLLERR) ||
		    pfds[ctl_idx].revents & (POLLHUP | POLLERR))
			return 0; /* the sentry closed the link */
		/* Changes of the host's addresses first, then the policy's
		 * rules: a frame is judged by what was true when it came. */
		if (pfds[nl_idx].revents & POLLIN)
			nl_read();
		if (pfds[ctl_idx].revents & POLLIN)
			ctl_read();
		if (pfds[0].revents & POLLIN) {
			for (i = 0; i < 256; i++) {
				ssize_t len = recv(link_fd, frame,
						   sizeof(frame), MSG_DONTWAIT);
				if (len <= 0)
					break;
				if (frame_ok(frame, (size_t)len))
					slirp_input(sl, frame, (int)len);
			}
		}
		if (hosts_due_ms >= 0 && now_ms() >= hosts_due_ms)
			hosts_due_ms = send_hosts() ? -1 : now_ms() + 50;
		slirp_pollfds_poll(sl, n < 0, get_revents, NULL);
		now = clock_ns(NULL) / 1000000;
		for (i = 0; i < TIMERS_MAX; i++)
			if (timers[i].used && timers[i].when_ms >= 0 &&
			    timers[i].when_ms <= now) {
				timers[i].when_ms = -1;
				timers[i].cb(timers[i].opaque);
			}
	}
}
