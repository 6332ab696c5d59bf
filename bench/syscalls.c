/* bench/syscalls.c: syscall micro-benchmarks for moat.
 *
 *   syscalls NAME ITERATIONS [FILE]
 *
 * Runs benchmark NAME ITERATIONS times (after a short warm-up) and prints
 * one line "NAME <ns per op>".  FILE is what open/stat/pread use (default
 * /etc/hostname for open and stat, /proc/self/exe for pread, which needs at
 * least 4 KiB).  Built static (`make bench`) so that every sandbox runs the
 * same code without a dynamic loader in the measurement.
 *
 * Time comes from clock_gettime(CLOCK_MONOTONIC), which is in the vDSO
 * natively and on moat's allowlist, so the clock itself is not trapped.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *file_arg;

static void die(const char *what)
{
	fprintf(stderr, "syscalls: %s: %s\n", what, strerror(errno));
	exit(2);
}

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void bench_getppid(long n)
{
	for (long i = 0; i < n; i++)
		syscall(SYS_getppid); /* glibc would not cache it, but be sure */
}

static void bench_open_close(long n)
{
	const char *path = file_arg ? file_arg : "/etc/hostname";

	for (long i = 0; i < n; i++) {
		int fd = open(path, O_RDONLY | O_CLOEXEC);

		if (fd < 0)
			die(path);
		close(fd);
	}
}

static void bench_stat(long n)
{
	const char *path = file_arg ? file_arg : "/etc/hostname";
	struct stat st;

	for (long i = 0; i < n; i++)
		if (stat(path, &st) < 0)
			die(path);
}

static void bench_pread(long n)
{
	const char *path = file_arg ? file_arg : "/proc/self/exe";
	static char buf[4096];
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		die(path);
	for (long i = 0; i < n; i++)
		if (pread(fd, buf, sizeof(buf), 0) != (ssize_t)sizeof(buf))
			die("pread 4 KiB");
	close(fd);
}

/* One op is a round trip: parent writes a byte, child echoes it back. */
static void bench_pipe(long n)
{
	int to_child[2], to_parent[2];
	char c = 'x';
	pid_t pid;

	if (pipe(to_child) < 0 || pipe(to_parent) < 0)
		die("pipe");
	pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		close(to_child[1]);
		close(to_parent[0]);
		while (read(to_child[0], &c, 1) == 1)
			if (write(to_parent[1], &c, 1) != 1)
				_exit(1);
		_exit(0);
	}
	close(to_child[0]);
	close(to_parent[1]);
	for (long i = 0; i < n; i++) {
		if (write(to_child[1], &c, 1) != 1)
			die("pipe write");
		if (read(to_parent[0], &c, 1) != 1)
			die("pipe read");
	}
	close(to_child[1]);
	close(to_parent[0]);
	waitpid(pid, NULL, 0);
}

static void bench_fork_wait(long n)
{
	for (long i = 0; i < n; i++) {
		int status;
		pid_t pid = fork();

		if (pid < 0)
			die("fork");
		if (pid == 0)
			_exit(0);
		if (waitpid(pid, &status, 0) != pid || status != 0)
			die("waitpid");
	}
}

static void bench_fork_exec(long n)
{
	char *const argv[] = { "true", NULL };
	char *const envp[] = { NULL };

	for (long i = 0; i < n; i++) {
		int status;
		pid_t pid = fork();

		if (pid < 0)
			die("fork");
		if (pid == 0) {
			execve("/bin/true", argv, envp);
			_exit(127);
		}
		if (waitpid(pid, &status, 0) != pid || status != 0)
			die("fork+exec of /bin/true");
	}
}

static const struct bench {
	const char *name;
	void (*fn)(long n);
} benches[] = {
	{ .name = "getppid", .fn = bench_getppid },
	{ .name = "open_close", .fn = bench_open_close },
	{ .name = "stat", .fn = bench_stat },
	{ .name = "pread_4k", .fn = bench_pread },
	{ .name = "pipe_pingpong", .fn = bench_pipe },
	{ .name = "fork_wait", .fn = bench_fork_wait },
	{ .name = "fork_exec", .fn = bench_fork_exec },
};

static void usage(void)
{
	fprintf(stderr, "usage: syscalls NAME ITERATIONS [FILE]\nNAME:");
	for (size_t i = 0; i < sizeof(benches) / sizeof(benches[0]); i++)
		fprintf(stderr, " %s", benches[i].name);
	fprintf(stderr, "\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const struct bench *b = NULL;
	long n, warm;
	double t0, t1;

	if (argc < 3 || argc > 4)
		usage();
	for (size_t i = 0; i < sizeof(benches) / sizeof(benches[0]); i++)
		if (strcmp(argv[1], benches[i].name) == 0)
			b = &benches[i];
	n = strtol(argv[2], NULL, 10);
	if (!b || n <= 0)
		usage();
	if (argc == 4)
		file_arg = argv[3];

	warm = n / 10 > 0 ? n / 10 : 1;
	b->fn(warm);
	t0 = now_ns();
	b->fn(n);
	t1 = now_ns();
	printf("%s %.1f\n", b->name, (t1 - t0) / (double)n);
	return 0;
}
