/* sentry/elf.c: ELF parsing, mmap planning, "#!" parsing and initial stack
 * layout. Pure functions: see elf.h for the contract and docs/loader.md.
 *
 * Every value read from the file is hostile. Rules used throughout:
 *  - every sum or product of file-provided values goes through
 *    __builtin_*_overflow before it is compared with anything;
 *  - every range is checked against file_size (file offsets) or
 *    ELF_TASK_SIZE (addresses) before it is used;
 *  - violations return -ENOEXEC, like Linux, so execve() fails the same way.
 */
#include "sentry/elf.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <sys/mman.h>

#include "lib/util.h"

#define PAGE_OFF_MASK (ELF_PAGE_SIZE - 1)

_Static_assert(sizeof(Elf64_Phdr) == 56, "Elf64_Phdr layout");
_Static_assert(ELF_DYN_BASE_DEFAULT == 0x555555554aaaULL, "ELF_ET_DYN_BASE");

static inline uint64_t page_down(uint64_t x)
{
	return x & ~PAGE_OFF_MASK;
}

/* Only for x <= ELF_TASK_SIZE, which is page-aligned: cannot overflow. */
static inline uint64_t page_up(uint64_t x)
{
	return (x + PAGE_OFF_MASK) & ~PAGE_OFF_MASK;
}

/* [off, off + len) lies inside a file of file_size bytes. */
static bool in_file(uint64_t off, uint64_t len, uint64_t file_size)
{
	uint64_t end;

	return !__builtin_add_overflow(off, len, &end) && end <= file_size;
}

/* The callback is ours (sentry code) but the file under it can change
 * between stat and read: a short read of a range we already bounded by
 * file_size is an I/O error, not a parse result. */
static int read_exact(elf_read_fn rd, void *ctx, void *buf, size_t len,
		      uint64_t off)
{
	int r = rd(ctx, buf, len, off);

	if (r < 0)
		return r >= -4095 ? r : -EIO;
	if ((size_t)r != len)
		return -EIO;
	return 0;
}

static int check_ehdr(const Elf64_Ehdr *eh)
{
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0)
		return -ENOEXEC;
	if (eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_ident[EI_DATA] != ELFDATA2LSB ||
	    eh->e_ident[EI_VERSION] != EV_CURRENT)
		return -ENOEXEC;
	if (eh->e_ident[EI_OSABI] != ELFOSABI_SYSV &&
	    eh->e_ident[EI_OSABI] != ELFOSABI_GNU)
		return -ENOEXEC;
	if (eh->e_type != ET_EXEC && eh->e_type != ET_DYN)
		return -ENOEXEC;
	if (eh->e_machine != EM_X86_64 || eh->e_version != EV_CURRENT)
		return -ENOEXEC;
	if (eh->e_phentsize != sizeof(Elf64_Phdr))
		return -ENOEXEC;
	/* Also rules out PN_XNUM (0xffff, "count is in section 0"). */
	if (eh->e_phnum == 0 || eh->e_phnum > ELF_MAX_PHNUM)
		return -ENOEXEC;
	return 0;
}

static int flags_to_prot(uint32_t flags)
{
	return ((flags & PF_R) ? PROT_READ : 0) |
	       ((flags & PF_W) ? PROT_WRITE : 0) |
	       ((flags & PF_X) ? PROT_EXEC : 0);
}

/* Validate one PT_LOAD and append it to out->segs. Checks apply to every
 * PT_LOAD, even empty ones, so a file cannot smuggle nonsense past us. */
