/* broker/broker.c: `moat broker`: its start, its confinement, the link to
 * the sentry, and one thread per brokered flow (broker.h).
 *
 * The broker parses what the guest sends over TLS and HTTP, so it is
 * built to be the one process worth attacking and the least worth
 * having: it holds the values and the CA key, but it reaches nothing.
 * Once confined it has no network (it never makes a socket; the
 * upstream side of a flow is a socket the sentry gives it, relayed
 * through the sentry's netstack and its egress checks), no file (it
 * opens nothing after the start), runs as the sandbox's helper uid and
 * is not dumpable.
 */
#include "broker/broker.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <malloc.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>

#include <openssl/err.h>

#include "broker/http1.h"
#include "broker/http2.h"
#include "broker/msg.h"
#include "broker/store.h"
#include "broker/tls.h"
#include "policy/credentials.h"
#include "policy/policy.h"
#include "prot/broker.h"

#define FLOW_BUF_MAX (256 * 1024) /* queued bytes per direction */
#define FLOW_READ 16384		  /* one read, one TLS record */
#define HANDSHAKE_MS 30000	  /* a TLS handshake's bound */
#define FLOW_STACK (512 * 1024)

struct broker {
	int ctl;
	pthread_mutex_t send_lock; /* one message at a time on ctl */
	struct cred_policy pol;
	struct store store;
	struct brk_tls tls;
	atomic_int nflows;
};

static struct broker B = { .ctl = -1, .send_lock = PTHREAD_MUTEX_INITIALIZER };

/* ---- the link ----------------------------------------------------------- */

static int send_msg(enum brk_type type, const void *a, size_t alen,
		    const void *b, size_t blen)
{
	struct brk_hdr h = { .type = type, .len = (uint32_t)(alen + blen) };
	struct iovec iov[3] = { { &h, sizeof(h) },
				{ (void *)a, alen },
				{ (void *)b, blen } };
	ssize_t n;

	if (sizeof(h) + alen + blen > BRK_MSG_MAX)
		return -EMSGSIZE;
	pthread_mutex_lock(&B.send_lock);
	n = send_with_fds(B.ctl, iov, 3, NULL, 0);
	pthread_mutex_unlock(&B.send_lock);
	return n < 0 ? (int)n : 0;
}

/* One message: its payload into buf (BRK_MSG_MAX), its type, and up to
 * maxfds fds. The length, 0 at EOF, or -EPROTO for a message that is not
 * one (cut, or its header's length wrong, or too many fds: all of them
 * closed). */
static ssize_t recv_msg(int sock, uint8_t *buf, uint32_t *type, int *fds,
			int maxfds, int *nfds)
{
	union {
		char b[CMSG_SPACE(CRED_MAX * sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = { buf, BRK_MSG_MAX };
	struct msghdr mh = { .msg_iov = &iov,
			     .msg_iovlen = 1,
			     .msg_control = u.b,
			     .msg_controllen = sizeof(u.b) };
	struct brk_hdr h;
	struct cmsghdr *cm;
	ssize_t n;
	bool bad = false;

	*nfds = 0;
	do
		n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n <= 0)
		return n < 0 ? -errno : 0;
	for (cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm)) {
		size_t k;

		if (cm->cmsg_level != SOL_SOCKET ||
		    cm->cmsg_type != SCM_RIGHTS) {
			bad = true;
			continue;
		}
		k = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < k; i++) {
			int fd;

			memcpy(&fd, CMSG_DATA(cm) + i * sizeof(int),
			       sizeof(int));
			if (*nfds < maxfds)
				fds[(*nfds)++] = fd;
			else {
				close(fd);
				bad = true;
			}
		}
	}
	if ((size_t)n < sizeof(h) || (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)))
		bad = true;
	if (!bad) {
		memcpy(&h, buf, sizeof(h));
		if (h.len != (size_t)n - sizeof(h))
			bad = true;
		*type = h.type;
		memmove(buf, buf + sizeof(h), (size_t)n - sizeof(h));
	}
	if (bad) {
		for (int i = 0; i < *nfds; i++)
			close(fds[i]);
		*nfds = 0;
		return -EPROTO;
	}
	return (ssize_t)(n - (ssize_t)sizeof(h));
}

static __attribute__((noreturn)) void fail(const char *msg)
{
	send_msg(BRK_FAIL, msg, strlen(msg) + 1, NULL, 0);
	_exit(1);
}

/* ---- audit -------------------------------------------------------------- */

struct flow {
	struct brk_flow f;
	const char *names[BRK_NAMES_MAX];
	char namebuf[BRK_NAMES_BYTES];
	char dest[64];
	struct h1_who who;
	struct h1_config cfg;
	struct h1_conn *h1;
	struct h2_conn *h2; /* instead of h1: both sides chose h2 */
	struct bbuf up, down;
	int gfd, ufd;
	SSL *gs, *us;
	size_t from_guest; /* bytes of the guest's, after any handshake */
	atomic_bool ended; /* by a revoke (flows_end) */
	struct flow *prev, *next; /* the open flows (flows_lock) */
	bool listed;
};

/* The open flows, so that a revoke can end those of the secret's hosts. */
static pthread_mutex_t flows_lock = PTHREAD_MUTEX_INITIALIZER;
static struct flow *flows;

static void flow_list(struct flow *fl)
{
	pthread_mutex_lock(&flows_lock);
	fl->next = flows;
	if (flows)
		flows->prev = fl;
	flows = fl;
	fl->listed = true;
	pthread_mutex_unlock(&flows_lock);
}

static void flow_unlist(struct flow *fl)
{
	if (!fl->listed)
		return;
	pthread_mutex_lock(&flows_lock);
	if (fl->prev)
		fl->prev->next = fl->next;
	else
		flows = fl->next;
	if (fl->next)
		fl->next->prev = fl->prev;
	fl->listed = false;
	pthread_mutex_unlock(&flows_lock);
}

/* Is fl to one of c's hosts (its SNI; for plain HTTP, a name its
 * address was resolved from)? */
