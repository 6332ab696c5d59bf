/* netstack/sniff.h: what a TCP flow's first bytes are, for the broker's
 * choice (docs/credentials.md).
 *
 * When a sandbox has a broker, the sentry holds the first bytes a guest
 * sends on each outside TCP connection (at most SNIFF_MAX) until they say
 * what the flow is: a TLS ClientHello (and its server name), a plain HTTP
 * request line, or something else. Pure computation on caller memory
 * (the bytes are the guest's: hostile): unit-tested and fuzzed.
 */
#ifndef MOAT_NETSTACK_SNIFF_H
#define MOAT_NETSTACK_SNIFF_H

#include <stddef.h>
#include <stdint.h>

#include "policy/egress.h"

#define SNIFF_MAX                                                              \
	16384 /* bytes held before deciding: a ClientHello
			 * with post-quantum key shares fits */

enum sniff_kind {
	SNIFF_MORE,  /* not enough bytes yet to tell */
	SNIFF_TLS,   /* a TLS handshake record holding a ClientHello */
	SNIFF_HTTP,  /* "METHOD SP target SP HTTP/1.x": a token of 1..20
		      * RFC 9110 tchars, a space, a visible byte, then
		      * " HTTP/" (any case) before the line ends; the rest
		      * of the line may be cut off; "PRI * HTTP/2.0" too;
		      * HTTP/0.9's "GET target" line; a line that is still
		      * going at SNIFF_MAX */
	SNIFF_OTHER, /* anything else, a malformed ClientHello included */
};

struct sniff_result {
	enum sniff_kind kind;
	/* SNIFF_TLS: the server_name extension's host_name (lower case, no
	 * trailing dot, checked by egress_name_normalize); "" when the
	 * ClientHello has none or it is not a valid name */
	char sni[EGRESS_NAME_MAX + 1];
	/* SNIFF_TLS: the ClientHello offers ALPN "h2" */
	int alpn_h2;
};

/* Classify buf[0..n). SNIFF_MORE only while n < SNIFF_MAX and the bytes
 * so far are a valid prefix of a TLS record or of a request line; a
 * ClientHello spread over several records is read across them. */
void sniff(const uint8_t *buf, size_t n, struct sniff_result *out);

#endif
