/* broker/redact.c: the byte buffer, and the streaming search for secrets'
 * values (responses) or placeholders (requests) that both directions of
 * broker/http1.c use (broker/scan.h). */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "broker/http1.h"
#include "broker/scan.h"

int bbuf_put(struct bbuf *b, const void *data, size_t n)
{
	size_t cap;
	uint8_t *p;

	if (n == 0)
		return 0;
	if (b->cap - b->len < n) {
		cap = b->cap ? b->cap : 256;
		while (cap - b->len < n) {
			if (cap > SIZE_MAX / 2)
				return -ENOMEM;
			cap *= 2;
		}
		p = realloc(b->p, cap);
		if (!p)
			return -ENOMEM;
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, data, n);
	b->len += n;
	return 0;
}

void bbuf_consume(struct bbuf *b, size_t n)
{
	if (n >= b->len) {
		b->len = 0;
		return;
	}
	memmove(b->p, b->p + n, b->len - n);
	b->len -= n;
}

void bbuf_free(struct bbuf *b)
{
	free(b->p);
	b->p = NULL;
	b->len = b->cap = 0;
}

size_t scan_count(const struct store *s)
{
	return s->n < SCAN_MAX ? s->n : SCAN_MAX;
}

/* The patterns searched for: each secret's placeholder, or its value
 * and then (i >= scan_count) its old value. */
static size_t npat(const struct store *s, bool values)
{
	return values ? 2 * scan_count(s) : scan_count(s);
}

static const uint8_t *pattern(const struct store *s, size_t i, bool values,
			      size_t *len)
{
	const struct secret *x = &s->v[i % scan_count(s)];

	if (values && i >= scan_count(s)) {
		*len = x->old ? x->olen : 0;
		return (const uint8_t *)x->old;
	}
	if (values) {
		*len = x->value ? x->vlen : 0;
		return (const uint8_t *)x->value;
	}
	*len = x->placeholder ? x->plen : 0;
	return (const uint8_t *)x->placeholder;
}

/* The longest suffix of w[pos..wl) that is a proper prefix of some
 * pattern: the bytes that may begin one, held for the next call. Cost:
 * per pattern, one memchr pass over at most its length. */
static size_t scan_hold(const struct store *s, bool values, const uint8_t *w,
			size_t wl, size_t pos)
{
	size_t hold = 0, i, len, p;
	const uint8_t *pat, *m;

	for (i = 0; i < npat(s, values); i++) {
		pat = pattern(s, i, values, &len);
		if (len < 2)
			continue;
		p = wl - pos > len - 1 ? wl - (len - 1) : pos;
		while (p < wl) {
			m = memchr(w + p, pat[0], wl - p);
			if (!m)
				break;
			p = (size_t)(m - w);
			if (memcmp(w + p, pat, wl - p) == 0) {
				if (wl - p > hold)
					hold = wl - p;
				break;
			}
			p++;
		}
	}
	return hold;
}

int scan_run(struct scan *sc, const struct store *s, bool values,
	     const uint8_t *buf, size_t n, bool fin, scan_fn fn, void *ctx,
	     struct bbuf *out)
{
	const uint8_t *w = buf, *pat, *m, *rep;
	size_t wl = n, pos = 0, i, len, rlen, hold, at, best_len;
	size_t next[2 * SCAN_MAX];
	long best;
	int rc;
	static const uint8_t none[1];

	if (!buf)
		buf = w = none;
	if (sc->hold.len) {
		sc->work.len = 0;
		if (bbuf_put(&sc->work, sc->hold.p, sc->hold.len) < 0 ||
		    bbuf_put(&sc->work, buf, n) < 0)
			return -ENOMEM;
		sc->hold.len = 0;
		w = sc->work.p;
		wl = sc->work.len;
	}
	/* next[i]: where pattern i next occurs at or after pos (wl: never),
	 * so that each pattern is searched for once per pass, however many
	 * matches there are */
	for (i = 0; i < npat(s, values); i++) {
		pat = pattern(s, i, values, &len);
		m = len ? memmem(w, wl, pat, len) : NULL;
		next[i] = m ? (size_t)(m - w) : wl;
	}
	for (;;) {
		best = -1;
		at = wl;
		best_len = 0;
		for (i = 0; i < npat(s, values); i++) {
			if (next[i] == wl)
				continue;
			pat = pattern(s, i, values, &len);
			if (next[i] < pos) {
				m = memmem(w + pos, wl - pos, pat, len);
				next[i] = m ? (size_t)(m - w) : wl;
				if (next[i] == wl)
					continue;
			}
			if (next[i] < at || (next[i] == at && len > best_len)) {
				best = (long)i;
				at = next[i];
				best_len = len;
			}
		}
		if (best < 0)
			break;
		if (bbuf_put(out, w + pos, at - pos) < 0)
			return -ENOMEM;
		rc = fn(ctx, (size_t)best, &rep, &rlen);
		if (rc)
			return rc;
		if (bbuf_put(out, rep, rlen) < 0)
			return -ENOMEM;
		pos = at + best_len;
	}
	hold = fin ? 0 : scan_hold(s, values, w, wl, pos);
	if (bbuf_put(out, w + pos, wl - pos - hold) < 0)
		return -ENOMEM;
	/* w may be sc->work, never sc->hold, so this copy does not overlap */
	if (bbuf_put(&sc->hold, w + wl - hold, hold) < 0)
		return -ENOMEM;
	return 0;
}

void scan_reset(struct scan *sc)
{
	sc->hold.len = 0;
}

void scan_free(struct scan *sc)
{
	bbuf_free(&sc->hold);
	bbuf_free(&sc->work);
}

struct redact {
	struct store *s;
	struct scan sc;
};

static int to_placeholder(void *ctx, size_t i, const uint8_t **rep,
			  size_t *rlen)
{
	const struct store *s = ctx;

	i %= scan_count(s); /* an old value becomes the placeholder too */
	*rep = (const uint8_t *)s->v[i].placeholder;
	*rlen = s->v[i].plen;
	return 0;
}

int redact_run(struct scan *sc, const struct store *s, const uint8_t *buf,
	       size_t n, bool fin, struct bbuf *out)
{
	return scan_run(sc, s, true, buf, n, fin, to_placeholder, (void *)s,
			out);
}

struct redact *redact_new(struct store *s)
{
	struct redact *r = calloc(1, sizeof(*r));

	if (r)
		r->s = s;
	return r;
}

void redact_free(struct redact *r)
{
	if (!r)
		return;
	scan_free(&r->sc);
	free(r);
}

int redact_feed(struct redact *r, const uint8_t *buf, size_t n, bool fin,
		struct bbuf *out)
{
	int rc;

	pthread_rwlock_rdlock(&r->s->lock);
	rc = redact_run(&r->sc, r->s, buf, n, fin, out);
	pthread_rwlock_unlock(&r->s->lock);
	return rc;
}
