/* sentry/limits.c: cgroups and limits (see limits.h). */
#include "sentry/limits.h"

#include <ctype.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysinfo.h>
#include <time.h>
#include <unistd.h>

#define MAX_CG 6
#define CG_V2 "/sys/fs/cgroup"

static struct cg {
	char path[PATH_MAX]; /* the cgroup this sandbox made */
	const char *ctl;     /* controller ("memory", "pids", "cpu", ...) */
	bool v2; /* in the unified hierarchy: one cgroup, several entries */
} cgs[MAX_CG];
static int ncgs;
static int oom_fd = -1; /* memory.oom_control (v1) or memory.events (v2) */
static char oom_key[32];

/* Memory: half the host's RAM, at most 8 GiB. Half, so that one runaway
 * sandbox leaves the host and every other sandbox at least the other half;
 * 8 GiB, because what moat do is for by default (a build, a test suite, a
 * notebook) stays far below it (a make -j8 of googletest peaks at 360 MB,
 * CPython's tests in tests/cpython/run.sh at 180 MB: docs/limits.md), and
 * on a big host each of several runaway sandboxes takes no more than
 * that. */
uint64_t limits_default_memory(void)
{
	const uint64_t ceiling = 8ULL << 30;
	struct sysinfo si;
	uint64_t half;

	if (sysinfo(&si) < 0)
		return ceiling;
	half = (uint64_t)si.totalram * (si.mem_unit ? si.mem_unit : 1) / 2;
	return half < ceiling ? half : ceiling;
}

/* Processes and threads: 1024, or 32 per CPU where that is more. 1024 is
 * far above what builds and test suites run at once (make -j8 peaks at 21
 * tasks, an unbounded make -j of moat itself at 44, CPython's tests at 21:
 * docs/limits.md) and far below the host's pid space (pid_max is at least
 * 32768), so a fork bomb stops at EAGAIN while the host and the other
 * sandboxes still fork. Thread pools (OpenMP, BLAS, PyTorch, Go, the JVM)
 * each start a thread per CPU, hence the share per CPU on a big host. */
int limits_default_pids(void)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

	return ncpu > 32 ? (int)(ncpu > 32768 ? 32768 * 32 : ncpu * 32) : 1024;
}

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

/* A v2-only host: /sys/fs/cgroup is the unified hierarchy itself. */
static bool unified(void)
{
	return access(CG_V2 "/cgroup.controllers", F_OK) == 0;
}

/* The unified hierarchy: one cgroup, /sys/fs/cgroup/moat/moat-PID, with
 * controller ctl enabled down to it. Not below moat's own cgroup: a v2
 * cgroup that holds processes cannot hand controllers to children (the
 * "no internal processes" rule), and moat's own (a login session, a
 * service, a container's root) holds processes; moat/ holds none. */
static int make_cg_v2(const char *ctl, struct moat_error *err)
{
	char path[PATH_MAX], on[32];
	struct cg *c = &cgs[ncgs];
	int rc, rc_root;

	snprintf(path, sizeof(path), CG_V2 "/moat/moat-%d", getpid());
	snprintf(on, sizeof(on), "+%s", ctl);
	/* The root may hold processes; where systemd has enabled the
	 * controller there already, this write changes nothing. Its error
	 * matters only if moat/ then cannot have the controller. */
	rc_root = write_str(CG_V2, "cgroup.subtree_control", on);
	if ((mkdir(CG_V2 "/moat", 0755) < 0 && errno != EEXIST) ||
	    (mkdir(path, 0700) < 0 && errno != EEXIST))
		return moat_error_set(err, errno, "limits: create cgroup `%s`",
				      path);
	/* Kept (for the janitor) before the controller is known to work;
	 * named for it only once it does. */
	snprintf(c->path, sizeof(c->path), "%s", path);
	c->ctl = "";
	c->v2 = true;
	ncgs++;
	rc = write_str(CG_V2 "/moat", "cgroup.subtree_control", on);
	if (rc < 0)
		return moat_error_set(err, rc_root < 0 ? -rc_root : -rc,
				      "limits: enable the %s controller in "
				      "`" CG_V2 "/moat`",
				      ctl);
	c->ctl = ctl;
	return 0;
}

