/* tests/escape/bomb.c: a fork bomb and a memory bomb for test_limits.sh,
 * each with a cap of its own, so that a sandbox whose limit is broken
 * cannot take the test machine down: the test then sees the cap reached,
 * not the limit.
 *
 *   bomb fork CAP        every process forks until fork fails or CAP
 *                        processes exist in all; the first prints
 *                        "forked N, EAGAIN E, other errors X" once all have
 *                        stopped, waits for a line (or EOF) on stdin, exits 0
 *   bomb mem HOLD CAP    allocates and touches memory, 64 MiB at a time;
 *                        at HOLD MiB prints "holding N MiB" and waits for a
 *                        line on stdin; at CAP MiB prints "cap reached" and
 *                        exits 3 (a limit below CAP kills it first)
 *
 * The processes of the fork bomb block on a pipe whose only write end the
 * first holds, so they all go when it does, inside a sandbox or not; an
 * alarm ends each of them whatever happens.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define SAFETY_S 300 /* no process of a bomb outlives this */

struct shared {
	atomic_int procs;  /* processes that exist or are being forked */
	atomic_int active; /* processes still forking */
	atomic_int eagain, other;
};

static void wait_line(void)
{
	char c;

	while (read(0, &c, 1) == 1 && c != '\n')
		;
}

static int fork_bomb(int cap)
{
	struct shared *sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
				 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	int hold[2], i;
	pid_t first = getpid();
	char c;

	if (sh == MAP_FAILED || pipe(hold) < 0) {
		perror("bomb: setup");
		return 1;
	}
	atomic_store(&sh->procs, 1);
	atomic_store(&sh->active, 1);
	for (;;) {
		pid_t pid;

		if (atomic_fetch_add(&sh->procs, 1) >= cap) {
			atomic_fetch_sub(&sh->procs, 1);
			break;
		}
		/* counted for the child before it exists, so that the first
		 * never sees 0 active while a fork is under way */
		atomic_fetch_add(&sh->active, 1);
		pid = fork();
		if (pid == 0) {
			alarm(SAFETY_S);
			close(hold[1]);
			continue; /* the child bombs on */
		}
		if (pid < 0) {
			atomic_fetch_add(
				errno == EAGAIN ? &sh->eagain : &sh->other, 1);
			atomic_fetch_sub(&sh->active, 1);
			atomic_fetch_sub(&sh->procs, 1);
			break;
		}
	}
	atomic_fetch_sub(&sh->active, 1);
	if (getpid() != first) {
		/* EOF once the first has gone */
		while (read(hold[0], &c, 1) < 0 && errno == EINTR)
			;
		_exit(0);
	}
	for (i = 0; atomic_load(&sh->active) > 0 && i < 100 * SAFETY_S; i++)
		usleep(10000);
	printf("forked %d, EAGAIN %d, other errors %d\n",
	       atomic_load(&sh->procs) - 1, atomic_load(&sh->eagain),
	       atomic_load(&sh->other));
	fflush(stdout);
	wait_line();
	return 0;
}

static int memory_bomb(long hold_mb, long cap_mb)
{
	const size_t chunk = 64UL << 20;
	long mb = 0;
	bool held = false;

	while (mb < cap_mb) {
		char *p = mmap(NULL, chunk, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED) {
			printf("mmap failed at %ld MiB: %s\n", mb,
			       strerror(errno));
			return 4;
		}
		/* touched, so charged, not just mapped: a byte a page */
		for (size_t off = 0; off < chunk; off += 4096)
			p[off] = 1;
		mb += (long)(chunk >> 20);
		if (!held && mb >= hold_mb) {
			printf("holding %ld MiB\n", mb);
			fflush(stdout);
			wait_line();
			held = true;
		}
	}
	printf("cap reached: %ld MiB\n", mb);
	return 3;
}

int main(int argc, char **argv)
{
	alarm(SAFETY_S);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 3 && !strcmp(argv[1], "fork"))
		return fork_bomb(atoi(argv[2]));
	if (argc == 4 && !strcmp(argv[1], "mem"))
		return memory_bomb(atol(argv[2]), atol(argv[3]));
	fprintf(stderr, "usage: bomb fork CAP | bomb mem HOLD_MB CAP_MB\n");
	return 2;
}
