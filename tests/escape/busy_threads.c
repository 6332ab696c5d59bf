/* tests/escape/busy_threads.c N: N threads, each writing to /dev/null in a
 * loop (a trapped call each time round), until stdin ends. A guest that
 * keeps the sentry's waitpid never empty (test_loop_starvation.sh). */
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

static int null_fd;

static void *writer(void *arg)
{
	static char buf[4096];

	for (;;)
		if (write(null_fd, buf, sizeof(buf)) < 0)
			break;
	return arg;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 40;
	pthread_t th;
	char c;

	null_fd = open("/dev/null", O_WRONLY);
	for (int i = 0; i < n; i++)
		pthread_create(&th, NULL, writer, NULL);
	while (read(0, &c, 1) > 0)
		;
	_exit(0);
}
