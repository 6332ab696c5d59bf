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
 * read-only, mode 0444: the sandbox's limits are fixed when it starts (the
 * OCI config's linux.sysctl sets some, sysctl_setting_apply), so a write
 * is EACCES, as Linux's to a read-only sysctl.
 */
#ifndef MOAT_SYSCTL_H
#define MOAT_SYSCTL_H

#include <stddef.h>
#include <sys/types.h>

/* The sysctls an OCI config may set (linux.sysctl), as the sentry
 * enforces them and /proc/sys shows them: Linux's defaults, or the
 * sentry's own bounds where those are lower. One set for the whole
 * sandbox, fixed before its first process runs. */
struct sysctl_knobs {
	unsigned long long shmmax; /* kernel.shmmax: bytes of a segment */
	unsigned long long shmall; /* kernel.shmall: pages of all */
	unsigned long long shmmni; /* kernel.shmmni: segments */
	unsigned long long shm_rmid_forced; /* kernel.shm_rmid_forced */
	unsigned long long msgmax; /* kernel.msgmax: bytes of a message */
	unsigned long long msgmnb; /* kernel.msgmnb: bytes of a queue */
	unsigned long long msgmni; /* kernel.msgmni: queues */
	unsigned long long sem[4]; /* kernel.sem: SEMMSL SEMMNS SEMOPM
				       * SEMMNI */
	unsigned long long mq_queues_max, mq_msg_max, mq_msgsize_max,
		mq_msg_default, mq_msgsize_default; /* fs.mqueue.* */
	/* net.ipv4.ip_unprivileged_port_start: a bind below it takes root */
	unsigned long long unpriv_port_start;
};
extern struct sysctl_knobs sysctl_k;

/* Whether linux.sysctl's name = value is one the sandbox honours: 0, or
 * -1 with why (a sentence, into why of cap bytes). Touches nothing. */
int sysctl_setting_check(const char *name, const char *value, char *why,
			 size_t cap);
/* Set name = value, checked by sysctl_setting_check: sysctl_k and
 * /proc/sys from then on. 0, or -1 if it was not a valid setting. */
int sysctl_setting_apply(const char *name, const char *value);

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
