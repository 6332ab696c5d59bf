/* tests/escape/sysv_churn.c: System V objects a process makes and drops
 * over and over, which Linux forgets each time:
 *
 *   sysv_churn SEM_ROUNDS SHM_ROUNDS
 *
 * - a semaphore set of 32000, a semop with SEM_UNDO on it, IPC_RMID: Linux
 *   drops the set's undo records with it (the sentry once kept 64 KB a
 *   round until the process exited);
 * - shmat of a segment, then munmap instead of shmdt: the mapping is gone
 *   (the sentry, which never sees munmap, once kept the attachment).
 * Prints what each loop got, then forks (a child copies the attachments
 * left), prints "sentry alive" and waits for a line on stdin (or EOF).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 1000, i, ok = 0, id, st;
	int shm_rounds = argc > 2 ? atoi(argv[2]) : 1000;
	const char *err = "none";
	pid_t pid;

	for (i = 0; i < rounds; i++) {
		struct sembuf op = { .sem_num = 31999,
				     .sem_op = 1,
				     .sem_flg = SEM_UNDO };

		id = semget(IPC_PRIVATE, 32000, 0600);
		if (id < 0 || semop(id, &op, 1) < 0) {
			err = strerror(errno);
			if (id >= 0)
				semctl(id, 0, IPC_RMID);
			break;
		}
		semctl(id, 0, IPC_RMID);
		ok++;
	}
	printf("sem rounds: %d, then %s\n", ok, err);
	id = shmget(IPC_PRIVATE, 4096, 0600);
	if (id < 0) {
		perror("shmget");
		return 1;
	}
	err = "none";
	for (i = ok = 0; i < shm_rounds; i++) {
		void *m = shmat(id, NULL, 0);

		if (m == (void *)-1) {
			err = strerror(errno);
			break;
		}
		munmap(m, 4096);
		ok++;
	}
	shmctl(id, IPC_RMID, NULL);
	printf("shm rounds: %d, then %s\n", ok, err);
	fflush(stdout);
	pid = fork();
	if (pid == 0)
		_exit(0);
	if (pid < 0 || waitpid(pid, &st, 0) != pid || st)
		printf("fork after: %s\n", pid < 0 ? strerror(errno) : "bad");
	printf("sentry alive\n");
	fflush(stdout);
	while (read(0, &st, 1) == 1 && (char)st != '\n')
		;
	return 0;
}
