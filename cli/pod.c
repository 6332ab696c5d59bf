/* cli/pod.c: a pod's member containers (docs/kubernetes.md).
 *
 * A pod is one sandbox: its sandbox (pause, infra) container is an
 * ordinary container of cli/oci.c, whose daemon is the pod's sentry. A
 * member (a workload container: containerd's CRI annotations, podman's,
 * or namespace paths that name a moat container's daemon) starts no
 * sentry. `create` forks an anchor instead, the container's pid for its
 * engine:
 *   - it joins the pod daemon's network, IPC and UTS namespaces, so that
 *     /proc/PID/ns/net of the pid create reports is the pod's;
 *   - it starts the member's gofers (its rootfs read-only, one per bind,
 *     gofer/spawn.h), which die with it;
 *   - it waits on ROOT/ID/anchor (a socket of mode 0600) for `start`,
 *     then sends the pod's sentry the `container` request
 *     (/work/notes/pod-protocol.md: stdio, the gofers' sockets, the
 *     mounts and the process), and passes the signals it gets to the
 *     member's first process until that one's "exit STATUS";
 *   - it ends as that process did (its exit code, or its signal), so the
 *     shim that reaps it learns how the container ended; 137 if the pod's
 *     sentry went away.
 * ROOT/ID/state.json names the pod ("moatPod") and the anchor's pid;
 * ROOT/ID/vpid holds the first process's pid in the sentry once it runs.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/oci.h"
#include "gofer/spawn.h"
#include "lib/hostfile.h"
#include "sentry/control.h"
#include "sentry/vfs.h"

/* The protocol's bounds: 64 fds in all (stdio, the rootfs's), so 60
 * mounts. */
#define POD_FDS_MAX SEND_FDS_MAX
#define POD_MOUNTS_MAX 60

/* ---- who is a member -------------------------------------------------- */

static const char *annotation(const struct oci_config *c, const char *key)
{
	for (size_t i = 0; i < c->nannotations; i++)
		if (!strcmp(c->annotations[i].key, key))
			return c->annotations[i].value;
	return NULL;
}

/* The pod that container id (a running moat container) is or is in:
 * its ID, the caller's to free, or NULL. */
static char *pod_through(const char *id)
{
	struct cstate s;
	char *pod = NULL;

	if (cstate_load(id, &s) < 0)
		return NULL;
	if (daemon_alive(&s))
		pod = xstrdup(s.pod ? s.pod : s.id);
	cstate_free(&s);
	return pod;
}

/* The running moat container under --root whose daemon (or anchor) is
 * pid: its pod's ID (the caller's), or NULL. */
static char *pod_of_pid(pid_t pid)
{
	int root = root_dir(false);
	struct dirent *e;
	char *pod = NULL;
	DIR *d;

	if (root < 0 || !(d = fdopendir(dup(root))))
		return NULL;
	rewinddir(d); /* the dup shares the offset of an earlier walk */
	while (!pod && (e = readdir(d))) {
		struct cstate s;

		if (e->d_name[0] == '.' || cstate_load(e->d_name, &s) < 0)
			continue;
		if (s.pid == pid && daemon_alive(&s))
			pod = xstrdup(s.pod ? s.pod : s.id);
		cstate_free(&s);
	}
	closedir(d);
	return pod;
}

/* PID of a path /proc/PID/ns/KIND, or 0. */
static pid_t proc_ns_pid(const char *path)
{
	char kind[8], end;
	int pid;

	if (sscanf(path, "/proc/%d/ns/%7[a-z]%c", &pid, kind, &end) != 2 ||
	    pid <= 0)
		return 0;
	return (pid_t)pid;
}

/* The name /proc/PID/ns/ gives a namespace of nstype (one a member may
 * join: ipc, uts or pid). */
static const char *ns_kind(int nstype)
{
	return nstype == CLONE_NEWIPC ? "ipc" :
	       nstype == CLONE_NEWUTS ? "uts" :
					"pid";
}

/* The general rule: namespace paths /proc/PID/ns/{net,ipc,uts,pid} where PID
 * is a running moat container's (podman's pods, and containerd's).
 * 0 with *sid or NULL; an ipc or uts path that is no pod's is refused,
 * a network one is a namespace's of the host (a CNI's: docs/oci.md). */
