/* cli/do.c: `moat do [options] -- CMD ARGS...` */
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "netstack/netstack.h"
#include "sentry/audit.h"
#include "sentry/control.h"
#include "sentry/limits.h"
#include "sentry/sentry.h"
#include "sentry/vfs.h"

/* The guest's environment starts clean: the caller's environment often
 * holds secrets (tokens, keys) that untrusted code must not see. Only
 * the terminal and locale variables are carried over; --env adds more. */
static const char *const keep_env[] = { "TERM",	    "LANG",	  "LC_ALL",
					"LC_CTYPE", "LC_COLLATE", "LC_MESSAGES",
					"TZ" };

static void env_set(char ***env, size_t *n, const char *kv)
{
	size_t klen = strcspn(kv, "="), i;

	for (i = 0; i < *n; i++) {
		if (!strncmp((*env)[i], kv, klen) && (*env)[i][klen] == '=') {
			(*env)[i] = (char *)kv;
			return;
		}
	}
	*env = realloc(*env, (*n + 2) * sizeof(char *));
	if (!*env)
		abort();
	(*env)[(*n)++] = (char *)kv;
	(*env)[*n] = NULL;
}

static bool under(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	return !strncmp(path, dir, n) && (path[n] == '/' || !path[n]);
}

/* `SRC:DST[:ro|rw|clone]` (default ro) into the next mounts entry. Returns
 * 0, or prints why not and returns -1. */
static int parse_mount(const char *arg, struct sentry_opts *o)
{
	char *copy = strdup(arg), *src, *dst, *mode, *p, *q;
	struct mount_spec *m;
	struct stat st;
	int mm = MNT_RO;
	size_t i;

	if (!copy)
		abort();
	src = copy;
	dst = strchr(copy, ':');
	if (!dst || dst == src) {
		fprintf(stderr,
			"moat: --mount `%s`: expected SRC:DST[:ro|rw|clone]\n",
			arg);
		goto bad;
	}
	*dst++ = 0;
	mode = strchr(dst, ':');
	if (mode) {
		*mode++ = 0;
		if (!strcmp(mode, "ro"))
			mm = MNT_RO;
		else if (!strcmp(mode, "rw"))
			mm = MNT_RW;
		else if (!strcmp(mode, "clone"))
			mm = MNT_CLONE;
		else {
			fprintf(stderr,
				"moat: --mount `%s`: mode `%s` is not ro, rw or clone\n",
				arg, mode);
			goto bad;
		}
	}
	if (dst[0] != '/') {
		fprintf(stderr, "moat: --mount `%s`: DST must be absolute\n",
			arg);
		goto bad;
	}
	/* DST, canonical: no "." or "..", no repeated or trailing slash. */
	for (p = q = dst; *p;) {
		size_t n;
		while (*p == '/')
			p++;
		n = strcspn(p, "/");
		if (!n)
			break;
		if ((n == 1 && p[0] == '.') ||
		    (n == 2 && !strncmp(p, "..", 2))) {
			fprintf(stderr,
				"moat: --mount `%s`: DST may not contain `.` or `..`\n",
				arg);
			goto bad;
		}
		*q++ = '/';
		memmove(q, p, n);
		q += n;
		p += n;
	}
	*q = 0;
	if (strlen(dst) >= PATH_MAX) {
		fprintf(stderr,
			"moat: --mount: DST is %zu bytes long: at most %d\n",
			strlen(dst), PATH_MAX - 1);
		goto bad;
	}
	if (!dst[0] || under(dst, "/proc") || under(dst, "/dev") ||
	    under(dst, "/sys")) {
		fprintf(stderr,
			"moat: --mount `%s`: DST may not be /, or under /proc, /dev or /sys\n",
			arg);
		goto bad;
	}
	/* A clone is grafted into the rootfs's overlay: not in a tmpfs. */
	if (mm == MNT_CLONE && under(dst, "/tmp")) {
		fprintf(stderr,
			"moat: --mount `%s`: a clone mount may not be under /tmp\n",
			arg);
		goto bad;
	}
	for (i = 0; i < o->nmounts; i++)
		if (!strcmp(o->mounts[i].dst, dst)) {
			fprintf(stderr,
				"moat: --mount `%s`: %s is mounted twice\n",
				arg, dst);
			goto bad;
		}
	p = realpath(src, NULL);
	if (!p || stat(p, &st) < 0) {
		fprintf(stderr, "moat: --mount `%s`: %s: %s\n", arg, src,
			strerror(errno));
		free(p);
		goto bad;
	}
	if (!S_ISDIR(st.st_mode)) {
		fprintf(stderr,
			"moat: --mount `%s`: %s is %s: --mount binds a "
			"directory\n",
			arg, src, file_type_name(st.st_mode));
		free(p);
		goto bad;
	}
	o->mounts = realloc(o->mounts, (o->nmounts + 1) * sizeof(*o->mounts));
	if (!o->mounts)
		abort();
	m = &o->mounts[o->nmounts++];
	*m = (struct mount_spec){ .src = p, .dst = strdup(dst), .mode = mm };
	if (!m->dst)
		abort();
	free(copy);
	return 0;
bad:
	free(copy);
	return -1;
}

