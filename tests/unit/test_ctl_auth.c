/*
 * Unit tests of the controller's authentication (controller/auth.c) and the key files
 * (common/curve.c): the ZAP decision for every role and endpoint (an agent key on the
 * agents' endpoint only, admin keys on the admin endpoint only, unknown keys nowhere, ipc
 * peers by uid and group), the per-message role lookup, key files written by keygen read
 * back, bad files refused with a reason, and what counts as a loopback endpoint.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "controller.h"

/* A table of three keys: node n1, a read-only and a full admin. */
static void table(struct auth *a, char pubs[3][41], uint8_t raw[3][32])
{
	static struct auth_key k[3];
	const uint8_t roles[3] = {AUTH_AGENT, AUTH_ADMIN_READ, AUTH_ADMIN_FULL};
	const char *names[3] = {"n1", "ro", "full"};
	char sec[41];

	memset(a, 0, sizeof(*a));
	for (int i = 0; i < 3; i++) {
		assert_int_equal(zmq_curve_keypair(pubs[i], sec), 0);
		assert_non_null(zmq_z85_decode(raw[i], pubs[i]));
		memcpy(k[i].pub, pubs[i], 41);
		k[i].role = roles[i];
		snprintf(k[i].name, sizeof(k[i].name), "%s", names[i]);
	}
	/* sorted, as auth_load leaves it */
	for (int i = 0; i < 3; i++)
		for (int j = i + 1; j < 3; j++)
			if (strcmp(k[i].pub, k[j].pub) > 0) {
				struct auth_key t = k[i];
				k[i] = k[j];
				k[j] = t;
			}
	a->keys = k;
	a->nkeys = 3;
	a->curve = true;
}

static int decide(struct auth *a, const char *domain, const char *addr, const char *mech,
                  const uint8_t *cred, char *user)
{
	char why[160];

	return auth_decide(a, domain, addr, mech, cred, cred ? 32 : 0, user, 64, why, sizeof(why));
}

static void test_zap_decisions(void **state)
{
	struct auth a;
	char pubs[3][41], user[64];
	uint8_t raw[3][32], stranger[32];
	(void)state;

	table(&a, pubs, raw);
	memset(stranger, 7, sizeof(stranger));
	/* agents' endpoint: the agent key only; the User-Id is the key */
	assert_int_equal(decide(&a, "agents", "127.0.0.1", "CURVE", raw[0], user), 200);
	assert_string_equal(user, pubs[0]);
	assert_int_equal(decide(&a, "agents", "127.0.0.1", "CURVE", raw[1], user), 400);
	assert_int_equal(decide(&a, "agents", "127.0.0.1", "CURVE", raw[2], user), 400);
	assert_int_equal(decide(&a, "agents", "127.0.0.1", "CURVE", stranger, user), 400);
	assert_int_equal(decide(&a, "agents", "127.0.0.1", "NULL", NULL, user), 400);
	assert_int_equal(decide(&a, "agents", "localhost:0:0:1", "NULL", NULL, user), 400);
	/* admin endpoint: admin keys only */
	assert_int_equal(decide(&a, "admin", "127.0.0.1", "CURVE", raw[0], user), 400);
	assert_int_equal(decide(&a, "admin", "127.0.0.1", "CURVE", raw[1], user), 200);
	assert_int_equal(decide(&a, "admin", "127.0.0.1", "CURVE", raw[2], user), 200);
	assert_int_equal(decide(&a, "admin", "127.0.0.1", "CURVE", stranger, user), 400);
	assert_int_equal(decide(&a, "admin", "127.0.0.1", "PLAIN", NULL, user), 400);
	assert_int_equal(decide(&a, "other", "127.0.0.1", "CURVE", raw[0], user), 400);
	/* ipc peers: root and this user; others only through admin_group */
	assert_int_equal(decide(&a, "admin", "localhost:0:0:123", "NULL", NULL, user), 200);
	assert_string_equal(user, "uid:0");
	assert_int_equal(decide(&a, "admin", "localhost:65534:65534:9", "NULL", NULL, user), 400);
	a.has_group = true;
	a.admin_gid = 4;
	assert_int_equal(decide(&a, "admin", "localhost:65534:4:9", "NULL", NULL, user), 200);
	assert_int_equal(decide(&a, "admin", "localhost:65534:5:9", "NULL", NULL, user), 400);
	assert_int_equal(decide(&a, "admin", "localhost:x:4:9", "NULL", NULL, user), 400);
	assert_int_equal(decide(&a, "admin", "garbage", "NULL", NULL, user), 400);
	/* a key table without CURVE configured admits no key */
	a.curve = false;
	assert_int_equal(decide(&a, "agents", "127.0.0.1", "CURVE", raw[0], user), 400);
	a.keys = NULL;
}

