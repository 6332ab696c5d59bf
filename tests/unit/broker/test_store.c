/* tests/unit/broker/test_store.c: the broker's secret store
 * (broker/store.c): placeholders, values read from each source and the
 * ones refused, locked memory, rotate and revoke. */
#include <criterion/criterion.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "broker/store.h"

static int fds_open(void)
{
	int n = 0;

	for (int fd = 0; fd < 1024; fd++)
		n += fcntl(fd, F_GETFD) >= 0;
	return n;
}

static int fds_before;
static char dir[] = "/tmp/moat-store-XXXXXX";

static void init(void)
{
	fds_before = fds_open();
	cr_assert_not_null(mkdtemp(dir));
}

static void fini(void)
{
	char cmd[64];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	cr_assert_eq(system(cmd), 0);
	cr_assert_eq(fds_open(), fds_before, "a test leaked an fd");
}

TestSuite(store, .init = init, .fini = fini);

static bool alnum_only(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') ||
		      (s[i] >= 'A' && s[i] <= 'Z') ||
		      (s[i] >= '0' && s[i] <= '9')))
			return false;
	return true;
}

Test(store, placeholder_lengths)
{
	char out[CRED_PLACEHOLDER_MAX];

	/* as long as the value */
	cr_assert_eq(store_make_placeholder(NULL, 40, out, sizeof(out)), 40);
	cr_assert_eq(strlen(out), 40);
	cr_assert(alnum_only(out, 40), "%s", out);
	/* never fewer than 16 random characters */
	cr_assert_eq(store_make_placeholder(NULL, 3, out, sizeof(out)), 16);
	cr_assert_eq(store_make_placeholder("sk-{rand}", 5, out, sizeof(out)),
		     19);
	/* at most what fits */
	cr_assert_eq(store_make_placeholder(NULL, 5000, out, sizeof(out)),
		     CRED_PLACEHOLDER_MAX - 1);
	cr_assert_eq(store_make_placeholder(NULL, 5000, out, 32), 31);
	cr_assert_eq(strlen(out), 31);
	/* a template that leaves no room for 16 */
	cr_assert_eq(store_make_placeholder("sk-{rand}", 5, out, 19), -EINVAL);
}

Test(store, placeholder_template)
{
	char out[CRED_PLACEHOLDER_MAX];
	long n = store_make_placeholder("sk-proj-{rand}-x", 51, out,
					sizeof(out));

	cr_assert_eq(n, 51);
	cr_assert_eq(strncmp(out, "sk-proj-", 8), 0, "%s", out);
	cr_assert_eq(strcmp(out + 49, "-x"), 0, "%s", out);
	cr_assert(alnum_only(out + 8, 41), "%s", out);
	/* refused: no {rand}, two, and what may not go into a header */
	cr_assert_eq(store_make_placeholder("fixed", 10, out, sizeof(out)),
		     -EINVAL);
	cr_assert_eq(store_make_placeholder("{rand}{rand}", 40, out,
					    sizeof(out)),
		     -EINVAL);
	cr_assert_eq(store_make_placeholder("a {rand}", 40, out, sizeof(out)),
		     -EINVAL);
	cr_assert_eq(store_make_placeholder("a\r\n{rand}", 40, out,
					    sizeof(out)),
		     -EINVAL);
	cr_assert_eq(store_make_placeholder("{rand}}", 40, out, sizeof(out)),
		     -EINVAL);
	cr_assert_eq(store_make_placeholder("{ra{rand}", 40, out, sizeof(out)),
		     -EINVAL);
}

Test(store, placeholder_random)
{
	char a[CRED_PLACEHOLDER_MAX], b[CRED_PLACEHOLDER_MAX];
	bool seen[128] = { false };
	int kinds = 0;

	store_make_placeholder(NULL, 32, a, sizeof(a));
	store_make_placeholder(NULL, 32, b, sizeof(b));
	cr_assert_str_neq(a, b);
	/* every letter and digit turns up: 62 kinds in 25000 draws (a
	 * missing one has odds below 1e-170) */
	for (int i = 0; i < 100; i++) {
		store_make_placeholder(NULL, 250, a, sizeof(a));
		for (int j = 0; a[j]; j++)
			seen[(unsigned char)a[j] & 127] = true;
	}
	for (int c = 0; c < 128; c++)
		kinds += seen[c];
	cr_assert_eq(kinds, 62);
}

/* A policy of one credential from source src. */
static struct credential cred;
static char *hosts[] = { "api.test" };
static struct cred_policy pol = { .v = &cred, .n = 1 };

static void one(enum cred_source source, const char *src, int fd)
{
	memset(&cred, 0, sizeof(cred));
	cred.name = "API_KEY";
	cred.source = source;
	cred.src = (char *)src;
	cred.fd = fd;
	cred.hosts = hosts;
	cred.nhosts = 1;
}

