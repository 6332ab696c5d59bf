/* cli/policy.c: `moat policy set NAME FILE` and `moat policy show NAME`:
 * the egress policy of a running sandbox (`moat do --name NAME`, or an OCI
 * container of /run/moat), through its control socket (sentry/control.c).
 *
 * set reads and checks FILE here first, so that a malformed one is refused
 * with the field and line at fault before the sandbox is asked; the
 * sentry parses it again (it trusts no client) and keeps its old policy
 * if that fails too, or if the file's credentials part (credentials,
 * inspect, passthrough) is not the one in force: only this client's
 * sandbox knows that one, and credentials change through `moat secret`. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "policy/policy.h"
#include "sentry/control.h"

static int usage(void)
{
	fprintf(stderr, "usage: moat policy set NAME FILE\n"
			"       moat policy show NAME\n");
	return 2;
}

static int connect_to(const char *name)
{
	struct moat_error err = { 0 };
	int fd = control_dial(name, &err);

	if (fd < 0) {
		fprintf(stderr, "moat policy: %s\n", err.msg);
		return -1;
	}
	return fd;
}

/* The sentry's answer, whole (sentry/control.h), to *out; -1 when
 * there is none, said. */
static int read_reply(int fd, const char *name, bool framed, char **out)
{
	ssize_t n = control_read_reply(fd, framed, out, 10000);

	if (n >= 0)
		return 0;
	fprintf(stderr, "moat policy: %s from `%s`\n",
		n == -EPROTO ? "a malformed or cut-off answer" : "no answer",
		name);
	return -1;
}

static int do_show(const char *name)
{
	cleanup_free char *reply = NULL;
	int fd = connect_to(name), rc;

	if (fd < 0)
		return 1;
	if (write_all(fd, "policy-show\n", 12) < 0) {
		fprintf(stderr, "moat policy: no answer from `%s`\n", name);
		close(fd);
		return 1;
	}
	rc = read_reply(fd, name, true, &reply);
	close(fd);
	if (rc < 0)
		return 1;
	if (!strncmp(reply, "error: ", 7)) {
		fprintf(stderr, "moat policy: %s\n", reply);
		return 1;
	}
	fputs(reply, stdout);
	return 0;
}

static int do_set(const char *name, const char *path)
{
	struct moat_policy p = { 0 };
	struct moat_error err = { 0 };
	char head[64];
	cleanup_free char *text = NULL, *reply = NULL;
	struct stat st;
	int fd, pf;
	ssize_t n;

	if (policy_load_file(path, &p, &err) < 0) {
		fprintf(stderr, "moat policy: %s\n", err.msg);
		return 1;
	}
	policy_free(&p);
	pf = open(path, O_RDONLY | O_CLOEXEC);
	if (pf < 0 || fstat(pf, &st) < 0) {
		fprintf(stderr, "moat policy: `%s`: %s\n", path,
			strerror(errno));
		return 1;
	}
	text = malloc((size_t)st.st_size + 1);
	n = text ? read_all(pf, text, (size_t)st.st_size) : -ENOMEM;
	close(pf);
	if (n < 0) {
		fprintf(stderr, "moat policy: `%s`: %s\n", path,
			strerror((int)-n));
		return 1;
	}
	fd = connect_to(name);
	if (fd < 0)
		return 1;
	snprintf(head, sizeof(head), "policy-set %zd\n", n);
	if (write_all(fd, head, strlen(head)) < 0 ||
	    write_all(fd, text, (size_t)n) < 0) {
		fprintf(stderr, "moat policy: no answer from `%s`\n", name);
		close(fd);
		return 1;
	}
	pf = read_reply(fd, name, false, &reply);
	close(fd);
	if (pf < 0)
		return 1;
	if (strcmp(reply, "ok")) {
		fprintf(stderr, "moat policy: %s\n",
			strncmp(reply, "error: ", 7) ? "a malformed answer" :
						       reply);
		return 1;
	}
	return 0;
}

int cmd_policy(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "show"))
		return do_show(argv[2]);
	if (argc == 4 && !strcmp(argv[1], "set"))
		return do_set(argv[2], argv[3]);
	return usage();
}
