/* CURVE key files and endpoint classes (curve.h). */
#include "curve.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zmq.h>

#include "text.h"

#define LINE_MAX_LEN 1024
#define FILE_MAX     (64 * 1024)

bool curve_z85_ok(const char *z)
{
	uint8_t key[32];

	return z != NULL && strlen(z) == CURVE_Z85_LEN && zmq_z85_decode(key, z) != NULL;
}

/* A value: "quoted" or bare up to a blank or '#'. -1 when it does not fit or is open. */
static int take_value(const char *v, char *out, size_t cap)
{
	size_t n = 0;

	if (*v == '"' || *v == '\'') {
		char q = *v++;
		const char *end = strchr(v, q);
		if (end == NULL)
			return -1;
		n = (size_t)(end - v);
	} else {
		while (v[n] != '\0' && !isspace((unsigned char)v[n]) && v[n] != '#')
			n++;
	}
	if (n >= cap)
		return -1;
	memcpy(out, v, n);
	out[n] = '\0';
	return 0;
}

/* "key = value" of section sec into c. 0, or -1 with why (no location). */
static int cert_setting(struct curve_cert *c, const char *sec, const char *line, char *why,
                        size_t whylen)
{
	char key[64], val[256];
	const char *eq = strchr(line, '=');
	size_t klen;

	if (eq == NULL) {
		text_fmt(why, whylen, "expected NAME = \"VALUE\"");
		return -1;
	}
	klen = (size_t)(eq - line);
	while (klen > 0 && isspace((unsigned char)line[klen - 1]))
		klen--;
	eq++;
	while (isspace((unsigned char)*eq))
		eq++;
	if (klen == 0 || klen >= sizeof(key) || take_value(eq, val, sizeof(val)) != 0) {
		text_fmt(why, whylen, "bad setting (name or value too long, or quote not closed)");
		return -1;
	}
	memcpy(key, line, klen);
	key[klen] = '\0';
	if (strcmp(sec, "curve") == 0 && strcmp(key, "public-key") == 0)
		text_fmt(c->pub, sizeof(c->pub), "%s", strlen(val) == CURVE_Z85_LEN ? val : "?");
	else if (strcmp(sec, "curve") == 0 && strcmp(key, "secret-key") == 0)
		text_fmt(c->sec, sizeof(c->sec), "%s", strlen(val) == CURVE_Z85_LEN ? val : "?");
	else if (strcmp(sec, "metadata") == 0 && strcmp(key, "node") == 0) {
		if (!text_name_ok(val)) {
			text_fmt(why, whylen, "node: must be 1..%d printable characters, no blanks",
			         CURVE_NAME_MAX);
			return -1;
		}
		text_fmt(c->node, sizeof(c->node), "%s", val);
	} else if (strcmp(sec, "metadata") == 0 && strcmp(key, "role") == 0) {
		if (strcmp(val, "read") != 0 && strcmp(val, "full") != 0) {
			text_fmt(why, whylen, "role: must be \"read\" or \"full\"");
			return -1;
		}
		text_fmt(c->role, sizeof(c->role), "%s", val);
	}
	return 0;
}

/* The ZPL text in buf (NUL-terminated). 0 or -1 with "LINE: reason". */
static int cert_parse(char *buf, struct curve_cert *c, char *why, size_t whylen)
{
	char sec[32] = "", reason[160];
	int lineno = 0;

	for (char *line = buf, *next; line != NULL; line = next) {
		next = strchr(line, '\n');
		if (next != NULL)
			*next++ = '\0';
		lineno++;
		line[strcspn(line, "\r")] = '\0';
		char *s = line + strspn(line, " \t");
		if (strlen(line) >= LINE_MAX_LEN) {
			text_fmt(why, whylen, "%d: line too long", lineno);
			return -1;
		}
		if (*s == '\0' || *s == '#')
			continue;
		if (s == line && strchr(s, '=') == NULL) { /* a section name */
			if (take_value(s, sec, sizeof(sec)) != 0)
				sec[0] = '\0';
			continue;
		}
		if (cert_setting(c, s == line ? "" : sec, s, reason, sizeof(reason)) != 0) {
			text_fmt(why, whylen, "%d: %s", lineno, reason);
			return -1;
		}
	}
	return 0;
}

/* The whole file into buf (cap bytes, NUL-terminated), with the secret-file mode check. */
static int read_file(const char *path, bool secret, char *buf, size_t cap, char *why, size_t whylen)
{
	struct stat st;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);

	if (fd < 0) {
		text_fmt(why, whylen, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		text_fmt(why, whylen, "%s: not a regular file", path);
		close(fd);
		return -1;
	}
	if (secret && (st.st_mode & 077) != 0) {
		text_fmt(why, whylen,
		         "%s: mode %04o: a secret key file must be private (chmod 0600)", path,
		         (unsigned)(st.st_mode & 07777));
		close(fd);
		return -1;
	}
	n = read(fd, buf, cap);
	close(fd);
	if (n < 0 || (size_t)n >= cap) {
		text_fmt(why, whylen, "%s: %s", path, n < 0 ? strerror(errno) : "file too large");
		return -1;
	}
	buf[n] = '\0';
	if (memchr(buf, '\0', (size_t)n) != NULL) {
		text_fmt(why, whylen, "%s: not a text file", path);
		return -1;
	}
	return 0;
}

