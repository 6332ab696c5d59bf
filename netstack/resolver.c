/* netstack/resolver.c: the sentry's DNS resolver (see resolver.h). */
#include "netstack/resolver.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <lwip/ip_addr.h>
#include <lwip/pbuf.h>
#include <lwip/udp.h>

#include "lib/util.h"
#include "netstack/dns.h"
#include "netstack/flow.h"
#include "netstack/netpol.h"
#include "netstack/netstack.h"

#define CACHE_MAX 4096
#define PENDING_MAX 256
#define TTL_MIN 5     /* seconds: a 0 TTL still lets the connect follow */
#define TTL_MAX 86400 /* a day */

struct cached {
	int family;
	uint8_t addr[16];
	char name[DNS_TEXT_MAX + 1];
	int64_t expires;
};

struct pending {
	bool used;
	void *owner;
	uint16_t up_id;	    /* our query's id upstream */
	struct dns_query q; /* the guest's */
	int64_t deadline;
	/* its own socket: a fresh port for each query, so a spoofed reply
	 * must guess the port as well as the id */
	struct udp_pcb *pcb;
	struct flow_key flow;
};

static struct cached cache[CACHE_MAX];
static struct pending pending[PENDING_MAX];
static resolver_deliver_fn deliver;
static bool have_upstream;
static ip_addr_t upstream;
static uint32_t rng;

static int64_t now_mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static uint16_t next_id(void)
{
	if (!rng)
		rng = (uint32_t)now_mono() | 1;
	rng ^= rng << 13;
	rng ^= rng >> 17;
	rng ^= rng << 5;
	return (uint16_t)rng;
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

void resolver_cache_add(int family, const uint8_t *addr, const char *name,
			uint32_t ttl)
{
	size_t i, alen = family == AF_INET ? 4 : 16, slot = CACHE_MAX;
	int64_t now = now_mono(), oldest = INT64_MAX;

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
		if (c->expires < oldest) {
			oldest = c->expires;
			slot = i; /* an empty, expired or oldest one */
		}
	}
	cache[slot].family = family;
	memset(cache[slot].addr, 0, 16);
	memcpy(cache[slot].addr, addr, alen);
	snprintf(cache[slot].name, sizeof(cache[slot].name), "%s", name);
	cache[slot].expires = now + (int64_t)ttl * 1000000000LL;
}

size_t resolver_names_of(int family, const uint8_t *addr, const char **names,
			 size_t max)
{
	size_t i, n = 0, alen = family == AF_INET ? 4 : 16;
	int64_t now = now_mono();

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
		if (pending[i].used && pending[i].up_id == id)
			return &pending[i];
	return NULL;
}

static void pending_end(struct pending *pd)
{
	if (pd->pcb) {
		udp_remove(pd->pcb);
		flow_del(&pd->flow);
		pd->pcb = NULL;
	}
	pd->used = false;
}

static void on_upstream(void *arg, struct udp_pcb *pcb, struct pbuf *p,
			const ip_addr_t *from, u16_t port)
{
	static uint8_t buf[4096];
	struct dns_answer a;
	struct pending *pd;
	u16_t n;
	size_t i;

	(void)pcb;
	pd = arg;
	n = pbuf_copy_partial(p, buf, sizeof(buf), 0);
	pbuf_free(p);
	if (port != 53 || !ip_addr_cmp(from, &upstream) || n < DNS_HDR_LEN)
		return; /* not our resolver's */
	if (!pd->used || pd->up_id != (uint16_t)(buf[0] << 8 | buf[1]))
		return;
	if (dns_parse_reply(buf, n, pd->up_id, pd->q.name, pd->q.qtype, &a) < 0)
		return; /* not the reply to that question: keep waiting */
	for (i = 0; i < a.n; i++) {
		if (a.rr[i].type == DNS_A)
			resolver_cache_add(AF_INET, a.rr[i].addr, pd->q.name,
					   a.rr[i].ttl);
		else if (a.rr[i].type == DNS_AAAA)
			resolver_cache_add(AF_INET6, a.rr[i].addr, pd->q.name,
					   a.rr[i].ttl);
	}
	/* The reply as the resolver sent it, under the guest's id: records
	 * of any type pass; the cache has what the policy needs. */
	buf[0] = (uint8_t)(pd->q.id >> 8);
	buf[1] = (uint8_t)pd->q.id;
	if (deliver)
		deliver(pd->owner, buf, n);
	pending_end(pd);
}

/* A socket of its own for pd's query, and its flow: the resolver's,
 * whatever the guest's policy says. */
static int upstream_ready(struct pending *pd)
{
	struct flow_key *k = &pd->flow;
	int rc;

	if (!have_upstream || !netstack_up())
		return -ENETUNREACH;
	pd->pcb = udp_new_ip_type(IPADDR_TYPE_V4);
	if (!pd->pcb)
		return -ENOMEM;
	if (udp_bind(pd->pcb, IP4_ADDR_ANY, 0) != ERR_OK) {
		udp_remove(pd->pcb);
		pd->pcb = NULL;
		return -EADDRINUSE;
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

static int forward(void *owner, const struct dns_query *q)
{
	uint8_t msg[DNS_UDP_MAX];
	struct pending *pd = NULL;
	struct pbuf *p;
	long n;
	size_t i;
	err_t e;

	for (i = 0; i < PENDING_MAX; i++)
		if (!pending[i].used) {
			pd = &pending[i];
			break;
		}
	if (!pd || upstream_ready(pd) < 0)
		return -1;
	do
		pd->up_id = next_id();
	while (pending_by_id(pd->up_id));
	n = dns_build_query(pd->up_id, q->name, q->qtype, msg, sizeof(msg));
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
	pd->owner = owner;
	pd->q = *q;
	pd->deadline = now_mono() + RESOLVER_TIMEOUT_NS;
	return 0;
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
	if (forward(owner, &q) < 0)
		return answer(&q, DNS_SERVFAIL, out, cap);
	return 0;
}

void resolver_owner_gone(void *owner)
{
	size_t i;

	for (i = 0; i < PENDING_MAX; i++)
		if (pending[i].used && pending[i].owner == owner)
			pending_end(&pending[i]);
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
	size_t i;
	long n;

	for (i = 0; i < PENDING_MAX; i++) {
		struct pending *pd = &pending[i];

		if (!pd->used || pd->deadline > now)
			continue;
		pending_end(pd);
		n = answer(&pd->q, DNS_SERVFAIL, out, sizeof(out));
		if (n > 0 && deliver)
			deliver(pd->owner, out, (size_t)n);
	}
}
