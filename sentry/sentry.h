/* sentry/sentry.h: the sentry's core objects.
 *
 * Ownership: the sentry is single-threaded. Every task, process, fd table and
 * file is owned by the global struct sentry and freed by the code that drops
 * its last reference (the *_put functions). Guest-reachable paths return
 * -errno and never abort; allocation failures there give -ENOMEM.
 */
#ifndef MOAT_SENTRY_H
#define MOAT_SENTRY_H

#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/user.h>

#include "lib/util.h"
#include "policy/policy.h"
#include "sentry/caps.h"
#include "sentry/hostids.h"

struct p9_client;
struct file;
struct vnode;
struct mntns;
struct task;
struct process;
struct map_list; /* file mappings, for /proc/<pid>/maps (sentry/fs_proc.c) */

/* Host fds the sentry keeps for itself whatever guests do (fd_admit,
 * lib/util.h): gofer replies, control connections, the netstack, /proc. */
#define SENTRY_FD_RESERVE 256

/* Internal return codes of syscall handlers (never seen by the guest). */
#define SYS_BLOCK (-1000)	/* task waits; handler is re-run on wakeup */
#define SYS_PASSTHROUGH (-1001) /* validated: let the host run it */
#define SYS_NORETURN (-1002)	/* task state changed; do not resume */
#define SYS_PASSTHROUGH_FIXUP (-1003) /* host runs it; fix result at exit */
#define SYS_RESTART (-1004)	      /* re-execute the syscall instruction */

/* File descriptor table, shared by threads (CLONE_FILES). */
struct fdent {
	struct file *f;
	bool cloexec;
};
struct fdtable {
	int refs;
	int cap;
	struct fdent *ents;
};

/* Supplementary groups a process may have: what setgroups accepts
 * (EINVAL past it) and kernel.ngroups_max says (glibc's
 * sysconf(_SC_NGROUPS_MAX) reads it). */
#define CREDS_GROUPS_MAX 32

/* Virtual pids are below this (kernel.pid_max): alloc_pid wraps at it. */
#define PID_MAX 4194304

/* uname's version, also kernel.version and /proc/version's. */
#define MOAT_UTS_VERSION "#1 SMP moat"

struct creds {
	uid_t ruid, euid, suid, fsuid;
	gid_t rgid, egid, sgid, fsgid;
	int ngroups;
	gid_t groups[CREDS_GROUPS_MAX];
	/* Capability sets, bit n for capability n (capabilities(7)). They
	 * are the sandbox's own: no guest holds a host capability. They
	 * decide every privilege check the sentry makes (creds_capable),
	 * and change by Linux's rules (sentry/caps.h). */
	struct cap_sets cap;
	unsigned securebits; /* SECBIT_* of linux/securebits.h */
};

/* Does c hold capability cap in its effective set? Every privilege check
 * asks this, never whether an id is 0: root without a capability is
 * refused what that capability allows, as on Linux. */
static inline bool creds_capable(const struct creds *c, int cap)
{
	return (c->cap.eff >> cap) & 1;
}

struct sigact_rec {
	uint64_t handler; /* SIG_DFL=0, SIG_IGN=1, else a guest address */
	uint64_t flags;
};

/* argv joined by NULs, as the last exec left it: never changed, shared by
 * the processes forked since (a fork bomb under 120 KiB of arguments once
 * copied them into each child). */
struct cmdline {
	int refs;
	size_t len;
	char s[];
};

static inline void cmdline_put(struct cmdline *c)
{
	if (c && --c->refs == 0)
		free(c);
}

/* A guest process (thread group). Virtual pid == tid of its leader. */
/* A pod member's own pid namespace (sentry/task.c, "pid namespaces").
 * The sentry's pids stay the pod's, one number space for all; a member
 * with a namespace of its own sees its first process as 1, its other
 * processes by their pod numbers, and no process outside it. A member that
 * shares the pod's (Kubernetes' shareProcessNamespace) has none. */
struct pidns {
	int refs;
	int init; /* the pod's pid of its first process */
};

