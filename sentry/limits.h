/* sentry/limits.h: resource limits of a sandbox.
 *
 * Memory, pids and CPU are enforced by the host kernel through cgroups the
 * sentry creates: below its own cgroup of each v1 controller, or, on a host
 * whose /sys/fs/cgroup is the unified v2 hierarchy, one cgroup below
 * /sys/fs/cgroup/moat/. The guests' reaper joins them before any guest
 * exists. The process count is also checked by the sentry at fork, so a
 * fork bomb gets EAGAIN before the kernel has to refuse, with or without a
 * cgroup. The wall-clock limit is the sentry's. tmpfs size (--disk) is
 * fs_tmpfs.c's.
 *
 * `moat do` has a memory and a pids limit by default (limits_default_*);
 * a default that cannot be applied (no cgroup may be made here) is
 * dropped with a warning, never fatal. A limit asked for is applied or
 * the sandbox does not start. An OCI container has what its config.json
 * says and nothing more.
 */
#ifndef MOAT_LIMITS_H
#define MOAT_LIMITS_H

#include "sentry/sentry.h"

/* Create the cgroups (setup code, before the reaper exists). */
int limits_setup(struct moat_error *err);
/* Put the reaper (and so every guest) in them. */
/* Put the reaper (and so every guest, its children) in the cgroups, in
 * the background: each join waits for an RCU grace period of the
 * kernel's (about 10 ms per cgroup on a cgroup v1 host), so the rest of
 * setup goes on meanwhile. limits_attach_wait collects the result: it
 * must be 0 before the first guest is let run. */
void limits_attach_start(pid_t reaper);
int limits_attach_wait(struct moat_error *err);
/* After setup, before the sentry's seccomp filter: a janitor process that
 * removes the cgroups once the sentry is gone, even if it crashed. */
void limits_start_janitor(void);
/* Which limit, if any, ended the sandbox: prints one line on stderr. */
void limits_report(int init_status);
/* What the guests use now, from their cgroups (-1: not known). */
struct limits_stats {
	int64_t cpu_ns, memory, memory_max, pids;
};
void limits_stats(struct limits_stats *st);
/* Freeze or thaw every guest (the freezer cgroup); 0 or -errno. */
int limits_freeze(bool frozen);
/* The defaults of `moat do`, from the host's RAM and CPUs (the reasons are
 * beside them in limits.c). */
uint64_t limits_default_memory(void);
int limits_default_pids(void);
/* Parse "512M", "2G", "100k", "4096" into bytes; -1 on a bad value. */
int64_t limits_parse_size(const char *s);

#endif