static int add_load(struct elf_info *out, const Elf64_Phdr *p,
		    uint64_t file_size)
{
	uint64_t end;
	struct elf_seg *s;

	if (p->p_filesz > p->p_memsz)
		return -ENOEXEC;
	if (!in_file(p->p_offset, p->p_filesz, file_size))
		return -ENOEXEC;
	if (__builtin_add_overflow(p->p_vaddr, p->p_memsz, &end) ||
	    end > ELF_TASK_SIZE)
		return -ENOEXEC;
	/* mmap maps whole pages: the file page and the memory page must
	 * start at the same in-page offset or the data lands shifted. */
	if ((p->p_offset & PAGE_OFF_MASK) != (p->p_vaddr & PAGE_OFF_MASK))
		return -ENOEXEC;
	/* Linux maps nothing for an empty segment; neither do we. */
	if (p->p_memsz == 0)
		return 0;
	if (out->nsegs > 0) {
		const struct elf_seg *prev = &out->segs[out->nsegs - 1];

		/* Sorted and disjoint in bytes. Sharing a page is allowed
		 * (Linux allows it; the later mapping wins). */
		if (p->p_vaddr < prev->vaddr + prev->memsz)
			return -ENOEXEC;
	}
	if (out->nsegs >= ELF_MAX_SEGS)
		return -ENOEXEC;
	s = &out->segs[out->nsegs++];
	s->vaddr = p->p_vaddr;
	s->memsz = p->p_memsz;
	s->filesz = p->p_filesz;
	s->offset = p->p_offset;
	s->prot = flags_to_prot(p->p_flags);
	/* Linux (maximum_alignment) honours only power-of-two alignments;
	 * we also cap it so a bias computation cannot be driven absurd. */
	if (p->p_align >= ELF_PAGE_SIZE && p->p_align <= (1ULL << 30) &&
	    (p->p_align & (p->p_align - 1)) == 0 && p->p_align > out->max_align)
		out->max_align = p->p_align;
	return 0;
}

static int read_interp(elf_read_fn rd, void *ctx, uint64_t file_size,
		       const Elf64_Phdr *p, struct elf_info *out)
{
	int r;

	/* At least one character and its NUL; at most PATH_MAX with it. */
	if (p->p_filesz < 2 || p->p_filesz > sizeof(out->interp))
		return -ENOEXEC;
	if (!in_file(p->p_offset, p->p_filesz, file_size))
		return -ENOEXEC;
	r = read_exact(rd, ctx, out->interp, p->p_filesz, p->p_offset);
	if (r)
		return r;
	/* NUL-terminated with no NUL inside: the path is exactly what the
	 * header says, so what we log is what we open. */
	if (out->interp[p->p_filesz - 1] != '\0' ||
	    strlen(out->interp) != p->p_filesz - 1)
		return -ENOEXEC;
	out->has_interp = 1;
	return 0;
}

/* AT_PHDR: the in-memory address of the phdr table (see elf.h). */
static uint64_t find_phdr_vaddr(const struct elf_info *ei,
				const Elf64_Phdr *pt_phdr)
{
	uint64_t tbl = (uint64_t)ei->phnum * sizeof(Elf64_Phdr);
	uint64_t end;
	int i;

	for (i = 0; i < ei->nsegs; i++) {
		const struct elf_seg *s = &ei->segs[i];

		if (s->offset <= ei->phoff &&
		    ei->phoff - s->offset <= s->filesz &&
		    tbl <= s->filesz - (ei->phoff - s->offset))
			return s->vaddr + (ei->phoff - s->offset);
	}
	if (!pt_phdr || __builtin_add_overflow(pt_phdr->p_vaddr, tbl, &end))
		return 0;
	for (i = 0; i < ei->nsegs; i++) {
		const struct elf_seg *s = &ei->segs[i];

		if (s->vaddr <= pt_phdr->p_vaddr && end <= s->vaddr + s->memsz)
			return pt_phdr->p_vaddr;
	}
	return 0;
}

int elf_parse(elf_read_fn rd, void *ctx, uint64_t file_size,
	      struct elf_info *out)
{
	Elf64_Ehdr eh;
	/* 7 KiB on the stack: bounded by ELF_MAX_PHNUM, avoids an
	 * allocation the guest could make fail. */
	Elf64_Phdr ph[ELF_MAX_PHNUM];
	const Elf64_Phdr *interp_ph = NULL, *phdr_ph = NULL;
	const struct elf_seg *last;
	bool entry_ok = false;
	size_t tbl;
	int i, r;

