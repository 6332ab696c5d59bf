/* tests/oci/init_sigwait.c: a container's first process that takes its
 * signals as tini and dumb-init do, blocked and waited for. Linux drops a
 * signal an init has no handler for, but not one it blocks: that one is
 * queued, and sigtimedwait or a signalfd takes it. One with no handler
 * is dropped when it would be delivered: sent unblocked, or unblocked
 * later. Prints the same under runc and moat
 * (test_lifecycle.sh, init_waits_for_blocked_signals).
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* a child sends sig to pid 1, from inside the container */
static void child_sends(int sig)
{
	pid_t c = fork();

	if (c == 0) {
		kill(1, sig);
		_exit(0);
	}
	waitpid(c, NULL, 0);
}

int main(void)
{
	sigset_t set;
	struct timespec ts = { 5, 0 };
	struct signalfd_siginfo si;
	int sig, fd;

	setvbuf(stdout, NULL, _IONBF, 0);
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGUSR2);
	sigprocmask(SIG_BLOCK, &set, NULL);

	/* queued while blocked, then waited for */
	child_sends(SIGTERM);
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sig = sigtimedwait(&set, NULL, &ts);
	printf("sigtimedwait: %s\n", sig > 0 ? strsignal(sig) : "nothing");

	/* sent while pid 1 waits in sigtimedwait */
	if (fork() == 0) {
		usleep(200000);
		kill(1, SIGTERM);
		_exit(0);
	}
	sig = sigtimedwait(&set, NULL, &ts);
	printf("sigtimedwait, waiting: %s\n", sig > 0 ? strsignal(sig) : "nothing");
	wait(NULL);

	/* a signalfd's */
	sigemptyset(&set);
	sigaddset(&set, SIGUSR2);
	fd = signalfd(-1, &set, 0);
	child_sends(SIGUSR2);
	if (fd >= 0 && read(fd, &si, sizeof(si)) == (ssize_t)sizeof(si))
		printf("signalfd: %s\n", strsignal((int)si.ssi_signo));
	else
		printf("signalfd: nothing\n");

	/* neither blocked nor handled: dropped */
	child_sends(SIGUSR1);
	printf("alive after SIGUSR1\n");

	/* queued while blocked, unblocked with no handler: dropped then */
	sigemptyset(&set);
	sigaddset(&set, SIGHUP);
	sigprocmask(SIG_BLOCK, &set, NULL);
	child_sends(SIGHUP);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	printf("alive after a blocked SIGHUP\n");
	return 0;
}
