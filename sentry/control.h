/* sentry/control.h: a sandbox's control socket (sentry/control.c). */
#ifndef MOAT_SENTRY_CONTROL_H
#define MOAT_SENTRY_CONTROL_H

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/un.h>

#include "lib/util.h"

/* A sandbox name (--name, or an ID): 1 to 64 of A-Z a-z 0-9 - _ ., not
 * first '.': one file name, never "..", never with a '/'. */
bool control_name_ok(const char *name);
int control_parse_signal(const char *s); /* "TERM", "SIGKILL", "9"; -1 */
/* The directory of `moat do` control sockets, into out (cap bytes):
 * /run/moat for root, else $XDG_RUNTIME_DIR/moat, else /tmp/moat-UID;
 * made (create) if missing. 0, or negative with err set when it is not a
 * real directory of the caller's that nobody else can write. */
int control_dir(char *out, size_t cap, bool create, struct moat_error *err);
/* The sentry's side: listen (name NULL: no socket) on its socket file in
 * control_dir, taking over a dead sandbox's of that name and refusing a
 * live one's or an OCI container's; serve; close. */
int control_open(const char *name, struct moat_error *err);
/* The same at a whole path (an OCI container's, cli/oci.c). */
int control_open_addr(const char *path, struct moat_error *err);
/* A connection to the sandbox at socket file addr; fd or -errno: -EPERM
 * when it is served by neither the caller's uid nor root (nothing was
 * sent). */
int control_connect(const char *addr);
/* The socket file of sandbox name, for a client (a `moat do` one, or an
 * OCI container's of root's default --root), into out; 0, or negative
 * with err set ("no sandbox named ..."). */
int control_find(const char *name, char *out, size_t cap,
		 struct moat_error *err);
/* control_find, then control_connect: an fd, or -1 with err set, saying
 * who serves it when that is someone else. */
int control_dial(const char *name, struct moat_error *err);
/* The client's side: the answer to a request on fd (prot/control.h),
 * read to its end and checked whole. framed: a request that returns
 * data (ps, stats, policy-show). *out (the caller's to free): the line
 * without its '\n' ("ok", "error: ...", a state), or the body,
 * NUL-terminated; a line's control bytes made '?' (ctl_printable). Its
 * length, or -errno: -EPROTO when the answer was cut off, runs past its
 * end or is none (never a part of one as data), -ETIMEDOUT when nothing
 * came. At most timeout_ms for all of it; no more is read than its
 * header said, and one byte. */
ssize_t control_read_reply(int fd, bool framed, char **out, int timeout_ms);
/* One request to the sandbox at socket file full, and its answer as
 * control_read_reply gives it (-ECONNREFUSED/-ENOENT: no such sandbox;
 * -EPERM: another user's). */
ssize_t control_call(const char *full, const void *req, size_t len, bool framed,
		     char **reply, int timeout_s);
/* An OCI container, created: say "ok" on ready_fd (> 2), then serve
 * requests until "start" (0) or a kill (its signal). */
int control_wait_start(int ready_fd);
/* Paused: serve requests only, until resume (or a SIGKILL, or
 * --timeout). */
void control_wait_resume(void);
int control_pollfds(struct pollfd *pfds, int max);
/* When the listening socket is polled again after a failed accept (out of
 * fds), CLOCK_MONOTONIC ns; 0: it is polled. */
int64_t control_deadline(void);
void control_pump(void);
void control_close(void);

#endif
