/* lib/crash.h: crash backtraces (libunwind). */
#ifndef MOAT_LIB_CRASH_H
#define MOAT_LIB_CRASH_H
/* Print a backtrace on SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, then die
 * of the same signal. who prefixes the report ("moat: sentry"). */
void crash_handler_install(const char *who);
#endif
