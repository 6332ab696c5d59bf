/* sentry/boot.c: bring a sandbox up: the gofer, the namespaces, the first
 * task; then run the event loop until the first task (virtual init) exits. */
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gofer/gofer.h"
#include "gofer/spawn.h"
#include "lib/crash.h"
#include "netstack/netpol.h"
#include "netstack/netstack.h"
#include "netstack/resolver.h"
#include "platform/platform.h"
#include "sentry/audit.h"
#include "sentry/brokerlink.h"
#include "sentry/control.h"
#include "sentry/exec.h"
#include "sentry/limits.h"
#include "sentry/fs_tmpfs.h"
#include "sentry/hostids.h"
#include "sentry/overlay.h"
#include "sentry/p9client.h"
#include "sentry/pty.h"
#include "sentry/sentry.h"
#include "sentry/store.h"
#include "sentry/sysctl.h"
#include "sentry/vfs.h"

static pid_t start_gofer(const char *root, enum gofer_kind kind, int *sock_out,
			 struct moat_error *err)
{
	/* The host's own root is served as the sandbox's helper uid; the
	 * store's gofer is asked little (a large file's create and
	 * reopen): not on the sentry's CPU, where the rootfs's gofer
	 * answers every lookup. */
	struct gofer_spawn o = { .kind = kind,
				 .has_as = true,
				 .as_uid = S->ids.helper_uid,
				 .as_gid = S->ids.helper_gid,
				 .cpus = kind == GOFER_FOR_STORE ? &S->cpus :
								   NULL };
	pid_t pid = gofer_spawn(root, &o, sock_out, err);

	if (pid > 0)
		limits_adopt(pid);
	return pid;
}

/* Each `--mount` gets a gofer of its own, confined to that directory or
 * that one file alone, writable only for `rw` (a `clone` tree is read
 * from the host and changed in the overlay). A file's host changes are
 * seen at once and the guest's writes reach the host, as through a bind
 * mount of it. S->mount_gofers holds opts->nmounts. */
static int start_mount(const struct sentry_opts *opts, size_t i,
		       struct moat_error *err)
{
	const struct mount_spec *m = &opts->mounts[i];
	struct p9_client *c;
	struct p9_qid rq;
	uint32_t rootfid;
	int sock = -1;
	pid_t pid;

	pid = start_gofer(m->src, m->mode == MNT_RW ? GOFER_RW : GOFER_RO,
			  &sock, err);
	if (pid < 0)
		return moat_error_wrap(err, "--mount `%s`", m->src);
	S->mount_gofers[i] = pid;
	if (p9c_open(&c, sock, &rootfid, &rq, err) < 0) {
		close(sock);
		return moat_error_wrap(err, "--mount `%s`", m->src);
	}
	if (vfs_add_mount(m->dst, (enum mnt_mode)m->mode, m->noexec, c, rootfid,
			  err) < 0) {
		p9c_close(c);
		return -1;
	}
	return 0;
}

/* The store (sentry/store.h): the sandbox's directory under the store's
 * base, and a gofer of its own for it, --rw and confined to it, so that
 * the sentry still opens no host path itself. Without --disk, the
 * writable layers may hold TMPFS_DEFAULT_MAX, or half of what is free
 * where the store lives if that is less: one sandbox never fills the
 * host's disk. */
static int store_launch(const struct sentry_opts *opts, struct moat_error *err)
{
	const char *dir = NULL;
	uint64_t free_b = 0;
	int sock = -1;
	pid_t pid;

	if (store_prepare(opts->store, &dir, &free_b, err) < 0)
		return -1;
	if (free_b / 2 < TMPFS_DEFAULT_MAX)
		tmpfs_set_default_max(free_b / 2);
	pid = start_gofer(dir, GOFER_FOR_STORE, &sock, err);
	if (pid < 0)
		return moat_error_wrap(err, "store");
	S->store_gofer = pid;
	/* Greeted at the first file too large to stay inline, if ever: most
	 * sandboxes never wait for this gofer's start. */
	store_attach_later(sock);
	return 0;
}

/* The sandbox's hostname resolves, as it does on a host and in a runc
 * or gVisor container: /etc/hosts gets a line for it, in the overlay (the
 * rootfs's file is never written), unless it names it already. */
static void hosts_add_hostname(void)
{
	char buf[65536], line[128];
	struct vnode *vn, *up;
	struct file *f;
	int64_t off = 0;
	long n;

	if (vfs_resolve(NULL, AT_FDCWD, "/etc/hosts", LOOKUP_FOLLOW, &vn) < 0)
		return;
	if (!S_ISREG(vn->mode) || vfs_open(NULL, vn, O_RDONLY, &f) < 0) {
		vnode_put(vn);
		return;
	}
	n = f->ops->read(NULL, f, buf, sizeof(buf) - 1, &off);
	file_put(f);
	if (n < 0 || (size_t)n >= sizeof(buf) - 1) {
		vnode_put(vn);
		return;
	}
	buf[n] = 0;
	for (char *p = buf; (p = strstr(p, S->hostname)); p++) {
		size_t l = strlen(S->hostname);
		bool start = p == buf || p[-1] == ' ' || p[-1] == '\t';
		bool end = !p[l] || p[l] == ' ' || p[l] == '\t' || p[l] == '\n';
		if (start && end) {
			vnode_put(vn);
			return;
		}
	}
	snprintf(line, sizeof(line), "%s127.0.1.1\t%s\n",
		 n && buf[n - 1] != '\n' ? "\n" : "", S->hostname);
	if (ovl_write_target(vn, &up) == 0) {
		if (vfs_open(NULL, up, O_WRONLY | O_APPEND, &f) == 0) {
			off = 0;
			f->ops->write(NULL, f, line, strlen(line), &off);
			file_put(f);
		}
		vnode_put(up);
	}
	vnode_put(vn);
}

