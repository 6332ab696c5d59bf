/* tests/e2e/guest_mount.c: mount(2), umount2(2) and pivot_root(2) as a
 * process without CAP_SYS_ADMIN calls them (test_mounts.sh): what each
 * returns, natively and in the sandbox alike. EPERM comes after Linux's
 * earlier checks: unreadable strings (EFAULT), MS_NOUSER and unknown
 * umount2 flags (EINVAL), a target that is not there (ENOENT). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <unistd.h>

static void said(const char *what, long rc)
{
	printf("%s: %s\n", what, rc < 0 ? strerrorname_np(errno) : "ok");
}

int main(void)
{
	said("mount tmpfs", mount("tmpfs", "/tmp", "tmpfs", 0, NULL));
	said("mount bind", mount("/", "/tmp", NULL, MS_BIND, NULL));
	said("remount ro",
	     mount(NULL, "/", NULL, MS_REMOUNT | MS_BIND | MS_RDONLY, NULL));
	said("mount missing target",
	     mount("tmpfs", "/nonexistent", "tmpfs", 0, NULL));
	said("mount bad type",
	     syscall(SYS_mount, "x", "/tmp", (char *)1, 0, NULL));
	said("mount bad target",
	     syscall(SYS_mount, "x", (char *)1, "tmpfs", 0, NULL));
	said("mount MS_NOUSER",
	     mount("tmpfs", "/tmp", "tmpfs", MS_NOUSER, NULL));
	said("umount2 /tmp", umount2("/tmp", 0));
	said("umount2 / detached", umount2("/", MNT_DETACH));
	said("umount2 missing", umount2("/nonexistent", 0));
	said("umount2 bad flags", umount2("/tmp", 0x100));
	said("umount2 not a mount point", umount2("/etc", 0));
	said("pivot_root", syscall(SYS_pivot_root, "/tmp", "/tmp"));
	return 0;
}
