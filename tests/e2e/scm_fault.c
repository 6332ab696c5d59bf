/* A file passed over a socket pair whose receiver's data buffer is bad:
 * recvmsg fails with EFAULT, and the passed file must not stay held (the
 * pipe's reader sees POLLHUP once the sockets are closed). */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int main(void)
{
	int sv[2], p[2];
	char c = 'x', cb[CMSG_SPACE(sizeof(int))], rb[64];
	struct iovec iov = { &c, 1 }, bad = { (void *)8, 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct msghdr r = { .msg_iov = &bad, .msg_iovlen = 1 };
	struct cmsghdr *h;
	struct pollfd pf;

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) || pipe(p))
		return 1;
	m.msg_control = cb;
	m.msg_controllen = sizeof(cb);
	h = CMSG_FIRSTHDR(&m);
	h->cmsg_level = SOL_SOCKET;
	h->cmsg_type = SCM_RIGHTS;
	h->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(h), &p[1], sizeof(int));
	if (sendmsg(sv[0], &m, 0) != 1)
		return 1;
	close(p[1]);
	r.msg_control = rb;
	r.msg_controllen = sizeof(rb);
	if (recvmsg(sv[1], &r, MSG_DONTWAIT) != -1)
		return 1;
	printf("recvmsg: %s\n", strerror(errno));
	close(sv[0]);
	close(sv[1]);
	pf = (struct pollfd){ .fd = p[0], .events = POLLIN };
	printf("poll %d", poll(&pf, 1, 2000));
	printf(" hup %d\n", (pf.revents & POLLHUP) != 0);
	return 0;
}
