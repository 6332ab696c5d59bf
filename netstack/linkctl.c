/* netstack/linkctl.c: link control messages and the link's own check
 * (see linkctl.h). */
#include "netstack/linkctl.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "lib/util.h"
#include "netstack/netstack.h"

/* ---- messages ------------------------------------------------------------------ */

static long put(uint8_t type, uint8_t flags, const void *rec, size_t size,
		size_t n, uint8_t *out, size_t cap)
{
	struct lc_hdr h = { .type = type, .flags = flags, .n = (uint16_t)n };

	if (n > LC_CHUNK || sizeof(h) + n * size > cap)
		return -ENOSPC;
	memcpy(out, &h, sizeof(h));
	if (n)
		memcpy(out + sizeof(h), rec, n * size);
	return (long)(sizeof(h) + n * size);
}

long lc_put_rules(uint8_t flags, const struct lc_rule *r, size_t n,
		  uint8_t *out, size_t cap)
{
	return put(LC_RULES, flags, r, sizeof(*r), n, out, cap);
}

long lc_put_hosts(uint8_t flags, const struct hostaddr *h, size_t n,
		  uint8_t *out, size_t cap)
{
	return put(LC_HOSTS, flags, h, sizeof(*h), n, out, cap);
}

long lc_put_refused(const struct lc_dest *d, uint8_t *out, size_t cap)
{
	return put(LC_REFUSED, LC_FIRST | LC_LAST, d, sizeof(*d), 1, out, cap);
}

static bool family_prefix_ok(uint8_t family, uint8_t prefix)
{
	return (family == AF_INET && prefix <= 32) ||
	       (family == AF_INET6 && prefix <= 128);
}

int lc_parse(const uint8_t *msg, size_t len, struct lc_hdr *h,
	     const void **records)
{
	size_t size, i;
	const uint8_t *p;

	if (len < sizeof(*h))
		return -EINVAL;
	memcpy(h, msg, sizeof(*h));
	switch (h->type) {
	case LC_RULES:
		size = sizeof(struct lc_rule);
		break;
	case LC_HOSTS:
		size = sizeof(struct hostaddr);
		break;
	case LC_REFUSED:
		size = sizeof(struct lc_dest);
		if (h->n != 1)
			return -EINVAL;
		break;
	default:
		return -EINVAL;
	}
	if (h->n > LC_CHUNK || len != sizeof(*h) + h->n * size ||
	    (h->flags & ~(LC_FIRST | LC_LAST)))
		return -EINVAL;
	p = msg + sizeof(*h);
	for (i = 0; i < h->n; i++, p += size) {
		if (h->type == LC_RULES) {
			struct lc_rule r;

			memcpy(&r, p, sizeof(r));
			if (!family_prefix_ok(r.family, r.prefix) ||
			    r.port_lo > r.port_hi || !r.protos ||
			    (r.protos & ~(unsigned)(EGRESS_TCP | EGRESS_UDP |
						    EGRESS_ICMP)))
				return -EINVAL;
		} else if (h->type == LC_HOSTS) {
			struct hostaddr a;

			memcpy(&a, p, sizeof(a));
			if (!family_prefix_ok(a.family, a.prefix))
				return -EINVAL;
		} else {
			struct lc_dest d;

			memcpy(&d, p, sizeof(d));
			if (d.family != AF_INET && d.family != AF_INET6)
				return -EINVAL;
		}
	}
	*records = msg + sizeof(*h);
	return 0;
}

/* ---- rules --------------------------------------------------------------------- */

size_t lc_rules_of(const struct egress_policy *p, struct lc_rule *out,
		   size_t max)
{
	size_t i, n = 0;

	for (i = 0; i < p->n; i++) {
		const struct egress_rule *r = &p->rules[i];

		if (r->kind != EGRESS_NET)
			continue;
		if (n < max) {
			struct lc_rule *o = &out[n];

			memset(o, 0, sizeof(*o));
			o->deny = r->deny;
			o->family = (uint8_t)r->family;
			o->prefix = (uint8_t)r->prefix;
			o->protos = (uint8_t)r->protos;
			o->port_lo = r->port_lo;
			o->port_hi = r->port_hi;
			memcpy(o->addr, r->addr, 16);
		}
		n++;
	}
	return n;
}

int lc_rules_to_policy(const struct lc_rule *r, size_t n,
		       struct egress_policy *p)
{
	size_t i;

	egress_free(p);
	for (i = 0; i < n; i++) {
		struct egress_rule e;

		memset(&e, 0, sizeof(e));
		e.deny = r[i].deny != 0;
		e.kind = EGRESS_NET;
		e.family = r[i].family;
		e.prefix = r[i].prefix;
		e.protos = r[i].protos;
		e.port_lo = r[i].port_lo;
		e.port_hi = r[i].port_hi;
		memcpy(e.addr, r[i].addr, 16);
		if (egress_add(p, &e) < 0) {
			egress_free(p);
			return -ENOMEM;
		}
	}
	return 0;
}

bool lc_rules_allow(const struct egress_policy *p, const struct lc_dest *d)
{
	struct egress_query q = { .family = d->family, .port = d->dport };
	struct egress_decision dec;

	memcpy(q.addr, d->addr, 16);
	q.proto = d->proto == IPPROTO_TCP ? EGRESS_TCP :
		  d->proto == IPPROTO_UDP ? EGRESS_UDP :
					    EGRESS_ICMP;
	/* The host's own: only an address rule reaches it (and p holds
	 * nothing else), whatever range the address is in. */
	q.host = true;
	egress_decide(p, &q, &dec);
	return dec.allow;
}

