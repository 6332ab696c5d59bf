/* sentry/mqueue.h: the limits of POSIX message queues (sentry/mqueue.c),
 * as mq_open enforces them and /proc/sys/fs/mqueue/ shows them (read-only:
 * the sandbox cannot change them). Linux's defaults (DFLT_* in
 * include/linux/ipc_namespace.h).
 */
#ifndef MOAT_MQUEUE_H
#define MOAT_MQUEUE_H

#define MQ_QUEUES_MAX 256	/* queues_max */
#define MQ_MSG_MAX 10		/* msg_max: messages of one queue */
#define MQ_MSGSIZE_MAX 8192	/* msgsize_max: bytes of one message */
#define MQ_MSG_DEFAULT 10	/* msg_default: mq_open without attributes */
#define MQ_MSGSIZE_DEFAULT 8192 /* msgsize_default */

#endif
