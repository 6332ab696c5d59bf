/* cli/cli.h: one function per moat command. */
#ifndef MOAT_CLI_H
#define MOAT_CLI_H

#include <stdbool.h>
int cmd_do(int argc, char **argv);
int cmd_kill(int argc, char **argv);
int cmd_policy(int argc, char **argv);
int cmd_secret(int argc, char **argv);
/* moat as an OCI runtime (cli/oci.c): runc's global options and
 * commands; argv[0] is "moat". */
int cmd_oci(int argc, char **argv);
int cmd_oci_kill(int argc, char **argv);
bool oci_is_command(const char *name);
int oci_version(void);
#endif
