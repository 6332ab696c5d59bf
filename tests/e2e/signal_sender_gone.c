#define _GNU_SOURCE
/* tests/e2e/signal_sender_gone.c: the siginfo of a signal names its sender
 * (pid and real uid) even when the sender is gone by the time the signal
 * is taken. Regression: the sentry looked the uid up at delivery, so a
 * sender already reaped showed uid 0. Prints the same natively and under
 * moat. Run as root: each child keeps effective uid 0 (so that it may
 * signal the parent) and takes a real uid of its own, which is what
 * si_uid says. */
#include <mqueue.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void take(const char *what, pid_t child, sigset_t *set)
{
	siginfo_t si;

	if (sigwaitinfo(set, &si) < 0) {
		perror("sigwaitinfo");
		return;
	}
	printf("%s: signo %d pid %s uid %d\n", what, si.si_signo,
	       si.si_pid == child ? "child" : "other", (int)si.si_uid);
}

int main(void)
{
	sigset_t set;
	pid_t c;
	int st;
	mqd_t q;
	struct sigevent ev = { .sigev_notify = SIGEV_SIGNAL,
			       .sigev_signo = SIGUSR2 };

	alarm(20); /* never hang a test run */
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGUSR2);
	sigprocmask(SIG_BLOCK, &set, NULL);
	mq_unlink("/sender-gone");
	q = mq_open("/sender-gone", O_CREAT | O_RDWR, 0666, NULL);
	if (q < 0) {
		perror("setup");
		return 1;
	}
	/* kill(2) from a child that exits and is reaped before the wait */
	c = fork();
	if (c == 0) {
		if (setresuid(4321, 0, 0) < 0)
			_exit(9);
		_exit(kill(getppid(), SIGUSR1) < 0 ? 1 : 0);
	}
	waitpid(c, &st, 0);
	take("kill", c, &set);
	/* mq_notify's signal, sent by a child's mq_send */
	if (mq_notify(q, &ev) < 0) {
		perror("mq");
		return 1;
	}
	c = fork();
	if (c == 0) {
		if (setresuid(4322, 0, 0) < 0)
			_exit(9);
		_exit(mq_send(q, "x", 1, 0) < 0 ? 1 : 0);
	}
	waitpid(c, &st, 0);
	take("mq_notify", c, &set);
	return 0;
}