/* `moat do`'s guest is root with HOME=/root (or the --env HOME it was
 * given), and programs keep caches and state there (Jupyter, pip, torch,
 * matplotlib): it must be a directory the guest can list and write. The
 * host's /root, served as nobody, is neither: the guest gets an empty one
 * of its own instead, in the overlay (its entries were never visible; it
 * keeps its owner and mode). A home the rootfs lacks is made, in memory.
 * A home that is a mount, tmpfs, or a readable rootfs directory is left
 * as it is (writes to a rootfs one copy up). Best effort: a home that
 * cannot be made is the guest's own business, as on a host. */
static void home_prepare(const char *home)
{
	char buf[PATH_MAX];
	struct vnode *vn;
	char *p;
	int rc;

	if (!home || home[0] != '/' || strlen(home) >= sizeof(buf))
		return;
	strcpy(buf, home);
	/* Each rootfs directory on the way: one the gofer cannot list hides
	 * the rest of the path (HOME=/root/work). */
	for (p = buf + 1;; p++) {
		char save = *p;
		if (save != '/' && save)
			continue;
		*p = 0;
		rc = vfs_resolve(NULL, AT_FDCWD, buf, LOOKUP_FOLLOW, &vn);
		if (rc == 0) {
			bool dir = S_ISDIR(vn->mode);
			if (dir && vn->kind == VN_GOFER &&
			    !ovl_lower_listable(vn->path))
				ovl_private_dir(vn->path);
			vnode_put(vn);
			if (!dir)
				return;
		} else if (rc == -ENOENT || rc == -EACCES) {
			*p = save;
			if (vfs_mkdir_p(home, NULL, NULL) == 0 &&
			    vfs_resolve(NULL, AT_FDCWD, home, LOOKUP_FOLLOW,
					&vn) == 0) {
				if (tmpfs_is_overlay(vn))
					ovl_private_dir(vn->path);
				vnode_put(vn);
			}
			return;
		} else {
			return;
		}
		*p = save;
		if (!save)
			return;
	}
}

/* One mount of a bundle's, of whichever kind. */
static int apply_mount(const struct sentry_opts *opts,
		       const struct mount_order *o, struct moat_error *err)
{
	switch (o->kind) {
	case MOUNT_DIR:
		return start_mount(opts, o->i, err);
	case MOUNT_TMPFS:
		return vfs_add_tmpfs(&opts->tmpfs[o->i], err);
	}
	return moat_error_set(err, EINVAL, "mount of kind %d", (int)o->kind);
}

/* The guest's resolver is the sentry's (netstack/resolver.c), whatever the
 * network mode: /etc/resolv.conf names it, in the overlay. A rootfs
 * without the file (or with a dangling link) is left as it is. */
static void resolv_conf_write(void)
{
	static const char text[] = "# moat: the sandbox's resolver (the "
				   "sentry), which answers what the\n"
				   "# egress policy allows\n"
				   "nameserver " NS_RESOLVER "\n";
	struct vnode *vn, *up;
	struct file *f;
	int64_t off = 0;

	if (vfs_resolve(NULL, AT_FDCWD, "/etc/resolv.conf", LOOKUP_FOLLOW,
			&vn) < 0)
		return;
	if (S_ISREG(vn->mode) && ovl_write_target(vn, &up) == 0) {
		if (vfs_open(NULL, up, O_WRONLY | O_TRUNC, &f) == 0) {
			f->ops->write(NULL, f, text, sizeof(text) - 1, &off);
			file_put(f);
		}
		vnode_put(up);
	}
	vnode_put(vn);
}

void sentry_rootfs_files(void)
{
	hosts_add_hostname();
	resolv_conf_write();
}

/* `moat netslirp` on one end of a frame socketpair and of a link control
 * one (netstack/linkctl.h); the other ends are ours. */