static bool flow_of(const struct flow *fl, const struct credential *c)
{
	for (size_t h = 0; h < c->nhosts; h++) {
		if (fl->f.kind == BRK_KIND_TLS) {
			if (cred_host_match(c->hosts[h], fl->f.sni))
				return true;
			continue;
		}
		for (size_t i = 0; i < fl->f.nnames; i++)
			if (cred_host_match(c->hosts[h], fl->names[i]))
				return true;
	}
	return false;
}

/* End c's open flows: their sockets are shut both ways, which wakes
 * their threads with an end on each side; each thread then closes its
 * own. (The fds stay the flow's while it is listed: flow_free unlists
 * before it closes.) The number ended. */
static unsigned flows_end(const struct credential *c)
{
	unsigned n = 0;

	pthread_mutex_lock(&flows_lock);
	for (struct flow *fl = flows; fl; fl = fl->next)
		if (flow_of(fl, c)) {
			atomic_store(&fl->ended, true);
			shutdown(fl->gfd, SHUT_RDWR);
			shutdown(fl->ufd, SHUT_RDWR);
			n++;
		}
	pthread_mutex_unlock(&flows_lock);
	return n;
}

static void flow_dest(const struct brk_flow *f, char *out, size_t cap)
{
	char a[INET6_ADDRSTRLEN] = "?";

	inet_ntop(f->family, f->addr, a, sizeof(a));
	snprintf(out, cap, f->family == AF_INET6 ? "[%s]:%u" : "%s:%u", a,
		 f->port);
}

/* The flow's own members after the engine's (or the broker's), unless
 * the record has them already. */
static void audit(void *ctx, const char *members)
{
	const struct flow *fl = ctx;
	char rec[4096], q[600];
	size_t n;

	n = (size_t)snprintf(rec, sizeof(rec), "%s", members);
	if (fl && !strstr(members, "\"flow\":") && n < sizeof(rec))
		n += (size_t)snprintf(rec + n, sizeof(rec) - n,
				      ",\"flow\":%llu",
				      (unsigned long long)fl->f.id);
	if (fl && !strstr(members, "\"pid\":") && n < sizeof(rec))
		n += (size_t)snprintf(rec + n, sizeof(rec) - n, ",\"pid\":%d",
				      fl->f.pid);
	if (fl && !strstr(members, "\"exe\":") && n < sizeof(rec)) {
		json_quote(q, sizeof(q), fl->f.exe);
		n += (size_t)snprintf(rec + n, sizeof(rec) - n, ",\"exe\":%s",
				      q);
	}
	if (fl && !strstr(members, "\"dest\":") && n < sizeof(rec)) {
		json_quote(q, sizeof(q), fl->dest);
		n += (size_t)snprintf(rec + n, sizeof(rec) - n, ",\"dest\":%s",
				      q);
	}
	if (fl && fl->f.kind == BRK_KIND_TLS && !strstr(members, "\"sni\":") &&
	    n < sizeof(rec)) {
		json_quote(q, sizeof(q), fl->f.sni);
		n += (size_t)snprintf(rec + n, sizeof(rec) - n, ",\"sni\":%s",
				      q);
	}
	/* cut JSON is worse than a record without the flow's members */
	if (n >= sizeof(rec))
		send_msg(BRK_AUDIT, members, strlen(members) + 1, NULL, 0);
	else
		send_msg(BRK_AUDIT, rec, n + 1, NULL, 0);
}

static void audit_blocked(const struct flow *fl, const char *reason,
			  const char *detail)
{
	char m[1024], q[512];
	size_t n;

	n = (size_t)snprintf(m, sizeof(m),
			     "\"event\":\"credential\",\"verdict\":\"blocked\","
			     "\"reason\":\"%s\"",
			     reason);
	if (detail && n < sizeof(m)) {
		json_quote(q, sizeof(q), detail);
		snprintf(m + n, sizeof(m) - n, ",\"detail\":%s", q);
	}
	audit((void *)fl, m);
}

/* ---- one flow ----------------------------------------------------------- */

/* One side of a flow: a socket, and the TLS on it if any. */
struct side {
	int fd;
	SSL *ssl;
	short want; /* what the last blocked operation waits for */
	bool eof;   /* nothing more to read */
	bool shut;  /* our writing is over */
};

/* >0: bytes; 0: the end (for a read, also any failure: the side is
 * done either way); -EAGAIN: blocked (want says on what); -EIO: a write
 * failed. */
static ssize_t side_io(struct side *s, void *buf, size_t n, bool wr)
{
	size_t done = 0;
	int r;

	if (!s->ssl) {
		ssize_t k = wr ? send(s->fd, buf, n, MSG_NOSIGNAL) :
				 recv(s->fd, buf, n, 0);

		if (k >= 0)
			return k;
		if (errno == EAGAIN || errno == EINTR) {
			s->want |= wr ? POLLOUT : POLLIN;
			return -EAGAIN;
		}
		/* a read that fails (a reset) is that side's end */
		return wr ? -EIO : 0;
	}
	r = wr ? SSL_write_ex(s->ssl, buf, n, &done) :
		 SSL_read_ex(s->ssl, buf, n, &done);
	if (r > 0)
		return (ssize_t)done;
	switch (SSL_get_error(s->ssl, r)) {
	case SSL_ERROR_WANT_READ:
		s->want |= POLLIN;
		return -EAGAIN;
	case SSL_ERROR_WANT_WRITE:
		s->want |= POLLOUT;
		return -EAGAIN;
	case SSL_ERROR_ZERO_RETURN:
		return 0;
	default:
		ERR_clear_error();
		return wr ? -EIO : 0;
	}
}

static void side_shut(struct side *s)
{
	if (s->shut)
		return;
	s->shut = true;
	if (s->ssl && SSL_shutdown(s->ssl) < 0)
		ERR_clear_error();
	shutdown(s->fd, SHUT_WR);
}

/* End the guest's side after an answer of the broker's own (a 403, a
 * 502): what the guest sent meanwhile is read and dropped until it
 * closes too (at most 64 reads, half a second each), because a socket
 * closed with unread bytes resets its peer, and a reset may cost the
 * guest the answer it has not read yet. */
