/* tests/unit/vfs/test_sysfs.c: the /sys tree (sentry/sysfs.c).
 *
 * The table's shape (every child a listing gives is found by its name,
 * with the same node and instance), the CPU files following the sandbox's
 * CPU set (lists, masks, one directory a CPU), the interfaces (lo only
 * without the netstack), links' targets, and the host's THP text passing
 * only its words. Each test ends with the fd and leak check.
 */
#include <criterion/criterion.h>

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#endif

#include "sentry/sentry.h"
#include "sentry/sysfs.h"
#include "tests/unit/vfs/vfs_test.h"

static int base_fds;

static void ssetup(void)
{
	base_fds = vfst_count_fds();
	vfst_sentry_new();
}

#define SY_TEST(name)                                                          \
	static void sysfs__##name(void);                                       \
	Test(sysfs, name)                                                      \
	{                                                                      \
		sysfs__##name();                                               \
		vfst_sentry_end(base_fds);                                     \
	}                                                                      \
	static void sysfs__##name(void)

TestSuite(sysfs, .init = ssetup, .fini = vfst_sentry_free);

/* The entry at rel ("devices/system/cpu/online"), below /sys. */
static int find(const char *rel, struct sysfs_ent *out)
{
	char buf[256], *save = NULL, *c;
	struct sysfs_ent e = { .node = SYSFS_ROOT, .inst = 0 };
	int rc = 0;

	snprintf(buf, sizeof(buf), "%s", rel);
	for (c = strtok_r(buf, "/", &save); c; c = strtok_r(NULL, "/", &save))
		if ((rc = sysfs_find(e.node, e.inst, c, &e)) < 0)
			return rc;
	*out = e;
	return 0;
}

static const char *text_of(const char *rel)
{
	static char buf[SYSFS_TEXT_MAX];
	struct sysfs_ent e;
	int n;

	cr_assert_eq(find(rel, &e), 0, "/sys/%s: missing", rel);
	n = sysfs_read(e.node, e.inst, buf, sizeof(buf));
	cr_assert_geq(n, 0, "/sys/%s: read %d", rel, n);
	cr_assert_eq((size_t)n, strlen(buf));
	return buf;
}

static bool exists(const char *rel)
{
	struct sysfs_ent e;

	return find(rel, &e) == 0;
}

/* Every child found by its name, every file readable; the nodes seen. */
static int walk(int dir, int inst, int depth)
{
	struct sysfs_ent e, f;
	char buf[SYSFS_TEXT_MAX];
	int n = 0;

	cr_assert_lt(depth, 12, "a cycle below node %d", dir);
	for (unsigned pos = 0; sysfs_child(dir, inst, pos, &e) == 0; pos++) {
		n++;
		cr_assert_eq(sysfs_find(dir, inst, e.name, &f), 0, "%s",
			     e.name);
		cr_assert_eq(f.node, e.node, "%s", e.name);
		cr_assert_eq(f.inst, e.inst, "%s", e.name);
		cr_assert_eq(sysfs_mode(e.node), e.mode);
		if (S_ISDIR(e.mode)) {
			cr_assert_eq(e.mode & 07777, 0755, "%s", e.name);
			cr_assert_eq(sysfs_read(e.node, e.inst, buf,
						sizeof(buf)),
				     -EISDIR);
			n += walk(e.node, e.inst, depth + 1);
		} else {
			cr_assert(S_ISREG(e.mode) || S_ISLNK(e.mode));
			cr_assert_gt(sysfs_read(e.node, e.inst, buf,
						sizeof(buf)),
				     0, "%s", e.name);
		}
	}
	return n;
}

SY_TEST(tree_is_consistent)
{
	struct sysfs_ent e;

	CPU_ZERO(&S->cpus);
	CPU_SET(0, &S->cpus);
	CPU_SET(1, &S->cpus);
	cr_assert_gt(walk(SYSFS_ROOT, 0, 0), 60);
	cr_assert_eq(sysfs_find(SYSFS_ROOT, 0, "nope", &e), -ENOENT);
	cr_assert_eq(find("devices/system/cpu/online/x", &e), -ENOTDIR);
	cr_assert_eq(sysfs_child(-1, 0, 0, &e), -1);
	cr_assert_eq(sysfs_read(9999, 0, (char[SYSFS_TEXT_MAX]){ 0 },
				SYSFS_TEXT_MAX),
		     -ENOENT);
}

