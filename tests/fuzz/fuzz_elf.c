/* tests/fuzz/fuzz_elf.c: libFuzzer target for sentry/elf.c.
 *
 * Build and run (from the repo root):
 *   clang -g -O1 -std=gnu11 -D_GNU_SOURCE -I. \
 *     -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
 *     -o /tmp/fuzz_elf tests/fuzz/fuzz_elf.c sentry/elf.c lib/util.c
 *   /tmp/fuzz_elf -max_len=16384 tests/fuzz/corpus/elf
 *
 * Every input goes through all four parsers:
 *  - elf_parse(): the input is the file. With an odd length the file is
 *    exactly the input; with an even length it is the input followed by
 *    zeros up to 64 MiB, so the 4 KiB header-only seeds (real binaries cut
 *    short) still parse and the fuzzer explores the accepting paths. On
 *    success the result's invariants are checked and elf_map_plan() runs
 *    with the hinted bias and with a bias taken from the input.
 *  - shebang_parse() on the first bytes;
 *  - stack_build() with NUL-separated strings from the input, parsed back.
 * Invariant violations abort(), which libFuzzer reports as a crash.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "sentry/elf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c)                                                               \
	do {                                                                   \
		if (!(c)) {                                                    \
			fprintf(stderr,                                        \
				"fuzz_elf: check failed: %s (%s:%d)\n", #c,    \
				__FILE__, __LINE__);                           \
			abort();                                               \
		}                                                              \
	} while (0)

#define VIRTUAL_SIZE (64ULL << 20)
#define PG 4096ULL

struct mem {
	const uint8_t *data;
	size_t size;
	uint64_t file_size;
};

static int read_mem(void *ctx, void *buf, size_t len, uint64_t off)
{
	const struct mem *m = ctx;
	size_t n = 0;

	if (off >= m->file_size)
		return 0;
	if (len > m->file_size - off)
		len = (size_t)(m->file_size - off);
	if (off < m->size) {
		n = m->size - off < len ? m->size - (size_t)off : len;
		memcpy(buf, m->data + off, n);
	}
	memset((uint8_t *)buf + n, 0, len - n);
	return (int)len;
}

static void check_info(const struct elf_info *ei, uint64_t file_size)
{
	int i, entry_ok = 0;

	CHECK(ei->type == ET_EXEC || ei->type == ET_DYN);
	CHECK(ei->nsegs >= 1 && ei->nsegs <= ELF_MAX_SEGS);
	CHECK(ei->min_vaddr % PG == 0 && ei->max_vaddr % PG == 0);
	CHECK(ei->min_vaddr < ei->max_vaddr && ei->max_vaddr <= ELF_TASK_SIZE);
	CHECK(ei->max_align >= PG &&
	      (ei->max_align & (ei->max_align - 1)) == 0);
	for (i = 0; i < ei->nsegs; i++) {
		const struct elf_seg *s = &ei->segs[i];

		CHECK(s->memsz > 0 && s->filesz <= s->memsz);
		CHECK(s->offset + s->filesz <= file_size);
		CHECK(s->vaddr >= ei->min_vaddr &&
		      s->vaddr + s->memsz <= ei->max_vaddr);
		CHECK(s->vaddr % PG == s->offset % PG);
		if (i > 0)
			CHECK(s->vaddr >=
			      ei->segs[i - 1].vaddr + ei->segs[i - 1].memsz);
		if ((s->prot & PROT_EXEC) && ei->entry >= s->vaddr &&
		    ei->entry < s->vaddr + s->memsz)
			entry_ok = 1;
	}
	CHECK(entry_ok);
	if (ei->has_interp)
		CHECK(ei->interp[0] && strnlen(ei->interp, sizeof(ei->interp)) <
					       sizeof(ei->interp));
	if (ei->type == ET_DYN)
		CHECK(ei->max_vaddr - ei->min_vaddr <= ELF_MAX_DYN_SPAN);
}

static void check_plan(const struct elf_info *ei, uint64_t bias,
		       uint64_t file_size)
{
	struct elf_map_op ops[ELF_MAP_OPS_MAX];
	int n = elf_map_plan(ei, bias, ops, ELF_MAP_OPS_MAX), i;
	uint64_t lo = ei->min_vaddr + bias,
		 hi = lo + (ei->max_vaddr - ei->min_vaddr);
	uint64_t prev_end = 0;

	if (n == -EINVAL)
		return;
	CHECK(n > 0 && n <= ELF_MAP_OPS_MAX);
	CHECK(hi <= ELF_TASK_SIZE && lo <= hi);
	for (i = 0; i < n; i++) {
		const struct elf_map_op *op = &ops[i];

		CHECK(op->len > 0);
		CHECK(op->addr >= lo && op->addr + op->len <= hi);
		switch (op->kind) {
		case ELF_MAP_FILE:
			CHECK(op->addr % PG == 0 && op->len % PG == 0);
			CHECK(op->offset % PG == 0);
			/* Never maps a whole page past EOF (SIGBUS). */
			CHECK(op->offset + op->len <=
			      (file_size + PG - 1) / PG * PG);
			/* Mappings only move up (pages may be shared). */
			CHECK(op->addr + PG >= prev_end);
			prev_end = op->addr + op->len;
			break;
		case ELF_MAP_ANON:
			CHECK(op->addr % PG == 0 && op->len % PG == 0);
			CHECK(op->addr + PG >= prev_end);
			prev_end = op->addr + op->len;
			break;
		case ELF_ZERO:
			CHECK(op->addr % PG != 0 && op->len < PG);
			CHECK((op->addr + op->len) % PG == 0);
			CHECK(op->addr + op->len == prev_end);
			break;
		default:
			CHECK(!"unknown op kind");
		}
	}
}

