/* sentry/caps.c: capability sets by Linux's rules (see caps.h). */
#include "sentry/caps.h"

#include <errno.h>
#include <linux/capability.h>
#include <linux/prctl.h>
#include <linux/securebits.h>
#include <string.h>

#include "sentry/sentry.h"

#define BIT(n) (1ULL << (n))

/* Linux's CAP_FS_SET: what a fs uid of 0 stands for. */
#define CAP_FS_SET                                                             \
	(BIT(CAP_CHOWN) | BIT(CAP_MKNOD) | BIT(CAP_DAC_OVERRIDE) |             \
	 BIT(CAP_DAC_READ_SEARCH) | BIT(CAP_FOWNER) | BIT(CAP_FSETID) |        \
	 BIT(CAP_MAC_OVERRIDE) | BIT(CAP_LINUX_IMMUTABLE))

static const char *const names[MOAT_CAP_LAST + 1] = {
	"CAP_CHOWN",
	"CAP_DAC_OVERRIDE",
	"CAP_DAC_READ_SEARCH",
	"CAP_FOWNER",
	"CAP_FSETID",
	"CAP_KILL",
	"CAP_SETGID",
	"CAP_SETUID",
	"CAP_SETPCAP",
	"CAP_LINUX_IMMUTABLE",
	"CAP_NET_BIND_SERVICE",
	"CAP_NET_BROADCAST",
	"CAP_NET_ADMIN",
	"CAP_NET_RAW",
	"CAP_IPC_LOCK",
	"CAP_IPC_OWNER",
	"CAP_SYS_MODULE",
	"CAP_SYS_RAWIO",
	"CAP_SYS_CHROOT",
	"CAP_SYS_PTRACE",
	"CAP_SYS_PACCT",
	"CAP_SYS_ADMIN",
	"CAP_SYS_BOOT",
	"CAP_SYS_NICE",
	"CAP_SYS_RESOURCE",
	"CAP_SYS_TIME",
	"CAP_SYS_TTY_CONFIG",
	"CAP_MKNOD",
	"CAP_LEASE",
	"CAP_AUDIT_WRITE",
	"CAP_AUDIT_CONTROL",
	"CAP_SETFCAP",
	"CAP_MAC_OVERRIDE",
	"CAP_MAC_ADMIN",
	"CAP_SYSLOG",
	"CAP_WAKE_ALARM",
	"CAP_BLOCK_SUSPEND",
	"CAP_AUDIT_READ",
	"CAP_PERFMON",
	"CAP_BPF",
	"CAP_CHECKPOINT_RESTORE",
};

int cap_from_name(const char *name)
{
	for (int i = 0; i <= MOAT_CAP_LAST; i++)
		if (!strcmp(name, names[i]))
			return i;
	return -1;
}

const char *cap_name(int cap)
{
	return cap >= 0 && cap <= MOAT_CAP_LAST ? names[cap] : NULL;
}

static bool subset(uint64_t a, uint64_t b)
{
	return !(a & ~b);
}

int caps_capset(struct creds *c, uint64_t eff, uint64_t prm, uint64_t inh)
{
	eff &= MOAT_CAP_ALL;
	prm &= MOAT_CAP_ALL;
	inh &= MOAT_CAP_ALL;
	/* cap_inh_is_capped: without CAP_SETPCAP, nothing inheritable that
	 * was neither inheritable nor permitted before */
	if (!creds_capable(c, CAP_SETPCAP) &&
	    !subset(inh, c->cap.inh | c->cap.prm))
		return -EPERM;
	if (!subset(inh, c->cap.inh | c->cap.bnd))
		return -EPERM;
	if (!subset(prm, c->cap.prm) || !subset(eff, prm))
		return -EPERM;
	c->cap.eff = eff;
	c->cap.prm = prm;
	c->cap.inh = inh;
	c->cap.amb &= prm & inh;
	return 0;
}

bool caps_exec(struct creds *c, bool no_new_privs)
{
	bool root = !(c->securebits & SECBIT_NOROOT) &&
		    (c->euid == 0 || c->ruid == 0);
	bool fe = root && c->euid == 0; /* the file's "effective" bit */
	uint64_t prm = root ? (c->cap.bnd | c->cap.inh) : 0;

	/* No file capabilities and no set-id: only a root exec can gain,
	 * and under no_new_privs it may not (LSM_UNSAFE_NO_NEW_PRIVS). */
	if (no_new_privs && !subset(prm, c->cap.prm))
		prm &= c->cap.prm;
	c->suid = c->fsuid = c->euid;
	c->sgid = c->fsgid = c->egid;
	c->cap.prm = prm | c->cap.amb;
	c->cap.eff = fe ? c->cap.prm : c->cap.amb;
	c->securebits &= ~(unsigned)SECBIT_KEEP_CAPS;
	return c->ruid != 0 && fe;
}

