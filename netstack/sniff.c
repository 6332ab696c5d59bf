/* netstack/sniff.c: what a TCP flow's first bytes are (see sniff.h).
 *
 * The bytes are the guest's, so every length is checked against both the
 * bytes present and the length of what encloses it. A length that
 * overruns its enclosure is malformed (SNIFF_OTHER at once); a read past
 * the bytes present but inside its enclosure is only early (SNIFF_MORE).
 * Each call is linear in n: the sentry calls it again as bytes arrive.
 */
#include "netstack/sniff.h"

#include <string.h>

#define TLS_HANDSHAKE 22      /* record content type */
#define TLS_CLIENT_HELLO 1    /* handshake message type */
#define TLS_RECORD_MAX 16384  /* a plaintext fragment, RFC 8446 5.1 */
#define TLS_EXT_SERVER_NAME 0 /* RFC 6066 3 */
#define TLS_EXT_ALPN 16	      /* RFC 7301 3.1 */
#define TLS_SNI_HOST_NAME 0
#define HTTP_METHOD_MAX 20 /* longer tokens are no method anyone uses */

enum step {
	STEP_OK,
	STEP_MORE,
	STEP_BAD
};

/* A window on a ClientHello being read: bytes [0, avail) are present,
 * [0, end) is what the enclosing lengths allow. */
struct rd {
	const uint8_t *p;
	size_t off, end, avail;
};

/* Take k bytes at r->off: STEP_BAD past the enclosure, STEP_MORE past
 * the bytes present. */
static enum step take(struct rd *r, size_t k, const uint8_t **at)
{
	if (k > r->end - r->off)
		return STEP_BAD;
	if (r->off + k > r->avail) /* off may already be past avail */
		return STEP_MORE;
	*at = r->p + r->off;
	r->off += k;
	return STEP_OK;
}

/* An unsigned big-endian integer of k (1..3) bytes. */
static enum step take_uint(struct rd *r, size_t k, size_t *v)
{
	const uint8_t *at;
	enum step s = take(r, k, &at);

	if (s != STEP_OK)
		return s;
	*v = 0;
	for (size_t i = 0; i < k; i++)
		*v = *v << 8 | at[i];
	return STEP_OK;
}

/* A vector with a k-byte length of lo..hi bytes: *sub becomes a window
 * on its contents (its own enclosure) and r moves past it. */
static enum step take_vec(struct rd *r, size_t k, size_t lo, size_t hi,
			  struct rd *sub)
{
	size_t len;
	enum step s = take_uint(r, k, &len);

	if (s != STEP_OK)
		return s;
	if (len < lo || len > hi || len > r->end - r->off)
		return STEP_BAD;
	*sub = (struct rd){ .p = r->p,
			    .off = r->off,
			    .end = r->off + len,
			    .avail = r->avail < r->off + len ? r->avail :
							       r->off + len };
	r->off += len;
	return STEP_OK;
}

/* server_name: a list of (type, name); one host_name at most (RFC 6066:
 * two names of one type would leave the server's choice open, and the
 * broker must see the name the upstream sees). */
static enum step ext_server_name(struct rd *e, struct sniff_result *out)
{
	struct rd list, name;
	size_t type;
	int seen = 0;
	enum step s = take_vec(e, 2, 1, SIZE_MAX, &list);

	if (s != STEP_OK)
		return s;
	if (list.end != e->end)
		return STEP_BAD;
	while (list.off < list.end) {
		if ((s = take_uint(&list, 1, &type)) != STEP_OK ||
		    (s = take_vec(&list, 2, 1, SIZE_MAX, &name)) != STEP_OK)
			return s;
		if (type != TLS_SNI_HOST_NAME)
			continue;
		if (seen++)
			return STEP_BAD;
		if (name.avail < name.end)
			return STEP_MORE;
		/* A name that is no DNS name (too long, a NUL, an
		 * address) is kept as "": the hello is still TLS. */
		char text[EGRESS_NAME_MAX + 2];
		size_t len = name.end - name.off;

		out->sni[0] = '\0';
		if (len <= EGRESS_NAME_MAX + 1 &&
		    !memchr(name.p + name.off, '\0', len)) {
			memcpy(text, name.p + name.off, len);
			text[len] = '\0';
			if (egress_name_normalize(text, out->sni) < 0)
				out->sni[0] = '\0';
		}
	}
	return STEP_OK;
}

/* application_layer_protocol_negotiation: non-empty names. */
static enum step ext_alpn(struct rd *e, struct sniff_result *out)
{
	struct rd list, proto;
	enum step s = take_vec(e, 2, 2, SIZE_MAX, &list);

