/* POSIX timers in the sandbox: a CLOCK_MONOTONIC timer with SIGEV_SIGNAL
 * interrupts a read blocked on an empty pipe, and its siginfo carries
 * SI_TIMER and the sigev_value; a periodic one counts overruns; a
 * CPU-time clock is refused. Prints one line per check. */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t code, value, hits;

static void on_timer(int sig, siginfo_t *si, void *ctx)
{
	(void)sig;
	(void)ctx;
	code = si->si_code;
	value = si->si_value.sival_int;
	hits++;
}

int main(void)
{
	struct sigaction sa;
	struct sigevent ev;
	struct itimerspec its;
	timer_t tm;
	int p[2];
	char c;
	ssize_t n;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_timer;
	sa.sa_flags = SA_SIGINFO; /* no SA_RESTART: the read fails EINTR */
	sigaction(SIGRTMIN, &sa, NULL);
	memset(&ev, 0, sizeof(ev));
	ev.sigev_notify = SIGEV_SIGNAL;
	ev.sigev_signo = SIGRTMIN;
	ev.sigev_value.sival_int = 4242;
	if (timer_create(CLOCK_MONOTONIC, &ev, &tm) < 0) {
		perror("timer_create");
		return 1;
	}
	memset(&its, 0, sizeof(its));
	its.it_value.tv_nsec = 100 * 1000 * 1000;
	timer_settime(tm, 0, &its, NULL);
	if (pipe(p) < 0)
		return 1;
	n = read(p[0], &c, 1);
	printf("read %zd %s\n", n, n < 0 ? strerror(errno) : "");
	printf("si_code %s value %d\n", code == SI_TIMER ? "SI_TIMER" : "?",
	       (int)value);
	/* periodic, 10 ms, for about 100 ms */
	hits = 0;
	its.it_value.tv_nsec = 10 * 1000 * 1000;
	its.it_interval.tv_nsec = 10 * 1000 * 1000;
	timer_settime(tm, 0, &its, NULL);
	while (hits < 5)
		pause();
	timer_gettime(tm, &its);
	printf("periodic %s, interval %ld ms\n", hits >= 5 ? "fired" : "no",
	       its.it_interval.tv_nsec / 1000000);
	timer_delete(tm);
	printf("deleted: %s\n",
	       timer_gettime(tm, &its) < 0 && errno == EINVAL ? "EINVAL" : "?");
	printf("cpu clock: %s\n",
	       timer_create(CLOCK_PROCESS_CPUTIME_ID, &ev, &tm) < 0 ?
		       strerror(errno) :
		       "made");
	return 0;
}
