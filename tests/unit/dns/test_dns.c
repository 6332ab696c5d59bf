/* tests/unit/dns/test_dns.c: the DNS codec of the sentry's resolver. */
#include <criterion/criterion.h>

#include <arpa/inet.h>
#include <string.h>

#include "lib/util.h"
#include "netstack/dns.h"

/* A real resolver's reply to "www.example.com A" (bytes as captured, the
 * TTLs changed): a CNAME to example.com, then its A record, both owners
 * compressed against earlier names. */
static const uint8_t cname_reply[] = {
	0xbe,
	0xef,
	0x81,
	0x80,
	0x00,
	0x01,
	0x00,
	0x02,
	0x00,
	0x00,
	0x00,
	0x00,
	/* question: www.example.com A IN */
	0x03,
	'w',
	'w',
	'w',
	0x07,
	'e',
	'x',
	'a',
	'm',
	'p',
	'l',
	'e',
	0x03,
	'c',
	'o',
	'm',
	0x00,
	0x00,
	0x01,
	0x00,
	0x01,
	/* www.example.com CNAME example.com (pointer to offset 16) */
	0xc0,
	0x0c,
	0x00,
	0x05,
	0x00,
	0x01,
	0x00,
	0x00,
	0x0e,
	0x10,
	0x00,
	0x02,
	0xc0,
	0x10,
	/* example.com A 93.184.216.34, TTL 300 */
	0xc0,
	0x10,
	0x00,
	0x01,
	0x00,
	0x01,
	0x00,
	0x00,
	0x01,
	0x2c,
	0x00,
	0x04,
	93,
	184,
	216,
	34,
};

Test(dns, names_round_trip)
{
	static const char *const names[] = { "example.com", "a.b.c.d.e",
					     "xn--bcher-kva.example",
					     "_sip._tcp.x" };
	uint8_t wire[300];
	char text[DNS_TEXT_MAX + 1];
	size_t i, off;
	long n;

	for (i = 0; i < ARRAY_SIZE(names); i++) {
		n = dns_name_encode(names[i], wire, sizeof(wire));
		cr_assert_gt(n, 0);
		off = 0;
		cr_assert_eq(dns_name_decode(wire, (size_t)n, &off, text), 0);
		cr_assert_eq(off, (size_t)n);
		cr_assert_str_eq(text, names[i]);
	}
	cr_assert_eq(dns_name_encode("example.com.", wire, sizeof(wire)), 13);
	cr_assert_eq(dns_name_encode(".", wire, sizeof(wire)), 1);
	off = 0;
	cr_assert_eq(dns_name_decode(wire, 1, &off, text), 0);
	cr_assert_str_eq(text, "");
}

Test(dns, bad_names_are_refused)
{
	char label64[80], long_name[300], text[DNS_TEXT_MAX + 1];
	uint8_t wire[300];
	size_t off;

	memset(label64, 'a', 64);
	label64[64] = 0;
	cr_assert_eq(dns_name_encode(label64, wire, sizeof(wire)), -EINVAL);
	label64[63] = 0;
	cr_assert_eq(dns_name_encode(label64, wire, sizeof(wire)), 65);
	cr_assert_eq(dns_name_encode("a..b", wire, sizeof(wire)), -EINVAL);
	/* 127 labels of "a.": 254 characters, a 256-byte wire name */
	for (off = 0; off < 254; off += 2)
		memcpy(long_name + off, "a.", 2);
	long_name[253] = 0; /* 253 characters: the longest */
	cr_assert_gt(dns_name_encode(long_name, wire, sizeof(wire)), 0);
	long_name[253] = 'b';
	long_name[254] = 0;
	cr_assert_eq(dns_name_encode(long_name, wire, sizeof(wire)), -EINVAL);
	cr_assert_eq(dns_name_encode("example.com", wire, 5), -ENOSPC);

	/* a label with a dot, a NUL, a space */
	{
		static const uint8_t dot[] = { 3, 'a', '.', 'b', 0 };
		static const uint8_t nul[] = { 3, 'a', 0, 'b', 0 };
		static const uint8_t sp[] = { 3, 'a', ' ', 'b', 0 };
		static const uint8_t past[] = { 5, 'a', 'b' };
		static const uint8_t noend[] = { 1, 'a' };
		static const uint8_t ext[] = { 0x41, 'a', 0 };

		off = 0;
		cr_assert_eq(dns_name_decode(dot, sizeof(dot), &off, text),
			     -EINVAL);
		off = 0;
		cr_assert_eq(dns_name_decode(nul, sizeof(nul), &off, text),
			     -EINVAL);
		off = 0;
		cr_assert_eq(dns_name_decode(sp, sizeof(sp), &off, text),
			     -EINVAL);
		off = 0;
		cr_assert_eq(dns_name_decode(past, sizeof(past), &off, text),
			     -EINVAL);
		off = 0;
		cr_assert_eq(dns_name_decode(noend, sizeof(noend), &off, text),
			     -EINVAL);
		off = 0;
		cr_assert_eq(dns_name_decode(ext, sizeof(ext), &off, text),
			     -EINVAL);
	}
}

