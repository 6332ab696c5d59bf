/* sentry/fs_proc.c: the sandbox's /proc.
 *
 * Everything here is synthesised from the sentry's own state: only the
 * sandbox's virtual pids exist, every path is a guest path, and host data is
 * copied only where it is harmless and filtered (cpuinfo; the numbers of a
 * guest process's own maps, status and stat lines). Host pathnames never
 * appear: /proc/<pid>/maps renames file mappings to the guest paths the
 * sentry recorded at mmap time and drops every name it cannot account for.
 *
 * Vnodes are not cached: each lookup allocates one (pk, pid, num) triple and
 * every operation re-checks that the process (or fd, or thread) still
 * exists, so a stale vnode gives -ENOENT instead of another pid's data.
 * File contents are generated once at open into f->data (seq_file-like
 * snapshot); the file owns them and file_put frees them.
 */
#include "sentry/sysctl.h"
#include "sentry/vfs.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysinfo.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

/* Node kinds. Everything from PK_PID_DIR on is about one process (vn->pid)
 * and dies with it. */
enum proc_kind {
	PK_ROOT,
	PK_SELF,	/* -> "<pid>" */
	PK_THREAD_SELF, /* -> "<pid>/task/<tid>" */
	PK_MOUNTS_LINK, /* -> "self/mounts" */
	PK_CPUINFO,
	PK_MEMINFO,
	PK_UPTIME,
	PK_LOADAVG,
	PK_VERSION,
	PK_FILESYSTEMS,
	PK_STAT,
	PK_SYSCTL, /* /proc/sys and below: vn->num is the node (sysctl.h) */
	/* per process; vn->num is the tid the view is about (fd number for
	 * PK_FD) */
	PK_PID_DIR,
	PK_TID_DIR, /* /proc/<pid>/task/<tid> */
	PK_TASK_DIR,
	PK_FD_DIR,
	PK_FD,
	PK_EXE,
	PK_CWD,
	PK_ROOTLINK,
	PK_CMDLINE,
	PK_COMM,
	PK_ENVIRON,
	PK_STATUS,
	PK_PSTAT,
	PK_STATM,
	PK_MAPS,
	PK_PMOUNTS,
	PK_MOUNTINFO,
	PK_MOUNTSTATS,
	PK_UID_MAP,
	PK_GID_MAP,
	PK_OOM_SCORE,
	PK_OOM_SCORE_ADJ,
};

#define HOST_READ_MAX (16u << 20) /* bound on a host /proc file we copy */

struct pent {
	const char *name;
	int pk;
	mode_t mode;
};

static const struct pent root_ents[] = {
	{ "self", PK_SELF, S_IFLNK | 0777 },
	{ "thread-self", PK_THREAD_SELF, S_IFLNK | 0777 },
	{ "mounts", PK_MOUNTS_LINK, S_IFLNK | 0777 },
	{ "cpuinfo", PK_CPUINFO, S_IFREG | 0444 },
	{ "meminfo", PK_MEMINFO, S_IFREG | 0444 },
	{ "uptime", PK_UPTIME, S_IFREG | 0444 },
	{ "loadavg", PK_LOADAVG, S_IFREG | 0444 },
	{ "version", PK_VERSION, S_IFREG | 0444 },
	{ "filesystems", PK_FILESYSTEMS, S_IFREG | 0444 },
	{ "stat", PK_STAT, S_IFREG | 0444 },
	{ "sys", PK_SYSCTL, S_IFDIR | 0555 },
};

/* Modes as Linux has them; the ones a ptrace-read check guards on Linux
 * (fd, environ, and the links) are additionally checked by may_inspect(). */
static const struct pent pid_ents[] = {
	{ "cmdline", PK_CMDLINE, S_IFREG | 0444 },
	{ "comm", PK_COMM, S_IFREG | 0444 },
	{ "cwd", PK_CWD, S_IFLNK | 0777 },
	{ "environ", PK_ENVIRON, S_IFREG | 0400 },
	{ "exe", PK_EXE, S_IFLNK | 0777 },
	{ "fd", PK_FD_DIR, S_IFDIR | 0500 },
	{ "gid_map", PK_GID_MAP, S_IFREG | 0644 },
	{ "maps", PK_MAPS, S_IFREG | 0444 },
	{ "mountinfo", PK_MOUNTINFO, S_IFREG | 0444 },
	{ "mounts", PK_PMOUNTS, S_IFREG | 0444 },
	{ "mountstats", PK_MOUNTSTATS, S_IFREG | 0400 },
	{ "oom_score", PK_OOM_SCORE, S_IFREG | 0444 },
	{ "oom_score_adj", PK_OOM_SCORE_ADJ, S_IFREG | 0644 },
	{ "root", PK_ROOTLINK, S_IFLNK | 0777 },
	{ "stat", PK_PSTAT, S_IFREG | 0444 },
	{ "statm", PK_STATM, S_IFREG | 0444 },
	{ "status", PK_STATUS, S_IFREG | 0444 },
	{ "task", PK_TASK_DIR, S_IFDIR | 0555 },
	{ "uid_map", PK_UID_MAP, S_IFREG | 0644 },
};

/* ---- small helpers ------------------------------------------------------- */

/* A growable output buffer; oom latches so callers check once at the end. */
struct sbuf {
	char *p;
	size_t len, cap;
	bool oom;
};

static bool sb_reserve(struct sbuf *b, size_t extra)
{
	size_t ncap;
	char *n;

	if (b->oom)
		return false;
	if (b->len + extra + 1 <= b->cap)
		return true;
	ncap = b->cap ? b->cap : 1024;
	while (ncap < b->len + extra + 1)
		ncap *= 2;
	n = realloc(b->p, ncap);
	if (!n) {
		b->oom = true;
		return false;
	}
	b->p = n;
	b->cap = ncap;
	return true;
}

static void sb_add(struct sbuf *b, const void *s, size_t n)
{
	if (!sb_reserve(b, n))
		return;
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = 0;
}

static void sb_puts(struct sbuf *b, const char *s)
{
	sb_add(b, s, strlen(s));
}

MOAT_PRINTF(2, 3) static void sb_printf(struct sbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (!sb_reserve(b, 128))
		return;
	va_start(ap, fmt);
	n = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n >= b->cap - b->len) {
		if (!sb_reserve(b, (size_t)n))
			return;
		va_start(ap, fmt);
		vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
		va_end(ap);
	}
	b->len += (size_t)n;
}

static uint64_t fnv1a(uint64_t h, const char *s)
{
	while (*s)
		h = (h ^ (uint8_t)*s++) * 0x100000001b3ULL;
	return h;
}

#define FNV_BASIS 0xcbf29ce484222325ULL

/* Stable inode number of a guest path (never 0: some tools skip d_ino 0). */
static uint64_t path_ino(const char *path)
{
	uint64_t h = fnv1a(FNV_BASIS, path) & 0xffffffffULL;

	return h ? h : 1;
}

static uint64_t child_ino(const char *dir, const char *name)
{
	uint64_t h = fnv1a(fnv1a(FNV_BASIS, dir), "/");

	h = fnv1a(h, name) & 0xffffffffULL;
	return h ? h : 1;
}

static uint64_t parent_ino(const char *path)
{
	char buf[PATH_MAX];
	char *slash;

	snprintf(buf, sizeof(buf), "%s", path);
	slash = strrchr(buf, '/');
	if (slash == buf)
		slash[1] = 0;
	else if (slash)
		*slash = 0;
	return path_ino(buf);
}

/* "123" -> 123; anything else (sign, leading zero, overflow) -> -1. */
static int parse_num(const char *s)
{
	long v = 0;

	if (!*s || (s[0] == '0' && s[1]) || strlen(s) > 9)
		return -1;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -1;
		v = v * 10 + (*s - '0');
	}
	return (int)v;
}

static int join(char *out, size_t cap, const char *dir, const char *name)
{
	int n = snprintf(out, cap, "%s/%s", dir, name);

	return (n < 0 || (size_t)n >= cap) ? -ENAMETOOLONG : 0;
}

