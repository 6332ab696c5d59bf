/* elf_parse() on a hand-made header, then one mutation per rejection rule. */
#include <criterion/criterion.h>
#include <string.h>
#include <sys/mman.h>

#include "tests/unit/loader/loader_test.h"

TestSuite(elf_hostile, .init = loader_fd_snapshot, .fini = loader_fd_check);

static struct synth S;

static void expect(int want)
{
	struct elf_info ei;
	int r = synth_parse(&S, &ei);

	cr_assert_eq(r, want, "elf_parse returned %d (%s), want %d", r,
		     strerror(-r), want);
}

#define REJECTED() expect(-ENOEXEC)

/* The indexes of synth_init()'s phdrs. */
enum {
	PH_PHDR,
	PH_INTERP,
	PH_LOAD_R,
	PH_LOAD_RX,
	PH_LOAD_RW,
	PH_STACK
};

Test(elf_hostile, baseline_parses)
{
	struct elf_info ei;

	synth_init(&S);
	cr_assert_eq(synth_parse(&S, &ei), 0);
	cr_assert_eq(ei.type, ET_DYN);
	cr_assert_eq(ei.entry, 0x1100);
	cr_assert_eq(ei.nsegs, 3);
	cr_assert_eq(ei.segs[0].prot, PROT_READ);
	cr_assert_eq(ei.segs[1].prot, PROT_READ | PROT_EXEC);
	cr_assert_eq(ei.segs[2].prot, PROT_READ | PROT_WRITE);
	cr_assert_eq(ei.segs[2].vaddr, 0x3e00);
	cr_assert_eq(ei.segs[2].filesz, 0x300);
	cr_assert_eq(ei.segs[2].memsz, 0x2400);
	cr_assert_eq(ei.segs[2].offset, 0x2e00);
	cr_assert_eq(ei.min_vaddr, 0);
	cr_assert_eq(ei.max_vaddr, 0x7000);
	cr_assert_eq(ei.phdr_vaddr, 0x40);
	cr_assert_eq(ei.phnum, SYNTH_PHNUM);
	cr_assert_eq(ei.max_align, 0x1000);
	cr_assert(ei.has_interp);
	cr_assert_str_eq(ei.interp, SYNTH_INTERP);
	cr_assert_eq(ei.exec_stack, 0);
}

/* ---- ELF header ---- */

Test(elf_hostile, file_shorter_than_ehdr)
{
	synth_init(&S);
	S.size = sizeof(Elf64_Ehdr) - 1;
	REJECTED();
}

Test(elf_hostile, bad_magic)
{
	synth_init(&S);
	S.eh->e_ident[EI_MAG1] = 'X';
	REJECTED();
}

Test(elf_hostile, elfclass32)
{
	synth_init(&S);
	S.eh->e_ident[EI_CLASS] = ELFCLASS32;
	REJECTED();
}

Test(elf_hostile, big_endian)
{
	synth_init(&S);
	S.eh->e_ident[EI_DATA] = ELFDATA2MSB;
	REJECTED();
}

Test(elf_hostile, bad_ident_version)
{
	synth_init(&S);
	S.eh->e_ident[EI_VERSION] = 2;
	REJECTED();
}

Test(elf_hostile, foreign_osabi)
{
	synth_init(&S);
	S.eh->e_ident[EI_OSABI] = ELFOSABI_FREEBSD;
	REJECTED();
}

Test(elf_hostile, gnu_osabi_accepted)
{
	synth_init(&S);
	S.eh->e_ident[EI_OSABI] = ELFOSABI_GNU;
	expect(0);
}

Test(elf_hostile, relocatable_object)
{
	synth_init(&S);
	S.eh->e_type = ET_REL;
	REJECTED();
}

Test(elf_hostile, core_file)
{
	synth_init(&S);
	S.eh->e_type = ET_CORE;
	REJECTED();
}

Test(elf_hostile, wrong_machine)
{
	synth_init(&S);
	S.eh->e_machine = EM_AARCH64;
	REJECTED();
	S.eh->e_machine = EM_386;
	REJECTED();
}

Test(elf_hostile, bad_e_version)
{
	synth_init(&S);
	S.eh->e_version = 0;
	REJECTED();
}

Test(elf_hostile, phentsize_not_sizeof_phdr)
{
	synth_init(&S);
	S.eh->e_phentsize = sizeof(Elf64_Phdr) + 8;
	REJECTED();
	S.eh->e_phentsize = 32; /* Elf32_Phdr */
	REJECTED();
}

Test(elf_hostile, phnum_zero)
{
	synth_init(&S);
	S.eh->e_phnum = 0;
	REJECTED();
}

