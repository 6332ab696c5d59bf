/* tests/unit/audit/test_limiter.c: the audit log's limiter
 * (sentry/audit.c): the first of each kind, a token bucket a class, the
 * count of what it left out, a byte cap, and the owner's records apart
 * from the guest's. */
#include <criterion/criterion.h>

#include <string.h>

#include "sentry/audit.h"

#define SEC 1000000000LL

TestSuite(audit);

static struct audit_limiter l;

static void reset(uint64_t max)
{
	memset(&l, 0, sizeof(l));
	l.max_bytes = max;
}

static bool passes(enum audit_verdict v)
{
	return v == AUDIT_WRITE || v == AUDIT_FIRST || v == AUDIT_OWNER;
}

/* n records of class c, kind k at time t: how many were let through. */
static int admit_n(int n, int64_t t, enum audit_class c, unsigned k)
{
	int w = 0;

	for (int i = 0; i < n; i++)
		w += passes(audit_admit(&l, t, c, k));
	return w;
}

Test(audit, burst_then_rate)
{
	unsigned k = audit_syscall_kind(180);

	reset(0);
	/* the first of its kind, then the burst, then nothing at once */
	cr_assert_eq(audit_admit(&l, SEC, AUDIT_SYSCALL, k), AUDIT_FIRST);
	cr_assert_eq(admit_n(10000, SEC, AUDIT_SYSCALL, k), AUDIT_BURST);
	cr_assert_eq(l.suppressed, 10000 - AUDIT_BURST);
	/* a second later: AUDIT_RATE more, no more than that */
	cr_assert_eq(admit_n(10000, 2 * SEC, AUDIT_SYSCALL, k), AUDIT_RATE);
	/* however long the quiet, no more than the burst at once */
	cr_assert_eq(admit_n(10000, 3600 * SEC, AUDIT_SYSCALL, k), AUDIT_BURST);
	/* a clock that went back refills nothing */
	cr_assert_eq(admit_n(10, 10 * SEC, AUDIT_SYSCALL, k), 0);
}

Test(audit, the_first_of_each_kind_passes)
{
	unsigned a = audit_syscall_kind(180), b = audit_syscall_kind(181);

	reset(0);
	cr_assert_neq(a, b);
	admit_n(100000, SEC, AUDIT_SYSCALL, a); /* the bucket is empty */
	cr_assert_eq(audit_admit(&l, SEC, AUDIT_SYSCALL, b), AUDIT_FIRST,
		     "181's first");
	cr_assert_eq(audit_admit(&l, SEC, AUDIT_GUEST, AUDIT_K_NET_UNREACHABLE),
		     AUDIT_FIRST, "another event");
	cr_assert_eq(audit_admit(&l, SEC, AUDIT_SYSCALL, b), AUDIT_SUPPRESS,
		     "not twice");
}

/* kinds_exhaust: a guest that made up 256 syscall numbers past the table
 * filled the one table of kinds, and then every first (a new syscall, a
 * denied connect) was only counted. Every number past the table is one
 * kind now, and each class has a table of its own. */
