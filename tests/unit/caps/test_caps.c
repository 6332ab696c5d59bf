/* tests/unit/caps/test_caps.c: the capability rules of sentry/caps.c.
 *
 * Each case starts from creds as a process would hold them and checks
 * the sets after one change against what capabilities(7) (and Linux's
 * security/commoncap.c) give: execve's transformation for root, non-root
 * and under no_new_privs; capset's limits; the setuid and setfsuid
 * fix-ups; the bounding set, ambient set, securebits and keepcaps
 * prctls; and the name table against linux/capability.h. The functions
 * are pure: nothing to clean up.
 */
#include <criterion/criterion.h>

#include <errno.h>
#include <linux/prctl.h>
#include <linux/securebits.h>

#include "sentry/caps.h"
#include "sentry/sentry.h"

#define B(n) (1ULL << (n))

static struct creds user(uid_t uid)
{
	struct creds c = { 0 };

	c.ruid = c.euid = c.suid = c.fsuid = uid;
	c.rgid = c.egid = c.sgid = c.fsgid = uid;
	return c;
}

static void expect_sets(const struct creds *c, uint64_t inh, uint64_t prm,
			uint64_t eff, uint64_t bnd, uint64_t amb)
{
	cr_expect_eq(c->cap.inh, inh, "inheritable %llx, want %llx",
		     (unsigned long long)c->cap.inh, (unsigned long long)inh);
	cr_expect_eq(c->cap.prm, prm, "permitted %llx, want %llx",
		     (unsigned long long)c->cap.prm, (unsigned long long)prm);
	cr_expect_eq(c->cap.eff, eff, "effective %llx, want %llx",
		     (unsigned long long)c->cap.eff, (unsigned long long)eff);
	cr_expect_eq(c->cap.bnd, bnd, "bounding %llx, want %llx",
		     (unsigned long long)c->cap.bnd, (unsigned long long)bnd);
	cr_expect_eq(c->cap.amb, amb, "ambient %llx, want %llx",
		     (unsigned long long)c->cap.amb, (unsigned long long)amb);
}

/* ---- execve ------------------------------------------------------------- */

Test(caps_exec, non_root_keeps_only_ambient)
{
	/* runc's uid-1000 container: bounding, effective, permitted given,
	 * no ambient: after the exec nothing is permitted or effective */
	struct creds c = user(1000);
	uint64_t two = B(CAP_CHOWN) | B(CAP_NET_BIND_SERVICE);

	c.cap = (struct cap_sets){ .prm = two, .eff = two, .bnd = two };
	cr_expect(!caps_exec(&c, true), "not a secure exec");
	expect_sets(&c, 0, 0, 0, two, 0);

	/* with CAP_NET_BIND_SERVICE ambient (so inheritable and permitted),
	 * it alone survives, permitted and effective */
	c.cap = (struct cap_sets){ .prm = two,
				   .eff = two,
				   .bnd = two,
				   .inh = B(CAP_NET_BIND_SERVICE),
				   .amb = B(CAP_NET_BIND_SERVICE) };
	caps_exec(&c, false);
	expect_sets(&c, B(CAP_NET_BIND_SERVICE), B(CAP_NET_BIND_SERVICE),
		    B(CAP_NET_BIND_SERVICE), two, B(CAP_NET_BIND_SERVICE));
}

Test(caps_exec, root_gets_bounding_and_inheritable)
{
	struct creds c = user(0);

	c.cap = (struct cap_sets){ .prm = B(CAP_CHOWN),
				   .bnd = B(CAP_CHOWN) | B(CAP_KILL),
				   .inh = B(CAP_SETUID) };
	cr_expect(!caps_exec(&c, false));
	expect_sets(&c, B(CAP_SETUID),
		    B(CAP_CHOWN) | B(CAP_KILL) | B(CAP_SETUID),
		    B(CAP_CHOWN) | B(CAP_KILL) | B(CAP_SETUID),
		    B(CAP_CHOWN) | B(CAP_KILL), 0);
}

Test(caps_exec, root_under_no_new_privs_gains_nothing)
{
	/* runc's root container with noNewPrivileges: permitted stays what
	 * the config said, however wide the bounding set */
	struct creds c = user(0);

	c.cap = (struct cap_sets){ .prm = B(CAP_CHOWN),
				   .eff = B(CAP_CHOWN),
				   .bnd = B(CAP_CHOWN) |
					  B(CAP_NET_BIND_SERVICE) };
	caps_exec(&c, true);
	expect_sets(&c, 0, B(CAP_CHOWN), B(CAP_CHOWN),
		    B(CAP_CHOWN) | B(CAP_NET_BIND_SERVICE), 0);

	/* and the default root, every capability, keeps them all */
	c.cap = CAP_SETS_ROOT;
	caps_exec(&c, true);
	expect_sets(&c, 0, MOAT_CAP_ALL, MOAT_CAP_ALL, MOAT_CAP_ALL, 0);
}

