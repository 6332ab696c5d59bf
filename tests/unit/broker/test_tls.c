/* tests/unit/broker/test_tls.c: the broker's TLS (broker/tls.c): the
 * sandbox CA, its leaves, the guest-side server and the upstream client,
 * with handshakes over socketpairs in one thread. */
#include <criterion/criterion.h>

#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include "broker/tls.h"

static int fds_open(void)
{
	int n = 0;

	for (int fd = 0; fd < 1024; fd++)
		n += fcntl(fd, F_GETFD) >= 0;
	return n;
}

static int fds_before;

static void init(void)
{
	fds_before = fds_open();
}

static void fini(void)
{
	cr_assert_eq(fds_open(), fds_before, "a test leaked an fd");
}

TestSuite(tls, .init = init, .fini = fini);

static void tls_up(struct brk_tls *t, const char *id, const char *upca)
{
	struct moat_error err = { 0 };

	cr_assert_eq(brk_tls_init(t, id, "/nonexistent/roots", upca, &err), 0,
		     "%s", err.msg);
}

/* Does leaf verify against a store of ca alone, for host (NULL: as a
 * chain, for no purpose)? */
static int verify(X509 *ca, X509 *leaf, const char *host)
{
	X509_STORE *st = X509_STORE_new();
	X509_STORE_CTX *ctx = X509_STORE_CTX_new();
	int rc;

	X509_STORE_add_cert(st, ca);
	X509_STORE_CTX_init(ctx, st, leaf, NULL);
	if (host) {
		X509_STORE_CTX_set_purpose(ctx, X509_PURPOSE_SSL_SERVER);
		X509_VERIFY_PARAM_set1_host(X509_STORE_CTX_get0_param(ctx),
					    host, 0);
	}
	rc = X509_verify_cert(ctx) == 1 ? X509_V_OK :
					  X509_STORE_CTX_get_error(ctx);
	X509_STORE_CTX_free(ctx);
	X509_STORE_free(st);
	return rc;
}

Test(tls, ca)
{
	struct brk_tls t;
	char cn[128];
	BIO *bio;
	X509 *pem;
	BASIC_CONSTRAINTS *bc;
	ASN1_BIT_STRING *ku;
	int crit = 0;
	time_t now = time(NULL), soon = now - 3000, later = now + 29L * 86400,
	       much_later = now + 31L * 86400;

	tls_up(&t, "sb1", NULL);
	X509_NAME_get_text_by_NID(X509_get_subject_name(t.ca), NID_commonName,
				  cn, sizeof(cn));
	cr_assert_str_eq(cn, "moat sandbox CA sb1");
	bc = X509_get_ext_d2i(t.ca, NID_basic_constraints, &crit, NULL);
	cr_assert_not_null(bc);
	cr_assert(bc->ca);
	cr_assert_eq(crit, 1);
	BASIC_CONSTRAINTS_free(bc);
	ku = X509_get_ext_d2i(t.ca, NID_key_usage, &crit, NULL);
	cr_assert_not_null(ku);
	cr_assert(ASN1_BIT_STRING_get_bit(ku, 5), "keyCertSign");
	ASN1_BIT_STRING_free(ku);
	cr_assert_eq(EVP_PKEY_get_base_id(t.ca_key), EVP_PKEY_EC);
	cr_assert_eq(EVP_PKEY_get_bits(t.ca_key), 256);
	/* valid from before now (an hour: clocks differ) to about 30 days */
	cr_assert_lt(X509_cmp_time(X509_get0_notBefore(t.ca), &soon), 0);
	cr_assert_gt(X509_cmp_time(X509_get0_notAfter(t.ca), &later), 0);
	cr_assert_lt(X509_cmp_time(X509_get0_notAfter(t.ca), &much_later), 0);
	/* self-signed, and what BRK_CA carries is the same certificate */
	cr_assert_eq(verify(t.ca, t.ca, NULL), X509_V_OK);
	bio = BIO_new_mem_buf(t.ca_pem, -1);
	pem = PEM_read_bio_X509(bio, NULL, NULL, NULL);
	cr_assert_not_null(pem);
	cr_assert_eq(X509_cmp(pem, t.ca), 0);
	X509_free(pem);
	BIO_free(bio);
	brk_tls_free(&t);
}