Test(dns, compression_pointers_go_backwards_and_never_loop)
{
	char text[DNS_TEXT_MAX + 1];
	size_t off;
	/* 0: "a" then a pointer to itself; 4: a forward pointer */
	static const uint8_t self[] = { 1, 'a', 0xc0, 0x00, 0xc0, 0x06, 0 };
	/* labels at 0..1, pointer at 2 -> 0: reads "a", reaches the pointer
	 * again: a loop that only the length bound stops */
	static const uint8_t loop[] = { 1, 'a', 0xc0, 0x00 };
	static const uint8_t fwd[] = { 0xc0, 0x02, 0 };

	off = 2;
	cr_assert_eq(dns_name_decode(self, sizeof(self), &off, text), -EINVAL);
	off = 0;
	cr_assert_eq(dns_name_decode(loop, sizeof(loop), &off, text), -EINVAL);
	off = 0;
	cr_assert_eq(dns_name_decode(fwd, sizeof(fwd), &off, text), -EINVAL);
	/* a good pointer: the offset ends after the pointer, not after its
	 * target */
	off = 47;
	cr_assert_eq(dns_name_decode(cname_reply, sizeof(cname_reply), &off,
				     text),
		     0);
	cr_assert_str_eq(text, "example.com");
	cr_assert_eq(off, 49);
}

Test(dns, guest_queries)
{
	uint8_t msg[512];
	struct dns_query q;
	long n = dns_build_query(0x1234, "API.example.com.", DNS_AAAA, msg,
				 sizeof(msg));

	cr_assert_gt(n, 0);
	cr_assert_eq(dns_parse_query(msg, (size_t)n, &q), 0);
	cr_assert_eq(q.id, 0x1234);
	cr_assert(q.rd);
	cr_assert_str_eq(q.name, "API.example.com");
	cr_assert_eq(q.qtype, DNS_AAAA);
	cr_assert_eq(q.qclass, DNS_CLASS_IN);

	/* an OPT record in the additional section is fine */
	{
		uint8_t e[600];
		static const uint8_t opt[] = { 0, 0, 41, 0x10, 0, 0,
					       0, 0, 0,	 0,    0 };

		memcpy(e, msg, (size_t)n);
		memcpy(e + n, opt, sizeof(opt));
		e[11] = 1;
		cr_assert_eq(dns_parse_query(e, (size_t)n + sizeof(opt), &q),
			     0);
	}
	cr_assert_eq(dns_parse_query(msg, 1, &q), -EINVAL);
	cr_assert_eq(dns_parse_query(msg, 11, &q), -EINVAL);
	cr_assert_eq(q.id, 0x1234, "the id is read for FORMERR");
	cr_assert_eq(dns_parse_query(msg, (size_t)n - 1, &q), -EINVAL);
	msg[2] |= 0x80; /* QR: a response */
	cr_assert_eq(dns_parse_query(msg, (size_t)n, &q), -EPROTO);
	msg[2] = (uint8_t)(2 << 3); /* opcode STATUS */
	cr_assert_eq(dns_parse_query(msg, (size_t)n, &q), -EOPNOTSUPP);
	msg[2] = 1;
	msg[5] = 2; /* two questions */
	cr_assert_eq(dns_parse_query(msg, (size_t)n, &q), -EINVAL);
	msg[5] = 1;
	msg[7] = 1; /* an answer in a query */
	cr_assert_eq(dns_parse_query(msg, (size_t)n, &q), -EINVAL);
}