Test(caps_exec, real_or_effective_root_alone)
{
	struct creds c = user(0);

	/* real uid 0 only: permitted as root's, but not effective */
	c.euid = 1000;
	c.cap = (struct cap_sets){ .bnd = B(CAP_KILL) };
	cr_expect(!caps_exec(&c, false));
	expect_sets(&c, 0, B(CAP_KILL), 0, B(CAP_KILL), 0);
	cr_expect_eq(c.suid, 1000, "saved uid takes the effective one");
	cr_expect_eq(c.fsuid, 1000);

	/* effective uid 0 only: both, and a secure exec (AT_SECURE) */
	c = user(1000);
	c.euid = 0;
	c.cap = (struct cap_sets){ .bnd = B(CAP_KILL) };
	cr_expect(caps_exec(&c, false), "euid 0 of ruid 1000 is secure");
	expect_sets(&c, 0, B(CAP_KILL), B(CAP_KILL), B(CAP_KILL), 0);
}

Test(caps_exec, noroot_and_keep_caps)
{
	struct creds c = user(0);

	c.cap = CAP_SETS_ROOT;
	c.securebits = SECBIT_NOROOT | SECBIT_KEEP_CAPS;
	caps_exec(&c, false);
	expect_sets(&c, 0, 0, 0, MOAT_CAP_ALL, 0);
	cr_expect_eq(c.securebits, SECBIT_NOROOT, "exec clears KEEP_CAPS");
}

/* ---- capset ------------------------------------------------------------- */

Test(caps_capset, only_drops)
{
	struct creds c = user(1000), before;

	c.cap = (struct cap_sets){ .prm = B(CAP_CHOWN) | B(CAP_KILL),
				   .eff = B(CAP_CHOWN),
				   .bnd = B(CAP_CHOWN) | B(CAP_KILL),
				   .inh = B(CAP_KILL),
				   .amb = B(CAP_KILL) };
	before = c;
	cr_expect_eq(caps_capset(&c, 0, B(CAP_SETUID), 0), -EPERM,
		     "no new permitted");
	cr_expect_eq(caps_capset(&c, B(CAP_KILL), B(CAP_CHOWN), 0), -EPERM,
		     "effective within the new permitted");
	cr_expect_eq(caps_capset(&c, 0, B(CAP_CHOWN), B(CAP_SETUID)), -EPERM,
		     "inheritable only from permitted without CAP_SETPCAP");
	cr_expect_eq(memcmp(&c, &before, sizeof(c)), 0, "unchanged");

	/* CAP_CHOWN made inheritable (it is permitted): fine; dropping
	 * CAP_KILL from permitted takes it out of ambient too */
	cr_expect_eq(caps_capset(&c, B(CAP_CHOWN), B(CAP_CHOWN),
				 B(CAP_CHOWN) | B(CAP_KILL)),
		     0);
	expect_sets(&c, B(CAP_CHOWN) | B(CAP_KILL), B(CAP_CHOWN), B(CAP_CHOWN),
		    B(CAP_CHOWN) | B(CAP_KILL), 0);
	/* bits past the last capability are ignored, as Linux masks them */
	cr_expect_eq(caps_capset(&c, B(CAP_CHOWN) | B(50), B(CAP_CHOWN), 0), 0);
	cr_expect_eq(c.cap.eff, B(CAP_CHOWN));
}

Test(caps_capset, setpcap_widens_inheritable_to_bounding)
{
	struct creds c = user(0);

	c.cap = (struct cap_sets){ .prm = B(CAP_SETPCAP),
				   .eff = B(CAP_SETPCAP),
				   .bnd = B(CAP_SETPCAP) | B(CAP_KILL) };
	cr_expect_eq(caps_capset(&c, B(CAP_SETPCAP), B(CAP_SETPCAP),
				 B(CAP_KILL)),
		     0, "CAP_SETPCAP: any of the bounding set");
	cr_expect_eq(caps_capset(&c, B(CAP_SETPCAP), B(CAP_SETPCAP),
				 B(CAP_CHOWN)),
		     -EPERM, "never past the bounding set");
}

/* ---- setuid, setfsuid, access ------------------------------------------ */