static int new_node(const char *dir, const char *name, int pk, mode_t mode,
		    int pid, int num, struct vnode **out)
{
	char path[PATH_MAX];
	struct vnode *vn;
	int rc = join(path, sizeof(path), dir, name);

	if (rc < 0)
		return rc;
	vn = vnode_new(VN_PROC, mode, path);
	if (!vn)
		return -ENOMEM;
	vn->pk = pk;
	vn->pid = pid;
	vn->num = num;
	*out = vn;
	return 0;
}

static const struct pent *find_ent(const struct pent *tab, size_t n,
				   const char *name)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(tab[i].name, name))
			return &tab[i];
	return NULL;
}

static bool per_process(const struct vnode *vn)
{
	return vn->pk >= PK_PID_DIR;
}

/* The pid namespace /proc shows: its mount namespace's (a pod member's
 * own, where its processes alone are, its first as 1), as Linux's procfs
 * mount shows the one it was mounted from. */
static const struct pidns *shown_ns(void)
{
	return vfs_ns()->pidns;
}

/* pid as the reader's namespace numbers it */
static int vid(int pid)
{
	return pid_to_guest(shown_ns(), pid);
}

/* The last pid given out, as loadavg's fifth field: in the reader's pid
 * namespace (as Linux's is), a member's the highest of its own. */
static int last_pid(void)
{
	const struct pidns *ns = shown_ns();
	int max = 0;

	if (!ns)
		return S->next_pid > 1 ? S->next_pid - 1 : 1;
	for (const struct process *q = S->procs; q; q = q->next)
		if (!q->reaped && q->pidns == ns && q->pid > max)
			max = q->pid;
	return max ? vid(max) : 1;
}

/* The live (not reaped) process a per-process node is about, if the
 * reader's pid namespace holds it, or NULL. */
static struct process *vn_proc(const struct vnode *vn)
{
	struct process *p = proc_by_pid(vn->pid);

	if (!p || !pid_visible(shown_ns(), p))
		return NULL;
	if (vn->pk == PK_TID_DIR) {
		struct task *x = task_by_vtid(vn->num);
		if (!x || x->proc != p)
			return NULL;
	}
	return p;
}

/* Linux guards a process's fds, links, environ and maps with a ptrace-read
 * check (__ptrace_may_access, PTRACE_MODE_READ_FSCREDS); the sandbox's
 * version of it: the caller's fsuid is p's real, effective and saved uid
 * and its fsgid p's three gids, p is dumpable, and p is permitted no
 * capability the caller lacks; or the caller has CAP_SYS_PTRACE.
 * t is NULL for the sentry's own lookups (the CLI), which may see all. */
static int may_inspect(struct task *t, struct process *p)
{
	const struct creds *c;

	if (!t || t->proc == p)
		return 0;
	c = &t->proc->cred;
	if (creds_capable(c, CAP_SYS_PTRACE))
		return 0;
	if (p->nondumpable)
		return -EACCES; /* only with CAP_SYS_PTRACE */
	/* nor one that is permitted more than the caller holds
	 * (cap_ptrace_access_check, as /proc asks: PTRACE_MODE_FSCREDS) */
	if (p->cred.cap.prm & ~c->cap.eff)
		return -EACCES;
	if (c->fsuid == p->cred.ruid && c->fsuid == p->cred.euid &&
	    c->fsuid == p->cred.suid && c->fsgid == p->cred.rgid &&
	    c->fsgid == p->cred.egid && c->fsgid == p->cred.sgid)
		return 0;
	return -EACCES;
}

static struct file *proc_fd_file(struct process *p, int fd)
{
	struct fdtable *fdt = p->fdt;

	if (!fdt || fd < 0 || fd >= fdt->cap)
		return NULL;
	return fdt->ents[fd].f;
}

static const char *mem_dev_name(unsigned int minor)
{
	switch (minor) {
	case 3:
		return "null";
	case 5:
		return "zero";
	case 7:
		return "full";
	case 8:
		return "random";
	case 9:
		return "urandom";
	default:
		return NULL;
	}
}

/* What /proc/<pid>/fd/<n> points to. A path for files with a vnode;
 * "pipe:[n]"-style names otherwise (never a host path: host streams are
 * described by type only). */
static int fd_target(struct file *f, char *buf, size_t cap)
{
	struct stat st;
	bool host = f->hostfd >= 0 && !f->hostfd_shared;
	int n;

	if (f->vn) {
		n = snprintf(buf, cap, "%s", f->vn->path);
	} else if (f->ops && f->ops->stat && f->ops->stat(f, &st) == 0) {
		uint64_t id = st.st_ino; /* host stdio's: opaque already */
		if (S_ISFIFO(st.st_mode)) {
			n = snprintf(buf, cap, "pipe:[%llu]",
				     (unsigned long long)id);
		} else if (S_ISSOCK(st.st_mode)) {
			n = snprintf(buf, cap, "socket:[%llu]",
				     (unsigned long long)id);
		} else if (S_ISCHR(st.st_mode) && major(st.st_rdev) >= 136 &&
			   major(st.st_rdev) <= 143) {
			n = snprintf(buf, cap, "/dev/pts/%u",
				     (major(st.st_rdev) - 136) * 256 +
					     minor(st.st_rdev));
		} else if (S_ISCHR(st.st_mode) && major(st.st_rdev) == 1 &&
			   mem_dev_name(minor(st.st_rdev))) {
			n = snprintf(buf, cap, "/dev/%s",
				     mem_dev_name(minor(st.st_rdev)));
		} else if (S_ISCHR(st.st_mode)) {
			n = snprintf(buf, cap, "/dev/tty");
		} else {
			n = snprintf(buf, cap, "anon_inode:[%s]",
				     host ? "moat-host" : "moat");
		}
	} else {
		void *obj = f->priv ? f->priv : f;
		n = snprintf(buf, cap, "anon_inode:[%u]",
			     opaque_id((uint64_t)(uintptr_t)obj));
	}
	if (n < 0 || (size_t)n >= cap)
		return -ENAMETOOLONG;
	return n;
}

/* Wall-clock time of the sandbox's boot, fixed at first use so that
 * timestamps and btime do not jitter between calls. */