	if (!rd || !out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	if (file_size < sizeof(eh))
		return -ENOEXEC;
	r = read_exact(rd, ctx, &eh, sizeof(eh), 0);
	if (r)
		return r;
	r = check_ehdr(&eh);
	if (r)
		return r;
	tbl = (size_t)eh.e_phnum * sizeof(Elf64_Phdr);
	if (!in_file(eh.e_phoff, tbl, file_size))
		return -ENOEXEC;
	r = read_exact(rd, ctx, ph, tbl, eh.e_phoff);
	if (r)
		return r;

	out->type = eh.e_type;
	out->entry = eh.e_entry;
	out->phoff = eh.e_phoff;
	out->phnum = eh.e_phnum;
	out->phentsize = eh.e_phentsize;
	out->max_align = ELF_PAGE_SIZE;

	for (i = 0; i < eh.e_phnum; i++) {
		const Elf64_Phdr *p = &ph[i];

		switch (p->p_type) {
		case PT_LOAD:
			r = add_load(out, p, file_size);
			if (r)
				return r;
			break;
		case PT_INTERP:
			/* Linux uses the first and ignores the rest; two
			 * interpreters is an ambiguity we refuse. */
			if (interp_ph)
				return -ENOEXEC;
			interp_ph = p;
			break;
		case PT_GNU_STACK:
			/* Last one wins, as in Linux. */
			out->exec_stack = !!(p->p_flags & PF_X);
			break;
		case PT_PHDR:
			if (!phdr_ph)
				phdr_ph = p;
			break;
		default:
			break;
		}
	}

	if (out->nsegs == 0)
		return -ENOEXEC;
	last = &out->segs[out->nsegs - 1];
	out->min_vaddr = page_down(out->segs[0].vaddr);
	/* add_load() bounded vaddr + memsz by ELF_TASK_SIZE. */
	out->max_vaddr = page_up(last->vaddr + last->memsz);
	if (out->type == ET_DYN &&
	    out->max_vaddr - out->min_vaddr > ELF_MAX_DYN_SPAN)
		return -ENOEXEC;

	for (i = 0; i < out->nsegs; i++) {
		const struct elf_seg *s = &out->segs[i];

		if ((s->prot & PROT_EXEC) && s->vaddr <= out->entry &&
		    out->entry - s->vaddr < s->memsz) {
			entry_ok = true;
			break;
		}
	}
	if (!entry_ok)
		return -ENOEXEC;

	if (interp_ph) {
		r = read_interp(rd, ctx, file_size, interp_ph, out);
		if (r)
			return r;
	}
	out->phdr_vaddr = find_phdr_vaddr(out, phdr_ph);
	return 0;
}

int elf_load_bias_hint(const struct elf_info *ei, uint64_t base, uint64_t *bias)
{
	uint64_t b, lo, hi;

	if (!ei || !bias)
		return -EINVAL;
	if (ei->type == ET_EXEC) {
		*bias = 0;
		return 0;
	}
	if (ei->type != ET_DYN || ei->max_align < ELF_PAGE_SIZE ||
	    (ei->max_align & (ei->max_align - 1)) != 0 ||
	    ei->max_vaddr < ei->min_vaddr)
		return -EINVAL;
	/* Unsigned wrap-around is intended: a "negative" bias moves an
	 * image linked high down to base. The range check below catches
	 * every placement that does not fit. */
	b = page_down(base - ei->min_vaddr) & ~(ei->max_align - 1);
	lo = ei->min_vaddr + b;
	if (__builtin_add_overflow(lo, ei->max_vaddr - ei->min_vaddr, &hi) ||
	    hi > ELF_TASK_SIZE)
		return -ENOMEM;
	*bias = b;
	return 0;
}

static int emit(struct elf_map_op *ops, size_t cap, size_t *n, int kind,
		uint64_t addr, uint64_t len, uint64_t offset, int prot)
{
	if (*n >= cap)
		return -ENOSPC;
	ops[*n] = (struct elf_map_op){
		.addr = addr,
		.len = len,
		.offset = offset,
		.prot = prot,
		.kind = kind,
	};
	(*n)++;
	return 0;
}

int elf_map_plan(const struct elf_info *ei, uint64_t bias,
		 struct elf_map_op *ops, size_t cap)
{
	uint64_t lo, hi;
	size_t n = 0;
	int i, r;

