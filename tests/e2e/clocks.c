/* tests/e2e/clocks.c: setting the clock (refused: no CAP_SYS_TIME), reading
 * it through adjtimex, and the CPU-time clocks of other threads and
 * processes (pthread_getcpuclockid, clock_getcpuclockid), whose clock ids
 * encode a pid. Prints one line per case: the same natively (as a user
 * without CAP_SYS_TIME) and under moat. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/timex.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MS 1000000LL

/* Linux's encodings (include/linux/posix-timers.h). */
#define CPUCLOCK_SCHED 2
#define CPUCLOCK_PERTHREAD 4
#define PROCESS_CLOCK(pid, which)                                              \
	((clockid_t)((~(unsigned)(pid) << 3) | (which)))
#define THREAD_CLOCK(tid, which)                                               \
	((clockid_t)((~(unsigned)(tid) << 3) | CPUCLOCK_PERTHREAD | (which)))
#define FD_CLOCK(fd) ((clockid_t)((~(unsigned)(fd) << 3) | 3))

static void res(const char *name, long rc)
{
	if (rc < 0)
		printf("%s: %s\n", name, strerrorname_np(errno));
	else
		printf("%s: ok\n", name);
}

static int64_t ns_of(clockid_t c, int *err)
{
	struct timespec ts;

	*err = clock_gettime(c, &ts) < 0 ? errno : 0;
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Burn CPU until clock c reads at least ms. */
static void spin(clockid_t c, int64_t ms)
{
	int err;

	while (ns_of(c, &err) < ms * MS && !err)
		;
}

/* What reading clock c gives, and whether it shows at least ms of CPU. */
static void cpu(const char *name, clockid_t c, int64_t ms)
{
	struct timespec r;
	int err;
	int64_t v = ns_of(c, &err);

	if (err) {
		printf("%s: %s\n", name, strerrorname_np(err));
		return;
	}
	printf("%s: ok, at least %lld ms: %s", name, (long long)ms,
	       v >= ms * MS ? "yes" : "NO");
	if (clock_getres(c, &r) < 0)
		printf(", getres %s\n", strerrorname_np(errno));
	else
		printf(", getres ok\n");
}

static void setting(void)
{
	struct timespec now, bad = { 0, 1000000000 };
	struct timeval tv;
	struct timezone tz = { 0, 0 };
	struct timex tx;

	clock_gettime(CLOCK_REALTIME, &now);
	gettimeofday(&tv, NULL);
	res("clock_settime realtime", clock_settime(CLOCK_REALTIME, &now));
	res("clock_settime bad nsec", clock_settime(CLOCK_REALTIME, &bad));
	res("clock_settime monotonic", clock_settime(CLOCK_MONOTONIC, &now));
	res("clock_settime process cpu",
	    clock_settime(CLOCK_PROCESS_CPUTIME_ID, &now));
	res("clock_settime bad clock", clock_settime(100, &now));
	res("clock_settime bad pointer",
	    syscall(SYS_clock_settime, CLOCK_REALTIME, (void *)8));
	res("settimeofday", settimeofday(&tv, NULL));
	res("settimeofday tz only", settimeofday(NULL, &tz));
	res("settimeofday nothing", syscall(SYS_settimeofday, NULL, NULL));
	tv.tv_usec = 2000000;
	res("settimeofday bad usec", settimeofday(&tv, NULL));
	res("settimeofday bad pointer",
	    syscall(SYS_settimeofday, (void *)8, NULL));

	memset(&tx, 0, sizeof(tx));
	res("adjtimex read", adjtimex(&tx));
	printf("adjtimex read gives the time: %s\n",
	       tx.time.tv_sec >= now.tv_sec ? "yes" : "NO");
	memset(&tx, 0, sizeof(tx));
	tx.modes = ADJ_OFFSET_SS_READ;
	res("adjtimex singleshot read", adjtimex(&tx));
	memset(&tx, 0, sizeof(tx));
	tx.modes = ADJ_FREQUENCY;
	res("adjtimex set frequency", adjtimex(&tx));
	tx.modes = ADJ_SETOFFSET;
	res("adjtimex set offset", adjtimex(&tx));
	tx.modes = 0x8000; /* ADJ_ADJTIME without ADJ_OFFSET_SINGLESHOT */
	res("adjtimex adjtime alone", adjtimex(&tx));
	tx.modes = ADJ_TICK;
	tx.tick = 1;
	res("adjtimex bad tick", adjtimex(&tx));
	res("adjtimex bad pointer", syscall(SYS_adjtimex, (void *)8));
	memset(&tx, 0, sizeof(tx));
	res("clock_adjtime realtime read",
	    syscall(SYS_clock_adjtime, CLOCK_REALTIME, &tx));
	tx.modes = ADJ_FREQUENCY;
	res("clock_adjtime realtime set",
	    syscall(SYS_clock_adjtime, CLOCK_REALTIME, &tx));
	tx.modes = 0;
	res("clock_adjtime monotonic",
	    syscall(SYS_clock_adjtime, CLOCK_MONOTONIC, &tx));
	res("clock_adjtime bad clock", syscall(SYS_clock_adjtime, 100, &tx));
	res("clock_adjtime process cpu",
	    syscall(SYS_clock_adjtime, CLOCK_PROCESS_CPUTIME_ID, &tx));
}

static pthread_barrier_t spun;
static pthread_mutex_t hold = PTHREAD_MUTEX_INITIALIZER;
static pid_t thread_tid;

static void *worker(void *arg)
{
	(void)arg;
	thread_tid = (pid_t)syscall(SYS_gettid);
	spin(CLOCK_THREAD_CPUTIME_ID, 30);
	pthread_barrier_wait(&spun);
	pthread_mutex_lock(&hold); /* stay alive until main is done */
	pthread_mutex_unlock(&hold);
	return NULL;
}

static void cpu_clocks(void)
{
	clockid_t c;
	pthread_t th;
	pid_t child;
	int pfd[2], rc;
	char b;

	/* this thread and this process */
	spin(CLOCK_PROCESS_CPUTIME_ID, 10);
	rc = pthread_getcpuclockid(pthread_self(), &c);
	printf("pthread_getcpuclockid self: %s\n",
	       rc ? strerrorname_np(rc) : "ok");
	cpu("own thread clock", c, 10);
	rc = clock_getcpuclockid(getpid(), &c);
	printf("clock_getcpuclockid self: %s\n",
	       rc ? strerrorname_np(rc) : "ok");
	cpu("own process clock", c, 10);
	cpu("own tid as a process clock", PROCESS_CLOCK(gettid(), 2), 10);
	cpu("pid 0 thread clock", THREAD_CLOCK(0, CPUCLOCK_SCHED), 10);
	cpu("pid 0 process clock, prof", PROCESS_CLOCK(0, 0), 0);

	/* another thread of this process */
	pthread_barrier_init(&spun, NULL, 2);
	pthread_mutex_lock(&hold);
	pthread_create(&th, NULL, worker, NULL);
	pthread_barrier_wait(&spun);
	rc = pthread_getcpuclockid(th, &c);
	printf("pthread_getcpuclockid other: %s\n",
	       rc ? strerrorname_np(rc) : "ok");
	cpu("other thread clock", c, 30);
	cpu("other thread, virt", THREAD_CLOCK(thread_tid, 1), 0);
	cpu("other thread as a process clock",
	    PROCESS_CLOCK(thread_tid, CPUCLOCK_SCHED), 0);
	/* an absolute time already past: it returns at once (the other
	 * thread's clock does not move while it waits for the mutex) */
	errno = clock_nanosleep(c, TIMER_ABSTIME, &(struct timespec){ 0, 1 },
				NULL);
	res("clock_nanosleep on another thread's clock", errno ? -1 : 0);
	errno = clock_nanosleep(THREAD_CLOCK(0, CPUCLOCK_SCHED), 0,
				&(struct timespec){ 0, 1 }, NULL);
	res("clock_nanosleep on its own thread clock", errno ? -1 : 0);

	/* another process: it spins 40 ms of its own CPU time, then waits */
	if (pipe(pfd) < 0)
		exit(1);
	child = fork();
	if (child == 0) {
		spin(CLOCK_PROCESS_CPUTIME_ID, 40);
		if (write(pfd[1], "x", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	if (read(pfd[0], &b, 1) != 1)
		exit(1);
	rc = clock_getcpuclockid(child, &c);
	printf("clock_getcpuclockid child: %s\n",
	       rc ? strerrorname_np(rc) : "ok");
	cpu("child process clock", c, 40);
	cpu("child's thread clock from here",
	    THREAD_CLOCK(child, CPUCLOCK_SCHED), 0);
	errno = clock_nanosleep(c, TIMER_ABSTIME, &(struct timespec){ 0, 1 },
				NULL);
	res("clock_nanosleep on the child's clock", errno ? -1 : 0);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	rc = clock_getcpuclockid(child, &c);
	printf("clock_getcpuclockid reaped child: %s\n",
	       rc ? strerrorname_np(rc) : "ok");
	rc = clock_getcpuclockid(4000000, &c);
	printf("clock_getcpuclockid no such pid: %s\n",
	       rc ? strerrorname_np(rc) : "ok");
	cpu("clock of no such pid", PROCESS_CLOCK(4000000, CPUCLOCK_SCHED), 0);
	cpu("bad cpu clock kind", PROCESS_CLOCK(getpid(), 3), 0);
	cpu("fd clock", FD_CLOCK(0), 0);
	errno = clock_nanosleep(FD_CLOCK(0), 0, &(struct timespec){ 0, 1 },
				NULL);
	res("clock_nanosleep on an fd clock", errno ? -1 : 0);
	pthread_mutex_unlock(&hold);
	pthread_join(th, NULL);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	setting();
	cpu_clocks();
	return 0;
}