struct process {
	int pid;		   /* virtual: the pod's */
	pid_t host_pid;		   /* host tgid, never shown to the guest */
	int sig_sender[65];	   /* the last sender of each signal, as p's
				    * pid namespace numbers it (0: outside) */
	uid_t sig_sender_uid[65];  /* and its real uid then: it may be gone
				   * by the time the signal is delivered */
	int chld_pid, chld_status; /* last child exit, for SIGCHLD's siginfo
				    * (its pid as p's namespace numbers it) */
	int ppid;		   /* virtual pid of the (virtual) parent */
	int pgid, sid;
	int nthreads;
	struct task *leader;
	struct fdtable *fdt;
	struct vnode *cwd;
	struct vnode *exe;
	/* its mount namespace: the sandbox's, or a pod member's (vfs.h) */
	struct mntns *mntns;
	/* its pid namespace: a pod member's own, or NULL (the pod's) */
	struct pidns *pidns;
	struct cmdline *cmdline; /* shared with the children forked since */
	char comm[16];
	struct creds cred;
	/* prctl(PR_SET_DUMPABLE, 0), or a change of its ids: its /proc files
	 * are root's and only root may inspect it. Virtual: the host task's
	 * own flag is never the guest's to change. */
	bool nondumpable;
	/* prctl(PR_SET_NO_NEW_PRIVS) or the OCI config's noNewPrivileges:
	 * kept across fork and exec, never cleared. */
	bool no_new_privs;
	/* /proc/<pid>/oom_score_adj, and the least it may be lowered to
	 * without CAP_SYS_RESOURCE (Linux's signal->oom_score_adj_min):
	 * shown and kept, as Linux keeps them; the host's OOM killer sees the
	 * sandbox's cgroup, not these. */
	int oom_score_adj, oom_score_adj_min;
	mode_t umask;
	/* Scheduling as the guest set it (sentry/sys_misc.c): nice, policy
	 * (SCHED_OTHER, BATCH or IDLE), and the CPU mask it asked for. */
	int ctty; /* controlling terminal: a pty index, or -1 */
	/* Job control: stopped (group-stop) by stop_sig; changes not yet
	 * reported to a wait with WUNTRACED / WCONTINUED. */
	bool stopped, stop_pending, cont_pending;
	int stop_sig;
	int stop_as; /* SIGTSTP/TTIN/TTOU delivered as SIGSTOP (sentry.c) */
	int nice;
	int sched_policy;
	cpu_set_t affinity;
	struct sigact_rec sigact[65];
	struct rlimit_rec {
		uint64_t cur, max;
	} rlim[16];
	struct map_list *maps; /* shared copy-on-write after fork */
	/* a thread's exec is on the host: the leader's tid may pass to it,
	 * and a stop of the leader's taken before is stale (sentry.c) */
	bool exec_pending;
	bool exited;	 /* all threads gone; zombie until reaped */
	int exit_status; /* wait status */
	bool reaped;
	bool swept_used;	  /* task_sweep: a task still points here */
	struct process *next;	  /* all processes list */
	struct process *pid_next; /* S->by_pid chain */
};

enum task_state {
	TS_NEW,	    /* host-created, waiting for its first stop */
	TS_RUNNING, /* running on the host */
	TS_BLOCKED, /* at a seccomp stop, handler waiting */
	TS_DEAD,
};

struct syscall_args {
	long nr;
	uint64_t a[6];
};

struct task {
	pid_t host_tid;
	int tid; /* virtual */
	struct process *proc;
	enum task_state state;
	struct user_regs_struct regs; /* valid while stopped at a syscall */
	struct syscall_args sc;	      /* syscall being handled */
	bool in_syscall;
	bool at_exit_stop;  /* regs reflect a syscall-exit stop */
	bool booting;	    /* bootstrap execveat of the stub */
	bool fixup_pending; /* expecting a syscall-exit stop to fix rax */
	bool fix_clone_regs; /* new child: restore the guest's argument registers */
	bool clone_inflight; /* its clone is counted in S->nforking */
	int fixup_kind;
	/* blocking */
	int64_t deadline_ns; /* CLOCK_MONOTONIC, 0 = none */
	bool block_started;
	int wait_hostfd; /* host fd the blocked task waits on, -1 */
	short wait_events;
	uint64_t block_scratch[4];
	/* a blocking write that waits for all its bytes (a pipe's): how many
	 * had gone in when it blocked. Retries go on from there, and a signal
	 * that ends the wait makes it the result (Linux's partial write). */
	size_t io_done;
	struct pipe *fifo_wait; /* FIFO whose open this task waits in */
	struct vnode *fifo_vn;	/* its node: retries open the same one */
	int fifo_side;		/* 1: as a reader, 2: as a writer */
	uint64_t fifo_gen;	/* the other side's opens when it began */
	/* exec in progress */
	struct exec_plan *exec;
	uint64_t pending_sigs; /* signals (bit sig-1) held back during injection */
	int cpu;	       /* host CPU the task is bound to, -1 none */
	int64_t resumed_ns;    /* when the sentry last let it run */
	bool free_running; /* compute-bound: not bound to the sentry's CPU */
	uint64_t clear_child_tid;
	int fixup_value;     /* virtual result for a passthrough syscall */
	uint64_t fixup_addr; /* guest buffer a passthrough's fixup mends */
	/* F_SETLKW: the process holding the POSIX lock it waits behind
	 * (compared, never dereferenced: for deadlock detection) */
	struct process *lock_wait;
	/* ppoll, pselect6, epoll_pwait(2): the mask the wait runs under
	 * (guest address and value; addr 0: none) */
	uint64_t wait_mask_addr, wait_mask;
	uint64_t clone_flags, clone_ptid, clone_ctid;
	/* The task's tid in the guests' pid namespace (task_ns_tid), and
	 * the host tid it was read for (an exec moves a thread's tid). */
	pid_t ns_tid, ns_tid_of;
	char strace_args[512]; /* --strace: arguments decoded at entry */
	struct task *next;     /* all tasks list */
	struct task *hash_next;
};

