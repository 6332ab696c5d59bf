/* broker/broker.h: `moat broker`, the process that holds a sandbox's
 * secret values and its CA key (DESIGN.md "broker", docs/credentials.md).
 *
 * Started by the sentry as `moat broker --ctl 3 --as UID:GID [--id ID]`
 * with the SOCK_SEQPACKET link of prot/broker.h at fd 3 and an
 * environment holding only the variables that `env:` sources name. It
 * reads BRK_CONFIG, reads every value, makes the CA, then confines
 * itself (the helper uid, not dumpable, no other fd, its own seccomp
 * filter) before it answers BRK_READY; from then on it serves BRK_FLOW
 * messages, one thread per flow, until the link closes.
 */
#ifndef MOAT_BROKER_BROKER_H
#define MOAT_BROKER_BROKER_H

#define BRK_FLOWS_MAX 256 /* flows served at once; more are refused */

/* argv[0] is "broker". Returns the exit status (it never returns while
 * the link is open). */
int broker_main(int argc, char **argv);

#endif
