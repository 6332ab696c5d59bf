/* Calls every syscall number with hostile arguments, in throwaway child
 * processes, and reports how many ran. The sentry must survive all of it. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static const long skip[] = { SYS_exit,
			     SYS_exit_group,
			     SYS_rt_sigreturn,
			     SYS_kill,
			     SYS_tkill,
			     SYS_tgkill,
			     SYS_pause,
			     SYS_rt_sigsuspend,
			     SYS_vfork,
			     SYS_fork,
			     SYS_clone,
			     SYS_clone3,
			     SYS_execve,
			     SYS_execveat,
			     SYS_munmap,
			     SYS_mremap,
			     SYS_brk,
			     SYS_mprotect,
			     SYS_nanosleep,
			     SYS_clock_nanosleep,
			     SYS_rt_sigtimedwait,
			     SYS_wait4,
			     SYS_waitid,
			     SYS_select,
			     SYS_pselect6,
			     SYS_poll,
			     SYS_ppoll,
			     SYS_read,
			     SYS_readv,
			     SYS_pread64,
			     SYS_futex,
			     SYS_madvise,
			     SYS_setitimer,
			     SYS_alarm,
			     SYS_rt_sigprocmask,
			     SYS_rt_sigaction,
			     SYS_sigaltstack,
			     SYS_arch_prctl,
			     SYS_set_tid_address,
			     SYS_rseq,
			     SYS_set_robust_list,
			     SYS_prctl,
			     SYS_seccomp,
			     SYS_sched_yield,
			     SYS_restart_syscall,
			     SYS_munlock,
			     SYS_mlock,
			     SYS_mlockall,
			     SYS_munlockall };

static int skipped(long nr)
{
	for (size_t i = 0; i < sizeof(skip) / sizeof(skip[0]); i++)
		if (skip[i] == nr)
			return 1;
	return 0;
}

int main(int argc, char **argv)
{
	unsigned seed = argc > 1 ? (unsigned)atoi(argv[1]) : 1;
	uint64_t vals[] = { 0,
			    1,
			    2,
			    (uint64_t)-1,
			    0x7fffffffffffULL,
			    0xffffffff80000000ULL,
			    0x1000,
			    4096 * 1024,
			    0x7e0000000000ULL,
			    (uint64_t)-100,
			    1ULL << 63,
			    65535 };
	int ran = 0;
	srand(seed);
	for (long nr = 0; nr < 460; nr++) {
		if (skipped(nr))
			continue;
		pid_t p = fork();
		if (p == 0) {
			alarm(2);
			for (int k = 0; k < 8; k++) {
				uint64_t a[6];
				for (int j = 0; j < 6; j++)
					a[j] = vals[rand() % (sizeof(vals) /
							      sizeof(vals[0]))];
				syscall(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
			}
			_exit(0);
		}
		if (p > 0) {
			int st;
			waitpid(p, &st, 0);
			ran++;
		}
	}
	/* A child that unmaps the sentry's stub, then asks for what needs it
	 * (a file mapping, an exec): only the child may suffer. */
	{
		pid_t p = fork();
		if (p == 0) {
			alarm(2);
			syscall(SYS_munmap, 0x7e0000000000ULL, 0x2000UL);
			syscall(SYS_mmap, 0, 4096, 1, 2 /* MAP_PRIVATE */, 0,
				0);
			syscall(SYS_execve, "/bin/true", NULL, NULL);
			_exit(0);
		}
		if (p > 0) {
			int st;
			waitpid(p, &st, 0);
			ran++;
		}
	}
	printf("ran %d\n", ran);
	return 0;
}
