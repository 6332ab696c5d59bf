/* oci/config.c: config.json (see config.h and docs/oci.md). */
#include "oci/config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <linux/nsfs.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <time.h>

#include "lib/jdoc.h"
#include "netstack/netstack.h"
#include "sentry/limits.h"
#include "sentry/sysctl.h"

#define DEPTH 8
/* Warnings kept of one document; past them, only counted (a config of
 * 4 MiB could hold a hundred thousand unknown properties). */
#define WARN_MAX 16

struct parser {
	struct jdoc d;
	struct jstep path[DEPTH];
	size_t depth;
	char *warnings; /* lines, moved to what is parsed */
	size_t nwarnings;
};

static void push_key(struct parser *p, const char *key)
{
	if (p->depth < DEPTH)
		p->path[p->depth] = (struct jstep){ key, 0 };
	p->depth++;
}

static void push_idx(struct parser *p, size_t i)
{
	if (p->depth < DEPTH)
		p->path[p->depth] = (struct jstep){ NULL, i };
	p->depth++;
}

static void pop(struct parser *p)
{
	p->depth--;
}

static int bad(struct parser *p, const char *fmt, ...) MOAT_PRINTF(2, 3);
static int bad(struct parser *p, const char *fmt, ...)
{
	char what[384];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	return jdoc_error(&p->d, p->path, p->depth < DEPTH ? p->depth : DEPTH,
			  "%s", what);
}

/* Something ignored at the current path, never silently: a warning
 * line (WARN_MAX of them, then a count). Returns 0. */
static int warn_at(struct parser *p, const char *fmt, ...) MOAT_PRINTF(2, 3);
static int warn_at(struct parser *p, const char *fmt, ...)
{
	char where[192], what[256];
	char *w = NULL;
	va_list ap;

	if (p->nwarnings++ >= WARN_MAX)
		return 0;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	jdoc_where(&p->d, p->path, p->depth < DEPTH ? p->depth : DEPTH, where,
		   sizeof(where));
	if (asprintf(&w, "%s%s: %s\n", p->warnings ? p->warnings : "", where,
		     what) < 0)
		abort();
	free(p->warnings);
	p->warnings = w;
	return 0;
}

/* A property the runtime spec does not define: the spec says a runtime
 * must not fail on one ("Extensibility"), so it is ignored, with a
 * warning. Returns 0. */
static int unknown(struct parser *p)
{
	return warn_at(p, "unknown property, ignored");
}

/* The warnings, for the caller to own (NULL: none). */
static char *take_warnings(struct parser *p)
{
	char *w = p->warnings;

	if (p->nwarnings > WARN_MAX) {
		char *more = NULL;

		if (asprintf(&more,
			     "%s%s: %zu more warnings of unknown "
			     "properties or capabilities\n",
			     w, p->d.origin, p->nwarnings - WARN_MAX) < 0)
			abort();
		free(w);
		w = more;
	}
	p->warnings = NULL;
	p->nwarnings = 0;
	return w;
}

/* ---- typed values -------------------------------------------------------- */

static int want_type(struct parser *p, json_object *v, json_type t,
		     const char *what)
{
	if (!json_object_is_type(v, t))
		return bad(p, "%s expected", what);
	return 0;
}

static int get_str(struct parser *p, json_object *v, char **out)
{
	if (want_type(p, v, json_type_string, "a string") < 0)
		return -1;
	free(*out);
	*out = xstrdup(json_object_get_string(v));
	return 0;
}

static int get_bool(struct parser *p, json_object *v, bool *out)
{
	if (want_type(p, v, json_type_boolean, "true or false") < 0)
		return -1;
	*out = json_object_get_boolean(v);
	return 0;
}

/* An integer in [lo, hi]. */
static int get_int(struct parser *p, json_object *v, int64_t lo, int64_t hi,
		   int64_t *out)
{
	int64_t x;

	if (!json_object_is_type(v, json_type_int))
		return bad(p, "an integer expected");
	/* json-c clamps what does not fit to INT64_MIN/MAX: out of any
	 * narrower range, and the largest value of an open one */
	x = json_object_get_int64(v);
	if (x < lo || x > hi)
		return bad(p, "an integer from %lld to %lld expected",
			   (long long)lo, (long long)hi);
	*out = x;
	return 0;
}

static int get_u64(struct parser *p, json_object *v, uint64_t *out)
{
	if (!json_object_is_type(v, json_type_int) ||
	    json_object_get_int64(v) < 0)
		return bad(p, "a non-negative integer expected");
	*out = json_object_get_uint64(v);
	return 0;
}

/* A list of strings, NULL-terminated; empty allowed. */
static int get_strv(struct parser *p, json_object *v, char ***out)
{
	size_t i, n;
	char **a;

	if (want_type(p, v, json_type_array, "a list of strings") < 0)
		return -1;
	n = json_object_array_length(v);
	a = xcalloc(n + 1, sizeof(char *));
	for (i = 0; i < n; i++) {
		json_object *e = json_object_array_get_idx(v, i);

		push_idx(p, i);
		if (!json_object_is_type(e, json_type_string)) {
			int rc = bad(p, "a string expected");
			pop(p);
			for (size_t j = 0; j < i; j++)
				free(a[j]);
			free(a);
			return rc;
		}
		pop(p);
		a[i] = xstrdup(json_object_get_string(e));
	}
	if (*out) {
		for (char **s = *out; *s; s++)
			free(*s);
		free(*out);
	}
	*out = a;
	return 0;
}

static void strv_free(char **v)
{
	if (!v)
		return;
	for (char **s = v; *s; s++)
		free(*s);
	free(v);
}

static bool in_list(const char *key, const char *const *list)
{
	for (; *list; list++)
		if (!strcmp(key, *list))
			return true;
	return false;
}

/* Fields the sandbox gives already (config.h): accepted and never
 * changing what runs, but of the type the spec gives them, as a runtime
 * that reads them would insist (null: as if absent, as Go's decoder
 * takes it). The list ends with a NULL key. */
struct recorded {
	const char *key;
	json_type type;
};

static const struct recorded *recorded_field(const char *key,
					     const struct recorded *list)
{
	for (; list->key; list++)
		if (!strcmp(key, list->key))
			return list;
	return NULL;
}

static int check_recorded(struct parser *p, json_object *v,
			  const struct recorded *r)
{
	static const char *const names[] = {
		[json_type_boolean] = "true or false",
		[json_type_int] = "an integer",
		[json_type_object] = "an object",
		[json_type_array] = "a list",
		[json_type_string] = "a string",
	};

	if (json_object_is_type(v, json_type_null) ||
	    json_object_is_type(v, r->type))
		return 0;
	return bad(p, "%s expected", names[r->type]);
}

/* Canonical absolute path: no ".", "..", repeated or trailing "/".
 * NULL when path is relative or holds "..". */
static char *canon_abs(const char *path)
{
	char *out, *q;
	const char *s = path;

	if (path[0] != '/')
		return NULL;
	out = q = xmalloc(strlen(path) + 2);
	while (*s) {
		size_t n;

		while (*s == '/')
			s++;
		n = strcspn(s, "/");
		if (!n)
			break;
		if (n == 2 && !strncmp(s, "..", 2)) {
			free(out);
			return NULL;
		}
		if (!(n == 1 && s[0] == '.')) {
			*q++ = '/';
			memcpy(q, s, n);
			q += n;
		}
		s += n;
	}
	if (q == out)
		*q++ = '/';
	*q = 0;
	return out;
}

/* ---- process ------------------------------------------------------------- */

static const struct {
	const char *name;
	int res;
} rlimit_names[] = {
	{ "RLIMIT_AS", RLIMIT_AS },
	{ "RLIMIT_CORE", RLIMIT_CORE },
	{ "RLIMIT_CPU", RLIMIT_CPU },
	{ "RLIMIT_DATA", RLIMIT_DATA },
	{ "RLIMIT_FSIZE", RLIMIT_FSIZE },
	{ "RLIMIT_LOCKS", RLIMIT_LOCKS },
	{ "RLIMIT_MEMLOCK", RLIMIT_MEMLOCK },
	{ "RLIMIT_MSGQUEUE", RLIMIT_MSGQUEUE },
	{ "RLIMIT_NICE", RLIMIT_NICE },
	{ "RLIMIT_NOFILE", RLIMIT_NOFILE },
	{ "RLIMIT_NPROC", RLIMIT_NPROC },
	{ "RLIMIT_RSS", RLIMIT_RSS },
	{ "RLIMIT_RTPRIO", RLIMIT_RTPRIO },
	{ "RLIMIT_RTTIME", RLIMIT_RTTIME },
	{ "RLIMIT_SIGPENDING", RLIMIT_SIGPENDING },
	{ "RLIMIT_STACK", RLIMIT_STACK },
};

