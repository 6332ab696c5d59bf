/* cli/oci.h: what cli/oci.c (moat as an OCI runtime) shares with
 * cli/pod.c (a pod's member containers, which run in their pod's
 * sandbox). Internal to cli/. */
#ifndef MOAT_CLI_OCI_H
#define MOAT_CLI_OCI_H

#include <json-c/json.h>
#include <limits.h>
#include <stdbool.h>
#include <sys/types.h>

#include "lib/util.h"
#include "oci/config.h"
#include "sentry/sentry.h"

/* A container's state (ROOT/ID/state.json), loaded. */
struct cstate {
	char *id, *bundle, *rootfs, *created, *owner;
	pid_t pid; /* the daemon, or a pod member's anchor */
	unsigned long long start;
	json_object *annotations; /* owned */
	json_object *cgroups;	  /* owned: moatCgroups, or NULL */
	char ctl[PATH_MAX + 8];	  /* the control socket (a member: its pod's) */
	int dirfd;		  /* ROOT/ID, owned; -1 when none */
	/* A pod's member (moatPod): its pod's sandbox container, that
	 * one's daemon (0: gone) and the member's first process in it (0:
	 * not started); else all NULL and 0. */
	char *pod;
	pid_t pod_pid;
	unsigned long long pod_start;
	unsigned long vpid;
};

struct launch {
	const char *id, *bundle, *pid_file, *console_socket;
	char (*cgdirs)[PATH_MAX]; /* the sandbox's cgroups (limits_oci_dirs) */
	int ncgdirs;
	bool detach;	     /* a session of its own (create, run -d) */
	bool own_terminal;   /* run, in the foreground: this terminal */
	struct oci_config c; /* out */
	pid_t pid;	     /* out: the daemon, or a member's anchor */
	int dirfd;	     /* ROOT/ID, made by launch_sandbox */
};

/* An error of the command: on stderr and in --log. Returns 1. */
int fail(const char *fmt, ...) MOAT_PRINTF(1, 2);
void debug(const char *fmt, ...) MOAT_PRINTF(1, 2);
/* --root as given, for messages. */
const char *oci_root(void);
/* The checked --root's fd (create: made if missing), or -1. */
int root_dir(bool create);
/* A file of container id's state directory, by --root's real path
 * (for a socket: connect(2) takes a name). */
void state_path(const char *id, const char *name, char *out, size_t cap);
/* The process's fds of the runtime (--root's, --log's), closed: a
 * daemon or an anchor holds none of them. */
void oci_drop_runtime_fds(void);

unsigned long long proc_start(pid_t pid);
int cstate_load(const char *id, struct cstate *s);
void cstate_free(struct cstate *s);
bool daemon_alive(const struct cstate *s);
char *state_json(const struct cstate *s, const char *status, bool pretty);
int run_hooks(const struct cstate *s, int kind, const char *name,
	      const char *status);
int request(struct cstate *s, const char *req);
void wait_gone(const struct cstate *s, int timeout_ms);
int guest_of(pid_t daemon, pid_t pid);

/* create's parts */
int write_state(int dirfd, const char *id, struct oci_config *c,
		char (*cgdirs)[PATH_MAX], int ncgdirs, const char *pod);
int open_exit(int dirfd);
int fd_above_stdio(int fd);
/* ROOT/ID made (0700) with the bundle's config.json in it: its fd, or
 * -1, said (nothing left behind). */
int state_make(const char *id, const char *bundle);
void remove_state(const char *id);
/* A pty for process.terminal, its master sent to --console-socket: the
 * slave, or -1 said (state removed). */
int console_make(struct launch *l);
/* After the daemon's or anchor's fork: its "ok" on ready, the prestart
 * and createRuntime hooks, the pid file; on failure pid is killed and
 * the state removed. 0 or 1 (said). */
int launch_wait(struct launch *l, pid_t pid, int ready);
/* The fork of a container's daemon or anchor, with a pipe for its "ok":
 * in the child 0 (ready[1] its end), in the parent its pid (ready[0]
 * ours), or -1, said, and l's state removed. */
pid_t fork_ready(struct launch *l, int ready[2]);

/* The request body of the sentry's "exec" (and of a member's
 * "container", after its mounts): NUL-separated fields. */
/* A request body of NUL-terminated fields, grown as put (b: malloc'd,
 * the caller's; abort on ENOMEM, as xmalloc). */
struct fields {
	char *b;
	size_t n, cap;
};
void fields_put(struct fields *f, const char *str);
void fields_putf(struct fields *f, const char *fmt, ...) MOAT_PRINTF(2, 3);
/* exec's fields of pr (sentry/control.c parse_exec), put after f's */
void exec_fields(struct fields *f, const struct oci_process *pr);
char *exec_body(const struct oci_process *pr, size_t *len);

/* A process asked of a sentry (exec, a member's container), and its
 * signals passed on until it ends. */
struct relay {
	const char *ctl; /* the sentry's control socket */
	const char *id;	 /* the container, for messages */
	const char *head;
	const char *body;
	size_t len;
	const int *fds; /* its stdio, then any others the request takes */
	int nfds;
	int notify; /* > 2: "ok" or the error once it runs, closed then */
	int dirfd;  /* >= 0: its guest pid written there ("vpid") first */
};
/* 0 once it ran, with *wstatus its wait status (-1: the sandbox ended
 * under it); -1 when it did not run (said on notify, or by fail). */
int relay_run(const struct relay *r, int *wstatus);

/* ---- cli/pod.c ---- */

/* Is config c (of container id) a pod's member? 0 with *sid (the caller's
 * to free) its pod's sandbox container, or NULL: not a member; -1 with
 * err: it names a pod, or an ipc or uts namespace, that is no running
 * moat container's. */
int pod_of(const struct oci_config *c, const char *id, char **sid,
	   struct moat_error *err);
/* cstate_load's part for a member (s->pod set): its pod's daemon, its
 * first process's vpid. */
void pod_load(struct cstate *s);
const char *pod_status(const struct cstate *s);
/* create of a member of pod sid: its anchor (l->pid). 0 or 1, said. */
int pod_launch(struct launch *l, struct sentry_opts *o, const char *sid);
int pod_start(struct cstate *s);
int pod_kill(struct cstate *s, const char *sig, bool all);
/* delete: the member's processes and its anchor ended. */
void pod_end(struct cstate *s);
/* How many processes member s has; -1: unknown. */
long pod_nprocs(struct cstate *s);

#endif
