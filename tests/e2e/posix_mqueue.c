/* POSIX message queues, as Linux has them (mq_overview(7)): names and
 * their errors, O_CREAT/O_EXCL, mode, umask and permissions, attributes
 * and their limits, priority order, blocking with timeouts and signals,
 * mq_notify (SIGEV_SIGNAL, SIGEV_NONE, SIGEV_THREAD), the descriptor as a
 * file (poll, epoll, dup, fork, exec, read, fstat) and the mqueue
 * filesystem at argv[1] (/dev/mqueue in the sandbox; natively a fresh
 * mount in a new IPC namespace). Prints one line a check, the same
 * natively and in the sandbox: nothing depends on pids or inode numbers.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <mqueue.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *mqdir;

static const char *en(int rc)
{
	return rc < 0 ? strerrorname_np(errno) : "ok";
}

static void attr_line(const char *what, mqd_t q)
{
	struct mq_attr a;

	if (mq_getattr(q, &a) < 0) {
		printf("%s: getattr %s\n", what, en(-1));
		return;
	}
	printf("%s: flags %s maxmsg %ld msgsize %ld curmsgs %ld\n", what,
	       (a.mq_flags & O_NONBLOCK) ? "O_NONBLOCK" : "0", a.mq_maxmsg,
	       a.mq_msgsize, a.mq_curmsgs);
}

static mqd_t mkq(const char *name, int flags, long maxmsg, long msgsize)
{
	struct mq_attr a = { .mq_maxmsg = maxmsg, .mq_msgsize = msgsize };

	return mq_open(name, O_CREAT | flags, 0600, maxmsg ? &a : NULL);
}

/* The QSIZE line, with the notifier's pid given as "self", "child" or
 * a plain 0, so that it reads the same in any pid namespace. */
static void qline(const char *what, int fd, pid_t child)
{
	char buf[256], out[256];
	unsigned long qsize;
	int notify, signo, pid;
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);

	if (n < 0) {
		printf("%s: read %s\n", what, en(-1));
		return;
	}
	buf[n] = 0;
	if (sscanf(buf, "QSIZE:%lu NOTIFY:%d SIGNO:%d NOTIFY_PID:%d", &qsize,
		   &notify, &signo, &pid) != 4) {
		printf("%s: unparsed %s", what, buf);
		return;
	}
	snprintf(out, sizeof(out), "%d", pid);
	printf("%s: len %zd QSIZE:%lu NOTIFY:%d SIGNO:%d NOTIFY_PID:%s\n", what,
	       n, qsize, notify, signo,
	       pid == getpid()	   ? "self" :
	       pid && pid == child ? "child" :
				     out);
}

static int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static struct timespec in_ms(long ms)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += ms / 1000;
	ts.tv_nsec += (ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	return ts;
}

