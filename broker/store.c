/* broker/store.c: the secret values and their placeholders (store.h).
 *
 * Every value lives in a slot of one anonymous mapping that is locked
 * (mlock: never written to swap) and left out of core dumps
 * (MADV_DONTDUMP). The slots are made at store_init, while the broker
 * still runs as the user that started it: locking needs no privilege
 * then, and a rotate or an add later only uses a slot made then. Each
 * secret has two, its value and its old value (still redacted, store.h),
 * and there is one more: a new value is read into the spare one and
 * swapped in under the lock, so a value never passes through memory that
 * is not locked; the value before the old one is wiped then.
 *
 * The region holds 2 * cap + 1 slots: secret k's first value slot is
 * slot k, its first old slot is slot cap + 1 + k, and the spare starts
 * as slot cap. Rotations only move slots among the secrets that exist
 * and the spare, so the slots of an index not yet used are untouched
 * when store_add_fd takes them.
 */
#include "broker/store.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>

extern char **environ;

/* A slot holds CRED_VALUE_MAX bytes plus two: a trailing newline to strip,
 * and one byte more to tell an oversized value from one that fits. */
#define SLOT_READ (CRED_VALUE_MAX + 2)

static size_t slot_size(void)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	return (SLOT_READ + page - 1) / page * page;
}

static const char rand_alphabet[] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/* n letters and digits, uniformly: bytes of 248 and above (62 * 4) are
 * drawn again, so that no character is likelier than another. */
static int rand_chars(char *out, size_t n)
{
	uint8_t buf[64];
	size_t have = 0, used = 0;

	while (n) {
		if (used == have) {
			ssize_t r = getrandom(buf, sizeof(buf), 0);

			if (r < 0) {
				if (errno == EINTR)
					continue;
				return -errno;
			}
			have = (size_t)r;
			used = 0;
			continue;
		}
		if (buf[used] < 248) {
			*out++ = rand_alphabet[buf[used] % 62];
			n--;
		}
		used++;
	}
	explicit_bzero(buf, sizeof(buf));
	return 0;
}

long store_make_placeholder(const char *tmpl, size_t vlen, char *out,
			    size_t cap)
{
	const char *mark, *p;
	size_t fixed, want, nrand;

	if (!tmpl)
		tmpl = "{rand}";
	/* Exactly one {rand}: a placeholder without one would be the same
	 * in every sandbox, and could be guessed. */
	mark = strstr(tmpl, "{rand}");
	if (!mark || strstr(mark + 6, "{rand}"))
		return -EINVAL;
	/* The rest goes into environment variables and HTTP headers as
	 * written: visible ASCII only, no braces but the one {rand}. */
	for (p = tmpl; *p; p++) {
		if (p == mark) {
			p += 5;
			continue;
		}
		if (*p <= ' ' || *p > '~' || *p == '{' || *p == '}')
			return -EINVAL;
	}
	fixed = strlen(tmpl) - 6;
	if (cap > CRED_PLACEHOLDER_MAX)
		cap = CRED_PLACEHOLDER_MAX;
	/* As long as the value, so that a swap keeps the message's length,
	 * unless that leaves fewer than 16 random characters; never more
	 * than fits. */
	want = vlen;
	if (want < fixed + 16)
		want = fixed + 16;
	if (cap == 0 || fixed + 16 > cap - 1)
		return -EINVAL;
	if (want > cap - 1)
		want = cap - 1;
	nrand = want - fixed;
	memcpy(out, tmpl, (size_t)(mark - tmpl));
	if (rand_chars(out + (mark - tmpl), nrand) < 0)
		return -EIO;
	strcpy(out + (mark - tmpl) + nrand, mark + 6);
	return (long)want;
}

/* Read fd to its end into slot (SLOT_READ bytes at most); the length, or
 * -errno. */
