/*
 * Who may talk to the controller (docs/security.md). With curve_key set, every tcp
 * endpoint is a CURVE server and the ZAP handler here (a REP socket on
 * inproc://zeromq.zap.01, read by the loop like the other two) admits a client only when
 * its public key is in the allow-list of the endpoint's role: allow_dir/agents/ for the
 * agents' endpoint, allow_dir/admins/ (read-only or full) for the admin endpoint; any
 * other key is refused at the handshake (ZMQ_ZAP_ENFORCE_DOMAIN: no handler, no entry),
 * and the refusal logged once per key per minute. The ZAP reply's User-Id is the key,
 * so agents.c and admin.c learn per message which key sent it (auth_role) and enforce
 * what it may do: an agent key registers only its own node name, a read-only admin key
 * only lists. An ipc admin endpoint checks the peer's credentials instead (SO_PEERCRED,
 * which libzmq puts in the ZAP address as "HOST:UID:GID:PID"): root, the controller's
 * own user, or a member of admin_group.
 *
 * Invariant: the allow-list in memory is sorted by key (auth_role is a binary search per
 * message); a reload (SIGHUP) replaces it whole or not at all.
 */
#include "controller.h"

#include <dirent.h>
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zmq.h>

#include "log.h"
#include "text.h"
#include "zmsg.h"

#define ZAP_ENDPOINT   "inproc://zeromq.zap.01"
#define ZAP_FRAMES     8 /* version, id, domain, address, identity, mechanism, 1-2 credentials */
#define REFUSAL_EVERY  (60 * NSEC_PER_SEC)
#define UID_PREFIX     "uid:"
#define CURVE_OVERHEAD 512 /* bytes: handshake commands and box overhead over a frame */

/* A draft option in libzmq 4.3's header, built into Debian's library: no ZAP handler, no
 * connection (the handler here is bound before any endpoint, so this is a second lock). */
#ifndef ZMQ_ZAP_ENFORCE_DOMAIN
#define ZMQ_ZAP_ENFORCE_DOMAIN 93
#endif

static int key_cmp(const void *a, const void *b)
{
	return strcmp(((const struct auth_key *)a)->pub, ((const struct auth_key *)b)->pub);
}