Test(dns, replies_we_build_parse_back)
{
	struct dns_query q = { .id = 7,
			       .rd = true,
			       .name = "www.Example.com",
			       .qtype = DNS_A,
			       .qclass = DNS_CLASS_IN };
	struct dns_rr rr[2] = {
		{ .type = DNS_CNAME,
		  .ttl = 60,
		  .name = "www.example.com",
		  .target = "example.com" },
		{ .type = DNS_A,
		  .ttl = 30,
		  .name = "example.com",
		  .addr = { 192, 0, 2, 1 } },
	};
	struct dns_answer a;
	uint8_t out[512];
	long n = dns_build_reply(&q, DNS_NOERROR, rr, 2, out, sizeof(out));

	cr_assert_gt(n, 0);
	cr_assert_eq(out[2] & 0x80, 0x80, "QR");
	cr_assert_eq(out[2] & 0x01, 0x01, "RD copied");
	cr_assert_eq(out[3] & 0x80, 0x80, "RA");
	cr_assert_eq(out[7], 2);
	cr_assert_eq(dns_parse_reply(out, (size_t)n, 7, "www.example.com",
				     DNS_A, &a),
		     0);
	cr_assert_eq(a.rcode, DNS_NOERROR);
	cr_assert_eq(a.n, 2);
	cr_assert_eq(a.rr[1].ttl, 30);
	cr_assert(memcmp(a.rr[1].addr, rr[1].addr, 4) == 0);

	n = dns_build_reply(&q, DNS_NXDOMAIN, NULL, 0, out, sizeof(out));
	cr_assert_eq(dns_parse_reply(out, (size_t)n, 7, "www.example.com",
				     DNS_A, &a),
		     0);
	cr_assert_eq(a.rcode, DNS_NXDOMAIN);
	cr_assert_eq(a.n, 0);

	/* too small for the records: TC, the question kept */
	n = dns_build_reply(&q, DNS_NOERROR, rr, 2, out, 40);
	cr_assert_gt(n, 0);
	cr_assert_eq(out[2] & 0x02, 0x02, "TC");
	cr_assert_eq(out[7], 0);
	cr_assert_eq(dns_build_reply(&q, DNS_NOERROR, rr, 2, out, 20), -ENOSPC);

	/* FORMERR for a query that could not be read: header only */
	q.qclass = 0;
	n = dns_build_reply(&q, DNS_FORMERR, NULL, 0, out, sizeof(out));
	cr_assert_eq(n, DNS_HDR_LEN);
	cr_assert_eq(out[3] & 0xf, DNS_FORMERR);
	cr_assert_eq(out[5], 0);
}

Test(dns, upstream_reply_with_a_cname_chain)
{
	struct dns_answer a;
	char ip[32];

	cr_assert_eq(dns_parse_reply(cname_reply, sizeof(cname_reply), 0xbeef,
				     "WWW.example.com", DNS_A, &a),
		     0);
	cr_assert_eq(a.n, 2);
	cr_assert_eq(a.rr[0].type, DNS_CNAME);
	cr_assert_str_eq(a.rr[0].target, "example.com");
	cr_assert_eq(a.rr[0].ttl, 3600);
	cr_assert_eq(a.rr[1].type, DNS_A);
	cr_assert_eq(a.rr[1].ttl, 300);
	inet_ntop(AF_INET, a.rr[1].addr, ip, sizeof(ip));
	cr_assert_str_eq(ip, "93.184.216.34");
}