static pid_t start_netslirp(int *link_out, int *ctl_out, struct moat_error *err)
{
	int sv[2], cv[2];
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return moat_error_set(err, errno, "netslirp: socketpair");
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, cv) < 0) {
		close(sv[0]);
		close(sv[1]);
		return moat_error_set(err, errno, "netslirp: socketpair");
	}
	/* Room for the host's addresses in flight (the sentry's end gets
	 * its room in netstack_init). */
	{
		int sz = 4 << 20;

		if (setsockopt(cv[1], SOL_SOCKET, SO_SNDBUFFORCE, &sz,
			       sizeof(sz)) < 0)
			setsockopt(cv[1], SOL_SOCKET, SO_SNDBUF, &sz,
				   sizeof(sz));
	}
	/* Room for a few windows of frames each way: a full link drops
	 * frames, and every drop costs TCP a retransmission. (Root may go
	 * past rmem_max; others get what it allows.) */
	for (int i = 0; i < 2; i++) {
		int sz = 4 << 20;

		if (setsockopt(sv[i], SOL_SOCKET, SO_SNDBUFFORCE, &sz,
			       sizeof(sz)) < 0)
			setsockopt(sv[i], SOL_SOCKET, SO_SNDBUF, &sz,
				   sizeof(sz));
		if (setsockopt(sv[i], SOL_SOCKET, SO_RCVBUFFORCE, &sz,
			       sizeof(sz)) < 0)
			setsockopt(sv[i], SOL_SOCKET, SO_RCVBUF, &sz,
				   sizeof(sz));
	}
	pid = fork();
	if (pid < 0)
		return moat_error_set(err, errno, "netslirp: fork");
	if (pid == 0) {
		char asbuf[32];
		char *args[] = { "moat", "netslirp", "--fd", "3", "--ctl",
				 "4",	 "--as",     asbuf,  NULL };

		/* its host identity: the sandbox's helper uid */
		snprintf(asbuf, sizeof(asbuf), "%u:%u",
			 (unsigned)S->ids.helper_uid,
			 (unsigned)S->ids.helper_gid);

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		/* cv[1] out of the way of fd 3 first */
		if (cv[1] == 3) {
			int c = fcntl(cv[1], F_DUPFD_CLOEXEC, 5);

			if (c < 0)
				_exit(126);
			cv[1] = c;
		}
		if (dup2(sv[1], 3) < 0 || dup2(cv[1], 4) < 0 ||
		    fcntl(3, F_SETFD, 0) < 0 || fcntl(4, F_SETFD, 0) < 0)
			_exit(126);
		/* in the bundle's network namespace, if it names one: the
		 * sentry's (join_netns) */
		execv("/proc/self/exe", args);
		_exit(126);
	}
	limits_adopt(pid);
	close(sv[1]);
	close(cv[1]);
	fcntl(sv[0], F_SETFL, O_NONBLOCK);
	*link_out = sv[0];
	*ctl_out = cv[0];
	return pid;
}

/* The sandbox's ID: --name, or moat's pid. It names the control socket
 * (moat kill, moat policy) and the sandbox in audit lines, so every
 * sandbox has both. */
static const char *sandbox_id(const struct sentry_opts *opts)
{
	static char pid[16];

	if (opts->name)
		return opts->name;
	if (!pid[0])
		snprintf(pid, sizeof(pid), "%d", (int)getpid());
	return pid;
}

/* An OCI bundle's network namespace (a pod's, its CNI's): the sentry
 * joins it, as runc's init does, so that the pid `create` reports has it
 * as /proc/PID/ns/net (containerd and other tools read it there), and
 * what the sentry starts from here (the credential broker, slirp's
 * helper) makes its host sockets there. The guests, forked by the reaper
 * before, make none. */
static int join_netns(const char *path, struct moat_error *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc = 0;

	if (fd < 0 || setns(fd, CLONE_NEWNET) < 0)
		rc = moat_error_set(err, errno,
				    "network namespace `%s`: cannot join it",
				    path);
	if (fd >= 0)
		close(fd);
	return rc;
}

/* The network: the egress policy, the resolver, and for slirp its helper
 * and the netstack on its link. */
static int net_setup(struct sentry_opts *opts, struct moat_error *err)
{
	struct netstack_config cfg = { .mode = (enum net_mode)opts->net,
				       .link_fd = -1,
				       .ctl_fd = -1 };
	char up[16];
	int rc;

	if (opts->netns && join_netns(opts->netns, err) < 0)
		return -1;
	netpol_set(&opts->policy);
	resolv_conf_write();
	/* Credentials: their broker, and the guest's view of it (its
	 * placeholders and CA), before any guest exists. */
	if (broker_start(opts, err) < 0)
		return -1;
	broker_env(&opts->env);
	S->opts.env = opts->env;
	if (broker_write_ca(err) < 0)
		return -1;
	if (cfg.mode == NET_NONE)
		return sentry_net_init(&cfg, err); /* the resolver alone */
	if (opts->dns) {
		if (resolver_set_upstream(opts->dns) < 0)
			return moat_error_set(
				err, EINVAL,
				"--dns `%s`: not an IPv4 address the link "
				"reaches (not the host's loopback)",
				opts->dns);
	} else if ((resolver_upstream_from("/etc/resolv.conf", up) < 0 ||
		    resolver_set_upstream(up) < 0) &&
		   (resolver_upstream_from("/run/systemd/resolve/resolv.conf",
					   up) < 0 ||
		    resolver_set_upstream(up) < 0)) {
		/* A host resolver on its own loopback (systemd-resolved's
		 * stub) is out of the link's reach; its upstreams are in
		 * systemd's own resolv.conf. Without one, allowed names get
		 * SERVFAIL. */
		audit_log("\"event\":\"net-no-resolver\",\"reason\":\"no "
			  "nameserver the link reaches; use --dns\"");
	}
	if (cfg.mode == NET_TAP) {
		if (tap_open(S->opts.netns, &cfg.link_fd, &cfg.ctl_fd, err) < 0)
			return -1;
	} else {
		S->net_helper = start_netslirp(&cfg.link_fd, &cfg.ctl_fd, err);
		if (S->net_helper < 0)
			return -1;
	}
	if (sentry_net_init(&cfg, err) < 0)
		return -1;
	/* No name may lead to the host: the sandbox does not start before
	 * the process beyond the link, which asks the kernel where the
	 * traffic leaves, has the policy's address rules and has said the
	 * host's addresses. */
	netpol_push_rules();
	rc = netstack_ctl_wait(10000);
	if (rc < 0)
		return moat_error_set(err, -rc,
				      "--net: the link's helper did not say "
				      "the host's addresses");
	return 0;
}