static int pod_by_ns(const struct oci_config *c, char **sid,
		     struct moat_error *err)
{
	for (size_t i = 0; i < c->nnspaths; i++) {
		const struct oci_nspath *np = &c->nspaths[i];
		pid_t pid = proc_ns_pid(np->path);
		char *pod = pid ? pod_of_pid(pid) : NULL;

		if (pod && *sid && strcmp(pod, *sid)) {
			moat_error_input(
				err, EINVAL,
				"config.json: linux.namespaces[%zu]."
				"path `%s`: of pod `%s`, where another "
				"namespace is pod `%s`'s",
				np->index, np->path, pod, *sid);
			free(pod);
			free(*sid);
			*sid = NULL;
			return -1;
		}
		if (pod) {
			free(*sid);
			*sid = pod;
		} else if (np->nstype != CLONE_NEWNET) {
			free(*sid);
			*sid = NULL;
			return moat_error_input(
				err, EINVAL,
				"config.json: linux.namespaces[%zu].path `%s`: "
				"joining an existing %s namespace is not "
				"supported by moat (the sandbox is a kernel of "
				"its own) but a pod's: the path must be "
				"/proc/PID/ns/%s of a running moat container "
				"under --root `%s`",
				np->index, np->path, ns_kind(np->nstype),
				ns_kind(np->nstype), oci_root());
		}
	}
	return 0;
}

int pod_of(const struct oci_config *c, const char *id, char **sid,
	   struct moat_error *err)
{
	const char *type = annotation(c, "io.kubernetes.cri.container-type");
	const char *sb = annotation(c, "io.kubernetes.cri.sandbox-id");
	const char *ptype = annotation(c, "io.kubernetes.cri-o.ContainerType");
	const char *psb = annotation(c, "io.kubernetes.cri-o.SandboxID");

	*sid = NULL;
	/* containerd's CRI: the pod's sandbox container must be ours */
	if (type && !strcmp(type, "container")) {
		if (!sb || !*sb)
			return moat_error_input(
				err, EINVAL,
				"config.json: annotations: "
				"io.kubernetes.cri.container-type is "
				"`container` without "
				"io.kubernetes.cri.sandbox-id");
		*sid = strcmp(sb, id) ? pod_through(sb) : NULL;
		if (!*sid)
			return moat_error_input(
				err, ESRCH,
				"config.json: annotations: "
				"io.kubernetes.cri.sandbox-id `%s`: the pod's "
				"sandbox container is not a running moat "
				"container under --root `%s`",
				sb, oci_root());
		return 0;
	}
	if (type && !strcmp(type, "sandbox")) {
		if (pod_by_ns(c, sid, err) < 0)
			return -1;
		if (!*sid)
			return 0;
		free(*sid);
		*sid = NULL;
		return moat_error_input(
			err, EINVAL,
			"config.json: a pod's sandbox container "
			"joins no other pod's namespaces");
	}
	/* podman (CRI-O's names): its infra container, when the pod has
	 * one; a pod without one shares nothing */
	if (ptype && !strcmp(ptype, "container") && psb && strcmp(psb, id))
		*sid = pod_through(psb);
	return pod_by_ns(c, sid, err);
}

/* ---- state ------------------------------------------------------------ */

void pod_load(struct cstate *s)
{
	struct cstate p;
	char buf[32];
	int fd;
	ssize_t n;

	if (cstate_load(s->pod, &p) == 0) {
		if (daemon_alive(&p)) {
			s->pod_pid = p.pid;
			s->pod_start = p.start;
		}
		cstate_free(&p);
	}
	fd = openat(s->dirfd, "vpid", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n > 0) {
		buf[n] = 0;
		s->vpid = strtoul(buf, NULL, 10);
	}
}

static bool pod_alive(const struct cstate *s)
{
	return s->pod_pid > 0 && proc_start(s->pod_pid) == s->pod_start;
}

