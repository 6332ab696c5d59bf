/* sentry/brokerlink.c: the broker process, its messages, and the relay of
 * the flows it takes (sentry/brokerlink.h, prot/broker.h). */
#include "sentry/brokerlink.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "netstack/resolver.h"
#include "policy/credentials.h"
#include "prot/broker.h"
#include "netstack/netpol.h"
#include "sentry/audit.h"
#include "sentry/fs_tmpfs.h"
#include "sentry/limits.h"
#include "sentry/overlay.h"
#include "sentry/sentry.h"
#include "sentry/vfs.h"

#define BRK_START_MS 10000	      /* the broker's start, at most */
#define BFLOW_MAX 256		      /* flows at once (the broker's cap too) */
#define BFLOW_GUEST_QUEUE (256 << 10) /* broker -> guest bytes queued */
#define BFLOW_LINGER_NS (30LL * 1000000000) /* after the guest went */
#define BFLOW_IO 65536

/* One end of a flow, as epoll names it. */
struct bend {
	struct bflow *b;
	bool up; /* the upstream's side, else the guest's */
};

struct bflow {
	struct bflow *next, **pprev;
	uint64_t id;
	struct ns_conn *c; /* the upstream connection; NULL once closed */
	bool c_dead;	   /* lwIP freed its pcb (reset, timeout) */
	void *owner;	   /* the guest's socket; NULL once it went */
	const struct bflow_guest_ops *gops;
	int gfd, ufd; /* our ends of the pairs; -1 once closed */
	struct bend gend, uend;
	uint32_t gev, uev; /* epoll interest now */
	/* lwIP -> ufd: what ufd did not take yet (a window at most: lwIP's
	 * window opens only as these go) */
	uint8_t *pend;
	size_t npend, cap;
	bool up_fin;	 /* lwIP had the peer's FIN: shut ufd after pend */
	bool guest_full; /* the guest's queue is full: gfd not read */
	bool up_full;	 /* lwIP has no room: ufd not read */
	bool guest_wait; /* a guest send found gfd full */
	bool gfd_eof;	 /* the broker will send the guest no more */
	bool up_eof;	 /* nor upstream */
	int64_t linger_until;
	bool dead; /* freed at the end of the pump */
	/* where it goes, and whose: a policy change checks the flows
	 * whose guest socket went (broker_policy_changed) */
	struct sockaddr_storage dst;
	socklen_t dstlen;
	int pid;
};

static struct {
	bool wanted; /* started: flows fail closed once it is gone */
	bool up;
	pid_t pid;
	int ctl;
	int ep;
	/* their entries in the loop's poll (NULL: look anyway), so that a
	 * turn of the loop with nothing for them makes no call */
	struct pollfd *ctl_pfd, *ep_pfd;
	char *ca;
	size_t ca_len;
	char **names, **placeholders;
	size_t n;
	const struct cred_policy *policy;
	uint64_t next_id;
	struct bflow *flows;
	size_t nflows;
	uint8_t *msg;	   /* BRK_MSG_MAX */
	int fds[CRED_MAX]; /* fd: sources, until BRK_CONFIG takes them */
	int nfds;
} B = { .pid = -1, .ctl = -1, .ep = -1 };

bool broker_active(void)
{
	return B.up;
}

bool broker_wanted(void)
{
	return B.wanted;
}

/* ---- messages ------------------------------------------------------------- */

static int brk_send(uint32_t type, const void *a, size_t alen, const void *b,
		    size_t blen, const int *fds, int nfds)
{
	struct brk_hdr h = { .type = type, .len = (uint32_t)(alen + blen) };
	struct iovec iov[3] = { { &h, sizeof(h) },
				{ (void *)a, alen },
				{ (void *)b, blen } };

	if (sizeof(h) + alen + blen > BRK_MSG_MAX)
		return -EMSGSIZE;
	if (send_with_fds(B.ctl, iov, 3, fds, nfds) < 0)
		return -errno;
	return 0;
}

/* One message into B.msg: its type and payload length, 0 when none is
 * waiting, -1 at the link's end or on a malformed one. Any fd that comes
 * along is closed: the broker sends none. */
static int brk_recv(uint32_t *type, size_t *len, int flags)
{
	char cbuf[CMSG_SPACE(sizeof(int) * 8)];
	struct iovec iov = { B.msg, BRK_MSG_MAX };
	struct msghdr mh = { .msg_iov = &iov,
			     .msg_iovlen = 1,
			     .msg_control = cbuf,
			     .msg_controllen = sizeof(cbuf) };
	struct brk_hdr h;
	struct cmsghdr *cm;
	ssize_t n = recvmsg(B.ctl, &mh, flags | MSG_CMSG_CLOEXEC);

	if (n < 0)
		return errno == EAGAIN || errno == EINTR ? 0 : -1;
	for (cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm)) {
		if (cm->cmsg_level == SOL_SOCKET &&
		    cm->cmsg_type == SCM_RIGHTS) {
			int *fd = (int *)CMSG_DATA(cm);
			size_t k = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
			for (size_t i = 0; i < k; i++)
				close(fd[i]);
		}
	}
	if (n == 0 || (size_t)n < sizeof(h) || (mh.msg_flags & MSG_TRUNC))
		return -1;
	memcpy(&h, B.msg, sizeof(h));
	if (h.len != (size_t)n - sizeof(h))
		return -1;
	memmove(B.msg, B.msg + sizeof(h), h.len);
	B.msg[h.len] = 0; /* room: BRK_MSG_MAX holds the header too */
	*type = h.type;
	*len = h.len;
	return 1;
}

/* An audit record's members from the broker: written only when they are
 * one JSON-safe line (no control character, no brace that would end the
 * record early), under the sandbox's limits for the network class. */
static void brk_audit(const char *m, size_t len)
{
	const char *verdict;

	/* NUL-terminated (prot/broker.h): the NUL is the payload's last
	 * byte, and the only one */
	if (len < 2 || m[len - 1] || strlen(m) != len - 1)
		return;
	len--;
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)m[i] < 0x20)
			return;
	verdict = strstr(m, "\"verdict\":\"blocked\"") ? "blocked" : "swapped";
	audit_guest(AUDIT_NET,
		    netpol_audit_kind("credential", "tcp",
				      !strcmp(verdict, "swapped"), "rule"),
		    "%s", m);
}

static void secret_abandon(const char *why);
static void secret_done(const uint8_t *m, size_t len);
static void secret_tick(void);

/* The broker went away: nothing more goes to it, and every flow it had
 * ends (its guests see the connection close). */
static void brk_gone(const char *why)
{
	struct bflow *b;

	if (!B.up)
		return;
	B.up = false;
	secret_abandon("the sandbox's broker is gone");
	audit_log("\"event\":\"broker-down\",\"reason\":\"%s\"", why);
	for (b = B.flows; b; b = b->next)
		bflow_abort(b);
}

/* ---- start ---------------------------------------------------------------- */

/* The environment entry "VAR=..." of the caller, or NULL. */
static char *env_entry(const char *var)
{
	extern char **environ;
	size_t n = strlen(var);

	for (char **e = environ; e && *e; e++)
		if (!strncmp(*e, var, n) && (*e)[n] == '=')
			return *e;
	return NULL;
}

/* Wipe an `env:` source from the sentry's environment: its bytes (which
 * /proc/PID/environ would show) and the entry. */
static void env_wipe(const char *var)
{
	char *e;

	while ((e = env_entry(var))) {
		explicit_bzero(e + strlen(var) + 1,
			       strlen(e + strlen(var) + 1));
		unsetenv(var);
	}
}

static bool wants_broker(const struct sentry_opts *opts)
{
	const struct cred_policy *p = &opts->policy.cred;

	return opts->broker || p->n > 0 || p->ninspect > 0;
}

/* Is the host directory dir (an ancestor of a source) the same as the
 * --mount source msrc: by name, or by inode (a bind of it under another
 * name on the host)? */
