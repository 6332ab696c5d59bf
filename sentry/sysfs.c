/* sentry/sysfs.c: the sandbox's /sys (sentry/sysfs.h).
 *
 * The files tell the truth about the sandbox, not about the host:
 *   - devices/system/cpu: the CPUs the sandbox may use (S->cpus, the set
 *     its sched_getaffinity reports and /proc/stat lists), as possible,
 *     present and online alike, so that glibc's get_nprocs_conf and
 *     get_nprocs (sysconf _SC_NPROCESSORS_CONF, _ONLN; nproc --all,
 *     Python's os.cpu_count) agree with sched_getaffinity. Each is shown
 *     as a core of its own in one package: the host's topology is not
 *     the guest's business.
 *   - devices/system/node: one NUMA node (libnuma) with those CPUs and
 *     the sandbox's memory, as /proc/meminfo counts it.
 *   - class/net, devices/virtual/net: the netstack's interfaces, as
 *     netlink and the interface ioctls show them (sentry/socket.c): lo,
 *     and eth0 with the sandbox's own fixed MAC while the netstack is up.
 *   - kernel/mm/transparent_hugepage: the host's setting, since the host
 *     kernel maps the guest's memory; words only, read once at setup.
 *   - fs/cgroup: an empty directory. The sandbox's cgroups are moat's
 *     own (docs/limits.md); the guest can neither see nor change them.
 * block, bus, dev, firmware and module are empty: no host device, block
 * device, PCI tree, DMI table or module is the guest's to see.
 *
 * Only what programs read is here: glibc, Go, the JVM, jemalloc, libnuma,
 * iproute2 and container tools, and the OCI runtime-tools checker, which
 * wants the default config's sysfs mount at /sys.
 */
#include "sentry/sysfs.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "netstack/netstack.h"
#include "sentry/sentry.h"
#include "sentry/vfs.h"

enum many {
	ONE,	  /* one node, its directory's instance */
	EACH_CPU, /* one a CPU of S->cpus: "<name><N>", instance N */
	EACH_IF,  /* one an interface: its name, instance its ifindex */
};

struct sysfs_node {
	const char *name; /* EACH_CPU: the prefix of its names */
	int parent;	  /* index of its directory; the root's is itself */
	mode_t mode;
	enum many many;
	/* A file's text: show's if set, else str and a newline. A link's
	 * target: show's, without a newline. */
	const char *str;
	int (*show)(int inst, char *buf, size_t cap);
};

/* The directories, so that a line can name its own. */
enum {
	D_SYS = SYSFS_ROOT,
	D_BLOCK,
	D_BUS,
	D_CLASS,
	D_CLASS_NET,
	D_DEV,
	D_DEV_BLOCK,
	D_DEV_CHAR,
	D_DEVICES,
	D_SYSTEM,
	D_CPU,
	D_CPU_N,
	D_CPU_TOPO,
	D_NODE,
	D_NODE0,
	D_VIRTUAL,
	D_VNET,
	D_VNET_IF,
	D_FIRMWARE,
	D_FS,
	D_CGROUP,
	D_KERNEL,
	D_MM,
	D_THP,
	D_MODULE,
};

/* ---- the sandbox's CPUs --------------------------------------------------- */

/* The set the sandbox may use; CPU 0 if it is empty (the unit tests, or a
 * sched_getaffinity that failed), as sys_sched_getaffinity would say. */
static cpu_set_t cpus_of_sandbox(void)
{
	cpu_set_t set = S->cpus;

	if (!CPU_COUNT(&set))
		CPU_SET(0, &set);
	return set;
}

/* "0-3,6" as Linux's cpulist files print a set. */
static int put_cpulist(const cpu_set_t *set, char *buf, size_t cap)
{
	size_t len = 0;
	int i, first = -1;

	buf[0] = 0;
	for (i = 0; i <= CPU_SETSIZE; i++) {
		bool in = i < CPU_SETSIZE && CPU_ISSET(i, set);

		if (in && first < 0)
			first = i;
		if (in || first < 0)
			continue;
		if (len < cap)
			len += (size_t)snprintf(buf + len, cap - len,
						first == i - 1 ? "%s%d" :
								 "%s%d-%d",
						len ? "," : "", first, i - 1);
		first = -1;
	}
	if (len < cap)
		len += (size_t)snprintf(buf + len, cap - len, "\n");
	return (int)len;
}

/* "3", "100,00000001" as Linux's cpumap files print a set: 32-bit words,
 * the highest first, as many bits as the sandbox's highest CPU needs, for
 * every mask alike (Linux pads to nr_cpu_ids, which would say how many
 * CPUs the host has). */