Test(elf_hostile, phnum_too_large)
{
	synth_init(&S);
	S.size = SYNTH_BUF_SIZE; /* so the table itself is inside the file */
	S.eh->e_phnum = ELF_MAX_PHNUM + 1;
	REJECTED();
	S.eh->e_phnum = PN_XNUM;
	REJECTED();
}

Test(elf_hostile, phnum_max_accepted)
{
	struct elf_info ei;

	synth_init(&S);
	/* 128 entries, 0x40..0x1c40: the extra ones are PT_NULL and cover
	 * the interp string, so drop PT_INTERP and PT_PHDR, and make one RX
	 * load of the first page. */
	S.eh->e_phnum = ELF_MAX_PHNUM;
	memset((uint8_t *)&S.ph[SYNTH_PHNUM], 0,
	       (ELF_MAX_PHNUM - SYNTH_PHNUM) * sizeof(Elf64_Phdr));
	S.ph[PH_INTERP].p_type = PT_NULL;
	S.ph[PH_PHDR].p_type = PT_NULL;
	S.ph[PH_LOAD_RX].p_type = PT_NULL;
	S.ph[PH_LOAD_R].p_filesz = S.ph[PH_LOAD_R].p_memsz = 0x1000;
	S.ph[PH_LOAD_R].p_flags = PF_R | PF_X;
	S.eh->e_entry = 0x100;
	cr_assert_eq(synth_parse(&S, &ei), 0);
	cr_assert_eq(ei.nsegs, 2);
	/* The table ends past the load's file bytes: no AT_PHDR. */
	cr_assert_eq(ei.phdr_vaddr, 0);
}

Test(elf_hostile, phdrs_outside_file)
{
	synth_init(&S);
	S.eh->e_phoff = S.size - 100;
	REJECTED();
	S.eh->e_phoff = S.size;
	REJECTED();
}

Test(elf_hostile, phoff_overflow)
{
	synth_init(&S);
	S.eh->e_phoff = UINT64_MAX - 8;
	REJECTED();
}

/* ---- PT_LOAD ---- */

Test(elf_hostile, filesz_greater_than_memsz)
{
	synth_init(&S);
	S.ph[PH_LOAD_RW].p_filesz = S.ph[PH_LOAD_RW].p_memsz + 1;
	REJECTED();
}

Test(elf_hostile, file_range_beyond_file_size)
{
	synth_init(&S);
	S.ph[PH_LOAD_RW].p_filesz += 1; /* 0x2e00 + 0x301 > 0x3100 */
	REJECTED();
}

Test(elf_hostile, file_range_exactly_at_eof_ok)
{
	synth_init(&S);
	S.size = 0x3100; /* ends exactly where the RW file range ends */
	expect(0);
}

Test(elf_hostile, file_range_overflow)
{
	synth_init(&S);
	S.ph[PH_LOAD_RW].p_offset = UINT64_MAX - 0xff; /* page offset 0xf00 */
	S.ph[PH_LOAD_RW].p_vaddr = 0x3f00;
	REJECTED();
}

Test(elf_hostile, vaddr_memsz_overflow)
{
	synth_init(&S);
	S.ph[PH_LOAD_RW].p_vaddr = UINT64_MAX - 0x11ff; /* page off 0xe00 */
	REJECTED();
}

Test(elf_hostile, vaddr_beyond_user_space)
{
	synth_init(&S);
	/* Ends one byte past the top of user space. */
	S.ph[PH_LOAD_RW].p_vaddr = (ELF_TASK_SIZE - 0x2000) | 0xe00;
	S.ph[PH_LOAD_RW].p_memsz = ELF_TASK_SIZE - S.ph[PH_LOAD_RW].p_vaddr + 1;
	S.eh->e_type = ET_EXEC; /* keep the ET_DYN span rule out of it */
	REJECTED();
	/* Ending exactly at the top is fine. */
	S.ph[PH_LOAD_RW].p_memsz -= 1;
	expect(0);
}

Test(elf_hostile, offset_vaddr_not_congruent)
{
	synth_init(&S);
	S.ph[PH_LOAD_RW].p_vaddr += 8;
	REJECTED();
}

Test(elf_hostile, overlapping_loads)
{
	synth_init(&S);
	/* RX [0x1000, 0x1800) and R grown to [0, 0x1001). */
	S.ph[PH_LOAD_R].p_memsz = 0x1001;
	REJECTED();
}

Test(elf_hostile, shared_page_not_overlap_ok)
{
	synth_init(&S);
	/* RX moved into the R load's last page, after its end: Linux
	 * accepts this and so do we. */
	S.ph[PH_LOAD_RX].p_offset = 0x800;
	S.ph[PH_LOAD_RX].p_vaddr = 0x800;
	S.eh->e_entry = 0x900;
	expect(0);
}

