/* tests/oci/many_procs.c: N processes with 15-byte names, so that the
 * container's ps answer is long (test_lifecycle.sh,
 * ps_of_many_processes).
 *     many_procs N    forks N children named "longprocessname" that pause,
 *                     then prints "ready" and pauses itself. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 0;

	for (int i = 0; i < n; i++) {
		pid_t p = fork();
		if (p < 0) {
			perror("fork");
			return 1;
		}
		if (p == 0) {
			prctl(PR_SET_NAME, "longprocessname");
			for (;;)
				pause();
		}
	}
	printf("ready\n");
	fflush(stdout);
	for (;;)
		pause();
}
