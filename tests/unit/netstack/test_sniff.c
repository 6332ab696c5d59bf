/* tests/unit/netstack/test_sniff.c: the first-bytes classifier.
 *
 * The real hellos in sniff_hellos.h were captured from a listener on the
 * loopback (python3: accept, read until a 1 s pause, write the bytes)
 * while each client named there connected to it; the synthetic ones
 * below are built field by field, to break one field at a time.
 */
#include <criterion/criterion.h>

#include <stdlib.h>
#include <string.h>

#include "netstack/sniff.h"
#include "tests/unit/netstack/sniff_hellos.h"

TestSuite(sniff);

static struct sniff_result run(const void *buf, size_t n)
{
	struct sniff_result r;

	memset(&r, 0x5a, sizeof(r)); /* sniff must set every field */
	sniff(buf, n, &r);
	return r;
}

static enum sniff_kind kind(const void *buf, size_t n)
{
	return run(buf, n).kind;
}

/* Every prefix of buf is SNIFF_MORE, the whole of it is want. */
static void prefixes_then(const uint8_t *buf, size_t n, enum sniff_kind want)
{
	for (size_t k = 0; k < n; k++) {
		struct sniff_result r = run(buf, k);

		cr_assert_eq(r.kind, SNIFF_MORE,
			     "prefix of %zu of %zu bytes: %d", k, n, r.kind);
		cr_assert_str_eq(r.sni, "");
		cr_assert_eq(r.alpn_h2, 0);
	}
	cr_assert_eq(kind(buf, n), want, "all %zu bytes", n);
}

/* ---- real clients --------------------------------------------------- */

struct real {
	const char *what;
	const uint8_t *buf;
	size_t n;
	const char *sni;
	int h2;
};

#define REAL(name, sni, h2)                                                    \
	{                                                                      \
#name, hello_##name, sizeof(hello_##name), sni, h2             \
	}

static const struct real reals[] = {
	REAL(openssl_sni_alpn, "api.example.com", 1),
	REAL(openssl_tls12_nosni, "", 0),
	/* curl sends the name as typed: lower case, no trailing dot here */
	REAL(curl_upper_dot, "api.example.com", 1),
	REAL(curl_http11, "api.example.com", 0),
	REAL(python_nosni, "", 0),
	/* an address is no name: TLS, with no name to go by */
	REAL(openssl_ipsni, "", 0),
	REAL(openssl_multirecord, "multi.example", 1),
};

Test(sniff, real_hellos_give_their_name_and_alpn)
{
	for (size_t i = 0; i < sizeof(reals) / sizeof(reals[0]); i++) {
		struct sniff_result r = run(reals[i].buf, reals[i].n);

		cr_assert_eq(r.kind, SNIFF_TLS, "%s", reals[i].what);
		cr_assert_str_eq(r.sni, reals[i].sni, "%s", reals[i].what);
		cr_assert_eq(r.alpn_h2, reals[i].h2, "%s", reals[i].what);
	}
}

Test(sniff, real_hellos_cut_anywhere_want_more)
{
	for (size_t i = 0; i < sizeof(reals) / sizeof(reals[0]); i++)
		prefixes_then(reals[i].buf, reals[i].n, SNIFF_TLS);
}

Test(sniff, the_multirecord_hello_is_three_records)
{
	/* the fixture is what its comment says: the test above read a
	 * hello across record boundaries */
	size_t pos = 0, records = 0, n = sizeof(hello_openssl_multirecord);

	while (pos < n) {
		pos += 5 + ((size_t)hello_openssl_multirecord[pos + 3] << 8 |
			    hello_openssl_multirecord[pos + 4]);
		records++;
	}
	cr_assert_eq(pos, n);
	cr_assert_eq(records, 3);
}

/* Re-cut the handshake message of a one-record hello into records of
 * frag bytes each (the last shorter). Returns the new length. */
