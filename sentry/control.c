/* sentry/control.c: a sandbox's control socket, outside the guest.
 *
 * Every sandbox listens on a socket file, mode 0600, in a directory that
 * only its owner can write (control_dir): `moat do` on DIR/ID (ID: --name,
 * or moat's pid; DIR: /run/moat for root, else $XDG_RUNTIME_DIR/moat, else
 * /tmp/moat-UID), an OCI container on ROOT/ID/ctl in its state directory
 * (cli/oci.c). Never an abstract name: any local user could bind that
 * first, and whoever holds it would be asked for policies and handed
 * exec's fds. Both ends check the other's uid (SO_PEERCRED): the server
 * serves only its own user or root, the client sends nothing to a server
 * that is neither. A `moat do` socket left by a sentry that was killed is
 * taken over by the next sandbox of that name (nobody serves it) and
 * removed by a janitor process when the sentry ends. The guests cannot
 * reach it: they have no host socket and no host path.
 *
 * One request a connection, one line each way:
 *     kill SIG [PID|all]   signal the sandbox's process PID (default 1,
 *                          its first process), or every process
 *     policy-show          the egress policy in force, as JSON
 *     policy-set LEN       followed by LEN bytes of a policy file: it
 *                          replaces the egress policy (moat policy set);
 *                          its credentials part must be the one in force
 * and for an OCI container (cli/oci.c; docs/oci.md):
 *     state                created, running, paused or stopped
 *     start                let the first process run (it waits, created,
 *                          until then: control_wait_start)
 *     ps                   "HOSTPID GUESTPID COMM" a line, per process
 *     stats                cgroup and network counters, as JSON
 *     pause, resume        freeze or thaw the guests (freezer cgroup)
 *     exec LEN             followed by LEN bytes (NUL-separated fields,
 *                          parse_exec) and carrying the stdio fds
 *                          (SCM_RIGHTS): a new process; answered
 *                          "ok GUESTPID", then "exit STATUS" when it ends;
 *                          the client hanging up kills it
 * and for a sandbox with a credential broker (sentry/brokerlink.c):
 *     secret-rotate NAME   carrying exactly one fd (SCM_RIGHTS, with the
 *                          line): a sealed memfd holding the new value,
 *                          which the CLI read (cli/secret.c); the sentry
 *                          hands it to the broker unread
 *     secret-revoke NAME   no fd
 *     secret-set LEN       followed by LEN bytes: the new credential as
 *                          a policy file writes it ({"credentials":
 *                          [one]}), and carrying one fd, the value's
 *                          sealed memfd as for rotate; answered
 *                          "ok PLACEHOLDER"
 *                          all answered once the broker has (5 s at
 *                          most)
 * Only exec, secret-rotate and secret-set may carry fds; any other
 * request that
 * comes with one is refused, and the fds are closed unused.
 * answered "ok" or "error: ..."; policy-show, ps and stats, which return
 * data, answer "ok LEN" and exactly LEN bytes (prot/control.h), so that a
 * client tells a whole answer from one cut off (send_bounded gives up on a
 * client that does not read) and never takes a part for the whole.
 * A policy that does not parse is refused with the file's own message and
 * the old one stays.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "lib/hostfile.h"
#include "netstack/netpol.h"
#include "netstack/netstack.h"
#include "prot/broker.h"
#include "prot/control.h"
#include "sentry/brokerlink.h"
#include "sentry/limits.h"
#include "sentry/control.h"
#include "sentry/pod.h"
#include "sentry/sentry.h"
#include "sentry/vfs.h"

#define CTL_CLIENTS 24
#define CTL_LINE 128
#define EXEC_BODY_MAX (1 << 20)
#define SECRET_SET_MAX (64 << 10) /* one credential's JSON */
/* fds one request may carry: a pod member's stdio, its rootfs's gofer
 * socket and one per bind (sentry/pod.h) */
#define CTL_FDS 64

static int ctl_fd = -1;
static struct {
	int fd;
	char buf[CTL_LINE];
	size_t len;
	int64_t deadline;
	/* policy-set and exec: the document, body_len of body_want */
	char *body;
	size_t body_len, body_want;
	bool exec; /* the body is an exec request */
	bool set;  /* the body is a secret-set's credential */
	/* "container": a pod member's (sentry/pod.h); member: the
	 * namespace an exec or a container runs in ("" the sandbox's) */
	bool container;
	char member[POD_NAME_MAX + 1];
	int fds[CTL_FDS]; /* exec: stdio fds sent with the request; a
			   * container's gofer sockets after them */
	int nfds;
	struct process *exec_proc; /* exec: running, answered at its end */
	bool exec_started;	   /* its "ok" is sent: it runs */
} clients[CTL_CLIENTS];

bool control_name_ok(const char *name)
{
	size_t i, n = strlen(name);

	/* A file name of its own, in the control directory: no '/', and no
	 * leading '.' (so neither "." nor ".." nor the directory's lock). */
	if (!n || n > 64 || name[0] == '.')
		return false;
	for (i = 0; i < n; i++)
		if (!((name[i] >= 'a' && name[i] <= 'z') ||
		      (name[i] >= 'A' && name[i] <= 'Z') ||
		      (name[i] >= '0' && name[i] <= '9') || name[i] == '-' ||
		      name[i] == '_' || name[i] == '.'))
			return false;
	return true;
}

/* path: a real directory (not a symbolic link), owned by the caller and
 * writable by no one else (private: nor open to anyone else at all).
 * Such a directory's entries are the caller's (or root's): nobody else can
 * plant a socket, a symbolic link or a directory of theirs in it. The
 * check is lib/hostfile.c's, as for the OCI runtime's --root. */
static int dir_check(const char *path, bool private_, struct moat_error *err)
{
	int fd = hostdir_open(path, "control directory",
			      private_ ? HOSTDIR_PRIVATE : 0, NULL, err);

	if (fd < 0)
		return fd;
	close(fd);
	return 0;
}

int control_dir(char *out, size_t cap, bool create, struct moat_error *err)
{
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	bool private_ = false;
	mode_t mode = 0700;
	int n;

	if (geteuid() == 0) {
		/* OCI containers' default --root too (their state
		 * directories, cli/oci.c): 0700, as it makes it. */
		n = snprintf(out, cap, "/run/moat");
	} else if (xdg && xdg[0] == '/') {
		if (dir_check(xdg, false, err) < 0)
			return moat_error_wrap(err, "XDG_RUNTIME_DIR");
		n = snprintf(out, cap, "%s/moat", xdg);
	} else {
		/* No runtime directory (cron, su without a login): a private
		 * one in /tmp. /tmp is sticky, so once it is ours nobody else
		 * can rename or remove it; one that someone else made first
		 * is refused, never used. */
		n = snprintf(out, cap, "/tmp/moat-%u", (unsigned)geteuid());
		private_ = true;
	}
	if (n < 0 || (size_t)n >= cap)
		return moat_error_input(err, ENAMETOOLONG,
					"control directory: too long a path");
	if (create && mkdir(out, mode) < 0 && errno != EEXIST)
		return moat_error_set(err, errno, "control directory `%s`",
				      out);
	return dir_check(out, private_, err);
}

