/* sentry/p9client.h: the sentry's 9P2000.L client for the gofer.
 *
 * Synchronous RPC over the SOCK_STREAM socket shared with the gofer; one
 * request in flight; single-threaded caller (the caller serialises). The
 * gofer is less trusted than the sentry's own state: every reply is
 * decoded with bounds checks, and anything inconsistent is -EPROTO.
 *
 * Errors: every call below p9c_open returns >= 0 on success and -errno on
 * failure: the ecode of an Rlerror, -EPROTO for a malformed or unexpected
 * reply, -EIO once the connection is broken (socket error, EOF, lost
 * framing; all later calls then fail with -EIO too), -ENFILE for a reply
 * whose donated fd the sentry has no room for (fd_admit, lib/util.h: the
 * file is not opened; the connection stays fine).
 *
 * Fids are allocated by the client (lowest freed first, at most
 * P9_MAX_FIDS live); a fid returned by p9c_open/p9c_walk1/p9c_clone is the
 * caller's until it passes it to p9c_clunk.
 */
#ifndef MOAT_SENTRY_P9CLIENT_H
#define MOAT_SENTRY_P9CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>

#include "lib/util.h"
#include "prot/p9.h" /* struct p9_qid, P9_NOFID, P9_QT* */

struct p9_client; /* opaque */

/* Negotiate version (msize up to P9_MAX_MSIZE) and attach; the root fid is
 * returned in *rootfid. Setup code: fills err. On success the client owns
 * sockfd (p9c_close closes it); on failure the caller still owns it. */
int p9c_open(struct p9_client **out, int sockfd, uint32_t *rootfid,
	     struct p9_qid *rootqid, struct moat_error *err);
/* Closes the socket too; fids still held are dropped with the connection. */
void p9c_close(struct p9_client *c);

/* Negotiated msize: Treaddir data is at most msize - P9_READDIR_HDR. */
uint32_t p9c_msize(const struct p9_client *c);

/* Walk one component (the gofer accepts only plain names: no "", ".", "..",
 * '/'); allocates *newfid. A symlink is not followed: qid->type has
 * P9_QTSYMLINK. */
int p9c_walk1(struct p9_client *c, uint32_t fid, const char *name,
	      uint32_t *newfid, struct p9_qid *qid);
/* Walk with nwname=0: a second fid for the same file. */
int p9c_clone(struct p9_client *c, uint32_t fid, uint32_t *newfid);
/* Fill a struct stat from Rgetattr. st_ino is the qid path, st_dev is 0
 * (the sentry assigns its own device numbers). */
int p9c_getattr(struct p9_client *c, uint32_t fid, struct stat *st);
/* Open the file with host open(2) flags (read-only service: write flags
 * give -EROFS). *hostfd is the donated host fd, O_CLOEXEC, owned by the
 * caller. The fid itself stays usable for walk/getattr. */
int p9c_lopen(struct p9_client *c, uint32_t fid, int flags, int *hostfd);
/* Symlink target into buf, NUL-terminated; returns its length, or
 * -ENAMETOOLONG if it does not fit in len bytes with the NUL. */
int p9c_readlink(struct p9_client *c, uint32_t fid, char *buf, size_t len);
/* Raw Rreaddir payload of up to count bytes (clamped to msize - 11) into
 * buf, starting after the entry whose offset is `offset` (0: start).
 * Returns the payload length; 0 means end of directory. "." and ".." are
 * never returned. The fid need not be lopened. */
int p9c_readdir(struct p9_client *c, uint32_t fid, uint64_t offset, void *buf,
		uint32_t count);
/* Iterate a p9c_readdir payload from *pos (start at 0). Returns 1 with an
 * entry (name NUL-terminated into name[namecap]; name may be NULL to skip
 * it), 0 at the end, -EPROTO if the payload is malformed or a name is not a
 * plain component (empty, ".", "..", '/' or NUL inside), -ENAMETOOLONG if
 * the name does not fit in namecap. *off is the offset to resume after
 * this entry. */
int p9c_readdir_next(const void *buf, size_t len, size_t *pos,
		     struct p9_qid *qid, uint64_t *off, uint8_t *type,
		     char *name, size_t namecap);
int p9c_statfs(struct p9_client *c, uint32_t fid, struct statfs *st);
/* The fid is released whatever the reply (9P clunk semantics); -EBADF
 * without a round trip if the fid is not one this client allocated. */
int p9c_clunk(struct p9_client *c, uint32_t fid);

/* ---- the write side: a gofer started --rw (else every call is -EROFS) ----
 * Names are single components of the directory fid dfid. */

/* Create and open name (O_EXCL always): *newfid names the new file and
 * *hostfd is its donated fd, opened with flags' access mode. */
int p9c_lcreate(struct p9_client *c, uint32_t dfid, const char *name, int flags,
		mode_t mode, uint32_t *newfid, int *hostfd);
int p9c_mkdir(struct p9_client *c, uint32_t dfid, const char *name,
	      mode_t mode);
int p9c_symlink(struct p9_client *c, uint32_t dfid, const char *name,
		const char *target);
/* FIFOs and regular files only (mode carries S_IFIFO or S_IFREG). */
int p9c_mknod(struct p9_client *c, uint32_t dfid, const char *name,
	      mode_t mode);
int p9c_unlinkat(struct p9_client *c, uint32_t dfid, const char *name,
		 int flags); /* flags: 0 or AT_REMOVEDIR */
int p9c_renameat(struct p9_client *c, uint32_t odfid, const char *oname,
		 uint32_t ndfid, const char *nname);
int p9c_link(struct p9_client *c, uint32_t dfid, uint32_t fid,
	     const char *name);
struct p9c_setattr {
	uint32_t valid; /* P9_SETATTR_* */
	mode_t mode;
	uid_t uid;
	gid_t gid;
	uint64_t size;
	struct timespec atime, mtime; /* with P9_SETATTR_[AM]TIME_SET */
};
int p9c_setattr(struct p9_client *c, uint32_t fid, const struct p9c_setattr *a);
int p9c_fsync(struct p9_client *c, uint32_t fid, bool datasync);

/* Extended attributes. get: the value of name (the name list when name is
 * ""), into buf of cap bytes (cap 0: only its size): its size, or -errno.
 * set: a writable gofer only; size 0 removes the attribute. */
long p9c_xattr_get(struct p9_client *c, uint32_t fid, const char *name,
		   void *buf, size_t cap);
int p9c_xattr_set(struct p9_client *c, uint32_t fid, const char *name,
		  const void *value, size_t size, int flags);

#endif
