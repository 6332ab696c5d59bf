/* tests/unit/vfs/vfs_test.h: helpers shared by the vfs suites (static
 * inline, so every suite file may include it without prototypes or link
 * clashes). */
#ifndef MOAT_TESTS_UNIT_VFS_TEST_H
#define MOAT_TESTS_UNIT_VFS_TEST_H

#include <criterion/criterion.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#endif

#include "sentry/sentry.h"

/* The process's open fds, for the leak checks. */
static inline int vfst_count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n - 1; /* the DIR's own fd */
}

/* A sentry state of nothing but what a synthetic tree reads (the
 * /proc/sys and /sys suites): no audit log, no host /proc. */
static inline void vfst_sentry_new(void)
{
	S = calloc(1, sizeof(*S));
	cr_assert_not_null(S);
	S->audit_fd = -1;
	S->host_proc_fd = -1;
}

/* Idempotent: also the .fini of a test that failed half-way. */
static inline void vfst_sentry_free(void)
{
	if (S && S->host_proc_fd >= 0)
		close(S->host_proc_fd);
	free(S);
	S = NULL;
}

/* The end of a test: S gone, no fd and (under ASan) no memory left of
 * what it made. Criterion 2.4 ignores failures in .fini, so a test calls
 * this itself. */
static inline void vfst_sentry_end(int base_fds)
{
	int n;

	vfst_sentry_free();
	n = vfst_count_fds();
	cr_assert_eq(n, base_fds, "fd leak: %d -> %d", base_fds, n);
#if defined(__SANITIZE_ADDRESS__)
	cr_assert_eq(__lsan_do_recoverable_leak_check(), 0, "memory leak");
#endif
}

#endif
