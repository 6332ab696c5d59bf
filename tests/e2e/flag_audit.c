/* tests/e2e/flag_audit.c: flags and options the syscall table said were
 * fully handled, and were accepted and ignored: close_range's
 * CLOSE_RANGE_UNSHARE, waitid's P_PIDFD and rusage, msgrcv's MSG_COPY,
 * fadvise64's advice, statx's flags and mask, MSG_OOB. Prints one line per
 * case; the same natively and under moat. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/close_range.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/msg.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef P_PIDFD
#define P_PIDFD 3
#endif
#ifndef MSG_COPY
#define MSG_COPY 040000
#endif

static void res(const char *name, long rc)
{
	if (rc < 0)
		printf("%s: %s\n", name, strerrorname_np(errno));
	else
		printf("%s: ok\n", name);
}

static char stack[65536];
static int shared_fd;

/* A process sharing the fd table (CLONE_FILES): it unshares, closes
 * shared_fd in its copy only, and reports whether it still sees it. */
static int files_child(void *arg)
{
	long rc = syscall(SYS_close_range, shared_fd, shared_fd,
			  CLOSE_RANGE_UNSHARE);
	(void)arg;
	_exit(rc == 0 && fcntl(shared_fd, F_GETFD) < 0 ? 0 : 1);
}

static void close_range_unshare(void)
{
	int st = 0;
	pid_t c;

	shared_fd = open("/dev/null", O_RDONLY);
	c = clone(files_child, stack + sizeof(stack), CLONE_FILES | SIGCHLD,
		  NULL);
	waitpid(c, &st, 0);
	printf("close_range unshare: child closed its copy: %s, ours still "
	       "open: %s\n",
	       WIFEXITED(st) && WEXITSTATUS(st) == 0 ? "yes" : "NO",
	       fcntl(shared_fd, F_GETFD) >= 0 ? "yes" : "NO");
	res("close_range unshare of an unshared table",
	    syscall(SYS_close_range, shared_fd, shared_fd,
		    CLOSE_RANGE_UNSHARE | CLOSE_RANGE_CLOEXEC));
	printf("  and cloexec set: %s\n",
	       fcntl(shared_fd, F_GETFD) == FD_CLOEXEC ? "yes" : "NO");
	res("close_range unknown flag",
	    syscall(SYS_close_range, shared_fd, shared_fd, 8));
	close(shared_fd);
}

static void waitid_pidfd(void)
{
	siginfo_t si;
	struct rusage ru;
	pid_t c = fork();
	int pfd, nfd;

	if (c == 0)
		_exit(7);
	pfd = (int)syscall(SYS_pidfd_open, c, 0);
	memset(&si, 0, sizeof(si));
	memset(&ru, 0xff, sizeof(ru));
	res("waitid P_PIDFD",
	    syscall(SYS_waitid, P_PIDFD, pfd, &si, WEXITED, &ru));
	printf("  pid matches: %s, status %d, rusage written: %s\n",
	       si.si_pid == c ? "yes" : "NO", si.si_status,
	       ru.ru_maxrss != -1 ? "yes" : "NO");
	close(pfd);
	res("waitid P_PIDFD of a bad fd",
	    syscall(SYS_waitid, P_PIDFD, 999, &si, WEXITED, NULL));
	nfd = open("/dev/null", O_RDONLY);
	res("waitid P_PIDFD of a file",
	    syscall(SYS_waitid, P_PIDFD, nfd, &si, WEXITED, NULL));
	close(nfd);
	/* a non-blocking pidfd makes waitid WNOHANG */
	c = fork();
	if (c == 0) {
		pause();
		_exit(0);
	}
	pfd = (int)syscall(SYS_pidfd_open, c, O_NONBLOCK);
	res("waitid P_PIDFD nonblocking, child alive",
	    syscall(SYS_waitid, P_PIDFD, pfd, &si, WEXITED, NULL));
	kill(c, SIGKILL);
	poll(&(struct pollfd){ pfd, POLLIN, 0 }, 1, 10000); /* it exited */
	res("waitid P_PIDFD nonblocking, child gone",
	    syscall(SYS_waitid, P_PIDFD, pfd, &si, WEXITED, NULL));
	close(pfd);
}

