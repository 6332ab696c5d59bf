/* broker/http2.h: HTTP/2 through the broker (docs/credentials.md), with
 * Debian's libnghttp2: a server session faces the guest, a client session
 * faces upstream, and each guest stream is bridged to one upstream
 * stream.
 *
 * Push-based and free of I/O like broker/http1.h: the flow's loop feeds
 * what it read from each side and writes what the engine appended to the
 * output buffers. It is used only when both the guest and upstream chose
 * h2 by ALPN (broker/broker.c).
 *
 * Every stream's request is checked as an HTTP/1 request is (the shared
 * checks of http1.h, h1_msg_*): :authority (and any Host) must be the
 * connection's SNI; placeholders are swapped where allowed and refused
 * everywhere else, in the headers, :path and the DATA frames (the body
 * opt-in as in HTTP/1, searched across frames). A refused stream gets
 * the broker's answer (:status 403 or 400 and "moat: blocked: ..."), one
 * audit record, and an RST_STREAM upstream if its request went up
 * already; the connection and its other streams go on. Responses have
 * every value redacted from headers, DATA and trailers (gRPC's status is
 * in trailers); a content-length is dropped when redaction may change
 * lengths.
 *
 * Bounded: no more than H2_STREAMS_MAX streams at once from the guest;
 * a stream's bytes waiting for the other side never exceed about one
 * stream window (H2_WINDOW): the engine gives the window back (WINDOW_
 * UPDATE) only as the other side takes the bytes. Not brokered: CONNECT
 * (refused with a 400), server push (disabled upstream), request
 * trailers (the stream is reset), gRPC's own message compression
 * (grpc-encoding: a compressed message is not searched).
 */
#ifndef MOAT_BROKER_HTTP2_H
#define MOAT_BROKER_HTTP2_H

#include <stddef.h>
#include <stdint.h>

#include "broker/http1.h"

#define H2_STREAMS_MAX 100 /* concurrent streams the guest may open */
#define H2_WINDOW 65535	   /* a stream's window, each side */

struct h2_conn;

/* NULL on ENOMEM. cfg as for h1_new (tls, host: the SNI); it must
 * outlive the engine. The connection prefaces (SETTINGS) are queued:
 * the first h2_from_* call's output carries them. */
struct h2_conn *h2_new(const struct h1_config *cfg);
void h2_free(struct h2_conn *c);

/* n bytes from the guest or from upstream; what goes to each side is
 * appended to up and down. An enum h1_status (H1_MORE, or H1_CLOSE: a
 * protocol error, or the end of both sessions: write down, then close),
 * or -ENOMEM. n may be 0: only the output is made. */
int h2_from_guest(struct h2_conn *c, const uint8_t *buf, size_t n,
		  struct bbuf *up, struct bbuf *down);
int h2_from_upstream(struct h2_conn *c, const uint8_t *buf, size_t n,
		     struct bbuf *up, struct bbuf *down);
/* A side closed: the guest's end is the connection's; upstream's ends
 * every stream not answered whole (RST_STREAM) and the guest gets a
 * GOAWAY. H1_CLOSE, or -ENOMEM. */
int h2_guest_eof(struct h2_conn *c, struct bbuf *up, struct bbuf *down);
int h2_upstream_eof(struct h2_conn *c, struct bbuf *up, struct bbuf *down);

#endif
