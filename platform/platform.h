/* platform/platform.h: how the sentry runs guest tasks on the host.
 *
 * One interface, implemented today by ptrace (platform/ptrace.c):
 * start the first task, stop it at every trapped syscall, read and write its
 * registers and memory, make it run a host syscall on our behalf (injection),
 * and resume it with a result.
 */
#ifndef MOAT_PLATFORM_H
#define MOAT_PLATFORM_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/util.h"

struct task;

/* Fixed address of the stub image that every guest process is host-exec'ed
 * into before the sentry loads the real program. Far above where the sentry
 * places programs (0x400000, 0x5555...) and far below the top-down mmap base
 * (>= 0x7eff...), so brk, which the host kernel starts right after the stub,
 * has room to grow. */
#define STUB_ADDR 0x7e0000000000ULL
#define STUB_CODE_OFF 0xb0ULL /* syscall; ud2 */
#define STUB_SYSCALL (STUB_ADDR + STUB_CODE_OFF)
#define STUB_DATA (STUB_ADDR + 0x1000ULL) /* one zeroed RW page */
#define STUB_DATA_SIZE 0x1000ULL
#define STUB_END (STUB_DATA + STUB_DATA_SIZE)

/* The stub must stay what the sentry mapped: injected syscalls run its
 * instruction. Native mmap/munmap/mprotect/mremap are allowed only where
 * they cannot reach it: at or above its end, or starting 1 TiB below it
 * with a length under 1 TiB. Anything else traps and is checked. */
#define STUB_GAP (1ULL << 40)
#define STUB_LOW (STUB_ADDR - STUB_GAP)

static inline int stub_far(uint64_t addr, uint64_t len)
{
	return addr >= STUB_END || (addr < STUB_LOW && len < STUB_GAP);
}

static inline int stub_overlaps(uint64_t addr, uint64_t len)
{
	uint64_t end;

	if (__builtin_add_overflow(addr, len, &end))
		return 1;
	return addr < STUB_END && end > STUB_ADDR;
}

/* Host fd numbers every guest process holds (and nothing else). */
#define GUEST_CTL_FD 1000  /* receives donated host fds for mmap */
#define GUEST_STUB_FD 1001 /* the stub ELF memfd, exec'ed by execve */

int plat_make_stub(struct moat_error *err);
/* Start the pid-namespace reaper, traced, with no guest yet: its host pid,
 * or a negative value with err set. It and every guest task run as host
 * uid/gid (the only ids their user namespace maps; the caller's own
 * unless the caller may map others). The caller may put it in cgroups
 * (its children inherit them) and go on with setup meanwhile. */
pid_t plat_spawn_prepare(int stub_fd, int guest_ctl_fd, uid_t uid, gid_t gid,
			 struct moat_error *err);
/* Then let it fork the first guest task (stopped, traced): its host tid,
 * or a negative value with err set. */
pid_t plat_spawn_first(struct moat_error *err);
int plat_set_options(pid_t tid);
/* One more guest process (`moat exec`): the reaper forks it; the sentry
 * learns its host pid from the reaper's fork event and starts it with
 * plat_start_spawned (stopped: its first stop was already collected). */
int plat_spawn_more(void);
int plat_start_spawned(pid_t child, bool stopped);

/* Resume a task stopped at a syscall. */
int plat_resume_result(struct task *t,
		       long result); /* skip syscall, return result */
int plat_resume_passthrough(struct task *t, int want_exit_stop);
int plat_resume_restart(struct task *t); /* re-execute the syscall insn */
int plat_cont(pid_t tid, int sig);
/* Every host signal the sentry sends goes through these: a pid that is not
 * a single positive process (0, -1, a group, host init) is refused, so no
 * bookkeeping slip can turn into a signal to the host's process groups. */
int plat_kill(pid_t pid, int sig);
int plat_tkill(pid_t tid, int sig);
/* Queue si on process pid, or on its thread tid when tid > 0. */
int plat_sigqueue(pid_t pid, pid_t tid, const siginfo_t *si);
/* The next stop of t (other tasks' events are deferred; see ptrace.c). */
int plat_wait_task(struct task *t, int resume_req);
/* The queue of events taken from the kernel, not yet handled, oldest
 * first: those that arrived while the sentry waited on one task, and those
 * the event loop gathers (sentry.c, drain_waits). */
bool plat_next_deferred(pid_t *pid, int *st);
bool plat_has_deferred(void);
/* Room for one more event (false: none could be had), then the event. */
bool plat_defer_reserve(void);
void plat_defer(pid_t pid, int st);
/* CPU placement: called at every trap, and before gofer round trips. */
void plat_note_trap(struct task *t);
void plat_bind_gofer(void);
void plat_release_busy(void);

/* Run syscall nr in the stopped task t and return its result (or -errno).
 * The task is left at a syscall-exit stop; plat_resume_result restores it. */
long plat_inject(struct task *t, long nr, uint64_t a0, uint64_t a1, uint64_t a2,
		 uint64_t a3, uint64_t a4, uint64_t a5);
/* Donate host fd to the guest process of t; returns the guest-side host fd. */
int plat_donate_fd(struct task *t, int hostfd);

#endif
