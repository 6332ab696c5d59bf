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
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/uio.h>
#include <sys/syscall.h>
#include <sys/sysinfo.h>
#include <time.h>
#include <unistd.h>

#define MAX_CG LIMITS_MAX_CG
#define CG_V2 "/sys/fs/cgroup"

/* Each controller's cgroups of one sandbox (docs/limits.md, "Who is in
 * them"):
 *
 *   moat-PID/          the sandbox: its memory limit, its CPU quota, its
 *                      usage (all of it); on v1 the sentry and its helpers
 *   moat-PID/guest/    the reaper and every guest: the pids limit, the
 *                      freezer, a CPU weight below the sentry's
 *   moat-PID/sentry/   v2 only (no process may sit in a cgroup that has
 *                      children with controllers): the sentry, its helpers
 *
 * So the memory limit and the CPU quota count what the sentry and the
 * gofers do for the guests, the pids limit counts the guests alone (a
 * fork bomb cannot stop a helper's start), and the guests' CPU weight
 * cannot starve the sentry that serves them. */
static struct cg {
	char path[PATH_MAX]; /* moat-PID, the sandbox's */
	char home[PATH_MAX]; /* the caller's cgroup: where janitors go back */
	const char *ctl;     /* controller ("memory", "pids", "cpu", ...) */
	bool v2; /* in the unified hierarchy: one cgroup, several entries */
	/* At cgroupsPath: each part's inode (by enum cg_sub), so that the
	 * janitor removes these directories and never a later container's
	 * of the same path; 0: not checked (moat-PID is this sentry's). */
	ino_t ino[3];
} cgs[MAX_CG];
static int ncgs;

enum cg_sub {
	CG_TOP,
	CG_GUEST,
	CG_SENTRY
};

/* The path of one of a sandbox cgroup's parts, in buf (PATH_MAX); at
 * cgroupsPath, PATH itself is moat-PID's part. */
static const char *cg_part(const struct cg *c, enum cg_sub sub, char *buf)
{
	const char *tail = sub == CG_GUEST	     ? "/guest" :
			   sub == CG_SENTRY && c->v2 ? "/sentry" :
						       "";

	/* c->path leaves room for the tail (make_cg) */
	if (snprintf(buf, PATH_MAX, "%s%s", c->path, tail) >= PATH_MAX)
		buf[0] = 0;
	return buf;
}

/* Another entry, made earlier, for the same directory (v2's one cgroup;
 * a v1 host that mounts cpu and cpuacct together). */
static bool cg_dup(int i)
{
	for (int j = 0; j < i; j++)
		if (!strcmp(cgs[j].path, cgs[i].path))
			return true;
	return false;
}

static int oom_fd = -1; /* memory.oom_control (v1) or memory.events (v2) */
static int sentry_oom_fd = -1; /* the same, of the sentry's side */
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

/* The sentry's v2 cgroup, from /proc/self/cgroup's "0::" line. */
static void own_cgroup_v2(char *out, size_t cap)
{
	char line[512];
	FILE *f = fopen("/proc/self/cgroup", "re");

	snprintf(out, cap, CG_V2);
	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "0::", 3)) {
			line[strcspn(line, "\n")] = 0;
			snprintf(out, cap, CG_V2 "%s",
				 strcmp(line + 3, "/") ? line + 3 : "");
			break;
		}
	fclose(f);
}

/* The unified hierarchy: one cgroup, /sys/fs/cgroup/moat/moat-PID, with
 * controller ctl enabled down to it and to its guest/ and sentry/. Not
 * below moat's own cgroup: a v2 cgroup that holds processes cannot hand
 * controllers to children (the "no internal processes" rule), and moat's
 * own (a login session, a service, a container's root) holds processes;
 * moat/ and moat-PID hold none. */
static int make_cg_v2(const char *ctl, struct moat_error *err)
{
	char path[PATH_MAX], sub[PATH_MAX + 16], on[32];
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
	own_cgroup_v2(c->home, sizeof(c->home));
	c->ctl = "";
	c->v2 = true;
	ncgs++;
	for (int i = 0; i < 2; i++) {
		snprintf(sub, sizeof(sub), "%s/%s", path,
			 i ? "sentry" : "guest");
		if (mkdir(sub, 0700) < 0 && errno != EEXIST)
			return moat_error_set(
				err, errno, "limits: create cgroup `%s`", sub);
	}
	rc = write_str(CG_V2 "/moat", "cgroup.subtree_control", on);
	if (rc < 0)
		return moat_error_set(err, rc_root < 0 ? -rc_root : -rc,
				      "limits: enable the %s controller in "
				      "`" CG_V2 "/moat`",
				      ctl);
	/* The pids limit and the CPU weights are guest/'s and sentry/'s. */
	rc = write_str(path, "cgroup.subtree_control", on);
	if (rc < 0)
		return moat_error_set(
			err, -rc, "limits: enable the %s controller in `%s`",
			ctl, path);
	c->ctl = ctl;
	return 0;
}

static int make_cg(const char *ctl, struct moat_error *err)
{
	char guest[PATH_MAX + 8];
	struct cg *c = &cgs[ncgs];
	int rc;

	/* An OCI container's are at its cgroupsPath alone (oci_make_cgs). */
	if (S->opts.oci_cgroups)
		return moat_error_input(
			err, ENOTSUP,
			"limits: no %s cgroup hierarchy on this "
			"host",
			ctl);
	if (unified())
		return make_cg_v2(ctl, err);
	rc = own_cgroup(ctl, c->home, sizeof(c->home));
	if (rc < 0)
		return moat_error_set(
			err, -rc, "limits: no %s cgroup for this process", ctl);
	if ((size_t)snprintf(guest, sizeof(guest), "%s/moat-%d", c->home,
			     getpid()) >= sizeof(c->path) - 8)
		return moat_error_set(err, ENAMETOOLONG, "limits: cgroup path");
	memcpy(c->path, guest, strlen(guest) + 1);
	if (mkdir(c->path, 0700) < 0 && errno != EEXIST)
		return moat_error_set(err, errno, "limits: create cgroup `%s`",
				      c->path);
	c->ctl = ctl;
	ncgs++;
	cg_part(c, CG_GUEST, guest);
	if (mkdir(guest, 0700) < 0 && errno != EEXIST)
		return moat_error_set(err, errno, "limits: create cgroup `%s`",
				      guest);
	return 0;
}