/* Every credential's source is there to be read (by the broker, later):
 * said now, with the option at fault, rather than when a request first
 * needs the value. Nothing is read here. */
static int check_sources(const struct cred_policy *p, struct moat_error *err)
{
	size_t i;

	for (i = 0; i < p->n; i++) {
		const struct credential *c = &p->v[i];

		switch (c->source) {
		case CRED_FROM_ENV:
			if (!getenv(c->src))
				return moat_error_input(
					err, ENOENT,
					"secret %s: %s: %s is not set in "
					"moat's environment",
					c->name, c->from, c->src);
			break;
		case CRED_FROM_FILE:
			if (access(c->src, R_OK) < 0)
				return moat_error_set(err, errno,
						      "secret %s: %s", c->name,
						      c->from);
			break;
		case CRED_FROM_FD:
			if (fcntl(c->fd, F_GETFD) < 0)
				return moat_error_set(err, errno,
						      "secret %s: %s", c->name,
						      c->from);
			break;
		}
	}
	return 0;
}

/* A secret's name is the guest's variable that holds its placeholder:
 * one that --env (or moat's own PATH, HOME, TERM...) also sets would
 * leave the guest one or the other, unsaid. */
static int check_env_names(const struct cred_policy *p, char **env, size_t nenv,
			   struct moat_error *err)
{
	size_t i, j, n;

	for (i = 0; i < p->n; i++) {
		n = strlen(p->v[i].name);
		for (j = 0; j < nenv; j++)
			if (!strncmp(env[j], p->v[i].name, n) &&
			    env[j][n] == '=')
				return moat_error_input(
					err, EINVAL,
					"secret %s: the guest's %s holds its "
					"placeholder: it may not be set "
					"otherwise too (--env, or moat's own "
					"PATH, HOME, TERM, LANG, LC_*, TZ)",
					p->v[i].name, p->v[i].name);
	}
	return 0;
}

