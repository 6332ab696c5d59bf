/* platform/ptrace.c: the ptrace platform.
 *
 * Guest tasks are host processes in fresh user, pid, mount, net, ipc, uts and
 * cgroup namespaces. A seccomp filter lets the allowlist run natively and
 * returns SECCOMP_RET_TRACE for everything else, so the sentry (the tracer)
 * stops only on syscalls it emulates. The host kernel re-checks a syscall
 * that a tracer rewrote (Linux >= 4.8) and treats a rule that traced as
 * allowed on the re-check: that is how the sentry injects syscalls.
 *
 * Process tree on the host:
 *   sentry ── reaper (init of the new pid namespace, never runs guest code)
 *                └─ every guest process (forks get CLONE_PARENT, so the
 *                   reaper, not a guest, reaps them after the sentry has seen
 *                   the exit through ptrace)
 * When the sentry dies: PTRACE_O_EXITKILL kills each task, and the reaper's
 * PDEATHSIG kills the namespace's init, which kills everything in it.
 */
#include "platform/platform.h"

#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <linux/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <elf.h>
#include <linux/capability.h>
#include <linux/kcmp.h>
#include <linux/securebits.h>

#include "sentry/sentry.h"

#define PTRACE_OPTS                                                            \
	(PTRACE_O_TRACESYSGOOD | PTRACE_O_TRACESECCOMP | PTRACE_O_EXITKILL |   \
	 PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK | PTRACE_O_TRACECLONE |      \
	 PTRACE_O_TRACEEXEC)

/* The stub: an ELF with a 2-byte syscall instruction (every injection after
 * exec runs it) and a zeroed RW page (scratch for injected recvmsg and the
 * empty path of execveat). Built in memory: nothing to install. */
