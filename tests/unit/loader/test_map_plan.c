/* elf_load_bias_hint() and elf_map_plan(). */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <string.h>
#include <sys/mman.h>

#include "lib/util.h"
#include "tests/unit/loader/loader_test.h"

TestSuite(map_plan, .init = loader_fd_snapshot, .fini = loader_fd_check);

static struct synth S;

#define PIE_BIAS 0x555555554000ULL

static void assert_op(const struct elf_map_op *op, int kind, uint64_t addr,
		      uint64_t len, uint64_t offset, int prot)
{
	cr_assert_eq(op->kind, kind, "kind %d want %d", op->kind, kind);
	cr_assert_eq(op->addr, addr, "addr %#" PRIx64 " want %#" PRIx64,
		     op->addr, addr);
	cr_assert_eq(op->len, len, "len %#" PRIx64 " want %#" PRIx64, op->len,
		     len);
	cr_assert_eq(op->offset, offset, "offset %#" PRIx64 " want %#" PRIx64,
		     op->offset, offset);
	cr_assert_eq(op->prot, prot);
}

Test(map_plan, bss_across_pages_gives_file_zero_anon)
{
	struct elf_info ei;
	struct elf_map_op ops[ELF_MAP_OPS_MAX];
	uint64_t bias;
	const int rw = PROT_READ | PROT_WRITE;

	synth_init(&S);
	cr_assert_eq(synth_parse(&S, &ei), 0);
	cr_assert_eq(elf_load_bias_hint(&ei, ELF_DYN_BASE_DEFAULT, &bias), 0);
	cr_assert_eq(bias, PIE_BIAS); /* Linux's PIE base, ASLR off */
	cr_assert_eq(elf_map_plan(&ei, bias, ops, ARRAY_SIZE(ops)), 5);
	assert_op(&ops[0], ELF_MAP_FILE, bias, 0x1000, 0, PROT_READ);
	assert_op(&ops[1], ELF_MAP_FILE, bias + 0x1000, 0x1000, 0x1000,
		  PROT_READ | PROT_EXEC);
	/* RW: vaddr 0x3e00, filesz 0x300 -> file bytes end at 0x4100, so the
	 * file mapping spans pages 0x3000 and 0x4000 from file page 0x2000;
	 * bss 0x4100..0x5000 is zeroed in place; memsz 0x2400 ends at
	 * 0x6200, so pages 0x5000..0x7000 are anonymous. */
	assert_op(&ops[2], ELF_MAP_FILE, bias + 0x3000, 0x2000, 0x2000, rw);
	assert_op(&ops[3], ELF_ZERO, bias + 0x4100, 0xf00, 0, rw);
	assert_op(&ops[4], ELF_MAP_ANON, bias + 0x5000, 0x2000, 0, rw);
}

Test(map_plan, bss_within_last_file_page_has_no_anon)
{
	struct elf_info ei;
	struct elf_map_op ops[ELF_MAP_OPS_MAX];

	synth_init(&S);
	S.ph[4].p_memsz = 0x500; /* 0x3e00 + 0x500 = 0x4300 < 0x5000 */
	cr_assert_eq(synth_parse(&S, &ei), 0);
	cr_assert_eq(elf_map_plan(&ei, 0x10000, ops, ARRAY_SIZE(ops)), 4);
	assert_op(&ops[2], ELF_MAP_FILE, 0x13000, 0x2000, 0x2000,
		  PROT_READ | PROT_WRITE);
	/* Linux's padzero clears to the end of the page, past memsz. */
	assert_op(&ops[3], ELF_ZERO, 0x14100, 0xf00, 0, PROT_READ | PROT_WRITE);
}

Test(map_plan, page_aligned_file_end_has_no_zero)
{
	struct elf_info ei;
	struct elf_map_op ops[ELF_MAP_OPS_MAX];

	synth_init(&S);
	S.size = SYNTH_BUF_SIZE;
	S.ph[4].p_filesz = 0x1200; /* 0x3e00 + 0x1200 = 0x5000 */
	cr_assert_eq(synth_parse(&S, &ei), 0);
	cr_assert_eq(elf_map_plan(&ei, 0, ops, ARRAY_SIZE(ops)), 4);
	assert_op(&ops[2], ELF_MAP_FILE, 0x3000, 0x2000, 0x2000,
		  PROT_READ | PROT_WRITE);
	assert_op(&ops[3], ELF_MAP_ANON, 0x5000, 0x2000, 0,
		  PROT_READ | PROT_WRITE);
}

