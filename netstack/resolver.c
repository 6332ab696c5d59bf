/* netstack/resolver.c: the sentry's DNS resolver (see resolver.h). */
#include "netstack/resolver.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <time.h>

#include <lwip/ip_addr.h>
#include <lwip/pbuf.h>
#include <lwip/udp.h>

#include "lib/util.h"
#include "netstack/dns.h"
#include "netstack/flow.h"
#include "netstack/netpol.h"
#include "netstack/netstack.h"

#define CACHE_MAX RESOLVER_CACHE_MAX
#define PENDING_MAX 256	 /* upstream queries in flight */
#define WAITERS_MAX 1024 /* guest queries waiting for them */
#define TTL_MIN 5	 /* seconds: a 0 TTL still lets the connect follow */
#define TTL_MAX 86400	 /* a day */

struct cached {
	int family;
	uint8_t addr[16];
	char name[DNS_TEXT_MAX + 1];
	int64_t expires;
	/* a deny rule names it: kept until its TTL ends, never evicted for
	 * another, so that no flood of other names hides it from the deny */
	bool pinned;
};

/* A guest query waiting for the answer to an upstream one. */
struct waiter {
	struct waiter *next;
	void *owner;	    /* the guest socket it goes back to */
	struct dns_query q; /* its id, and its question as it asked it */
};

struct pending {
	bool used;
	/* our query's id, and the first guest query it was asked for */
	struct resolver_ask ask;
	struct waiter *waiters; /* every guest query it answers */
	int64_t deadline;
	/* its own socket: a fresh port for each query, so a spoofed reply
	 * must guess the port as well as the id */
	struct udp_pcb *pcb;
	struct flow_key flow;
};

static struct cached cache[CACHE_MAX];
static struct pending pending[PENDING_MAX];
static struct waiter waiters[WAITERS_MAX], *free_waiters;
static resolver_deliver_fn deliver;
static bool have_upstream;
static ip_addr_t upstream;

static int64_t now_mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* 16 bits no one outside can predict, for an upstream query's id and its
 * source port: a spoofed answer must guess both (with a clock-seeded PRNG,
 * an observer of a few ids could compute the next). getrandom is in the
 * sentry's seccomp filter; -1 if it fails (the query is not sent). */
static int random16(uint16_t *out)
{
	if (getrandom(out, sizeof(*out), 0) != (ssize_t)sizeof(*out))
		return -1;
	return 0;
}

void resolver_set_deliver(resolver_deliver_fn fn)
{
	deliver = fn;
}

int resolver_set_upstream(const char *addr)
{
	ip4_addr_t a;
	u32_t h;

	if (!ip4addr_aton(addr, &a))
		return -EINVAL;
	/* the host's own loopback is out of the link's reach (and lwIP
	 * must never be given a loopback destination) */
	h = lwip_ntohl(a.addr);
	if ((h >> 24) == 127 || (h >> 24) == 0)
		return -EADDRNOTAVAIL;
	ip_addr_copy_from_ip4(upstream, a);
	have_upstream = true;
	return 0;
}

bool resolver_upstream(uint8_t out[4])
{
	if (!have_upstream)
		return false;
	memcpy(out, &ip_2_ip4(&upstream)->addr, 4);
	return true;
}

int resolver_upstream_from(const char *path, char out[16])
{
	char line[256], addr[64];
	struct in_addr a;
	FILE *f = fopen(path, "re");

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, " nameserver %63s", addr) == 1 &&
		    inet_pton(AF_INET, addr, &a) == 1) {
			inet_ntop(AF_INET, &a, out, 16);
			fclose(f);
			return 0;
		}
	}
	fclose(f);
	return -ENOENT;
}

/* ---- the name cache ---------------------------------------------------------- */

/* An IPv4-mapped IPv6 address is its IPv4 one: the form connect()
 * looks it up in (netpol_check), and the one the policy decides. */
static int addr_canon(int family, const uint8_t *in, uint8_t out[16])
{
	static const uint8_t mapped[12] = { [10] = 0xff, [11] = 0xff };

	memset(out, 0, 16);
	if (family == AF_INET6 && !memcmp(in, mapped, 12)) {
		memcpy(out, in + 12, 4);
		return AF_INET;
	}
	memcpy(out, in, family == AF_INET ? 4 : 16);
	return family;
}

