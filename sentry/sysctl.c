/* sentry/sysctl.c: the sandbox's /proc/sys (sentry/sysctl.h).
 *
 * The values tell the truth about the sandbox, not about the host: each
 * is the constant the sentry enforces (the same macro its syscall uses),
 * or computed from the sandbox's own state. The host's value is shown
 * only where the host kernel is the one that applies it to the guest
 * (anonymous memory is mapped natively: vm.overcommit_memory,
 * vm.max_map_count, vm.mmap_min_addr), and then only as a number.
 *
 * Only entries that programs read are here: glibc (ngroups_max for
 * sysconf), language runtimes and servers (Go, Java, Python, nginx,
 * postgres, node, redis: somaxconn, overcommit_memory, max_map_count,
 * pid_max, threads-max, ip_local_port_range), container checkers (OCI
 * runtime-tools' runtimetest: cap_last_cap).
 */
#include "sentry/sysctl.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/sysinfo.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "netstack/netstack.h"
#include "sentry/mqueue.h"
#include "sentry/sentry.h"
#include "sentry/sysv.h"
#include "sentry/vfs.h"

struct sysctl_node {
	const char *name;
	int parent; /* index of its directory; the root's is itself */
	mode_t mode;
	/* A file's value: show's text if set, else str's, else num. */
	long num;
	const char *str;
	/* Writes the value and a newline into buf (cap bytes, as snprintf):
	 * the length it wants. */
	int (*show)(char *buf, size_t cap);
	/* else, if set: a knob linux.sysctl may set (sysctl_k) */
	const unsigned long long *var;
};

/* The directories, so that a line can name its own. */
enum {
	D_SYS = SYSCTL_ROOT,
	D_FS,
	D_FS_INOTIFY,
	D_FS_MQUEUE,
	D_KERNEL,
	D_KERNEL_RANDOM,
	D_KERNEL_YAMA,
	D_NET,
	D_NET_CORE,
	D_NET_IPV4,
	D_VM,
};

/* ---- what linux.sysctl may set ------------------------------------------- */

struct sysctl_knobs sysctl_k = {
	.shmmax = SHM_TOTAL,
	.shmall = SHM_TOTAL / 4096,
	.shmmni = IPC_OBJS_MAX,
	.msgmax = MSG_MAX,
	.msgmnb = MSG_QBYTES,
	.msgmni = IPC_OBJS_MAX,
	.sem = { SEM_NSEMS_MAX, SEM_TOTAL, SEM_NSOPS_MAX, IPC_OBJS_MAX },
	.mq_queues_max = MQ_QUEUES_MAX,
	.mq_msg_max = MQ_MSG_MAX,
	.mq_msgsize_max = MQ_MSGSIZE_MAX,
	.mq_msg_default = MQ_MSG_DEFAULT,
	.mq_msgsize_default = MQ_MSGSIZE_DEFAULT,
	.unpriv_port_start = PORT_UNPRIV_START,
};

/* One settable sysctl: n numbers (kernel.sem's four, else one), each
 * from lo to hi. The his are the sentry's own bounds where it holds the
 * objects in its memory (sysv.h, mqueue.h): a sysctl may lower them,
 * never raise them, and says so. */
struct knob {
	const char *name;
	unsigned long long *v;
	int n;
	unsigned long long lo[4], hi[4];
	const char *why_hi;
};

#define IPC_WHY "the sentry holds the sandbox's System V IPC in its own memory"
#define MQ_WHY "the sentry holds the sandbox's message queues in its own memory"