static void linger_close(struct side *g)
{
	uint8_t buf[4096];

	side_shut(g);
	for (int i = 0; i < 64; i++) {
		ssize_t r;

		g->want = 0;
		r = side_io(g, buf, sizeof(buf), false);
		if (r == 0 || r == -EIO)
			return;
		if (r == -EAGAIN &&
		    poll(&(struct pollfd){ .fd = g->fd, .events = g->want }, 1,
			 500) <= 0)
			return;
	}
}

static int handshake(struct side *s, bool server)
{
	struct timespec t0, t1;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		int r = server ? SSL_accept(s->ssl) : SSL_connect(s->ssl);
		struct pollfd p = { .fd = s->fd };
		long left;

		if (r == 1)
			return 0;
		switch (SSL_get_error(s->ssl, r)) {
		case SSL_ERROR_WANT_READ:
			p.events = POLLIN;
			break;
		case SSL_ERROR_WANT_WRITE:
			p.events = POLLOUT;
			break;
		default:
			ERR_clear_error();
			return -EIO;
		}
		clock_gettime(CLOCK_MONOTONIC, &t1);
		left = HANDSHAKE_MS - ((t1.tv_sec - t0.tv_sec) * 1000 +
				       (t1.tv_nsec - t0.tv_nsec) / 1000000);
		if (left <= 0 || poll(&p, 1, (int)left) == 0)
			return -ETIMEDOUT;
	}
}

/* What the engine said: go on, close after the guest's bytes, or pass
 * bytes through from now. -1: the flow ends now. */
static int engine_status(int st, bool *closing, bool *tunnel)
{
	if (st < 0)
		return -1;
	if (st == H1_CLOSE)
		*closing = true;
	else if (st == H1_TUNNEL)
		*tunnel = true;
	return 0;
}

/* The flow's engine: HTTP/2 when both sides chose it, else HTTP/1. */
static int eng_from_guest(struct flow *fl, const uint8_t *b, size_t n)
{
	return fl->h2 ? h2_from_guest(fl->h2, b, n, &fl->up, &fl->down) :
			h1_from_guest(fl->h1, b, n, &fl->up, &fl->down);
}

static int eng_from_upstream(struct flow *fl, const uint8_t *b, size_t n)
{
	return fl->h2 ? h2_from_upstream(fl->h2, b, n, &fl->up, &fl->down) :
			h1_from_upstream(fl->h1, b, n, &fl->down);
}

static int eng_guest_eof(struct flow *fl)
{
	return fl->h2 ? h2_guest_eof(fl->h2, &fl->up, &fl->down) :
			h1_guest_eof(fl->h1, &fl->up, &fl->down);
}

static int eng_upstream_eof(struct flow *fl)
{
	return fl->h2 ? h2_upstream_eof(fl->h2, &fl->up, &fl->down) :
			h1_upstream_eof(fl->h1, &fl->down);
}

/* Bytes both ways until both sides ended (or the engine closes the
 * flow). Each direction queues at most about FLOW_BUF_MAX: a side that
 * reads slowly stops the reading of the other, and only this flow. */
static void relay(struct flow *fl, struct side *g, struct side *u, bool tunnel)
{
	uint8_t buf[FLOW_READ];
	bool closing = false;

	for (;;) {
		bool progress;
		struct pollfd p[2];

		g->want = u->want = 0;
		do {
			ssize_t r;
			int st = H1_MORE;

			progress = false;
			if (!closing && !g->eof && fl->up.len < FLOW_BUF_MAX) {
				r = side_io(g, buf, sizeof(buf), false);
				if (r > 0)
					fl->from_guest += (size_t)r;
				if (r > 0)
					st = tunnel ? bbuf_put(&fl->up, buf,
							       (size_t)r) :
						      eng_from_guest(fl, buf,
								     (size_t)r);
				else if (r == 0) {
					g->eof = true;
					if (!tunnel)
						st = eng_guest_eof(fl);
				}
				if (r != -EAGAIN)
					progress = true;
				if (engine_status(st, &closing, &tunnel) < 0)
					return;
			}
			st = H1_MORE;
			if (!closing && !u->eof &&
			    fl->down.len < FLOW_BUF_MAX) {
				r = side_io(u, buf, sizeof(buf), false);
				if (r > 0)
					st = tunnel ? bbuf_put(&fl->down, buf,
							       (size_t)r) :
						      eng_from_upstream(
							      fl, buf,
							      (size_t)r);
				else if (r == 0) {
					u->eof = true;
					if (!tunnel)
						st = eng_upstream_eof(fl);
				}
				if (r != -EAGAIN)
					progress = true;
				if (!tunnel && st == H1_TUNNEL) {
					/* the upgrade took: what the guest
					 * sent while it was pending goes up
					 * first (http1.h) */
					st = h1_from_guest(fl->h1, NULL, 0,
							   &fl->up, &fl->down);
				}
				if (engine_status(st, &closing, &tunnel) < 0)
					return;
			}
			if (!closing && fl->up.len && !u->shut) {
				r = side_io(u, fl->up.p, fl->up.len, true);
				if (r == -EIO)
					return;
				if (r > 0) {
					bbuf_consume(&fl->up, (size_t)r);
					progress = true;
				}
			}
			if (fl->down.len && !g->shut) {
				r = side_io(g, fl->down.p, fl->down.len, true);
				if (r == -EIO)
					return;
				if (r > 0) {
					bbuf_consume(&fl->down, (size_t)r);
					progress = true;
				}
			}
		} while (progress);

		if (closing && !fl->down.len) {
			linger_close(g);
			return;
		}
		/* an end passes on once what came before it is delivered */
		if (g->eof && !fl->up.len)
			side_shut(u);
		if (u->eof && !fl->down.len)
			side_shut(g);
		if (g->eof && u->eof && !fl->up.len && !fl->down.len)
			return;
		if (!g->want && !u->want)
			return; /* nothing left that could move */
		p[0] = (struct pollfd){ .fd = g->want ? g->fd : -1,
					.events = g->want };
		p[1] = (struct pollfd){ .fd = u->want ? u->fd : -1,
					.events = u->want };
		if (poll(p, 2, -1) < 0 && errno != EINTR)
			return;
	}
}