int plat_make_stub(struct moat_error *err)
{
	uint8_t img[STUB_CODE_OFF + 8];
	Elf64_Ehdr *eh = (Elf64_Ehdr *)img;
	Elf64_Phdr *ph = (Elf64_Phdr *)(img + sizeof(*eh));
	cleanup_close int fd = -1;

	_Static_assert(sizeof(Elf64_Ehdr) + 2 * sizeof(Elf64_Phdr) <=
			       STUB_CODE_OFF,
		       "stub headers overlap code");
	memset(img, 0, sizeof(img));
	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_ident[EI_VERSION] = EV_CURRENT;
	eh->e_type = ET_EXEC;
	eh->e_machine = EM_X86_64;
	eh->e_version = EV_CURRENT;
	eh->e_entry = STUB_SYSCALL + 2; /* ud2: never meant to run */
	eh->e_phoff = sizeof(*eh);
	eh->e_ehsize = sizeof(*eh);
	eh->e_phentsize = sizeof(Elf64_Phdr);
	eh->e_phnum = 2;
	ph[0].p_type = PT_LOAD;
	ph[0].p_flags = PF_R | PF_X;
	ph[0].p_offset = 0;
	ph[0].p_vaddr = ph[0].p_paddr = STUB_ADDR;
	ph[0].p_filesz = ph[0].p_memsz = sizeof(img);
	ph[0].p_align = 0x1000;
	ph[1].p_type = PT_LOAD;
	ph[1].p_flags = PF_R | PF_W;
	ph[1].p_offset = 0;
	ph[1].p_vaddr = ph[1].p_paddr = STUB_DATA;
	ph[1].p_filesz = 0;
	ph[1].p_memsz = STUB_DATA_SIZE;
	ph[1].p_align = 0x1000;
	img[STUB_CODE_OFF + 0] = 0x0f; /* syscall */
	img[STUB_CODE_OFF + 1] = 0x05;
	img[STUB_CODE_OFF + 2] = 0x0f; /* ud2 */
	img[STUB_CODE_OFF + 3] = 0x0b;

	fd = memfd_create("moat-stub", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return moat_error_set(err, errno, "memfd_create stub");
	if (write_all(fd, img, sizeof(img)) < 0)
		return moat_error_set(err, errno, "write stub");
	/* Sealed so no process holding the fd can change what guests exec. */
	if (fcntl(fd, F_ADD_SEALS,
		  F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL) < 0)
		return moat_error_set(err, errno, "seal stub");
	return take_fd(&fd);
}

/* Address-space calls run natively only where they cannot reach the stub
 * (platform.h, stub_far); mmap natively only for anonymous memory (files
 * are mapped by the sentry from donated fds); mremap never with
 * MREMAP_FIXED (it names a second address). Rules are OR'ed.
 *
 * "Below" is spelled as aligned power-of-two blocks with masked equality:
 * libseccomp 2.5.4 compiles a 64-bit SCMP_CMP_LT inside a multi-argument
 * rule into BPF that lets mprotect(0x100000, 0x7e0000000000) through
 * (tests/escape/stub_tamper.c found it). */
static int add_mm_rule(scmp_filter_ctx ctx, int nr, struct scmp_arg_cmp addr,
		       bool need_len)
{
	struct scmp_arg_cmp len =
		SCMP_A1(SCMP_CMP_MASKED_EQ, ~(STUB_GAP - 1), 0);
	struct scmp_arg_cmp anon =
		SCMP_A3(SCMP_CMP_MASKED_EQ, MAP_ANONYMOUS, MAP_ANONYMOUS);
	struct scmp_arg_cmp nofixed =
		SCMP_A3(SCMP_CMP_MASKED_EQ, MREMAP_FIXED, 0);
	struct scmp_arg_cmp c[3];
	unsigned n = 0;

	c[n++] = addr;
	if (need_len)
		c[n++] = len;
	if (nr == SYS_mmap)
		c[n++] = anon;
	else if (nr == SYS_mremap)
		c[n++] = nofixed;
	return seccomp_rule_add_array(ctx, SCMP_ACT_ALLOW, nr, n, c);
}

static int add_mm_rules(scmp_filter_ctx ctx, int nr)
{
	/* [base, base + size) blocks covering [0, STUB_LOW) exactly. */
	static const struct {
		uint64_t base, size;
	} below[] = {
		{ 0x000000000000ULL, 0x400000000000ULL },
		{ 0x400000000000ULL, 0x200000000000ULL },
		{ 0x600000000000ULL, 0x100000000000ULL },
		{ 0x700000000000ULL, 0x080000000000ULL },
		{ 0x780000000000ULL, 0x040000000000ULL },
		{ 0x7c0000000000ULL, 0x010000000000ULL },
	};
	size_t i;
	int rc;

	_Static_assert(0x7c0000000000ULL + 0x010000000000ULL == STUB_LOW,
		       "the blocks must end at STUB_LOW");
	rc = add_mm_rule(ctx, nr, SCMP_A0(SCMP_CMP_GE, STUB_END), false);
	for (i = 0; rc == 0 && i < ARRAY_SIZE(below); i++)
		rc = add_mm_rule(ctx, nr,
				 SCMP_A0(SCMP_CMP_MASKED_EQ,
					 ~(below[i].size - 1), below[i].base),
				 true);
	return rc;
}

/* Guest seccomp filter: allowlisted syscalls run natively, the rest trap. */
static int build_guest_filter(struct sock_fprog *out, struct moat_error *err)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_TRACE(0));
	size_t n, i;
	const struct syscall_desc *tab = syscall_table(&n);
	cleanup_close int mfd = -1;
	struct stat st;
	void *buf;

	if (!ctx)
		return moat_error_set(err, ENOMEM, "seccomp_init");
	for (i = 0; i < n; i++) {
		int nr = tab[i].nr, rc = 0;

		if (nr == SYS_mmap || nr == SYS_munmap || nr == SYS_mprotect ||
		    nr == SYS_mremap || nr == SYS_madvise) {
			rc = add_mm_rules(ctx, nr);
		} else if (nr == SYS_clock_gettime || nr == SYS_clock_getres ||
			   nr == SYS_clock_nanosleep) {
			/* Native for clock ids >= 0: a negative one names a
			 * virtual pid or a guest fd (sentry/clock.c). The id
			 * is an int: only its low 32 bits count, as for the
			 * kernel. */
			rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 1,
					      SCMP_A0(SCMP_CMP_MASKED_EQ,
						      0x80000000, 0));
		} else if (tab[i].status != SC_NATIVE) {
			continue;
		} else if (nr == SYS_sched_setaffinity ||
			   nr == SYS_sched_getparam ||
			   nr == SYS_sched_getscheduler ||
			   nr == SYS_get_robust_list || nr == SYS_prlimit64) {
			/* pid-taking calls are native for "self" (0) only. */
			rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 1,
					      SCMP_A0(SCMP_CMP_EQ, 0));
		} else {
			rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 0);
		}
		if (rc < 0) {
			seccomp_release(ctx);
			return moat_error_set(err, -rc, "seccomp rule %s",
					      tab[i].name);
		}
	}
	if (S->debug && getenv("MOAT_DUMP_FILTER")) {
		int dfd = open(getenv("MOAT_DUMP_FILTER"),
			       O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		seccomp_export_pfc(ctx, 2);
		if (dfd >= 0) {
			seccomp_export_bpf(ctx, dfd);
			close(dfd);
		}
	}
	mfd = memfd_create("moat-filter", MFD_CLOEXEC);
	if (mfd < 0 || seccomp_export_bpf(ctx, mfd) < 0 ||
	    fstat(mfd, &st) < 0) {
		seccomp_release(ctx);
		return moat_error_set(err, EIO, "export guest seccomp filter");
	}
	seccomp_release(ctx);
	buf = xmalloc((size_t)st.st_size);
	if (pread(mfd, buf, (size_t)st.st_size, 0) != st.st_size)
		return moat_error_set(err, EIO, "read guest seccomp filter");
	out->len = (unsigned short)((size_t)st.st_size /
				    sizeof(struct sock_filter));
	out->filter = buf;
	return 0;
}

static void die_child(const char *what)
{
	/* Child side of setup: stderr is still the user's. */
	dprintf(2, "moat: guest setup: %s: %s\n", what, strerror(errno));
	_exit(126);
}

static int write_file(const char *path, const char *s)
{
	cleanup_close int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, s, strlen(s)) < 0)
		return -errno;
	return 0;
}

/* The first guest task, in the reaper's namespaces: confine, then exec the
 * stub. Its execveat traps; the sentry lets that one through and loads the
 * real program when the exec event arrives. */
