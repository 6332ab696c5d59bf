/* Regression test for the stale task: a thread killed by its leader's
 * native exit_group during an injection was set running again, so its
 * virtual tid kept resolving to a host tid that could belong to another
 * host process by then (the sentry, as root, then signalled it). Prints
 * "no stale task this time" when every dead tid is gone. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
static int fd;
static volatile int tid_pub;
static void *mapper(void *a)
{
	tid_pub = syscall(SYS_gettid);
	for (;;) {
		void *p = mmap(0, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
		if (p != MAP_FAILED)
			munmap(p, 4096);
	}
}
int main(int argc, char **argv)
{
	int tries = argc > 1 ? atoi(argv[1]) : 200;
	int pfd[2];
	fd = open("/bin/ls", O_RDONLY);
	for (int i = 0; i < tries; i++) {
		pipe(pfd);
		pid_t c = fork();
		if (c == 0) {
			pthread_t th;
			pthread_create(&th, 0, mapper, 0);
			while (!tid_pub)
				;
			write(pfd[1], (void *)&tid_pub, 4);
			usleep(1000 + rand() % 3000);
			syscall(SYS_exit_group, 0);
		}
		int tid = 0;
		read(pfd[0], &tid, 4);
		close(pfd[0]);
		close(pfd[1]);
		waitpid(c, 0, 0);
		usleep(2000);
		/* thread and process are gone: tkill must say ESRCH */
		if (syscall(SYS_tkill, tid, 0) == 0) {
			printf("round %d: dead thread vtid %d still resolvable after its process was reaped\n",
			       i, tid);
			printf("  tkill(%d, SIGURG) -> %ld  (sentry tkill()s the stale host tid)\n",
			       tid, syscall(SYS_tkill, tid, SIGURG));
			printf("STALE_VTID=%d\n", tid);
			fflush(stdout);
			if (argc >
			    2) { /* wait for the host side to place a victim, then kill it */
				sleep(atoi(argv[2]));
				printf("  tkill(%d, SIGKILL) -> %ld\n", tid,
				       syscall(SYS_tkill, tid, SIGKILL));
			}
			return 0;
		}
	}
	puts("no stale task this time");
	return 0;
}
