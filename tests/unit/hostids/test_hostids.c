/* tests/unit/hostids/test_hostids.c: moat's range in /etc/subuid-style
 * text (sentry/hostids.c). */
#include <criterion/criterion.h>

#include <errno.h>
#include <string.h>

#include "sentry/hostids.h"

#define DEF_START HOSTIDS_DEFAULT_START
#define DEF_COUNT HOSTIDS_DEFAULT_COUNT

static int range(const char *text, uint32_t *s, uint32_t *c,
		 struct moat_error *err)
{
	*s = *c = 0;
	return hostids_range(text, "subuid", DEF_START, DEF_COUNT, s, c, err);
}

Test(hostids, default_without_an_entry)
{
	struct moat_error err = { 0 };
	uint32_t s, c;

	cr_assert_eq(range("", &s, &c, &err), 0, "%s", err.msg);
	cr_assert_eq(s, DEF_START);
	cr_assert_eq(c, DEF_COUNT);
	cr_assert_eq(range("# comment\n\nalice:100000:65536\n", &s, &c, &err),
		     0, "%s", err.msg);
	cr_assert_eq(s, DEF_START);
}

Test(hostids, the_moat_entry_wins)
{
	struct moat_error err = { 0 };
	uint32_t s, c;

	cr_assert_eq(range("alice:100000:65536\nmoat:300000:1000\n"
			   "moat:400000:10\n",
			   &s, &c, &err),
		     0, "%s", err.msg);
	cr_assert_eq(s, 300000);
	cr_assert_eq(c, 1000);
	/* no final newline */
	cr_assert_eq(range("moat:300000:2", &s, &c, &err), 0, "%s", err.msg);
	cr_assert_eq(c, 2);
}

Test(hostids, malformed_moat_entries_are_refused)
{
	static const char *const bad[] = {
		"moat:300000\n",	  "moat::10\n",
		"moat:300000:\n",	  "moat:-1:10\n",
		"moat:30x000:10\n",	  "moat:4294967296:1\n",
		"moat:300000:10:extra\n", "moat:300000:99999999999\n",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct moat_error err = { 0 };
		uint32_t s, c;

		cr_assert_lt(range(bad[i], &s, &c, &err), 0, "%s", bad[i]);
		cr_assert_eq(err.code, EINVAL, "%s", bad[i]);
	}
}

Test(hostids, ranges_that_hold_special_ids_are_refused)
{
	static const char *const bad[] = {
		"moat:0:100\n",	       /* root */
		"moat:65000:1000\n",   /* nobody */
		"moat:4294967290:6\n", /* -1 */
		"moat:300000:1\n",     /* no room for two */
		"moat:300000:0\n",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct moat_error err = { 0 };
		uint32_t s, c;

		cr_assert_lt(range(bad[i], &s, &c, &err), 0, "%s", bad[i]);
	}
}

Test(hostids, overlap_with_another_entry_is_refused)
{
	struct moat_error err = { 0 };
	uint32_t s, c;

	cr_assert_lt(range("alice:299000:2000\nmoat:300000:1000\n", &s, &c,
			   &err),
		     0);
	cr_assert_eq(err.code, EEXIST);
	cr_assert(strstr(err.msg, "alice"), "%s", err.msg);
	/* the default range too */
	cr_assert_lt(range("bob:2013200000:100000\n", &s, &c, &err), 0);
	/* touching is not overlapping */
	cr_assert_eq(range("alice:299000:1000\nmoat:300000:1000\n"
			   "bob:301000:5\n",
			   &s, &c, &err),
		     0, "%s", err.msg);
}

/* /proc/PID/status as Linux writes it (the lines slot_busy reads). */
static const char status[] = "Name:\tsleep\nUmask:\t0022\nState:\tS "
			     "(sleeping)\nTgid:\t42\nPid:\t42\nPPid:\t1\n"
			     "TracerPid:\t0\n"
			     "Uid:\t1000\t2000\t3000\t4000\n"
			     "Gid:\t5000\t6000\t7000\t8000\n"
			     "FDSize:\t64\nGroups:\t9000\n";