static int64_t boot_realtime_ns(void)
{
	static int64_t boot;
	struct timespec ts;

	if (!boot) {
		clock_gettime(CLOCK_REALTIME, &ts);
		boot = (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec -
		       (now_ns() - S->boot_ns);
	}
	return boot;
}

/* Read a host /proc file (relative to S->host_proc_fd) into b. */
static int read_host(const char *rel, struct sbuf *b)
{
	cleanup_close int fd = -1;
	ssize_t r;

	if (S->host_proc_fd < 0)
		return -ENOENT;
	fd = openat(S->host_proc_fd, rel, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	for (;;) {
		if (b->len >= HOST_READ_MAX)
			return -EFBIG;
		if (!sb_reserve(b, 8192))
			return -ENOMEM;
		r = read(fd, b->p + b->len, b->cap - b->len - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			break;
		b->len += (size_t)r;
		b->p[b->len] = 0;
	}
	return 0;
}

/* Read "<host_pid>/<what>" of a live guest process. Zombies have no host
 * process any more (its host pid may even be reused): nothing is read. */
static int read_host_pid(struct process *p, const char *what, struct sbuf *b)
{
	char rel[64];

	if (p->exited || p->host_pid <= 0)
		return -ESRCH;
	snprintf(rel, sizeof(rel), "%d/%s", (int)p->host_pid, what);
	return read_host(rel, b);
}

/* ---- process mappings ---------------------------------------------------- */

/* What the sentry remembers of file mappings is its own heap, outside the
 * sandbox's memory cgroup (only the reaper and the guests are in it), so it
 * is bounded here, for the whole sandbox. Copied whole at every fork, it
 * once cost 15 MB a child (4096 records of 4 KB paths), zombies included.
 * - A process's list is shared copy-on-write by the processes forked from
 *   it: most exec or exit without mapping anything. It goes at exit: a
 *   zombie has no maps to show.
 * - A guest path is kept once, however many records name it.
 * - Record slots and path bytes have a sandbox-wide budget (~28 MiB in
 *   all). Past it a new mapping is not named: it shows as anonymous in
 *   /proc/<pid>/maps (docs/compat.md), never with another mapping's name.
 */
#define MAPS_MAX 4096			 /* records per process */
#define MAPS_SLOTS_TOTAL (1 << 19)	 /* of all lists: 40 bytes each */
#define MAPS_PATH_BYTES_TOTAL (8u << 20) /* of all interned paths */

struct map_path {
	struct map_path *hnext;
	uint32_t hash;
	int refs; /* records that name it */
	size_t len;
	char s[];
};

/* A recorded file mapping: its guest path and the device and inode the
 * guest's stat() gives for it. */
struct map_rec {
	uint64_t start, end;
	struct map_path *path;
	dev_t dev;
	uint64_t ino;
};

struct map_list {
	int refs; /* processes that share it */
	int n, cap;
	struct map_rec *recs; /* oldest first */
};

static struct map_path *map_paths[4096];
static size_t map_path_bytes; /* of all map_paths, headers included */
static long map_slots;	      /* record slots of all lists */

static uint32_t path_hash(const char *s, size_t len)
{
	uint32_t h = 2166136261u;

	while (len--)
		h = (h ^ (unsigned char)*s++) * 16777619u;
	return h;
}

/* A reference to the interned copy of path; NULL past the budget or out
 * of memory. */
static struct map_path *path_get(const char *path)
{
	size_t len = strlen(path), sz = sizeof(struct map_path) + len + 1;
	uint32_t h = path_hash(path, len);
	struct map_path **b = &map_paths[h % ARRAY_SIZE(map_paths)], *mp;

	for (mp = *b; mp; mp = mp->hnext) {
		if (mp->hash == h && mp->len == len &&
		    !memcmp(mp->s, path, len)) {
			mp->refs++;
			return mp;
		}
	}
	if (map_path_bytes + sz > MAPS_PATH_BYTES_TOTAL)
		return NULL;
	mp = malloc(sz);
	if (!mp)
		return NULL;
	mp->hash = h;
	mp->refs = 1;
	mp->len = len;
	memcpy(mp->s, path, len + 1);
	mp->hnext = *b;
	*b = mp;
	map_path_bytes += sz;
	return mp;
}

static void path_put(struct map_path *mp)
{
	struct map_path **pp;

	if (--mp->refs > 0)
		return;
	for (pp = &map_paths[mp->hash % ARRAY_SIZE(map_paths)]; *pp != mp;
	     pp = &(*pp)->hnext)
		;
	*pp = mp->hnext;
	map_path_bytes -= sizeof(*mp) + mp->len + 1;
	free(mp);
}

static void list_put(struct map_list *l)
{
	int i;

	if (!l || --l->refs > 0)
		return;
	for (i = 0; i < l->n; i++)
		path_put(l->recs[i].path);
	map_slots -= l->cap;
	free(l->recs);
	free(l);
}

/* Room for one more record in l (whose n is below MAPS_MAX): grows it
 * within the budget. */
static bool list_room(struct map_list *l)
{
	int want = l->cap ? l->cap * 2 : 16;
	long left = MAPS_SLOTS_TOTAL - map_slots;
	struct map_rec *n;

	if (l->n < l->cap)
		return true;
	if (want > MAPS_MAX)
		want = MAPS_MAX;
	if (want - l->cap > left)
		want = l->cap + (int)left;
	if (want <= l->cap)
		return false;
	n = realloc(l->recs, (size_t)want * sizeof(*n));
	if (!n)
		return false;
	map_slots += want - l->cap;
	l->recs = n;
	l->cap = want;
	return true;
}

/* p's own list, to be changed: a shared one is copied first. When the
 * copy does not fit in the budget, p forgets the names of all its
 * mappings instead (an empty list). NULL, with p's names forgotten, if
 * not even that could be allocated. */
static struct map_list *list_own(struct process *p)
{
	struct map_list *l = p->maps, *c;
	int i;

	if (l && l->refs == 1)
		return l;
	c = calloc(1, sizeof(*c));
	if (c) {
		c->refs = 1;
		if (l && l->n && l->n <= MAPS_SLOTS_TOTAL - map_slots &&
		    (c->recs = malloc((size_t)l->n * sizeof(*c->recs)))) {
			memcpy(c->recs, l->recs,
			       (size_t)l->n * sizeof(*c->recs));
			for (i = 0; i < l->n; i++)
				c->recs[i].path->refs++;
			c->n = c->cap = l->n;
			map_slots += c->cap;
		}
	}
	list_put(l);
	p->maps = c;
	return c;
}

void maps_clear(struct process *p)
{
	list_put(p->maps);
	p->maps = NULL;
}

/* Drop the records of l that [start, end) covers whole, or, with partly,
 * every one it overlaps at all. */
static void drop_overlapped(struct map_list *l, uint64_t start, uint64_t end,
			    bool partly)
{
	int i, j;

	for (i = j = 0; i < l->n; i++) {
		struct map_rec *x = &l->recs[i];
		bool gone = partly ? x->start < end && x->end > start :
				     x->start >= start && x->end <= end;
		if (gone)
			path_put(x->path);
		else
			l->recs[j++] = *x;
	}
	l->n = j;
}

/* A lookup takes the newest record covering an address, which is the
 * latest mapping placed there. Records a new one covers entirely are
 * dropped, and a list holds MAPS_MAX at most (munmap is native, so the
 * sentry never learns of unmaps; the oldest records go first). A mapping
 * that cannot be recorded (the budget, or out of memory) takes the records
 * it overlaps with it: what shows there then is an anonymous mapping,
 * never a wrong name. */
void maps_add(struct process *p, uint64_t start, uint64_t end, const char *path,
	      dev_t dev, uint64_t ino)
{
	struct map_list *l = list_own(p);
	struct map_path *mp;

	if (!l)
		return;
	mp = path_get(path);
	drop_overlapped(l, start, end, false);
	if (mp && l->n == MAPS_MAX) {
		path_put(l->recs[0].path);
		memmove(l->recs, l->recs + 1,
			(size_t)--l->n * sizeof(*l->recs));
	}
	if (mp && !list_room(l)) {
		path_put(mp);
		mp = NULL;
	}
	if (!mp) {
		drop_overlapped(l, start, end, true);
		return;
	}
	l->recs[l->n++] = (struct map_rec){
		.start = start, .end = end, .path = mp, .dev = dev, .ino = ino
	};
}

void maps_add_vn(struct process *p, uint64_t start, uint64_t end,
		 const struct vnode *vn)
{
	/* vn->st holds what vfs_stat gives the guest for every kind that
	 * can be mapped (rootfs, tmpfs, a mounted host directory). */
	maps_add(p, start, end, vn->path, vn->st.st_dev, vn->st.st_ino);
}

/* At fork: the child shares the parent's list until either changes it. */
void maps_copy(struct process *dst, struct process *src)
{
	list_put(dst->maps);
	dst->maps = src->maps;
	if (dst->maps)
		dst->maps->refs++;
}

static const struct map_rec *maps_find(struct process *p, uint64_t addr)
{
	struct map_list *l = p->maps;
	int i;

	for (i = l ? l->n - 1 : -1; i >= 0; i--)
		if (addr >= l->recs[i].start && addr < l->recs[i].end)
			return &l->recs[i];
	return NULL;
}

/* /proc/<pid>/maps: the host's lines, with every pathname, device and
 * inode the sandbox's own. Host line: "start-end perms offset maj:min
 * inode   name". The host's device and inode numbers are never copied:
 * a file mapping shows what stat() of its guest path shows; anything
 * else (anonymous memory, [heap], [stack], [vdso], a name the sentry
 * cannot account for) shows 00:00 0, as Linux does for anonymous
 * memory. */
static void gen_maps(struct process *p, struct sbuf *b)
{
	struct sbuf host = { 0 };
	char *line, *nl;

	if (read_host_pid(p, "maps", &host) < 0 || !host.p) {
		free(host.p);
		return;
	}
	for (line = host.p; *line; line = nl ? nl + 1 : line + strlen(line)) {
		unsigned long long start, end, off, ino;
		unsigned int maj, min;
		const struct map_rec *rec = NULL;
		char perms[8];
		const char *name;
		int pos = 0, w;

		nl = strchr(line, '\n');
		if (nl)
			*nl = 0;
		if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &start,
			   &end, perms, &off, &maj, &min, &ino, &pos) < 7 ||
		    !pos)
			continue;
		name = line + pos;
		if (!*name) {
			name = NULL;
		} else if (name[0] != '[') {
			/* A file mapping: the guest path the sentry mapped
			 * there, or no name at all. */
			rec = maps_find(p, start);
			name = rec ? rec->path->s : NULL;
		}
		maj = rec ? major(rec->dev) : 0;
		min = rec ? minor(rec->dev) : 0;
		ino = rec ? rec->ino : 0;
		w = (int)b->len;
		sb_printf(b, "%08llx-%08llx %s %08llx %02x:%02x %llu ", start,
			  end, perms, off, maj, min, ino);
		if (name) {
			w = (int)b->len - w;
			if (w < 73)
				sb_printf(b, "%*s", 73 - w, "");
			sb_puts(b, name);
		}
		sb_puts(b, "\n");
	}
	free(host.p);
}

/* ---- generated files ---------------------------------------------------- */

static char proc_state(struct process *p)
{
	if (p->exited)
		return 'Z';
	if (p->leader && p->leader->state == TS_BLOCKED)
		return 'S';
	return 'R';
}

static const char *state_name(char c)
{
	switch (c) {
	case 'Z':
		return "Z (zombie)";
	case 'S':
		return "S (sleeping)";
	default:
		return "R (running)";
	}
}

static int vppid(struct process *p)
{
	return p->pid == 1 ? 0 : vid(p->ppid);
}

/* An NS* line of status: the id in the reader's namespace, then in p's
 * own if that is below it. */
static void ns_ids(struct sbuf *b, const char *key, const struct process *p,
		   int id)
{
	sb_printf(b, "%s:\t%d", key, vid(id));
	if (p->pidns && !shown_ns())
		sb_printf(b, "\t%d", pid_to_guest(p->pidns, id));
	sb_puts(b, "\n");
}

static void sig_masks(struct process *p, uint64_t *ign, uint64_t *cgt)
{
	int s;

	*ign = *cgt = 0;
	for (s = 1; s < 65; s++) {
		if (p->sigact[s].handler == 1)
			*ign |= 1ULL << (s - 1);
		else if (p->sigact[s].handler > 1)
			*cgt |= 1ULL << (s - 1);
	}
}

/* Copy the host status lines named in keys (numbers about the guest's own
 * memory and scheduling; nothing that names the host). */
static void copy_host_lines(struct sbuf *b, const char *host,
			    const char *const *keys, size_t nkeys)
{
	const char *line, *nl;
	size_t i;

	if (!host)
		return;
	for (line = host; *line; line = nl ? nl + 1 : line + strlen(line)) {
		nl = strchr(line, '\n');
		for (i = 0; i < nkeys; i++) {
			size_t k = strlen(keys[i]);
			if (!strncmp(line, keys[i], k) && line[k] == ':') {
				sb_add(b, line,
				       nl ? (size_t)(nl - line + 1) :
					    strlen(line));
				if (!nl)
					sb_puts(b, "\n");
				break;
			}
		}
	}
}

static const char *host_field(const char *host, const char *key, char *out,
			      size_t cap)
{
	const char *line, *nl;
	size_t k = strlen(key);

	if (!host)
		return NULL;
	for (line = host; *line; line = nl ? nl + 1 : line + strlen(line)) {
		nl = strchr(line, '\n');
		if (!strncmp(line, key, k) && line[k] == ':') {
			const char *v = line + k + 1;
			size_t n;
			while (*v == '\t' || *v == ' ')
				v++;
			n = nl ? (size_t)(nl - v) : strlen(v);
			if (n >= cap)
				n = cap - 1;
			memcpy(out, v, n);
			out[n] = 0;
			return out;
		}
	}
	return NULL;
}

static void gen_status(struct process *p, int tid, struct sbuf *b)
{
	static const char *const vm_keys[] = {
		"VmPeak",   "VmSize", "VmLck",	 "VmPin",
		"VmHWM",    "VmRSS",  "RssAnon", "RssFile",
		"RssShmem", "VmData", "VmStk",	 "VmExe",
		"VmLib",    "VmPTE",  "VmSwap",	 "HugetlbPages",
	};
	static const char *const tail_keys[] = {
		"Cpus_allowed",
		"Cpus_allowed_list",
		"Mems_allowed",
		"Mems_allowed_list",
		"voluntary_ctxt_switches",
		"nonvoluntary_ctxt_switches",
	};
	struct sbuf host = { 0 };
	const struct creds *c = &p->cred;
	char pnd[32], shd[32], blk[32];
	uint64_t ign, cgt;
	char st = proc_state(p);
	int i;

	if (read_host_pid(p, "status", &host) < 0) {
		free(host.p);
		host.p = NULL;
	}
	sig_masks(p, &ign, &cgt);
	sb_printf(b, "Name:\t%.16s\n", p->comm);
	sb_printf(b, "Umask:\t%04o\n", (unsigned)p->umask);
	sb_printf(b, "State:\t%s\n", state_name(st));
	sb_printf(b,
		  "Tgid:\t%d\nNgid:\t0\nPid:\t%d\nPPid:\t%d\nTracerPid:\t0\n",
		  vid(p->pid), vid(tid), vppid(p));
	sb_printf(b, "Uid:\t%u\t%u\t%u\t%u\n", (unsigned)c->ruid,
		  (unsigned)c->euid, (unsigned)c->suid, (unsigned)c->fsuid);
	sb_printf(b, "Gid:\t%u\t%u\t%u\t%u\n", (unsigned)c->rgid,
		  (unsigned)c->egid, (unsigned)c->sgid, (unsigned)c->fsgid);
	sb_printf(b, "FDSize:\t%d\n", p->fdt && p->fdt->cap ? p->fdt->cap : 64);
	sb_puts(b, "Groups:\t");
	for (i = 0; i < c->ngroups && i < (int)ARRAY_SIZE(c->groups); i++)
		sb_printf(b, "%s%u", i ? " " : "", (unsigned)c->groups[i]);
	sb_puts(b, "\n");
	ns_ids(b, "NStgid", p, p->pid);
	ns_ids(b, "NSpid", p, tid);
	ns_ids(b, "NSpgid", p, p->pgid);
	ns_ids(b, "NSsid", p, p->sid);
	copy_host_lines(b, host.p, vm_keys, ARRAY_SIZE(vm_keys));
	sb_printf(b, "CoreDumping:\t0\nTHP_enabled:\t1\n");
	sb_printf(b, "Threads:\t%d\n", p->nthreads > 0 ? p->nthreads : 1);
	sb_printf(b, "SigQ:\t0/%llu\n",
		  (unsigned long long)(p->rlim[RLIMIT_SIGPENDING].cur ?
					       p->rlim[RLIMIT_SIGPENDING].cur :
					       63457));
	/* Pending and blocked masks live in the host task (sigprocmask is
	 * native); ignored and caught come from the sentry's sigaction table. */
	sb_printf(b, "SigPnd:\t%s\nShdPnd:\t%s\nSigBlk:\t%s\n",
		  host_field(host.p, "SigPnd", pnd, sizeof(pnd)) ?:
			  "0000000000000000",
		  host_field(host.p, "ShdPnd", shd, sizeof(shd)) ?:
			  "0000000000000000",
		  host_field(host.p, "SigBlk", blk, sizeof(blk)) ?:
			  "0000000000000000");
	sb_printf(b, "SigIgn:\t%016llx\nSigCgt:\t%016llx\n",
		  (unsigned long long)ign, (unsigned long long)cgt);
	sb_printf(b,
		  "CapInh:\t%016llx\nCapPrm:\t%016llx\nCapEff:\t%016llx\n"
		  "CapBnd:\t%016llx\nCapAmb:\t%016llx\n",
		  (unsigned long long)c->cap.inh,
		  (unsigned long long)c->cap.prm,
		  (unsigned long long)c->cap.eff,
		  (unsigned long long)c->cap.bnd,
		  (unsigned long long)c->cap.amb);
	sb_printf(b, "NoNewPrivs:\t%d\n", p->no_new_privs);
	sb_puts(b, "Seccomp:\t0\nSeccomp_filters:\t0\n"
		   "Speculation_Store_Bypass:\tthread vulnerable\n"
		   "SpeculationIndirectBranch:\tconditional enabled\n");
	copy_host_lines(b, host.p, tail_keys, ARRAY_SIZE(tail_keys));
	free(host.p);
}

/* /proc/<pid>/stat: the host's numbers (times, sizes, guest addresses) with
 * every identity field replaced by the sandbox's. Fields are numbered as in
 * proc(5), 1-based. */
static void gen_pstat(struct process *p, int tid, struct sbuf *b)
{
	struct sbuf host = { 0 };
	const char *f[53] = { 0 };
	char *s, *save = NULL;
	int i, n = 3;

	if (read_host_pid(p, "stat", &host) == 0 && host.p &&
	    (s = strrchr(host.p, ')')) != NULL) {
		/* After "pid (comm)": field 3 on. */
		for (s = strtok_r(s + 1, " \n", &save); s && n < 53;
		     s = strtok_r(NULL, " \n", &save))
			f[n++] = s;
	}
	sb_printf(b, "%d (%.16s) %c %d %d %d 0 -1", vid(tid), p->comm,
		  proc_state(p), vppid(p), vid(p->pgid), vid(p->sid));
	for (i = 9; i <= 52; i++) {
		const char *v = f[i] ? f[i] : "0";
		if (i == 20)
			sb_printf(b, " %d", p->nthreads > 0 ? p->nthreads : 1);
		else if (i == 22) /* starttime: host boot-relative; unknown */
			sb_puts(b, " 0");
		else if (i == 38) /* exit_signal */
			sb_puts(b, " 17");
		else
			sb_printf(b, " %s", v);
	}
	sb_puts(b, "\n");
	free(host.p);
}

/* /proc/<pid>/uid_map or gid_map: the OCI config's mappings, else the
 * initial namespace's whole range, which is what the sandbox's ids are:
 * its own, not a slice of the host's (a process never sees a host id). */
static void gen_id_map(struct sbuf *b, const struct id_map *m, size_t n)
{
	size_t i;

	if (!n) {
		sb_printf(b, "%10u %10u %10u\n", 0u, 0u, 4294967295u);
		return;
	}
	for (i = 0; i < n; i++)
		sb_printf(b, "%10u %10u %10u\n", m[i].inside, m[i].outside,
			  m[i].count);
}

/* /proc/<pid>/oom_score: Linux's (6.x proc_oom_score): the badness of
 * its resident pages in the sandbox's memory, plus oom_score_adj in
 * thousandths of it, scaled into [0, 2000] and by 2/3. */
static void gen_oom_score(struct process *p, struct sbuf *b)
{
	struct sbuf st = { 0 };
	struct sysinfo si;
	unsigned long long total = 0, rss = 0, size;
	long long badness, points;

	if (p->oom_score_adj == -1000) { /* OOM_SCORE_ADJ_MIN: never */
		sb_puts(b, "0\n");
		return;
	}
	if (sysinfo(&si) == 0)
		total = ((unsigned long long)si.totalram + si.totalswap) *
			(si.mem_unit ? si.mem_unit : 1);
	if (S->opts.memory && (!total || S->opts.memory < total))
		total = S->opts.memory;
	total /= 4096;
	if (!total)
		total = 1;
	if (read_host_pid(p, "statm", &st) == 0 && st.p &&
	    sscanf(st.p, "%llu %llu", &size, &rss) != 2)
		rss = 0;
	free(st.p);
	badness = (long long)rss +
		  (long long)p->oom_score_adj * (long long)(total / 1000);
	points = (1000 + badness * 1000 / (long long)total) * 2 / 3;
	sb_printf(b, "%lld\n", points < 0 ? 0 : points);
}

/* /proc/<pid>/mountinfo, mounts and mountstats: the sentry's mount table
 * (vfs_mount_table), one line per mount. Every process has the same view. */
static void gen_mount_table(struct sbuf *b, enum mount_style style)
{
	struct vfs_mount_info t[VFS_MOUNTS_TABLE_MAX];
	size_t n = vfs_mount_table(t, ARRAY_SIZE(t));

	for (size_t i = 0; i < n; i++) {
		size_t len = mount_format(NULL, 0, &t[i], style);

		if (!sb_reserve(b, len))
			return;
		mount_format(b->p + b->len, len + 1, &t[i], style);
		b->len += len;
	}
}

static void meminfo_line(struct sbuf *b, const char *name,
			 unsigned long long kb)
{
	sb_printf(b, "%-16s%8llu kB\n", name, kb);
}

void procfs_mem(struct sandbox_mem *m)
{
	struct sysinfo si;
	unsigned long long unit;

	if (sysinfo(&si) < 0)
		memset(&si, 0, sizeof(si));
	unit = si.mem_unit ? si.mem_unit : 1;
	m->total = si.totalram * unit / 1024;
	m->free = si.freeram * unit / 1024;
	m->avail = (si.freeram + si.bufferram) * unit / 1024;
	m->swap_total = si.totalswap * unit / 1024;
	m->swap_free = si.freeswap * unit / 1024;
	m->shared = si.sharedram * unit / 1024;
	if (S->opts.memory) {
		unsigned long long lim = S->opts.memory / 1024;
		if (m->total > lim)
			m->total = lim;
		if (m->free > lim)
			m->free = lim;
		if (m->avail > lim)
			m->avail = lim;
	}
}

static void gen_meminfo(struct sbuf *b)
{
	struct sandbox_mem m;
	unsigned long long total, freek;

	procfs_mem(&m);
	total = m.total;
	freek = m.free;
	meminfo_line(b, "MemTotal:", total);
	meminfo_line(b, "MemFree:", freek);
	meminfo_line(b, "MemAvailable:", m.avail);
	meminfo_line(b, "Buffers:", 0);
	meminfo_line(b, "Cached:", 0);
	meminfo_line(b, "SwapCached:", 0);
	meminfo_line(b, "Active:", total - freek);
	meminfo_line(b, "Inactive:", 0);
	meminfo_line(b, "SwapTotal:", m.swap_total);
	meminfo_line(b, "SwapFree:", m.swap_free);
	meminfo_line(b, "Dirty:", 0);
	meminfo_line(b, "Writeback:", 0);
	meminfo_line(b, "AnonPages:", total - freek);
	meminfo_line(b, "Mapped:", 0);
	meminfo_line(b, "Shmem:", m.shared);
	meminfo_line(b, "CommitLimit:", total);
	meminfo_line(b, "Committed_AS:", total - freek);
	meminfo_line(b, "VmallocTotal:", 34359738367ULL);
	sb_puts(b, "HugePages_Total:       0\nHugePages_Free:        0\n"
		   "HugePages_Rsvd:        0\nHugePages_Surp:        0\n");
	meminfo_line(b, "Hugepagesize:", 2048);
}

static void count_tasks(int *running, int *total)
{
	struct task *x;

	*running = *total = 0;
	for (x = S->tasks; x; x = x->next) {
		if (x->state == TS_DEAD)
			continue;
		(*total)++;
		if (x->state != TS_BLOCKED)
			(*running)++;
	}
}

static void gen_stat(struct sbuf *b)
{
	cpu_set_t cpus;
	int running, total, i, n = 0;

	count_tasks(&running, &total);
	/* CPU times are zero: the host's would describe other tenants. The
	 * per-CPU lines matter: glibc counts them for get_nprocs() when /sys
	 * is absent. The CPUs are those the sandbox may use, the set its
	 * sched_getaffinity reports: moat's affinity when it started, not the
	 * sentry's own (it pins itself to one CPU; platform/ptrace.c). */
	cpus = S->cpus;
	sb_puts(b, "cpu  0 0 0 0 0 0 0 0 0 0\n");
	for (i = 0; i < CPU_SETSIZE; i++) {
		if (!CPU_ISSET(i, &cpus))
			continue;
		sb_printf(b, "cpu%d 0 0 0 0 0 0 0 0 0 0\n", i);
		n++;
	}
	if (!n)
		sb_puts(b, "cpu0 0 0 0 0 0 0 0 0 0 0\n");
	sb_printf(b,
		  "intr 0\nctxt 0\nbtime %lld\nprocesses %d\n"
		  "procs_running %d\nprocs_blocked 0\n"
		  "softirq 0 0 0 0 0 0 0 0 0 0 0\n",
		  (long long)(boot_realtime_ns() / 1000000000LL),
		  S->next_pid > 1 ? S->next_pid - 1 : 1, running);
}

static void gen_cmdline(struct process *p, struct sbuf *b)
{
	if (p->cmdline && p->cmdline->len)
		sb_add(b, p->cmdline->s, p->cmdline->len);
}

/* Generate the contents of a file node into b. */
static int generate(struct vnode *vn, struct process *p, struct sbuf *b)
{
	struct utsname u;
	int64_t up;
	int running, total;

	switch (vn->pk) {
	case PK_CPUINFO: {
		int rc = read_host("cpuinfo", b);
		if (rc == -ENOMEM)
			return rc;
		if (rc < 0)
			sb_puts(b, "processor\t: 0\n\n");
		return 0;
	}
	case PK_MEMINFO:
		gen_meminfo(b);
		return 0;
	case PK_UPTIME:
		up = now_ns() - S->boot_ns;
		if (up < 0)
			up = 0;
		up /= 10000000; /* centiseconds */
		sb_printf(b, "%lld.%02lld %lld.%02lld\n", (long long)(up / 100),
			  (long long)(up % 100), (long long)(up / 100),
			  (long long)(up % 100));
		return 0;
	case PK_LOADAVG:
		count_tasks(&running, &total);
		sb_printf(b, "0.00 0.00 0.00 %d/%d %d\n", running, total,
			  last_pid());
		return 0;
	case PK_VERSION:
		/* uname's release and version (sys_uname) */
		if (uname(&u) < 0)
			memset(&u, 0, sizeof(u));
		sb_printf(b, "Linux version %s (moat@moat) (gcc) %s\n",
			  u.release, MOAT_UTS_VERSION);
		return 0;
	case PK_SYSCTL: {
		char text[SYSCTL_TEXT_MAX];
		int n = sysctl_read(vn->num, text, sizeof(text));
		if (n < 0)
			return n;
		sb_add(b, text, (size_t)n);
		return 0;
	}
	case PK_FILESYSTEMS:
		sb_puts(b, "nodev\tsysfs\nnodev\ttmpfs\nnodev\tproc\n"
			   "nodev\tdevtmpfs\nnodev\t9p\n");
		return 0;
	case PK_STAT:
		gen_stat(b);
		return 0;
	case PK_CMDLINE:
		gen_cmdline(p, b);
		return 0;
	case PK_COMM:
		sb_printf(b, "%.16s\n", p->comm);
		return 0;
	case PK_ENVIRON:
		return 0; /* the environment is the process's own business */
	case PK_STATUS:
		gen_status(p, vn->num, b);
		return 0;
	case PK_PSTAT:
		gen_pstat(p, vn->num, b);
		return 0;
	case PK_STATM: {
		int rc = read_host_pid(p, "statm", b);
		if (rc == -ENOMEM)
			return rc;
		if (rc < 0) {
			b->len = 0;
			sb_puts(b, "0 0 0 0 0 0 0\n");
		}
		return 0;
	}
	case PK_MAPS:
		gen_maps(p, b);
		return 0;
	case PK_PMOUNTS:
		gen_mount_table(b, MOUNT_STYLE_MOUNTS);
		return b->oom ? -ENOMEM : 0;
	case PK_MOUNTINFO:
		gen_mount_table(b, MOUNT_STYLE_MOUNTINFO);
		return b->oom ? -ENOMEM : 0;
	case PK_MOUNTSTATS:
		gen_mount_table(b, MOUNT_STYLE_MOUNTSTATS);
		return b->oom ? -ENOMEM : 0;
	case PK_UID_MAP:
		gen_id_map(b, S->opts.uid_maps, S->opts.nuid_maps);
		return 0;
	case PK_GID_MAP:
		gen_id_map(b, S->opts.gid_maps, S->opts.ngid_maps);
		return 0;
	case PK_OOM_SCORE:
		gen_oom_score(p, b);
		return 0;
	case PK_OOM_SCORE_ADJ:
		sb_printf(b, "%d\n", p->oom_score_adj);
		return 0;
	default:
		return -EINVAL;
	}
}

/* ---- file operations ------------------------------------------------------ */

static int proc_fstat(struct file *f, struct stat *st)
{
	return procfs_stat(f->vn, st);
}

static void emit_table(struct dirent_sink *s, const char *dir,
		       const struct pent *tab, size_t n, bool skip_task)
{
	size_t i;

	for (i = 0; i < n; i++) {
		unsigned char type = S_ISDIR(tab[i].mode) ? DT_DIR :
				     S_ISLNK(tab[i].mode) ? DT_LNK :
							    DT_REG;
		if (skip_task && tab[i].pk == PK_TASK_DIR)
			continue;
		if (!dirent_emit(s, child_ino(dir, tab[i].name), type,
				 tab[i].name))
			return;
	}
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

static void emit_num(struct dirent_sink *s, const char *dir, int v,
		     unsigned char type)
{
	char name[16];

	snprintf(name, sizeof(name), "%d", v);
	dirent_emit(s, child_ino(dir, name), type, name);
}

/* Emit the pids of all live processes, ascending like Linux. */
static int emit_pids(struct dirent_sink *s, const char *dir)
{
	struct process *p;
	size_t n = 0, i = 0;
	int *pids;

	for (p = S->procs; p; p = p->next)
		if (!p->reaped)
			n++;
	pids = malloc((n ? n : 1) * sizeof(*pids));
	if (!pids)
		return -ENOMEM;
	for (p = S->procs; p && i < n; p = p->next)
		if (!p->reaped && pid_visible(shown_ns(), p))
			pids[i++] = vid(p->pid);
	qsort(pids, i, sizeof(*pids), cmp_int);
	for (n = 0; n < i && !s->full; n++)
		emit_num(s, dir, pids[n], DT_DIR);
	free(pids);
	return 0;
}

static int emit_tids(struct dirent_sink *s, const char *dir, struct process *p)
{
	struct task *x;
	size_t n = 0, i = 0;
	int *tids;

	for (x = S->tasks; x; x = x->next)
		if (x->proc == p && x->state != TS_DEAD)
			n++;
	tids = malloc((n ? n : 1) * sizeof(*tids));
	if (!tids)
		return -ENOMEM;
	for (x = S->tasks; x && i < n; x = x->next)
		if (x->proc == p && x->state != TS_DEAD)
			tids[i++] = vid(x->tid);
	qsort(tids, i, sizeof(*tids), cmp_int);
	for (n = 0; n < i && !s->full; n++)
		emit_num(s, dir, tids[n], DT_DIR);
	free(tids);
	return 0;
}

static long proc_getdents(struct task *t, struct file *f, struct dirent_sink *s)
{
	struct vnode *vn = f->vn;
	struct process *p = NULL;
	int rc = 0;

	(void)t;
	if (!vn || !S_ISDIR(vn->mode))
		return -ENOTDIR;
	if (per_process(vn) && !(p = vn_proc(vn)))
		return -ENOENT;
	if (vn->pk == PK_FD_DIR) {
		/* Positions are fd numbers (+3), not indexes: a program that
		 * closes the fds it lists as it goes (Python's subprocess, one
		 * entry a call) must not skip any. */
		int64_t pos = f->dir_index;
		int fd;

		s->skip = 0;
		if (pos < 1) {
			s->index = 0;
			if (!dirent_emit(s, path_ino(vn->path), DT_DIR, "."))
				goto fd_out;
			pos = 1;
		}
		if (pos < 2) {
			s->index = 1;
			if (!dirent_emit(s, parent_ino(vn->path), DT_DIR, ".."))
				goto fd_out;
			pos = 2;
		}
		for (fd = (int)(pos - 2); p->fdt && fd < p->fdt->cap; fd++) {
			if (!p->fdt->ents[fd].f)
				continue;
			s->index = fd + 2;
			emit_num(s, vn->path, fd, DT_LNK);
			if (s->full)
				break;
			pos = fd + 3;
		}
fd_out:
		f->dir_index = pos;
		return (long)s->len;
	}
	s->skip = f->dir_index;
	s->index = 0;
	if (!dirent_emit(s, path_ino(vn->path), DT_DIR, ".") ||
	    !dirent_emit(s, parent_ino(vn->path), DT_DIR, ".."))
		goto out;
	switch (vn->pk) {
	case PK_ROOT:
		emit_table(s, vn->path, root_ents, ARRAY_SIZE(root_ents),
			   false);
		if (!s->full)
			rc = emit_pids(s, vn->path);
		break;
	case PK_SYSCTL: {
		int i;
		for (i = sysctl_next(vn->num, -1); i >= 0;
		     i = sysctl_next(vn->num, i)) {
			const char *name = sysctl_name(i);
			if (!dirent_emit(s, child_ino(vn->path, name),
					 S_ISDIR(sysctl_mode(i)) ? DT_DIR :
								   DT_REG,
					 name))
				break;
		}
		break;
	}
	case PK_PID_DIR:
	case PK_TID_DIR:
		emit_table(s, vn->path, pid_ents, ARRAY_SIZE(pid_ents),
			   vn->pk == PK_TID_DIR);
		break;
	case PK_TASK_DIR:
		rc = emit_tids(s, vn->path, p);
		break;
	default:
		break;
	}
out:
	f->dir_index = s->index;
	if (rc < 0 && s->len == 0)
		return rc;
	return (long)s->len;
}

/* Linux's __set_oom_adj: a number from -1000 to 1000 (base 0, blanks
 * around it; the first 12 bytes of the write count); lowering it below
 * the floor needs CAP_SYS_RESOURCE, and a writer that has it sets the
 * floor. The whole write is taken. */
static long write_oom_score_adj(struct task *t, struct process *p,
				const char *buf, size_t n)
{
	char tmp[13], *s, *end;
	long v;
	bool cap = creds_capable(&t->proc->cred, CAP_SYS_RESOURCE);

	memset(tmp, 0, sizeof(tmp));
	memcpy(tmp, buf, n < sizeof(tmp) - 1 ? n : sizeof(tmp) - 1);
	for (s = tmp; *s == ' ' || (*s >= '\t' && *s <= '\r'); s++)
		;
	end = s + strlen(s);
	while (end > s &&
	       (end[-1] == ' ' || (end[-1] >= '\t' && end[-1] <= '\r')))
		*--end = 0;
	errno = 0;
	v = strtol(s, &end, 0);
	if (errno || end == s || *end || v < -1000 || v > 1000)
		return -EINVAL;
	if (v < p->oom_score_adj_min && !cap)
		return -EACCES;
	p->oom_score_adj = (int)v;
	if (cap)
		p->oom_score_adj_min = (int)v;
	return (long)n;
}

/* Writes to /proc/<pid> files: oom_score_adj's; a uid_map or gid_map is
 * written once, before the namespace has a process, so never again. */
static long proc_write(struct task *t, struct file *f, const void *buf,
		       size_t n, int64_t *off)
{
	struct process *p = vn_proc(f->vn);

	(void)off;
	if (!p)
		return -ESRCH;
	switch (f->vn->pk) {
	case PK_OOM_SCORE_ADJ:
		return write_oom_score_adj(t, p, buf, n);
	case PK_UID_MAP:
	case PK_GID_MAP:
		return -EPERM;
	default:
		return -EBADF;
	}
}

static const struct file_ops proc_rw_ops = {
	.read = file_data_read,
	.write = proc_write,
	.poll = file_always_ready,
	.stat = proc_fstat,
};

static const struct file_ops proc_data_ops = {
	.read = file_data_read,
	.write = file_write_ebadf,
	.poll = file_always_ready,
	.stat = proc_fstat,
};

static const struct file_ops proc_dir_ops = {
	.read = file_read_isdir,
	.write = file_write_ebadf,
	.poll = file_always_ready,
	.getdents = proc_getdents,
	.stat = proc_fstat,
};

/* ---- the vfs entry points ------------------------------------------------- */

struct vnode *procfs_root(void)
{
	static struct vnode *root;

	if (!root) {
		root = vnode_new(VN_PROC, S_IFDIR | 0555, "/proc");
		if (!root)
			return NULL;
		root->pk = PK_ROOT;
		/* Lives as long as the sentry, like the dentry cache. */
		root->cached = true;
	}
	return root;
}

static int fd_link_mode(struct file *f)
{
	switch (f->flags & O_ACCMODE) {
	case O_RDONLY:
		return S_IFLNK | 0500;
	case O_WRONLY:
		return S_IFLNK | 0300;
	default:
		return S_IFLNK | 0700;
	}
}

int procfs_lookup(struct task *t, struct vnode *dir, const char *name,
		  struct vnode **out)
{
	const struct pent *e;
	struct process *p = NULL;
	struct task *x;
	int n;

	if (!S_ISDIR(dir->mode))
		return -ENOTDIR;
	if (per_process(dir) && !(p = vn_proc(dir)))
		return -ENOENT;
	switch (dir->pk) {
	case PK_ROOT:
		e = find_ent(root_ents, ARRAY_SIZE(root_ents), name);
		if (e && (e->pk == PK_SELF || e->pk == PK_THREAD_SELF)) {
			/* "self" is the reader; without one (the CLI) there
			 * is none. */
			if (!t)
				return -ENOENT;
			return new_node(dir->path, name, e->pk, e->mode,
					t->proc->pid, t->tid, out);
		}
		if (e && e->pk == PK_SYSCTL)
			return new_node(dir->path, name, PK_SYSCTL, e->mode, 0,
					SYSCTL_ROOT, out);
		if (e)
			return new_node(dir->path, name, e->pk, e->mode, 0, 0,
					out);
		n = parse_num(name);
		if (n <= 0)
			return -ENOENT;
		/* Only the sandbox's pids; a thread's tid also resolves, as
		 * on Linux (hidden from the listing). */
		p = proc_by_vpid(shown_ns(), n);
		if (!p) {
			x = task_by_guest_tid(shown_ns(), n);
			if (!x || !x->proc || x->proc->reaped)
				return -ENOENT;
			p = x->proc;
		}
		return new_node(dir->path, name, PK_PID_DIR, S_IFDIR | 0555,
				p->pid, pid_from_guest(shown_ns(), n), out);
	case PK_SYSCTL:
		n = sysctl_lookup(dir->num, name);
		if (n < 0)
			return n;
		return new_node(dir->path, name, PK_SYSCTL, sysctl_mode(n), 0,
				n, out);
	case PK_PID_DIR:
	case PK_TID_DIR:
		e = find_ent(pid_ents, ARRAY_SIZE(pid_ents), name);
		if (e && e->pk == PK_TASK_DIR && dir->pk == PK_TID_DIR)
			return -ENOENT;
		if (!e)
			return -ENOENT;
		return new_node(dir->path, name, e->pk, e->mode, dir->pid,
				dir->num, out);
	case PK_TASK_DIR:
		n = parse_num(name);
		x = n > 0 ? task_by_guest_tid(shown_ns(), n) : NULL;
		if (!x || x->proc != p)
			return -ENOENT;
		return new_node(dir->path, name, PK_TID_DIR, S_IFDIR | 0555,
				dir->pid, x->tid, out);
	case PK_FD_DIR: {
		struct file *f;
		int rc = may_inspect(t, p);
		if (rc < 0)
			return rc;
		n = parse_num(name);
		f = proc_fd_file(p, n);
		if (!f)
			return -ENOENT;
		return new_node(dir->path, name, PK_FD, (mode_t)fd_link_mode(f),
				dir->pid, n, out);
	}
	default:
		return -ENOTDIR;
	}
}

static int put_link(char *buf, size_t cap, const char *s)
{
	size_t n = strlen(s);

	if (n >= cap)
		return -ENAMETOOLONG;
	memcpy(buf, s, n + 1);
	return (int)n;
}

int procfs_readlink(struct task *t, struct vnode *vn, char *buf, size_t cap)
{
	char tmp[PATH_MAX];
	struct process *p = NULL;
	struct file *f;
	int rc;

	if (!S_ISLNK(vn->mode))
		return -EINVAL;
	if (per_process(vn)) {
		p = vn_proc(vn);
		if (!p)
			return -ENOENT;
		rc = may_inspect(t, p);
		if (rc < 0)
			return rc;
	}
	switch (vn->pk) {
	case PK_SELF:
		/* The reader's own pid; vn->pid (the looker-up) when the
		 * caller has no task at hand. */
		snprintf(tmp, sizeof(tmp), "%d",
			 vid(t ? t->proc->pid : vn->pid));
		return put_link(buf, cap, tmp);
	case PK_THREAD_SELF:
		snprintf(tmp, sizeof(tmp), "%d/task/%d",
			 vid(t ? t->proc->pid : vn->pid),
			 vid(t ? t->tid : vn->num));
		return put_link(buf, cap, tmp);
	case PK_MOUNTS_LINK:
		return put_link(buf, cap, "self/mounts");
	case PK_EXE:
		if (!p->exe || !p->exe->path)
			return -ENOENT;
		return put_link(buf, cap, p->exe->path);
	case PK_CWD:
		if (!p->cwd || !p->cwd->path)
			return -ENOENT;
		return put_link(buf, cap, p->cwd->path);
	case PK_ROOTLINK:
		/* The sandbox root: never a host path. */
		return put_link(buf, cap, "/");
	case PK_FD:
		f = proc_fd_file(p, vn->num);
		if (!f)
			return -ENOENT;
		rc = fd_target(f, tmp, sizeof(tmp));
		if (rc < 0)
			return rc;
		return put_link(buf, cap, tmp);
	default:
		return -EINVAL;
	}
}

int procfs_stat(struct vnode *vn, struct stat *st)
{
	int64_t boot = boot_realtime_ns();
	struct process *p = NULL;

	memset(st, 0, sizeof(*st));
	if (per_process(vn)) {
		p = vn_proc(vn);
		if (!p)
			return -ENOENT;
		if (vn->pk == PK_FD && !proc_fd_file(p, vn->num))
			return -ENOENT;
		/* Linux's task_dump_owner: a process that is not dumpable
		 * has root's files, all but its world-readable directories
		 * (/proc/PID itself: ps reads its owner there). */
		bool rooted = p->nondumpable &&
			      !(S_ISDIR(vn->mode) && (vn->mode & 0777) == 0555);

		st->st_uid = rooted ? 0 : p->cred.euid;
		st->st_gid = rooted ? 0 : p->cred.egid;
	}
	st->st_dev = VFS_DEV_PROC;
	st->st_ino = path_ino(vn->path);
	st->st_mode = vn->mode;
	st->st_nlink = S_ISDIR(vn->mode) ? 2 : 1;
	st->st_blksize = 1024;
	st->st_atim.tv_sec = st->st_mtim.tv_sec = st->st_ctim.tv_sec =
		boot / 1000000000LL;
	st->st_atim.tv_nsec = st->st_mtim.tv_nsec = st->st_ctim.tv_nsec =
		boot % 1000000000LL;
	return 0;
}

bool procfs_self_access(struct task *t, struct vnode *vn)
{
	/* Linux's proc_fd_permission: the fd directory is 0500 and, for a
	 * process that is not dumpable (one that dropped root), root's; the
	 * process itself gets in all the same, or it could not close its
	 * own fds (closefrom) nor name them (ttyname). Its other 0400 and
	 * 0500 entries (environ here; auxv, map_files there) have no such
	 * rule. The fds themselves are may_inspect's to guard. */
	return t && vn->kind == VN_PROC && vn->pk == PK_FD_DIR &&
	       vn_proc(vn) == t->proc;
}

int procfs_open(struct task *t, struct vnode *vn, int flags, struct file **out)
{
	struct process *p = NULL;
	struct sbuf b = { 0 };
	struct file *f;
	int rc;

	if (per_process(vn)) {
		p = vn_proc(vn);
		if (!p)
			return -ENOENT;
	}
	/* Reached only with O_NOFOLLOW (or O_PATH, which vfs_open handles):
	 * the resolver follows every other symlink itself. */
	if (S_ISLNK(vn->mode))
		return -ELOOP;
	flags &= ~(O_CREAT | O_EXCL | O_NOCTTY | O_TRUNC | O_CLOEXEC);
	if (S_ISDIR(vn->mode)) {
		if ((flags & O_ACCMODE) != O_RDONLY)
			return -EISDIR;
		if (vn->pk == PK_FD_DIR && (rc = may_inspect(t, p)) < 0)
			return rc;
		f = file_new(&proc_dir_ops, flags);
		if (!f)
			return -errno;
		f->vn = vnode_get(vn);
		*out = f;
		return 0;
	}
	if (flags & O_DIRECTORY)
		return -ENOTDIR;
	/* Writable: the 0644 files (vfs_access checked the owner). */
	if ((flags & O_ACCMODE) != O_RDONLY && !(vn->mode & 0200))
		return -EACCES;
	if ((vn->pk == PK_ENVIRON || vn->pk == PK_MAPS) &&
	    (rc = may_inspect(t, p)) < 0)
		return rc;
	rc = generate(vn, p, &b);
	if (rc == 0 && b.oom)
		rc = -ENOMEM;
	if (rc < 0) {
		free(b.p);
		return rc;
	}
	f = file_new(vn->mode & 0200 ? &proc_rw_ops : &proc_data_ops, flags);
	if (!f) {
		free(b.p);
		return -errno;
	}
	f->data = b.p;
	f->data_len = b.len;
	f->vn = vnode_get(vn);
	*out = f;
	return 0;
}

/* /proc/<pid>/fd/N is a "magic link": following it yields the open file
 * itself, not a lookup of its text (which may be "pipe:[N]"). Returns the
 * file (borrowed) or NULL if vn is not such a link or may not be seen.
 * A file of another pod member's tree is only its text, looked up in the
 * reader's own, as cwd, exe and root are: a node of another mount
 * namespace never enters a walk, whose mounts, masks and read-only
 * paths are the reader's, and it may outlive that namespace's gofers. */
struct file *procfs_fd_file(struct task *t, struct vnode *vn)
{
	struct process *p;
	struct file *f;

	if (vn->kind != VN_PROC || vn->pk != PK_FD)
		return NULL;
	p = vn_proc(vn);
	if (!p || may_inspect(t, p) < 0)
		return NULL;
	f = proc_fd_file(p, vn->num);
	return f && f->vn && f->vn->ns != vfs_ns() ? NULL : f;
}

bool procfs_is_magic(const struct vnode *vn)
{
	return vn->kind == VN_PROC &&
	       (vn->pk == PK_FD || vn->pk == PK_EXE || vn->pk == PK_CWD ||
		vn->pk == PK_ROOTLINK);
}

int procfs_pid_of_dir(struct vnode *vn)
{
	return vn && vn->kind == VN_PROC && vn->pk == PK_PID_DIR ? vn->pid : 0;
}
