/* broker/tls.c: the sandbox's CA, its leaf certificates, and the two TLS
 * contexts of the broker (tls.h).
 *
 * The CA exists only in this process's memory, for the life of one
 * sandbox: nothing writes its key anywhere, so a certificate it signed
 * is worth nothing once the sandbox is gone, and trusting it (the guest
 * does, through the bundle the sentry serves) trusts nothing else.
 */
#include "broker/tls.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509v3.h>

#define CA_DAYS 30

/* What a server SSL remembers of its flow (SSL ex_data). */
struct sni_check {
	char want[256];
	bool refused;
	bool h2; /* h2 may be chosen: upstream speaks it */
};

static int sni_index = -1;
static pthread_once_t sni_once = PTHREAD_ONCE_INIT;

static void sni_free(void *parent, void *ptr, CRYPTO_EX_DATA *ad, int idx,
		     long argl, void *argp)
{
	(void)parent, (void)ad, (void)idx, (void)argl, (void)argp;
	free(ptr);
}

static void sni_index_make(void)
{
	sni_index = SSL_get_ex_new_index(0, NULL, NULL, NULL, sni_free);
}

/* A DNS name as it may appear in a certificate: letters, digits, '-',
 * '_' and dots between labels of at most 63; 253 in all. The sentry
 * sends SNI names lower case without a trailing dot; anything else here
 * is refused rather than signed. */
static bool dns_name_ok(const char *name)
{
	size_t len = strlen(name), label = 0;

	if (len == 0 || len > 253 || name[0] == '.' || name[len - 1] == '.')
		return false;
	for (const char *p = name; *p; p++) {
		if (*p == '.') {
			if (label == 0)
				return false;
			label = 0;
			continue;
		}
		if (!(islower((unsigned char)*p) ||
		      isdigit((unsigned char)*p) || *p == '-' || *p == '_'))
			return false;
		if (++label > 63)
			return false;
	}
	return true;
}

static int add_ext(X509 *x, X509 *issuer, int nid, const char *value)
{
	X509V3_CTX ctx;
	X509_EXTENSION *ext;
	int ok;

	X509V3_set_ctx(&ctx, issuer, x, NULL, NULL, 0);
	ext = X509V3_EXT_conf_nid(NULL, &ctx, nid, value);
	if (!ext)
		return -1;
	ok = X509_add_ext(x, ext, -1);
	X509_EXTENSION_free(ext);
	return ok ? 0 : -1;
}

/* A random positive serial of 127 bits: unique enough that no two
 * certificates of one CA share one. */
static int set_serial(X509 *x)
{
	BIGNUM *bn = BN_new();
	int ok;

	if (!bn)
		return -1;
	ok = BN_rand(bn, 127, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ANY) &&
	     BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(x));
	BN_free(bn);
	return ok ? 0 : -1;
}

static X509 *make_ca(EVP_PKEY *key, const char *id)
{
	X509 *x = X509_new();
	X509_NAME *name;
	char cn[64];

	if (!x)
		return NULL;
	snprintf(cn, sizeof(cn), "moat sandbox CA %s", id);
	name = X509_get_subject_name(x);
	if (!X509_set_version(x, 2) || set_serial(x) < 0 ||
	    !X509_gmtime_adj(X509_getm_notBefore(x), -3600) ||
	    !X509_gmtime_adj(X509_getm_notAfter(x), 86400L * CA_DAYS) ||
	    !X509_NAME_add_entry_by_txt(name, "O", MBSTRING_UTF8,
					(const unsigned char *)"moat", -1, -1,
					0) ||
	    !X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8,
					(const unsigned char *)cn, -1, -1, 0) ||
	    !X509_set_issuer_name(x, name) || !X509_set_pubkey(x, key) ||
	    add_ext(x, x, NID_basic_constraints, "critical,CA:TRUE") < 0 ||
	    add_ext(x, x, NID_key_usage, "critical,keyCertSign,cRLSign") < 0 ||
	    add_ext(x, x, NID_subject_key_identifier, "hash") < 0 ||
	    !X509_sign(x, key, EVP_sha256())) {
		X509_free(x);
		return NULL;
	}
	return x;
}

/* The subjectAltName of one DNS name, built as a structure: a name is
 * never pasted into OpenSSL's configuration syntax, where a comma would
 * add another entry. */
