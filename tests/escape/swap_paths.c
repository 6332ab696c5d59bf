/* swap_paths A B: exchange two host paths (renameat2 RENAME_EXCHANGE)
 * over and over until killed: a racer against a runtime that checks a
 * path and uses it later (tests/escape/test_mount_escape.sh). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: swap_paths A B\n");
		return 2;
	}
	for (;;) {
		if (syscall(SYS_renameat2, AT_FDCWD, argv[1], AT_FDCWD, argv[2],
			    RENAME_EXCHANGE) < 0) {
			perror("renameat2");
			return 1;
		}
	}
}