static const char *file_with(const char *name, const void *data, size_t n)
{
	static char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	cr_assert_not_null(f);
	cr_assert_eq(fwrite(data, 1, n, f), n);
	fclose(f);
	return path;
}

Test(store, from_env_wiped)
{
	struct store s;
	struct moat_error err = { 0 };
	char *bytes;

	setenv("MOAT_T_KEY", "sk-0123456789abcdefghij", 1);
	bytes = getenv("MOAT_T_KEY");
	one(CRED_FROM_ENV, "MOAT_T_KEY", -1);
	cr_assert_eq(store_init(&s, &pol, &err), 0, "%s", err.msg);
	cr_assert_eq(s.n, 1);
	cr_assert_eq(s.v[0].vlen, 23);
	cr_assert_eq(memcmp(s.v[0].value, "sk-0123456789abcdefghij", 23), 0);
	cr_assert_eq(s.v[0].plen, 23);
	cr_assert_eq(strlen(s.v[0].placeholder), 23);
	/* gone from the environment, and its bytes are zero */
	cr_assert_null(getenv("MOAT_T_KEY"));
	for (int i = 0; i < 23; i++)
		cr_assert_eq(bytes[i], 0);
	cr_assert_eq(store_find(&s, "API_KEY"), 0);
	cr_assert_eq(store_find(&s, "OTHER"), -1);
	store_free(&s);
}

Test(store, from_file_and_fd)
{
	struct store s;
	struct moat_error err = { 0 };
	int p[2];

	one(CRED_FROM_FILE, file_with("k", "abc123\n", 7), -1);
	cr_assert_eq(store_init(&s, &pol, &err), 0, "%s", err.msg);
	/* one trailing newline goes */
	cr_assert_eq(s.v[0].vlen, 6);
	cr_assert_eq(memcmp(s.v[0].value, "abc123", 6), 0);
	store_free(&s);

	cr_assert_eq(pipe(p), 0);
	cr_assert_eq(write(p[1], "from-a-pipe", 11), 11);
	close(p[1]);
	one(CRED_FROM_FD, NULL, p[0]);
	cr_assert_eq(store_init(&s, &pol, &err), 0, "%s", err.msg);
	cr_assert_eq(s.v[0].vlen, 11);
	cr_assert_eq(memcmp(s.v[0].value, "from-a-pipe", 11), 0);
	store_free(&s);
	close(p[0]);
}

/* store_init refuses, and its message names the credential and why. */
static void refused(const char *why)
{
	struct store s;
	struct moat_error err = { 0 };

	cr_assert_lt(store_init(&s, &pol, &err), 0);
	cr_assert_not_null(strstr(err.msg, "API_KEY"), "%s", err.msg);
	cr_assert_not_null(strstr(err.msg, why), "%s", err.msg);
}

Test(store, refusals)
{
	static char big[CRED_VALUE_MAX + 1];

	unsetenv("MOAT_T_UNSET");
	one(CRED_FROM_ENV, "MOAT_T_UNSET", -1);
	refused("MOAT_T_UNSET is not set");
	setenv("MOAT_T_EMPTY", "", 1);
	one(CRED_FROM_ENV, "MOAT_T_EMPTY", -1);
	refused("empty");
	one(CRED_FROM_FILE, file_with("e", "\n", 1), -1);
	refused("empty");
	one(CRED_FROM_FILE, file_with("z", "ab\0cd", 5), -1);
	refused("NUL");
	one(CRED_FROM_FILE, file_with("n", "ab\ncd", 5), -1);
	refused("line break");
	one(CRED_FROM_FILE, file_with("r", "ab\rcd", 5), -1);
	refused("line break");
	memset(big, 'a', sizeof(big));
	one(CRED_FROM_FILE, file_with("b", big, sizeof(big)), -1);
	refused("longer than");
	/* exactly the most is fine */
	one(CRED_FROM_FILE, file_with("m", big, CRED_VALUE_MAX), -1);
	{
		struct store s;
		struct moat_error err = { 0 };

		cr_assert_eq(store_init(&s, &pol, &err), 0, "%s", err.msg);
		cr_assert_eq(s.v[0].vlen, CRED_VALUE_MAX);
		store_free(&s);
	}
	one(CRED_FROM_FILE, "/nonexistent/key", -1);
	refused("No such file");
	one(CRED_FROM_FILE, "/tmp", -1);
	refused("not a file");
	one(CRED_FROM_FD, NULL, 999);
	refused("Bad file descriptor");
	setenv("MOAT_T_KEY", "abc", 1);
	one(CRED_FROM_ENV, "MOAT_T_KEY", -1);
	cred.placeholder = "no-rand";
	refused("placeholder");
}