/* Has the anchor written its exit status? */
static bool anchor_ended(const struct cstate *s)
{
	struct stat st;

	return fstatat(s->dirfd, "exit", &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	       st.st_size > 0;
}

const char *pod_status(const struct cstate *s)
{
	cleanup_free char *reply = NULL;
	char req[128];
	ssize_t n;

	if (!daemon_alive(s) || anchor_ended(s) || !pod_alive(s))
		return "stopped";
	if (!s->vpid)
		return "created"; /* its anchor waits for start */
	snprintf(req, sizeof(req), "state %s\n", s->id);
	n = control_call(s->ctl, req, strlen(req), false, &reply, 5);
	return n > 0 && !strcmp(reply, "running") ? "running" : "stopped";
}

/* ---- the anchor --------------------------------------------------------- */

struct anchor {
	struct launch *l;
	struct sentry_opts *o;
	const char *sid;
	char ctl[PATH_MAX + 8]; /* the pod's control socket */
	int ns[3];		/* the pod daemon's net, ipc, uts */
	int podfd;		/* a pidfd of the pod's daemon */
	int stdio[3];
	int socks[POD_FDS_MAX]; /* stdio, then the gofers' sockets */
	int nsocks;
	int exit_fd;
};

/* Signals the anchor takes: before start, one that a waiting process
 * would not ignore ends it; after, each is passed on. */
static const int anchor_sigs[] = { SIGHUP,   SIGINT,  SIGQUIT, SIGABRT,
				   SIGUSR1,  SIGUSR2, SIGALRM, SIGTERM,
				   SIGWINCH, SIGCONT, SIGURG };

static bool ignored_by_default(int sig)
{
	return sig == SIGWINCH || sig == SIGCONT || sig == SIGURG ||
	       sig == SIGCHLD;
}

/* Its end, as the member's first process's: status a wait status, or
 * -1 (the pod's sandbox went away: 137, as a SIGKILL). */
__attribute__((noreturn)) static void anchor_end(struct anchor *a, int status)
{
	int code = status < 0	       ? 137 :
		   WIFEXITED(status)   ? WEXITSTATUS(status) :
		   WIFSIGNALED(status) ? 128 + WTERMSIG(status) :
					 1;
	sigset_t set;

	if (a->exit_fd >= 0)
		dprintf(a->exit_fd, "%d\n", code);
	if (status >= 0 && WIFSIGNALED(status)) {
		/* the same signal, without a core file of the anchor's */
		struct rlimit none = { 0, 0 };
		int sig = WTERMSIG(status);

		setrlimit(RLIMIT_CORE, &none);
		signal(sig, SIG_DFL);
		sigemptyset(&set);
		sigaddset(&set, sig);
		sigprocmask(SIG_UNBLOCK, &set, NULL);
		raise(sig);
	}
	_exit(code);
}

/* The container request's body: the mounts, the paths, the process. */
static char *container_body(const struct anchor *a, size_t *len)
{
	const struct sentry_opts *o = a->o;
	struct fields f = { 0 };
	size_t i, nro = 0, nmask = 0;
	bool share_pids = false;

	fields_put(&f, o->rootfs_ro ? "1" : "0");
	fields_putf(&f, "%zu", o->norder);
	for (i = 0; i < o->norder; i++) {
		if (o->order[i].kind == MOUNT_DIR) {
			const struct mount_spec *m = &o->mounts[o->order[i].i];
			fields_put(&f, "bind");
			fields_put(&f, m->dst);
			fields_put(&f, m->mode == MNT_RW ? "rw" : "ro");
			fields_put(&f, m->noexec ? "1" : "0");
			continue;
		}
		const struct tmpfs_spec *t = &o->tmpfs[o->order[i].i];
		fields_put(&f, "tmpfs");
		fields_put(&f, t->dst);
		fields_putf(&f, "%llu", (unsigned long long)t->size);
		fields_putf(&f, "%o", (unsigned)t->mode);
		fields_putf(&f, "%u", (unsigned)t->uid);
		fields_putf(&f, "%u", (unsigned)t->gid);
		fields_put(&f, t->ro ? "1" : "0");
		fields_put(&f, t->noexec ? "1" : "0");
		fields_put(&f, t->src ? t->src : "");
	}
	while (o->readonly_paths && o->readonly_paths[nro])
		nro++;
	fields_putf(&f, "%zu", nro);
	for (i = 0; i < nro; i++)
		fields_put(&f, o->readonly_paths[i]);
	while (o->masked_paths && o->masked_paths[nmask])
		nmask++;
	fields_putf(&f, "%zu", nmask);
	for (i = 0; i < nmask; i++)
		fields_put(&f, o->masked_paths[i]);
	/* a pid namespace of its own, unless it joins the pod's (a path:
	 * Kubernetes' shareProcessNamespace) */
	for (i = 0; i < a->l->c.nnspaths; i++)
		share_pids |= a->l->c.nspaths[i].nstype == CLONE_NEWPID;
	fields_put(&f, share_pids ? "0" : "1");
	exec_fields(&f, &a->l->c.process);
	*len = f.n;
	return f.b;
}

/* The member's gofers: its rootfs's (read-only), then one per bind in
 * the config's order (the body's), their sockets after stdio. 0, or -1
 * with err. They die with the anchor (PR_SET_PDEATHSIG). */
static int anchor_gofers(struct anchor *a, struct moat_error *err)
{
	struct gofer_spawn gs = { .kind = GOFER_RO };
	const struct sentry_opts *o = a->o;

	if (gofer_spawn(o->rootfs, &gs, &a->socks[3], err) < 0)
		return moat_error_wrap(err, "root.path");
	a->nsocks = 4;
	for (size_t i = 0; i < o->norder; i++) {
		const struct mount_spec *m;

		if (o->order[i].kind != MOUNT_DIR)
			continue;
		m = &o->mounts[o->order[i].i];
		gs.kind = m->mode == MNT_RW ? GOFER_RW : GOFER_RO;
		if (gofer_spawn(m->src, &gs, &a->socks[a->nsocks], err) < 0)
			return moat_error_wrap(err, "mount at `%s`", m->dst);
		a->nsocks++;
	}
	return 0;
}

/* ROOT/ID/anchor, listening, 0600: `moat start` connects there. */
static int anchor_listen(int dirfd, struct moat_error *err)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	mode_t old = umask(077);
	int rc;

	snprintf(sa.sun_path, sizeof(sa.sun_path), "/proc/self/fd/%d/anchor",
		 dirfd);
	rc = fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
			     listen(fd, 8) < 0 ?
		     -errno :
		     0;
	umask(old);
	if (rc < 0) {
		if (fd >= 0)
			close(fd);
		return moat_error_set(err, -rc, "anchor socket");
	}
	fchmodat(dirfd, "anchor", 0600, 0);
	return fd;
}