static int parse_rlimit(struct parser *p, json_object *o, struct oci_rlimit *r)
{
	bool have_type = false, have_soft = false, have_hard = false;
	size_t i;

	if (want_type(p, o, json_type_object, "an object") < 0)
		return -1;
	json_object_object_foreach(o, key, val)
	{
		int rc = 0;

		push_key(p, key);
		if (!strcmp(key, "type")) {
			rc = want_type(p, val, json_type_string, "a string");
			for (i = 0; !rc && i < ARRAY_SIZE(rlimit_names); i++)
				if (!strcmp(json_object_get_string(val),
					    rlimit_names[i].name))
					break;
			if (!rc && i == ARRAY_SIZE(rlimit_names))
				rc = bad(p, "`%s` is not an RLIMIT_ name",
					 json_object_get_string(val));
			if (!rc)
				r->resource = rlimit_names[i].res;
			have_type = true;
		} else if (!strcmp(key, "soft")) {
			rc = get_u64(p, val, &r->soft);
			have_soft = true;
		} else if (!strcmp(key, "hard")) {
			rc = get_u64(p, val, &r->hard);
			have_hard = true;
		} else {
			rc = unknown(p);
		}
		pop(p);
		if (rc < 0)
			return -1;
	}
	if (!have_type || !have_soft || !have_hard)
		return bad(p, "type, soft and hard are required");
	if (r->soft > r->hard)
		return bad(p, "soft is above hard");
	return 0;
}

static int parse_user(struct parser *p, json_object *o, struct oci_process *pr)
{
	static const struct recorded recorded[] = {
		{ "username", json_type_string }, { NULL, 0 }
	};
	const struct recorded *r;
	int64_t v = 0;

	if (want_type(p, o, json_type_object, "an object") < 0)
		return -1;
	json_object_object_foreach(o, key, val)
	{
		int rc = 0;

		push_key(p, key);
		if (!strcmp(key, "uid") || !strcmp(key, "gid")) {
			rc = get_int(p, val, 0, 0xfffffffe, &v);
			if (!rc && key[0] == 'u')
				pr->uid = (uid_t)v;
			else if (!rc)
				pr->gid = (gid_t)v;
		} else if (!strcmp(key, "umask")) {
			rc = get_int(p, val, 0, 0777, &v);
			pr->umask = (mode_t)v;
			pr->has_umask = true;
		} else if (!strcmp(key, "additionalGids")) {
			size_t i, n;

			rc = want_type(p, val, json_type_array,
				       "a list of group ids");
			n = rc ? 0 : json_object_array_length(val);
			if (n > 32)
				rc = bad(p, "more than 32 groups");
			free(pr->gids);
			pr->gids = xcalloc(n + 1, sizeof(gid_t));
			pr->ngids = 0;
			for (i = 0; !rc && i < n; i++) {
				push_idx(p, i);
				rc = get_int(p,
					     json_object_array_get_idx(val, i),
					     0, 0xfffffffe, &v);
				pop(p);
				pr->gids[pr->ngids++] = (gid_t)v;
			}
		} else if ((r = recorded_field(key, recorded))) {
			rc = check_recorded(p, val, r);
		} else {
			rc = unknown(p);
		}
		pop(p);
		if (rc < 0)
			return -1;
	}
	return 0;
}

/* One list of capability names: its bits. A name moat does not know is
 * left out, with a warning, as runc does ("ignoring unknown or
 * unavailable capabilities"). */
static int parse_cap_list(struct parser *p, json_object *v, uint64_t *out)
{
	size_t i, n;

	if (want_type(p, v, json_type_array, "a list of capability names") < 0)
		return -1;
	n = json_object_array_length(v);
	*out = 0;
	for (i = 0; i < n; i++) {
		json_object *e = json_object_array_get_idx(v, i);
		const char *name;
		int cap;

		push_idx(p, i);
		if (!json_object_is_type(e, json_type_string)) {
			int rc = bad(p, "a capability name expected");
			pop(p);
			return rc;
		}
		name = json_object_get_string(e);
		cap = cap_from_name(name);
		if (cap >= 0)
			*out |= 1ULL << cap;
		else /* bounded: WARN_MAX lines, then a count */
			warn_at(p, "unknown capability `%.64s`, ignored", name);
		pop(p);
	}
	return 0;
}

/* process.capabilities: the five sets as the process has them before
 * its exec, which then transforms them as Linux's does (sentry/caps.h).
 * A set left out is empty. What runc's capset would refuse is refused
 * here, naming the set; an ambient capability that is not both
 * permitted and inheritable is left out, as runc's raise of it fails
 * and is ignored. */
static int parse_caps(struct parser *p, json_object *o, struct oci_process *pr)
{
	static const char *const sets[] = { "bounding",	   "effective",
					    "inheritable", "permitted",
					    "ambient",	   NULL };
	struct cap_sets *c = &pr->caps;
	uint64_t *dst[] = { &c->bnd, &c->eff, &c->inh, &c->prm, &c->amb };
	const char *why = NULL, *set = NULL;
	uint64_t extra = 0;

	if (want_type(p, o, json_type_object, "an object") < 0)
		return -1;
	*c = (struct cap_sets){ 0 };
	json_object_object_foreach(o, key, val)
	{
		int rc = -1;

		push_key(p, key);
		for (size_t i = 0; sets[i]; i++)
			if (!strcmp(key, sets[i]))
				rc = parse_cap_list(p, val, dst[i]);
		if (rc < 0 && !in_list(key, sets))
			rc = unknown(p);
		pop(p);
		if (rc < 0)
			return -1;
	}
	pr->has_caps = true;
	if ((extra = c->eff & ~c->prm)) {
		set = "effective";
		why = "is not permitted";
	} else if ((extra = c->inh & ~c->bnd)) {
		set = "inheritable";
		why = "is not in the bounding set";
	}
	if (extra) {
		push_key(p, set);
		bad(p, "%s %s (capset would fail with EPERM)",
		    cap_name(__builtin_ctzll(extra)), why);
		pop(p);
		return -1;
	}
	c->amb &= c->prm & c->inh;
	return 0;
}

static int parse_process_obj(struct parser *p, json_object *o,
			     struct oci_process *pr)
{
	/* Given by the sandbox already: no guest process holds a host
	 * LSM label or a host oom score (docs/oci.md). */
	static const struct recorded recorded[] = {
		{ "apparmorProfile", json_type_string },
		{ "selinuxLabel", json_type_string },
		{ "ioPriority", json_type_object },
		{ "scheduler", json_type_object },
		{ "execCPUAffinity", json_type_object },
		{ NULL, 0 }
	};
	/* the spec's, for Windows only */
	static const char *const refused[] = { "commandLine", NULL };
	const struct recorded *r;
	bool have_cwd = false;

	if (want_type(p, o, json_type_object, "an object") < 0)
		return -1;
	pr->uid = 0;
	pr->gid = 0;
	json_object_object_foreach(o, key, val)
	{
		int rc = 0;

		push_key(p, key);
		if (!strcmp(key, "args")) {
			rc = get_strv(p, val, &pr->args);
			if (!rc && !pr->args[0])
				rc = bad(p, "empty: the command to run is "
					    "required");
			if (!rc && !pr->args[0][0])
				rc = bad(p, "the command is an empty string");
		} else if (!strcmp(key, "env")) {
			rc = get_strv(p, val, &pr->env);
			for (size_t i = 0; !rc && pr->env[i]; i++)
				if (!strchr(pr->env[i], '=') ||
				    pr->env[i][0] == '=') {
					push_idx(p, i);
					rc = bad(p, "`%s`: KEY=VALUE expected",
						 pr->env[i]);
					pop(p);
				}
		} else if (!strcmp(key, "cwd")) {
			char *c = NULL;

			rc = get_str(p, val, &c);
			if (!rc) {
				free(pr->cwd);
				pr->cwd = canon_abs(c);
				if (!pr->cwd)
					rc = bad(p,
						 "`%s`: an absolute path "
						 "without `..` expected",
						 c);
			}
			free(c);
			have_cwd = true;
		} else if (!strcmp(key, "terminal")) {
			rc = get_bool(p, val, &pr->terminal);
		} else if (!strcmp(key, "capabilities")) {
			rc = parse_caps(p, val, pr);
		} else if (!strcmp(key, "noNewPrivileges")) {
			rc = get_bool(p, val, &pr->no_new_privileges);
		} else if (!strcmp(key, "user")) {
			rc = parse_user(p, val, pr);
		} else if (!strcmp(key, "consoleSize")) {
			int64_t v = 0;

			rc = want_type(p, val, json_type_object, "an object");
			json_object *h = NULL, *w = NULL;
			if (!rc &&
			    (!json_object_object_get_ex(val, "height", &h) ||
			     !json_object_object_get_ex(val, "width", &w)))
				rc = bad(p, "height and width expected");
			if (!rc)
				rc = get_int(p, h, 0, 65535, &v);
			pr->console_rows = (unsigned)v;
			if (!rc)
				rc = get_int(p, w, 0, 65535, &v);
			pr->console_cols = (unsigned)v;
			if (!rc) {
				/* an object, checked above */
				json_object_object_foreach(val, ck, cv)
				{
					(void)cv;
					if (strcmp(ck, "height") &&
					    strcmp(ck, "width")) {
						push_key(p, ck);
						unknown(p);
						pop(p);
					}
				}
			}
		} else if (!strcmp(key, "oomScoreAdj")) {
			/* the sandbox's own, in /proc/<pid>/oom_score_adj:
			 * the host's OOM killer sees the sandbox's cgroup */
			int64_t v = 0;

			rc = get_int(p, val, -1000, 1000, &v);
			pr->oom_score_adj = (int)v;
			pr->has_oom_score_adj = true;
		} else if (!strcmp(key, "rlimits")) {
			size_t i, n;

			rc = want_type(p, val, json_type_array,
				       "a list of rlimits");
			n = rc ? 0 : json_object_array_length(val);
			free(pr->rlimits);
			pr->rlimits = xcalloc(n + 1, sizeof(*pr->rlimits));
			pr->nrlimits = 0;
			for (i = 0; !rc && i < n; i++) {
				push_idx(p, i);
				rc = parse_rlimit(
					p, json_object_array_get_idx(val, i),
					&pr->rlimits[pr->nrlimits++]);
				pop(p);
			}
		} else if ((r = recorded_field(key, recorded))) {
			rc = check_recorded(p, val, r);
		} else if (in_list(key, refused)) {
			rc = bad(p, "not supported by moat");
		} else {
			rc = unknown(p);
		}
		pop(p);
		if (rc < 0)
			return -1;
	}
	if (!pr->args)
		return bad(p, "args: required");
	if (!have_cwd)
		return bad(p, "cwd: required");
	return 0;
}