void caps_setuid_fixup(struct creds *c, const struct creds *old)
{
	bool was_root = old->ruid == 0 || old->euid == 0 || old->suid == 0;
	bool is_root = c->ruid == 0 || c->euid == 0 || c->suid == 0;

	if (c->securebits & SECBIT_NO_SETUID_FIXUP)
		return;
	if (was_root && !is_root) {
		if (!(c->securebits & SECBIT_KEEP_CAPS))
			c->cap.prm = c->cap.eff = 0;
		/* programs that predate ambient expect setresuid to non-root
		 * followed by an exec to drop everything */
		c->cap.amb = 0;
	}
	if (old->euid == 0 && c->euid != 0)
		c->cap.eff = 0;
	if (old->euid != 0 && c->euid == 0)
		c->cap.eff = c->cap.prm;
}

void caps_setfsuid_fixup(struct creds *c, uid_t old_fsuid)
{
	if (c->securebits & SECBIT_NO_SETUID_FIXUP)
		return;
	if (old_fsuid == 0 && c->fsuid != 0)
		c->cap.eff &= ~CAP_FS_SET;
	if (old_fsuid != 0 && c->fsuid == 0)
		c->cap.eff |= c->cap.prm & CAP_FS_SET;
}

void caps_access_creds(struct creds *c)
{
	c->fsuid = c->ruid;
	c->fsgid = c->rgid;
	if (c->securebits & SECBIT_NO_SETUID_FIXUP)
		return;
	c->cap.eff = c->ruid == 0 ? c->cap.prm : 0;
}

int caps_bset_drop(struct creds *c, unsigned long cap)
{
	if (!creds_capable(c, CAP_SETPCAP))
		return -EPERM;
	if (cap > MOAT_CAP_LAST)
		return -EINVAL;
	c->cap.bnd &= ~BIT(cap);
	return 0;
}

long caps_ambient(struct creds *c, unsigned long op, unsigned long cap,
		  unsigned long a4, unsigned long a5)
{
	if (op == PR_CAP_AMBIENT_CLEAR_ALL) {
		if (cap || a4 || a5)
			return -EINVAL;
		c->cap.amb = 0;
		return 0;
	}
	if (cap > MOAT_CAP_LAST || a4 || a5)
		return -EINVAL;
	switch (op) {
	case PR_CAP_AMBIENT_IS_SET:
		return (c->cap.amb >> cap) & 1;
	case PR_CAP_AMBIENT_RAISE:
		if (!(c->cap.prm & c->cap.inh & BIT(cap)) ||
		    (c->securebits & SECBIT_NO_CAP_AMBIENT_RAISE))
			return -EPERM;
		c->cap.amb |= BIT(cap);
		return 0;
	case PR_CAP_AMBIENT_LOWER:
		c->cap.amb &= ~BIT(cap);
		return 0;
	default:
		return -EINVAL;
	}
}

int caps_set_securebits(struct creds *c, unsigned long bits)
{
	unsigned long old = c->securebits;

	/* a locked bit may not change, a lock may not be undone, no bit
	 * Linux does not know, and only with CAP_SETPCAP */
	if ((((old & SECURE_ALL_LOCKS) >> 1) & (old ^ bits)) ||
	    (old & SECURE_ALL_LOCKS & ~bits) ||
	    (bits & ~(unsigned long)(SECURE_ALL_LOCKS | SECURE_ALL_BITS)) ||
	    !creds_capable(c, CAP_SETPCAP))
		return -EPERM;
	c->securebits = (unsigned)bits;
	return 0;
}

int caps_set_keepcaps(struct creds *c, unsigned long v)
{
	if (v > 1)
		return -EINVAL;
	if (c->securebits & SECBIT_KEEP_CAPS_LOCKED)
		return -EPERM;
	if (v)
		c->securebits |= SECBIT_KEEP_CAPS;
	else
		c->securebits &= ~(unsigned)SECBIT_KEEP_CAPS;
	return 0;
}
