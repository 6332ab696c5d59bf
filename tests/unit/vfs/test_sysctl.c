/* tests/unit/vfs/test_sysctl.c: the /proc/sys tree (sentry/sysctl.c).
 *
 * The table's shape (every node reachable once from the root, siblings
 * listed in name order, lookups finding each node), every file's text (one
 * line), the entries programs read being there with the limits the sentry
 * enforces, and the values computed from the sandbox's state and the
 * host's. Each test ends with the fd and leak check.
 */
#include <criterion/criterion.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#endif

#include "sentry/mqueue.h"
#include "sentry/sentry.h"
#include "sentry/sysctl.h"
#include "sentry/sysv.h"
#include "sentry/vfs.h"
#include "tests/unit/vfs/vfs_test.h"

/* ---- fixture -------------------------------------------------------------- */

static int base_fds;

static void ssetup(void)
{
	base_fds = vfst_count_fds();
	vfst_sentry_new();
	snprintf(S->hostname, sizeof(S->hostname), "sbx-unit");
}

#define SC_TEST(name)                                                          \
	static void sysctl__##name(void);                                      \
	Test(sysctl, name)                                                     \
	{                                                                      \
		sysctl__##name();                                              \
		vfst_sentry_end(base_fds);                                     \
	}                                                                      \
	static void sysctl__##name(void)

TestSuite(sysctl, .init = ssetup, .fini = vfst_sentry_free);

/* ---- helpers -------------------------------------------------------------- */

static int nnodes(void)
{
	int n = 0;

	while (sysctl_name(n))
		n++;
	return n;
}