static void msg_copy(void)
{
	struct {
		long type;
		char text[16];
	} m = { 1, "first" }, r;
	int q = msgget(IPC_PRIVATE, 0600);
	long n;

	msgsnd(q, &m, 6, 0);
	m.type = 2;
	strcpy(m.text, "second");
	msgsnd(q, &m, 7, 0);
	memset(&r, 0, sizeof(r));
	n = msgrcv(q, &r, sizeof(r.text), 1, MSG_COPY | IPC_NOWAIT);
	printf("msgrcv copy of message 1: %s %s\n",
	       n < 0 ? strerrorname_np(errno) : "ok", n < 0 ? "" : r.text);
	res("msgrcv copy without IPC_NOWAIT",
	    msgrcv(q, &r, sizeof(r.text), 0, MSG_COPY));
	res("msgrcv copy with MSG_EXCEPT",
	    msgrcv(q, &r, sizeof(r.text), 0,
		   MSG_COPY | IPC_NOWAIT | MSG_EXCEPT));
	res("msgrcv copy past the end",
	    msgrcv(q, &r, sizeof(r.text), 5, MSG_COPY | IPC_NOWAIT));
	res("msgrcv copy too small",
	    msgrcv(q, &r, 2, 0, MSG_COPY | IPC_NOWAIT));
	memset(&r, 0, sizeof(r));
	n = msgrcv(q, &r, sizeof(r.text), 0, IPC_NOWAIT);
	printf("msgrcv after the copies: %s\n", n < 0 ? "none" : r.text);
	memset(&r, 0, sizeof(r));
	n = msgrcv(q, &r, sizeof(r.text), 0, IPC_NOWAIT);
	printf("msgrcv then: %s\n", n < 0 ? "none" : r.text);
	msgctl(q, IPC_RMID, NULL);
}

static void fadvise(void)
{
	int fd = open("/proc/self/exe", O_RDONLY);

	errno = posix_fadvise(fd, 0, 0, POSIX_FADV_WILLNEED);
	res("fadvise willneed", errno ? -1 : 0);
	errno = posix_fadvise(fd, 0, 0, 42);
	res("fadvise bad advice", errno ? -1 : 0);
	res("fadvise negative length",
	    syscall(SYS_fadvise64, fd, 0L, -1L, POSIX_FADV_NORMAL));
	close(fd);
}

static void statx_flags(void)
{
	struct statx sx;

	res("statx plain", statx(AT_FDCWD, "/", 0, STATX_BASIC_STATS, &sx));
	res("statx unknown flag",
	    statx(AT_FDCWD, "/", 0x40000000, STATX_BASIC_STATS, &sx));
	res("statx both sync types",
	    statx(AT_FDCWD, "/", AT_STATX_SYNC_TYPE, STATX_BASIC_STATS, &sx));
	res("statx force sync",
	    statx(AT_FDCWD, "/", AT_STATX_FORCE_SYNC, STATX_BASIC_STATS, &sx));
	res("statx reserved mask bit",
	    statx(AT_FDCWD, "/", 0, 0x80000000U, &sx));
}

static void oob(void)
{
	int sv[2];
	char b[8];
	long n;

	socketpair(AF_UNIX, SOCK_DGRAM, 0, sv);
	res("unix dgram send MSG_OOB", send(sv[0], "x", 1, MSG_OOB));
	res("unix dgram recv MSG_OOB",
	    recv(sv[1], b, sizeof(b), MSG_OOB | MSG_DONTWAIT));
	close(sv[0]);
	close(sv[1]);
	/* With no urgent byte pending, recv(MSG_OOB) must never hand out
	 * the ordinary data. */
	socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
	send(sv[0], "ab", 2, 0);
	res("unix stream recv MSG_OOB, none sent",
	    recv(sv[1], b, sizeof(b), MSG_OOB | MSG_DONTWAIT));
	n = recv(sv[1], b, sizeof(b), MSG_DONTWAIT);
	printf("  the ordinary data is still there: %s\n",
	       n == 2 && !memcmp(b, "ab", 2) ? "yes" : "NO");
	close(sv[0]);
	close(sv[1]);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	close_range_unshare();
	waitid_pidfd();
	msg_copy();
	fadvise();
	statx_flags();
	oob();
	return 0;
}