	if (s != STEP_OK)
		return s;
	if (list.end != e->end)
		return STEP_BAD;
	while (list.off < list.end) {
		if ((s = take_vec(&list, 1, 1, 255, &proto)) != STEP_OK)
			return s;
		if (proto.avail < proto.end)
			return STEP_MORE;
		if (proto.end - proto.off == 2 &&
		    !memcmp(proto.p + proto.off, "h2", 2))
			out->alpn_h2 = 1;
	}
	return STEP_OK;
}

/* The ClientHello body (after the 4-byte handshake header), RFC 8446
 * 4.1.2; the fields of TLS 1.0-1.2 hellos are the same. */
static enum step client_hello(struct rd *r, struct sniff_result *out)
{
	const uint8_t *at;
	struct rd v, exts, e;
	size_t type;
	int have_sni = 0, have_alpn = 0;
	enum step s;

	if ((s = take(r, 2, &at)) != STEP_OK) /* legacy_version */
		return s;
	if (at[0] != 3)
		return STEP_BAD;
	if ((s = take(r, 32, &at)) != STEP_OK ||	   /* random */
	    (s = take_vec(r, 1, 0, 32, &v)) != STEP_OK ||  /* session id */
	    (s = take_vec(r, 2, 2, 65534, &v)) != STEP_OK) /* suites */
		return s;
	if ((v.end - v.off) % 2)
		return STEP_BAD;
	if ((s = take_vec(r, 1, 1, 255, &v)) != STEP_OK) /* compression */
		return s;
	if (r->off == r->end)
		return STEP_OK; /* no extensions (TLS 1.0 and 1.1 allow it) */
	if ((s = take_vec(r, 2, 0, SIZE_MAX, &exts)) != STEP_OK)
		return s;
	if (exts.end != r->end)
		return STEP_BAD;
	while (exts.off < exts.end) {
		if ((s = take_uint(&exts, 2, &type)) != STEP_OK ||
		    (s = take_vec(&exts, 2, 0, SIZE_MAX, &e)) != STEP_OK)
			return s;
		/* A second copy of either would let the broker and the
		 * upstream read different names: refused, as RFC 8446
		 * 4.2 requires. */
		if (type == TLS_EXT_SERVER_NAME) {
			if (have_sni++)
				return STEP_BAD;
			s = ext_server_name(&e, out);
		} else if (type == TLS_EXT_ALPN) {
			if (have_alpn++)
				return STEP_BAD;
			s = ext_alpn(&e, out);
		} else {
			continue;
		}
		if (s != STEP_OK)
			return s;
	}
	return STEP_OK;
}

/* The first `have` bytes (up to 5) of a record header: may they begin a
 * handshake record (type 22, version 3.x, 1..2^14 bytes)? The minor
 * version is not checked: servers ignore it (RFC 8446 5.1; OpenSSL
 * answers a hello in a "3.0" or "3.255" record), so a check would only
 * let such a hello pass by the broker. */
static int record_header_ok(const uint8_t *h, size_t have)
{
	if (have > 0 && h[0] != TLS_HANDSHAKE)
		return 0;
	if (have > 1 && h[1] != 3)
		return 0;
	if (have > 3 && h[3] > TLS_RECORD_MAX >> 8)
		return 0;
	if (have > 4) {
		size_t len = (size_t)h[3] << 8 | h[4];

		if (len < 1 || len > TLS_RECORD_MAX)
			return 0; /* empty handshake fragments are forbidden */
	}
	return 1;
}

static enum sniff_kind sniff_tls(const uint8_t *buf, size_t n,
				 struct sniff_result *out)
{
	/* The handshake stream, its fragments joined: the hello may span
	 * records. Copied (at most SNIFF_MAX bytes, on the stack) so that
	 * the parser reads one contiguous message. */
	uint8_t hs[SNIFF_MAX];
	size_t have = 0, pos = 0;
	struct rd r;
	size_t len;