Test(tls, serials_differ)
{
	struct brk_tls a, b;

	tls_up(&a, "a", NULL);
	tls_up(&b, "b", NULL);
	cr_assert_neq(ASN1_INTEGER_cmp(X509_get0_serialNumber(a.ca),
				       X509_get0_serialNumber(b.ca)),
		      0);
	/* and another sandbox's CA does not vouch for this one's leaves */
	{
		X509 *leaf = brk_tls_leaf(&a, "api.test");

		cr_assert_eq(verify(a.ca, leaf, "api.test"), X509_V_OK);
		cr_assert_neq(verify(b.ca, leaf, "api.test"), X509_V_OK);
		X509_free(leaf);
	}
	brk_tls_free(&a);
	brk_tls_free(&b);
}

Test(tls, leaf)
{
	struct brk_tls t;
	X509 *leaf, *again, *other;
	EXTENDED_KEY_USAGE *eku;
	BASIC_CONSTRAINTS *bc;

	tls_up(&t, "sb1", NULL);
	leaf = brk_tls_leaf(&t, "api.test");
	cr_assert_not_null(leaf);
	/* for its name, and no other */
	cr_assert_eq(verify(t.ca, leaf, "api.test"), X509_V_OK);
	cr_assert_eq(verify(t.ca, leaf, "other.test"),
		     X509_V_ERR_HOSTNAME_MISMATCH);
	cr_assert_eq(verify(t.ca, leaf, "x.api.test"),
		     X509_V_ERR_HOSTNAME_MISMATCH);
	eku = X509_get_ext_d2i(leaf, NID_ext_key_usage, NULL, NULL);
	cr_assert_not_null(eku);
	cr_assert_eq(sk_ASN1_OBJECT_num(eku), 1);
	cr_assert_eq(OBJ_obj2nid(sk_ASN1_OBJECT_value(eku, 0)),
		     NID_server_auth);
	EXTENDED_KEY_USAGE_free(eku);
	bc = X509_get_ext_d2i(leaf, NID_basic_constraints, NULL, NULL);
	cr_assert_not_null(bc);
	cr_assert(!bc->ca);
	BASIC_CONSTRAINTS_free(bc);
	/* from the cache the second time */
	again = brk_tls_leaf(&t, "api.test");
	cr_assert_eq(again, leaf);
	other = brk_tls_leaf(&t, "other.test");
	cr_assert_neq(ASN1_INTEGER_cmp(X509_get0_serialNumber(leaf),
				       X509_get0_serialNumber(other)),
		      0);
	cr_assert_eq(verify(t.ca, other, "other.test"), X509_V_OK);
	X509_free(leaf);
	X509_free(again);
	X509_free(other);
	brk_tls_free(&t);
}

Test(tls, leaf_names_refused)
{
	static const char *const bad[] = {
		"",    "a,DNS:evil.test", "Api.test", "a..b", ".a", "a.", "a b",
		"a/b", "*.api.test",	  "a\nb",
	};
	struct brk_tls t;
	char longname[300];

	tls_up(&t, "sb1", NULL);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_assert_null(brk_tls_leaf(&t, bad[i]), "`%s`", bad[i]);
	memset(longname, 'a', sizeof(longname));
	longname[254] = 0;
	cr_assert_null(brk_tls_leaf(&t, longname));
	memset(longname, 'a', 64);
	snprintf(longname + 64, sizeof(longname) - 64, ".test");
	cr_assert_null(brk_tls_leaf(&t, longname), "a label of 64");
	/* a long one without a CN still verifies by its SAN */
	{
		char name[200];
		X509 *leaf;

		memset(name, 'b', 63);
		name[63] = '.';
		memset(name + 64, 'c', 63);
		snprintf(name + 127, sizeof(name) - 127, ".test");
		leaf = brk_tls_leaf(&t, name);
		cr_assert_not_null(leaf);
		cr_assert_eq(verify(t.ca, leaf, name), X509_V_OK);
		X509_free(leaf);
	}
	ERR_clear_error();
	brk_tls_free(&t);
}

