/* netstack/dns.h: the DNS messages the sentry's resolver reads and writes
 * (RFC 1035, with RFC 3596 AAAA and RFC 6891's OPT record recognised).
 *
 * The guest's queries are parsed here; the sentry answers them itself
 * (NXDOMAIN for a name the policy does not allow) or forwards an allowed
 * one upstream as a fresh query of its own, and parses the upstream reply
 * into addresses with their TTLs for the flow table. Nothing of a guest's
 * message is ever copied to the host: the forwarded query is rebuilt from
 * the parsed name and type.
 *
 * Everything is a pure function of its arguments (fuzzed: fuzz_dns).
 */
#ifndef MOAT_NETSTACK_DNS_H
#define MOAT_NETSTACK_DNS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DNS_HDR_LEN 12
#define DNS_TEXT_MAX 253   /* a name in text form, without the final dot */
#define DNS_UDP_MAX 512	   /* a reply without EDNS */
#define DNS_ANSWERS_MAX 32 /* records kept from one reply */

enum dns_type {
	DNS_A = 1,
	DNS_CNAME = 5,
	DNS_AAAA = 28,
	DNS_OPT = 41,
	DNS_SVCB = 64,
	DNS_HTTPS = 65,
	DNS_ANY = 255,
};

enum dns_rcode {
	DNS_NOERROR = 0,
	DNS_FORMERR = 1,
	DNS_SERVFAIL = 2,
	DNS_NXDOMAIN = 3,
	DNS_NOTIMP = 4,
	DNS_REFUSED = 5,
};

#define DNS_CLASS_IN 1

struct dns_query {
	uint16_t id;
	bool rd;		     /* recursion desired */
	char name[DNS_TEXT_MAX + 1]; /* as asked, without the final dot */
	uint16_t qtype, qclass;
};

struct dns_rr {
	uint16_t type; /* DNS_A, DNS_AAAA or DNS_CNAME */
	uint32_t ttl;
	char name[DNS_TEXT_MAX + 1];   /* owner */
	uint8_t addr[16];	       /* A: 4 bytes, AAAA: 16 */
	char target[DNS_TEXT_MAX + 1]; /* CNAME */
};

struct dns_answer {
	uint16_t id;
	int rcode;
	size_t n;
	struct dns_rr rr[DNS_ANSWERS_MAX];
	/* A and AAAA records in the answer section, of any owner, class or
	 * length, kept in rr or not: when rr holds fewer, the message says
	 * more than was checked */
	size_t addrs;
};

/* A guest's query: one question, opcode QUERY, QR clear. Returns 0;
 * -EINVAL for a malformed message (answer FORMERR when the id could be
 * read, i.e. len >= 2); -EOPNOTSUPP for another opcode (NOTIMP); -EPROTO
 * for a response (QR set: dropped, never answered). */
int dns_parse_query(const uint8_t *msg, size_t len, struct dns_query *q);

/* The reply to q: rcode, and the records (an owner equal to the question's
 * name is a pointer to it). Returns the length; records that do not fit in
 * cap are left out and TC is set; -ENOSPC when not even the header and the
 * question fit. With q->qclass 0 (a query that could not be read) the reply
 * has no question section: a FORMERR carrying only the id. */
long dns_build_reply(const struct dns_query *q, int rcode,
		     const struct dns_rr *rr, size_t nrr, uint8_t *out,
		     size_t cap);

/* A query of our own (RD set), for the upstream resolver. */
long dns_build_query(uint16_t id, const char *name, uint16_t qtype,
		     uint8_t *out, size_t cap);

/* An upstream reply to (id, name, qtype): its rcode, and the A, AAAA and
 * CNAME records of the answer section that belong to name or to the
 * CNAME chain that starts at it. Returns 0 or -EINVAL (malformed, or not
 * the reply to that question: a spoofed or stray datagram). */
int dns_parse_reply(const uint8_t *msg, size_t len, uint16_t id,
		    const char *name, uint16_t qtype, struct dns_answer *a);

/* Wire <-> text. dns_name_encode writes the wire form of text (a name,
 * with or without the final dot; "" or "." is the root) into out: the
 * length, or -EINVAL (a label empty or over 63 bytes, over 255 in all).
 * dns_name_decode reads the name at *off (following compression pointers,
 * which must point backwards) into text and advances *off past it: 0 or
 * -EINVAL (a loop, a label with '.', NUL or a non-printable byte, too
 * long, past the end). */
long dns_name_encode(const char *text, uint8_t *out, size_t cap);
int dns_name_decode(const uint8_t *msg, size_t len, size_t *off,
		    char text[DNS_TEXT_MAX + 1]);

#endif