static int put_cpumap(const cpu_set_t *set, char *buf, size_t cap)
{
	cpu_set_t all = cpus_of_sandbox();
	int nbits = 1, words, w, len = 0;

	for (int i = 0; i < CPU_SETSIZE; i++)
		if (CPU_ISSET(i, &all))
			nbits = i + 1;
	words = (nbits + 31) / 32;
	for (w = words - 1; w >= 0; w--) {
		unsigned v = 0;
		int digits = 8;

		for (int b = 0; b < 32; b++)
			if (w * 32 + b < CPU_SETSIZE &&
			    CPU_ISSET(w * 32 + b, set))
				v |= 1u << b;
		if (w == words - 1)
			digits = (nbits - 32 * w + 3) / 4;
		if ((size_t)len < cap)
			len += snprintf(buf + len, cap - len, "%s%0*x",
					w == words - 1 ? "" : ",", digits, v);
	}
	if ((size_t)len < cap)
		len += snprintf(buf + len, cap - len, "\n");
	return len;
}

static int show_cpus(int inst, char *buf, size_t cap)
{
	cpu_set_t set = cpus_of_sandbox();

	(void)inst;
	return put_cpulist(&set, buf, cap);
}

static int show_cpumap(int inst, char *buf, size_t cap)
{
	cpu_set_t set = cpus_of_sandbox();

	(void)inst;
	return put_cpumap(&set, buf, cap);
}

static int show_cpu_self(int inst, char *buf, size_t cap)
{
	return snprintf(buf, cap, "%d\n", inst);
}

static int show_cpu_selfmap(int inst, char *buf, size_t cap)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(inst, &set);
	return put_cpumap(&set, buf, cap);
}

static int show_node_cpu_link(int inst, char *buf, size_t cap)
{
	return snprintf(buf, cap, "../../cpu/cpu%d", inst);
}

/* The sandbox's memory as /proc/meminfo counts it (sentry/fs_proc.c):
 * the host's, bounded by --memory. */
static int show_node_meminfo(int inst, char *buf, size_t cap)
{
	struct sandbox_mem m;

	(void)inst;
	procfs_mem(&m);
	return snprintf(buf, cap,
			"Node 0 MemTotal:       %8llu kB\n"
			"Node 0 MemFree:        %8llu kB\n"
			"Node 0 MemUsed:        %8llu kB\n",
			m.total, m.free, m.total - m.free);
}

/* ---- the netstack's interfaces -------------------------------------------- */

/* lo is 1, always; eth0 is 2 while the netstack is up (--net). The same
 * numbers, names and addresses as netlink's (sentry/socket.c). */
static const char *if_name(int ifindex)
{
	if (ifindex == 1)
		return "lo";
	if (ifindex == 2 && netstack_up())
		return "eth0";
	return NULL;
}

static bool is_lo(int inst)
{
	return inst == 1;
}

static int put_mac(const unsigned char mac[6], char *buf, size_t cap)
{
	return snprintf(buf, cap, "%02x:%02x:%02x:%02x:%02x:%02x\n", mac[0],
			mac[1], mac[2], mac[3], mac[4], mac[5]);
}

static int show_if_address(int inst, char *buf, size_t cap)
{
	static const unsigned char zero[6], mac[6] = NS_MAC;

	return put_mac(is_lo(inst) ? zero : mac, buf, cap);
}

static int show_if_broadcast(int inst, char *buf, size_t cap)
{
	static const unsigned char zero[6],
		all[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };

	return put_mac(is_lo(inst) ? zero : all, buf, cap);
}

/* dev->flags, as Linux's sysfs shows them: without the RUNNING and
 * LOWER_UP that netlink adds from the operational state. */
static int show_if_flags(int inst, char *buf, size_t cap)
{
	return snprintf(buf, cap, "%#x\n", is_lo(inst) ? 0x9 : 0x1003);
}

static int show_if_index(int inst, char *buf, size_t cap)
{
	return snprintf(buf, cap, "%d\n", inst);
}

static int show_if_mtu(int inst, char *buf, size_t cap)
{
	return snprintf(buf, cap, "%d\n", is_lo(inst) ? LO_MTU : NS_MTU);
}

static int show_if_operstate(int inst, char *buf, size_t cap)
{
	return snprintf(buf, cap, "%s\n", is_lo(inst) ? "unknown" : "up");
}

