/* tests/e2e/pidfd_perm.c: a process that gave up root (setresuid to 1000,
 * and with it every capability, as Linux drops them) tries to signal a
 * root process by kill(2) and by pidfd_send_signal(2), with a pidfd and
 * with an open /proc/PID directory. Each must be EPERM, as Linux's
 * check_kill_permission says, and the victim and the parent live on. The
 * same lines natively and in the sandbox (test_signals.sh). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static void say(const char *what, long rc)
{
	printf("%s: %s\n", what, rc < 0 ? strerror(errno) : "ok");
	fflush(stdout);
}

int main(void)
{
	pid_t parent = getpid(), victim, a;
	int st;

	signal(SIGUSR2, SIG_DFL);
	victim = fork();
	if (victim == 0) {
		for (;;)
			pause();
	}
	a = fork();
	if (a == 0) {
		char p[64];
		int pfd, dfd, ppfd;

		say("setresuid(1000)", setresuid(1000, 1000, 1000));
		say("kill(victim, SIGKILL)", kill(victim, SIGKILL));
		say("kill(victim, 0)", kill(victim, 0));
		pfd = (int)syscall(SYS_pidfd_open, victim, 0);
		say("pidfd_open(victim)", pfd);
		say("pidfd_send_signal(victim, 0)",
		    syscall(SYS_pidfd_send_signal, pfd, 0, NULL, 0));
		say("pidfd_send_signal(victim, SIGSTOP)",
		    syscall(SYS_pidfd_send_signal, pfd, SIGSTOP, NULL, 0));
		snprintf(p, sizeof(p), "/proc/%d", victim);
		dfd = open(p, O_RDONLY | O_DIRECTORY);
		say("open(/proc/victim)", dfd);
		say("pidfd_send_signal(/proc/victim, SIGKILL)",
		    syscall(SYS_pidfd_send_signal, dfd, SIGKILL, NULL, 0));
		ppfd = (int)syscall(SYS_pidfd_open, parent, 0);
		say("pidfd_send_signal(parent, SIGUSR2)",
		    syscall(SYS_pidfd_send_signal, ppfd, SIGUSR2, NULL, 0));
		_exit(0);
	}
	waitpid(a, NULL, 0);
	usleep(100000);
	if (waitpid(victim, &st, WNOHANG | WUNTRACED) == victim)
		printf("victim %s\n", WIFSTOPPED(st) ? "stopped" : "killed");
	else
		printf("victim alive\n");
	kill(victim, SIGKILL);
	waitpid(victim, NULL, 0);
	printf("parent alive\n");
	return 0;
}
