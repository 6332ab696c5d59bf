/* prot/p9.h: 9P2000.L wire codec (the subset moat's gofer speaks).
 *
 * Wire format: little-endian, every message is size[4] type[1] tag[2] body,
 * where size counts the whole message including itself. Strings are
 * len[2] bytes (not NUL-terminated on the wire). A qid is type[1]
 * version[4] path[8].
 *
 * This module is pure: no I/O, no allocation. Decoding never reads outside
 * [buf, buf+len) and never trusts a length field; strings in a decoded
 * message point INTO the caller's buffer (struct p9_str), so the buffer must
 * outlive the decoded message. Decoded strings may contain NUL bytes: users
 * that need C strings must check with p9_str_is_name()/memchr themselves.
 *
 * Both directions (T and R messages) are encoded and decoded, so the gofer
 * (decodes T, encodes R) and the sentry client (encodes T, decodes R) share
 * one implementation and the tests can round-trip every message.
 */
#ifndef MOAT_PROT_P9_H
#define MOAT_PROT_P9_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define P9_VERSION_L "9P2000.L"
#define P9_VERSION_UNKNOWN "unknown"

#define P9_NOTAG 0xffffu
#ifndef P9_NOFID
#define P9_NOFID 0xffffffffu
#endif
#define P9_NONUNAME 0xffffffffu

#define P9_HDR_SIZE 7u	 /* size[4] type[1] tag[2] */
#define P9_QID_SIZE 13u	 /* type[1] version[4] path[8] */
#define P9_MAX_WELEM 16u /* most names in one Twalk (9P limit) */
/* Rreaddir is header + count[4] + data: the data may use msize minus this. */
#define P9_READDIR_HDR (P9_HDR_SIZE + 4u)

/* Message size bounds. The gofer negotiates any client msize down to
 * P9_MAX_MSIZE, which bounds the buffers a peer can make us allocate; below
 * P9_MIN_MSIZE a PATH_MAX readlink reply or a NAME_MAX dirent may not fit. */
#define P9_MAX_MSIZE (1u << 20)
#define P9_MIN_MSIZE 4096u

/* Most fids one connection may hold (gofer table bound, client allocator). */
#define P9_MAX_FIDS 65536u

/* qid.type bits */
#define P9_QTDIR 0x80u
#define P9_QTAPPEND 0x40u
#define P9_QTEXCL 0x20u
#define P9_QTMOUNT 0x10u
#define P9_QTAUTH 0x08u
#define P9_QTTMP 0x04u
#define P9_QTSYMLINK 0x02u
#define P9_QTLINK 0x01u
#define P9_QTFILE 0x00u

/* Tgetattr request_mask / Rgetattr valid bits */
#define P9_GETATTR_MODE 0x00000001ull
#define P9_GETATTR_NLINK 0x00000002ull
#define P9_GETATTR_UID 0x00000004ull
#define P9_GETATTR_GID 0x00000008ull
#define P9_GETATTR_RDEV 0x00000010ull
#define P9_GETATTR_ATIME 0x00000020ull
#define P9_GETATTR_MTIME 0x00000040ull
#define P9_GETATTR_CTIME 0x00000080ull
#define P9_GETATTR_INO 0x00000100ull
#define P9_GETATTR_SIZE 0x00000200ull
#define P9_GETATTR_BLOCKS 0x00000400ull
#define P9_GETATTR_BTIME 0x00000800ull
#define P9_GETATTR_GEN 0x00001000ull
#define P9_GETATTR_DATA_VERSION 0x00002000ull
#define P9_GETATTR_BASIC 0x000007ffull
#define P9_GETATTR_ALL 0x00003fffull

/* Tlopen flags: the 9P2000.L ("dotl") encoding, which is the Linux generic
 * (x86) numbering. Converted explicitly at both ends so a host with other
 * O_* values would still speak the wire format. */
