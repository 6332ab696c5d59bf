/* tests/e2e/many_fds.c: poll, ppoll, select, pselect6 and epoll over
 * thousands of pipes and eventfds, with RLIMIT_NOFILE raised to its hard
 * limit. Prints only what does not depend on the limit's value or on the
 * order of results; must print the same natively. */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <sys/wait.h>
#include <unistd.h>

#define NPIPES                                                                 \
	1000 /* under the 64 MiB of pipes past which new ones get a page */
#define NEVFDS 9000

static int fds[2 * NPIPES + NEVFDS]; /* what poll and epoll watch */
static int nfds_all, maxfd;

static const char *err(long r)
{
	return r < 0 ? strerror(errno) : "ok";
}

/* readable: every third pipe (a byte in it), every other eventfd */
static void make_fds(void)
{
	int i, p[2];

	for (i = 0; i < NPIPES; i++) {
		if (pipe(p) < 0) {
			printf("pipe %d: %s\n", i, strerror(errno));
			exit(1);
		}
		if (i % 3 == 0 && write(p[1], "x", 1) != 1)
			exit(1);
		fds[nfds_all++] = p[0];
		fds[nfds_all++] = p[1];
	}
	for (i = 0; i < NEVFDS; i++) {
		int e = eventfd(i % 2 ? 0 : 1, 0);
		if (e < 0) {
			printf("eventfd %d: %s\n", i, strerror(errno));
			exit(1);
		}
		fds[nfds_all++] = e;
	}
	for (i = 0; i < nfds_all; i++)
		if (fds[i] > maxfd)
			maxfd = fds[i];
}

static void summarize(const char *name, long r, struct pollfd *pf, int n)
{
	long in = 0, out = 0, sum = 0;
	int i;

	for (i = 0; i < n; i++) {
		if (pf[i].revents & POLLIN)
			in++;
		if (pf[i].revents & POLLOUT)
			out++;
		sum += (long)i * pf[i].revents;
	}
	printf("%s: %ld %s, in %ld out %ld sum %ld\n", name, r, err(r), in, out,
	       sum);
}

static void t_poll(rlim_t lim)
{
	struct pollfd *pf = calloc(lim + 1, sizeof(*pf));
	struct timespec zero = { 0, 0 };
	int i;
	long r;

	for (i = 0; i < nfds_all; i++) {
		pf[i].fd = fds[i];
		pf[i].events = POLLIN | POLLOUT;
	}
	r = poll(pf, (nfds_t)nfds_all, 0);
	summarize("poll all", r, pf, nfds_all);
	r = ppoll(pf, (nfds_t)nfds_all, &zero, NULL);
	summarize("ppoll all", r, pf, nfds_all);
	/* nfds up to RLIMIT_NOFILE, the rest of the array ignored (-1) */
	for (i = nfds_all; i <= (int)lim; i++)
		pf[i].fd = -1;
	r = poll(pf, (nfds_t)lim, 0);
	summarize("poll at the limit", r, pf, nfds_all);
	r = poll(pf, (nfds_t)lim + 1, 0);
	printf("poll past the limit: %ld %s\n", r, err(r));
	/* a closed fd among them: POLLNVAL */
	pf[0].fd = maxfd + 10;
	r = poll(pf, (nfds_t)nfds_all, 0);
	printf("poll with a closed fd: %ld, revents %#x\n", r, pf[0].revents);
	free(pf);
}