/* `--mount SRC:DST[:ro|rw|clone]` (mode: enum mnt_mode, sentry/vfs.h), and
 * an OCI bundle's bind mounts: SRC a directory, or (ro or rw, not clone) a
 * regular file, each served by a gofer of its own. */
struct mount_spec {
	char *src; /* absolute host path, symlinks resolved */
	char *dst; /* canonical guest path */
	int mode;
	bool noexec; /* OCI "noexec": its files are not executed */
};

struct sentry_opts {
	const char *rootfs;
	struct mount_spec *mounts;
	size_t nmounts;
	const char *hostname;
	bool strace;
	bool tty; /* -t: a pty of the sentry's, relayed to the host terminal */
	const char *name; /* --name: the control socket's (sentry/control.c) */
	const char *audit_path; /* NULL: /var/log/moat/audit.jsonl */
	/* The sandbox in audit records: an OCI container's ID; NULL: the
	 * name, or the sentry's pid. */
	const char *audit_id;
	uint64_t audit_max; /* its bytes at most (0: the default) */
	char **env;
	const char *cwd;
	/* `moat do`: the guest's HOME, made a directory it can write at setup
	 * (sentry/boot.c); NULL: the rootfs's, as it is (OCI). */
	const char *home;
	/* Limits (0: none). memory, pids and cpus are enforced by cgroups
	 * (sentry/limits.c); pids also by the sentry; disk bounds tmpfs.
	 * *_default: the value is moat do's default, not asked for, so a
	 * host that cannot apply it drops it with a warning. */
	uint64_t memory;
	int pids;
	bool memory_default, pids_default;
	double cpus;
	int timeout_s;
	uint64_t disk;
	/* Network (netstack/): mode, egress policy (taken over by the
	 * sentry), upstream resolver (NULL: the host's). */
	int net; /* enum net_mode */
	struct moat_policy policy;
	const char *dns;
	/* --upstream-ca: a CA file (absolute, malloc'd) the broker trusts
	 * for upstream TLS besides the host's roots; NULL: none. The
	 * credentials themselves are policy.cred. */
	char *upstream_ca;
	/* --broker: a broker runs though no credential needs one yet, so
	 * that `moat secret set` can add one */
	bool broker;
	/* --store: where the writable layers keep file data (sentry/store.h;
	 * NULL: the default). */
	const char *store;
	/* As an OCI runtime (cli/oci.c): the control socket's path (NULL:
	 * name's in control_dir, sentry/control.c); hold the first process until a
	 * "start" request, and say "ok\n" on ready_fd (> 2) once it waits;
	 * a read-only rootfs; tmpfs
	 * mounts; the first process's identity and rlimits; cgroups for
	 * stats and pause even without limits. */
	const char *control_addr;
	bool wait_start;
	/* OCI: pid 1 is a pid namespace's init, which takes from its guests
	 * only the signals it handles (task.c, init_drops) */
	bool init_unkillable;
	int ready_fd;
	/* (> 2) where the exit status is written, before the control socket
	 * closes: `state` never sees a container that ended without one. */
	int exit_fd;
	bool rootfs_ro;
	bool shm_noexec; /* OCI: /dev/shm's "noexec" */
	/* OCI: config.json mounts no sysfs at /sys, so the sandbox has none
	 * (the rootfs's /sys shows); moat do always has one. */
	bool no_sysfs;
	struct tmpfs_spec {
		char *dst;
		uint64_t size; /* (the sandbox's --disk budget bounds all) */
		mode_t mode;
		uid_t uid;
		gid_t gid;
		bool ro;
		bool noexec;
		const char *src; /* the mount table's source; NULL: "tmpfs" */
	} * tmpfs;
	size_t ntmpfs;
	/* OCI: every mount in its config.json's order, each an entry of
	 * mounts (MOUNT_DIR: a bind, of a directory or a file) or tmpfs. A
	 * later mount goes onto or into an earlier one, as runc makes them:
	 * tmpfs /d then a bind at a link to /d is the bind. NULL (moat do):
	 * mounts, then tmpfs. */
	struct mount_order {
		enum {
			MOUNT_DIR,
			MOUNT_TMPFS
		} kind;
		size_t i;
	} * order;
	size_t norder;
	/* OCI linux.readonlyPaths, then linux.maskedPaths (NULL-terminated,
	 * NULL: none): after every mount, as runc applies them
	 * (vfs_readonly_path, vfs_mask_path) */
	char **readonly_paths;
	char **masked_paths;
	bool set_creds;
	uid_t uid;
	gid_t gid;
	gid_t *gids;
	int ngids;
	/* OCI process.capabilities, as they are before its exec (the exec
	 * transforms them as Linux's does); set_caps false: CAP_SETS_ROOT */
	bool set_caps;
	struct cap_sets caps;
	bool no_new_privs; /* process.noNewPrivileges */
	bool set_umask;
	mode_t umask;
	struct rlimit_spec {
		int res;
		uint64_t cur, max;
	} * rlimits;
	size_t nrlimits;
	/* An OCI container: its cgroups are at linux.cgroupsPath (the ID
	 * when none is given, as runc), with the rest of linux.resources
	 * (sentry/limits.c, docs/limits.md) */
	bool oci_cgroups;
	/* OCI linux.devices: nodes of /dev (sentry/fs_dev.c), each opened
	 * as the sentry's own device of its type and number, or ENXIO. */
	struct dev_spec {
		const char *path; /* canonical, below /dev */
		mode_t mode;	  /* S_IFCHR, S_IFBLK or S_IFIFO | perms */
		unsigned major, minor;
		uid_t uid;
		gid_t gid;
	} * devices;
	size_t ndevices;
	/* OCI linux.{uid,gid}Mappings, as /proc/<pid>/{uid,gid}_map shows
	 * them (none: "0 0 4294967295", the initial namespace's), and
	 * process.oomScoreAdj (/proc/<pid>/oom_score_adj). */
	struct id_map {
		uint32_t inside, outside, count;
	} * uid_maps, *gid_maps;
	size_t nuid_maps, ngid_maps;
	int oom_score_adj;
	/* OCI linux.sysctl but ping_group_range: name and value, checked by
	 * sysctl_setting_check, applied before the first process runs */
	struct sysctl_spec {
		const char *name, *value;
	} * sysctls;
	size_t nsysctls;
	const char *cgroups_path;
	struct oci_cg_res {
		int64_t memory_swap;	    /* 0: none, -1: unlimited */
		int64_t memory_reservation; /* 0: none, -1: unlimited */
		int64_t swappiness;	    /* -1: none */
		bool disable_oom_killer;
		uint64_t cpu_shares; /* 0: none */
		int64_t cpu_quota;   /* 0: none, -1: unlimited */
		uint64_t cpu_period; /* 0: none */
		const char *cpuset_cpus, *cpuset_mems; /* NULL: none */
	} cg;
	bool ping_range;   /* net.ipv4.ping_group_range (default: everyone) */
	const char *netns; /* OCI: a network namespace for slirp's or tap's
			      host side (linux.namespaces path) */
	gid_t ping_lo, ping_hi;
};