Test(map_plan, bss_only_segment_is_one_anon)
{
	struct elf_info ei;
	struct elf_map_op ops[ELF_MAP_OPS_MAX];

	synth_init(&S);
	S.ph[4].p_filesz = 0;
	cr_assert_eq(synth_parse(&S, &ei), 0);
	cr_assert_eq(elf_map_plan(&ei, 0, ops, ARRAY_SIZE(ops)), 3);
	/* Linux: anonymous pages from ELF_PAGESTART(vaddr). */
	assert_op(&ops[2], ELF_MAP_ANON, 0x3000, 0x4000, 0,
		  PROT_READ | PROT_WRITE);
}

Test(map_plan, zero_of_read_only_segment_still_emitted)
{
	struct elf_info ei;
	struct elf_map_op ops[ELF_MAP_OPS_MAX];

	synth_init(&S);
	S.ph[4].p_flags = PF_R;
	cr_assert_eq(synth_parse(&S, &ei), 0);
	cr_assert_eq(elf_map_plan(&ei, 0, ops, ARRAY_SIZE(ops)), 5);
	assert_op(&ops[3], ELF_ZERO, 0x4100, 0xf00, 0, PROT_READ);
	assert_op(&ops[4], ELF_MAP_ANON, 0x5000, 0x2000, 0, PROT_READ);
}

Test(map_plan, exec_needs_zero_bias)
{
	struct elf_info ei;
	struct elf_map_op ops[ELF_MAP_OPS_MAX];

	synth_init(&S);
	S.eh->e_type = ET_EXEC;
	/* ET_EXEC at 0 is parseable; mapping it is the caller's problem. */
	cr_assert_eq(synth_parse(&S, &ei), 0);
	cr_assert_eq(elf_map_plan(&ei, 0x1000, ops, ARRAY_SIZE(ops)), -EINVAL);
	cr_assert_eq(elf_map_plan(&ei, 0, ops, ARRAY_SIZE(ops)), 5);
}

Test(map_plan, bad_bias)
{
	struct elf_info ei;
	struct elf_map_op ops[ELF_MAP_OPS_MAX];

	synth_init(&S);
	cr_assert_eq(synth_parse(&S, &ei), 0);
	cr_assert_eq(elf_map_plan(&ei, 0x1234, ops, ARRAY_SIZE(ops)), -EINVAL);
	/* Last page would end past the top of user space. */
	cr_assert_eq(elf_map_plan(&ei, ELF_TASK_SIZE - 0x6000, ops,
				  ARRAY_SIZE(ops)),
		     -EINVAL);
	cr_assert_eq(elf_map_plan(&ei, ELF_TASK_SIZE - 0x7000, ops,
				  ARRAY_SIZE(ops)),
		     5);
	/* "Negative" bias wrapping below 0. */
	cr_assert_eq(elf_map_plan(&ei, (uint64_t)-0x1000, ops, ARRAY_SIZE(ops)),
		     -EINVAL);
}

Test(map_plan, negative_bias_moves_image_down)
{
	struct elf_info ei;
	struct elf_map_op ops[ELF_MAP_OPS_MAX];
	uint64_t bias;
	int i, n;

	synth_init(&S);
	for (i = 2; i <= 4; i++)
		S.ph[i].p_vaddr += 0x40000000; /* linked at 1 GiB */
	S.ph[0].p_vaddr += 0x40000000;
	S.eh->e_entry += 0x40000000;
	cr_assert_eq(synth_parse(&S, &ei), 0);
	cr_assert_eq(elf_load_bias_hint(&ei, 0x10000000, &bias), 0);
	cr_assert_eq(bias, (uint64_t)-0x30000000);
	n = elf_map_plan(&ei, bias, ops, ARRAY_SIZE(ops));
	cr_assert_eq(n, 5);
	cr_assert_eq(ops[0].addr, 0x10000000);
}

Test(map_plan, cap_too_small)
{
	struct elf_info ei;
	struct elf_map_op ops[ELF_MAP_OPS_MAX];

	synth_init(&S);
	cr_assert_eq(synth_parse(&S, &ei), 0);
	cr_assert_eq(elf_map_plan(&ei, 0, ops, 4), -ENOSPC);
	cr_assert_eq(elf_map_plan(&ei, 0, NULL, 0), -ENOSPC);
	cr_assert_eq(elf_map_plan(&ei, 0, NULL, 3), -EINVAL);
}

Test(map_plan, bias_hint_honours_p_align)
{
	struct elf_info ei;
	uint64_t bias;

	synth_init(&S);
	S.ph[3].p_align = 0x200000;
	cr_assert_eq(synth_parse(&S, &ei), 0);
	cr_assert_eq(elf_load_bias_hint(&ei, ELF_DYN_BASE_DEFAULT, &bias), 0);
	cr_assert_eq(bias, 0x555555400000ULL);
	cr_assert_eq(bias % 0x200000, 0);
}