/* PATH lookup in the sandbox's own tree, as execvp would do inside. */
static int find_in_path(const char *cmd, char *const *envp, char *out,
			size_t cap)
{
	const char *path =
		"/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
	char *const *e;
	char buf[PATH_MAX];
	const char *p;

	if (strchr(cmd, '/')) {
		snprintf(out, cap, "%s", cmd);
		return 0;
	}
	for (e = envp; *e; e++)
		if (!strncmp(*e, "PATH=", 5))
			path = *e + 5;
	for (p = path; *p;) {
		size_t n = strcspn(p, ":");
		struct vnode *vn;
		snprintf(buf, sizeof(buf), "%.*s/%s", (int)n, n ? p : ".", cmd);
		if (vfs_resolve(NULL, AT_FDCWD, buf, LOOKUP_FOLLOW, &vn) == 0) {
			bool ok = S_ISREG(vn->mode) && (vn->mode & 0111);
			vnode_put(vn);
			if (ok) {
				snprintf(out, cap, "%s", buf);
				return 0;
			}
		}
		p += n;
		if (*p == ':')
			p++;
	}
	return -ENOENT;
}

/* A pipe or terminal on stdio is reopened as a new, non-blocking open file
 * of the sentry's own, so a guest writing to a full pipe (or a stopped
 * terminal) parks that guest and not the whole sandbox. The caller's own
 * description keeps its flags. Regular files are shared as they are (their
 * offset is the caller's, for appends). -1: use a plain dup. */
static int stdio_reopen(int fd, int fl)
{
	char path[32];
	struct stat st;

	if (fstat(fd, &st) < 0 ||
	    !(S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode)))
		return -1;
	/* Relative to the host /proc fd: the one open the sentry's seccomp
	 * filter allows, so `moat exec`'s stdio is reopened the same way. */
	snprintf(path, sizeof(path), "self/fd/%d", fd);
	return openat(S->host_proc_fd, path,
		      (fl & O_ACCMODE) | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
}

/* Host fd hostfd (the caller's) as the guest's fd gfd of p, an open file
 * of the sentry's own. A closed hostfd leaves gfd closed. */
static int install_stdio(struct process *p, int gfd, int hostfd)
{
	int fl = fcntl(hostfd, F_GETFL), dup_fd;
	struct file *f;

	if (fl < 0)
		return 0; /* closed in the caller: closed in the guest */
	dup_fd = stdio_reopen(hostfd, fl);
	if (dup_fd < 0) {
		/* A socket cannot be reopened: its description is shared
		 * with the caller, whose flags stay as they are; host_write
		 * (sentry/file.c) never waits on it. */
		dup_fd = fcntl(hostfd, F_DUPFD_CLOEXEC, 3);
		if (dup_fd < 0)
			return -errno;
	}
	f = file_host_stream(dup_fd, fl & (O_ACCMODE | O_APPEND));
	if (!f || fd_install(p->leader, f, false, gfd) != gfd) {
		if (f)
			file_put(f);
		return -ENOMEM;
	}
	file_put(f);
	return 0;
}

/* A container's process (its first, or an exec'd one): the rlimits and
 * umask of the OCI config, on top of the defaults. */
static void proc_limits_from_opts(struct process *p)
{
	const struct sentry_opts *o = &S->opts;

	rlimits_default(p);
	for (size_t i = 0; i < o->nrlimits; i++)
		if (o->rlimits[i].res >= 0 && o->rlimits[i].res < 16) {
			p->rlim[o->rlimits[i].res].cur = o->rlimits[i].cur;
			p->rlim[o->rlimits[i].res].max = o->rlimits[i].max;
		}
	if (o->set_umask)
		p->umask = o->umask;
	/* Set as runc sets it, from outside: the floor stays 0, so the
	 * process may lower it again down to 0 (runc's containers can). */
	p->oom_score_adj = o->oom_score_adj;
}