static void t_select(void)
{
	/* sets for far more fds than the table holds: select looks as far
	 * as the table goes */
	int n = maxfd + 1, words = (1 << 20) / 64, i;
	uint64_t *rd = calloc((size_t)words, 8), *wr = calloc((size_t)words, 8);
	long r, rin = 0, rout = 0;
	struct timeval tv = { 0, 0 };
	struct timespec ts = { 0, 0 };

	for (int pass = 0; pass < 3; pass++) {
		memset(rd, 0, (size_t)words * 8);
		memset(wr, 0, (size_t)words * 8);
		for (i = 0; i < nfds_all; i++) {
			rd[fds[i] / 64] |= 1ULL << (fds[i] % 64);
			wr[fds[i] / 64] |= 1ULL << (fds[i] % 64);
		}
		if (pass == 0)
			r = select(n, (fd_set *)rd, (fd_set *)wr, NULL, &tv);
		else if (pass == 1)
			r = pselect(n, (fd_set *)rd, (fd_set *)wr, NULL, &ts,
				    NULL);
		else
			r = select(1 << 20, (fd_set *)rd, (fd_set *)wr, NULL,
				   &tv);
		rin = rout = 0;
		for (i = 0; i < words; i++) {
			rin += __builtin_popcountll(rd[i]);
			rout += __builtin_popcountll(wr[i]);
		}
		printf("%s: %ld %s, in %ld out %ld\n",
		       pass == 0 ? "select past FD_SETSIZE" :
		       pass == 1 ? "pselect past FD_SETSIZE" :
				   "select, nfds 1 << 20",
		       r, err(r), rin, rout);
	}
	/* a closed fd in the set: EBADF */
	memset(rd, 0, (size_t)words * 8);
	rd[(maxfd + 1) / 64] |= 1ULL << ((maxfd + 1) % 64);
	r = select(maxfd + 2, (fd_set *)rd, NULL, NULL, &tv);
	printf("select with a closed fd: %ld %s\n", r, err(r));
	free(rd);
	free(wr);
}

static void t_epoll(void)
{
	int ep = epoll_create1(0), i, n, seen_all;
	struct epoll_event ev, *out = calloc((size_t)nfds_all, sizeof(*out));
	char *seen = calloc((size_t)nfds_all, 1);
	long r, sum;
	const int max_ok = INT_MAX / (int)sizeof(struct epoll_event);

	for (i = 0; i < nfds_all; i++) {
		ev.events = EPOLLIN;
		ev.data.u64 = (uint64_t)i; /* fd numbers may differ natively */
		if (epoll_ctl(ep, EPOLL_CTL_ADD, fds[i], &ev) < 0) {
			printf("epoll_ctl %d: %s\n", i, strerror(errno));
			exit(1);
		}
	}
	/* maxevents up to INT_MAX / sizeof(struct epoll_event): only the
	 * ready ones are written */
	r = epoll_wait(ep, out, max_ok, 0);
	sum = 0;
	for (i = 0; i < r; i++)
		sum += (long)out[i].data.u64;
	printf("epoll_wait, maxevents %d: %ld %s, index sum %ld\n", max_ok, r,
	       err(r), sum);
	r = epoll_wait(ep, out, max_ok + 1, 0);
	printf("epoll_wait, maxevents %d: %ld %s\n", max_ok + 1, r, err(r));
	r = epoll_pwait(ep, out, nfds_all, 0, NULL);
	printf("epoll_pwait: %ld %s\n", r, err(r));
	/* 100 at a time, level-triggered: every ready fd comes round, once
	 * each, before any comes again */
	n = (int)epoll_wait(ep, out, nfds_all, 0);
	seen_all = 1;
	for (i = 0; i < n;) {
		int k, got = epoll_wait(ep, out, n - i < 100 ? n - i : 100, 0);
		if (got <= 0)
			break;
		for (k = 0; k < got; k++)
			if (seen[out[k].data.u64]++)
				seen_all = 0;
		i += got;
	}
	r = 0;
	for (i = 0; i < nfds_all; i++)
		r += seen[i] != 0;
	printf("100 at a time: %ld distinct of %d, none twice: %d\n", r, n,
	       seen_all);
	/* modify and delete them all: each found without a scan */
	for (i = 0; i < nfds_all; i++) {
		ev.events = EPOLLOUT;
		ev.data.u64 = (uint64_t)i;
		if (epoll_ctl(ep, EPOLL_CTL_MOD, fds[i], &ev) < 0)
			break;
	}
	r = epoll_wait(ep, out, nfds_all, 0);
	printf("after EPOLL_CTL_MOD to EPOLLOUT: %ld %s\n", r, err(r));
	for (i = 0; i < nfds_all; i += 2)
		if (epoll_ctl(ep, EPOLL_CTL_DEL, fds[i], NULL) < 0)
			break;
	r = epoll_wait(ep, out, nfds_all, 0);
	printf("after deleting half: %ld %s\n", r, err(r));
	close(ep);
	free(out);
	free(seen);
}

