/* tests/e2e/sendfile_peer_close.c FILE: a blocking sendfile of FILE to a
 * socket (AF_UNIX and TCP over the loopback) whose peer reads 300 000
 * bytes and closes. As on Linux, the call returns what it sent, the next
 * fails EPIPE, and SIGPIPE comes (it kills, a handler runs, SIG_IGN
 * keeps it away). Which call raises it is the scheduler's (an AF_UNIX
 * send that fails before sending anything of its own raises it), so only
 * whether it came is printed. Must print the same natively. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile sig_atomic_t piped;

static void on_pipe(int s)
{
	(void)s;
	piped++;
}

static void connected_pair(int tcp, int sv[2])
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t l = sizeof(a);
	int s;

	if (!tcp) {
		if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0)
			exit(1);
		return;
	}
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	s = socket(AF_INET, SOCK_STREAM, 0);
	if (bind(s, (void *)&a, sizeof(a)) < 0 || listen(s, 1) < 0 ||
	    getsockname(s, (void *)&a, &l) < 0)
		exit(1);
	sv[0] = socket(AF_INET, SOCK_STREAM, 0);
	if (connect(sv[0], (void *)&a, sizeof(a)) < 0)
		exit(1);
	sv[1] = accept(s, NULL, NULL);
	close(s);
}

static const char *how[] = { "SIG_DFL", "a handler", "SIG_IGN" };

static void run(const char *path, size_t size, int tcp, int mode)
{
	const char *fam = tcp ? "tcp" : "unix";
	int sv[2], fd = open(path, O_RDONLY), st;
	pid_t rd, wr;

	connected_pair(tcp, sv);
	rd = fork();
	if (rd == 0) {
		char b[65536];
		size_t got = 0;
		ssize_t k;
		close(sv[0]);
		while (got < 300000 && (k = read(sv[1], b, sizeof(b))) > 0)
			got += (size_t)k;
		_exit(0);
	}
	close(sv[1]);
	wr = fork();
	if (wr == 0) {
		struct sigaction sa;
		ssize_t r, r2;
		int e2;

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = mode == 1 ? on_pipe :
				mode == 2 ? SIG_IGN :
					    SIG_DFL;
		sigaction(SIGPIPE, &sa, NULL);
		r = sendfile(sv[0], fd, NULL, size);
		r2 = sendfile(sv[0], fd, NULL, 1 << 20);
		e2 = errno;
		printf("%s, SIGPIPE %s: %s, then %zd %s, handler ran: %s\n",
		       fam, how[mode],
		       r > 0 && (size_t)r < size ? "part of it" : "not part",
		       r2, r2 < 0 ? strerror(e2) : "", piped ? "yes" : "no");
		_exit(0);
	}
	close(sv[0]);
	waitpid(wr, &st, 0);
	waitpid(rd, NULL, 0);
	if (WIFSIGNALED(st))
		printf("%s, SIGPIPE %s: killed by %s\n", fam, how[mode],
		       strsignal(WTERMSIG(st)));
	close(fd);
}

int main(int argc, char **argv)
{
	struct stat st;
	int tcp, mode;

	if (argc != 2 || stat(argv[1], &st) < 0)
		return 2;
	setvbuf(stdout, NULL, _IONBF, 0);
	for (tcp = 0; tcp < 2; tcp++)
		for (mode = 0; mode < 3; mode++)
			run(argv[1], (size_t)st.st_size, tcp, mode);
	return 0;
}
