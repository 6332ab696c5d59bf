/* tests/e2e/reaped_reader_pipe.c: a child that held a pipe's only read end
 * is killed and reaped; the parent's write to the pipe then fails with
 * EPIPE, since Linux closes a process's files before its parent can learn
 * of its death. CPython's resource tracker tests rely on it (a write to a
 * reaped tracker's pipe is how they see it died). The sentry once closed a
 * dead process's files only after every event it had collected in one go,
 * so a parent that waited and wrote quickly enough found the pipe open.
 *
 * A sleeper blocked in an emulated poll with a timeout keeps the sentry on
 * the path that collects several events at once, where it showed.
 * Prints the same natively and under moat. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define ROUNDS 200

int main(void)
{
	int round, open_after = 0, other = 0;
	pid_t sleeper;

	signal(SIGPIPE, SIG_IGN);
	sleeper = fork();
	if (sleeper == 0) {
		for (;;)
			poll(NULL, 0, 60000);
	}
	for (round = 0; round < ROUNDS; round++) {
		int p[2], st;
		pid_t c, w;
		ssize_t n;

		if (pipe(p) < 0)
			return 1;
		c = fork();
		if (c == 0) {
			char b;
			close(p[1]);
			read(p[0], &b, 1); /* blocks: nobody writes */
			_exit(0);
		}
		close(p[0]);
		kill(c, SIGKILL);
		while ((w = waitpid(c, &st, WNOHANG)) == 0)
			;
		if (w != c || !WIFSIGNALED(st))
			return 1;
		n = write(p[1], "x", 1);
		if (n == 1)
			open_after++;
		else if (errno != EPIPE)
			other++;
		close(p[1]);
	}
	kill(sleeper, SIGKILL);
	waitpid(sleeper, NULL, 0);
	printf("rounds %d: EPIPE %d, written %d, other %d\n", ROUNDS,
	       ROUNDS - open_after - other, open_after, other);
	return 0;
}
