/* shebang_parse(): Linux 6.x fs/binfmt_script.c semantics. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/util.h"
#include "tests/unit/loader/loader_test.h"

TestSuite(shebang, .init = loader_fd_snapshot, .fini = loader_fd_check);

struct sb {
	int r;
	char interp[SHEBANG_BUF_SIZE];
	char arg[SHEBANG_BUF_SIZE];
	int has_arg;
};

static struct sb parse_n(const char *buf, size_t len)
{
	struct sb s;

	memset(&s, 0x7e, sizeof(s));
	s.r = shebang_parse(buf, len, s.interp, sizeof(s.interp), s.arg,
			    sizeof(s.arg), &s.has_arg);
	return s;
}

static struct sb parse(const char *str)
{
	return parse_n(str, strlen(str));
}

static void expect_script(const char *in, const char *interp, const char *arg)
{
	struct sb s = parse(in);

	cr_assert_eq(s.r, 1, "%s: r=%d", in, s.r);
	cr_assert_str_eq(s.interp, interp);
	if (arg) {
		cr_assert_eq(s.has_arg, 1, "%s: no arg", in);
		cr_assert_str_eq(s.arg, arg);
	} else {
		cr_assert_eq(s.has_arg, 0, "%s: arg '%s'", in, s.arg);
	}
}

Test(shebang, plain_sh)
{
	expect_script("#!/bin/sh\necho hi\n", "/bin/sh", NULL);
}

Test(shebang, env_with_args_is_one_arg)
{
	/* Linux passes everything after the interpreter as ONE argument. */
	expect_script("#! /usr/bin/env python3 -u\nprint(1)\n", "/usr/bin/env",
		      "python3 -u");
}

Test(shebang, tabs_and_trailing_blanks)
{
	expect_script("#!\t/bin/bash\t-e \t\n", "/bin/bash", "-e");
	expect_script("#!  /bin/sh   \n", "/bin/sh", NULL);
	expect_script("#!/bin/sh\t  -x   y\t\n", "/bin/sh", "-x   y");
}

Test(shebang, no_newline_short_file)
{
	/* A file shorter than the buffer: the kernel's buffer is NUL-padded,
	 * so the interpreter is terminated by NUL. */
	expect_script("#!/bin/sh", "/bin/sh", NULL);
	expect_script("#!/bin/sh -e", "/bin/sh", "-e");
}

Test(shebang, crlf_keeps_cr)
{
	/* The famous "bad interpreter: /bin/sh^M": Linux keeps the CR. */
	expect_script("#!/bin/sh\r\n", "/bin/sh\r", NULL);
	expect_script("#!/bin/sh -e\r\n", "/bin/sh", "-e\r");
}

Test(shebang, empty_interpreter)
{
	struct sb s;

	s = parse("#!");
	cr_assert_eq(s.r, -ENOEXEC);
	s = parse("#!\n");
	cr_assert_eq(s.r, -ENOEXEC);
	s = parse("#!   \t \n/bin/sh\n");
	cr_assert_eq(s.r, -ENOEXEC);
	s = parse("#!   ");
	cr_assert_eq(s.r, -ENOEXEC);
}

Test(shebang, not_a_script)
{
	cr_assert_eq(parse("\x7f"
			   "ELF\x02\x01\x01")
			     .r,
		     0);
	cr_assert_eq(parse("#/bin/sh\n").r, 0);
	cr_assert_eq(parse("!#/bin/sh\n").r, 0);
	cr_assert_eq(parse("#").r, 0);
	cr_assert_eq(parse("").r, 0);
	cr_assert_eq(parse_n(NULL, 0).r, 0);
}

Test(shebang, long_line_without_newline)
{
	char buf[400];
	struct sb s;

	/* 256 bytes, interpreter never terminated: it may be truncated. */
	memset(buf, 'a', sizeof(buf));
	memcpy(buf, "#!/", 3);
	s = parse_n(buf, SHEBANG_BUF_SIZE);
	cr_assert_eq(s.r, -ENOEXEC);
	s = parse_n(buf, sizeof(buf));
	cr_assert_eq(s.r, -ENOEXEC);

	/* Terminated interpreter, argument cut by the buffer: fine, and
	 * Linux drops the buffer's last byte (it writes the NUL there). */
	memcpy(buf, "#!/bin/sh ", 10);
	s = parse_n(buf, sizeof(buf));
	cr_assert_eq(s.r, 1);
	cr_assert_str_eq(s.interp, "/bin/sh");
	cr_assert(s.has_arg);
	cr_assert_eq(strlen(s.arg), SHEBANG_BUF_SIZE - 10 - 1);

	/* Newline exactly at the last byte of the buffer. */
	memset(buf, 'a', sizeof(buf));
	memcpy(buf, "#!/", 3);
	buf[SHEBANG_BUF_SIZE - 1] = '\n';
	s = parse_n(buf, sizeof(buf));
	cr_assert_eq(s.r, 1);
	cr_assert_eq(strlen(s.interp), SHEBANG_BUF_SIZE - 3);
	cr_assert_not(s.has_arg);

	/* Newline just past the buffer does not count. */
	buf[SHEBANG_BUF_SIZE - 1] = 'a';
	buf[SHEBANG_BUF_SIZE] = '\n';
	cr_assert_eq(parse_n(buf, sizeof(buf)).r, -ENOEXEC);
}

