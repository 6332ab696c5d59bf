/* lib/hostfile.h: host files that moat writes and removes, often as root,
 * in directories that other users may be able to write.
 *
 * The rule behind each function: a name in a directory is trusted only
 * when the directory is ours and no one else may write it; elsewhere
 * (an engine's --pid-file in /tmp, say) moat never opens an existing name
 * for writing, never follows a symbolic link at the last component, and
 * replaces a file by rename(2) within one directory fd, so that a link
 * planted there can at worst be replaced, never written through.
 * docs/oci.md lists every host path the OCI runtime writes this way.
 */
#ifndef MOAT_LIB_HOSTFILE_H
#define MOAT_LIB_HOSTFILE_H

#include <limits.h>
#include <stdbool.h>
#include <sys/stat.h>

#include "lib/util.h"

/* hostdir_open: the directory at path, opened O_DIRECTORY|O_NOFOLLOW in
 * the directory hostpath_parent finds (an earlier component may be a
 * link only where that trusts it; the last may not be one), owned by the
 * caller's euid and writable by no one else (mode & 022 clear): in such a
 * directory nobody else can plant an entry. With HOSTDIR_PRIVATE it must
 * also be closed to everyone else (mode & 077 clear). what names it in
 * errors ("--root", "control directory"). Returns an O_CLOEXEC fd (the
 * caller's) and fills *st (may be NULL), or -1 with err set: ENOENT when
 * it does not exist, ELOOP for a link, ENOTDIR, EPERM for another owner
 * or an open mode. */
#define HOSTDIR_PRIVATE 1u
int hostdir_open(const char *path, const char *what, unsigned flags,
		 struct stat *st, struct moat_error *err);

/* hostpath_parent: the directory that holds path's last component, for
 * a path a user may have had a hand in (--pid-file, --log): each
 * component before the last is opened O_PATH|O_NOFOLLOW, and a link
 * among them is followed only when the link is root's or the caller's,
 * or when the directory holding it is root's or the caller's and writable
 * by no one else (the kernel's protected_symlinks rule, for every
 * directory, not only sticky world-writable ones). So a user who can
 * write a directory on the way cannot point the rest of the path at a
 * directory of root's; links that root or the caller made (/var/run)
 * work as before. The last component, copied into base ("." for "/"), is
 * never resolved: the caller opens it relative to the fd, O_NOFOLLOW.
 * An O_PATH|O_CLOEXEC fd (the caller's), or -errno: -ELOOP for a link it
 * will not follow (or past 40), -ENOTDIR, -ENOENT, -ENAMETOOLONG. */
int hostpath_parent(const char *path, char base[NAME_MAX + 1]);

/* write_file_at: name in dirfd holds exactly buf[0..len) with mode, or is
 * unchanged. The bytes go to a new file of a random name beside it
 * (".NAME.XXXXXXXX", O_CREAT|O_EXCL|O_NOFOLLOW, so nothing planted is
 * opened), fsync'd, then renamed over name within dirfd: a link at name
 * is replaced, not followed. 0 or -errno (the temporary file removed). */
int write_file_at(int dirfd, const char *name, const void *buf, size_t len,
		  mode_t mode);
/* The same for a path: its directory found by hostpath_parent (a link
 * before the last component is followed only where it is trusted), then
 * write_file_at. */
int write_file_path(const char *path, const void *buf, size_t len, mode_t mode);

/* remove_tree_at: remove directory name of parent and its entries (one
 * level: what moat keeps there are files and sockets; a subdirectory is
 * tried as empty). Never follows a link: name is opened O_NOFOLLOW and
 * every entry goes by unlinkat. Best effort: what cannot go stays. */
void remove_tree_at(int parent, const char *name);

/* open_log: a log that a path names (--log, --audit), often in a directory
 * others may write, opened for appending: its directory found by
 * hostpath_parent, then O_APPEND|O_NOFOLLOW, made 0600
 * when new, and kept only when it is a regular file of one link (a hard
 * link to another file is not appended to), a FIFO or a character device
 * (which only root makes). The fd stays O_NONBLOCK: a FIFO without a
 * reader fails to open, and a write to one whose reader does not read
 * fails with EAGAIN (the caller drops that line), so that no reader can
 * hold the caller in write(2). The caller writes a line with one write(2)
 * (a FIFO takes up to PIPE_BUF bytes whole or not at all).
 * /dev/stdout and /dev/stderr, links into /proc/self/fd, are the caller's
 * own fds 1 and 2 (duplicated, their flags unchanged). An O_CLOEXEC fd, or
 * -errno: -ELOOP for a link, -EMLINK for a file of more links or of
 * another type. */
int open_log(const char *path);

#endif