/* ---- frames -------------------------------------------------------------------- */

#define ETH_HLEN 14

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* The IP header (after Ethernet) of frame: its offset and length, the
 * protocol and the transport header's offset; false if it is no IPv4 or
 * IPv6 packet we read (or a later fragment: no ports). */
static bool ip_of(const uint8_t *f, size_t len, bool *v6, uint8_t *proto,
		  size_t *l4)
{
	size_t ihl;

	if (len < ETH_HLEN + 20)
		return false;
	if (get16(f + 12) == 0x0800 && (f[ETH_HLEN] >> 4) == 4) {
		ihl = (size_t)(f[ETH_HLEN] & 0xf) * 4;
		if (ihl < 20 || ETH_HLEN + ihl > len ||
		    (get16(f + ETH_HLEN + 6) & 0x1fff))
			return false;
		*v6 = false;
		*proto = f[ETH_HLEN + 9];
		*l4 = ETH_HLEN + ihl;
		return true;
	}
	if (get16(f + 12) == 0x86dd && len >= ETH_HLEN + 40 &&
	    (f[ETH_HLEN] >> 4) == 6) {
		/* the netstack sends no extension headers */
		*v6 = true;
		*proto = f[ETH_HLEN + 6];
		*l4 = ETH_HLEN + 40;
		return true;
	}
	return false;
}

int lc_frame_dest(const uint8_t *f, size_t len, struct lc_dest *d)
{
	uint8_t proto;
	size_t l4;
	bool v6;

	if (!ip_of(f, len, &v6, &proto, &l4))
		return 0;
	memset(d, 0, sizeof(*d));
	d->family = v6 ? AF_INET6 : AF_INET;
	d->proto = proto;
	if (v6)
		memcpy(d->addr, f + ETH_HLEN + 24, 16);
	else
		memcpy(d->addr, f + ETH_HLEN + 16, 4);
	switch (proto) {
	case IPPROTO_TCP:
		/* a SYN without ACK: a new connection (slirp connects
		 * its host socket then); nothing else makes one */
		if (l4 + 20 > len || (f[l4 + 13] & 0x12) != 0x02)
			return 0;
		break;
	case IPPROTO_UDP:
		/* every datagram: slirp sends each one on its own */
		if (l4 + 8 > len)
			return 0;
		break;
	case IPPROTO_ICMP:
		if (v6 || l4 + 8 > len || f[l4] != 8)
			return 0;
		return 1;
	case IPPROTO_ICMPV6:
		if (!v6 || l4 + 8 > len || f[l4] != 128)
			return 0;
		return 1;
	default:
		return 0;
	}
	d->sport = get16(f + l4);
	d->dport = get16(f + l4 + 2);
	return 1;
}

size_t lc_build_rst(const uint8_t *f, size_t len, uint8_t *out, size_t cap)
{
	size_t l4, hlen, tot;
	uint8_t proto, *ip, *tcp;
	uint32_t seq, sum;
	bool v6;

	if (!ip_of(f, len, &v6, &proto, &l4) || proto != IPPROTO_TCP ||
	    l4 + 20 > len || !(f[l4 + 13] & 0x02))
		return 0;
	hlen = v6 ? 40 : 20;
	tot = ETH_HLEN + hlen + 20;
	if (cap < tot)
		return 0;
	memset(out, 0, tot);
	memcpy(out, f + 6, 6); /* back to whoever sent it */
	memcpy(out + 6, f, 6);
	memcpy(out + 12, f + 12, 2);
	ip = out + ETH_HLEN;
	tcp = ip + hlen;
	if (v6) {
		ip[0] = 0x60;
		put16(ip + 4, 20);
		ip[6] = IPPROTO_TCP;
		ip[7] = 64;
		memcpy(ip + 8, f + ETH_HLEN + 24, 16);
		memcpy(ip + 24, f + ETH_HLEN + 8, 16);
	} else {
		ip[0] = 0x45;
		put16(ip + 2, 40);
		ip[8] = 64;
		ip[9] = IPPROTO_TCP;
		memcpy(ip + 12, f + ETH_HLEN + 16, 4);
		memcpy(ip + 16, f + ETH_HLEN + 12, 4);
		put16(ip + 10, ns_csum_fold(ip, 20, 0));
	}
	/* RFC 793: a RST for a SYN has seq 0 and acknowledges it */
	memcpy(tcp, f + l4 + 2, 2);
	memcpy(tcp + 2, f + l4, 2);
	seq = (uint32_t)f[l4 + 4] << 24 | (uint32_t)f[l4 + 5] << 16 |
	      (uint32_t)f[l4 + 6] << 8 | f[l4 + 7];
	seq += 1;
	tcp[8] = (uint8_t)(seq >> 24);
	tcp[9] = (uint8_t)(seq >> 16);
	tcp[10] = (uint8_t)(seq >> 8);
	tcp[11] = (uint8_t)seq;
	tcp[12] = 5 << 4;
	tcp[13] = 0x14; /* RST, ACK */
	/* pseudo-header: addresses, protocol, length */
	sum = 0;
	{
		const uint8_t *a = v6 ? ip + 8 : ip + 12;
		size_t alen = v6 ? 32 : 8, i;

		for (i = 0; i < alen; i += 2)
			sum += get16(a + i);
	}
	sum += IPPROTO_TCP + 20;
	put16(tcp + 16, ns_csum_fold(tcp, 20, sum));
	return tot;
}
