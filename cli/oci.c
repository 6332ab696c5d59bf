/* cli/oci.c: moat as an OCI runtime, with runc's commands (docs/oci.md).
 *
 * A container is a sandbox whose sentry runs as a daemon: `moat create`
 * forks it, it sets the sandbox up (gofer, mounts, namespaces, the first
 * process made but held before its first instruction) and says "ok";
 * `create` then runs the prestart and createRuntime hooks, writes the
 * pid file and returns. The daemon is the container's pid to its engine:
 * it exits with the container's exit status, as runc's init does, so a
 * containerd shim or conmon reaping it learns how the container ended.
 *
 * State lives in ROOT/ID (ROOT: --root, default /run/moat), private to
 * its owner (ROOT/ID 0700, its files 0600: config.json holds the
 * container's environment, secrets included), written through directory
 * fds without following links (lib/hostfile.h; docs/oci.md lists every
 * host path the runtime writes):
 *   state.json   id, daemon pid and start time, bundle, rootfs, created,
 *                annotations, control socket; written by the daemon
 *                (tmp + rename) before it says "ok", so it survives a
 *                crash of the CLI that made it
 *   config.json  the bundle's, as it was at create (hooks for start and
 *                delete)
 *   exit         the daemon's exit status, once it has one
 *   ctl          the daemon's control socket (sentry/control.c), mode 0600
 * Whether the container is created, running, paused or stopped is asked
 * of the daemon itself over that socket.
 */
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <getopt.h>
#include <json-c/json.h>
#include <limits.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/oci.h"
#include "lib/hostfile.h"
#include "lib/jdoc.h"
#include "oci/config.h"
#include "prot/control.h"
#include "sentry/control.h"
#include "sentry/limits.h"
#include "sentry/sentry.h"
#include "sentry/vfs.h"

#ifndef MOAT_VERSION
#define MOAT_VERSION "0.1.0"
#endif

/* ---- global options, messages -------------------------------------------- */

static struct {
	const char *root;
	const char *log;
	bool log_json;
	bool debug;
	bool root_given;
	int rootfd; /* --root, once checked (root_dir) */
	struct moat_error root_err;
} g = { "/run/moat", NULL, false, false, false, -1, { 0, "" } };

/* --log, opened once (open_log: a path an engine names, often in a
 * directory others may write). -1 when there is none to write. */
static int log_fd = -1;

static int log_open(void)
{
	static bool tried;
	int fd;

	if (tried)
		return log_fd;
	tried = true;
	fd = open_log(g.log);
	if (fd < 0) {
		fprintf(stderr, "moat: --log `%s`: %s\n", g.log,
			fd == -ELOOP  ? "a symbolic link: not followed" :
			fd == -EMLINK ? "not a file of its own, a FIFO or a "
					"device: not written" :
					strerror(-fd));
		return -1;
	}
	log_fd = fd;
	return fd;
}

/* One line, one write(2): the fd is O_NONBLOCK (a FIFO whose reader does
 * not read must not hold the runtime), so a line it cannot take now is
 * dropped, never retried or left buffered. */
static void log_line(const char *level, const char *msg)
{
	cleanup_free char *line = NULL;
	char ts[64];
	struct timespec now;
	struct tm tm;
	int fd, n;

	if (!g.log || (fd = log_open()) < 0)
		return;
	clock_gettime(CLOCK_REALTIME, &now);
	gmtime_r(&now.tv_sec, &tm);
	strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ", &tm);
	if (g.log_json) {
		json_object *o = json_object_new_object();
		json_object_object_add(o, "level",
				       json_object_new_string(level));
		json_object_object_add(o, "msg", json_object_new_string(msg));
		json_object_object_add(o, "time", json_object_new_string(ts));
		n = asprintf(&line, "%s\n",
			     json_object_to_json_string_ext(
				     o,
				     JSON_C_TO_STRING_PLAIN |
					     JSON_C_TO_STRING_NOSLASHESCAPE));
		json_object_put(o);
	} else {
		n = asprintf(&line, "time=\"%s\" level=%s msg=\"%s\"\n", ts,
			     level, msg);
	}
	if (n < 0) {
		line = NULL;
		return;
	}
	if (write(fd, line, (size_t)n) != n) {
		/* EAGAIN (a full FIFO) or short: the line is dropped */
	}
}

/* An error of the command: on stderr and in --log. Returns 1. */
int fail(const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "moat: %s\n", msg);
	log_line("error", msg);
	return 1;
}

/* Warnings, one a line (a parser's: config.json's unknown properties),
 * each on stderr and in --log; NULL: none. */
static void warn_lines(const char *lines)
{
	char msg[1024];

	for (const char *l = lines; l && *l;) {
		size_t n = strcspn(l, "\n");

		snprintf(msg, sizeof(msg), "%.*s", (int)n, l);
		fprintf(stderr, "moat: warning: %s\n", msg);
		log_line("warning", msg);
		l += n + (l[n] == '\n');
	}
}

void debug(const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	if (!g.debug)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "moat-debug: %s\n", msg);
	log_line("debug", msg);
}

/* ---- the state directory -------------------------------------------------- */

/* runc's rule, bounded so the control socket's name fits. */
static bool id_ok(const char *id)
{
	size_t i, n = strlen(id);

	if (!n || n > 90 || id[0] == '.')
		return false;
	for (i = 0; i < n; i++)
		if (!((id[i] >= 'a' && id[i] <= 'z') ||
		      (id[i] >= 'A' && id[i] <= 'Z') ||
		      (id[i] >= '0' && id[i] <= '9') || id[i] == '-' ||
		      id[i] == '_' || id[i] == '.' || id[i] == '+'))
			return false;
	return true;
}

/* mkdir of path's last component, in the directory hostpath_parent finds
 * (a link of another user's on the way is not followed). 0 or -1 with
 * errno set; one that exists is kept. */
static int mkdir_trusted(const char *path, mode_t mode)
{
	char base[NAME_MAX + 1];
	int dfd = hostpath_parent(path, base), rc;

	if (dfd < 0) {
		errno = -dfd;
		return -1;
	}
	rc = mkdirat(dfd, base, mode) < 0 && errno != EEXIST ? -errno : 0;
	close(dfd);
	if (rc < 0)
		errno = -rc;
	return rc < 0 ? -1 : 0;
}

/* mkdir -p, each directory it makes of mode (those that exist are kept). */
static int mkdir_parents(const char *path, mode_t mode)
{
	cleanup_free char *p = xstrdup(path);

	for (char *s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = 0;
		if (mkdir_trusted(p, mode) < 0)
			return -1;
		*s = '/';
	}
	return mkdir_trusted(p, mode);
}

/* --root, opened and checked once a command: a directory of ours (not a
 * link) that no one else may write, since everything the runtime does
 * there trusts its entries to be its own. Made 0700 with its parents
 * (runc's MkdirAll(root, 0700)) when create is true. One that older moat
 * made 0711 becomes 0700; one of another mode readable by others (an
 * engine's shared directory: --root /run, say) is kept, and the state
 * below it is private anyway (ROOT/ID 0700). fd, or -1 with g.root_err
 * set (its code ENOENT when there is no such directory). */
int root_dir(bool create)
{
	struct stat st;
	int fd;

	if (g.rootfd >= 0)
		return g.rootfd;
	if (create && mkdir_parents(g.root, 0700) < 0)
		return moat_error_set(&g.root_err, errno, "--root `%s`",
				      g.root);
	fd = hostdir_open(g.root, "--root", 0, &st, &g.root_err);
	if (fd < 0)
		return -1;
	if ((st.st_mode & 07777) == 0711 && fchmod(fd, 0700) < 0) {
		int e = errno;
		close(fd);
		return moat_error_set(&g.root_err, e, "--root `%s`: chmod",
				      g.root);
	}
	g.rootfd = fd;
	return fd;
}

