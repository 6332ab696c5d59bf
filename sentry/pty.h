/* sentry/pty.h: pseudo-terminals (sentry/pty.c). */
#ifndef MOAT_SENTRY_PTY_H
#define MOAT_SENTRY_PTY_H

#include <poll.h>
#include <stdbool.h>

#include "sentry/sentry.h"

struct pty;
struct file;

/* devfs: /dev/ptmx, /dev/pts/N, /dev/tty. */
int pty_open_master(struct task *t, int flags, struct file **out);
int pty_open_slave(struct task *t, int index, int flags, struct file **out);
int pty_open_ctty(struct task *t, int flags, struct file **out);
bool pty_exists(int index);
int pty_count_index(int *out, int max); /* the live indexes, ascending */
bool file_is_tty(struct file *f);
/* Bytes typed at the terminal (the master's side of the line). */
void pty_input(struct pty *p, const void *buf, size_t n);

/* `moat do -t` (and `moat exec -t`): owner's stdio is the slave of a pty
 * whose master the sentry relays to the host terminal in (raw mode) and
 * out; the relay owns in and out. */
int pty_relay_start(struct process *owner, int in, int out,
		    struct moat_error *err);
/* owner (an exec'd process) ended: flush its relay and close it. */
void pty_relay_end(struct process *owner);
int pty_relay_pollfds(struct pollfd *pfds, int max); /* fds to wait on */
void pty_relay_pump(void);   /* move what can move, never blocking */
void pty_relay_finish(void); /* flush to the host, restore its mode */
void pty_relay_restore(void);

#endif