static int add_san(X509 *x, const char *dns)
{
	GENERAL_NAMES *gens = sk_GENERAL_NAME_new_null();
	GENERAL_NAME *gen = GENERAL_NAME_new();
	ASN1_IA5STRING *ia5 = ASN1_IA5STRING_new();
	int ok = 0;

	if (gens && gen && ia5 && ASN1_STRING_set(ia5, dns, (int)strlen(dns))) {
		GENERAL_NAME_set0_value(gen, GEN_DNS, ia5);
		ia5 = NULL;
		if (sk_GENERAL_NAME_push(gens, gen)) {
			gen = NULL;
			ok = X509_add1_ext_i2d(x, NID_subject_alt_name, gens, 0,
					       X509V3_ADD_DEFAULT);
		}
	}
	ASN1_IA5STRING_free(ia5);
	GENERAL_NAME_free(gen);
	sk_GENERAL_NAME_pop_free(gens, GENERAL_NAME_free);
	return ok == 1 ? 0 : -1;
}

static X509 *make_leaf(struct brk_tls *t, const char *dns)
{
	X509 *x = X509_new();
	X509_NAME *name;

	if (!x)
		return NULL;
	name = X509_get_subject_name(x);
	/* CN is limited to 64 characters; the SAN alone is what clients
	 * check, so a longer name goes without one. */
	if (strlen(dns) <= 64 &&
	    !X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8,
					(const unsigned char *)dns, -1, -1,
					0)) {
		X509_free(x);
		return NULL;
	}
	if (!X509_set_version(x, 2) || set_serial(x) < 0 ||
	    !X509_gmtime_adj(X509_getm_notBefore(x), -3600) ||
	    !X509_set1_notAfter(x, X509_get0_notAfter(t->ca)) ||
	    !X509_set_issuer_name(x, X509_get_subject_name(t->ca)) ||
	    !X509_set_pubkey(x, t->leaf_key) ||
	    add_ext(x, t->ca, NID_basic_constraints, "critical,CA:FALSE") < 0 ||
	    add_ext(x, t->ca, NID_key_usage, "critical,digitalSignature") < 0 ||
	    add_ext(x, t->ca, NID_ext_key_usage, "serverAuth") < 0 ||
	    add_ext(x, t->ca, NID_subject_key_identifier, "hash") < 0 ||
	    add_ext(x, t->ca, NID_authority_key_identifier, "keyid:always") <
		    0 ||
	    add_san(x, dns) < 0 || !X509_sign(x, t->ca_key, EVP_sha256())) {
		X509_free(x);
		return NULL;
	}
	return x;
}

X509 *brk_tls_leaf(struct brk_tls *t, const char *name)
{
	struct tls_leaf *slot = NULL;
	X509 *x;
	size_t i;

	if (!dns_name_ok(name))
		return NULL;
	pthread_mutex_lock(&t->lock);
	t->clock++;
	for (i = 0; i < t->ncache; i++) {
		if (!strcmp(t->cache[i].name, name)) {
			t->cache[i].used = t->clock;
			x = t->cache[i].cert;
			X509_up_ref(x);
			pthread_mutex_unlock(&t->lock);
			return x;
		}
	}
	pthread_mutex_unlock(&t->lock);

	/* Signing takes a while: not under the lock. Two flows that make
	 * the same leaf at once both cache it; the second replaces none
	 * (it finds the name) and just returns its own. */
	x = make_leaf(t, name);
	if (!x)
		return NULL;
	pthread_mutex_lock(&t->lock);
	for (i = 0; i < t->ncache; i++)
		if (!strcmp(t->cache[i].name, name))
			break;
	if (i == t->ncache) {
		if (t->ncache < TLS_LEAF_CACHE) {
			slot = &t->cache[t->ncache++];
		} else {
			/* the least recently used goes: a linear scan of
			 * at most TLS_LEAF_CACHE, cheap beside a signature */
			slot = &t->cache[0];
			for (i = 1; i < t->ncache; i++)
				if (t->cache[i].used < slot->used)
					slot = &t->cache[i];
			X509_free(slot->cert);
		}
		snprintf(slot->name, sizeof(slot->name), "%s", name);
		slot->cert = x;
		slot->used = t->clock;
		X509_up_ref(x);
	}
	pthread_mutex_unlock(&t->lock);
	return x;
}

/* The ClientHello's server name must be the flow's (which the sentry
 * read from the same ClientHello, and checked against the names the
 * destination was resolved from): the leaf is made for it, and a
 * handshake for any other name, or none, fails before a certificate is
 * chosen. */