__attribute__((noreturn)) static void guest_boot(struct sock_fprog *prog)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3,
						0 };
	struct __user_cap_data_struct data[2];
	int cap;

	sigset_t none;
	int sig;

	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
		die_child("pdeathsig");
	/* The guest starts as a fresh process would: default dispositions
	 * (the sentry ignores SIGPIPE; exec keeps what is ignored) and no
	 * signal blocked. */
	for (sig = 1; sig < NSIG; sig++)
		signal(sig, SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	/* Wait for the sentry to set our ptrace options. */
	raise(SIGSTOP);
	/* Nothing of the host may stay reachable: only the two fds. */
	if (syscall(SYS_close_range, 0, GUEST_CTL_FD - 1, 0) < 0 ||
	    syscall(SYS_close_range, GUEST_STUB_FD + 1, ~0U, 0) < 0)
		die_child("close_range");
	if (prctl(PR_SET_SECUREBITS, SECBIT_NOROOT | SECBIT_NOROOT_LOCKED |
					     SECBIT_NO_SETUID_FIXUP |
					     SECBIT_NO_SETUID_FIXUP_LOCKED |
					     SECBIT_KEEP_CAPS_LOCKED) < 0)
		die_child("securebits");
	for (cap = 0; cap <= 63; cap++)
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 && errno != EINVAL)
			die_child("capbset");
	memset(data, 0, sizeof(data));
	if (syscall(SYS_capset, &hdr, data) < 0)
		die_child("capset");
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		die_child("no_new_privs");
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, prog) < 0)
		die_child("seccomp");
	syscall(SYS_execveat, GUEST_STUB_FD, "", NULL, NULL, AT_EMPTY_PATH);
	_exit(126);
}

static void set_rlimit(int res, rlim_t v)
{
	struct rlimit rl = { v, v };
	setrlimit(res, &rl);
}

/* The reaper's own fds, above the guests' (guest_boot closes them). */
#define REAPER_REQ_FD 1002 /* a byte from the sentry: fork one more guest */
#define REAPER_SIG_FD 1003 /* SIGCHLD, as a signalfd */

/* A new guest process: a child that boots as the first one did. A fork
 * that fails (pids.max, memory) is told to the sentry by a SIGUSR1 of
 * the reaper's own, which it sees as a signal stop and suppresses. */
static void reaper_fork(struct sock_fprog *prog)
{
	pid_t child = fork();

	if (child == 0)
		guest_boot(prog);
	if (child < 0)
		raise(SIGUSR1);
}

/* The reaper: init of the guests' pid namespace. It owns an empty mount
 * namespace, runs as the sandbox's guest uid, and reaps every guest
 * process after the sentry has collected its status through ptrace. It
 * stays traced by the sentry (fork events only): each byte on its
 * request pipe makes one more guest process (`moat exec`), whose host
 * pid the sentry learns from the fork event. */