static const struct knob knobs[] = {
	{ "kernel.shmmax", &sysctl_k.shmmax, 1, { 1 }, { SHM_TOTAL }, IPC_WHY },
	{ "kernel.shmall",
	  &sysctl_k.shmall,
	  1,
	  { 1 },
	  { SHM_TOTAL / 4096 },
	  IPC_WHY },
	{ "kernel.shmmni",
	  &sysctl_k.shmmni,
	  1,
	  { 0 },
	  { IPC_OBJS_MAX },
	  IPC_WHY },
	{ "kernel.shm_rmid_forced",
	  &sysctl_k.shm_rmid_forced,
	  1,
	  { 0 },
	  { 1 },
	  NULL },
	{ "kernel.msgmax",
	  &sysctl_k.msgmax,
	  1,
	  { 0 },
	  { MSG_QBYTES_ROOT },
	  IPC_WHY },
	{ "kernel.msgmnb",
	  &sysctl_k.msgmnb,
	  1,
	  { 0 },
	  { MSG_QBYTES_ROOT },
	  IPC_WHY },
	{ "kernel.msgmni",
	  &sysctl_k.msgmni,
	  1,
	  { 0 },
	  { IPC_OBJS_MAX },
	  IPC_WHY },
	{ "kernel.sem",
	  sysctl_k.sem,
	  4,
	  { 1, 1, 1, 0 },
	  { SEM_NSEMS_MAX, SEM_TOTAL, SEM_NSOPS_MAX, IPC_OBJS_MAX },
	  IPC_WHY },
	{ "fs.mqueue.queues_max",
	  &sysctl_k.mq_queues_max,
	  1,
	  { 0 },
	  { MQ_QUEUES_MAX },
	  MQ_WHY },
	{ "fs.mqueue.msg_max",
	  &sysctl_k.mq_msg_max,
	  1,
	  { 1 },
	  { MQ_MSG_MAX },
	  MQ_WHY },
	{ "fs.mqueue.msgsize_max",
	  &sysctl_k.mq_msgsize_max,
	  1,
	  { 128 },
	  { MQ_MSGSIZE_MAX },
	  MQ_WHY },
	{ "fs.mqueue.msg_default",
	  &sysctl_k.mq_msg_default,
	  1,
	  { 1 },
	  { MQ_MSG_MAX },
	  MQ_WHY },
	{ "fs.mqueue.msgsize_default",
	  &sysctl_k.mq_msgsize_default,
	  1,
	  { 128 },
	  { MQ_MSGSIZE_MAX },
	  MQ_WHY },
	{ "net.ipv4.ip_unprivileged_port_start",
	  &sysctl_k.unpriv_port_start,
	  1,
	  { 0 },
	  { 65535 },
	  NULL },
};

/* Sysctls Linux has that the sandbox cannot honour, and why: refused by
 * name, so that the message says more than "not supported". */
static const struct {
	const char *name, *why;
} refused[] = {
	{ "net.ipv4.ip_forward",
	  "the sandbox's netstack never forwards packets: it has one "
	  "interface besides loopback and routes nothing (0, what "
	  "/proc/sys shows, is accepted)" },
	{ "net.ipv4.ip_local_port_range",
	  "the netstack's (lwIP's) own ports for outgoing connections are "
	  "fixed when it is built" },
	{ "net.ipv4.ip_local_reserved_ports",
	  "the netstack's (lwIP's) own ports for outgoing connections are "
	  "fixed when it is built" },
	{ "net.ipv4.tcp_syncookies",
	  "the netstack (lwIP) has no SYN cookies (0, what /proc/sys "
	  "shows, is accepted)" },
};

static const struct knob *knob_of(const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(knobs); i++)
		if (!strcmp(knobs[i].name, name))
			return &knobs[i];
	return NULL;
}

/* value as k's numbers (blanks between, around; Linux's proc_doulongvec
 * reads the same): 0, or -1 with why. */
static int knob_parse(const struct knob *k, const char *value,
		      unsigned long long out[4], char *why, size_t cap)
{
	const char *s = value;
	int i;

	for (i = 0; i < k->n; i++) {
		char *end;

		while (*s == ' ' || *s == '\t')
			s++;
		if (*s < '0' || *s > '9') {
			snprintf(why, cap, "`%s`: %s expected", value,
				 k->n > 1 ? "four numbers" : "a number");
			return -1;
		}
		errno = 0;
		out[i] = strtoull(s, &end, 10);
		if (errno || out[i] < k->lo[i] || out[i] > k->hi[i]) {
			/* kernel.sem's numbers by their names */
			static const char *const sem[] = { "SEMMSL ", "SEMMNS ",
							   "SEMOPM ",
							   "SEMMNI " };
			bool past = k->why_hi && !errno && out[i] > k->hi[i];

			snprintf(why, cap, "`%s`: %sfrom %llu to %llu%s%s",
				 value, k->n > 1 ? sem[i] : "", k->lo[i],
				 k->hi[i], past ? ": " : "",
				 past ? k->why_hi : "");
			return -1;
		}
		s = end;
	}
	while (*s == ' ' || *s == '\t' || *s == '\n')
		s++;
	if (*s) {
		snprintf(why, cap, "`%s`: %s expected", value,
			 k->n > 1 ? "four numbers" : "a number");
		return -1;
	}
	return 0;
}

