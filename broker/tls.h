/* broker/tls.h: the broker's TLS: the sandbox's CA, the leaf certificates
 * it makes per SNI name, the server context the guest's TLS ends at, and
 * the client context for upstream (docs/credentials.md).
 *
 * Everything that reads a file (the host's root bundle, --upstream-ca)
 * happens in brk_tls_init, before the broker drops its privileges and
 * installs its seccomp filter: afterwards it opens nothing. The contexts
 * are shared by every flow's thread; an SSL object is used by one.
 */
#ifndef MOAT_BROKER_TLS_H
#define MOAT_BROKER_TLS_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include <openssl/ssl.h>
#include <openssl/x509.h>

#include "lib/util.h"

#define TLS_LEAF_CACHE 1024 /* leaf certificates kept, least recent out */
#define TLS_ROOTS_DEFAULT "/etc/ssl/certs/ca-certificates.crt"

struct tls_leaf {
	char name[256];
	X509 *cert;
	unsigned long used; /* the cache's clock when last used */
};

struct brk_tls {
	EVP_PKEY *ca_key;
	X509 *ca;
	EVP_PKEY *leaf_key;   /* one key for every leaf: made once */
	char *ca_pem;	      /* the CA certificate, PEM, NUL-terminated */
	SSL_CTX *server;      /* the guest's side */
	SSL_CTX *client;      /* upstream */
	pthread_mutex_t lock; /* the cache */
	struct tls_leaf *cache;
	size_t ncache;
	unsigned long clock;
};

/* The CA ("moat sandbox CA <id>", EC P-256, valid from an hour ago for 30
 * days), and both contexts: the client's trusts the bundle at roots
 * (NULL: TLS_ROOTS_DEFAULT; a missing file is no error, there are just
 * no host roots) and, if not NULL, the certificates in the file
 * upstream_ca (which must load). 0, or -errno with err set. */
int brk_tls_init(struct brk_tls *t, const char *id, const char *roots,
		 const char *upstream_ca, struct moat_error *err);
void brk_tls_free(struct brk_tls *t);

/* The leaf certificate for name (a DNS name: lower case, no trailing
 * dot), from the cache or made now and cached. A new reference (the
 * caller X509_free's it), or NULL on a bad name or ENOMEM. */
X509 *brk_tls_leaf(struct brk_tls *t, const char *name);

/* The guest's side of a flow on fd: a server SSL whose ClientHello must
 * name exactly sni (compared without case), else the handshake fails
 * with an unrecognized_name alert and brk_tls_sni_refused says so. The
 * leaf is chosen by that name. NULL on ENOMEM. */
SSL *brk_tls_server(struct brk_tls *t, int fd, const char *sni);
/* May ssl's handshake choose h2 (when the guest offers it)? Off at
 * first: on once upstream chose h2, so that both sides speak the same. */
void brk_tls_server_h2(SSL *ssl, bool on);
/* Did ssl's handshake fail because its SNI was not the flow's? */
bool brk_tls_sni_refused(SSL *ssl);

/* The upstream side on fd: a client SSL that sends host as SNI, offers
 * http/1.1 by ALPN (h2: h2 first, then http/1.1), and verifies the server's chain and that its
 * certificate is for host. NULL on ENOMEM. */
SSL *brk_tls_client(struct brk_tls *t, int fd, const char *host, bool h2);

#endif