Test(elf_hostile, unsorted_loads)
{
	Elf64_Phdr tmp;

	synth_init(&S);
	tmp = S.ph[PH_LOAD_R];
	S.ph[PH_LOAD_R] = S.ph[PH_LOAD_RX];
	S.ph[PH_LOAD_RX] = tmp;
	REJECTED();
}

static void many_loads(int n)
{
	int i;

	synth_init(&S);
	S.eh->e_phnum = (uint16_t)n;
	S.eh->e_entry = 0x10;
	for (i = 0; i < n; i++) {
		S.ph[i] = (Elf64_Phdr){
			.p_type = PT_LOAD,
			.p_flags = PF_R | PF_X,
			.p_offset = 0,
			.p_vaddr = (uint64_t)i * 0x1000,
			.p_filesz = 0x100,
			.p_memsz = 0x200,
			.p_align = 0x1000,
		};
	}
}

Test(elf_hostile, too_many_loads)
{
	many_loads(ELF_MAX_SEGS + 1);
	REJECTED();
}

Test(elf_hostile, max_loads_accepted)
{
	struct elf_info ei;

	many_loads(ELF_MAX_SEGS);
	cr_assert_eq(synth_parse(&S, &ei), 0);
	cr_assert_eq(ei.nsegs, ELF_MAX_SEGS);
	cr_assert_eq(ei.has_interp, 0);
}

Test(elf_hostile, empty_loads_not_counted)
{
	struct elf_info ei;

	many_loads(ELF_MAX_SEGS + 2);
	S.ph[3].p_filesz = S.ph[3].p_memsz = 0;
	S.ph[7].p_filesz = S.ph[7].p_memsz = 0;
	cr_assert_eq(synth_parse(&S, &ei), 0);
	cr_assert_eq(ei.nsegs, ELF_MAX_SEGS);
}

Test(elf_hostile, no_loads)
{
	synth_init(&S);
	S.ph[PH_LOAD_R].p_type = PT_NULL;
	S.ph[PH_LOAD_RX].p_type = PT_NOTE;
	S.ph[PH_LOAD_RW].p_type = PT_DYNAMIC;
	REJECTED();
}

Test(elf_hostile, only_empty_loads)
{
	synth_init(&S);
	S.ph[PH_LOAD_R].p_filesz = S.ph[PH_LOAD_R].p_memsz = 0;
	S.ph[PH_LOAD_RX].p_filesz = S.ph[PH_LOAD_RX].p_memsz = 0;
	S.ph[PH_LOAD_RW].p_filesz = S.ph[PH_LOAD_RW].p_memsz = 0;
	REJECTED();
}

Test(elf_hostile, dyn_span_over_1tib)
{
	synth_init(&S);
	/* Move the RW load 1 TiB up (same page offset). */
	S.ph[PH_LOAD_RW].p_vaddr += ELF_MAX_DYN_SPAN;
	REJECTED();
	/* The same layout is fine for ET_EXEC: nothing is relocated. */
	S.eh->e_type = ET_EXEC;
	expect(0);
}

Test(elf_hostile, entry_outside_every_load)
{
	synth_init(&S);
	S.eh->e_entry = 0x2000; /* the hole between RX and RW */
	REJECTED();
	S.eh->e_entry = 0x1800; /* one past the RX load */
	REJECTED();
	S.eh->e_entry = UINT64_MAX;
	REJECTED();
}

Test(elf_hostile, entry_in_non_exec_load)
{
	synth_init(&S);
	S.eh->e_entry = 0x3f00; /* the RW load */
	REJECTED();
	S.eh->e_entry = 0x10; /* the R load */
	REJECTED();
}

/* ---- PT_INTERP ---- */

Test(elf_hostile, interp_not_nul_terminated)
{
	synth_init(&S);
	S.ph[PH_INTERP].p_filesz -= 1;
	REJECTED();
}

Test(elf_hostile, interp_empty)
{
	synth_init(&S);
	S.ph[PH_INTERP].p_filesz = 1; /* just the NUL */
	S.buf[SYNTH_INTERP_OFF] = '\0';
	REJECTED();
	S.ph[PH_INTERP].p_filesz = 0;
	REJECTED();
}

Test(elf_hostile, interp_embedded_nul)
{
	synth_init(&S);
	S.buf[SYNTH_INTERP_OFF + 6] = '\0'; /* "/lib64" + NUL + "/ld-..." */
	REJECTED();
}