__attribute__((noreturn)) static void
reaper_main(int gofd, struct sock_fprog *prog, int ctl_fd, int stub_fd)
{
	sigset_t chld;
	char c;

	if (read(gofd, &c, 1) != 1)
		_exit(126); /* the sentry died or refused */
	/* Empty root: a tmpfs with nothing in it, read-only; the old root is
	 * detached so no host path is reachable even by a bug in injection. */
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		die_child("make / private");
	if (mount("moat-empty", "/tmp", "tmpfs",
		  MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=4k,mode=0555") < 0)
		die_child("mount empty root");
	if (chdir("/tmp") < 0 || syscall(SYS_pivot_root, ".", ".") < 0 ||
	    umount2(".", MNT_DETACH) < 0 || chdir("/") < 0)
		die_child("pivot_root");
	if (mount(NULL, "/", NULL, MS_REMOUNT | MS_RDONLY | MS_BIND, NULL) < 0)
		die_child("remount empty root read-only");
	/* Host identity: the sandbox's guest uid, the one id the namespace
	 * maps (as 65534 inside). Must precede PDEATHSIG: a credential change
	 * clears it. */
	if (setresgid(65534, 65534, 65534) < 0 ||
	    setresuid(65534, 65534, 65534) < 0)
		die_child("setresuid to the guest uid");
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
		die_child("pdeathsig");
	set_rlimit(RLIMIT_CORE, 0);
	set_rlimit(RLIMIT_NOFILE, GUEST_STUB_FD + 64);
	if (dup2(ctl_fd, GUEST_CTL_FD) < 0 ||
	    dup2(stub_fd, GUEST_STUB_FD) < 0 || dup2(gofd, REAPER_REQ_FD) < 0)
		die_child("dup2");
	/* SIGCHLD is read, never delivered: no signal stop for the sentry
	 * to handle, and no handler racing the fork below. */
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, NULL);
	if (dup2(signalfd(-1, &chld, SFD_CLOEXEC), REAPER_SIG_FD) < 0)
		die_child("signalfd");
	reaper_fork(prog);
	syscall(SYS_close_range, 3, GUEST_CTL_FD - 1, 0);
	syscall(SYS_close_range, REAPER_SIG_FD + 1, ~0U, 0);
	for (;;) {
		struct pollfd pfd[2] = { { REAPER_REQ_FD, POLLIN, 0 },
					 { REAPER_SIG_FD, POLLIN, 0 } };
		struct signalfd_siginfo si;
		int st;

		if (poll(pfd, 2, -1) < 0)
			continue;
		if (pfd[0].revents & POLLIN) {
			if (read(REAPER_REQ_FD, &c, 1) == 1)
				reaper_fork(prog);
		} else if (pfd[0].revents & (POLLHUP | POLLERR)) {
			_exit(0); /* the sentry is gone */
		}
		if (pfd[1].revents & POLLIN) {
			if (read(REAPER_SIG_FD, &si, sizeof(si)) < 0) {
				/* drained below anyway */
			}
			while (waitpid(-1, &st, __WALL | WNOHANG) > 0)
				;
		}
	}
}

int plat_set_options(pid_t tid)
{
	if (ptrace(PTRACE_SETOPTIONS, tid, 0, PTRACE_OPTS) < 0)
		return -errno;
	return 0;
}

pid_t plat_spawn_prepare(int stub_fd, int guest_ctl_fd, uid_t uid, gid_t gid,
			 struct moat_error *err)
{
	struct sock_fprog prog;
	int go[2];
	pid_t reaper;
	char path[64], map[48];
	int rc;

	if (build_guest_filter(&prog, err) < 0)
		return -1;
	if (pipe2(go, O_CLOEXEC) < 0)
		return moat_error_set(err, errno, "pipe");
	reaper = (pid_t)syscall(
		SYS_clone,
		CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNS | CLONE_NEWNET |
			CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWCGROUP | SIGCHLD,
		NULL, NULL, NULL, NULL);
	if (reaper < 0)
		return moat_error_set(err, errno, "clone namespaces");
	if (reaper == 0) {
		close(go[1]);
		reaper_main(go[0], &prog, guest_ctl_fd, stub_fd);
	}
	close(go[0]);
	free(prog.filter); /* the reaper has its own copy */
	S->reaper = reaper;
	S->spawn_fd = go[1]; /* plat_spawn_first, plat_spawn_more */
	/* Map the reaper's 65534 to the sandbox's host uid and gid; no other
	 * id exists in the namespace, and setgroups is denied as unprivileged
	 * maps require. */
	snprintf(path, sizeof(path), "/proc/%d/setgroups", reaper);
	rc = write_file(path, "deny");
	snprintf(path, sizeof(path), "/proc/%d/uid_map", reaper);
	snprintf(map, sizeof(map), "65534 %u 1\n", (unsigned)uid);
	if (!rc)
		rc = write_file(path, map);
	snprintf(path, sizeof(path), "/proc/%d/gid_map", reaper);
	snprintf(map, sizeof(map), "65534 %u 1\n", (unsigned)gid);
	if (!rc)
		rc = write_file(path, map);
	if (rc < 0) {
		plat_kill(reaper, SIGKILL);
		return moat_error_set(err, -rc, "write id maps of the sandbox");
	}
	/* Trace the reaper only to learn the host pid of its first child. */
	if (ptrace(PTRACE_SEIZE, reaper, 0,
		   PTRACE_O_TRACEFORK | PTRACE_O_EXITKILL) < 0) {
		plat_kill(reaper, SIGKILL);
		return moat_error_set(err, errno, "ptrace seize");
	}
	return reaper;
}

pid_t plat_spawn_first(struct moat_error *err)
{
	pid_t reaper = S->reaper, child = -1;
	unsigned long msg;
	int st, rc;

	if (write(S->spawn_fd, "g", 1) != 1) {
		plat_kill(reaper, SIGKILL);
		return moat_error_set(err, errno, "start reaper");
	}
	/* First the reaper's fork event names the child... */
	while (child < 0) {
		pid_t w = waitpid(reaper, &st, __WALL);
		if (w < 0)
			return moat_error_set(err, errno,
					      "wait for sandbox setup");
		if (WIFEXITED(st) || WIFSIGNALED(st))
			return moat_error_set(
				err, 0, "sandbox setup failed (status 0x%x)",
				st);
		if (WIFSTOPPED(st) && WSTOPSIG(st) == SIGUSR1 &&
		    (st >> 16) == 0)
			return moat_error_set(err, EAGAIN,
					      "sandbox setup: the first "
					      "process could not be forked");
		if ((st >> 8) == (SIGTRAP | (PTRACE_EVENT_FORK << 8))) {
			ptrace(PTRACE_GETEVENTMSG, reaper, 0, &msg);
			child = (pid_t)msg;
			/* Still traced: later forks are `moat exec`'s. */
			ptrace(PTRACE_CONT, reaper, 0, 0);
			break;
		}
		ptrace(PTRACE_CONT, reaper, 0, 0);
	}
	/* ...then the child, auto-attached, stops at its raise(SIGSTOP). Until
	 * then it runs nothing but its setup. */
	rc = plat_start_spawned(child, false);
	if (rc < 0)
		return moat_error_set(err, -rc, "first task: setup");
	return child;
}

static bool take_deferred(pid_t pid, int *st);

int plat_start_spawned(pid_t child, bool stopped)
{
	int st, rc;

	if (stopped)
		ptrace(PTRACE_CONT, child, 0, 0);
	for (;;) {
		/* A stop of the child's that an injection's wait took aside
		 * (plat_wait_task) is the kernel's no longer: waiting for it
		 * would be waiting for good. */
		pid_t w = take_deferred(child, &st) ?
				  child :
				  waitpid(child, &st, __WALL);
		/* the sentry's 10 ms tick interrupts waits (no SA_RESTART) */
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		if (WIFEXITED(st) || WIFSIGNALED(st))
			return -ECHILD;
		if (WSTOPSIG(st) == SIGSTOP && (st >> 16) == 0) {
			rc = plat_set_options(child);
			if (rc < 0)
				return rc;
			ptrace(PTRACE_CONT, child, 0, 0);
			return 0;
		}
		ptrace(PTRACE_CONT, child, 0, 0);
	}
}

int plat_spawn_more(void)
{
	if (S->spawn_fd < 0 || write(S->spawn_fd, "g", 1) != 1)
		return -EAGAIN;
	return 0;
}

int plat_kill(pid_t pid, int sig)
{
	if (pid <= 1)
		return -ESRCH;
	return kill(pid, sig) < 0 ? -errno : 0;
}

int plat_tkill(pid_t tid, int sig)
{
	if (tid <= 1)
		return -ESRCH;
	return syscall(SYS_tkill, tid, sig) < 0 ? -errno : 0;
}

int plat_sigqueue(pid_t pid, pid_t tid, const siginfo_t *si)
{
	siginfo_t copy = *si;
	long r;

	if (pid <= 1)
		return -ESRCH;
	r = tid > 0 ? syscall(SYS_rt_tgsigqueueinfo, pid, tid, si->si_signo,
			      &copy) :
		      syscall(SYS_rt_sigqueueinfo, pid, si->si_signo, &copy);
	return r < 0 ? -errno : 0;
}

int plat_cont(pid_t tid, int sig)
{
	if (ptrace(PTRACE_CONT, tid, 0, sig) < 0)
		return -errno;
	return 0;
}

/* Keep a task that traps often on the CPU the sentry runs on: each trap is
 * then a context switch on one core instead of two cross-CPU wakeups (the
 * same trick as gVisor's ptrace platform; measured here: python3 -c pass
 * 53 -> 28 ms). The binding follows the sentry when it moves. A task that
 * ran natively for long since its last trap is compute-bound: it is let
 * loose on every CPU again, so parallel builds keep their parallelism. */
#define FREE_RUN_NS (2 * 1000000LL)

void plat_note_trap(struct task *t)
{
	int64_t now;

	if (S->no_bind)
		return;
	now = now_ns();
	if (t->resumed_ns && now - t->resumed_ns > FREE_RUN_NS) {
		t->free_running = true;
		if (t->cpu >= 0 &&
		    sched_setaffinity(t->host_tid, sizeof(S->cpus), &S->cpus) ==
			    0)
			t->cpu = -1;
	} else {
		t->free_running = false;
	}
}

static void bind_to_sentry_cpu(struct task *t)
{
	int cpu;
	cpu_set_t set;

	if (S->no_bind)
		return;
	t->resumed_ns = now_ns();
	if (t->free_running)
		return;
	cpu = sched_getcpu();
	if (cpu < 0 || cpu == t->cpu)
		return;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(t->host_tid, sizeof(set), &set) == 0)
		t->cpu = cpu;
}

