/* netstack/dns.c: DNS message codec (see dns.h). */
#include "netstack/dns.h"

#include <errno.h>
#include <string.h>
#include <strings.h>

#include "lib/util.h"

#define DNS_QR 0x8000u
#define DNS_OPCODE(f) (((f) >> 11) & 0xfu)
#define DNS_TC 0x0200u
#define DNS_RD 0x0100u
#define DNS_RA 0x0080u
#define DNS_RAW_MAX 64 /* answer records looked at in one reply */
#define DNS_HOPS_MAX 32

static uint16_t be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, (uint16_t)(v >> 16));
	put16(p + 2, (uint16_t)v);
}

/* ---- names ------------------------------------------------------------------ */

long dns_name_encode(const char *text, uint8_t *out, size_t cap)
{
	size_t len = strlen(text), o = 0, i = 0, l;
	const char *dot;

	if (len && text[len - 1] == '.')
		len--;
	while (i < len) {
		dot = memchr(text + i, '.', len - i);
		l = dot ? (size_t)(dot - (text + i)) : len - i;
		if (l == 0 || l > 63)
			return -EINVAL;
		if (o + 1 + l + 1 > 255)
			return -EINVAL;
		if (o + 1 + l > cap)
			return -ENOSPC;
		out[o++] = (uint8_t)l;
		memcpy(out + o, text + i, l);
		o += l;
		i += l + 1;
	}
	if (o + 1 > cap)
		return -ENOSPC;
	out[o++] = 0;
	return (long)o;
}

int dns_name_decode(const uint8_t *msg, size_t len, size_t *off,
		    char text[DNS_TEXT_MAX + 1])
{
	size_t pos = *off, after = 0, t = 0, ptr;
	unsigned hops = 0;
	uint8_t l;

	for (;;) {
		if (pos >= len)
			return -EINVAL;
		l = msg[pos];
		if ((l & 0xc0) == 0xc0) {
			if (pos + 1 >= len)
				return -EINVAL;
			ptr = (size_t)(l & 0x3f) << 8 | msg[pos + 1];
			/* Backwards only, and few: with the length bound
			 * below, no pointer chain can loop for long. */
			if (ptr >= pos || ++hops > DNS_HOPS_MAX)
				return -EINVAL;
			if (!after)
				after = pos + 2;
			pos = ptr;
			continue;
		}
		if (l & 0xc0)
			return -EINVAL; /* extended label types: obsolete */
		if (l == 0) {
			pos++;
			break;
		}
		if (pos + 1 + l > len || t + (t ? 1 : 0) + l > DNS_TEXT_MAX)
			return -EINVAL;
		if (t)
			text[t++] = '.';
		for (size_t i = 0; i < l; i++) {
			uint8_t c = msg[pos + 1 + i];

			/* Names we can match and write back as text only:
			 * no dots, spaces, NULs or control bytes in a label. */
			if (c <= 0x20 || c >= 0x7f || c == '.')
				return -EINVAL;
			text[t++] = (char)c;
		}
		pos += 1 + l;
	}
	text[t] = '\0';
	*off = after ? after : pos;
	return 0;
}

/* ---- the guest's query -------------------------------------------------------- */

int dns_parse_query(const uint8_t *msg, size_t len, struct dns_query *q)
{
	size_t off = DNS_HDR_LEN;
	uint16_t flags;

	memset(q, 0, sizeof(*q));
	if (len < 2)
		return -EINVAL;
	q->id = be16(msg);
	if (len < DNS_HDR_LEN)
		return -EINVAL;
	flags = be16(msg + 2);
	q->rd = (flags & DNS_RD) != 0;
	if (flags & DNS_QR)
		return -EPROTO;
	if (DNS_OPCODE(flags) != 0)
		return -EOPNOTSUPP;
	/* One question, nothing in answer or authority (RFC 1035 4.1.2;
	 * the additional section may hold an OPT record, not looked at). */
	if (be16(msg + 4) != 1 || be16(msg + 6) || be16(msg + 8))
		return -EINVAL;
	if (dns_name_decode(msg, len, &off, q->name) < 0)
		return -EINVAL;
	if (off + 4 > len)
		return -EINVAL;
	q->qtype = be16(msg + off);
	q->qclass = be16(msg + off + 2);
	if (!q->qclass)
		return -EINVAL;
	return 0;
}