static bool flow_has_name(const struct flow *fl, const char *name)
{
	for (size_t i = 0; i < fl->f.nnames; i++)
		if (!strcasecmp(fl->names[i], name))
			return true;
	return false;
}

static void send_bad_gateway(struct side *g, const char *why)
{
	char msg[768];
	int n, body;
	char b[512];

	body = snprintf(b, sizeof(b), "moat: %s\n", why);
	if (body < 0 || (size_t)body >= sizeof(b))
		body = (int)strlen(b);
	n = snprintf(msg, sizeof(msg),
		     "HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/plain\r\n"
		     "Content-Length: %d\r\nConnection: close\r\n\r\n%s",
		     body, b);
	if (n > 0 && (size_t)n < sizeof(msg))
		for (int done = 0, tries = 0; done < n && tries < 100;
		     tries++) {
			ssize_t r;

			g->want = 0;
			r = side_io(g, msg + done, (size_t)(n - done), true);
			if (r > 0)
				done += (int)r;
			else if (r == -EAGAIN)
				poll(&(struct pollfd){ .fd = g->fd,
						       .events = g->want },
				     1, 1000);
			else
				break;
		}
}

/* Did ssl's handshake choose ALPN protocol p? */
static bool alpn_is(SSL *ssl, const char *p)
{
	const unsigned char *a;
	unsigned int al;

	SSL_get0_alpn_selected(ssl, &a, &al);
	return al == strlen(p) && !memcmp(a, p, al);
}

static void flow_run(struct flow *fl)
{
	struct side g = { .fd = fl->gfd }, u = { .fd = fl->ufd };
	const char *sni = fl->f.sni;
	bool tls = fl->f.kind == BRK_KIND_TLS;

	fcntl(fl->gfd, F_SETFL, fcntl(fl->gfd, F_GETFL) | O_NONBLOCK);
	fcntl(fl->ufd, F_SETFL, fcntl(fl->ufd, F_GETFL) | O_NONBLOCK);
	/* A TLS flow the broker has no business with (the sentry hands
	 * over only brokered names, so this is a second line: a name that
	 * is neither credentialed nor inspected) passes as it is, never
	 * terminated. */
	if (tls) {
		bool ours;

		/* `moat secret set` adds to B.pol under the store's lock */
		pthread_rwlock_rdlock(&B.store.lock);
		ours = *sni && cred_brokered(&B.pol, sni);
		pthread_rwlock_unlock(&B.store.lock);
		if (!ours) {
			relay(fl, &g, &u, true);
			return;
		}
	}
	/* The SNI must be a name the destination was resolved from: the
	 * guest picks the address and the name alike, and the value goes
	 * only to an address that its host's name leads to. */
	if (tls && !flow_has_name(fl, sni)) {
		audit_blocked(fl, "host-confusion", NULL);
		return;
	}
	fl->who = (struct h1_who){ .flow = fl->f.id,
				   .pid = fl->f.pid,
				   .exe = fl->f.exe,
				   .dest = fl->dest };
	fl->cfg = (struct h1_config){ .store = &B.store,
				      .tls = tls,
				      .host = tls ? sni : NULL,
				      .names = fl->names,
				      .nnames = fl->f.nnames,
				      .who = &fl->who,
				      .audit = audit,
				      .ctx = fl };
	if (tls) {
		/* Upstream first: its certificate decides whether the
		 * flow goes on, and what it speaks decides what the guest
		 * is offered. h2 is offered upstream only when the guest's
		 * ClientHello offers it, so that the guest can choose it
		 * too; the guest is offered h2 only when upstream chose
		 * it, so that both sides speak the same. */
		fl->us = brk_tls_client(&B.tls, fl->ufd, sni,
					fl->f.flags & BRK_FLOW_ALPN_H2);
		fl->gs = brk_tls_server(&B.tls, fl->gfd, sni);
		if (!fl->us || !fl->gs)
			return;
		u.ssl = fl->us;
		g.ssl = fl->gs;
		if (handshake(&u, false) < 0) {
			long v = SSL_get_verify_result(fl->us);

			if (v != X509_V_OK) {
				char why[400];

				snprintf(why, sizeof(why),
					 "the certificate of %s is not "
					 "trusted: %s",
					 sni, X509_verify_cert_error_string(v));
				audit_blocked(fl, "upstream-certificate",
					      X509_verify_cert_error_string(v));
				if (handshake(&g, true) == 0) {
					send_bad_gateway(&g, why);
					linger_close(&g);
				}
			}
			return;
		}
		brk_tls_server_h2(fl->gs, alpn_is(fl->us, "h2"));
		if (handshake(&g, true) < 0) {
			if (brk_tls_sni_refused(fl->gs))
				audit_blocked(fl, "host-confusion",
					      "the ClientHello's name is not "
					      "the flow's");
			else
				/* a client that pins the upstream's key (or
				 * does not trust the sandbox CA) refuses the
				 * leaf: nothing of its request was sent */
				audit_blocked(fl, "guest-handshake",
					      "the client refused the "
					      "sandbox CA's certificate "
					      "(pinned, or not trusted)");
			return;
		}
		/* upstream chose h2 but the guest did not (its hello said
		 * otherwise to the sentry): they cannot be bridged */
		if (alpn_is(fl->us, "h2") != alpn_is(fl->gs, "h2")) {
			audit_blocked(fl, "alpn",
				      "upstream chose h2, the "
				      "guest did not");
			return;
		}
		if (alpn_is(fl->gs, "h2")) {
			fl->h2 = h2_new(&fl->cfg);
			if (!fl->h2)
				return;
			/* our SETTINGS go first, both ways */
			if (h2_from_guest(fl->h2, NULL, 0, &fl->up, &fl->down) <
			    0)
				return;
			relay(fl, &g, &u, false);
			if (!g.shut && SSL_shutdown(g.ssl) < 0)
				ERR_clear_error();
			return;
		}
	}
	fl->h1 = h1_new(&fl->cfg);
	if (!fl->h1)
		return;
	relay(fl, &g, &u, false);
	/* A TLS 1.3 client checks the certificate after its handshake: one
	 * that pins the upstream's key (or does not trust the sandbox CA)
	 * goes away then, before any request. */
	if (tls && !fl->from_guest && g.eof && !atomic_load(&fl->ended))
		audit_blocked(fl, "guest-handshake",
			      "the client closed the connection before any "
			      "request: it refused the sandbox CA's "
			      "certificate (pinned, or not trusted)");
	if (g.ssl && !g.shut && SSL_shutdown(g.ssl) < 0)
		ERR_clear_error();
}