/* A task bound to the sentry's CPU that has run natively for long is
 * compute-bound: let it use every CPU. Called from the event loop on a
 * periodic tick, since such a task does not trap to be noticed. */
void plat_release_busy(void)
{
	int64_t now = now_ns();
	struct task *t;

	for (t = S->tasks; t; t = t->next) {
		if (t->state != TS_RUNNING || t->cpu < 0 || t->free_running ||
		    !t->resumed_ns || now - t->resumed_ns < FREE_RUN_NS)
			continue;
		if (sched_setaffinity(t->host_tid, sizeof(S->cpus), &S->cpus) ==
		    0) {
			t->cpu = -1;
			t->free_running = true;
		}
	}
}

/* The gofer answers the sentry only: keep it on the sentry's CPU too. */
void plat_bind_gofer(void)
{
	int cpu = sched_getcpu();
	cpu_set_t set;

	if (S->no_bind || S->gofer_pid <= 0 || cpu < 0 || cpu == S->gofer_cpu)
		return;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(S->gofer_pid, sizeof(set), &set) == 0)
		S->gofer_cpu = cpu;
}

static int setregs(struct task *t, struct user_regs_struct *r)
{
	if (ptrace(PTRACE_SETREGS, t->host_tid, 0, r) < 0)
		return -errno;
	return 0;
}

int plat_resume_result(struct task *t, long result)
{
	struct user_regs_struct r = t->regs;

	/* orig_rax = -1 skips the syscall at a seccomp stop, and disables the
	 * kernel's restart logic at an exit stop. */
	r.orig_rax = (unsigned long long)-1;
	r.rax = (unsigned long long)result;
	t->at_exit_stop = false;
	if (setregs(t, &r) < 0)
		return -ESRCH;
	bind_to_sentry_cpu(t);
	return plat_cont(t->host_tid, 0);
}

int plat_resume_restart(struct task *t)
{
	struct user_regs_struct r = t->regs;

	r.orig_rax = (unsigned long long)-1;
	r.rax = r.orig_rax;
	r.rax = (unsigned long long)t->sc.nr;
	r.rip -= 2;
	t->at_exit_stop = false;
	if (setregs(t, &r) < 0)
		return -ESRCH;
	return plat_cont(t->host_tid, 0);
}

int plat_resume_passthrough(struct task *t, int want_exit_stop)
{
	if (t->at_exit_stop)
		return -EINVAL;
	bind_to_sentry_cpu(t);
	if (ptrace(want_exit_stop ? PTRACE_SYSCALL : PTRACE_CONT, t->host_tid,
		   0, 0) < 0)
		return -errno;
	return 0;
}