Test(map_plan, bias_hint_rejects_no_room)
{
	struct elf_info ei;
	uint64_t bias = 7;

	synth_init(&S);
	cr_assert_eq(synth_parse(&S, &ei), 0);
	cr_assert_eq(elf_load_bias_hint(&ei, ELF_TASK_SIZE - 0x1000, &bias),
		     -ENOMEM);
	cr_assert_eq(bias, 7);
	cr_assert_eq(elf_load_bias_hint(&ei, ELF_TASK_SIZE - 0x7000, &bias), 0);
	cr_assert_eq(bias, ELF_TASK_SIZE - 0x7000);
}

/* The plan of a real binary covers every segment exactly as Linux would:
 * checked by invariants rather than by numbers that change per build. */
static void check_plan_invariants(const struct elf_info *ei, uint64_t bias)
{
	struct elf_map_op ops[ELF_MAP_OPS_MAX];
	int n, i, k = 0;

	n = elf_map_plan(ei, bias, ops, ARRAY_SIZE(ops));
	cr_assert_gt(n, 0);
	for (i = 0; i < ei->nsegs; i++) {
		const struct elf_seg *s = &ei->segs[i];
		uint64_t va = s->vaddr + bias;
		uint64_t next = va & ~0xfffULL;

		if (s->filesz) {
			const struct elf_map_op *f = &ops[k++];

			cr_assert_eq(f->kind, ELF_MAP_FILE);
			cr_assert_eq(f->addr, next);
			cr_assert_eq(f->offset, s->offset & ~0xfffULL);
			/* The byte at vaddr comes from file byte offset. */
			cr_assert_eq(va - f->addr, s->offset - f->offset);
			cr_assert_geq(f->addr + f->len, va + s->filesz);
			cr_assert_lt(f->addr + f->len - (va + s->filesz),
				     0x1000);
			cr_assert_eq(f->len % 0x1000, 0);
			cr_assert_eq(f->prot, s->prot);
			next = f->addr + f->len;
			if (s->memsz > s->filesz &&
			    ((va + s->filesz) & 0xfff)) {
				const struct elf_map_op *z = &ops[k++];

				cr_assert_eq(z->kind, ELF_ZERO);
				cr_assert_eq(z->addr, va + s->filesz);
				cr_assert_eq(z->addr + z->len, next);
			}
		}
		if (s->memsz > s->filesz &&
		    ((va + s->memsz + 0xfff) & ~0xfffULL) > next) {
			const struct elf_map_op *a = &ops[k++];

			cr_assert_eq(a->kind, ELF_MAP_ANON);
			cr_assert_eq(a->addr, next);
			cr_assert_eq(a->addr + a->len,
				     (va + s->memsz + 0xfff) & ~0xfffULL);
		}
	}
	cr_assert_eq(k, n);
}

Test(map_plan, real_binaries_invariants)
{
	static const char *const paths[] = {
		"/bin/true",
		"/bin/busybox",
		"/lib64/ld-linux-x86-64.so.2",
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(paths); i++) {
		struct elf_info ei;
		uint64_t bias;

		if (loader_parse_path(paths[i], &ei) != 0)
			continue; /* missing: test_elf_real reports it */
		cr_assert_eq(elf_load_bias_hint(&ei, ELF_DYN_BASE_DEFAULT,
						&bias),
			     0);
		check_plan_invariants(&ei, bias);
	}
}

Test(map_plan, busybox_bss)
{
	struct elf_info ei;
	struct elf_map_op ops[ELF_MAP_OPS_MAX];
	const struct elf_seg *s;
	int n;

	if (loader_parse_path("/bin/busybox", &ei) != 0)
		cr_skip_test("/bin/busybox missing");
	n = elf_map_plan(&ei, 0, ops, ARRAY_SIZE(ops));
	s = &ei.segs[ei.nsegs - 1];
	cr_assert(s->memsz > s->filesz, "busybox's data segment has bss");
	/* Debian 12 busybox-static 1.35: LOAD 0x1da708 0x5db708 filesz
	 * 0x9008 memsz 0x10450 RW -> three ops. */
	if (s->vaddr == 0x5db708 && s->filesz == 0x9008 &&
	    s->memsz == 0x10450) {
		cr_assert_eq(n, 3 * 1 + 3);
		assert_op(&ops[3], ELF_MAP_FILE, 0x5db000, 0xa000, 0x1da000,
			  PROT_READ | PROT_WRITE);
		assert_op(&ops[4], ELF_ZERO, 0x5e4710, 0x8f0, 0,
			  PROT_READ | PROT_WRITE);
		assert_op(&ops[5], ELF_MAP_ANON, 0x5e5000, 0x7000, 0,
			  PROT_READ | PROT_WRITE);
	}
}