Test(shebang, nul_inside_line)
{
	/* strnchr stops at NUL: the newline after it is not seen, the
	 * interpreter is terminated by the NUL. */
	struct sb s = parse_n("#!/bin/sh\0 -x\n", 14);

	cr_assert_eq(s.r, 1);
	cr_assert_str_eq(s.interp, "/bin/sh");
	cr_assert_not(s.has_arg);
	s = parse_n("#!/bin/sh -a\0b\n", 15);
	cr_assert_eq(s.r, 1);
	cr_assert_str_eq(s.arg, "-a");
}

Test(shebang, caps)
{
	char interp[8], arg[4];
	int has_arg;

	cr_assert_eq(shebang_parse("#!/bin/sh -xe\n", 14, interp,
				   sizeof(interp), arg, sizeof(arg), &has_arg),
		     1);
	cr_assert_str_eq(interp, "/bin/sh");
	cr_assert_str_eq(arg, "-xe");
	cr_assert_eq(shebang_parse("#!/bin/bash\n", 12, interp, sizeof(interp),
				   arg, sizeof(arg), &has_arg),
		     -ENAMETOOLONG);
	cr_assert_eq(shebang_parse("#!/bin/sh -xeu\n", 15, interp,
				   sizeof(interp), arg, sizeof(arg), &has_arg),
		     -ENAMETOOLONG);
	cr_assert_eq(shebang_parse("#!/bin/sh\n", 10, NULL, 0, arg, sizeof(arg),
				   &has_arg),
		     -EINVAL);
}

/* ---- differential: the host kernel's binfmt_script is the oracle ---- */

struct oracle {
	char dir[64];
	char helper[128]; /* prints its argv, NUL-separated */
	char script[128];
};

static int oracle_setup(struct oracle *o)
{
	char src[160], cmd[1024];
	char *out;
	FILE *f;

	snprintf(o->dir, sizeof(o->dir), "/tmp/moat-sb-XXXXXX");
	if (!loader_mkdtemp(o->dir))
		return -1;
	snprintf(src, sizeof(src), "%s/h.c", o->dir);
	snprintf(o->helper, sizeof(o->helper), "%s/h", o->dir);
	snprintf(o->script, sizeof(o->script), "%s/s", o->dir);
	f = fopen(src, "w");
	if (!f)
		return -1;
	fputs("#include <stdio.h>\n"
	      "int main(int c, char **v) {\n"
	      "  for (int i = 0; i < c; i++) fwrite(v[i], 1, __builtin_strlen(v[i]) + 1, stdout);\n"
	      "  return 0; }\n",
	      f);
	fclose(f);
	/* Static when possible: thousands of execs, no ld.so for each. */
	snprintf(
		cmd, sizeof(cmd),
		"(gcc -static -o '%s' '%s' || gcc -o '%s' '%s') >/dev/null 2>&1"
		" && echo ok",
		o->helper, src, o->helper, src);
	out = loader_run(cmd);
	unlink(src);
	if (!out || strncmp(out, "ok", 2) != 0) {
		free(out);
		return -1;
	}
	free(out);
	return 0;
}

/* Exec the script; return -errno of execve, or the argv the interpreter
 * saw (NUL-separated, in out/outlen). */
static int oracle_run(const struct oracle *o, const char *content, size_t len,
		      char *out, size_t outcap, size_t *outlen)
{
	cleanup_close int fd = -1, rfd = -1, wfd = -1;
	int pfd[2], epfd[2], status, err = 0;
	pid_t pid;
	ssize_t n;

	unlink(o->script);
	fd = open(o->script, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0755);
	cr_assert_geq(fd, 0);
	cr_assert_eq(write_all(fd, content, len), (ssize_t)len);
	close(take_fd(&fd));
	cr_assert_eq(pipe2(pfd, O_CLOEXEC), 0);
	rfd = pfd[0];
	wfd = pfd[1];
	/* execve's errno travels back through a CLOEXEC pipe. */
	cr_assert_eq(pipe2(epfd, O_CLOEXEC), 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		char *const argv[] = { "script-argv0", "orig1", NULL };
		char *const envp[] = { NULL };

		dup2(wfd, 1);
		execve(o->script, argv, envp);
		err = errno;
		(void)!write(epfd[1], &err, sizeof(err));
		_exit(127);
	}
	close(epfd[1]);
	close(take_fd(&wfd));
	*outlen = 0;
	while ((n = read(rfd, out + *outlen, outcap - *outlen)) > 0)
		*outlen += (size_t)n;
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	n = read(epfd[0], &err, sizeof(err));
	close(epfd[0]);
	return n == sizeof(err) ? -err : 0;
}