static bool same_dir(const char *dir, const struct stat *dst, const char *msrc)
{
	struct stat ms;

	if (!strcmp(dir, msrc))
		return true;
	return stat(msrc, &ms) == 0 && ms.st_dev == dst->st_dev &&
	       ms.st_ino == dst->st_ino;
}

/* A `file:` source is whited out in the guest's view of the rootfs
 * (broker_write_ca) under its one name. Refused when the guest's tree has
 * another way to it: a hard link (a name elsewhere that no whiteout
 * covers), a --mount (or a bundle's bind) of it (a file bind mount) or
 * of a directory above it, or a --rootfs (a bundle's root) above it, which shows it under another name than its host one.
 * real is the source's path with its links resolved; stat alone is used
 * (`moat secret set` checks here under the sentry's seccomp filter). */
static int real_source_elsewhere(const struct sentry_opts *opts,
				 const struct credential *c, const char *real,
				 struct moat_error *err)
{
	char dir[PATH_MAX];
	struct stat st, ds, rs, hs;
	bool own_root, in_root = false;

	if (stat(real, &st) < 0)
		return 0; /* the broker reports a source it cannot read */
	/* the host's / as the rootfs: the name is the guest's too, and the
	 * whiteout (or, for a set, the look-up of the name) covers it */
	own_root = opts->rootfs && stat(opts->rootfs, &rs) == 0 &&
		   stat("/", &hs) == 0 &&
		   (rs.st_dev != hs.st_dev || rs.st_ino != hs.st_ino);
	if (!S_ISDIR(st.st_mode) && st.st_nlink > 1)
		return moat_error_input(err, EPERM,
					"--secret %s: file:%s has %ju hard "
					"links: the guest could read it by "
					"another name",
					c->name, c->src,
					(uintmax_t)st.st_nlink);
	snprintf(dir, sizeof(dir), "%s", real);
	for (;;) {
		const struct stat *cur = &st;

		if (strcmp(dir, real)) {
			if (stat(dir[0] ? dir : "/", &ds) < 0)
				break;
			cur = &ds;
		}
		for (size_t i = 0; i < opts->nmounts; i++)
			if (same_dir(dir[0] ? dir : "/", cur,
				     opts->mounts[i].src))
				return moat_error_input(
					err, EPERM,
					"--secret %s: file:%s would be in "
					"the guest's view: --mount %s:%s "
					"shows it",
					c->name, c->src, opts->mounts[i].src,
					opts->mounts[i].dst);
		if (own_root && same_dir(dir[0] ? dir : "/", cur, opts->rootfs))
			in_root = true;
		if (!dir[0])
			break;
		*strrchr(dir, '/') = 0;
	}
	if (in_root)
		return moat_error_input(err, EPERM,
					"--secret %s: file:%s would be in the "
					"guest's view: it is in the rootfs %s",
					c->name, c->src, opts->rootfs);
	return 0;
}

static int source_elsewhere(const struct sentry_opts *opts,
			    const struct credential *c, struct moat_error *err)
{
	char real[PATH_MAX];

	if (!realpath(c->src, real))
		return 0; /* the broker reports a source it cannot read */
	return real_source_elsewhere(opts, c, real, err);
}

static int await_ready(struct moat_error *err)
{
	int64_t deadline = now_ns() + (int64_t)BRK_START_MS * 1000000;
	size_t got = 0;

	for (;;) {
		struct pollfd pfd = { B.ctl, POLLIN, 0 };
		int64_t left = deadline - now_ns();
		uint32_t type;
		size_t len;
		int rc;

		if (left <= 0)
			return moat_error_set(err, ETIMEDOUT,
					      "broker: did not start");
		if (poll(&pfd, 1, (int)(left / 1000000) + 1) < 0 &&
		    errno != EINTR)
			return moat_error_set(err, errno, "broker: poll");
		rc = brk_recv(&type, &len, MSG_DONTWAIT);
		if (rc == 0)
			continue;
		if (rc < 0)
			return moat_error_set(err, EPIPE,
					      "broker: ended before it was "
					      "ready");
		switch (type) {
		case BRK_CA:
			free(B.ca);
			B.ca = xmalloc(len + 1);
			memcpy(B.ca, B.msg, len + 1);
			B.ca_len = len;
			break;
		case BRK_PLACEHOLDER: {
			const char *name = (const char *)B.msg;
			size_t nl = strnlen(name, len);
			const char *ph = name + nl + 1;

			if (nl >= len || got >= B.n ||
			    strcmp(name, B.names[got]) ||
			    strnlen(ph, len - nl - 1) != len - nl - 2 || !*ph)
				return moat_error_set(err, EPROTO,
						      "broker: bad placeholder "
						      "message");
			B.placeholders[got++] = xstrdup(ph);
			break;
		}
		case BRK_READY:
			if (got != B.n || !B.ca)
				return moat_error_set(err, EPROTO,
						      "broker: ready before "
						      "its CA and "
						      "placeholders");
			return 0;
		case BRK_FAIL:
			return moat_error_set(err, EINVAL, "%.*s",
					      (int)strnlen((char *)B.msg, len),
					      (char *)B.msg);
		case BRK_AUDIT:
			brk_audit((const char *)B.msg, len);
			break;
		default:
			return moat_error_set(err, EPROTO,
					      "broker: unexpected message %u",
					      type);
		}
	}
}

int broker_spawn(struct sentry_opts *opts, struct moat_error *err)
{
	const struct cred_policy *cp = &opts->policy.cred;
	char *args[] = { "moat", "broker", "--ctl", "3", "--as", "late", NULL };
	int sv[2];
	char **envp;
	size_t ne = 0;
	pid_t pid;

	if (!wants_broker(opts))
		return 0;
	B.wanted = true;
	B.n = cp->n;
	B.names = xcalloc(cp->n + 1, sizeof(char *));
	B.placeholders = xcalloc(cp->n + 1, sizeof(char *));
	envp = xcalloc(cp->n + 1, sizeof(char *));
	for (size_t i = 0; i < cp->n; i++) {
		const struct credential *c = &cp->v[i];

		B.names[i] = c->name; /* the strings stay where netpol_set
				       * moves the policy */
		if (c->source == CRED_FROM_ENV) {
			char *e = env_entry(c->src);
			if (!e) {
				free(envp);
				return moat_error_set(err, ENOENT,
						      "--secret %s: env:%s is "
						      "not set",
						      c->name, c->src);
			}
			envp[ne++] = e;
		} else if (c->source == CRED_FROM_FILE &&
			   source_elsewhere(opts, c, err) < 0) {
			free(envp);
			return -1;
		} else if (c->source == CRED_FROM_FD) {
			if (fcntl(c->fd, F_GETFD) < 0) {
				free(envp);
				return moat_error_set(err, EBADF,
						      "--secret %s: fd:%d is "
						      "not open",
						      c->name, c->fd);
			}
			B.fds[B.nfds++] = c->fd;
		}
	}
	B.msg = xmalloc(BRK_MSG_MAX + 1);
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		free(envp);
		return moat_error_set(err, errno, "broker: socketpair");
	}
	pid = fork();
	if (pid < 0) {
		free(envp);
		return moat_error_set(err, errno, "broker: fork");
	}
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (dup2(sv[1], 3) < 0 || fcntl(3, F_SETFD, 0) < 0)
			_exit(126);
		execve("/proc/self/exe", args, envp);
		_exit(126);
	}
	free(envp);
	close(sv[1]);
	B.pid = pid;
	B.ctl = sv[0];
	/* The env: sources are the broker's now: their bytes leave the
	 * sentry before it forks anything that would keep a copy. */
	for (size_t i = 0; i < cp->n; i++)
		if (cp->v[i].source == CRED_FROM_ENV)
			env_wipe(cp->v[i].src);
	return 0;
}

