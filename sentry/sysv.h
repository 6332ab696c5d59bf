/* sentry/sysv.h: the limits of System V IPC (sentry/sysv.c), as shmget,
 * semget, semop and msgsnd enforce them, IPC_INFO reports them and
 * /proc/sys/kernel shows them (read-only: the sandbox cannot change them).
 * They are the defaults of sysctl_k (sentry/sysctl.h), which an OCI
 * config's linux.sysctl may lower but never raise: each is also the
 * sentry's bound. Most are Linux's defaults; SHM_TOTAL bounds the whole of
 * shared memory, so a guest cannot fill the host's memory through it.
 */
#ifndef MOAT_SYSV_H
#define MOAT_SYSV_H

#define IPC_OBJS_MAX 4096	  /* of each kind: shmmni, semmni, msgmni */
#define SHM_TOTAL (1ULL << 30)	  /* bytes of all segments together */
#define SEM_NSEMS_MAX 32000	  /* SEMMSL */
#define SEM_NSOPS_MAX 500	  /* SEMOPM */
#define SEM_TOTAL (1 << 20)	  /* SEMMNS: semaphores of all sets */
#define MSG_MAX 8192		  /* MSGMAX: one message */
#define MSG_QBYTES 16384	  /* MSGMNB: one queue */
#define MSG_QBYTES_ROOT (1 << 20) /* the most root may set one queue to */
#define MSG_TOTAL (64u << 20)	  /* bytes of all queued messages */

#endif