void oci_process_free(struct oci_process *pr)
{
	strv_free(pr->args);
	strv_free(pr->env);
	free(pr->cwd);
	free(pr->gids);
	free(pr->rlimits);
	free(pr->warnings);
	memset(pr, 0, sizeof(*pr));
}

int oci_process_parse(const char *text, size_t len, const char *origin,
		      struct oci_process *out, struct moat_error *err)
{
	struct parser p = { .d = { text, len, origin, err } };
	struct oci_process pr = { 0 };
	json_object *root;
	int rc;

	if (jdoc_parse(&p.d, OCI_CONFIG_MAX, &root) < 0)
		return -1;
	rc = parse_process_obj(&p, root, &pr);
	json_object_put(root);
	pr.warnings = take_warnings(&p);
	if (rc < 0) {
		oci_process_free(&pr);
		return -1;
	}
	*out = pr;
	return 0;
}

/* ---- mounts -------------------------------------------------------------- */

static bool under(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	return !strncmp(path, dir, n) && (path[n] == '/' || !path[n]);
}

/* The mounts the sentry makes itself, by type and place. */
static const struct {
	const char *type, *dst;
	int kind;
} synth_mounts[] = {
	{ "proc", "/proc", OCI_MNT_SYNTH },
	{ "sysfs", "/sys", OCI_MNT_SYNTH },
	{ "tmpfs", "/dev", OCI_MNT_SYNTH },
	{ "devpts", "/dev/pts", OCI_MNT_SYNTH },
	{ "tmpfs", "/dev/shm", OCI_MNT_SYNTH },
	{ "mqueue", "/dev/mqueue", OCI_MNT_IGNORE },
	{ "cgroup", "/sys/fs/cgroup", OCI_MNT_IGNORE },
	{ "cgroup2", "/sys/fs/cgroup", OCI_MNT_IGNORE },
	{ "tmpfs", "/tmp", OCI_MNT_SYNTH },
};

/* Options that change nothing moat does: propagation, atime, and the
 * nosuid and nodev every mount of the sandbox has (vfs_mount_table).
 * noexec and exec are taken before this list (parse_mount_options). */
static const char *const harmless_opts[] = { "rw",
					     "bind",
					     "rbind",
					     "private",
					     "rprivate",
					     "slave",
					     "rslave",
					     "shared",
					     "rshared",
					     "unbindable",
					     "runbindable",
					     "nosuid",
					     "suid",
					     "nodev",
					     "dev",
					     "noexec",
					     "exec",
					     "relatime",
					     "norelatime",
					     "noatime",
					     "atime",
					     "strictatime",
					     "nostrictatime",
					     "nodiratime",
					     "diratime",
					     "newinstance",
					     "sync",
					     "async",
					     "nosymfollow",
					     "symfollow",
					     "nocopyup",
					     "copyup",
					     "idmap",
					     "ridmap",
					     NULL };

static int parse_mount_options(struct parser *p, json_object *v,
			       struct oci_mount *m)
{
	size_t i, n;

	if (want_type(p, v, json_type_array, "a list of strings") < 0)
		return -1;
	n = json_object_array_length(v);
	for (i = 0; i < n; i++) {
		json_object *e = json_object_array_get_idx(v, i);
		const char *o;
		int rc = 0;

		push_idx(p, i);
		if (!json_object_is_type(e, json_type_string)) {
			rc = bad(p, "a string expected");
			goto next;
		}
		o = json_object_get_string(e);
		if (!strcmp(o, "ro") || !strcmp(o, "rro")) {
			m->ro = true;
		} else if (!strcmp(o, "noexec") || !strcmp(o, "exec")) {
			m->noexec = o[0] == 'n';
		} else if (!strncmp(o, "size=", 5)) {
			int64_t s = limits_parse_size(o + 5);
			if (s <= 0)
				rc = bad(p, "`%s`: a size expected", o);
			else
				m->size = (uint64_t)s;
		} else if (!strncmp(o, "mode=", 5) || !strncmp(o, "uid=", 4) ||
			   !strncmp(o, "gid=", 4)) {
			char *end;
			unsigned long v = strtoul(strchr(o, '=') + 1, &end,
						  o[0] == 'm' ? 8 : 10);
			if (*end || !strchr(o, '=')[1] ||
			    (o[0] == 'm' ? v > 07777 : v > 0xfffffffeUL))
				rc = bad(p, "`%s`: a number expected", o);
			else if (o[0] == 'm')
				m->mode = (mode_t)v;
			else if (o[0] == 'u')
				m->uid = (uid_t)v;
			else
				m->gid = (gid_t)v;
		} else if (!strncmp(o, "ptmxmode=", 9) ||
			   !strncmp(o, "nr_inodes=", 10) ||
			   !strncmp(o, "context=", 8) ||
			   in_list(o, harmless_opts)) {
			/* devpts attributes: the sentry's own */
		} else {
			rc = bad(p,
				 "mount option `%s` is not supported by "
				 "moat",
				 o);
		}
next:
		pop(p);
		if (rc < 0)
			return -1;
	}
	return 0;
}

static int parse_mount(struct parser *p, json_object *o, struct oci_mount *m)
{
	json_object *opts = NULL;

	m->mode = 01777;
	char *dst = NULL, *src = NULL;
	bool is_bind = false;
	size_t i;
	int rc = 0;

	if (want_type(p, o, json_type_object, "an object") < 0)
		return -1;
	json_object_object_foreach(o, key, val)
	{
		push_key(p, key);
		if (!strcmp(key, "destination"))
			rc = get_str(p, val, &dst);
		else if (!strcmp(key, "type"))
			rc = get_str(p, val, &m->type);
		else if (!strcmp(key, "source"))
			rc = get_str(p, val, &src);
		else if (!strcmp(key, "options"))
			opts = val;
		else if (!strcmp(key, "uidMappings") ||
			 !strcmp(key, "gidMappings"))
			rc = check_recorded(
				p, val,
				&(struct recorded){ key, json_type_array });
		else
			rc = unknown(p);
		pop(p);
		if (rc < 0)
			goto out;
	}
	if (!dst) {
		rc = bad(p, "destination: required");
		goto out;
	}
	m->dst = canon_abs(dst);
	if (!m->dst) {
		push_key(p, "destination");
		rc = bad(p, "`%s`: an absolute path without `..` expected",
			 dst);
		pop(p);
		goto out;
	}
	/* No path of Linux is longer (runc fails with ENAMETOOLONG), and
	 * the sentry names every node by its whole path. */
	if (strlen(m->dst) >= PATH_MAX) {
		push_key(p, "destination");
		rc = bad(p, "%zu bytes long: at most %d", strlen(m->dst),
			 PATH_MAX - 1);
		pop(p);
		goto out;
	}
	if (opts) {
		push_key(p, "options");
		rc = parse_mount_options(p, opts, m);
		pop(p);
		if (rc < 0)
			goto out;
		for (i = 0; i < json_object_array_length(opts); i++) {
			const char *s = json_object_get_string(
				json_object_array_get_idx(opts, i));
			if (!strcmp(s, "bind") || !strcmp(s, "rbind"))
				is_bind = true;
		}
	}
	if (!m->type)
		m->type = xstrdup(is_bind ? "bind" : "none");
	if (!strcmp(m->type, "bind"))
		is_bind = true;
	for (i = 0; i < ARRAY_SIZE(synth_mounts); i++)
		if (!strcmp(m->dst, synth_mounts[i].dst) &&
		    (!strcmp(m->type, synth_mounts[i].type) ||
		     (is_bind && !strcmp(synth_mounts[i].type, "bind")))) {
			m->kind = synth_mounts[i].kind;
			goto out;
		}
	if (is_bind) {
		if (!src || !src[0]) {
			rc = bad(p, "source: required for a bind mount");
			goto out;
		}
		/* In /dev, a bind goes over or beside devfs's nodes
		 * (kubelet's /dev/termination-log, an engine's /dev/shm);
		 * /proc and /sys are the sandbox's own, and no engine binds
		 * there. */
		if (!strcmp(m->dst, "/") || under(m->dst, "/proc") ||
		    !strcmp(m->dst, "/dev") || under(m->dst, "/sys")) {
			push_key(p, "destination");
			rc = bad(p,
				 "a bind mount at %s is not supported by "
				 "moat (/, /proc, /dev, /sys are the "
				 "sandbox's own)",
				 m->dst);
			pop(p);
			goto out;
		}
		m->src = xstrdup(src);
		m->kind = OCI_MNT_BIND; /* a directory or a file */
		goto out;
	}
	if (!strcmp(m->type, "tmpfs")) {
		if (!strcmp(m->dst, "/") || under(m->dst, "/proc") ||
		    !strcmp(m->dst, "/dev") || under(m->dst, "/sys")) {
			push_key(p, "destination");
			rc = bad(p, "a tmpfs at %s is not supported by moat",
				 m->dst);
			pop(p);
			goto out;
		}
		m->kind = OCI_MNT_TMPFS;
		if (src && src[0])
			m->src = xstrdup(src);
		goto out;
	}
	push_key(p, "type");
	rc = bad(p, "a `%s` mount at %s is not supported by moat", m->type,
		 m->dst);
	pop(p);
out:
	free(dst);
	free(src);
	return rc < 0 ? -1 : 0;
}