static int sni_cb(SSL *ssl, int *alert, void *arg)
{
	struct brk_tls *t = arg;
	struct sni_check *chk = SSL_get_ex_data(ssl, sni_index);
	const char *name = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name);
	X509 *leaf;
	int ok;

	if (!chk) {
		*alert = SSL_AD_INTERNAL_ERROR;
		return SSL_TLSEXT_ERR_ALERT_FATAL;
	}
	if (!name || strcasecmp(name, chk->want)) {
		chk->refused = true;
		*alert = SSL_AD_UNRECOGNIZED_NAME;
		return SSL_TLSEXT_ERR_ALERT_FATAL;
	}
	leaf = brk_tls_leaf(t, chk->want);
	if (!leaf) {
		*alert = SSL_AD_INTERNAL_ERROR;
		return SSL_TLSEXT_ERR_ALERT_FATAL;
	}
	ok = SSL_use_certificate(ssl, leaf) &&
	     SSL_use_PrivateKey(ssl, t->leaf_key) &&
	     SSL_add1_chain_cert(ssl, t->ca);
	X509_free(leaf);
	if (!ok) {
		*alert = SSL_AD_INTERNAL_ERROR;
		return SSL_TLSEXT_ERR_ALERT_FATAL;
	}
	return SSL_TLSEXT_ERR_OK;
}

/* h2 when the flow allows it (brk_tls_server_h2: upstream chose h2 too)
 * and the guest offers it, else http/1.1: a client that offers only h2
 * otherwise gets no ALPN answer and speaks HTTP/1.1 or fails. */
static bool alpn_has(const unsigned char *in, unsigned inlen, const char *p,
		     const unsigned char **out)
{
	size_t pl = strlen(p);

	for (unsigned i = 0; i < inlen;) {
		unsigned n = in[i];

		if (i + 1 + n > inlen)
			break;
		if (n == pl && !memcmp(in + i + 1, p, pl)) {
			*out = in + i + 1;
			return true;
		}
		i += 1 + n;
	}
	return false;
}

static int alpn_cb(SSL *ssl, const unsigned char **out, unsigned char *outlen,
		   const unsigned char *in, unsigned int inlen, void *arg)
{
	struct sni_check *chk = SSL_get_ex_data(ssl, sni_index);

	(void)arg;
	if (chk && chk->h2 && alpn_has(in, inlen, "h2", out)) {
		*outlen = 2;
		return SSL_TLSEXT_ERR_OK;
	}
	if (alpn_has(in, inlen, "http/1.1", out)) {
		*outlen = 8;
		return SSL_TLSEXT_ERR_OK;
	}
	return SSL_TLSEXT_ERR_NOACK;
}

static int tls_fail(struct moat_error *err, const char *what)
{
	unsigned long e = ERR_get_error();
	char buf[256];

	ERR_error_string_n(e, buf, sizeof(buf));
	ERR_clear_error();
	return moat_error_input(err, EINVAL, "broker: %s: %s", what,
				e ? buf : "failed");
}