static void test_role_per_message(void **state)
{
	struct auth a;
	char pubs[3][41];
	uint8_t raw[3][32];
	const char *name;
	zmq_msg_t m;
	(void)state;

	table(&a, pubs, raw);
	zmq_msg_init(&m); /* no User-Id on a message from an unauthenticated pipe */
	assert_int_equal(auth_role(&a, false, &m, &name), AUTH_OPEN);
	assert_int_equal(auth_role(&a, true, &m, &name), AUTH_NONE);
	zmq_msg_close(&m);
	for (int i = 0; i < 3; i++)
		assert_string_equal(auth_find(&a, pubs[i])->pub, pubs[i]);
	assert_string_equal(auth_find(&a, pubs[0])->name, "n1");
	assert_int_equal(auth_find(&a, pubs[1])->role, AUTH_ADMIN_READ);
	assert_null(auth_find(&a, "0000000000000000000000000000000000000000"));
	assert_null(auth_find(&a, "short"));
	a.keys = NULL;
}

static void write_file(const char *path, const char *text, mode_t mode)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	chmod(path, mode);
}

static void test_key_files(void **state)
{
	char dir[] = "/tmp/ctl_auth_XXXXXX", p[256], sp[256], why[512];
	struct curve_cert c;
	struct stat st;
	(void)state;

	assert_non_null(mkdtemp(dir));
	snprintf(p, sizeof(p), "%s/n1", dir);
	snprintf(sp, sizeof(sp), "%s/n1_secret", dir);
	assert_int_equal(curve_keygen(p, "n1", NULL, why, sizeof(why)), 0);
	assert_int_equal(stat(sp, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_int_equal(curve_cert_load(sp, true, &c, why, sizeof(why)), 0);
	assert_string_equal(c.node, "n1");
	assert_true(curve_z85_ok(c.pub) && curve_z85_ok(c.sec));
	char pub[41];
	memcpy(pub, c.pub, sizeof(pub));
	assert_int_equal(curve_cert_load(p, false, &c, why, sizeof(why)), 0);
	assert_string_equal(c.pub, pub);
	assert_string_equal(c.sec, "");
	/* the wrong file for the purpose, a second keygen, bad modes and contents */
	assert_int_equal(curve_cert_load(p, true, &c, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "no secret-key"));
	assert_int_equal(curve_cert_load(sp, false, &c, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "holds a secret key"));
	assert_int_equal(curve_keygen(p, "n1", NULL, why, sizeof(why)), -1);
	assert_int_equal(curve_keygen(p, "bad name", NULL, why, sizeof(why)), -1);
	assert_int_equal(curve_keygen(p, NULL, "root", why, sizeof(why)), -1);
	chmod(sp, 0640);
	assert_int_equal(curve_cert_load(sp, true, &c, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "mode 0640"));
	snprintf(p, sizeof(p), "%s/bad", dir);
	write_file(p, "curve\n    public-key = \"unterminated\n", 0600);
	assert_int_equal(curve_cert_load(p, false, &c, why, sizeof(why)), -1);
	assert_non_null(strstr(why, ":2: "));
	write_file(p, "metadata\n    node = \"a b\"\n", 0600);
	assert_int_equal(curve_cert_load(p, false, &c, why, sizeof(why)), -1);
	write_file(p, "curve\n    public-key = \"0000000000000000000000000000000000000000\"\n",
	           0600);
	assert_int_equal(curve_cert_load(p, false, &c, why, sizeof(why)), 0);
	write_file(p, "curve\n    public-key = \"000000000000000000000000000000000000000~\"\n",
	           0600);
	assert_int_equal(curve_cert_load(p, false, &c, why, sizeof(why)), -1);
	write_file(p, "", 0600);
	assert_int_equal(curve_cert_load(p, false, &c, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "no public-key"));
	assert_int_equal(curve_cert_load(dir, false, &c, why, sizeof(why)), -1);
	snprintf(p, sizeof(p), "rm -rf %s", dir);
	assert_int_equal(system(p), 0);
}

static void test_loopback(void **state)
{
	(void)state;
	assert_true(curve_endpoint_local("tcp://127.0.0.1:7710"));
	assert_true(curve_endpoint_local("tcp://127.1.2.3:*"));
	assert_true(curve_endpoint_local("tcp://localhost:7710"));
	assert_true(curve_endpoint_local("tcp://[::1]:7710"));
	assert_true(curve_endpoint_local("ipc:///run/x.sock"));
	assert_true(curve_endpoint_local("inproc://x"));
	assert_false(curve_endpoint_local("tcp://0.0.0.0:7710"));
	assert_false(curve_endpoint_local("tcp://*:7710"));
	assert_false(curve_endpoint_local("tcp://10.0.0.1:7710"));
	assert_false(curve_endpoint_local("tcp://eth0:7710"));
	assert_false(curve_endpoint_local("tcp://127.0.0.1.evil.com:7710"));
	assert_false(curve_endpoint_local("tcp://localhostx:7710"));
	assert_false(curve_endpoint_local("tcp://127.0.0.1"));
	assert_false(curve_endpoint_local("tcp://[::]:7710"));
	assert_false(curve_endpoint_local("udp://127.0.0.1:1"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_zap_decisions),
	    cmocka_unit_test(test_role_per_message),
	    cmocka_unit_test(test_key_files),
	    cmocka_unit_test(test_loopback),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
