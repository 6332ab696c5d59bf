/* tests/escape/broker_probe.c: a hostile guest's ways at the sentry's side
 * of the credential broker (tests/escape/test_broker_barrier.sh).
 *
 *   broker_probe zero HOST PORT N    N empty sends on one connection
 *                                    held for sniffing; prints "sent"
 *   broker_probe hold HOST PORT N    N connections, each one byte of a
 *                                    request line held; prints "held N"
 *                                    and waits for stdin to close
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* host:port's address, looked up once (the sandbox's resolver then
 * knows the name for the policy); each dial connects to it */
static struct addrinfo *ai;

static int dial(const char *host, const char *port)
{
	struct addrinfo hints = { .ai_family = AF_INET,
				  .ai_socktype = SOCK_STREAM };
	int fd, rc;

	if (!ai && (rc = getaddrinfo(host, port, &hints, &ai))) {
		fprintf(stderr, "%s: %s\n", host, gai_strerror(rc));
		exit(1);
	}
	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0 || connect(fd, ai->ai_addr, ai->ai_addrlen) < 0) {
		perror("connect");
		return -1;
	}
	return fd;
}

int main(int argc, char **argv)
{
	long n;
	int fd;

	if (argc != 5) {
		fprintf(stderr, "usage: broker_probe MODE HOST PORT N\n");
		return 2;
	}
	n = atol(argv[4]);
	if (!strcmp(argv[1], "zero")) {
		fd = dial(argv[2], argv[3]);
		if (fd < 0)
			return 1;
		for (long i = 0; i < n; i++)
			if (send(fd, "", 0, 0) < 0) {
				perror("send");
				return 1;
			}
		printf("sent\n");
		return 0;
	}
	if (!strcmp(argv[1], "hold")) {
		char c;
		long i;

		for (i = 0; i < n; i++) {
			fd = dial(argv[2], argv[3]);
			if (fd < 0)
				break;
			if (send(fd, "G", 1, 0) != 1) {
				perror("send");
				break;
			}
		}
		printf("held %ld\n", i);
		fflush(stdout);
		while (read(0, &c, 1) > 0)
			;
		return 0;
	}
	return 2;
}
