/* cli/cli.h: one function per moat command. */
#ifndef MOAT_CLI_H
#define MOAT_CLI_H
int cmd_do(int argc, char **argv);
int cmd_kill(int argc, char **argv);
int cmd_policy(int argc, char **argv);
#endif
