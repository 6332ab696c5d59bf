/* lib/crash.c: a backtrace on stderr when a moat process crashes.
 *
 * Runs in a signal handler on its own stack: libunwind's local unwinder
 * needs no allocation. The signal is then re-raised with the default action
 * so the exit status still says what happened. */
#define UNW_LOCAL_ONLY
#include <dlfcn.h>
#include <libunwind.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "lib/crash.h"

static const char *crash_who = "moat";
static char altstack[64 * 1024];
/* libunwind finds a frame's name by opening its ELF file: not in a
 * process whose seccomp filter allows no open (the sentry's). Then each
 * frame is its file and the offset in it, for addr2line. */
static bool no_names;

void crash_handler_no_names(void)
{
	no_names = true;
}

static void crash_handler(int sig)
{
	unw_context_t ctx;
	unw_cursor_t cur;
	char line[512], name[256];
	int n, depth = 0;

	n = snprintf(line, sizeof(line),
		     "%s: fatal signal %d (%s); backtrace:\n", crash_who, sig,
		     strsignal(sig));
	if (write(2, line, (size_t)n) < 0)
		goto out;
	if (unw_getcontext(&ctx) == 0 && unw_init_local(&cur, &ctx) == 0) {
		while (unw_step(&cur) > 0 && depth++ < 64) {
			unw_word_t ip = 0, off = 0;
			unw_get_reg(&cur, UNW_REG_IP, &ip);
			if (no_names) {
				Dl_info di;
				const char *f, *slash;
				if (!dladdr((void *)ip, &di) || !di.dli_fname) {
					snprintf(name, sizeof(name), "?");
				} else {
					f = di.dli_fname;
					slash = strrchr(f, '/');
					snprintf(name, sizeof(name), "%s",
						 *f ? (slash ? slash + 1 : f) :
						      "(moat)");
					off = ip - (unw_word_t)di.dli_fbase;
				}
			} else if (unw_get_proc_name(&cur, name, sizeof(name),
						     &off) != 0) {
				snprintf(name, sizeof(name), "?");
			}
			n = snprintf(line, sizeof(line),
				     "  #%d 0x%016lx %s+0x%lx\n", depth,
				     (unsigned long)ip, name,
				     (unsigned long)off);
			if (write(2, line, (size_t)n) < 0)
				break;
		}
	}
out:
	signal(sig, SIG_DFL);
	raise(sig);
}

void crash_handler_install(const char *who)
{
	static const int sigs[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT };
	stack_t ss = { .ss_sp = altstack, .ss_size = sizeof(altstack) };
	struct sigaction sa;
	size_t i;

	crash_who = who;
	sigaltstack(&ss, NULL);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = crash_handler;
	sa.sa_flags = SA_ONSTACK | SA_RESETHAND;
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
}
