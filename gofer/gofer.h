/* gofer/gofer.h: the gofer, moat's only process that opens host files.
 *
 * It serves one directory tree, or one regular file (a file bind mount),
 * read-only unless started --rw, over 9P2000.L (prot/p9.h) on a
 * SOCK_STREAM socket, framed by the 9P size[4] field. Every opened host fd is
 * donated to the sentry with SCM_RIGHTS on the Rlopen reply, so reads and
 * mmaps need no round trip. See docs/gofer.md for the protocol subset and the
 * confinement.
 *
 * Layers, so tests and fuzzers can skip the confinement:
 *   gofer_main     argv parsing + gofer_confine + gofer_serve (the real thing)
 *   gofer_confine  namespaces, pivot_root, fds, caps, seccomp (setup code)
 *   gofer_serve    the framing loop on a socket, no confinement
 *   gofer_handle   one request buffer -> one reply buffer (+ maybe an fd)
 */
#ifndef MOAT_GOFER_GOFER_H
#define MOAT_GOFER_GOFER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/util.h"

struct gofer; /* opaque: fid table and session state of one connection */

/* `moat gofer --root DIR|FILE --fd N`. argv[0] is ignored, and a leading "gofer"
 * word is skipped, so the CLI may pass either its own argv or argv+1.
 * Returns the process exit status: 0 when the sentry hung up cleanly, 1 on
 * a setup error (reported on stderr while it is still open), 2 on a usage
 * error, 3 when serving failed. */
int gofer_main(int argc, char **argv);

/* Confine the calling process (setup code; must be single-threaded, root
 * with CAP_SYS_ADMIN in its user namespace). On success the process is
 * pivot_root'ed into a read-only, non-recursive bind of `root`, holds only
 * `sockfd` and the returned *rootfd (an O_PATH fd of the new "/"), has no
 * capabilities and no_new_privs, dies with its parent, and runs under the
 * serving seccomp filter. A `root` that is a regular file: the new "/" is
 * an empty read-only tmpfs whose one entry, GOFER_FILE_NAME, is the bind
 * of that file (read-only unless writable), and *is_file is set. On
 * failure err says which step failed; the process may then be
 * half-confined and should exit. */
int gofer_confine(const char *root, int sockfd, bool writable, int *rootfd,
		  bool *is_file, struct moat_error *err);

/* Install only the serving-loop seccomp filter (part of gofer_confine;
 * exposed for tests). read/write/sendmsg are allowed on sockfd only. */
int gofer_seccomp_install(int sockfd, bool writable, struct moat_error *err);

/* Serve 9P on sockfd until the peer hangs up. rootfd is a directory fd
 * (O_PATH is fine) of the tree to serve; it is dup'ed, and neither fd is
 * closed. Needs no privilege. Returns 0 on clean EOF, -EPROTO on a framing
 * error (size field < 7 or > msize: the stream cannot be resynchronised),
 * -ENOMEM, or the -errno of a failed socket read/write. */
int gofer_serve(int sockfd, int rootfd, unsigned flags);

/* The same for a bind mount of one regular file: the attach root is the
 * file `name` in directory dirfd (confined, the file's bind mount there,
 * gofer/confine.c), never the directory. Walks from it fail ENOTDIR, so
 * nothing else of dirfd is ever served; Tlopen reopens exactly that inode
 * (ESTALE if the name now holds another). -EISDIR for a directory, -EPERM
 * for a FIFO, socket or device, -EINVAL with GOFER_STORE. */
int gofer_serve_file(int sockfd, int dirfd, const char *name, unsigned flags);

/* The name of a confined file gofer's one file in its "/". */
#define GOFER_FILE_NAME "file"

/* Serve the write side of 9P2000.L too (Tlcreate, Tmkdir, Tsymlink, Tmknod
 * of FIFOs and regular files, Tunlinkat, Trenameat, Tlink, Tsetattr,
 * Tfsync; Tlopen for writing). Without it every one is EROFS. */
#define GOFER_WRITABLE 1u
/* A sandbox's store (sentry/store.h): writable, but only flat regular
 * files of its root: walk, open, create and remove them, getattr, statfs.
 * Every other request is EPERM, so that even a sentry taken over cannot
 * make directories, links or symlinks there (which would outlive the
 * sandbox's janitor) or change modes. */
#define GOFER_STORE 2u

/* Session state for gofer_handle. gofer_new dups rootfd (the caller keeps
 * its own); gofer_free clunks every fid. -errno on failure. */
int gofer_new(struct gofer **out, int rootfd, unsigned flags);
/* A file gofer's session (see gofer_serve_file); dirfd is not kept. */
int gofer_new_file(struct gofer **out, int dirfd, const char *name,
		   unsigned flags);
void gofer_free(struct gofer *g);

/* Handle one complete request req[0..len) (size[4] included) and write one
 * reply into reply[0..cap). Every request gets a reply: malformed input,
 * unknown fids, unsupported types all become Rlerror (tag P9_NOTAG if the
 * header itself is unreadable). On return *reply_len is the reply size and
 * *donate_fd is -1 or an fd (Rlopen) that the CALLER now owns: it must be
 * sent with the reply (SCM_RIGHTS) and then closed.
 * Returns 0, or -EMSGSIZE if cap cannot hold even an Rlerror (11 bytes). */
int gofer_handle(struct gofer *g, const uint8_t *req, size_t len,
		 uint8_t *reply, size_t cap, size_t *reply_len, int *donate_fd);

/* Number of fids currently held (tests check that clunk frees). */
size_t gofer_nfids(const struct gofer *g);

#endif