Test(hostids, a_process_using_any_of_the_ids_is_seen)
{
	/* each of the four uids, and of the four gids */
	cr_assert(hostids_status_uses(status, 1000, 1, 1, 1));
	cr_assert(hostids_status_uses(status, 1, 2000, 1, 1));
	cr_assert(hostids_status_uses(status, 3000, 1, 1, 1));
	cr_assert(hostids_status_uses(status, 1, 4000, 1, 1));
	cr_assert(hostids_status_uses(status, 1, 1, 5000, 1));
	cr_assert(hostids_status_uses(status, 1, 1, 1, 8000));
	/* none: not a number that only shares digits, nor the pid, nor a
	 * supplementary group */
	cr_assert_not(hostids_status_uses(status, 100, 42, 9000, 700));
}

Test(hostids, a_zombie_uses_no_ids)
{
	static const char zombie[] = "Name:\tsleep\nState:\tZ (zombie)\n"
				     "Uid:\t1000\t1000\t1000\t1000\n"
				     "Gid:\t5000\t5000\t5000\t5000\n";
	static const char dead[] = "Name:\tsleep\nState:\tX (dead)\n"
				   "Uid:\t1000\t1000\t1000\t1000\n"
				   "Gid:\t5000\t5000\t5000\t5000\n";

	cr_assert_not(hostids_status_uses(zombie, 1000, 1, 5000, 1));
	cr_assert_not(hostids_status_uses(dead, 1000, 1, 5000, 1));
	/* a process in any other state does */
	cr_assert(hostids_status_uses(status, 1000, 1, 1, 1));
}

Test(hostids, a_status_without_ids_proves_nothing_free)
{
	cr_assert(hostids_status_uses("", 1, 2, 3, 4));
	cr_assert(hostids_status_uses("Name:\tx\nUid:\t1\t1\t1\t1\n", 7, 8, 9,
				      10));
	cr_assert(hostids_status_uses(
		"Name:\tx\nUid:\t1\t1\nGid:\t1\t1\t1\t1\n", 7, 8, 9, 10));
}

static int accounts(const char *text, int field, uint32_t start, uint32_t count,
		    struct moat_error *err)
{
	return hostids_no_account(text, strlen(text), "passwd", field, "uid",
				  start, count, "subuid", err);
}

Test(hostids, an_account_in_the_range_is_refused)
{
	static const char pw[] = "root:x:0:0:root:/root:/bin/bash\n"
				 "alice:x:1000:1000::/home/alice:/bin/sh\n"
				 "ldap:x:300005:42::/:/bin/false";
	struct moat_error err = { 0 };

	cr_assert_eq(accounts(pw, 2, 300000, 5, &err), 0, "%s", err.msg);
	cr_assert_eq(accounts(pw, 2, 300006, 100, &err), 0, "%s", err.msg);
	/* the last line, without a newline */
	cr_assert_lt(accounts(pw, 2, 300000, 6, &err), 0);
	cr_assert_eq(err.code, EEXIST);
	cr_assert(strstr(err.msg, "`ldap`") && strstr(err.msg, "300005") &&
			  strstr(err.msg, "subuid"),
		  "%s", err.msg);
	/* the gid field */
	cr_assert_lt(accounts(pw, 3, 40, 10, &err), 0);
	cr_assert(strstr(err.msg, "`ldap`"), "%s", err.msg);
	cr_assert_eq(accounts(pw, 3, 300000, 10, &err), 0, "%s", err.msg);
	/* the first id of the range, and the last */
	cr_assert_lt(accounts(pw, 2, 1000, 2, &err), 0);
	cr_assert_lt(accounts(pw, 2, 999, 2, &err), 0);
	cr_assert_eq(accounts(pw, 2, 998, 2, &err), 0, "%s", err.msg);
}

Test(hostids, malformed_account_lines_are_no_accounts)
{
	static const char pw[] = "\n#x:x:300000\n+::::::\nshort:x\n"
				 "bad:x:30000x:1\nneg:x:-300000:1\n"
				 "huge:x:99999999999:1\n";
	struct moat_error err = { 0 };

	cr_assert_eq(accounts(pw, 2, 0, 4000000000u, &err), 0, "%s", err.msg);
	/* a field past the end of the line */
	cr_assert_eq(accounts("a:b:1:2\n", 6, 0, 100, &err), 0, "%s", err.msg);
}