/* ---- waiting on one task ------------------------------------------------
 *
 * Injection and exec wait for one task's next stop. They wait on every
 * task (waitpid(-1)), not on that one: a thread-group leader's exit is
 * reported only after its siblings' exits are collected, so waiting on the
 * leader alone could wait forever. Events of other tasks are kept, in
 * order, for the event loop. A task that does not stop within
 * INJECT_TIMEOUT_NS (it could spin in native code) is killed. */
#define INJECT_TIMEOUT_NS (5 * 1000000000LL)

static struct deferred {
	pid_t pid;
	int status;
} * deferred;
static size_t ndeferred, capdeferred, headdeferred;

bool plat_defer_reserve(void)
{
	size_t ncap;
	struct deferred *n;

	if (ndeferred < capdeferred)
		return true;
	if (headdeferred > 0) {
		/* what was handled makes room first */
		memmove(deferred, deferred + headdeferred,
			(ndeferred - headdeferred) * sizeof(*deferred));
		ndeferred -= headdeferred;
		headdeferred = 0;
		if (ndeferred < capdeferred)
			return true;
	}
	ncap = capdeferred ? capdeferred * 2 : 64;
	n = realloc(deferred, ncap * sizeof(*n));
	if (!n)
		return false;
	deferred = n;
	capdeferred = ncap;
	return true;
}

void plat_defer(pid_t pid, int st)
{
	if (!plat_defer_reserve()) {
		/* Cannot keep it: the task stays stopped (guests only hurt
		 * themselves), unless it is a death, which the sentry must
		 * see. */
		MOAT_ASSERT(!(WIFEXITED(st) || WIFSIGNALED(st)));
		return;
	}
	deferred[ndeferred].pid = pid;
	deferred[ndeferred].status = st;
	ndeferred++;
}

bool plat_has_deferred(void)
{
	return headdeferred < ndeferred;
}

/* The oldest deferred event of pid, taken out of the queue. */
static bool take_deferred(pid_t pid, int *st)
{
	for (size_t i = headdeferred; i < ndeferred; i++) {
		if (deferred[i].pid != pid)
			continue;
		*st = deferred[i].status;
		memmove(&deferred[i], &deferred[i + 1],
			(ndeferred - i - 1) * sizeof(*deferred));
		ndeferred--;
		return true;
	}
	return false;
}

bool plat_next_deferred(pid_t *pid, int *st)
{
	if (headdeferred == ndeferred) {
		headdeferred = ndeferred = 0;
		return false;
	}
	*pid = deferred[headdeferred].pid;
	*st = deferred[headdeferred].status;
	headdeferred++;
	return true;
}

/* The next stop of t. Signal-delivery and group stops are absorbed (the
 * signal is kept for later). Returns the wait status, or -ESRCH when t is
 * gone (its death has been recorded). */
int plat_wait_task(struct task *t, int resume_req)
{
	int64_t deadline = now_ns() + INJECT_TIMEOUT_NS;
	bool killed = false;
	int st;
	/* An event of t's the loop gathered and has not handled (its death,
	 * after the stop being handled) is its next; once t runs again, its
	 * events come from the kernel, so the queue is looked at once. */
	bool queued = take_deferred(t->host_tid, &st);

	for (;;) {
		pid_t w = queued ? t->host_tid : waitpid(-1, &st, __WALL);

		queued = false;
		if (w < 0) {
			if (errno != EINTR)
				return -ESRCH;
			if (!killed && now_ns() > deadline) {
				/* Stopped by nothing we asked for: the guest ran
				 * code of its own at our instruction address, or
				 * spins. It dies; nothing else does. */
				plat_tkill(t->host_tid, SIGKILL);
				killed = true;
			}
			continue;
		}
		if (w != t->host_tid) {
			plat_defer(w, st);
			continue;
		}
		if (WIFEXITED(st) || WIFSIGNALED(st)) {
			task_exited(t, st);
			return -ESRCH;
		}
		if (!WIFSTOPPED(st))
			continue;
		if (killed)
			goto resume;
		if (WSTOPSIG(st) == (SIGTRAP | 0x80) ||
		    (st >> 8) == (SIGTRAP | (PTRACE_EVENT_SECCOMP << 8)) ||
		    (st >> 8) == (SIGTRAP | (PTRACE_EVENT_EXEC << 8)))
			return st;
		/* A signal-delivery or group stop: keep the signal. */
		if ((st >> 16) == 0 && WSTOPSIG(st) != SIGTRAP)
			t->pending_sigs |= 1ULL << ((WSTOPSIG(st) - 1) & 63);
resume:
		if (ptrace(resume_req, t->host_tid, 0, 0) < 0)
			return -ESRCH;
	}
}

/* Kill a task whose stop does not match what the sentry asked for, and
 * collect its death. */
static long inject_abort(struct task *t)
{
	plat_tkill(t->host_tid, SIGKILL);
	ptrace(PTRACE_CONT, t->host_tid, 0, 0);
	while (t->state != TS_DEAD && plat_wait_task(t, PTRACE_CONT) >= 0)
		ptrace(PTRACE_CONT, t->host_tid, 0, 0);
	return -ESRCH;
}

