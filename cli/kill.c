/* cli/kill.c: `moat kill [--all] NAME [SIGNAL]`: signal a sandbox started
 * with `moat do --name NAME` (or without a name: ID, moat's pid), through
 * its control socket (sentry/control.c): its first process, or with --all
 * every process. */
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
	struct moat_error err = { 0 };
	char line[160];
	cleanup_free char *reply = NULL;
	bool all = false;
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
	fd = control_dial(name, &err);
	if (fd < 0) {
		fprintf(stderr, "moat kill: %s\n", err.msg);
		return 1;
	}
	snprintf(line, sizeof(line), "kill %s%s\n", sig, all ? " all" : "");
	if (write(fd, line, strlen(line)) != (ssize_t)strlen(line)) {
		fprintf(stderr, "moat kill: %s\n", strerror(errno));
		close(fd);
		return 1;
	}
	/* "ok" or "error: ...", whole: anything else is no answer */
	n = control_read_reply(fd, false, &reply, 5000);
	close(fd);
	if (n < 0) {
		fprintf(stderr, "moat kill: %s from `%s`\n",
			n == -EPROTO ? "a malformed or cut-off answer" :
				       "no answer",
			name);
		return 1;
	}
	if (strcmp(reply, "ok")) {
		fprintf(stderr, "moat kill: %s\n",
			strncmp(reply, "error: ", 7) ? "a malformed answer" :
						       reply);
		return 1;
	}
	return 0;
}