/* ---- OCI: the cgroups at linux.cgroupsPath ------------------------------- *
 *
 * Where runc's cgroupfs driver puts a container's cgroup, kubelet and
 * cAdvisor read it, so an OCI container's sandbox lives there: PATH (an
 * absolute cgroupsPath below each hierarchy's root, a relative one below
 * the runtime's own cgroup, v2: below its parent; none: the container's
 * ID, relative) takes moat-PID's part, PATH/guest/ (v2: and
 * PATH/sentry/) theirs. So PATH's memory.usage_in_bytes, cpuacct.usage,
 * pids.current (v2: memory.current, cpu.stat, pids.current) are the whole
 * sandbox's, and its limits are the container's.
 *
 * The path is the config's, so what it may name is bounded: no `..`, not
 * the hierarchy's root, not the runtime's own cgroup nor an ancestor of
 * it (moat would move itself, or write a container's limits onto the
 * host's slices); each component is opened O_NOFOLLOW from the hierarchy's
 * mount, must be a directory of that same cgroupfs and the caller's
 * (root's: a user delegated a subtree could make or move cgroups under
 * it), so once checked no one else can change what the path names. */

/* The v1 controllers an OCI container's cgroups have (each that the host
 * mounts), as runc joins them: named=systemd, net_cls and the like hold
 * nothing of moat's. */
static const char *const oci_ctls[] = { "memory",  "pids",   "cpu",
					"cpuacct", "cpuset", "freezer",
					"devices", "blkio" };
/* v2: the controllers enabled down to PATH's children */
static const char *const oci_ctls_v2[] = { "memory", "pids", "cpu", "cpuset" };

#ifndef CGROUP_SUPER_MAGIC
#define CGROUP_SUPER_MAGIC 0x27e0eb
#endif
#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

/* Whether word is one of list's comma-separated words. */
static bool has_word(const char *list, const char *word)
{
	size_t n = strlen(word);

	for (const char *p = list; p && *p;) {
		const char *e = strchr(p, ',');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		if (len == n && !strncmp(p, word, n))
			return true;
		p = e ? e + 1 : NULL;
	}
	return false;
}

/* The hierarchy of v1 controller ctl (NULL: v2's) in /proc/self/mountinfo:
 * its mount point in mnt and the cgroup it shows in mroot (PATH_MAX
 * each). 0 or -ENOENT. */
static int cg_mount(const char *ctl, char *mnt, char *mroot)
{
	char line[4096];
	FILE *f = fopen("/proc/self/mountinfo", "re");
	int rc = -ENOENT;

	if (!f)
		return -errno;
	while (rc && fgets(line, sizeof(line), f)) {
		char root[PATH_MAX], point[PATH_MAX], type[64], super[1024];
		const char *sep = strstr(line, " - ");
		if (!sep ||
		    sscanf(line, "%*s %*s %*s %4095s %4095s", root, point) !=
			    2 ||
		    sscanf(sep + 3, "%63s %*s %1023s", type, super) != 2)
			continue;
		/* an escaped name (\040) is none of the kernel's mounts */
		if (strchr(point, '\\') || strchr(root, '\\'))
			continue;
		if (ctl ? strcmp(type, "cgroup") || !has_word(super, ctl) :
			  strcmp(type, "cgroup2"))
			continue;
		snprintf(mnt, PATH_MAX, "%s", point);
		snprintf(mroot, PATH_MAX, "%s", root);
		rc = 0;
	}
	fclose(f);
	return rc;
}

/* This process's cgroup of v1 controller ctl (NULL: v2's), as
 * /proc/self/cgroup shows it, in out (PATH_MAX). 0 or -ENOENT. */
static int own_cg(const char *ctl, char *out)
{
	char line[PATH_MAX + 256];
	FILE *f = fopen("/proc/self/cgroup", "re");
	int rc = -ENOENT;

	if (!f)
		return -errno;
	while (rc && fgets(line, sizeof(line), f)) {
		char *ctls = strchr(line, ':'), *path;
		if (!ctls || !(path = strchr(++ctls, ':')))
			continue;
		*path++ = 0;
		path[strcspn(path, "\n")] = 0;
		if (ctl ? !has_word(ctls, ctl) : *ctls)
			continue;
		snprintf(out, PATH_MAX, "%s", path);
		rc = 0;
	}
	fclose(f);
	return rc;
}

/* Append path's components to rel ("a/b", no leading slash; PATH_MAX),
 * refusing `..`. */
static int add_components(char *rel, const char *path, const char *given,
			  struct moat_error *err)
{
	char buf[PATH_MAX], *save = NULL, *c;
	size_t n = strlen(rel);

	if (snprintf(buf, sizeof(buf), "%s", path) >= (int)sizeof(buf))
		return moat_error_input(err, ENAMETOOLONG,
					"linux.cgroupsPath `%s`: too long",
					given);
	for (c = strtok_r(buf, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
		if (!strcmp(c, "."))
			continue;
		if (!strcmp(c, ".."))
			return moat_error_input(err, EINVAL,
						"linux.cgroupsPath `%s`: `..` "
						"is not allowed",
						given);
		if (n + strlen(c) + 2 >= PATH_MAX - 16)
			return moat_error_input(
				err, ENAMETOOLONG,
				"linux.cgroupsPath `%s`: too long", given);
		n += (size_t)sprintf(rel + n, "%s%s", n ? "/" : "", c);
	}
	return 0;
}

/* One hierarchy's cgroup of the container: mount point, PATH below it
 * (relative, no leading slash), and the caller's own cgroup below it. */
struct oci_dir {
	const char *ctl; /* NULL: v2 */
	char mnt[PATH_MAX], rel[PATH_MAX], own[PATH_MAX];
};

/* Where cgroups_path is in the hierarchy of ctl (NULL: v2), as runc's
 * cgroupfs driver puts it, and whether it may be used. 0, -ENOENT (no
 * such hierarchy here), or -1 with err set. */
static int oci_resolve(const char *ctl, const char *cgroups_path,
		       struct oci_dir *d, struct moat_error *err)
{
	char mroot[PATH_MAX], own[PATH_MAX];
	const char *base = "";
	size_t n;