static size_t refragment(const uint8_t *in, size_t n, size_t frag, uint8_t *out)
{
	size_t hs = n - 5, o = 0;

	for (size_t off = 0; off < hs; off += frag) {
		size_t k = hs - off < frag ? hs - off : frag;

		out[o++] = 22;
		out[o++] = 3;
		out[o++] = 3;
		out[o++] = (uint8_t)(k >> 8);
		out[o++] = (uint8_t)k;
		memcpy(out + o, in + 5 + off, k);
		o += k;
	}
	return o;
}

Test(sniff, a_hello_in_many_records_is_read_across_them)
{
	static uint8_t buf[6 * sizeof(hello_curl_upper_dot)];
	const size_t frags[] = { 1, 2, 3, 7, 100, 511 };

	for (size_t i = 0; i < sizeof(frags) / sizeof(frags[0]); i++) {
		size_t n = refragment(hello_curl_upper_dot,
				      sizeof(hello_curl_upper_dot), frags[i],
				      buf);
		struct sniff_result r;

		prefixes_then(buf, n, SNIFF_TLS);
		r = run(buf, n);
		cr_assert_str_eq(r.sni, "api.example.com", "frag %zu",
				 frags[i]);
		cr_assert_eq(r.alpn_h2, 1);
	}
}

Test(sniff, what_follows_the_hello_does_not_matter)
{
	/* TLS 1.3 middlebox compatibility and 0-RTT: a ChangeCipherSpec
	 * and application data records after the hello */
	uint8_t buf[sizeof(hello_openssl_sni_alpn) + 16];
	const uint8_t tail[] = { 20, 3, 3, 0, 1, 1, 23, 3, 3, 0, 5, 'x' };

	memcpy(buf, hello_openssl_sni_alpn, sizeof(hello_openssl_sni_alpn));
	memcpy(buf + sizeof(hello_openssl_sni_alpn), tail, sizeof(tail));
	for (size_t k = 0; k <= sizeof(tail); k++) {
		struct sniff_result r =
			run(buf, sizeof(hello_openssl_sni_alpn) + k);

		cr_assert_eq(r.kind, SNIFF_TLS);
		cr_assert_str_eq(r.sni, "api.example.com");
	}
}

Test(sniff, a_record_of_another_type_inside_the_hello_is_other)
{
	uint8_t buf[2048];
	size_t n = refragment(hello_openssl_sni_alpn,
			      sizeof(hello_openssl_sni_alpn), 100, buf);

	buf[105] = 23; /* the second record: application data */
	cr_assert_eq(kind(buf, 106), SNIFF_OTHER);
	cr_assert_eq(kind(buf, n), SNIFF_OTHER);
}

/* ---- synthetic hellos ----------------------------------------------- */

struct builder {
	uint8_t b[2 * SNIFF_MAX];
	size_t n;
};

static void put(struct builder *b, const void *p, size_t k)
{
	cr_assert_leq(b->n + k, sizeof(b->b));
	memcpy(b->b + b->n, p, k);
	b->n += k;
}

static void put8(struct builder *b, unsigned v)
{
	uint8_t x = (uint8_t)v;

	put(b, &x, 1);
}

static void put16(struct builder *b, unsigned v)
{
	put8(b, v >> 8);
	put8(b, v);
}

static void set16(struct builder *b, size_t at, size_t v)
{
	b->b[at] = (uint8_t)(v >> 8);
	b->b[at + 1] = (uint8_t)v;
}

/* An extension block's pieces. */
static void ext_sni(struct builder *e, const char *name)
{
	size_t len = strlen(name);

	put16(e, 0);
	put16(e, len + 5);
	put16(e, len + 3);
	put8(e, 0);
	put16(e, len);
	put(e, name, len);
}

static void ext_alpn(struct builder *e, const char *const *protos)
{
	size_t at = e->n, len = 0;

	put16(e, 16);
	put16(e, 0);
	put16(e, 0);
	for (; *protos; protos++) {
		put8(e, strlen(*protos));
		put(e, *protos, strlen(*protos));
		len += 1 + strlen(*protos);
	}
	set16(e, at + 2, len + 2);
	set16(e, at + 4, len);
}

/* A one-record TLS 1.3-style ClientHello around an extension block
 * (exts == NULL: no extensions field at all). */
