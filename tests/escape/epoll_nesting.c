/* Epolls that watch epolls, as Linux (fs/eventpoll.c) allows them: chains
 * of at most 4 links, either way they are built (ELOOP), no cycles
 * (ELOOP), and from any other file at most 500, 100, 50 and 10 paths of 1
 * to 4 links up to an unwatched epoll (EINVAL). Then a DAG of epolls that
 * share what they watch: LEVELS levels of K, each watching every epoll of
 * the level below. Linux looks at ready lists; the sentry once looked at
 * every path, K^(LEVELS-1) polls a call (seconds each at K 40), and took
 * a sixth level. Here many waits and polls of it, and a blocked wait woken
 * after many wake-ups, must end (and print) as natively does.
 * Usage: epoll_nesting [K] (40 if none). */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/wait.h>
#include <unistd.h>

#define LEVELS 5
#define LOOKS 100 /* waits, polls and wake-ups of the DAG */

static const char *add(int ep, int fd)
{
	struct epoll_event ev = { .events = EPOLLIN };

	if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) == 0)
		return "ok";
	return errno == ELOOP  ? "ELOOP" :
	       errno == EINVAL ? "EINVAL" :
	       errno == EEXIST ? "EEXIST" :
				 strerror(errno);
}

/* Every fd is made here, and each part closes what it made, so that the
 * program needs fewer than 1024 at any time. */
static int hi = -1;

static int made(int fd)
{
	if (fd < 0) {
		perror("epoll_create1 or eventfd");
		exit(1);
	}
	if (fd > hi)
		hi = fd;
	return fd;
}

static int epoll(void)
{
	return made(epoll_create1(0));
}

static int efd(int flags)
{
	return made(eventfd(0, flags));
}

/* The first fd a part will make: close_from() closes it and all after. */
static int mark(void)
{
	return hi + 1;
}

static void close_from(int lo)
{
	for (; hi >= lo; hi--)
		close(hi);
}

/* Add epolls into a chain until an add fails: which link, and how. */
static void chain(const char *what, int upwards)
{
	int e[10], i, lo = mark();
	const char *r = "ok";

	for (i = 0; i < 10; i++)
		e[i] = epoll();
	for (i = 0; i < 9; i++) {
		/* upwards: each new epoll watches the last; downwards: the
		 * last (already watched) watches a new one */
		r = upwards ? add(e[i + 1], e[i]) : add(e[i], e[i + 1]);
		if (strcmp(r, "ok"))
			break;
	}
	printf("%s: link %d %s\n", what, i + 1, r);
	close_from(lo);
}

/* The bottom of a chain of a epolls watches the top of one of b. */
static void join(int a, int b)
{
	int A[5], B[5], i, lo = mark();

	for (i = 0; i < a; i++) {
		A[i] = epoll();
		if (i)
			add(A[i], A[i - 1]);
	}
	for (i = 0; i < b; i++) {
		B[i] = epoll();
		if (i)
			add(B[i], B[i - 1]);
	}
	printf("chain of %d over a chain of %d: %s\n", a, b,
	       add(A[0], B[b - 1]));
	close_from(lo);
}

/* A file F in epoll P, under `mid` epolls between P and `tops` (each
 * watching P through the ones before it), each of n epolls watching the
 * last: how many adds went in before one failed. */
static void fan(const char *what, int mid, int n)
{
	int lo = mark(), F = efd(0), P = epoll(), last = P, i;
	int *x = calloc(n, sizeof(int));
	const char *r = "ok";

	add(P, F);
	for (i = 0; i < mid; i++) {
		int m = epoll();
		add(m, last);
		last = m;
	}
	for (i = 0; i < n; i++) {
		x[i] = epoll();
		r = add(x[i], last);
		if (strcmp(r, "ok"))
			break;
	}
	printf("%s: %d adds, then %s\n", what, i, r);
	if (i < n)
		printf("  and its DEL: %s\n",
		       epoll_ctl(x[i], EPOLL_CTL_DEL, last, NULL) ? "ENOENT" :
								    "ok");
	close_from(lo);
	free(x);
}