	d->ctl = ctl;
	d->rel[0] = 0;
	if (cg_mount(ctl, d->mnt, mroot) < 0 || own_cg(ctl, own) < 0)
		return -ENOENT;
	/* own as seen below the mount (a mount of a subtree shows less) */
	n = strcmp(mroot, "/") ? strlen(mroot) : 0;
	if (n && !strncmp(own, mroot, n) && (!own[n] || own[n] == '/'))
		memmove(own, own + n, strlen(own + n) + 1);
	d->own[0] = 0;
	if (add_components(d->own, own, cgroups_path, err) < 0)
		return -1;
	if (cgroups_path[0] != '/') {
		/* v2: own's parent, as runc: own holds processes (the
		 * runtime), so its children could have no controllers */
		char *slash;
		base = d->own;
		if (!ctl) {
			snprintf(own, sizeof(own), "%s", d->own);
			slash = strrchr(own, '/');
			if (slash)
				*slash = 0;
			else
				own[0] = 0;
			base = own;
		}
	}
	snprintf(d->rel, sizeof(d->rel), "%s", base);
	if (add_components(d->rel, cgroups_path, cgroups_path, err) < 0)
		return -1;
	n = strlen(d->rel);
	/* PATH/guest and the like fit in PATH_MAX (struct cg's path) */
	if (strlen(d->mnt) + n + 16 >= PATH_MAX)
		return moat_error_input(err, ENAMETOOLONG,
					"linux.cgroupsPath `%s`: too long",
					cgroups_path);
	if (!n)
		return moat_error_input(err, EINVAL,
					"linux.cgroupsPath `%s`: names the "
					"root of the cgroup hierarchy",
					cgroups_path);
	if (!strncmp(d->own, d->rel, n) && (!d->own[n] || d->own[n] == '/'))
		return moat_error_input(err, EINVAL,
					"linux.cgroupsPath `%s`: names the "
					"runtime's own cgroup (`/%s`) or one "
					"of its ancestors",
					cgroups_path, d->own);
	return 0;
}

/* The hierarchies the container's cgroups are in: v2's alone on a v2
 * host, else each of oci_ctls that the host mounts. Returns how many
 * (into d[], LIMITS_MAX_CG at most) or -1 with err set. */
static int oci_dirs(const char *cgroups_path, struct oci_dir *d,
		    struct moat_error *err)
{
	int n = 0, rc;

	if (unified()) {
		rc = oci_resolve(NULL, cgroups_path, &d[0], err);
		return rc == -ENOENT ? 0 : rc < 0 ? -1 : 1;
	}
	for (size_t i = 0; i < ARRAY_SIZE(oci_ctls); i++) {
		rc = oci_resolve(oci_ctls[i], cgroups_path, &d[n], err);
		if (rc == -ENOENT)
			continue;
		if (rc < 0)
			return -1;
		n++;
	}
	return n;
}

int limits_oci_dirs(const char *cgroups_path, char (*dirs)[PATH_MAX],
		    struct moat_error *err)
{
	struct oci_dir *d = xcalloc(LIMITS_MAX_CG, sizeof(*d));
	int n = oci_dirs(cgroups_path, d, err);

	for (int i = 0; i < n; i++)
		if (snprintf(dirs[i], PATH_MAX, "%s/%s", d[i].mnt, d[i].rel) >=
		    PATH_MAX)
			n = moat_error_input(err, ENAMETOOLONG,
					     "linux.cgroupsPath `%s`: too long",
					     cgroups_path);
	free(d);
	return n;
}

/* name's text in dirfd, at most cap-1 bytes, NUL-ended; -errno. */
static ssize_t read_at(int dirfd, const char *name, char *buf, size_t cap)
{
	int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, cap - 1);
	if (n < 0)
		n = -errno;
	close(fd);
	buf[n > 0 ? n : 0] = 0;
	return n;
}

static int write_at(int dirfd, const char *name, const char *val)
{
	int fd = openat(dirfd, name, O_WRONLY | O_CLOEXEC | O_NOFOLLOW), rc = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, val, strlen(val)) < 0)
		rc = -errno;
	close(fd);
	return rc;
}

/* A v1 cpuset cgroup starts with no CPUs and no memory nodes, and no
 * task may join it so: child gets parent's, as runc does for each
 * cgroup it makes. */
static void cpuset_inherit(int parent, int child)
{
	static const char *const files[] = { "cpuset.cpus", "cpuset.mems" };
	char buf[4096], cur[16];

	for (size_t i = 0; i < ARRAY_SIZE(files); i++)
		if (read_at(child, files[i], cur, sizeof(cur)) >= 0 &&
		    (!cur[0] || cur[0] == '\n') &&
		    read_at(parent, files[i], buf, sizeof(buf)) > 0)
			write_at(child, files[i], buf);
}

/* v2: every controller of oci_ctls_v2 that dirfd's cgroup has, enabled
 * for its children (those it does not have are left out). */
static void v2_enable(int dirfd)
{
	char on[32];

	for (size_t i = 0; i < ARRAY_SIZE(oci_ctls_v2); i++) {
		snprintf(on, sizeof(on), "+%s", oci_ctls_v2[i]);
		write_at(dirfd, "cgroup.subtree_control", on);
	}
}

/* Open (making what is missing) d's PATH, component by component from
 * the hierarchy's mount, each O_NOFOLLOW, a directory of that cgroupfs
 * and the caller's; then make its guest/ (v2: and sentry/), which no
 * other sandbox may have made: two containers of one cgroupsPath would
 * share their guests' limits and their reaper's cgroup. */
static int oci_make_parts(const struct oci_dir *d, const char *given,
			  bool made[3], ino_t ino[3], struct moat_error *err);

/* ino: the inodes of PATH and its parts, by enum cg_sub */
static int oci_make_dir(const struct oci_dir *d, const char *given,
			ino_t ino[3], struct moat_error *err)
{
	char p[2 * PATH_MAX + 16];
	bool made[3] = { false, false, false }; /* guest/, sentry/, PATH */
	int rc = oci_make_parts(d, given, made, ino, err);

	/* What this made of a cgroupsPath it then refused goes again, and
	 * only that: another sandbox's guest/ made meanwhile stays. */
	for (int i = 0; rc < 0 && i < 3; i++) {
		snprintf(p, sizeof(p), "%s/%s%s", d->mnt, d->rel,
			 i == 0 ? "/guest" :
			 i == 1 ? "/sentry" :
				  "");
		if (made[i])
			rmdir(p);
	}
	return rc;
}

static int oci_make_parts(const struct oci_dir *d, const char *given,
			  bool made_parts[3], ino_t ino[3],
			  struct moat_error *err)
{
	char rel[PATH_MAX], *save = NULL, *c, procs[64];
	const char *what = d->ctl ? d->ctl : "unified";
	bool cpuset = d->ctl && !strcmp(d->ctl, "cpuset");
	cleanup_close int fd = -1;
	struct statfs sf;
	struct stat root, st;