static int show_if_type(int inst, char *buf, size_t cap)
{
	/* ARPHRD_LOOPBACK, ARPHRD_ETHER */
	return snprintf(buf, cap, "%d\n", is_lo(inst) ? 772 : 1);
}

static int show_if_uevent(int inst, char *buf, size_t cap)
{
	return snprintf(buf, cap, "INTERFACE=%s\nIFINDEX=%d\n", if_name(inst),
			inst);
}

static int show_net_link(int inst, char *buf, size_t cap)
{
	return snprintf(buf, cap, "../../devices/virtual/net/%s",
			if_name(inst));
}

/* ---- transparent huge pages: the host's ----------------------------------- */

static struct {
	const char *name, *dflt; /* dflt: without THP on the host */
	char text[128];
} thp[] = {
	{ "enabled", "always madvise [never]", "" },
	{ "defrag", "always defer defer+madvise madvise [never]", "" },
	{ "hpage_pmd_size", "2097152", "" },
	{ "shmem_enabled", "always within_size advise [never] deny force", "" },
	{ "use_zero_page", "0", "" },
};

/* Words, numbers and the brackets round the chosen one: nothing else of
 * the host's passes. */
static bool thp_text_ok(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') ||
		      strchr(" []+_", *s)))
			return false;
	return true;
}

