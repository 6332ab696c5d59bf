/* tests/unit/vfs/test_mountinfo.c: the text of one mount table entry
 * (sentry/mountinfo.c) in each of the kernel's three formats: fields in
 * their places, options in show_mnt_opts's order, and the four characters
 * that readers split on written as octal escapes in every string field.
 * mount_format is pure: no fixture.
 */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sentry/vfs.h"

static struct vfs_mount_info entry(const char *path, const char *fstype,
				   const char *source, unsigned long flags,
				   const char *super)
{
	struct vfs_mount_info m;

	memset(&m, 0, sizeof(m));
	m.id = 8;
	m.parent = 1;
	m.dev = makedev(0, 0x40);
	m.path = path;
	m.fstype = fstype;
	m.source = source;
	m.flags = flags;
	snprintf(m.super, sizeof(m.super), "%s", super);
	return m;
}

/* The whole line, allocated to the length mount_format asks for. */
static char *fmt(const struct vfs_mount_info *m, enum mount_style style)
{
	size_t n = mount_format(NULL, 0, m, style);
	char *s = malloc(n + 1);

	cr_assert_not_null(s);
	cr_assert_eq(mount_format(s, n + 1, m, style), n);
	cr_assert_eq(strlen(s), n, "the length returned is the text's");
	return s;
}

Test(mountinfo, every_field_in_its_place)
{
	struct vfs_mount_info m = entry(
		"/dev/shm", "tmpfs", "shm",
		ST_NOSUID | ST_NODEV | ST_NOEXEC | ST_RELATIME, "mode=700");
	char *s = fmt(&m, MOUNT_STYLE_MOUNTINFO);

	cr_assert_str_eq(s, "8 1 0:64 / /dev/shm "
			    "rw,nosuid,nodev,noexec,relatime - tmpfs shm "
			    "rw,mode=700\n");
	free(s);
	s = fmt(&m, MOUNT_STYLE_MOUNTS);
	cr_assert_str_eq(s, "shm /dev/shm tmpfs "
			    "rw,nosuid,nodev,noexec,relatime,mode=700 0 0\n");
	free(s);
	s = fmt(&m, MOUNT_STYLE_MOUNTSTATS);
	cr_assert_str_eq(s,
			 "device shm mounted on /dev/shm with fstype tmpfs\n");
	free(s);
}

Test(mountinfo, read_only_and_no_filesystem_options)
{
	struct vfs_mount_info m =
		entry("/", "overlay", "overlay", ST_RDONLY | ST_NOATIME, "");
	char *s;

	m.id = m.parent = 1;
	m.dev = makedev(0, 30);
	s = fmt(&m, MOUNT_STYLE_MOUNTINFO);
	cr_assert_str_eq(s, "1 1 0:30 / / ro,noatime - overlay overlay rw\n");
	free(s);
	s = fmt(&m, MOUNT_STYLE_MOUNTS);
	cr_assert_str_eq(s, "overlay / overlay ro,noatime 0 0\n");
	free(s);
}

Test(mountinfo, space_tab_newline_and_backslash_are_octal)
{
	struct vfs_mount_info m =
		entry("/a b\tc\nd\\e", "tmpfs", "my src", ST_RELATIME, "");
	char *s = fmt(&m, MOUNT_STYLE_MOUNTINFO);

	cr_assert_str_eq(s, "8 1 0:64 / /a\\040b\\011c\\012d\\134e "
			    "rw,relatime - tmpfs my\\040src rw\n");
	free(s);
	s = fmt(&m, MOUNT_STYLE_MOUNTS);
	cr_assert_str_eq(s, "my\\040src /a\\040b\\011c\\012d\\134e tmpfs "
			    "rw,relatime 0 0\n");
	free(s);
	s = fmt(&m, MOUNT_STYLE_MOUNTSTATS);
	cr_assert_str_eq(s, "device my\\040src mounted on "
			    "/a\\040b\\011c\\012d\\134e with fstype tmpfs\n");
	free(s);
}

Test(mountinfo, other_bytes_pass_through)
{
	/* Linux escapes only those four: UTF-8 and '#' are as they are. */
	struct vfs_mount_info m =
		entry("/h\xc3\xa9#x", "tmpfs", "tmpfs", 0, "");
	char *s = fmt(&m, MOUNT_STYLE_MOUNTS);

	cr_assert_str_eq(s, "tmpfs /h\xc3\xa9#x tmpfs rw 0 0\n");
	free(s);
}

Test(mountinfo, a_short_buffer_is_cut_and_terminated)
{
	struct vfs_mount_info m =
		entry("/a b", "tmpfs", "tmpfs", ST_NOSUID, "");
	char buf[12];
	size_t n = mount_format(buf, sizeof(buf), &m, MOUNT_STYLE_MOUNTS);

	cr_assert_eq(n, strlen("tmpfs /a\\040b tmpfs rw,nosuid 0 0\n"));
	cr_assert_str_eq(buf, "tmpfs /a\\04");
	cr_assert_eq(mount_format(buf, 1, &m, MOUNT_STYLE_MOUNTS), n);
	cr_assert_str_eq(buf, "");
}
