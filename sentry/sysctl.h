/* sentry/sysctl.h: the sandbox's /proc/sys, one static tree.
 *
 * Every entry is one line of the table in sentry/sysctl.c: its name, its
 * directory, its mode, and where its value comes from (the constant the
 * sentry enforces, or a function of the sandbox's state). procfs
 * (sentry/fs_proc.c) lists, looks up, stats and reads /proc/sys through
 * these functions alone.
 *
 * A node is named by its index in the table; SYSCTL_ROOT is /proc/sys
 * itself. Nodes never change while the sentry runs. Every file is
 * read-only, mode 0444: the sandbox's limits are fixed when it starts, so
 * a write is EACCES, as Linux's to a read-only sysctl.
 */
#ifndef MOAT_SYSCTL_H
#define MOAT_SYSCTL_H

#include <stddef.h>
#include <sys/types.h>

#define SYSCTL_ROOT 0
/* Room for any value's text, its newline and a NUL. */
#define SYSCTL_TEXT_MAX 256

/* The child of directory dir named name: its index; -ENOENT if it has
 * none, -ENOTDIR if dir is a file, or no node. */
int sysctl_lookup(int dir, const char *name);
/* The child of dir that follows node after in the listing (after < 0: the
 * first one): its index, or -1 past the last. Children are listed by name
 * in strcmp order, as Linux lists a sysctl directory, whatever their order
 * in the table. */
int sysctl_next(int dir, int after);
/* A node's name and mode (S_IFDIR | 0555 or S_IFREG | 0444); NULL and 0
 * for an index that names no node. */
const char *sysctl_name(int node);
mode_t sysctl_mode(int node);
/* The text of file node (its value and a newline) into buf, of cap >=
 * SYSCTL_TEXT_MAX bytes, NUL-terminated: its length, or -EISDIR for a
 * directory, -ENOENT for no node. */
int sysctl_read(int node, char *buf, size_t cap);

#endif