/* The smaps flags of the mapping that holds addr. */
static void vmflags(const void *addr, char *out, size_t cap)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[512];
	bool in = false;

	cr_assert_not_null(f);
	*out = 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;

		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 &&
		    strchr(line, '-') < strchr(line, ' '))
			in = (unsigned long)addr >= lo &&
			     (unsigned long)addr < hi;
		else if (in && !strncmp(line, "VmFlags:", 8))
			snprintf(out, cap, "%s", line + 8);
	}
	fclose(f);
}

Test(store, locked_memory)
{
	struct store s;
	struct moat_error err = { 0 };
	char flags[512];

	setenv("MOAT_T_KEY", "a-value-in-locked-memory", 1);
	one(CRED_FROM_ENV, "MOAT_T_KEY", -1);
	cr_assert_eq(store_init(&s, &pol, &err), 0, "%s", err.msg);
	vmflags(s.v[0].value, flags, sizeof(flags));
	/* lo: locked (ASan's mlock does nothing, so not there); dd: not
	 * in core dumps */
#ifndef __SANITIZE_ADDRESS__
	cr_assert_not_null(strstr(flags, " lo"), "%s", flags);
#endif
	cr_assert_not_null(strstr(flags, " dd"), "%s", flags);
	store_free(&s);
}

Test(store, rotate_and_revoke)
{
	struct store s;
	struct moat_error err = { 0 };
	char *old, ph[CRED_PLACEHOLDER_MAX];
	uint64_t gen;
	int p[2];

	setenv("MOAT_T_KEY", "first-value-0123456789", 1);
	one(CRED_FROM_ENV, "MOAT_T_KEY", -1);
	cr_assert_eq(store_init(&s, &pol, &err), 0, "%s", err.msg);
	snprintf(ph, sizeof(ph), "%s", s.v[0].placeholder);
	old = s.v[0].value;
	gen = s.gen;
	cr_assert_eq(store_rotate(&s, 0, "second", 6), 0);
	cr_assert_eq(s.v[0].vlen, 6);
	cr_assert_eq(memcmp(s.v[0].value, "second", 6), 0);
	/* the value it replaced stays, where it was, as the old one (for
	 * redaction); the placeholder stays */
	cr_assert_eq(s.v[0].old, old);
	cr_assert_eq(s.v[0].olen, 22);
	cr_assert_eq(memcmp(old, "first-value-0123456789", 22), 0);
	cr_assert_str_eq(s.v[0].placeholder, ph);
	cr_assert_gt(s.gen, gen);
	/* refused: empty, too long, a line break; the value stays */
	cr_assert_eq(store_rotate(&s, 0, "", 0), -EINVAL);
	cr_assert_eq(store_rotate(&s, 0, "a\nb", 3), -EINVAL);
	cr_assert_eq(store_rotate(&s, 0, "x", CRED_VALUE_MAX + 1), -E2BIG);
	cr_assert_eq(store_rotate(&s, 1, "x", 1), -EINVAL);
	cr_assert_eq(memcmp(s.v[0].value, "second", 6), 0);
	/* from an fd, one newline stripped */
	cr_assert_eq(pipe(p), 0);
	cr_assert_eq(write(p[1], "third\n", 6), 6);
	close(p[1]);
	cr_assert_eq(store_rotate_fd(&s, 0, p[0]), 0);
	close(p[0]);
	cr_assert_eq(s.v[0].vlen, 5);
	cr_assert_eq(memcmp(s.v[0].value, "third", 5), 0);
	/* the next rotate wipes the value before the old one */
	cr_assert_eq(s.v[0].olen, 6);
	cr_assert_eq(memcmp(s.v[0].old, "second", 6), 0);
	for (int i = 0; i < 22; i++)
		cr_assert_eq(old[i], 0);

	gen = s.gen;
	store_revoke(&s, 0);
	cr_assert(s.v[0].revoked);
	cr_assert_eq(s.v[0].vlen, 0);
	cr_assert_eq(s.v[0].value[0], 0);
	/* a revoke wipes the old one too */
	cr_assert_eq(s.v[0].olen, 0);
	cr_assert_eq(s.v[0].old[0], 0);
	cr_assert_gt(s.gen, gen);
	/* a rotate after a revoke puts a value back */
	cr_assert_eq(store_rotate(&s, 0, "fourth", 6), 0);
	cr_assert(!s.v[0].revoked);
	store_free(&s);
}

/* A pipe holding v (n bytes), its read end. */
static int pipe_with(const char *v, size_t n)
{
	int p[2];

	cr_assert_eq(pipe(p), 0);
	cr_assert_eq(write(p[1], v, n), (ssize_t)n);
	close(p[1]);
	return p[0];
}