struct sentry {
	struct sentry_opts opts;
	struct p9_client *p9;
	uint32_t rootfid;
	int stub_fd;   /* memfd holding the stub ELF */
	int ctl_sock;  /* sentry end of the fd-donation socket */
	int ctl_guest; /* guest end, kept to drain stale datagrams */
	pid_t reaper;  /* host pid of the pid-namespace reaper */
	int spawn_fd;  /* the reaper's request pipe (plat_spawn_more) */
	int next_pid;
	int nlive;	     /* tasks not yet dead */
	int nzombies;	     /* processes exited, not yet reaped */
	int nforking;	     /* clones let through, child not yet known */
	int nclone_orphans;  /* of those, ended by the parent's death: each
			      * may have left an orphan (pids_in_use) */
	int ndead;	     /* dead tasks not yet freed */
	bool sweep_soon;     /* a pod member's among them: free them now */
	bool fds_to_release; /* exited processes still hold their fd tables */
	struct task *tasks;
	struct process *procs;
	struct task *by_host[1024];
	struct process *by_pid[1024]; /* by virtual pid, reaped ones too */
	bool pids_wrapped;   /* next_pid went round: a pid may be in use */
	uint64_t generation; /* bumped on any state change that may wake */
	int audit_fd;
	int init_status; /* wait status of virtual init */
	bool init_exited;
	char hostname[65];
	char domainname[65];
	int host_proc_fd; /* host /proc, for reading tracee maps */
	int64_t boot_ns;
	bool debug;   /* MOAT_DEBUG set: trace events to stderr */
	bool no_bind; /* MOAT_NO_BIND set: do not pin tasks to the sentry's CPU */
	cpu_set_t cpus; /* CPUs the sandbox may use (moat's affinity) */
	int ncpus_possible;
	pid_t gofer_pid;
	pid_t *mount_gofers; /* one per opts.mounts entry */
	pid_t store_gofer;   /* the store's (sentry/store.h) */
	int64_t deadline_ns; /* --timeout: when the sandbox is killed */
	bool timed_out;
	int pids_refused; /* forks refused by --pids */
	int gofer_cpu;
	pid_t net_helper; /* `moat netslirp`, or 0 */
	/* The host ids its processes run as, and the lock that holds them
	 * for the sandbox's life (sentry/hostids.h). */
	struct host_ids ids;
	/* OCI lifecycle (sentry/control.c): created until a "start" request
	 * (or a kill first: killed_created holds its signal); paused while
	 * the freezer cgroup holds the guests. */
	bool created, paused;
	int killed_created;
};