/* Let t run to its next syscall stop: 0, -errno, or (any other stop) the
 * task is killed, as every unexpected stop of an injection is. */
static long run_to_syscall_stop(struct task *t)
{
	int st;

	if (ptrace(PTRACE_SYSCALL, t->host_tid, 0, 0) < 0)
		return -ESRCH;
	st = plat_wait_task(t, PTRACE_SYSCALL);
	if (st < 0)
		return st;
	if (WSTOPSIG(st) != (SIGTRAP | 0x80))
		return inject_abort(t);
	return 0;
}

/* Does the guest filter trap syscall nr (so a seccomp stop will come)? */
static bool injected_traps(long nr, uint64_t a0, uint64_t a1, uint64_t a3)
{
	const struct syscall_desc *d = syscall_lookup(nr);

	if (nr == SYS_mmap && !(a3 & MAP_ANONYMOUS))
		return true;
	if (nr == SYS_mmap || nr == SYS_munmap || nr == SYS_mprotect ||
	    nr == SYS_madvise)
		return !stub_far(a0, a1);
	return !d || d->status != SC_NATIVE;
}

/* The registers at a stop of an injected call must be exactly the ones the
 * sentry set: the same call, the same arguments, from the stub's
 * instruction (or the guest's own, left untouched, for the first). */
static bool regs_match(const struct user_regs_struct *got,
		       const struct user_regs_struct *want)
{
	return got->orig_rax == want->orig_rax && got->rdi == want->rdi &&
	       got->rsi == want->rsi && got->rdx == want->rdx &&
	       got->r10 == want->r10 && got->r8 == want->r8 &&
	       got->r9 == want->r9 && got->rip == want->rip;
}

long plat_inject(struct task *t, long nr, uint64_t a0, uint64_t a1, uint64_t a2,
		 uint64_t a3, uint64_t a4, uint64_t a5)
{
	struct user_regs_struct r, want, got;
	int st;
	long rc;

	if (t->state == TS_DEAD)
		return -ESRCH;
	bind_to_sentry_cpu(t);
	if (ptrace(PTRACE_GETREGS, t->host_tid, 0, &r) < 0)
		return -ESRCH;
	r.rdi = a0;
	r.rsi = a1;
	r.rdx = a2;
	r.r10 = a3;
	r.r8 = a4;
	r.r9 = a5;
	if (!t->at_exit_stop) {
		/* At the seccomp stop of the guest's own syscall: turn it into
		 * ours. No guest code runs before the kernel re-checks it
		 * against the filter (a traced rule counts as allowed then). */
		r.orig_rax = (unsigned long long)nr;
		if (setregs(t, &r) < 0)
			return -ESRCH;
		rc = run_to_syscall_stop(t);
		if (rc < 0)
			return rc;
	} else {
		/* At an exit stop: run the stub's syscall instruction. The
		 * stub cannot be changed by the guest (its mappings are out of
		 * reach of native mmap/mprotect/munmap/mremap, see the
		 * filter), and every stop is checked against what was set. */
		r.rip = STUB_SYSCALL;
		r.rax = (unsigned long long)nr;
		r.orig_rax = (unsigned long long)-1;
		if (setregs(t, &r) < 0)
			return -ESRCH;
		want = r;
		want.orig_rax = (unsigned long long)nr;
		want.rip = STUB_SYSCALL + 2;
		if (injected_traps(nr, a0, a1, a3)) {
			/* It will stop at its seccomp stop anyway: skip the
			 * syscall-enter stop, one round trip fewer. */
			if (ptrace(PTRACE_CONT, t->host_tid, 0, 0) < 0)
				return -ESRCH;
			st = plat_wait_task(t, PTRACE_CONT);
			if (st < 0)
				return st;
			if ((st >> 8) !=
			    (SIGTRAP | (PTRACE_EVENT_SECCOMP << 8)))
				return inject_abort(t);
		} else {
			/* Native: without a syscall stop it would run on
			 * into the stub's ud2. */
			rc = run_to_syscall_stop(t);
			if (rc < 0)
				return rc;
		}
		if (ptrace(PTRACE_GETREGS, t->host_tid, 0, &got) < 0)
			return -ESRCH;
		if (!regs_match(&got, &want))
			return inject_abort(t);
		rc = run_to_syscall_stop(t);
		if (rc < 0)
			return rc;
	}
	t->at_exit_stop = true;
	if (ptrace(PTRACE_GETREGS, t->host_tid, 0, &r) < 0)
		return -ESRCH;
	return (long)r.rax;
}

/* Drop datagrams a guest did not take (its injected recvmsg failed), so the
 * next donation receives the fd it was meant to. The sentry is the only one
 * that sends, one injection at a time, so anything queued now is stale. */
static void drain_stale(void)
{
	for (;;) {
		char b;
		union {
			struct cmsghdr h;
			char buf[CMSG_SPACE(sizeof(int))];
		} cm;
		struct iovec iov = { &b, 1 };
		struct msghdr mh = { .msg_iov = &iov,
				     .msg_iovlen = 1,
				     .msg_control = cm.buf,
				     .msg_controllen = sizeof(cm.buf) };
		struct cmsghdr *c;

		if (recvmsg(S->ctl_guest, &mh,
			    MSG_DONTWAIT | MSG_CMSG_CLOEXEC) < 0)
			return;
		for (c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
			if (c->cmsg_type == SCM_RIGHTS) {
				int fd;
				memcpy(&fd, CMSG_DATA(c), sizeof(fd));
				close(fd);
			}
		}
	}
}