Test(dns, stray_and_spoofed_replies_are_refused)
{
	struct dns_answer a;
	uint8_t m[sizeof(cname_reply)];

	cr_assert_eq(dns_parse_reply(cname_reply, sizeof(cname_reply), 0xbeee,
				     "www.example.com", DNS_A, &a),
		     -EINVAL, "wrong id");
	cr_assert_eq(dns_parse_reply(cname_reply, sizeof(cname_reply), 0xbeef,
				     "other.com", DNS_A, &a),
		     -EINVAL, "another question");
	cr_assert_eq(dns_parse_reply(cname_reply, sizeof(cname_reply), 0xbeef,
				     "www.example.com", DNS_AAAA, &a),
		     -EINVAL, "another type");
	cr_assert_eq(dns_parse_reply(cname_reply, sizeof(cname_reply) - 1,
				     0xbeef, "www.example.com", DNS_A, &a),
		     -EINVAL, "cut short");
	memcpy(m, cname_reply, sizeof(m));
	m[2] &= 0x7f; /* not a response */
	cr_assert_eq(dns_parse_reply(m, sizeof(m), 0xbeef, "www.example.com",
				     DNS_A, &a),
		     -EINVAL);
}

Test(dns, only_the_chain_of_the_question_is_kept)
{
	/* question a.test A; answers: b.test A (unrelated, first),
	 * c.test A (reached through the CNAME listed after it),
	 * a.test CNAME c.test, and an A record with a wrong length */
	uint8_t m[512];
	struct dns_query q = { .id = 9,
			       .name = "a.test",
			       .qtype = DNS_A,
			       .qclass = DNS_CLASS_IN };
	struct dns_rr rr[3] = {
		{ .type = DNS_A,
		  .ttl = 1,
		  .name = "b.test",
		  .addr = { 198, 51, 100, 1 } },
		{ .type = DNS_A,
		  .ttl = 0x80000001u,
		  .name = "c.test",
		  .addr = { 198, 51, 100, 2 } },
		{ .type = DNS_CNAME,
		  .ttl = 5,
		  .name = "a.test",
		  .target = "c.test" },
	};
	struct dns_answer a;
	long n = dns_build_reply(&q, 0, rr, 3, m, sizeof(m));
	static const uint8_t bad_a[] = { 0xc0, 0x0c, 0, 1, 0, 1, 0, 0,
					 0,    9,    0, 3, 1, 2, 3 };

	memcpy(m + n, bad_a, sizeof(bad_a));
	n += (long)sizeof(bad_a);
	m[7] = 4;
	cr_assert_eq(dns_parse_reply(m, (size_t)n, 9, "a.test", DNS_A, &a), 0);
	cr_assert_eq(a.n, 2);
	cr_assert_eq(a.addrs, 3, "every A record counts, kept or not");
	cr_assert_str_eq(a.rr[0].name, "c.test");
	cr_assert_eq(a.rr[0].ttl, 0, "a TTL with the top bit set is zero");
	cr_assert_eq(a.rr[1].type, DNS_CNAME);
}

Test(dns, a_cname_target_may_not_leave_its_rdata)
{
	uint8_t m[sizeof(cname_reply)];
	struct dns_answer a;

	memcpy(m, cname_reply, sizeof(m));
	/* the CNAME's rdlength says 1: its pointer would run past it */
	m[44] = 1;
	cr_assert_eq(dns_parse_reply(m, sizeof(m), 0xbeef, "www.example.com",
				     DNS_A, &a),
		     -EINVAL);
}

Test(dns, many_records_are_read_and_few_kept)
{
	/* 70 A records for the question's name: more than are looked at
	 * (64) and than are kept (32); a fuzzer found the 65th written past
	 * the end of the table */
	static uint8_t m[2048];
	struct dns_query q = { .id = 3,
			       .name = "many.test",
			       .qtype = DNS_A,
			       .qclass = DNS_CLASS_IN };
	struct dns_rr rr[70];
	struct dns_answer a;
	long n;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(rr); i++) {
		memset(&rr[i], 0, sizeof(rr[i]));
		rr[i].type = DNS_A;
		strcpy(rr[i].name, "many.test");
		rr[i].addr[0] = 198;
		rr[i].addr[3] = (uint8_t)i;
	}
	n = dns_build_reply(&q, 0, rr, ARRAY_SIZE(rr), m, sizeof(m));
	cr_assert_eq(m[7], 70);
	cr_assert_eq(dns_parse_reply(m, (size_t)n, 3, "many.test", DNS_A, &a),
		     0);
	cr_assert_eq(a.n, DNS_ANSWERS_MAX);
	cr_assert_eq(a.rr[31].addr[3], 31);
}