/* addr: a socket file's path. A path too long for sun_path goes through
 * its directory, opened O_PATH: *dirfd, for the caller to close after
 * bind or connect. */
static int sock_addr(const char *addr, struct sockaddr_un *sa, socklen_t *len,
		     int *dirfd)
{
	*dirfd = -1;
	if (addr[0] != '/')
		return -EINVAL; /* no abstract names: anyone may bind one */
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	if (strlen(addr) >= sizeof(sa->sun_path)) {
		char dir[PATH_MAX];
		const char *base = strrchr(addr, '/') + 1;

		snprintf(dir, sizeof(dir), "%.*s", (int)(base - addr), addr);
		*dirfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (*dirfd < 0)
			return -errno;
		if ((size_t)snprintf(sa->sun_path, sizeof(sa->sun_path),
				     "/proc/self/fd/%d/%s", *dirfd,
				     base) >= sizeof(sa->sun_path)) {
			close(*dirfd);
			*dirfd = -1;
			return -ENAMETOOLONG;
		}
	} else {
		strcpy(sa->sun_path, addr);
	}
	*len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) +
			   strlen(sa->sun_path) + 1);
	return 0;
}

/* A connection to the socket file addr (nonblocking: a probe); fd or
 * -errno. *peer: the uid that serves it. */
static int dial(const char *addr, bool nonblock, uid_t *peer)
{
	struct sockaddr_un sa;
	struct ucred c;
	socklen_t len, cl = sizeof(c);
	int fd, dirfd, rc = sock_addr(addr, &sa, &len, &dirfd);

	if (rc < 0)
		return rc;
	fd = socket(AF_UNIX,
		    SOCK_STREAM | SOCK_CLOEXEC | (nonblock ? SOCK_NONBLOCK : 0),
		    0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, len) < 0) {
		rc = -errno;
		if (fd >= 0)
			close(fd);
		fd = rc;
	} else if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &c, &cl) < 0) {
		rc = -errno;
		close(fd);
		fd = rc;
	} else {
		*peer = c.uid;
	}
	if (dirfd >= 0)
		close(dirfd);
	return fd;
}

/* Whoever answers gets the request: a policy file, exec's fds. A socket
 * file in a directory of ours is ours or root's, but that is the file,
 * not who listens on it (a root program that dropped privileges after
 * bind, another --root): the server's uid itself is checked, before a
 * byte is sent. */
static bool peer_ok(uid_t peer)
{
	return peer == 0 || peer == geteuid();
}

int control_connect(const char *addr)
{
	uid_t peer = 0;
	int fd = dial(addr, false, &peer);

	if (fd >= 0 && !peer_ok(peer)) {
		close(fd);
		return -EPERM;
	}
	return fd;
}

int control_find(const char *name, char *out, size_t cap,
		 struct moat_error *err)
{
	char dir[PATH_MAX];
	struct stat st;
	int rc;

	if (!control_name_ok(name))
		return moat_error_input(err, EINVAL,
					"`%s` is not a sandbox name", name);
	rc = control_dir(dir, sizeof(dir), false, err);
	if (rc == -ENOENT)
		return moat_error_input(err, ENOENT, "no sandbox named `%s`",
					name);
	if (rc < 0)
		return rc;
	snprintf(out, cap, "%s/%s", dir, name);
	rc = lstat(out, &st);
	if (rc == 0 && S_ISDIR(st.st_mode)) {
		/* an OCI container of the default --root (cli/oci.c) */
		snprintf(out, cap, "%s/%s/ctl", dir, name);
		rc = lstat(out, &st);
	}
	if (rc < 0 || !S_ISSOCK(st.st_mode))
		return moat_error_input(err, ENOENT, "no sandbox named `%s`",
					name);
	return 0;
}

int control_dial(const char *name, struct moat_error *err)
{
	char path[PATH_MAX];
	uid_t peer = 0;
	int fd;

	if (control_find(name, path, sizeof(path), err) < 0)
		return -1;
	fd = dial(path, false, &peer);
	if (fd == -ECONNREFUSED)
		return moat_error_input(err, ENOENT,
					"no sandbox named `%s` (it has ended)",
					name);
	if (fd < 0)
		return moat_error_set(err, -fd, "sandbox `%s`: `%s`", name,
				      path);
	if (!peer_ok(peer)) {
		close(fd);
		return moat_error_input(err, EPERM,
					"sandbox `%s`: `%s` is served by uid "
					"%u, not by you (uid %u) or root: "
					"refused, nothing sent",
					name, path, (unsigned)peer,
					(unsigned)geteuid());
	}
	return fd;
}

/* Whether a sandbox serves the socket file path: 1, 0 (none: the file
 * of one that died, or no file), or -errno. Only a probe: it sends
 * nothing, and the sandbox drops a connection that says nothing. */
static int served(const char *path)
{
	uid_t peer;
	int fd = dial(path, true, &peer);

	if (fd >= 0) {
		close(fd);
		return 1;
	}
	if (fd == -EAGAIN) /* its backlog is full: it lives */
		return 1;
	return fd == -ECONNREFUSED || fd == -ENOENT ? 0 : fd;
}

/* The control directory's lock, held while a name is checked and taken
 * (a sandbox's setup, or its janitor), so that two sandboxes of one name
 * cannot both find the old one dead and both take its place. Only its
 * owner can open it: nobody else can hold it to stall a start. */
static int dir_lock(const char *dir, struct moat_error *err)
{
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s/.lock", dir);
	fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return moat_error_set(err, errno, "control socket lock `%s`",
				      path);
	while (flock(fd, LOCK_EX) < 0)
		if (errno != EINTR) {
			int e = errno;
			close(fd);
			return moat_error_set(err, e,
					      "control socket lock `%s`", path);
		}
	return fd;
}

/* Bind and listen on the socket file path, mode 0600 from the start (the
 * umask, not a chmod after bind: no moment when others may connect). */
static int listen_at(const char *path, struct moat_error *err)
{
	struct sockaddr_un sa;
	socklen_t len;
	mode_t old;
	int fd, dirfd, rc;

	rc = sock_addr(path, &sa, &len, &dirfd);
	if (rc < 0)
		return moat_error_set(err, -rc, "control socket `%s`", path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		rc = -errno;
		goto fail;
	}
	old = umask(0177);
	rc = bind(fd, (struct sockaddr *)&sa, len) < 0 ? -errno : 0;
	umask(old);
	if (rc < 0)
		goto fail;
	if (listen(fd, 4) < 0) {
		rc = -errno;
		goto fail;
	}
	if (dirfd >= 0)
		close(dirfd);
	ctl_fd = fd;
	return 0;
fail:
	if (fd >= 0)
		close(fd);
	if (dirfd >= 0)
		close(dirfd);
	return moat_error_set(err, -rc, "control socket `%s`", path);
}

