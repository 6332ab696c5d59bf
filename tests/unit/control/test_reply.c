/* tests/unit/control/test_reply.c: control socket answers (prot/control.c)
 * and the client that reads them (control_read_reply, sentry/control.c):
 * a cut-off or malformed answer is an error, never data. */
#include <criterion/criterion.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "prot/control.h"
#include "sentry/control.h"

/* Each test's open fds, before and after: the client closes what it
 * opened, however the answer ends. */
static int fds_open(void)
{
	int n = 0;

	for (int fd = 0; fd < 1024; fd++)
		n += fcntl(fd, F_GETFD) >= 0;
	return n;
}

static int fds_before;

static void init(void)
{
	fds_before = fds_open();
}

static void fini(void)
{
	cr_assert_eq(fds_open(), fds_before, "a test leaked an fd");
}

TestSuite(control, .init = init, .fini = fini);

static int parse(const char *s, bool framed, const char **out, size_t *n)
{
	return ctl_reply_parse(s, strlen(s), framed, out, n);
}

static void refused(const char *s, bool framed)
{
	const char *out = NULL;
	size_t n = 0;

	cr_assert_eq(parse(s, framed, &out, &n), -EPROTO, "accepted: `%s`", s);
}

Test(control, lines)
{
	const char *out;
	size_t n;

	cr_assert_eq(parse("ok\n", false, &out, &n), CTL_REPLY_LINE);
	cr_assert_eq(n, 2);
	cr_assert(!memcmp(out, "ok", 2));
	cr_assert_eq(parse("running\n", false, &out, &n), CTL_REPLY_LINE);
	cr_assert_eq(n, 7);
	cr_assert_eq(parse("error: no such process\n", true, &out, &n),
		     CTL_REPLY_LINE);
	cr_assert_eq(n, 22);
}

Test(control, cut_off_or_past_the_end_lines)
{
	refused("", false);
	refused("o", false);	      /* cut off: no '\n' */
	refused("ok", false);	      /* the same */
	refused("ok\nok\n", false);   /* past its end */
	refused("ok\n\n", false);     /* the same */
	refused("error: x", false);   /* cut off */
	refused("running\nx", false); /* past its end */
	cr_assert_eq(ctl_reply_parse("ok\0x\n", 5, false, &(const char *){ 0 },
				     &(size_t){ 0 }),
		     -EPROTO, "a NUL inside a line");
}

Test(control, a_long_line_is_no_answer)
{
	static char big[CTL_LINE_MAX + 2];

	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 2] = '\n';
	big[sizeof(big) - 1] = 0;
	refused(big, false);
	big[CTL_LINE_MAX - 1] = '\n';
	big[CTL_LINE_MAX] = 0;
	cr_assert_eq(parse(big, false, &(const char *){ 0 }, &(size_t){ 0 }),
		     CTL_REPLY_LINE, "CTL_LINE_MAX bytes is one");
}

Test(control, bodies)
{
	const char *out;
	size_t n;

	cr_assert_eq(parse("ok 0\n", true, &out, &n), CTL_REPLY_BODY);
	cr_assert_eq(n, 0);
	cr_assert_eq(parse("ok 9\n1 1 init\n", true, &out, &n), CTL_REPLY_BODY);
	cr_assert_eq(n, 9);
	cr_assert(!memcmp(out, "1 1 init\n", 9));
	/* a body's bytes are anything, NULs and newlines too */
	cr_assert_eq(ctl_reply_parse("ok 3\n\n\0\n", 8, true, &out, &n),
		     CTL_REPLY_BODY);
	cr_assert_eq(n, 3);
}

