/* tests/escape/audit_flood.c: a guest that floods the audit log
 * (test_audit_flood.sh).
 *     audit_flood NR COUNT [NR2]
 * calls syscall NR (one moat lacks: an audit record each) COUNT times,
 * then NR2 once, and prints "calls COUNT seconds S", S the time the
 * calls took, rounded up. Natively they all fail with ENOSYS too. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

int main(int argc, char **argv)
{
	struct timespec a, b;
	long nr, count, i, enosys = 0;

	if (argc < 3)
		return 2;
	nr = atol(argv[1]);
	count = atol(argv[2]);
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (i = 0; i < count; i++)
		enosys += syscall(nr, 0, 0, 0) == -1 && errno == ENOSYS;
	if (argc > 3)
		enosys += syscall(atol(argv[3]), 0, 0, 0) == -1 &&
			  errno == ENOSYS;
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("calls %ld seconds %ld enosys %ld\n", count,
	       (long)(b.tv_sec - a.tv_sec) + 1, enosys);
	return 0;
}
