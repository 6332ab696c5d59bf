/* sentry/control.h: a sandbox's control socket (sentry/control.c). */
#ifndef MOAT_SENTRY_CONTROL_H
#define MOAT_SENTRY_CONTROL_H

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "lib/util.h"

bool control_name_ok(const char *name);
/* The abstract address of sandbox name; returns its length. */
socklen_t control_addr(const char *name, struct sockaddr_un *sa);
int control_parse_signal(const char *s); /* "TERM", "SIGKILL", "9"; -1 */
/* The sentry's side: listen (name NULL: no socket), serve, close. */
int control_open(const char *name, struct moat_error *err);
int control_pollfds(struct pollfd *pfds, int max);
void control_pump(void);
void control_close(void);

#endif
