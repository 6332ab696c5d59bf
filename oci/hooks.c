/* oci/hooks.c: OCI hooks, run on the host with the container's state on
 * their stdin (runtime-spec, "POSIX-platform Hooks"). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include "oci/config.h"

static int run_one(const struct oci_hook *h, const char *state,
		   struct moat_error *err)
{
	char *const none[] = { NULL };
	char *argv0[] = { h->path, NULL };
	int in[2], st = 0;
	int64_t waited_ms = 0;
	pid_t pid;

	if (pipe2(in, O_CLOEXEC) < 0)
		return moat_error_set(err, errno, "hook `%s`", h->path);
	pid = fork();
	if (pid < 0) {
		close(in[0]);
		close(in[1]);
		return moat_error_set(err, errno, "hook `%s`: fork", h->path);
	}
	if (pid == 0) {
		if (dup2(in[0], 0) < 0)
			_exit(127);
		/* A hook's output is the caller's; its stdout must not
		 * corrupt a reply on ours (runc runs hooks the same way). */
		dup2(2, 1);
		execve(h->path, h->args ? h->args : argv0,
		       h->env ? h->env : none);
		fprintf(stderr, "moat: hook `%s`: %s\n", h->path,
			strerror(errno));
		_exit(127);
	}
	close(in[0]);
	signal(SIGPIPE, SIG_IGN);
	if (write_all(in[1], state, strlen(state)) < 0 && errno != EPIPE) {
		/* the hook need not read its stdin */
	}
	close(in[1]);
	for (;;) {
		pid_t w = waitpid(pid, &st, h->timeout ? WNOHANG : 0);
		if (w == pid)
			break;
		if (w < 0 && errno != EINTR)
			return moat_error_set(err, errno, "hook `%s`", h->path);
		if (h->timeout && waited_ms >= (int64_t)h->timeout * 1000) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			return moat_error_input(err, ETIMEDOUT,
						"hook `%s`: timed out after "
						"%d s",
						h->path, h->timeout);
		}
		if (h->timeout) {
			poll(NULL, 0, 10);
			waited_ms += 10;
		}
	}
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return 0;
	if (WIFSIGNALED(st))
		return moat_error_input(err, ECHILD,
					"hook `%s`: killed by signal %d",
					h->path, WTERMSIG(st));
	return moat_error_input(err, ECHILD, "hook `%s`: exit status %d",
				h->path, WEXITSTATUS(st));
}

int oci_hooks_run(const struct oci_hooks *hooks, const char *kind_name,
		  const char *state, struct moat_error *err)
{
	size_t i;

	for (i = 0; i < hooks->n; i++)
		if (run_one(&hooks->h[i], state, err) < 0) {
			moat_error_wrap(err, "%s", kind_name);
			return -1;
		}
	return 0;
}