Test(control, cut_off_or_malformed_bodies)
{
	refused("ok 10\n1 1 init\n", true);	    /* cut off */
	refused("ok 8\n1 1 init\n", true);	    /* past its end */
	refused("ok 9\n1 1 init\n\n", true);	    /* the same */
	refused("ok 9", true);			    /* the header cut off */
	refused("ok\n", true);			    /* no length */
	refused("ok \n", true);			    /* the same */
	refused("ok -1\n", true);		    /* no sign */
	refused("ok +9\n1 1 init\n", true);	    /* the same */
	refused("ok 09\n1 1 init\n", true);	    /* no leading zero */
	refused("ok 0x9\n1 1 init\n", true);	    /* decimal only */
	refused("ok 9 \n1 1 init\n", true);	    /* nothing after it */
	refused("ok 99999999999999999999\n", true); /* overflow */
	refused("ok 67108865\n", true);		    /* over CTL_BODY_MAX */
	refused("1 1 init\n2 2 kthreadd\n", true);  /* unframed: the old form */
	refused("running\n", true);		    /* a line, not an error */
	refused("error: x\nmore", true);	    /* past its end */
	refused("error:\n", true);
	refused("ok 9\n1 1 init\n", false); /* a body where a line is due */
}

static long ps(const char *s, struct ctl_ps_entry *e, size_t max)
{
	return ctl_ps_parse(s, strlen(s), e, max);
}

Test(control, ps_lines)
{
	struct ctl_ps_entry e[3];

	cr_assert_eq(ps("", e, 3), 0);
	cr_assert_eq(ps("123 1 sh\n4194304 7 longprocessname\n", e, 3), 2);
	cr_assert_eq(e[0].host_pid, 123);
	cr_assert_eq(e[0].guest_pid, 1);
	cr_assert_str_eq(e[0].comm, "sh");
	cr_assert_eq(e[1].host_pid, 4194304);
	cr_assert_str_eq(e[1].comm, "longprocessname");
	cr_assert_eq(ps("1 1 a\n2 2 b\n3 3 c\n", NULL, 0), 3, "counted");
	cr_assert_eq(ps("1 1 a\n2 2 b\n3 3 c\n", e, 2), -EPROTO,
		     "more than max");
}

Test(control, malformed_ps_lines)
{
	static const char *const bad[] = {
		"1 1 init",	   /* cut off */
		"1 1\n",	   /* no command */
		"1\n",		   /* a pid alone, as a cut-off line was */
		"1 1 \n",	   /* an empty command */
		"0 1 sh\n",	   /* no pid 0 */
		"1 0 sh\n",	   /* nor guest pid 0 */
		"4194305 1 sh\n",  /* past pid_max's limit */
		"-1 1 sh\n",	   /* no sign */
		"01 1 sh\n",	   /* no leading zero */
		"1  1 sh\n",	   /* one space */
		"1 1 two words\n", /* one word */
		"1 1 sixteen-bytes-xx\n", /* 15 bytes at most */
		"1 1 tab\there\n",	  /* printable */
		"1 1 \x7f\n",
		"1 1 sh\n\n", /* an empty line */
		"1 1 sh\nx\n",
		"99999999999999999999 1 sh\n",
	};
	struct ctl_ps_entry e[4];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cr_assert_eq(ps(bad[i], e, 4), -EPROTO, "accepted: `%s`",
			     bad[i]);
		cr_assert_eq(ps(bad[i], NULL, 0), -EPROTO, "counted: `%s`",
			     bad[i]);
	}
}

Test(control, word_uint)
{
	unsigned long v;

	cr_assert_eq(ctl_word_uint("ok 12", 5, "ok", 100, &v), 0);
	cr_assert_eq(v, 12);
	cr_assert_eq(ctl_word_uint("exit 0", 6, "exit", 0xffff, &v), 0);
	cr_assert_eq(v, 0);
	cr_assert_eq(ctl_word_uint("ok 1", 3, "ok", 100, &v), -EPROTO,
		     "cut off");
	cr_assert_eq(ctl_word_uint("ok 101", 6, "ok", 100, &v), -EPROTO);
	cr_assert_eq(ctl_word_uint("ok", 2, "ok", 100, &v), -EPROTO);
	cr_assert_eq(ctl_word_uint("ok  1", 5, "ok", 100, &v), -EPROTO);
	cr_assert_eq(ctl_word_uint("ok 1x", 5, "ok", 100, &v), -EPROTO);
	cr_assert_eq(ctl_word_uint("ko 1", 4, "ok", 100, &v), -EPROTO);
	cr_assert_eq(ctl_word_uint("exit -1", 7, "exit", 0xffff, &v), -EPROTO);
}

