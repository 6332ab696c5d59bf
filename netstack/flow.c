/* netstack/flow.c: the table of allowed flows, and the frame check. */
#include "netstack/flow.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "lib/util.h"

static int64_t mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

#define FLOW_BUCKETS 4096

struct flow {
	struct flow *next;
	struct flow_key k;
	unsigned refs;
	int64_t expires; /* 0: in use; else lingering until then */
};

static struct flow *buckets[FLOW_BUCKETS];
static size_t nflows;

static void key_norm(const struct flow_key *in, struct flow_key *k)
{
	memset(k, 0, sizeof(*k));
	k->proto = in->proto;
	k->family = in->family;
	k->lport = in->lport;
	k->rport = in->rport;
	memcpy(k->raddr, in->raddr, in->family == AF_INET ? 4 : 16);
}

static unsigned hash(const struct flow_key *k)
{
	const uint8_t *p = (const uint8_t *)k;
	uint32_t h = 2166136261u;
	size_t i;

	for (i = 0; i < sizeof(*k); i++)
		h = (h ^ p[i]) * 16777619u;
	return h % FLOW_BUCKETS;
}

static struct flow **find(const struct flow_key *k)
{
	struct flow **pp = &buckets[hash(k)];

	while (*pp && memcmp(&(*pp)->k, k, sizeof(*k)))
		pp = &(*pp)->next;
	return pp;
}

int flow_add(const struct flow_key *in)
{
	struct flow_key k;
	struct flow **pp, *f;

	key_norm(in, &k);
	pp = find(&k);
	if (*pp) {
		if ((*pp)->expires)
			(*pp)->refs = 0; /* lingering: in use again */
		(*pp)->expires = 0;
		(*pp)->refs++;
		return 0;
	}
	if (nflows >= FLOWS_MAX)
		flow_sweep();
	if (nflows >= FLOWS_MAX)
		return -ENOSPC;
	f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	f->k = k;
	f->refs = 1;
	f->next = buckets[hash(&k)];
	buckets[hash(&k)] = f;
	nflows++;
	return 0;
}

void flow_release(const struct flow_key *in, int64_t linger_ns)
{
	struct flow_key k;
	struct flow **pp, *f;

	key_norm(in, &k);
	pp = find(&k);
	f = *pp;
	if (!f || f->expires || --f->refs)
		return;
	if (linger_ns > 0) {
		f->expires = mono() + linger_ns;
		return;
	}
	*pp = f->next;
	free(f);
	nflows--;
}

void flow_del(const struct flow_key *k)
{
	flow_release(k, 0);
}

void flow_sweep(void)
{
	int64_t now = mono();
	struct flow **pp, *f;
	size_t i;

	for (i = 0; i < FLOW_BUCKETS; i++)
		for (pp = &buckets[i]; (f = *pp);) {
			if (f->expires && f->expires <= now) {
				*pp = f->next;
				free(f);
				nflows--;
			} else {
				pp = &f->next;
			}
		}
}

bool flow_allowed(const struct flow_key *in)
{
	struct flow_key k;
	struct flow *f;

	key_norm(in, &k);
	f = *find(&k);
	return f && (!f->expires || f->expires > mono());
}

size_t flow_count(void)
{
	return nflows;
}

void flow_clear(void)
{
	size_t i;
	struct flow *f;

	for (i = 0; i < FLOW_BUCKETS; i++)
		while ((f = buckets[i])) {
			buckets[i] = f->next;
			free(f);
		}
	nflows = 0;
}

/* ---- frames ------------------------------------------------------------------ */

#define ETH_HLEN 14
#define ETHERTYPE_IP4 0x0800
#define ETHERTYPE_ARP 0x0806
#define ETHERTYPE_IP6 0x86dd

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/* The transport header at l4 (len bytes) into k's ports. */
static bool ports(struct flow_key *k, const uint8_t *l4, size_t len)
{
	switch (k->proto) {
	case IPPROTO_TCP:
	case IPPROTO_UDP:
		if (len < 4)
			return false;
		k->lport = get16(l4);
		k->rport = get16(l4 + 2);
		return true;
	case IPPROTO_ICMP:
		/* echo requests only; the id names the flow */
		if (len < 8 || l4[0] != 8)
			return false;
		k->rport = get16(l4 + 4);
		return true;
	default:
		return false;
	}
}

bool flow_frame_allowed(const uint8_t *f, size_t len)
{
	struct flow_key k;
	size_t ihl;

	if (len < ETH_HLEN)
		return false;
	memset(&k, 0, sizeof(k));
	switch (get16(f + 12)) {
	case ETHERTYPE_ARP:
		return true;
	case ETHERTYPE_IP4:
		f += ETH_HLEN;
		len -= ETH_HLEN;
		if (len < 20 || (f[0] >> 4) != 4)
			return false;
		ihl = (size_t)(f[0] & 0xf) * 4;
		if (ihl < 20 || ihl > len)
			return false;
		/* a fragment after the first carries no ports: the stack
		 * sends none (it fragments nothing it was not given) */
		if (get16(f + 6) & 0x1fff)
			return false;
		k.family = AF_INET;
		k.proto = f[9];
		memcpy(k.raddr, f + 16, 4);
		return ports(&k, f + ihl, len - ihl) && flow_allowed(&k);
	case ETHERTYPE_IP6:
		f += ETH_HLEN;
		len -= ETH_HLEN;
		if (len < 40 || (f[0] >> 4) != 6)
			return false;
		k.family = AF_INET6;
		k.proto = f[6]; /* no extension headers are sent */
		if (k.proto == 58) {
			/* Neighbour discovery only: router and neighbour
			 * solicitations and advertisements, which reach no
			 * further than the link; not echo, not MLD. */
			return len >= 41 && f[40] >= 133 && f[40] <= 136;
		}
		memcpy(k.raddr, f + 24, 16);
		return ports(&k, f + 40, len - 40) && flow_allowed(&k);
	default:
		return false;
	}
}
