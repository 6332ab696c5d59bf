/* tests/unit/audit/test_limiter.c: the audit log's one limiter
 * (sentry/audit.c): the first of each kind, a token bucket, the count of
 * what it left out, and a byte cap. */
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

/* n records of kind k at time t: how many were let through. */
static int admit_n(int n, int64_t t, uint64_t k)
{
	int w = 0;

	for (int i = 0; i < n; i++)
		w += audit_admit(&l, t, k) == AUDIT_WRITE;
	return w;
}

Test(audit, burst_then_rate)
{
	uint64_t k = audit_kind("\"event\":\"syscall-unimplemented\"", "180");

	reset(0);
	/* the first of its kind, then the burst, then nothing at once */
	cr_assert_eq(admit_n(10000, SEC, k), 1 + AUDIT_BURST);
	cr_assert_eq(l.suppressed, 10000 - 1 - AUDIT_BURST);
	/* a second later: AUDIT_RATE more, no more than that */
	cr_assert_eq(admit_n(10000, 2 * SEC, k), AUDIT_RATE);
	/* however long the quiet, no more than the burst at once */
	cr_assert_eq(admit_n(10000, 3600 * SEC, k), AUDIT_BURST);
	/* a clock that went back refills nothing */
	cr_assert_eq(admit_n(10, 10 * SEC, k), 0);
}

Test(audit, the_first_of_each_kind_passes)
{
	uint64_t a = audit_kind("\"event\":\"syscall-unimplemented\"", "180");
	uint64_t b = audit_kind("\"event\":\"syscall-unimplemented\"", "181");
	uint64_t c =
		audit_kind("\"event\":\"net-unreachable\",\"pid\":1", NULL);

	reset(0);
	cr_assert_neq(a, b);
	cr_assert_neq(a, c);
	cr_assert_eq(
		c, audit_kind("\"event\":\"net-unreachable\",\"pid\":2", NULL),
		"the kind is the event's, not the rest");
	admit_n(100000, SEC, a); /* the bucket is empty */
	cr_assert_eq(audit_admit(&l, SEC, b), AUDIT_WRITE, "181's first");
	cr_assert_eq(audit_admit(&l, SEC, c), AUDIT_WRITE, "another event");
	cr_assert_eq(audit_admit(&l, SEC, b), AUDIT_SUPPRESS, "not twice");
}

Test(audit, kinds_are_bounded)
{
	reset(0);
	/* a guest that makes up kinds gets AUDIT_KINDS free passes */
	int w = 0;
	for (uint64_t k = 1; k <= 10 * AUDIT_KINDS; k++)
		w += audit_admit(&l, SEC, k) == AUDIT_WRITE;
	cr_assert_eq(w, AUDIT_KINDS + AUDIT_BURST);
}

Test(audit, the_count_is_said_once_a_second)
{
	uint64_t k = 7;

	reset(0);
	cr_assert(!audit_report_due(&l, SEC), "nothing to say");
	admit_n(1000, SEC, k);
	cr_assert(audit_report_due(&l, SEC));
	l.suppressed = 0; /* written */
	admit_n(1000, SEC + SEC / 2, k);
	cr_assert(!audit_report_due(&l, SEC + SEC / 2), "not yet");
	cr_assert(audit_report_due(&l, 2 * SEC + 1));
}

Test(audit, the_cap)
{
	reset(AUDIT_MAX_MIN);
	cr_assert(audit_fits(&l, AUDIT_MAX_MIN - AUDIT_RESERVE - 100));
	cr_assert(audit_fits(&l, 100), "up to the reserve");
	l.suppressed = 5;
	cr_assert(!audit_fits(&l, 1), "past it");
	cr_assert(l.capped);
	cr_assert_eq(l.dropped, 6, "the counted ones, and the one refused");
	cr_assert_eq(l.suppressed, 0);
	cr_assert_eq(audit_admit(&l, 2 * SEC, 99), AUDIT_DROP,
		     "capped: even a new kind");
	cr_assert_eq(l.dropped, 7);
	cr_assert(!audit_fits(&l, 1));
}