int broker_start(struct sentry_opts *opts, struct moat_error *err)
{
	/* the policy in force (netpol_set took opts'), whose credentials
	 * part never changes while the sandbox runs (netpol_replace) */
	const struct cred_policy *cp = &netpol_get()->cred;
	char ids[32];
	char *json;
	int rc;

	if (!B.wanted)
		return 0;
	B.policy = cp;
	limits_adopt(B.pid);
	/* its host identity: the sandbox's helper uid */
	snprintf(ids, sizeof(ids), "%u:%u", (unsigned)S->ids.helper_uid,
		 (unsigned)S->ids.helper_gid);
	rc = brk_send(BRK_IDS, ids, strlen(ids) + 1, NULL, 0, NULL, 0);
	json = policy_to_json(netpol_get());
	if (!json)
		return moat_error_set(err, ENOMEM, "broker: config");
	if (rc == 0) {
		const char *ca = opts->upstream_ca ? opts->upstream_ca : "";
		size_t jl = strlen(json) + 1;
		char *cfg = xmalloc(jl + strlen(ca));

		memcpy(cfg, json, jl);
		memcpy(cfg + jl, ca, strlen(ca));
		rc = brk_send(BRK_CONFIG, cfg, jl + strlen(ca), NULL, 0, B.fds,
			      B.nfds);
		free(cfg);
	}
	free(json);
	/* the fd: sources are the broker's too */
	for (int i = 0; i < B.nfds; i++)
		close(B.fds[i]);
	B.nfds = 0;
	if (rc < 0)
		return moat_error_set(err, -rc, "broker: config");
	if (await_ready(err) < 0)
		return moat_error_wrap(err, "broker");
	B.ep = epoll_create1(EPOLL_CLOEXEC);
	if (B.ep < 0)
		return moat_error_set(err, errno, "broker: epoll");
	fcntl(B.ctl, F_SETFL, O_NONBLOCK);
	B.up = true;
	return 0;
}

void broker_stop(void)
{
	struct bflow *b, *next;

	B.up = false;
	for (b = B.flows; b; b = next) {
		next = b->next;
		bflow_abort(b);
	}
	if (B.pid > 0) {
		kill(B.pid, SIGKILL);
		waitpid(B.pid, NULL, __WALL);
		B.pid = -1;
	}
	if (B.ctl >= 0)
		close(B.ctl);
	B.ctl = -1;
}

/* ---- the guest's view ----------------------------------------------------- */

/* The bundle paths the guest's TLS libraries read (OpenSSL's and GnuTLS's
 * on Debian, Fedora's and Alpine's, Go's list, and the compat links). */
static const char *const bundle_paths[] = {
	"/etc/ssl/certs/ca-certificates.crt",
	"/etc/pki/tls/certs/ca-bundle.crt",
	"/etc/ssl/cert.pem",
	"/etc/pki/tls/cacert.pem",
	"/etc/ssl/ca-bundle.pem",
	"/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem",
};
#define BUNDLE "/etc/ssl/certs/ca-certificates.crt"
#define CA_FILE "/etc/moat/ca.pem"

static char *env_kv(const char *k, const char *v)
{
	char *s;

	if (asprintf(&s, "%s=%s", k, v) < 0)
		abort();
	return s;
}

void broker_env(char ***envp)
{
	static const char *const bundle_vars[] = {
		"SSL_CERT_FILE",
		"REQUESTS_CA_BUNDLE",
		"CURL_CA_BUNDLE",
		"GIT_SSL_CAINFO",
		"PIP_CERT",
		"AWS_CA_BUNDLE",
		/* gRPC's C core (grpcio) reads no SSL_CERT_FILE */
		"GRPC_DEFAULT_SSL_ROOTS_FILE_PATH",
	};
	char **env = *envp, **out;
	size_t n = 0, k = 0;

	if (!B.up)
		return;
	while (env && env[n])
		n++;
	out = xcalloc(n + B.n + ARRAY_SIZE(bundle_vars) + 2, sizeof(char *));
	for (size_t i = 0; i < n; i++) {
		bool ours = false;
		size_t kl = strcspn(env[i], "=");

		/* ours win: a --env of the same name would leave the
		 * placeholder or the CA out */
		for (size_t j = 0; j < B.n && !ours; j++)
			ours = strlen(B.names[j]) == kl &&
			       !strncmp(env[i], B.names[j], kl);
		for (size_t j = 0; j < ARRAY_SIZE(bundle_vars) && !ours; j++)
			ours = strlen(bundle_vars[j]) == kl &&
			       !strncmp(env[i], bundle_vars[j], kl);
		ours = ours || !strncmp(env[i], "NODE_EXTRA_CA_CERTS=", 20);
		if (!ours)
			out[k++] = env[i];
	}
	for (size_t j = 0; j < B.n; j++)
		out[k++] = env_kv(B.names[j], B.placeholders[j]);
	for (size_t j = 0; j < ARRAY_SIZE(bundle_vars); j++)
		out[k++] = env_kv(bundle_vars[j], BUNDLE);
	out[k++] = env_kv("NODE_EXTRA_CA_CERTS", CA_FILE);
	out[k] = NULL;
	*envp = out;
}

/* The whole of a regular file of the guest's tree (at most max bytes),
 * or NULL. */
static char *read_guest_file(const char *path, size_t max, size_t *len)
{
	struct vnode *vn;
	struct file *f;
	char *buf;
	int64_t off = 0;
	long n;
	size_t got = 0;

	if (vfs_resolve(NULL, AT_FDCWD, path, LOOKUP_FOLLOW, &vn) < 0)
		return NULL;
	if (!S_ISREG(vn->mode) || vfs_open(NULL, vn, O_RDONLY, &f) < 0) {
		vnode_put(vn);
		return NULL;
	}
	vnode_put(vn);
	buf = xmalloc(max + 1);
	while (got < max &&
	       (n = f->ops->read(NULL, f, buf + got, max - got, &off)) > 0)
		got += (size_t)n;
	file_put(f);
	*len = got;
	return buf;
}

/* path (made, with its parents, in the overlay) holds a then b. */
static int write_guest_file(const char *path, const char *a, size_t alen,
			    const char *b, size_t blen)
{
	struct vnode *dvn = NULL, *vn = NULL, *up = NULL, *udir = NULL;
	const char *name = strrchr(path, '/') + 1;
	char dir[256];
	struct file *f;
	int64_t off = 0;
	int rc;

	snprintf(dir, sizeof(dir), "%.*s", (int)(name - 1 - path), path);
	rc = vfs_mkdir_p(dir[0] ? dir : "/", NULL, &dvn);
	if (rc < 0)
		return rc;
	if (vfs_resolve(NULL, AT_FDCWD, path, LOOKUP_FOLLOW, &vn) == 0) {
		rc = S_ISREG(vn->mode) ? ovl_write_target(vn, &up) : -EINVAL;
		vnode_put(vn);
	} else {
		rc = ovl_write_dir(dvn, &udir);
		if (rc == 0)
			rc = tmpfs_create(NULL, udir, name, 0644, &up);
		if (udir)
			vnode_put(udir);
	}
	vnode_put(dvn);
	if (rc < 0)
		return rc;
	rc = vfs_open(NULL, up, O_WRONLY | O_TRUNC, &f);
	vnode_put(up);
	if (rc < 0)
		return rc;
	if ((alen && f->ops->write(NULL, f, a, alen, &off) != (long)alen) ||
	    (blen && f->ops->write(NULL, f, b, blen, &off) != (long)blen))
		rc = -EIO;
	file_put(f);
	return rc;
}

/* A `file:` source leaves the guest's view of the rootfs (which, for
 * `moat do`, is the host's own tree): its name is whited out in the
 * overlay. The path as the guest resolves it, links followed. */