/* Send hostfd over the control socket and have the guest receive it. The
 * msghdr lives in the stub's scratch page. A guest thread that scribbles on
 * that page only breaks its own mapping: a host fd in a guest's table is
 * inert, since no native syscall of the allowlist takes an fd. */
int plat_donate_fd(struct task *t, int hostfd)
{
	struct {
		struct msghdr mh;
		struct iovec iov;
		char byte;
		char pad[7];
		union {
			struct cmsghdr h;
			char buf[CMSG_SPACE(sizeof(int))];
		} cm;
	} g;
	struct msghdr mh = { 0 };
	struct iovec iov;
	char byte = 'f';
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} cm;
	struct cmsghdr *c;
	uint64_t base = STUB_DATA + 64;
	long rc;
	int fd;

	memset(&cm, 0, sizeof(cm));
	iov.iov_base = &byte;
	iov.iov_len = 1;
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = cm.buf;
	mh.msg_controllen = sizeof(cm.buf);
	c = CMSG_FIRSTHDR(&mh);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &hostfd, sizeof(int));
	drain_stale();
	if (sendmsg(S->ctl_sock, &mh, MSG_DONTWAIT) < 0)
		return -errno;

	memset(&g, 0, sizeof(g));
	g.iov.iov_base =
		(void *)(uintptr_t)(base + offsetof(__typeof__(g), byte));
	g.iov.iov_len = 1;
	g.mh.msg_iov = (void *)(uintptr_t)(base + offsetof(__typeof__(g), iov));
	g.mh.msg_iovlen = 1;
	g.mh.msg_control =
		(void *)(uintptr_t)(base + offsetof(__typeof__(g), cm));
	g.mh.msg_controllen = sizeof(g.cm.buf);
	if (task_write(t, base, &g, sizeof(g)) < 0)
		goto drain;
	rc = plat_inject(t, SYS_recvmsg, GUEST_CTL_FD, base,
			 MSG_CMSG_CLOEXEC | MSG_DONTWAIT, 0, 0, 0);
	if (rc != 1)
		goto drain;
	if (task_read(t, base, &g, sizeof(g)) < 0)
		return -EFAULT;
	if (g.cm.h.cmsg_level != SOL_SOCKET || g.cm.h.cmsg_type != SCM_RIGHTS)
		return -EFAULT;
	memcpy(&fd, g.cm.buf + CMSG_LEN(0), sizeof(int));
	/* The number came back through guest memory: make sure it names the
	 * file the sentry sent before mapping or closing it. */
	if (fd < 0)
		return -EFAULT;
	{
		long same = syscall(SYS_kcmp, getpid(), t->proc->host_pid,
				    KCMP_FILE, hostfd, fd);
		/* ENOSYS: a kernel without kcmp; the fd is inert anyway. */
		if (same > 0 || (same < 0 && errno != ENOSYS))
			return -EFAULT;
	}
	return fd;
drain:
	drain_stale();
	return -EFAULT;
}

int task_read(struct task *t, uint64_t addr, void *buf, size_t len)
{
	struct iovec l = { buf, len }, r = { (void *)(uintptr_t)addr, len };
	ssize_t n;

	if (len == 0)
		return 0;
	n = process_vm_readv(t->host_tid, &l, 1, &r, 1, 0);
	if (n < 0)
		return -EFAULT;
	if ((size_t)n != len)
		return -EFAULT;
	return 0;
}

int task_write(struct task *t, uint64_t addr, const void *buf, size_t len)
{
	struct iovec l = { (void *)buf, len },
		     r = { (void *)(uintptr_t)addr, len };
	ssize_t n;

	if (len == 0)
		return 0;
	n = process_vm_writev(t->host_tid, &l, 1, &r, 1, 0);
	if (n < 0 || (size_t)n != len)
		return -EFAULT;
	return 0;
}

int task_poke(struct task *t, uint64_t addr, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	while (len) {
		uint64_t a = addr & ~7ULL;
		size_t off = addr - a, n = 8 - off;
		long word;

		if (n > len)
			n = len;
		errno = 0;
		word = ptrace(PTRACE_PEEKDATA, t->host_tid, a, 0);
		if (errno)
			return -EFAULT;
		memcpy((char *)&word + off, p, n);
		if (ptrace(PTRACE_POKEDATA, t->host_tid, a, word) < 0)
			return -EFAULT;
		addr += n;
		p += n;
		len -= n;
	}
	return 0;
}

int task_read_str(struct task *t, uint64_t addr, char *buf, size_t cap)
{
	size_t done = 0;

	if (!addr)
		return -EFAULT;
	while (done < cap) {
		/* Read up to the end of the page so an unmapped next page
		 * does not fail a short string. */
		size_t chunk = 4096 - ((addr + done) & 4095);
		char *nul;

		if (chunk > cap - done)
			chunk = cap - done;
		if (task_read(t, addr + done, buf + done, chunk) < 0)
			return -EFAULT;
		nul = memchr(buf + done, 0, chunk);
		if (nul)
			return (int)(nul - buf);
		done += chunk;
	}
	return -ENAMETOOLONG;
}