/* Join the pod, start the gofers, listen: 0, or -1 with err. */
static int anchor_setup(struct anchor *a, int *lfd, struct moat_error *err)
{
	static const char *const kinds[] = { "net", "ipc", "uts" };
	struct launch *l = a->l;

	for (int i = 0; i < 3; i++)
		if (setns(a->ns[i], 0) < 0)
			return moat_error_set(err, errno,
					      "joining pod `%s`'s %s namespace",
					      a->sid, kinds[i]);
	if (write_state(l->dirfd, l->id, &l->c, NULL, 0, a->sid) < 0)
		return moat_error_set(err, errno, "state of `%s`", l->id);
	a->exit_fd = open_exit(l->dirfd);
	if (anchor_gofers(a, err) < 0)
		return -1;
	*lfd = anchor_listen(l->dirfd, err);
	return *lfd < 0 ? -1 : 0;
}

/* One `moat start`: its line read (root's or our own uid's only), the
 * container asked for, and the answer sent there by relay_run. Returns
 * only if the client was not one to start it. */
static void anchor_serve(struct anchor *a, int lfd)
{
	cleanup_free char *body = NULL;
	struct timeval tv = { 5, 0 };
	struct ucred cr = { 0 };
	socklen_t cl = sizeof(cr);
	char line[16] = "", head[160];
	struct relay r = { .ctl = a->ctl,
			   .id = a->l->id,
			   .head = head,
			   .fds = a->socks,
			   .nfds = a->nsocks,
			   .dirfd = a->l->dirfd };
	int c = accept4(lfd, NULL, NULL, SOCK_CLOEXEC), status;
	ssize_t n;

	if (c < 0)
		return;
	if (getsockopt(c, SOL_SOCKET, SO_PEERCRED, &cr, &cl) < 0 ||
	    (cr.uid != 0 && cr.uid != geteuid())) {
		close(c);
		return;
	}
	setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	n = read(c, line, sizeof(line) - 1);
	if (n != 6 || memcmp(line, "start\n", 6)) {
		dprintf(c, "error: unknown request\n");
		close(c);
		return;
	}
	c = fd_above_stdio(c);
	close(lfd);
	unlinkat(a->l->dirfd, "anchor", 0);
	body = container_body(a, &r.len);
	r.body = body;
	r.notify = c;
	snprintf(head, sizeof(head), "container %zu %s\n", r.len, a->l->id);
	if (relay_run(&r, &status) < 0)
		anchor_end(a, 125 << 8);
	anchor_end(a, status);
}

