/* gofer/spawn.c: start a `moat gofer` (gofer/spawn.h). */
#include "gofer/spawn.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

/* Is st the host's own root directory? */
static bool is_host_root(const struct stat *st)
{
	struct stat hroot;

	return stat("/", &hroot) == 0 && hroot.st_dev == st->st_dev &&
	       hroot.st_ino == st->st_ino;
}

/* The child: never returns. */
__attribute__((noreturn)) static void exec_gofer(const char *root,
						 const struct gofer_spawn *o,
						 const struct stat *st, bool as,
						 int sock)
{
	char fdbuf[16], asbuf[32], expbuf[48];
	char *args[] = { "moat", "gofer", "--root",   (char *)root,
			 "--fd", fdbuf,	  "--expect", expbuf,
			 NULL,	 NULL,	  NULL,	      NULL };
	int n = 8;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (dup2(sock, 3) < 0)
		_exit(126);
	snprintf(fdbuf, sizeof(fdbuf), "3");
	/* What was checked is what is served: the gofer refuses a tree
	 * that is not this directory (a link swapped in). */
	snprintf(expbuf, sizeof(expbuf), "%llu:%llu",
		 (unsigned long long)st->st_dev,
		 (unsigned long long)st->st_ino);
	if (as) {
		snprintf(asbuf, sizeof(asbuf), "%u:%u", (unsigned)o->as_uid,
			 (unsigned)o->as_gid);
		args[n++] = "--as";
		args[n++] = asbuf;
	}
	/* Only a `--mount ...:rw` gofer may change its tree as the guest
	 * asks; the store's makes and removes flat files. */
	if (o->kind == GOFER_RW)
		args[n++] = "--rw";
	if (o->kind == GOFER_FOR_STORE)
		args[n++] = "--store";
	if (o->cpus)
		sched_setaffinity(0, sizeof(*o->cpus), o->cpus);
	execv("/proc/self/exe", args);
	_exit(126);
}

pid_t gofer_spawn(const char *root, const struct gofer_spawn *o, int *sock_out,
		  struct moat_error *err)
{
	struct stat st;
	bool as;
	int sv[2];
	pid_t pid;

	/* Checked here for a clear message; the gofer checks again,
	 * confined. A mount's may be one regular file (a file bind mount);
	 * a FIFO, socket or device would be the host's node itself, which
	 * the sentry's VFS cannot serve. */
	if (stat(root, &st) < 0)
		return moat_error_set(err, errno, "gofer: open `%s`", root);
	if (S_ISREG(st.st_mode) && o->kind == GOFER_FOR_STORE)
		return moat_error_set(err, ENOTDIR, "gofer: open `%s`", root);
	if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode))
		return moat_error_input(err, EINVAL,
					"`%s` is %s: moat binds regular files "
					"and directories only",
					root, file_type_name(st.st_mode));
	/* The host's own root: served as a uid that owns no host file. */
	as = o->kind == GOFER_RO && is_host_root(&st);
	if (as && !o->has_as)
		return moat_error_input(err, EPERM,
					"`%s` is the host's /: not served here",
					root);
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return moat_error_set(err, errno, "gofer: socketpair");
	pid = fork();
	if (pid < 0) {
		int e = errno;
		close(sv[0]);
		close(sv[1]);
		return moat_error_set(err, e, "gofer: fork");
	}
	if (pid == 0)
		exec_gofer(root, o, &st, as, sv[1]);
	close(sv[1]);
	*sock_out = sv[0];
	return pid;
}