Test(tls, cache_bounded, .timeout = 120)
{
	struct brk_tls t;
	char name[64];
	X509 *first, *x;

	tls_up(&t, "sb1", NULL);
	first = brk_tls_leaf(&t, "n0.test");
	for (int i = 1; i < TLS_LEAF_CACHE + 8; i++) {
		snprintf(name, sizeof(name), "n%d.test", i);
		x = brk_tls_leaf(&t, name);
		cr_assert_not_null(x);
		X509_free(x);
		/* n1 is used all along: it stays */
		x = brk_tls_leaf(&t, "n1.test");
		X509_free(x);
	}
	cr_assert_eq(t.ncache, TLS_LEAF_CACHE);
	/* n0, the least recently used, went: a new one is made */
	x = brk_tls_leaf(&t, "n0.test");
	cr_assert_neq(x, first);
	X509_free(x);
	X509_free(first);
	brk_tls_free(&t);
}

/* ---- handshakes --------------------------------------------------------- */

/* Step both ends of a socketpair's handshake until both are done or one
 * failed: 1 both done, 0 a failure. */
static int handshake_pair(SSL *srv, SSL *cli)
{
	bool sdone = false, cdone = false;

	for (int i = 0; i < 1000 && !(sdone && cdone); i++) {
		int r;

		if (!cdone) {
			r = SSL_do_handshake(cli);
			if (r == 1)
				cdone = true;
			else if (SSL_get_error(cli, r) != SSL_ERROR_WANT_READ &&
				 SSL_get_error(cli, r) != SSL_ERROR_WANT_WRITE)
				return 0;
		}
		if (!sdone) {
			r = SSL_do_handshake(srv);
			if (r == 1)
				sdone = true;
			else if (SSL_get_error(srv, r) != SSL_ERROR_WANT_READ &&
				 SSL_get_error(srv, r) != SSL_ERROR_WANT_WRITE)
				return 0;
		}
	}
	return sdone && cdone;
}

static void pair(int sv[2])
{
	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv),
		     0);
}

/* A client that trusts t's CA alone, as the guest does. */
static SSL *guest_client(struct brk_tls *t, int fd, const char *sni)
{
	static const unsigned char alpn[] = "\x02h2\x08http/1.1";
	SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
	SSL *ssl;

	X509_STORE_add_cert(SSL_CTX_get_cert_store(ctx), t->ca);
	SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
	ssl = SSL_new(ctx);
	SSL_CTX_free(ctx);
	SSL_set_fd(ssl, fd);
	SSL_set_tlsext_host_name(ssl, sni);
	SSL_set1_host(ssl, sni);
	SSL_set_alpn_protos(ssl, alpn, sizeof(alpn) - 1);
	SSL_set_connect_state(ssl);
	return ssl;
}

