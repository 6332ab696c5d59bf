/* netstack/hostaddr.c: the host's own addresses over rtnetlink (see
 * hostaddr.h). */
#include "netstack/hostaddr.h"

#include <errno.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "lib/util.h"

#ifndef NETLINK_GET_STRICT_CHK
#define NETLINK_GET_STRICT_CHK 12
#endif

#define NL_BUF 32768

static uint32_t seq;

/* NLMSG_OK and NLMSG_NEXT, without their int lengths. */
static bool nl_ok(const struct nlmsghdr *nh, size_t left)
{
	return left >= sizeof(*nh) && nh->nlmsg_len >= sizeof(*nh) &&
	       nh->nlmsg_len <= left;
}

static struct nlmsghdr *nl_next(struct nlmsghdr *nh, size_t *left)
{
	size_t len = NLMSG_ALIGN(nh->nlmsg_len);

	*left = len < *left ? *left - len : 0;
	return (struct nlmsghdr *)((char *)nh + len);
}

int hostaddr_socket(bool events)
{
	static const unsigned groups[] = {
		RTNLGRP_IPV4_IFADDR, RTNLGRP_IPV6_IFADDR, RTNLGRP_IPV4_ROUTE,
		RTNLGRP_IPV6_ROUTE,  RTNLGRP_IPV4_RULE,	  RTNLGRP_IPV6_RULE,
	};
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	int fd = socket(AF_NETLINK,
			SOCK_RAW | SOCK_CLOEXEC | (events ? SOCK_NONBLOCK : 0),
			NETLINK_ROUTE);
	int one = 1, rc;
	size_t i;

	if (fd < 0)
		return -errno;
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		goto fail;
	if (events) {
		/* Room for a burst (a few hundred addresses added at once);
		 * an overflow is noticed (ENOBUFS) and read as "everything
		 * changed". */
		int sz = 1 << 20;

		if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &sz,
			       sizeof(sz)) < 0)
			setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
		for (i = 0; i < ARRAY_SIZE(groups); i++)
			if (setsockopt(fd, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP,
				       &groups[i], sizeof(groups[i])) < 0)
				goto fail;
		return fd;
	}
	/* Strict checking lets a dump ask for the local table alone (a
	 * router's main table may hold a million routes); without it (old
	 * kernels) the dump is filtered here. */
	setsockopt(fd, SOL_NETLINK, NETLINK_GET_STRICT_CHK, &one, sizeof(one));
	{
		/* the kernel answers a request at once; a helper must never
		 * hang on it */
		struct timeval tv = { .tv_sec = 2 };

		if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) <
		    0)
			goto fail;
	}
	return fd;
fail:
	rc = -errno;
	close(fd);
	return rc;
}

static int nl_send(int fd, struct nlmsghdr *nh)
{
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };

	nh->nlmsg_seq = ++seq;
	if (sendto(fd, nh, nh->nlmsg_len, 0, (struct sockaddr *)&kernel,
		   sizeof(kernel)) < 0)
		return -errno;
	return 0;
}

static void put_attr(struct nlmsghdr *nh, size_t cap, unsigned short type,
		     const void *data, size_t len)
{
	struct rtattr *a =
		(struct rtattr *)((char *)nh + NLMSG_ALIGN(nh->nlmsg_len));

	MOAT_ASSERT(NLMSG_ALIGN(nh->nlmsg_len) + RTA_SPACE(len) <= cap);
	a->rta_type = type;
	a->rta_len = (unsigned short)RTA_LENGTH(len);
	memcpy(RTA_DATA(a), data, len);
	nh->nlmsg_len = (uint32_t)(NLMSG_ALIGN(nh->nlmsg_len) + RTA_SPACE(len));
}

static bool delivered_here(unsigned type)
{
	return type == RTN_LOCAL || type == RTN_BROADCAST ||
	       type == RTN_ANYCAST || type == RTN_MULTICAST;
}

