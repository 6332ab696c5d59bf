/* tests/e2e/pidns_probe.c: what a pod member's pid namespace lets a
 * process reach, for test_pod_members.sh. Built static, run in a member's
 * busybox root. Each command prints one line a test asserts on.
 *
 *   ptmx              a pty of its own: "pty N", then holds it 30 s
 *   pidfd-serve NAME PID
 *                     a pidfd of PID, handed to whoever connects to the
 *                     abstract unix socket NAME; "serving", then 30 s
 *   pidfd-kill NAME   takes that pidfd, sends it SIGKILL: "kill 0" or
 *                     "kill ERRNO-NAME"
 *   creds PID         SCM_CREDENTIALS claiming PID: "creds 0" or the errno
 *   setown PID        F_SETOWN PID on a pipe: "setown 0" or the errno
 *   waitid-pgid-neg   waitid(P_PGID, -child): "waitid 0" or the errno
 *   nlpid             a netlink socket's port id: "nlpid N"
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

static int say(const char *what, int rc)
{
	if (rc < 0)
		printf("%s %s\n", what, strerrorname_np(errno));
	else
		printf("%s 0\n", what);
	fflush(stdout);
	return 0;
}

static socklen_t abstract(struct sockaddr_un *sa, const char *name)
{
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	snprintf(sa->sun_path + 1, sizeof(sa->sun_path) - 1, "%s", name);
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 +
			   strlen(name));
}

static int ptmx(void)
{
	int m = open("/dev/ptmx", O_RDWR | O_NOCTTY);

	if (m < 0 || grantpt(m) < 0 || unlockpt(m) < 0)
		return say("pty", -1);
	printf("pty %s\n", ptsname(m));
	fflush(stdout);
	if (write(m, "secret-input\n", 13) < 0)
		return say("write", -1);
	sleep(30);
	return 0;
}

/* One byte on s with a control message of type (SOL_SOCKET) holding
 * len bytes of data. */
static long send_cmsg(int s, int type, const void *data, size_t len)
{
	char cm[CMSG_SPACE(sizeof(struct ucred))] = { 0 }, x = 'x';
	struct iovec io = { &x, 1 };
	struct msghdr mh = { .msg_iov = &io,
			     .msg_iovlen = 1,
			     .msg_control = cm,
			     .msg_controllen = CMSG_SPACE(len) };
	struct cmsghdr *h = CMSG_FIRSTHDR(&mh);

	h->cmsg_level = SOL_SOCKET;
	h->cmsg_type = type;
	h->cmsg_len = CMSG_LEN(len);
	memcpy(CMSG_DATA(h), data, len);
	return sendmsg(s, &mh, 0);
}

static int pidfd_serve(const char *name, int pid)
{
	struct sockaddr_un sa;
	socklen_t len = abstract(&sa, name);
	int pfd = (int)syscall(SYS_pidfd_open, pid, 0);
	int s = socket(AF_UNIX, SOCK_STREAM, 0), c;

	if (pfd < 0)
		return say("pidfd_open", -1);
	if (s < 0 || bind(s, (struct sockaddr *)&sa, len) < 0 ||
	    listen(s, 1) < 0)
		return say("listen", -1);
	printf("serving\n");
	fflush(stdout);
	c = accept(s, NULL, NULL);
	if (c < 0 || send_cmsg(c, SCM_RIGHTS, &pfd, sizeof(pfd)) < 0)
		return say("send", -1);
	sleep(30);
	return 0;
}

static int pidfd_kill(const char *name)
{
	struct sockaddr_un sa;
	socklen_t len = abstract(&sa, name);
	int s = socket(AF_UNIX, SOCK_STREAM, 0), fd;
	char cm[CMSG_SPACE(sizeof(int))], x;
	struct iovec io = { &x, 1 };
	struct msghdr mh = { .msg_iov = &io,
			     .msg_iovlen = 1,
			     .msg_control = cm,
			     .msg_controllen = sizeof(cm) };

	if (s < 0 || connect(s, (struct sockaddr *)&sa, len) < 0)
		return say("connect", -1);
	if (recvmsg(s, &mh, 0) <= 0 || !CMSG_FIRSTHDR(&mh))
		return say("recv", -1);
	memcpy(&fd, CMSG_DATA(CMSG_FIRSTHDR(&mh)), sizeof(int));
	return say("kill",
		   (int)syscall(SYS_pidfd_send_signal, fd, SIGKILL, NULL, 0));
}

static int creds(int pid)
{
	int sv[2], on = 1;
	struct ucred uc = { .pid = pid, .uid = getuid(), .gid = getgid() };

	if (socketpair(AF_UNIX, SOCK_DGRAM, 0, sv) < 0 ||
	    setsockopt(sv[1], SOL_SOCKET, SO_PASSCRED, &on, sizeof(on)) < 0)
		return say("socketpair", -1);
	return say("creds",
		   (int)send_cmsg(sv[0], SCM_CREDENTIALS, &uc, sizeof(uc)));
}

static int setown(int pid)
{
	int p[2];

	if (pipe(p) < 0)
		return say("pipe", -1);
	return say("setown", (int)syscall(SYS_fcntl, p[0], F_SETOWN, pid));
}

static int waitid_pgid_neg(void)
{
	siginfo_t si;
	pid_t c = fork();

	if (c == 0)
		_exit(7);
	usleep(200000);
	return say("waitid", waitid(P_PGID, (id_t)-c, &si, WEXITED));
}

static int nlpid(void)
{
	struct sockaddr_nl nl = { .nl_family = AF_NETLINK };
	socklen_t len = sizeof(nl);
	int s = socket(AF_NETLINK, SOCK_RAW, NETLINK_ROUTE);

	if (s < 0 || bind(s, (struct sockaddr *)&nl, sizeof(nl)) < 0 ||
	    getsockname(s, (struct sockaddr *)&nl, &len) < 0)
		return say("nlpid", -1);
	printf("nlpid %u\n", nl.nl_pid);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "ptmx"))
		return ptmx();
	if (argc == 4 && !strcmp(argv[1], "pidfd-serve"))
		return pidfd_serve(argv[2], atoi(argv[3]));
	if (argc == 3 && !strcmp(argv[1], "pidfd-kill"))
		return pidfd_kill(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "creds"))
		return creds(atoi(argv[2]));
	if (argc == 3 && !strcmp(argv[1], "setown"))
		return setown(atoi(argv[2]));
	if (argc == 2 && !strcmp(argv[1], "waitid-pgid-neg"))
		return waitid_pgid_neg();
	if (argc == 2 && !strcmp(argv[1], "nlpid"))
		return nlpid();
	fprintf(stderr, "usage: see the comment at the top\n");
	return 2;
}