	while (pos < n) {
		size_t hdr = n - pos < 5 ? n - pos : 5, frag;

		if (!record_header_ok(buf + pos, hdr))
			return SNIFF_OTHER;
		if (hdr < 5)
			break;
		frag = (size_t)buf[pos + 3] << 8 | buf[pos + 4];
		pos += 5;
		if (frag > n - pos)
			frag = n - pos;
		if (frag > sizeof(hs) - have)
			return SNIFF_OTHER; /* cannot happen: n <= SNIFF_MAX */
		memcpy(hs + have, buf + pos, frag);
		have += frag;
		pos += frag;
		/* Stop at the end of the hello: what follows (a
		 * ChangeCipherSpec, early data) is no business of ours. */
		if (have >= 4) {
			len = (size_t)hs[1] << 16 | (size_t)hs[2] << 8 | hs[3];
			if (have >= 4 + len)
				break;
		}
	}
	if (have >= 1 && hs[0] != TLS_CLIENT_HELLO)
		return SNIFF_OTHER;
	if (have < 4)
		return n < SNIFF_MAX ? SNIFF_MORE : SNIFF_OTHER;
	len = (size_t)hs[1] << 16 | (size_t)hs[2] << 8 | hs[3];
	/* A hello that cannot fit in SNIFF_MAX with one record header is
	 * never waited for: it passes through as something else. */
	if (len > SNIFF_MAX - 5 - 4)
		return SNIFF_OTHER;
	r = (struct rd){ .p = hs,
			 .off = 4,
			 .end = 4 + len,
			 .avail = have < 4 + len ? have : 4 + len };
	switch (client_hello(&r, out)) {
	case STEP_OK:
		if (r.off != r.end)
			return SNIFF_OTHER;
		/* the last extension's contents may still be on the way */
		if (r.avail < r.end)
			return n < SNIFF_MAX ? SNIFF_MORE : SNIFF_OTHER;
		return SNIFF_TLS;
	case STEP_MORE:
		return n < SNIFF_MAX ? SNIFF_MORE : SNIFF_OTHER;
	case STEP_BAD:
		break;
	}
	return SNIFF_OTHER;
}

/* RFC 9110 5.6.2 tchar */
static int tchar(uint8_t c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
	       (c >= 'A' && c <= 'Z') || (c && strchr("!#$%&'*+-.^_`|~", c));
}

/* Does the line from buf[i] on (after "METHOD SP") name an HTTP version
 * (" HTTP/", in any case) before it ends? SNIFF_MORE until it does or
 * the line ends; a line longer than what is held is given to the broker
 * (its whole is the broker's to check). */
static enum sniff_kind http_version(const uint8_t *buf, size_t n, size_t i)
{
	static const char v[] = " http/";
	size_t start = i;

	for (; i < n && buf[i] != '\n'; i++) {
		size_t k = 0;

		while (k < sizeof(v) - 1 && i + k < n &&
		       (buf[i + k] | 0x20) == (uint8_t)v[k])
			k++;
		if (k == sizeof(v) - 1)
			return SNIFF_HTTP;
	}
	if (i < n) {
		/* the line ended with no version: HTTP/0.9's "GET target"
		 * only (memcached's "get k", IRC's "NICK n" are no
		 * requests) */
		return start == 4 && !memcmp(buf, "GET ", 4) ? SNIFF_HTTP :
							       SNIFF_OTHER;
	}
	return n < SNIFF_MAX ? SNIFF_MORE : SNIFF_HTTP;
}

/* "METHOD SP x" with x visible, then " HTTP/" before the line ends: a
 * request line (the rest is the broker's to check). Without the version
 * the line is another protocol's (memcached, IRC, the PROXY protocol),
 * whose server would wait in vain for the rest of a request head.
 * "PRI * HTTP/2.0" is one too. */
static enum sniff_kind sniff_http(const uint8_t *buf, size_t n)
{
	size_t i = 0;

	while (i < n && tchar(buf[i]))
		if (++i > HTTP_METHOD_MAX)
			return SNIFF_OTHER;
	/* An SSH client's identification string ("SSH-2.0-JSCH-0.1.54
	 * comment", RFC 4253 4.2) is a token and a space too; no method
	 * begins so, and ssh must not be handed to the broker. */
	if (i >= 4 && !memcmp(buf, "SSH-", 4))
		return SNIFF_OTHER;
	if (i == n)
		return SNIFF_MORE; /* i >= 1: buf[0] is no record type */
	if (i == 0 || buf[i] != ' ')
		return SNIFF_OTHER;
	if (++i == n)
		return SNIFF_MORE;
	if (buf[i] <= ' ' || buf[i] >= 0x7f)
		return SNIFF_OTHER;
	return http_version(buf, n, i);
}

void sniff(const uint8_t *buf, size_t n, struct sniff_result *out)
{
	memset(out, 0, sizeof(*out));
	if (n == 0)
		out->kind = SNIFF_MORE;
	else if (buf[0] == TLS_HANDSHAKE)
		out->kind = sniff_tls(buf, n > SNIFF_MAX ? SNIFF_MAX : n, out);
	else
		out->kind = sniff_http(buf, n);
	if (out->kind != SNIFF_TLS) {
		out->sni[0] = '\0';
		out->alpn_h2 = 0;
	}
}