extern struct sentry *S;

/* creds_capable for a task's process; t NULL is the sentry itself (a
 * lookup of the CLI's), which may do anything. */
static inline bool task_capable(const struct task *t, int cap)
{
	return !t || creds_capable(&t->proc->cred, cap);
}

/* sentry/main loop (sentry/sentry.c) */
int sentry_run(struct sentry_opts *opts, char **argv, struct moat_error *err);
int64_t now_ns(void);
/* A guest-given timeout in ns; -1 (no timeout) when it would overflow:
 * such a wait outlasts the sandbox anyway. */
static inline int64_t guest_timeout_ns(int64_t sec, int64_t nsec)
{
	int64_t v;

	if (__builtin_mul_overflow(sec, (int64_t)1000000000, &v) ||
	    __builtin_add_overflow(v, nsec, &v) || v > INT64_MAX / 4)
		return -1;
	return v;
}
void sentry_wake(void); /* state changed: retry blocked tasks */

int sentry_loop(void);
void sentry_complete(struct task *t, long ret);

/* tasks (sentry/task.c) */
struct task *task_clone_event(struct task *parent, pid_t child_host, int ev);
void task_start_child(struct task *c);
void task_fixup_result(struct task *t, struct user_regs_struct *r);
void task_fix_siginfo(struct task *t, int sig);
bool sig_default_ignored(int sig);
bool task_sig_ignored(struct task *t, int sig); /* blocked or SIG_IGN */
/* A pid namespace's init (task.c): and whether sig, at t's delivery stop,
 * is one such an init drops. */
bool proc_unkillable_init(const struct process *p);
bool init_drops_delivery(struct task *t, int sig);
bool pgrp_orphaned(int pgid);
void task_sweep(void);
void task_release_files(void);
struct task *task_by_host(pid_t htid);
struct task *task_by_vtid(int tid);
struct process *proc_by_pid(int pid);
/* ---- pid namespaces (task.c): the guest's numbers and the pod's ---- */
struct pidns *pidns_new(int init);
struct pidns *pidns_get(struct pidns *ns); /* NULL stays NULL */
void pidns_put(struct pidns *ns);
/* Is p in pid namespace ns (NULL, the pod's, holds all)? */
bool pid_visible(const struct pidns *ns, const struct process *p);
/* The number ns gives a pod pid (a process's, a thread's, a group's or a
 * session's): 1 for its first process, 0 for one outside it. */
