/* sentry/sysfs.h: the sandbox's /sys, one static tree.
 *
 * Every entry is one line of the table in sentry/sysfs.c: its name, its
 * directory, its mode, and where its text comes from (a constant, or a
 * function of what the sentry enforces or knows: the CPUs the sandbox may
 * use, the interfaces its netstack has, the host kernel's THP setting,
 * which applies to the guest's memory since the host maps it). sysfs
 * (sentry/fs_sys.c) lists, looks up, stats and reads /sys through these
 * functions alone.
 *
 * A node is a pair: its index in the table, and an instance. Most lines
 * are one node (instance 0, or their directory's instance); a line marked
 * for each CPU or each interface is one node per CPU of the sandbox's set
 * (instance: the CPU's number, name "cpu<N>" or "node0"'s link) or per
 * interface (instance: its ifindex), and the lines below it take that
 * instance. SYSFS_ROOT, instance 0, is /sys itself.
 *
 * Nothing of the host's hardware is here: no devices, no block devices,
 * no PCI tree, no firmware tables, no host MAC address. The tree is
 * read-only: the mount is ro, as runc's default sysfs mount.
 */
#ifndef MOAT_SYSFS_H
#define MOAT_SYSFS_H

#include <stddef.h>
#include <sys/types.h>

#define SYSFS_ROOT 0
/* Room for any file's text: a cpumap of 1024 CPUs is 288 bytes. */
#define SYSFS_TEXT_MAX 512

struct sysfs_ent {
	int node, inst;
	mode_t mode; /* S_IFDIR | 0755, S_IFREG | 0444 or 0644,
				* S_IFLNK | 0777 */
	char name[32];
};

/* Read the host values the tree shows (the THP settings) while the sentry
 * can still see the host's /sys: once, at setup. Without them (no THP on
 * the host, or unreadable) the files say "never". */
void sysfs_init(void);
/* The pos-th child (from 0) of directory (dir, inst) into *out: 0, or -1
 * past the last (or dir no directory). The order is the table's, the
 * instances of a line ascending. Cost: one pass over the table, and over
 * the CPU set for a per-CPU line. */
int sysfs_child(int dir, int inst, unsigned pos, struct sysfs_ent *out);
/* The child of (dir, inst) named name into *out: 0, -ENOENT, or
 * -ENOTDIR if dir is not a directory. */
int sysfs_find(int dir, int inst, const char *name, struct sysfs_ent *out);
/* A node's mode, 0 for an index that names no node. */
mode_t sysfs_mode(int node);
/* The text of file (node, inst) into buf, of cap >= SYSFS_TEXT_MAX bytes,
 * NUL-terminated: its length; or a symlink's target (no newline). -EISDIR
 * for a directory, -ENOENT for no node or an instance gone (an interface
 * that is not up). */
int sysfs_read(int node, int inst, char *buf, size_t cap);

#endif