/* Take path for sandbox name: free, or the file of a sandbox that died
 * (removed). A live sandbox of that name, or an OCI container (a state
 * directory of the same root), keeps it. Under the directory's lock. */
static int claim(const char *path, const char *name, struct moat_error *err)
{
	struct stat st;
	int rc;

	if (lstat(path, &st) < 0)
		return errno == ENOENT ?
			       0 :
			       moat_error_set(err, errno, "control socket `%s`",
					      path);
	if (S_ISDIR(st.st_mode))
		return moat_error_input(err, EEXIST,
					"--name `%s`: an OCI container of "
					"that name exists (`%s`)",
					name, path);
	if (!S_ISSOCK(st.st_mode))
		return moat_error_input(err, EEXIST,
					"control socket `%s`: something else "
					"is in the way",
					path);
	rc = served(path);
	if (rc > 0)
		return moat_error_input(
			err, EEXIST, "--name `%s`: a sandbox of that name runs",
			name);
	if (rc < 0)
		return moat_error_set(err, -rc, "control socket `%s`", path);
	if (unlink(path) < 0 && errno != ENOENT)
		return moat_error_set(err, errno, "control socket `%s`", path);
	return 0;
}

/* When the sentry is gone, however it ended, its socket file goes too
 * (else every sandbox without a name would leave one), unless a sandbox
 * of the same name has taken it since. The sentry itself cannot: its
 * seccomp filter has no unlink. */
static void start_janitor(const char *dir, const char *path)
{
	int lock, tries, rc;

	if (janitor_fork() != 0)
		return;
	/* The sentry's listening socket may close a moment after the
	 * pipe that woke us: a few tries before a live one is believed. */
	for (tries = 0; tries < 100; tries++) {
		lock = dir_lock(dir, NULL);
		if (lock < 0)
			break;
		rc = served(path);
		if (rc == 0)
			unlink(path);
		close(lock);
		if (rc <= 0)
			break;
		usleep(10000);
	}
	_exit(0);
}

int control_open(const char *name, struct moat_error *err)
{
	char dir[PATH_MAX], path[PATH_MAX + 72];
	int lock, rc;

	for (int i = 0; i < CTL_CLIENTS; i++)
		clients[i].fd = -1;
	if (!name)
		return 0;
	if (control_dir(dir, sizeof(dir), true, err) < 0)
		return -1;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	lock = dir_lock(dir, err);
	if (lock < 0)
		return -1;
	/* listening before the lock is let go: the next one to look finds
	 * this sandbox alive */
	rc = claim(path, name, err);
	if (rc == 0)
		rc = listen_at(path, err);
	close(lock);
	if (rc < 0)
		return -1;
	start_janitor(dir, path);
	return 0;
}

int control_open_addr(const char *full, struct moat_error *err)
{
	for (int i = 0; i < CTL_CLIENTS; i++)
		clients[i].fd = -1;
	if (full[0] != '/')
		return moat_error_input(
			err, EINVAL, "control socket `%s`: not a path", full);
	/* An OCI container's, in its own state directory: a file there is
	 * a dead daemon's (create made the directory). */
	unlink(full);
	return listen_at(full, err);
}

void control_close(void)
{
	int i;

	if (ctl_fd < 0)
		return;
	close(ctl_fd);
	ctl_fd = -1;
	for (i = 0; i < CTL_CLIENTS; i++)
		if (clients[i].fd >= 0) {
			close(clients[i].fd);
			clients[i].fd = -1;
		}
}

/* accept4 failed for want of an fd or of memory: the connection waits in
 * the backlog, so the socket stays readable, and polling it again at once
 * would spin. It is left out of the poll set until then. */
#define ACCEPT_BACKOFF_NS 100000000LL
static int64_t accept_paused_until;
/* the listening socket's entry in the loop's poll; NULL: accept anyway */
static struct pollfd *accept_pfd;

int64_t control_deadline(void)
{
	return accept_paused_until;
}

int control_pollfds(struct pollfd *pfds, int max)
{
	int n = 0, i;

	if (ctl_fd < 0)
		return 0;
	if (accept_paused_until && now_ns() >= accept_paused_until)
		accept_paused_until = 0;
	accept_pfd = NULL;
	if (n < max && !accept_paused_until) {
		pfds[n].fd = ctl_fd;
		pfds[n].events = POLLIN;
		pfds[n].revents = 0;
		accept_pfd = &pfds[n++];
	}
	for (i = 0; i < CTL_CLIENTS && n < max; i++)
		if (clients[i].fd >= 0) {
			pfds[n].fd = clients[i].fd;
			pfds[n].events = POLLIN;
			n++;
		}
	return n;
}

static int parse_sig(const char *s)
{
	static const struct {
		const char *name;
		int sig;
	} names[] = {
		{ "HUP", SIGHUP },   { "INT", SIGINT },	  { "QUIT", SIGQUIT },
		{ "KILL", SIGKILL }, { "USR1", SIGUSR1 }, { "USR2", SIGUSR2 },
		{ "TERM", SIGTERM }, { "CONT", SIGCONT }, { "STOP", SIGSTOP },
		{ "TSTP", SIGTSTP }, { "ALRM", SIGALRM }, { "WINCH", SIGWINCH },
	};
	char *end;
	long v;
	size_t i;

	if (!strncmp(s, "SIG", 3))
		s += 3;
	for (i = 0; i < ARRAY_SIZE(names); i++)
		if (!strcmp(s, names[i].name))
			return names[i].sig;
	v = strtol(s, &end, 10);
	return *s && !*end && v > 0 && v <= 64 ? (int)v : -1;
}

int control_parse_signal(const char *s)
{
	return parse_sig(s);
}

static void answer(int fd, const char *line)
{
	ssize_t r = write(fd, line, strlen(line));

	(void)r;
}