static void hide_source(const char *path)
{
	struct vnode *vn, *pdir, *udir, *old;
	char dir[PATH_MAX];
	const char *base;
	char *slash;
	int rc;

	if (vfs_resolve(NULL, AT_FDCWD, path, LOOKUP_FOLLOW, &vn) < 0)
		return;
	snprintf(dir, sizeof(dir), "%s", vn->path);
	vnode_put(vn);
	slash = strrchr(dir, '/');
	if (!slash || !slash[1])
		return;
	*slash = 0;
	base = slash + 1;
	if (vfs_resolve(NULL, AT_FDCWD, dir[0] ? dir : "/", 0, &pdir) < 0)
		return;
	rc = ovl_write_dir(pdir, &udir);
	vnode_put(pdir);
	if (rc < 0)
		return;
	if (tmpfs_lookup(udir, base, &old) == 0) {
		vnode_put(old);
		tmpfs_unlink(NULL, udir, base, false);
	}
	ovl_hide_lower(udir, base);
	vnode_put(udir);
}

int broker_write_ca(struct moat_error *err)
{
	bool any = false;

	if (!B.up)
		return 0;
	for (size_t i = 0; i < B.policy->n; i++) {
		const struct credential *c = &B.policy->v[i];
		struct vnode *vn;

		if (c->source != CRED_FROM_FILE)
			continue;
		hide_source(c->src);
		if (vfs_resolve(NULL, AT_FDCWD, c->src, LOOKUP_FOLLOW, &vn) ==
		    0) {
			vnode_put(vn);
			return moat_error_input(err, EPERM,
						"--secret %s: file:%s would be "
						"in the guest's view, and it "
						"cannot be hidden there",
						c->name, c->src);
		}
	}
	write_guest_file(CA_FILE, B.ca, B.ca_len, NULL, 0);
	/* Each bundle the tree has gains the CA; the first is made when
	 * none exists, since the variables name it. */
	for (size_t i = 0; i < ARRAY_SIZE(bundle_paths); i++) {
		size_t len = 0;
		char *own = read_guest_file(bundle_paths[i], 8 << 20, &len);

		if (!own && (i > 0 || any))
			continue;
		/* a link to a bundle already merged (cert.pem ->
		 * certs/ca-certificates.crt) */
		if (own && memmem(own, len, B.ca, B.ca_len)) {
			free(own);
			any = true;
			continue;
		}
		if (own && len && own[len - 1] != '\n')
			own[len++] = '\n';
		if (write_guest_file(bundle_paths[i], own, own ? len : 0, B.ca,
				     B.ca_len) == 0)
			any = true;
		free(own);
	}
	return 0;
}

/* ---- which flows ---------------------------------------------------------- */

bool broker_takes(const struct sniff_result *r, uint16_t port)
{
	const struct cred_policy *p = B.policy;

	if (!B.wanted || !p)
		return false;
	if (r->kind == SNIFF_HTTP)
		return true; /* every plain-HTTP flow: a placeholder there is
			      * blocked, never passed by */
	if (r->kind != SNIFF_TLS || !r->sni[0])
		return false;
	if (cred_inspected(p, r->sni))
		return true;
	for (size_t i = 0; i < p->n; i++) {
		const struct credential *c = &p->v[i];
		bool host = false;

		for (size_t h = 0; h < c->nhosts && !host; h++)
			host = cred_host_match(c->hosts[h], r->sni);
		if (!host)
			continue;
		for (size_t k = 0; k < c->nports; k++)
			if (c->ports[k] == port)
				return true;
	}
	return false;
}

bool broker_drops_udp(int pid, const struct sockaddr *sa, socklen_t len)
{
	const char *names[BRK_NAMES_MAX];
	struct sniff_result r = { .kind = SNIFF_TLS };
	uint8_t addr[16];
	int family = AF_INET;
	size_t nn;

	if (!B.wanted || !B.policy)
		return false;
	if (sa->sa_family == AF_INET && len >= sizeof(struct sockaddr_in)) {
		const struct sockaddr_in *in = (const void *)sa;
		if (ntohs(in->sin_port) != 443)
			return false;
		memcpy(addr, &in->sin_addr, 4);
	} else if (sa->sa_family == AF_INET6 &&
		   len >= sizeof(struct sockaddr_in6)) {
		const struct sockaddr_in6 *in6 = (const void *)sa;
		if (ntohs(in6->sin6_port) != 443)
			return false;
		if (IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr)) {
			memcpy(addr, in6->sin6_addr.s6_addr + 12, 4);
		} else {
			family = AF_INET6;
			memcpy(addr, &in6->sin6_addr, 16);
		}
	} else {
		return false;
	}
	nn = resolver_names_of(family, addr, names, BRK_NAMES_MAX);
	for (size_t i = 0; i < nn; i++) {
		snprintf(r.sni, sizeof(r.sni), "%s", names[i]);
		if (broker_takes(&r, 443)) {
			char q[EGRESS_NAME_MAX * 2 + 8];
			json_quote(q, sizeof(q), names[i]);
			audit_guest(AUDIT_NET,
				    netpol_audit_kind("credential", "udp",
						      false, "rule"),
				    "\"event\":\"credential\",\"verdict\":"
				    "\"blocked\",\"pid\":%d,\"proto\":\"udp\","
				    "\"host\":%s,\"reason\":\"quic\"",
				    pid, q);
			return true;
		}
	}
	return false;
}

/* ---- the relay ------------------------------------------------------------ */

static void set_interest(struct bflow *b, bool up, uint32_t ev)
{
	int fd = up ? b->ufd : b->gfd;
	uint32_t *cur = up ? &b->uev : &b->gev;
	struct epoll_event e = { .events = ev,
				 .data.ptr = up ? &b->uend : &b->gend };

	if (fd < 0 || *cur == ev)
		return;
	epoll_ctl(B.ep, EPOLL_CTL_MOD, fd, &e);
	*cur = ev;
}

static void close_end(struct bflow *b, bool up)
{
	int *fd = up ? &b->ufd : &b->gfd;

	if (*fd < 0)
		return;
	epoll_ctl(B.ep, EPOLL_CTL_DEL, *fd, NULL);
	close(*fd);
	*fd = -1;
}

static void bflow_finish(struct bflow *b)
{
	if (b->dead)
		return;
	close_end(b, false);
	close_end(b, true);
	/* The connection is the guest socket's while it lives (its name,
	 * TCP_INFO); then ours. Live, ns_close sends a FIN after what lwIP
	 * holds. */
	if (b->c && !b->owner) {
		ns_close(b->c);
		b->c = NULL;
	}
	b->dead = true;
	/* only bflow_abort ends a flow whose guest is there: the guest
	 * sees a reset, never an end it could take for the upstream's */
	if (b->owner)
		b->gops->event(b->owner, BFLOW_RESET);
}

/* Is the flow over: the guest gone, and the broker done with upstream? */
static void maybe_done(struct bflow *b)
{
	if (!b->owner && (b->ufd < 0 || b->c == NULL || b->c_dead ||
			  (b->up_eof && b->up_fin && !b->npend)))
		bflow_finish(b);
}

/* lwIP's bytes that ufd did not take, as it takes them now. */
static void flush_pend(struct bflow *b)
{
	while (b->npend && b->ufd >= 0) {
		ssize_t w = write(b->ufd, b->pend, b->npend);

		if (w <= 0) {
			if (w < 0 && errno == EAGAIN) {
				set_interest(b, true, b->uev | EPOLLOUT);
				return;
			}
			close_end(b, true);
			b->npend = 0;
			maybe_done(b);
			return;
		}
		memmove(b->pend, b->pend + w, b->npend - (size_t)w);
		b->npend -= (size_t)w;
		if (b->c && !b->c_dead)
			ns_consumed(b->c, (size_t)w);
	}
	set_interest(b, true, b->uev & ~(uint32_t)EPOLLOUT);
	if (!b->npend && b->up_fin && b->ufd >= 0)
		shutdown(b->ufd, SHUT_WR);
}