#define P9_DOTL_RDONLY 00000000u
#define P9_DOTL_WRONLY 00000001u
#define P9_DOTL_RDWR 00000002u
#define P9_DOTL_ACCMODE 00000003u
#define P9_DOTL_CREATE 00000100u
#define P9_DOTL_EXCL 00000200u
#define P9_DOTL_NOCTTY 00000400u
#define P9_DOTL_TRUNC 00001000u
#define P9_DOTL_APPEND 00002000u
#define P9_DOTL_NONBLOCK 00004000u
#define P9_DOTL_DSYNC 00010000u
#define P9_DOTL_FASYNC 00020000u
#define P9_DOTL_DIRECT 00040000u
#define P9_DOTL_LARGEFILE 00100000u
#define P9_DOTL_DIRECTORY 00200000u
#define P9_DOTL_NOFOLLOW 00400000u
#define P9_DOTL_NOATIME 01000000u
#define P9_DOTL_CLOEXEC 02000000u
#define P9_DOTL_SYNC 04000000u

/* Host open(2) flags <-> dotl flags. Bits with no counterpart are dropped
 * by p9_flags_to_dotl and reported by p9_flags_from_dotl (returns -EINVAL
 * when a dotl bit is unknown). */
uint32_t p9_flags_to_dotl(int flags);
int p9_flags_from_dotl(uint32_t dotl, int *flags);

enum p9_msg_type {
	P9_TLERROR = 6,
	P9_RLERROR = 7,
	P9_TSTATFS = 8,
	P9_RSTATFS = 9,
	P9_TLOPEN = 12,
	P9_RLOPEN = 13,
	P9_TLCREATE = 14,
	P9_RLCREATE = 15,
	P9_TSYMLINK = 16,
	P9_RSYMLINK = 17,
	P9_TMKNOD = 18,
	P9_RMKNOD = 19,
	P9_TRENAME = 20,
	P9_RRENAME = 21,
	P9_TREADLINK = 22,
	P9_RREADLINK = 23,
	P9_TGETATTR = 24,
	P9_RGETATTR = 25,
	P9_TSETATTR = 26,
	P9_RSETATTR = 27,
	P9_TXATTRWALK = 30,
	P9_RXATTRWALK = 31,
	P9_TXATTRCREATE = 32,
	P9_RXATTRCREATE = 33,
	P9_TREADDIR = 40,
	P9_RREADDIR = 41,
	P9_TFSYNC = 50,
	P9_RFSYNC = 51,
	P9_TLOCK = 52,
	P9_RLOCK = 53,
	P9_TGETLOCK = 54,
	P9_RGETLOCK = 55,
	P9_TLINK = 70,
	P9_RLINK = 71,
	P9_TMKDIR = 72,
	P9_RMKDIR = 73,
	P9_TRENAMEAT = 74,
	P9_RRENAMEAT = 75,
	P9_TUNLINKAT = 76,
	P9_RUNLINKAT = 77,
	P9_TVERSION = 100,
	P9_RVERSION = 101,
	P9_TAUTH = 102,
	P9_RAUTH = 103,
	P9_TATTACH = 104,
	P9_RATTACH = 105,
	P9_TERROR = 106, /* never valid on the wire */
	P9_RERROR = 107, /* 9P2000 only; .L uses Rlerror */
	P9_TFLUSH = 108,
	P9_RFLUSH = 109,
	P9_TWALK = 110,
	P9_RWALK = 111,
	P9_TOPEN = 112,
	P9_ROPEN = 113,
	P9_TCREATE = 114,
	P9_RCREATE = 115,
	P9_TREAD = 116,
	P9_RREAD = 117,
	P9_TWRITE = 118,
	P9_RWRITE = 119,
	P9_TCLUNK = 120,
	P9_RCLUNK = 121,
	P9_TREMOVE = 122,
	P9_RREMOVE = 123,
	P9_TSTAT = 124,
	P9_RSTAT = 125,
	P9_TWSTAT = 126,
	P9_RWSTAT = 127,
};

struct p9_qid {
	uint8_t type;
	uint32_t version;
	uint64_t path;
};

/* A string inside a message buffer: NOT NUL-terminated, may contain NULs. */
struct p9_str {
	const char *s;
	uint16_t len;
};

/* Rgetattr body (all fields, in wire order). */
struct p9_attr {
	uint64_t valid;
	struct p9_qid qid;
	uint32_t mode;
	uint32_t uid;
	uint32_t gid;
	uint64_t nlink;
	uint64_t rdev;
	uint64_t size;
	uint64_t blksize;
	uint64_t blocks;
	uint64_t atime_sec;
	uint64_t atime_nsec;
	uint64_t mtime_sec;
	uint64_t mtime_nsec;
	uint64_t ctime_sec;
	uint64_t ctime_nsec;
	uint64_t btime_sec;
	uint64_t btime_nsec;
	uint64_t gen;
	uint64_t data_version;
};