/* ROOT/ID, opened O_NOFOLLOW below the checked root: fd, or -errno. */
static int state_dir(const char *id)
{
	int root = root_dir(false), fd;

	if (root < 0)
		return g.root_err.code == ENOENT ? -ENOENT : -EPERM;
	fd = openat(root, id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ELOOP || errno == ENOTDIR ? -ENOENT : -errno;
	return fd;
}

/* The control socket: a file in the container's state directory, so only
 * processes that see that directory (and its owner) reach it. */
void state_path(const char *id, const char *name, char *out, size_t cap)
{
	char real[PATH_MAX];
	const char *r = realpath(g.root, real) ? real : g.root;

	snprintf(out, cap, "%s/%s/%s", r, id, name);
}

static void ctl_name(const char *id, char *out, size_t cap)
{
	state_path(id, "ctl", out, cap);
}

const char *oci_root(void)
{
	return g.root;
}

void oci_drop_runtime_fds(void)
{
	if (g.rootfd >= 0)
		close(g.rootfd);
	g.rootfd = -1;
	if (log_fd >= 0)
		close(log_fd);
	log_fd = -1;
}

/* Field 22 of /proc/PID/stat: when the process started, in ticks since
 * boot; tells a live daemon from a later process that got its pid. */
unsigned long long proc_start(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long long v = 0;
	ssize_t n;
	int fd, i;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	p = strrchr(buf, ')');
	if (!p || p[1] != ' ' || p[2] == 'Z' || p[2] == 'X')
		return 0; /* gone, or a zombie: its container has ended */
	for (i = 2; i < 22 && p; i++)
		p = strchr(p + 1, ' ');
	if (p)
		v = strtoull(p + 1, NULL, 10);
	return v;
}

void cstate_free(struct cstate *s)
{
	free(s->id);
	free(s->bundle);
	free(s->rootfs);
	free(s->created);
	free(s->owner);
	free(s->pod);
	json_object_put(s->annotations);
	json_object_put(s->cgroups);
	if (s->dirfd >= 0)
		close(s->dirfd);
	memset(s, 0, sizeof(*s));
	s->dirfd = -1;
}

static const char *jstr(json_object *o, const char *key)
{
	json_object *v;

	if (!json_object_object_get_ex(o, key, &v) ||
	    !json_object_is_type(v, json_type_string))
		return "";
	return json_object_get_string(v);
}

/* ROOT/ID/state.json; 0, -ENOENT (no such container), -EPERM (--root
 * refused: g.root_err says why) or -EINVAL. */
int cstate_load(const char *id, struct cstate *s)
{
	cleanup_close int dfd = -1, fd = -1;
	json_object *o, *v;
	struct stat st;

	memset(s, 0, sizeof(*s));
	s->dirfd = -1;
	if (!id_ok(id))
		return -ENOENT;
	dfd = state_dir(id);
	if (dfd < 0)
		return dfd == -EPERM ? -EPERM : -ENOENT;
	fd = openat(dfd, "state.json", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ENOENT : -EINVAL;
	o = json_object_from_fd(fd);
	if (!o || !json_object_is_type(o, json_type_object)) {
		json_object_put(o);
		return -EINVAL;
	}
	/* A container's directory that older moat made (0711: its files
	 * 0644 were reachable by anyone who knew the ID) is made private.
	 * Only that mode, and only where a state.json is: --root may be a
	 * directory shared with others' directories (--root /run). */
	if (fstat(dfd, &st) == 0 && st.st_uid == geteuid() &&
	    (st.st_mode & 07777) == 0711)
		fchmod(dfd, 0700);
	s->dirfd = take_fd(&dfd);
	s->id = xstrdup(id);
	s->bundle = xstrdup(jstr(o, "bundle"));
	s->rootfs = xstrdup(jstr(o, "rootfs"));
	s->created = xstrdup(jstr(o, "created"));
	s->owner = xstrdup(jstr(o, "owner"));
	if (json_object_object_get_ex(o, "pid", &v))
		s->pid = (pid_t)json_object_get_int(v);
	if (json_object_object_get_ex(o, "moatStart", &v))
		s->start = (unsigned long long)json_object_get_uint64(v);
	if (json_object_object_get_ex(o, "annotations", &v))
		s->annotations = json_object_get(v);
	if (json_object_object_get_ex(o, "moatCgroups", &v) &&
	    json_object_is_type(v, json_type_array))
		s->cgroups = json_object_get(v);
	ctl_name(id, s->ctl, sizeof(s->ctl));
	if (*jstr(o, "moatPod")) {
		s->pod = xstrdup(jstr(o, "moatPod"));
		ctl_name(s->pod, s->ctl, sizeof(s->ctl));
		pod_load(s);
	}
	json_object_put(o);
	return 0;
}

bool daemon_alive(const struct cstate *s)
{
	return s->pid > 0 && s->start && proc_start(s->pid) == s->start;
}

/* created, running, paused, stopped, or creating (the daemon lives but
 * does not answer yet, and has not written its exit status). */
static const char *cstatus(const struct cstate *s, char *buf, size_t cap)
{
	static const char *const known[] = { "created", "running", "paused",
					     "stopped" };
	cleanup_free char *reply = NULL;
	struct stat st;
	ssize_t n;

	if (s->pod)
		return pod_status(s);
	if (!daemon_alive(s))
		return "stopped";
	/* an answer that is none of the states is no answer */
	n = control_call(s->ctl, "state\n", 6, false, &reply, 5);
	for (size_t k = 0; n > 0 && k < ARRAY_SIZE(known); k++)
		if (!strcmp(reply, known[k])) {
			snprintf(buf, cap, "%s", known[k]);
			return buf;
		}
	return fstatat(s->dirfd, "exit", &st, AT_SYMLINK_NOFOLLOW) == 0 &&
			       st.st_size > 0 ?
		       "stopped" :
		       "creating";
}

/* The state of the runtime spec, as `moat state` prints it and hooks
 * read it (pretty: for people). */
char *state_json(const struct cstate *s, const char *status, bool pretty)
{
	json_object *o = json_object_new_object();
	char *out;

	json_object_object_add(o, "ociVersion",
			       json_object_new_string(OCI_VERSION));
	json_object_object_add(o, "id", json_object_new_string(s->id));
	json_object_object_add(o, "pid",
			       json_object_new_int(strcmp(status, "stopped") ?
							   (int)s->pid :
							   0));
	json_object_object_add(o, "status", json_object_new_string(status));
	json_object_object_add(o, "bundle", json_object_new_string(s->bundle));
	json_object_object_add(o, "rootfs", json_object_new_string(s->rootfs));
	json_object_object_add(o, "created",
			       json_object_new_string(s->created));
	json_object_object_add(o, "owner", json_object_new_string(s->owner));
	if (s->annotations && json_object_object_length(s->annotations))
		json_object_object_add(o, "annotations",
				       json_object_get(s->annotations));
	out = xstrdup(json_object_to_json_string_ext(
		o, (pretty ? JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED :
			     JSON_C_TO_STRING_PLAIN) |
			   JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
	return out;
}

/* --pid-file (create, run -d, exec -d): a path the engine names, in a
 * directory others may be able to write (/tmp, a user's). runc's way,
 * made safe against links: a new file of a random name there, O_EXCL and
 * O_NOFOLLOW, renamed over the path (a link at the path is replaced, not
 * followed); 0644 as runc's (0666 less its umask). 0 or -errno. */
static int write_pid_file(const char *path, const char *text, size_t len)
{
	return write_file_path(path, text, len, 0644);
}

/* What is at ROOT/ID when it has no state.json: 0 for a directory that
 * holds only what the runtime puts there (a create that died early),
 * -ENOENT for nothing, -ENOTDIR for anything else than a directory (a
 * link, or the control socket of a `moat do --name ID` of root's, which
 * lives beside the default root's state directories), -ENOTEMPTY for a
 * directory that holds more (--root may be a shared directory, `--root
 * /run`, holding others' directories). */
static int leftover_state(const char *id)
{
	static const char *const names[] = { "config.json", "state.json",
					     "exit",	    "ctl",
					     "anchor",	    "vpid" };
	int root = root_dir(false), fd;
	struct dirent *e;
	struct stat st;
	bool ok = true;
	DIR *d;

	if (root < 0 || fstatat(root, id, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return -ENOENT;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	fd = state_dir(id);
	if (fd < 0)
		return fd;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -ENOTEMPTY;
	}
	while (ok && (e = readdir(d))) {
		bool known = !strcmp(e->d_name, ".") ||
			     !strcmp(e->d_name, "..") ||
			     !strncmp(e->d_name, ".config.json.", 13) ||
			     !strncmp(e->d_name, ".state.json.", 12);
		for (size_t i = 0; i < ARRAY_SIZE(names) && !known; i++)
			known = !strcmp(e->d_name, names[i]);
		ok = known;
	}
	closedir(d);
	return ok ? 0 : -ENOTEMPTY;
}

/* ROOT/ID and what it holds, by the checked root's fd: a link there is
 * removed, never followed. */
void remove_state(const char *id)
{
	int root = root_dir(false);

	if (root >= 0)
		remove_tree_at(root, id);
}

/* The container's hooks of one kind, from the config.json saved at
 * create. */
/* The config.json saved at create (the bundle's may have changed since,
 * and its rootfs need not exist any more: hooks and exec's process are
 * in the file). */
static int load_saved_config(const struct cstate *s, struct oci_config *c,
			     struct moat_error *err)
{
	cleanup_free char *text = NULL;
	char path[64];
	size_t len;

	/* through the state directory's fd, not by --root's path again:
	 * its hooks run as root */
	snprintf(path, sizeof(path), "/proc/self/fd/%d/config.json", s->dirfd);

	if (jdoc_read_file(path, OCI_CONFIG_MAX, &text, &len, err) < 0)
		return -1;
	return oci_config_parse(text, len, s->bundle, c, err);
}

int run_hooks(const struct cstate *s, int kind, const char *name,
	      const char *status)
{
	cleanup_free char *state = NULL;
	struct oci_config c;
	struct moat_error err = { 0 };
	int rc;

	if (load_saved_config(s, &c, &err) < 0)
		return 0; /* nothing to run: create checked it */
	state = state_json(s, status, false);
	rc = oci_hooks_run(&c.hooks[kind], name, state, &err);
	oci_config_free(&c);
	if (rc < 0)
		return fail("%s", err.msg);
	return 0;
}

/* ---- create ---------------------------------------------------------------- */

/* dev.moat.credentials (parsed with config.json) joins dev.moat.policy's
 * credentials, and the two are checked together (one name twice, a host
 * both passed through and credentialed); dev.moat.upstream-ca must be a
 * regular file. The credentials move from c to o. */
static int creds_from_config(struct oci_config *c, struct sentry_opts *o,
			     struct moat_error *err)
{
	struct cred_policy *cp = &o->policy.cred;
	struct stat st;

	if (c->cred.n) {
		struct credential *v;

		if (cp->n + c->cred.n > CRED_MAX)
			return moat_error_input(err, E2BIG,
						"dev.moat.credentials with "
						"dev.moat.policy: more than %d "
						"credentials",
						CRED_MAX);
		v = realloc(cp->v, (cp->n + c->cred.n) * sizeof(*v));
		if (!v)
			return moat_error_set(err, ENOMEM,
					      "dev.moat.credentials");
		memcpy(v + cp->n, c->cred.v, c->cred.n * sizeof(*v));
		cp->v = v;
		cp->n += c->cred.n;
		free(c->cred.v);
		c->cred.v = NULL;
		c->cred.n = 0;
		if (cred_validate(cp, "dev.moat.credentials", err) < 0)
			return moat_error_wrap(err, "dev.moat.credentials "
						    "with dev.moat.policy");
	}
	if (c->upstream_ca) {
		o->upstream_ca = realpath(c->upstream_ca, NULL);
		if (!o->upstream_ca || stat(o->upstream_ca, &st) < 0)
			return moat_error_set(err, errno,
					      "dev.moat.upstream-ca `%s`",
					      c->upstream_ca);
		if (!S_ISREG(st.st_mode))
			return moat_error_input(err, EINVAL,
						"dev.moat.upstream-ca `%s`: "
						"not a regular file",
						c->upstream_ca);
	}
	return 0;
}

/* The container's config, as sentry options. */
static int opts_from_config(struct oci_config *c, struct sentry_opts *o,
			    struct moat_error *err)
{
	size_t i;

	memset(o, 0, sizeof(*o));
	o->rootfs = c->root;
	o->rootfs_ro = c->root_ro;
	o->hostname = c->hostname;
	o->env = c->process.env;
	if (!o->env)
		o->env = xcalloc(1, sizeof(char *));
	o->cwd = c->process.cwd;
	o->memory = c->memory;
	o->pids = (int)c->pids;
	o->cpus = c->cpus;
	o->disk = c->disk;
	o->timeout_s = c->timeout_s;
	o->net = c->net;
	o->dns = c->dns;
	o->set_creds = true;
	o->uid = c->process.uid;
	o->gid = c->process.gid;
	o->gids = c->process.gids;
	o->ngids = (int)c->process.ngids;
	o->set_caps = c->process.has_caps;
	o->caps = c->process.caps;
	o->no_new_privs = c->process.no_new_privileges;
	o->set_umask = c->process.has_umask;
	o->umask = c->process.umask;
	o->oci_cgroups = true;
	o->cgroups_path = c->cgroups_path;
	o->cg = (struct oci_cg_res){
		.memory_swap = c->memory_swap,
		.memory_reservation = c->memory_reservation,
		.swappiness = c->swappiness,
		.disable_oom_killer = c->disable_oom_killer,
		.cpu_shares = c->cpu_shares,
		.cpu_quota = c->cpu_quota,
		.cpu_period = c->cpu_period,
		.cpuset_cpus = c->cpuset_cpus,
		.cpuset_mems = c->cpuset_mems
	};
	o->netns = c->netns;
	o->masked_paths = c->masked_paths;
	o->readonly_paths = c->readonly_paths;
	o->ping_range = c->ping_range;
	o->ping_lo = c->ping_lo;
	o->ping_hi = c->ping_hi;
	o->devices = xcalloc(c->ndevices + 1, sizeof(*o->devices));
	for (i = 0; i < c->ndevices; i++)
		o->devices[i] = (struct dev_spec){ .path = c->devices[i].path,
						   .mode = c->devices[i].mode,
						   .major = c->devices[i].major,
						   .minor = c->devices[i].minor,
						   .uid = c->devices[i].uid,
						   .gid = c->devices[i].gid };
	o->ndevices = c->ndevices;
	o->uid_maps = xcalloc(c->nuid_maps + 1, sizeof(*o->uid_maps));
	for (i = 0; i < c->nuid_maps; i++)
		o->uid_maps[i] = (struct id_map){ c->uid_maps[i].inside,
						  c->uid_maps[i].outside,
						  c->uid_maps[i].count };
	o->nuid_maps = c->nuid_maps;
	o->gid_maps = xcalloc(c->ngid_maps + 1, sizeof(*o->gid_maps));
	for (i = 0; i < c->ngid_maps; i++)
		o->gid_maps[i] = (struct id_map){ c->gid_maps[i].inside,
						  c->gid_maps[i].outside,
						  c->gid_maps[i].count };
	o->ngid_maps = c->ngid_maps;
	o->oom_score_adj = c->process.oom_score_adj;
	o->sysctls = xcalloc(c->nsysctls + 1, sizeof(*o->sysctls));
	for (i = 0; i < c->nsysctls; i++)
		o->sysctls[i] = (struct sysctl_spec){ c->sysctls[i].name,
						      c->sysctls[i].value };
	o->nsysctls = c->nsysctls;
	o->rlimits = xcalloc(c->process.nrlimits + 1, sizeof(*o->rlimits));
	for (i = 0; i < c->process.nrlimits; i++) {
		o->rlimits[i].res = c->process.rlimits[i].resource;
		o->rlimits[i].cur = c->process.rlimits[i].soft;
		o->rlimits[i].max = c->process.rlimits[i].hard;
	}
	o->nrlimits = c->process.nrlimits;
	o->mounts = xcalloc(c->nmounts + 1, sizeof(*o->mounts));
	o->tmpfs = xcalloc(c->nmounts + 1, sizeof(*o->tmpfs));
	o->order = xcalloc(c->nmounts + 1, sizeof(*o->order));
	/* /sys is the sentry's sysfs only where config.json mounts one, as
	 * runc mounts only what the config lists. */
	o->no_sysfs = true;
	for (i = 0; i < c->nmounts; i++) {
		struct oci_mount *m = &c->mounts[i];
		struct stat st;
		char *real;

		if (m->kind == OCI_MNT_TMPFS) {
			o->tmpfs[o->ntmpfs] =
				(struct tmpfs_spec){ .dst = m->dst,
						     .size = m->size,
						     .mode = m->mode,
						     .uid = m->uid,
						     .gid = m->gid,
						     .ro = m->ro,
						     .noexec = m->noexec,
						     .src = m->src };
			o->order[o->norder++] =
				(struct mount_order){ MOUNT_TMPFS,
						      o->ntmpfs++ };
			continue;
		}
		if (m->kind == OCI_MNT_SYNTH && !strcmp(m->dst, "/dev/shm"))
			o->shm_noexec = m->noexec;
		if (m->kind == OCI_MNT_SYNTH && !strcmp(m->dst, "/sys"))
			o->no_sysfs = false;
		if (m->kind != OCI_MNT_BIND)
			continue; /* the sentry's own */
		real = realpath(m->src, NULL);
		if (!real || stat(real, &st) < 0) {
			free(real);
			return moat_error_set(err, errno,
					      "config.json: mounts[%zu]: "
					      "source `%s`",
					      i, m->src);
		}
		/* A directory or a regular file: a gofer of its own
		 * serves it, ro or rw (sentry/boot.c start_mount). */
		if (S_ISDIR(st.st_mode) || S_ISREG(st.st_mode)) {
			o->mounts[o->nmounts].src = real;
			o->mounts[o->nmounts].dst = m->dst;
			o->mounts[o->nmounts].mode = m->ro ? MNT_RO : MNT_RW;
			o->mounts[o->nmounts].noexec = m->noexec;
			o->order[o->norder++] =
				(struct mount_order){ MOUNT_DIR, o->nmounts++ };
		} else {
			/* A FIFO, socket or device would need the host's
			 * node itself in the guest, which the sentry's VFS
			 * cannot serve: refused before anything starts. */
			free(real);
			return moat_error_input(
				err, EINVAL,
				"config.json: mounts[%zu]: source `%s` is %s: "
				"moat binds regular files and directories only",
				i, m->src, file_type_name(st.st_mode));
		}
	}
	if (c->policy_file &&
	    policy_load_file(c->policy_file, &o->policy, err) < 0)
		return moat_error_wrap(err, "dev.moat.policy");
	for (int deny = 0; deny < 2; deny++) {
		const char *list = deny ? c->deny : c->allow;
		cleanup_free char *copy = list ? xstrdup(list) : NULL;
		char *save = NULL, *r;

		for (r = copy ? strtok_r(copy, ", ", &save) : NULL; r;
		     r = strtok_r(NULL, ", ", &save))
			if (policy_add_rule(&o->policy, r, deny, err) < 0)
				return moat_error_wrap(err, "dev.moat.%s",
						       deny ? "deny" : "allow");
	}
	if (creds_from_config(c, o, err) < 0)
		return -1;
	return 0;
}

/* Send the pty master to the engine's console socket, as runc does (the
 * pts name as the payload). The master is the container's terminal: it
 * goes only to a listener of root or of our own uid, in a directory that
 * others may be able to write. So:
 * - S is opened O_PATH|O_NOFOLLOW (its directory by hostpath_parent) and
 *   must be a socket file of root's or ours: a link planted at S (to
 *   another root listener, say) is never followed, and connect(2) goes
 *   through /proc/self/fd/N, which resolves to that inode whatever is
 *   renamed over S meanwhile;
 * - its listener's uid (SO_PEERCRED) must be root's or ours too;
 * - nothing waits on the peer: the socket is non-blocking, so a listener
 *   whose backlog is full (one that never accepts) fails connect(2) with
 *   EAGAIN at once, as runc's does, and a send it does not take fails
 *   too. */
static int send_console(const char *sock_path, int master,
			struct moat_error *err)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	cleanup_close int dir_fd = -1, path_fd = -1, fd = -1;
	char name[64] = "/dev/ptmx", base[NAME_MAX + 1];
	struct ucred cr = { 0 };
	socklen_t cl = sizeof(cr);
	struct iovec iov;
	struct stat st;
	ssize_t n;

	dir_fd = hostpath_parent(sock_path, base);
	if (dir_fd < 0)
		return moat_error_set(err, -dir_fd, "--console-socket `%s`",
				      sock_path);
	path_fd = openat(dir_fd, base, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (path_fd < 0 || fstat(path_fd, &st) < 0)
		return moat_error_set(err, errno, "--console-socket `%s`",
				      sock_path);
	if (!S_ISSOCK(st.st_mode))
		return moat_error_input(err, ENOTSOCK,
					"--console-socket `%s` is %s, not a "
					"socket: the terminal is not sent",
					sock_path, file_type_name(st.st_mode));
	if (st.st_uid != 0 && st.st_uid != geteuid())
		return moat_error_input(err, EPERM,
					"--console-socket `%s` is owned by uid "
					"%u, neither root nor uid %u: the "
					"terminal is not sent",
					sock_path, (unsigned)st.st_uid,
					(unsigned)geteuid());
	snprintf(sa.sun_path, sizeof(sa.sun_path), "/proc/self/fd/%d", path_fd);
	ptsname_r(master, name, sizeof(name));
	iov = (struct iovec){ name, strlen(name) };
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return moat_error_set(err, errno, "--console-socket `%s`",
				      sock_path);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &cl) < 0 ||
	    (cr.uid != 0 && cr.uid != geteuid()))
		return moat_error_input(err, EPERM,
					"--console-socket `%s`: its listener "
					"is uid %u, neither root nor uid %u: "
					"the terminal is not sent",
					sock_path, (unsigned)cr.uid,
					(unsigned)geteuid());
	n = send_with_fds(fd, &iov, 1, &master, 1);
	if (n < 0)
		return moat_error_set(err, (int)-n, "--console-socket: send");
	return 0;
}

static char *now_rfc3339(void)
{
	struct timespec now;
	struct tm tm;
	char buf[64], *out;

	clock_gettime(CLOCK_REALTIME, &now);
	gmtime_r(&now.tv_sec, &tm);
	strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
	if (asprintf(&out, "%s.%09ldZ", buf, now.tv_nsec) < 0)
		abort();
	return out;
}

/* Written by the daemon itself, for its own pid, in its state directory
 * dirfd: 0600 (its annotations are the engine's), replaced whole. With
 * the sandbox's cgroup directories, for `delete` to remove (another
 * process than the one that made them: a relative cgroupsPath is the
 * creator's cgroup's). */
int write_state(int dirfd, const char *id, struct oci_config *c,
		char (*cgdirs)[PATH_MAX], int ncgdirs, const char *pod)
{
	cleanup_free char *created = now_rfc3339();
	json_object *o = json_object_new_object(), *ann;
	struct passwd *pw = getpwuid(geteuid());
	const char *text;
	int rc;

	json_object_object_add(o, "ociVersion",
			       json_object_new_string(OCI_VERSION));
	json_object_object_add(o, "id", json_object_new_string(id));
	json_object_object_add(o, "pid", json_object_new_int(getpid()));
	json_object_object_add(o, "moatStart",
			       json_object_new_uint64(proc_start(getpid())));
	json_object_object_add(o, "bundle", json_object_new_string(c->bundle));
	json_object_object_add(o, "rootfs", json_object_new_string(c->root));
	json_object_object_add(o, "created", json_object_new_string(created));
	json_object_object_add(o, "owner",
			       json_object_new_string(pw ? pw->pw_name : ""));
	ann = json_object_new_object();
	for (size_t i = 0; i < c->nannotations; i++)
		json_object_object_add(
			ann, c->annotations[i].key,
			json_object_new_string(c->annotations[i].value));
	json_object_object_add(o, "annotations", ann);
	ann = json_object_new_array();
	for (int i = 0; i < ncgdirs; i++)
		json_object_array_add(ann, json_object_new_string(cgdirs[i]));
	json_object_object_add(o, "moatCgroups", ann);
	if (pod) /* a pod's member (cli/pod.c): the pod's sandbox container */
		json_object_object_add(o, "moatPod",
				       json_object_new_string(pod));
	text = json_object_to_json_string_ext(
		o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE);
	rc = write_file_at(dirfd, "state.json", text, strlen(text), 0600);
	json_object_put(o);
	if (rc < 0)
		errno = -rc;
	return rc;
}

/* The bundle's config.json, kept for the hooks and exec: 0600, since its
 * process.env may hold secrets. */
static int copy_config(const char *bundle, int dirfd)
{
	cleanup_free char *src = NULL;
	cleanup_free char *text = NULL;
	size_t len;
	struct moat_error err = { 0 };
	int rc;

	if (asprintf(&src, "%s/config.json", bundle) < 0)
		abort();
	if (jdoc_read_file(src, OCI_CONFIG_MAX, &text, &len, &err) < 0)
		return -1;
	rc = write_file_at(dirfd, "config.json", text, len, 0600);
	if (rc < 0)
		errno = -rc;
	return rc;
}

/* ROOT/ID/exit, made empty before the sandbox starts: once the sentry's
 * seccomp filter is in force the daemon can open nothing. A name of the
 * new state directory's, so O_EXCL: nothing is there to be opened. */
int open_exit(int dirfd)
{
	return openat(dirfd, "exit",
		      O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		      0600);
}

/* fd moved above stdio, where dup2 onto 0-2 cannot clobber it. */
int fd_above_stdio(int fd)
{
	int r;

	if (fd > 2)
		return fd;
	r = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	close(fd);
	return r;
}

/* The daemon: the sandbox, held until `start`. Never returns. */
__attribute__((noreturn)) static void
daemon_main(struct launch *l, struct sentry_opts *o, int ready, int tty)
{
	struct moat_error err = { 0 };
	char ctl[PATH_MAX + 8];
	int rc, exit_fd;

	if (l->detach)
		setsid();
	if (tty >= 0) {
		ioctl(tty, TIOCSCTTY, 0);
		dup2(tty, 0);
		dup2(tty, 1);
		dup2(tty, 2);
		if (tty > 2)
			close(tty);
	}
	signal(SIGINT, SIG_DFL);
	ready = fd_above_stdio(ready);
	if (write_state(l->dirfd, l->id, &l->c, l->cgdirs, l->ncgdirs, NULL) <
	    0) {
		dprintf(ready, "error: state of `%s`: %s\n", l->id,
			strerror(errno));
		_exit(125);
	}
	exit_fd = open_exit(l->dirfd);
	close(l->dirfd);
	/* The sentry holds no fd of the runtime's: not --root's (every
	 * container's state), nor --log's. */
	oci_drop_runtime_fds();
	o->exit_fd = exit_fd;
	ctl_name(l->id, ctl, sizeof(ctl));
	o->control_addr = ctl;
	o->audit_id = l->id; /* the records name the container, as engines do */
	o->wait_start = true;
	o->init_unkillable = true; /* its first process is an init, as runc's */
	o->ready_fd = ready;
	rc = sentry_run(o, l->c.process.args, &err);
	if (rc < 0) {
		if (S && S->opts.ready_fd > 2)
			dprintf(ready, "error: %s\n", err.msg);
		else
			fprintf(stderr, "moat: %s\n", err.msg);
		rc = 125;
	}
	if (exit_fd >= 0 && o->exit_fd == exit_fd) /* not written yet */
		dprintf(exit_fd, "%d\n", rc);
	fflush(stdout);
	fflush(stderr);
	_exit(rc);
}

/* Read the daemon's "ok", or its error. */
static int await_ready(int fd, char *msg, size_t cap)
{
	size_t n = 0;
	ssize_t r;

	while (n < cap - 1 && (r = read(fd, msg + n, cap - 1 - n)) != 0) {
		if (r < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		n += (size_t)r;
		if (memchr(msg, '\n', n))
			break;
	}
	msg[n] = 0;
	msg[strcspn(msg, "\n")] = 0;
	return strcmp(msg, "ok") ? -1 : 0;
}

static void opts_free(struct sentry_opts *o, const struct oci_config *c)
{
	size_t i;

	for (i = 0; i < o->nmounts; i++)
		free(o->mounts[i].src);
	free(o->mounts);
	free(o->tmpfs);
	free(o->order);
	free(o->rlimits);
	free(o->devices);
	free(o->uid_maps);
	free(o->sysctls);
	free(o->gid_maps);
	if (o->env != c->process.env)
		free(o->env);
	policy_free(&o->policy);
	free(o->upstream_ca);
	memset(o, 0, sizeof(*o));
}

static int launch_sandbox(struct launch *l, struct sentry_opts *o);

pid_t fork_ready(struct launch *l, int ready[2])
{
	pid_t pid;

	if (pipe2(ready, O_CLOEXEC) < 0) {
		remove_state(l->id);
		fail("pipe: %s", strerror(errno));
		return -1;
	}
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		remove_state(l->id);
		close(ready[0]);
		close(ready[1]);
		fail("fork: %s", strerror(errno));
		return -1;
	}
	close(ready[pid == 0 ? 0 : 1]);
	return pid;
}

static int launch(struct launch *l)
{
	struct sentry_opts o = { 0 };
	int rc = launch_sandbox(l, &o);

	opts_free(&o, &l->c);
	free(l->cgdirs);
	l->cgdirs = NULL;
	return rc;
}

int state_make(const char *id, const char *bundle)
{
	int root = root_dir(true), dfd;

	if (root < 0)
		return fail("%s", g.root_err.msg), -1;
	/* Ours alone: the container's environment is in its config.json. */
	if (mkdirat(root, id, 0700) < 0)
		return fail(errno == EEXIST ? "container with id exists: %s" :
					      "state of `%s`: %m",
			    id),
		       -1;
	dfd = openat(root, id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0 || fchmod(dfd, 0700) < 0 || copy_config(bundle, dfd) < 0) {
		int e = errno;
		if (dfd >= 0)
			close(dfd);
		remove_state(id);
		return fail("state of `%s`: %s", id, strerror(e)), -1;
	}
	return dfd;
}

int console_make(struct launch *l)
{
	struct winsize ws = { (unsigned short)l->c.process.console_rows,
			      (unsigned short)l->c.process.console_cols, 0, 0 };
	struct moat_error err = { 0 };
	int master, tty = -1;

	master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (master < 0 || grantpt(master) < 0 || unlockpt(master) < 0 ||
	    (tty = open(ptsname(master), O_RDWR | O_NOCTTY)) < 0) {
		int e = errno;
		if (master >= 0)
			close(master);
		remove_state(l->id);
		return fail("terminal: %s", strerror(e)), -1;
	}
	if (ws.ws_row && ws.ws_col)
		ioctl(master, TIOCSWINSZ, &ws);
	if (send_console(l->console_socket, master, &err) < 0) {
		close(master);
		close(tty);
		remove_state(l->id);
		return fail("%s", err.msg), -1;
	}
	close(master);
	return tty;
}

/* pid, which failed: gone, and its state too. */
static int launch_undo(struct launch *l, pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	remove_state(l->id);
	return 1;
}

int launch_wait(struct launch *l, pid_t pid, int ready)
{
	char msg[1024];
	struct cstate s;

	l->pid = pid;
	if (await_ready(ready, msg, sizeof(msg)) < 0) {
		close(ready);
		launch_undo(l, pid);
		return fail("%s",
			    msg[0] ? (strncmp(msg, "error: ", 7) ? msg :
								   msg + 7) :
				     "the sandbox ended during setup");
	}
	close(ready);
	debug("container %s created: pid %d", l->id, (int)pid);
	if (cstate_load(l->id, &s) == 0) {
		if (run_hooks(&s, OCI_HOOK_PRESTART, "prestart", "created") ||
		    run_hooks(&s, OCI_HOOK_CREATE_RUNTIME, "createRuntime",
			      "created")) {
			cstate_free(&s);
			return launch_undo(l, pid);
		}
		cstate_free(&s);
	}
	if (l->pid_file) {
		char buf[16];
		int n = snprintf(buf, sizeof(buf), "%d", (int)pid);
		int rc = write_pid_file(l->pid_file, buf, (size_t)n);
		if (rc < 0) {
			launch_undo(l, pid);
			return fail("--pid-file `%s`: %s", l->pid_file,
				    strerror(-rc));
		}
	}
	return 0;
}

/* The config, checked and turned into sentry options (*op, freed by
 * launch() whatever happens); *sid: its pod, when it is a member. */
static int launch_config(struct launch *l, struct sentry_opts *op,
			 char **bundle, char **sid)
{
	struct moat_error err = { 0 };

	if (!id_ok(l->id))
		return fail("`%s` is not a container ID (1 to 90 of "
			    "A-Z a-z 0-9 _ + - . , not first)",
			    l->id);
	*bundle = realpath(l->bundle, NULL);
	if (!*bundle)
		return fail("bundle `%s`: %s", l->bundle, strerror(errno));
	if (oci_config_load(*bundle, &l->c, &err) < 0)
		return fail("%s", err.msg);
	warn_lines(l->c.warnings);
	if (l->c.process.terminal && !l->console_socket && !l->own_terminal)
		return fail("process.terminal is true: --console-socket is "
			    "required");
	if (!l->c.process.terminal && l->console_socket)
		return fail("--console-socket given, but process.terminal is "
			    "false");
	if (opts_from_config(&l->c, op, &err) < 0)
		return fail("%s", err.msg);
	if (pod_of(&l->c, l->id, sid, &err) < 0)
		return fail("%s", err.msg);
	return 0;
}

static int launch_sandbox(struct launch *l, struct sentry_opts *op)
{
	struct moat_error err = { 0 };
	struct sentry_opts o;
	cleanup_free char *bundle = NULL, *sid = NULL;
	int ready[2], tty = -1;
	pid_t pid;

	if (launch_config(l, op, &bundle, &sid))
		return 1;
	if (sid)
		return pod_launch(l, op, sid);
	o = *op;
	/* runc's default: the ID, relative to the runtime's cgroup. Where
	 * it is, refused before anything is made. */
	o.cgroups_path = l->c.cgroups_path ? l->c.cgroups_path : l->id;
	*op = o; /* freed by launch(); o's arrays are shared */
	l->cgdirs = xcalloc(LIMITS_MAX_CG, PATH_MAX);
	l->ncgdirs = limits_oci_dirs(o.cgroups_path, l->cgdirs, &err);
	if (l->ncgdirs < 0)
		return fail("%s", err.msg);
	l->dirfd = state_make(l->id, bundle);
	if (l->dirfd < 0)
		return 1;
	if (l->c.process.terminal && l->console_socket) {
		tty = console_make(l);
		if (tty < 0)
			return 1;
	}
	/* with a console socket, a pty of ours; in the foreground (run),
	 * as moat do -t */
	o.tty = l->c.process.terminal;
	pid = fork_ready(l, ready);
	if (pid < 0)
		return 1;
	if (pid == 0)
		daemon_main(l, &o, ready[1], tty);
	close(l->dirfd);
	l->dirfd = -1;
	if (tty >= 0)
		close(tty);
	return launch_wait(l, pid, ready[0]);
}

/* ---- commands -------------------------------------------------------------- */

static const struct option create_opts[] = {
	{ "bundle", required_argument, NULL, 'b' },
	{ "pid-file", required_argument, NULL, 'p' },
	{ "console-socket", required_argument, NULL, 'c' },
	{ "detach", no_argument, NULL, 'd' },
	{ "no-pivot", no_argument, NULL, 'P' },
	{ "no-new-keyring", no_argument, NULL, 'K' },
	{ "preserve-fds", required_argument, NULL, 'F' },
	{ "keep", no_argument, NULL, 'k' },
	{ NULL, 0, NULL, 0 },
};

static int parse_launch(int argc, char **argv, struct launch *l, bool run,
			bool *keep)
{
	int c;

	memset(l, 0, sizeof(*l));
	l->bundle = ".";
	optind = 1;
	while ((c = getopt_long(argc, argv, run ? "+b:d" : "+b:", create_opts,
				NULL)) != -1) {
		switch (c) {
		case 'b':
			l->bundle = optarg;
			break;
		case 'p':
			l->pid_file = optarg;
			break;
		case 'c':
			l->console_socket = optarg;
			break;
		case 'd':
			if (!run)
				return -1;
			l->detach = true;
			break;
		case 'k':
			if (keep)
				*keep = true;
			break;
		case 'P': /* there is no host root to pivot from */
		case 'K': /* the sandbox has no host keyring */
			break;
		case 'F':
			if (strcmp(optarg, "0"))
				return -1; /* no host fd enters the sandbox */
			break;
		default:
			return -1;
		}
	}
	if (optind != argc - 1)
		return -1;
	l->id = argv[optind];
	return 0;
}

static int cmd_create(int argc, char **argv)
{
	struct launch l;
	int rc;

	if (parse_launch(argc, argv, &l, false, NULL) < 0)
		return fail("usage: moat create [--bundle DIR] [--pid-file F] "
			    "[--console-socket S] ID");
	l.detach = true;
	rc = launch(&l);
	oci_config_free(&l.c);
	return rc;
}

/* Resolve ID, or print runc's message. */
static int load_or_fail(const char *id, struct cstate *s)
{
	int rc = cstate_load(id, s);

	if (rc == -ENOENT)
		return fail("container does not exist");
	if (rc == -EPERM)
		return fail("%s", g.root_err.msg);
	if (rc < 0)
		return fail("state of `%s` is unreadable", id);
	return 0;
}

/* req, answered: 0, with *out (the caller's to free) the body of a
 * framed request (ps, stats); else 1, said. A request that returns
 * nothing must be answered "ok": anything else is no answer. */
static int request_data(struct cstate *s, const char *req, bool framed,
			char **out, size_t *len)
{
	ssize_t n = control_call(s->ctl, req, strlen(req), framed, out, 10);

	if (len)
		*len = n > 0 ? (size_t)n : 0;
	if (n == -EPROTO)
		return fail("container `%s`: a malformed or cut-off answer to "
			    "`%.*s`",
			    s->id, (int)strcspn(req, "\n"), req);
	if (n < 0)
		return fail("container `%s`: no answer (%s)", s->id,
			    strerror((int)-n));
	/* (no body begins so: ps's are pids, stats' JSON) */
	if (!strncmp(*out, "error: ", 7)) {
		fail("%s", *out + 7);
	} else if (!framed && strcmp(*out, "ok")) {
		fail("container `%s`: a malformed answer to `%.*s`", s->id,
		     (int)strcspn(req, "\n"), req);
	} else {
		return 0;
	}
	free(*out);
	*out = NULL;
	return 1;
}

int request(struct cstate *s, const char *req)
{
	cleanup_free char *reply = NULL;

	return request_data(s, req, false, &reply, NULL);
}

static int start_container(struct cstate *s)
{
	char buf[256];
	const char *st = cstatus(s, buf, sizeof(buf));

	if (strcmp(st, "created"))
		return fail(
			!strcmp(st, "stopped") ?
				"cannot start a container that has stopped" :
				"cannot start an already running container");
	if (s->pod ? pod_start(s) : request(s, "start\n"))
		return 1;
	return run_hooks(s, OCI_HOOK_POSTSTART, "poststart", "running");
}

static int cmd_start(int argc, char **argv)
{
	struct cstate s;
	int rc;

	if (argc != 2)
		return fail("usage: moat start ID");
	if (load_or_fail(argv[1], &s))
		return 1;
	rc = start_container(&s);
	cstate_free(&s);
	return rc;
}

#define DELETE_GRACE_MS 2000

/* Wait (bounded) for the daemon to be gone: not our child, so a pidfd. */
void wait_gone(const struct cstate *s, int timeout_ms)
{
	int fd = (int)syscall(SYS_pidfd_open, s->pid, 0);

	if (fd >= 0) {
		struct pollfd p = { fd, POLLIN, 0 };
		if (daemon_alive(s))
			poll(&p, 1, timeout_ms);
		close(fd);
		return;
	}
	for (int i = 0; i < timeout_ms / 10 && daemon_alive(s); i++)
		usleep(10000);
}

static int delete_container(struct cstate *s, bool force)
{
	char buf[256];
	const char *st = cstatus(s, buf, sizeof(buf));

	if (strcmp(st, "stopped") && strcmp(st, "created") && !force)
		return fail("cannot delete container %s that is not stopped: "
			    "%s",
			    s->id, st);
	if (s->pod) {
		pod_end(s); /* the member's alone: its pod runs on */
	} else if (daemon_alive(s)) {
		/* SIGTERM first: the sentry ends its guests and writes its
		 * audit log's end (the counts it kept); SIGKILL if it has
		 * not in a short grace, as before. */
		kill(s->pid, SIGTERM);
		wait_gone(s, DELETE_GRACE_MS);
		if (daemon_alive(s)) {
			kill(s->pid, SIGKILL);
			wait_gone(s, 10000);
		}
	}
	/* The sandbox's cgroups, removed by its janitor as it ends, are
	 * gone once delete returns, as runc's (its last processes may still
	 * be dying: a second at most). */
	for (size_t i = 0;
	     s->cgroups && i < json_object_array_length(s->cgroups); i++) {
		json_object *d = json_object_array_get_idx(s->cgroups, i);
		if (json_object_is_type(d, json_type_string))
			limits_oci_remove(json_object_get_string(d));
	}
	/* poststop failing is a warning: the container is gone anyway */
	run_hooks(s, OCI_HOOK_POSTSTOP, "poststop", "stopped");
	remove_state(s->id);
	return 0;
}

static int cmd_delete(int argc, char **argv)
{
	bool force = false;
	const char *id = NULL;
	struct cstate s;
	int i, rc;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--force") || !strcmp(argv[i], "-f"))
			force = true;
		else if (!id)
			id = argv[i];
		else
			id = NULL, i = argc + 1;
	}
	if (!id || i > argc)
		return fail("usage: moat delete [--force] ID");
	rc = cstate_load(id, &s);
	if (rc == -ENOENT && force) {
		/* a create that died before its daemon wrote the state
		 * leaves a directory alone: nothing runs there */
		if (!id_ok(id))
			return 0;
		switch (leftover_state(id)) {
		case 0:
			remove_state(id);
			return 0;
		case -ENOTDIR:
			return fail("`%s/%s` is not a container's state "
				    "directory: left as it is",
				    g.root, id);
		case -ENOTEMPTY:
			return fail("`%s/%s` holds more than a container's "
				    "state: left as it is",
				    g.root, id);
		default:
			return 0; /* nothing there */
		}
	}
	if (rc < 0)
		return load_or_fail(id, &s);
	rc = delete_container(&s, force);
	cstate_free(&s);
	return rc;
}

/* `run` in the foreground: wait for the daemon (our child), passing the
 * signals this process gets on to the container's first process, as runc
 * does. ^C and ^\ reach the guests from the terminal itself (they share
 * its process group), so those are not passed on a second time. */
static int wait_forwarding(const struct cstate *s, pid_t pid)
{
	static const int fwd[] = { SIGTERM, SIGHUP,   SIGUSR1,
				   SIGUSR2, SIGWINCH, SIGCONT };
	sigset_t set, old;
	int sfd, pfd, st = 0;
	unsigned k;

	sigemptyset(&set);
	for (k = 0; k < ARRAY_SIZE(fwd); k++)
		sigaddset(&set, fwd[k]);
	sigprocmask(SIG_BLOCK, &set, &old);
	sfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	pfd = (int)syscall(SYS_pidfd_open, pid, 0);
	while (sfd >= 0 && pfd >= 0) {
		struct pollfd pf[2] = { { pfd, POLLIN, 0 },
					{ sfd, POLLIN, 0 } };
		struct signalfd_siginfo si;
		char req[32];

		if (poll(pf, 2, -1) < 0)
			continue;
		while (read(sfd, &si, sizeof(si)) == sizeof(si)) {
			cleanup_free char *reply = NULL;

			/* a member's anchor (our child) passes it on */
			if (s->pod) {
				kill(pid, (int)si.ssi_signo);
				continue;
			}
			snprintf(req, sizeof(req), "kill %u\n", si.ssi_signo);
			control_call(s->ctl, req, strlen(req), false, &reply,
				     5);
		}
		if (pf[0].revents)
			break;
	}
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (sfd >= 0)
		close(sfd);
	if (pfd >= 0)
		close(pfd);
	/* What still comes is for a container that has ended: ignored, so
	 * that the delete after this still runs. */
	for (k = 0; k < ARRAY_SIZE(fwd); k++)
		signal(fwd[k], SIG_IGN);
	sigprocmask(SIG_SETMASK, &old, NULL);
	return st;
}

static int cmd_run(int argc, char **argv)
{
	struct launch l;
	struct cstate s;
	bool keep = false;
	int st, rc;

	if (parse_launch(argc, argv, &l, true, &keep) < 0)
		return fail("usage: moat run [--bundle DIR] [-d] "
			    "[--pid-file F] [--console-socket S] ID");
	l.own_terminal = !l.detach;
	/* In the foreground the container is this terminal's: ^C and ^\
	 * reach its processes, not moat. */
	if (!l.detach) {
		signal(SIGINT, SIG_IGN);
		signal(SIGQUIT, SIG_IGN);
	}
	rc = launch(&l);
	if (rc)
		return rc;
	if (cstate_load(l.id, &s) < 0)
		return fail("container `%s` vanished", l.id);
	rc = start_container(&s);
	if (rc || l.detach) {
		cstate_free(&s);
		return rc;
	}
	st = wait_forwarding(&s, l.pid);
	if (!keep)
		delete_container(&s, true);
	cstate_free(&s);
	oci_config_free(&l.c);
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	return 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}

static int cmd_state(int argc, char **argv)
{
	cleanup_free char *out = NULL;
	struct cstate s;
	char buf[256];

	if (argc != 2)
		return fail("usage: moat state ID");
	if (load_or_fail(argv[1], &s))
		return 1;
	out = state_json(&s, cstatus(&s, buf, sizeof(buf)), true);
	printf("%s\n", out);
	cstate_free(&s);
	return 0;
}

int cmd_oci_kill(int argc, char **argv)
{
	const char *id = NULL, *sig = "TERM";
	bool all = false;
	char req[64], buf[256];
	struct cstate s;
	int i, n = 0, rc;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--all") || !strcmp(argv[i], "-a"))
			all = true;
		else if (n == 0 && ++n)
			id = argv[i];
		else if (n == 1 && ++n)
			sig = argv[i];
		else
			n = 3;
	}
	if (id) {
		int rc0 = cstate_load(id, &s);
		/* `moat do --name`: also where the default root is not
		 * ours to use (a user's sandboxes are in their own
		 * runtime directory) */
		if ((rc0 == -ENOENT || rc0 == -EPERM) && !g.root_given)
			return cmd_kill(argc, argv);
		if (rc0 == 0)
			cstate_free(&s);
	}
	if (!id || n > 2)
		return fail("usage: moat kill [--all] ID [SIGNAL]");
	if (control_parse_signal(sig) < 0)
		return fail("`%s` is not a signal", sig);
	if (load_or_fail(id, &s))
		return 1;
	if (s.pod) {
		rc = pod_kill(&s, sig, all);
		cstate_free(&s);
		return rc;
	}
	if (!strcmp(cstatus(&s, buf, sizeof(buf)), "stopped")) {
		cstate_free(&s);
		return fail("container not running");
	}
	snprintf(req, sizeof(req), "kill %s%s\n", sig, all ? " all" : "");
	rc = request(&s, req);
	cstate_free(&s);
	return rc;
}

/* `--format json|table`, `--format=...` or `-f ...` at argv[*i] (moving
 * *i past its value): true when it was one. */
static bool format_arg(int argc, char **argv, int *i, bool *json)
{
	const char *a = argv[*i], *v = NULL;
	bool next = false; /* the value is the next argument */

	if (!strncmp(a, "--format=", 9))
		v = a + 9;
	else if ((!strcmp(a, "--format") || !strcmp(a, "-f")) && *i + 1 < argc)
		v = argv[*i + 1], next = true;
	if (!v || (strcmp(v, "json") && strcmp(v, "table")))
		return false;
	if (next)
		(*i)++;
	*json = !strcmp(v, "json");
	return true;
}

static int cmd_list(int argc, char **argv)
{
	bool json = false, quiet = false;
	json_object *arr = json_object_new_array();
	DIR *d;
	struct dirent *e;
	int i;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-q") || !strcmp(argv[i], "--quiet"))
			quiet = true;
		else if (!format_arg(argc, argv, &i, &json))
			return fail("usage: moat list [--format table|json] "
				    "[-q]");
	}
	if (!json && !quiet)
		printf("%-12s%-12s%-12s%-12s%-33s%s\n", "ID", "PID", "STATUS",
		       "BUNDLE", "CREATED", "OWNER");
	/* runc lists nothing for a root that does not exist */
	if (root_dir(false) < 0 && g.root_err.code != ENOENT) {
		json_object_put(arr);
		return fail("%s", g.root_err.msg);
	}
	d = g.rootfd >= 0 ? fdopendir(dup(g.rootfd)) : NULL;
	while (d && (e = readdir(d))) {
		struct cstate s;
		char buf[256];
		const char *st;

		if (e->d_name[0] == '.' || cstate_load(e->d_name, &s) < 0)
			continue;
		st = cstatus(&s, buf, sizeof(buf));
		if (quiet) {
			printf("%s\n", s.id);
		} else if (json) {
			cleanup_free char *j = state_json(&s, st, false);
			json_object_array_add(arr, json_tokener_parse(j));
		} else {
			printf("%-12s%-12d%-12s%-12s%-33s%s\n", s.id,
			       strcmp(st, "stopped") ? (int)s.pid : 0, st,
			       s.bundle, s.created, s.owner);
		}
		cstate_free(&s);
	}
	if (d)
		closedir(d);
	if (json)
		printf("%s\n",
		       json_object_to_json_string_ext(
			       arr, JSON_C_TO_STRING_PLAIN |
					    JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(arr);
	return 0;
}

/* One "Name:\tN" field of a /proc status file. */
static long status_field(const char *st, const char *name)
{
	const char *p = st;

	/* at a line's start: a Name: (the guest's) cannot make one */
	while ((p = strstr(p, name)) && p != st && p[-1] != '\n')
		p++;
	return p ? strtol(p + strlen(name), NULL, 10) : -1;
}

/* /proc/PID/status through dir (an open of /proc/PID, or -1 for
 * procfs's root and pid), into buf. */
static int read_status(int dir, pid_t pid, char *buf, size_t cap)
{
	char path[32];
	ssize_t n;
	int fd;

	if (dir >= 0)
		snprintf(path, sizeof(path), "status");
	else
		snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	fd = openat(dir >= 0 ? dir : AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read_all(fd, buf, cap - 1);
	close(fd);
	if (n <= 0)
		return n < 0 ? (int)n : -ESRCH;
	buf[n] = 0;
	return 0;
}

/* Whether host process pid is one of the container's, whatever the
 * sentry said: 1, 0 (a process, not the container's), -1 (gone). Its
 * sentry, the daemon, traces every guest from its fork on (platform/:
 * forks are followed, never attached) and nothing else of the host,
 * which it could not (it is in a user namespace of its own); and every
 * guest descends from it (through the reaper). Both are read through one
 * open of /proc/PID, which stays that process's: a pid reused meanwhile
 * reads as gone, never as the new process's. */
int guest_of(pid_t daemon, pid_t pid)
{
	char path[32], st[4096];
	long ppid;
	int dir, i;

	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	dir = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0)
		return -1;
	i = read_status(dir, pid, st, sizeof(st));
	close(dir);
	if (i < 0)
		return -1;
	if (status_field(st, "TracerPid:") != daemon)
		return 0;
	/* its ancestors (guest, reaper, daemon: a few steps) */
	for (i = 0, ppid = status_field(st, "PPid:"); i < 8 && ppid > 1; i++) {
		if (ppid == daemon)
			return 1;
		if (read_status(-1, (pid_t)ppid, st, sizeof(st)) < 0)
			break;
		ppid = status_field(st, "PPid:");
	}
	return 0;
}

static int cmd_ps(int argc, char **argv)
{
	cleanup_free char *reply = NULL;
	size_t rlen = 0;
	cleanup_free struct ctl_ps_entry *e = NULL;
	bool json = false;
	const char *id = NULL, *sep = "";
	struct cstate s;
	char buf[64], req[128];
	long n, k;
	int i;

	for (i = 1; i < argc; i++) {
		if (format_arg(argc, argv, &i, &json))
			continue;
		if (!id && argv[i][0] != '-')
			id = argv[i];
		else if (!strcmp(argv[i], "--"))
			break; /* ps(1) options: the table is moat's own */
		else
			return fail("usage: moat ps [--format table|json] ID");
	}
	if (!id)
		return fail("usage: moat ps [--format table|json] ID");
	if (load_or_fail(id, &s))
		return 1;
	if (!strcmp(cstatus(&s, buf, sizeof(buf)), "stopped")) {
		cstate_free(&s);
		if (json) {
			printf("[]\n");
			return 0;
		}
		return fail("container not running");
	}
	snprintf(req, sizeof(req), s.pod ? "ps %s\n" : "ps\n", s.id);
	if (request_data(&s, req, true, &reply, &rlen)) {
		cstate_free(&s);
		return 1;
	}
	/* All of it well-formed before any of it is used. */
	/* by the length it came with: a NUL in it is no end */
	n = ctl_ps_parse(reply, rlen, NULL, 0);
	if (n >= 0 && (e = calloc((size_t)n + 1, sizeof(*e))))
		n = ctl_ps_parse(reply, rlen, e, (size_t)n);
	if (n < 0 || !e) {
		cstate_free(&s);
		return fail("container `%s`: a malformed answer to `ps`", id);
	}
	/* What is printed is the container's: an engine acts on it (`ctr
	 * task ps`, `docker top`, a kill), so a pid that is not one of its
	 * processes is left out, whoever said it was. */
	for (k = 0; k < n; k++) {
		int g = guest_of(s.pod ? s.pod_pid : s.pid, e[k].host_pid);

		if (g == 0)
			fprintf(stderr,
				"moat: ps: host pid %d is not a process of "
				"container `%s`: left out\n",
				e[k].host_pid, id);
		if (g <= 0)
			e[k].host_pid = 0;
	}
	cstate_free(&s);
	if (json) {
		printf("[");
		for (k = 0; k < n; k++)
			if (e[k].host_pid) {
				printf("%s%d", sep, e[k].host_pid);
				sep = ",";
			}
		printf("]\n");
		return 0;
	}
	printf("%-10s %-10s %s\n", "PID", "GUEST-PID", "CMD");
	for (k = 0; k < n; k++)
		if (e[k].host_pid)
			printf("%-10d %-10d %s\n", e[k].host_pid,
			       e[k].guest_pid, e[k].comm);
	return 0;
}

/* runc's stats event, from the sentry's "stats" answer. */
static char *stats_event(const char *id, const char *reply, long npids)
{
	json_object *in = json_tokener_parse(reply), *v;
	json_object *ev = json_object_new_object(), *data, *cpu, *usage, *mem,
		    *musage, *pids, *nets, *eth;
	char *out;
#define NUM(k)                                                                 \
	(json_object_object_get_ex(in, k, &v) ? json_object_get_int64(v) : 0)

	data = json_object_new_object();
	cpu = json_object_new_object();
	usage = json_object_new_object();
	json_object_object_add(usage, "total",
			       json_object_new_int64(NUM("cpu_ns")));
	json_object_object_add(cpu, "usage", usage);
	json_object_object_add(data, "cpu", cpu);
	mem = json_object_new_object();
	musage = json_object_new_object();
	json_object_object_add(musage, "usage",
			       json_object_new_int64(NUM("memory")));
	json_object_object_add(musage, "max",
			       json_object_new_int64(NUM("memory_max")));
	json_object_object_add(musage, "limit",
			       json_object_new_int64(NUM("memory_limit")));
	json_object_object_add(mem, "usage", musage);
	json_object_object_add(data, "memory", mem);
	pids = json_object_new_object();
	json_object_object_add(pids, "current",
			       json_object_new_int64(npids >= 0 ? npids :
								  NUM("pids")));
	json_object_object_add(pids, "limit",
			       json_object_new_int64(NUM("pids_limit")));
	json_object_object_add(data, "pids", pids);
	nets = json_object_new_array();
	if (json_object_object_get_ex(in, "net", &v) &&
	    json_object_get_boolean(v)) {
		eth = json_object_new_object();
		json_object_object_add(eth, "name",
				       json_object_new_string("eth0"));
		json_object_object_add(eth, "rx_bytes",
				       json_object_new_int64(NUM("rx_bytes")));
		json_object_object_add(
			eth, "rx_packets",
			json_object_new_int64(NUM("rx_packets")));
		json_object_object_add(eth, "tx_bytes",
				       json_object_new_int64(NUM("tx_bytes")));
		json_object_object_add(
			eth, "tx_packets",
			json_object_new_int64(NUM("tx_packets")));
		json_object_object_add(
			eth, "tx_dropped",
			json_object_new_int64(NUM("tx_dropped")));
		json_object_array_add(nets, eth);
	}
	json_object_object_add(data, "network_interfaces", nets);
#undef NUM
	json_object_object_add(ev, "type", json_object_new_string("stats"));
	json_object_object_add(ev, "id", json_object_new_string(id));
	json_object_object_add(ev, "data", data);
	out = xstrdup(json_object_to_json_string_ext(
		ev, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(ev);
	json_object_put(in);
	return out;
}

static int cmd_events(int argc, char **argv)
{
	bool once = false;
	int interval = 5, i;
	const char *id = NULL;
	struct cstate s;
	char buf[64];

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--stats"))
			once = true;
		else if (!strcmp(argv[i], "--interval") && i + 1 < argc)
			interval = atoi(argv[++i]);
		else if (!strncmp(argv[i], "--interval=", 11))
			interval = atoi(argv[i] + 11);
		else if (!id)
			id = argv[i];
		else
			id = NULL, i = argc;
	}
	if (!id || interval <= 0)
		return fail("usage: moat events [--stats] [--interval SECS] "
			    "ID");
	if (load_or_fail(id, &s))
		return 1;
	for (;;) {
		cleanup_free char *ev = NULL, *reply = NULL;

		if (!strcmp(cstatus(&s, buf, sizeof(buf)), "stopped")) {
			cstate_free(&s);
			return once ? fail("container not running") : 0;
		}
		if (request_data(&s, "stats\n", true, &reply, NULL)) {
			cstate_free(&s);
			return 1;
		}
		/* a member's: its pod's sandbox, but its own processes */
		ev = stats_event(id, reply, s.pod ? pod_nprocs(&s) : -1);
		printf("%s\n", ev);
		fflush(stdout);
		if (once)
			break;
		sleep((unsigned)interval);
	}
	cstate_free(&s);
	return 0;
}

static int cmd_pause_resume(int argc, char **argv)
{
	bool pause = !strcmp(argv[0], "pause");
	struct cstate s;
	int rc;

	if (argc != 2)
		return fail("usage: moat %s ID", argv[0]);
	if (load_or_fail(argv[1], &s))
		return 1;
	if (s.pod) {
		fail("container `%s` is a member of pod `%s`: %s the pod's "
		     "sandbox container, which holds all of it",
		     argv[1], s.pod, argv[0]);
		cstate_free(&s);
		return 1;
	}
	rc = request(&s, pause ? "pause\n" : "resume\n");
	cstate_free(&s);
	return rc;
}

static int cmd_spec(int argc, char **argv)
{
	const char *bundle = ".";
	cleanup_free char *path = NULL, *doc = oci_spec_default();
	int i, fd;

	for (i = 1; i < argc; i++) {
		if ((!strcmp(argv[i], "--bundle") || !strcmp(argv[i], "-b")) &&
		    i + 1 < argc)
			bundle = argv[++i];
		else if (!strncmp(argv[i], "--bundle=", 9))
			bundle = argv[i] + 9;
		else if (strcmp(argv[i], "--rootless"))
			return fail("usage: moat spec [--bundle DIR]");
	}
	if (asprintf(&path, "%s/config.json", bundle) < 0)
		abort();
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0)
		return fail(errno == EEXIST ?
				    "File %s exists. Remove it first" :
				    "%s: %m",
			    path);
	if (write_all(fd, doc, strlen(doc)) < 0) {
		close(fd);
		return fail("%s: %s", path, strerror(errno));
	}
	close(fd);
	return 0;
}

/* ---- exec ------------------------------------------------------------------ */

void fields_put(struct fields *f, const char *str)
{
	size_t l = strlen(str) + 1;

	if (!f->b) {
		f->cap = 4096;
		f->b = xmalloc(f->cap);
	}
	while (f->n + l > f->cap) {
		f->cap *= 2;
		f->b = realloc(f->b, f->cap);
		if (!f->b)
			abort();
	}
	memcpy(f->b + f->n, str, l);
	f->n += l;
}

void fields_putf(struct fields *f, const char *fmt, ...)
{
	char num[64];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(num, sizeof(num), fmt, ap);
	va_end(ap);
	fields_put(f, num);
}

void exec_fields(struct fields *f, const struct oci_process *pr)
{
	size_t i, argc = 0, envc = 0;

	fields_put(f, pr->cwd);
	fields_putf(f, "%u", pr->uid);
	fields_putf(f, "%u", pr->gid);
	fields_putf(f, "%zu", pr->ngids);
	for (i = 0; i < pr->ngids; i++)
		fields_putf(f, "%u", pr->gids[i]);
	while (pr->args[argc])
		argc++;
	fields_putf(f, "%zu", argc);
	for (i = 0; i < argc; i++)
		fields_put(f, pr->args[i]);
	while (pr->env && pr->env[envc])
		envc++;
	fields_putf(f, "%zu", envc);
	for (i = 0; i < envc; i++)
		fields_put(f, pr->env[i]);
	fields_put(f, pr->terminal ? "1" : "0");
	fields_put(f, pr->no_new_privileges ? "1" : "0");
	if (pr->has_caps) {
		const uint64_t v[] = { pr->caps.bnd, pr->caps.eff, pr->caps.inh,
				       pr->caps.prm, pr->caps.amb };
		for (i = 0; i < ARRAY_SIZE(v); i++)
			fields_putf(f, "%llx", (unsigned long long)v[i]);
	}
}

/* The request body of sentry/control.c's "exec": NUL-separated fields. */
char *exec_body(const struct oci_process *pr, size_t *len)
{
	struct fields f = { 0 };

	exec_fields(&f, pr);
	*len = f.n;
	return f.b;
}

/* Read "ok VPID" or "error: ...", whole (prot/control.h), from fd: 0
 * with *vpid, or -1 with line the message. */
static int relay_ok(int fd, char *line, size_t cap, unsigned long *vpid)
{
	size_t n = 0;
	bool whole = false;

	while (n < cap - 1) {
		ssize_t r = read(fd, line + n, 1);
		if (r <= 0)
			break;
		if (line[n] == '\n') {
			whole = true;
			break;
		}
		n++;
	}
	line[n] = 0;
	if (whole && ctl_word_uint(line, n, "ok", CTL_PID_MAX, vpid) == 0 &&
	    *vpid)
		return 0;
	if (whole && !strncmp(line, "error: ", 7))
		memmove(line, line + 7, strlen(line + 7) + 1);
	else
		snprintf(line, cap,
			 n ? "a malformed or cut-off answer" : "no answer");
	return -1;
}

/* The request, sent whole with its fds: 0, or -1 with line the error. */
static int relay_send(const struct relay *r, int fd, char *line, size_t cap)
{
	struct iovec iov[2] = { { (void *)r->head, strlen(r->head) },
				{ (void *)r->body, r->len } };
	ssize_t w = send_with_fds(fd, iov, 2, r->fds, r->nfds);
	size_t hl = iov[0].iov_len;

	if (w < 0) {
		snprintf(line, cap, "%s", strerror((int)-w));
		return -1;
	}
	if ((size_t)w < hl + r->len &&
	    ((size_t)w < hl || write_all(fd, r->body + ((size_t)w - hl),
					 r->len - ((size_t)w - hl)) < 0)) {
		snprintf(line, cap, "short send");
		return -1;
	}
	return 0;
}

/* It runs: say so, then pass signals on as "kill SIG VPID" until its
 * "exit STATUS" comes. The status, -1 (the sandbox ended), or -2 (a
 * malformed answer). */
static int relay_wait(const struct relay *r, int fd, unsigned long vpid)
{
	static const int relayed[] = { SIGTERM, SIGINT,	 SIGHUP,   SIGQUIT,
				       SIGUSR1, SIGUSR2, SIGWINCH, SIGCONT };
	char line[256];
	sigset_t set;
	size_t n = 0;
	int sfd, status = -1;
	unsigned k;

	if (r->dirfd >= 0) {
		n = (size_t)snprintf(line, sizeof(line), "%lu\n", vpid);
		write_file_at(r->dirfd, "vpid", line, n, 0600);
		n = 0;
	}
	if (r->notify > 2) {
		if (write(r->notify, "ok\n", 3) != 3) {
			/* the parent is gone: run on regardless */
		}
		close(r->notify);
	}
	sigemptyset(&set);
	for (k = 0; k < ARRAY_SIZE(relayed); k++)
		sigaddset(&set, relayed[k]);
	sigprocmask(SIG_BLOCK, &set, NULL);
	sfd = signalfd(-1, &set, SFD_CLOEXEC);
	for (;;) {
		struct pollfd pf[2] = { { fd, POLLIN, 0 }, { sfd, POLLIN, 0 } };

		if (poll(pf, 2, -1) < 0)
			continue;
		if (pf[1].revents & POLLIN) {
			struct signalfd_siginfo si;
			char req[64];

			if (read(sfd, &si, sizeof(si)) == sizeof(si)) {
				cleanup_free char *reply = NULL;

				snprintf(req, sizeof(req), "kill %u %lu\n",
					 si.ssi_signo, vpid);
				control_call(r->ctl, req, strlen(req), false,
					     &reply, 5);
			}
		}
		if (pf[0].revents & (POLLIN | POLLHUP | POLLERR)) {
			ssize_t rd = read(fd, line + n, sizeof(line) - 1 - n);
			unsigned long st;
			char *nl;

			if (rd <= 0)
				break;
			n += (size_t)rd;
			line[n] = 0;
			nl = strchr(line, '\n');
			if (!nl && n < sizeof(line) - 1)
				continue;
			/* "exit STATUS", whole, and nothing else */
			if (nl && ctl_word_uint(line, (size_t)(nl - line),
						"exit", 0xffff, &st) == 0)
				status = (int)st;
			else
				status = -2;
			break;
		}
	}
	if (sfd >= 0)
		close(sfd);
	return status;
}

int relay_run(const struct relay *r, int *wstatus)
{
	char line[256];
	unsigned long vpid = 0;
	int fd = control_connect(r->ctl), st;

	if (fd < 0) {
		snprintf(line, sizeof(line), "container `%s`: no answer (%s)",
			 r->id, strerror(-fd));
		goto fail;
	}
	if (relay_send(r, fd, line, sizeof(line)) < 0 ||
	    relay_ok(fd, line, sizeof(line), &vpid) < 0)
		goto fail;
	st = relay_wait(r, fd, vpid);
	close(fd);
	if (st == -2) {
		fail("a malformed answer from container `%s`", r->id);
		st = 255 << 8; /* exit 255 */
	}
	*wstatus = st;
	return 0;
fail:
	if (fd >= 0)
		close(fd);
	if (r->notify > 2) {
		dprintf(r->notify, "error: %s\n", line);
		close(r->notify);
	} else {
		fail("%s", line);
	}
	return -1;
}

/* Ask the daemon to run pr with stdio fds; relay signals to it until it
 * ends. Returns its exit code (128+N for a signal). notify (> 2): where
 * "ok" or the error goes once it runs (exec -d), closed then. */
static int exec_relay(const struct cstate *s, const struct oci_process *pr,
		      const int fds[3], int notify)
{
	cleanup_free char *body = NULL;
	char head[160];
	struct relay r = { .ctl = s->ctl,
			   .id = s->id,
			   .head = head,
			   .fds = fds,
			   .nfds = 3,
			   .notify = notify,
			   .dirfd = -1 };
	int status;

	body = exec_body(pr, &r.len);
	r.body = body;
	/* a pod member's: in its own tree, in its pod's sentry */
	if (s->pod)
		snprintf(head, sizeof(head), "exec %zu %s\n", r.len, s->id);
	else
		snprintf(head, sizeof(head), "exec %zu\n", r.len);
	if (relay_run(&r, &status) < 0)
		return 255;
	if (status < 0)
		return 137; /* the sandbox ended under it */
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

static const struct option exec_opts[] = {
	{ "process", required_argument, NULL, 'p' },
	{ "tty", no_argument, NULL, 't' },
	{ "detach", no_argument, NULL, 'd' },
	{ "pid-file", required_argument, NULL, 'P' },
	{ "console-socket", required_argument, NULL, 'c' },
	{ "cwd", required_argument, NULL, 'w' },
	{ "env", required_argument, NULL, 'e' },
	{ "user", required_argument, NULL, 'u' },
	{ "additional-gids", required_argument, NULL, 'g' },
	{ "cap", required_argument, NULL, 'C' },
	{ "no-new-privs", no_argument, NULL, 'N' },
	{ "apparmor", required_argument, NULL, 'A' },
	{ "process-label", required_argument, NULL, 'L' },
	{ "preserve-fds", required_argument, NULL, 'F' },
	{ "ignore-paused", no_argument, NULL, 'I' },
	{ "cgroup", required_argument, NULL, 'G' },
	{ NULL, 0, NULL, 0 },
};

static void push_arg(char ***v, size_t *n, char *arg)
{
	*v = realloc(*v, (*n + 1) * sizeof(char *));
	if (!*v)
		abort();
	(*v)[(*n)++] = arg;
}

static int cmd_exec(int argc, char **argv)
{
	const char *process_file = NULL, *pid_file = NULL, *console = NULL,
		   *cwd = NULL, *user = NULL;
	bool tty = false, detach = false;
	char **envs = NULL, **gids = NULL;
	size_t nenv = 0, ngid = 0, i;
	struct oci_process pr = { 0 };
	struct moat_error err = { 0 };
	struct oci_config c;
	struct cstate s;
	int fds[3] = { 0, 1, 2 }, opt, code, master = -1, slave = -1;
	char buf[256];

	optind = 1;
	while ((opt = getopt_long(argc, argv, "+p:tdu:e:g:c:", exec_opts,
				  NULL)) != -1) {
		switch (opt) {
		case 'p':
			process_file = optarg;
			break;
		case 't':
			tty = true;
			break;
		case 'd':
			detach = true;
			break;
		case 'P':
			pid_file = optarg;
			break;
		case 'c':
			console = optarg;
			break;
		case 'w':
			cwd = optarg;
			break;
		case 'u':
			user = optarg;
			break;
		case 'e':
			push_arg(&envs, &nenv, optarg);
			break;
		case 'g':
			push_arg(&gids, &ngid, optarg);
			break;
		case 'F':
			if (strcmp(optarg, "0"))
				return fail("--preserve-fds: no host fd "
					    "enters the sandbox");
			break;
		case 'C':
		case 'N':
		case 'A':
		case 'L':
		case 'I':
		case 'G':
			break; /* given by the sandbox already (docs/oci.md) */
		default:
			return fail("usage: moat exec [options] ID [CMD "
				    "ARGS...] | --process F ID");
		}
	}
	if (optind >= argc)
		return fail("usage: moat exec [options] ID [CMD ARGS...]");
	if (load_or_fail(argv[optind], &s))
		return 1;
	/* `exec ID -- CMD ...`: the command starts after the "--" */
	if (optind + 1 < argc && !strcmp(argv[optind + 1], "--")) {
		argv[optind + 1] = argv[optind];
		optind++;
	}
	if (process_file) {
		cleanup_free char *text = NULL;
		size_t len;

		if (optind + 1 < argc)
			return fail("--process and a command are exclusive");
		if (jdoc_read_file(process_file, OCI_CONFIG_MAX, &text, &len,
				   &err) < 0 ||
		    oci_process_parse(text, len, process_file, &pr, &err) < 0)
			return fail("--process: %s", err.msg);
		warn_lines(pr.warnings);
		/* A process file without capabilities gets the container's,
		 * as runc's exec takes them from the container's config, not
		 * root's: a client never gains by leaving them out. */
		if (!pr.has_caps) {
			if (load_saved_config(&s, &c, &err) < 0)
				return fail("%s", err.msg);
			pr.has_caps = c.process.has_caps;
			pr.caps = c.process.caps;
			oci_config_free(&c);
		}
	} else {
		/* The container's own process, with the command and the
		 * options given here (as runc builds it). */
		if (optind + 1 >= argc)
			return fail("exec: a command is required");
		if (load_saved_config(&s, &c, &err) < 0)
			return fail("%s", err.msg);
		pr = c.process;
		memset(&c.process, 0, sizeof(c.process));
		oci_config_free(&c);
		for (char **a = pr.args; *a; a++)
			free(*a);
		free(pr.args);
		pr.args = xcalloc((size_t)(argc - optind), sizeof(char *));
		for (i = 0; (int)i < argc - optind - 1; i++)
			pr.args[i] = xstrdup(argv[optind + 1 + i]);
		pr.terminal = tty;
	}
	if (cwd) {
		free(pr.cwd);
		pr.cwd = xstrdup(cwd);
	}
	if (user) {
		char *end;
		pr.uid = (uid_t)strtoul(user, &end, 10);
		if (*end == ':')
			pr.gid = (gid_t)strtoul(end + 1, &end, 10);
		if (*end)
			return fail("--user `%s`: UID[:GID] expected", user);
	}
	for (i = 0; i < ngid; i++) {
		pr.gids = realloc(pr.gids, (pr.ngids + 1) * sizeof(gid_t));
		if (!pr.gids)
			abort();
		pr.gids[pr.ngids++] = (gid_t)strtoul(gids[i], NULL, 10);
	}
	for (i = 0; i < nenv; i++) {
		size_t k = strcspn(envs[i], "="), n = 0;
		bool replaced = false;

		while (pr.env && pr.env[n]) {
			if (!strncmp(pr.env[n], envs[i], k) &&
			    pr.env[n][k] == '=') {
				free(pr.env[n]);
				pr.env[n] = xstrdup(envs[i]);
				replaced = true;
			}
			n++;
		}
		if (!replaced) {
			pr.env = realloc(pr.env, (n + 2) * sizeof(char *));
			if (!pr.env)
				abort();
			pr.env[n] = xstrdup(envs[i]);
			pr.env[n + 1] = NULL;
		}
	}
	free(envs);
	free(gids);
	if (!pr.cwd)
		pr.cwd = xstrdup("/");
	if (pr.terminal && console) {
		master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
		if (master < 0 || grantpt(master) < 0 || unlockpt(master) < 0 ||
		    (slave = open(ptsname(master), O_RDWR | O_NOCTTY)) < 0)
			return fail("terminal: %s", strerror(errno));
		if (send_console(console, master, &err) < 0)
			return fail("%s", err.msg);
		close(master);
		fds[0] = fds[1] = fds[2] = slave;
	} else if (pr.terminal && detach) {
		return fail("cannot allocate tty if moat will detach without "
			    "setting console socket");
	}
	{
		const char *st = cstatus(&s, buf, sizeof(buf));
		if (strcmp(st, "running"))
			return fail("cannot exec in a %s container", st);
	}
	if (detach) {
		int pp[2];
		pid_t proxy;
		char msg[512];

		if (pipe2(pp, O_CLOEXEC) < 0)
			return fail("pipe: %s", strerror(errno));
		fflush(stdout);
		fflush(stderr);
		proxy = fork();
		if (proxy < 0)
			return fail("fork: %s", strerror(errno));
		if (proxy == 0) {
			/* The exec's host stand-in: its engine reaps it and
			 * signals it; it passes signals on and ends as the
			 * process does. */
			close(pp[0]);
			setsid();
			pp[1] = fd_above_stdio(pp[1]);
			_exit(exec_relay(&s, &pr, fds, pp[1]));
		}
		close(pp[1]);
		if (slave >= 0)
			close(slave);
		if (await_ready(pp[0], msg, sizeof(msg)) < 0) {
			close(pp[0]);
			waitpid(proxy, NULL, 0);
			return fail("%s", !msg[0] ? "exec failed" :
					  strncmp(msg, "error: ", 7) ? msg :
								       msg + 7);
		}
		close(pp[0]);
		if (pid_file) {
			char pb[16];
			int n = snprintf(pb, sizeof(pb), "%d", (int)proxy);
			int rc = write_pid_file(pid_file, pb, (size_t)n);
			if (rc < 0) {
				/* exec failed, so nothing of it runs (runc
				 * kills its process too): the engine has no
				 * pid to reap or signal. The stand-in's end
				 * of the control socket closing makes the
				 * sentry SIGKILL the process. */
				kill(proxy, SIGKILL);
				waitpid(proxy, NULL, 0);
				return fail("--pid-file `%s`: %s", pid_file,
					    strerror(-rc));
			}
		}
		cstate_free(&s);
		oci_process_free(&pr);
		return 0;
	}
	if (pid_file) {
		char pb[16];
		int n = snprintf(pb, sizeof(pb), "%d", (int)getpid());
		write_pid_file(pid_file, pb, (size_t)n);
	}
	code = exec_relay(&s, &pr, fds, -1);
	cstate_free(&s);
	oci_process_free(&pr);
	return code;
}

/* ---- dispatch -------------------------------------------------------------- */

static const struct {
	const char *name;
	int (*fn)(int, char **);
} cmds[] = {
	{ "create", cmd_create },
	{ "start", cmd_start },
	{ "run", cmd_run },
	{ "state", cmd_state },
	{ "kill", cmd_oci_kill },
	{ "delete", cmd_delete },
	{ "list", cmd_list },
	{ "ps", cmd_ps },
	{ "events", cmd_events },
	{ "pause", cmd_pause_resume },
	{ "resume", cmd_pause_resume },
	{ "spec", cmd_spec },
	{ "exec", cmd_exec },
};

bool oci_is_command(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(cmds); i++)
		if (!strcmp(cmds[i].name, name))
			return true;
	return false;
}

int oci_version(void)
{
	printf("moat version %s\nspec: %s\n", MOAT_VERSION, OCI_VERSION);
	return 0;
}

/* moat [GLOBAL OPTIONS] COMMAND ...: argv[0] is "moat". */
int cmd_oci(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		const char *a = argv[i], *val = NULL;
		const char *eq = strchr(a, '=');
		char key[32];

		snprintf(key, sizeof(key), "%.*s",
			 (int)(eq ? (size_t)(eq - a) : strlen(a)), a);
		if (!strcmp(key, "--root") || !strcmp(key, "--log") ||
		    !strcmp(key, "--log-format") || !strcmp(key, "--criu") ||
		    !strcmp(key, "--rootless")) {
			if (eq)
				val = eq + 1;
			else if (i + 1 < argc)
				val = argv[++i];
			else
				return fail("%s: a value is required", key);
		}
		if (!strcmp(key, "--root")) {
			/* mkdir_parents and ctl_name need a path */
			if (!*val)
				return fail("--root: an empty path is not a "
					    "directory");
			g.root = val;
			g.root_given = true;
		} else if (!strcmp(key, "--log"))
			g.log = val;
		else if (!strcmp(key, "--log-format")) {
			if (strcmp(val, "json") && strcmp(val, "text"))
				return fail("--log-format `%s`: json or text",
					    val);
			g.log_json = !strcmp(val, "json");
		} else if (!strcmp(key, "--debug"))
			g.debug = true;
		else if (!strcmp(key, "--systemd-cgroup")) {
			/* accepted: the sandbox's cgroups are moat's own */
		} else if (!strcmp(key, "--version") || !strcmp(key, "-v"))
			return oci_version();
		else if (strcmp(key, "--criu") && strcmp(key, "--rootless"))
			return fail("unknown global option `%s`", a);
	}
	if (i >= argc)
		return fail("no command given");
	for (size_t k = 0; k < ARRAY_SIZE(cmds); k++)
		if (!strcmp(cmds[k].name, argv[i])) {
			debug("%s %s", argv[i],
			      i + 1 < argc ? argv[i + 1] : "");
			return cmds[k].fn(argc - i, argv + i);
		}
	return fail("unknown command `%s`", argv[i]);
}