	if (!ei || (!ops && cap))
		return -EINVAL;
	if (ei->nsegs <= 0 || ei->nsegs > ELF_MAX_SEGS)
		return -EINVAL;
	if ((bias & PAGE_OFF_MASK) != 0)
		return -EINVAL;
	if (ei->type == ET_EXEC ? bias != 0 : ei->type != ET_DYN)
		return -EINVAL;
	if (ei->max_vaddr < ei->min_vaddr || ei->max_vaddr > ELF_TASK_SIZE)
		return -EINVAL;
	lo = ei->min_vaddr + bias; /* wraps for a "negative" bias, see above */
	if (__builtin_add_overflow(lo, ei->max_vaddr - ei->min_vaddr, &hi) ||
	    hi > ELF_TASK_SIZE)
		return -EINVAL;

	for (i = 0; i < ei->nsegs; i++) {
		const struct elf_seg *s = &ei->segs[i];
		uint64_t end, start, file_end, mem_end, anon_start;

		/* ei comes from elf_parse(), but re-checking what the
		 * arithmetic below relies on is cheap. */
		if (s->filesz > s->memsz || s->vaddr < ei->min_vaddr ||
		    __builtin_add_overflow(s->vaddr, s->memsz, &end) ||
		    end > ei->max_vaddr ||
		    (s->vaddr & PAGE_OFF_MASK) != (s->offset & PAGE_OFF_MASK))
			return -EINVAL;
		/* All of these lie in [lo, hi] <= ELF_TASK_SIZE. */
		start = page_down(s->vaddr) + bias;
		file_end = s->vaddr + bias + s->filesz;
		mem_end = s->vaddr + bias + s->memsz;

		if (s->filesz) {
			r = emit(ops, cap, &n, ELF_MAP_FILE, start,
				 page_up(file_end) - start,
				 page_down(s->offset), s->prot);
			if (r)
				return r;
			/* The tail of the last file page holds whatever
			 * follows in the file; bss must read as zero. Linux
			 * (padzero) clears to the page end. */
			if (s->memsz > s->filesz &&
			    (file_end & PAGE_OFF_MASK)) {
				r = emit(ops, cap, &n, ELF_ZERO, file_end,
					 page_up(file_end) - file_end, 0,
					 s->prot);
				if (r)
					return r;
			}
			anon_start = page_up(file_end);
		} else {
			anon_start = start;
		}
		if (s->memsz > s->filesz && page_up(mem_end) > anon_start) {
			r = emit(ops, cap, &n, ELF_MAP_ANON, anon_start,
				 page_up(mem_end) - anon_start, 0, s->prot);
			if (r)
				return r;
		}
	}
	return (int)n;
}

/* ---- "#!" ------------------------------------------------------------ */

/* The helpers below are Linux's fs/binfmt_script.c ones: same names, same
 * inclusive [first, last] ranges, so the two can be compared line by line. */
static inline bool spacetab(char c)
{
	return c == ' ' || c == '\t';
}

static const char *next_non_spacetab(const char *first, const char *last)
{
	for (; first <= last; first++)
		if (!spacetab(*first))
			return first;
	return NULL;
}

static const char *next_terminator(const char *first, const char *last)
{
	for (; first <= last; first++)
		if (spacetab(*first) || !*first)
			return first;
	return NULL;
}

static int copy_out(char *dst, size_t cap, const char *src, size_t len)
{
	if (len >= cap)
		return -ENAMETOOLONG;
	memcpy(dst, src, len);
	dst[len] = '\0';
	return 0;
}

int shebang_parse(const char *buf, size_t len, char *interp, size_t interp_cap,
		  char *arg, size_t arg_cap, int *has_arg)
{
	/* Linux parses bprm->buf: the first BINPRM_BUF_SIZE bytes of the
	 * file, NUL-padded when the file is shorter. Recreate exactly that. */
	char b[SHEBANG_BUF_SIZE] = { 0 };
	const char *buf_end = b + sizeof(b) - 1;
	const char *i_end = NULL, *i_name, *i_sep, *i_arg = NULL, *a_end;
	size_t n = len < sizeof(b) ? len : sizeof(b);
	size_t k, ilen;
	int r;

	if ((!buf && len) || !interp || !arg || !has_arg)
		return -EINVAL;
	*has_arg = 0;
	if (n)
		memcpy(b, buf, n);
	if (n < 2 || b[0] != '#' || b[1] != '!')
		return 0;

	/* strnchr(): stops at the first NUL as well. */
	for (k = 0; k < sizeof(b) && b[k]; k++) {
		if (b[k] == '\n') {
			i_end = &b[k];
			break;
		}
	}
	if (!i_end) {
		/* No newline: accept only if the interpreter path is
		 * visibly complete (followed by a blank or NUL), so we
		 * never exec a truncated path. */
		i_end = next_non_spacetab(b + 2, buf_end);
		if (!i_end)
			return -ENOEXEC;
		if (!next_terminator(i_end, buf_end))
			return -ENOEXEC;
		i_end = buf_end;
	}
	/* Stops at b[1] == '!' at the latest. */
	while (spacetab(i_end[-1]))
		i_end--;

	i_name = next_non_spacetab(b + 2, i_end);
	if (!i_name || i_name == i_end)
		return -ENOEXEC;
	i_sep = next_terminator(i_name, i_end);
	if (i_sep && *i_sep != '\0')
		i_arg = next_non_spacetab(i_sep, i_end);

	/* Linux NUL-terminates at i_end (and at i_sep when there is an
	 * argument) and uses the C strings at i_name and i_arg. i_sep is the
	 * first blank or NUL after i_name, so the name ends there. */
	ilen = (size_t)((i_sep ? i_sep : i_end) - i_name);
	if (ilen == 0) /* "#!" then NUL: Linux would exec "" (ENOENT). */
		return -ENOEXEC;
	r = copy_out(interp, interp_cap, i_name, ilen);
	if (r)
		return r;
	if (i_arg) {
		a_end = memchr(i_arg, '\0', (size_t)(i_end - i_arg));
		if (!a_end)
			a_end = i_end;
		r = copy_out(arg, arg_cap, i_arg, (size_t)(a_end - i_arg));
		if (r)
			return r;
		*has_arg = 1;
	}
	return 1;
}

/* ---- initial stack ---------------------------------------------------- */

static const char stack_platform[] = "x86_64";

static void put64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, sizeof(v));
}