int cmd_do(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "rootfs", required_argument, NULL, 'r' },
		{ "hostname", required_argument, NULL, 'h' },
		{ "env", required_argument, NULL, 'e' },
		{ "cwd", required_argument, NULL, 'c' },
		{ "strace", no_argument, NULL, 's' },
		{ "audit", required_argument, NULL, 'a' },
		{ "audit-max", required_argument, NULL, 'B' },
		{ "memory", required_argument, NULL, 'M' },
		{ "pids", required_argument, NULL, 'P' },
		{ "cpus", required_argument, NULL, 'C' },
		{ "timeout", required_argument, NULL, 'T' },
		{ "disk", required_argument, NULL, 'D' },
		{ "mount", required_argument, NULL, 'm' },
		{ "tty", no_argument, NULL, 't' },
		{ "name", required_argument, NULL, 'n' },
		{ "net", required_argument, NULL, 'N' },
		{ "allow", required_argument, NULL, 'A' },
		{ "deny", required_argument, NULL, 'X' },
		{ "policy", required_argument, NULL, 'p' },
		{ "dns", required_argument, NULL, 'd' },
		{ "store", required_argument, NULL, 'S' },
		{ "secret", required_argument, NULL, 'K' },
		{ "inspect", required_argument, NULL, 'I' },
		{ "passthrough", required_argument, NULL, 'Q' },
		{ "upstream-ca", required_argument, NULL, 'U' },
		{ "broker", no_argument, NULL, 'W' },
		{ NULL, 0, NULL, 0 },
	};
	struct sentry_opts o;
	struct moat_error err = { 0 };
	const char *policy_file = NULL;
	struct rule_arg {
		const char *dest;
		bool deny;
	} *rules = NULL;
	size_t nrules = 0;
	/* --secret, --inspect, --passthrough: in after the policy file's */
	struct cred_arg {
		const char *text;
		int opt;
	} *creds = NULL;
	size_t ncreds = 0;
	char **env = NULL;
	size_t nenv = 0, i;
	bool memory_set = false, pids_set = false;
	int c, rc;

	memset(&o, 0, sizeof(o));
	env_set(&env, &nenv,
		"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
	env_set(&env, &nenv, "HOME=/root");
	for (i = 0; i < ARRAY_SIZE(keep_env); i++) {
		const char *v = getenv(keep_env[i]);
		if (v) {
			char *kv;
			if (asprintf(&kv, "%s=%s", keep_env[i], v) < 0)
				abort();
			env_set(&env, &nenv, kv);
		}
	}
	optind = 1;
	while ((c = getopt_long(argc, argv, "+t", longopts, NULL)) != -1) {
		switch (c) {
		case 'r':
			o.rootfs = optarg;
			break;
		case 'h':
			if (strlen(optarg) > 64) {
				fprintf(stderr,
					"moat: --hostname: longer than 64 bytes\n");
				return 2;
			}
			o.hostname = optarg;
			break;
		case 'e':
			if (!strchr(optarg, '=')) {
				fprintf(stderr,
					"moat: --env `%s`: expected K=V\n",
					optarg);
				return 2;
			}
			env_set(&env, &nenv, optarg);
			break;
		case 'c':
			o.cwd = optarg;
			break;
		case 'm':
			if (parse_mount(optarg, &o) < 0)
				return 2;
			break;
		case 's':
			o.strace = true;
			break;
		case 't':
			o.tty = true;
			break;
		case 'n':
			if (!control_name_ok(optarg)) {
				fprintf(stderr,
					"moat: --name `%s`: 1 to 64 of A-Z a-z 0-9 - _ . (not first)\n",
					optarg);
				return 2;
			}
			o.name = optarg;
			break;
		case 'a':
			o.audit_path = optarg;
			break;
		case 'B': {
			int64_t v = limits_parse_size(optarg);
			if (v < (int64_t)AUDIT_MAX_MIN) {
				fprintf(stderr,
					"moat: --audit-max `%s`: expected a size of 4K or more, like 16M\n",
					optarg);
				return 2;
			}
			o.audit_max = (uint64_t)v;
			break;
		}
		case 'N':
			if (!strcmp(optarg, "none")) {
				o.net = NET_NONE;
			} else if (!strcmp(optarg, "slirp")) {
				o.net = NET_SLIRP;
			} else if (!strcmp(optarg, "tap")) {
				o.net = NET_TAP;
			} else {
				fprintf(stderr,
					"moat: --net `%s`: none, slirp or tap\n",
					optarg);
				return 2;
			}
			break;
		case 'A':
		case 'X':
			rules = realloc(rules, (nrules + 1) * sizeof(*rules));
			if (!rules)
				abort();
			rules[nrules].dest = optarg;
			rules[nrules++].deny = c == 'X';
			break;
		case 'p':
			policy_file = optarg;
			break;
		case 'K':
		case 'I':
		case 'Q':
			creds = realloc(creds, (ncreds + 1) * sizeof(*creds));
			if (!creds)
				abort();
			creds[ncreds].text = optarg;
			creds[ncreds++].opt = c;
			break;
		case 'W':
			o.broker = true;
			break;
		case 'U': {
			struct stat st;

			free(o.upstream_ca);
			o.upstream_ca = realpath(optarg, NULL);
			if (!o.upstream_ca || stat(o.upstream_ca, &st) < 0 ||
			    !S_ISREG(st.st_mode)) {
				fprintf(stderr,
					"moat: --upstream-ca `%s`: %s\n",
					optarg,
					o.upstream_ca && !S_ISREG(st.st_mode) ?
						"not a regular file" :
						strerror(errno));
				return 2;
			}
			break;
		}
		case 'd':
			o.dns = optarg;
			break;
		case 'S':
			if (optarg[0] != '/') {
				fprintf(stderr,
					"moat: --store `%s`: expected an absolute path\n",
					optarg);
				return 2;
			}
			o.store = optarg;
			break;
		case 'M':
		case 'D': {
			int64_t v;
			/* "unlimited" lifts the default memory limit; 0 is
			 * refused, so that it never reads as "no memory". */
			if (c == 'M' && !strcmp(optarg, "unlimited")) {
				o.memory = 0;
				memory_set = true;
				break;
			}
			v = limits_parse_size(optarg);
			if (v <= 0) {
				fprintf(stderr,
					"moat: --%s `%s`: expected a size like 512M or 2G%s\n",
					c == 'M' ? "memory" : "disk", optarg,
					c == 'M' ? ", or unlimited" : "");
				return 2;
			}
			if (c == 'M') {
				o.memory = (uint64_t)v;
				memory_set = true;
			} else {
				o.disk = (uint64_t)v;
			}
			break;
		}
		case 'P':
		case 'T': {
			char *end;
			long v;
			if (c == 'P' && !strcmp(optarg, "unlimited")) {
				o.pids = 0;
				pids_set = true;
				break;
			}
			v = strtol(optarg, &end, 10);
			if (*end || v <= 0 || v > 1000000) {
				fprintf(stderr,
					"moat: --%s `%s`: expected a positive number%s\n",
					c == 'P' ? "pids" : "timeout", optarg,
					c == 'P' ? ", or unlimited" : "");
				return 2;
			}
			if (c == 'P') {
				o.pids = (int)v;
				pids_set = true;
			} else {
				o.timeout_s = (int)v;
			}
			break;
		}
		case 'C': {
			char *end;
			double v = strtod(optarg, &end);
			if (*end || !(v > 0) || v > 4096) {
				fprintf(stderr,
					"moat: --cpus `%s`: expected a positive number\n",
					optarg);
				return 2;
			}
			o.cpus = v;
			break;
		}
		default:
			fprintf(stderr,
				"usage: moat do [options] -- CMD [ARGS...]\n");
			return 2;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "moat do: no command given\n");
		return 2;
	}
	/* Secure by default: without these, one sandbox's fork or memory bomb
	 * starves the host and every other sandbox (the values and their
	 * reasons: sentry/limits.c). Only moat do: an OCI container's limits
	 * are its config.json's. */
	if (!memory_set) {
		o.memory = limits_default_memory();
		o.memory_default = true;
	}
	if (!pids_set) {
		o.pids = limits_default_pids();
		o.pids_default = true;
	}
	/* The policy file's rules, then the command line's: deny wins
	 * whatever the order, so the order only matters for the audit. */
	if (policy_file && policy_load_file(policy_file, &o.policy, &err) < 0) {
		fprintf(stderr, "moat: --policy: %s\n", err.msg);
		return 2;
	}
	for (i = 0; i < nrules; i++)
		if (policy_add_rule(&o.policy, rules[i].dest, rules[i].deny,
				    &err) < 0) {
			fprintf(stderr, "moat: %s\n", err.msg);
			return 2;
		}
	free(rules);
	for (i = 0; i < ncreds; i++) {
		struct cred_policy *cp = &o.policy.cred;
		const char *t = creds[i].text;

		rc = creds[i].opt == 'K' ? cred_parse_arg(cp, t, &err) :
		     creds[i].opt == 'I' ? cred_add_inspect(cp, t, &err) :
					   cred_add_passthrough(cp, t, &err);
		if (rc < 0) {
			fprintf(stderr, "moat: %s\n", err.msg);
			return 2;
		}
	}
	free(creds);
	if (cred_validate(&o.policy.cred, policy_file, &err) < 0 ||
	    check_sources(&o.policy.cred, &err) < 0 ||
	    check_env_names(&o.policy.cred, env, nenv, &err) < 0) {
		fprintf(stderr, "moat: %s\n", err.msg);
		return 2;
	}
	o.env = env;
	for (i = 0; i < nenv; i++)
		if (!strncmp(env[i], "HOME=", 5))
			o.home = env[i] + 5;
	rc = sentry_run(&o, argv + optind, &err);
	if (rc < 0) {
		fprintf(stderr, "moat: %s\n", err.msg);
		if (err.code == ENOENT && !strncmp(err.msg, "exec", 4))
			return 127;
		if (!strncmp(err.msg, "exec", 4))
			return 126;
		return 125;
	}
	return rc;
}