void sysfs_init(void)
{
	int dfd = open("/sys/kernel/mm/transparent_hugepage",
		       O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	for (size_t i = 0; i < ARRAY_SIZE(thp); i++) {
		char tmp[sizeof(thp[i].text)];
		ssize_t n = -1;
		int fd = dfd < 0 ? -1 :
				   openat(dfd, thp[i].name,
					  O_RDONLY | O_CLOEXEC | O_NOFOLLOW);

		if (fd >= 0) {
			n = read(fd, tmp, sizeof(tmp) - 1);
			close(fd);
		}
		if (n > 0 && tmp[n - 1] == '\n')
			n--;
		if (n > 0)
			tmp[n] = 0;
		snprintf(thp[i].text, sizeof(thp[i].text), "%s",
			 n > 0 && thp_text_ok(tmp) ? tmp : thp[i].dflt);
	}
	if (dfd >= 0)
		close(dfd);
}

static int show_thp(size_t i, char *buf, size_t cap)
{
	return snprintf(buf, cap, "%s\n",
			thp[i].text[0] ? thp[i].text : thp[i].dflt);
}

static int show_thp_enabled(int inst, char *buf, size_t cap)
{
	(void)inst;
	return show_thp(0, buf, cap);
}

static int show_thp_defrag(int inst, char *buf, size_t cap)
{
	(void)inst;
	return show_thp(1, buf, cap);
}

static int show_thp_pmd_size(int inst, char *buf, size_t cap)
{
	(void)inst;
	return show_thp(2, buf, cap);
}

static int show_thp_shmem(int inst, char *buf, size_t cap)
{
	(void)inst;
	return show_thp(3, buf, cap);
}

static int show_thp_zero_page(int inst, char *buf, size_t cap)
{
	(void)inst;
	return show_thp(4, buf, cap);
}

/* ---- the tree ------------------------------------------------------------- */

#define DIR_ 0755
#define RO 0444
#define RW 0644 /* an attribute Linux lets root write; the mount is ro */

#define SDIR(id, par, nm) [id] = { nm, par, S_IFDIR | DIR_, ONE, NULL, NULL }
#define SDIRN(id, par, nm, m) [id] = { nm, par, S_IFDIR | DIR_, m, NULL, NULL }
#define SSTR(par, nm, md, s)                                                   \
	{                                                                      \
		nm, par, S_IFREG | (md), ONE, s, NULL                          \
	}
#define SFN(par, nm, md, f)                                                    \
	{                                                                      \
		nm, par, S_IFREG | (md), ONE, NULL, f                          \
	}
#define SLNK(par, nm, m, f)                                                    \
	{                                                                      \
		nm, par, S_IFLNK | 0777, m, NULL, f                            \
	}

/* The directories first, at their enum's index; files in any order after
 * them (a listing is in the table's order, as sysfs's is its own). */
static const struct sysfs_node nodes[] = {
	SDIR(D_SYS, D_SYS, "sys"),
	SDIR(D_BLOCK, D_SYS, "block"),
	SDIR(D_BUS, D_SYS, "bus"),
	SDIR(D_CLASS, D_SYS, "class"),
	SDIR(D_CLASS_NET, D_CLASS, "net"),
	SDIR(D_DEV, D_SYS, "dev"),
	SDIR(D_DEV_BLOCK, D_DEV, "block"),
	SDIR(D_DEV_CHAR, D_DEV, "char"),
	SDIR(D_DEVICES, D_SYS, "devices"),
	SDIR(D_SYSTEM, D_DEVICES, "system"),
	SDIR(D_CPU, D_SYSTEM, "cpu"),
	SDIRN(D_CPU_N, D_CPU, "cpu", EACH_CPU),
	SDIR(D_CPU_TOPO, D_CPU_N, "topology"),
	SDIR(D_NODE, D_SYSTEM, "node"),
	SDIR(D_NODE0, D_NODE, "node0"),
	SDIR(D_VIRTUAL, D_DEVICES, "virtual"),
	SDIR(D_VNET, D_VIRTUAL, "net"),
	SDIRN(D_VNET_IF, D_VNET, NULL, EACH_IF),
	SDIR(D_FIRMWARE, D_SYS, "firmware"),
	SDIR(D_FS, D_SYS, "fs"),
	SDIR(D_CGROUP, D_FS, "cgroup"),
	SDIR(D_KERNEL, D_SYS, "kernel"),
	SDIR(D_MM, D_KERNEL, "mm"),
	SDIR(D_THP, D_MM, "transparent_hugepage"),
	SDIR(D_MODULE, D_SYS, "module"),

	/* class/net: links to the interfaces' directories */
	SLNK(D_CLASS_NET, NULL, EACH_IF, show_net_link),

	/* devices/system/cpu: the sandbox's CPU set, all online */
	SFN(D_CPU, "possible", RO, show_cpus),
	SFN(D_CPU, "present", RO, show_cpus),
	SFN(D_CPU, "online", RO, show_cpus),
	SSTR(D_CPU, "offline", RO, ""),
	SSTR(D_CPU, "isolated", RO, ""),
	SFN(D_CPU_TOPO, "core_id", RO, show_cpu_self),
	SSTR(D_CPU_TOPO, "physical_package_id", RO, "0"),
	SSTR(D_CPU_TOPO, "die_id", RO, "0"),
	SFN(D_CPU_TOPO, "thread_siblings", RO, show_cpu_selfmap),
	SFN(D_CPU_TOPO, "thread_siblings_list", RO, show_cpu_self),
	SFN(D_CPU_TOPO, "core_cpus", RO, show_cpu_selfmap),
	SFN(D_CPU_TOPO, "core_cpus_list", RO, show_cpu_self),
	SFN(D_CPU_TOPO, "core_siblings", RO, show_cpumap),
	SFN(D_CPU_TOPO, "core_siblings_list", RO, show_cpus),
	SFN(D_CPU_TOPO, "package_cpus", RO, show_cpumap),
	SFN(D_CPU_TOPO, "package_cpus_list", RO, show_cpus),

	/* devices/system/node: one node, all of it */
	SSTR(D_NODE, "possible", RO, "0"),
	SSTR(D_NODE, "online", RO, "0"),
	SSTR(D_NODE, "has_cpu", RO, "0"),
	SSTR(D_NODE, "has_memory", RO, "0"),
	SSTR(D_NODE, "has_normal_memory", RO, "0"),
	SFN(D_NODE0, "cpulist", RO, show_cpus),
	SFN(D_NODE0, "cpumap", RO, show_cpumap),
	SSTR(D_NODE0, "distance", RO, "10"),
	SFN(D_NODE0, "meminfo", RO, show_node_meminfo),
	SLNK(D_NODE0, "cpu", EACH_CPU, show_node_cpu_link),

	/* devices/virtual/net/<if>: what netlink says of it */
	SFN(D_VNET_IF, "address", RO, show_if_address),
	SSTR(D_VNET_IF, "addr_len", RO, "6"),
	SFN(D_VNET_IF, "broadcast", RO, show_if_broadcast),
	SSTR(D_VNET_IF, "carrier", RW, "1"),
	SSTR(D_VNET_IF, "dev_id", RO, "0x0"),
	SFN(D_VNET_IF, "flags", RW, show_if_flags),
	SFN(D_VNET_IF, "ifindex", RO, show_if_index),
	SFN(D_VNET_IF, "iflink", RO, show_if_index),
	SFN(D_VNET_IF, "mtu", RW, show_if_mtu),
	SFN(D_VNET_IF, "operstate", RO, show_if_operstate),
	SSTR(D_VNET_IF, "tx_queue_len", RW, "1000"),
	SFN(D_VNET_IF, "type", RO, show_if_type),
	SFN(D_VNET_IF, "uevent", RW, show_if_uevent),

	/* kernel/mm/transparent_hugepage: the host kernel's */
	SFN(D_THP, "enabled", RW, show_thp_enabled),
	SFN(D_THP, "defrag", RW, show_thp_defrag),
	SFN(D_THP, "hpage_pmd_size", RO, show_thp_pmd_size),
	SFN(D_THP, "shmem_enabled", RW, show_thp_shmem),
	SFN(D_THP, "use_zero_page", RW, show_thp_zero_page),
};

static bool valid(int node)
{
	return node >= 0 && (size_t)node < ARRAY_SIZE(nodes);
}

/* Does (node, inst) exist: its CPU in the set, its interface up? */
static bool inst_ok(const struct sysfs_node *n, int inst)
{
	switch (n->many) {
	case ONE:
		return true;
	case EACH_CPU: {
		cpu_set_t set = cpus_of_sandbox();
		return inst >= 0 && inst < CPU_SETSIZE && CPU_ISSET(inst, &set);
	}
	case EACH_IF:
		return if_name(inst) != NULL;
	}
	return false;
}

/* Is (node, inst) there: it and every directory above it? An instance is
 * checked where it was made (the line marked for each); the lines below
 * take it. */
static bool present(int node, int inst)
{
	while (valid(node)) {
		if (!inst_ok(&nodes[node], inst))
			return false;
		if (node == D_SYS)
			return true;
		node = nodes[node].parent;
	}
	return false;
}

/* The instances of line i below a directory of instance inst, in order:
 * the first at or after from, or -1. */
static int next_inst(const struct sysfs_node *n, int inst, int from)
{
	switch (n->many) {
	case ONE:
		return from <= inst ? inst : -1;
	case EACH_CPU: {
		cpu_set_t set = cpus_of_sandbox();
		for (int c = from < 0 ? 0 : from; c < CPU_SETSIZE; c++)
			if (CPU_ISSET(c, &set))
				return c;
		return -1;
	}
	case EACH_IF:
		for (int i = from < 1 ? 1 : from; i <= 2; i++)
			if (if_name(i))
				return i;
		return -1;
	}
	return -1;
}

static void fill(struct sysfs_ent *out, int node, int inst)
{
	const struct sysfs_node *n = &nodes[node];

	out->node = node;
	out->inst = inst;
	out->mode = n->mode;
	if (n->many == EACH_CPU)
		snprintf(out->name, sizeof(out->name), "%s%d", n->name, inst);
	else if (n->many == EACH_IF)
		snprintf(out->name, sizeof(out->name), "%s", if_name(inst));
	else
		snprintf(out->name, sizeof(out->name), "%s", n->name);
}

int sysfs_child(int dir, int inst, unsigned pos, struct sysfs_ent *out)
{
	if (!valid(dir) || !S_ISDIR(nodes[dir].mode) || !present(dir, inst))
		return -1;
	for (size_t i = 0; i < ARRAY_SIZE(nodes); i++) {
		const struct sysfs_node *n = &nodes[i];

		if ((int)i == dir || n->parent != dir)
			continue;
		for (int k = next_inst(n, inst, n->many == ONE ? inst : 0);
		     k >= 0; k = next_inst(n, inst, k + 1)) {
			if (pos-- == 0) {
				fill(out, (int)i, k);
				return 0;
			}
			if (n->many == ONE)
				break;
		}
	}
	return -1;
}

int sysfs_find(int dir, int inst, const char *name, struct sysfs_ent *out)
{
	struct sysfs_ent e;

	if (!valid(dir) || !S_ISDIR(nodes[dir].mode))
		return -ENOTDIR;
	for (unsigned pos = 0; sysfs_child(dir, inst, pos, &e) == 0; pos++)
		if (!strcmp(e.name, name)) {
			*out = e;
			return 0;
		}
	return -ENOENT;
}

mode_t sysfs_mode(int node)
{
	return valid(node) ? nodes[node].mode : 0;
}

int sysfs_read(int node, int inst, char *buf, size_t cap)
{
	const struct sysfs_node *n;
	int len;

	if (!valid(node) || !present(node, inst))
		return -ENOENT;
	n = &nodes[node];
	if (S_ISDIR(n->mode))
		return -EISDIR;
	if (n->show)
		len = n->show(inst, buf, cap);
	else
		len = snprintf(buf, cap, "%s\n", n->str);
	if (len < 0)
		return -EIO;
	/* Every text fits SYSFS_TEXT_MAX; a cut one would be another
	 * value, so it is an error, not a short read. */
	if ((size_t)len >= cap)
		return -EOVERFLOW;
	return len;
}
