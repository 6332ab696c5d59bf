/* sentry/limits.h: resource limits of a sandbox.
 *
 * Memory, pids and CPU are enforced by the host kernel through cgroups the
 * sentry creates: below its own cgroup of each v1 controller, or, on a host
 * whose /sys/fs/cgroup is the unified v2 hierarchy, one cgroup below
 * /sys/fs/cgroup/moat/. The sentry and its helpers join them, so that
 * memory and CPU count what they do for the guests; the guests' reaper
 * joins a child of them (the pids limit is the guests' alone) before any
 * guest exists. What guests make the sentry's heap hold is kept within a
 * share of the memory limit by the sentry itself (limits_heap_charge). The process count is also checked by the sentry at fork, so a
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

#include <limits.h>

#include "sentry/sentry.h"

/* The most hierarchies a sandbox's cgroups are in (v1: one each). */
#define LIMITS_MAX_CG 10
/* An OCI container's cgroup directories (docs/limits.md), one for each
 * hierarchy, for linux.cgroupsPath cgroups_path (the container's ID when
 * the config has none) as runc's cgroupfs driver places it: absolute
 * paths below each hierarchy's root, relative ones below this process's
 * cgroup (v2: its parent). Nothing is made. Refused, with one message
 * naming the field: `..`, the root, this process's cgroup or one of its
 * ancestors. Returns how many were put in dirs (LIMITS_MAX_CG at most),
 * or -1 with err set. */
int limits_oci_dirs(const char *cgroups_path, char (*dirs)[PATH_MAX],
		    struct moat_error *err);
/* At `delete`: rmdir an OCI container's cgroup directory (one that
 * limits_oci_dirs named) and its parts, waiting briefly for the
 * sandbox's last processes; one that is not a cgroup, or that others'
 * processes still use, is left. */
void limits_oci_remove(const char *dir);
/* Create the cgroups (setup code, before the reaper exists). */
int limits_setup(struct moat_error *err);
/* Put the reaper (and so every guest, its children) in the cgroups, in
 * the background: each join waits for an RCU grace period of the
 * kernel's (about 10 ms per cgroup on a cgroup v1 host), so the rest of
 * setup goes on meanwhile. limits_attach_wait collects the result: it
 * must be 0 before the first guest is let run. */
void limits_attach_start(pid_t reaper);
int limits_attach_wait(struct moat_error *err);
/* A helper of the sentry's (a gofer, the network's helper) that it has
 * just forked: it goes where the sentry goes, for its memory and CPU to
 * count in the sandbox's (limits_attach_wait puts it there; one forked
 * after that is born there). */
void limits_adopt(pid_t helper);
/* After setup, before the sentry's seccomp filter: a janitor process that
 * removes the cgroups once the sentry is gone, even if it crashed. */
void limits_start_janitor(void);
/* What guests may make the sentry's heap hold (pipe buffers, inline tmpfs
 * data and nodes, socket queues, SysV messages): a quarter of the memory
 * limit, which the sentry's heap shares with the guests (docs/limits.md);
 * no bound without one (each kind keeps its own). limits_heap_charge(n)
 * takes n bytes of it (false: past it, nothing taken) or gives -n back.
 * limits_heap_room() is what is left; limits_heap_force(n) takes n bytes
 * even past it, for what was let in by the room (a datagram that
 * overshoots, as on Linux) or cannot be refused (a rename's longer paths),
 * and is given back as any charge. */
uint64_t limits_heap_budget(void);
bool limits_heap_charge(int64_t delta);
uint64_t limits_heap_room(void);
void limits_heap_force(int64_t delta);
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