	fd = open(d->mnt, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || fstatfs(fd, &sf) < 0 || fstat(fd, &root) < 0)
		return moat_error_set(err, errno,
				      "limits: cgroup hierarchy `%s`", d->mnt);
	if (sf.f_type != (d->ctl ? CGROUP_SUPER_MAGIC : CGROUP2_SUPER_MAGIC))
		return moat_error_input(err, EINVAL,
					"limits: `%s` is no cgroup hierarchy",
					d->mnt);
	if (d->ctl == NULL)
		v2_enable(fd);
	snprintf(rel, sizeof(rel), "%s", d->rel);
	for (c = strtok_r(rel, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
		bool made = mkdirat(fd, c, 0755) == 0;
		int next;
		if (!made && errno != EEXIST)
			return moat_error_set(err, errno,
					      "linux.cgroupsPath `%s`: create "
					      "`%s/%s` (%s)",
					      given, d->mnt, d->rel, what);
		next = openat(fd, c,
			      O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0)
			return moat_error_input(
				err, errno,
				"linux.cgroupsPath `%s`: `%s` in `%s/%s` is "
				"%s",
				given, c, d->mnt, d->rel,
				errno == ELOOP || errno == ENOTDIR ?
					"not a directory (a symbolic link or "
					"a file)" :
					strerror(errno));
		if (fstat(next, &st) < 0 || st.st_dev != root.st_dev ||
		    st.st_uid != geteuid()) {
			close(next);
			return moat_error_input(
				err, EPERM,
				"linux.cgroupsPath `%s`: `%s` in `%s/%s` is "
				"%s",
				given, c, d->mnt, d->rel,
				st.st_dev != root.st_dev ?
					"on another file system" :
					"another user's cgroup");
		}
		made_parts[2] = made;
		if (made && cpuset)
			cpuset_inherit(fd, next);
		if (d->ctl == NULL)
			v2_enable(next);
		close(fd);
		fd = next;
	}
	ino[CG_TOP] = st.st_ino;
	/* Refused, as runc 1.2 does (1.1 warns): another container's, or
	 * something of the host's, already there. */
	if (read_at(fd, "cgroup.procs", procs, sizeof(procs)) > 0)
		return moat_error_input(err, EBUSY,
					"linux.cgroupsPath `%s`: `%s/%s` "
					"already holds processes",
					given, d->mnt, d->rel);
	/* v1 lets no cpuset shrink below a child's: the config's first,
	 * then guest/ has them from PATH */
	for (int i = 0; cpuset && i < 2; i++) {
		const char *val = i ? S->opts.cg.cpuset_mems :
				      S->opts.cg.cpuset_cpus;
		int rc = val ? write_at(fd, i ? "cpuset.mems" : "cpuset.cpus",
					val) :
			       0;
		if (rc < 0)
			return moat_error_set(err, -rc,
					      "linux.resources.cpu.%s: write "
					      "`%s` to `%s/%s/cpuset.%s`",
					      i ? "mems" : "cpus", val, d->mnt,
					      d->rel, i ? "mems" : "cpus");
	}
	for (int i = 0; i < (d->ctl ? 1 : 2); i++) {
		const char *sub = i ? "sentry" : "guest";
		int sfd;
		if (mkdirat(fd, sub, 0700) == 0 &&
		    fstatat(fd, sub, &st, AT_SYMLINK_NOFOLLOW) == 0) {
			made_parts[i] = true;
			ino[i ? CG_SENTRY : CG_GUEST] = st.st_ino;
		} else
			return errno == EEXIST ?
				       moat_error_input(
					       err, EBUSY,
					       "linux.cgroupsPath `%s`: `%s/%s` "
					       "is another sandbox's (it has "
					       "%s/)",
					       given, d->mnt, d->rel, sub) :
				       moat_error_set(err, errno,
						      "limits: create cgroup "
						      "`%s/%s/%s`",
						      d->mnt, d->rel, sub);
		if (cpuset) {
			sfd = openat(fd, sub,
				     O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
					     O_CLOEXEC);
			if (sfd >= 0) {
				cpuset_inherit(fd, sfd);
				close(sfd);
			}
		}
	}
	return 0;
}

/* Every hierarchy's cgroup of the container, made and kept in cgs[] for
 * the rest of this file (v2: one entry per controller, one directory). */
static int oci_make_cgs(const char *cgroups_path, struct moat_error *err)
{
	struct oci_dir *d = xcalloc(LIMITS_MAX_CG, sizeof(*d));
	int n = oci_dirs(cgroups_path, d, err), rc = n < 0 ? -1 : 0;

	for (int i = 0; i < n && !rc; i++) {
		size_t nctl = d[i].ctl ? 1 : ARRAY_SIZE(oci_ctls_v2);
		ino_t ino[3] = { 0, 0, 0 };
		rc = oci_make_dir(&d[i], cgroups_path, ino, err);
		for (size_t k = 0; !rc && k < nctl && ncgs < MAX_CG; k++) {
			struct cg *c = &cgs[ncgs];
			int l1 = snprintf(c->path, sizeof(c->path), "%s/%s",
					  d[i].mnt, d[i].rel);
			int l2 = snprintf(c->home, sizeof(c->home), "%s%s%s",
					  d[i].mnt, d[i].own[0] ? "/" : "",
					  d[i].own);

			if (l1 < 0 || (size_t)l1 >= sizeof(c->path) || l2 < 0 ||
			    (size_t)l2 >= sizeof(c->home)) {
				rc = moat_error_input(err, ENAMETOOLONG,
						      "linux.cgroupsPath `%s`: "
						      "longer than PATH_MAX "
						      "under %s",
						      cgroups_path, d[i].mnt);
				break;
			}
			ncgs++;
			c->ctl = d[i].ctl ? d[i].ctl : oci_ctls_v2[k];
			c->v2 = !d[i].ctl;
			memcpy(c->ino, ino, sizeof(c->ino));
		}
	}
	free(d);
	return rc;
}

void limits_oci_remove(const char *dir)
{
	char part[PATH_MAX + 16];
	struct statfs sf;

	/* only a cgroup: state.json's directory is root's, but a cgroupfs
	 * rmdir is all this is for */
	if (statfs(dir, &sf) < 0 || (sf.f_type != CGROUP_SUPER_MAGIC &&
				     sf.f_type != CGROUP2_SUPER_MAGIC))
		return;
	/* The sandbox's last processes may still be dying (its janitor
	 * removes the same): a short wait, a second at most. */
	for (int tries = 0; tries < 40; tries++) {
		bool busy = false;
		for (int i = 0; i < 3; i++) {
			snprintf(part, sizeof(part), "%s%s", dir,
				 i == 0 ? "/guest" :
				 i == 1 ? "/sentry" :
					  "");
			if (rmdir(part) < 0 && errno == EBUSY)
				busy = true;
		}
		if (!busy)
			break;
		usleep(25000);
	}
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
	 * figure (cpu and the freezer are v1's only: docs/oci.md). Memory
	 * and CPU are the whole sandbox's, the sentry's work included, as
	 * their limits are; tasks and the freezer are the guests'. */
	static const struct {
		const char *ctl, *file, *v2;
		int flags;
		enum cg_sub sub;
	} files[ST_FILES] = {
		[ST_CPU] = { "cpuacct", "cpuacct.usage", NULL, O_RDONLY,
			     CG_TOP },
		[ST_MEM] = { "memory", "memory.usage_in_bytes",
			     "memory.current", O_RDONLY, CG_TOP },
		[ST_MEM_MAX] = { "memory", "memory.max_usage_in_bytes",
				 "memory.peak", O_RDONLY, CG_TOP },
		[ST_PIDS] = { "pids", "pids.current", "pids.current", O_RDONLY,
			      CG_GUEST },
		[ST_FREEZER] = { "freezer", "freezer.state", NULL, O_RDWR,
				 CG_GUEST },
	};
	char p[PATH_MAX + 32], part[PATH_MAX];
	int i;

	for (i = 0; i < ST_FILES; i++) {
		struct cg *c = find_cg(files[i].ctl);
		const char *file = c && c->v2 ? files[i].v2 : files[i].file;
		if (!c || !file)
			continue;
		snprintf(p, sizeof(p), "%s/%s", cg_part(c, files[i].sub, part),
			 file);
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

/* What guests make the sentry's heap hold: pipe capacity, inline tmpfs
 * data, tmpfs nodes and names, socket queues, SysV messages. */
static uint64_t heap_held;

/* The sentry's share of a memory limit: what guests may make it hold, and
 * what the guests' own limit leaves it. A quarter of a small limit; of a
 * large one 64 MiB and a sixteenth (576 MiB of 8 GiB), since what the
 * sentry holds for guests (pipes, small files, queues) does not grow with
 * their working set, and a guest told --memory 2G should have most of
 * it. The two meet at 341 MiB. */
static uint64_t sentry_share(uint64_t limit)
{
	uint64_t quarter = limit / 4, capped = (64ULL << 20) + limit / 16;

	return quarter < capped ? quarter : capped;
}

uint64_t limits_heap_budget(void)
{
	return S && S->opts.memory ? sentry_share(S->opts.memory) : UINT64_MAX;
}

bool limits_heap_charge(int64_t delta)
{
	if (delta > 0 && heap_held + (uint64_t)delta > limits_heap_budget())
		return false;
	heap_held += (uint64_t)delta;
	return true;
}

uint64_t limits_heap_room(void)
{
	uint64_t budget = limits_heap_budget();

	return heap_held < budget ? budget - heap_held : 0;
}

void limits_heap_force(int64_t delta)
{
	heap_held += (uint64_t)delta;
}

static void cg_val(char *v, size_t cap, int64_t x, bool v2);

static int set_memory(uint64_t bytes, struct moat_error *err)
{
	char v[32], sw[32], p[PATH_MAX + 32], part[PATH_MAX];
	int64_t swap, extra = 0;
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
	/* No swap beyond the limit, where the host has swap accounting,
	 * unless an OCI config says how much (memory and swap together, as
	 * v1's memsw; v2's swap.max is the swap alone, as runc converts). */
	swap = S->opts.oci_cgroups ? S->opts.cg.memory_swap : 0;
	if (swap < 0 || (uint64_t)swap > bytes)
		extra = swap < 0 ? -1 : (int64_t)((uint64_t)swap - bytes);
	if (c->v2) {
		cg_val(sw, sizeof(sw), extra, true);
		rc = write_str(c->path, "memory.swap.max", sw);
	} else {
		cg_val(sw, sizeof(sw), extra < 0 ? -1 : (int64_t)bytes + extra,
		       false);
		rc = write_str(c->path, "memory.memsw.limit_in_bytes", sw);
	}
	if (rc < 0 && swap && rc != -ENOENT)
		return moat_error_set(err, -rc,
				      "linux.resources.memory.swap %s", sw);
	/* The guests' own limit: the sandbox's less the sentry's share
	 * (limits_heap_budget), which it keeps what guests make it hold
	 * within. So the guests' own memory meets a limit in guest/, where
	 * the OOM killer can choose only among guests, and the sandbox's
	 * limit is met only past the sentry's share, which the sentry does
	 * not go past for the guests. Without it the kernel's choice in
	 * moat-PID was the sentry whenever it held more than the limit less
	 * the guests' usage (its score counts all of its RSS, the pages it
	 * had before it joined too, and a guest's +1000 adds only the
	 * limit). */
	snprintf(v, sizeof(v), "%llu",
		 (unsigned long long)(bytes - sentry_share(bytes)));
	cg_part(c, CG_GUEST, part);
	rc = write_str(part, c->v2 ? "memory.max" : "memory.limit_in_bytes", v);
	if (rc < 0)
		return moat_error_set(err, -rc,
				      "limits: the guests' memory "
				      "limit %s",
				      v);
	if (c->v2) {
		cg_val(sw, sizeof(sw), extra, true);
		write_str(part, "memory.swap.max", sw);
	} else {
		cg_val(sw, sizeof(sw),
		       extra < 0 ?
			       -1 :
			       (int64_t)(bytes - sentry_share(bytes)) + extra,
		       false);
		write_str(part, "memory.memsw.limit_in_bytes", sw);
	}
	/* Both have an "oom_kill N" line. v1 counts a kill in the
	 * victim's cgroup alone, the guests' (only a guest can be one:
	 * limits_attach_start); v2's counts add up to the parent. */
	snprintf(p, sizeof(p), "%s/%s",
		 cg_part(c, c->v2 ? CG_TOP : CG_GUEST, part),
		 c->v2 ? "memory.events" : "memory.oom_control");
	oom_fd = open(p, O_RDONLY | O_CLOEXEC);
	snprintf(p, sizeof(p), "%s/%s", cg_part(c, CG_SENTRY, part),
		 c->v2 ? "memory.events" : "memory.oom_control");
	sentry_oom_fd = open(p, O_RDONLY | O_CLOEXEC);
	snprintf(oom_key, sizeof(oom_key), "oom_kill ");
	return 0;
}

static int set_pids(int n, struct moat_error *err)
{
	char v[32], part[PATH_MAX];
	int rc;

	if (!find_cg("pids") && make_cg("pids", err) < 0)
		return -1;
	/* The kernel's bound sits a little above the sentry's own check
	 * (threads of the reaper and races count there too). The guests'
	 * alone: the sentry and its helpers never take from it, and a fork
	 * bomb never stops a helper. */
	snprintf(v, sizeof(v), "%d", n + 2);
	rc = write_str(cg_part(find_cg("pids"), CG_GUEST, part), "pids.max", v);
	if (rc < 0)
		return moat_error_set(err, -rc, "limits: pids limit");
	return 0;
}

static int set_cpus(double cpus, struct moat_error *err)
{
	long period = 100000, quota = (long)(cpus * (double)period);
	struct cg *c;
	char v[64], part[PATH_MAX];
	int rc;

	if (quota < 1000)
		quota = 1000;
	if (make_cg("cpu", err) < 0)
		return -1;
	c = &cgs[ncgs - 1];
	/* The quota is the sandbox's: the sentry's work for the guests
	 * counts in it. Within it, the guests together weigh a quarter of
	 * the sentry (v1: each of its processes weighs 1024, as a nice-0
	 * task; v2: sentry/ 100 against 25), so that however many guests
	 * spin, the sentry still runs four times in five when it has work:
	 * a kill or a control request is served while the guests use all
	 * of the quota. */
	if (c->v2) {
		snprintf(v, sizeof(v), "%ld %ld", quota, period);
		rc = write_str(c->path, "cpu.max", v);
		if (rc == 0)
			rc = write_str(cg_part(c, CG_GUEST, part), "cpu.weight",
				       "25");
	} else {
		snprintf(v, sizeof(v), "%ld", period);
		write_str(c->path, "cpu.cfs_period_us", v);
		snprintf(v, sizeof(v), "%ld", quota);
		rc = write_str(c->path, "cpu.cfs_quota_us", v);
		if (rc == 0)
			rc = write_str(cg_part(c, CG_GUEST, part), "cpu.shares",
				       "256");
	}
	if (rc < 0)
		return moat_error_set(err, -rc, "limits: cpu quota");
	return 0;
}

/* A value for a cgroup file: -1 is v1's "no limit", v2's "max". */
static void cg_val(char *v, size_t cap, int64_t x, bool v2)
{
	if (x < 0)
		snprintf(v, cap, "%s", v2 ? "max" : "-1");
	else
		snprintf(v, cap, "%lld", (long long)x);
}

/* Write file of ctl's cgroup part sub; a failure names the config's field. */
static int oci_write(const char *ctl, enum cg_sub sub, const char *file,
		     const char *val, const char *field, struct moat_error *err)
{
	struct cg *c = find_cg(ctl);
	char part[PATH_MAX];
	int rc;

	if (!c)
		return moat_error_input(err, ENOTSUP,
					"linux.resources.%s: no %s cgroup on "
					"this host",
					field, ctl);
	rc = write_str(cg_part(c, sub, part), file, val);
	if (rc < 0)
		return moat_error_set(err, -rc,
				      "linux.resources.%s: write `%s` to "
				      "`%s/%s`",
				      field, val, part, file);
	return 0;
}

/* The rest of an OCI container's linux.resources, at cgroupsPath as runc
 * writes them (v2: as runc converts them), before any process joins. The
 * memory limit and the pids limit are set_memory's and set_pids'. The
 * guests keep their share of the sandbox's CPU (docs/limits.md) whatever
 * cpu.shares says of the sandbox among its siblings. */
static int oci_limits(struct moat_error *err)
{
	const struct oci_cg_res *r = &S->opts.cg;
	struct cg *cpu = find_cg("cpu"), *mem = find_cg("memory");
	bool v2 = mem ? mem->v2 : cpu && cpu->v2;
	char v[64];

	if (r->memory_reservation) {
		cg_val(v, sizeof(v), r->memory_reservation, v2);
		if (oci_write("memory", CG_TOP,
			      v2 ? "memory.low" : "memory.soft_limit_in_bytes",
			      v, "memory.reservation", err) < 0)
			return -1;
	}
	/* v2 has neither: runc leaves them there too */
	if (!v2 && r->swappiness >= 0) {
		cg_val(v, sizeof(v), r->swappiness, false);
		if (oci_write("memory", CG_TOP, "memory.swappiness", v,
			      "memory.swappiness", err) < 0 ||
		    oci_write("memory", CG_GUEST, "memory.swappiness", v,
			      "memory.swappiness", err) < 0)
			return -1;
	}
	if (!v2 && r->disable_oom_killer &&
	    (oci_write("memory", CG_TOP, "memory.oom_control", "1",
		       "memory.disableOOMKiller", err) < 0 ||
	     oci_write("memory", CG_GUEST, "memory.oom_control", "1",
		       "memory.disableOOMKiller", err) < 0))
		return -1;
	if (r->cpu_shares) {
		/* runc's conversion to v2's weight, 1 to 10000 */
		uint64_t w = 1 + ((r->cpu_shares < 2 ? 2 : r->cpu_shares) - 2) *
					 9999 / 262142;
		snprintf(v, sizeof(v), "%llu",
			 (unsigned long long)(v2 ? (w > 10000 ? 10000 : w) :
						   r->cpu_shares));
		if (oci_write("cpu", CG_TOP, v2 ? "cpu.weight" : "cpu.shares",
			      v, "cpu.shares", err) < 0)
			return -1;
	}
	if (v2 && (r->cpu_quota || r->cpu_period)) {
		char q[32];
		cg_val(q, sizeof(q), r->cpu_quota > 0 ? r->cpu_quota : -1,
		       true);
		snprintf(v, sizeof(v), "%s %llu", q,
			 (unsigned long long)(r->cpu_period ? r->cpu_period :
							      100000));
		if (oci_write("cpu", CG_TOP, "cpu.max", v, "cpu.quota", err) <
		    0)
			return -1;
	} else if (!v2) {
		if (r->cpu_period) {
			cg_val(v, sizeof(v), (int64_t)r->cpu_period, false);
			if (oci_write("cpu", CG_TOP, "cpu.cfs_period_us", v,
				      "cpu.period", err) < 0)
				return -1;
		}
		if (r->cpu_quota) {
			cg_val(v, sizeof(v), r->cpu_quota, false);
			if (oci_write("cpu", CG_TOP, "cpu.cfs_quota_us", v,
				      "cpu.quota", err) < 0)
				return -1;
		}
	}
	/* moat's own, not the config's: best effort, as for moat do */
	if (cpu) {
		char part[PATH_MAX];
		write_str(cg_part(cpu, CG_GUEST, part),
			  v2 ? "cpu.weight" : "cpu.shares", v2 ? "25" : "256");
	}
	/* The guests' cpuset is the sandbox's (v1: oci_make_dir's). */
	for (int i = 0; v2 && i < 2; i++) {
		const char *val = i ? r->cpuset_mems : r->cpuset_cpus;
		const char *file = i ? "cpuset.mems" : "cpuset.cpus";
		const char *field = i ? "cpu.mems" : "cpu.cpus";
		if (val &&
		    (oci_write("cpuset", CG_TOP, file, val, field, err) < 0 ||
		     oci_write("cpuset", CG_GUEST, file, val, field, err) < 0))
			return -1;
	}
	return 0;
}

int limits_setup(struct moat_error *err)
{
	struct sentry_opts *o = &S->opts;
	struct moat_error why = { 0 };

	/* An OCI container has them even without limits, at its
	 * cgroupsPath: kubelet and cAdvisor read them, `moat events` too,
	 * `moat pause` freezes the guests with the freezer. */
	if (o->oci_cgroups) {
		if (oci_make_cgs(o->cgroups_path, err) < 0 ||
		    oci_limits(err) < 0)
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
	if (o->cpus > 0 && !o->oci_cgroups && set_cpus(o->cpus, err) < 0)
		return -1;
	open_stat_files();
	return 0;
}

/* One cgroup.procs write: it takes the kernel's cgroup_threadgroup_rwsem
 * for writing, which waits for an RCU grace period (8-11 ms measured on
 * this kind of host, per write). Writes made at once share one, and one
 * made within a grace period of the last one's end waits for none. */
struct join_arg {
	char path[PATH_MAX];
	char pid[16];
	int rc;
};

#define MAX_JOINS (2 * MAX_CG)
#define MAX_HELPERS 32

static int attach_rc;		     /* the first join's failure, or 0 */
static char attach_failed[PATH_MAX]; /* and its cgroup */

static void *join_one(void *p)
{
	struct join_arg *j = p;

	j->rc = write_str(j->path, "cgroup.procs", j->pid);
	return NULL;
}

/* Every join of js at once: one thread each but the first. */
static void join_all(struct join_arg *js, int n)
{
	pthread_t th[MAX_JOINS];
	bool started[MAX_JOINS] = { false };
	int i;

	for (i = 1; i < n; i++)
		if (pthread_create(&th[i], NULL, join_one, &js[i]) == 0)
			started[i] = true;
	for (i = 0; i < n; i++) {
		if (i == 0 || !started[i])
			join_one(&js[i]);
		else
			pthread_join(th[i], NULL);
		if (js[i].rc < 0 && !attach_rc) {
			attach_rc = js[i].rc;
			snprintf(attach_failed, sizeof(attach_failed), "%s",
				 js[i].path);
		}
	}
}

/* Jobs that put pid in part sub of every cgroup (each directory once). */
static int add_joins(struct join_arg *js, int n, pid_t pid, enum cg_sub sub)
{
	for (int i = 0; i < ncgs && n < MAX_JOINS; i++) {
		if (cg_dup(i))
			continue;
		cg_part(&cgs[i], sub, js[n].path);
		snprintf(js[n].pid, sizeof(js[n].pid), "%d", (int)pid);
		js[n++].rc = 0;
	}
	return n;
}

static struct join_arg first_joins[MAX_JOINS];
static int nfirst;
/* The sentry's helpers forked while its own join was under way: either
 * side of it, so limits_attach_wait puts them in too. */
static pid_t helpers[MAX_HELPERS];
static int nhelpers;
static bool sentry_joined; /* limits_attach_wait has run */
static bool joining;	   /* limits_attach_start has */

static void *attach_thread(void *p)
{
	(void)p;
	join_all(first_joins, nfirst);
	return NULL;
}

/* Setup, before any guest exists: the joins (tens of ms of waiting for
 * the kernel's grace periods) run in a thread while the sentry starts
 * its gofers; nothing else of the sentry's runs in it. */
static pthread_t attach_th;
static bool attach_running;

void limits_attach_start(pid_t reaper)
{
	attach_rc = 0;
	attach_failed[0] = 0;
	if (!ncgs)
		return;
	/* The OOM killer takes a guest, never the sentry or a helper, while
	 * any guest is left: they score 999 or 1000 below the guests, and a
	 * score counts a thousandth of the limit a step, so even a sentry
	 * that held nearly all of the limit scores below the smallest guest.
	 * The sentry goes to -999 (its helpers inherit it) where it may
	 * (CAP_SYS_RESOURCE); where it may not, the reaper, and with it
	 * every guest, goes to 1000. Never -1000 (unkillable): where what is
	 * left in the cgroup is the sentry's alone, a fault of the sentry's
	 * with no process to kill is retried for ever, the sandbox spinning
	 * in the kernel. The sentry keeps what guests make it hold well
	 * below the limit (limits_heap_charge), so that last kill is for a
	 * limit too small for the sentry itself. Without a memory limit
	 * (an OCI container's cgroup for its stats) the scores stay. */
	if (S->opts.memory && find_cg("memory") &&
	    write_str("/proc/self", "oom_score_adj", "-999") < 0) {
		char proc[32];
		snprintf(proc, sizeof(proc), "/proc/%d", (int)reaper);
		write_str(proc, "oom_score_adj", "1000");
	}
	nfirst = add_joins(first_joins, 0, reaper, CG_GUEST);
	nfirst = add_joins(first_joins, nfirst, getpid(), CG_SENTRY);
	joining = true;
	if (pthread_create(&attach_th, NULL, attach_thread, NULL) == 0)
		attach_running = true;
	else
		join_all(first_joins, nfirst);
}

void limits_adopt(pid_t helper)
{
	/* After the sentry's join a child is born in its cgroups. */
	if (joining && !sentry_joined && nhelpers < MAX_HELPERS)
		helpers[nhelpers++] = helper;
}

int limits_attach_wait(struct moat_error *err)
{
	struct join_arg js[MAX_JOINS];

	if (attach_running) {
		pthread_join(attach_th, NULL);
		attach_running = false;
	}
	sentry_joined = true;
	/* The helpers, a few at a time, while the lock's grace period is
	 * likely still fresh. One that has died meanwhile is no error. */
	for (int h = 0; h < nhelpers;) {
		int n = 0, rc = attach_rc;
		while (h < nhelpers && n + ncgs <= MAX_JOINS)
			n = add_joins(js, n, helpers[h++], CG_SENTRY);
		join_all(js, n);
		if (attach_rc == -ESRCH)
			attach_rc = rc;
	}
	nhelpers = 0;
	if (attach_rc < 0)
		return moat_error_set(err, -attach_rc, "limits: join `%s`",
				      attach_failed);
	return 0;
}

/* In a janitor: back to the caller's cgroups. A janitor waits for the
 * sentry's end and then for its own work; in the sandbox's cgroups it
 * would keep them from being removed, and its work would be charged to a
 * sandbox that is gone. */
static void limits_leave(void)
{
	struct join_arg js[MAX_JOINS];
	int n = 0;

	if (!joining)
		return;
	for (int i = 0; i < ncgs; i++) {
		if (cg_dup(i))
			continue;
		snprintf(js[n].path, sizeof(js[n].path), "%s", cgs[i].home);
		snprintf(js[n].pid, sizeof(js[n].pid), "0");
		js[n++].rc = 0;
	}
	/* One after another, without threads: this is a child forked while
	 * the sentry's join thread may run, where only async-signal-safe
	 * calls are sound (pthread_create allocates, and a lock held by that
	 * thread at the fork is held for good here). A janitor is in no
	 * hurry. */
	for (int i = 0; i < n; i++)
		join_one(&js[i]);
}

static int oom_kills_in(int fd);

/* OOM kills of the sentry's side of the sandbox (the sentry, its
 * helpers): v1 counts a kill in the victim's cgroup, moat-PID itself;
 * v2's sentry/ holds them. The sentry reads the file it opened at setup
 * (its seccomp filter opens none); a janitor, which has no fd of the
 * sentry's, opens it. */
static int sentry_oom_kills(void)
{
	char p[PATH_MAX + 32], part[PATH_MAX];
	struct cg *c = find_cg("memory");
	int fd, n;

	if (sentry_oom_fd >= 0 || !c)
		return oom_kills_in(sentry_oom_fd);
	snprintf(p, sizeof(p), "%s/%s", cg_part(c, CG_SENTRY, part),
		 c->v2 ? "memory.events" : "memory.oom_control");
	fd = open(p, O_RDONLY | O_CLOEXEC);
	n = oom_kills_in(fd);
	if (fd >= 0)
		close(fd);
	return n;
}

/* The janitor's line: the sentry says "done" on it as it ends on its
 * own (limits_report), so a janitor that sees it go without a word,
 * and an OOM kill on the sentry's side, can say so. */
static int janitor_line = -1;

/* In the janitor: the sentry's stderr (sent first on the line), or -1. */
static int janitor_stderr(void)
{
	union {
		char b[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	char c;
	struct iovec iov = { &c, 1 };
	struct msghdr mh = { .msg_iov = &iov,
			     .msg_iovlen = 1,
			     .msg_control = u.b,
			     .msg_controllen = sizeof(u.b) };
	struct cmsghdr *cm;
	int fd = -1;

	while (recvmsg(3, &mh, MSG_CMSG_CLOEXEC) < 0)
		if (errno != EINTR)
			return -1;
	cm = CMSG_FIRSTHDR(&mh);
	if (cm && cm->cmsg_type == SCM_RIGHTS &&
	    cm->cmsg_len == CMSG_LEN(sizeof(int)))
		memcpy(&fd, CMSG_DATA(cm), sizeof(int));
	return fd;
}

void limits_start_janitor(void)
{
	char part[PATH_MAX], buf[8];
	bool told = false;
	int i, rc, err;
	ssize_t n;

	if (ncgs)
		janitor_on_fork = limits_leave;
	/* When the sentry is gone, remove the cgroups once their last
	 * process has died. Forked before any join: it is in none of them. */
	if (!ncgs)
		return;
	rc = janitor_fork_ctl(&janitor_line);
	if (rc > 0) {
		struct iovec iov = { "e", 1 };
		int fd = STDERR_FILENO;
		send_with_fds(janitor_line, &iov, 1, &fd, 1);
	}
	if (rc != 0)
		return;
	sentry_oom_fd = -1; /* the sentry's, closed here: open it anew */
	/* The sentry killed by the kernel (its OOM killer: the memory limit
	 * was met on the sentry's side) says nothing, and moat do is the
	 * sentry: its caller would see a bare SIGKILL. The janitor says it,
	 * on the sentry's stderr, which it holds only until the sentry ends,
	 * so that a pipe there still ends with the sandbox. */
	err = janitor_stderr();
	while ((n = read(3, buf, sizeof(buf))) != 0) {
		if (n < 0 && errno != EINTR)
			break;
		if (n > 0 && !told) {
			told = true;
			if (err >= 0)
				close(err);
			err = -1;
		}
	}
	if (!told && err >= 0 && sentry_oom_kills() > 0)
		dprintf(err,
			"moat: the sandbox's sentry was killed by the kernel's "
			"OOM killer (memory limit of %llu bytes); the sandbox "
			"ended with it\n",
			(unsigned long long)S->opts.memory);
	if (err >= 0)
		close(err);
	/* A sentry killed while its guests were paused leaves them frozen,
	 * and a frozen task cannot die: thaw them first. */
	for (i = 0; i < ncgs; i++)
		if (!strcmp(cgs[i].ctl, "freezer"))
			write_str(cg_part(&cgs[i], CG_GUEST, part),
				  "freezer.state", "THAWED");
	/* Each cgroup's parts, the children first. */
	for (int tries = 0; tries < 200; tries++) {
		int left = 0;
		for (i = 0; i < ncgs; i++) {
			static const enum cg_sub order[] = { CG_GUEST,
							     CG_SENTRY,
							     CG_TOP };
			bool busy = false;
			if (!cgs[i].path[0])
				continue;
			for (size_t k = 0; k < ARRAY_SIZE(order); k++) {
				ino_t ino = cgs[i].ino[order[k]];
				struct stat st;
				if (order[k] == CG_SENTRY && !cgs[i].v2)
					continue;
				cg_part(&cgs[i], order[k], part);
				/* at cgroupsPath: gone already (`delete`),
				 * and maybe made again by a new container */
				if (ino &&
				    (stat(part, &st) < 0 || st.st_ino != ino))
					continue;
				if (rmdir(part) < 0 && errno == EBUSY)
					busy = true;
			}
			if (busy)
				left++;
			else
				cgs[i].path[0] = 0;
		}
		if (!left)
			break;
		usleep(25000);
	}
	_exit(0);
}

static int oom_kills_in(int fd)
{
	char buf[512], *p;

	if (fd < 0)
		return 0;
	memset(buf, 0, sizeof(buf));
	if (pread(fd, buf, sizeof(buf) - 1, 0) <= 0)
		return 0;
	p = strstr(buf, oom_key);
	return p ? atoi(p + strlen(oom_key)) : 0;
}

static int oom_kills(void)
{
	return oom_kills_in(oom_fd);
}

void limits_report(int st)
{
	if (janitor_line >= 0) {
		/* An end of the sentry's own: nothing for the janitor to say. */
		if (write(janitor_line, "done", 4) < 0)
			(void)0;
	}
	if (S->opts.memory && sentry_oom_kills() > 0)
		fprintf(stderr,
			"moat: memory limit of %llu bytes reached on the "
			"sentry's side; the kernel killed a helper of the "
			"sentry's\n",
			(unsigned long long)S->opts.memory);
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