static void creds_set(struct creds *c, uid_t uid, gid_t gid,
		      const gid_t *groups, int ngroups)
{
	c->ruid = c->euid = c->suid = c->fsuid = uid;
	c->rgid = c->egid = c->sgid = c->fsgid = gid;
	c->ngroups = ngroups < 32 ? ngroups : 32;
	if (c->ngroups > 0)
		memcpy(c->groups, groups, (size_t)c->ngroups * sizeof(gid_t));
}

static int setup_stdio(struct process *p, struct moat_error *err)
{
	int fd;

	p->fdt = fdtable_new();
	if (!p->fdt)
		return moat_error_set(err, ENOMEM, "fd table");
	if (S->opts.tty) {
		/* -t: a terminal of the sandbox's own, relayed to the host's
		 * (its own non-blocking descriptions of stdin and stdout). */
		int in = stdio_reopen(0, O_RDONLY),
		    out = stdio_reopen(1, O_WRONLY);
		if (in < 0)
			in = fcntl(0, F_DUPFD_CLOEXEC, 3);
		if (out < 0)
			out = fcntl(1, F_DUPFD_CLOEXEC, 3);
		if (in < 0 || out < 0)
			return moat_error_set(err, errno, "-t: stdio");
		return pty_relay_start(p, in, out, err);
	}
	for (fd = 0; fd < 3; fd++) {
		int rc = install_stdio(p, fd, fd);
		if (rc < 0)
			return moat_error_set(err, -rc, "stdio");
	}
	return 0;
}

static void stop_one(pid_t *pid)
{
	if (*pid > 0) {
		plat_kill(*pid, SIGKILL);
		waitpid(*pid, NULL, 0);
	}
	*pid = 0;
}

/* However the sandbox ends, its gofers end before the sentry: the store's
 * janitor removes the store's directory when the sentry is gone, and a
 * gofer still starting would find it missing (and say so on stderr). */
static void stop_gofers(const struct sentry_opts *opts)
{
	if (!S)
		return;
	stop_one(&S->gofer_pid);
	stop_one(&S->store_gofer);
	for (size_t i = 0; S->mount_gofers && i < opts->nmounts; i++)
		stop_one(&S->mount_gofers[i]);
}

static int boot_and_run(struct sentry_opts *opts, char **argv,
			struct moat_error *err);

/* The sandbox's exit status, as a shell reports the first process's. */
static int exit_code(int st)
{
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return 1;
}

int sentry_run(struct sentry_opts *opts, char **argv, struct moat_error *err)
{
	int rc = boot_and_run(opts, argv, err);

	stop_gofers(opts);
	broker_stop();
	return rc;
}

static int boot_and_run(struct sentry_opts *opts, char **argv,
			struct moat_error *err)
{
	char exe[PATH_MAX];
	struct exec_plan *plan;
	struct process *p;
	struct task *t;
	struct vnode *cwd;
	pid_t gofer, htid;
	int gsock = -1, sv[2], rc, argc, envc;
	struct p9_qid rq;

