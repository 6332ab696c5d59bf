/* tests/unit/loader/loader_test.h: shared fixtures for the loader suites. */
#ifndef MOAT_TESTS_LOADER_TEST_H
#define MOAT_TESTS_LOADER_TEST_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include "sentry/elf.h"

/* Suite init/fini: record the open fds, then fail if a test leaked one. */
void loader_fd_snapshot(void);
void loader_fd_check(void);

/* elf_read_fn over a file descriptor (ctx points to the int fd). */
int loader_read_fd(void *ctx, void *buf, size_t len, uint64_t off);

/* elf_read_fn over memory (ctx points to a struct loader_mem). */
struct loader_mem {
	const uint8_t *data;
	size_t size;
	int fail_errno; /* if set, every read returns -fail_errno */
	int short_by;	/* if set, every read returns len - short_by bytes */
};
int loader_read_mem(void *ctx, void *buf, size_t len, uint64_t off);

/* Open path and elf_parse() it. Returns elf_parse's result, or -errno if
 * the file cannot be opened/stat'ed. */
int loader_parse_path(const char *path, struct elf_info *ei);

/* A small, valid, hand-made ET_DYN in memory that tests mutate:
 *   ph[0] PT_PHDR   off 0x40   vaddr 0x40   (table of SYNTH_PHNUM entries)
 *   ph[1] PT_INTERP off 0x600  vaddr 0x600  "/lib64/ld-linux-x86-64.so.2"
 *   ph[2] PT_LOAD R  off 0      vaddr 0      filesz=memsz=0x800
 *   ph[3] PT_LOAD RX off 0x1000 vaddr 0x1000 filesz=memsz=0x800
 *   ph[4] PT_LOAD RW off 0x2e00 vaddr 0x3e00 filesz 0x300 memsz 0x2400
 *   ph[5] PT_GNU_STACK RW
 * entry 0x1100, file size 0x3100. Up to SYNTH_MAX_PH phdrs fit at 0x40. */
#define SYNTH_PHNUM 6
#define SYNTH_MAX_PH 20
#define SYNTH_INTERP "/lib64/ld-linux-x86-64.so.2"
#define SYNTH_INTERP_OFF 0x600
#define SYNTH_FILE_SIZE 0x3100
#define SYNTH_BUF_SIZE 0x4000
struct synth {
	uint8_t buf[SYNTH_BUF_SIZE];
	size_t size; /* file_size passed to elf_parse */
	Elf64_Ehdr *eh;
	Elf64_Phdr *ph;
};
void synth_init(struct synth *s);
int synth_parse(struct synth *s, struct elf_info *ei);

/* mkdtemp() that remembers the directory: loader_tmp_cleanup(), used as a
 * test's .fini, removes it and its files even when an assertion aborted
 * the test. Returns tmpl or NULL. */
char *loader_mkdtemp(char *tmpl);
void loader_tmp_cleanup(void);

/* Run `cmd` and return its stdout (malloc'd, NUL-terminated) or NULL. */
char *loader_run(const char *cmd);

#endif