/* Tsetattr valid bits (the Linux client's). */
#define P9_SETATTR_MODE 0x1u
#define P9_SETATTR_UID 0x2u
#define P9_SETATTR_GID 0x4u
#define P9_SETATTR_SIZE 0x8u
#define P9_SETATTR_ATIME 0x10u
#define P9_SETATTR_MTIME 0x20u
#define P9_SETATTR_CTIME 0x40u
#define P9_SETATTR_ATIME_SET 0x80u
#define P9_SETATTR_MTIME_SET 0x100u

struct p9_statfs {
	uint32_t type;
	uint32_t bsize;
	uint64_t blocks;
	uint64_t bfree;
	uint64_t bavail;
	uint64_t files;
	uint64_t ffree;
	uint64_t fsid;
	uint32_t namelen;
};

/* One message of the subset. `type` selects the union member:
 *   Tversion/Rversion  version      Tattach   tattach    Rattach  rattach
 *   Twalk              twalk        Rwalk     rwalk
 *   Tlopen             tlopen       Rlopen    rlopen
 *   Tgetattr           tgetattr     Rgetattr  rgetattr
 *   Treaddir           treaddir     Rreaddir  rreaddir
 *   Treadlink/Tstatfs/Tclunk  fid   Rreadlink rreadlink
 *   Rstatfs            rstatfs      Rlerror   rlerror    Rclunk   (no body)
 * The write side (served only by a gofer started read-write):
 *   Tlcreate/Tmkdir/Tsymlink/Tmknod  tcreate    Rlcreate  rlopen
 *   Rmkdir/Rsymlink/Rmknod  rattach (the new qid)
 *   Tsetattr  tsetattr   Tfsync  tfsync   Tlink  tlink   Trenameat  trenameat
 *   Tunlinkat tunlinkat  Rsetattr/Rfsync/Rlink/Rrenameat/Runlinkat (no body)
 * Extended attributes (read: any gofer; create: a writable one):
 *   Txattrwalk txattrwalk  Rxattrwalk rxattrwalk  Txattrcreate txattrcreate
 *   Rxattrcreate (no body)  Tread/Twrite rw  Rread/Rwrite rrw (on xattr fids
 *   only: file data goes through donated fds)
 */
struct p9_msg {
	uint8_t type; /* enum p9_msg_type */
	uint16_t tag;
	union {
		struct {
			uint32_t msize;
			struct p9_str version;
		} version;
		struct {
			uint32_t fid;
			uint32_t afid;
			struct p9_str uname;
			struct p9_str aname;
			uint32_t n_uname;
		} tattach;
		struct {
			struct p9_qid qid;
		} rattach;
		struct {
			uint32_t fid;
			uint32_t newfid;
			uint16_t nwname;
			struct p9_str wname[P9_MAX_WELEM];
		} twalk;
		struct {
			uint16_t nwqid;
			struct p9_qid wqid[P9_MAX_WELEM];
		} rwalk;
		struct {
			uint32_t fid;
			uint32_t flags; /* dotl encoding */
		} tlopen;
		struct {
			struct p9_qid qid;
			uint32_t iounit;
		} rlopen;
		struct {
			uint32_t fid;
			uint64_t request_mask;
		} tgetattr;
		struct p9_attr rgetattr;
		struct {
			uint32_t fid;
			uint64_t offset;
			uint32_t count;
		} treaddir;
		struct {
			uint32_t count;
			const uint8_t *data; /* count bytes of dirents */
		} rreaddir;
		struct {
			uint32_t fid;
		} fid; /* Treadlink, Tstatfs, Tclunk */
		struct {
			struct p9_str target;
		} rreadlink;
		struct p9_statfs rstatfs;
		struct {
			uint32_t ecode;
		} rlerror;
		/* Tlcreate: dfid name flags mode gid; Tmkdir: dfid name mode
		 * gid; Tsymlink: dfid name target gid; Tmknod: dfid name mode
		 * major minor gid. Unused fields are ignored. */
		struct {
			uint32_t dfid;
			struct p9_str name;
			struct p9_str target;
			uint32_t flags;
			uint32_t mode;
			uint32_t major;
			uint32_t minor;
			uint32_t gid;
		} tcreate;
		struct {
			uint32_t fid;
			uint32_t valid; /* P9_SETATTR_* */
			uint32_t mode;
			uint32_t uid;
			uint32_t gid;
			uint64_t size;
			uint64_t atime_sec;
			uint64_t atime_nsec;
			uint64_t mtime_sec;
			uint64_t mtime_nsec;
		} tsetattr;
		struct {
			uint32_t fid;
			uint32_t datasync;
		} tfsync;
		struct {
			uint32_t dfid;
			uint32_t fid;
			struct p9_str name;
		} tlink;
		struct {
			uint32_t olddfid;
			struct p9_str oldname;
			uint32_t newdfid;
			struct p9_str newname;
		} trenameat;
		struct {
			uint32_t dfid;
			struct p9_str name;
			uint32_t flags; /* AT_REMOVEDIR */
		} tunlinkat;
		struct {
			uint32_t fid;
			uint32_t newfid;
			struct p9_str name; /* empty: the list of names */
		} txattrwalk;
		struct {
			uint64_t size;
		} rxattrwalk;
		struct {
			uint32_t fid;
			struct p9_str name;
			uint64_t size;
			uint32_t flags; /* XATTR_CREATE, XATTR_REPLACE */
		} txattrcreate;
		struct {
			uint32_t fid;
			uint64_t offset;
			uint32_t count;
			const uint8_t *data; /* Twrite only */
		} rw;			     /* Tread, Twrite */
		struct {
			uint32_t count;
			const uint8_t *data; /* Rread only */
		} rrw;			     /* Rread, Rwrite */
	} u;
};

