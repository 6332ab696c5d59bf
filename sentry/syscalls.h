/* sentry/syscalls.h: prototypes of every handler named in syscall_list.h. */
#ifndef MOAT_SYSCALLS_H
#define MOAT_SYSCALLS_H
#include "sentry/sentry.h"
#define EMU(name, fn, st, fmt, note)                                           \
	long fn(struct task *t, struct syscall_args *a);
#define NATIVE(name, fmt, note)
#include "sentry/syscall_list.h"
#undef EMU
#undef NATIVE
#endif
