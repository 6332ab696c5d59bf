/* sentry/pod.c: a pod's members (see pod.h). */
#include "sentry/pod.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sentry/audit.h"
#include "sentry/overlay.h"
#include "sentry/p9client.h"
#include "sentry/vfs.h"

static struct member {
	char name[POD_NAME_MAX + 1];
	struct mntns *ns;      /* a reference while its processes may run */
	struct process *first; /* NULL once it ended */
	bool used, ended;
} members[POD_MEMBERS_MAX];

bool pod_name_ok(const char *name)
{
	size_t n = strlen(name);

	if (!n || n > POD_NAME_MAX || name[0] == '.')
		return false;
	return strspn(name,
		      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
		      "0123456789_+-.,") == n;
}

static struct member *member_of(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(members); i++)
		if (members[i].used && !strcmp(members[i].name, name))
			return &members[i];
	return NULL;
}

/* A slot for a new member: a free one, else the oldest ended one. */
static struct member *member_slot(void)
{
	for (size_t i = 0; i < ARRAY_SIZE(members); i++)
		if (!members[i].used)
			return &members[i];
	for (size_t i = 0; i < ARRAY_SIZE(members); i++)
		if (members[i].ended) {
			members[i].used = false;
			return &members[i];
		}
	return NULL;
}

/* The body's fields, NUL-terminated, in order. */
struct fields {
	const char *p, *end;
};

static const char *next(struct fields *f)
{
	const char *s = f->p;
	size_t n;

	if (s >= f->end)
		return NULL;
	n = strnlen(s, (size_t)(f->end - s));
	if (s + n == f->end)
		return NULL; /* not terminated inside the body */
	f->p = s + n + 1;
	return s;
}

static int next_num(struct fields *f, unsigned long long max, int base,
		    unsigned long long *out)
{
	const char *s = next(f);
	char *e;

	if (!s || !*s)
		return -1;
	errno = 0;
	*out = strtoull(s, &e, base);
	return *e || errno || *out > max ? -1 : 0;
}

static int next_bool(struct fields *f, bool *out)
{
	const char *s = next(f);

	if (!s || (strcmp(s, "0") && strcmp(s, "1")))
		return -1;
	*out = s[0] == '1';
	return 0;
}

/* A canonical absolute guest path: what the CLI sends (opts_from_config
 * made it so); the vfs resolves it inside the member's tree anyway. */
static const char *next_path(struct fields *f)
{
	const char *s = next(f);

	return s && s[0] == '/' && strlen(s) < PATH_MAX ? s : NULL;
}

/* "bind DST MODE NOEXEC": the next gofer socket, mounted at DST. */
static int add_bind(struct fields *f, int sock, struct moat_error *err)
{
	const char *dst = next_path(f), *mode = next(f);
	struct p9_client *c;
	struct p9_qid rq;
	uint32_t rootfid;
	bool noexec;

	if (!dst || !mode || (strcmp(mode, "ro") && strcmp(mode, "rw")) ||
	    next_bool(f, &noexec) < 0) {
		close(sock);
		return moat_error_input(err, EINVAL, "a malformed bind");
	}
	if (p9c_open(&c, sock, &rootfid, &rq, err) < 0) {
		close(sock);
		return moat_error_wrap(err, "mount `%s`", dst);
	}
	if (vfs_add_mount(dst, mode[1] == 'w' ? MNT_RW : MNT_RO, noexec, c,
			  rootfid, err) < 0) {
		p9c_close(c);
		return -1;
	}
	return 0;
}

/* "tmpfs DST SIZE MODE UID GID RO NOEXEC SRC" */
static int add_tmpfs(struct fields *f, struct moat_error *err)
{
	struct tmpfs_spec ts = { 0 };
	unsigned long long size, mode, uid, gid;
	const char *src;

	ts.dst = (char *)next_path(f);
	if (!ts.dst || next_num(f, UINT64_MAX, 10, &size) < 0 ||
	    next_num(f, 07777, 8, &mode) < 0 ||
	    next_num(f, UINT32_MAX, 10, &uid) < 0 ||
	    next_num(f, UINT32_MAX, 10, &gid) < 0 || next_bool(f, &ts.ro) < 0 ||
	    next_bool(f, &ts.noexec) < 0 || !(src = next(f)))
		return moat_error_input(err, EINVAL, "a malformed tmpfs");
	ts.size = size;
	ts.mode = (mode_t)mode;
	ts.uid = (uid_t)uid;
	ts.gid = (gid_t)gid;
	ts.src = *src ? src : NULL;
	return vfs_add_tmpfs(&ts, err);
}

/* NMOUNTS and its entries, in the config's order. */
static int add_mounts(struct fields *f, const int *fds, int nfds, int *used,
		      struct moat_error *err)
{
	unsigned long long n;
	const char *kind;

