/* sentry/exec.h: execve by the sentry's own loader. */
#ifndef MOAT_EXEC_H
#define MOAT_EXEC_H

#include "sentry/elf.h"
#include "sentry/sentry.h"

struct exec_plan {
	struct file *main, *interp; /* open host-backed files */
	struct vnode *main_vn;
	struct elf_info mi, ii;
	char **argv, **envp; /* owned, NULL-terminated */
	size_t argc, envc;
	char *execfn; /* the path as given to execve */
};

/* Resolve, read and check everything an exec needs, before the point of no
 * return: any error here leaves the caller's image untouched. t may be NULL
 * (the CLI's first command, resolved from the root with cwd). The argv and
 * envp arrays are copied. */
int exec_prepare(struct task *t, struct vnode *cwd, int dirfd, const char *path,
		 int at_flags, char *const *argv, size_t argc,
		 char *const *envp, size_t envc, struct exec_plan **out);
void exec_plan_free(struct exec_plan *p);
/* The host exec of the stub happened (PTRACE_EVENT_EXEC): load the image. */
void exec_event(struct task *t);
/* The host execveat of the stub failed: drop the plan. */
void exec_failed(struct task *t);

#endif