/* The anchor: in the pod, waiting for `start`, then the member's
 * stand-in. Never returns. */
__attribute__((noreturn)) static void anchor_main(struct anchor *a, int ready)
{
	struct moat_error err = { 0 };
	sigset_t set;
	int lfd = -1, sfd;

	setsid();
	ready = fd_above_stdio(ready);
	sigemptyset(&set);
	for (size_t k = 0; k < ARRAY_SIZE(anchor_sigs); k++)
		sigaddset(&set, anchor_sigs[k]);
	sigprocmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	sfd = signalfd(-1, &set, SFD_CLOEXEC);
	if (anchor_setup(a, &lfd, &err) < 0) {
		dprintf(ready, "error: %s\n", err.msg);
		_exit(125);
	}
	for (int i = 0; i < 3; i++)
		close(a->ns[i]);
	oci_drop_runtime_fds();
	dprintf(ready, "ok\n");
	close(ready);
	for (;;) {
		struct pollfd pf[3] = { { lfd, POLLIN, 0 },
					{ sfd, POLLIN, 0 },
					{ a->podfd, POLLIN, 0 } };
		struct signalfd_siginfo si;

		if (poll(pf, 3, -1) < 0)
			continue;
		if (pf[2].revents)
			anchor_end(a, -1); /* the pod's sentry is gone */
		if ((pf[1].revents & POLLIN) &&
		    read(sfd, &si, sizeof(si)) == sizeof(si) &&
		    !ignored_by_default((int)si.ssi_signo))
			anchor_end(a, (int)si.ssi_signo); /* a wait status */
		if (pf[0].revents & POLLIN)
			anchor_serve(a, lfd);
	}
}

/* The pod's daemon, held: a pidfd and its namespaces, opened and then
 * checked to be that process's still (a pid reused in between fails).
 * 0, or 1 said. */
static int pod_hold(struct anchor *a)
{
	static const char *const kinds[] = { "net", "ipc", "uts" };
	struct cstate p;
	char path[64];
	int rc = 0;

	if (cstate_load(a->sid, &p) < 0)
		return fail("pod `%s`: no such container", a->sid);
	a->podfd = (int)syscall(SYS_pidfd_open, p.pid, 0);
	for (int i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "/proc/%d/ns/%s", (int)p.pid,
			 kinds[i]);
		a->ns[i] = open(path, O_RDONLY | O_CLOEXEC);
		if (a->ns[i] < 0)
			rc = 1;
	}
	if (a->podfd < 0 || rc || !daemon_alive(&p))
		rc = fail("pod `%s`: its sandbox is not running", a->sid);
	state_path(a->sid, "ctl", a->ctl, sizeof(a->ctl));
	cstate_free(&p);
	return rc;
}

/* stdio of the member's first process: the engine's (ours), or a pty
 * whose master went to --console-socket; the exec request's "tty" field
 * has the sentry relay a terminal of its own to it, as for exec -t. */
static int pod_stdio(struct anchor *a)
{
	struct launch *l = a->l;

	for (int i = 0; i < 3; i++)
		a->socks[i] = i;
	if (!l->c.process.terminal || !l->console_socket)
		return 0;
	a->socks[0] = console_make(l);
	if (a->socks[0] < 0)
		return 1;
	a->socks[0] = fd_above_stdio(a->socks[0]);
	a->socks[1] = a->socks[2] = a->socks[0];
	return 0;
}