static void flow_free(struct flow *fl)
{
	flow_unlist(fl);
	h1_free(fl->h1);
	h2_free(fl->h2);
	SSL_free(fl->gs);
	SSL_free(fl->us);
	close(fl->gfd);
	close(fl->ufd);
	bbuf_free(&fl->up);
	bbuf_free(&fl->down);
	free(fl);
}

static void *flow_thread(void *arg)
{
	struct flow *fl = arg;

	flow_run(fl);
	flow_free(fl);
	ERR_clear_error();
	atomic_fetch_sub(&B.nflows, 1);
	return NULL;
}

/* A BRK_FLOW message, checked field by field (msg.h), and its fds. */
static int flow_parse(const uint8_t *p, size_t len, struct flow *fl)
{
	int type;
	socklen_t tl = sizeof(type);

	if (brk_flow_decode(p, len, &fl->f, fl->names, fl->namebuf) < 0)
		return -EPROTO;
	if (getsockopt(fl->gfd, SOL_SOCKET, SO_TYPE, &type, &tl) < 0 ||
	    type != SOCK_STREAM)
		return -EPROTO;
	tl = sizeof(type);
	if (getsockopt(fl->ufd, SOL_SOCKET, SO_TYPE, &type, &tl) < 0 ||
	    type != SOCK_STREAM)
		return -EPROTO;
	flow_dest(&fl->f, fl->dest, sizeof(fl->dest));
	return 0;
}

static int flow_start(const uint8_t *p, size_t len, const int *fds, int nfds)
{
	struct flow *fl;
	pthread_attr_t at;
	pthread_t th;
	int rc;

	if (nfds != 2) {
		for (int i = 0; i < nfds; i++)
			close(fds[i]);
		return -EPROTO;
	}
	fl = calloc(1, sizeof(*fl));
	if (!fl) {
		close(fds[0]);
		close(fds[1]);
		return 0; /* the flow fails, not the link */
	}
	fl->gfd = fds[0];
	fl->ufd = fds[1];
	if (flow_parse(p, len, fl) < 0) {
		flow_free(fl);
		return -EPROTO;
	}
	if (atomic_fetch_add(&B.nflows, 1) >= BRK_FLOWS_MAX) {
		atomic_fetch_sub(&B.nflows, 1);
		audit_blocked(fl, "too-many-flows", NULL);
		flow_free(fl);
		return 0;
	}
	flow_list(fl);
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&at, FLOW_STACK);
	rc = pthread_create(&th, &at, flow_thread, fl);
	pthread_attr_destroy(&at);
	if (rc) {
		atomic_fetch_sub(&B.nflows, 1);
		audit_blocked(fl, "too-many-flows", "no thread");
		flow_free(fl);
	}
	return 0;
}

/* ---- live control ------------------------------------------------------- */

static void secret_done(int32_t rc, const char *msg)
{
	send_msg(BRK_SECRET_DONE, &rc, sizeof(rc), msg, strlen(msg) + 1);
}

/* Why the store refused a value (store_rotate_fd, store_add_fd). */
static const char *value_refusal(int rc)
{
	return rc == -E2BIG  ? "the value is too long" :
	       rc == -EINVAL ? "the value is empty or has a NUL or a line "
			       "break" :
	       rc == -ENOSPC ? "the sandbox holds as many secrets as it can" :
			       "the value could not be read";
}

/* A set's answer: "set", a NUL, secret i's placeholder, a NUL. */
static void set_done(size_t i)
{
	char reply[4 + CRED_PLACEHOLDER_MAX + 1];
	int32_t ok = 0;

	memcpy(reply, "set", 4);
	memcpy(reply + 4, B.store.v[i].placeholder, B.store.v[i].plen + 1);
	send_msg(BRK_SECRET_DONE, &ok, sizeof(ok), reply,
		 4 + B.store.v[i].plen + 1);
}

/* BRK_SECRET_SET: json is {"credentials": [one entry]} as the sentry
 * wrote it, fd the value's sealed memfd. The entry goes after the
 * others in B.pol (whose array was made CRED_MAX long at the start, so
 * that no entry a flow points at moves), and its secret into the store;
 * the answer carries its placeholder. */
