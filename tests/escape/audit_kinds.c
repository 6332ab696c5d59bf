/* tests/escape/audit_kinds.c: a guest that tries to keep what matters
 * out of the audit log (test_audit_flood.sh, made_up_syscalls_hide_nothing).
 *     audit_kinds BASE SECONDS
 * calls 256 syscall numbers from BASE (none exists: each was a kind of
 * its own, and filled the limiter's one table of kinds), then floods
 * BASE+256 for SECONDS to keep the bucket empty, and a second in makes
 * the calls an auditor must see: a connect that is refused and the
 * first call of syscall 181. Prints "connect RC errno E". */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static double mono(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	long base = argc > 1 ? atol(argv[1]) : 100000;
	double secs = argc > 2 ? atof(argv[2]) : 3, t0;
	int i, done = 0;

	for (i = 0; i < 256; i++)
		syscall(base + i, 0, 0, 0);
	t0 = mono();
	while (mono() - t0 < secs) {
		for (i = 0; i < 1000; i++)
			syscall(base + 256, 0, 0, 0);
		if (!done && mono() - t0 > 1) {
			struct sockaddr_in a = { .sin_family = AF_INET,
						 .sin_port = htons(80) };
			int s = socket(AF_INET, SOCK_STREAM, 0), r;

			inet_pton(AF_INET, "10.9.8.7", &a.sin_addr);
			r = connect(s, (struct sockaddr *)&a, sizeof(a));
			printf("connect %d errno %d\n", r, r ? errno : 0);
			fflush(stdout);
			close(s);
			syscall(181, 0, 0, 0);
			done = 1;
		}
	}
	return 0;
}