static int make_cg(const char *ctl, struct moat_error *err)
{
	char parent[PATH_MAX];
	struct cg *c = &cgs[ncgs];
	int rc;

	if (unified())
		return make_cg_v2(ctl, err);
	rc = own_cgroup(ctl, parent, sizeof(parent));
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
	/* file: v1's; v2: the unified hierarchy's, where it has the same
	 * figure (cpu and the freezer are v1's only: docs/oci.md) */
	static const struct {
		const char *ctl, *file, *v2;
		int flags;
	} files[ST_FILES] = {
		[ST_CPU] = { "cpuacct", "cpuacct.usage", NULL, O_RDONLY },
		[ST_MEM] = { "memory", "memory.usage_in_bytes",
			     "memory.current", O_RDONLY },
		[ST_MEM_MAX] = { "memory", "memory.max_usage_in_bytes",
				 "memory.peak", O_RDONLY },
		[ST_PIDS] = { "pids", "pids.current", "pids.current",
			      O_RDONLY },
		[ST_FREEZER] = { "freezer", "freezer.state", NULL, O_RDWR },
	};
	char p[PATH_MAX + 32];
	int i;

	for (i = 0; i < ST_FILES; i++) {
		struct cg *c = find_cg(files[i].ctl);
		const char *file = c && c->v2 ? files[i].v2 : files[i].file;
		if (!c || !file)
			continue;
		snprintf(p, sizeof(p), "%s/%s", c->path, file);
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

static int set_memory(uint64_t bytes, struct moat_error *err)
{
	char v[32], p[PATH_MAX + 32];
	struct cg *c;
	int rc;

	if (!find_cg("memory") && make_cg("memory", err) < 0)
		return -1;
	c = find_cg("memory");
	snprintf(v, sizeof(v), "%llu", (unsigned long long)bytes);
	rc = write_str(c->path, c->v2 ? "memory.max" : "memory.limit_in_bytes",
		       v);
	if (rc < 0)
		return moat_error_set(err, -rc, "limits: memory limit %s", v);
	/* No swap beyond the limit, where the host has swap accounting. */
	if (c->v2)
		write_str(c->path, "memory.swap.max", "0");
	else
		write_str(c->path, "memory.memsw.limit_in_bytes", v);
	/* Both have an "oom_kill N" line. */
	snprintf(p, sizeof(p), "%s/%s", c->path,
		 c->v2 ? "memory.events" : "memory.oom_control");
	oom_fd = open(p, O_RDONLY | O_CLOEXEC);
	snprintf(oom_key, sizeof(oom_key), "oom_kill ");
	return 0;
}

static int set_pids(int n, struct moat_error *err)
{
	char v[32];
	int rc;

	if (!find_cg("pids") && make_cg("pids", err) < 0)
		return -1;
	/* The kernel's bound sits a little above the sentry's own check
	 * (threads of the reaper and races count there too). */
	snprintf(v, sizeof(v), "%d", n + 2);
	rc = write_str(find_cg("pids")->path, "pids.max", v);
	if (rc < 0)
		return moat_error_set(err, -rc, "limits: pids limit");
	return 0;
}

static int set_cpus(double cpus, struct moat_error *err)
{
	long period = 100000, quota = (long)(cpus * (double)period);
	struct cg *c;
	char v[64];
	int rc;

	if (quota < 1000)
		quota = 1000;
	if (make_cg("cpu", err) < 0)
		return -1;
	c = &cgs[ncgs - 1];
	if (c->v2) {
		snprintf(v, sizeof(v), "%ld %ld", quota, period);
		rc = write_str(c->path, "cpu.max", v);
	} else {
		snprintf(v, sizeof(v), "%ld", period);
		write_str(c->path, "cpu.cfs_period_us", v);
		snprintf(v, sizeof(v), "%ld", quota);
		rc = write_str(c->path, "cpu.cfs_quota_us", v);
	}
	if (rc < 0)
		return moat_error_set(err, -rc, "limits: cpu quota");
	return 0;
}

int limits_setup(struct moat_error *err)
{
	struct sentry_opts *o = &S->opts;
	struct moat_error why = { 0 };

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

	/* A default the host cannot apply (no cgroup may be made here: a
	 * read-only /sys/fs/cgroup in a container, a v2 cgroup namespace
	 * whose root holds processes) is dropped, not fatal: moat must still
	 * run there. One asked for is applied or the sandbox does not start. */
	if (o->memory &&
	    set_memory(o->memory, o->memory_default ? &why : err) < 0) {
		if (!o->memory_default)
			return -1;
		fprintf(stderr,
			"moat: warning: no default memory limit (%s): the "
			"sandbox may use all of the host's memory "
			"(--memory unlimited: the same, without this "
			"warning)\n",
			why.msg);
		o->memory = 0;
	}
	/* Without its cgroup the default pids limit still holds: the sentry
	 * counts tasks at every fork and clone (S->pids_refused); only the
	 * kernel's backstop a little above it is missing. */
	if (o->pids && set_pids(o->pids, o->pids_default ? &why : err) < 0 &&
	    !o->pids_default)
		return -1;
	if (o->cpus > 0 && set_cpus(o->cpus, err) < 0)
		return -1;
	open_stat_files();
	return 0;
}

/* One cgroup.procs write: it takes the kernel's cgroup_threadgroup_rwsem
 * for writing, which waits for an RCU grace period (8-11 ms measured on
 * this kind of host, per write). Writes made at once share one. */
struct join_arg {
	const char *path;
	const char *pid;
	int rc;
};

static int attach_rc;		  /* the first join's failure, or 0 */
static const char *attach_failed; /* and its cgroup */

static void *join_one(void *p)
{
	struct join_arg *j = p;

	j->rc = write_str(j->path, "cgroup.procs", j->pid);
	return NULL;
}

static void attach_all(const char *pid)
{
	struct join_arg js[MAX_CG];
	pthread_t th[MAX_CG];
	bool started[MAX_CG] = { false };
	int i;

	/* One thread a cgroup but the first, so that the joins overlap. */
	for (i = 0; i < ncgs; i++) {
		js[i] = (struct join_arg){ cgs[i].path, pid, 0 };
		if (i > 0 &&
		    pthread_create(&th[i], NULL, join_one, &js[i]) == 0)
			started[i] = true;
	}
	for (i = 0; i < ncgs; i++) {
		if (i == 0 || !started[i])
			join_one(&js[i]);
		else
			pthread_join(th[i], NULL);
		if (js[i].rc < 0 && !attach_rc) {
			attach_rc = js[i].rc;
			attach_failed = cgs[i].path;
		}
	}
}

static char attach_pid[32];

static void *attach_thread(void *p)
{
	(void)p;
	attach_all(attach_pid);
	return NULL;
}

/* Setup, before any guest exists: the joins (tens of ms of waiting for
 * the kernel's grace periods) run in a thread while the sentry starts
 * its gofers; nothing else of the sentry's runs in it. */
static pthread_t attach_th;
static bool attach_running;

void limits_attach_start(pid_t reaper)
{
	snprintf(attach_pid, sizeof(attach_pid), "%d", reaper);
	attach_rc = 0;
	attach_failed = NULL;
	if (!ncgs)
		return;
	if (pthread_create(&attach_th, NULL, attach_thread, NULL) == 0)
		attach_running = true;
	else
		attach_all(attach_pid);
}

int limits_attach_wait(struct moat_error *err)
{
	if (attach_running) {
		pthread_join(attach_th, NULL);
		attach_running = false;
	}
	if (attach_rc < 0)
		return moat_error_set(err, -attach_rc, "limits: join `%s`",
				      attach_failed);
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
	/* A default's message says where it came from and how to lift it:
	 * the user never asked for it. */
	if (S->opts.memory && oom_kills() > 0)
		fprintf(stderr,
			"moat: memory limit of %llu bytes%s reached; "
			"the kernel killed a guest process%s\n",
			(unsigned long long)S->opts.memory,
			S->opts.memory_default ? " (moat do's default)" : "",
			S->opts.memory_default ?
				" (--memory SIZE or unlimited changes it)" :
				"");
	if (S->opts.pids && S->pids_refused)
		fprintf(stderr,
			"moat: process limit of %d%s reached; %d forks got "
			"EAGAIN%s\n",
			S->opts.pids,
			S->opts.pids_default ? " (moat do's default)" : "",
			S->pids_refused,
			S->opts.pids_default ?
				" (--pids N or unlimited changes it)" :
				"");
	(void)st;
}