/* Counts of what the kernel did, to prove the oracle was exercised. */
static int n_ran, n_enoexec, n_enoent;

static void compare_with_kernel(const struct oracle *o, const char *content,
				size_t len)
{
	char out[4096];
	size_t outlen;
	struct sb s = parse_n(content, len);
	int kr = oracle_run(o, content, len, out, sizeof(out), &outlen);
	const char *p = out;

	if (s.r == -ENOEXEC) {
		cr_assert_eq(kr, -ENOEXEC, "[%.*s]: kernel said %d, we ENOEXEC",
			     (int)len, content, kr);
		n_enoexec++;
		return;
	}
	cr_assert_eq(s.r, 1);
	if (kr != 0) {
		/* Kernel could not run our interp: it must not exist. */
		cr_assert(access(s.interp, X_OK) != 0,
			  "[%.*s]: kernel %d but %s is runnable", (int)len,
			  content, kr, s.interp);
		n_enoent++;
		return;
	}
	n_ran++;
	/* argv: interp, [arg], script path, "orig1" */
	cr_assert_str_eq(p, s.interp, "[%.*s]", (int)len, content);
	p += strlen(p) + 1;
	if (s.has_arg) {
		cr_assert_str_eq(p, s.arg, "[%.*s]", (int)len, content);
		p += strlen(p) + 1;
	}
	cr_assert_str_eq(p, o->script, "[%.*s]", (int)len, content);
	p += strlen(p) + 1;
	cr_assert_str_eq(p, "orig1");
	cr_assert_eq((size_t)(p + strlen(p) + 1 - out), outlen);
}

#define BYTES(s)                                                               \
	{                                                                      \
		s, sizeof(s) - 1                                               \
	}

Test(shebang, matches_host_kernel, .timeout = 120, .fini = loader_tmp_cleanup)
{
	static const struct {
		const char *s;
		size_t len;
	} tails[] = {
		BYTES("\n"),	      BYTES(""),	 BYTES(" "),
		BYTES("\t"),	      BYTES(" -x\n"),	 BYTES(" -x"),
		BYTES("  a  b \t\n"), BYTES(" a\r\n"),	 BYTES("\r\n"),
		BYTES("\0 -x\n"),     BYTES(" -a\0b\n"), BYTES(" \n"),
		BYTES("\t\t"),	      BYTES(" x y z"),	 BYTES("   \0"),
	};
	static const char *const heads[] = { "#!", "#! \t" };
	struct oracle o;
	char line[1024], interp[400];
	size_t h, t, pad, n, fill;

	if (oracle_setup(&o) != 0)
		cr_skip_test("cannot build the argv-printing helper with gcc");
	/* Interpreter paths of growing length ("////dir/h"), so lines cross
	 * the 256-byte buffer edge at every offset; each line once at the
	 * end of the file and once followed by a long run of text. */
	for (pad = 0; pad < 245; pad++) {
		n = (size_t)snprintf(interp, sizeof(interp), "%*s%s", (int)pad,
				     "", o.helper);
		memset(interp, '/', pad);
		for (h = 0; h < ARRAY_SIZE(heads); h++) {
			size_t hl = strlen(heads[h]);

			for (t = 0; t < ARRAY_SIZE(tails); t++) {
				for (fill = 0; fill <= 300; fill += 300) {
					size_t len = hl + n + tails[t].len;

					memcpy(line, heads[h], hl);
					memcpy(line + hl, interp, n);
					memcpy(line + hl + n, tails[t].s,
					       tails[t].len);
					memset(line + len, 'z', fill);
					compare_with_kernel(&o, line,
							    len + fill);
				}
			}
		}
		/* The helper's path is 21 bytes: lines reach the 256-byte
		 * edge for pad in [213, 239]; elsewhere sample sparsely. */
		if (pad < 208)
			pad += 12;
	}
	cr_assert_gt(n_ran, 100);
	cr_assert_gt(n_enoexec, 10);
	cr_log_info("kernel ran %d, ENOEXEC %d, ENOENT %d", n_ran, n_enoexec,
		    n_enoent);
}