static void secret_add(const char *name, const char *json, int fd)
{
	struct moat_policy mp = { 0 };
	struct moat_error err = { 0 };
	struct cred_policy all;
	struct credential *c;
	long i;
	int rc;

	if (policy_parse(json, strlen(json), "secret set", &mp, &err) < 0) {
		secret_done(-EINVAL, err.msg);
		goto out;
	}
	if (mp.cred.n != 1 || mp.cred.ninspect || mp.cred.npassthrough ||
	    strcmp(mp.cred.v[0].name, name)) {
		secret_done(-EPROTO, "not one credential of that name");
		goto out;
	}
	/* from here on, as it will be held: its value comes by fd */
	mp.cred.v[0].source = CRED_FROM_FD;
	mp.cred.v[0].fd = -1;
	i = store_find(&B.store, name);
	if (i >= 0) {
		/* The sentry sends a set only for a name its policy lacks,
		 * so one held here is a set whose answer came too late for
		 * it (5 s): the same credential again is that set retried,
		 * and gets the new value and the placeholder it has, so
		 * that the two sides agree again. Any other is refused. */
		struct cred_policy held = {
			.v = (struct credential *)B.store.v[i].cred, .n = 1
		};
		struct credential *c2 = &mp.cred.v[0];
		char *from = c2->from, *src = c2->src;
		bool same;

		/* where the value came from does not matter: it came by
		 * fd, and the retry may read it from elsewhere */
		c2->from = held.v->from;
		c2->src = held.v->src;
		same = cred_equal(&held, &mp.cred);
		c2->from = from;
		c2->src = src;
		if (!same) {
			secret_done(-EEXIST, "it exists, with other hosts or "
					     "locations: `moat secret "
					     "rotate` changes its value");
			goto out;
		}
		rc = store_rotate_fd(&B.store, (size_t)i, fd);
		if (rc < 0)
			secret_done(rc, value_refusal(rc));
		else
			set_done((size_t)i);
		goto out;
	}
	/* B.pol.v has room for store.cap entries and no more */
	if (B.pol.n >= B.store.cap) {
		secret_done(-ENOSPC, value_refusal(-ENOSPC));
		goto out;
	}
	/* The whole policy, the new one in, checked as at the start (a
	 * host that is passed through, above all). It is in B.pol.v[n]
	 * already, where no reader looks until n grows. */
	c = &B.pol.v[B.pol.n];
	*c = mp.cred.v[0]; /* its value: fd, read below, closed by the caller */
	all = B.pol;
	all.n++;
	if (cred_validate(&all, NULL, &err) < 0) {
		secret_done(-EINVAL, err.msg);
		goto out_entry;
	}
	i = store_add_fd(&B.store, c, fd);
	if (i < 0) {
		secret_done((int32_t)i, value_refusal((int)i));
		goto out_entry;
	}
	pthread_rwlock_wrlock(&B.store.lock);
	B.pol.n++;
	pthread_rwlock_unlock(&B.store.lock);
	memset(&mp.cred.v[0], 0, sizeof(mp.cred.v[0])); /* B.pol's now */
	set_done((size_t)i);
	goto out;
out_entry:
	memset(c, 0, sizeof(*c));
out:
	policy_free(&mp);
}

static int secret_op(const uint8_t *p, size_t len, const int *fds, int nfds)
{
	struct brk_secret op;
	const char *name, *json;
	long i;
	int rc;

	if (brk_secret_decode(p, len, &op, &name, &json) < 0)
		goto bad;
	switch (op.op) {
	case BRK_SECRET_ROTATE:
		if (nfds != 1)
			goto bad;
		i = store_find(&B.store, name);
		if (i < 0) {
			secret_done(-ENOENT, "no such secret");
		} else {
			rc = store_rotate_fd(&B.store, (size_t)i, fds[0]);
			secret_done(rc,
				    rc == 0 ? "rotated" : value_refusal(rc));
		}
		close(fds[0]);
		return 0;
	case BRK_SECRET_REVOKE:
		if (nfds != 0)
			goto bad;
		i = store_find(&B.store, name);
		if (i < 0) {
			secret_done(-ENOENT, "no such secret");
		} else {
			char m[64];

			store_revoke(&B.store, (size_t)i);
			snprintf(m, sizeof(m), "revoked; %u open flows closed",
				 flows_end(B.store.v[i].cred));
			secret_done(0, m);
		}
		return 0;
	case BRK_SECRET_SET:
		if (nfds != 1)
			goto bad;
		secret_add(name, json, fds[0]);
		close(fds[0]);
		return 0;
	default:
		goto bad;
	}
bad:
	for (int k = 0; k < nfds; k++)
		close(fds[k]);
	return -EPROTO;
}

/* ---- start and confinement ---------------------------------------------- */

/* The syscalls of a confined broker, and why. The table is the policy
 * (docs/credentials.md repeats it). No socket, connect, open or exec:
 * what it talks to arrives as fds from the sentry. */
enum brk_sys_arg {
	BSYS_ANY,
	BSYS_NOEXEC, /* arg2 (prot) without PROT_EXEC */
	BSYS_THREAD, /* clone: arg0 (flags) has CLONE_THREAD */
	BSYS_FL,     /* fcntl: F_GETFL or F_SETFL */
	BSYS_ENOSYS, /* fails with ENOSYS (glibc then uses clone) */
};

static const struct brk_sys {
	const char *name;
	enum brk_sys_arg arg;
	const char *why;
} brk_syscalls[] = {
	{ "read", BSYS_ANY, "flows (OpenSSL reads its sockets so)" },
	{ "write", BSYS_ANY, "flows (OpenSSL writes its sockets so)" },
	{ "recvfrom", BSYS_ANY, "flows without TLS" },
	{ "sendto", BSYS_ANY, "flows without TLS" },
	{ "recvmsg", BSYS_ANY, "the sentry's messages and fds" },
	{ "sendmsg", BSYS_ANY, "answers and audit records" },
	{ "getsockopt", BSYS_ANY, "a flow's fds are stream sockets" },
	{ "shutdown", BSYS_ANY, "one side of a flow ended" },
	{ "close", BSYS_ANY, "a flow ended" },
	{ "fcntl", BSYS_FL, "non-blocking flow sockets" },
	{ "poll", BSYS_ANY, "a flow's loop" },
	{ "ppoll", BSYS_ANY, "a flow's loop" },
	{ "mmap", BSYS_NOEXEC, "malloc, thread stacks" },
	{ "mprotect", BSYS_NOEXEC, "malloc, stack guards" },
	{ "munmap", BSYS_ANY, "malloc" },
	{ "mremap", BSYS_ANY, "malloc" },
	{ "madvise", BSYS_ANY, "malloc trimming, thread exit" },
	{ "brk", BSYS_ANY, "malloc" },
	{ "mlock", BSYS_ANY, "locked memory for values" },
	{ "futex", BSYS_ANY, "locks between flows" },
	{ "clone", BSYS_THREAD, "a thread per flow, never a process" },
	{ "clone3", BSYS_ENOSYS,
	  "its flags are in memory a filter can't read" },
	{ "set_robust_list", BSYS_ANY, "a new thread" },
	{ "rseq", BSYS_ANY, "a new thread" },
	{ "rt_sigprocmask", BSYS_ANY, "threads start with signals blocked" },
	{ "rt_sigreturn", BSYS_ANY, "return from a signal handler" },
	{ "restart_syscall", BSYS_ANY, "restart after a stop" },
	{ "sched_yield", BSYS_ANY, "lock spinning" },
	{ "getrandom", BSYS_ANY, "OpenSSL's random numbers" },
	{ "clock_gettime", BSYS_ANY, "handshake bounds (vDSO fallback)" },
	{ "gettid", BSYS_ANY, "OpenSSL's thread ids" },
	{ "getpid", BSYS_ANY, "OpenSSL's fork check" },
	{ "exit", BSYS_ANY, "a flow's thread ends" },
	{ "exit_group", BSYS_ANY, "the end" },
#if defined(__SANITIZE_ADDRESS__)
	/* Test builds only: the ASan runtime's own calls, at a thread's
	 * start and end. */
	{ "sigaltstack", BSYS_ANY, "ASan runtime (sanitizer builds only)" },
	{ "sched_getaffinity", BSYS_ANY,
	  "ASan runtime (sanitizer builds only)" },
#endif
};