static void send_bounded(int fd, const char *p, size_t n)
{
	int64_t until = now_ns() + 1000000000LL;
	struct pollfd pfd = { .fd = fd, .events = POLLOUT };
	ssize_t w;

	while (n && now_ns() < until) {
		w = send(fd, p, n, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (w > 0) {
			p += w;
			n -= (size_t)w;
		} else if (w < 0 && errno != EAGAIN && errno != EINTR) {
			return;
		} else if (poll(&pfd, 1, 100) < 0 && errno != EINTR) {
			return;
		}
	}
}

/* An answer that returns data: "ok LEN" and the LEN bytes
 * (prot/control.h), so that the client can tell it whole from cut off
 * (by send_bounded giving up, say) and never reads a part as the whole. */
static void answer_body(int fd, const char *p, size_t n)
{
	char head[32];

	send_bounded(fd, head, ctl_body_head(head, sizeof(head), n));
	send_bounded(fd, p, n);
}

static void policy_show(int fd)
{
	char *doc = policy_to_json(netpol_get());

	if (!doc) {
		answer(fd, "error: out of memory\n");
		return;
	}
	/* Written whole, but never waiting long for a client that does not
	 * read: the sandbox's event loop is waiting meanwhile. The '\n' is
	 * the document's: the body is what `moat policy show` prints. */
	size_t n = strlen(doc);
	char *nl = realloc(doc, n + 2);
	if (!nl) {
		free(doc);
		answer(fd, "error: out of memory\n");
		return;
	}
	nl[n] = '\n';
	answer_body(fd, nl, n + 1);
	free(nl);
}

static void policy_set(int fd, const char *text, size_t len)
{
	struct moat_policy p = { 0 };
	struct moat_error err = { 0 };
	char msg[sizeof(err.msg) + 16];
	int revoked;

	if (policy_parse(text, len, "policy", &p, &err) < 0) {
		snprintf(msg, sizeof(msg), "error: %s\n", err.msg);
		answer(fd, msg);
		return;
	}
	/* The broker holds the values and placeholders of the credentials
	 * in force; a file may repeat them (as `policy show` wrote them),
	 * never change them. */
	if (!cred_equal(&p.cred, &netpol_get()->cred)) {
		policy_free(&p);
		answer(fd, "error: the credentials, inspect and passthrough "
			   "entries differ from those in force: credentials "
			   "change through `moat secret` (give them as "
			   "`moat policy show` does)\n");
		return;
	}
	netpol_replace(&p);
	revoked = sockets_policy_changed();
	audit_log("\"event\":\"policy-set\",\"rules\":%zu,\"revoked\":%d",
		  netpol_get()->egress.n, revoked);
	answer(fd, "ok\n");
}

/* A SIGKILL was delivered to the first process (kill KILL, alone or with
 * all): it can run no instruction more, and its death, and with it the
 * others', is only the event loop's next turn away. The container counts
 * as stopped from here, so that `moat kill ID KILL` followed by `moat
 * state ID` or `moat delete ID` never sees it running (delete waits for
 * the daemon itself). */
static bool init_killed;

/* Has the container's first process ended, or been killed? */
static bool init_ended(void)
{
	return S->init_exited || S->killed_created || init_killed;
}

static const char *status(void)
{
	if (S->created)
		return "created";
	if (init_ended())
		return "stopped";
	return S->paused ? "paused" : "running";
}

/* "ps [MEMBER]": the host pids of the guests (of that pod member's
 * alone), one a line, however many. */
static void ps(int fd, const struct mntns *ns)
{
	/* "HOSTPID GUESTPID COMM\n": two pids under 4194304, 15 bytes */
	enum {
		LINE = 7 + 1 + 7 + 1 + 15 + 1
	};
	cleanup_free char *buf = NULL;
	size_t o = 0, n = 0;
	struct process *p;

	for (p = S->procs; p; p = p->next)
		n++;
	buf = malloc(n * LINE + 1);
	if (!buf) {
		answer(fd, "error: out of memory\n");
		return;
	}
	for (p = S->procs; p; p = p->next) {
		if (p->exited || p->host_pid <= 0 || !pod_proc_in(p, ns))
			continue;
		/* comm is the guest's: one word of printable bytes here, so
		 * it cannot make a line (or a pid) of its own */
		char comm[sizeof(p->comm)];
		size_t k;
		for (k = 0; k + 1 < sizeof(comm) && p->comm[k]; k++)
			comm[k] = p->comm[k] > ' ' && p->comm[k] < 0x7f ?
					  p->comm[k] :
					  '?';
		if (!k)
			comm[k++] = '?';
		comm[k] = 0;
		int w = snprintf(buf + o, n * LINE + 1 - o, "%d %d %s\n",
				 (int)p->host_pid, p->pid, comm);
		if (w < 0 || (size_t)w >= n * LINE + 1 - o)
			break; /* never: LINE bounds every line */
		o += (size_t)w;
	}
	answer_body(fd, buf, o);
}

/* "stats": one JSON object (cli/oci.c turns it into runc's events). */
static void stats(int fd)
{
	struct limits_stats ls;
	struct netstack_counters nc = { 0 };
	char buf[512];
	int n;

	limits_stats(&ls);
	if (netstack_up())
		netstack_counters(&nc);
	n = snprintf(buf, sizeof(buf),
		     "{\"cpu_ns\":%lld,\"memory\":%lld,\"memory_max\":%lld,"
		     "\"memory_limit\":%llu,\"pids\":%lld,\"pids_limit\":%d,"
		     "\"net\":%s,\"rx_bytes\":%llu,\"rx_packets\":%llu,"
		     "\"tx_bytes\":%llu,\"tx_packets\":%llu,"
		     "\"tx_dropped\":%llu}\n",
		     (long long)ls.cpu_ns, (long long)ls.memory,
		     (long long)ls.memory_max,
		     (unsigned long long)S->opts.memory, (long long)ls.pids,
		     S->opts.pids, netstack_up() ? "true" : "false",
		     (unsigned long long)nc.rx_bytes,
		     (unsigned long long)nc.rx_frames,
		     (unsigned long long)nc.tx_bytes,
		     (unsigned long long)nc.tx_frames,
		     (unsigned long long)nc.dropped);
	if (n < 0 || (size_t)n >= sizeof(buf)) {
		answer(fd, "error: stats do not fit\n");
		return;
	}
	answer_body(fd, buf, (size_t)n);
}

/* Signals sent while paused: delivered at resume (a frozen task would
 * take none of them), as for a runc container's frozen processes. */
static struct {
	int sig;
	int pid; /* 0: every process */
} held[16];
static int nheld;

/* sig to process pid (0: every process, of pod member ns if not NULL);
 * how many got it. */
static int deliver(int sig, int pid, const struct mntns *ns)
{
	struct process *p;
	int n = 0;

	for (p = S->procs; p; p = p->next)
		if (!p->exited && (pid == 0 || p->pid == pid) &&
		    pod_proc_in(p, ns)) {
			send_signal_proc(p, sig, 0);
			n++;
		}
	return n;
}

static void deliver_held(void)
{
	int i;

	for (i = 0; i < nheld; i++)
		deliver(held[i].sig, held[i].pid, NULL);
	nheld = 0;
}

static void pause_resume(int fd, bool pause)
{
	int rc;

	if (S->created || init_ended()) {
		answer(fd, pause ? "error: container is not running\n" :
				   "error: container is not paused\n");
		return;
	}
	if (S->paused == pause) {
		answer(fd, pause ? "error: container is already paused\n" :
				   "error: container is not paused\n");
		return;
	}
	rc = limits_freeze(pause);
	if (rc == 0 && !pause)
		deliver_held();
	if (rc < 0) {
		char msg[128];
		snprintf(msg, sizeof(msg), "error: freezer: %s\n",
			 strerror(-rc));
		answer(fd, msg);
		return;
	}
	S->paused = pause;
	audit_log("\"event\":\"%s\"", pause ? "pause" : "resume");
	answer(fd, "ok\n");
}

/* A kill before `start`: the first process never ran. A signal whose
 * default is to be ignored changes nothing (as for a process that has
 * not blocked it); any other ends the container. */
static void kill_created(int fd, int sig)
{
	if (!sig_default_ignored(sig) && sig != SIGCONT) {
		S->killed_created = sig;
		S->created = false;
	}
	audit_log("\"event\":\"control-kill\",\"signal\":%d,"
		  "\"processes\":1",
		  sig);
	answer(fd, "ok\n");
}

static void handle(int fd, char *line)
{
	char *cmd = strtok(line, " \t\r\n"), *sig_s, *who, *member;
	struct process *p;
	int sig, n, pid;
	bool all;

	if (cmd && !strcmp(cmd, "policy-show")) {
		policy_show(fd);
		return;
	}
	if (cmd && !strcmp(cmd, "state")) {
		char msg[POD_NAME_MAX + 40];
		const char *name = strtok(NULL, " \t\r\n"), *st;

		st = name ? pod_member_state(name) : status();
		if (st)
			snprintf(msg, sizeof(msg), "%s\n", st);
		else
			snprintf(msg, sizeof(msg),
				 "error: no such container %.*s\n",
				 POD_NAME_MAX, name);
		answer(fd, msg);
		return;
	}
	if (cmd && !strcmp(cmd, "start")) {
		if (!S->created) {
			char msg[80];
			snprintf(msg, sizeof(msg),
				 "error: cannot start a container that is "
				 "%s\n",
				 status());
			answer(fd, msg);
			return;
		}
		S->created = false;
		audit_log("\"event\":\"start\"");
		answer(fd, "ok\n");
		return;
	}
	if (cmd && !strcmp(cmd, "ps")) {
		const char *name = strtok(NULL, " \t\r\n");

		if (name && !pod_member_state(name)) {
			answer(fd, "error: no such container\n");
			return;
		}
		/* an ended member's: none (its namespace is gone) */
		if (name && !pod_member_ns(name))
			answer_body(fd, "", 0);
		else
			ps(fd, name ? pod_member_ns(name) : NULL);
		return;
	}
	if (cmd && !strcmp(cmd, "stats")) {
		stats(fd);
		return;
	}
	if (cmd && (!strcmp(cmd, "pause") || !strcmp(cmd, "resume"))) {
		pause_resume(fd, cmd[0] == 'p');
		return;
	}
	if (!cmd || strcmp(cmd, "kill")) {
		answer(fd, "error: unknown request\n");
		return;
	}
	sig_s = strtok(NULL, " \t\r\n");
	who = strtok(NULL, " \t\r\n");
	member = who ? strtok(NULL, " \t\r\n") : NULL;
	sig = sig_s ? parse_sig(sig_s) : SIGTERM;
	if (sig < 0) {
		answer(fd, "error: no such signal\n");
		return;
	}
	if (S->created) {
		kill_created(fd, sig);
		return;
	}
	if (init_ended()) {
		answer(fd, "error: container not running\n");
		return;
	}
	all = who && !strcmp(who, "all");
	pid = all ? 0 : who ? atoi(who) : 1;
	if (member) {
		/* "kill SIG all MEMBER": that pod member's processes */
		const struct mntns *ns = pod_member_ns(member);

		n = all && ns ? deliver(sig, 0, ns) : 0;
		audit_log("\"event\":\"control-kill\",\"signal\":%d,"
			  "\"processes\":%d,\"member\":true",
			  sig, n);
		answer(fd, n ? "ok\n" : "error: no such process\n");
		return;
	}
	if (S->paused) {
		p = pid > 0 ? proc_by_pid(pid) : NULL;
		if (!all && (!p || p->exited)) {
			answer(fd, "error: no such process\n");
			return;
		}
		if (sig == SIGKILL && (all || pid == 1)) {
			/* The container is killed: a frozen task cannot die,
			 * so thaw first, as runc does. */
			if (limits_freeze(false) < 0) {
				answer(fd, "error: cannot thaw it\n");
				return;
			}
			S->paused = false;
			audit_log("\"event\":\"resume\",\"for\":\"kill\"");
			deliver_held();
		} else {
			/* held until resume, as a frozen process takes no
			 * signal */
			if (nheld == (int)ARRAY_SIZE(held)) {
				answer(fd, "error: too many signals held "
					   "while paused\n");
				return;
			}
			held[nheld].sig = sig;
			held[nheld++].pid = pid;
			audit_log("\"event\":\"control-kill\",\"signal\":%d,"
				  "\"held\":true",
				  sig);
			answer(fd, "ok\n");
			return;
		}
	}
	n = all || pid > 0 ? deliver(sig, pid, NULL) : 0;
	if (sig == SIGKILL && (all || pid == 1) && n)
		init_killed = true;
	audit_log("\"event\":\"control-kill\",\"signal\":%d,\"processes\":%d",
		  sig, n);
	answer(fd, n ? "ok\n" : "error: no such process\n");
}

static void drop_fds(int i);

/* The head line of a request with a body, in clients[i].buf: "policy-set
 * LEN", "secret-set LEN", "exec LEN [MEMBER]" or "container LEN MEMBER"
 * (sentry/pod.h). false: none of them; else true and *want its length,
 * SIZE_MAX if it was refused (answered). */
static bool body_head(int i, size_t *want)
{
	char word[16], name[POD_NAME_MAX + 2] = "", line[CTL_LINE];
	int n;

	/* the line alone: the body's first bytes may follow it */
	snprintf(line, sizeof(line), "%.*s", (int)strcspn(clients[i].buf, "\n"),
		 clients[i].buf);
	n = sscanf(line, "%15s %zu %91s", word, want, name);

	if (n < 2)
		return false;
	clients[i].exec = !strcmp(word, "exec") || !strcmp(word, "container");
	clients[i].container = !strcmp(word, "container");
	clients[i].set = !strcmp(word, "secret-set");
	if (!clients[i].exec && !clients[i].set && strcmp(word, "policy-set"))
		return false;
	if ((clients[i].container || name[0]) &&
	    (!clients[i].exec || !pod_name_ok(name))) {
		answer(clients[i].fd, "error: not a container's name\n");
		drop_fds(i);
		*want = SIZE_MAX;
		return true;
	}
	snprintf(clients[i].member, sizeof(clients[i].member), "%.*s",
		 POD_NAME_MAX, name);
	return true;
}

/* Read from client i, taking the fds a request carries (exec's stdio). */
static ssize_t client_read(int i, void *buf, size_t len)
{
	union {
		char b[CMSG_SPACE(CTL_FDS * sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = { buf, len };
	struct msghdr mh = { .msg_iov = &iov,
			     .msg_iovlen = 1,
			     .msg_control = u.b,
			     .msg_controllen = sizeof(u.b) };
	struct cmsghdr *cm;
	ssize_t r = recvmsg(clients[i].fd, &mh, MSG_CMSG_CLOEXEC);

	if (r < 0)
		return r;
	for (cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm)) {
		int n, k, fd;

		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		n = (int)((cm->cmsg_len - CMSG_LEN(0)) / sizeof(int));
		for (k = 0; k < n; k++) {
			memcpy(&fd, CMSG_DATA(cm) + (size_t)k * sizeof(int),
			       sizeof(int));
			if (clients[i].nfds < CTL_FDS)
				clients[i].fds[clients[i].nfds++] = fd;
			else
				close(fd);
		}
	}
	return r;
}

/* "exec LEN" body: NUL-terminated fields
 *     cwd uid gid NGROUPS group... ARGC arg... ENVC env...
 *     [tty [nnp [bnd eff inh prm amb]]]
 * Every count bounded, every string inside the body. */
static int parse_exec(char *body, size_t len, struct spawn_req *r, char ***argv,
		      char ***env)
{
	char *f[1], *p = body, *end = body + len; /* f[0]: the last field */
	long n, k;

	if (!len || body[len - 1])
		return -EINVAL;
#define NEXT() (p < end ? (f[0] = p, p += strlen(p) + 1, f[0]) : NULL)
	r->cwd = NEXT();
	if (!r->cwd || r->cwd[0] != '/')
		return -EINVAL;
	if (!NEXT())
		return -EINVAL;
	r->uid = (uid_t)strtoul(f[0], NULL, 10);
	if (!NEXT())
		return -EINVAL;
	r->gid = (gid_t)strtoul(f[0], NULL, 10);
	if (!NEXT() || (n = strtol(f[0], NULL, 10)) < 0 || n > 32)
		return -EINVAL;
	r->ngroups = (int)n;
	for (k = 0; k < n; k++) {
		if (!NEXT())
			return -EINVAL;
		r->groups[k] = (gid_t)strtoul(f[0], NULL, 10);
	}
	for (int list = 0; list < 2; list++) {
		char ***out = list ? env : argv;

		if (!NEXT() || (n = strtol(f[0], NULL, 10)) < 0 || n > 65536 ||
		    (!list && n == 0))
			return -EINVAL;
		*out = calloc((size_t)n + 1, sizeof(char *));
		if (!*out)
			return -ENOMEM;
		for (k = 0; k < n; k++)
			if (!((*out)[k] = NEXT()))
				return -EINVAL;
	}
	/* optional, in order: "1" for a terminal (exec -t); "1" for
	 * no_new_privs; the capability sets bounding, effective,
	 * inheritable, permitted and ambient in hex (none: root's) */
	r->tty = NEXT() && !strcmp(f[0], "1");
	r->no_new_privs = NEXT() && !strcmp(f[0], "1");
	if (NEXT()) {
		uint64_t *v[] = { &r->caps.bnd, &r->caps.eff, &r->caps.inh,
				  &r->caps.prm, &r->caps.amb };
		for (k = 0; k < 5; k++) {
			if (k && !NEXT())
				return -EINVAL;
			*v[k] = strtoull(f[0], NULL, 16) & MOAT_CAP_ALL;
		}
		/* what capset keeps true (oci/config.c checks the rest) */
		r->caps.eff &= r->caps.prm;
		r->caps.amb &= r->caps.prm & r->caps.inh;
		r->set_caps = true;
	}
#undef NEXT
	r->argv = *argv;
	r->env = *env;
	return 0;
}

/* The namespace client i's exec or container runs in (*ns, NULL: the
 * sandbox's), made for a container: 0, or -1 and msg. *off: where the
 * exec's fields begin in the body; *used: the fds taken. */
static int exec_ns(int i, struct mntns **ns, size_t *off, int *used,
		   bool *own_pids, char *msg, size_t cap)
{
	struct moat_error err = { 0 };
	const char *name = clients[i].member;

	*ns = NULL;
	*off = 0;
	*used = 0;
	if (clients[i].container) {
		if (pod_member_new(name, clients[i].body, clients[i].body_len,
				   clients[i].fds, clients[i].nfds, used, off,
				   ns, own_pids, &err) == 0)
			return 0;
		snprintf(msg, cap, "error: %s\n", err.msg);
		return -1;
	}
	if (name[0] && !(*ns = pod_member_ns(name))) {
		snprintf(msg, cap, "error: no such container %s\n", name);
		return -1;
	}
	return 0;
}

/* Start what client i asked for; true when it is done with. */
static bool exec_start(int i)
{
	struct spawn_req r = { 0 };
	struct process *p = NULL;
	struct mntns *ns = NULL;
	char **argv = NULL, **env = NULL,
	     msg[sizeof(((struct moat_error *)0)->msg) + 16];
	size_t off = 0;
	int rc, k, used = 0;

	for (k = 0; k < 3; k++)
		r.fds[k] = k < clients[i].nfds ? clients[i].fds[k] : -1;
	for (k = 0, rc = 0; k < CTL_CLIENTS; k++)
		rc += clients[k].fd >= 0 && clients[k].exec_proc != NULL;
	if (rc >= CTL_CLIENTS - 8) {
		/* the last slots stay for kill, state, ps, pause... */
		answer(clients[i].fd, "error: exec: too many at once\n");
		rc = -1;
	} else if (S->created || init_ended() || S->paused) {
		snprintf(msg, sizeof(msg),
			 "error: cannot exec in a container that is %s\n",
			 status());
		answer(clients[i].fd, msg);
		rc = -1;
	} else if (exec_ns(i, &ns, &off, &used, &r.new_pidns, msg,
			   sizeof(msg)) < 0) {
		answer(clients[i].fd, msg);
		rc = -1;
	} else {
		rc = parse_exec(clients[i].body + off,
				clients[i].body_len - off, &r, &argv, &env);
		r.ns = ns;
		if (rc == 0)
			rc = sentry_spawn(&r, &p);
		if (rc < 0) {
			snprintf(msg, sizeof(msg), "error: exec `%s`: %s\n",
				 argv && argv[0] ? argv[0] : "?",
				 strerror(-rc));
			answer(clients[i].fd, msg);
			if (clients[i].container)
				pod_member_abort(ns);
		} else if (clients[i].container) {
			pod_member_started(ns, p);
		}
	}
	vfs_ns_enter(NULL);
	free(argv);
	free(env);
	/* The sentry holds its own opens of them now; a container's gofer
	 * sockets that it took are its mounts'. */
	for (k = 0; k < clients[i].nfds; k++)
		if (k < 3 || k >= used)
			close(clients[i].fds[k]);
	clients[i].nfds = 0;
	free(clients[i].body);
	clients[i].body = NULL;
	if (rc < 0)
		return true;
	/* "ok" once the process exists on the host (control_proc_started). */
	clients[i].exec_proc = p;
	clients[i].exec_started = false;
	return false;
}

void control_proc_started(struct process *p)
{
	char msg[32];
	int i;

	for (i = 0; i < CTL_CLIENTS; i++)
		if (clients[i].fd >= 0 && clients[i].exec_proc == p) {
			snprintf(msg, sizeof(msg), "ok %d\n", p->pid);
			answer(clients[i].fd, msg);
			clients[i].exec_started = true;
		}
}

void control_proc_exited(struct process *p)
{
	char msg[48];
	int i;

	pod_proc_exited(p);
	for (i = 0; i < CTL_CLIENTS; i++)
		if (clients[i].fd >= 0 && clients[i].exec_proc == p) {
			if (clients[i].exec_started)
				snprintf(msg, sizeof(msg), "exit %d\n",
					 p->exit_status);
			else
				snprintf(msg, sizeof(msg),
					 "error: exec: it did not start\n");
			answer(clients[i].fd, msg);
			clients[i].exec_proc = NULL;
			close(clients[i].fd);
			clients[i].fd = -1;
		}
}

/* Close the fds client i sent. */
static void drop_fds(int i)
{
	while (clients[i].nfds > 0)
		close(clients[i].fds[--clients[i].nfds]);
}

/* Did client i send fds with a request that takes none? Then it is
 * refused (answered), and they are closed: an fd that nobody asked for
 * is never kept, and never read. */
static bool fds_refused(int i)
{
	if (!clients[i].nfds)
		return false;
	drop_fds(i);
	answer(clients[i].fd, "error: this request takes no file "
			      "descriptors\n");
	return true;
}

/* "secret-rotate NAME" (one fd) or "secret-revoke NAME" (none), the line
 * in clients[i].buf: handed to the broker, which answers client i
 * later (broker_secret keeps its own hold of the connection), or refused
 * now. Every fd the client sent is given away or closed here. */
static void secret_request(int i)
{
	char *line = clients[i].buf, *name, *end;
	bool rotate = !strncmp(line, "secret-rotate ", 14);
	char msg[256];
	int value_fd = -1;

	name = line + 14;
	end = name + strcspn(name, " \t\r\n");
	if (end == name || strspn(end, "\r\n") != strlen(end)) {
		drop_fds(i);
		answer(clients[i].fd, "error: secret: one name expected\n");
		return;
	}
	*end = 0;
	if (clients[i].nfds != (rotate ? 1 : 0)) {
		drop_fds(i);
		answer(clients[i].fd,
		       rotate ? "error: secret-rotate: exactly one file "
				"descriptor (the value's) expected\n" :
				"error: secret-revoke takes no file "
				"descriptors\n");
		return;
	}
	if (rotate) {
		value_fd = clients[i].fds[0];
		clients[i].nfds = 0;
	}
	if (S->created || S->paused) {
		/* the broker's answers are read by the running loop */
		if (value_fd >= 0)
			close(value_fd);
		snprintf(msg, sizeof(msg),
			 "error: secret: the sandbox is %s: it must run\n",
			 status());
		answer(clients[i].fd, msg);
		return;
	}
	if (broker_secret(clients[i].fd,
			  rotate ? BRK_SECRET_ROTATE : BRK_SECRET_REVOKE, name,
			  NULL, value_fd, msg, sizeof(msg)) < 0)
		answer(clients[i].fd, msg);
}

/* "secret-set LEN" and its body, the credential's JSON (one fd: the
 * value's memfd): handed to the broker as secret_request hands the
 * others; broker_secret parses and checks the whole of it. */
static bool secret_set_request(int i)
{
	char msg[512];
	int value_fd;

	if (clients[i].nfds != 1) {
		drop_fds(i);
		answer(clients[i].fd, "error: secret-set: exactly one file "
				      "descriptor (the value's) expected\n");
		return true;
	}
	value_fd = clients[i].fds[0];
	clients[i].nfds = 0;
	clients[i].body[clients[i].body_len] = 0;
	if (memchr(clients[i].body, 0, clients[i].body_len)) {
		close(value_fd);
		answer(clients[i].fd, "error: secret-set: a NUL in the body\n");
		return true;
	}
	if (S->created || S->paused) {
		close(value_fd);
		snprintf(msg, sizeof(msg),
			 "error: secret: the sandbox is %s: it must run\n",
			 status());
		answer(clients[i].fd, msg);
		return true;
	}
	if (broker_secret(clients[i].fd, BRK_SECRET_SET, NULL, clients[i].body,
			  value_fd, msg, sizeof(msg)) < 0)
		answer(clients[i].fd, msg);
	return true;
}

/* Read what client i sent; true when it is done with (answered or not). */
static bool client_pump(int i)
{
	ssize_t r;
	char *nl;
	size_t want;

	if (clients[i].exec_proc) {
		/* Its process runs; the client going away kills it. */
		char c;
		r = read(clients[i].fd, &c, 1);
		if (r == 0 || (r < 0 && errno != EAGAIN)) {
			/* (a pod member runs on without its anchor: `moat
			 * state` and `kill` still reach it) */
			if (clients[i].exec_started && !clients[i].container)
				send_signal_proc(clients[i].exec_proc, SIGKILL,
						 0);
			else if (!clients[i].exec_started)
				sentry_spawn_cancel(clients[i].exec_proc);
			clients[i].exec_proc = NULL;
			return true;
		}
		return false;
	}
	if (clients[i].body) {
		r = client_read(i, clients[i].body + clients[i].body_len,
				clients[i].body_want - clients[i].body_len);
		if (r > 0)
			clients[i].body_len += (size_t)r;
		if (clients[i].body_len == clients[i].body_want) {
			if (clients[i].exec)
				return exec_start(i);
			if (clients[i].set)
				return secret_set_request(i);
			if (!fds_refused(i))
				policy_set(clients[i].fd, clients[i].body,
					   clients[i].body_len);
			return true;
		}
		return r == 0 || (r < 0 && errno != EAGAIN) ||
		       now_ns() > clients[i].deadline;
	}
	r = client_read(i, clients[i].buf + clients[i].len,
			sizeof(clients[i].buf) - 1 - clients[i].len);
	if (r > 0)
		clients[i].len += (size_t)r;
	clients[i].buf[clients[i].len] = 0;
	nl = strchr(clients[i].buf, '\n');
	if (nl && (!strncmp(clients[i].buf, "secret-rotate ", 14) ||
		   !strncmp(clients[i].buf, "secret-revoke ", 14))) {
		secret_request(i);
		return true;
	}
	if (nl && strncmp(clients[i].buf, "exec ", 5) != 0 &&
	    strncmp(clients[i].buf, "container ", 10) != 0 &&
	    strncmp(clients[i].buf, "secret-set ", 11) != 0 && fds_refused(i))
		return true;
	if (nl && body_head(i, &want)) {
		size_t got = clients[i].len - (size_t)(nl + 1 - clients[i].buf);

		if (want == SIZE_MAX) /* answered */
			return true;
		if (want > (clients[i].exec ? EXEC_BODY_MAX :
			    clients[i].set  ? SECRET_SET_MAX :
					      POLICY_FILE_MAX) ||
		    got > want) {
			answer(clients[i].fd, "error: bad length\n");
			return true;
		}
		clients[i].body = malloc(want + 1); /* + a NUL for secret-set */
		if (!clients[i].body) {
			answer(clients[i].fd, "error: out of memory\n");
			return true;
		}
		memcpy(clients[i].body, nl + 1, got);
		clients[i].body_len = got;
		clients[i].body_want = want;
		clients[i].deadline = now_ns() + 5000000000LL;
		if (got == want) {
			if (clients[i].exec)
				return exec_start(i);
			if (clients[i].set)
				return secret_set_request(i);
			if (!fds_refused(i))
				policy_set(clients[i].fd, clients[i].body, got);
			return true;
		}
		return false;
	}
	if (nl || r == 0 || (r < 0 && errno != EAGAIN) ||
	    clients[i].len == sizeof(clients[i].buf) - 1 ||
	    now_ns() > clients[i].deadline) {
		if (nl)
			handle(clients[i].fd, clients[i].buf);
		drop_fds(i);
		return true;
	}
	return false;
}

ssize_t control_read_reply(int fd, bool framed, char **out, int timeout_ms)
{
	/* a line answer is short: more than its bound is no answer */
	size_t cap = framed ? CTL_LINE_MAX + CTL_BODY_MAX : CTL_LINE_MAX;
	int64_t deadline = now_ns() + (int64_t)timeout_ms * 1000000;
	size_t n = 0, size = 0;
	cleanup_free char *buf = NULL;
	const char *body;
	size_t blen;
	ssize_t r;
	int kind;

	*out = NULL;
	for (;;) {
		struct pollfd p = { fd, POLLIN, 0 };
		int64_t left = deadline - now_ns();
		char *nl;

		if (n == size) {
			char *nb;
			if (size > cap)
				return -EPROTO;
			size = size ? size * 2 : 512;
			nb = realloc(buf, size + 1);
			if (!nb)
				return -ENOMEM;
			buf = nb;
		}
		/* One deadline for the whole answer, not one a read: a
		 * sentry that sends a byte at a time does not hold the
		 * caller for longer. */
		if (left <= 0)
			return n ? -EPROTO : -ETIMEDOUT;
		r = poll(&p, 1, (int)((left + 999999) / 1000000));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			continue; /* the deadline, seen above */
		r = read(fd, buf + n, size - n);
		if (r == 0)
			break;
		if (r < 0 &&
		    (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK))
			continue;
		if (r < 0)
			return n ? -EPROTO : -errno;
		n += (size_t)r;
		/* Its header says how much follows: no more than that and
		 * one byte (which makes it malformed) is read. */
		nl = memchr(buf, '\n', n);
		if (nl) {
			size_t line = (size_t)(nl - buf) + 1;
			unsigned long len;

			if (!framed || ctl_word_uint(buf, line - 1, "ok",
						     CTL_BODY_MAX, &len) < 0) {
				if (n > line)
					return -EPROTO; /* a line, then more */
			} else if (n > line + len) {
				return -EPROTO;
			}
		}
	}
	if (!n)
		return -ETIMEDOUT; /* hung up on: no answer at all */
	kind = ctl_reply_parse(buf, n, framed, &body, &blen);
	if (kind < 0)
		return kind;
	/* the answer alone, as a C string, at the start of buf */
	memmove(buf, body, blen);
	buf[blen] = 0;
	/* A line is a message the caller may print: nothing in it drives
	 * the terminal (a lying sentry's escapes). */
	if (kind == CTL_REPLY_LINE)
		ctl_printable(buf, blen);
	*out = steal_pointer(&buf);
	return (ssize_t)blen;
}

ssize_t control_call(const char *full, const void *req, size_t len, bool framed,
		     char **reply, int timeout_s)
{
	struct timeval tv = { timeout_s, 0 };
	ssize_t r;
	int fd = control_connect(full);

	*reply = NULL;
	if (fd < 0)
		return fd;
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	/* MSG_NOSIGNAL: a sentry that is ending closes the connections it
	 * has not served yet, and the caller (moat state, delete) must live
	 * to tell a stopped container from that, not die of SIGPIPE */
	for (size_t off = 0; off < len;) {
		r = send(fd, (const char *)req + off, len - off, MSG_NOSIGNAL);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			close(fd);
			return -EPIPE;
		}
		off += (size_t)r;
	}
	r = control_read_reply(fd, framed, reply, timeout_s * 1000);
	close(fd);
	return r;
}

void control_wait_resume(void)
{
	struct pollfd pfds[CTL_CLIENTS + 1];

	while (S->paused) {
		int n = control_pollfds(pfds, (int)ARRAY_SIZE(pfds));

		poll(pfds, (nfds_t)n, 1000);
		control_pump();
		/* --timeout still ends it: thawed, so it can die */
		if (S->paused && S->deadline_ns && now_ns() > S->deadline_ns) {
			limits_freeze(false);
			S->paused = false;
		}
	}
}

int control_wait_start(int ready_fd)
{
	struct pollfd pfds[CTL_CLIENTS + 1];

	S->created = true;
	if (ready_fd > 2) {
		if (write(ready_fd, "ok\n", 3) != 3) {
			/* the creator is gone: still created, as runc's is */
		}
		close(ready_fd);
		S->opts.ready_fd = -1;
	}
	while (S->created) {
		int n = control_pollfds(pfds, (int)ARRAY_SIZE(pfds));

		if (sentry_term) {
			/* moat delete: it ends unstarted, as a kill does */
			S->killed_created = SIGKILL;
			break;
		}
		if (n == 0)
			return -1; /* no control socket: nobody can start it */
		poll(pfds, (nfds_t)n, 1000);
		control_pump();
	}
	return S->killed_created;
}

void control_pump(void)
{
	bool ready = !accept_pfd || accept_pfd->revents;
	int i, fd;

	accept_pfd = NULL;
	if (ctl_fd < 0)
		return;
	/* no accept4 a turn of the loop: only when one is waiting */
	errno = 0;
	while (ready && !accept_paused_until &&
	       (fd = accept4(ctl_fd, NULL, NULL,
			     SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
		struct ucred c;
		socklen_t cl = sizeof(c);
		/* The socket's mode says so already; this holds whatever
		 * its mode or directory became (a chmod, a bind mount). */
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &c, &cl) < 0 ||
		    !peer_ok(c.uid)) {
			close(fd);
			continue;
		}
		for (i = 0; i < CTL_CLIENTS && clients[i].fd >= 0; i++)
			;
		if (i == CTL_CLIENTS) {
			close(fd);
			continue;
		}
		clients[i].fd = fd;
		clients[i].len = 0;
		clients[i].nfds = 0;
		clients[i].exec = false;
		clients[i].set = false;
		clients[i].container = false;
		clients[i].member[0] = 0;
		clients[i].exec_proc = NULL;
		clients[i].exec_started = false;
		clients[i].deadline = now_ns() + 2000000000LL;
	}
	if (!accept_paused_until && (errno == EMFILE || errno == ENFILE ||
				     errno == ENOBUFS || errno == ENOMEM))
		accept_paused_until = now_ns() + ACCEPT_BACKOFF_NS;
	for (i = 0; i < CTL_CLIENTS; i++)
		if (clients[i].fd >= 0 && client_pump(i)) {
			close(clients[i].fd);
			clients[i].fd = -1;
			free(clients[i].body);
			clients[i].body = NULL;
			drop_fds(i);
		}
}