int sysctl_setting_check(const char *name, const char *value, char *why,
			 size_t cap)
{
	unsigned long long v[4];
	const struct knob *k = knob_of(name);
	size_t i;

	if (k)
		return knob_parse(k, value, v, why, cap);
	for (i = 0; i < ARRAY_SIZE(refused); i++) {
		if (strcmp(refused[i].name, name))
			continue;
		if (!strcmp(value, "0") &&
		    (!strcmp(name, "net.ipv4.ip_forward") ||
		     !strcmp(name, "net.ipv4.tcp_syncookies")))
			return 0; /* what the sandbox is */
		snprintf(why, cap, "not supported by moat: %s", refused[i].why);
		return -1;
	}
	snprintf(why, cap,
		 "not supported by moat (it honours kernel.shm*, msg*, sem, "
		 "fs.mqueue.*, net.ipv4.ip_unprivileged_port_start and "
		 "net.ipv4.ping_group_range)");
	return -1;
}

int sysctl_setting_apply(const char *name, const char *value)
{
	unsigned long long v[4];
	const struct knob *k = knob_of(name);
	char why[8];

	if (!k)
		return sysctl_setting_check(name, value, why, sizeof(why));
	if (knob_parse(k, value, v, why, sizeof(why)) < 0)
		return -1;
	memcpy(k->v, v, (size_t)k->n * sizeof(v[0]));
	return 0;
}

/* ---- values computed from the sandbox's state ---------------------------- */

static int show_hostname(char *buf, size_t cap)
{
	return snprintf(buf, cap, "%s\n", S->hostname);
}

static int show_domainname(char *buf, size_t cap)
{
	return snprintf(buf, cap, "%s\n",
			S->domainname[0] ? S->domainname : "(none)");
}

/* uname's release, as sys_uname gives it: the host's. */
static int show_osrelease(char *buf, size_t cap)
{
	struct utsname u;

	if (uname(&u) < 0)
		memset(&u, 0, sizeof(u));
	return snprintf(buf, cap, "%s\n", u.release);
}

static int show_file_nr(char *buf, size_t cap)
{
	return snprintf(buf, cap, "%ld\t0\t%ld\n", files_open(), FILES_MAX);
}

/* Linux's max_threads for a machine of the sandbox's memory (8 kernel
 * stacks of 16 KiB a thread in all of it, at least 20), below the pids
 * limit when there is one: fork and clone fail past it (pids_in_use). */
static int show_threads_max(char *buf, size_t cap)
{
	struct sysinfo si;
	unsigned long long mem = 0, n;

	if (sysinfo(&si) == 0)
		mem = (unsigned long long)si.totalram *
		      (si.mem_unit ? si.mem_unit : 1);
	if (S->opts.memory && (!mem || S->opts.memory < mem))
		mem = S->opts.memory;
	n = mem / (8ULL * 16384);
	if (n < 20)
		n = 20;
	if (n > 0x3fffffff) /* FUTEX_TID_MASK */
		n = 0x3fffffff;
	if (S->opts.pids > 0 && (unsigned long long)S->opts.pids < n)
		n = (unsigned long long)S->opts.pids;
	return snprintf(buf, cap, "%llu\n", n);
}