static void fuzz_parse(const uint8_t *data, size_t size)
{
	struct mem m = { .data = data, .size = size };
	struct elf_info ei;
	uint64_t bias, raw;

	m.file_size = (size & 1) ? size : VIRTUAL_SIZE;
	if (elf_parse(read_mem, &m, m.file_size, &ei) != 0)
		return;
	check_info(&ei, m.file_size);
	if (elf_load_bias_hint(&ei, ELF_DYN_BASE_DEFAULT, &bias) == 0)
		check_plan(&ei, bias, m.file_size);
	if (size >= 8) {
		memcpy(&raw, data + size - 8, 8);
		check_plan(&ei, raw, m.file_size);
		if (elf_load_bias_hint(&ei, raw, &bias) == 0)
			check_plan(&ei, bias, m.file_size);
	}
}

static void fuzz_shebang(const uint8_t *data, size_t size)
{
	char interp[SHEBANG_BUF_SIZE], arg[SHEBANG_BUF_SIZE];
	int has_arg = -1;
	int r = shebang_parse((const char *)data, size, interp, sizeof(interp),
			      arg, sizeof(arg), &has_arg);

	CHECK(r == 0 || r == 1 || r == -ENOEXEC);
	CHECK(has_arg == 0 || (r == 1 && has_arg == 1));
	if (r == 1) {
		CHECK(interp[0] != '\0');
		CHECK(!strpbrk(interp, " \t\n"));
		/* The argument may be empty: "#!/bin/sh \0" gives "" (Linux
		 * skips blanks only, the NUL then ends the string). */
		if (has_arg)
			CHECK(arg[0] != ' ' && arg[0] != '\t' &&
			      !strchr(arg, '\n'));
	}
}

static void fuzz_stack(const uint8_t *data, size_t size)
{
	static uint8_t buf[65536];
	const char *strs[64];
	char *copy;
	size_t n = 0, i, argc, envc;
	struct stack_image img = { .buf = buf, .cap = sizeof(buf) };
	uint64_t aux[4] = { AT_PAGESZ, 4096, AT_ENTRY, 0x401000 };
	uint8_t rnd[16] = { 0 };
	uint64_t top;

	if (size < 2)
		return;
	/* Own NUL-terminated copy: strings are split at NUL bytes. */
	copy = malloc(size + 1);
	if (!copy)
		return;
	memcpy(copy, data, size);
	copy[size] = '\0';
	for (i = 1; i < size + 1 && n < 64; i += strlen(copy + i) + 1)
		strs[n++] = copy + i;
	if (n < 2) {
		free(copy);
		return;
	}
	argc = 1 + (size_t)(data[0] & 0xf) % (n - 1);
	envc = n - 1 - argc;
	top = ELF_TASK_SIZE - ((uint64_t)(data[0] >> 4) << 4);
	memcpy(rnd, data, size < 16 ? size : 16);
	if (stack_build(top, strs + 1, argc, strs + 1 + argc, envc, strs[0],
			aux, 2, rnd, &img) == 0) {
		const uint8_t *base = buf + img.cap - img.len;
		uint64_t v;

		CHECK(img.sp % 16 == 0 && img.sp + img.len == top);
		memcpy(&v, base, 8);
		CHECK(v == argc);
		for (i = 0; i < argc; i++) {
			memcpy(&v, base + 8 + 8 * i, 8);
			CHECK(v >= img.sp && v < top);
			CHECK(strcmp((const char *)base + (v - img.sp),
				     strs[1 + i]) == 0);
		}
		CHECK(memcmp(base + (img.random_addr - img.sp), rnd, 16) == 0);
		CHECK(strcmp((const char *)base + (img.execfn_addr - img.sp),
			     strs[0]) == 0);
	}
	free(copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_parse(data, size);
	fuzz_shebang(data, size);
	fuzz_stack(data, size);
	return 0;
}
