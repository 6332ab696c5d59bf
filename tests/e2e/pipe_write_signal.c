/* tests/e2e/pipe_write_signal.c: a blocking write to a pipe that a signal
 * interrupts returns as Linux's does: the bytes already written, or EINTR
 * (or a restart under SA_RESTART) when there were none, and the handler
 * has run. Prints one line a case; must print the same natively.
 *
 * Nothing here depends on timing but the first cases, where the signal
 * must come while the writer waits on a pipe that was full before it
 * wrote: a timer 300 ms after the write starts. Elsewhere a helper child
 * sends the signal once the pipe is full again, or drains the pipe once
 * the handler has run (the handler tells it through a second pipe). */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#define PIPE_SIZE 65536

static volatile sig_atomic_t handled;
static int note[2]; /* the handler's "I ran" to the helper */

static void on_alrm(int s)
{
	(void)s;
	handled++;
	if (write(note[1], "", 1) < 0)
		_exit(2);
}

enum {
	SIG_TIMER,
	SIG_HELPER
};
enum {
	AFTER_STAY,
	AFTER_DRAIN,
	AFTER_LEAVE
};

struct kase {
	const char *name;
	int restart;
	size_t prefill; /* bytes in the pipe before the write */
	size_t early;	/* bytes the helper reads before the signal */
	int sig;	/* who sends SIGALRM (none for AFTER_LEAVE) */
	int after;	/* the helper, after the handler ran */
	size_t n;	/* bytes asked */
	int vec;	/* writev in three pieces */
};

static void wait_full(int rfd)
{
	int q = 0;

	while (ioctl(rfd, FIONREAD, &q) == 0 && q < PIPE_SIZE)
		usleep(1000);
}

static void helper(const struct kase *k, int rfd)
{
	char b[4096], c;
	size_t got = 0;
	ssize_t r;

	if (k->early) {
		wait_full(rfd);
		while (got < k->early) {
			r = read(rfd, b,
				 k->early - got < sizeof(b) ? k->early - got :
							      sizeof(b));
			if (r <= 0)
				_exit(1);
			got += (size_t)r;
		}
	}
	if (k->after == AFTER_LEAVE)
		_exit(0);
	if (k->sig == SIG_HELPER) {
		wait_full(rfd); /* the writer has filled what was read */
		kill(getppid(), SIGALRM);
	}
	if (read(note[0], &c, 1) != 1)
		_exit(1);
	if (k->after == AFTER_DRAIN)
		while (read(rfd, b, sizeof(b)) > 0)
			;
	pause();
	_exit(0);
}

static void run(const struct kase *k)
{
	static char buf[1 << 20];
	struct itimerval it = { { 0, 0 }, { 0, 300000 } }, off = { 0 };
	struct sigaction sa;
	const char *name = k->name;
	int p[2];
	pid_t c;
	ssize_t r;

	if (pipe(p) < 0 || pipe(note) < 0)
		exit(1);
	if (k->prefill && write(p[1], buf, k->prefill) != (ssize_t)k->prefill)
		exit(1);
	c = fork();
	if (c == 0) {
		close(p[1]);
		helper(k, p[0]);
	}
	if (k->after == AFTER_LEAVE)
		close(p[0]);
	handled = 0;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alrm;
	sa.sa_flags = k->restart ? SA_RESTART : 0;
	sigaction(SIGALRM, &sa, NULL);
	if (k->sig == SIG_TIMER)
		setitimer(ITIMER_REAL, &it, NULL);
	if (k->vec) {
		struct iovec iov[3] = { { buf, k->n / 4 },
					{ buf, k->n / 4 },
					{ buf, k->n / 2 } };
		r = writev(p[1], iov, 3);
	} else {
		r = write(p[1], buf, k->n);
	}
	setitimer(ITIMER_REAL, &off, NULL);
	if (k->after == AFTER_LEAVE) {
		/* how much went in before the reader left is the scheduler's */
		printf("%s: %s, then ", name,
		       r > 0 && r < (ssize_t)k->n ? "part" : "not part");
		r = write(p[1], buf, 1);
		name = "write";
	}
	printf("%s: %zd %s handled %d\n", name, r, r < 0 ? strerror(errno) : "",
	       (int)handled);
	kill(c, SIGKILL);
	waitpid(c, NULL, 0);
	close(p[1]);
	if (k->after != AFTER_LEAVE)
		close(p[0]);
	close(note[0]);
	close(note[1]);
}

static const struct kase kases[] = {
	/* nothing written: EINTR, or restarted and finished once drained */
	{ "full", 0, PIPE_SIZE, 0, SIG_TIMER, AFTER_STAY, 4096, 0 },
	{ "full-big", 0, PIPE_SIZE, 0, SIG_TIMER, AFTER_STAY, 1 << 20, 0 },
	{ "full-restart", 1, PIPE_SIZE, 0, SIG_TIMER, AFTER_DRAIN, 4096, 0 },
	{ "full-big-restart", 1, PIPE_SIZE, 0, SIG_TIMER, AFTER_DRAIN, 1 << 20,
	  0 },
	/* some written: that count, with or without SA_RESTART */
	{ "empty-big", 0, 0, 0, SIG_HELPER, AFTER_STAY, 1 << 20, 0 },
	{ "empty-big-restart", 1, 0, 0, SIG_HELPER, AFTER_DRAIN, 1 << 20, 0 },
	{ "drained", 0, 0, 102400, SIG_HELPER, AFTER_STAY, 1 << 20, 0 },
	{ "drained-restart", 1, 0, 102400, SIG_HELPER, AFTER_DRAIN, 1 << 20,
	  0 },
	{ "drained-writev", 0, 0, 102400, SIG_HELPER, AFTER_STAY, 1 << 20, 1 },
	/* the reader goes: what was written, then EPIPE */
	{ "reader-gone", 0, 0, 102400, SIG_HELPER, AFTER_LEAVE, 1 << 20, 0 },
};

static volatile sig_atomic_t piped;

static void on_pipe(int s)
{
	(void)s;
	piped++;
}

/* The last reader leaves while the writer waits on a full pipe: EPIPE,
 * and SIGPIPE's handler runs once (it must not also interrupt the write).
 * Whether the reader leaves before or during the write, the same. */
static void reader_leaves_blocked_writer(void)
{
	static char buf[PIPE_SIZE];
	struct sigaction sa;
	int p[2];
	pid_t c;
	ssize_t r;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_pipe;
	sigaction(SIGPIPE, &sa, NULL);
	if (pipe(p) < 0 || write(p[1], buf, sizeof(buf)) != sizeof(buf))
		exit(1);
	c = fork();
	if (c == 0) {
		close(p[1]);
		usleep(200000);
		_exit(0);
	}
	close(p[0]);
	r = write(p[1], buf, 100);
	printf("sigpipe-handler: %zd %s handled %d\n", r,
	       r < 0 ? strerror(errno) : "", (int)piped);
	waitpid(c, NULL, 0);
	close(p[1]);
}

int main(void)
{
	size_t i;

	setvbuf(stdout, NULL, _IONBF, 0);
	signal(SIGPIPE, SIG_IGN);
	for (i = 0; i < sizeof(kases) / sizeof(kases[0]); i++)
		run(&kases[i]);
	reader_leaves_blocked_writer();
	return 0;
}