	crash_handler_install("moat: sentry");
	S = xcalloc(1, sizeof(*S));
	S->opts = *opts;
	/* linux.sysctl, checked when the config was read: the limits the
	 * sentry enforces from the first process on */
	for (size_t i = 0; i < opts->nsysctls; i++)
		if (sysctl_setting_apply(opts->sysctls[i].name,
					 opts->sysctls[i].value) < 0)
			return moat_error_input(err, EINVAL,
						"linux.sysctl.%s: `%s`: not a "
						"setting the sandbox honours",
						opts->sysctls[i].name,
						opts->sysctls[i].value);
	S->next_pid = 2;
	S->boot_ns = now_ns();
	S->debug = getenv("MOAT_DEBUG") != NULL;
	S->no_bind = getenv("MOAT_NO_BIND") != NULL;
	if (sched_getaffinity(0, sizeof(S->cpus), &S->cpus) < 0)
		CPU_ZERO(&S->cpus);
	S->ncpus_possible = 1024;
	{
		/* Kernel's nr_cpu_ids decides the mask size a guest must pass;
		 * the sentry's own call tells it: the smallest size accepted. */
		cpu_set_t tmp;
		size_t sz;
		for (sz = 8; sz <= sizeof(tmp); sz += 8)
			if (syscall(SYS_sched_getaffinity, 0, sz, &tmp) > 0)
				break;
		S->ncpus_possible = (int)sz * 8;
	}
	S->reaper = -1;
	S->spawn_fd = -1;
	audit_open(opts->audit_path,
		   opts->audit_id ? opts->audit_id : sandbox_id(opts),
		   opts->audit_max);
	snprintf(S->hostname, sizeof(S->hostname), "%s",
		 opts->hostname ? opts->hostname : "moat");
	snprintf(S->domainname, sizeof(S->domainname), "(none)");
	signal(SIGPIPE, SIG_IGN);
	/* Ctrl-C and Ctrl-\ reach the guests directly (they share the
	 * caller's process group); the sentry outlives them to report how
	 * they ended, as a shell would see it natively. SIGHUP still ends
	 * the sandbox at once; SIGTERM ends it too, its guests first and
	 * its audit log's end written (sentry_catch_term). */
	signal(SIGINT, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	sentry_catch_term();
	{
		/* Room for the idle-fd LRU and every file guests keep open. */
		struct rlimit rl;
		if (getrlimit(RLIMIT_NOFILE, &rl) == 0 &&
		    rl.rlim_cur < rl.rlim_max) {
			rl.rlim_cur = rl.rlim_max;
			setrlimit(RLIMIT_NOFILE, &rl);
		}
		/* What guests make the sentry hold stops SENTRY_FD_RESERVE
		 * short of it (lib/util.h, fd_admit): the gofers' replies,
		 * the control socket and the netstack keep their fds. */
		if (getrlimit(RLIMIT_NOFILE, &rl) == 0)
			fd_admit_reserve(rl.rlim_cur == RLIM_INFINITY ?
						 1048576 :
						 (long)rl.rlim_cur,
					 SENTRY_FD_RESERVE);
	}

#define PHASE(name)                                                            \
	do {                                                                   \
		if (S->debug)                                                  \
			fprintf(stderr, "moat-debug: %-12s %6.2f ms\n", name,  \
				(double)(now_ns() - S->boot_ns) / 1e6);        \
	} while (0)
	PHASE("start");
	S->gofer_cpu = -1;
	if (!S->no_bind) {
		/* The sentry is one thread: it stays on one CPU, and the gofer
		 * and every task that traps often join it there (see
		 * platform/ptrace.c). Compute-bound tasks use the others. */
		cpu_set_t one;
		int cpu = sched_getcpu();
		CPU_ZERO(&one);
		CPU_SET(cpu < 0 ? 0 : cpu, &one);
		sched_setaffinity(0, sizeof(one), &one);
	}
	/* The reaper first, holding no fd of the gofers', and into its
	 * cgroups at once, in the background: each join waits for a grace
	 * period of the kernel's (10 ms and more), which the gofers' start
	 * hides. No guest runs before plat_spawn_first. The cgroups'
	 * janitor comes before them, so that they go however setup ends. */
	/* The broker before any other process: see broker_spawn. */
	if (broker_spawn(opts, err) < 0)
		return -1;
	rc = limits_setup(err);
	limits_start_janitor();
	if (rc < 0)
		return -1;
	S->stub_fd = plat_make_stub(err);
	if (S->stub_fd < 0)
		return -1;
	if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv) < 0)
		return moat_error_set(err, errno, "socketpair");
	S->ctl_sock = sv[0];
	S->ctl_guest = sv[1];
	/* The sandbox's own host ids, before any of its processes exists;
	 * the lock is held until the sentry is gone (fds it forks close it
	 * at exec, or at once: the reaper and the guests). */
	if (hostids_acquire(&S->ids, err) < 0)
		return -1;
	if (plat_spawn_prepare(S->stub_fd, S->ctl_guest, S->ids.guest_uid,
			       S->ids.guest_gid, err) < 0)
		return -1;
	limits_attach_start(S->reaper);
	PHASE("reaper");
	gofer = start_gofer(opts->rootfs ? opts->rootfs : "/", GOFER_RO, &gsock,
			    err);
	if (gofer < 0)
		return -1;
	S->gofer_pid = gofer;
	plat_bind_gofer();
	/* The store's gofer confines itself while this one answers. */
	if (store_launch(opts, err) < 0)
		return -1;
	rc = p9c_open(&S->p9, gsock, &S->rootfid, &rq, err);
	if (rc < 0)
		return moat_error_wrap(err, "gofer");
	if (vfs_init(S->rootfid, err) < 0)
		return -1;
	/* Before the mounts: one under HOME (--mount DIR:/root/work) needs
	 * its mount point made in the guest's own home. */
	home_prepare(opts->home);
	S->mount_gofers = xcalloc(opts->nmounts + 1, sizeof(pid_t));
	if (opts->order) {
		/* A bundle's mounts in its order, after /etc/hosts and
		 * /etc/resolv.conf are written: what it mounts or binds
		 * there is what the container sees. */
		hosts_add_hostname();
		if (net_setup(opts, err) < 0)
			return -1;
		for (size_t i = 0; i < opts->norder; i++)
			if (apply_mount(opts, &opts->order[i], err) < 0)
				return -1;
	} else {
		for (size_t i = 0; i < opts->nmounts; i++)
			if (start_mount(opts, i, err) < 0)
				return -1;
		for (size_t i = 0; i < opts->ntmpfs; i++)
			if (vfs_add_tmpfs(&opts->tmpfs[i], err) < 0)
				return -1;
		hosts_add_hostname();
		if (net_setup(opts, err) < 0)
			return -1;
	}
	/* After every mount, readonlyPaths before maskedPaths, as runc:
	 * a mask inside a read-only path is still made. */
	for (char **p = opts->readonly_paths; p && *p; p++)
		if (vfs_readonly_path(*p, err) < 0)
			return -1;
	for (char **p = opts->masked_paths; p && *p; p++)
		if (vfs_mask_path(*p, err) < 0)
			return -1;
	if (opts->rootfs_ro)
		ovl_set_readonly();
	vfs_seal_tmpfs(); /* ro tmpfs mounts, once what goes in them is in */
	tmpfs_setup_done();
	PHASE("gofer");
	S->host_proc_fd = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);

	/* The first process: pid 1, root in the sandbox. */
	p = proc_new(NULL);
	proc_set_pid(p, 1);
	p->pgid = p->sid = 1;
	proc_limits_from_opts(p);
	snprintf(p->comm, sizeof(p->comm), "init");
	rc = vfs_resolve(NULL, AT_FDCWD, opts->cwd ? opts->cwd : "/",
			 LOOKUP_FOLLOW, &cwd);
	if (rc < 0)
		return moat_error_set(err, -rc, "cwd `%s`", opts->cwd);
	if (!S_ISDIR(cwd->mode))
		return moat_error_set(err, ENOTDIR, "cwd `%s`", opts->cwd);
	p->cwd = cwd;
	/* A placeholder leader so stdio can be installed before the host
	 * task exists. */
	p->leader = &(struct task){ .proc = p };
	if (setup_stdio(p, err) < 0)
		return -1;

	for (argc = 0; argv[argc]; argc++)
		;
	for (envc = 0; opts->env[envc]; envc++)
		;
	rc = find_in_path(argv[0], opts->env, exe, sizeof(exe));
	if (rc == 0)
		rc = exec_prepare(NULL, cwd, AT_FDCWD, exe, 0, argv,
				  (size_t)argc, opts->env, (size_t)envc, &plan);
	if (rc < 0) {
		moat_error_set(err, -rc, "exec `%s`", argv[0]);
		err->code = -rc;
		return -1;
	}

	PHASE("exec-plan");
	/* Limits apply before any guest exists: the reaper's children
	 * inherit its cgroups. */
	if (limits_attach_wait(err) < 0)
		return -1;
	htid = plat_spawn_first(err);
	if (htid < 0)
		return -1;
	if (opts->timeout_s > 0)
		S->deadline_ns =
			now_ns() + (int64_t)opts->timeout_s * 1000000000LL;
	t = task_new(htid, p);
	t->tid = 1;
	t->booting = true;
	t->exec = plan;
	t->state = TS_RUNNING;
	p->leader = t;
	p->host_pid = htid;
	p->cred.ngroups = 0;
	if (opts->set_creds)
		creds_set(&p->cred, opts->uid, opts->gid, opts->gids,
			  opts->ngids);
	if (opts->set_caps)
		p->cred.cap = opts->caps;
	p->no_new_privs = opts->no_new_privs;

	PHASE("spawn");
	if (opts->control_addr ?
		    control_open_addr(opts->control_addr, err) < 0 :
		    control_open(sandbox_id(opts), err) < 0)
		return -1;
	if (sentry_seccomp_install(err) < 0)
		return -1;
	PHASE("seccomp");
	/* An OCI container waits, created, until `moat start`; a kill
	 * first ends it without its process ever running. */
	if (opts->wait_start && control_wait_start(opts->ready_fd) != 0) {
		plat_kill(S->reaper, SIGKILL);
		S->init_status = S->killed_created;
		rc = 0;
	} else {
		rc = sentry_loop();
	}
	if (netstack_up())
		audit_log("\"event\":\"net-summary\",\"frames_dropped\":%llu",
			  (unsigned long long)netstack_dropped());
	broker_drain(); /* its last audit records */
	audit_end();
	pty_relay_finish();
	if (rc >= 0 && opts->exit_fd > 2) {
		dprintf(opts->exit_fd, "%d\n", exit_code(S->init_status));
		close(opts->exit_fd);
		opts->exit_fd = -1;
	}
	control_close();
	PHASE("exit");
	if (rc < 0)
		return moat_error_set(err, -rc, "sentry loop");
	p9c_close(S->p9);
	vfs_close_mounts();
	stop_gofers(opts);
	limits_report(S->init_status);
	if (sentry_term) {
		/* what the caller of a SIGTERM'd sentry saw before */
		signal(SIGTERM, SIG_DFL);
		raise(SIGTERM);
	}
	return exit_code(S->init_status);
}