static int brk_seccomp(void)
{
	scmp_filter_ctx ctx;
	int rc = 0;

	/* Kill, not EPERM: a broker making any other call is compromised
	 * or broken, and must not keep holding the values. The kernel logs
	 * the kill (seccomp's actions_logged has kill_process). */
	ctx = seccomp_init(SCMP_ACT_KILL_PROCESS);
	if (!ctx)
		return -ENOMEM;
	for (size_t i = 0; i < ARRAY_SIZE(brk_syscalls) && rc == 0; i++) {
		const struct brk_sys *s = &brk_syscalls[i];
		int nr = seccomp_syscall_resolve_name(s->name);

		if (nr == __NR_SCMP_ERROR) {
			rc = -EINVAL;
			break;
		}
		switch (s->arg) {
		case BSYS_ANY:
			rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 0);
			break;
		case BSYS_NOEXEC:
			rc = seccomp_rule_add(
				ctx, SCMP_ACT_ALLOW, nr, 1,
				(struct scmp_arg_cmp){ .arg = 2,
						       .op = SCMP_CMP_MASKED_EQ,
						       .datum_a = PROT_EXEC,
						       .datum_b = 0 });
			break;
		case BSYS_THREAD:
			rc = seccomp_rule_add(
				ctx, SCMP_ACT_ALLOW, nr, 1,
				(struct scmp_arg_cmp){ .arg = 0,
						       .op = SCMP_CMP_MASKED_EQ,
						       .datum_a = CLONE_THREAD,
						       .datum_b =
							       CLONE_THREAD });
			break;
		case BSYS_FL:
			rc = seccomp_rule_add(
				ctx, SCMP_ACT_ALLOW, nr, 1,
				(struct scmp_arg_cmp){ .arg = 1,
						       .op = SCMP_CMP_EQ,
						       .datum_a = F_GETFL,
						       .datum_b = 0 });
			if (rc == 0)
				rc = seccomp_rule_add(
					ctx, SCMP_ACT_ALLOW, nr, 1,
					(struct scmp_arg_cmp){
						.arg = 1,
						.op = SCMP_CMP_EQ,
						.datum_a = F_SETFL,
						.datum_b = 0 });
			break;
		case BSYS_ENOSYS:
			rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), nr,
					      0);
			break;
		}
	}
	if (rc == 0)
		rc = seccomp_load(ctx);
	seccomp_release(ctx);
	return rc;
}

static void *nothing(void *arg)
{
	return arg;
}

/* Runs after every file is read (values, roots, --upstream-ca) and the
 * values are in locked memory, before the first flow. */
static int confine(uid_t uid, gid_t gid)
{
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);

	/* The sandbox's helper uid: no capability, no host file of its
	 * own. Without root it is the caller's own: nothing to change. */
	if ((uid != geteuid() || gid != getegid()) &&
	    (setgroups(0, NULL) < 0 || setresgid(gid, gid, gid) < 0 ||
	     setresuid(uid, uid, uid) < 0))
		return -errno;
	/* setresuid cleared the parent-death signal: again */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() == 1)
		return -ESRCH;
	/* Not dumpable: nothing without CAP_SYS_PTRACE reads its memory
	 * or its fds through /proc or ptrace, whatever uid it runs as. */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0 ||
	    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -errno;
	/* glibc installs its handlers for thread cancellation at the first
	 * pthread_create: a thread now, so that the filter need not allow
	 * rt_sigaction for the first flow. */
	{
		pthread_t th;

		if (pthread_create(&th, NULL, nothing, NULL) ||
		    pthread_join(th, NULL))
			return -EAGAIN;
	}
	/* One malloc arena for every thread: glibc's per-thread arenas
	 * open files under the filter (/sys for the CPU count when threads
	 * want more arenas, /proc/sys/vm/overcommit_memory when one
	 * shrinks). The main arena grows with brk and mmap alone. (A
	 * sanitizer's malloc has no arenas and refuses.) */
	mallopt(M_ARENA_MAX, 1);
	/* stdio on /dev/null: fds 0-2 would otherwise be reused by flows,
	 * and a stray message to stderr would go to a guest. */
	if (null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 ||
	    dup2(null, 2) < 0)
		return -EBADF;
	if ((B.ctl > 3 && close_range(3, (unsigned)B.ctl - 1, 0) < 0) ||
	    close_range((unsigned)B.ctl + 1, ~0u, 0) < 0)
		return -errno;
	return brk_seccomp();
}

/* BRK_CONFIG: the credentials part of the policy as policy_parse reads
 * it, a NUL, and the --upstream-ca path or nothing; one fd per fd:
 * source, in order. */
