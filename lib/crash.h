/* lib/crash.h: crash backtraces (libunwind). */
#ifndef MOAT_LIB_CRASH_H
#define MOAT_LIB_CRASH_H
/* Print a backtrace on SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, then die
 * of the same signal. who prefixes the report ("moat: sentry"). */
void crash_handler_install(const char *who);
/* From now on frames are named by file and offset (addr2line -e FILE
 * OFFSET), not by function: for a process that may open no file. */
void crash_handler_no_names(void);
#endif
