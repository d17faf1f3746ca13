/*
 * CURVE key files (docs/security.md): the ZeroMQ certificate text form ("ZPL", as CZMQ's
 * zcert writes it), so that keys made by other ZeroMQ tools can be used:
 *
 *     metadata
 *         node = "node01"            (agents: the node name the key may register)
 *         role = "full"              (administrators: "read" or "full")
 *     curve
 *         public-key = "Z85, 40 characters"
 *         secret-key = "Z85, 40 characters"   (secret files only)
 *
 * Other metadata and comment lines are ignored. A file holding a secret key is refused
 * when others than its owner may read it (the check ssh makes). Endpoint helpers decide
 * what counts as loopback for the "no keys, loopback only" rule.
 */
#ifndef VSCHED_CURVE_H
#define VSCHED_CURVE_H

#include <stdbool.h>
#include <stddef.h>

#define CURVE_Z85_LEN  40 /* a 32-byte key in Z85 */
#define CURVE_NAME_MAX 63 /* = TEXT_NAME_MAX */

struct curve_cert {
	char pub[CURVE_Z85_LEN + 1];
	char sec[CURVE_Z85_LEN + 1]; /* "": a public certificate */
	char node[CURVE_NAME_MAX + 1];
	char role[16];
};

/*
 * Reads a certificate. need_secret: the file must hold a secret key (and be private to
 * its owner). Returns 0, or -1 with "FILE:LINE: reason" or "FILE: reason" in why; on
 * failure *c is zeroed.
 */
int curve_cert_load(const char *path, bool need_secret, struct curve_cert *c, char *why,
                    size_t whylen);
/*
 * Writes a new key pair: path (the public certificate) and path + "_secret" (both keys),
 * each mode 0600, created (an existing file is never overwritten). node and role go to the
 * metadata when not NULL. Returns 0 or -1 with why (nothing is left on failure).
 */
int curve_keygen(const char *path, const char *node, const char *role, char *why, size_t whylen);
/* 40 valid Z85 characters that decode to a key. */
bool curve_z85_ok(const char *z);
/* ipc://, inproc:// or a tcp:// endpoint on 127.0.0.0/8, ::1 or localhost. */
bool curve_endpoint_local(const char *endpoint);
/* A tcp:// endpoint (CURVE protects these; ipc ones have file modes and peer credentials). */
bool curve_endpoint_tcp(const char *endpoint);

#endif