static int config(const uint8_t *p, size_t len, const int *fds, int nfds,
		  char **upstream_ca, struct moat_error *err)
{
	struct moat_policy mp = { 0 };
	char ca[PATH_MAX];
	size_t jlen, k = 0;

	*upstream_ca = NULL;
	if (brk_config_split(p, len, &jlen, ca, sizeof(ca)) < 0)
		return moat_error_input(err, EPROTO,
					"broker: bad config message");
	if (*ca) {
		*upstream_ca = strdup(ca);
		if (!*upstream_ca)
			return moat_error_set(err, ENOMEM, "broker");
	}
	if (policy_parse((const char *)p, jlen, "broker config", &mp, err) < 0)
		return -EINVAL;
	B.pol = mp.cred;
	memset(&mp.cred, 0, sizeof(mp.cred));
	policy_free(&mp);
	/* Room for every credential it may ever hold, so that one added
	 * live (secret_add) moves none that a flow points at. */
	{
		struct credential *v = calloc(CRED_MAX, sizeof(*v));

		if (!v || B.pol.n > CRED_MAX) {
			free(v);
			return moat_error_input(err, E2BIG,
						"broker: too many secrets");
		}
		if (B.pol.n)
			memcpy(v, B.pol.v, B.pol.n * sizeof(*v));
		free(B.pol.v);
		B.pol.v = v;
	}
	for (size_t i = 0; i < B.pol.n; i++)
		if (B.pol.v[i].source == CRED_FROM_FD) {
			if (k == (size_t)nfds)
				return moat_error_input(
					err, EPROTO,
					"broker: secret %s: no fd was given",
					B.pol.v[i].name);
			B.pol.v[i].fd = fds[k++];
		}
	if (k != (size_t)nfds)
		return moat_error_input(err, EPROTO,
					"broker: more fds than fd: secrets");
	return 0;
}

int broker_main(int argc, char **argv)
{
	static uint8_t msg[BRK_MSG_MAX];
	struct moat_error err = { 0 };
	unsigned as_uid = 0, as_gid = 0;
	bool as_set = false, as_late = false;
	char id[64] = "";
	char *upstream_ca = NULL;
	int fds[CRED_MAX], nfds;
	uint32_t type = 0;
	ssize_t n;
	int rc;

	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--ctl"))
			B.ctl = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--as") &&
			 !strcmp(argv[i + 1], "late"))
			as_late = true;
		else if (!strcmp(argv[i], "--as") &&
			 sscanf(argv[i + 1], "%u:%u%c", &as_uid, &as_gid,
				&(char){ 0 }) == 2)
			as_set = true;
		else if (!strcmp(argv[i], "--id"))
			snprintf(id, sizeof(id), "%.40s", argv[i + 1]);
		else
			return 2;
	}
	if (B.ctl < 3 || (!as_set && !as_late))
		return 2;
	/* `--as late`: started before the sandbox's ids were known (before
	 * the sentry forked anything, so that no copy of an env: source is
	 * left in another process); they come first, as BRK_IDS. */
	if (as_late) {
		n = recv_msg(B.ctl, msg, &type, fds, CRED_MAX, &nfds);
		for (int i = 0; i < (n < 0 ? 0 : nfds); i++)
			close(fds[i]);
		if (n < 0 || type != BRK_IDS || nfds != 0 ||
		    memchr(msg, 0, (size_t)n) == NULL ||
		    sscanf((char *)msg, "%u:%u%c", &as_uid, &as_gid,
			   &(char){ 0 }) != 2)
			fail("broker: the first message is not BRK_IDS");
	}
	/* ids that are not root's (nor -1, "unchanged" to setresuid) */
	if (!as_uid || !as_gid || as_uid == (unsigned)-1 ||
	    as_gid == (unsigned)-1)
		return 2;
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() == 1)
		return 1;
	/* a peer gone mid-write is an error to see, not a signal to die of */
	signal(SIGPIPE, SIG_IGN);
	if (!*id) {
		uint8_t r[4];

		if (getrandom(r, sizeof(r), 0) != sizeof(r))
			return 1;
		snprintf(id, sizeof(id), "%02x%02x%02x%02x", r[0], r[1], r[2],
			 r[3]);
	}

	n = recv_msg(B.ctl, msg, &type, fds, CRED_MAX, &nfds);
	if (n < 0 || type != BRK_CONFIG)
		fail("broker: the first message is not BRK_CONFIG");
	rc = config(msg, (size_t)n, fds, nfds, &upstream_ca, &err);
	if (rc == 0)
		rc = store_init(&B.store, &B.pol, &err);
	for (int i = 0; i < nfds; i++)
		close(fds[i]);
	if (rc < 0)
		fail(err.msg);
	if (brk_tls_init(&B.tls, id, NULL, upstream_ca, &err) < 0)
		fail(err.msg);
	free(upstream_ca);
	rc = confine(as_uid, as_gid);
	if (rc < 0) {
		snprintf(err.msg, sizeof(err.msg), "broker: confine: %s",
			 strerror(-rc));
		fail(err.msg);
	}

	if (send_msg(BRK_CA, B.tls.ca_pem, strlen(B.tls.ca_pem), NULL, 0) < 0)
		return 1;
	for (size_t i = 0; i < B.store.n; i++) {
		const struct secret *s = &B.store.v[i];

		if (send_msg(BRK_PLACEHOLDER, s->cred->name,
			     strlen(s->cred->name) + 1, s->placeholder,
			     s->plen + 1) < 0)
			return 1;
	}
	if (send_msg(BRK_READY, NULL, 0, NULL, 0) < 0)
		return 1;

	/* The sentry's messages until it is gone. A message that is not
	 * one ends the link: whoever sent it is not the sentry we know. */
	for (;;) {
		n = recv_msg(B.ctl, msg, &type, fds, 4, &nfds);
		/* ECONNRESET: the sentry closed with our audit records
		 * unread, which is an end like any other */
		if (n <= 0)
			_exit(n == 0 || n == -ECONNRESET ? 0 : 1);
		switch (type) {
		case BRK_FLOW:
			rc = flow_start(msg, (size_t)n, fds, nfds);
			break;
		case BRK_SECRET:
			rc = secret_op(msg, (size_t)n, fds, nfds);
			break;
		default:
			for (int i = 0; i < nfds; i++)
				close(fds[i]);
			rc = -EPROTO;
			break;
		}
		if (rc < 0)
			_exit(1);
	}
}
