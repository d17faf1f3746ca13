/*
 * Unit tests of the controller's node lookup by agent routing id (controller/nodes.c),
 * which runs for every agent message:
 *   - the hash table agrees with a linear scan (the previous implementation) for 1,000
 *     nodes with ids of every length, ZeroMQ's own 5-byte ids included, for known and
 *     unknown ids, and again after ids were cleared and changed and the table rebuilt;
 *   - through the real agents' socket (inproc), with the loop's end of turn sending what
 *     was queued: registered nodes are answered, an agent
 *     that registers again from a new connection takes the node over and its old
 *     connection is told to register (HELLO_ACK -ENOENT), an unknown connection too.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <zmq.h>

#include "controller.h"

/* The lookup as it was: a linear scan (the oracle). */
static int scan(const struct ctld *d, const uint8_t *id, size_t len)
{
	for (int i = 0; i < d->nnodes; i++)
		if (len > 0 && d->nodes[i]->idlen == len && memcmp(d->nodes[i]->id, id, len) == 0)
			return i;
	return -1;
}

static void add_node(struct ctld *d, const uint8_t *id, size_t len)
{
	struct node *n = calloc(1, sizeof(*n));

	assert_non_null(n);
	snprintf(n->name, sizeof(n->name), "n%d", d->nnodes);
	memcpy(n->id, id, len);
	n->idlen = len;
	if (d->nnodes == d->cap_nodes) {
		d->cap_nodes = d->cap_nodes ? 2 * d->cap_nodes : 16;
		d->nodes = realloc(d->nodes, (size_t)d->cap_nodes * sizeof(*d->nodes));
		assert_non_null(d->nodes);
	}
	d->nodes[d->nnodes++] = n;
}

/* A random id of 1..CTLD_ID_MAX bytes, or ZeroMQ's form (0 + 4-byte counter). */
static size_t random_id(uint8_t *id, unsigned *seed, uint32_t counter)
{
	size_t len;

	if (rand_r(seed) % 2) {
		id[0] = 0;
		memcpy(id + 1, &counter, 4);
		return 5;
	}
	len = 1 + (size_t)rand_r(seed) % CTLD_ID_MAX;
	for (size_t k = 0; k < len; k++)
		id[k] = (uint8_t)rand_r(seed);
	return len;
}

static void check_all(const struct ctld *d, unsigned *seed)
{
	uint8_t id[CTLD_ID_MAX];
	size_t len;

	for (int i = 0; i < d->nnodes; i++) {
		const struct node *n = d->nodes[i];
		if (n->idlen > 0)
			assert_int_equal(nodes_by_id(d, n->id, n->idlen), i);
	}
	for (int k = 0; k < 5000; k++) { /* mostly unknown ids; some collide with known */
		len = random_id(id, seed, 0x80000000u + (uint32_t)(rand_r(seed) % 2000));
		assert_int_equal(nodes_by_id(d, id, len), scan(d, id, len));
	}
	/* a prefix or an extension of a known id is another id */
	for (int i = 0; i < d->nnodes; i++) {
		const struct node *n = d->nodes[i];
		if (n->idlen > 1)
			assert_int_equal(nodes_by_id(d, n->id, n->idlen - 1),
			                 scan(d, n->id, n->idlen - 1));
	}
	assert_int_equal(nodes_by_id(d, id, 0), -1);
}

static void test_index_matches_scan(void **state)
{
	struct ctld d;
	uint8_t id[CTLD_ID_MAX];
	unsigned seed = 12345;
	(void)state;

	memset(&d, 0, sizeof(d));
	assert_int_equal(nodes_by_id(&d, (const uint8_t *)"x", 1), -1); /* no table */
	nodes_index(&d);
	assert_int_equal(nodes_by_id(&d, (const uint8_t *)"x", 1), -1); /* no nodes */
	for (uint32_t i = 0; i < 1000; i++) {
		size_t len = random_id(id, &seed, 0x80000000u + i);
		if (scan(&d, id, len) >= 0)
			continue; /* routing ids are unique (on_hello keeps them so) */
		add_node(&d, id, len);
		if (i % 97 == 0) { /* tables of every size on the way */
			nodes_index(&d);
			check_all(&d, &seed);
		}
	}
	nodes_index(&d);
	assert_true(d.id_cap > 2 * (uint32_t)d.nnodes);
	check_all(&d, &seed);
	/* ids cleared (a connection re-used by another node) and changed (re-registration) */
	size_t *was = calloc((size_t)d.nnodes, sizeof(*was));
	assert_non_null(was);
	for (int i = 0; i < d.nnodes; i += 3) {
		was[i] = d.nodes[i]->idlen;
		d.nodes[i]->idlen = 0;
	}
	for (int i = 1; i < d.nnodes; i += 7) {
		if (i % 3 == 0)
			continue;
		size_t len = random_id(id, &seed, 0x90000000u + (uint32_t)i);
		if (scan(&d, id, len) < 0) {
			memcpy(d.nodes[i]->id, id, len);
			d.nodes[i]->idlen = len;
		}
	}
	nodes_index(&d);
	check_all(&d, &seed);
	for (int i = 0; i < d.nnodes; i += 3) /* cleared ones are gone */
		assert_int_equal(nodes_by_id(&d, d.nodes[i]->id, was[i]), -1);
	free(was);
	nodes_free(&d);
}

