/* cli/secret.c: `moat secret rotate|revoke|set ID NAME ...`: the
 * credentials of a running sandbox (`moat do --name ID`, or an OCI
 * container), through its control socket (sentry/control.c) and on to
 * its broker (sentry/brokerlink.c, prot/broker.h).
 *
 *   rotate ID NAME SOURCE   NAME gets the value SOURCE names (env:VAR,
 *                           file:PATH, fd:N); its placeholder stays, and
 *                           the next request swaps in the new value
 *   revoke ID NAME          NAME is blocked from now on, and the
 *                           sandbox's open brokered connections close
 *   set ID NAME SOURCE@HOST[,HOST...]
 *                           a new credential, in --secret's form, with
 *                           the default locations; its placeholder is
 *                           printed, for the processes started after
 *                           (`moat exec --env NAME=...`)
 *
 * The value is read here, by this process: the sentry never reads it.
 * It goes as a sealed memfd with the request (SCM_RIGHTS), which the
 * sentry hands to the broker unread. Everything about SOURCE is checked
 * before the sandbox is asked, so that a bad one sends nothing. */
#include "cli/secret.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <unistd.h>

#include <json-c/json.h>

#include "cli/cli.h"
#include "policy/credentials.h"
#include "sentry/control.h"

/* Room for the longest value and the line break the broker drops, and a
 * byte more to tell a value that is too long. */
#define READ_MAX (CRED_VALUE_MAX + 3)

bool secret_name_ok(const char *name)
{
	size_t i, n = strlen(name);

	if (!n || n >= CRED_NAME_MAX || (name[0] >= '0' && name[0] <= '9'))
		return false;
	for (i = 0; i < n; i++)
		if (!((name[i] >= 'a' && name[i] <= 'z') ||
		      (name[i] >= 'A' && name[i] <= 'Z') ||
		      (name[i] >= '0' && name[i] <= '9') || name[i] == '_'))
			return false;
	return true;
}