/* ---- hooks --------------------------------------------------------------- */

static const char *const hook_names[OCI_HOOK_KINDS] = {
	[OCI_HOOK_PRESTART] = "prestart",
	[OCI_HOOK_CREATE_RUNTIME] = "createRuntime",
	[OCI_HOOK_POSTSTART] = "poststart",
	[OCI_HOOK_POSTSTOP] = "poststop",
};

static int parse_hook(struct parser *p, json_object *o, struct oci_hook *h)
{
	int64_t v;

	if (want_type(p, o, json_type_object, "an object") < 0)
		return -1;
	json_object_object_foreach(o, key, val)
	{
		int rc = 0;

		push_key(p, key);
		if (!strcmp(key, "path")) {
			rc = get_str(p, val, &h->path);
			if (!rc && h->path[0] != '/')
				rc = bad(p, "an absolute path expected");
		} else if (!strcmp(key, "args")) {
			rc = get_strv(p, val, &h->args);
		} else if (!strcmp(key, "env")) {
			rc = get_strv(p, val, &h->env);
		} else if (!strcmp(key, "timeout")) {
			rc = get_int(p, val, 1, 86400, &v);
			h->timeout = (int)v;
		} else {
			rc = unknown(p);
		}
		pop(p);
		if (rc < 0)
			return -1;
	}
	if (!h->path)
		return bad(p, "path: required");
	return 0;
}

static int parse_hooks(struct parser *p, json_object *o, struct oci_config *c)
{
	if (want_type(p, o, json_type_object, "an object") < 0)
		return -1;
	json_object_object_foreach(o, key, val)
	{
		int kind, rc = 0;
		size_t i, n;

		push_key(p, key);
		for (kind = 0; kind < OCI_HOOK_KINDS; kind++)
			if (!strcmp(key, hook_names[kind]))
				break;
		if (kind == OCI_HOOK_KINDS) {
			/* createContainer and startContainer run in the
			 * container's namespaces, where no host binary can
			 * run. */
			if (!strcmp(key, "createContainer") ||
			    !strcmp(key, "startContainer"))
				rc = bad(p, "not supported by moat (prestart, "
					    "createRuntime, poststart, "
					    "poststop)");
			else
				rc = unknown(p);
			pop(p);
			if (rc < 0)
				return rc;
			continue;
		}
		rc = want_type(p, val, json_type_array, "a list of hooks");
		n = rc ? 0 : json_object_array_length(val);
		c->hooks[kind].h = xcalloc(n + 1, sizeof(struct oci_hook));
		for (i = 0; !rc && i < n; i++) {
			push_idx(p, i);
			rc = parse_hook(p, json_object_array_get_idx(val, i),
					&c->hooks[kind].h[i]);
			c->hooks[kind].n++;
			pop(p);
		}
		pop(p);
		if (rc < 0)
			return -1;
	}
	return 0;
}

/* ---- linux --------------------------------------------------------------- */

/* linux.resources.cpu.cpus or .mems: a cpuset list ("0-3,7"), written as
 * it is to cpuset.cpus or .mems, so only its characters pass (a newline
 * would end the write early); "" is none. */
static int get_cpuset(struct parser *p, json_object *v, char **out)
{
	const char *s;

	if (want_type(p, v, json_type_string, "a string") < 0)
		return -1;
	s = json_object_get_string(v);
	if (strspn(s, "0123456789,-") != strlen(s) || strlen(s) > 4096)
		return bad(p, "a list of numbers and ranges (\"0-3,7\") "
			      "expected");
	free(*out);
	*out = *s ? xstrdup(s) : NULL;
	return 0;
}

static int parse_resources(struct parser *p, json_object *o,
			   struct oci_config *c)
{
	/* the spec's, given by the sandbox already; kernel and kernelTCP
	 * are deprecated by the spec and by Linux 5.4, and runc 1.1 ignores
	 * them too */
	static const struct recorded memory_recorded[] = {
		{ "useHierarchy", json_type_boolean },
		{ "checkBeforeUpdate", json_type_boolean },
		{ "kernel", json_type_int },
		{ "kernelTCP", json_type_int },
		{ NULL, 0 }
	};
	/* the spec's, that moat does not honour */
	static const char *const cpu_refused[] = { "burst", "realtimeRuntime",
						   "realtimePeriod", "idle",
						   NULL };
	static const char *const refused[] = { "blockIO", "hugepageLimits",
					       "network", "rdma",
					       "unified", NULL };
	const struct recorded *r;
	int64_t quota = 0, period = 0;

	if (want_type(p, o, json_type_object, "an object") < 0)
		return -1;
	json_object_object_foreach(o, key, val)
	{
		int rc = 0;

		push_key(p, key);
		if (!strcmp(key, "devices")) {
			/* The sandbox's /dev is the sentry's; no host device
			 * is reachable, whatever the list allows. */
			rc = want_type(p, val, json_type_array, "a list");
		} else if (!strcmp(key, "memory")) {
			rc = want_type(p, val, json_type_object, "an object");
			if (rc < 0) {
				pop(p);
				return -1;
			}
			json_object_object_foreach(val, mk, mv)
			{
				push_key(p, mk);
				int64_t x = 0;
				if (!mv) {
					/* null: as if absent */
				} else if (!strcmp(mk, "limit")) {
					rc = get_int(p, mv, -1, INT64_MAX, &x);
					c->memory = x > 0 ? (uint64_t)x : 0;
				} else if (!strcmp(mk, "swap")) {
					rc = get_int(p, mv, -1, INT64_MAX,
						     &c->memory_swap);
				} else if (!strcmp(mk, "reservation")) {
					rc = get_int(p, mv, -1, INT64_MAX,
						     &c->memory_reservation);
				} else if (!strcmp(mk, "swappiness")) {
					rc = get_int(p, mv, 0, 100,
						     &c->swappiness);
				} else if (!strcmp(mk, "disableOOMKiller")) {
					rc = get_bool(p, mv,
						      &c->disable_oom_killer);
				} else if ((r = recorded_field(
						    mk, memory_recorded))) {
					rc = check_recorded(p, mv, r);
				} else {
					rc = unknown(p);
				}
				pop(p);
				if (rc < 0)
					break;
			}
		} else if (!strcmp(key, "pids")) {
			rc = want_type(p, val, json_type_object, "an object");
			if (rc < 0) {
				pop(p);
				return -1;
			}
			json_object_object_foreach(val, pk, pv)
			{
				push_key(p, pk);
				if (!strcmp(pk, "limit"))
					rc = get_int(p, pv, -1, 1000000,
						     &c->pids);
				else
					rc = unknown(p);
				pop(p);
				if (rc < 0)
					break;
			}
			if (c->pids < 0)
				c->pids = 0;
		} else if (!strcmp(key, "cpu")) {
			rc = want_type(p, val, json_type_object, "an object");
			if (rc < 0) {
				pop(p);
				return -1;
			}
			json_object_object_foreach(val, ck, cv)
			{
				push_key(p, ck);
				if (!cv)
					; /* null: as if absent */
				else if (!strcmp(ck, "quota"))
					rc = get_int(p, cv, -1, INT64_MAX,
						     &quota);
				else if (!strcmp(ck, "period"))
					rc = get_int(p, cv, 0, 1000000,
						     &period);
				else if (!strcmp(ck, "shares"))
					rc = get_u64(p, cv, &c->cpu_shares);
				else if (!strcmp(ck, "cpus"))
					rc = get_cpuset(p, cv, &c->cpuset_cpus);
				else if (!strcmp(ck, "mems"))
					rc = get_cpuset(p, cv, &c->cpuset_mems);
				else if (in_list(ck, cpu_refused))
					rc = bad(p, "not supported by moat");
				else
					rc = unknown(p);
				pop(p);
				if (rc < 0)
					break;
			}
		} else if (in_list(key, refused)) {
			rc = bad(p, "not supported by moat (devices, memory, "
				    "pids, cpu)");
		} else {
			rc = unknown(p);
		}
		pop(p);
		if (rc < 0)
			return -1;
	}
	if (quota > 0) {
		c->cpus =
			(double)quota / (double)(period > 0 ? period : 100000);
		if (c->cpus > 4096) /* as --cpus: more than any host has */
			c->cpus = 4096;
	}
	c->cpu_quota = quota;
	c->cpu_period = (uint64_t)period;
	return 0;
}

/* The namespace types, as config.json names them and as setns and
 * NS_GET_NSTYPE do. */