static void on_up_data(void *owner, const void *buf, size_t len)
{
	struct bflow *b = owner;
	ssize_t w = 0;

	if (b->ufd < 0)
		return;
	if (!b->npend) {
		w = write(b->ufd, buf, len);
		if (w < 0 && errno != EAGAIN) {
			close_end(b, true);
			maybe_done(b);
			return;
		}
		if (w < 0)
			w = 0;
		if (w > 0)
			ns_consumed(b->c, (size_t)w);
	}
	if ((size_t)w < len) {
		size_t rest = len - (size_t)w;

		if (b->npend + rest > b->cap) {
			size_t cap = b->cap ? b->cap : 65536;
			uint8_t *p;

			while (cap < b->npend + rest)
				cap *= 2;
			p = realloc(b->pend, cap);
			if (!p) {
				/* out of memory: this flow's upstream side
				 * ends (as on a failed write), not the sentry */
				close_end(b, true);
				maybe_done(b);
				return;
			}
			b->pend = p;
			b->cap = cap;
		}
		memcpy(b->pend + b->npend, (const char *)buf + w, rest);
		b->npend += rest;
		set_interest(b, true, b->uev | EPOLLOUT);
	}
}

static void read_up(struct bflow *b);

static void on_up_event(void *owner, int err)
{
	struct bflow *b = owner;

	if (err == -1) { /* the upstream's FIN */
		b->up_fin = true;
		if (!b->npend && b->ufd >= 0)
			shutdown(b->ufd, SHUT_WR);
		maybe_done(b);
	} else if (err == -2) { /* room to send */
		if (b->up_full) {
			b->up_full = false;
			read_up(b);
		}
	} else if (err > 0) { /* reset, timed out: lwIP freed its pcb */
		b->c_dead = true;
		close_end(b, true);
		maybe_done(b);
	}
	sentry_wake();
}

static const struct ns_owner_ops up_ops = {
	.data = on_up_data,
	.event = on_up_event,
};

/* The broker's bytes for upstream, as much as lwIP takes now. */
static void read_up(struct bflow *b)
{
	uint8_t buf[BFLOW_IO];

	while (b->ufd >= 0 && b->c && !b->c_dead) {
		size_t room = ns_send_room(b->c);
		ssize_t n;

		if (!room) {
			b->up_full = true;
			set_interest(b, true, b->uev & ~(uint32_t)EPOLLIN);
			return;
		}
		n = read(b->ufd, buf, room < sizeof(buf) ? room : sizeof(buf));
		if (n < 0 && errno == EAGAIN) {
			set_interest(b, true, b->uev | EPOLLIN);
			return;
		}
		if (n <= 0) {
			/* the broker is done sending upstream: a FIN */
			ns_shutdown(b->c, false, true);
			b->up_eof = true;
			set_interest(b, true, b->uev & ~(uint32_t)EPOLLIN);
			if (n < 0)
				close_end(b, true);
			maybe_done(b);
			return;
		}
		if (ns_send(b->c, buf, (size_t)n, false) < n) {
			/* lwIP said it had room: a reset in between */
			close_end(b, true);
			maybe_done(b);
			return;
		}
	}
}

/* The broker's bytes for the guest, as much as its queue takes now. */
static void read_guest(struct bflow *b)
{
	uint8_t buf[BFLOW_IO];

	while (b->gfd >= 0 && b->owner) {
		size_t room = b->gops->room(b->owner);
		ssize_t n;

		if (!room) {
			b->guest_full = true;
			set_interest(b, false, b->gev & ~(uint32_t)EPOLLIN);
			return;
		}
		n = read(b->gfd, buf, room < sizeof(buf) ? room : sizeof(buf));
		if (n < 0 && errno == EAGAIN)
			return;
		if (n <= 0) {
			b->gfd_eof = true;
			set_interest(b, false, b->gev & ~(uint32_t)EPOLLIN);
			b->gops->event(b->owner, BFLOW_EOF);
			return;
		}
		b->gops->data(b->owner, buf, (size_t)n);
	}
}

static void flow_event(struct bend *e, uint32_t ev)
{
	struct bflow *b = e->b;

	if (b->dead)
		return;
	if (e->up) {
		if (ev & EPOLLOUT)
			flush_pend(b);
		if (ev & (EPOLLIN | EPOLLHUP | EPOLLERR))
			read_up(b);
	} else {
		if ((ev & EPOLLOUT) && b->guest_wait) {
			b->guest_wait = false;
			set_interest(b, false, b->gev & ~(uint32_t)EPOLLOUT);
			if (b->owner)
				b->gops->event(b->owner, BFLOW_WRITABLE);
		}
		if (ev & (EPOLLIN | EPOLLHUP | EPOLLERR))
			read_guest(b);
	}
}

static int new_pair(int *ours, int *theirs)
{
	int sv[2];

	/* the default buffers (net.core.wmem_default) hold SNIFF_MAX */
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return -errno;
	/* A guest's flows are fds it makes the sentry hold: two a flow, up
	 * to the line that keeps the gofers' replies and the control
	 * socket theirs (fd_admit), as its files are. */
	if (fd_admit(sv[1]) < 0) {
		close(sv[0]);
		return -ENFILE;
	}
	if (fd_admit(sv[0]) < 0) {
		close(sv[1]);
		return -ENFILE;
	}
	fcntl(sv[0], F_SETFL, O_NONBLOCK);
	*ours = sv[0];
	*theirs = sv[1];
	return 0;
}

struct bflow *bflow_start(struct ns_conn *c, void *owner,
			  const struct bflow_guest_ops *ops, int pid,
			  const char *exe, const struct sockaddr *dst,
			  socklen_t dstlen, const struct sniff_result *r,
			  const void *first, size_t nfirst, int *err)
{
	struct brk_flow m = { 0 };
	const char *names[BRK_NAMES_MAX];
	char nbuf[BRK_NAMES_MAX * (EGRESS_NAME_MAX + 1)];
	size_t nn, nl = 0;
	int theirs[2] = { -1, -1 };
	struct bflow *b;
	int rc;

	*err = -ECONNRESET;
	if (!B.up)
		return NULL;
	if (B.nflows >= BFLOW_MAX) {
		audit_guest(AUDIT_NET,
			    netpol_audit_kind("credential", "tcp", false,
					      "rule"),
			    "\"event\":\"credential\",\"verdict\":\"blocked\","
			    "\"pid\":%d,\"reason\":\"too-many-flows\"",
			    pid);
		return NULL;
	}
	m.id = ++B.next_id;
	m.pid = pid;
	m.kind = r->kind == SNIFF_TLS ? BRK_KIND_TLS : BRK_KIND_HTTP;
	if (dst->sa_family == AF_INET && dstlen >= sizeof(struct sockaddr_in)) {
		const struct sockaddr_in *in = (const void *)dst;
		m.family = AF_INET;
		m.port = ntohs(in->sin_port);
		memcpy(m.addr, &in->sin_addr, 4);
	} else if (dst->sa_family == AF_INET6 &&
		   dstlen >= sizeof(struct sockaddr_in6)) {
		const struct sockaddr_in6 *in6 = (const void *)dst;
		in_addr_t v4;
		m.port = ntohs(in6->sin6_port);
		if (IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr)) {
			memcpy(&v4, in6->sin6_addr.s6_addr + 12, 4);
			m.family = AF_INET;
			memcpy(m.addr, &v4, 4);
		} else {
			m.family = AF_INET6;
			memcpy(m.addr, &in6->sin6_addr, 16);
		}
	} else {
		return NULL;
	}
	snprintf(m.exe, sizeof(m.exe), "%s", exe ? exe : "");
	if (r->kind == SNIFF_TLS) {
		snprintf(m.sni, sizeof(m.sni), "%s", r->sni);
		if (r->alpn_h2)
			m.flags |= BRK_FLOW_ALPN_H2;
	}
	nn = resolver_names_of(m.family, m.addr, names, BRK_NAMES_MAX);
	for (size_t i = 0; i < nn; i++) {
		size_t l = strlen(names[i]) + 1;
		if (nl + l > sizeof(nbuf))
			break;
		memcpy(nbuf + nl, names[i], l);
		nl += l;
		m.nnames++;
	}
	b = calloc(1, sizeof(*b)); /* guest-reachable: never xcalloc */
	if (!b) {
		*err = -ENOMEM;
		return NULL;
	}
	b->gfd = b->ufd = -1;
	b->id = m.id;
	b->pid = pid;
	b->dstlen = dstlen < sizeof(b->dst) ? dstlen : sizeof(b->dst);
	memcpy(&b->dst, dst, b->dstlen);
	if ((rc = new_pair(&b->gfd, &theirs[0])) < 0 ||
	    (rc = new_pair(&b->ufd, &theirs[1])) < 0) {
		*err = rc;
		goto fail;
	}
	/* What the guest sent so far goes first: the pair's buffer holds
	 * it (SNIFF_MAX is far below it). */
	if (nfirst && write(b->gfd, first, nfirst) != (ssize_t)nfirst) {
		*err = -ECONNRESET;
		goto fail;
	}
	rc = brk_send(BRK_FLOW, &m, sizeof(m), nbuf, nl, theirs, 2);
	if (rc < 0) {
		/* A link that is only full (a burst of flows the broker has
		 * not read yet), or fds in flight past their limit, fails
		 * this flow alone; a link that is gone ends them all. */
		if (rc == -EPIPE || rc == -ECONNRESET || rc == -ENOTCONN)
			brk_gone("the link to it failed");
		goto fail;
	}
	close(theirs[0]);
	close(theirs[1]);
	b->gend = (struct bend){ b, false };
	b->uend = (struct bend){ b, true };
	{
		struct epoll_event eg = { .events = EPOLLIN,
					  .data.ptr = &b->gend };
		struct epoll_event eu = { .events = EPOLLIN,
					  .data.ptr = &b->uend };
		if (epoll_ctl(B.ep, EPOLL_CTL_ADD, b->gfd, &eg) < 0 ||
		    epoll_ctl(B.ep, EPOLL_CTL_ADD, b->ufd, &eu) < 0) {
			*err = -ENOMEM;
			epoll_ctl(B.ep, EPOLL_CTL_DEL, b->gfd, NULL);
			goto fail_sent;
		}
		b->gev = b->uev = EPOLLIN;
	}
	b->c = c;
	b->owner = owner;
	b->gops = ops;
	ns_set_owner(c, b, &up_ops);
	b->next = B.flows;
	if (B.flows)
		B.flows->pprev = &b->next;
	b->pprev = &B.flows;
	B.flows = b;
	B.nflows++;
	return b;
