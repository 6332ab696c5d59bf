// bench/https_server.c: the HTTPS server of bench/https.sh, small and
// steady so that it is never what the table measures.  One thread per
// connection, blocking OpenSSL, HTTP/1.1 keep-alive:
//   GET /small   "ok\n"
//   GET /big     BENCH_BIG bytes (100 MiB) of zeros, 256 KiB per write
// A request whose Authorization is not "Bearer $BENCH_AUTH" gets a 403, so
// that a column whose credential was not swapped fails instead of
// measuring something else.  "Connection: close" ends the connection after
// the response.  Prints "ready" when it listens.
//
//   https_server ADDR PORT CERT-CHAIN KEY
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#define BIG_SIZE (100L << 20)
#define CHUNK (256 << 10)

static SSL_CTX *ctx;
static char want_auth[512];
static char zeros[CHUNK];

static int write_all(SSL *ssl, const char *p, int n)
{
	while (n > 0) {
		int w = SSL_write(ssl, p, n);
		if (w <= 0)
			return -1;
		p += w;
		n -= w;
	}
	return 0;
}

static int write_zeros(SSL *ssl, long n)
{
	while (n > 0) {
		int m = n > CHUNK ? CHUNK : (int)n;
		if (write_all(ssl, zeros, m) < 0)
			return -1;
		n -= m;
	}
	return 0;
}

// header: the value of header NAME in the request head HEAD, or NULL; the
// value is copied to OUT (at most N-1 bytes).
static const char *header(const char *head, const char *name, char *out,
			  size_t n)
{
	size_t len = strlen(name);
	for (const char *l = strstr(head, "\r\n"); l; l = strstr(l, "\r\n")) {
		l += 2;
		if (strncasecmp(l, name, len) == 0 && l[len] == ':') {
			const char *v = l + len + 1, *e = strstr(v, "\r\n");
			while (*v == ' ')
				v++;
			size_t m = e ? (size_t)(e - v) : strlen(v);
			if (m >= n)
				m = n - 1;
			memcpy(out, v, m);
			out[m] = 0;
			return out;
		}
	}
	return NULL;
}

static int respond(SSL *ssl, const char *head)
{
	char auth[512], conn[64], resp[256];
	int close_after = header(head, "Connection", conn, sizeof(conn)) &&
			  strcasecmp(conn, "close") == 0;
	const char *path = strchr(head, ' ');
	if (!path)
		return -1;
	path++;
	if (want_auth[0] &&
	    (!header(head, "Authorization", auth, sizeof(auth)) ||
	     strcmp(auth, want_auth) != 0)) {
		static const char body[] = "wrong or missing Authorization\n";
		int n = snprintf(
			resp, sizeof(resp),
			"HTTP/1.1 403 Forbidden\r\nContent-Length: %zu\r\n"
			"Connection: close\r\n\r\n%s",
			sizeof(body) - 1, body);
		write_all(ssl, resp, n);
		return -1;
	}
	long size = strncmp(path, "/big", 4) == 0 ? BIG_SIZE : 3;
	int n = snprintf(
		resp, sizeof(resp),
		"HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n"
		"Content-Length: %ld\r\n%s\r\n",
		size, close_after ? "Connection: close\r\n" : "");
	if (size == 3)
		n += snprintf(resp + n, sizeof(resp) - n, "ok\n");
	if (write_all(ssl, resp, n) < 0)
		return -1;
	if (size > 3 && write_zeros(ssl, size) < 0)
		return -1;
	return close_after ? -1 : 0;
}

// serve: one connection's requests; bodies are not expected (GET only).
static void *serve(void *arg)
{
	int fd = (int)(long)arg, one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	SSL *ssl = SSL_new(ctx);
	char buf[16384];
	size_t have = 0;
	if (!ssl || !SSL_set_fd(ssl, fd) || SSL_accept(ssl) <= 0)
		goto out;
	for (;;) {
		char *end;
		buf[have] = 0;
		while ((end = strstr(buf, "\r\n\r\n")) != NULL) {
			end += 4;
			char save = *end;
			*end = 0;
			int rc = respond(ssl, buf);
			*end = save;
			have -= end - buf;
			memmove(buf, end, have + 1);
			if (rc < 0)
				goto out;
		}
		if (have >= sizeof(buf) - 1)
			goto out;
		int r = SSL_read(ssl, buf + have, sizeof(buf) - 1 - have);
		if (r <= 0)
			goto out;
		have += r;
		buf[have] = 0;
	}
out:
	if (ssl) {
		SSL_shutdown(ssl);
		SSL_free(ssl);
	}
	close(fd);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 5) {
		fprintf(stderr,
			"usage: https_server ADDR PORT CERT-CHAIN KEY\n");
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	const char *a = getenv("BENCH_AUTH");
	if (a && *a)
		snprintf(want_auth, sizeof(want_auth), "Bearer %s", a);
	ctx = SSL_CTX_new(TLS_server_method());
	if (!ctx || SSL_CTX_use_certificate_chain_file(ctx, argv[3]) != 1 ||
	    SSL_CTX_use_PrivateKey_file(ctx, argv[4], SSL_FILETYPE_PEM) != 1) {
		ERR_print_errors_fp(stderr);
		return 1;
	}
	// Every handshake in the first row is a full one, whatever the client.
	SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
	SSL_CTX_set_num_tickets(ctx, 0);
	SSL_CTX_set_options(ctx, SSL_OP_NO_TICKET);
	struct sockaddr_in sin = { .sin_family = AF_INET,
				   .sin_port = htons(atoi(argv[2])) };
	int one = 1, s = socket(AF_INET, SOCK_STREAM, 0);
	if (s < 0 || inet_pton(AF_INET, argv[1], &sin.sin_addr) != 1 ||
	    setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(s, (struct sockaddr *)&sin, sizeof(sin)) < 0 ||
	    listen(s, 128) < 0) {
		perror("https_server: listen");
		return 1;
	}
	printf("ready\n");
	fflush(stdout);
	for (;;) {
		int fd = accept(s, NULL, NULL);
		pthread_t t;
		if (fd < 0)
			continue;
		if (pthread_create(&t, NULL, serve, (void *)(long)fd) != 0) {
			close(fd);
			continue;
		}
		pthread_detach(t);
	}
}