static const struct {
	const char *name;
	int nstype;
} ns_types[] = {
	{ "pid", CLONE_NEWPID },       { "network", CLONE_NEWNET },
	{ "mount", CLONE_NEWNS },      { "ipc", CLONE_NEWIPC },
	{ "uts", CLONE_NEWUTS },       { "user", CLONE_NEWUSER },
	{ "cgroup", CLONE_NEWCGROUP }, { "time", CLONE_NEWTIME },
};

static const char *ns_type_name(int nstype)
{
	for (size_t i = 0; i < ARRAY_SIZE(ns_types); i++)
		if (ns_types[i].nstype == nstype)
			return ns_types[i].name;
	return "unknown";
}

/* CLONE_NEW* of a type name that parse_namespaces accepted. */
static int ns_type_of(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(ns_types); i++)
		if (!strcmp(ns_types[i].name, name))
			return ns_types[i].nstype;
	return 0;
}

static int parse_namespaces(struct parser *p, json_object *o,
			    struct oci_config *c)
{
	/* The sandbox always has all of these of its own. */
	static const char *const types[] = { "pid",    "network", "mount",
					     "ipc",    "uts",	  "user",
					     "cgroup", "time",	  NULL };
	static const char *const required[] = { "pid", "network", "mount",
						"ipc", "uts",	  NULL };
	bool seen[8] = { 0 };
	size_t i, j, n;

	if (want_type(p, o, json_type_array, "a list of namespaces") < 0)
		return -1;
	n = json_object_array_length(o);
	for (i = 0; i < n; i++) {
		json_object *e = json_object_array_get_idx(o, i), *t = NULL;
		json_object *path = NULL;
		int rc = 0;

		push_idx(p, i);
		if (want_type(p, e, json_type_object, "an object") < 0) {
			pop(p);
			return -1;
		}
		json_object_object_foreach(e, key, val)
		{
			push_key(p, key);
			if (!strcmp(key, "type")) {
				t = val;
				rc = want_type(p, val, json_type_string,
					       "a string");
				for (j = 0; !rc && types[j]; j++)
					if (!strcmp(json_object_get_string(val),
						    types[j]))
						break;
				if (!rc && !types[j])
					rc = bad(p,
						 "`%s` is not a namespace type",
						 json_object_get_string(val));
				if (!rc)
					seen[j] = true;
			} else if (!strcmp(key, "path")) {
				path = val;
				rc = want_type(p, val, json_type_string,
					       "a string");
			} else {
				rc = unknown(p);
			}
			pop(p);
			if (rc < 0)
				break;
		}
		if (!rc && !t)
			rc = bad(p, "type: required");
		if (!rc && path) {
			/* A network namespace (a pod's) is where the
			 * sandbox's link reaches the host: slirp's sockets
			 * or tap's device live there. An ipc, uts or pid
			 * one is a pod's sandbox container's, which only a
			 * member of that pod may name (cli/pod.c refuses it
			 * for any other): a pid one shares the pod's pids
			 * (shareProcessNamespace). Other kinds the sandbox
			 * has of its own only. */
			const char *ty = json_object_get_string(t);

			push_key(p, "path");
			if (strcmp(ty, "network") && strcmp(ty, "ipc") &&
			    strcmp(ty, "uts") && strcmp(ty, "pid"))
				rc = bad(p,
					 "joining an existing %s namespace "
					 "is not supported by moat: the "
					 "sandbox is a kernel of its own",
					 json_object_get_string(t));
			else if (json_object_get_string(path)[0] != '/')
				rc = bad(p, "an absolute path expected");
			else if (!strcmp(ty, "network"))
				c->netns =
					xstrdup(json_object_get_string(path));
			pop(p);
			if (!rc) {
				struct oci_nspath *np;

				np = realloc(c->nspaths,
					     (c->nnspaths + 1) * sizeof(*np));
				if (!np)
					abort();
				c->nspaths = np;
				np = &c->nspaths[c->nnspaths++];
				np->nstype =
					ns_type_of(json_object_get_string(t));
				np->index = i;
				np->path =
					xstrdup(json_object_get_string(path));
			}
		}
		pop(p);
		if (rc < 0)
			return -1;
	}
	for (j = 0; required[j]; j++)
		if (!seen[j])
			return bad(p,
				   "no `%s` namespace: moat always gives the "
				   "container its own; sharing the host's is "
				   "not possible",
				   required[j]);
	return 0;
}

/* Where under /dev a device may be: not /dev itself, nor in the sentry's
 * own filesystems mounted there. NULL: it may; else why not. */
static const char *device_place(const char *path)
{
	static const char *const mounted[] = { "/dev/pts", "/dev/shm",
					       "/dev/mqueue", NULL };
	size_t i, n;

	if (strncmp(path, "/dev/", 5) || !path[5])
		return "moat makes device nodes in the sandbox's /dev only "
		       "(the rootfs and its overlay hold none)";
	for (i = 0; mounted[i]; i++) {
		n = strlen(mounted[i]);
		if (!strncmp(path, mounted[i], n) &&
		    (!path[n] || path[n] == '/'))
			return "in a filesystem of its own, not devfs";
	}
	return NULL;
}

/* One entry of linux.devices, checked; fields as runc reads them. */
static int parse_device(struct parser *p, json_object *o, struct oci_device *d)
{
	char *path = NULL, *type = NULL;
	int64_t v;
	int rc = 0;

	if (want_type(p, o, json_type_object, "an object") < 0)
		return -1;
	d->mode = 0666;
	json_object_object_foreach(o, key, val)
	{
		push_key(p, key);
		if (!strcmp(key, "path")) {
			rc = get_str(p, val, &path);
		} else if (!strcmp(key, "type")) {
			rc = get_str(p, val, &type);
		} else if (!strcmp(key, "major")) {
			/* Linux's dev_t: 12 bits of major, 20 of minor */
			rc = get_int(p, val, 0, 4095, &v);
			d->major = (uint32_t)v;
		} else if (!strcmp(key, "minor")) {
			rc = get_int(p, val, 0, 0xfffff, &v);
			d->minor = (uint32_t)v;
		} else if (!strcmp(key, "fileMode")) {
			/* permission bits; a type in it is the type field's
			 * to say (runc masks it off too) */
			rc = get_int(p, val, 0, 0xffffffff, &v);
			d->mode = (mode_t)v & 07777;
		} else if (!strcmp(key, "uid")) {
			rc = get_int(p, val, 0, 0xfffffffe, &v);
			d->uid = (uid_t)v;
		} else if (!strcmp(key, "gid")) {
			rc = get_int(p, val, 0, 0xfffffffe, &v);
			d->gid = (gid_t)v;
		} else {
			rc = bad(p, "unknown field (path, type, major, minor, "
				    "fileMode, uid, gid)");
		}
		pop(p);
		if (rc < 0)
			goto out;
	}
	if (!path) {
		rc = bad(p, "path: required");
		goto out;
	}
	if (!type) {
		rc = bad(p, "type: required");
		goto out;
	}
	push_key(p, "type");
	if (!strcmp(type, "c") || !strcmp(type, "u"))
		d->mode |= S_IFCHR;
	else if (!strcmp(type, "b"))
		d->mode |= S_IFBLK;
	else if (!strcmp(type, "p"))
		d->mode |= S_IFIFO;
	else
		rc = bad(p, "`%s`: not a device type (c, b, u, p)", type);
	pop(p);
	if (rc < 0)
		goto out;
	if (S_ISFIFO(d->mode))
		d->major = d->minor = 0; /* a FIFO has no device number */
	push_key(p, "path");
	d->path = canon_abs(path);
	if (!d->path) {
		rc = bad(p, "`%s`: an absolute path without `..` expected",
			 path);
	} else {
		const char *why = device_place(d->path);
		if (why)
			rc = bad(p, "`%s`: %s", path, why);
	}
	pop(p);
out:
	free(path);
	free(type);
	return rc;
}

/* linux.devices: each a node of the sandbox's devfs, with its type,
 * number, mode and owner; opened, it is the sentry's own device of that
 * number, or ENXIO (sentry/fs_dev.c). No host device is ever reached. */
static int parse_devices(struct parser *p, json_object *o, struct oci_config *c)
{
	size_t i, j, n;

	if (want_type(p, o, json_type_array, "a list of devices") < 0)
		return -1;
	n = json_object_array_length(o);
	if (n > OCI_DEVICES_MAX)
		return bad(p, "more than %d devices", OCI_DEVICES_MAX);
	c->devices = xcalloc(n + 1, sizeof(*c->devices));
	for (i = 0; i < n; i++) {
		struct oci_device *d = &c->devices[i];
		int rc;

		push_idx(p, i);
		rc = parse_device(p, json_object_array_get_idx(o, i), d);
		c->ndevices = i + 1;
		/* One node a path, and none inside another's: runc keeps
		 * the first of two quietly, which is worse than saying. */
		for (j = 0; !rc && j < i; j++) {
			const char *a = c->devices[j].path, *b = d->path;
			size_t la = strlen(a), lb = strlen(b);
			size_t m = la < lb ? la : lb;

			if (strncmp(a, b, m) ||
			    (la != lb && (la > lb ? a : b)[m] != '/'))
				continue;
			push_key(p, "path");
			rc = bad(p,
				 la == lb ? "`%s`: also linux.devices[%zu]" :
					    "`%s`: a device inside, or the "
					    "directory of, linux.devices[%zu]",
				 b, j);
			pop(p);
		}
		pop(p);
		if (rc < 0)
			return -1;
	}
	return 0;
}