/* Appends the certificates of dir (one public key per file) with role to *t. */
static int load_dir(const char *dir, uint8_t role, struct auth_key **t, int *n, char *why,
                    size_t whylen)
{
	DIR *dp = opendir(dir);
	struct dirent *e;
	int rc = 0;

	if (dp == NULL) {
		text_fmt(why, whylen, "%s: %s", dir, strerror(errno));
		return -1;
	}
	while (rc == 0 && (e = readdir(dp)) != NULL) {
		char path[CTLD_PATH_MAX + 300];
		struct curve_cert c;
		struct auth_key *k;

		if (e->d_name[0] == '.')
			continue;
		text_fmt(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (curve_cert_load(path, false, &c, why, whylen) != 0) {
			rc = -1;
			break;
		}
		k = realloc(*t, (size_t)(*n + 1) * sizeof(**t));
		if (k == NULL)
			fatalx("out of memory");
		*t = k;
		k = &(*t)[(*n)++];
		memset(k, 0, sizeof(*k));
		memcpy(k->pub, c.pub, sizeof(k->pub));
		k->role = role;
		if (role == AUTH_AGENT) {
			/* the node it may register: its metadata, else the file name */
			text_fmt(k->name, sizeof(k->name), "%s", c.node[0] ? c.node : e->d_name);
			if (!text_name_ok(k->name)) {
				text_fmt(why, whylen,
				         "%s: no node in its metadata and the file name is "
				         "no node name",
				         path);
				rc = -1;
			}
		} else {
			text_fmt(k->name, sizeof(k->name), "%s", e->d_name);
			k->role = strcmp(c.role, "full") == 0 ? AUTH_ADMIN_FULL : AUTH_ADMIN_READ;
		}
	}
	closedir(dp);
	return rc;
}

/* The allow-lists of allow_dir, sorted; a key listed twice is refused. */
static int load_lists(const char *allow_dir, struct auth_key **t, int *n, char *why, size_t whylen)
{
	char dir[CTLD_PATH_MAX + 16];

	*t = NULL;
	*n = 0;
	text_fmt(dir, sizeof(dir), "%s/agents", allow_dir);
	if (load_dir(dir, AUTH_AGENT, t, n, why, whylen) != 0)
		goto fail;
	text_fmt(dir, sizeof(dir), "%s/admins", allow_dir);
	if (load_dir(dir, AUTH_ADMIN_READ, t, n, why, whylen) != 0)
		goto fail;
	if (*n > 0)
		qsort(*t, (size_t)*n, sizeof(**t), key_cmp);
	for (int i = 1; i < *n; i++) {
		if (strcmp((*t)[i - 1].pub, (*t)[i].pub) == 0) {
			text_fmt(why, whylen,
			         "%s: the same key is listed as %s and %s (one key, one "
			         "role and name)",
			         allow_dir, (*t)[i - 1].name, (*t)[i].name);
			goto fail;
		}
	}
	return 0;
fail:
	free(*t);
	*t = NULL;
	*n = 0;
	return -1;
}

int auth_load(struct auth *a, const struct ctld_config *c, char *why, size_t whylen)
{
	struct curve_cert cert;
	char reason[400];

	memset(a, 0, sizeof(*a));
	if (c->admin_group[0] != '\0') {
		struct group *g = getgrnam(c->admin_group);
		if (g == NULL) {
			text_fmt(why, whylen, "admin_group: no group \"%s\"", c->admin_group);
			return -1;
		}
		a->admin_gid = g->gr_gid;
		a->has_group = true;
	}
	if (c->curve_key[0] == '\0')
		return 0;
	if (curve_cert_load(c->curve_key, true, &cert, reason, sizeof(reason)) != 0) {
		text_fmt(why, whylen, "curve_key: %s", reason);
		return -1;
	}
	if (load_lists(c->allow_dir, &a->keys, &a->nkeys, reason, sizeof(reason)) != 0) {
		text_fmt(why, whylen, "allow_dir: %s", reason);
		return -1;
	}
	memcpy(a->pub, cert.pub, sizeof(a->pub));
	memcpy(a->sec, cert.sec, sizeof(a->sec));
	memset(&cert, 0, sizeof(cert));
	a->curve = true;
	return 0;
}

void auth_free(struct auth *a)
{
	free(a->keys);
	a->keys = NULL;
	a->nkeys = 0;
	memset(a->sec, 0, sizeof(a->sec));
}

void auth_reload(struct ctld *d)
{
	struct auth_key *t;
	int n;
	char why[512];

	if (!d->auth.curve)
		return;
	if (load_lists(d->cfg.allow_dir, &t, &n, why, sizeof(why)) != 0) {
		log_warnx("allow-lists not reloaded (the previous ones stay): %s", why);
		return;
	}
	free(d->auth.keys);
	d->auth.keys = t;
	d->auth.nkeys = n;
	log_info("allow-lists reloaded: %d key(s)", n);
}

const struct auth_key *auth_find(const struct auth *a, const char *pub)
{
	struct auth_key k;

	if (a->nkeys == 0 || strlen(pub) != CURVE_Z85_LEN)
		return NULL;
	memcpy(k.pub, pub, sizeof(k.pub));
	return bsearch(&k, a->keys, (size_t)a->nkeys, sizeof(k), key_cmp);
}

uint8_t auth_role(const struct auth *a, bool secured, zmq_msg_t *m, const char **name)
{
	static const char *const ipc_name = "local administrator";
	const char *uid = zmq_msg_gets(m, "User-Id");
	const struct auth_key *k;

	*name = "";
	if (!secured)
		return AUTH_OPEN;
	if (uid == NULL)
		return AUTH_NONE;
	/* a key is 40 characters (and may itself start with "uid:"); "uid:N" is shorter */
	if (strlen(uid) < CURVE_Z85_LEN && strncmp(uid, UID_PREFIX, strlen(UID_PREFIX)) == 0) {
		*name = ipc_name; /* only the ipc peer check gives these */
		return AUTH_ADMIN_FULL;
	}
	k = auth_find(a, uid);
	if (k == NULL)
		return AUTH_NONE; /* removed from the allow-list since the handshake */
	*name = k->name;
	return k->role;
}

/* Logs a refusal of key (or peer) once per minute; counts the rest. */
static void log_refusal(struct auth *a, const char *who, const char *why, mono_ns now)
{
	struct auth_refusal *r = NULL, *oldest = &a->refused[0];

	a->refusals++;
	for (int i = 0; i < AUTH_REFUSED_MAX; i++) {
		if (strcmp(a->refused[i].who, who) == 0) {
			r = &a->refused[i];
			break;
		}
		if (a->refused[i].at < oldest->at)
			oldest = &a->refused[i];
	}
	if (r != NULL && r->at != 0 && now - r->at < REFUSAL_EVERY) {
		r->suppressed++;
		return;
	}
	if (r == NULL) {
		r = oldest;
		memset(r, 0, sizeof(*r));
		text_fmt(r->who, sizeof(r->who), "%s", who);
	}
	if (r->suppressed)
		log_warnx("refused %s: %s (and %llu more time(s) since the last line)", who, why,
		          (unsigned long long)r->suppressed);
	else
		log_warnx("refused %s: %s", who, why);
	r->at = now;
	r->suppressed = 0;
}

/* A local peer "HOST:UID:GID:PID" (the ZAP address of an ipc connection). */
static bool ipc_peer_ok(const struct auth *a, const char *addr, char *user, size_t ulen)
{
	char buf[CTLD_ID_MAX + 1], *c;
	unsigned long uid, gid;
	int pid;

	user[0] = '\0';
	text_fmt(buf, sizeof(buf), "%s", addr);
	for (int k = 0; k < 3; k++) { /* the third colon from the end starts UID:GID:PID */
		c = strrchr(buf, ':');
		if (c == NULL)
			return false;
		if (k < 2)
			*c = ' ';
	}
	if (sscanf(c + 1, "%lu %lu %d", &uid, &gid, &pid) != 3)
		return false;
	text_fmt(user, ulen, UID_PREFIX "%lu", uid);
	if (uid == 0 || uid == (unsigned long)geteuid())
		return true;
	if (!a->has_group)
		return false;
	if (gid == (unsigned long)a->admin_gid)
		return true;
	struct passwd *pw = getpwuid((uid_t)uid);
	gid_t groups[256];
	int ng = 256;
	if (pw == NULL || getgrouplist(pw->pw_name, pw->pw_gid, groups, &ng) < 0)
		return false;
	for (int i = 0; i < ng; i++)
		if (groups[i] == a->admin_gid)
			return true;
	return false;
}

/*
 * The ZAP decision: 200 with the User-Id to give the connection, or 400 with why. The
 * domain says which endpoint: "agents" admits agent keys, "admin" admin keys or (NULL
 * mechanism: ipc) local peers by their credentials.
 */
int auth_decide(struct auth *a, const char *domain, const char *address, const char *mech,
                const uint8_t *cred, size_t credlen, char *user, size_t ulen, char *why,
                size_t whylen)
{
	bool agents = strcmp(domain, AUTH_DOMAIN_AGENTS) == 0;
	char pub[CURVE_Z85_LEN + 1];
	const struct auth_key *k;

	user[0] = '\0';
	if (!agents && strcmp(domain, AUTH_DOMAIN_ADMIN) != 0) {
		text_fmt(why, whylen, "unknown ZAP domain");
		return 400;
	}
	if (!agents && strcmp(mech, "NULL") == 0 && strncmp(address, "", 1) != 0) {
		if (ipc_peer_ok(a, address, user, ulen))
			return 200;
		text_fmt(why, whylen,
		         "local user %s is not root, the controller's user or in "
		         "admin_group",
		         user[0] ? user + strlen(UID_PREFIX) : "?");
		return 400;
	}
	if (strcmp(mech, "CURVE") != 0 || credlen != 32 || !a->curve) {
		text_fmt(why, whylen, "%s mechanism: a CURVE key is required", mech);
		return 400;
	}
	zmq_z85_encode(pub, cred, 32);
	k = auth_find(a, pub);
	if (k == NULL || (agents ? k->role != AUTH_AGENT : k->role == AUTH_AGENT)) {
		text_fmt(why, whylen, "%s",
		         k == NULL ? "key not in the allow-list"
		         : agents  ? "an administrator's key on the agents' endpoint"
		                   : "an agent's key on the admin endpoint");
		return 400;
	}
	text_fmt(user, ulen, "%s", pub);
	return 200;
}

int auth_open(struct ctld *d)
{
	int zero = 0;

	d->auth.zap = zmq_socket(d->zctx, ZMQ_REP);
	if (d->auth.zap == NULL || zmq_setsockopt(d->auth.zap, ZMQ_LINGER, &zero, sizeof(zero)) ||
	    zmq_bind(d->auth.zap, ZAP_ENDPOINT) != 0) {
		log_warnx("ZAP handler: %s", zmq_strerror(zmq_errno()));
		return -1;
	}
	if (d->auth.curve)
		log_info("CURVE on tcp endpoints: %d allowed key(s) in %s", d->auth.nkeys,
		         d->cfg.allow_dir);
	return 0;
}

/* Handshakes that failed before the ZAP stage (a client without CURVE, a wrong server
 * key, a broken greeting) on the socket of domain: its monitor, read by the loop, stopped
 * by auth_unwatch. */
static int auth_watch(struct ctld *d, void *sock, const char *domain)
{
	int k = strcmp(domain, AUTH_DOMAIN_AGENTS) == 0 ? 0 : 1, zero = 0;
	char ep[64];

	text_fmt(ep, sizeof(ep), "inproc://vsched-ctld-monitor-%s", domain);
	if (zmq_socket_monitor(sock, ep,
	                       ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL |
	                           ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL) != 0)
		goto fail;
	d->auth.watched[k] = sock;
	if ((d->auth.mon[k] = zmq_socket(d->zctx, ZMQ_PAIR)) == NULL ||
	    zmq_setsockopt(d->auth.mon[k], ZMQ_LINGER, &zero, sizeof(zero)) != 0 ||
	    zmq_connect(d->auth.mon[k], ep) != 0)
		goto fail;
	return 0;
fail:
	log_warnx("%s socket monitor: %s", domain, zmq_strerror(zmq_errno()));
	return -1;
}

void auth_monitor_recv(struct ctld *d, int k, mono_ns now)
{
	const char *domain = k == 0 ? AUTH_DOMAIN_AGENTS : AUTH_DOMAIN_ADMIN;

	for (int n = 0; n < 256; n++) {
		zmq_msg_t part[2];
		int got = zmsg_recv(d->auth.mon[k], part, 2);
		char who[64];

		if (got == ZMSG_NONE)
			return;
		if (got < 0)
			continue;
		zmsg_close(part, got);
		/* the event names no peer and no key: counted and logged per endpoint */
		text_fmt(who, sizeof(who), "a client on %s", domain);
		log_refusal(&d->auth, who,
		            "handshake failed before authentication (no CURVE, the wrong server "
		            "key, a broken or too slow greeting)",
		            now);
	}
}

void auth_unwatch(struct ctld *d)
{
	for (int k = 0; k < 2; k++) {
		/* what is pending first: with the PAIR's pipe full, the I/O thread waits in its
		 * event send, holding the lock that zmq_socket_monitor takes */
		if (d->auth.mon[k])
			auth_monitor_recv(d, k, mono_now());
		if (d->auth.watched[k])
			zmq_socket_monitor(d->auth.watched[k], NULL, 0);
		d->auth.watched[k] = NULL;
		if (d->auth.mon[k])
			zmq_close(d->auth.mon[k]);
		d->auth.mon[k] = NULL;
	}
}

void auth_close(struct ctld *d)
{
	auth_unwatch(d);
	if (d->auth.zap)
		zmq_close(d->auth.zap);
	d->auth.zap = NULL;
	auth_free(&d->auth);
}

/* The options of auth_secure; 1 secured, 0 open, -1 error (zmq_errno). */
static int secure_options(struct ctld *d, void *sock, const char *domain, const char *endpoint)
{
	int one = 1, ivl = (int)(d->cfg.handshake_timeout / NSEC_PER_MSEC);
	bool tcp = curve_endpoint_tcp(endpoint), ipc = strncmp(endpoint, "ipc://", 6) == 0;
	bool admin = strcmp(domain, AUTH_DOMAIN_ADMIN) == 0;

	zmq_setsockopt(sock, ZMQ_HANDSHAKE_IVL, &ivl, sizeof(ivl));
	if (!(tcp && d->auth.curve) && !(admin && ipc))
		return 0; /* open: loopback without keys (or insecure = true) */
	if (zmq_setsockopt(sock, ZMQ_ZAP_DOMAIN, domain, strlen(domain)) != 0 ||
	    zmq_setsockopt(sock, ZMQ_ZAP_ENFORCE_DOMAIN, &one, sizeof(one)) != 0)
		return -1;
	/* ZMQ_MAXMSGSIZE counts the handshake's commands (HELLO 200 bytes, INITIATE ~300)
	 * and the encrypted frame: the protocol's bound plus what CURVE adds */
	int64_t max = 0;
	size_t len = sizeof(max);
	if (tcp && zmq_getsockopt(sock, ZMQ_MAXMSGSIZE, &max, &len) == 0 && max >= 0) {
		max += CURVE_OVERHEAD;
		zmq_setsockopt(sock, ZMQ_MAXMSGSIZE, &max, sizeof(max));
	}
	if (tcp && (zmq_setsockopt(sock, ZMQ_CURVE_SERVER, &one, sizeof(one)) != 0 ||
	            zmq_setsockopt(sock, ZMQ_CURVE_SECRETKEY, d->auth.sec, CURVE_Z85_LEN) != 0))
		return -1;
	return 1;
}

int auth_secure(struct ctld *d, void *sock, const char *domain, const char *endpoint, bool *secured)
{
	int rc = secure_options(d, sock, domain, endpoint);

	if (rc < 0) {
		log_warnx("%s socket: security options: %s", domain, zmq_strerror(zmq_errno()));
		return -1;
	}
	*secured = rc == 1;
	return *secured ? auth_watch(d, sock, domain) : 0;
}

/* One ZAP request from parts (n frames): the reply. */
static void zap_answer(struct ctld *d, zmq_msg_t *parts, int n, mono_ns now)
{
	char f[4][CTLD_ID_MAX + 1], user[64] = "", why[160] = "malformed ZAP request";
	int code = 400;

	for (int i = 0; i < 4; i++) { /* version, request id, domain, address */
		size_t len = i < n ? zmq_msg_size(&parts[i]) : 0;
		len = len < CTLD_ID_MAX ? len : CTLD_ID_MAX;
		memcpy(f[i], i < n ? zmq_msg_data(&parts[i]) : "", len);
		f[i][len] = '\0';
	}
	if (n >= 6 && strcmp(f[0], "1.0") == 0) {
		char mech[16];
		size_t ml = zmq_msg_size(&parts[5]);
		text_fmt(mech, sizeof(mech), "%.*s", (int)(ml < 15 ? ml : 15),
		         (const char *)zmq_msg_data(&parts[5]));
		code = auth_decide(
		    &d->auth, f[2], f[3], mech, n >= 7 ? zmq_msg_data(&parts[6]) : NULL,
		    n >= 7 ? zmq_msg_size(&parts[6]) : 0, user, sizeof(user), why, sizeof(why));
		if (code != 200) {
			char who[96];
			if (strcmp(mech, "CURVE") == 0 && n >= 7 && zmq_msg_size(&parts[6]) == 32) {
				char pub[CURVE_Z85_LEN + 1];
				zmq_z85_encode(pub, zmq_msg_data(&parts[6]), 32);
				text_fmt(who, sizeof(who), "key %s on %s", pub, f[2]);
			} else {
				text_scrub(f[3]);
				text_fmt(who, sizeof(who), "%s peer %s on %s", mech, f[3], f[2]);
			}
			log_refusal(&d->auth, who, why, now);
		}
	}
	const char *rep[6] = {"1.0", f[1], code == 200 ? "200" : "400", code == 200 ? "OK" : why,
	                      user,  ""};
	size_t idlen = n >= 2 ? zmq_msg_size(&parts[1]) : 0;
	for (int i = 0; i < 6; i++) {
		const void *p = i == 1 && n >= 2 ? zmq_msg_data(&parts[1]) : rep[i];
		size_t len = i == 1 ? idlen : strlen(rep[i]);
		zmq_send(d->auth.zap, p, len, i < 5 ? ZMQ_SNDMORE : 0);
	}
}

void auth_zap_recv(struct ctld *d, mono_ns now)
{
	for (int k = 0; k < 256; k++) {
		zmq_msg_t parts[ZAP_FRAMES];
		int n = zmsg_recv(d->auth.zap, parts, ZAP_FRAMES);

		if (n == ZMSG_NONE)
			return;
		/* a REP socket must answer each request, even a malformed one */
		zap_answer(d, parts, n > 0 ? n : 0, now);
		if (n > 0)
			zmsg_close(parts, n);
	}
}
