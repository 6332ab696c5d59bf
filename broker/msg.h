/* broker/msg.h: the broker's checks of what the sentry sends it
 * (prot/broker.h).
 *
 * The sentry is trusted more than the guest, not blindly: a message that
 * is not exactly what prot/broker.h says ends the link. Pure computation
 * on caller memory, so that it is fuzzed directly (tests/fuzz/fuzz_brkmsg.c).
 */
#ifndef MOAT_BROKER_MSG_H
#define MOAT_BROKER_MSG_H

#include <stddef.h>
#include <stdint.h>

#include "prot/broker.h"

#define BRK_NAME_MAX 253 /* a DNS name */
/* the most bytes of names one BRK_FLOW carries */
#define BRK_NAMES_BYTES (BRK_NAMES_MAX * (BRK_NAME_MAX + 1))

/* A BRK_FLOW's payload p (len bytes): its struct into *f (kind and
 * family known, exe and sni NUL-terminated, at most BRK_NAMES_MAX names)
 * and its names, copied into buf (BRK_NAMES_BYTES), into names[0 ..
 * f->nnames): each non-empty, at most BRK_NAME_MAX bytes, exactly
 * filling the rest of the message. 0 or -EPROTO. */
int brk_flow_decode(const void *p, size_t len, struct brk_flow *f,
		    const char **names, char *buf);

/* A BRK_SECRET's payload: the op into *op, the name (NUL-terminated,
 * non-empty) into *name and, for BRK_SECRET_SET only, the credential's
 * JSON after it (NUL-terminated, non-empty, the last thing in the
 * message) into *json (NULL for the others, whose name is the last
 * thing), both pointing into p. 0 or -EPROTO (an unknown op too). */
int brk_secret_decode(const void *p, size_t len, struct brk_secret *op,
		      const char **name, const char **json);

/* A BRK_CONFIG's payload: the JSON's length into *jlen (up to the first
 * NUL, or all of it) and the --upstream-ca path (what follows the NUL,
 * one trailing NUL allowed, none inside) into ca (cap bytes; "" for
 * none). 0 or -EPROTO (a path with a NUL inside, or too long). */
int brk_config_split(const void *p, size_t len, size_t *jlen, char *ca,
		     size_t cap);

#endif
