/* cli/secret.h: `moat secret`'s pieces that do not talk to a sandbox
 * (cli/secret.c), here to be unit-tested.
 *
 * A secret's new value is read by the CLI process, never by the sentry:
 * from SOURCE (env:VAR, file:PATH, fd:N, as for --secret) into a sealed
 * memfd, which goes over the control socket to the sentry and on, unread,
 * to the broker (prot/broker.h BRK_SECRET). Sealed, so that nobody who
 * holds the fd on the way can change the value or make it grow, and so
 * that the broker's read of it ends (it is a regular file, not a pipe
 * that could be held open).
 */
#ifndef MOAT_CLI_SECRET_H
#define MOAT_CLI_SECRET_H

#include <fcntl.h>
#include <stdbool.h>

#include "lib/util.h"

/* The seals a value's memfd carries (all of them: nothing can be written,
 * grown, shrunk or sealed otherwise after). */
#define SECRET_SEALS (F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE)

/* The value SOURCE names, read whole and checked as the broker checks a
 * value (one trailing "\n" or "\r\n" dropped; then not empty, at most
 * CRED_VALUE_MAX bytes, no NUL, no line break), in a new sealed memfd,
 * read from offset 0: the fd (the caller closes it), or -1 with err
 * naming SOURCE and what is wrong. The value never appears in err. */
int secret_value_memfd(const char *source, struct moat_error *err);

/* Is name a credential's name (an environment variable's: [A-Za-z_]
 * then [A-Za-z0-9_], at most CRED_NAME_MAX - 1 bytes)? */
bool secret_name_ok(const char *name);

#endif
