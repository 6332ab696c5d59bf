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

bool control_name_ok(const char *name);
/* The abstract address of sandbox name; returns its length. */
socklen_t control_addr(const char *name, struct sockaddr_un *sa);
int control_parse_signal(const char *s); /* "TERM", "SIGKILL", "9"; -1 */
/* The sentry's side: listen (name NULL: no socket), serve, close. */
int control_open(const char *name, struct moat_error *err);
/* The same at a whole address: an abstract name, or a socket file when
 * it starts with '/' (an OCI container's, cli/oci.c). */
int control_open_addr(const char *full, struct moat_error *err);
/* A connection to the sandbox at such an address; fd or -errno. */
int control_connect(const char *addr);
socklen_t control_addr_raw(const char *full, struct sockaddr_un *sa);
/* The client's side: one request to the sandbox at abstract name full,
 * and its whole answer (NUL-terminated) in reply; bytes, or -errno
 * (-ECONNREFUSED/-ENOENT: no such sandbox). */
ssize_t control_call(const char *full, const void *req, size_t len, char *reply,
		     size_t cap, int timeout_s);
/* An OCI container, created: say "ok" on ready_fd (> 2), then serve
 * requests until "start" (0) or a kill (its signal). */
int control_wait_start(int ready_fd);
/* Paused: serve requests only, until resume (or a SIGKILL, or
 * --timeout). */
void control_wait_resume(void);
int control_pollfds(struct pollfd *pfds, int max);
void control_pump(void);
void control_close(void);

#endif