/* ---- through the socket ---- */

static void *agent(void *zctx, const char *ep, const char *rid)
{
	void *s = zmq_socket(zctx, ZMQ_DEALER);
	int zero = 0;

	assert_non_null(s);
	zmq_setsockopt(s, ZMQ_LINGER, &zero, sizeof(zero));
	assert_int_equal(zmq_setsockopt(s, ZMQ_ROUTING_ID, rid, strlen(rid)), 0);
	assert_int_equal(zmq_connect(s, ep), 0);
	return s;
}

static void send_msg(void *s, const struct pctl_msg *m)
{
	uint8_t buf[512];
	int n = pctl_encode(m, buf, sizeof(buf));

	assert_true(n > 0);
	assert_int_equal(zmq_send(s, buf, (size_t)n, 0), n);
}

static void hello(void *s, const char *node)
{
	struct pctl_msg m = {.type = PCTL_NODE_HELLO};

	m.u.hello.proto_version = PCTL_VERSION;
	m.u.hello.ncpus = 2;
	m.u.hello.instance = 1;
	snprintf(m.u.hello.node, sizeof(m.u.hello.node), "%s", node);
	send_msg(s, &m);
}

static void heartbeat(void *s, uint64_t seq)
{
	struct pctl_msg m = {.type = PCTL_HEARTBEAT};

	m.u.hb.seq = seq;
	send_msg(s, &m);
}

/* Lets the controller read what is waiting, then the next message to agent s. */
static void expect(struct ctld *d, void *s, struct pctl_msg *m)
{
	zmq_pollitem_t it = {.socket = s, .events = ZMQ_POLLIN};
	uint8_t buf[512];
	char why[200];
	int n;

	for (int k = 0; k < 100; k++) {
		agents_recv(d, 1);
		loop_end_turn(d, 1);
		if (zmq_poll(&it, 1, 10) == 1)
			break;
	}
	n = zmq_recv(s, buf, sizeof(buf), ZMQ_DONTWAIT);
	assert_true(n > 0);
	assert_int_equal(pctl_decode(buf, (size_t)n, m, why, sizeof(why)), 0);
}

static void test_through_socket(void **state)
{
	struct ctld d;
	struct pctl_msg m;
	void *a, *b, *a2, *x;
	(void)state;

	memset(&d, 0, sizeof(d));
	ctld_config_defaults(&d.cfg);
	snprintf(d.cfg.agents, sizeof(d.cfg.agents), "inproc://test-ctl-agents");
	d.zctx = zmq_ctx_new();
	assert_non_null(d.zctx);
	assert_int_equal(agents_open(&d), 0);

	a = agent(d.zctx, d.cfg.agents, "conn-a");
	b = agent(d.zctx, d.cfg.agents, "conn-b");
	hello(a, "n1");
	expect(&d, a, &m);
	assert_int_equal(m.type, PCTL_HELLO_ACK);
	assert_int_equal(m.u.hello_ack.status, 0);
	hello(b, "n2");
	expect(&d, b, &m);
	assert_int_equal(m.u.hello_ack.status, 0);
	assert_int_equal(d.nnodes, 2);
	/* known connections: heartbeats echoed */
	heartbeat(a, 7);
	expect(&d, a, &m);
	assert_int_equal(m.type, PCTL_HEARTBEAT);
	assert_int_equal(m.u.hb.seq, 7);
	heartbeat(b, 8);
	expect(&d, b, &m);
	assert_int_equal(m.u.hb.seq, 8);
	/* n1's agent restarts on a new connection: the old one is no longer n1 */
	a2 = agent(d.zctx, d.cfg.agents, "conn-a2");
	hello(a2, "n1");
	expect(&d, a2, &m);
	assert_int_equal(m.u.hello_ack.status, 0);
	assert_int_equal(d.nnodes, 2);
	heartbeat(a, 9);
	expect(&d, a, &m);
	assert_int_equal(m.type, PCTL_HELLO_ACK);
	assert_int_equal(m.u.hello_ack.status, -ENOENT);
	heartbeat(a2, 10);
	expect(&d, a2, &m);
	assert_int_equal(m.type, PCTL_HEARTBEAT);
	assert_int_equal(m.u.hb.seq, 10);
	assert_true(d.nodes[0]->last_seen == 1 && d.nodes[0]->up);
	/* a connection never registered */
	x = agent(d.zctx, d.cfg.agents, "conn-x");
	heartbeat(x, 11);
	expect(&d, x, &m);
	assert_int_equal(m.type, PCTL_HELLO_ACK);
	assert_int_equal(m.u.hello_ack.status, -ENOENT);

	zmq_close(a);
	zmq_close(b);
	zmq_close(a2);
	zmq_close(x);
	agents_close(&d);
	jobs_free(&d);
	nodes_free(&d);
	zmq_ctx_term(d.zctx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_index_matches_scan),
	    cmocka_unit_test(test_through_socket),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