/* `moat secret set`: a secret added to a store that runs. It takes slots
 * of its own (locked, never one another secret or a rotation uses), gets
 * a placeholder, rotates like the others; what a start would refuse is
 * refused and leaves the store as it was; past cap, no more. */
Test(store, add)
{
	struct store s;
	struct moat_error err = { 0 };
	struct credential added[STORE_LIVE_MAX + 1];
	char names[STORE_LIVE_MAX + 1][16], flags[512];
	uint64_t gen;
	long i;
	int fd;

	setenv("MOAT_T_KEY", "first-value-0123456789", 1);
	one(CRED_FROM_ENV, "MOAT_T_KEY", -1);
	cr_assert_eq(store_init(&s, &pol, &err), 0, "%s", err.msg);
	cr_assert_eq(s.cap, 1 + STORE_LIVE_MAX);
	/* a rotation first: the slots move among secret 0's and the spare */
	cr_assert_eq(store_rotate(&s, 0, "second", 6), 0);
	for (size_t k = 0; k <= STORE_LIVE_MAX; k++) {
		added[k] = cred;
		snprintf(names[k], sizeof(names[k]), "ADDED_%zu", k);
		added[k].name = names[k];
		added[k].source = CRED_FROM_FD;
	}
	added[0].placeholder = "sk-{rand}";

	/* refused, nothing changed: a name taken, a bad value */
	gen = s.gen;
	fd = pipe_with("v", 1);
	cr_assert_eq(store_add_fd(&s, &cred, fd), -EEXIST);
	close(fd);
	fd = pipe_with("a\nb", 3);
	cr_assert_eq(store_add_fd(&s, &added[0], fd), -EINVAL);
	close(fd);
	fd = pipe_with("", 0);
	cr_assert_eq(store_add_fd(&s, &added[0], fd), -EINVAL);
	close(fd);
	cr_assert_eq(s.n, 1);
	cr_assert_eq(s.gen, gen);

	fd = pipe_with("added-value-abcdefghij\n", 23);
	i = store_add_fd(&s, &added[0], fd);
	close(fd);
	cr_assert_eq(i, 1);
	cr_assert_eq(s.n, 2);
	cr_assert_gt(s.gen, gen);
	cr_assert_eq(s.v[1].cred, &added[0]);
	cr_assert_eq(s.v[1].vlen, 22);
	cr_assert_eq(memcmp(s.v[1].value, "added-value-abcdefghij", 22), 0);
	cr_assert_eq(strncmp(s.v[1].placeholder, "sk-", 3), 0);
	cr_assert_eq(s.v[1].plen, 22, "as long as the value");
	cr_assert_eq(store_find(&s, "ADDED_0"), 1);
	vmflags(s.v[1].value, flags, sizeof(flags));
#ifndef __SANITIZE_ADDRESS__
	cr_assert_not_null(strstr(flags, " lo"), "%s", flags);
#endif
	/* its slots are its own: secret 0 and the spare are untouched */
	cr_assert_eq(memcmp(s.v[0].value, "second", 6), 0);
	cr_assert_eq(memcmp(s.v[0].old, "first-value-0123456789", 22), 0);
	cr_assert_neq(s.v[1].value, s.v[0].value);
	cr_assert_neq(s.v[1].value, s.v[0].old);
	cr_assert_neq(s.v[1].value, s.v[2].value, "nor the spare");
	cr_assert_neq(s.v[1].old, s.v[2].value);
	/* and it rotates and revokes as the others do */
	cr_assert_eq(store_rotate(&s, 1, "added-next", 10), 0);
	cr_assert_eq(s.v[1].olen, 22);
	cr_assert_eq(memcmp(s.v[0].value, "second", 6), 0);
	store_revoke(&s, 1);
	cr_assert(s.v[1].revoked);
	cr_assert(!s.v[0].revoked);

	/* up to cap, then -ENOSPC */
	for (size_t k = 1; k < STORE_LIVE_MAX; k++) {
		fd = pipe_with("more-value", 10);
		cr_assert_eq(store_add_fd(&s, &added[k], fd), (long)(k + 1));
		close(fd);
	}
	cr_assert_eq(s.n, s.cap);
	fd = pipe_with("one-too-many", 12);
	cr_assert_eq(store_add_fd(&s, &added[STORE_LIVE_MAX], fd), -ENOSPC);
	close(fd);
	/* every slot still distinct, and the rotations still work */
	for (size_t a = 0; a < s.n; a++)
		for (size_t b = a + 1; b <= s.n; b++)
			cr_assert_neq(s.v[a].value, s.v[b].value);
	cr_assert_eq(store_rotate(&s, s.n - 1, "last", 4), 0);
	cr_assert_eq(memcmp(s.v[s.n - 1].value, "last", 4), 0);
	cr_assert_eq(memcmp(s.v[0].value, "second", 6), 0);
	store_free(&s);
}
