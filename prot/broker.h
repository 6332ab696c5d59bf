/* prot/broker.h: the messages between the sentry and its broker.
 *
 * One SOCK_SEQPACKET socketpair, made by the sentry when it starts the
 * broker (`moat broker --ctl 3 --as UID:GID`): one message per packet, a
 * struct brk_hdr and then len bytes of payload, fds alongside by
 * SCM_RIGHTS. Each side checks every message it reads (type, length,
 * NUL-terminated strings, the fds it should carry) and treats a bad one
 * as the end of the link: the broker is the process that parses what the
 * guest sends over TLS and HTTP, and the sentry must not trust it more
 * than it has to.
 *
 * Start (the broker is forked before anything else of the sandbox, so
 * that no other process holds a copy of an `env:` source; `--as late`,
 * and its ids come first):
 *   sentry -> broker  BRK_IDS      "UID:GID\0".
 *   sentry -> broker  BRK_CONFIG   payload: the credentials part of the
 *                                  policy as JSON (policy_to_json's
 *                                  "credentials", "inspect" and
 *                                  "passthrough"), then a NUL and the
 *                                  --upstream-ca path (or nothing);
 *                                  fds: one per CRED_FROM_FD credential,
 *                                  in order.
 *   broker -> sentry  BRK_CA       payload: the sandbox CA's certificate,
 *                                  PEM.
 *   broker -> sentry  BRK_PLACEHOLDER  one per credential, in order:
 *                                  "NAME\0PLACEHOLDER\0".
 *   broker -> sentry  BRK_READY    (empty) or BRK_FAIL "message\0" (then
 *                                  it exits; the sandbox does not start).
 * Then:
 *   sentry -> broker  BRK_FLOW     struct brk_flow, then nnames
 *                                  NUL-terminated names (the names the
 *                                  destination address was resolved from);
 *                                  fds: two SOCK_STREAM sockets, the
 *                                  guest's side and the upstream's side.
 *                                  The broker owns both from then on;
 *                                  closing them ends the flow.
 *   broker -> sentry  BRK_AUDIT    the members of one audit record, JSON
 *                                  without braces ("\"event\":\"credential\",
 *                                  ..."), NUL-terminated; the sentry adds
 *                                  time and sandbox and writes it under
 *                                  its audit limits (class AUDIT_NET).
 *   sentry -> broker  BRK_SECRET   struct brk_secret, then the name (NUL-
 *                                  terminated); fds: one for set/rotate
 *                                  (the value's source, opened by the
 *                                  CLI and passed through the sentry
 *                                  unread), none for revoke.
 *   broker -> sentry  BRK_SECRET_DONE  int32 result (0 or -errno), then a
 *                                  message (NUL-terminated) and, for set,
 *                                  the placeholder.
 */
#ifndef MOAT_PROT_BROKER_H
#define MOAT_PROT_BROKER_H

#include <stdint.h>

#define BRK_MSG_MAX (256 * 1024) /* a whole message, header included */
#define BRK_NAMES_MAX 16	 /* names in one BRK_FLOW */

enum brk_type {
	BRK_CONFIG = 1,
	BRK_CA,
	BRK_PLACEHOLDER,
	BRK_READY,
	BRK_FAIL,
	BRK_FLOW,
	BRK_AUDIT,
	BRK_SECRET,
	BRK_SECRET_DONE,
	BRK_IDS, /* sentry -> broker, first when started `--as late`:
		  * "UID:GID\0", the ids it drops to */
};

struct brk_hdr {
	uint32_t type; /* enum brk_type */
	uint32_t len;  /* payload bytes after the header */
};

/* What the sentry saw of the flow's first bytes (netstack/sniff.h). */
enum brk_kind {
	BRK_KIND_TLS = 1, /* a TLS ClientHello; sni is its server name */
	BRK_KIND_HTTP,	  /* a plain HTTP/1.x request line */
};

struct brk_flow {
	uint64_t id;	  /* the sentry's, for audit lines */
	int32_t pid;	  /* the guest process that connected */
	uint8_t kind;	  /* enum brk_kind */
	uint8_t family;	  /* AF_INET, AF_INET6 */
	uint16_t port;	  /* the destination's */
	uint8_t addr[16]; /* the destination (4 bytes for AF_INET) */
	char exe[256];	  /* the process's executable, NUL-terminated */
	char sni[256];	  /* BRK_KIND_TLS: the ClientHello's name (lower
			   * case, no trailing dot; "" if it had none) */
	uint16_t nnames;  /* names after the struct, at most BRK_NAMES_MAX */
	uint16_t flags;	  /* enum brk_flow_flag bits */
	uint16_t pad[2];
};

enum brk_flow_flag {
	BRK_FLOW_ALPN_H2 = 1, /* BRK_KIND_TLS: the ClientHello offers h2 */
};

enum brk_secret_op {
	BRK_SECRET_SET = 1, /* a new credential (hosts etc. in the payload's
			     * JSON after the name) */
	BRK_SECRET_ROTATE,  /* a new value; the placeholder stays */
	BRK_SECRET_REVOKE,  /* blocked from now; its open flows closed */
};

struct brk_secret {
	uint32_t op; /* enum brk_secret_op */
	uint32_t pad;
};

#endif
