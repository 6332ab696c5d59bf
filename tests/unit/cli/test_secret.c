/* tests/unit/cli/test_secret.c: `moat secret`'s reading of SOURCE into a
 * sealed memfd (cli/secret.c): the bytes the broker gets, checked as the
 * broker checks them, and never in a message. */
#include <criterion/criterion.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/secret.h"
#include "policy/credentials.h"

static int fds_open(void)
{
	int n = 0;

	for (int fd = 0; fd < 1024; fd++)
		n += fcntl(fd, F_GETFD) >= 0;
	return n;
}

static int fds_before;
static char dir[] = "/tmp/moat-secret-test-XXXXXX";

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

TestSuite(secret, .init = init, .fini = fini);

/* The memfd's whole content, and that it is sealed against change. */
static void holds(int fd, const char *want, size_t wlen)
{
	char buf[CRED_VALUE_MAX + 16];
	ssize_t n;
	int seals;

	cr_assert_geq(fd, 0);
	seals = fcntl(fd, F_GET_SEALS);
	cr_assert_eq(seals & SECRET_SEALS, SECRET_SEALS, "seals %#x", seals);
	cr_assert_eq(lseek(fd, 0, SEEK_CUR), 0, "read from its start");
	n = pread(fd, buf, sizeof(buf), 0);
	cr_assert_eq((size_t)n, wlen);
	cr_assert(!memcmp(buf, want, wlen));
	/* nobody on the way can change it */
	cr_assert_eq(write(fd, "x", 1), -1);
	cr_assert_eq(errno, EPERM);
	cr_assert_eq(ftruncate(fd, 0), -1);
	cr_assert_eq(fcntl(fd, F_ADD_SEALS, 0), -1, "sealed against seals");
	close(fd);
}

static void write_file(const char *name, const void *v, size_t n)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	cr_assert_not_null(f);
	cr_assert_eq(fwrite(v, 1, n, f), n);
	fclose(f);
}

static void refused(const char *source, const char *want)
{
	struct moat_error err = { 0 };
	int fd = secret_value_memfd(source, &err);

	cr_assert_lt(fd, 0, "`%s` accepted", source);
	cr_assert(strstr(err.msg, want), "`%s`: message `%s` lacks `%s`",
		  source, err.msg, want);
}

Test(secret, env)
{
	struct moat_error err = { 0 };

	setenv("MOAT_TEST_SECRET", "sk-canary-7d1e", 1);
	holds(secret_value_memfd("env:MOAT_TEST_SECRET", &err),
	      "sk-canary-7d1e", 14);
	/* one trailing line break goes, as the broker drops it */
	setenv("MOAT_TEST_SECRET", "sk-canary-7d1e\r\n", 1);
	holds(secret_value_memfd("env:MOAT_TEST_SECRET", &err),
	      "sk-canary-7d1e", 14);
	unsetenv("MOAT_TEST_SECRET");
	refused("env:MOAT_TEST_SECRET", "MOAT_TEST_SECRET is not set");
	refused("env:", "no variable named");
}

Test(secret, file)
{
	struct moat_error err = { 0 };
	char src[128];

	write_file("v", "value-from-file\n", 16);
	snprintf(src, sizeof(src), "file:%s/v", dir);
	holds(secret_value_memfd(src, &err), "value-from-file", 15);
	snprintf(src, sizeof(src), "file:%s/none", dir);
	refused(src, "No such file");
	snprintf(src, sizeof(src), "file:%s", dir);
	refused(src, "a directory");
	refused("file:relative/v", "an absolute path expected");
}

Test(secret, fd)
{
	struct moat_error err = { 0 };
	char src[32];
	int p[2];

	cr_assert_eq(pipe(p), 0);
	cr_assert_eq(write(p[1], "piped-value", 11), 11);
	close(p[1]);
	snprintf(src, sizeof(src), "fd:%d", p[0]);
	holds(secret_value_memfd(src, &err), "piped-value", 11);
	close(p[0]);
	refused(src, "is not open");
	refused("fd:", "a file descriptor's number expected");
	refused("fd:3x", "a file descriptor's number expected");
	refused("fd:-1", "a file descriptor's number expected");
}

/* What the broker would refuse is refused here, before anything is sent,
 * and the message never holds the value. */
Test(secret, bad_values)
{
	char big[CRED_VALUE_MAX + 2], src[160];

	refused("val:x", "a source is env:VAR, file:PATH or fd:N");
	refused("", "a source is");
	setenv("MOAT_TEST_SECRET", "", 1);
	refused("env:MOAT_TEST_SECRET", "the value is empty");
	setenv("MOAT_TEST_SECRET", "\n", 1);
	refused("env:MOAT_TEST_SECRET", "the value is empty");
	setenv("MOAT_TEST_SECRET", "canary-one\ncanary-two", 1);
	refused("env:MOAT_TEST_SECRET", "contains a line break");
	{
		struct moat_error err = { 0 };
		cr_assert_lt(secret_value_memfd("env:MOAT_TEST_SECRET", &err),
			     0);
		cr_assert_null(strstr(err.msg, "canary"), "%s", err.msg);
	}
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = 0;
	setenv("MOAT_TEST_SECRET", big, 1);
	refused("env:MOAT_TEST_SECRET", "longer than 8192 bytes");
	big[CRED_VALUE_MAX] = 0; /* exactly the most */
	setenv("MOAT_TEST_SECRET", big, 1);
	{
		struct moat_error err = { 0 };
		int fd = secret_value_memfd("env:MOAT_TEST_SECRET", &err);
		holds(fd, big, CRED_VALUE_MAX);
	}
	unsetenv("MOAT_TEST_SECRET");
	write_file("nul", "a\0b", 3);
	snprintf(src, sizeof(src), "file:%s/nul", dir);
	refused(src, "contains a NUL byte");
	/* a file far past the limit is not read whole */
	{
		char path[128];
		FILE *f;

		snprintf(path, sizeof(path), "%s/huge", dir);
		f = fopen(path, "w");
		cr_assert_not_null(f);
		cr_assert_eq(ftruncate(fileno(f), 1 << 30), 0);
		fclose(f);
		snprintf(src, sizeof(src), "file:%s", path);
		refused(src, "longer than 8192 bytes");
	}
}

Test(secret, names)
{
	char longname[CRED_NAME_MAX + 1];

	cr_assert(secret_name_ok("API_KEY"));
	cr_assert(secret_name_ok("_x9"));
	cr_assert_not(secret_name_ok(""));
	cr_assert_not(secret_name_ok("9X"));
	cr_assert_not(secret_name_ok("A B"));
	cr_assert_not(secret_name_ok("A\n"));
	cr_assert_not(secret_name_ok("A=B"));
	memset(longname, 'A', CRED_NAME_MAX);
	longname[CRED_NAME_MAX] = 0;
	cr_assert_not(secret_name_ok(longname));
	longname[CRED_NAME_MAX - 1] = 0;
	cr_assert(secret_name_ok(longname));
}