/* ---- replies and queries we build --------------------------------------------- */

/* Header and question; returns the offset after them or -ENOSPC/-EINVAL. */
static long put_head(uint16_t id, uint16_t flags, const char *name,
		     uint16_t qtype, uint16_t qclass, bool question,
		     uint8_t *out, size_t cap)
{
	long n;

	if (cap < DNS_HDR_LEN)
		return -ENOSPC;
	memset(out, 0, DNS_HDR_LEN);
	put16(out, id);
	put16(out + 2, flags);
	if (!question)
		return DNS_HDR_LEN;
	put16(out + 4, 1);
	n = dns_name_encode(name, out + DNS_HDR_LEN, cap - DNS_HDR_LEN);
	if (n < 0)
		return n;
	n += DNS_HDR_LEN;
	if ((size_t)n + 4 > cap)
		return -ENOSPC;
	put16(out + n, qtype);
	put16(out + n + 2, qclass);
	return n + 4;
}

/* One answer record at out+o; its length, or 0 when it does not fit. */
static size_t put_rr(const struct dns_query *q, const struct dns_rr *rr,
		     uint8_t *out, size_t o, size_t cap)
{
	uint8_t rdata[256];
	size_t start = o, rdlen;
	long n;

	if (rr->type == DNS_A) {
		memcpy(rdata, rr->addr, 4);
		rdlen = 4;
	} else if (rr->type == DNS_AAAA) {
		memcpy(rdata, rr->addr, 16);
		rdlen = 16;
	} else if (rr->type == DNS_CNAME) {
		n = dns_name_encode(rr->target, rdata, sizeof(rdata));
		if (n < 0)
			return 0;
		rdlen = (size_t)n;
	} else {
		return 0;
	}
	if (q->qclass && !strcasecmp(rr->name, q->name)) {
		if (o + 2 > cap)
			return 0;
		put16(out + o, 0xc000 | DNS_HDR_LEN); /* the question's name */
		o += 2;
	} else {
		n = dns_name_encode(rr->name, out + o, cap - o);
		if (n < 0)
			return 0;
		o += (size_t)n;
	}
	if (o + 10 + rdlen > cap)
		return 0;
	put16(out + o, rr->type);
	put16(out + o + 2, DNS_CLASS_IN);
	put32(out + o + 4, rr->ttl);
	put16(out + o + 8, (uint16_t)rdlen);
	memcpy(out + o + 10, rdata, rdlen);
	return o + 10 + rdlen - start;
}

long dns_build_reply(const struct dns_query *q, int rcode,
		     const struct dns_rr *rr, size_t nrr, uint8_t *out,
		     size_t cap)
{
	uint16_t flags = DNS_QR | DNS_RA | (q->rd ? DNS_RD : 0) |
			 (uint16_t)(rcode & 0xf);
	long o = put_head(q->id, flags, q->name, q->qtype, q->qclass,
			  q->qclass != 0, out, cap);
	size_t i, w, count = 0;

	if (o < 0)
		return o;
	for (i = 0; i < nrr; i++) {
		w = put_rr(q, &rr[i], out, (size_t)o, cap);
		if (!w) {
			put16(out + 2, flags | DNS_TC);
			break;
		}
		o += (long)w;
		count++;
	}
	put16(out + 6, (uint16_t)count);
	return o;
}

long dns_build_query(uint16_t id, const char *name, uint16_t qtype,
		     uint8_t *out, size_t cap)
{
	return put_head(id, DNS_RD, name, qtype, DNS_CLASS_IN, true, out, cap);
}