fail:
	if (theirs[0] >= 0)
		close(theirs[0]);
	if (theirs[1] >= 0)
		close(theirs[1]);
fail_sent:
	if (b->gfd >= 0)
		close(b->gfd);
	if (b->ufd >= 0)
		close(b->ufd);
	free(b);
	return NULL;
}

long bflow_send(struct bflow *b, const void *buf, size_t n)
{
	ssize_t w;

	if (b->dead || b->gfd < 0)
		return -EPIPE;
	w = send(b->gfd, buf, n, MSG_DONTWAIT | MSG_NOSIGNAL);
	if (w >= 0)
		return w;
	if (errno == EAGAIN) {
		b->guest_wait = true;
		set_interest(b, false, b->gev | EPOLLOUT);
		return -EAGAIN;
	}
	return -EPIPE;
}

bool bflow_writable(struct bflow *b)
{
	struct pollfd p = { b->gfd, POLLOUT, 0 };

	if (b->dead || b->gfd < 0)
		return true; /* a send fails at once */
	return poll(&p, 1, 0) == 1 && (p.revents & POLLOUT);
}

void bflow_consumed(struct bflow *b)
{
	if (!b->guest_full || b->dead)
		return;
	b->guest_full = false;
	if (!b->gfd_eof)
		set_interest(b, false, b->gev | EPOLLIN);
	read_guest(b);
}

void bflow_shutdown(struct bflow *b, bool rd, bool wr)
{
	if (b->gfd >= 0)
		shutdown(b->gfd, rd && wr ? SHUT_RDWR : wr ? SHUT_WR : SHUT_RD);
}

void bflow_guest_gone(struct bflow *b)
{
	b->owner = NULL;
	if (b->dead) {
		if (b->c)
			ns_close(b->c);
		b->c = NULL;
		return;
	}
	/* the broker sees the guest's end: it finishes what it sends
	 * upstream, then closes that side too */
	close_end(b, false);
	b->linger_until = now_ns() + BFLOW_LINGER_NS;
	maybe_done(b);
}

void bflow_abort(struct bflow *b)
{
	if (b->dead)
		return;
	if (b->c && !b->c_dead) {
		ns_abort(b->c);
		b->c_dead = true;
	}
	bflow_finish(b);
}

int broker_policy_changed(void)
{
	int n = 0;

	/* a flow whose guest socket is there is that socket's to reset
	 * (sockets_policy_changed): these are the ones that outlived it */
	for (struct bflow *b = B.flows; b; b = b->next) {
		if (b->dead || b->owner ||
		    netpol_check(b->pid, IPPROTO_TCP,
				 (const struct sockaddr *)&b->dst,
				 b->dstlen) == 0)
			continue;
		bflow_abort(b);
		n++;
	}
	return n;
}

/* ---- the event loop's side ------------------------------------------------ */

int broker_pollfds(struct pollfd *p, int max)
{
	int n = 0;

	B.ctl_pfd = B.ep_pfd = NULL;
	if (B.ctl >= 0 && n < max) {
		p[n].fd = B.ctl;
		p[n].events = POLLIN;
		p[n].revents = 0;
		B.ctl_pfd = &p[n++];
	}
	if (B.ep >= 0 && B.flows && n < max) {
		p[n].fd = B.ep;
		p[n].events = POLLIN;
		p[n].revents = 0;
		B.ep_pfd = &p[n++];
	}
	return n;
}

void broker_pump(void)
{
	struct epoll_event ev[64];
	struct bflow *b, *next;
	bool ctl_ready = !B.ctl_pfd || B.ctl_pfd->revents;
	bool ep_ready = !B.ep_pfd || B.ep_pfd->revents;
	int64_t now;
	int n;

	B.ctl_pfd = B.ep_pfd = NULL;
	while (ctl_ready && B.ctl >= 0) {
		uint32_t type;
		size_t len;
		int rc = brk_recv(&type, &len, MSG_DONTWAIT);

		if (rc == 0)
			break;
		if (rc < 0) {
			brk_gone("its link closed");
			close(B.ctl);
			B.ctl = -1;
			break;
		}
		if (type == BRK_AUDIT)
			brk_audit((const char *)B.msg, len);
		else if (type == BRK_SECRET_DONE)
			secret_done(B.msg, len);
		/* anything else from it now is ignored */
	}
	secret_tick();
	while (ep_ready && B.ep >= 0 && B.flows &&
	       (n = epoll_wait(B.ep, ev, (int)ARRAY_SIZE(ev), 0)) > 0) {
		for (int i = 0; i < n; i++)
			flow_event(ev[i].data.ptr, ev[i].events);
		if (n < (int)ARRAY_SIZE(ev))
			break;
	}
	now = now_ns();
	for (b = B.flows; b; b = next) {
		next = b->next;
		if (!b->dead && !b->owner && b->linger_until &&
		    now > b->linger_until)
			bflow_abort(b);
		/* a dead flow stays while its guest socket points at it */
		if (!b->dead || b->owner)
			continue;
		*b->pprev = b->next;
		if (b->next)
			b->next->pprev = b->pprev;
		B.nflows--;
		free(b->pend);
		free(b);
	}
}

void broker_drain(void)
{
	uint32_t type;
	size_t len;

	while (B.ctl >= 0 && brk_recv(&type, &len, MSG_DONTWAIT) > 0)
		if (type == BRK_AUDIT)
			brk_audit((const char *)B.msg, len);
}

/* ---- live control (moat secret) ------------------------------------------ */

#define SECRET_WAIT_NS (5LL * 1000000000) /* the broker's answer, at most */

