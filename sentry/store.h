/* sentry/store.h: the sandbox's store, where the writable layers (tmpfs and
 * the overlay's upper layer, sentry/fs_tmpfs.c) keep the data of files that
 * do not stay in the sentry's memory.
 *
 * It is a private directory on the host's disk, BASE/s.XXXXXXXX (0700),
 * served by a gofer of its own started --rw (sentry/boot.c): the sentry
 * still opens no host path itself. A stored file is named by an id the
 * sentry makes (16 hex digits, never a guest string), so it can be closed
 * and opened again: the sentry holds an fd only while a file is in use
 * (and a few on an LRU), not one per file, and the bytes are page cache
 * that the host writes back and reclaims, not memory pinned outside every
 * limit. docs/storage.md gives the design and the numbers behind it.
 *
 * BASE is --store DIR, or by default /var/lib/moat/store for root and
 * $XDG_STATE_HOME/moat/store (~/.local/state/moat/store) for other users.
 * It must be a directory of the caller's that no one else may write.
 *
 * Lifetime: "lock" in the sandbox's directory is flocked for the sentry's
 * life. A janitor removes the directory when the sentry ends, however it
 * ends; a crash that takes the janitor too leaves a directory whose lock
 * no one holds, and the next sandbox to start removes it.
 */
#ifndef MOAT_SENTRY_STORE_H
#define MOAT_SENTRY_STORE_H

#include <stdbool.h>
#include <stdint.h>

#include "lib/util.h"

struct p9_client;

/* Setup, host side: make the sandbox's directory under base (NULL: the
 * default), sweep directories that dead sandboxes left, start the janitor.
 * *dir_out is the new directory's path (static storage) for the gofer;
 * *free_out the bytes free on its filesystem. */
int store_prepare(const char *base, const char **dir_out, uint64_t *free_out,
		  struct moat_error *err);
/* The store's gofer is up: c (the store's from now on) and its root fid. */
void store_attach(struct p9_client *c, uint32_t rootfid);
/* Or: sock is its connection, to be greeted at the first use, when the
 * gofer has long confined itself (sandbox start does not wait for it). */
void store_attach_later(int sock);
bool store_ready(void);
/* Close the gofer's connection (at exit; the janitor removes the files). */
void store_close(void);

/* Guest-reachable: -errno on failure, never abort. */
/* A new empty file id: an fd open O_RDWR, or -errno. */
int store_create(uint64_t id);
/* The existing file id, opened with flags (O_RDWR or O_RDONLY). */
int store_open(uint64_t id, int flags);
/* Remove file id (its data goes once its last fd is closed). */
void store_remove(uint64_t id);

#endif
