/* tests/escape/zombie_fork.c: children that exit at once and are never
 * waited for, until fork fails or CAP of them exist.
 *
 *   zombie_fork CAP
 *
 * Linux's pids cgroup (and RLIMIT_NPROC) counts a zombie until it is
 * reaped, so under pids.max=N the N-th fork fails with EAGAIN. Once the
 * zombies are reaped, fork works again.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int cap = argc > 1 ? atoi(argv[1]) : 3000, n = 0, reaped = 0, st;
	pid_t p;

	while (n < cap) {
		p = fork();
		if (p < 0) {
			printf("fork failed after %d zombies: %s\n", n,
			       strerror(errno));
			break;
		}
		if (p == 0)
			_exit(0);
		n++;
	}
	if (n == cap)
		printf("made %d zombies, no error\n", n);
	while (wait(&st) > 0)
		reaped++;
	printf("reaped %d\n", reaped);
	p = fork();
	if (p == 0)
		_exit(0);
	printf("then fork: %s\n", p < 0 ? strerror(errno) : "ok");
	if (p > 0)
		waitpid(p, &st, 0);
	return 0;
}
