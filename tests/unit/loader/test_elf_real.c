/* Parse real binaries of the host and compare with what readelf says. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/util.h"
#include "tests/unit/loader/loader_test.h"

TestSuite(elf_real, .init = loader_fd_snapshot, .fini = loader_fd_check);

struct re_load {
	uint64_t off, vaddr, filesz, memsz;
	int prot;
};

struct re_info {
	int type;
	uint64_t entry;
	char interp[4096];
	int has_interp;
	struct re_load loads[32];
	int nloads; /* only those with memsz > 0, like elf_info.segs */
	int has_pt_phdr;
};

static void readelf_info(const char *path, struct re_info *ri)
{
	char cmd[512];
	cleanup_free char *out = NULL;
	char *line, *save = NULL;

	memset(ri, 0, sizeof(*ri));
	snprintf(cmd, sizeof(cmd), "readelf -lhW '%s' 2>/dev/null", path);
	out = loader_run(cmd);
	cr_assert_not_null(out, "readelf failed on %s", path);
	for (line = strtok_r(out, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *p;
		struct re_load l = { 0 };
		int n = 0;

		if (strncmp(line, "  Type:", 7) == 0) {
			ri->type = strstr(line, "EXEC") ? ET_EXEC :
				   strstr(line, "DYN")	? ET_DYN :
							  -1;
		} else if (strncmp(line, "  Entry point address:", 22) == 0) {
			ri->entry = strtoull(strstr(line, "0x"), NULL, 16);
		} else if ((p = strstr(line, "program interpreter: ")) !=
			   NULL) {
			p += strlen("program interpreter: ");
			snprintf(ri->interp, sizeof(ri->interp), "%.*s",
				 (int)strcspn(p, "]"), p);
			ri->has_interp = 1;
		} else if (strncmp(line, "  PHDR ", 7) == 0) {
			ri->has_pt_phdr = 1;
		} else if (strncmp(line, "  LOAD ", 7) == 0) {
			cr_assert_eq(sscanf(line,
					    " LOAD %" SCNx64 " %" SCNx64
					    " %*x %" SCNx64 " %" SCNx64 " %n",
					    &l.off, &l.vaddr, &l.filesz,
					    &l.memsz, &n),
				     4, "bad LOAD line: %s", line);
			/* The flags column is "R E", "RW " etc. */
			for (p = line + n; *p && strncmp(p, "0x", 2); p++) {
				if (*p == 'R')
					l.prot |= PROT_READ;
				if (*p == 'W')
					l.prot |= PROT_WRITE;
				if (*p == 'E')
					l.prot |= PROT_EXEC;
			}
			if (l.memsz) {
				cr_assert_lt(ri->nloads, 32);
				ri->loads[ri->nloads++] = l;
			}
		}
	}
}

static void check_entry_in_exec_seg(const struct elf_info *ei)
{
	int i;

	for (i = 0; i < ei->nsegs; i++) {
		const struct elf_seg *s = &ei->segs[i];

		if (ei->entry >= s->vaddr && ei->entry < s->vaddr + s->memsz) {
			cr_assert(s->prot & PROT_EXEC,
				  "entry %#" PRIx64 " in non-exec segment",
				  ei->entry);
			return;
		}
	}
	cr_assert_fail("entry %#" PRIx64 " in no segment", ei->entry);
}

/* Everything elf_info shares with readelf must agree. */
static void check_against_readelf(const char *path, const struct elf_info *ei)
{
	struct re_info ri;
	int i;

	readelf_info(path, &ri);
	cr_assert_eq(ei->type, ri.type);
	cr_assert_eq(ei->entry, ri.entry);
	cr_assert_eq(ei->has_interp, ri.has_interp);
	if (ri.has_interp)
		cr_assert_str_eq(ei->interp, ri.interp);
	cr_assert_eq(ei->nsegs, ri.nloads);
	for (i = 0; i < ei->nsegs; i++) {
		cr_assert_eq(ei->segs[i].offset, ri.loads[i].off, "seg %d", i);
		cr_assert_eq(ei->segs[i].vaddr, ri.loads[i].vaddr, "seg %d", i);
		cr_assert_eq(ei->segs[i].filesz, ri.loads[i].filesz, "seg %d",
			     i);
		cr_assert_eq(ei->segs[i].memsz, ri.loads[i].memsz, "seg %d", i);
		cr_assert_eq(ei->segs[i].prot, ri.loads[i].prot, "seg %d", i);
	}
	cr_assert_eq(ei->min_vaddr, ri.loads[0].vaddr & ~0xfffULL);
	cr_assert_eq(ei->max_vaddr, (ri.loads[ri.nloads - 1].vaddr +
				     ri.loads[ri.nloads - 1].memsz + 0xfff) &
					    ~0xfffULL);
	check_entry_in_exec_seg(ei);
}

Test(elf_real, bin_true_is_dynamic_pie)
{
	struct elf_info ei;

	cr_assert_eq(loader_parse_path("/bin/true", &ei), 0);
	cr_assert_eq(ei.type, ET_DYN);
	cr_assert(ei.has_interp);
	cr_assert_str_eq(ei.interp, "/lib64/ld-linux-x86-64.so.2");
	/* PT_PHDR at 0x40, right after the ELF header, covered by the
	 * first PT_LOAD. */
	cr_assert_eq(ei.phdr_vaddr, 0x40);
	cr_assert_eq(ei.phentsize, sizeof(Elf64_Phdr));
	cr_assert_eq(ei.min_vaddr, 0);
	cr_assert_eq(ei.exec_stack, 0);
	check_against_readelf("/bin/true", &ei);
}

static const char *ld_so_path(void)
{
	static const char *const cands[] = {
		"/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2",
		"/lib64/ld-linux-x86-64.so.2",
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cands); i++)
		if (access(cands[i], R_OK) == 0)
			return cands[i];
	return NULL;
}

