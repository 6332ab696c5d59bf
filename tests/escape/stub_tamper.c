/* Every way a guest could change the stub (the code the sentry's injected
 * syscalls run) is refused, and file mappings, which need the stub, still
 * work afterwards. Regression test for the injection hijack: injections
 * used to re-run guest-writable code. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define STUB 0x7e0000000000UL

static int fails(const char *what, long r)
{
	if (r == -1 && errno == EINVAL) {
		printf("%s: refused\n", what);
		return 0;
	}
	printf("%s: NOT refused (%ld, errno %d)\n", what, r, errno);
	return 1;
}

int main(void)
{
	int bad = 0, fd;
	void *p, *other;

	bad |= fails("mprotect stub rwx", syscall(SYS_mprotect, STUB, 4096, 7));
	bad |= fails("mprotect huge range",
		     syscall(SYS_mprotect, 0x100000UL, STUB, 1));
	bad |= fails("munmap stub", syscall(SYS_munmap, STUB, 0x2000));
	bad |= fails("munmap huge range",
		     syscall(SYS_munmap, 0x100000UL, STUB));
	bad |= fails("mmap fixed over stub",
		     syscall(SYS_mmap, STUB, 4096, 7,
			     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0));
	bad |= fails("mmap fixed_noreplace over stub data",
		     syscall(SYS_mmap, STUB + 0x1000, 4096, 3,
			     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
			     -1, 0));
	bad |= fails("mremap stub away",
		     syscall(SYS_mremap, STUB, 4096, 4096,
			     MREMAP_MAYMOVE | MREMAP_FIXED, 0x10000000UL));
	bad |= fails("madvise DONTFORK on stub",
		     syscall(SYS_madvise, STUB, 0x2000, MADV_DONTFORK));
	bad |= fails("madvise GUARD_INSTALL on stub",
		     syscall(SYS_madvise, STUB, 0x1000,
			     102 /* MADV_GUARD_INSTALL */));
	p = mmap((void *)STUB, 4096, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == (void *)STUB) {
		printf("mmap hint at the stub: NOT refused (got the stub's address)\n");
		bad = 1;
	} else {
		printf("mmap hint at the stub: refused (placed elsewhere)\n");
		munmap(p, 4096);
	}
	other = mmap(0, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	memset(other, 0xcc, 4096);
	bad |= fails("mremap onto stub",
		     syscall(SYS_mremap, (unsigned long)other, 4096, 4096,
			     MREMAP_MAYMOVE | MREMAP_FIXED, STUB));
	/* A file mapping needs injections through the stub: still fine. */
	fd = open("/bin/sh", O_RDONLY);
	p = mmap(0, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED || memcmp(p, "\177ELF", 4) != 0) {
		printf("file mmap after the attempts: FAILED\n");
		bad = 1;
	} else {
		printf("file mmap after the attempts: ok\n");
	}
	/* Near the stub but not on it: allowed, checked by the sentry. */
	p = mmap((void *)(STUB + 0x100000), 4096, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (p == MAP_FAILED || munmap(p, 4096) != 0) {
		printf("mapping next to the stub: FAILED\n");
		bad = 1;
	} else {
		printf("mapping next to the stub: ok\n");
	}
	return bad;
}
