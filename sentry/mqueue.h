/* sentry/mqueue.h: the limits of POSIX message queues, as procfs shows
 * them (/proc/sys/fs/mqueue/, read-only: the sandbox cannot change them).
 */
#ifndef MOAT_MQUEUE_H
#define MOAT_MQUEUE_H

#include <stddef.h>

struct mqueue_sysctl {
	const char *name; /* the file's name under /proc/sys/fs/mqueue */
	long value;
};

extern const struct mqueue_sysctl mqueue_sysctls[];
extern const size_t mqueue_nsysctls;

#endif