/* linux.uidMappings or gidMappings: what the sandbox's ids are, as its
 * /proc/<pid>/uid_map and gid_map say. The sentry's ids are its own
 * (sentry/hostids.h), so these map nothing on the host. */
static int parse_idmaps(struct parser *p, json_object *o,
			struct oci_idmap **out, size_t *nout)
{
	size_t i, n;

	if (want_type(p, o, json_type_array, "a list of mappings") < 0)
		return -1;
	n = json_object_array_length(o);
	if (n > OCI_IDMAPS_MAX)
		return bad(p, "more than %d mappings (Linux's most)",
			   OCI_IDMAPS_MAX);
	free(*out);
	*out = xcalloc(n + 1, sizeof(**out));
	*nout = 0;
	for (i = 0; i < n; i++) {
		json_object *e = json_object_array_get_idx(o, i);
		struct oci_idmap *m = &(*out)[i];
		bool seen[3] = { false, false, false };
		int rc = 0;

		push_idx(p, i);
		if (want_type(p, e, json_type_object, "an object") < 0) {
			pop(p);
			return -1;
		}
		json_object_object_foreach(e, key, val)
		{
			int64_t v = 0;
			int k = !strcmp(key, "containerID") ? 0 :
				!strcmp(key, "hostID")	    ? 1 :
				!strcmp(key, "size")	    ? 2 :
							      -1;

			push_key(p, key);
			if (k < 0)
				rc = bad(p, "unknown field (containerID, "
					    "hostID, size)");
			else
				rc = get_int(p, val, k == 2 ? 1 : 0, 0xffffffff,
					     &v);
			if (k >= 0)
				seen[k] = true;
			if (k == 0)
				m->inside = (uint32_t)v;
			else if (k == 1)
				m->outside = (uint32_t)v;
			else if (k == 2)
				m->count = (uint32_t)v;
			pop(p);
			if (rc < 0)
				break;
		}
		if (!rc && !(seen[0] && seen[1] && seen[2]))
			rc = bad(p, "%s: required",
				 !seen[0] ? "containerID" :
				 !seen[1] ? "hostID" :
					    "size");
		if (!rc && (uint64_t)m->inside + m->count > 0x100000000ULL)
			rc = bad(p, "containerID + size past 4294967296");
		pop(p);
		if (rc < 0)
			return -1;
		*nout = i + 1;
	}
	return 0;
}

/* The sandbox's kernel is the sentry: of the sysctls, it honours those
 * whose meaning it has (sentry/sysctl.h: System V IPC's and message
 * queues' limits, shm_rmid_forced, the privileged ports) and the ping
 * sockets' group range; each changes what the sentry does and what
 * /proc/sys shows. The rest are refused, saying why. */
static int parse_sysctl(struct parser *p, json_object *o, struct oci_config *c)
{
	size_t n;

	if (want_type(p, o, json_type_object, "an object") < 0)
		return -1;
	n = (size_t)json_object_object_length(o);
	c->sysctls = xcalloc(n + 1, sizeof(*c->sysctls));
	json_object_object_foreach(o, key, val)
	{
		unsigned long lo, hi;
		int rc = 0, end = 0;
		char why[256];

		push_key(p, key);
		if (want_type(p, val, json_type_string, "a string") < 0)
			rc = -1;
		else if (strcmp(key, "net.ipv4.ping_group_range")) {
			if (sysctl_setting_check(key,
						 json_object_get_string(val),
						 why, sizeof(why)) < 0)
				rc = bad(p, "%s", why);
			else if (c->nsysctls < n) {
				c->sysctls[c->nsysctls].name = xstrdup(key);
				c->sysctls[c->nsysctls++].value =
					xstrdup(json_object_get_string(val));
			}
		} else if (sscanf(json_object_get_string(val), "%lu %lu%n", &lo,
				  &hi, &end) != 2 ||
			   json_object_get_string(val)[end] ||
			   lo > 0xffffffffUL || hi > 0xffffffffUL)
			rc = bad(p, "`%s`: two group ids expected",
				 json_object_get_string(val));
		else {
			c->ping_range = true;
			c->ping_lo = (gid_t)lo;
			c->ping_hi = (gid_t)hi;
		}
		pop(p);
		if (rc < 0)
			return -1;
	}
	return 0;
}

/* linux.maskedPaths, linux.readonlyPaths: paths in the container, which
 * the sentry resolves inside the sandbox when it applies them (a path
 * that is not there is no error, as runc's). A relative one is taken
 * from "/", as runc does. */
static int parse_paths(struct parser *p, json_object *v, char ***out)
{
	char **a = NULL;

	/* null is as if absent, as Go's decoder (runc's) takes it */
	if (!v)
		return 0;
	if (get_strv(p, v, &a) < 0)
		return -1;
	for (size_t i = 0; a[i]; i++) {
		int rc = 0;

		push_idx(p, i);
		if (!a[i][0])
			rc = bad(p, "an empty path");
		else if (strlen(a[i]) >= PATH_MAX - 1)
			rc = bad(p, "%zu bytes long: at most %d", strlen(a[i]),
				 PATH_MAX - 2);
		pop(p);
		if (rc < 0) {
			strv_free(a);
			return -1;
		}
		if (a[i][0] != '/') {
			char *abs = xmalloc(strlen(a[i]) + 2);

			abs[0] = '/';
			strcpy(abs + 1, a[i]);
			free(a[i]);
			a[i] = abs;
		}
	}
	strv_free(*out);
	*out = a;
	return 0;
}

static int parse_linux(struct parser *p, json_object *o, struct oci_config *c)
{
	/* Given by the sandbox already (docs/oci.md). */
	static const struct recorded recorded[] = {
		{ "seccomp", json_type_object },
		{ "rootfsPropagation", json_type_string },
		{ "mountLabel", json_type_string },
		{ "personality", json_type_object },
		{ NULL, 0 }
	};
	/* the spec's, that moat does not honour (docs/oci.md) */
	static const char *const refused[] = { "intelRdt", "netDevices",
					       "memoryPolicy", "timeOffsets",
					       NULL };
	const struct recorded *r;
	int rc = 0;

	if (want_type(p, o, json_type_object, "an object") < 0)
		return -1;
	json_object_object_foreach(o, key, val)
	{
		push_key(p, key);
		if (!strcmp(key, "resources"))
			rc = parse_resources(p, val, c);
		else if (!strcmp(key, "namespaces"))
			rc = parse_namespaces(p, val, c);
		else if (!strcmp(key, "devices"))
			rc = parse_devices(p, val, c);
		else if (!strcmp(key, "uidMappings"))
			rc = parse_idmaps(p, val, &c->uid_maps, &c->nuid_maps);
		else if (!strcmp(key, "gidMappings"))
			rc = parse_idmaps(p, val, &c->gid_maps, &c->ngid_maps);
		else if (!strcmp(key, "sysctl"))
			rc = parse_sysctl(p, val, c);
		else if (!strcmp(key, "cgroupsPath") && val)
			rc = get_str(p, val, &c->cgroups_path);
		else if (!strcmp(key, "maskedPaths"))
			rc = parse_paths(p, val, &c->masked_paths);
		else if (!strcmp(key, "readonlyPaths"))
			rc = parse_paths(p, val, &c->readonly_paths);
		else if ((r = recorded_field(key, recorded)))
			rc = check_recorded(p, val, r);
		else if (in_list(key, refused))
			rc = bad(p, "not supported by moat");
		else
			rc = unknown(p);
		pop(p);
		if (rc < 0)
			return -1;
	}
	return 0;
}

/* ---- annotations --------------------------------------------------------- */

/* msg from a parse of the annotation's own text, without its
 * "dev.moat.credentials:LINE: " (the annotation's line in config.json
 * goes first instead). */
static const char *inner_msg(const char *msg, const char *origin)
{
	size_t n = strlen(origin);
	const char *p = msg;

	if (strncmp(p, origin, n) || p[n] != ':')
		return msg;
	p += n + 1;
	p += strspn(p, "0123456789");
	return strncmp(p, ": ", 2) ? msg : p + 2;
}

/* Is v one JSON list and nothing more (but white space)? So that the
 * object it is wrapped in below cannot gain fields from it. */
static bool json_list_alone(const char *v)
{
	json_tokener *tok = json_tokener_new();
	size_t n = strlen(v), end;
	json_object *o;
	bool ok;

	if (!tok)
		abort();
	o = n < INT32_MAX ? json_tokener_parse_ex(tok, v, (int)n) : NULL;
	end = json_tokener_get_parse_end(tok);
	ok = o && json_object_is_type(o, json_type_array) &&
	     json_tokener_get_error(tok) == json_tokener_success && end <= n &&
	     v[end + strspn(v + end, " \t\r\n")] == 0;
	json_object_put(o);
	json_tokener_free(tok);
	return ok;
}

/* dev.moat.credentials: the policy file's "credentials" list, as its
 * value, parsed by the policy file's own parser (wrapped in an object of
 * that one field, on the same line, so that its lines stay the value's)
 * and checked alone. An fd: source has no meaning here: the engine
 * passes moat no fds of the user's. */
static int credentials_annotation(struct parser *p, const char *v,
				  struct oci_config *c)
{
	static const char origin[] = "dev.moat.credentials";
	struct moat_error err = { 0 };
	struct jdoc d = { NULL, 0, origin, &err };
	cleanup_free char *doc = NULL;
	json_object *root = NULL, *list;
	int rc;

