/* Regression test for the sentry hang: a leader thread doing file mmaps
 * (injections) while a sibling calls exit_group natively. The sentry used to
 * wait on the leader alone, whose exit is reported only after the
 * sibling's, and froze the sandbox. Prints "survived". */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdint.h>
#include <unistd.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
static void *killer(void *a)
{
	usleep(20000);
	syscall(SYS_exit_group, 0);
	return 0;
}
int main(void)
{
	for (int i = 0; i < 50; i++) {
		pid_t c = fork();
		if (c == 0) {
			int fd = open("/bin/ls", O_RDONLY);
			pthread_t th;
			pthread_create(&th, 0, killer, 0);
			for (;;) {
				void *p = mmap(0, 4096, PROT_READ, MAP_PRIVATE,
					       fd, 0);
				if (p != MAP_FAILED)
					munmap(p, 4096);
			}
		}
		waitpid(c, 0, 0);
		printf("round %d ok\n", i);
		fflush(stdout);
	}
	puts("survived");
	return 0;
}