static SSL_CTX *server_ctx(struct brk_tls *t)
{
	SSL_CTX *s = SSL_CTX_new(TLS_server_method());

	if (!s)
		return NULL;
	/* No tickets and no session cache: every handshake goes through
	 * sni_cb, so a resumed session can never stand in for a name. */
	if (!SSL_CTX_set_min_proto_version(s, TLS1_2_VERSION) ||
	    !SSL_CTX_set_num_tickets(s, 0)) {
		SSL_CTX_free(s);
		return NULL;
	}
	SSL_CTX_set_options(s, SSL_OP_NO_TICKET | SSL_OP_NO_RENEGOTIATION);
	SSL_CTX_set_session_cache_mode(s, SSL_SESS_CACHE_OFF);
	SSL_CTX_set_mode(s, SSL_MODE_ENABLE_PARTIAL_WRITE |
				    SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
	SSL_CTX_set_tlsext_servername_callback(s, sni_cb);
	SSL_CTX_set_tlsext_servername_arg(s, t);
	SSL_CTX_set_alpn_select_cb(s, alpn_cb, NULL);
	return s;
}

static int client_ctx(struct brk_tls *t, const char *roots,
		      const char *upstream_ca, struct moat_error *err)
{
	SSL_CTX *c = SSL_CTX_new(TLS_client_method());
	X509_STORE *st;

	if (!c)
		return tls_fail(err, "client context");
	t->client = c;
	if (!SSL_CTX_set_min_proto_version(c, TLS1_2_VERSION))
		return tls_fail(err, "client context");
	SSL_CTX_set_options(c, SSL_OP_NO_RENEGOTIATION);
	SSL_CTX_set_session_cache_mode(c, SSL_SESS_CACHE_OFF);
	SSL_CTX_set_mode(c, SSL_MODE_ENABLE_PARTIAL_WRITE |
				    SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
	SSL_CTX_set_verify(c, SSL_VERIFY_PEER, NULL);
	st = SSL_CTX_get_cert_store(c);
	/* Files only, loaded now: a hashed directory would be read lazily,
	 * at the first handshake, when the seccomp filter forbids open. */
	if (!roots)
		roots = TLS_ROOTS_DEFAULT;
	if (access(roots, R_OK) == 0 && !X509_STORE_load_file(st, roots))
		return tls_fail(err, roots);
	ERR_clear_error();
	if (upstream_ca && *upstream_ca &&
	    !X509_STORE_load_file(st, upstream_ca))
		return tls_fail(err, upstream_ca);
	return 0;
}

int brk_tls_init(struct brk_tls *t, const char *id, const char *roots,
		 const char *upstream_ca, struct moat_error *err)
{
	BIO *bio = NULL;
	char *pem;
	long n;
	int rc;

	memset(t, 0, sizeof(*t));
	pthread_mutex_init(&t->lock, NULL);
	if (!OPENSSL_init_ssl(0, NULL))
		return tls_fail(err, "OpenSSL init");
	pthread_once(&sni_once, sni_index_make);
	if (sni_index < 0)
		return tls_fail(err, "OpenSSL ex_data");
	t->cache = calloc(TLS_LEAF_CACHE, sizeof(*t->cache));
	if (!t->cache)
		return moat_error_set(err, ENOMEM, "broker");
	t->ca_key = EVP_EC_gen("P-256");
	t->leaf_key = EVP_EC_gen("P-256");
	if (!t->ca_key || !t->leaf_key)
		return tls_fail(err, "EC key");
	t->ca = make_ca(t->ca_key, id);
	if (!t->ca)
		return tls_fail(err, "CA certificate");
	bio = BIO_new(BIO_s_mem());
	if (!bio || !PEM_write_bio_X509(bio, t->ca)) {
		BIO_free(bio);
		return tls_fail(err, "CA PEM");
	}
	n = BIO_get_mem_data(bio, &pem);
	t->ca_pem = malloc((size_t)n + 1);
	if (!t->ca_pem) {
		BIO_free(bio);
		return moat_error_set(err, ENOMEM, "broker");
	}
	memcpy(t->ca_pem, pem, (size_t)n);
	t->ca_pem[n] = 0;
	BIO_free(bio);
	t->server = server_ctx(t);
	if (!t->server)
		return tls_fail(err, "server context");
	rc = client_ctx(t, roots, upstream_ca, err);
	if (rc < 0)
		return rc;
	return 0;
}

void brk_tls_free(struct brk_tls *t)
{
	for (size_t i = 0; i < t->ncache; i++)
		X509_free(t->cache[i].cert);
	free(t->cache);
	SSL_CTX_free(t->server);
	SSL_CTX_free(t->client);
	X509_free(t->ca);
	EVP_PKEY_free(t->ca_key);
	EVP_PKEY_free(t->leaf_key);
	free(t->ca_pem);
	pthread_mutex_destroy(&t->lock);
	memset(t, 0, sizeof(*t));
}

SSL *brk_tls_server(struct brk_tls *t, int fd, const char *sni)
{
	struct sni_check *chk = calloc(1, sizeof(*chk));
	SSL *ssl;

	if (!chk)
		return NULL;
	snprintf(chk->want, sizeof(chk->want), "%s", sni);
	ssl = SSL_new(t->server);
	if (!ssl) {
		free(chk);
		return NULL;
	}
	if (!SSL_set_ex_data(ssl, sni_index, chk)) {
		free(chk);
		SSL_free(ssl);
		return NULL;
	}
	if (!SSL_set_fd(ssl, fd)) {
		SSL_free(ssl);
		return NULL;
	}
	SSL_set_accept_state(ssl);
	return ssl;
}

void brk_tls_server_h2(SSL *ssl, bool on)
{
	struct sni_check *chk = SSL_get_ex_data(ssl, sni_index);

	if (chk)
		chk->h2 = on;
}

bool brk_tls_sni_refused(SSL *ssl)
{
	struct sni_check *chk = SSL_get_ex_data(ssl, sni_index);

	return chk && chk->refused;
}

SSL *brk_tls_client(struct brk_tls *t, int fd, const char *host, bool h2)
{
	static const unsigned char alpn2[] = "\x02h2\x08http/1.1";
	const unsigned char *alpn = h2 ? alpn2 : alpn2 + 3;
	size_t alen = h2 ? sizeof(alpn2) - 1 : sizeof(alpn2) - 4;
	SSL *ssl = SSL_new(t->client);

	if (!ssl)
		return NULL;
	/* SSL_set_alpn_protos returns 0 on success */
	if (!SSL_set_fd(ssl, fd) || !SSL_set_tlsext_host_name(ssl, host) ||
	    !SSL_set1_host(ssl, host) ||
	    SSL_set_alpn_protos(ssl, alpn, (unsigned)alen)) {
		SSL_free(ssl);
		return NULL;
	}
	SSL_set_connect_state(ssl);
	return ssl;
}