static void hello(struct builder *b, const struct builder *exts)
{
	static const uint8_t random[32];

	b->n = 0;
	put8(b, 22);
	put16(b, 0x0301);
	put16(b, 0); /* record length, set below */
	put8(b, 1);
	put8(b, 0);
	put16(b, 0); /* handshake length */
	put16(b, 0x0303);
	put(b, random, 32);
	put8(b, 0); /* session id */
	put16(b, 2);
	put16(b, 0x1301);
	put8(b, 1);
	put8(b, 0);
	if (exts) {
		put16(b, exts->n);
		put(b, exts->b, exts->n);
	}
	set16(b, 3, b->n - 5);
	set16(b, 7, b->n - 9);
}

/* Offsets in a built hello. */
enum {
	AT_RECLEN = 3,
	AT_HSTYPE = 5,
	AT_HSLEN = 6,
	AT_VERSION = 9,
	AT_SESSID = 43,
	AT_SUITES = 44,
	AT_COMP = 48,
	AT_EXTLEN = 50,
	AT_EXTS = 52,
};

Test(sniff, a_built_hello_reads_as_the_real_ones)
{
	struct builder e = { .n = 0 }, b;
	const char *protos[] = { "http/1.1", "h2", NULL };
	struct sniff_result r;

	ext_sni(&e, "Inspect.TEST.");
	ext_alpn(&e, protos);
	hello(&b, &e);
	prefixes_then(b.b, b.n, SNIFF_TLS);
	r = run(b.b, b.n);
	cr_assert_str_eq(r.sni, "inspect.test");
	cr_assert_eq(r.alpn_h2, 1);
	cr_assert_eq(b.b[AT_EXTS], 0); /* the offsets are right */
	cr_assert_eq(b.b[AT_EXTS + 1], 0);
}

Test(sniff, no_extensions_at_all_is_tls_without_a_name)
{
	struct builder b;
	struct sniff_result r;

	hello(&b, NULL);
	prefixes_then(b.b, b.n, SNIFF_TLS);
	r = run(b.b, b.n);
	cr_assert_str_eq(r.sni, "");
	cr_assert_eq(r.alpn_h2, 0);
}

Test(sniff, alpn_without_h2_and_names_that_merely_start_so)
{
	struct builder e = { .n = 0 }, b;
	const char *protos[] = { "h2c", "h", "http/1.1", NULL };

	ext_alpn(&e, protos);
	hello(&b, &e);
	cr_assert_eq(run(b.b, b.n).kind, SNIFF_TLS);
	cr_assert_eq(run(b.b, b.n).alpn_h2, 0);
}

Test(sniff, a_name_that_is_no_dns_name_is_empty)
{
	static const char *bad[] = { "a..b", "192.0.2.1",  "x..",
				     "a b",  "x.\xc3\xa9", "." };
	char longname[300];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct builder e = { .n = 0 }, b;
		struct sniff_result r;

		ext_sni(&e, bad[i]);
		hello(&b, &e);
		r = run(b.b, b.n);
		cr_assert_eq(r.kind, SNIFF_TLS, "%s", bad[i]);
		cr_assert_str_eq(r.sni, "", "%s", bad[i]);
	}
	/* 253 characters is a name, 254 is not (a trailing dot aside) */
	for (size_t len = 252; len <= 256; len++) {
		struct builder e = { .n = 0 }, b;

		memset(longname, 'a', len);
		for (size_t i = 50; i < len; i += 50)
			longname[i] = '.';
		longname[len] = '\0';
		ext_sni(&e, longname);
		hello(&b, &e);
		cr_assert_eq(run(b.b, b.n).kind, SNIFF_TLS);
		cr_assert_eq(strlen(run(b.b, b.n).sni), len <= 253 ? len : 0,
			     "length %zu", len);
	}
	/* a NUL inside the name */
	{
		struct builder e = { .n = 0 }, b;

		ext_sni(&e, "evil.test.x");
		e.b[9 + 4] = '\0'; /* "evil\0test.x" */
		hello(&b, &e);
		cr_assert_eq(run(b.b, b.n).kind, SNIFF_TLS);
		cr_assert_str_eq(run(b.b, b.n).sni, "");
	}
}

