/* gofer/spawn.h: start a `moat gofer` for one host tree, as a child of
 * the caller: the sentry's boot (sentry/boot.c) for the rootfs, the
 * mounts and the store, and the anchor of a pod's member container
 * (cli/pod.c) for that container's rootfs and mounts. */
#ifndef MOAT_GOFER_SPAWN_H
#define MOAT_GOFER_SPAWN_H

#include <sched.h>
#include <stdbool.h>
#include <sys/types.h>

#include "lib/util.h"

/* What a gofer may do to its tree: read it, write it (a `--mount ...:rw`),
 * or keep the sandbox's store's flat files (sentry/store.h). */
enum gofer_kind {
	GOFER_RO,
	GOFER_RW,
	GOFER_FOR_STORE,
};

struct gofer_spawn {
	enum gofer_kind kind;
	/* The host's own / read-only is served as this uid:gid (the
	 * sandbox's helper uid, which owns no host file: gofer/confine.c);
	 * has_as false: serving the host's / is refused. */
	bool has_as;
	uid_t as_uid;
	gid_t as_gid;
	/* The CPUs the gofer runs on (the store's: off the sentry's); NULL:
	 * the caller's. */
	const cpu_set_t *cpus;
};

/* Check root (a directory, or a regular file but for the store's) and
 * fork/exec `/proc/self/exe gofer --root ROOT --fd 3 --expect DEV:INO`
 * with its options. The gofer dies with the calling thread
 * (PR_SET_PDEATHSIG) and serves only the inode checked here. Returns its
 * pid, with *sock_out the caller's end of its 9P socket (close-on-exec,
 * the caller's to close); or -1 with err set. */
pid_t gofer_spawn(const char *root, const struct gofer_spawn *o, int *sock_out,
		  struct moat_error *err);

#endif
