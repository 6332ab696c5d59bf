/* sentry/hostids.h: the host uids and gids a sandbox's processes run as.
 *
 * Under root, every sandbox gets a slot of its own in a subordinate range
 * that moat owns (docs/security.md): a guest uid/gid, which the reaper and
 * every guest task run as (the host side of their user namespace's only
 * mapping), and a helper uid/gid, which the gofer of the host's own root
 * and the slirp helper run as. No two running sandboxes share either, and
 * the two of one sandbox differ, so that neither a process of another
 * sandbox, nor host `nobody`, nor the sandbox's own helpers pass the
 * kernel's same-user check for signals, ptrace and /proc against a guest.
 *
 * The range is the `moat` entry of /etc/subuid and of /etc/subgid
 * (`moat:START:COUNT`), or HOSTIDS_DEFAULT_START and HOSTIDS_DEFAULT_COUNT
 * where a file has none. Slot i is uids START+2i (guest) and START+2i+1
 * (helpers), and the same offsets of the gid range.
 *
 * A slot is held by an flock on each of its ids, /run/moat/uids/UID for
 * both uids and /run/moat/gids/GID for both gids (directories only root
 * may enter), taken without waiting and kept by the sentry for the
 * sandbox's life: the kernel drops them when the sentry is gone, however
 * it ended, so a stale file is free again without anyone removing it. One
 * lock per id, not per slot: a range moved while sandboxes run (slots at
 * other offsets) still never hands out an id that one of them holds. The
 * lowest slot that is free, by its locks and by a scan of /proc for its
 * ids, is taken.
 *
 * Without root there is nothing to allocate from: every process keeps the
 * caller's own uid and gid (the only id an unprivileged user namespace may
 * map), and every lock_fd is -1.
 */
#ifndef MOAT_SENTRY_HOSTIDS_H
#define MOAT_SENTRY_HOSTIDS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/util.h"

/* 0x78000000: in the block 1879048192-2147352575 that systemd leaves
 * unused (docs/UIDS-GIDS.md): above useradd's subordinate ids (SUB_UID_MAX
 * 600100000) and systemd-nspawn's container range (524288-1879048191),
 * below systemd's foreign range (0x7FFE0000) and below 2^31, where
 * signed 32-bit tools and net.ipv4.ping_group_range still work. */
#define HOSTIDS_DEFAULT_START 2013265920u
#define HOSTIDS_DEFAULT_COUNT 65536u

struct host_ids {
	uid_t guest_uid; /* the reaper and every guest task */
	gid_t guest_gid;
	uid_t helper_uid; /* the host root's gofer, the slirp helper */
	gid_t helper_gid;
	/* hold the slot while open: a flock on each of its four ids (the
	 * guest's and the helper's uid and gid); -1: none */
	int lock_fd[4];
};

/* Take the lowest free slot (root), or the caller's own ids (others).
 * A slot whose lock is free but whose ids a process still runs as (one of
 * a sandbox whose sentry just died, of a moat that does not share
 * /run/moat, anyone's) is skipped: nothing is killed. 0, or negative with
 * err set (no free slot: EAGAIN). ids->lock_fd are the caller's, O_CLOEXEC,
 * to keep open for the sandbox's life. */
int hostids_acquire(struct host_ids *ids, struct moat_error *err);

/* Does the text of a /proc/PID/status name u1 or u2 among its four uids
 * (real, effective, saved, file system), or g1 or g2 among its gids? A
 * zombie uses none. A text without both lines is taken to: it proves
 * nothing free. */
bool hostids_status_uses(const char *status, uid_t u1, uid_t u2, gid_t g1,
			 gid_t g2);

/* The range of an /etc/subuid-style text (file names it in messages):
 * the first `moat` entry, or def_start and def_count when it has none.
 * 0 with *start and *count set, or negative with err set: a malformed
 * moat entry, a range of fewer than 2 ids or holding 0, 65534 or -1, or
 * one that overlaps another entry (a user's subordinate ids, which
 * newuidmap would let that user map). */
int hostids_range(const char *text, const char *file, uint32_t def_start,
		  uint32_t def_count, uint32_t *start, uint32_t *count,
		  struct moat_error *err);

/* Has no account of an /etc/passwd- or /etc/group-style text (len bytes,
 * not NUL-terminated; file names it in messages) an id in start..count?
 * field is the id's place in a line, from 0 (2: passwd's uid or group's
 * gid, 3: passwd's gid), what its name in messages ("uid"). 0, or
 * negative with err set (EEXIST: naming the account, its id and
 * range_file, the file the range came from). */
int hostids_no_account(const char *text, size_t len, const char *file,
		       int field, const char *what, uint32_t start,
		       uint32_t count, const char *range_file,
		       struct moat_error *err);

#endif