/* control_read_reply over a socket: what the peer sent, then its end. */
static ssize_t read_after(const char *sent, size_t len, bool framed, char **out)
{
	int sv[2];
	ssize_t r;

	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	cr_assert_eq(write(sv[1], sent, len), (ssize_t)len);
	close(sv[1]);
	r = control_read_reply(sv[0], framed, out, 5000);
	close(sv[0]);
	return r;
}

Test(control, read_reply)
{
	char *out = NULL;

	cr_assert_eq(read_after("ok\n", 3, false, &out), 2);
	cr_assert_str_eq(out, "ok");
	free(out);
	cr_assert_eq(read_after("ok 5\nabcd\n", 10, true, &out), 5);
	cr_assert_str_eq(out, "abcd\n");
	free(out);
	cr_assert_eq(read_after("o", 1, false, &out), -EPROTO);
	cr_assert_null(out);
	cr_assert_eq(read_after("ok 6\nabcd\n", 10, true, &out), -EPROTO);
	cr_assert_null(out);
	cr_assert_eq(read_after("", 0, false, &out), -ETIMEDOUT, "none");
}

Test(control, read_reply_of_a_long_body)
{
	/* past any one read or buffer size of the client's */
	size_t body = 300000, head;
	char *msg = malloc(body + 32), *out = NULL;
	int sv[2];
	pid_t pid;

	cr_assert_not_null(msg);
	head = ctl_body_head(msg, 32, body);
	memset(msg + head, 'x', body);
	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	pid = fork();
	if (pid == 0) {
		close(sv[0]);
		_exit(write(sv[1], msg, head + body) == (ssize_t)(head + body) ?
			      0 :
			      1);
	}
	close(sv[1]);
	cr_assert_eq(control_read_reply(sv[0], true, &out, 5000),
		     (ssize_t)body);
	close(sv[0]);
	waitpid(pid, NULL, 0);
	cr_assert_eq(strlen(out), body);
	free(out);
	free(msg);
}

/* fake_sentry: a sentry that sends a byte every so often held the
 * client for as long as it liked (a timeout a read); one that sends
 * more than its header said was read to its end (bloat); a message's
 * escapes reached the terminal. */
Test(control, one_deadline_for_the_whole_reply)
{
	char *out = NULL;
	int sv[2];
	pid_t pid;

	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	pid = fork();
	if (pid == 0) {
		close(sv[0]);
		for (int i = 0; i < 100; i++) {
			if (write(sv[1], "r", 1) != 1)
				_exit(0);
			usleep(50000);
		}
		_exit(0);
	}
	close(sv[1]);
	/* 100 bytes 50 ms apart: 5 s; the deadline is 300 ms */
	cr_assert_eq(control_read_reply(sv[0], false, &out, 300), -EPROTO,
		     "cut off by the deadline");
	cr_assert_null(out);
	close(sv[0]);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

Test(control, no_more_is_read_than_the_header_says)
{
	char *out = NULL;
	int sv[2];
	pid_t pid;

	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	pid = fork();
	if (pid == 0) {
		/* a short body, then more, for good */
		static char more[65536];
		close(sv[0]);
		memset(more, 'x', sizeof(more));
		if (write(sv[1], "ok 3\nab\n", 8) != 8)
			_exit(1);
		while (write(sv[1], more, sizeof(more)) > 0)
			;
		_exit(0);
	}
	close(sv[1]);
	cr_assert_eq(control_read_reply(sv[0], true, &out, 5000), -EPROTO);
	close(sv[0]);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	/* a line, then more */
	cr_assert_eq(read_after("ok\nok\n", 6, false, &out), -EPROTO);
	cr_assert_eq(read_after("running\nx", 9, false, &out), -EPROTO);
}

Test(control, a_message_drives_no_terminal)
{
	char *out = NULL;
	const char msg[] = "error: \033[2J\033]0;owned\007 x\177\n";

	cr_assert_eq(read_after(msg, sizeof(msg) - 1, false, &out),
		     (ssize_t)sizeof(msg) - 2);
	cr_assert_str_eq(out, "error: ?[2J?]0;owned? x?");
	free(out);
	/* a body is data, as it came */
	cr_assert_eq(read_after("ok 2\n\033\n", 7, true, &out), 2);
	cr_assert_str_eq(out, "\033\n");
	free(out);
}
