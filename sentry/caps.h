/* sentry/caps.h: the capability sets of a guest's credentials, changed by
 * Linux's rules (capabilities(7); security/commoncap.c).
 *
 * The sets are the sandbox's own: a guest never holds a host capability
 * (its host task has none at all). They decide the sentry's privilege
 * checks (creds_capable, sentry/sentry.h) and are what capget, prctl and
 * /proc/<pid>/status report. There are no file capabilities and no
 * set-user-ID executables in the sandbox, so execve's transformation is
 * the one for a file without them.
 *
 * Every function here is pure: it reads and changes the creds it is
 * given and nothing else, so the rules are tested alone
 * (tests/unit/caps). Guest-given values are checked here; the return is
 * 0 or -errno as the syscall would give it.
 */
#ifndef MOAT_SENTRY_CAPS_H
#define MOAT_SENTRY_CAPS_H

#include <linux/capability.h> /* CAP_* */
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* The capabilities the sandbox implements, CAP_CHOWN to
 * CAP_CHECKPOINT_RESTORE (kernel.cap_last_cap): what capget and
 * /proc/<pid>/status show, and what PR_CAPBSET_READ knows. */
#define MOAT_CAP_LAST 40
#define MOAT_CAP_ALL ((1ULL << (MOAT_CAP_LAST + 1)) - 1)

/* Bit n: capability n. */
struct cap_sets {
	uint64_t inh, prm, eff, bnd, amb;
};

/* What the sandbox's first process has unless an OCI config says
 * otherwise: uid 0's sets in a fresh user namespace (every capability
 * permitted, effective and in the bounding set; none inheritable or
 * ambient). */
#define CAP_SETS_ROOT                                                          \
	((struct cap_sets){ .prm = MOAT_CAP_ALL,                               \
			    .eff = MOAT_CAP_ALL,                               \
			    .bnd = MOAT_CAP_ALL })

struct creds;

/* The number of capability name, spelt as Linux's headers spell it
 * ("CAP_CHOWN", as runc takes them), or -1 if the sandbox does not know
 * it. */
int cap_from_name(const char *name);
/* "CAP_CHOWN" for 0; NULL past MOAT_CAP_LAST. Static storage. */
const char *cap_name(int cap);

/* capset(2) on the caller's own creds (cap_capset): the new sets may only
 * drop from permitted; effective must lie in the new permitted;
 * inheritable may gain only what permitted holds (unless CAP_SETPCAP is
 * effective) and never beyond the bounding set. Ambient keeps only what
 * is both permitted and inheritable. 0, or -EPERM and c unchanged. Bits
 * past MOAT_CAP_LAST are ignored, as Linux masks them. */
int caps_capset(struct creds *c, uint64_t eff, uint64_t prm, uint64_t inh);

/* execve's transformation, for a file with no file capabilities and its
 * set-id bits not honoured (cap_bprm_creds_from_file):
 *   root (real or effective uid 0, without SECBIT_NOROOT):
 *     P' = bounding | inheritable; E' = P' when the effective uid is 0;
 *   anyone else: P' = E' = ambient;
 *   under no_new_privs, P' gains nothing the process did not permit;
 *   and P' |= ambient, saved and fs ids take the effective ones,
 *   SECBIT_KEEP_CAPS is cleared.
 * True when Linux would run the new program in secure mode (AT_SECURE). */
bool caps_exec(struct creds *c, bool no_new_privs);

/* After a change of the real/effective/saved uids from old to c
 * (setuid, setreuid, setresuid: cap_emulate_setxuid), unless
 * SECBIT_NO_SETUID_FIXUP: leaving uid 0 in all three clears permitted and
 * effective (unless SECBIT_KEEP_CAPS) and ambient; the effective uid
 * leaving 0 clears effective; coming to 0 gives effective = permitted. */
void caps_setuid_fixup(struct creds *c, const struct creds *old);

/* After setfsuid changed the fs uid from old_fsuid, unless SECBIT_NO_SETUID_FIXUP: leaving 0 drops
 * the file-system capabilities (CAP_CHOWN, DAC_*, FOWNER, FSETID, MKNOD,
 * LINUX_IMMUTABLE, MAC_OVERRIDE) from effective; coming to 0 raises those
 * of them that are permitted. */
void caps_setfsuid_fixup(struct creds *c, uid_t old_fsuid);

/* The creds faccessat checks with when AT_EACCESS is not given: the
 * real ids, and effective = permitted for real uid 0, empty otherwise. */
void caps_access_creds(struct creds *c);

/* prctl(PR_CAPBSET_DROP, cap): needs CAP_SETPCAP (EPERM first, then
 * EINVAL for an unknown cap, as Linux's order). */
int caps_bset_drop(struct creds *c, unsigned long cap);

/* prctl(PR_CAP_AMBIENT, op, cap, a4, a5): IS_SET's 0/1, 0, or -errno. A
 * raise needs the capability permitted and inheritable, and no
 * SECBIT_NO_CAP_AMBIENT_RAISE. */
long caps_ambient(struct creds *c, unsigned long op, unsigned long cap,
		  unsigned long a4, unsigned long a5);

/* prctl(PR_SET_SECUREBITS, bits): CAP_SETPCAP, no locked bit changed or
 * unlocked, only the bits Linux knows (SECURE_ALL_BITS and their locks). */
int caps_set_securebits(struct creds *c, unsigned long bits);

/* prctl(PR_SET_KEEPCAPS, v): v 0 or 1 (else EINVAL); EPERM when
 * SECBIT_KEEP_CAPS_LOCKED. */
int caps_set_keepcaps(struct creds *c, unsigned long v);

#endif