int pid_to_guest(const struct pidns *ns, int pid);
/* The same for a number known to be ns's (a caller's own pid, tid,
 * group or session, or one of a process ns sees): no lookup. */
int pid_in_ns(const struct pidns *ns, int pid);
/* The pod's pid for a number vpid (> 0) of ns: PID_MAX, which is no
 * pid, for one ns does not have. */
int pid_from_guest(const struct pidns *ns, int vpid);
/* The process, or thread, of ns's number vpid (> 0), else NULL. */
struct process *proc_by_vpid(const struct pidns *ns, int vpid);
struct task *task_by_guest_tid(const struct pidns *ns, int vtid);
/* Has ns a process or thread numbered vpid (> 0)? a process group
 * vpgid (> 0), with a live member? */
bool guest_pid_exists(const struct pidns *ns, int vpid);
bool guest_pgrp_exists(const struct pidns *ns, int vpgid);
struct task *task_new(pid_t host_tid, struct process *p);
struct process *proc_new(struct process *parent);
void task_exited(struct task *t, int status);
int alloc_pid(void);
/* Give p its virtual pid (and make proc_by_pid find it). */
void proc_set_pid(struct process *p, int pid);
/* Processes and tasks the pids limit counts now (zombies included). */
int pids_in_use(void);
/* Mark p reaped (waited for, or auto-reaped). */
void proc_reap(struct process *p);
/* Record who sends sig to p (its pid, and its uid now), for the siginfo
 * the guest sees on delivery. */
void sig_note_sender(struct process *p, int sig, int sender_pid);
int send_signal_task(struct task *t, int sig, int sender_pid);
int send_signal_proc(struct process *p, int sig, int sender_pid);
/* Queue a signal with its siginfo (a timer's, a sigqueue's) on p, or on
 * thread t of p; a task blocked in an emulated syscall is interrupted. */
int send_siginfo(struct process *p, struct task *t, const siginfo_t *si);
/* A task entered or left a group-stop (job control). */
void task_group_stop(struct task *t, int sig);
void task_group_cont(struct task *t);
/* ppoll/pselect6/epoll_pwait: note the mask their wait runs under (uaddr
 * 0: none). 0, or -errno for a bad mask. */
long task_wait_sigmask(struct task *t, uint64_t uaddr, uint64_t size);
/* Interrupt blocked tasks the host queued a signal on (once a tick). */
void task_poll_host_signals(void);
/* x's tid in the guests' pid namespace, where the host kernel resolves a
 * pid that a natively run or passed-through syscall names; -ESRCH when
 * its host task is gone. */
int task_ns_tid(struct task *x);
/* Let the host run t's syscall with a0 in place of its first argument;
 * the guest's own register comes back at the syscall's exit. Returns
 * what the handler returns (SYS_PASSTHROUGH_FIXUP, or -ESRCH). */
long task_pass_arg0(struct task *t, uint64_t a0);

/* System V IPC (sentry/sysv.c): attachments follow fork, exec and exit;
 * SEM_UNDO adjustments apply at exit. sysv_fork copies parent's
 * attachments to child, or none (-ENOMEM: past the sandbox's bound on
 * attachments, which sysv_fork_fits checks first). */
int sysv_fork(struct process *parent, struct process *child);
bool sysv_fork_fits(const struct process *parent);
void sysv_exec(struct process *p);
void sysv_proc_gone(struct process *p);
/* POSIX message queues (sentry/mqueue.c): a notification registered by
 * p is kept over exec, but sends no signal after it (Linux's
 * self_exec_id); it goes when p does. */
void mqueue_exec(struct process *p);
void mqueue_proc_gone(struct process *p);

/* Wall-clock timers (sentry/timer.c): alarm, ITIMER_REAL, timer_create. */
int64_t timers_next(void); /* earliest deadline, CLOCK_MONOTONIC ns; 0: none */
void timers_run(void);	   /* fire what is due */
void timers_exit(struct process *p);
void timers_exec(struct process *p);
void fdtable_put(struct fdtable *fdt);
/* A copy of src for a forked child, sized to src's highest open fd; NULL
 * (out of memory, or past FDT_SLOTS_TOTAL) if it cannot be made. */
