/* tests/escape/shm_rdonly.c: a System V segment attached SHM_RDONLY by a
 * user that may only read it cannot be made writable with mprotect (which
 * runs natively). Regression: the sentry mapped its read-write memfd, so
 * the reader rewrote the owner's data. Prints the same natively and under
 * moat; run as root. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <unistd.h>

int main(void)
{
	int id = shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0644);
	char *own = shmat(id, NULL, 0), *ro;

	if (id < 0 || own == (void *)-1) {
		perror("shmget/shmat");
		return 1;
	}
	strcpy(own, "the owner's");
	if (setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534))
		return 1;
	printf("read-write attach: %s\n", shmat(id, NULL, 0) == (void *)-1 ?
						  strerrorname_np(errno) :
						  "ok");
	ro = shmat(id, NULL, SHM_RDONLY);
	if (ro == (void *)-1) {
		perror("shmat SHM_RDONLY");
		return 1;
	}
	printf("read-only attach reads: %s\n", ro);
	printf("mprotect writable: %s\n",
	       mprotect(ro, 4096, PROT_READ | PROT_WRITE) < 0 ?
		       strerrorname_np(errno) :
		       "ok");
	printf("the segment holds: %s\n", own);
	return 0;
}