int hostaddr_is_local(int fd, int family, const uint8_t *addr)
{
	union {
		struct nlmsghdr nh;
		char buf[128];
	} req;
	static char buf[NL_BUF];
	struct rtmsg *rt;
	ssize_t n;

	if (family != AF_INET && family != AF_INET6)
		return -EAFNOSUPPORT;
	memset(&req, 0, sizeof(req));
	req.nh.nlmsg_len = NLMSG_LENGTH(sizeof(*rt));
	req.nh.nlmsg_type = RTM_GETROUTE;
	req.nh.nlmsg_flags = NLM_F_REQUEST;
	rt = NLMSG_DATA(&req.nh);
	rt->rtm_family = (unsigned char)family;
	rt->rtm_dst_len = family == AF_INET ? 32 : 128;
	put_attr(&req.nh, sizeof(req), RTA_DST, addr,
		 family == AF_INET ? 4 : 16);
	if (nl_send(fd, &req.nh) < 0)
		return -errno;
	for (;;) {
		struct nlmsghdr *nh;

		n = recv(fd, buf, sizeof(buf), 0);
		if (n < 0)
			return errno == EAGAIN ? -ETIMEDOUT : -errno;
		size_t left = (size_t)n;

		for (nh = (struct nlmsghdr *)buf; nl_ok(nh, left);
		     nh = nl_next(nh, &left)) {
			if (nh->nlmsg_seq != seq)
				continue; /* a late answer to an earlier one */
			if (nh->nlmsg_type == NLMSG_ERROR) {
				const struct nlmsgerr *e = NLMSG_DATA(nh);

				if (nh->nlmsg_len < NLMSG_LENGTH(sizeof(*e)))
					return -EPROTO;
				/* No route (unreachable, prohibited, no
				 * such network) is no local delivery; only
				 * a kernel that could not answer is an
				 * error. */
				if (e->error == -ENOBUFS || e->error == -ENOMEM)
					return e->error;
				return 0;
			}
			if (nh->nlmsg_type != RTM_NEWROUTE ||
			    nh->nlmsg_len < NLMSG_LENGTH(sizeof(*rt)))
				return -EPROTO;
			rt = NLMSG_DATA(nh);
			return delivered_here(rt->rtm_type) ? 1 : 0;
		}
	}
}

/* ---- dumps ------------------------------------------------------------------- */

int hostaddr_set_add(struct hostaddr_set *s, int family, unsigned prefix,
		     const uint8_t *addr)
{
	struct hostaddr *h;

	if (family != AF_INET && family != AF_INET6)
		return 0;
	if (prefix > (family == AF_INET ? 32u : 128u))
		return -EINVAL;
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 64;

		if (cap > HOSTADDR_SET_MAX)
			return -ENOMEM;
		h = realloc(s->v, cap * sizeof(*h));
		if (!h)
			return -ENOMEM;
		s->v = h;
		s->cap = cap;
	}
	h = &s->v[s->n++];
	memset(h, 0, sizeof(*h));
	h->family = (uint8_t)family;
	h->prefix = (uint8_t)prefix;
	memcpy(h->addr, addr, family == AF_INET ? 4 : 16);
	return 0;
}

void hostaddr_set_free(struct hostaddr_set *s)
{
	free(s->v);
	s->v = NULL;
	s->n = s->cap = 0;
}

static const struct rtattr *find_attr(const struct rtattr *a, int len,
				      unsigned short type)
{
	for (; RTA_OK(a, len); a = RTA_NEXT(a, len))
		if (a->rta_type == type)
			return a;
	return NULL;
}

static int addr_len(int family)
{
	return family == AF_INET ? 4 : family == AF_INET6 ? 16 : 0;
}

/* One RTM_NEWADDR: its address, whole. */
static int take_addr(const struct nlmsghdr *nh, struct hostaddr_set *out)
{
	const struct ifaddrmsg *ifa = NLMSG_DATA(nh);
	const struct rtattr *a, *attrs;
	int len = (int)nh->nlmsg_len - (int)NLMSG_LENGTH(sizeof(*ifa));
	int alen;

	if (len < 0)
		return -EPROTO;
	alen = addr_len(ifa->ifa_family);
	if (!alen)
		return 0;
	attrs = (const struct rtattr *)((const char *)ifa +
					NLMSG_ALIGN(sizeof(*ifa)));
	/* IFA_LOCAL is ours (IFA_ADDRESS is the peer's on a point-to-point
	 * link); IPv6 gives IFA_ADDRESS alone */
	a = find_attr(attrs, len, IFA_LOCAL);
	if (!a)
		a = find_attr(attrs, len, IFA_ADDRESS);
	if (!a || RTA_PAYLOAD(a) < (size_t)alen)
		return 0;
	return hostaddr_set_add(out, ifa->ifa_family, (unsigned)alen * 8,
				RTA_DATA(a));
}

/* Is this route one of the local table's local, broadcast or anycast
 * ones (an address's own, or an AnyIP prefix)? Its prefix into h. */
static bool local_route(const struct nlmsghdr *nh, struct hostaddr *h)
{
	const struct rtmsg *rt = NLMSG_DATA(nh);
	const struct rtattr *a, *attrs;
	int len = (int)nh->nlmsg_len - (int)NLMSG_LENGTH(sizeof(*rt));
	unsigned table;
	int alen;

	if (len < 0 ||
	    (nh->nlmsg_type != RTM_NEWROUTE && nh->nlmsg_type != RTM_DELROUTE))
		return false;
	alen = addr_len(rt->rtm_family);
	if (!alen || rt->rtm_dst_len > alen * 8)
		return false;
	if (rt->rtm_type != RTN_LOCAL && rt->rtm_type != RTN_BROADCAST &&
	    rt->rtm_type != RTN_ANYCAST)
		return false;
	attrs = (const struct rtattr *)((const char *)rt +
					NLMSG_ALIGN(sizeof(*rt)));
	table = rt->rtm_table;
	a = find_attr(attrs, len, RTA_TABLE);
	if (a && RTA_PAYLOAD(a) >= 4)
		memcpy(&table, RTA_DATA(a), 4);
	if (table != RT_TABLE_LOCAL)
		return false;
	memset(h, 0, sizeof(*h));
	h->family = rt->rtm_family;
	h->prefix = rt->rtm_dst_len;
	a = find_attr(attrs, len, RTA_DST);
	if (a && RTA_PAYLOAD(a) >= (size_t)alen)
		memcpy(h->addr, RTA_DATA(a), (size_t)alen);
	else if (rt->rtm_dst_len)
		return false;
	return true;
}