	if (c->cred.n)
		return bad(p, "given twice");
	if (!json_list_alone(v))
		return bad(p, "a JSON list of credentials expected (the "
			      "policy file's \"credentials\")");
	if (asprintf(&doc, "{\"credentials\": %s}", v) < 0)
		abort();
	d.text = doc;
	d.len = strlen(doc);
	rc = jdoc_parse(&d, (size_t)1 << 20, &root);
	if (rc == 0 && json_object_object_get_ex(root, "credentials", &list))
		rc = cred_parse_json(&d, "credentials", list, &c->cred);
	json_object_put(root);
	if (rc == 0)
		rc = cred_validate(&c->cred, origin, &err);
	for (size_t i = 0; rc == 0 && i < c->cred.n; i++)
		if (c->cred.v[i].source == CRED_FROM_FD)
			rc = moat_error_input(&err, EINVAL,
					      "credentials[%zu].from: `%s`: "
					      "an fd: source is for moat do "
					      "(env: or file: here)",
					      i, c->cred.v[i].from);
	if (rc < 0 && err.msg[0])
		rc = bad(p, "%s", inner_msg(err.msg, origin));
	if (rc < 0)
		cred_free(&c->cred);
	return rc < 0 ? -1 : 0;
}

static int moat_annotation(struct parser *p, const char *key, const char *v,
			   struct oci_config *c)
{
	const char *k = key + strlen("dev.moat.");

	if (!strcmp(k, "net")) {
		if (!strcmp(v, "none"))
			c->net = NET_NONE;
		else if (!strcmp(v, "slirp"))
			c->net = NET_SLIRP;
		else if (!strcmp(v, "tap"))
			c->net = NET_TAP;
		else
			return bad(p, "`%s`: none, slirp or tap", v);
	} else if (!strcmp(k, "allow")) {
		c->allow = xstrdup(v);
	} else if (!strcmp(k, "deny")) {
		c->deny = xstrdup(v);
	} else if (!strcmp(k, "policy")) {
		if (v[0] != '/')
			return bad(p, "`%s`: an absolute path expected", v);
		c->policy_file = xstrdup(v);
	} else if (!strcmp(k, "dns")) {
		c->dns = xstrdup(v);
	} else if (!strcmp(k, "disk")) {
		int64_t s = limits_parse_size(v);
		if (s <= 0)
			return bad(p, "`%s`: a size like 1G expected", v);
		c->disk = (uint64_t)s;
	} else if (!strcmp(k, "timeout")) {
		char *end;
		long s = strtol(v, &end, 10);
		if (*end || s <= 0 || s > 1000000)
			return bad(p, "`%s`: seconds expected", v);
		c->timeout_s = (int)s;
	} else if (!strcmp(k, "credentials")) {
		return credentials_annotation(p, v, c);
	} else if (!strcmp(k, "upstream-ca")) {
		if (v[0] != '/')
			return bad(p, "`%s`: an absolute path expected", v);
		free(c->upstream_ca);
		c->upstream_ca = xstrdup(v);
	} else {
		return bad(p, "unknown moat annotation (net, allow, deny, "
			      "policy, dns, disk, timeout, credentials, "
			      "upstream-ca)");
	}
	return 0;
}

static int parse_annotations(struct parser *p, json_object *o,
			     struct oci_config *c)
{
	size_t n;

	if (want_type(p, o, json_type_object, "an object") < 0)
		return -1;
	n = (size_t)json_object_object_length(o);
	c->annotations = xcalloc(n + 1, sizeof(*c->annotations));
	json_object_object_foreach(o, key, val)
	{
		int rc = 0;

		push_key(p, key);
		rc = want_type(p, val, json_type_string, "a string");
		if (!rc && !strncmp(key, "dev.moat.", 9))
			rc = moat_annotation(p, key,
					     json_object_get_string(val), c);
		pop(p);
		if (rc < 0)
			return -1;
		c->annotations[c->nannotations].key = xstrdup(key);
		c->annotations[c->nannotations++].value =
			xstrdup(json_object_get_string(val));
	}
	return 0;
}

/* ---- the document -------------------------------------------------------- */

static int parse_root(struct parser *p, json_object *o, struct oci_config *c,
		      const char *bundle)
{
	char *path = NULL;
	int rc = 0;

	if (want_type(p, o, json_type_object, "an object") < 0)
		return -1;
	json_object_object_foreach(o, key, val)
	{
		push_key(p, key);
		if (!strcmp(key, "path"))
			rc = get_str(p, val, &path);
		else if (!strcmp(key, "readonly"))
			rc = get_bool(p, val, &c->root_ro);
		else
			rc = unknown(p);
		pop(p);
		if (rc < 0)
			goto out;
	}
	if (!path || !path[0]) {
		rc = bad(p, "path: required");
		goto out;
	}
	if (path[0] == '/')
		c->root = xstrdup(path);
	else if (asprintf(&c->root, "%s/%s", bundle, path) < 0)
		abort();
out:
	free(path);
	return rc < 0 ? -1 : 0;
}

int oci_config_parse(const char *text, size_t len, const char *bundle,
		     struct oci_config *out, struct moat_error *err)
{
	static const char *const refused_top[] = { "solaris", "windows", "vm",
						   "zos",     "freebsd", NULL };
	struct parser p = { .d = { text, len, "config.json", err } };
	struct oci_config c = { 0 };
	json_object *root, *v;
	int rc = 0;
	size_t i;

	if (jdoc_parse(&p.d, OCI_CONFIG_MAX, &root) < 0)
		return -1;
	c.bundle = xstrdup(bundle);
	c.swappiness = -1;
	json_object_object_foreach(root, key, val)
	{
		push_key(&p, key);
		if (!strcmp(key, "ociVersion")) {
			rc = get_str(&p, val, &c.oci_version);
			if (!rc && strncmp(c.oci_version, "1.", 2))
				rc = bad(&p, "`%s`: moat runs runtime-spec 1.x",
					 c.oci_version);
		} else if (!strcmp(key, "root")) {
			rc = parse_root(&p, val, &c, bundle);
		} else if (!strcmp(key, "process")) {
			rc = parse_process_obj(&p, val, &c.process);
		} else if (!strcmp(key, "hostname")) {
			rc = get_str(&p, val, &c.hostname);
			if (!rc && strlen(c.hostname) > 64)
				rc = bad(&p, "longer than 64 bytes");
		} else if (!strcmp(key, "domainname")) {
			char *d = NULL;
			rc = get_str(&p, val, &d);
			free(d);
		} else if (!strcmp(key, "mounts")) {
			size_t n;

			rc = want_type(&p, val, json_type_array,
				       "a list of mounts");
			n = rc ? 0 : json_object_array_length(val);
			c.mounts = xcalloc(n + 1, sizeof(*c.mounts));
			for (i = 0; !rc && i < n; i++) {
				push_idx(&p, i);
				rc = parse_mount(
					&p, json_object_array_get_idx(val, i),
					&c.mounts[c.nmounts++]);
				pop(&p);
			}
		} else if (!strcmp(key, "hooks")) {
			rc = parse_hooks(&p, val, &c);
		} else if (!strcmp(key, "annotations")) {
			rc = parse_annotations(&p, val, &c);
		} else if (!strcmp(key, "linux")) {
			rc = parse_linux(&p, val, &c);
		} else if (in_list(key, refused_top)) {
			rc = bad(&p, "not a Linux container: not supported "
				     "by moat");
		} else {
			rc = unknown(&p);
		}
		pop(&p);
		if (rc < 0)
			goto fail;
	}
	if (!json_object_object_get_ex(root, "ociVersion", &v)) {
		rc = bad(&p, "ociVersion: required");
		goto fail;
	}
	if (!c.root) {
		rc = bad(&p, "root: required");
		goto fail;
	}
	if (!c.process.args) {
		rc = bad(&p, "process: required");
		goto fail;
	}
	/* Relative bind sources are the bundle's. */
	for (i = 0; i < c.nmounts; i++) {
		struct oci_mount *m = &c.mounts[i];
		char *abs;

		if (m->kind != OCI_MNT_BIND || m->src[0] == '/')
			continue;
		if (asprintf(&abs, "%s/%s", bundle, m->src) < 0)
			abort();
		free(m->src);
		m->src = abs;
	}
	/* A mount may go over one of the sentry's own (containerd binds the
	 * pod's shm over the tmpfs at /dev/shm: the bind is on top, as under
	 * runc), not over another of the bundle's. */
	for (i = 0; i < c.nmounts; i++)
		for (size_t j = 0; j < i; j++)
			if (c.mounts[i].kind != OCI_MNT_SYNTH &&
			    c.mounts[i].kind != OCI_MNT_IGNORE &&
			    c.mounts[j].kind != OCI_MNT_SYNTH &&
			    c.mounts[j].kind != OCI_MNT_IGNORE &&
			    !strcmp(c.mounts[i].dst, c.mounts[j].dst)) {
				struct jstep mp[3] = { { "mounts", 0 },
						       { NULL, i },
						       { "destination", 0 } };
				rc = jdoc_error(&p.d, mp, 3,
						"%s is mounted twice",
						c.mounts[i].dst);
				goto fail;
			}
	json_object_put(root);
	c.warnings = take_warnings(&p);
	*out = c;
	return 0;
fail:
	json_object_put(root);
	free(take_warnings(&p));
	oci_config_free(&c);
	return -1;
}

