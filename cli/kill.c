/* cli/kill.c: `moat kill [--all] NAME [SIGNAL]`: signal a sandbox started
 * with `moat do --name NAME`, through its control socket
 * (sentry/control.c): its first process, or with --all every process. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "sentry/control.h"

int cmd_kill(int argc, char **argv)
{
	const char *name = NULL, *sig = "TERM";
	struct sockaddr_un sa;
	struct timeval tv = { 5, 0 };
	char line[160], reply[160];
	bool all = false;
	socklen_t len;
	ssize_t n;
	int i, fd, nargs = 0;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--all") || !strcmp(argv[i], "-a"))
			all = true;
		else if (nargs == 0 && (nargs = 1))
			name = argv[i];
		else if (nargs == 1 && (nargs = 2))
			sig = argv[i];
		else
			nargs = 3;
	}
	if (!name || nargs > 2) {
		fprintf(stderr, "usage: moat kill [--all] NAME [SIGNAL]\n");
		return 2;
	}
	if (!control_name_ok(name)) {
		fprintf(stderr, "moat kill: `%s` is not a sandbox name\n",
			name);
		return 2;
	}
	if (control_parse_signal(sig) < 0) {
		fprintf(stderr, "moat kill: `%s` is not a signal\n", sig);
		return 2;
	}
	len = control_addr(name, &sa);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, len) < 0) {
		fprintf(stderr, "moat kill: no sandbox named `%s` (%s)\n", name,
			strerror(errno));
		return 1;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	snprintf(line, sizeof(line), "kill %s%s\n", sig, all ? " all" : "");
	if (write(fd, line, strlen(line)) != (ssize_t)strlen(line)) {
		fprintf(stderr, "moat kill: %s\n", strerror(errno));
		close(fd);
		return 1;
	}
	n = read(fd, reply, sizeof(reply) - 1);
	close(fd);
	if (n <= 0) {
		fprintf(stderr, "moat kill: no answer from `%s`\n", name);
		return 1;
	}
	reply[n] = 0;
	if (strncmp(reply, "ok", 2)) {
		fprintf(stderr, "moat kill: %s", reply);
		return 1;
	}
	return 0;
}