/* Build the good hello, let f break it, check it is SNIFF_OTHER (and
 * that no prefix of it crashes). */
static void broken(const char *what, void (*f)(struct builder *b))
{
	struct builder e = { .n = 0 }, b;
	const char *protos[] = { "h2", NULL };

	ext_sni(&e, "api.test");
	ext_alpn(&e, protos);
	hello(&b, &e);
	f(&b);
	cr_assert_eq(kind(b.b, b.n), SNIFF_OTHER, "%s", what);
	for (size_t k = 0; k < b.n; k++) {
		enum sniff_kind got = kind(b.b, k);

		cr_assert(got == SNIFF_MORE || got == SNIFF_OTHER,
			  "%s: prefix %zu is %d", what, k, got);
	}
}

static void rec_version_300(struct builder *b)
{
	b->b[2] = 0;
}
static void rec_version_305(struct builder *b)
{
	b->b[2] = 5;
}
static void rec_major_2(struct builder *b)
{
	b->b[1] = 2;
}
static void rec_empty(struct builder *b)
{
	set16(b, AT_RECLEN, 0);
}
static void rec_too_long(struct builder *b)
{
	set16(b, AT_RECLEN, 16385);
}
static void not_a_client_hello(struct builder *b)
{
	b->b[AT_HSTYPE] = 2; /* ServerHello */
}
static void hs_len_short(struct builder *b)
{
	set16(b, AT_HSLEN + 1, b->n - 9 - 1);
}
static void hs_len_huge(struct builder *b)
{
	b->b[AT_HSLEN] = 0xff;
}
static void hello_version_2(struct builder *b)
{
	b->b[AT_VERSION] = 2;
}
static void session_id_33(struct builder *b)
{
	b->b[AT_SESSID] = 33;
}
static void suites_odd(struct builder *b)
{
	/* 3 bytes of suites: the compression length becomes a suite byte */
	set16(b, AT_SUITES, 3);
}
static void suites_none(struct builder *b)
{
	set16(b, AT_SUITES, 0);
}
static void compression_none(struct builder *b)
{
	b->b[AT_COMP] = 0;
}
static void ext_len_over(struct builder *b)
{
	set16(b, AT_EXTLEN, b->n - AT_EXTS + 1);
}
static void ext_len_under(struct builder *b)
{
	set16(b, AT_EXTLEN, b->n - AT_EXTS - 1);
}
static void sni_ext_len_over(struct builder *b)
{
	set16(b, AT_EXTS + 2, 0xfff0);
}
static void sni_list_len_short(struct builder *b)
{
	/* the list ends before the extension does */
	b->b[AT_EXTS + 5]--;
}
static void sni_name_len_over(struct builder *b)
{
	b->b[AT_EXTS + 8]++;
}
static void one_stray_byte(struct builder *b)
{
	/* a byte after the extensions, inside the handshake message */
	b->b[b->n++] = 0;
	set16(b, AT_RECLEN, b->n - 5);
	set16(b, AT_HSLEN + 1, b->n - 9);
}
static void alpn_empty_name(struct builder *b)
{
	/* the last byte is h2's "2"; make the entry "" + garbage */
	b->b[b->n - 3] = 0;
}

/* A record's minor version is ignored by servers (OpenSSL answers a hello
 * in a "3.0" or "3.5" record): such a hello is TLS, never passed by. */
Test(sniff, any_record_minor_version_is_tls)
{
	void (*fs[])(struct builder *) = { rec_version_300, rec_version_305 };

	for (size_t i = 0; i < 2; i++) {
		struct builder e = { .n = 0 }, b;

		ext_sni(&e, "api.test");
		hello(&b, &e);
		fs[i](&b);
		struct sniff_result r = run((const char *)b.b, b.n);

		cr_assert_eq(r.kind, SNIFF_TLS, "%zu", i);
		cr_assert_str_eq(r.sni, "api.test");
	}
}