int pod_launch(struct launch *l, struct sentry_opts *o, const char *sid)
{
	struct anchor a = { .l = l, .o = o, .sid = sid, .exit_fd = -1 };
	size_t nbinds = o->nmounts;
	int ready[2];
	pid_t pid;

	if (o->norder > POD_MOUNTS_MAX || nbinds + 4 > POD_FDS_MAX)
		return fail("config.json: mounts: a pod's member may have %d "
			    "at most",
			    POD_MOUNTS_MAX);
	if (pod_hold(&a))
		return 1;
	l->dirfd = state_make(l->id, l->c.bundle);
	if (l->dirfd < 0 || pod_stdio(&a))
		return 1;
	pid = fork_ready(l, ready);
	if (pid < 0)
		return 1;
	if (pid == 0)
		anchor_main(&a, ready[1]);
	close(l->dirfd);
	l->dirfd = -1;
	if (a.socks[0] > 2)
		close(a.socks[0]);
	debug("container %s: a member of pod %s", l->id, sid);
	return launch_wait(l, pid, ready[0]);
}

/* ---- start, kill, delete, ps ---------------------------------------------- */

int pod_start(struct cstate *s)
{
	cleanup_free char *reply = NULL;
	char path[PATH_MAX + 16];
	ssize_t n;

	state_path(s->id, "anchor", path, sizeof(path));
	n = control_call(path, "start\n", 6, false, &reply, 60);
	if (n < 0)
		return fail("container `%s`: its anchor does not answer (%s)",
			    s->id, strerror((int)-n));
	if (strcmp(reply, "ok"))
		return fail("%s",
			    strncmp(reply, "error: ", 7) ? reply : reply + 7);
	return 0;
}

/* sig to the anchor itself, through a pidfd of the process that is the
 * container's still: 0 or -errno. */
static int anchor_signal(const struct cstate *s, int sig)
{
	int fd = (int)syscall(SYS_pidfd_open, s->pid, 0), rc = 0;

	if (fd < 0)
		return -errno;
	if (!daemon_alive(s))
		rc = -ESRCH;
	else if (syscall(SYS_pidfd_send_signal, fd, sig, NULL, 0) < 0)
		rc = -errno;
	close(fd);
	return rc;
}

int pod_kill(struct cstate *s, const char *sig_s, bool all)
{
	int sig = control_parse_signal(sig_s);
	const char *st = pod_status(s);
	char req[160];
	int rc;

	if (!strcmp(st, "stopped"))
		return fail("container not running");
	if (!strcmp(st, "created")) {
		/* it never ran: the anchor ends, as a waiting process would
		 * on any signal it does not ignore */
		rc = anchor_signal(s, sig);
		if (rc < 0)
			return fail("container not running");
		if (!ignored_by_default(sig))
			wait_gone(s, 2000);
		return 0;
	}
	if (all)
		snprintf(req, sizeof(req), "kill %d all %s\n", sig, s->id);
	else
		snprintf(req, sizeof(req), "kill %d %lu\n", sig, s->vpid);
	rc = request(s, req);
	/* stopped once kill returns, as any container's after a SIGKILL:
	 * the anchor ends on the first process's "exit" */
	if (!rc && sig == SIGKILL)
		wait_gone(s, 2000);
	return rc;
}

void pod_end(struct cstate *s)
{
	char req[160];

	if (!daemon_alive(s))
		return;
	if (s->vpid && pod_alive(s)) {
		snprintf(req, sizeof(req), "kill KILL all %s\n", s->id);
		cleanup_free char *reply = NULL;
		control_call(s->ctl, req, strlen(req), false, &reply, 5);
		wait_gone(s, 2000);
	}
	if (daemon_alive(s)) {
		anchor_signal(s, SIGKILL);
		wait_gone(s, 10000);
	}
}

long pod_nprocs(struct cstate *s)
{
	cleanup_free char *reply = NULL;
	char req[128];
	ssize_t n;
	long k = 0;

	snprintf(req, sizeof(req), "ps %s\n", s->id);
	n = control_call(s->ctl, req, strlen(req), true, &reply, 5);
	if (n < 0 || !strncmp(reply, "error: ", 7))
		return -1;
	for (ssize_t i = 0; i < n; i++)
		k += reply[i] == '\n';
	return k;
}