int resolver_cache_add(int family, const uint8_t *in, const char *name,
		       uint32_t ttl)
{
	size_t i, alen, slot = CACHE_MAX;
	int64_t now = now_mono(), oldest = INT64_MAX;
	uint8_t addr[16];

	family = addr_canon(family, in, addr);
	alen = family == AF_INET ? 4 : 16;
	if (ttl < TTL_MIN)
		ttl = TTL_MIN;
	if (ttl > TTL_MAX)
		ttl = TTL_MAX;
	for (i = 0; i < CACHE_MAX; i++) {
		struct cached *c = &cache[i];

		if (c->family == family && !memcmp(c->addr, addr, alen) &&
		    !strcasecmp(c->name, name)) {
			slot = i; /* the same pair: refresh it */
			break;
		}
		if (c->expires <= now) {
			oldest = INT64_MIN;
			slot = i; /* an empty or expired one */
		} else if (!c->pinned && c->expires < oldest) {
			oldest = c->expires;
			slot = i; /* else the oldest that no deny names */
		}
	}
	if (slot == CACHE_MAX)
		return -ENOSPC; /* every entry live and pinned */
	cache[slot].family = family;
	memcpy(cache[slot].addr, addr, 16);
	snprintf(cache[slot].name, sizeof(cache[slot].name), "%s", name);
	cache[slot].expires = now + (int64_t)ttl * 1000000000LL;
	cache[slot].pinned = netpol_name_denied(name);
	return 0;
}

void resolver_policy_changed(void)
{
	int64_t now = now_mono();
	size_t i;

	for (i = 0; i < CACHE_MAX; i++)
		if (cache[i].expires > now)
			cache[i].pinned = netpol_name_denied(cache[i].name);
}

size_t resolver_names_of(int family, const uint8_t *in, const char **names,
			 size_t max)
{
	size_t i, n = 0, alen;
	int64_t now = now_mono();
	uint8_t addr[16];

	family = addr_canon(family, in, addr);
	alen = family == AF_INET ? 4 : 16;
	for (i = 0; i < CACHE_MAX && n < max; i++)
		if (cache[i].family == family && cache[i].expires > now &&
		    !memcmp(cache[i].addr, addr, alen))
			names[n++] = cache[i].name;
	return n;
}

/* ---- answering ----------------------------------------------------------------- */

static long answer(const struct dns_query *q, int rcode, uint8_t *out,
		   size_t cap)
{
	return dns_build_reply(q, rcode, NULL, 0, out, cap);
}

static struct pending *pending_by_id(uint16_t id)
{
	size_t i;

	for (i = 0; i < PENDING_MAX; i++)
		if (pending[i].used && pending[i].ask.id == id)
			return &pending[i];
	return NULL;
}

/* The query in flight upstream for (name without case, qtype), if any. */
static struct pending *pending_for(const char *name, uint16_t qtype)
{
	size_t i;

	for (i = 0; i < PENDING_MAX; i++)
		if (pending[i].used && pending[i].ask.q.qtype == qtype &&
		    !strcasecmp(pending[i].ask.q.name, name))
			return &pending[i];
	return NULL;
}

static void waiters_free(struct pending *pd)
{
	struct waiter *w;

	while ((w = pd->waiters)) {
		pd->waiters = w->next;
		w->next = free_waiters;
		free_waiters = w;
	}
}

static void pending_end(struct pending *pd)
{
	if (pd->pcb) {
		udp_remove(pd->pcb);
		flow_del(&pd->flow);
		pd->pcb = NULL;
	}
	waiters_free(pd);
	pd->used = false;
}

/* The checked records of the last reply taken (static: 17 KiB, and the
 * sentry is one thread), and whether the message may go as it came. */
static struct dns_answer taken;
static bool taken_relay;

/* Does a reply to qtype carry addresses the guest could connect to? Its
 * A and AAAA answers are checked; anything else in it (an additional
 * section's addresses, an HTTPS or SVCB record's address hints) is not,
 * so the guest gets it rebuilt from the checked records alone (HTTPS and
 * SVCB queries then get no such record: clients fall back to A and
 * AAAA). */
static bool carries_addresses(uint16_t qtype)
{
	return qtype == DNS_A || qtype == DNS_AAAA || qtype == DNS_ANY ||
	       qtype == DNS_SVCB || qtype == DNS_HTTPS;
}

/* Validate msg as the reply to ask and check its addresses into taken
 * (see resolver_take_reply). 0, or -1: not the reply. */
