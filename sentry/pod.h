/* sentry/pod.h: a pod's members, in the pod's one sentry.
 *
 * A Kubernetes or podman pod is one sandbox, as in gVisor: its sandbox
 * (pause) container starts the sentry, and each workload container, a
 * member, is a process tree in it with a mount namespace of its own (its
 * rootfs, its mounts: struct mntns, sentry/vfs.h). Members share the
 * pod's netstack, IPC, UTS and the sentry's own filesystems (procfs,
 * devfs, /dev/shm, sysfs). The CLI's anchor asks for one with the control
 * socket's `container` request (docs/control.md, cli/pod.c), sending the
 * gofers' sockets for its rootfs and its binds.
 */
#ifndef MOAT_POD_H
#define MOAT_POD_H

#include <stdbool.h>
#include <stddef.h>

#include "sentry/sentry.h"

/* Members at once in a pod (ended ones are forgotten). */
#define POD_MEMBERS_MAX 32
/* A member's name is its OCI container ID: 1 to 90 of A-Z a-z 0-9 _ + -
 * . , and not "." first (cli/oci.c id_ok). */
#define POD_NAME_MAX 90
bool pod_name_ok(const char *name);

/* The mount part of a `container` request's body (from its start): make
 * member name's namespace, entered, and its mounts, each bind taking the
 * next of fds (9P sockets; *used counts those taken, which are the
 * namespace's then, even on error). *off: where the exec part begins;
 * *own_pids: whether it has a pid namespace of its own (else it shares
 * the pod's). 0 and *ns (a reference), or -1 and err. */
int pod_member_new(const char *name, const char *body, size_t len,
		   const int *fds, int nfds, int *used, size_t *off,
		   struct mntns **ns, bool *own_pids, struct moat_error *err);
/* p, spawned in ns, is the member's first process. */
void pod_member_started(struct mntns *ns, struct process *p);
/* Its first process could not be made: the member is forgotten. */
void pod_member_abort(struct mntns *ns);
/* A process whose parent is outside the sandbox (an exec's, a member's
 * first) ended: if it was a member's first, every other process of that
 * member is killed, as a pid namespace's are when its init ends. */
void pod_proc_exited(struct process *p);
/* "running" or "stopped" for a member known to the pod, else NULL. */
const char *pod_member_state(const char *name);
/* The live namespace of member name, or NULL. */
struct mntns *pod_member_ns(const char *name);
/* Is p in member ns (NULL: any process)? */
bool pod_proc_in(const struct process *p, const struct mntns *ns);

#endif