/* A dump of type (RTM_GETADDR or RTM_GETROUTE) into out. */
static int dump(int fd, int type, struct hostaddr_set *out)
{
	union {
		struct nlmsghdr nh;
		char buf[128];
	} req;
	static char buf[NL_BUF];
	ssize_t n;
	int rc;

	memset(&req, 0, sizeof(req));
	req.nh.nlmsg_type = (unsigned short)type;
	req.nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	if (type == RTM_GETADDR) {
		req.nh.nlmsg_len = NLMSG_LENGTH(sizeof(struct ifaddrmsg));
	} else {
		struct rtmsg *rt = NLMSG_DATA(&req.nh);
		uint32_t table = RT_TABLE_LOCAL;

		req.nh.nlmsg_len = NLMSG_LENGTH(sizeof(*rt));
		rt->rtm_table = RT_TABLE_LOCAL;
		put_attr(&req.nh, sizeof(req), RTA_TABLE, &table,
			 sizeof(table));
	}
	rc = nl_send(fd, &req.nh);
	if (rc < 0)
		return rc;
	for (;;) {
		struct nlmsghdr *nh;

		n = recv(fd, buf, sizeof(buf), 0);
		if (n < 0)
			return errno == EAGAIN ? -ETIMEDOUT : -errno;
		if (n == 0)
			return -EPROTO;
		size_t left = (size_t)n;

		for (nh = (struct nlmsghdr *)buf; nl_ok(nh, left);
		     nh = nl_next(nh, &left)) {
			struct hostaddr h;

			if (nh->nlmsg_seq != seq)
				continue;
			if (nh->nlmsg_type == NLMSG_DONE)
				return 0;
			if (nh->nlmsg_type == NLMSG_ERROR) {
				const struct nlmsgerr *e = NLMSG_DATA(nh);

				if (nh->nlmsg_len < NLMSG_LENGTH(sizeof(*e)))
					return -EPROTO;
				/* a kernel without IPv6 has no table for it */
				if (e->error == -ENOENT && type == RTM_GETROUTE)
					return 0;
				return e->error ? e->error : -EPROTO;
			}
			if (type == RTM_GETADDR &&
			    nh->nlmsg_type == RTM_NEWADDR) {
				rc = take_addr(nh, out);
			} else if (type == RTM_GETROUTE &&
				   local_route(nh, &h)) {
				rc = hostaddr_set_add(out, h.family, h.prefix,
						      h.addr);
			} else {
				continue;
			}
			if (rc < 0)
				return rc;
		}
	}
}

int hostaddr_dump(int fd, struct hostaddr_set *out)
{
	int rc;

	out->n = 0;
	rc = dump(fd, RTM_GETADDR, out);
	if (rc == 0)
		rc = dump(fd, RTM_GETROUTE, out);
	if (rc < 0)
		out->n = 0;
	return rc;
}

int hostaddr_events(int fd)
{
	static char buf[NL_BUF];
	int mask = 0;
	ssize_t n;

	for (;;) {
		struct nlmsghdr *nh;

		n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EAGAIN)
				return mask;
			if (errno == ENOBUFS) {
				/* lost some: anything may have changed */
				mask |= HOSTADDR_ROUTES | HOSTADDR_ADDRS;
				continue;
			}
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return mask;
		size_t left = (size_t)n;

		for (nh = (struct nlmsghdr *)buf; nl_ok(nh, left);
		     nh = nl_next(nh, &left)) {
			struct hostaddr h;

			switch (nh->nlmsg_type) {
			case RTM_NEWADDR:
			case RTM_DELADDR:
				mask |= HOSTADDR_ROUTES | HOSTADDR_ADDRS;
				break;
			case RTM_NEWROUTE:
			case RTM_DELROUTE:
				mask |= HOSTADDR_ROUTES;
				if (local_route(nh, &h))
					mask |= HOSTADDR_ADDRS;
				break;
			case RTM_NEWRULE:
			case RTM_DELRULE:
				mask |= HOSTADDR_ROUTES;
				break;
			default:
				break;
			}
		}
	}
}
