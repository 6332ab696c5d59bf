/* sentry/brokerlink.h: the sentry's side of the credential broker
 * (docs/credentials.md).
 *
 * The broker (`moat broker`, broker/broker.c) is a process of its own,
 * started here when the policy has credentials or inspected hosts. It
 * alone holds the secret values and the sandbox CA's key; the sentry
 * knows only the placeholders and the CA's certificate, which the guest
 * gets in its environment and its certificate bundles. It has no network:
 * a flow it takes is two socketpairs, the guest's side and the upstream's,
 * and the sentry relays the upstream side through the netstack like any
 * other connection, under the same policy and flow checks.
 *
 * Which flows: an outside TCP connection's first bytes (netstack/sniff.h)
 * decide, only when a broker runs. A ClientHello naming a credentialed or
 * inspected host, or a plain HTTP request line, goes to the broker;
 * anything else passes as before, byte for byte. With the broker gone,
 * what would go to it is reset: never passed by.
 */
#ifndef MOAT_SENTRY_BROKERLINK_H
#define MOAT_SENTRY_BROKERLINK_H

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "lib/util.h"
#include "netstack/netstack.h"
#include "netstack/sniff.h"

struct sentry_opts;

/* Fork the broker when opts' policy wants one: first of all the
 * sandbox's processes, since the `env:` sources' variables go to the
 * broker alone and are wiped here from the sentry's environment, and a
 * process forked before would keep a copy. 0, or -1 with err. */
int broker_spawn(struct sentry_opts *opts, struct moat_error *err);
/* Then, once the policy is in force and the sandbox's ids are known:
 * its ids and config, and wait until it is ready (its CA and
 * placeholders in): 0, or -1 with err. */
int broker_start(struct sentry_opts *opts, struct moat_error *err);
/* Is there a broker (started, and not gone)? */
bool broker_active(void);
/* Was one started? (Its flows then fail closed once it is gone.) */
bool broker_wanted(void);
/* The guest's environment gains NAME=PLACEHOLDER for every credential
 * and the CA variables (SSL_CERT_FILE and the others): a new array
 * (the strings of env are kept) into *env. */
void broker_env(char ***env);
/* The CA into the guest's tree: /etc/moat/ca.pem, and the merged bundle
 * at the standard paths (in the overlay); and every `file:` source out
 * of it (a whiteout), or the sandbox does not start: 0 or -1 with err. */
int broker_write_ca(struct moat_error *err);
/* Stop it (kill and reap); every flow closes. */
void broker_stop(void);

/* The event loop's side: its control socket and the flows' epoll fd. */
int broker_pollfds(struct pollfd *p, int max);
void broker_pump(void);
/* At the end: the broker's messages that wait (its last audit records),
 * read before the audit log ends. */
void broker_drain(void);

/* ---- live control (moat secret) ------------------------------------------ */

/* A `moat secret` request from the control socket's client cfd: op
 * (enum brk_secret_op: BRK_SECRET_ROTATE or BRK_SECRET_SET with value_fd,
 * the sealed memfd the CLI put the value in; BRK_SECRET_REVOKE with -1) on
 * the credential name; for a set, json is the new credential as a policy
 * file writes it ({"credentials": [one]}; NULL for the others), whose
 * name is taken from it (name: NULL), checked
 * here against the policy in force as a start would check it, and taken
 * into it (and its placeholder answered: "ok PLACEHOLDER") only once the
 * broker holds it. value_fd is never read here, and is this function's in every
 * case (closed once the broker has its copy, or on refusal). 0: sent;
 * the answer ("ok", or "error: ...") goes to cfd (through a dup of it
 * kept here, so the caller closes its own) when the broker's
 * BRK_SECRET_DONE comes, or after 5 s; a revoke that succeeded resets
 * every brokered flow first. -1: refused now (no broker, one request
 * already waiting, not a sealed memfd), the line to answer in msg. One
 * request at a time. */
int broker_secret(int cfd, uint32_t op, const char *name, const char *json,
		  int value_fd, char *msg, size_t cap);
/* When the waiting request gives up on the broker (0: none waits). */
int64_t broker_deadline(void);

/* ---- flows ---------------------------------------------------------------- */

/* Does a flow whose first bytes say r, to port, go to the broker? */
bool broker_takes(const struct sniff_result *r, uint16_t port);

/* Is a datagram from pid to sa QUIC (UDP 443) to a host the broker takes
 * TLS for? Then it is dropped (audited), so that the client falls back
 * to TCP. */
bool broker_drops_udp(int pid, const struct sockaddr *sa, socklen_t len);

/* What the relay tells the guest's socket (owner). */
enum bflow_event {
	BFLOW_EOF = 1,	/* the broker will send the guest no more */
	BFLOW_WRITABLE, /* room again after a send that waited */
	BFLOW_RESET,	/* reset (the broker gone, the policy changed) */
};
struct bflow_guest_ops {
	size_t (*room)(void *owner); /* bytes its queue takes now */
	void (*data)(void *owner, const void *buf, size_t n);
	void (*event)(void *owner, int ev); /* enum bflow_event */
};

struct bflow;

/* Hand the connected flow c (the guest socket owner's) to the broker:
 * its events come here from now on. kind: BRK_KIND_TLS or BRK_KIND_HTTP;
 * first[0..nfirst) the guest's bytes held so far, given to the broker
 * first. NULL with *err (-errno) when it cannot be done: the caller
 * resets the connection. */
struct bflow *bflow_start(struct ns_conn *c, void *owner,
			  const struct bflow_guest_ops *ops, int pid,
			  const char *exe, const struct sockaddr *dst,
			  socklen_t dstlen, const struct sniff_result *r,
			  const void *first, size_t nfirst, int *err);
/* The guest sends: bytes taken, -EAGAIN (it waits for BFLOW_WRITABLE), or
 * -EPIPE. */
long bflow_send(struct bflow *b, const void *buf, size_t n);
bool bflow_writable(struct bflow *b);
/* The guest read from its queue: room again for the broker's bytes. */
void bflow_consumed(struct bflow *b);
void bflow_shutdown(struct bflow *b, bool rd, bool wr);
/* The guest's socket is gone: the flow ends once the broker and the
 * upstream are done with it (or after a while). */
void bflow_guest_gone(struct bflow *b);
/* Reset it now (the policy no longer allows the destination). */
void bflow_abort(struct bflow *b);
/* After a policy change: reset the flows whose guest socket went but
 * which the broker still finishes (bflow_guest_gone), to destinations
 * the policy no longer allows. Returns how many. */
int broker_policy_changed(void);

#endif