static void msleep(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* Wait until process pid sleeps (it is blocked in the call it makes
 * next), and a little longer. */
static void wait_sleeping(pid_t pid)
{
	char path[64], buf[512], *p;
	int64_t until = mono_ms() + 10000;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	while (mono_ms() < until) {
		ssize_t n = -1;
		fd = open(path, O_RDONLY);
		if (fd >= 0) {
			n = read(fd, buf, sizeof(buf) - 1);
			close(fd);
		}
		if (n > 0) {
			buf[n] = 0;
			p = strrchr(buf, ')');
			if (p && p[1] == ' ' && p[2] == 'S')
				break;
		}
		msleep(5);
	}
	msleep(50);
}

static int reap(pid_t pid)
{
	int st;

	if (waitpid(pid, &st, 0) < 0)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* ---- names, creation, permissions ----------------------------------------- */

static void names(void)
{
	char longname[300];
	mqd_t q;

	printf("no slash: %s\n", en(mq_open("noslash", O_RDONLY)));
	printf("just a slash: %s\n",
	       en(mq_open("/", O_CREAT | O_RDWR, 0600, NULL)));
	printf("inner slash: %s\n",
	       en(mq_open("/a/b", O_CREAT | O_RDWR, 0600, NULL)));
	printf("dot: %s\n", en(mq_open("/.", O_CREAT | O_RDWR, 0600, NULL)));
	printf("dotdot: %s\n", en(mq_open("/..", O_RDWR)));
	longname[0] = '/';
	memset(longname + 1, 'n', 256);
	longname[257] = 0;
	printf("256 chars: %s\n",
	       en(mq_open(longname, O_CREAT | O_RDWR, 0600, NULL)));
	longname[256] = 0;
	q = mq_open(longname, O_CREAT | O_RDWR, 0600, NULL);
	printf("255 chars: %s\n", en(q));
	if (q >= 0) {
		mq_close(q);
		printf("unlink 255 chars: %s\n", en(mq_unlink(longname)));
	}
	printf("missing: %s\n", en(mq_open("/mq-missing", O_RDWR)));
	printf("unlink missing: %s\n", en(mq_unlink("/mq-missing")));
	printf("unlink no slash: %s\n", en(mq_unlink("mq-missing")));
	q = mq_open("/mq-a", O_CREAT | O_EXCL | O_RDWR, 0600, NULL);
	printf("create: %s\n", en(q));
	printf("excl again: %s\n",
	       en(mq_open("/mq-a", O_CREAT | O_EXCL | O_RDWR, 0600, NULL)));
	printf("accmode 3: %s\n", en(mq_open("/mq-a", O_RDWR | O_WRONLY)));
	{
		int fdf = fcntl(q, F_GETFD), fl = fcntl(q, F_GETFL);
		printf("fd flags: cloexec %d accmode %d\n",
		       (fdf & FD_CLOEXEC) != 0, fl & O_ACCMODE);
	}
	attr_line("defaults", q);
	mq_close(q);
	printf("send on a closed mqd: %s\n", en(mq_send(q, "x", 1, 0)));
	mq_unlink("/mq-a");
}

static void attrs(void)
{
	struct mq_attr a, old = { 0 };
	mqd_t q;

	a = (struct mq_attr){ .mq_maxmsg = 0, .mq_msgsize = 10 };
	printf("maxmsg 0 given: %s\n",
	       en(mq_open("/mq-b", O_CREAT | O_RDWR, 0600, &a)));
	a = (struct mq_attr){ .mq_maxmsg = 5, .mq_msgsize = -1 };
	printf("msgsize -1: %s\n",
	       en(mq_open("/mq-b", O_CREAT | O_RDWR, 0600, &a)));
	a = (struct mq_attr){ .mq_maxmsg = 65537, .mq_msgsize = 1 };
	printf("maxmsg 65537: %s\n",
	       en(mq_open("/mq-b", O_CREAT | O_RDWR, 0600, &a)));
	a = (struct mq_attr){ .mq_maxmsg = 1, .mq_msgsize = (16 << 20) + 1 };
	printf("msgsize 16M+1: %s\n",
	       en(mq_open("/mq-b", O_CREAT | O_RDWR, 0600, &a)));
	/* The sandbox's root has no CAP_SYS_RESOURCE (nor has root in most
	 * containers): msg_max and msgsize_max bound it too. */
	a = (struct mq_attr){ .mq_maxmsg = 11, .mq_msgsize = 64 };
	printf("maxmsg 11: %s\n",
	       en(mq_open("/mq-b", O_CREAT | O_RDWR, 0600, &a)));
	a = (struct mq_attr){ .mq_maxmsg = 10, .mq_msgsize = 8193 };
	printf("msgsize 8193: %s\n",
	       en(mq_open("/mq-b", O_CREAT | O_RDWR, 0600, &a)));
	a = (struct mq_attr){ .mq_maxmsg = 5, .mq_msgsize = 64 };
	q = mq_open("/mq-b", O_CREAT | O_RDWR, 0600, &a);
	printf("maxmsg 5 msgsize 64: %s\n", en(q));
	attr_line("5x64", q);
	/* an existing queue: O_CREAT's attributes are not looked at */
	a = (struct mq_attr){ .mq_maxmsg = 0, .mq_msgsize = 0 };
	mq_close(q);
	q = mq_open("/mq-b", O_CREAT | O_RDWR, 0600, &a);
	printf("reopen with bad attr: %s\n", en(q));
	a = (struct mq_attr){ .mq_flags = O_NONBLOCK | O_APPEND };
	printf("setattr bad flags: %s\n", en(mq_setattr(q, &a, &old)));
	a = (struct mq_attr){ .mq_flags = O_NONBLOCK, .mq_maxmsg = 1 };
	printf("setattr: %s\n", en(mq_setattr(q, &a, &old)));
	printf("old flags %ld maxmsg %ld\n", old.mq_flags, old.mq_maxmsg);
	attr_line("after setattr", q);
	printf("getsetattr on a pipe: %s\n", en(mq_getattr(0, &old)));
	mq_close(q);
	mq_unlink("/mq-b");
}

static void perms(void)
{
	char path[PATH_MAX];
	struct stat st;
	mode_t old = umask(027);
	mqd_t q = mq_open("/mq-p", O_CREAT | O_RDWR, 0666, NULL);
	pid_t pid;

	umask(old);
	fstat(q, &st);
	printf("umask 027, mode 0666: %s %o size %lld nlink %d uid %d\n",
	       S_ISREG(st.st_mode) ? "reg" : "?", st.st_mode & 07777,
	       (long long)st.st_size, (int)st.st_nlink, (int)st.st_uid);
	mq_close(q);
	umask(0);
	q = mq_open("/mq-w", O_CREAT | O_RDWR, 0622, NULL);
	mq_close(q);
	umask(old);
	q = mq_open("/mq-c", O_CREAT | O_RDWR, 0600, NULL);
	printf("fchmod: %s\n", en(fchmod(q, 0640)));
	printf("fchown: %s\n", en(fchown(q, 2345, 2345)));
	fstat(q, &st);
	printf("now %o %d:%d\n", st.st_mode & 07777, (int)st.st_uid,
	       (int)st.st_gid);
	mq_close(q);
	pid = fork();
	if (pid == 0) {
		if (setgid(2345) < 0 || setuid(2345) < 0)
			_exit(9);
		printf("other user, read of 0640: %s\n",
		       en(mq_open("/mq-p", O_RDONLY)));
		printf("other user, write of 0622: %s\n",
		       en(mq_open("/mq-w", O_WRONLY)));
		printf("other user, read of 0622: %s\n",
		       en(mq_open("/mq-w", O_RDONLY)));
		printf("other user, unlink (sticky): %s\n",
		       en(mq_unlink("/mq-w")));
		snprintf(path, sizeof(path), "%s/mq-p", mqdir);
		printf("other user, chmod: %s\n", en(chmod(path, 0666)));
		snprintf(path, sizeof(path), "%s/mq-c", mqdir);
		printf("owner, chmod: %s\n", en(chmod(path, 0400)));
		printf("owner, then opens for writing: %s\n",
		       en(mq_open("/mq-c", O_WRONLY)));
		printf("owner, unlinks: %s\n", en(mq_unlink("/mq-c")));
		struct mq_attr a = { .mq_maxmsg = 11, .mq_msgsize = 16 };
		printf("other user, maxmsg 11: %s\n",
		       en(mq_open("/mq-u", O_CREAT | O_RDWR, 0600, &a)));
		a = (struct mq_attr){ .mq_maxmsg = 10, .mq_msgsize = 8193 };
		printf("other user, msgsize 8193: %s\n",
		       en(mq_open("/mq-u", O_CREAT | O_RDWR, 0600, &a)));
		a = (struct mq_attr){ .mq_maxmsg = 10, .mq_msgsize = 8192 };
		q = mq_open("/mq-u", O_CREAT | O_RDWR, 0600, &a);
		fstat(q, &st);
		printf("other user creates: %s owner %d:%d\n", en(q),
		       (int)st.st_uid, (int)st.st_gid);
		printf("other user unlinks its own: %s\n",
		       en(mq_unlink("/mq-u")));
		fflush(stdout);
		_exit(0);
	}
	reap(pid);
	mq_unlink("/mq-p");
	mq_unlink("/mq-w");
}

/* ---- messages -------------------------------------------------------------- */

static void order(void)
{
	static const struct {
		const char *m;
		unsigned prio;
	} in[] = { { "a", 1 }, { "b", 5 }, { "c", 1 },
		   { "d", 5 }, { "e", 0 }, { "f", 32767 } };
	char buf[64];
	unsigned prio;
	mqd_t q = mkq("/mq-o", O_RDWR, 8, 16);
	ssize_t n;
	size_t i;

	for (i = 0; i < sizeof(in) / sizeof(in[0]); i++)
		mq_send(q, in[i].m, strlen(in[i].m), in[i].prio);
	printf("prio 32768: %s\n", en(mq_send(q, "x", 1, 32768)));
	printf("17 bytes > msgsize 16: %s\n",
	       en(mq_send(q, "0123456789abcdefg", 17, 0)));
	printf("receive buffer 15 < msgsize: %s\n",
	       en((int)mq_receive(q, buf, 15, NULL)));
	printf("zero-length: %s\n", en(mq_send(q, "", 0, 3)));
	attr_line("queued", q);
	printf("order:");
	for (i = 0; i < 7; i++) {
		n = mq_receive(q, buf, sizeof(buf), &prio);
		if (n < 0)
			break;
		buf[n] = 0;
		printf(" %s/%u", n ? buf : "''", prio);
	}
	printf("\n");
	mq_close(q);
	mq_unlink("/mq-o");
}

static volatile sig_atomic_t alarms;

static void on_alarm(int sig)
{
	(void)sig;
	alarms++;
}

static void blocking(void)
{
	struct timespec ts;
	struct sigaction sa;
	struct itimerval it = { { 0, 0 }, { 0, 100000 } };
	mqd_t q = mkq("/mq-k", O_RDWR, 2, 16), qn;
	char buf[16];
	pid_t pid;
	int rc;

	qn = mq_open("/mq-k", O_RDWR | O_NONBLOCK);
	printf("empty, O_NONBLOCK: %s\n",
	       en((int)mq_receive(qn, buf, sizeof(buf), NULL)));
	ts = in_ms(-1000);
	printf("empty, timeout past: %s\n",
	       en((int)mq_timedreceive(q, buf, sizeof(buf), NULL, &ts)));
	ts = in_ms(50);
	printf("empty, timeout 50 ms: %s\n",
	       en((int)mq_timedreceive(q, buf, sizeof(buf), NULL, &ts)));
	ts.tv_nsec = 1000000000;
	printf("bad timeout: %s\n",
	       en((int)mq_timedreceive(q, buf, sizeof(buf), NULL, &ts)));
	mq_send(q, "1", 1, 0);
	mq_send(q, "2", 1, 0);
	printf("bad timeout, message there: %s\n",
	       en((int)mq_timedsend(q, "3", 1, 0, &ts)));
	printf("full, O_NONBLOCK: %s\n", en(mq_send(qn, "3", 1, 0)));
	ts = in_ms(50);
	printf("full, timeout 50 ms: %s\n",
	       en(mq_timedsend(q, "3", 1, 0, &ts)));
	/* a sender blocked on a full queue: a receiver in another process
	 * makes room */
	pid = fork();
	if (pid == 0) {
		msleep(50);
		mq_receive(q, buf, sizeof(buf), NULL);
		_exit(0);
	}
	printf("blocked send: %s\n", en(mq_send(q, "3", 1, 0)));
	reap(pid);
	while (mq_receive(qn, buf, sizeof(buf), NULL) >= 0)
		;
	/* a receiver blocked on an empty queue */
	pid = fork();
	if (pid == 0) {
		msleep(50);
		mq_send(q, "late", 4, 7);
		_exit(0);
	}
	{
		unsigned prio = 0;
		ssize_t n = mq_receive(q, buf, sizeof(buf), &prio);
		printf("blocked receive: %zd prio %u\n", n, prio);
	}
	reap(pid);
	/* a signal interrupts a wait; with SA_RESTART it goes on */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sigaction(SIGALRM, &sa, NULL);
	/* (a deadline, so that a signal come too early fails, not hangs) */
	ts = in_ms(5000);
	setitimer(ITIMER_REAL, &it, NULL);
	rc = (int)mq_timedreceive(q, buf, sizeof(buf), NULL, &ts);
	printf("signal, no SA_RESTART: %s alarms %d\n", en(rc), (int)alarms);
	sa.sa_flags = SA_RESTART;
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
	ts = in_ms(400);
	rc = (int)mq_timedreceive(q, buf, sizeof(buf), NULL, &ts);
	printf("signal, SA_RESTART: %s alarms %d\n", en(rc), (int)alarms);
	signal(SIGALRM, SIG_DFL);
	/* O_NONBLOCK is the open file's: a dup shares it, another open not */
	{
		struct mq_attr a = { .mq_flags = O_NONBLOCK };
		int d = dup(q);
		mq_setattr(q, &a, NULL);
		printf("dup shares O_NONBLOCK: %s\n",
		       en((int)mq_receive(d, buf, sizeof(buf), NULL)));
		close(d);
	}
	{
		int w = mq_open("/mq-k", O_WRONLY),
		    r = mq_open("/mq-k", O_RDONLY);
		printf("send on O_RDONLY: %s\n", en(mq_send(r, "x", 1, 0)));
		printf("receive on O_WRONLY: %s\n",
		       en((int)mq_receive(w, buf, sizeof(buf), NULL)));
		printf("write(2): %s\n", en((int)write(w, "x", 1)));
		printf("write(2) on O_RDONLY: %s\n", en((int)write(r, "x", 1)));
		int p[2];
		if (pipe(p) == 0) {
			printf("send on a pipe: %s\n",
			       en(mq_send(p[1], "x", 1, 0)));
			close(p[0]);
			close(p[1]);
		}
		close(w);
		close(r);
	}
	mq_close(qn);
	mq_close(q);
	mq_unlink("/mq-k");
}

/* ---- notification ------------------------------------------------------------ */

static volatile sig_atomic_t got_code, got_value, got_uid, got_hits;
static volatile pid_t got_pid;

static void on_usr2(int sig, siginfo_t *si, void *ctx)
{
	(void)sig;
	(void)ctx;
	got_code = si->si_code;
	got_value = si->si_value.sival_int;
	got_pid = si->si_pid;
	got_uid = (int)si->si_uid;
	got_hits++;
}

static void send_as(mqd_t q, uid_t uid, const char *m)
{
	pid_t pid = fork();

	if (pid == 0) {
		if (uid && (setgid(uid) < 0 || setuid(uid) < 0))
			_exit(9);
		_exit(mq_send(q, m, strlen(m), 0) < 0 ? 1 : 0);
	}
	reap(pid);
}

static int thread_fd;

static void on_thread(union sigval v)
{
	char c = (char)v.sival_int;

	if (write(thread_fd, &c, 1) < 0)
		_exit(3);
}

static void notify(void)
{
	struct sigevent ev = { .sigev_notify = SIGEV_SIGNAL,
			       .sigev_signo = SIGUSR1 };
	struct sigaction sa;
	sigset_t set;
	siginfo_t si;
	struct timespec ts = { 5, 0 };
	char buf[8192];
	mqd_t q;
	pid_t pid;
	int sig;

	umask(0);
	q = mq_open("/mq-n", O_CREAT | O_RDWR, 0666, NULL);
	umask(022);
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	ev.sigev_value.sival_int = 42;
	qline("none yet", q, 0);
	printf("register: %s\n", en(mq_notify(q, &ev)));
	qline("registered", q, 0);
	printf("again: %s\n", en(mq_notify(q, &ev)));
	pid = fork();
	if (pid == 0) {
		printf("from another process: %s\n", en(mq_notify(q, &ev)));
		printf("remove, not the owner: %s\n", en(mq_notify(q, NULL)));
		fflush(stdout);
		_exit(0);
	}
	reap(pid);
	qline("still registered", q, 0);
	/* a sender of another uid: si_pid and si_uid are its own */
	pid = fork();
	if (pid == 0) {
		if (setgid(1234) < 0 || setuid(1234) < 0)
			_exit(9);
		_exit(mq_send(q, "hi", 2, 0) < 0 ? 1 : 0);
	}
	sig = sigtimedwait(&set, &si, &ts);
	reap(pid);
	printf("signal %s code %s value %d pid %s uid %d\n",
	       sig == SIGUSR1 ? "SIGUSR1" : en(sig),
	       si.si_code == SI_MESGQ ? "SI_MESGQ" : "?", si.si_value.sival_int,
	       si.si_pid == pid ? "sender" : "?", (int)si.si_uid);
	qline("after the signal (one-shot)", q, 0);
	/* not empty: no notification */
	mq_notify(q, &ev);
	send_as(q, 0, "more");
	ts = (struct timespec){ 0, 100000000 };
	printf("queue was not empty: %s\n", en(sigtimedwait(&set, &si, &ts)));
	qline("two queued", q, 0);
	mq_receive(q, buf, sizeof(buf), NULL);
	mq_receive(q, buf, sizeof(buf), NULL);
	/* a receiver waits: the message is its, no notification */
	pid = fork();
	if (pid == 0) {
		ssize_t n = mq_receive(q, buf, sizeof(buf), NULL);
		_exit(n == 3 ? 0 : 1);
	}
	wait_sleeping(pid);
	mq_send(q, "abc", 3, 0);
	printf("receiver waiting: child %d\n", reap(pid));
	ts = (struct timespec){ 0, 100000000 };
	printf("no signal: %s\n", en(sigtimedwait(&set, &si, &ts)));
	qline("registration kept", q, 0);
	printf("remove: %s\n", en(mq_notify(q, NULL)));
	qline("removed", q, 0);
	/* SIGEV_NONE: registered, nothing sent, unregistered all the same */
	ev.sigev_notify = SIGEV_NONE;
	printf("SIGEV_NONE: %s\n", en(mq_notify(q, &ev)));
	qline("SIGEV_NONE", q, 0);
	send_as(q, 0, "x");
	qline("SIGEV_NONE fired", q, 0);
	mq_receive(q, buf, sizeof(buf), NULL);
	/* bad requests */
	ev.sigev_notify = 99;
	printf("sigev_notify 99: %s\n", en(mq_notify(q, &ev)));
	ev.sigev_notify = SIGEV_SIGNAL;
	ev.sigev_signo = 65;
	printf("signo 65: %s\n", en(mq_notify(q, &ev)));
	ev.sigev_signo = SIGUSR1;
	printf("bad mqd: %s\n", en(mq_notify(1000, &ev)));
	/* a close by the owner unregisters, whichever descriptor it was */
	{
		int d = dup(q);
		mq_notify(q, &ev);
		close(d);
		qline("owner closed a dup", q, 0);
	}
	/* delivery to a handler */
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_usr2;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGUSR2, &sa, NULL);
	ev.sigev_signo = SIGUSR2;
	ev.sigev_value.sival_int = 7;
	mq_notify(q, &ev);
	send_as(q, 4321, "h");
	for (int i = 0; i < 500 && !got_hits; i++)
		msleep(10);
	printf("handler: hits %d code %s value %d uid %d\n", (int)got_hits,
	       got_code == SI_MESGQ ? "SI_MESGQ" : "?", (int)got_value,
	       (int)got_uid);
	mq_receive(q, buf, sizeof(buf), NULL);
	/* SIGEV_THREAD: glibc's helper thread, woken through netlink */
	{
		int p[2];
		struct pollfd pfd;
		char c = 0;
		if (pipe(p) < 0)
			return;
		thread_fd = p[1];
		ev = (struct sigevent){ .sigev_notify = SIGEV_THREAD };
		ev.sigev_notify_function = on_thread;
		ev.sigev_value.sival_int = 'T';
		printf("SIGEV_THREAD: %s\n", en(mq_notify(q, &ev)));
		qline("SIGEV_THREAD registered", q, 0);
		send_as(q, 0, "t");
		pfd = (struct pollfd){ p[0], POLLIN, 0 };
		if (poll(&pfd, 1, 5000) == 1 && read(p[0], &c, 1) == 1)
			printf("thread ran: %c\n", c);
		else
			printf("thread ran: no\n");
		close(p[0]);
		close(p[1]);
	}
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	mq_close(q);
	mq_unlink("/mq-n");
}

/* ---- the descriptor as a file ---------------------------------------------- */

static void descriptor(void)
{
	mqd_t q = mkq("/mq-f", O_RDWR, 2, 32);
	struct pollfd pfd = { q, POLLIN | POLLOUT, 0 };
	struct epoll_event e = { .events = EPOLLIN | EPOLLET };
	fd_set rd, wr;
	struct timeval tv = { 0, 0 };
	char buf[64];
	int ep = epoll_create1(0), n, st;
	pid_t pid;

	poll(&pfd, 1, 0);
	printf("poll empty: %s%s\n", (pfd.revents & POLLIN) ? "IN " : "",
	       (pfd.revents & POLLOUT) ? "OUT" : "");
	e.data.fd = q;
	epoll_ctl(ep, EPOLL_CTL_ADD, q, &e);
	printf("epoll empty: %d\n", epoll_wait(ep, &e, 1, 0));
	mq_send(q, "hello", 5, 1);
	pfd.revents = 0;
	poll(&pfd, 1, 0);
	printf("poll one: %s%s\n", (pfd.revents & POLLIN) ? "IN " : "",
	       (pfd.revents & POLLOUT) ? "OUT" : "");
	n = epoll_wait(ep, &e, 1, 0);
	printf("epoll one: %d %s\n", n, (e.events & EPOLLIN) ? "IN" : "");
	printf("epoll edge again: %d\n", epoll_wait(ep, &e, 1, 0));
	mq_send(q, "world", 5, 1);
	FD_ZERO(&rd);
	FD_ZERO(&wr);
	FD_SET(q, &rd);
	FD_SET(q, &wr);
	select(q + 1, &rd, &wr, NULL, &tv);
	printf("select full: rd %d wr %d\n", FD_ISSET(q, &rd),
	       FD_ISSET(q, &wr));
	qline("read", q, 0);
	n = (int)read(q, buf, sizeof(buf));
	printf("read at 0: %d, again: %d\n", n, (int)read(q, buf, sizeof(buf)));
	printf("lseek: %ld\n", (long)lseek(q, 0, SEEK_SET));
	printf("read 5: %d\n", (int)read(q, buf, 5));
	/* a child inherits the descriptor */
	pid = fork();
	if (pid == 0) {
		ssize_t r = mq_receive(q, buf, sizeof(buf), NULL);
		_exit(r == 5 ? 0 : 1);
	}
	printf("child received: %d\n", reap(pid));
	n = dup(q);
	close(q);
	printf("dup after close: %zd\n", mq_receive(n, buf, sizeof(buf), NULL));
	/* the descriptor is close-on-exec, as Linux makes it */
	pid = fork();
	if (pid == 0) {
		char arg[16];
		int d = mq_open("/mq-f", O_RDWR);
		snprintf(arg, sizeof(arg), "%d", d);
		execl("/bin/sh", "sh", "-c",
		      "if [ -e /proc/self/fd/$0 ]; then echo open; "
		      "else echo closed; fi",
		      arg, (char *)NULL);
		_exit(127);
	}
	fflush(stdout);
	waitpid(pid, &st, 0);
	printf("after exec: status %d\n", WEXITSTATUS(st));
	/* unlinked but open: still works, the name is free again */
	mq_unlink("/mq-f");
	printf("unlinked, send: %s\n", en(mq_send(n, "x", 1, 0)));
	printf("unlinked, open: %s\n", en(mq_open("/mq-f", O_RDWR)));
	q = mkq("/mq-f", O_RDWR, 3, 8);
	attr_line("the new one", q);
	attr_line("the old one", n);
	mq_close(q);
	mq_close(n);
	close(ep);
	mq_unlink("/mq-f");
}

/* ---- /dev/mqueue ------------------------------------------------------------- */

static int cmpstr(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void listing(const char *what)
{
	DIR *d = opendir(mqdir);
	struct dirent *de;
	char *names[64];
	int n = 0, i;

	if (!d) {
		printf("%s: opendir %s\n", what, en(-1));
		return;
	}
	while ((de = readdir(d)) && n < 64)
		names[n++] = strdup(de->d_name);
	closedir(d);
	qsort(names, (size_t)n, sizeof(names[0]), cmpstr);
	printf("%s:", what);
	for (i = 0; i < n; i++) {
		printf(" %s", names[i]);
		free(names[i]);
	}
	printf("\n");
}

static void fs(void)
{
	char path[PATH_MAX];
	struct stat st;
	struct statfs sf;
	mqd_t q;
	int fd;

	stat(mqdir, &st);
	statfs(mqdir, &sf);
	printf("dir: %o type %s\n", st.st_mode,
	       sf.f_type == 0x19800202 ? "MQUEUE_MAGIC" : "?");
	listing("empty");
	q = mkq("/mq-d1", O_RDWR, 4, 100);
	mq_send(q, "12345", 5, 0);
	mq_send(q, "678", 3, 0);
	mq_close(q);
	mq_close(mkq("/mq-d2", O_RDWR, 0, 0));
	listing("two");
	snprintf(path, sizeof(path), "%s/mq-d1", mqdir);
	if (stat(path, &st) == 0)
		printf("stat: %s %o size %lld\n",
		       S_ISREG(st.st_mode) ? "reg" : "?", st.st_mode & 07777,
		       (long long)st.st_size);
	fd = open(path, O_RDONLY);
	qline("read via the path", fd, 0);
	printf("its receive: %zd\n", mq_receive(fd, path, 100, NULL));
	close(fd);
	snprintf(path, sizeof(path), "%s/mq-d3", mqdir);
	fd = open(path, O_CREAT | O_RDWR, 0600);
	printf("open O_CREAT: %s\n", en(fd));
	attr_line("made by open", fd);
	close(fd);
	printf("then mq_open: %s\n", en(q = mq_open("/mq-d3", O_RDWR)));
	mq_close(q);
	snprintf(path, sizeof(path), "%s/sub", mqdir);
	printf("mkdir: %s\n", en(mkdir(path, 0700)));
	snprintf(path, sizeof(path), "%s/mq-d2", mqdir);
	printf("unlink(2): %s\n", en(unlink(path)));
	printf("mq_open after unlink(2): %s\n", en(mq_open("/mq-d2", O_RDWR)));
	listing("after unlink");
	mq_unlink("/mq-d1");
	mq_unlink("/mq-d3");
	listing("all gone");
}

/* ---- limits --------------------------------------------------------------------- */

static void sysctls(void)
{
	static const char *const names[] = { "msg_max", "msgsize_max",
					     "queues_max", "msg_default",
					     "msgsize_default" };
	char path[128], buf[64];
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		int fd;
		ssize_t n = -1;
		snprintf(path, sizeof(path), "/proc/sys/fs/mqueue/%s",
			 names[i]);
		fd = open(path, O_RDONLY);
		if (fd >= 0) {
			n = read(fd, buf, sizeof(buf) - 1);
			close(fd);
		}
		buf[n > 0 ? n : 0] = 0;
		printf("%s: %s", names[i], n > 0 ? buf : "?\n");
	}
}

static void rlimit(void)
{
	struct rlimit rl;
	char name[32];
	int i, n = 0;
	mqd_t q;

	getrlimit(RLIMIT_MSGQUEUE, &rl);
	printf("RLIMIT_MSGQUEUE %llu\n", (unsigned long long)rl.rlim_cur);
	/* each default queue is charged 10 * (8192 + 48 + 48) bytes */
	for (i = 0; i < 20; i++) {
		snprintf(name, sizeof(name), "/mq-r%d", i);
		q = mq_open(name, O_CREAT | O_RDWR, 0600, NULL);
		if (q < 0)
			break;
		mq_close(q);
		n++;
	}
	printf("default queues: %d, then %s\n", n, en(-1));
	for (i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "/mq-r%d", i);
		mq_unlink(name);
	}
	q = mq_open("/mq-r0", O_CREAT | O_RDWR, 0600, NULL);
	printf("after unlinking them: %s\n", en(q));
	mq_close(q);
	mq_unlink("/mq-r0");
	rl.rlim_cur = 1000;
	setrlimit(RLIMIT_MSGQUEUE, &rl);
	printf("rlimit 1000, 10x1: %s\n", en(mkq("/mq-r1", O_RDWR, 10, 1)));
	printf("rlimit 1000, 10x4: %s\n", en(mkq("/mq-r2", O_RDWR, 10, 4)));
	printf("rlimit 1000, another 1x1: %s\n",
	       en(mkq("/mq-r3", O_RDWR, 1, 1)));
	mq_unlink("/mq-r1");
	mq_unlink("/mq-r2");
	mq_unlink("/mq-r3");
	getrlimit(RLIMIT_MSGQUEUE, &rl);
	rl.rlim_cur = rl.rlim_max;
	setrlimit(RLIMIT_MSGQUEUE, &rl);
}

int main(int argc, char **argv)
{
	mqdir = argc > 1 ? argv[1] : "/dev/mqueue";
	setvbuf(stdout, NULL, _IOLBF, 0);
	/* RLIMIT_MSGQUEUE counts per real uid, across IPC namespaces: a real
	 * uid of this run's own (root still, by the effective one) keeps
	 * other queues of the host's root out of the count. */
	if (setresuid(40000 + (uid_t)(getpid() % 20000), 0, 0) < 0) {
		perror("setresuid");
		return 1;
	}
	names();
	attrs();
	perms();
	order();
	blocking();
	notify();
	descriptor();
	fs();
	sysctls();
	rlimit();
	printf("done\n");
	return 0;
}