/* What path is, when it is no namespace file of type nstype: NULL when
 * it is one, else a reason into why. The file is opened O_PATH first, so
 * that a FIFO or a device at the path is never opened for reading; only
 * a file of nsfs is, to ask its type (NS_GET_NSTYPE). */
static const char *ns_file_mismatch(const char *path, int nstype, char *why,
				    size_t cap)
{
	cleanup_close int fd = open(path, O_PATH | O_CLOEXEC), nsfd = -1;
	char self[64];
	struct statfs sfs;
	struct stat st;
	int t;

	if (fd < 0 || fstat(fd, &st) < 0 || fstatfs(fd, &sfs) < 0) {
		snprintf(why, cap, "%s", strerror(errno));
		return why;
	}
	if (sfs.f_type != NSFS_MAGIC) {
		snprintf(why, cap, "not a namespace file (%s)",
			 file_type_name(st.st_mode));
		return why;
	}
	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	nsfd = open(self, O_RDONLY | O_CLOEXEC);
	t = nsfd < 0 ? -1 : ioctl(nsfd, NS_GET_NSTYPE);
	if (t < 0) {
		snprintf(why, cap, "the namespace's type: %s", strerror(errno));
		return why;
	}
	if (t != nstype) {
		snprintf(why, cap, "a namespace of type %s, not %s",
			 ns_type_name(t), ns_type_name(nstype));
		return why;
	}
	return NULL;
}

int oci_config_load(const char *bundle, struct oci_config *out,
		    struct moat_error *err)
{
	cleanup_free char *path = NULL, *buf = NULL;
	struct jdoc d = { NULL, 0, "config.json", err };
	struct stat st;
	size_t len;

	if (asprintf(&path, "%s/config.json", bundle) < 0)
		abort();
	if (jdoc_read_file(path, OCI_CONFIG_MAX, &buf, &len, err) < 0)
		return moat_error_wrap(err, "bundle");
	if (oci_config_parse(buf, len, bundle, out, err) < 0)
		return -1;
	errno = 0;
	if (stat(out->root, &st) < 0 || !S_ISDIR(st.st_mode)) {
		moat_error_set(err, errno ? errno : ENOTDIR,
			       "config.json: root.path `%s`", out->root);
		oci_config_free(out);
		return -1;
	}
	d.text = buf;
	d.len = len;
	for (size_t i = 0; i < out->nnspaths; i++) {
		const struct oci_nspath *np = &out->nspaths[i];
		struct jstep at[4] = { { "linux", 0 },
				       { "namespaces", 0 },
				       { NULL, np->index },
				       { "path", 0 } };
		char why[160];

		if (ns_file_mismatch(np->path, np->nstype, why, sizeof(why))) {
			jdoc_error(&d, at, 4, "`%s`: %s", np->path, why);
			oci_config_free(out);
			return -1;
		}
	}
	return 0;
}

void oci_config_free(struct oci_config *c)
{
	size_t i;
	int k;

	free(c->oci_version);
	free(c->bundle);
	free(c->root);
	free(c->hostname);
	free(c->cgroups_path);
	free(c->cpuset_cpus);
	free(c->cpuset_mems);
	oci_process_free(&c->process);
	for (i = 0; i < c->nmounts; i++) {
		free(c->mounts[i].dst);
		free(c->mounts[i].type);
		free(c->mounts[i].src);
	}
	free(c->mounts);
	for (k = 0; k < OCI_HOOK_KINDS; k++) {
		for (i = 0; i < c->hooks[k].n; i++) {
			free(c->hooks[k].h[i].path);
			strv_free(c->hooks[k].h[i].args);
			strv_free(c->hooks[k].h[i].env);
		}
		free(c->hooks[k].h);
	}
	for (i = 0; i < c->nannotations; i++) {
		free(c->annotations[i].key);
		free(c->annotations[i].value);
	}
	free(c->annotations);
	free(c->allow);
	free(c->deny);
	free(c->policy_file);
	free(c->dns);
	cred_free(&c->cred);
	free(c->upstream_ca);
	free(c->netns);
	strv_free(c->masked_paths);
	strv_free(c->readonly_paths);
	for (i = 0; i < c->nnspaths; i++)
		free(c->nspaths[i].path);
	free(c->nspaths);
	free(c->warnings);
	for (i = 0; i < c->ndevices; i++)
		free(c->devices[i].path);
	free(c->devices);
	free(c->uid_maps);
	free(c->gid_maps);
	for (i = 0; i < c->nsysctls; i++) {
		free(c->sysctls[i].name);
		free(c->sysctls[i].value);
	}
	free(c->sysctls);
	memset(c, 0, sizeof(*c));
}

/* ---- moat spec ----------------------------------------------------------- */

char *oci_spec_default(void)
{
	/* runc's default, minus what moat refuses: a read-only rootfs of
	 * ./rootfs, a shell on a terminal, the usual mounts. */
	static const char doc[] =
		"{\n"
		"\t\"ociVersion\": \"" OCI_VERSION "\",\n"
		"\t\"process\": {\n"
		"\t\t\"terminal\": true,\n"
		"\t\t\"user\": {\n\t\t\t\"uid\": 0,\n\t\t\t\"gid\": 0\n\t\t},\n"
		"\t\t\"args\": [\n\t\t\t\"sh\"\n\t\t],\n"
		"\t\t\"env\": [\n"
		"\t\t\t\"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:"
		"/usr/bin:/sbin:/bin\",\n"
		"\t\t\t\"TERM=xterm\"\n"
		"\t\t],\n"
		"\t\t\"cwd\": \"/\",\n"
		"\t\t\"rlimits\": [\n"
		"\t\t\t{\n\t\t\t\t\"type\": \"RLIMIT_NOFILE\",\n"
		"\t\t\t\t\"hard\": 1024,\n\t\t\t\t\"soft\": 1024\n\t\t\t}\n"
		"\t\t],\n"
		"\t\t\"noNewPrivileges\": true\n"
		"\t},\n"
		"\t\"root\": {\n\t\t\"path\": \"rootfs\",\n"
		"\t\t\"readonly\": true\n\t},\n"
		"\t\"hostname\": \"moat\",\n"
		"\t\"mounts\": [\n"
		"\t\t{\n\t\t\t\"destination\": \"/proc\",\n"
		"\t\t\t\"type\": \"proc\",\n\t\t\t\"source\": \"proc\"\n\t\t},\n"
		"\t\t{\n\t\t\t\"destination\": \"/dev\",\n"
		"\t\t\t\"type\": \"tmpfs\",\n\t\t\t\"source\": \"tmpfs\",\n"
		"\t\t\t\"options\": [\"nosuid\", \"strictatime\", "
		"\"mode=755\", \"size=65536k\"]\n\t\t},\n"
		"\t\t{\n\t\t\t\"destination\": \"/dev/pts\",\n"
		"\t\t\t\"type\": \"devpts\",\n\t\t\t\"source\": \"devpts\",\n"
		"\t\t\t\"options\": [\"nosuid\", \"noexec\", \"newinstance\", "
		"\"ptmxmode=0666\", \"mode=0620\", \"gid=5\"]\n\t\t},\n"
		"\t\t{\n\t\t\t\"destination\": \"/dev/shm\",\n"
		"\t\t\t\"type\": \"tmpfs\",\n\t\t\t\"source\": \"shm\",\n"
		"\t\t\t\"options\": [\"nosuid\", \"noexec\", \"nodev\", "
		"\"mode=1777\", \"size=65536k\"]\n\t\t},\n"
		"\t\t{\n\t\t\t\"destination\": \"/sys\",\n"
		"\t\t\t\"type\": \"sysfs\",\n\t\t\t\"source\": \"sysfs\",\n"
		"\t\t\t\"options\": [\"nosuid\", \"noexec\", \"nodev\", "
		"\"ro\"]\n\t\t}\n"
		"\t],\n"
		"\t\"linux\": {\n"
		"\t\t\"namespaces\": [\n"
		"\t\t\t{\"type\": \"pid\"},\n\t\t\t{\"type\": \"network\"},\n"
		"\t\t\t{\"type\": \"ipc\"},\n\t\t\t{\"type\": \"uts\"},\n"
		"\t\t\t{\"type\": \"mount\"}\n"
		"\t\t],\n"
		"\t\t\"maskedPaths\": [\n"
		"\t\t\t\"/proc/acpi\",\n\t\t\t\"/proc/asound\",\n"
		"\t\t\t\"/proc/kcore\",\n\t\t\t\"/proc/keys\",\n"
		"\t\t\t\"/proc/latency_stats\",\n\t\t\t\"/proc/timer_list\",\n"
		"\t\t\t\"/proc/timer_stats\",\n\t\t\t\"/proc/sched_debug\",\n"
		"\t\t\t\"/sys/firmware\",\n\t\t\t\"/proc/scsi\"\n"
		"\t\t],\n"
		"\t\t\"readonlyPaths\": [\n"
		"\t\t\t\"/proc/bus\",\n\t\t\t\"/proc/fs\",\n"
		"\t\t\t\"/proc/irq\",\n\t\t\t\"/proc/sys\",\n"
		"\t\t\t\"/proc/sysrq-trigger\"\n"
		"\t\t]\n"
		"\t}\n"
		"}\n";

	return xstrdup(doc);
}
