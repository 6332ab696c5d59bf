/* sentry/limits.c: cgroups and limits (see limits.h). */
#include "sentry/limits.h"

#include <ctype.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MAX_CG 6

static struct cg {
	char path[PATH_MAX]; /* the cgroup this sandbox made */
	const char *ctl;     /* controller ("memory", "pids", "cpu", "" v2) */
} cgs[MAX_CG];
static int ncgs;
static int oom_fd = -1; /* memory.oom_control (v1) or memory.events (v2) */
static char oom_key[32];

int64_t limits_parse_size(const char *s)
{
	char *end;
	unsigned long long v;
	int shift = 0;

	if (!s || !isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -1;
	switch (tolower((unsigned char)*end)) {
	case 0:
		break;
	case 'k':
		shift = 10;
		break;
	case 'm':
		shift = 20;
		break;
	case 'g':
		shift = 30;
		break;
	case 't':
		shift = 40;
		break;
	default:
		return -1;
	}
	if (*end && end[1] &&
	    !(tolower((unsigned char)end[1]) == 'b' && !end[2]))
		return -1;
	if (v > (unsigned long long)INT64_MAX >> shift)
		return -1;
	return (int64_t)(v << shift);
}

static int write_str(const char *dir, const char *file, const char *val)
{
	char p[PATH_MAX];
	int fd, rc = 0;

	snprintf(p, sizeof(p), "%s/%s", dir, file);
	fd = open(p, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, val, strlen(val)) < 0)
		rc = -errno;
	close(fd);
	return rc;
}

/* The cgroup of this process for controller ctl ("" for v2), from
 * /proc/self/cgroup, as a path below /sys/fs/cgroup. */
static int own_cgroup(const char *ctl, char *out, size_t cap)
{
	char line[512];
	FILE *f = fopen("/proc/self/cgroup", "re");
	int found = -ENOENT;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char *ctls = strchr(line, ':'), *path;
		if (!ctls)
			continue;
		path = strchr(++ctls, ':');
		if (!path)
			continue;
		*path++ = 0;
		path[strcspn(path, "\n")] = 0;
		if (*ctl ? (strstr(ctls, ctl) && (strlen(ctls) == strlen(ctl) ||
						  strchr(ctls, ','))) :
			   !*ctls) {
			if (*ctl)
				snprintf(out, cap, "/sys/fs/cgroup/%s%s", ctl,
					 path);
			else
				snprintf(out, cap, "/sys/fs/cgroup/unified%s",
					 path);
			found = 0;
			break;
		}
	}
	fclose(f);
	return found;
}

static int make_cg(const char *ctl, struct moat_error *err)
{
	char parent[PATH_MAX];
	struct cg *c = &cgs[ncgs];
	int rc = own_cgroup(ctl, parent, sizeof(parent));

	if (rc < 0)
		return moat_error_set(
			err, -rc, "limits: no %s cgroup for this process", ctl);
	if ((size_t)snprintf(c->path, sizeof(c->path), "%s/moat-%d", parent,
			     getpid()) >= sizeof(c->path))
		return moat_error_set(err, ENAMETOOLONG, "limits: cgroup path");
	if (mkdir(c->path, 0700) < 0 && errno != EEXIST)
		return moat_error_set(err, errno, "limits: create cgroup `%s`",
				      c->path);
	c->ctl = ctl;
	ncgs++;
	return 0;
}

static struct cg *find_cg(const char *ctl)
{
	int i;

	for (i = 0; i < ncgs; i++)
		if (!strcmp(cgs[i].ctl, ctl))
			return &cgs[i];
	return NULL;
}

/* Control files kept open for `moat events` and `moat pause`: the sentry's
 * seccomp filter lets it open nothing once the sandbox runs. */
enum {
	ST_CPU,
	ST_MEM,
	ST_MEM_MAX,
	ST_PIDS,
	ST_FREEZER,
	ST_FILES
};
static int stat_fds[ST_FILES] = { -1, -1, -1, -1, -1 };

static void open_stat_files(void)
{
	static const struct {
		const char *ctl, *file;
		int flags;
	} files[ST_FILES] = {
		[ST_CPU] = { "cpuacct", "cpuacct.usage", O_RDONLY },
		[ST_MEM] = { "memory", "memory.usage_in_bytes", O_RDONLY },
		[ST_MEM_MAX] = { "memory", "memory.max_usage_in_bytes",
				 O_RDONLY },
		[ST_PIDS] = { "pids", "pids.current", O_RDONLY },
		[ST_FREEZER] = { "freezer", "freezer.state", O_RDWR },
	};
	char p[PATH_MAX + 32];
	int i;

	for (i = 0; i < ST_FILES; i++) {
		struct cg *c = find_cg(files[i].ctl);
		if (!c)
			continue;
		snprintf(p, sizeof(p), "%s/%s", c->path, files[i].file);
		stat_fds[i] = open(p, files[i].flags | O_CLOEXEC);
	}
}

