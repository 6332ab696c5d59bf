/* sentry/elf.h: the pure half of the sentry's program loader.
 *
 * Nothing here does I/O of its own, touches the guest, or allocates:
 *  - elf_parse() reads an ELF file through a callback and validates it as a
 *    hostile input (every field is guest-controlled: the guest chose the file);
 *  - elf_load_bias_hint() and elf_map_plan() turn the result into the exact
 *    list of mmap/zeroing operations Linux would perform;
 *  - shebang_parse() implements binfmt_script's "#!" line parsing;
 *  - stack_build() lays out the initial stack (argc, argv, envp, auxv and the
 *    strings they point to) byte for byte as Linux's create_elf_tables() does.
 *
 * The caller (sentry/exec) owns the file, the guest address space and the
 * injected syscalls. All functions return 0 or a count on success and -errno
 * on failure, never abort on guest input, and are safe to call concurrently.
 * See docs/loader.md.
 */
#ifndef MOAT_SENTRY_ELF_H
#define MOAT_SENTRY_ELF_H

#include <elf.h>
#include <stddef.h>
#include <stdint.h>

#define ELF_PAGE_SIZE 4096ULL
/* Top of x86_64 user space with 4-level paging (Linux TASK_SIZE_MAX/
 * DEFAULT_MAP_WINDOW). Nothing the loader plans may reach past it. */
#define ELF_TASK_SIZE 0x7ffffffff000ULL
/* Linux's ELF_ET_DYN_BASE for 64-bit tasks: 2/3 of the address space, where
 * PIE executables go (page-rounded to 0x555555554000 for a zero p_vaddr). */
#define ELF_DYN_BASE_DEFAULT (ELF_TASK_SIZE / 3 * 2)

#define ELF_MAX_PHNUM 128
#define ELF_MAX_SEGS 16
/* Largest ET_DYN image we accept (sum of all PT_LOAD spans, page-rounded). */
#define ELF_MAX_DYN_SPAN (1ULL << 40)
/* Linux BINPRM_BUF_SIZE: how much of a file the "#!" parser looks at. */
#define SHEBANG_BUF_SIZE 256
/* Linux MAX_ARG_STRLEN: longest argv/envp string including its NUL. */
#define STACK_MAX_ARG_STRLEN (32 * 4096)

/* Read up to len bytes at off into buf. Returns the number of bytes read
 * (short only at end of file) or -errno. */
typedef int (*elf_read_fn)(void *ctx, void *buf, size_t len, uint64_t off);

struct elf_seg {
	uint64_t vaddr; /* p_vaddr (unbiased) */
	uint64_t memsz, filesz, offset;
	int prot; /* PROT_READ|PROT_WRITE|PROT_EXEC from p_flags */
};

struct elf_info {
	uint16_t type;	/* ET_EXEC or ET_DYN */
	uint64_t entry; /* e_entry (unbiased) */
	uint64_t phoff;
	uint16_t phnum, phentsize;
	/* vaddr of the phdr table in memory (unbiased), for AT_PHDR: like
	 * Linux >= 5.18, derived from the PT_LOAD whose file bytes contain
	 * the table; else PT_PHDR's p_vaddr if the table lies inside a
	 * PT_LOAD; else 0 (no AT_PHDR can be given). */
	uint64_t phdr_vaddr;
	uint64_t min_vaddr, max_vaddr; /* page-aligned span of all PT_LOADs */
	/* Largest power-of-two PT_LOAD p_align in [4 KiB, 1 GiB]; at least
	 * ELF_PAGE_SIZE. ET_DYN images are placed at a multiple of it, as
	 * Linux >= 5.10 does (2 MiB-aligned text for huge pages). Extension. */
	uint64_t max_align;
	/* PT_LOADs with p_memsz > 0, sorted by vaddr, non-overlapping. */
	struct elf_seg segs[ELF_MAX_SEGS];
	int nsegs;
	char interp[4096]; /* PT_INTERP path, NUL-terminated, no embedded NUL */
	int has_interp;
	int exec_stack; /* PT_GNU_STACK has PF_X (absent: 0, as on x86_64) */
};

/* Parse and validate the ELF file of file_size bytes read through rd(ctx).
 * Returns 0 and fills *out, or -ENOEXEC for anything that is not a sane,
 * loadable x86_64 ELF64 little-endian ET_EXEC/ET_DYN (ELFOSABI SYSV or GNU),
 * or an error from rd (-EIO if rd returns fewer bytes than file_size
 * promised). *out is clobbered on failure. */
int elf_parse(elf_read_fn rd, void *ctx, uint64_t file_size,
	      struct elf_info *out);

/* Load bias for an image whose lowest page should go at or just below base,
 * as Linux's load_elf_binary() computes it: ET_EXEC -> 0; ET_DYN ->
 * page_down(base - min_vaddr) rounded down to max_align. Pass
 * ELF_DYN_BASE_DEFAULT (+ ASLR offset) for a PIE with an interpreter, or the
 * start of a region the caller reserved for ld.so or a static PIE.
 * Returns 0, or -ENOMEM if the image would not fit below ELF_TASK_SIZE. */
int elf_load_bias_hint(const struct elf_info *ei, uint64_t base,
		       uint64_t *bias);