Test(tls, guest_side)
{
	struct brk_tls t;
	const unsigned char *proto;
	unsigned plen;
	int sv[2];
	SSL *srv, *cli;

	tls_up(&t, "sb1", NULL);
	pair(sv);
	srv = brk_tls_server(&t, sv[0], "api.test");
	cli = guest_client(&t, sv[1], "api.test");
	cr_assert_eq(handshake_pair(srv, cli), 1);
	cr_assert_eq(SSL_get_verify_result(cli), X509_V_OK);
	cr_assert(!brk_tls_sni_refused(srv));
	/* http/1.1 chosen though h2 came first */
	SSL_get0_alpn_selected(cli, &proto, &plen);
	cr_assert_eq(plen, 8);
	cr_assert_eq(memcmp(proto, "http/1.1", 8), 0);
	cr_assert_geq(SSL_version(cli), TLS1_2_VERSION);
	SSL_free(srv);
	SSL_free(cli);
	close(sv[0]);
	close(sv[1]);

	/* a ClientHello for another name fails before any certificate */
	pair(sv);
	srv = brk_tls_server(&t, sv[0], "api.test");
	cli = guest_client(&t, sv[1], "other.test");
	cr_assert_eq(handshake_pair(srv, cli), 0);
	cr_assert(brk_tls_sni_refused(srv));
	cr_assert_null(SSL_get0_peer_certificate(cli));
	SSL_free(srv);
	SSL_free(cli);
	close(sv[0]);
	close(sv[1]);
	ERR_clear_error();
	brk_tls_free(&t);
}

/* An upstream server on fd presenting the leaf of up for name. */
static SSL *upstream_server(struct brk_tls *up, int fd, const char *name)
{
	SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
	X509 *leaf = brk_tls_leaf(up, name);
	SSL *ssl;

	SSL_CTX_use_certificate(ctx, leaf);
	SSL_CTX_use_PrivateKey(ctx, up->leaf_key);
	X509_free(leaf);
	ssl = SSL_new(ctx);
	SSL_CTX_free(ctx);
	SSL_set_fd(ssl, fd);
	SSL_set_accept_state(ssl);
	return ssl;
}

/* client (of t) to a server with up's leaf for name, for host: the
 * verify result, or -1 if the handshake passed without one. */
static long upstream(struct brk_tls *t, struct brk_tls *up, const char *name,
		     const char *host)
{
	int sv[2];
	SSL *srv, *cli;
	long v;

	pair(sv);
	srv = upstream_server(up, sv[0], name);
	cli = brk_tls_client(t, sv[1], host, false);
	cr_assert_not_null(cli);
	v = handshake_pair(srv, cli) ?
		    (long)SSL_get_verify_result(cli) :
		    (SSL_get_verify_result(cli) == X509_V_OK ?
			     -1 :
			     (long)SSL_get_verify_result(cli));
	SSL_free(srv);
	SSL_free(cli);
	close(sv[0]);
	close(sv[1]);
	ERR_clear_error();
	return v;
}

Test(tls, upstream_side)
{
	struct brk_tls up, plain, trusting;
	char path[] = "/tmp/moat-upca-XXXXXX";
	int fd;

	tls_up(&up, "upstream", NULL);
	fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, up.ca_pem, strlen(up.ca_pem)),
		     (ssize_t)strlen(up.ca_pem));
	close(fd);

	/* no such root: refused */
	tls_up(&plain, "sb1", NULL);
	cr_assert_eq(upstream(&plain, &up, "api.test", "api.test"),
		     X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY);
	/* --upstream-ca: accepted, for its name only */
	tls_up(&trusting, "sb2", path);
	cr_assert_eq(upstream(&trusting, &up, "api.test", "api.test"),
		     X509_V_OK);
	cr_assert_eq(upstream(&trusting, &up, "api.test", "other.test"),
		     X509_V_ERR_HOSTNAME_MISMATCH);
	/* the sandbox's own CA is no root for upstream */
	cr_assert_eq(upstream(&trusting, &trusting, "api.test", "api.test"),
		     X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY);
	brk_tls_free(&plain);
	brk_tls_free(&trusting);
	brk_tls_free(&up);
	unlink(path);
}

Test(tls, upstream_ca_missing)
{
	struct brk_tls t;
	struct moat_error err = { 0 };

	cr_assert_lt(brk_tls_init(&t, "x", "/nonexistent/roots",
				  "/nonexistent/ca.pem", &err),
		     0);
	cr_assert_not_null(strstr(err.msg, "/nonexistent/ca.pem"), "%s",
			   err.msg);
	brk_tls_free(&t);
}