struct fdtable *fdtable_dup(struct fdtable *src);
/* Would fdtable_dup(src) fit in FDT_SLOTS_TOTAL now? (fork's ENOMEM) */
bool fdtable_dup_fits(const struct fdtable *src);

/* guest memory (platform) */
int task_read(struct task *t, uint64_t addr, void *buf, size_t len);
int task_write(struct task *t, uint64_t addr, const void *buf, size_t len);
int task_read_str(struct task *t, uint64_t addr, char *buf, size_t cap);
/* Force-write (like ptrace POKEDATA): works on read-only private pages. */
int task_poke(struct task *t, uint64_t addr, const void *buf, size_t len);

/* syscall table (sentry/syscalls.c) */
typedef long (*syscall_fn)(struct task *t, struct syscall_args *a);
enum sc_status {
	SC_FULL,
	SC_PARTIAL,
	SC_NONE,
	SC_NATIVE
};
struct syscall_desc {
	const char *name;
	int nr;
	syscall_fn fn;
	enum sc_status status;
	const char *argfmt; /* strace decoding, one char per arg */
	const char *note;
};
const struct syscall_desc *syscall_lookup(long nr);
const struct syscall_desc *syscall_table(size_t *n);
long syscall_dispatch(struct task *t);
/* One audit record of the owner's: the host's side, the control
 * socket (sentry/audit.h, AUDIT_HOST: no guest's flood reaches it). What a
 * guest causes is audit_guest's. */
void audit_log(const char *fmt, ...) MOAT_PRINTF(1, 2);
/* SIGTERM ends the sandbox as its init's death would, the audit log's
 * end written (sentry_term set: 1 asked, 2 done); sentry_run then dies
 * of it, as it did before it was caught. */
extern volatile sig_atomic_t sentry_term;
void sentry_catch_term(void);

/* The netstack under the socket layer (sentry/socket.c). */
struct netstack_config;
int sentry_net_init(const struct netstack_config *cfg, struct moat_error *err);
/* A new egress policy is in force: connections it denies are reset, UDP
 * flows it denies forgotten (decided again at the next send). Returns how
 * many were revoked. */
int sockets_policy_changed(void);
int syscalls_help(int markdown);

/* `moat exec` (sentry/boot.c): a new process in the running sandbox,
 * with the caller's stdio fds (-1: closed). 0 and *out (running once the
 * reaper has forked it), or -errno. */
struct spawn_req {
	char *cwd;
	uid_t uid;
	gid_t gid;
	int ngroups;
	gid_t groups[CREDS_GROUPS_MAX];
	bool set_caps;	      /* false: CAP_SETS_ROOT */
	struct cap_sets caps; /* before the exec, as sentry_opts' */
	bool no_new_privs;
	char **argv, **env;
	int fds[3];
	bool tty; /* a terminal of the sentry's, relayed to fds[0] and [1] */
	struct mntns *ns; /* a pod member's; NULL: the sandbox's */
	/* a member's first process: 1 of a pid namespace of its own (else
	 * it is in ns's, or the pod's) */
	bool new_pidns;
};
int sentry_spawn(const struct spawn_req *r, struct process **out);
/* The files the sentry writes in a rootfs it sets up (the current mount
 * namespace's): /etc/hosts's line for the hostname, /etc/resolv.conf. */
void sentry_rootfs_files(void);
/* The reaper forked child for the oldest request (stopped: its first
 * ptrace stop was already collected), or could not (child -1). */
void sentry_spawn_born(pid_t child, bool stopped);
int sentry_spawns_pending(void); /* reaper forks asked for, not yet born */
int sentry_early_stops(void);	 /* new tasks stopped before their parent's
				  * clone event (sentry.c) */
/* Its client went away before the reaper forked it: it never runs. */
void sentry_spawn_cancel(struct process *p);
/* An exec'd process (ppid 0) runs, or ended: its client hears so
 * (sentry/control.c). */
void control_proc_started(struct process *p);
void control_proc_exited(struct process *p);

/* sentry/sys_misc.c, sentry/seccomp.c */
void rlimits_default(struct process *p);
int sentry_seccomp_install(struct moat_error *err);

/* strace (sentry/strace.c) */
void strace_enter(struct task *t, const struct syscall_desc *d);
void strace_exit(struct task *t, const struct syscall_desc *d, long ret);

#endif
