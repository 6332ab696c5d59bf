/* tests/e2e/clone_orphans.c: forks whose parent dies mid-clone.
 *
 * Each round forks a process whose threads fork in a loop while its main
 * thread calls exit_group: a thread killed between its fork's event and the
 * sentry's look at it leaves a child no clone event names. Such a child is
 * a host process no guest knows, and the sentry kills it once no clone is
 * in flight. After ROUNDS rounds this prints "settled" (with how many
 * processes it reaped) and sleeps, so that the test can count the host
 * processes of this program: only this one is left.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define ROUNDS 150
#define THREADS 4

static void *forker(void *arg)
{
	(void)arg;
	for (;;) {
		pid_t pid = fork();

		if (pid == 0)
			_exit(0);
	}
	return NULL;
}

static void one_round(void)
{
	pthread_t th;
	struct timespec ts = { 0, 2000000 }; /* 2 ms of forks */

	for (int i = 0; i < THREADS; i++)
		if (pthread_create(&th, NULL, forker, NULL) != 0)
			_exit(2);
	nanosleep(&ts, NULL);
	_exit(0); /* exit_group, with forks under way */
}

int main(int argc, char **argv)
{
	long reaped = 0;
	int secs = argc > 1 ? atoi(argv[1]) : 5;

	for (int r = 0; r < ROUNDS; r++) {
		pid_t c = fork();
		int st;

		if (c < 0) {
			perror("fork");
			return 1;
		}
		if (c == 0)
			one_round();
		if (waitpid(c, &st, 0) != c) {
			perror("waitpid");
			return 1;
		}
		/* its children are ours now (we are pid 1) */
		while (waitpid(-1, &st, WNOHANG) > 0)
			reaped++;
	}
	/* the last of them may still be exiting */
	for (;;) {
		pid_t w = waitpid(-1, NULL, 0);

		if (w > 0) {
			reaped++;
			continue;
		}
		if (errno == ECHILD)
			break;
	}
	printf("settled, %ld reaped\n", reaped);
	fflush(stdout);
	sleep((unsigned)secs);
	return 0;
}