/* ---- moat exec: more processes in a running sandbox --------------------- */

/* Processes made by sentry_spawn whose host process the reaper has not
 * forked yet, in request order (its forks come in the same order). */
static struct spawn_pending {
	struct process *p;
	struct exec_plan *plan;
	bool cancelled; /* its client went away before it was born */
} pending[16];
static int npending;

int sentry_spawn(const struct spawn_req *r, struct process **out)
{
	char exe[PATH_MAX];
	struct exec_plan *plan;
	struct vnode *cwd;
	struct process *p;
	size_t argc, envc;
	int rc, fd;

	if (S->reaper <= 0 || S->spawn_fd < 0 || S->init_exited)
		return -ESRCH;
	if (npending == (int)ARRAY_SIZE(pending))
		return -EAGAIN;
	if (S->opts.pids && pids_in_use() + npending >= S->opts.pids)
		return -EAGAIN;
	vfs_ns_enter(r->ns); /* its paths, and its files, are that tree's */
	rc = vfs_resolve(NULL, AT_FDCWD, r->cwd, LOOKUP_FOLLOW, &cwd);
	if (rc < 0)
		return rc;
	if (!S_ISDIR(cwd->mode)) {
		vnode_put(cwd);
		return -ENOTDIR;
	}
	for (argc = 0; r->argv[argc]; argc++)
		;
	for (envc = 0; r->env[envc]; envc++)
		;
	rc = find_in_path(r->argv[0], r->env, exe, sizeof(exe));
	if (rc == 0)
		rc = exec_prepare(NULL, cwd, AT_FDCWD, exe, 0, r->argv, argc,
				  r->env, envc, &plan);
	if (rc < 0) {
		vnode_put(cwd);
		return rc;
	}
	p = proc_new(NULL);
	if (!p) {
		vnode_put(cwd);
		exec_plan_free(plan);
		return -ENOMEM;
	}
	/* Its parent is outside the container (ppid 0), as runc's exec's;
	 * the sentry reaps it and tells the client how it ended. */
	proc_set_pid(p, alloc_pid());
	p->pgid = p->sid = p->pid;
	p->cwd = cwd;
	proc_limits_from_opts(p);
	creds_set(&p->cred, r->uid, r->gid, r->groups, r->ngroups);
	if (r->set_caps)
		p->cred.cap = r->caps;
	p->no_new_privs = r->no_new_privs;
	snprintf(p->comm, sizeof(p->comm), "%s",
		 strrchr(r->argv[0], '/') ? strrchr(r->argv[0], '/') + 1 :
					    r->argv[0]);
	p->leader = &(struct task){ .proc = p };
	p->fdt = fdtable_new();
	rc = p->fdt ? 0 : -ENOMEM;
	if (rc == 0 && r->new_pidns && r->ns) {
		/* a pod member's first process: 1 in a namespace of its own,
		 * which its mount namespace's /proc shows */
		p->pidns = pidns_new(p->pid);
		rc = p->pidns ? 0 : -ENOMEM;
		pidns_put(r->ns->pidns);
		r->ns->pidns = pidns_get(p->pidns);
	} else {
		p->pidns = pidns_get(r->ns ? r->ns->pidns : NULL);
	}
	if (rc == 0 && r->tty && r->fds[0] >= 0 && r->fds[1] >= 0) {
		/* exec -t: a terminal of the sentry's, as `moat do -t` */
		struct moat_error e;
		int in = stdio_reopen(r->fds[0], O_RDONLY),
		    out = stdio_reopen(r->fds[1], O_WRONLY);

		if (in < 0)
			in = fcntl(r->fds[0], F_DUPFD_CLOEXEC, 3);
		if (out < 0)
			out = fcntl(r->fds[1], F_DUPFD_CLOEXEC, 3);
		if (in < 0 || out < 0 || pty_relay_start(p, in, out, &e) < 0) {
			rc = in < 0 || out < 0 ? -errno : -ENOSPC;
			if (in >= 0)
				close(in);
			if (out >= 0)
				close(out);
		}
	} else {
		for (fd = 0; rc == 0 && fd < 3; fd++)
			if (r->fds[fd] >= 0)
				rc = install_stdio(p, fd, r->fds[fd]);
	}
	if (rc == 0)
		rc = plat_spawn_more();
	p->leader = NULL;
	if (rc < 0) {
		exec_plan_free(plan);
		p->exited = p->reaped = true;
		S->fds_to_release = true;
		return rc;
	}
	pending[npending].p = p;
	pending[npending].cancelled = false;
	pending[npending++].plan = plan;
	{
		/* the name is the user's, or the image's: quoted */
		char argv0[6 * sizeof(p->comm) + 3];
		json_quote(argv0, sizeof(argv0), p->comm);
		audit_log("\"event\":\"exec\",\"pid\":%d,\"argv0\":%s", p->pid,
			  argv0);
	}
	*out = p;
	return 0;
}