	if (next_num(f, VFS_MOUNTS_MAX - 4, 10, &n) < 0)
		return moat_error_input(err, EINVAL, "a malformed mount count");
	for (unsigned long long k = 0; k < n; k++) {
		if (!(kind = next(f)))
			return moat_error_input(err, EINVAL, "a cut-off mount");
		if (!strcmp(kind, "tmpfs")) {
			if (add_tmpfs(f, err) < 0)
				return -1;
		} else if (!strcmp(kind, "bind")) {
			if (*used >= nfds)
				return moat_error_input(err, EINVAL,
							"a bind without its "
							"gofer's socket");
			if (add_bind(f, fds[(*used)++], err) < 0)
				return -1;
		} else {
			return moat_error_input(
				err, EINVAL, "a mount of kind `%.16s`", kind);
		}
	}
	return 0;
}

/* NRO path..., then NMASK path...: as the sandbox's (sentry/boot.c). */
static int add_paths(struct fields *f, struct moat_error *err)
{
	for (int list = 0; list < 2; list++) {
		unsigned long long n;
		const char *p;

		if (next_num(f, 256, 10, &n) < 0)
			return moat_error_input(err, EINVAL,
						"a malformed path count");
		for (unsigned long long k = 0; k < n; k++) {
			if (!(p = next_path(f)))
				return moat_error_input(err, EINVAL,
							"a malformed path");
			if ((list ? vfs_mask_path(p, err) :
				    vfs_readonly_path(p, err)) < 0)
				return -1;
		}
	}
	return 0;
}

int pod_member_new(const char *name, const char *body, size_t len,
		   const int *fds, int nfds, int *used, size_t *off,
		   struct mntns **ns, bool *own_pids, struct moat_error *err)
{
	struct fields f = { body, body + len };
	struct p9_client *c;
	struct p9_qid rq;
	struct member *m;
	uint32_t rootfid;
	bool ro;

	*used = 0;
	if (member_of(name) && !member_of(name)->ended)
		return moat_error_input(err, EEXIST, "container %s exists",
					name);
	if (nfds < 4)
		return moat_error_input(err, EINVAL,
					"no socket for the rootfs's gofer");
	if (next_bool(&f, &ro) < 0)
		return moat_error_input(err, EINVAL, "a malformed request");
	*used = 4;
	if (p9c_open(&c, fds[3], &rootfid, &rq, err) < 0) {
		close(fds[3]);
		return moat_error_wrap(err, "rootfs");
	}
	if (vfs_ns_new(name, c, rootfid, ns, err) < 0)
		return -1;
	sentry_rootfs_files();
	if (add_mounts(&f, fds, nfds, used, err) < 0 ||
	    add_paths(&f, err) < 0 ||
	    (next_bool(&f, own_pids) < 0 &&
	     moat_error_input(err, EINVAL, "a malformed PIDNS") < 0)) {
		vfs_ns_put(*ns);
		vfs_ns_enter(NULL);
		return moat_error_wrap(err, "container %s", name);
	}
	if (ro)
		ovl_set_readonly();
	vfs_seal_tmpfs();
	m = member_of(name);
	if (m)
		m->used = false; /* an ended one of that name */
	m = member_slot();
	if (!m) {
		vfs_ns_put(*ns);
		vfs_ns_enter(NULL);
		return moat_error_input(err, EAGAIN,
					"the pod has %d members already",
					POD_MEMBERS_MAX);
	}
	*m = (struct member){ .ns = *ns, .used = true };
	snprintf(m->name, sizeof(m->name), "%s", name);
	*off = (size_t)(f.p - body);
	return 0;
}

void pod_member_started(struct mntns *ns, struct process *p)
{
	for (size_t i = 0; i < ARRAY_SIZE(members); i++)
		if (members[i].used && members[i].ns == ns) {
			members[i].first = p;
			audit_log(
				"\"event\":\"container-start\",\"name\":\"%s\","
				"\"pid\":%d",
				members[i].name, p->pid);
		}
}

void pod_member_abort(struct mntns *ns)
{
	for (size_t i = 0; i < ARRAY_SIZE(members); i++)
		if (members[i].used && members[i].ns == ns) {
			members[i].used = false;
			vfs_ns_put(ns);
		}
	vfs_ns_enter(NULL);
}

bool pod_proc_in(const struct process *p, const struct mntns *ns)
{
	return !ns || p->mntns == ns;
}

void pod_proc_exited(struct process *p)
{
	struct member *m = NULL;

	for (size_t i = 0; i < ARRAY_SIZE(members); i++)
		if (members[i].used && members[i].first == p)
			m = &members[i];
	if (!m)
		return;
	m->first = NULL;
	m->ended = true;
	for (struct process *q = S->procs; q; q = q->next)
		if (q != p && !q->exited && q->mntns == m->ns)
			send_signal_proc(q, SIGKILL, 0);
	audit_log("\"event\":\"container-exit\",\"name\":\"%s\",\"status\":%d",
		  m->name, p->exit_status);
	vfs_ns_put(m->ns); /* the member's hold; its processes keep theirs */
	m->ns = NULL;
}

const char *pod_member_state(const char *name)
{
	struct member *m = member_of(name);

	if (!m)
		return NULL;
	return m->ended ? "stopped" : "running";
}

struct mntns *pod_member_ns(const char *name)
{
	struct member *m = member_of(name);

	return m && !m->ended ? m->ns : NULL;
}