Test(audit, made_up_numbers_are_one_kind)
{
	reset(0);
	cr_assert_eq(audit_syscall_kind(-1), audit_syscall_kind(100000));
	cr_assert_eq(audit_syscall_kind(AUDIT_SYSCALL_NRS),
		     audit_syscall_kind(1L << 40));
	cr_assert_neq(audit_syscall_kind(AUDIT_SYSCALL_NRS - 1),
		      audit_syscall_kind(AUDIT_SYSCALL_NRS));
	int firsts = 0;
	for (long nr = 100000; nr < 100000 + 10 * 256; nr++)
		firsts += audit_admit(&l, SEC, AUDIT_SYSCALL,
				      audit_syscall_kind(nr)) == AUDIT_FIRST;
	cr_assert_eq(firsts, 1, "one first for every number past the table");
	admit_n(100000, SEC, AUDIT_SYSCALL, audit_syscall_kind(100000));
	cr_assert_eq(audit_admit(&l, SEC, AUDIT_SYSCALL, 181), AUDIT_FIRST);
	cr_assert_eq(audit_admit(&l, SEC, AUDIT_GUEST, AUDIT_K_NET_UNREACHABLE),
		     AUDIT_FIRST);
	/* the other classes' buckets are their own: full */
	cr_assert_eq(admit_n(AUDIT_BURST, SEC, AUDIT_GUEST,
			     AUDIT_K_NET_UNREACHABLE),
		     AUDIT_BURST);
	cr_assert_eq(audit_admit(&l, SEC, AUDIT_NET, 3), AUDIT_FIRST);
	cr_assert_eq(admit_n(AUDIT_BURST, SEC, AUDIT_NET, 3), AUDIT_BURST);
	/* a kind past its table is the table's last, never out of it */
	cr_assert_eq(audit_admit(&l, SEC, AUDIT_NET, 1u << 30), AUDIT_FIRST);
	cr_assert_eq(audit_admit(&l, SEC, AUDIT_NET, AUDIT_NET_KINDS - 1),
		     AUDIT_SUPPRESS, "its second (the bucket is spent)");
}

/* policy_set_hidden: the owner's records shared the guest's bucket. */
Test(audit, the_owners_records_take_no_token)
{
	reset(0);
	admit_n(100000, SEC, AUDIT_SYSCALL, 180);
	for (int i = 0; i < 1000; i++)
		cr_assert_eq(audit_admit(&l, SEC, AUDIT_HOST, 0), AUDIT_OWNER);
}

Test(audit, the_count_is_said_once_a_second)
{
	reset(0);
	cr_assert(!audit_report_due(&l, SEC), "nothing to say");
	admit_n(1000, SEC, AUDIT_SYSCALL, 7);
	cr_assert(audit_report_due(&l, SEC));
	l.suppressed = 0; /* written */
	admit_n(1000, SEC + SEC / 2, AUDIT_SYSCALL, 7);
	cr_assert(!audit_report_due(&l, SEC + SEC / 2), "not yet");
	cr_assert(audit_report_due(&l, 2 * SEC + 1));
}

/* cap_blinds: past the cap every record was dropped, firsts and the
 * owner's too. */
Test(audit, the_cap)
{
	reset(AUDIT_MAX_MIN);
	cr_assert(audit_fits(&l, AUDIT_WRITE,
			     AUDIT_MAX_MIN - AUDIT_RESERVE - 100));
	cr_assert(audit_fits(&l, AUDIT_WRITE, 100), "up to the reserve");
	l.suppressed = 5;
	cr_assert(!audit_fits(&l, AUDIT_WRITE, 1), "past it");
	cr_assert(l.capped);
	cr_assert_eq(l.dropped, 6, "the counted ones, and the one refused");
	cr_assert_eq(l.suppressed, 0);
	audit_admit(&l, 2 * SEC, AUDIT_SYSCALL, 99); /* its first */
	cr_assert_eq(audit_admit(&l, 2 * SEC, AUDIT_SYSCALL, 99), AUDIT_DROP,
		     "capped: a token's record");
	cr_assert_eq(l.dropped, 7);
	cr_assert(!audit_fits(&l, AUDIT_WRITE, 1),
		  "let through before the cap was reached: dropped");
	cr_assert_eq(l.dropped, 8);
	cr_assert_eq(audit_admit(&l, 2 * SEC, AUDIT_SYSCALL, 98), AUDIT_FIRST,
		     "capped: still the first of a kind");
	cr_assert(audit_fits(&l, AUDIT_FIRST, 200));
	cr_assert(audit_fits(&l, AUDIT_OWNER, 200), "the owner's own cap");
	cr_assert(!audit_fits(&l, AUDIT_OWNER, AUDIT_MAX_MIN), "past it");
}