Test(sniff, every_broken_field_is_other)
{
	broken("record major 2", rec_major_2);
	broken("empty record", rec_empty);
	broken("record over 2^14", rec_too_long);
	broken("ServerHello", not_a_client_hello);
	broken("handshake length short of the body", hs_len_short);
	broken("handshake length of 16 MiB", hs_len_huge);
	broken("hello version 2.x", hello_version_2);
	broken("session id of 33", session_id_33);
	broken("odd suites", suites_odd);
	broken("no suites", suites_none);
	broken("no compression method", compression_none);
	broken("extensions past the end", ext_len_over);
	broken("extensions short of the end", ext_len_under);
	broken("server_name past the end", sni_ext_len_over);
	broken("server_name list short", sni_list_len_short);
	broken("host_name past its list", sni_name_len_over);
	broken("a stray byte", one_stray_byte);
	broken("an empty ALPN name", alpn_empty_name);
}

Test(sniff, two_names_are_refused_not_chosen_from)
{
	struct builder e = { .n = 0 }, b;

	/* two server_name extensions */
	ext_sni(&e, "api.test");
	ext_sni(&e, "other.test");
	hello(&b, &e);
	cr_assert_eq(kind(b.b, b.n), SNIFF_OTHER);

	/* two host_names in one list */
	e.n = 0;
	put16(&e, 0);
	put16(&e, 2 + 3 + 8 + 3 + 10);
	put16(&e, 3 + 8 + 3 + 10);
	put8(&e, 0);
	put16(&e, 8);
	put(&e, "api.test", 8);
	put8(&e, 0);
	put16(&e, 10);
	put(&e, "other.test", 10);
	hello(&b, &e);
	cr_assert_eq(kind(b.b, b.n), SNIFF_OTHER);

	/* a name of another type beside the host_name is skipped */
	e.n = 0;
	put16(&e, 0);
	put16(&e, 2 + 3 + 8 + 3 + 4);
	put16(&e, 3 + 8 + 3 + 4);
	put8(&e, 7);
	put16(&e, 4);
	put(&e, "junk", 4);
	put8(&e, 0);
	put16(&e, 8);
	put(&e, "api.test", 8);
	hello(&b, &e);
	cr_assert_eq(kind(b.b, b.n), SNIFF_TLS);
	cr_assert_str_eq(run(b.b, b.n).sni, "api.test");

	/* two ALPN extensions */
	{
		const char *protos[] = { "h2", NULL };

		e.n = 0;
		ext_alpn(&e, protos);
		ext_alpn(&e, protos);
		hello(&b, &e);
		cr_assert_eq(kind(b.b, b.n), SNIFF_OTHER);
	}
}

Test(sniff, a_hello_too_big_to_hold_is_never_waited_for)
{
	struct builder e = { .n = 0 }, b;

	/* padding (21) makes the hello longer than SNIFF_MAX */
	ext_sni(&e, "api.test");
	put16(&e, 21);
	put16(&e, SNIFF_MAX);
	for (size_t i = 0; i < SNIFF_MAX; i++)
		put8(&e, 0);
	hello(&b, &e);
	cr_assert_gt(b.n, SNIFF_MAX);
	/* one record cannot carry it either: its length is over 2^14 */
	cr_assert_eq(kind(b.b, 9), SNIFF_OTHER);

	/* a hello in records that is still unfinished at SNIFF_MAX */
	static uint8_t cut[2 * SNIFF_MAX];
	size_t n = refragment(b.b, b.n, 1000, cut);

	cr_assert_gt(n, SNIFF_MAX);
	cr_assert_eq(kind(cut, SNIFF_MAX - 1), SNIFF_OTHER); /* length */
	cr_assert_eq(kind(cut, SNIFF_MAX), SNIFF_OTHER);
	cr_assert_eq(kind(cut, n), SNIFF_OTHER);
}