/* Read the header of a message. Needs len >= P9_HDR_SIZE; does not check
 * that size matches len. Returns 0 or -EPROTO. */
int p9_peek_header(const uint8_t *buf, size_t len, uint32_t *size,
		   uint8_t *type, uint16_t *tag);

/* Decode exactly one complete message of `len` bytes (size field must equal
 * len; trailing bytes are an error). On any result, m->type and m->tag are
 * filled when len >= P9_HDR_SIZE so a server can address its Rlerror.
 * Returns 0, -EPROTO (malformed: truncated, size mismatch, counts that
 * overrun the message, nwname/nwqid > 16, trailing garbage) or -EOPNOTSUPP
 * (well-formed header, type outside the subset). */
int p9_decode(const uint8_t *buf, size_t len, struct p9_msg *m);

/* Encode m into buf[0..cap). On success *len is the message size (written
 * into the size field). Returns 0, -EMSGSIZE (does not fit in cap) or
 * -EINVAL (type outside the subset, nwname/nwqid > 16). Rreaddir data may
 * alias buf + P9_READDIR_HDR (it is moved, not copied blindly). */
int p9_encode(const struct p9_msg *m, uint8_t *buf, size_t cap, size_t *len);

/* Rreaddir payload helpers: entries are qid[13] offset[8] type[1] name[s].
 * p9_dirent_put appends at *pos; -EMSGSIZE (and *pos unchanged) when the
 * entry does not fit in cap. p9_dirent_get reads the entry at *pos: 1 with
 * an entry (name points into buf), 0 at the end, -EPROTO if truncated. */
int p9_dirent_put(uint8_t *buf, size_t cap, size_t *pos,
		  const struct p9_qid *qid, uint64_t off, uint8_t type,
		  const char *name, size_t namelen);
int p9_dirent_get(const uint8_t *buf, size_t len, size_t *pos,
		  struct p9_qid *qid, uint64_t *off, uint8_t *type,
		  struct p9_str *name);

/* Size on the wire of one dirent with a name of namelen bytes. */
static inline size_t p9_dirent_size(size_t namelen)
{
	return P9_QID_SIZE + 8 + 1 + 2 + namelen;
}

/* true if s is a usable single path component: 1..255 bytes, no NUL, no
 * '/', and not "." or "..". */
bool p9_str_is_name(const struct p9_str *s);

/* Compare a wire string with a C string. */
bool p9_str_eq(const struct p9_str *s, const char *c);

/* Point s at the C string c. -ENAMETOOLONG if longer than 65535 bytes. */
int p9_str_set(struct p9_str *s, const char *c);

/* Name of a message type for logs ("Twalk"), or NULL if unknown. */
const char *p9_type_name(uint8_t type);

#endif