/* The one request waiting for the broker's BRK_SECRET_DONE. The broker
 * answers its BRK_SECRET messages one by one, in order: sent and done
 * count them, so that a late answer to a request that timed out is never
 * taken for the answer to the next one. */
static struct {
	int fd; /* the control client's connection (our dup); -1: none */
	uint32_t op;
	char name[CRED_NAME_MAX];
	struct cred_policy pending; /* a set's credential, until answered */
	uint64_t seq;		    /* its number among the BRK_SECRETs sent */
	int64_t deadline;
	uint64_t sent, done;
} SQ = { .fd = -1 };

static const char *const secret_verb[] = {
	[BRK_SECRET_SET] = "set",
	[BRK_SECRET_ROTATE] = "rotate",
	[BRK_SECRET_REVOKE] = "revoke",
};

/* A name fit for a control line and an audit record: an environment
 * variable's. */
static bool secret_name_fits(const char *name)
{
	size_t n = strlen(name);

	if (!n || n >= CRED_NAME_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((name[i] >= 'a' && name[i] <= 'z') ||
		      (name[i] >= 'A' && name[i] <= 'Z') ||
		      (name[i] >= '0' && name[i] <= '9') || name[i] == '_'))
			return false;
	return true;
}

/* The pending request's answer, line (ending in '\n'), and its end. The
 * client's socket is non-blocking: a line this short fits its buffer,
 * and a client that does not read loses it, never holds the sentry. */
static void secret_answer(const char *line)
{
	ssize_t w;

	if (SQ.fd < 0)
		return;
	w = send(SQ.fd, line, strlen(line), MSG_DONTWAIT | MSG_NOSIGNAL);
	(void)w;
	close(SQ.fd);
	SQ.fd = -1;
}

static void secret_audit(int result, int closed)
{
	char q[CRED_NAME_MAX * 2 + 8];

	json_quote(q, sizeof(q), SQ.name);
	if (SQ.op == BRK_SECRET_REVOKE)
		audit_log("\"event\":\"secret-revoke\",\"secret\":%s,"
			  "\"result\":%d,\"flows_closed\":%d",
			  q, result, closed);
	else
		audit_log("\"event\":\"secret-%s\",\"secret\":%s,"
			  "\"result\":%d",
			  secret_verb[SQ.op], q, result);
}

static void secret_abandon(const char *why)
{
	char line[CRED_NAME_MAX + 200];

	if (SQ.fd < 0)
		return;
	snprintf(line, sizeof(line), "error: secret %s: %s\n", SQ.name, why);
	secret_audit(-EPIPE, 0);
	secret_answer(line);
	cred_free(&SQ.pending);
}

/* Is path absolute, without "//", "." or "..", and no symlink (lstat:
 * the sentry's filter has no readlink) on the way? Then it is its own
 * real path. */
/* path_prefixes: 1 for a component "." or "..", or a link. */
static int not_canonical(const char *prefix, void *ctx)
{
	const char *base = strrchr(prefix, '/') + 1;
	struct stat st;

	(void)ctx;
	return !strcmp(base, ".") || !strcmp(base, "..") ||
	       (*base && lstat(prefix, &st) == 0 && S_ISLNK(st.st_mode));
}

static bool canonical_path(const char *path)
{
	return !strstr(path, "//") &&
	       path_prefixes(path, not_canonical, NULL) == 0;
}

/* A set's credential (json: {"credentials": [one]}) into *out, checked
 * as a start checks the policy: its name free, the whole policy valid
 * with it in (hosts given, none passed through), and a `file:` source
 * (which the CLI read, by its real path) out of the guest's view, since
 * whatever the guest could read before the set stays read. 0, or -1 with
 * the line to answer in msg. */
static int secret_set_check(const char *json, struct cred_policy *out,
			    char *msg, size_t cap)
{
	const struct cred_policy *in = B.policy;
	struct moat_policy mp = { 0 };
	struct moat_error err = { 0 };
	struct cred_policy all = { 0 };
	const struct credential *c;
	const char *name;
	struct vnode *vn;
	int rc = -1;

	if (policy_parse(json, strlen(json), "secret set", &mp, &err) < 0) {
		snprintf(msg, cap, "error: secret set: %s\n", err.msg);
		return -1;
	}
	/* the credentials part alone: a set changes nothing else */
	if (mp.cred.n != 1 || mp.cred.ninspect || mp.cred.npassthrough ||
	    mp.egress.n) {
		snprintf(msg, cap,
			 "error: secret set: one credential, and "
			 "nothing else, expected\n");
		goto out;
	}
	c = &mp.cred.v[0];
	name = c->name;
	if (in->n >= CRED_MAX) {
		snprintf(msg, cap,
			 "error: secret set: the sandbox holds %d secrets, "
			 "the most it can\n",
			 CRED_MAX);
		goto out;
	}
	for (size_t i = 0; i < in->n; i++)
		if (!strcmp(in->v[i].name, name)) {
			snprintf(msg, cap,
				 "error: secret set: %s exists: `moat secret "
				 "rotate` changes its value\n",
				 name);
			goto out;
		}
	all = *in;
	all.v = xcalloc(in->n + 1, sizeof(*all.v));
	if (in->n)
		memcpy(all.v, in->v, in->n * sizeof(*all.v));
	all.v[all.n++] = *c;
	rc = cred_validate(&all, NULL, &err);
	free(all.v);
	if (rc < 0) {
		snprintf(msg, cap, "error: secret set: %s\n", err.msg);
		goto out;
	}
	rc = -1;
	if (c->source == CRED_FROM_FILE) {
		if (vfs_resolve(NULL, AT_FDCWD, c->src, LOOKUP_FOLLOW, &vn) ==
		    0) {
			vnode_put(vn);
			snprintf(msg, cap,
				 "error: secret set: file:%s is in the "
				 "guest's view, which may have read it: give "
				 "the value as env: or fd:\n",
				 c->src);
			goto out;
		}
		for (size_t i = 0; i < S->opts.nmounts; i++) {
			const char *m = S->opts.mounts[i].src;
			size_t ml = strlen(m);

			while (ml > 1 && m[ml - 1] == '/')
				ml--;
			if (!strncmp(c->src, m, ml) &&
			    (c->src[ml] == '/' || !c->src[ml] ||
			     (ml == 1 && m[0] == '/'))) {
				snprintf(msg, cap,
					 "error: secret set: file:%s is in "
					 "the guest's view through --mount "
					 "%s:%s: give the value as env: or "
					 "fd:\n",
					 c->src, m, S->opts.mounts[i].dst);
				goto out;
			}
		}
		/* The same checks as a start's (a bind of a --mount's
		 * source under another name, a copied file, a rootfs
		 * above it: the guest sees it elsewhere) */
		if (!canonical_path(c->src)) {
			snprintf(msg, cap,
				 "error: secret set: file:%s: the path must "
				 "be absolute, with no link, `.` or `..` on "
				 "the way (moat secret set gives it so)\n",
				 c->src);
			goto out;
		}
		if (real_source_elsewhere(&S->opts, c, c->src, &err) < 0) {
			snprintf(msg, cap, "error: secret set: %s\n", err.msg);
			goto out;
		}
		/* The name looked up above is the guest's view now, which
		 * the guest made: a file of the rootfs whose name it
		 * removed or moved away (rm, mv, rmdir) is still one it
		 * may have opened, and reads live. The rootfs itself is
		 * asked, where no mount hides it. */
		if (!vfs_mounted_over(c->src) && ovl_lower_exists(c->src)) {
			snprintf(msg, cap,
				 "error: secret set: file:%s is in the "
				 "guest's rootfs, which may have read it "
				 "(whether or not it shows the name now): "
				 "give the value as env: or fd:\n",
				 c->src);
			goto out;
		}
	}
	*out = mp.cred;
	memset(&mp.cred, 0, sizeof(mp.cred));
	rc = 0;
out:
	policy_free(&mp);
	return rc;
}