/* fd to its end, or READ_MAX bytes, into buf: the length or -errno. */
static ssize_t read_bounded(int fd, char *buf)
{
	size_t n = 0;

	while (n < READ_MAX) {
		ssize_t r = read(fd, buf + n, READ_MAX - n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			break;
		n += (size_t)r;
	}
	return (ssize_t)n;
}

/* The value's bytes into buf (READ_MAX): the length, or -1 with err. */
static ssize_t read_source(const char *source, char *buf,
			   struct moat_error *err)
{
	ssize_t n;

	if (!strncmp(source, "env:", 4)) {
		const char *v = source[4] ? getenv(source + 4) : NULL;
		size_t len;

		if (!source[4])
			return moat_error_input(err, EINVAL,
						"`env:`: no variable named");
		if (!v)
			return moat_error_input(err, ENOENT,
						"`%s`: %s is not set", source,
						source + 4);
		len = strlen(v);
		if (len > READ_MAX)
			len = READ_MAX; /* too long, whatever the rest */
		memcpy(buf, v, len);
		return (ssize_t)len;
	}
	if (!strncmp(source, "file:", 5)) {
		cleanup_close int fd = -1;
		struct stat st;

		if (source[5] != '/')
			return moat_error_input(err, EINVAL,
						"`%s`: an absolute path "
						"expected",
						source);
		fd = open(source + 5, O_RDONLY | O_CLOEXEC | O_NOCTTY);
		if (fd < 0 || fstat(fd, &st) < 0)
			return moat_error_set(err, errno, "`%s`", source);
		if (S_ISDIR(st.st_mode))
			return moat_error_input(err, EISDIR,
						"`%s`: a directory", source);
		n = read_bounded(fd, buf);
		if (n < 0)
			return moat_error_set(err, (int)-n, "`%s`", source);
		return n;
	}
	if (!strncmp(source, "fd:", 3)) {
		char *end;
		long fd;

		errno = 0;
		fd = strtol(source + 3, &end, 10);
		if (!source[3] || *end || errno || fd < 0 || fd > 65535)
			return moat_error_input(err, EINVAL,
						"`%s`: a file descriptor's "
						"number expected",
						source);
		if (fcntl((int)fd, F_GETFD) < 0)
			return moat_error_input(err, EBADF,
						"`%s`: fd %ld is not open",
						source, fd);
		n = read_bounded((int)fd, buf);
		if (n < 0)
			return moat_error_set(err, (int)-n, "`%s`", source);
		return n;
	}
	return moat_error_input(err, EINVAL,
				"`%s`: a source is env:VAR, file:PATH or fd:N",
				source);
}

int secret_value_memfd(const char *source, struct moat_error *err)
{
	char buf[READ_MAX];
	const char *why;
	ssize_t n;
	size_t len;
	int fd = -1;

	n = read_source(source, buf, err);
	if (n < 0)
		goto out;
	len = (size_t)n;
	if (len && buf[len - 1] == '\n') {
		len--;
		if (len && buf[len - 1] == '\r')
			len--;
	}
	why = cred_value_refusal(buf, len);
	if (why) {
		n = moat_error_input(err, EINVAL, "`%s`: the value %s", source,
				     why);
		goto out;
	}
	fd = memfd_create("moat-secret", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0) {
		n = moat_error_set(err, errno, "memfd_create");
		goto out;
	}
	if (write_all(fd, buf, len) < 0 ||
	    fcntl(fd, F_ADD_SEALS, SECRET_SEALS) < 0 ||
	    lseek(fd, 0, SEEK_SET) != 0) {
		n = moat_error_set(err, errno, "the value's memfd");
		close(fd);
		fd = -1;
	}
out:
	explicit_bzero(buf, sizeof(buf));
	return n < 0 ? (int)n : fd;
}

static int usage(void)
{
	fprintf(stderr,
		"usage: moat secret rotate ID NAME SOURCE\n"
		"       moat secret revoke ID NAME\n"
		"       moat secret set ID NAME SOURCE@HOST[,HOST...]\n"
		"SOURCE: env:VAR, file:PATH or fd:N (read by this command)\n");
	return 2;
}

/* The request line, and the fd (or -1) in the same message: the sentry
 * takes the fd with the line that names what it is for. */
static int send_request(int fd, const char *line, int value_fd)
{
	struct iovec iov = { (void *)line, strlen(line) };
	ssize_t w;

	if (value_fd < 0)
		return write_all(fd, line, strlen(line)) < 0 ? -1 : 0;
	w = send_with_fds(fd, &iov, 1, &value_fd, 1);
	if (w < 0)
		return -1;
	/* the rest of a line cut short: no fd again */
	if ((size_t)w < iov.iov_len &&
	    write_all(fd, line + w, iov.iov_len - (size_t)w) < 0)
		return -1;
	return 0;
}

/* Send line (and value_fd) to sandbox id and wait for its answer: 0 for
 * "ok" (what follows "ok " into *rest, when rest is given), else 1 with
 * the error printed. */
static int ask(const char *id, const char *line, int value_fd, char **rest)
{
	struct moat_error err = { 0 };
	struct timeval tv = { 10, 0 };
	cleanup_free char *reply = NULL;
	cleanup_close int fd = -1;
	ssize_t n;

	fd = control_dial(id, &err);
	if (fd < 0) {
		fprintf(stderr, "moat secret: %s\n", err.msg);
		return 1;
	}
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (send_request(fd, line, value_fd) < 0) {
		fprintf(stderr, "moat secret: no answer from `%s`\n", id);
		return 1;
	}
	/* the sentry waits up to 5 s for its broker */
	n = control_read_reply(fd, false, &reply, 10000);
	if (n < 0) {
		fprintf(stderr, "moat secret: %s from `%s`\n",
			n == -EPROTO ? "a malformed or cut-off answer" :
				       "no answer",
			id);
		return 1;
	}
	if (rest && !strncmp(reply, "ok ", 3) && reply[3]) {
		*rest = strdup(reply + 3);
		return *rest ? 0 : 1;
	}
	if (strcmp(reply, "ok") || rest) {
		fprintf(stderr, "moat secret: %s\n",
			strncmp(reply, "error: ", 7) ? "a malformed answer" :
						       reply);
		return 1;
	}
	return 0;
}

/* `set`: the form is --secret's, checked whole here; the value is read
 * here, as rotate reads one, and goes as a sealed memfd beside the
 * credential (the policy file's form, its source as written, a file's
 * by its real path). The sandbox answers with the placeholder, which is
 * printed: the processes running now never see it, and those started
 * later are given it by whoever starts them. */
static int do_set(const char *id, const char *name, const char *spec)
{
	struct cred_policy p = { 0 };
	struct moat_error err = { 0 };
	cleanup_free char *arg = NULL, *line = NULL, *ph = NULL;
	const char *at = strrchr(spec, '@'), *body;
	struct json_object *root = NULL;
	int value_fd = -1, rc = 1;

	if (at && !strncmp(spec, "file:", 5)) {
		/* the real path: the sandbox checks its view by it */
		char real[PATH_MAX];
		cleanup_free char *path =
			strndup(spec + 5, (size_t)(at - spec - 5));
		struct stat st;

		if (!path)
			return 1;
		if (path[0] == '/' && realpath(path, real) &&
		    stat(real, &st) == 0) {
			if (S_ISREG(st.st_mode) && st.st_nlink > 1) {
				fprintf(stderr,
					"moat secret set: file:%s has %ju hard "
					"links: the guest could read it by "
					"another name: nothing sent\n",
					path, (uintmax_t)st.st_nlink);
				return 1;
			}
			if (asprintf(&arg, "%s=file:%s%s", name, real, at) < 0)
				return 1;
		}
	}
	if (!arg && asprintf(&arg, "%s=%s", name, spec) < 0)
		return 1;
	if (cred_parse_arg(&p, arg, &err) < 0 ||
	    cred_validate(&p, NULL, &err) < 0) {
		fprintf(stderr, "moat secret set: %s\n", err.msg);
		goto out;
	}
	value_fd = secret_value_memfd(p.v[0].from, &err);
	if (value_fd < 0) {
		fprintf(stderr, "moat secret set: %s: nothing sent\n", err.msg);
		goto out;
	}
	root = json_object_new_object();
	if (!root || cred_to_json(&p, root) < 0)
		goto out;
	body = json_object_to_json_string_ext(root, JSON_C_TO_STRING_PLAIN);
	if (asprintf(&line, "secret-set %zu\n%s", strlen(body), body) < 0)
		goto out;
	rc = ask(id, line, value_fd, &ph);
	if (rc == 0)
		printf("%s\n", ph);
out:
	json_object_put(root);
	if (value_fd >= 0)
		close(value_fd);
	cred_free(&p);
	return rc;
}

int cmd_secret(int argc, char **argv)
{
	const char *op = argc > 1 ? argv[1] : "";
	char line[CRED_NAME_MAX + 32];
	int value_fd, rc;

	if (!((!strcmp(op, "rotate") && argc == 5) ||
	      (!strcmp(op, "revoke") && argc == 4) ||
	      (!strcmp(op, "set") && argc == 5)))
		return usage();
	if (!control_name_ok(argv[2])) {
		fprintf(stderr, "moat secret: `%s` is not a sandbox name\n",
			argv[2]);
		return 2;
	}
	if (!secret_name_ok(argv[3])) {
		fprintf(stderr,
			"moat secret: `%s` is not a secret's name (an "
			"environment variable's)\n",
			argv[3]);
		return 2;
	}
	if (!strcmp(op, "set"))
		return do_set(argv[2], argv[3], argv[4]);
	snprintf(line, sizeof(line), "secret-%s %s\n", op, argv[3]);
	if (!strcmp(op, "revoke"))
		return ask(argv[2], line, -1, NULL);
	{
		struct moat_error err = { 0 };

		value_fd = secret_value_memfd(argv[4], &err);
		if (value_fd < 0) {
			fprintf(stderr,
				"moat secret rotate: %s: nothing sent\n",
				err.msg);
			return 1;
		}
	}
	rc = ask(argv[2], line, value_fd, NULL);
	close(value_fd);
	return rc;
}