enum elf_map_kind {
	/* mmap(addr, len, prot, MAP_PRIVATE|MAP_FIXED, fd, offset) */
	ELF_MAP_FILE,
	/* mmap(addr, len, prot, MAP_PRIVATE|MAP_FIXED|MAP_ANONYMOUS, -1, 0) */
	ELF_MAP_ANON,
	/* Write len zero bytes at addr, inside a page the previous FILE op of
	 * the same segment mapped. prot is that segment's: if it lacks
	 * PROT_WRITE, the caller must write through /proc/pid/mem or
	 * process_vm_writev-after-mprotect (Linux ignores the failure). */
	ELF_ZERO,
};

struct elf_map_op {
	uint64_t addr, len, offset;
	int prot;
	int kind; /* enum elf_map_kind */
};

/* At most 3 ops per segment: FILE, ZERO, ANON. */
#define ELF_MAP_OPS_MAX (3 * ELF_MAX_SEGS)

/* The mmap plan for ei loaded at bias (0 for ET_EXEC; page-aligned), in the
 * order Linux's elf_load() performs it; execute the ops in order (a later
 * segment's FILE op may replace a page an earlier one shared with it, as on
 * Linux). For ET_DYN the caller should first reserve
 * [min_vaddr + bias, max_vaddr + bias) so the gaps stay owned by the image.
 * Returns the number of ops written to ops[0..cap), -EINVAL for a bias that
 * is misaligned, nonzero for ET_EXEC or puts the image outside user space,
 * or -ENOSPC if cap is too small (ELF_MAP_OPS_MAX always suffices). */
int elf_map_plan(const struct elf_info *ei, uint64_t bias,
		 struct elf_map_op *ops, size_t cap);

/* "#!" scripts, Linux 6.x binfmt_script semantics. buf holds the first len
 * bytes of the file (only the first SHEBANG_BUF_SIZE are looked at). On a
 * script, returns 1 with interp (and, if *has_arg, arg: the rest of the line,
 * trimmed, as ONE argument, possibly cut at SHEBANG_BUF_SIZE like Linux)
 * NUL-terminated. Returns 0 if buf does not start with "#!", -ENOEXEC if
 * there is no interpreter or it may be truncated (no newline and no blank
 * after it in the first SHEBANG_BUF_SIZE bytes), -ENAMETOOLONG if a result
 * does not fit its cap (caps of SHEBANG_BUF_SIZE always suffice). */
int shebang_parse(const char *buf, size_t len, char *interp, size_t interp_cap,
		  char *arg, size_t arg_cap, int *has_arg);

/* The initial stack image of a new x86_64 program.
 *
 * Ownership: buf/cap are the caller's scratch buffer; stack_build() writes
 * the image into its LAST len bytes, i.e. buf[cap - len .. cap) is to be
 * written at guest [sp, stack_top). Nothing outside that range is touched.
 *
 * Layout, high to low, exactly as Linux's exec + create_elf_tables():
 *   stack_top - 8:  8 zero bytes (Linux's end marker)
 *   execfn string   (AT_EXECFN)
 *   envp strings    (envp[envc-1] highest)
 *   argv strings    (argv[0] lowest = arg_start)
 *   <round down to 16>
 *   "x86_64"        (AT_PLATFORM)
 *   16 random bytes (AT_RANDOM)
 *   <zero padding so that sp is 16-aligned>
 *   auxv pairs ... AT_NULL, 0
 *   NULL, envp pointers
 *   NULL, argv pointers
 *   argc            <- sp
 * Linux (with ASLR) also leaves a random 0..8 KiB gap below the argv strings
 * (arch_align_stack); we leave none: randomise stack_top instead. */
struct stack_image {
	uint8_t *buf;
	size_t cap;  /* caller-provided scratch buffer */
	size_t len;  /* bytes of the image, at buf + cap - len */
	uint64_t sp; /* guest address of argc */
	uint64_t argv_addr, envp_addr, auxv_addr, execfn_addr, random_addr;
	/* Extensions: what /proc/pid/{cmdline,environ,auxv} and
	 * prctl(PR_SET_MM) need (mm->arg_start etc. on Linux). */
	uint64_t platform_addr;
	uint64_t arg_start, arg_end, env_start, env_end;
	size_t auxv_len; /* bytes of auxv including AT_NULL */
};

/* Build the image for a stack ending at stack_top (16-aligned). aux holds
 * naux (type, value) pairs, aux[2i] the type; they are emitted in the given
 * order, followed by AT_RANDOM, AT_EXECFN, AT_PLATFORM and AT_NULL, which
 * stack_build() adds and the caller must not pass. argc must be >= 1: Linux
 * >= 5.18 makes execve substitute argv = { "" } for an empty argv before any
 * binfmt runs, and that policy belongs to the execve layer.
 * Returns 0, -E2BIG if the image does not fit in cap or a string is longer
 * than STACK_MAX_ARG_STRLEN (as Linux), -EINVAL on bad arguments. */
int stack_build(uint64_t stack_top, const char *const *argv, size_t argc,
		const char *const *envp, size_t envc, const char *execfn,
		const uint64_t *aux, size_t naux, const uint8_t random16[16],
		struct stack_image *img);

#endif
