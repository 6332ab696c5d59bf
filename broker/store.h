/* broker/store.h: the secret values the broker holds, and their
 * placeholders.
 *
 * The broker is the only process that ever holds a value. Values live in
 * memory locked against swap (mlock), are wiped when replaced or freed,
 * and never reach a log, an audit line or a message to the sentry.
 * Threads (one per flow) read the store under its lock; `moat secret
 * rotate|revoke|set` changes it under the same lock, and bumps gen so
 * that a flow notices at its next request.
 */
#ifndef MOAT_BROKER_STORE_H
#define MOAT_BROKER_STORE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy/credentials.h"

struct secret {
	const struct credential *cred; /* the policy's entry (hosts, where) */
	char *placeholder;	       /* NUL-terminated; never changes */
	size_t plen;
	char *value; /* not NUL-terminated; locked memory */
	size_t vlen;
	/* The value before the last rotate (locked memory too): never
	 * swapped in, but still redacted from responses, since one on its
	 * way at the rotate (or a later echo) carries it; wiped at the next
	 * rotate or at a revoke. */
	char *old;
	size_t olen;
	bool revoked;
};

/* Secrets `moat secret set` may add to a running sandbox's store, beyond
 * those it started with (CRED_MAX in all): their slots are made and
 * locked at the start, while locking needs no privilege. */
#define STORE_LIVE_MAX 16

struct store {
	pthread_rwlock_t lock;
	struct secret *v; /* cap + 1 entries (v[n].value: the spare slot) */
	size_t n;
	size_t cap;	 /* the most secrets it can hold (n + STORE_LIVE_MAX at
		     * the start, at most CRED_MAX) */
	uint8_t *region; /* every slot; region_len bytes, locked */
	size_t region_len;
	uint64_t gen; /* bumped at each change */
	const struct cred_policy *policy;
};

/* The store for policy p: reads every credential's value from its source
 * (env, file, fd) and makes its placeholder. 0, or -errno with err
 * naming the credential and why (an unset variable, a missing file, an
 * empty or oversized value). */
int store_init(struct store *s, const struct cred_policy *p,
	       struct moat_error *err);
void store_free(struct store *s);

/* A placeholder from template tmpl ("{rand}" stands for random letters
 * and digits, from getrandom; NULL: "{rand}"), for a value of vlen bytes:
 * as long as the value when the template allows it (so that a swap keeps
 * lengths), never shorter than 16 random characters. Into out (cap
 * bytes, NUL-terminated); its length, or -EINVAL for a bad template. */
long store_make_placeholder(const char *tmpl, size_t vlen, char *out,
			    size_t cap);

/* Replace secret i's value (rotate): the old one becomes its old, and
 * the one before is wiped. 0 or -errno. */
int store_rotate(struct store *s, size_t i, const void *value, size_t vlen);
/* The same with the new value read from fd to its end (one trailing
 * newline stripped), straight into locked memory. 0 or -errno (-EINVAL
 * for an empty value or one with a NUL or a line break, -E2BIG for one
 * too long). */
int store_rotate_fd(struct store *s, size_t i, int fd);
void store_revoke(struct store *s, size_t i);
/* A new secret (`moat secret set`) for credential c, which must stay where
 * it is for the store's life, its value read from fd as store_rotate_fd
 * reads one, and its placeholder made from c's template: published under
 * the lock, so that a flow sees it whole or not at all. Its index, or
 * -ENOSPC (cap reached), -EEXIST (c's name is taken), -EINVAL/-E2BIG
 * (the value, or -EINVAL for a bad template) or the read's -errno. */
long store_add_fd(struct store *s, const struct credential *c, int fd);
/* The index of the secret named name, or -1. */
long store_find(const struct store *s, const char *name);

#endif