static bool aux_reserved(uint64_t type)
{
	/* stack_build() owns these: their values are addresses inside the
	 * image, and an early AT_NULL would hide the rest of the vector. */
	return type == AT_NULL || type == AT_RANDOM || type == AT_EXECFN ||
	       type == AT_PLATFORM;
}

/* Add strlen(s) + 1 to *sz; -E2BIG past Linux's MAX_ARG_STRLEN. */
static int add_str(size_t *sz, const char *s)
{
	size_t l;

	if (!s)
		return -EINVAL;
	l = strnlen(s, STACK_MAX_ARG_STRLEN);
	if (l >= STACK_MAX_ARG_STRLEN)
		return -E2BIG;
	if (__builtin_add_overflow(*sz, l + 1, sz))
		return -E2BIG;
	return 0;
}

/* Copy s (with NUL) to end at image offset *off; return its offset. */
static size_t push_str(uint8_t *img, size_t *off, const char *s)
{
	size_t l = strlen(s) + 1;

	*off -= l;
	memcpy(img + *off, s, l);
	return *off;
}

int stack_build(uint64_t stack_top, const char *const *argv, size_t argc,
		const char *const *envp, size_t envc, const char *execfn,
		const uint64_t *aux, size_t naux, const uint8_t random16[16],
		struct stack_image *img)
{
	size_t strsz = 8, items, total, off, i, p_argv, p_envp, p_auxv;
	uint64_t sp;
	uint8_t *base;
	int r;