int sentry_spawns_pending(void)
{
	return npending;
}

void sentry_spawn_born(pid_t child, bool stopped)
{
	struct spawn_pending sp;
	struct task *t;

	if (npending == 0) {
		if (child > 0)
			plat_kill(child, SIGKILL); /* nobody asked for it */
		return;
	}
	sp = pending[0];
	memmove(pending, pending + 1, (size_t)--npending * sizeof(*pending));
	t = NULL;
	if (child <= 0 || sp.cancelled ||
	    plat_start_spawned(child, stopped) < 0 ||
	    !(t = task_new(child, sp.p))) {
		if (child > 0)
			plat_kill(child, SIGKILL);
		exec_plan_free(sp.plan);
		sp.p->exited = true;
		sp.p->exit_status = SIGKILL;
		pty_relay_end(sp.p);
		control_proc_exited(sp.p);
		sp.p->reaped = true;
		S->fds_to_release = true;
		return;
	}
	t->tid = sp.p->pid;
	t->booting = true;
	t->exec = sp.plan;
	t->state = TS_RUNNING;
	sp.p->leader = t;
	sp.p->host_pid = child;
	control_proc_started(sp.p);
}

void sentry_spawn_cancel(struct process *p)
{
	for (int i = 0; i < npending; i++)
		if (pending[i].p == p)
			pending[i].cancelled = true;
}