Test(sniff, a_big_hello_that_fits_is_read)
{
	struct builder e = { .n = 0 }, b;
	static uint8_t cut[2 * SNIFF_MAX];
	size_t pad = SNIFF_MAX - 200, n;

	/* as a post-quantum key share makes them: kilobytes, several
	 * records */
	put16(&e, 21);
	put16(&e, pad);
	for (size_t i = 0; i < pad; i++)
		put8(&e, 0);
	ext_sni(&e, "big.test");
	hello(&b, &e);
	n = refragment(b.b, b.n, 4096, cut);
	cr_assert_leq(n, SNIFF_MAX);
	cr_assert_eq(kind(cut, n - 1), SNIFF_MORE);
	cr_assert_eq(kind(cut, n), SNIFF_TLS);
	cr_assert_str_eq(run(cut, n).sni, "big.test");
}

/* ---- HTTP ------------------------------------------------------------ */

static enum sniff_kind kind_s(const char *s)
{
	return kind(s, strlen(s));
}

Test(sniff, request_lines_are_http_before_they_end)
{
	static const char *lines[] = {
		"GET / HTTP/1.1\r\nHost: api.test\r\n\r\n",
		"POST /v1/x HTTP/1.1\r\n",
		"PUT /a HTTP/1.0\r\n",
		"DELETE /a HTTP/1.1\r\n",
		"PATCH /a HTTP/1.1\r\n",
		"HEAD / HTTP/1.1\r\n",
		"OPTIONS * HTTP/1.1\r\n",
		"CONNECT api.test:443 HTTP/1.1\r\n",
		"TRACE / HTTP/1.1\r\n",
		"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", /* h2 prior knowledge */
		"M-SEARCH * HTTP/1.1\r\n",
		"BASELINE-CONTROL /x HTTP/1.1\r\n",
		"get http://api.test/ HTTP/1.1\r\n", /* a token is a token */
	};

	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		size_t v = (size_t)(strstr(lines[i], " HTTP/") - lines[i]) + 6;

		/* up to the version's "HTTP/": not yet */
		for (size_t k = 0; k < v; k++)
			cr_assert_eq(kind(lines[i], k), SNIFF_MORE, "%s at %zu",
				     lines[i], k);
		for (size_t k = v; k <= strlen(lines[i]); k++) {
			struct sniff_result r = run(lines[i], k);

			cr_assert_eq(r.kind, SNIFF_HTTP, "%s at %zu", lines[i],
				     k);
			cr_assert_str_eq(r.sni, "");
		}
	}
}

Test(sniff, what_is_no_request_line_is_other)
{
	cr_assert_eq(kind_s("GET  /"), SNIFF_OTHER);	   /* two spaces */
	cr_assert_eq(kind_s("GET\r\n"), SNIFF_OTHER);	   /* no target */
	cr_assert_eq(kind_s("GET\t/"), SNIFF_OTHER);	   /* not SP */
	cr_assert_eq(kind_s(" GET /"), SNIFF_OTHER);	   /* no method */
	cr_assert_eq(kind_s("GET \r\n"), SNIFF_OTHER);	   /* CR target */
	cr_assert_eq(kind_s("GET \x7f"), SNIFF_OTHER);	   /* DEL */
	cr_assert_eq(kind_s("GET \xc3\xa9"), SNIFF_OTHER); /* not ASCII */
	cr_assert_eq(kind_s("G(T /"), SNIFF_OTHER);	   /* not a tchar */
	cr_assert_eq(kind_s("{\"jsonrpc\": 1}"), SNIFF_OTHER);
	cr_assert_eq(kind_s("SSH-2.0-OpenSSH_9.2p1 Debian-2+deb12u3\r\n"),
		     SNIFF_OTHER); /* 21 characters before the space */
	cr_assert_eq(kind_s("SSH-2.0-Go\r\n"), SNIFF_OTHER);
	cr_assert_eq(kind_s("SSH-2.0-JSCH-0.1.54 comment\r\n"), SNIFF_OTHER);
	cr_assert_eq(kind_s("SSH-"), SNIFF_OTHER); /* decided at once */
	cr_assert_eq(kind_s("SSH"), SNIFF_MORE);
	/* 20 characters is a method, 21 is not, even before the space */
	cr_assert_eq(kind_s("ABCDEFGHIJKLMNOPQRST / HTTP/"), SNIFF_HTTP);
	cr_assert_eq(kind_s("ABCDEFGHIJKLMNOPQRST"), SNIFF_MORE);
	cr_assert_eq(kind_s("ABCDEFGHIJKLMNOPQRSTU"), SNIFF_OTHER);
	cr_assert_eq(kind("\0GET /", 6), SNIFF_OTHER);
	cr_assert_eq(kind("GET \0", 5), SNIFF_OTHER);
}