static int take(const struct resolver_ask *ask, const uint8_t from[4],
		uint16_t port, const uint8_t *msg, size_t len)
{
	struct dns_answer *a = &taken;
	size_t i, kept = 0, addrs = 0;
	bool dropped = false;

	if (port != 53 || memcmp(from, ask->server, 4))
		return -1; /* not our resolver's */
	/* the id, and the question (name without case, type, class IN) */
	if (dns_parse_reply(msg, len, ask->id, ask->q.name, ask->q.qtype, a) <
	    0)
		return -1; /* not the reply to that question: keep waiting */
	for (i = 0; i < a->n; i++) {
		const struct dns_rr *rr = &a->rr[i];
		int family = rr->type == DNS_A	  ? AF_INET :
			     rr->type == DNS_AAAA ? AF_INET6 :
						    0;

		if (family) {
			/* An allowed name that points into a special range
			 * (the host, its LAN, the metadata address) is
			 * dropped unless the policy names that range for
			 * it: DNS rebinding. */
			if (!netpol_answer(ask->pid, ask->q.name, family,
					   rr->addr)) {
				dropped = true;
				continue;
			}
			/* no room (every entry a deny's, and live): not
			 * cached, so not given either */
			if (resolver_cache_add(family, rr->addr, ask->q.name,
					       rr->ttl) < 0) {
				dropped = true;
				continue;
			}
			addrs++;
		}
		a->rr[kept++] = *rr;
	}
	a->n = kept;
	/* As it came only when nothing was dropped, every address in its
	 * answer section was checked, and the question is not one for
	 * addresses (whose reply is always rebuilt). */
	taken_relay = !dropped && addrs == a->addrs &&
		      !carries_addresses(ask->q.qtype);
	return 0;
}

/* The reply to the guest's query q, from the message taken (msg, len)
 * and taken's records, into out (cap bytes; out may be msg). */
static long reply_for(const struct dns_query *q, const uint8_t *msg, size_t len,
		      uint8_t *out, size_t cap)
{
	long n;

	if (taken_relay) {
		/* under the guest's id: records of any type pass; the cache
		 * has what the policy needs */
		if (len > cap)
			return -1;
		memmove(out, msg, len);
		out[0] = (uint8_t)(q->id >> 8);
		out[1] = (uint8_t)q->id;
		return (long)len;
	}
	n = dns_build_reply(q, taken.rcode, taken.rr, taken.n, out,
			    cap < DNS_UDP_MAX ? cap : DNS_UDP_MAX);
	return n > 0 ? n : -1;
}

long resolver_take_reply(const struct resolver_ask *ask, const uint8_t from[4],
			 uint16_t port, uint8_t *msg, size_t len, size_t cap)
{
	static uint8_t in[4096];

	if (len > sizeof(in) || take(ask, from, port, msg, len) < 0)
		return -1;
	memcpy(in, msg, len);
	return reply_for(&ask->q, in, len, msg, cap);
}

static void on_upstream(void *arg, struct udp_pcb *pcb, struct pbuf *p,
			const ip_addr_t *from, u16_t port)
{
	static uint8_t buf[4096], out[4096];
	struct pending *pd = arg;
	uint8_t from4[4] = { 0 };
	struct waiter *w;
	u16_t n;
	long len;

	(void)pcb;
	n = pbuf_copy_partial(p, buf, sizeof(buf), 0);
	pbuf_free(p);
	if (!pd->used || !IP_IS_V4(from))
		return;
	memcpy(from4, &ip_2_ip4(from)->addr, 4);
	if (take(&pd->ask, from4, port, buf, n) < 0)
		return; /* ignored: the right answer may still come */
	/* every guest query that waited on this one, each under its own id
	 * and with its question as it asked it */
	for (w = pd->waiters; w; w = w->next) {
		len = reply_for(&w->q, buf, n, out, sizeof(out));
		if (len > 0 && deliver)
			deliver(w->owner, out, (size_t)len);
	}
	pending_end(pd);
}

/* A socket of its own for pd's query, and its flow: the resolver's,
 * whatever the guest's policy says. */
static int upstream_ready(struct pending *pd)
{
	struct flow_key *k = &pd->flow;
	int rc, tries;

	if (!have_upstream || !netstack_up())
		return -ENETUNREACH;
	pd->pcb = udp_new_ip_type(IPADDR_TYPE_V4);
	if (!pd->pcb)
		return -ENOMEM;
	/* A random port of lwIP's ephemeral range (where the guest's own
	 * unbound sockets get theirs, so a port a guest binds by number is
	 * rarely taken): lwIP's own choice would be the next one in turn. */
	rc = -EADDRINUSE;
	for (tries = 0; tries < 16 && rc < 0; tries++) {
		uint16_t r;

		if (random16(&r) < 0)
			break;
		if (udp_bind(pd->pcb, IP4_ADDR_ANY,
			     (u16_t)(NS_EPHEMERAL_LO | r)) == ERR_OK)
			rc = 0;
	}
	if (rc < 0) {
		udp_remove(pd->pcb);
		pd->pcb = NULL;
		return rc;
	}
	udp_recv(pd->pcb, on_upstream, pd);
	memset(k, 0, sizeof(*k));
	k->proto = 17;
	k->family = AF_INET;
	k->rport = 53;
	k->lport = pd->pcb->local_port;
	memcpy(k->raddr, &ip_2_ip4(&upstream)->addr, 4);
	rc = flow_add(k);
	if (rc < 0) {
		udp_remove(pd->pcb);
		pd->pcb = NULL;
	}
	return rc;
}