int broker_secret(int cfd, uint32_t op, const char *name, const char *json,
		  int value_fd, char *msg, size_t cap)
{
	struct brk_secret m = { .op = op };
	struct cred_policy pending = { 0 };
	cleanup_free char *payload = NULL;
	size_t plen;
	int rc;

	if (!B.wanted) {
		snprintf(msg, cap,
			 "error: this sandbox has no broker: it was started "
			 "without credentials (`moat do --broker` starts one "
			 "for secrets set later)\n");
		goto refused;
	}
	if (!B.up || B.ctl < 0) {
		snprintf(msg, cap, "error: the sandbox's broker is gone\n");
		goto refused;
	}
	/* a set's name is its credential's, once that is parsed and
	 * checked against the policy in force */
	if (op == BRK_SECRET_SET && json &&
	    secret_set_check(json, &pending, msg, cap) < 0)
		goto refused;
	if (op == BRK_SECRET_SET && json)
		name = pending.v[0].name;
	if ((op != BRK_SECRET_ROTATE && op != BRK_SECRET_REVOKE &&
	     op != BRK_SECRET_SET) ||
	    (op != BRK_SECRET_REVOKE) != (value_fd >= 0) ||
	    (op == BRK_SECRET_SET) != (json != NULL) || !name ||
	    !secret_name_fits(name)) {
		snprintf(msg, cap, "error: secret: a bad request\n");
		goto refused;
	}
	if (SQ.fd >= 0) {
		snprintf(msg, cap,
			 "error: secret: another request is being answered; "
			 "try again\n");
		goto refused;
	}
	if (value_fd >= 0) {
		/* What goes on to the broker is a value that cannot change
		 * or grow under it, and whose read ends: the memfd the CLI
		 * sealed. Its seals and type are looked at, never its
		 * bytes. */
		struct stat st;
		int seals = fcntl(value_fd, F_GET_SEALS);
		int want = F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE;

		if (seals < 0 || (seals & want) != want ||
		    fstat(value_fd, &st) < 0 || !S_ISREG(st.st_mode)) {
			snprintf(msg, cap,
				 "error: secret-%s: the value must come "
				 "as a sealed memfd (moat secret %s)\n",
				 secret_verb[op], secret_verb[op]);
			goto refused;
		}
	}
	SQ.fd = fcntl(cfd, F_DUPFD_CLOEXEC, 3);
	if (SQ.fd < 0) {
		snprintf(msg, cap, "error: secret: %s\n", strerror(errno));
		goto refused;
	}
	SQ.op = op;
	snprintf(SQ.name, sizeof(SQ.name), "%s", name);
	/* the name, a NUL, and for a set the JSON and a NUL */
	plen = strlen(name) + 1 + (json ? strlen(json) + 1 : 0);
	payload = xmalloc(plen);
	memcpy(payload, name, strlen(name) + 1);
	if (json)
		memcpy(payload + strlen(name) + 1, json, strlen(json) + 1);
	cred_free(&SQ.pending);
	SQ.pending = pending;
	memset(&pending, 0, sizeof(pending));
	rc = brk_send(BRK_SECRET, &m, sizeof(m), payload, plen, &value_fd,
		      value_fd >= 0 ? 1 : 0);
	if (value_fd >= 0)
		close(value_fd); /* the broker's copy is the one that counts */
	if (rc < 0) {
		close(SQ.fd);
		SQ.fd = -1;
		brk_gone("the link to it failed");
		snprintf(msg, cap, "error: the sandbox's broker is gone\n");
		return -1;
	}
	SQ.seq = ++SQ.sent;
	SQ.deadline = now_ns() + SECRET_WAIT_NS;
	return 0;
refused:
	cred_free(&pending);
	if (value_fd >= 0)
		close(value_fd);
	return -1;
}

int64_t broker_deadline(void)
{
	return SQ.fd >= 0 ? SQ.deadline : 0;
}

/* A set's placeholder as the broker sent it (the bytes after the
 * message): one NUL-terminated string of printable ASCII, no space, that
 * fits, or NULL. It goes into the guest's environment and onto the
 * client's answer line, and the broker is not trusted with either. */
static const char *placeholder_of(const uint8_t *m, size_t len)
{
	const char *p = (const char *)m;
	size_t n = strnlen(p, len);

	if (n == 0 || n == len || n + 1 != len || n >= CRED_PLACEHOLDER_MAX)
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (p[i] <= 0x20 || p[i] >= 0x7f)
			return NULL;
	return p;
}

/* BRK_SECRET_DONE: int32 result, a NUL-terminated message and, for a set
 * that succeeded, the placeholder (NUL-terminated). The message is the
 * broker's, so it is cut and made printable before the client sees it.
 * A malformed one is answered as a failure. */
static void secret_done(const uint8_t *m, size_t len)
{
	char text[160], line[CRED_NAME_MAX + 200];
	int32_t result;
	int closed = 0;
	size_t tl;

	SQ.done++;
	if (SQ.fd < 0 || SQ.done != SQ.seq)
		return; /* the answer to one that timed out */
	if (len < sizeof(result) + 1 ||
	    strnlen((const char *)m + sizeof(result), len - sizeof(result)) ==
		    len - sizeof(result)) {
		secret_audit(-EPROTO, 0);
		snprintf(line, sizeof(line),
			 "error: secret %s: a malformed answer from the "
			 "broker\n",
			 SQ.name);
		secret_answer(line);
		cred_free(&SQ.pending);
		return;
	}
	memcpy(&result, m, sizeof(result));
	if (result == 0 && SQ.op == BRK_SECRET_REVOKE) {
		/* Revoked: its placeholder is blocked from the next request
		 * on; a connection that is open now may have had the value
		 * swapped into it, or be held open to keep it, so every
		 * brokered flow is reset (the broker cannot tell us which
		 * carried which secret). */
		for (struct bflow *b = B.flows; b; b = b->next)
			if (!b->dead) {
				bflow_abort(b);
				closed++;
			}
	}
	if (result == 0 && SQ.op == BRK_SECRET_SET) {
		size_t ml = strlen((const char *)m + sizeof(result)) + 1;
		const char *ph = placeholder_of(m + sizeof(result) + ml,
						len - sizeof(result) - ml);
		/* into the policy in force: flows to its hosts go to the
		 * broker from now on, and `policy show` lists it. (No
		 * process is given its placeholder: broker_env is the
		 * first process's, at the start.) */
		int rc = ph ? netpol_cred_add(&SQ.pending.v[0]) : -EPROTO;

		/* A placeholder that cannot be given to anyone, or no room
		 * for it: the request fails, and the credential stays out
		 * of the sentry's policy, so that no flow goes to the
		 * broker for its hosts. */
		cred_free(&SQ.pending);
		secret_audit(rc, 0);
		if (rc < 0)
			snprintf(line, sizeof(line), "error: secret %s: %s\n",
				 SQ.name,
				 rc == -EPROTO ? "a malformed placeholder "
						 "from the broker" :
						 "out of memory");
		else
			snprintf(line, sizeof(line), "ok %s\n", ph);
		secret_answer(line);
		return;
	}
	cred_free(&SQ.pending);
	secret_audit(result, closed);
	if (result == 0) {
		secret_answer("ok\n");
		return;
	}
	tl = strlen((const char *)m + sizeof(result));
	if (tl >= sizeof(text))
		tl = sizeof(text) - 1;
	memcpy(text, m + sizeof(result), tl);
	text[tl] = 0;
	for (size_t i = 0; i < tl; i++)
		if ((unsigned char)text[i] < 0x20 || text[i] == 0x7f)
			text[i] = '?';
	snprintf(line, sizeof(line), "error: secret %s: %s\n", SQ.name, text);
	secret_answer(line);
}

static void secret_tick(void)
{
	if (SQ.fd >= 0 && now_ns() >= SQ.deadline)
		secret_abandon("the broker did not answer within 5 s");
}