Test(elf_hostile, interp_too_long)
{
	synth_init(&S);
	S.size = SYNTH_BUF_SIZE;
	memset(S.buf + 0x1000, 'a', 4096);
	S.buf[0x1000] = '/';
	S.ph[PH_INTERP].p_offset = 0x1000;
	S.ph[PH_INTERP].p_filesz = 4097; /* 4096 chars + NUL */
	S.buf[0x1000 + 4096] = '\0';
	REJECTED();
	/* 4095 chars + NUL is the longest accepted path. */
	S.buf[0x1000 + 4095] = '\0';
	S.ph[PH_INTERP].p_filesz = 4096;
	expect(0);
}

Test(elf_hostile, interp_outside_file)
{
	synth_init(&S);
	S.ph[PH_INTERP].p_offset = S.size - 4;
	REJECTED();
	S.ph[PH_INTERP].p_offset = UINT64_MAX - 4;
	REJECTED();
}

Test(elf_hostile, two_interps)
{
	synth_init(&S);
	S.ph[PH_STACK] = S.ph[PH_INTERP];
	REJECTED();
}

/* ---- other headers ---- */

Test(elf_hostile, exec_stack_flag)
{
	struct elf_info ei;

	synth_init(&S);
	S.ph[PH_STACK].p_flags |= PF_X;
	cr_assert_eq(synth_parse(&S, &ei), 0);
	cr_assert_eq(ei.exec_stack, 1);
	/* No PT_GNU_STACK: non-executable, as on x86_64 Linux. */
	S.ph[PH_STACK].p_type = PT_NULL;
	cr_assert_eq(synth_parse(&S, &ei), 0);
	cr_assert_eq(ei.exec_stack, 0);
}

Test(elf_hostile, phdr_vaddr_from_pt_phdr_when_no_load_covers_it)
{
	struct elf_info ei;

	synth_init(&S);
	/* The table sits in the file before the first load's file range
	 * ... impossible here since load R starts at 0; so shrink R's file
	 * part to end before the table and let PT_PHDR speak. */
	S.ph[PH_LOAD_R].p_filesz = 0x20;
	cr_assert_eq(synth_parse(&S, &ei), 0);
	cr_assert_eq(ei.phdr_vaddr, 0x40); /* PT_PHDR, inside R's memsz */
	/* PT_PHDR pointing outside every load is ignored. */
	S.ph[PH_PHDR].p_vaddr = 0x2000;
	cr_assert_eq(synth_parse(&S, &ei), 0);
	cr_assert_eq(ei.phdr_vaddr, 0);
}

Test(elf_hostile, p_align_used_only_if_power_of_two)
{
	struct elf_info ei;

	synth_init(&S);
	S.ph[PH_LOAD_RX].p_align = 0x200000;
	cr_assert_eq(synth_parse(&S, &ei), 0);
	cr_assert_eq(ei.max_align, 0x200000);
	S.ph[PH_LOAD_RX].p_align = 0x300000;
	cr_assert_eq(synth_parse(&S, &ei), 0);
	cr_assert_eq(ei.max_align, 0x1000);
	S.ph[PH_LOAD_RX].p_align = 1ULL << 63;
	cr_assert_eq(synth_parse(&S, &ei), 0);
	cr_assert_eq(ei.max_align, 0x1000);
}

/* ---- the read callback ---- */

Test(elf_hostile, read_error_propagates)
{
	struct loader_mem m = { .data = S.buf,
				.size = SYNTH_BUF_SIZE,
				.fail_errno = EIO };
	struct elf_info ei;

	synth_init(&S);
	cr_assert_eq(elf_parse(loader_read_mem, &m, S.size, &ei), -EIO);
	m.fail_errno = ENOMEM;
	cr_assert_eq(elf_parse(loader_read_mem, &m, S.size, &ei), -ENOMEM);
}

Test(elf_hostile, short_read_is_eio)
{
	struct loader_mem m = { .data = S.buf,
				.size = SYNTH_BUF_SIZE,
				.short_by = 1 };
	struct elf_info ei;

	synth_init(&S);
	cr_assert_eq(elf_parse(loader_read_mem, &m, S.size, &ei), -EIO);
}

Test(elf_hostile, file_size_lies)
{
	struct loader_mem m = { .data = S.buf, .size = 0x200 };
	struct elf_info ei;

	/* file_size says 0x3100 but the file ends at 0x200: the interp
	 * read comes back short. */
	synth_init(&S);
	cr_assert_eq(elf_parse(loader_read_mem, &m, S.size, &ei), -EIO);
}

Test(elf_hostile, null_arguments)
{
	struct elf_info ei;

	cr_assert_eq(elf_parse(NULL, NULL, 100, &ei), -EINVAL);
	cr_assert_eq(elf_parse(loader_read_mem, NULL, 100, NULL), -EINVAL);
}