Test(caps_setuid, leaving_root_clears)
{
	struct creds c = user(0), old;

	c.cap = CAP_SETS_ROOT;
	c.cap.inh = c.cap.amb = B(CAP_KILL);
	old = c;
	c.ruid = c.euid = c.suid = c.fsuid = 1000;
	caps_setuid_fixup(&c, &old);
	expect_sets(&c, B(CAP_KILL), 0, 0, MOAT_CAP_ALL, 0);

	/* with PR_SET_KEEPCAPS, permitted stays; effective goes */
	c = old;
	c.securebits = SECBIT_KEEP_CAPS;
	c.ruid = c.euid = c.suid = c.fsuid = 1000;
	caps_setuid_fixup(&c, &old);
	expect_sets(&c, B(CAP_KILL), MOAT_CAP_ALL, 0, MOAT_CAP_ALL, 0);

	/* SECBIT_NO_SETUID_FIXUP: nothing moves */
	c = old;
	c.securebits = SECBIT_NO_SETUID_FIXUP;
	c.ruid = c.euid = c.suid = c.fsuid = 1000;
	caps_setuid_fixup(&c, &old);
	cr_expect_eq(memcmp(&c.cap, &old.cap, sizeof(c.cap)), 0);
}

Test(caps_setuid, effective_uid_round_trip)
{
	struct creds c = user(0), old;

	c.cap = CAP_SETS_ROOT;
	old = c;
	c.euid = c.fsuid = 1000; /* seteuid(1000): saved uid still 0 */
	caps_setuid_fixup(&c, &old);
	expect_sets(&c, 0, MOAT_CAP_ALL, 0, MOAT_CAP_ALL, 0);
	old = c;
	c.euid = c.fsuid = 0; /* and back */
	caps_setuid_fixup(&c, &old);
	expect_sets(&c, 0, MOAT_CAP_ALL, MOAT_CAP_ALL, MOAT_CAP_ALL, 0);
}

Test(caps_setuid, fsuid_moves_the_file_system_caps)
{
	struct creds c = user(0);
	uint64_t fs = B(CAP_CHOWN) | B(CAP_DAC_OVERRIDE) |
		      B(CAP_DAC_READ_SEARCH) | B(CAP_FOWNER) | B(CAP_FSETID) |
		      B(CAP_LINUX_IMMUTABLE) | B(CAP_MKNOD) |
		      B(CAP_MAC_OVERRIDE);

	c.cap = CAP_SETS_ROOT;
	c.fsuid = 1000;
	caps_setfsuid_fixup(&c, 0);
	cr_expect_eq(c.cap.eff, MOAT_CAP_ALL & ~fs);
	c.fsuid = 0;
	caps_setfsuid_fixup(&c, 1000);
	cr_expect_eq(c.cap.eff, MOAT_CAP_ALL);
}

Test(caps_access, real_ids_decide)
{
	struct creds c = user(0);

	/* access(2) by a set-uid-root-like process: real uid 1000 */
	c.ruid = 1000;
	c.cap = CAP_SETS_ROOT;
	caps_access_creds(&c);
	cr_expect_eq(c.fsuid, 1000);
	cr_expect_eq(c.cap.eff, 0);
	c = user(0);
	c.cap = (struct cap_sets){ .prm = B(CAP_KILL) };
	caps_access_creds(&c);
	cr_expect_eq(c.cap.eff, B(CAP_KILL), "real root: permitted");
}

/* ---- prctl ---------------------------------------------------------------- */

Test(caps_prctl, bounding_drop)
{
	struct creds c = user(0);

	c.cap = (struct cap_sets){ .bnd = MOAT_CAP_ALL };
	cr_expect_eq(caps_bset_drop(&c, 99), -EPERM,
		     "CAP_SETPCAP is asked first");
	c.cap.eff = c.cap.prm = B(CAP_SETPCAP);
	cr_expect_eq(caps_bset_drop(&c, MOAT_CAP_LAST + 1), -EINVAL);
	cr_expect_eq(caps_bset_drop(&c, CAP_SYS_ADMIN), 0);
	cr_expect_eq(c.cap.bnd, MOAT_CAP_ALL & ~B(CAP_SYS_ADMIN));
}