/* Waits that block on thousands of idle fds until a child makes the last
 * of them readable: poll, select and epoll each wake with just that one. */
static void t_blocking(void)
{
	static int idle[2 * NPIPES + NEVFDS];
	int nidle = 0, i, ep = epoll_create1(0), k, kid = -1;
	struct pollfd *pf;
	struct epoll_event ev, got[8];
	uint64_t one = 1, *rd;
	long r;

	pf = calloc((size_t)nfds_all, sizeof(*pf));
	for (i = 0; i < nfds_all; i++) {
		pf[i].fd = fds[i];
		pf[i].events = POLLIN;
	}
	poll(pf, (nfds_t)nfds_all, 0);
	for (i = 0; i < nfds_all; i++)
		if (!pf[i].revents)
			idle[nidle++] = fds[i];
	rd = calloc((size_t)(maxfd / 64 + 1), 8);
	for (i = 0; i < nidle; i++) {
		pf[i].fd = idle[i];
		pf[i].events = POLLIN;
		ev.events = EPOLLIN;
		ev.data.u64 = (uint64_t)i;
		epoll_ctl(ep, EPOLL_CTL_ADD, idle[i], &ev);
	}
	for (k = 0; k < 3; k++) {
		int last = idle[nidle - 1 - k];
		pid_t c = fork();

		if (c == 0) {
			usleep(100000);
			_exit(write(last, &one, 8) == 8 ? 0 : 1);
		}
		if (k == 0) {
			r = poll(pf, (nfds_t)nidle, -1);
			for (i = 0; i < nidle && !pf[i].revents; i++)
				;
			kid = i;
		} else if (k == 1) {
			memset(rd, 0, (size_t)(maxfd / 64 + 1) * 8);
			for (i = 0; i < nidle; i++)
				rd[idle[i] / 64] |= 1ULL << (idle[i] % 64);
			r = select(maxfd + 1, (fd_set *)rd, NULL, NULL, NULL);
			for (i = 0; i < nidle && !(rd[idle[i] / 64] &
						   (1ULL << (idle[i] % 64)));
			     i++)
				;
			kid = i;
		} else {
			r = epoll_wait(ep, got, 8, -1);
			kid = r > 0 ? (int)got[0].data.u64 : -1;
		}
		if (read(last, &one, 8) != 8) /* idle again */
			exit(1);
		printf("%s blocked on %d idle fds: %ld %s, the one %d from "
		       "the end\n",
		       k == 0 ? "poll" :
		       k == 1 ? "select" :
				"epoll_wait",
		       nidle, r, err(r), nidle - 1 - kid);
		waitpid(c, NULL, 0);
	}
	close(ep);
	free(pf);
	free(rd);
}

int main(void)
{
	struct rlimit rl;

	setvbuf(stdout, NULL, _IONBF, 0);
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return 1;
	if (rl.rlim_max == RLIM_INFINITY || rl.rlim_max > (1 << 22))
		rl.rlim_max = 1 << 22; /* an array of that many pollfds */
	rl.rlim_cur = rl.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &rl) < 0) {
		printf("setrlimit: %s\n", strerror(errno));
		return 1;
	}
	if (rl.rlim_cur < 2 * NPIPES + NEVFDS + 64) {
		printf("RLIMIT_NOFILE's hard limit %lu is too low\n",
		       (unsigned long)rl.rlim_max);
		return 1;
	}
	make_fds();
	printf("fds: %d\n", nfds_all);
	t_poll(rl.rlim_cur);
	t_select();
	t_epoll();
	t_blocking();
	return 0;
}