/* The node at rel ("kernel/pid_max"), below /proc/sys; asserts it exists. */
static int node_at(const char *rel)
{
	char buf[256], *save = NULL, *c;
	int node = SYSCTL_ROOT;

	snprintf(buf, sizeof(buf), "%s", rel);
	for (c = strtok_r(buf, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
		node = sysctl_lookup(node, c);
		cr_assert_geq(node, 0, "/proc/sys/%s: no %s (%d)", rel, c,
			      node);
	}
	return node;
}

/* The text of /proc/sys/<rel>, into a static buffer. */
static const char *text_of(const char *rel)
{
	static char buf[SYSCTL_TEXT_MAX];
	int n = sysctl_read(node_at(rel), buf, sizeof(buf));

	cr_assert_gt(n, 0, "/proc/sys/%s: read %d", rel, n);
	return buf;
}

static void expect_num(const char *rel, long long v)
{
	char want[64];

	snprintf(want, sizeof(want), "%lld\n", v);
	cr_assert_str_eq(text_of(rel), want, "/proc/sys/%s", rel);
}

/* Walk dir's listing, checking order and parents; the nodes reached. */
static int walk(int dir)
{
	const char *prev = NULL;
	int i, n = 0;

	for (i = sysctl_next(dir, -1); i >= 0; i = sysctl_next(dir, i)) {
		const char *name = sysctl_name(i);
		cr_assert_not_null(name);
		if (prev)
			cr_assert_lt(strcmp(prev, name), 0,
				     "%s listed after %s", name, prev);
		prev = name;
		cr_assert_eq(sysctl_lookup(dir, name), i, "lookup of %s", name);
		n++;
		if (S_ISDIR(sysctl_mode(i)))
			n += walk(i);
	}
	return n;
}

static bool is_uuid4(const char *s)
{
	int i;

	if (strlen(s) != 37 || s[36] != '\n')
		return false;
	for (i = 0; i < 36; i++) {
		if (i == 8 || i == 13 || i == 18 || i == 23) {
			if (s[i] != '-')
				return false;
		} else if (!strchr("0123456789abcdef", s[i])) {
			return false;
		}
	}
	return s[14] == '4' && strchr("89ab", s[19]);
}

/* ---- the tree ------------------------------------------------------------- */

/* Every node but the root is reached exactly once from it: parents are
 * directories, sibling names unique (a duplicate would stop the listing
 * or hide one), and the listing is in name order. */
SC_TEST(every_node_listed_once_in_name_order)
{
	int n = nnodes();

	cr_assert_gt(n, 1);
	cr_assert_str_eq(sysctl_name(SYSCTL_ROOT), "sys");
	cr_assert_eq(sysctl_mode(SYSCTL_ROOT), S_IFDIR | 0555);
	cr_assert_eq(walk(SYSCTL_ROOT), n - 1);
}

SC_TEST(every_file_is_one_readonly_line)
{
	char buf[SYSCTL_TEXT_MAX];
	int i, n = nnodes();

	for (i = 0; i < n; i++) {
		int len = sysctl_read(i, buf, sizeof(buf));
		if (S_ISDIR(sysctl_mode(i))) {
			cr_assert_eq(sysctl_mode(i), S_IFDIR | 0555);
			cr_assert_eq(len, -EISDIR, "%s", sysctl_name(i));
			continue;
		}
		cr_assert_eq(sysctl_mode(i), S_IFREG | 0444, "%s",
			     sysctl_name(i));
		cr_assert_gt(len, 1, "%s: %d", sysctl_name(i), len);
		cr_assert_eq((size_t)len, strlen(buf), "%s", sysctl_name(i));
		cr_assert_eq(buf[len - 1], '\n', "%s", sysctl_name(i));
		cr_assert_eq(strchr(buf, '\n'), buf + len - 1, "%s: %s",
			     sysctl_name(i), buf);
	}
}

SC_TEST(lookup_and_read_errors)
{
	char buf[SYSCTL_TEXT_MAX];
	int pid_max = node_at("kernel/pid_max");

	cr_assert_eq(sysctl_lookup(SYSCTL_ROOT, "nosuch"), -ENOENT);
	cr_assert_eq(sysctl_lookup(SYSCTL_ROOT, "sys"), -ENOENT);
	cr_assert_eq(sysctl_lookup(node_at("kernel"), "fs"), -ENOENT);
	cr_assert_eq(sysctl_lookup(pid_max, "x"), -ENOTDIR);
	cr_assert_eq(sysctl_lookup(-1, "kernel"), -ENOTDIR);
	cr_assert_eq(sysctl_lookup(nnodes(), "kernel"), -ENOTDIR);
	cr_assert_eq(sysctl_next(pid_max, -1), -1);
	cr_assert_eq(sysctl_next(nnodes(), -1), -1);
	cr_assert_null(sysctl_name(-1));
	cr_assert_null(sysctl_name(nnodes()));
	cr_assert_eq(sysctl_mode(nnodes()), 0);
	cr_assert_eq(sysctl_read(-1, buf, sizeof(buf)), -ENOENT);
	cr_assert_eq(sysctl_read(nnodes(), buf, sizeof(buf)), -ENOENT);
	cr_assert_eq(sysctl_read(node_at("kernel"), buf, sizeof(buf)), -EISDIR);
	/* a value cut short would read as another number */
	cr_assert_eq(sysctl_read(pid_max, buf, 4), -EOVERFLOW);
}

/* ---- values --------------------------------------------------------------- */

/* What the sentry enforces, from the same macros its syscalls use. */
SC_TEST(limits_are_the_enforced_ones)
{
	expect_num("kernel/cap_last_cap", MOAT_CAP_LAST);
	cr_assert_eq(MOAT_CAP_ALL,
		     0x1ffffffffffULL); /* CAP_CHECKPOINT_RESTORE */
	expect_num("kernel/ngroups_max", CREDS_GROUPS_MAX);
	cr_assert_eq((size_t)CREDS_GROUPS_MAX,
		     ARRAY_SIZE(((struct creds *)0)->groups));
	expect_num("kernel/pid_max", PID_MAX);
	expect_num("kernel/shmmax", (long long)SHM_TOTAL);
	expect_num("kernel/shmall", (long long)(SHM_TOTAL / 4096));
	expect_num("kernel/shmmni", IPC_OBJS_MAX);
	expect_num("kernel/msgmax", MSG_MAX);
	expect_num("kernel/msgmnb", MSG_QBYTES);
	expect_num("kernel/msgmni", IPC_OBJS_MAX);
	cr_assert_str_eq(text_of("kernel/sem"), "32000\t1048576\t500\t4096\n");
	expect_num("fs/file-max", FILES_MAX);
	expect_num("fs/nr_open", FDT_MAX);
	expect_num("fs/pipe-max-size", PIPE_MAX_SIZE);
	expect_num("fs/inotify/max_user_instances", INOTIFY_INSTANCES_MAX);
	expect_num("fs/inotify/max_user_watches", INOTIFY_WATCHES_MAX);
	expect_num("fs/inotify/max_queued_events", INOTIFY_QUEUE_MAX);
	expect_num("fs/mqueue/queues_max", MQ_QUEUES_MAX);
	expect_num("fs/mqueue/msg_max", MQ_MSG_MAX);
	expect_num("fs/mqueue/msgsize_max", MQ_MSGSIZE_MAX);
	expect_num("fs/mqueue/msg_default", MQ_MSG_DEFAULT);
	expect_num("fs/mqueue/msgsize_default", MQ_MSGSIZE_DEFAULT);
	expect_num("net/core/somaxconn", BACKLOG_MAX);
	expect_num("net/core/rmem_max", USOCK_BUF);
	expect_num("net/core/wmem_default", USOCK_BUF);
	expect_num("net/ipv4/ip_unprivileged_port_start", PORT_UNPRIV_START);
	/* the sandbox's own range and lwIP's, which is above it */
	cr_assert_str_eq(text_of("net/ipv4/ip_local_port_range"),
			 "32768\t65535\n");
	cr_assert_str_eq(text_of("kernel/ostype"), "Linux\n");
	cr_assert_str_eq(text_of("kernel/version"), MOAT_UTS_VERSION "\n");
	expect_num("kernel/yama/ptrace_scope", 3);
}

SC_TEST(values_follow_the_sandbox)
{
	char first[64];

	cr_assert_str_eq(text_of("kernel/hostname"), "sbx-unit\n");
	cr_assert_str_eq(text_of("kernel/domainname"), "(none)\n");
	snprintf(S->domainname, sizeof(S->domainname), "example");
	cr_assert_str_eq(text_of("kernel/domainname"), "example\n");

	/* threads: the pids limit, else Linux's for the memory */
	S->opts.pids = 77;
	expect_num("kernel/threads-max", 77);
	S->opts.pids = 0;
	S->opts.memory = 1ULL << 30;
	expect_num("kernel/threads-max", 8192);
	S->opts.memory = 1 << 20;
	expect_num("kernel/threads-max", 20);

	cr_assert_str_eq(text_of("net/ipv4/ping_group_range"),
			 "0\t2147483647\n");
	S->opts.ping_range = true;
	S->opts.ping_lo = 100;
	S->opts.ping_hi = 200;
	cr_assert_str_eq(text_of("net/ipv4/ping_group_range"), "100\t200\n");

	/* boot_id is the sandbox's, one for its life; uuid new each read */
	snprintf(first, sizeof(first), "%s", text_of("kernel/random/boot_id"));
	cr_assert(is_uuid4(first), "boot_id %s", first);
	cr_assert_str_eq(text_of("kernel/random/boot_id"), first);
	snprintf(first, sizeof(first), "%s", text_of("kernel/random/uuid"));
	cr_assert(is_uuid4(first), "uuid %s", first);
	cr_assert_str_neq(text_of("kernel/random/uuid"), first);

	cr_assert_eq(strtol(text_of("fs/file-nr"), NULL, 10), files_open());
}

/* vm.*: the host kernel's numbers, which apply to the guest's memory;
 * Linux's defaults without the host's /proc. */
SC_TEST(vm_values_are_the_hosts)
{
	static const char *const rel[] = { "vm/overcommit_memory",
					   "vm/max_map_count",
					   "vm/mmap_min_addr" };
	size_t i;

	expect_num("vm/overcommit_memory", 0);
	expect_num("vm/max_map_count", 65530);
	expect_num("vm/mmap_min_addr", 65536);
	S->host_proc_fd = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
	cr_assert_geq(S->host_proc_fd, 0);
	for (i = 0; i < ARRAY_SIZE(rel); i++) {
		char path[64], host[64] = "";
		FILE *f;

		snprintf(path, sizeof(path), "/proc/sys/%s", rel[i]);
		f = fopen(path, "re");
		cr_assert_not_null(f, "%s", path);
		cr_assert_not_null(fgets(host, sizeof(host), f));
		fclose(f);
		cr_assert_str_eq(text_of(rel[i]), host, "%s", rel[i]);
	}
}
