/* cli/main.c: moat's command line: a thin layer over the sentry. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "broker/broker.h"
#include "cli/cli.h"
#include "gofer/gofer.h"
#include "netstack/netstack.h"
#include "sentry/sentry.h"

static void usage(FILE *f)
{
	fputs("usage: moat do [options] -- CMD [ARGS...]\n"
	      "       moat kill [--all] NAME [SIGNAL]   (a sandbox run with --name)\n"
	      "       moat [--root DIR] [--log F] [--log-format json|text] [--debug]\n"
	      "            create|start|run|state|kill|delete|list|ps|events|\n"
	      "            pause|resume|spec ...   (an OCI runtime, as runc; docs/oci.md)\n"
	      "       moat policy set NAME FILE | show NAME   (its egress policy, live)\n"
	      "       moat secret rotate NAME SECRET SOURCE | revoke NAME SECRET |\n"
	      "                   set NAME SECRET SOURCE@HOST[,HOST...]\n"
	      "                   (a credential, live; SOURCE: env:VAR, file:PATH, fd:N;\n"
	      "                   set prints the new one's placeholder)\n"
	      "       moat help syscalls [--markdown]\n"
	      "       moat --version\n"
	      "\n"
	      "moat do options:\n"
	      "  --rootfs DIR     root filesystem (default: the host's /), read-only\n"
	      "  --hostname H     the sandbox's hostname (default: moat)\n"
	      "  --env K=V        set an environment variable (repeatable)\n"
	      "  --cwd D          working directory inside the sandbox\n"
	      "  --name NAME      name the sandbox, for `moat kill NAME`\n"
	      "  --mount SRC:DST[:ro|rw|clone]\n"
	      "                   bind host directory SRC at DST: ro (the default),\n"
	      "                   rw (writes reach SRC), or clone (a private\n"
	      "                   copy-on-write view; SRC is never changed)\n"
	      "  -t, --tty        a terminal for CMD: a pty of the sandbox's, relayed\n"
	      "                   to this one (raw mode while it runs)\n"
	      "  --strace         print every trapped syscall to stderr\n"
	      "  --audit FILE     audit log (default /var/log/moat/audit.jsonl, shared,\n"
	      "                   rotated past 32M, FILE.1 to FILE.3; docs/audit.md)\n"
	      "  --audit-max SIZE most audit bytes the sandbox writes (default 16M);\n"
	      "                   past 200 records a second they are only counted\n"
	      "  --memory SIZE    memory limit of the guests (cgroup), e.g. 512M, or\n"
	      "                   unlimited (default: half the RAM, at most 8G)\n"
	      "  --pids N         most processes and threads at once (fork: EAGAIN),\n"
	      "                   or unlimited (default: 1024, or 32 per CPU)\n"
	      "  --cpus N         CPU time, in CPUs (cgroup quota), e.g. 0.5\n"
	      "  --timeout SECS   wall-clock limit: the sandbox is killed after it\n"
	      "  --disk SIZE      most bytes the writable layers (/tmp, /dev/shm, the\n"
	      "                   overlay) may hold (default 10G, or half the free\n"
	      "                   space of the store if less)\n"
	      "  --store DIR      where they keep file data on the host's disk (default\n"
	      "                   /var/lib/moat/store; ~/.local/state/moat/store)\n"
	      "  --net MODE       none (the default: loopback only), slirp (user-mode\n"
	      "                   networking, no root needed) or tap (a TAP device,\n"
	      "                   routed and NATed on the host; root); docs/network.md\n"
	      "  --allow DEST     let the sandbox reach DEST: a name, *.domain, an\n"
	      "                   address or CIDR, each with :PORT[-PORT] and /tcp,\n"
	      "                   /udp or /icmp if wanted; '*' allows all but the\n"
	      "                   host's own and private ranges; a name reaches\n"
	      "                   none of those either, whatever its DNS says,\n"
	      "                   unless NAME...+private lets it reach private\n"
	      "                   ones (repeatable)\n"
	      "  --deny DEST      never let it reach DEST (deny wins; repeatable)\n"
	      "  --policy FILE    egress rules and credentials from a JSON policy\n"
	      "                   file\n"
	      "  --dns ADDR       the upstream resolver (default: the host's)\n"
	      "  --secret NAME=SOURCE@HOST[,HOST...]\n"
	      "                   the guest gets NAME=<placeholder>; the broker\n"
	      "                   swaps in the value read from SOURCE (env:VAR,\n"
	      "                   file:PATH or fd:N, never the value itself) in\n"
	      "                   the Authorization, X-Api-Key and\n"
	      "                   Proxy-Authorization headers and Basic auth of\n"
	      "                   HTTPS requests to HOST (a name or *.domain,\n"
	      "                   which egress must allow) only (repeatable;\n"
	      "                   docs/credentials.md)\n"
	      "  --inspect HOST   let the broker see TLS to HOST too (a name,\n"
	      "                   *.domain, or '*' for all but --passthrough), to\n"
	      "                   block placeholders sent there (repeatable)\n"
	      "  --passthrough HOST\n"
	      "                   never inspect TLS to HOST; no secret may name it\n"
	      "                   (repeatable)\n"
	      "  --upstream-ca FILE\n"
	      "                   a CA the broker trusts for upstream TLS besides\n"
	      "                   the host's roots\n"
	      "  --broker         start the broker with no secret yet, for\n"
	      "                   `moat secret set` later (a --secret or --inspect\n"
	      "                   starts it anyway)\n",
	      f);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "do"))
		return cmd_do(argc - 1, argv + 1);
	if (oci_is_command(argv[1]) ||
	    (argv[1][0] == '-' && strcmp(argv[1], "-h") &&
	     strcmp(argv[1], "--help")))
		return cmd_oci(argc, argv);
	if (!strcmp(argv[1], "policy"))
		return cmd_policy(argc - 1, argv + 1);
	if (!strcmp(argv[1], "secret"))
		return cmd_secret(argc - 1, argv + 1);
	if (!strcmp(argv[1], "gofer")) {
		/* _exit: no atexit handler may run a syscall outside the
		 * gofer's seccomp filter. */
		fflush(stderr);
		_exit(gofer_main(argc - 1, argv + 1));
	}
	if (!strcmp(argv[1], "broker")) {
		/* _exit: no atexit handler may run a syscall outside the
		 * broker's seccomp filter. */
		_exit(broker_main(argc - 1, argv + 1)); /* credentials */
	}
	if (!strcmp(argv[1], "netslirp"))
		_exit(netslirp_main(argc - 1, argv + 1)); /* --net=slirp */
	if (!strcmp(argv[1], "help")) {
		if (argc >= 3 && !strcmp(argv[2], "syscalls"))
			return syscalls_help(argc >= 4 &&
					     !strcmp(argv[3], "--markdown"));
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "version"))
		return oci_version();
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(stdout);
		return 0;
	}
	fprintf(stderr, "moat: unknown command `%s`\n", argv[1]);
	usage(stderr);
	return 2;
}
