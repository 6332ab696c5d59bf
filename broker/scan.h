/* broker/scan.h: the streaming search behind broker/http1.c (private to
 * broker/redact.c and broker/http1.c).
 *
 * Finds every secret's value (values: true) or placeholder (false) in a
 * stream fed in pieces, leftmost first (the longer on a tie), and lets fn
 * say what each becomes. Only the longest tail that is a proper prefix
 * of some pattern is held back between calls, so a stream is never
 * delayed by more than the bytes that may begin a match. The caller
 * holds the store's lock (read) around a call.
 */
#ifndef MOAT_BROKER_SCAN_H
#define MOAT_BROKER_SCAN_H

#include "broker/http1.h"
#include "policy/credentials.h"

#define SCAN_MAX CRED_MAX /* secrets looked for; a store has no more */

struct scan {
	struct bbuf hold; /* bytes that may begin a pattern */
	struct bbuf work; /* hold + the new bytes, contiguous */
};

/* Match of secret i, or (values, i >= scan_count) of secret i -
 * scan_count's old value (store.h): 0 with *rep (rlen bytes) to put in
 * its place, or nonzero to stop the scan (scan_run returns it). */
typedef int (*scan_fn)(void *ctx, size_t i, const uint8_t **rep, size_t *rlen);

/* The store's secrets searched: the first SCAN_MAX. */
size_t scan_count(const struct store *s);
/* buf with each match replaced into out; fin: hold nothing back. 0,
 * what fn returned, or -ENOMEM. */
int scan_run(struct scan *sc, const struct store *s, bool values,
	     const uint8_t *buf, size_t n, bool fin, scan_fn fn, void *ctx,
	     struct bbuf *out);
/* Values replaced by placeholders. */
int redact_run(struct scan *sc, const struct store *s, const uint8_t *buf,
	       size_t n, bool fin, struct bbuf *out);
void scan_reset(struct scan *sc);
void scan_free(struct scan *sc);

#endif