static ssize_t read_slot(int fd, uint8_t *slot)
{
	size_t n = 0;

	while (n < SLOT_READ) {
		ssize_t r = read(fd, slot + n, SLOT_READ - n);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	return (ssize_t)n;
}

/* One trailing newline goes: `echo KEY > file` writes one. */
static size_t strip_newline(const uint8_t *v, size_t n)
{
	if (n && v[n - 1] == '\n') {
		n--;
		if (n && v[n - 1] == '\r')
			n--;
	}
	return n;
}

/* The variable's value, wiped from this process's environment: both the
 * pointer in environ and the bytes themselves, which /proc/PID/environ
 * shows for as long as they stay in place. */
static ssize_t take_env(const char *var, uint8_t *slot)
{
	size_t klen = strlen(var);
	ssize_t got = -ENOENT;

	for (char **e = environ; e && *e; e++) {
		char *v;
		size_t n;

		if (strncmp(*e, var, klen) || (*e)[klen] != '=')
			continue;
		v = *e + klen + 1;
		n = strlen(v);
		if (got == -ENOENT) {
			got = (ssize_t)(n > SLOT_READ ? SLOT_READ : n);
			memcpy(slot, v, (size_t)got);
		}
		explicit_bzero(v, n);
	}
	if (got != -ENOENT)
		unsetenv(var);
	return got;
}

static ssize_t take_file(const char *path, uint8_t *slot)
{
	cleanup_close int fd = -1;
	struct stat st;

	/* O_NONBLOCK: a FIFO with no writer must not hang the start; only
	 * a regular file is read anyway. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	return read_slot(fd, slot);
}

static int load_value(struct secret *s, uint8_t *slot, struct moat_error *err)
{
	const struct credential *c = s->cred;
	const char *why;
	ssize_t n;

	switch (c->source) {
	case CRED_FROM_ENV:
		n = take_env(c->src, slot);
		if (n == -ENOENT)
			return moat_error_input(
				err, ENOENT,
				"secret %s: environment variable %s is not set",
				c->name, c->src);
		break;
	case CRED_FROM_FILE:
		n = take_file(c->src, slot);
		if (n == -EINVAL)
			return moat_error_input(err, EINVAL,
						"secret %s: `%s` is not a file",
						c->name, c->src);
		if (n < 0)
			return moat_error_set(err, (int)-n, "secret %s: `%s`",
					      c->name, c->src);
		break;
	case CRED_FROM_FD:
		n = read_slot(c->fd, slot);
		if (n < 0)
			return moat_error_set(err, (int)-n,
					      "secret %s: read fd %d", c->name,
					      c->fd);
		break;
	default:
		return moat_error_input(err, EINVAL, "secret %s: bad source",
					c->name);
	}
	n = (ssize_t)strip_newline(slot, (size_t)n);
	why = cred_value_refusal(slot, (size_t)n);
	if (why) {
		explicit_bzero(slot, SLOT_READ);
		return moat_error_input(err, EINVAL, "secret %s: the value %s",
					c->name, why);
	}
	s->value = (char *)slot;
	s->vlen = (size_t)n;
	return 0;
}

/* The spare slot is kept after the last secret's value pointer, in
 * store->v[n].value; v has n + 1 entries. Each secret has a slot for its
 * old value too: 2n + 1 slots in all. */
static uint8_t *spare_slot(const struct store *s)
{
	return (uint8_t *)s->v[s->n].value;
}

int store_init(struct store *s, const struct cred_policy *p,
	       struct moat_error *err)
{
	size_t ss = slot_size(), total, cap, i;
	uint8_t *region;
	int rc;

	memset(s, 0, sizeof(*s));
	s->policy = p;
	if (p->n > CRED_MAX)
		return moat_error_input(err, E2BIG, "more than %d secrets",
					CRED_MAX);
	cap = p->n + STORE_LIVE_MAX < CRED_MAX ? p->n + STORE_LIVE_MAX :
						 CRED_MAX;
	total = ss * (2 * cap + 1);
	region = mmap(NULL, total, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (region == MAP_FAILED)
		return moat_error_set(err, errno, "store: mmap");
	if (mlock(region, total) < 0) {
		rc = errno;
		munmap(region, total);
		return moat_error_set(err, rc, "store: mlock");
	}
	/* A core of the broker (were it ever dumpable) leaves them out, and
	 * a child (it never forks) would not inherit them. */
	madvise(region, total, MADV_DONTDUMP);
	madvise(region, total, MADV_WIPEONFORK);
	s->v = calloc(cap + 1, sizeof(*s->v));
	if (!s->v) {
		munmap(region, total);
		return moat_error_set(err, ENOMEM, "store");
	}
	s->region = region;
	s->region_len = total;
	s->cap = cap;
	s->v[p->n].value = (char *)(region + ss * cap);
	for (i = 0; i < p->n; i++)
		s->v[i].old = (char *)(region + ss * (cap + 1 + i));
	s->n = p->n;
	rc = pthread_rwlock_init(&s->lock, NULL);
	if (rc) {
		free(s->v);
		s->v = NULL;
		munmap(region, total);
		return moat_error_set(err, rc, "store: lock");
	}
	for (i = 0; i < p->n; i++) {
		struct secret *sec = &s->v[i];
		char ph[CRED_PLACEHOLDER_MAX];
		long pl;

		sec->cred = &p->v[i];
		sec->value = (char *)(region + ss * i);
		rc = 1;
		/* A variable or an fd is read once (the variable is wiped
		 * then): a second secret of the same source takes the first
		 * one's value. */
		for (size_t j = 0; j < i && rc == 1; j++) {
			const struct credential *a = &p->v[j], *c = sec->cred;

			if (a->source != c->source ||
			    c->source == CRED_FROM_FILE ||
			    (c->source == CRED_FROM_ENV ?
				     strcmp(a->src, c->src) :
				     a->fd != c->fd))
				continue;
			memcpy(sec->value, s->v[j].value, s->v[j].vlen);
			sec->vlen = s->v[j].vlen;
			rc = 0;
		}
		if (rc == 1)
			rc = load_value(sec, (uint8_t *)sec->value, err);
		if (rc < 0)
			goto fail;
		pl = store_make_placeholder(sec->cred->placeholder, sec->vlen,
					    ph, sizeof(ph));
		if (pl < 0) {
			rc = moat_error_input(err, EINVAL,
					      "secret %s: bad placeholder `%s`",
					      sec->cred->name,
					      sec->cred->placeholder);
			goto fail;
		}
		sec->placeholder = strdup(ph);
		if (!sec->placeholder) {
			rc = moat_error_set(err, ENOMEM, "store");
			goto fail;
		}
		sec->plen = (size_t)pl;
	}
	return 0;
fail:
	store_free(s);
	return rc;
}

void store_free(struct store *s)
{
	size_t i;

	if (!s->v)
		return;
	for (i = 0; i < s->n; i++)
		free(s->v[i].placeholder);
	explicit_bzero(s->region, s->region_len);
	munlock(s->region, s->region_len);
	munmap(s->region, s->region_len);
	free(s->v);
	pthread_rwlock_destroy(&s->lock);
	memset(s, 0, sizeof(*s));
}

/* A value of n bytes in slot, checked (cred_value_refusal): n, or
 * -E2BIG / -EINVAL with the slot wiped. */
static ssize_t check_value(uint8_t *slot, size_t n)
{
	if (!cred_value_refusal(slot, n))
		return (ssize_t)n;
	explicit_bzero(slot, SLOT_READ);
	return n > CRED_VALUE_MAX ? -E2BIG : -EINVAL;
}

/* fd's value into slot, as every later one is read (to its end, one
 * trailing newline dropped, checked): its length, or -errno with the
 * slot wiped. */
static ssize_t read_value(int fd, uint8_t *slot)
{
	ssize_t n = read_slot(fd, slot);

	if (n < 0) {
		explicit_bzero(slot, SLOT_READ);
		return n;
	}
	return check_value(slot, strip_newline(slot, (size_t)n));
}

/* The new value is in the spare slot (n bytes, checked): swap it in for
 * secret i under the lock; the value it replaces becomes the old
 * one, and the old one before it is wiped and becomes the spare. */
static void swap_in(struct store *s, size_t i, size_t n)
{
	uint8_t *slot = spare_slot(s);

	pthread_rwlock_wrlock(&s->lock);
	s->v[s->n].value = s->v[i].old;
	s->v[i].old = s->v[i].value;
	s->v[i].olen = s->v[i].vlen;
	s->v[i].value = (char *)slot;
	s->v[i].vlen = n;
	s->v[i].revoked = false;
	s->gen++;
	explicit_bzero(s->v[s->n].value, SLOT_READ);
	pthread_rwlock_unlock(&s->lock);
}

int store_rotate(struct store *s, size_t i, const void *value, size_t vlen)
{
	ssize_t n;

	if (i >= s->n)
		return -EINVAL;
	if (vlen > CRED_VALUE_MAX)
		return -E2BIG;
	memcpy(spare_slot(s), value, vlen);
	n = check_value(spare_slot(s), vlen);
	if (n < 0)
		return (int)n;
	swap_in(s, i, (size_t)n);
	return 0;
}

int store_rotate_fd(struct store *s, size_t i, int fd)
{
	ssize_t n;

	if (i >= s->n)
		return -EINVAL;
	n = read_value(fd, spare_slot(s));
	if (n < 0)
		return (int)n;
	swap_in(s, i, (size_t)n);
	return 0;
}

void store_revoke(struct store *s, size_t i)
{
	if (i >= s->n)
		return;
	pthread_rwlock_wrlock(&s->lock);
	explicit_bzero(s->v[i].value, SLOT_READ);
	explicit_bzero(s->v[i].old, SLOT_READ);
	s->v[i].vlen = s->v[i].olen = 0;
	s->v[i].revoked = true;
	s->gen++;
	pthread_rwlock_unlock(&s->lock);
}

long store_add_fd(struct store *s, const struct credential *c, int fd)
{
	size_t ss = slot_size(), k = s->n, len;
	uint8_t *slot = s->region + ss * k;
	char ph[CRED_PLACEHOLDER_MAX];
	char *dup;
	ssize_t n;
	long pl;

	if (k >= s->cap)
		return -ENOSPC;
	if (store_find(s, c->name) >= 0)
		return -EEXIST;
	n = read_value(fd, slot);
	if (n < 0)
		return (long)n;
	len = (size_t)n;
	pl = store_make_placeholder(c->placeholder, len, ph, sizeof(ph));
	dup = pl < 0 ? NULL : strdup(ph);
	if (!dup) {
		explicit_bzero(slot, SLOT_READ);
		return pl < 0 ? -EINVAL : -ENOMEM;
	}
	pthread_rwlock_wrlock(&s->lock);
	s->v[k + 1].value = s->v[k].value; /* the spare moves up */
	s->v[k] = (struct secret){ .cred = c,
				   .placeholder = dup,
				   .plen = (size_t)pl,
				   .value = (char *)slot,
				   .vlen = len,
				   .old = (char *)(s->region +
						   ss * (s->cap + 1 + k)) };
	s->n = k + 1;
	s->gen++;
	pthread_rwlock_unlock(&s->lock);
	return (long)k;
}

long store_find(const struct store *s, const char *name)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->v[i].cred->name, name))
			return (long)i;
	return -1;
}