/* A random (version 4) UUID, as Linux's random/uuid and boot_id. */
static void make_uuid(char out[37])
{
	uint8_t b[16];
	size_t got = 0;

	while (got < sizeof(b)) {
		ssize_t r = getrandom(b + got, sizeof(b) - got, 0);
		if (r > 0)
			got += (size_t)r;
		else if (r < 0 && errno != EINTR)
			break;
	}
	if (got < sizeof(b)) {
		/* getrandom does not fail once the pool is ready; should it,
		 * the text is still a UUID, just not an unguessable one. */
		uint64_t t = (uint64_t)now_ns();
		for (; got < sizeof(b); got++)
			b[got] = (uint8_t)(t >> (8 * (got % 8)));
	}
	b[6] = (uint8_t)((b[6] & 0x0f) | 0x40);
	b[8] = (uint8_t)((b[8] & 0x3f) | 0x80);
	snprintf(out, 37,
		 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
		 "%02x%02x%02x%02x%02x%02x",
		 b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9],
		 b[10], b[11], b[12], b[13], b[14], b[15]);
}

/* The sandbox's: one sentry is one boot, whatever the host did. */
static int show_boot_id(char *buf, size_t cap)
{
	static char id[37];

	if (!id[0])
		make_uuid(id);
	return snprintf(buf, cap, "%s\n", id);
}

/* A new one at every open (procfs reads the text once, at open). */
static int show_uuid(char *buf, size_t cap)
{
	char id[37];

	make_uuid(id);
	return snprintf(buf, cap, "%s\n", id);
}

/* SEMMSL SEMMNS SEMOPM SEMMNI, tab-separated as Linux prints them. */
static int show_sem(char *buf, size_t cap)
{
	return snprintf(buf, cap, "%llu\t%llu\t%llu\t%llu\n", sysctl_k.sem[0],
			sysctl_k.sem[1], sysctl_k.sem[2], sysctl_k.sem[3]);
}

/* Every port the sandbox picks by itself: its own sockets' (bind to port
 * 0, autobind) and, for connections through the netstack, lwIP's. */
static int show_port_range(char *buf, size_t cap)
{
	int lo = EPHEMERAL_LO < NS_EPHEMERAL_LO ? EPHEMERAL_LO :
						  NS_EPHEMERAL_LO;
	int hi = EPHEMERAL_HI > NS_EPHEMERAL_HI ? EPHEMERAL_HI :
						  NS_EPHEMERAL_HI;

	return snprintf(buf, cap, "%d\t%d\n", lo, hi);
}

/* The groups that may open ICMP sockets (socket.c's ping_allowed): the
 * OCI config's net.ipv4.ping_group_range, else everyone (Linux's widest
 * range, 0 to GID_T_MAX). */
static int show_ping_range(char *buf, size_t cap)
{
	if (!S->opts.ping_range)
		return snprintf(buf, cap, "0\t2147483647\n");
	return snprintf(buf, cap, "%u\t%u\n", (unsigned)S->opts.ping_lo,
			(unsigned)S->opts.ping_hi);
}

/* The host's /proc/sys/<rel> as a number, or dflt (Linux's default) when
 * it cannot be read or is not one. */
static int show_host_num(const char *rel, long dflt, char *buf, size_t cap)
{
	char tmp[32];
	ssize_t n = -1;
	long v = dflt;
	int fd = -1;

	if (S->host_proc_fd >= 0)
		fd = openat(S->host_proc_fd, rel,
			    O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd >= 0) {
		n = read(fd, tmp, sizeof(tmp) - 1);
		close(fd);
	}
	if (n > 0) {
		char *end;
		tmp[n] = 0;
		errno = 0;
		long x = strtol(tmp, &end, 10);
		if (!errno && end != tmp && (*end == '\n' || !*end))
			v = x;
	}
	return snprintf(buf, cap, "%ld\n", v);
}

static int show_overcommit(char *buf, size_t cap)
{
	return show_host_num("sys/vm/overcommit_memory", 0, buf, cap);
}

static int show_max_map_count(char *buf, size_t cap)
{
	return show_host_num("sys/vm/max_map_count", 65530, buf, cap);
}

static int show_mmap_min_addr(char *buf, size_t cap)
{
	return show_host_num("sys/vm/mmap_min_addr", 65536, buf, cap);
}

/* ---- the tree ------------------------------------------------------------ */

#define SDIR(id, par, nm) [id] = { nm, par, S_IFDIR | 0555, 0, NULL, NULL }
#define SNUM(par, nm, v)                                                       \
	{                                                                      \
		nm, par, S_IFREG | 0444, (long)(v), NULL, NULL                 \
	}