/* Client-first protocols whose first line is "token SP visible" but no
 * request: passed by, not held for a request head that never comes. */
Test(sniff, lines_without_a_version_are_other)
{
	cr_assert_eq(kind_s("get foo\r\n"), SNIFF_OTHER); /* memcached */
	cr_assert_eq(kind_s("set k 0 0 5\r\nhello\r\n"), SNIFF_OTHER);
	cr_assert_eq(kind_s("NICK bob\r\n"), SNIFF_OTHER); /* IRC */
	cr_assert_eq(kind_s("PROXY TCP4 1.2.3.4 5.6.7.8 1 2\r\n"), SNIFF_OTHER);
	cr_assert_eq(kind_s("put 0 0 10 5\n"), SNIFF_OTHER); /* beanstalkd */
	cr_assert_eq(kind_s("POST /x\r\n"), SNIFF_OTHER);
	/* still going: held */
	cr_assert_eq(kind_s("get foo"), SNIFF_MORE);
	cr_assert_eq(kind_s("GET /x HTTP"), SNIFF_MORE);
	/* HTTP/0.9, and the version in any case */
	cr_assert_eq(kind_s("GET /\r\n"), SNIFF_HTTP);
	cr_assert_eq(kind_s("GET / http/1.1\r\n"), SNIFF_HTTP);
	/* a line longer than what is held goes to the broker */
	{
		static char big[SNIFF_MAX + 1];

		memset(big, 'a', sizeof(big));
		memcpy(big, "GET /", 5);
		cr_assert_eq(kind(big, SNIFF_MAX - 1), SNIFF_MORE);
		cr_assert_eq(kind(big, SNIFF_MAX), SNIFF_HTTP);
	}
}

/* ---- junk ------------------------------------------------------------ */

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

Test(sniff, binary_junk_is_other_or_more_never_a_crash)
{
	static uint8_t buf[SNIFF_MAX + 16];
	size_t tls = 0;

	for (int i = 0; i < 20000; i++) {
		size_t n = next() % 600;

		for (size_t k = 0; k < n; k++)
			buf[k] = (uint8_t)next();
		if (i % 2)
			buf[0] = 22; /* down the TLS path */
		enum sniff_kind got = kind(buf, n);

		cr_assert(got != SNIFF_TLS || n >= 9);
		tls += got == SNIFF_TLS;
	}
	cr_assert_eq(tls, 0);
	/* the whole buffer, and more than SNIFF_MAX */
	memset(buf, 0, sizeof(buf));
	cr_assert_eq(kind(buf, sizeof(buf)), SNIFF_OTHER);
	memset(buf, 'A', sizeof(buf));
	cr_assert_eq(kind(buf, sizeof(buf)), SNIFF_OTHER);
}

Test(sniff, mutated_real_hellos_never_crash)
{
	uint8_t buf[sizeof(hello_openssl_multirecord)];

	/* under ASan, any read outside the bytes given is a failure */
	for (int i = 0; i < 20000; i++) {
		const struct real *r =
			&reals[next() % (sizeof(reals) / sizeof(reals[0]))];
		uint8_t *copy = malloc(r->n);
		struct sniff_result res;

		cr_assert_not_null(copy);
		memcpy(copy, r->buf, r->n);
		for (int m = (int)(next() % 4); m >= 0; m--)
			copy[next() % r->n] ^= (uint8_t)(1u << (next() % 8));
		sniff(copy, next() % (r->n + 1), &res);
		cr_assert(res.kind == SNIFF_TLS || res.sni[0] == '\0');
		cr_assert_leq(strlen(res.sni), EGRESS_NAME_MAX);
		free(copy);
	}
	(void)buf;
}
