/* Messages that carry few or no bytes still cost their socket: Linux
 * charges each one's whole skb, so a nonblocking send gets EAGAIN (a UDP
 * receiver drops, a netlink socket overruns) after a few hundred, where
 * the sentry once counted bytes only and queued millions, ~200 bytes of
 * its own heap each. Every queue is filled at once and held while the
 * test reads the sentry's peak RSS: "queues full" is printed, then the
 * program waits for a line on stdin (30 s at most) and reads all back.
 * Counts are printed in buckets, the same natively and under moat on any
 * kernel whose skb sizes are near Linux 6.x's. */
#include <errno.h>
#include <netinet/in.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define CAP 100000L /* sends per queue: ~20 MB of sentry heap before */
#define FEW 1024    /* what "a few hundred" may be */

struct queue {
	const char *what;
	int tx, rx;
	int type;
	size_t len; /* bytes a send */
	long sent;
	int err;
};

static void fill(struct queue *q)
{
	static const char zeros[1];

	for (q->sent = 0; q->sent < CAP; q->sent++)
		if (send(q->tx, zeros, q->len, MSG_DONTWAIT) < 0) {
			q->err = errno;
			break;
		}
}

/* Read fd dry: the messages (and *bytes) read, *overrun if a recv
 * failed with ENOBUFS. */
static long drain(int fd, long *bytes, bool *overrun)
{
	char buf[65536];
	long n = 0, r;

	*bytes = 0;
	*overrun = false;
	for (;;) {
		r = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (r < 0 && errno == ENOBUFS) {
			*overrun = true;
			continue;
		}
		if (r < 0)
			return n;
		n++;
		*bytes += r;
	}
}

static void pair(struct queue *q, int type)
{
	int sv[2];

	if (socketpair(AF_UNIX, type, 0, sv) < 0)
		perror("socketpair");
	q->tx = sv[0];
	q->rx = sv[1];
	q->type = type;
}

static void udp(struct queue *q)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t al = sizeof(a);

	q->rx = socket(AF_INET, SOCK_DGRAM, 0);
	q->tx = socket(AF_INET, SOCK_DGRAM, 0);
	if (bind(q->rx, (struct sockaddr *)&a, al) < 0 ||
	    getsockname(q->rx, (struct sockaddr *)&a, &al) < 0 ||
	    connect(q->tx, (struct sockaddr *)&a, al) < 0)
		perror("udp");
}

static void tcp(struct queue *q)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t al = sizeof(a);
	int l = socket(AF_INET, SOCK_STREAM, 0);

	q->tx = socket(AF_INET, SOCK_STREAM, 0);
	if (bind(l, (struct sockaddr *)&a, al) < 0 || listen(l, 1) < 0 ||
	    getsockname(l, (struct sockaddr *)&a, &al) < 0 ||
	    connect(q->tx, (struct sockaddr *)&a, al) < 0)
		perror("tcp");
	q->rx = accept(l, NULL, NULL);
	close(l);
}

/* RTM_GETLINK requests for lo, never read: each reply is queued until
 * the socket overruns (ENOBUFS at the next recv). */
static void netlink(struct queue *q)
{
	struct {
		struct nlmsghdr h;
		struct ifinfomsg i;
	} req = { .h = { .nlmsg_len = sizeof(req),
			 .nlmsg_type = RTM_GETLINK,
			 .nlmsg_flags = NLM_F_REQUEST },
		  .i = { .ifi_index = 1 } };
	long i;

	q->tx = q->rx = socket(AF_NETLINK, SOCK_RAW, NETLINK_ROUTE);
	for (i = 0; i < 5000; i++) /* natively 92 fit */
		if (send(q->tx, &req, sizeof(req), 0) < 0) {
			perror("netlink send");
			break;
		}
	q->sent = i;
}

int main(void)
{
	struct queue qs[] = {
		{ .what = "unix dgram, empty" },
		{ .what = "unix seqpacket, empty" },
		{ .what = "unix dgram, 1 byte" },
		{ .what = "unix stream, 1-byte writes" },
		{ .what = "udp, empty" },
		{ .what = "tcp, 1-byte writes" },
		{ .what = "netlink, unread replies" },
	};
	struct pollfd in = { 0, POLLIN, 0 };
	char line[4096];
	long got, bytes, r;
	bool overrun;
	size_t i;

	pair(&qs[0], SOCK_DGRAM);
	pair(&qs[1], SOCK_SEQPACKET);
	pair(&qs[2], SOCK_DGRAM);
	qs[2].len = 1;
	pair(&qs[3], SOCK_STREAM);
	qs[3].len = 1;
	udp(&qs[4]);
	tcp(&qs[5]);
	qs[5].len = 1;
	for (i = 0; i < 6; i++)
		fill(&qs[i]);
	netlink(&qs[6]);
	printf("queues full\n");
	fflush(stdout);
	if (poll(&in, 1, 30000) > 0 && read(0, line, sizeof(line)) < 0)
		perror("read");
	for (i = 0; i < 4; i++) {
		got = drain(qs[i].rx, &bytes, &overrun);
		printf("%s: %s, %s\n", qs[i].what,
		       qs[i].sent == CAP   ? "no EAGAIN" :
		       qs[i].err != EAGAIN ? strerror(qs[i].err) :
		       qs[i].sent <= FEW   ? "EAGAIN within 1024 sends" :
					     "EAGAIN after more than 1024",
		       (qs[i].type == SOCK_STREAM ? bytes : got) == qs[i].sent ?
			       "all read back" :
			       "some lost");
	}
	got = drain(qs[4].rx, &bytes, &overrun);
	printf("%s: %ld sent, %s queued\n", qs[4].what, qs[4].sent,
	       got > 0 && got <= FEW ? "at most 1024" : "more than 1024");
	/* TCP: every byte, however long Nagle holds some back */
	shutdown(qs[5].tx, SHUT_WR);
	for (bytes = 0; (r = read(qs[5].rx, line, sizeof(line))) > 0;)
		bytes += r;
	printf("%s: %ld accepted, %s\n", qs[5].what, qs[5].sent,
	       bytes == qs[5].sent ? "all read back" : "some lost");
	got = drain(qs[6].rx, &bytes, &overrun);
	printf("%s: %s, %s queued\n", qs[6].what,
	       overrun ? "ENOBUFS" : "no overrun",
	       got > 0 && got <= FEW ? "at most 1024" : "more than 1024");
	return 0;
}