static void limits(void)
{
	int i;

	chain("a chain built upwards", 1);
	chain("a chain built downwards", 0);
	for (i = 1; i <= 4; i++)
		join(i, 6 - i), join(i, 5 - i);
	{
		int lo = mark(), x = epoll(), y = epoll(), z = epoll();
		add(x, y);
		add(y, z);
		printf("a cycle: %s; an epoll in itself: %s\n", add(z, x),
		       add(x, x));
		close_from(lo);
	}
	fan("paths of 1 link from a file", 0, 600);
	fan("paths of 2 links", 1, 200);
	fan("paths of 3 links", 2, 100);
	fan("paths of 4 links", 3, 30);
	{
		/* paths of no link are not counted */
		int lo = mark(), F = efd(0), n;
		for (n = 0; n < 800; n++)
			if (strcmp(add(epoll(), F), "ok"))
				break;
		printf("a file in %d epolls\n", n);
		close_from(lo);
	}
	{
		/* a file added to an epoll that 600 watch */
		int lo = mark(), F = efd(0), P = epoll(), n;
		for (n = 0; n < 600; n++)
			add(epoll(), P);
		printf("a file into an epoll 600 watch: %s\n", add(P, F));
		close_from(lo);
	}
	{
		/* a file under two epolls, both under each top */
		int lo = mark(), F = efd(0), P1 = epoll(), P2 = epoll(), n;
		const char *r = "ok";
		add(P1, F);
		add(P2, F);
		for (n = 0; n < 300; n++) {
			int top = epoll();
			r = add(top, P1);
			if (strcmp(r, "ok") || strcmp(r = add(top, P2), "ok"))
				break;
		}
		printf("two middles: %d tops, then %s\n", n, r);
		close_from(lo);
	}
}

/* Readiness climbs a small DAG: a file under B, B under 3 middles, all
 * under T. */
static void small_dag(void)
{
	struct epoll_event out[8];
	int lo = mark(), F = efd(EFD_NONBLOCK), B = epoll(), T = epoll(), i;
	uint64_t v = 1;

	add(B, F);
	for (i = 0; i < 3; i++) {
		int m = epoll();
		add(m, B);
		add(T, m);
	}
	printf("small DAG: %d ready", epoll_wait(T, out, 8, 0));
	if (write(F, &v, 8) != 8)
		perror("write");
	printf(", %d once its file is", epoll_wait(T, out, 8, 0));
	if (read(F, &v, 8) != 8)
		perror("read");
	printf(", %d once read\n", epoll_wait(T, out, 8, 0));
	close_from(lo);
}

static void big_dag(int k)
{
	int *prev = calloc(k, sizeof(int)), *cur = calloc(k, sizeof(int));
	struct pollfd *pf = calloc(k, sizeof(*pf));
	struct epoll_event out[8];
	int i, j, l, n = 0, top, E = efd(0), other = efd(0);
	uint64_t v = 1;
	pid_t pid;

	for (i = 0; i < k; i++)
		prev[i] = epoll();
	for (l = 1; l < LEVELS; l++) {
		for (i = 0; i < k; i++) {
			cur[i] = epoll();
			for (j = 0; j < k; j++)
				if (strcmp(add(cur[i], prev[j]), "ok"))
					n++;
		}
		memcpy(prev, cur, k * sizeof(int));
	}
	printf("DAG of %d levels: %d adds failed\n", LEVELS, n);
	top = epoll();
	printf("an epoll over it: %s\n", add(top, prev[0]));
	for (i = n = 0; i < LOOKS; i++)
		n += epoll_wait(prev[0], out, 8, 0);
	for (i = 0; i < k; i++)
		pf[i] = (struct pollfd){ .fd = prev[i], .events = POLLIN };
	for (i = 0; i < LOOKS; i++)
		n += poll(pf, k, 0);
	printf("%d waits and polls: %d ready\n", 2 * LOOKS, n);
	fflush(stdout);
	/* a blocked wait, looked at again at every wake-up of the sandbox */
	pid = fork();
	if (pid == 0) {
		n = epoll_wait(prev[0], out, 8, -1);
		printf("the blocked wait: %d ready\n", n);
		_exit(0);
	}
	for (i = 0; i < LOOKS; i++)
		if (write(other, &v, 8) != 8 || read(other, &v, 8) != 8)
			perror("other");
	printf("a file into the DAG's top: %s\n", add(prev[0], E));
	fflush(stdout);
	if (write(E, &v, 8) != 8)
		perror("write");
	waitpid(pid, NULL, 0);
}

int main(int argc, char **argv)
{
	hi = dup(2); /* stdio's */
	close(hi--);
	setvbuf(stdout, NULL, _IOLBF, 0);
	limits();
	small_dag();
	big_dag(argc > 1 ? atoi(argv[1]) : 40);
	return 0;
}