	if (!img || (!img->buf && img->cap) || !argv || argc == 0 ||
	    (!envp && envc) || !execfn || (!aux && naux) || !random16)
		return -EINVAL;
	if (stack_top & 15)
		return -EINVAL;
	/* Bounds 2 * i below; such a vector could never fit anyway. */
	if (naux > SIZE_MAX / 16)
		return -E2BIG;
	for (i = 0; i < naux; i++)
		if (aux_reserved(aux[2 * i]))
			return -EINVAL;

	/* Pass 1: size. Offsets are from stack_top downwards; stack_top is
	 * 16-aligned, so rounding a size up to 16 rounds the address down. */
	r = add_str(&strsz, execfn);
	for (i = 0; !r && i < envc; i++)
		r = add_str(&strsz, envp[i]);
	for (i = 0; !r && i < argc; i++)
		r = add_str(&strsz, argv[i]);
	if (r)
		return r;
	/* argc, argv[], NULL, envp[], NULL, auxv incl. our 3 and AT_NULL. */
	if (__builtin_add_overflow(argc, envc, &items) ||
	    __builtin_add_overflow(items, 3, &items) ||
	    __builtin_add_overflow(naux, 4, &i) ||
	    __builtin_mul_overflow(i, 2, &i) ||
	    __builtin_add_overflow(items, i, &items) ||
	    __builtin_mul_overflow(items, 8, &items))
		return -E2BIG;
	if (__builtin_add_overflow(strsz, 15, &total))
		return -E2BIG;
	total &= ~(size_t)15;
	if (__builtin_add_overflow(total, sizeof(stack_platform) + 16,
				   &total) ||
	    __builtin_add_overflow(total, items, &total) ||
	    __builtin_add_overflow(total, 15, &total))
		return -E2BIG;
	total &= ~(size_t)15;
	if (total > img->cap)
		return -E2BIG;
	if (total > stack_top)
		return -EINVAL;

	/* Pass 2: write. base[k] is guest address sp + k. */
	sp = stack_top - total;
	base = img->buf + img->cap - total;
	memset(base, 0, total);
	off = total - 8; /* Linux's zero word at the very top */

	img->execfn_addr = sp + push_str(base, &off, execfn);

	p_argv = 8;
	p_envp = p_argv + 8 * (argc + 1);
	p_auxv = p_envp + 8 * (envc + 1);

	/* Linux copies the strings last-to-first downwards, so argv[0]
	 * ends up lowest and each vector reads upward in memory. */
	img->env_end = sp + off;
	for (i = envc; i-- > 0;)
		put64(base + p_envp + 8 * i,
		      sp + push_str(base, &off, envp[i]));
	img->env_start = sp + off;
	img->arg_end = sp + off;
	for (i = argc; i-- > 0;)
		put64(base + p_argv + 8 * i,
		      sp + push_str(base, &off, argv[i]));
	img->arg_start = sp + off;

	off &= ~(size_t)15;
	img->platform_addr = sp + push_str(base, &off, stack_platform);
	off -= 16;
	memcpy(base + off, random16, 16);
	img->random_addr = sp + off;

	put64(base, argc);
	/* The NULLs after argv[] and envp[] are already zero. */
	for (i = 0; i < naux; i++) {
		put64(base + p_auxv + 16 * i, aux[2 * i]);
		put64(base + p_auxv + 16 * i + 8, aux[2 * i + 1]);
	}
	{
		const uint64_t ours[] = {
			AT_RANDOM,   img->random_addr,
			AT_EXECFN,   img->execfn_addr,
			AT_PLATFORM, img->platform_addr,
			AT_NULL,     0,
		};

		memcpy(base + p_auxv + 16 * naux, ours, sizeof(ours));
		MOAT_ASSERT(p_auxv + 16 * naux + sizeof(ours) <= off);
	}

	img->len = total;
	img->sp = sp;
	img->argv_addr = sp + p_argv;
	img->envp_addr = sp + p_envp;
	img->auxv_addr = sp + p_auxv;
	img->auxv_len = 16 * (naux + 4);
	return 0;
}