#define SSTR(par, nm, s)                                                       \
	{                                                                      \
		nm, par, S_IFREG | 0444, 0, s, NULL                            \
	}
#define SFN(par, nm, f)                                                        \
	{                                                                      \
		nm, par, S_IFREG | 0444, 0, NULL, f                            \
	}
#define SVAR(par, nm, v)                                                       \
	{                                                                      \
		nm, par, S_IFREG | 0444, 0, NULL, NULL, &sysctl_k.v            \
	}

/* The directories first, at their enum's index; files in any order after
 * them (the listing sorts). */
static const struct sysctl_node nodes[] = {
	SDIR(D_SYS, D_SYS, "sys"),
	SDIR(D_FS, D_SYS, "fs"),
	SDIR(D_FS_INOTIFY, D_FS, "inotify"),
	SDIR(D_FS_MQUEUE, D_FS, "mqueue"),
	SDIR(D_KERNEL, D_SYS, "kernel"),
	SDIR(D_KERNEL_RANDOM, D_KERNEL, "random"),
	SDIR(D_KERNEL_YAMA, D_KERNEL, "yama"),
	SDIR(D_NET, D_SYS, "net"),
	SDIR(D_NET_CORE, D_NET, "core"),
	SDIR(D_NET_IPV4, D_NET, "ipv4"),
	SDIR(D_VM, D_SYS, "vm"),

	/* fs: the sandbox's own file tables (sentry/file.c), pipes, inotify
	 * and POSIX message queues */
	SNUM(D_FS, "file-max", FILES_MAX),
	SFN(D_FS, "file-nr", show_file_nr),
	SNUM(D_FS, "nr_open", FDT_MAX),
	SNUM(D_FS, "pipe-max-size", PIPE_MAX_SIZE),
	SNUM(D_FS_INOTIFY, "max_queued_events", INOTIFY_QUEUE_MAX),
	SNUM(D_FS_INOTIFY, "max_user_instances", INOTIFY_INSTANCES_MAX),
	SNUM(D_FS_INOTIFY, "max_user_watches", INOTIFY_WATCHES_MAX),
	SVAR(D_FS_MQUEUE, "msg_default", mq_msg_default),
	SVAR(D_FS_MQUEUE, "msg_max", mq_msg_max),
	SVAR(D_FS_MQUEUE, "msgsize_default", mq_msgsize_default),
	SVAR(D_FS_MQUEUE, "msgsize_max", mq_msgsize_max),
	SVAR(D_FS_MQUEUE, "queues_max", mq_queues_max),

	/* kernel: the sentry's uname, credentials, pids and SysV IPC */
	SNUM(D_KERNEL, "cap_last_cap", MOAT_CAP_LAST),
	SFN(D_KERNEL, "domainname", show_domainname),
	SFN(D_KERNEL, "hostname", show_hostname),
	SVAR(D_KERNEL, "msgmax", msgmax),
	SVAR(D_KERNEL, "msgmnb", msgmnb),
	SVAR(D_KERNEL, "msgmni", msgmni),
	SNUM(D_KERNEL, "ngroups_max", CREDS_GROUPS_MAX),
	SFN(D_KERNEL, "osrelease", show_osrelease),
	SSTR(D_KERNEL, "ostype", "Linux"),
	SNUM(D_KERNEL, "overflowgid", 65534), /* Linux's; the sentry */
	SNUM(D_KERNEL, "overflowuid", 65534), /* shows no unmapped id */
	SNUM(D_KERNEL, "pid_max", PID_MAX),
	SFN(D_KERNEL, "sem", show_sem),
	SVAR(D_KERNEL, "shmall", shmall), /* pages */
	SVAR(D_KERNEL, "shmmax", shmmax),
	SVAR(D_KERNEL, "shmmni", shmmni),
	SVAR(D_KERNEL, "shm_rmid_forced", shm_rmid_forced),
	SFN(D_KERNEL, "threads-max", show_threads_max),
	SSTR(D_KERNEL, "version", MOAT_UTS_VERSION),
	SFN(D_KERNEL_RANDOM, "boot_id", show_boot_id),
	/* /dev/random is getrandom, never short of entropy: what Linux
	 * says since 5.18 */
	SNUM(D_KERNEL_RANDOM, "entropy_avail", 256),
	SNUM(D_KERNEL_RANDOM, "poolsize", 256),
	SFN(D_KERNEL_RANDOM, "uuid", show_uuid),
	/* 3, no attach: ptrace is EPERM (sys_ptrace) */
	SNUM(D_KERNEL_YAMA, "ptrace_scope", 3),

	/* net: the sentry's socket layer (sentry/socket.c) */
	SNUM(D_NET_CORE, "rmem_default", USOCK_BUF),
	SNUM(D_NET_CORE, "rmem_max", USOCK_BUF),
	SNUM(D_NET_CORE, "somaxconn", BACKLOG_MAX),
	SNUM(D_NET_CORE, "wmem_default", USOCK_BUF),
	SNUM(D_NET_CORE, "wmem_max", USOCK_BUF),
	SFN(D_NET_IPV4, "ip_local_port_range", show_port_range),
	SNUM(D_NET_IPV4, "ip_forward", 0), /* it never forwards */
	SVAR(D_NET_IPV4, "ip_unprivileged_port_start", unpriv_port_start),
	SFN(D_NET_IPV4, "ping_group_range", show_ping_range),
	SNUM(D_NET_IPV4, "tcp_syncookies", 0), /* lwIP has none */

	/* vm: the host kernel's, which maps the guest's memory */
	SFN(D_VM, "max_map_count", show_max_map_count),
	SFN(D_VM, "mmap_min_addr", show_mmap_min_addr),
	SFN(D_VM, "overcommit_memory", show_overcommit),
};