SY_TEST(cpus_follow_the_sandbox_set)
{
	CPU_ZERO(&S->cpus);
	CPU_SET(1, &S->cpus);
	CPU_SET(2, &S->cpus);
	CPU_SET(3, &S->cpus);
	CPU_SET(6, &S->cpus);
	cr_assert_str_eq(text_of("devices/system/cpu/online"), "1-3,6\n");
	cr_assert_str_eq(text_of("devices/system/cpu/possible"), "1-3,6\n");
	cr_assert_str_eq(text_of("devices/system/cpu/present"), "1-3,6\n");
	cr_assert_str_eq(text_of("devices/system/cpu/offline"), "\n");
	cr_assert_str_eq(text_of("devices/system/node/node0/cpulist"),
			 "1-3,6\n");
	cr_assert_str_eq(text_of("devices/system/node/node0/cpumap"), "4e\n");
	cr_assert(!exists("devices/system/cpu/cpu0"));
	cr_assert(exists("devices/system/cpu/cpu6/topology"));
	cr_assert_str_eq(text_of("devices/system/cpu/cpu6/topology/core_id"),
			 "6\n");
	cr_assert_str_eq(
		text_of("devices/system/cpu/cpu3/topology/thread_siblings"),
		"08\n");
	cr_assert(!exists("devices/system/cpu/cpu4"));
	cr_assert(!exists("devices/system/cpu/cpu06"));
	cr_assert_str_eq(text_of("devices/system/node/node0/cpu2"),
			 "../../cpu/cpu2");
	/* past 32 CPUs: words, the highest first, all but it padded */
	CPU_ZERO(&S->cpus);
	CPU_SET(0, &S->cpus);
	CPU_SET(40, &S->cpus);
	cr_assert_str_eq(text_of("devices/system/node/node0/cpumap"),
			 "100,00000001\n");
	cr_assert_str_eq(text_of("devices/system/cpu/online"), "0,40\n");
	/* an empty set (no affinity known) is CPU 0 */
	CPU_ZERO(&S->cpus);
	cr_assert_str_eq(text_of("devices/system/cpu/online"), "0\n");
	cr_assert(exists("devices/system/cpu/cpu0"));
}

SY_TEST(interfaces_are_the_netstacks)
{
	/* no netstack in the unit tests: lo alone */
	cr_assert_str_eq(text_of("class/net/lo"),
			 "../../devices/virtual/net/lo");
	cr_assert(!exists("class/net/eth0"));
	cr_assert(!exists("devices/virtual/net/eth0"));
	cr_assert_str_eq(text_of("devices/virtual/net/lo/address"),
			 "00:00:00:00:00:00\n");
	cr_assert_str_eq(text_of("devices/virtual/net/lo/mtu"), "65536\n");
	cr_assert_str_eq(text_of("devices/virtual/net/lo/flags"), "0x9\n");
	cr_assert_str_eq(text_of("devices/virtual/net/lo/ifindex"), "1\n");
	cr_assert_str_eq(text_of("devices/virtual/net/lo/type"), "772\n");
}

SY_TEST(nothing_of_the_hosts_hardware)
{
	struct sysfs_ent e;

	for (const char *const *d =
		     (const char *const[]){ "block", "bus", "dev/block",
					    "dev/char", "firmware", "fs/cgroup",
					    "module", NULL };
	     *d; d++) {
		struct sysfs_ent dir;
		cr_assert_eq(find(*d, &dir), 0, "%s", *d);
		cr_assert_eq(sysfs_child(dir.node, dir.inst, 0, &e), -1,
			     "/sys/%s is not empty", *d);
	}
	cr_assert(!exists("devices/pci0000:00"));
	cr_assert(!exists("class/dmi"));
}

SY_TEST(thp_is_the_hosts_words_only)
{
	const char *en;

	sysfs_init();
	en = text_of("kernel/mm/transparent_hugepage/enabled");
	cr_assert(strchr(en, '['), "%s", en);
	cr_assert_eq(strspn(en, "abcdefghijklmnopqrstuvwxyz[] \n"), strlen(en));
	cr_assert_gt(atol(text_of("kernel/mm/transparent_hugepage/"
				  "hpage_pmd_size")),
		     0);
}