/* The pool of waiters, made a free list at the first query. */
static void waiters_init(void)
{
	static bool done;
	size_t i;

	if (done)
		return;
	for (i = 0; i < WAITERS_MAX; i++) {
		waiters[i].next = free_waiters;
		free_waiters = &waiters[i];
	}
	done = true;
}

/* The guest's query q joins pd's waiters: 0, or -1 when none is free. */
static int wait_on(struct pending *pd, void *owner, const struct dns_query *q)
{
	struct waiter *w = free_waiters;

	if (!w)
		return -1;
	free_waiters = w->next;
	w->owner = owner;
	w->q = *q;
	w->next = pd->waiters;
	pd->waiters = w;
	return 0;
}

static int forward(void *owner, int pid, const struct dns_query *q)
{
	uint8_t msg[DNS_UDP_MAX];
	struct pending *pd;
	struct pbuf *p;
	long n;
	size_t i;
	err_t e;

	waiters_init();
	pd = pending_for(q->name, q->qtype);

	/* The same question in flight already: this one waits for its
	 * answer. A guest that asks one name 256 times at once must not
	 * get 256 upstream queries, each another chance for a blind
	 * forger to guess an id and port. */
	if (pd)
		return wait_on(pd, owner, q);
	for (i = 0; i < PENDING_MAX; i++)
		if (!pending[i].used) {
			pd = &pending[i];
			break;
		}
	if (!pd || !free_waiters || upstream_ready(pd) < 0)
		return -1;
	do {
		if (random16(&pd->ask.id) < 0) {
			pending_end(pd);
			return -1;
		}
	} while (pending_by_id(pd->ask.id));
	n = dns_build_query(pd->ask.id, q->name, q->qtype, msg, sizeof(msg));
	p = n > 0 ? pbuf_alloc(PBUF_TRANSPORT, (u16_t)n, PBUF_RAM) : NULL;
	if (!p) {
		pending_end(pd);
		return -1;
	}
	pbuf_take(p, msg, (u16_t)n);
	e = udp_sendto(pd->pcb, p, &upstream, 53);
	pbuf_free(p);
	if (e != ERR_OK) {
		pending_end(pd);
		return -1;
	}
	pd->used = true;
	pd->ask.q = *q;
	pd->ask.pid = pid;
	memcpy(pd->ask.server, &ip_2_ip4(&upstream)->addr, 4);
	pd->deadline = now_mono() + RESOLVER_TIMEOUT_NS;
	return wait_on(pd, owner, q);
}

long resolver_query(void *owner, int pid, const uint8_t *msg, size_t len,
		    uint8_t *out, size_t cap)
{
	struct dns_query q;
	int rc = dns_parse_query(msg, len, &q);

	if (rc == -EPROTO || (rc < 0 && len < 2))
		return -1;
	if (rc == -EOPNOTSUPP)
		return answer(&q, DNS_NOTIMP, out, cap);
	if (rc < 0) {
		q.qclass = 0; /* no question to echo */
		return answer(&q, DNS_FORMERR, out, cap);
	}
	if (q.qclass != DNS_CLASS_IN)
		return answer(&q, DNS_REFUSED, out, cap);
	if (!netpol_name(pid, q.name))
		return answer(&q, DNS_NXDOMAIN, out, cap);
	if (forward(owner, pid, &q) < 0)
		return answer(&q, DNS_SERVFAIL, out, cap);
	return 0;
}

void resolver_owner_gone(void *owner)
{
	struct waiter **pw, *w;
	size_t i;

	for (i = 0; i < PENDING_MAX; i++) {
		if (!pending[i].used)
			continue;
		for (pw = &pending[i].waiters; (w = *pw);) {
			if (w->owner != owner) {
				pw = &w->next;
				continue;
			}
			*pw = w->next;
			w->next = free_waiters;
			free_waiters = w;
		}
		/* no one left to answer: the query is forgotten (a reply
		 * that comes now finds no socket) */
		if (!pending[i].waiters)
			pending_end(&pending[i]);
	}
}

int64_t resolver_deadline(void)
{
	int64_t d = 0;
	size_t i;

	for (i = 0; i < PENDING_MAX; i++)
		if (pending[i].used && (!d || pending[i].deadline < d))
			d = pending[i].deadline;
	return d;
}

void resolver_run(void)
{
	uint8_t out[DNS_UDP_MAX];
	int64_t now = now_mono();
	struct waiter *w;
	size_t i;
	long n;

	for (i = 0; i < PENDING_MAX; i++) {
		struct pending *pd = &pending[i];

		if (!pd->used || pd->deadline > now)
			continue;
		for (w = pd->waiters; w; w = w->next) {
			n = answer(&w->q, DNS_SERVFAIL, out, sizeof(out));
			if (n > 0 && deliver)
				deliver(w->owner, out, (size_t)n);
		}
		pending_end(pd);
	}
}