static int64_t read_num(int which)
{
	char buf[64];
	ssize_t n;

	if (stat_fds[which] < 0)
		return -1;
	n = pread(stat_fds[which], buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	return strtoll(buf, NULL, 10);
}

void limits_stats(struct limits_stats *st)
{
	st->cpu_ns = read_num(ST_CPU);
	st->memory = read_num(ST_MEM);
	st->memory_max = read_num(ST_MEM_MAX);
	st->pids = read_num(ST_PIDS);
}

int limits_freeze(bool frozen)
{
	int fd = stat_fds[ST_FREEZER], i;
	const char *v = frozen ? "FROZEN" : "THAWED";
	char buf[32];

	if (fd < 0)
		return -ENOTSUP;
	if (pwrite(fd, v, strlen(v), 0) < 0)
		return -errno;
	/* FREEZING until every task is stopped: wait for it (bounded). */
	for (i = 0; frozen && i < 400; i++) {
		ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
		if (n > 0 && !strncmp(buf, "FROZEN", 6))
			return 0;
		usleep(5000);
	}
	return 0;
}

int limits_setup(struct moat_error *err)
{
	struct sentry_opts *o = &S->opts;
	char v[64];
	int rc;

	/* An OCI container has these even without limits: `moat events`
	 * reads them, `moat pause` freezes the guests with the freezer. */
	if (o->oci_cgroups) {
		/* v1 controllers; a host without one (cgroup v2 only) has
		 * no stats or pause from it, and the container still runs */
		static const char *const ctls[] = { "memory", "pids", "cpuacct",
						    "freezer" };
		char probe[PATH_MAX];
		for (size_t i = 0; i < ARRAY_SIZE(ctls); i++)
			if (own_cgroup(ctls[i], probe, sizeof(probe)) == 0 &&
			    make_cg(ctls[i], err) < 0)
				return -1;
	}

	if (o->memory) {
		struct cg *c;
		if (!find_cg("memory") && make_cg("memory", err) < 0)
			return -1;
		c = find_cg("memory");
		snprintf(v, sizeof(v), "%llu", (unsigned long long)o->memory);
		rc = write_str(c->path, "memory.limit_in_bytes", v);
		/* No swap beyond the limit, where the host has swap accounting. */
		write_str(c->path, "memory.memsw.limit_in_bytes", v);
		if (rc < 0)
			return moat_error_set(err, -rc,
					      "limits: memory limit %s", v);
		{
			char p[PATH_MAX + 32];
			snprintf(p, sizeof(p), "%s/memory.oom_control",
				 c->path);
			oom_fd = open(p, O_RDONLY | O_CLOEXEC);
			snprintf(oom_key, sizeof(oom_key), "oom_kill ");
		}
	}
	if (o->pids) {
		if (!find_cg("pids") && make_cg("pids", err) < 0)
			return -1;
		/* The kernel's bound sits a little above the sentry's own check
		 * (threads of the reaper and races count there too). */
		snprintf(v, sizeof(v), "%d", o->pids + 2);
		rc = write_str(find_cg("pids")->path, "pids.max", v);
		if (rc < 0)
			return moat_error_set(err, -rc, "limits: pids limit");
	}
	if (o->cpus > 0) {
		long period = 100000, quota = (long)(o->cpus * (double)period);
		if (quota < 1000)
			quota = 1000;
		if (make_cg("cpu", err) < 0)
			return -1;
		snprintf(v, sizeof(v), "%ld", period);
		write_str(cgs[ncgs - 1].path, "cpu.cfs_period_us", v);
		snprintf(v, sizeof(v), "%ld", quota);
		rc = write_str(cgs[ncgs - 1].path, "cpu.cfs_quota_us", v);
		if (rc < 0)
			return moat_error_set(err, -rc, "limits: cpu quota");
	}
	open_stat_files();
	return 0;
}

int limits_attach(pid_t reaper, struct moat_error *err)
{
	char v[32];
	int i, rc;

	snprintf(v, sizeof(v), "%d", reaper);
	for (i = 0; i < ncgs; i++) {
		rc = write_str(cgs[i].path, "cgroup.procs", v);
		if (rc < 0)
			return moat_error_set(err, -rc, "limits: join `%s`",
					      cgs[i].path);
	}
	return 0;
}

void limits_start_janitor(void)
{
	int i;

	/* When the sentry is gone, remove the cgroups once their last
	 * process has died. */
	if (!ncgs || janitor_fork() != 0)
		return;
	/* A sentry killed while its guests were paused leaves them frozen,
	 * and a frozen task cannot die: thaw them first. */
	for (i = 0; i < ncgs; i++)
		if (!strcmp(cgs[i].ctl, "freezer"))
			write_str(cgs[i].path, "freezer.state", "THAWED");
	for (int tries = 0; tries < 200; tries++) {
		int left = 0;
		for (i = 0; i < ncgs; i++)
			if (cgs[i].path[0] && rmdir(cgs[i].path) < 0 &&
			    errno == EBUSY)
				left++;
			else
				cgs[i].path[0] = 0;
		if (!left)
			break;
		usleep(25000);
	}
	_exit(0);
}

static int oom_kills(void)
{
	char buf[512], *p;

	if (oom_fd < 0)
		return 0;
	memset(buf, 0, sizeof(buf));
	if (pread(oom_fd, buf, sizeof(buf) - 1, 0) <= 0)
		return 0;
	p = strstr(buf, oom_key);
	return p ? atoi(p + strlen(oom_key)) : 0;
}

void limits_report(int st)
{
	if (S->timed_out) {
		fprintf(stderr,
			"moat: time limit of %d s reached; sandbox killed\n",
			S->opts.timeout_s);
		return;
	}
	if (S->opts.memory && oom_kills() > 0)
		fprintf(stderr,
			"moat: memory limit of %llu bytes reached; "
			"the kernel killed a guest process\n",
			(unsigned long long)S->opts.memory);
	if (S->opts.pids && S->pids_refused)
		fprintf(stderr,
			"moat: process limit of %d reached; %d forks got "
			"EAGAIN\n",
			S->opts.pids, S->pids_refused);
	(void)st;
}