static bool valid(int node)
{
	return node >= 0 && (size_t)node < ARRAY_SIZE(nodes);
}

static bool is_dir(int node)
{
	return S_ISDIR(nodes[node].mode);
}

/* Cost: one pass over the table (some 60 nodes). */
int sysctl_lookup(int dir, const char *name)
{
	size_t i;

	if (!valid(dir) || !is_dir(dir))
		return -ENOTDIR;
	for (i = 0; i < ARRAY_SIZE(nodes); i++)
		if ((int)i != dir && nodes[i].parent == dir &&
		    !strcmp(nodes[i].name, name))
			return (int)i;
	return -ENOENT;
}

/* Cost: one pass over the table a call, so a listing is quadratic in the
 * table's size, which is small and fixed. */
int sysctl_next(int dir, int after)
{
	const char *prev = valid(after) ? nodes[after].name : NULL;
	int best = -1;
	size_t i;

	if (!valid(dir) || !is_dir(dir))
		return -1;
	for (i = 0; i < ARRAY_SIZE(nodes); i++) {
		if ((int)i == dir || nodes[i].parent != dir)
			continue;
		if (prev && strcmp(nodes[i].name, prev) <= 0)
			continue;
		if (best < 0 || strcmp(nodes[i].name, nodes[best].name) < 0)
			best = (int)i;
	}
	return best;
}

const char *sysctl_name(int node)
{
	return valid(node) ? nodes[node].name : NULL;
}

mode_t sysctl_mode(int node)
{
	return valid(node) ? nodes[node].mode : 0;
}

int sysctl_read(int node, char *buf, size_t cap)
{
	const struct sysctl_node *n;
	int len;

	if (!valid(node))
		return -ENOENT;
	if (is_dir(node))
		return -EISDIR;
	n = &nodes[node];
	if (n->show)
		len = n->show(buf, cap);
	else if (n->str)
		len = snprintf(buf, cap, "%s\n", n->str);
	else if (n->var)
		len = snprintf(buf, cap, "%llu\n", *n->var);
	else
		len = snprintf(buf, cap, "%ld\n", n->num);
	if (len < 0)
		return -EIO;
	/* Every value fits SYSCTL_TEXT_MAX; a cut one would read as
	 * another number, so it is an error, not a short read. */
	if ((size_t)len >= cap)
		return -EOVERFLOW;
	return len;
}