Test(elf_real, ld_so_is_dyn_without_interp)
{
	const char *path = ld_so_path();
	struct elf_info ei;

	if (!path)
		cr_skip_test("no ld-linux-x86-64.so.2 on this host");
	cr_assert_eq(loader_parse_path(path, &ei), 0);
	cr_assert_eq(ei.type, ET_DYN);
	cr_assert_not(ei.has_interp);
	/* ld.so has no PT_PHDR: AT_PHDR comes from the PT_LOAD at 0. */
	cr_assert_eq(ei.phdr_vaddr, ei.phoff);
	check_against_readelf(path, &ei);
}

Test(elf_real, busybox_is_static_exec)
{
	struct elf_info ei;
	uint64_t bias = 1;

	if (access("/bin/busybox", R_OK) != 0)
		cr_skip_test(
			"/bin/busybox missing (apt-get install busybox-static)");
	cr_assert_eq(loader_parse_path("/bin/busybox", &ei), 0);
	cr_assert_eq(ei.type, ET_EXEC);
	cr_assert_not(ei.has_interp);
	cr_assert_eq(ei.min_vaddr, 0x400000);
	cr_assert_eq(ei.phdr_vaddr, 0x400000 + ei.phoff);
	cr_assert_eq(elf_load_bias_hint(&ei, ELF_DYN_BASE_DEFAULT, &bias), 0);
	cr_assert_eq(bias, 0);
	check_against_readelf("/bin/busybox", &ei);
}

Test(elf_real, static_pie_is_dyn_without_interp, .fini = loader_tmp_cleanup)
{
	char dir[] = "/tmp/moat-loader-XXXXXX";
	char src[128], bin[128], cmd[512];
	cleanup_free char *out = NULL;
	struct elf_info ei;
	FILE *f;

	cr_assert_not_null(loader_mkdtemp(dir));
	snprintf(src, sizeof(src), "%s/sp.c", dir);
	snprintf(bin, sizeof(bin), "%s/sp", dir);
	f = fopen(src, "w");
	cr_assert_not_null(f);
	fputs("int main(void) { return 0; }\n", f);
	fclose(f);
	snprintf(cmd, sizeof(cmd),
		 "gcc -static-pie -o '%s' '%s' >/dev/null 2>&1 && echo ok", bin,
		 src);
	out = loader_run(cmd);
	if (!out || strncmp(out, "ok", 2) != 0)
		cr_skip_test(
			"gcc -static-pie does not work here (no static libc?)");
	cr_assert_eq(loader_parse_path(bin, &ei), 0);
	check_against_readelf(bin, &ei);
	cr_assert_eq(ei.type, ET_DYN);
	cr_assert_not(ei.has_interp);
	cr_assert_eq(ei.min_vaddr, 0);
}

/* What readelf says about whether a file is runnable at all. */
static int readelf_runnable(const struct re_info *ri)
{
	int i;

	if (ri->type != ET_EXEC && ri->type != ET_DYN)
		return 0;
	for (i = 0; i < ri->nloads; i++)
		if ((ri->loads[i].prot & PROT_EXEC) &&
		    ri->entry >= ri->loads[i].vaddr &&
		    ri->entry < ri->loads[i].vaddr + ri->loads[i].memsz)
			return 1;
	return 0; /* e.g. a plain shared library with e_entry 0 */
}

/* No false rejections: every runnable x86_64 ELF in dirpath must parse.
 * Returns the first failure (or ""), so the DIR is closed before any
 * assertion aborts the test. */
static void sweep(const char *dirpath, int *nparsed, char *fail, size_t failsz)
{
	DIR *d = opendir(dirpath);
	struct dirent *e;

	if (!d)
		return;
	while (!fail[0] && (e = readdir(d)) != NULL) {
		char path[4096];
		unsigned char ident[EI_NIDENT];
		struct elf_info ei;
		struct re_info ri;
		struct stat st;
		int fd, r;
		ssize_t n;

		snprintf(path, sizeof(path), "%s/%s", dirpath, e->d_name);
		if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
			continue;
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		n = pread(fd, ident, sizeof(ident), 0);
		close(fd);
		if (n != sizeof(ident) || memcmp(ident, ELFMAG, SELFMAG) != 0 ||
		    ident[EI_CLASS] != ELFCLASS64)
			continue;
		r = loader_parse_path(path, &ei);
		if (r == 0) {
			(*nparsed)++;
			continue;
		}
		readelf_info(path, &ri);
		if (r != -ENOEXEC || readelf_runnable(&ri))
			snprintf(fail, failsz, "%s: %s", path, strerror(-r));
	}
	closedir(d);
}

Test(elf_real, no_false_rejections_in_usr_bin, .timeout = 120)
{
	char fail[4200] = "";
	int n = 0;

	sweep("/usr/bin", &n, fail, sizeof(fail));
	sweep("/usr/lib/x86_64-linux-gnu", &n, fail, sizeof(fail));
	sweep("/usr/sbin", &n, fail, sizeof(fail));
	cr_assert_eq(fail[0], '\0', "wrongly rejected: %s", fail);
	cr_assert_gt(n, 50, "only %d ELF files parsed", n);
}
