/* Regression test for the ghost process (found by review): a thread that
 * forks while a sibling calls exit_group can die between its fork event and
 * the sentry's PTRACE_GETEVENTMSG; the sentry then recorded a guest process
 * with host pid 0, and kill(-1) in the guest became kill(0) on the host: a
 * signal to the sentry's own host process group. Prints "no ghost" when no
 * child that never exits appears; the caller checks its process group. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
static void *fk(void *a)
{
	for (;;) {
		pid_t p = fork();
		if (p == 0)
			_exit(0);
	}
	return 0;
}
int main(int argc, char **argv)
{
	int sig = SIGUSR1;
	int rounds = argc > 1 ? atoi(argv[1]) : 200;
	for (int r = 0; r < rounds; r++) {
		pid_t c = fork();
		if (c == 0) {
			pthread_t t;
			for (int i = 0; i < 4; i++)
				pthread_create(&t, 0, fk, 0);
			usleep(3000);
			syscall(SYS_exit_group, 3);
		}
		waitpid(c, 0, 0);
		/* reap real orphans; a ghost never exits */
		int ghost = 0;
		for (int k = 0; k < 200; k++) {
			pid_t w = waitpid(-1, 0, WNOHANG);
			if (w < 0 && errno == ECHILD) {
				ghost = 0;
				break;
			}
			if (w == 0) {
				ghost = 1;
				usleep(1000);
			}
		}
		if (ghost) {
			printf("round %d: a child that never exits exists; kill(-1, %d)\n",
			       r, sig);
			fflush(stdout);
			kill(-1, sig);
			sleep(1);
			printf("guest still running after kill\n");
			return 0;
		}
	}
	printf("no ghost\n");
	return 1;
}