Test(caps_prctl, ambient)
{
	struct creds c = user(1000);

	c.cap = (struct cap_sets){ .prm = B(CAP_KILL) | B(CAP_CHOWN),
				   .inh = B(CAP_KILL) };
	cr_expect_eq(caps_ambient(&c, PR_CAP_AMBIENT_RAISE, CAP_CHOWN, 0, 0),
		     -EPERM, "not inheritable");
	cr_expect_eq(caps_ambient(&c, PR_CAP_AMBIENT_RAISE, CAP_KILL, 0, 0), 0);
	cr_expect_eq(caps_ambient(&c, PR_CAP_AMBIENT_IS_SET, CAP_KILL, 0, 0),
		     1);
	cr_expect_eq(caps_ambient(&c, PR_CAP_AMBIENT_IS_SET, CAP_CHOWN, 0, 0),
		     0);
	cr_expect_eq(caps_ambient(&c, PR_CAP_AMBIENT_IS_SET, 41, 0, 0),
		     -EINVAL);
	cr_expect_eq(caps_ambient(&c, PR_CAP_AMBIENT_IS_SET, CAP_KILL, 1, 0),
		     -EINVAL, "unused arguments must be 0");
	cr_expect_eq(caps_ambient(&c, 99, CAP_KILL, 0, 0), -EINVAL);
	cr_expect_eq(caps_ambient(&c, PR_CAP_AMBIENT_CLEAR_ALL, 1, 0, 0),
		     -EINVAL);
	cr_expect_eq(caps_ambient(&c, PR_CAP_AMBIENT_LOWER, CAP_KILL, 0, 0), 0);
	cr_expect_eq(c.cap.amb, 0);
	c.securebits = SECBIT_NO_CAP_AMBIENT_RAISE;
	cr_expect_eq(caps_ambient(&c, PR_CAP_AMBIENT_RAISE, CAP_KILL, 0, 0),
		     -EPERM);
}

Test(caps_prctl, securebits_and_keepcaps)
{
	struct creds c = user(0);

	cr_expect_eq(caps_set_securebits(&c, SECBIT_NOROOT), -EPERM,
		     "needs CAP_SETPCAP");
	c.cap.eff = B(CAP_SETPCAP);
	cr_expect_eq(caps_set_securebits(&c, 1UL << 20), -EPERM, "unknown bit");
	cr_expect_eq(caps_set_securebits(&c, SECBIT_KEEP_CAPS |
						     SECBIT_KEEP_CAPS_LOCKED),
		     0);
	cr_expect_eq(caps_set_securebits(&c, SECBIT_KEEP_CAPS_LOCKED), -EPERM,
		     "a locked bit does not change");
	cr_expect_eq(caps_set_securebits(&c, SECBIT_KEEP_CAPS), -EPERM,
		     "a lock is not undone");
	cr_expect_eq(caps_set_keepcaps(&c, 0), -EPERM, "locked");
	c.securebits = 0;
	cr_expect_eq(caps_set_keepcaps(&c, 2), -EINVAL);
	cr_expect_eq(caps_set_keepcaps(&c, 1), 0);
	cr_expect_eq(c.securebits, SECBIT_KEEP_CAPS);
	cr_expect_eq(caps_set_keepcaps(&c, 0), 0);
	cr_expect_eq(c.securebits, 0);
}

/* ---- names ---------------------------------------------------------------- */

Test(caps_names, match_linux)
{
	static const struct {
		const char *name;
		int cap;
	} known[] = {
		{ "CAP_CHOWN", CAP_CHOWN },
		{ "CAP_SETPCAP", CAP_SETPCAP },
		{ "CAP_NET_BIND_SERVICE", CAP_NET_BIND_SERVICE },
		{ "CAP_SYS_ADMIN", CAP_SYS_ADMIN },
		{ "CAP_MKNOD", CAP_MKNOD },
		{ "CAP_AUDIT_WRITE", CAP_AUDIT_WRITE },
		{ "CAP_MAC_OVERRIDE", CAP_MAC_OVERRIDE },
		{ "CAP_AUDIT_READ", CAP_AUDIT_READ },
		{ "CAP_PERFMON", CAP_PERFMON },
		{ "CAP_BPF", CAP_BPF },
		{ "CAP_CHECKPOINT_RESTORE", CAP_CHECKPOINT_RESTORE },
	};

	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
		cr_expect_eq(cap_from_name(known[i].name), known[i].cap, "%s",
			     known[i].name);
		cr_expect_str_eq(cap_name(known[i].cap), known[i].name);
	}
	cr_expect_eq(CAP_LAST_CAP, MOAT_CAP_LAST,
		     "the headers' last capability is the sandbox's");
	cr_expect_eq(cap_from_name("CAP_NET_RAW"), CAP_NET_RAW);
	cr_expect_eq(cap_from_name("cap_net_raw"), -1,
		     "spelt as runc takes it");
	cr_expect_eq(cap_from_name("NET_RAW"), -1);
	cr_expect_eq(cap_from_name("CAP_FOO"), -1);
	cr_expect_eq(cap_from_name(""), -1);
	cr_expect_null(cap_name(MOAT_CAP_LAST + 1));
	for (int i = 0; i <= MOAT_CAP_LAST; i++)
		cr_expect_eq(cap_from_name(cap_name(i)), i);
}