/* ---- the upstream reply -------------------------------------------------------- */

static bool in_chain(char (*chain)[DNS_TEXT_MAX + 1], size_t n,
		     const char *name)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcasecmp(chain[i], name))
			return true;
	return false;
}

int dns_parse_reply(const uint8_t *msg, size_t len, uint16_t id,
		    const char *name, uint16_t qtype, struct dns_answer *a)
{
	static struct dns_rr raw[DNS_RAW_MAX];
	char chain[DNS_HOPS_MAX][DNS_TEXT_MAX + 1];
	char qname[DNS_TEXT_MAX + 1];
	size_t off = DNS_HDR_LEN, nraw = 0, nchain = 1, i, rdlen, end;
	uint16_t flags, an, type, cls;
	bool grew;

	memset(a, 0, sizeof(*a));
	if (len < DNS_HDR_LEN || be16(msg) != id)
		return -EINVAL;
	flags = be16(msg + 2);
	if (!(flags & DNS_QR) || DNS_OPCODE(flags) != 0 || be16(msg + 4) != 1)
		return -EINVAL;
	a->id = id;
	a->rcode = flags & 0xf;
	if (dns_name_decode(msg, len, &off, qname) < 0 || off + 4 > len)
		return -EINVAL;
	if (strcasecmp(qname, name) || be16(msg + off) != qtype ||
	    be16(msg + off + 2) != DNS_CLASS_IN)
		return -EINVAL; /* not the reply to our question */
	off += 4;
	an = be16(msg + 6);
	for (i = 0; i < an; i++) {
		/* past DNS_RAW_MAX, records are read (to check the message)
		 * into a scratch one, and not kept */
		static struct dns_rr scratch;
		struct dns_rr *r = nraw < DNS_RAW_MAX ? &raw[nraw] : &scratch;

		if (dns_name_decode(msg, len, &off, r->name) < 0 ||
		    off + 10 > len)
			return -EINVAL;
		type = be16(msg + off);
		cls = be16(msg + off + 2);
		r->ttl = be32(msg + off + 4);
		if (r->ttl & 0x80000000u)
			r->ttl = 0; /* RFC 2181 8: "as if zero" */
		rdlen = be16(msg + off + 8);
		off += 10;
		if (off + rdlen > len)
			return -EINVAL;
		end = off + rdlen;
		r->type = type;
		if (type == DNS_A || type == DNS_AAAA)
			a->addrs++;
		if (cls != DNS_CLASS_IN || nraw == DNS_RAW_MAX) {
			off = end;
			continue;
		}
		if (type == DNS_A && rdlen == 4) {
			memcpy(r->addr, msg + off, 4);
			nraw++;
		} else if (type == DNS_AAAA && rdlen == 16) {
			memcpy(r->addr, msg + off, 16);
			nraw++;
		} else if (type == DNS_CNAME) {
			size_t t = off;

			if (dns_name_decode(msg, len, &t, r->target) < 0 ||
			    t != end)
				return -EINVAL;
			nraw++;
		}
		off = end;
	}
	/* The records that belong to the question: its name, then the names
	 * CNAMEs of the chain lead to (in any order in the message). */
	strcpy(chain[0], name);
	do {
		grew = false;
		for (i = 0; i < nraw && nchain < DNS_HOPS_MAX; i++)
			if (raw[i].type == DNS_CNAME &&
			    in_chain(chain, nchain, raw[i].name) &&
			    !in_chain(chain, nchain, raw[i].target)) {
				strcpy(chain[nchain++], raw[i].target);
				grew = true;
			}
	} while (grew);
	for (i = 0; i < nraw && a->n < DNS_ANSWERS_MAX; i++)
		if (in_chain(chain, nchain, raw[i].name))
			a->rr[a->n++] = raw[i];
	return 0;
}