int curve_cert_load(const char *path, bool need_secret, struct curve_cert *c, char *why,
                    size_t whylen)
{
	static char buf[FILE_MAX + 1]; /* one thread per program reads keys */
	char reason[200];

	memset(c, 0, sizeof(*c));
	if (read_file(path, need_secret, buf, sizeof(buf), why, whylen) != 0)
		return -1;
	if (cert_parse(buf, c, reason, sizeof(reason)) != 0) {
		text_fmt(why, whylen, "%s:%s", path, reason);
		goto fail;
	}
	if (!curve_z85_ok(c->pub)) {
		text_fmt(why, whylen, "%s: %s", path,
		         c->pub[0] ? "public-key: not a 40-character Z85 key"
		                   : "no public-key in a curve section");
		goto fail;
	}
	if (need_secret && !curve_z85_ok(c->sec)) {
		text_fmt(why, whylen, "%s: %s", path,
		         c->sec[0]
		             ? "secret-key: not a 40-character Z85 key"
		             : "no secret-key (is this the public certificate? use FILE_secret)");
		goto fail;
	}
	if (c->sec[0] != '\0' && !need_secret) {
		text_fmt(why, whylen,
		         "%s: holds a secret key: only public certificates belong here", path);
		goto fail;
	}
	return 0;
fail:
	memset(c, 0, sizeof(*c));
	return -1;
}

/* One certificate file, created with O_EXCL mode 0600. */
static int write_cert(const char *path, const struct curve_cert *c, bool secret, char *why,
                      size_t whylen)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	FILE *f;
	int rc;

	if (fd < 0 || (f = fdopen(fd, "w")) == NULL) {
		text_fmt(why, whylen, "%s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	fprintf(f, "#   ZeroMQ CURVE %s Certificate (vsched; docs/security.md)\n",
	        secret ? "**Secret**" : "Public");
	fprintf(f, secret
	               ? "#   DO NOT PROVIDE THIS FILE TO OTHER USERS nor change its "
	                 "permissions.\n\n"
	               : "#   Install it in the controller's allow-list (agents/ or admins/).\n\n");
	fprintf(f, "metadata\n");
	if (c->node[0])
		fprintf(f, "    node = \"%s\"\n", c->node);
	if (c->role[0])
		fprintf(f, "    role = \"%s\"\n", c->role);
	fprintf(f, "curve\n    public-key = \"%s\"\n", c->pub);
	if (secret)
		fprintf(f, "    secret-key = \"%s\"\n", c->sec);
	rc = fflush(f) == 0 && fsync(fileno(f)) == 0 ? 0 : -1;
	if (rc != 0)
		text_fmt(why, whylen, "%s: %s", path, strerror(errno));
	if (fclose(f) != 0 && rc == 0) {
		text_fmt(why, whylen, "%s: %s", path, strerror(errno));
		rc = -1;
	}
	if (rc != 0)
		unlink(path);
	return rc;
}

int curve_keygen(const char *path, const char *node, const char *role, char *why, size_t whylen)
{
	struct curve_cert c;
	char spath[4096];

	memset(&c, 0, sizeof(c));
	if (node != NULL && !text_name_ok(node)) {
		text_fmt(why, whylen, "node: must be 1..%d printable characters, no blanks",
		         CURVE_NAME_MAX);
		return -1;
	}
	if (role != NULL && strcmp(role, "read") != 0 && strcmp(role, "full") != 0) {
		text_fmt(why, whylen, "role: must be read or full");
		return -1;
	}
	if ((size_t)snprintf(spath, sizeof(spath), "%s_secret", path) >= sizeof(spath)) {
		text_fmt(why, whylen, "%s: path too long", path);
		return -1;
	}
	if (zmq_curve_keypair(c.pub, c.sec) != 0) {
		text_fmt(why, whylen, "zmq_curve_keypair: %s (libzmq without CURVE?)",
		         zmq_strerror(zmq_errno()));
		return -1;
	}
	text_fmt(c.node, sizeof(c.node), "%s", node ? node : "");
	text_fmt(c.role, sizeof(c.role), "%s", role ? role : "");
	if (write_cert(spath, &c, true, why, whylen) != 0)
		return -1;
	if (write_cert(path, &c, false, why, whylen) != 0) {
		unlink(spath);
		return -1;
	}
	return 0;
}

bool curve_endpoint_tcp(const char *endpoint)
{
	return strncmp(endpoint, "tcp://", 6) == 0;
}

bool curve_endpoint_local(const char *endpoint)
{
	const char *h;
	size_t n;

	if (strncmp(endpoint, "ipc://", 6) == 0 || strncmp(endpoint, "inproc://", 9) == 0)
		return true;
	if (!curve_endpoint_tcp(endpoint))
		return false;
	h = endpoint + 6;
	if (strncmp(h, "[::1]:", 6) == 0)
		return true;
	n = strcspn(h, ":;");
	if (h[n] != ':')
		return false;
	if (n == 9 && strncmp(h, "localhost", 9) == 0)
		return true;
	/* 127.0.0.0/8, written as a dotted quad */
	unsigned a, b, c, e;
	char tail;
	return sscanf(h, "%u.%u.%u.%u%c", &a, &b, &c, &e, &tail) == 5 && tail == ':' && a == 127 &&
	       b < 256 && c < 256 && e < 256;
}
