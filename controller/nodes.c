/*
 * The nodes: one record per node name, owned here from its first NODE_HELLO to the end.
 * A node is known by the routing id of the connection its agent registered on; it is down
 * when nothing came from it for node_timeout (default 3 heartbeats) and up again on its
 * next message. Each node also maps its agent's job handles (JOB_PROC, RATE, ...) to jobs.
 *
 * Registration (nodes_register) is where node identity changes: the agent restarted or
 * reconnected (same name, maybe a new connection: its ranks are forgotten until it
 * re-announces them, its pending acknowledgements are void) or a connection is re-used
 * under another name (the node that had it loses it and goes down).
 */
#include "controller.h"

#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "text.h"

int nodes_find(const struct ctld *d, const char *name)
{
	for (int i = 0; i < d->nnodes; i++)
		if (strcmp(d->nodes[i]->name, name) == 0)
			return i;
	return -1;
}

/*
 * Node by routing id, on the path of every agent message: an open-addressing table
 * (linear probing, FNV-1a) of node indices, sized a power of two > 2 * nnodes so a probe
 * always ends at an empty slot. Routing ids change only in nodes_register, which rebuilds
 * the table (O(nnodes), once per registration); there is no deletion. Invariant: every
 * node with idlen > 0 is in the table, and no two nodes share a routing id.
 */
static uint32_t id_hash(const uint8_t *id, size_t len)
{
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < len; i++)
		h = (h ^ id[i]) * 16777619u;
	return h;
}

void nodes_index(struct ctld *d)
{
	uint32_t cap = 16;

	while (cap <= 2 * (uint32_t)d->nnodes)
		cap *= 2;
	if (cap != d->id_cap) {
		int *t = realloc(d->id_tab, cap * sizeof(*t));
		if (t == NULL)
			fatalx("out of memory");
		d->id_tab = t;
		d->id_cap = cap;
	}
	for (uint32_t k = 0; k < cap; k++)
		d->id_tab[k] = -1;
	for (int i = 0; i < d->nnodes; i++) {
		const struct node *n = d->nodes[i];
		uint32_t k;

		if (n->idlen == 0)
			continue;
		k = id_hash(n->id, n->idlen) & (cap - 1);
		while (d->id_tab[k] >= 0)
			k = (k + 1) & (cap - 1);
		d->id_tab[k] = i;
	}
}

int nodes_by_id(const struct ctld *d, const uint8_t *id, size_t len)
{
	uint32_t k;

	if (d->id_cap == 0 || len == 0)
		return -1;
	k = id_hash(id, len) & (d->id_cap - 1);
	for (int i; (i = d->id_tab[k]) >= 0; k = (k + 1) & (d->id_cap - 1)) {
		const struct node *n = d->nodes[i];

		if (n->idlen == len && memcmp(n->id, id, len) == 0)
			return i;
	}
	return -1;
}

static int node_add(struct ctld *d, const struct pctl_hello *h)
{
	struct node *n;

	if (d->nnodes == d->cap_nodes) {
		int cap = d->cap_nodes ? 2 * d->cap_nodes : 16;
		struct node **nn = realloc(d->nodes, (size_t)cap * sizeof(*nn));
		if (nn == NULL)
			fatalx("out of memory");
		d->nodes = nn;
		d->cap_nodes = cap;
	}
	n = calloc(1, sizeof(*n));
	if (n == NULL)
		fatalx("out of memory");
	text_fmt(n->name, sizeof(n->name), "%s", h->node);
	d->nodes[d->nnodes] = n;
	log_info("node %s registered: %u CPUs, memory %llu MB/s, network %llu MB/s", n->name,
	         h->ncpus, (unsigned long long)(h->mem_capacity / 1000000),
	         (unsigned long long)(h->net_capacity / 1000000));
	return d->nnodes++;
}

/* Node i goes down: its transactions stop waiting for it. */
static void node_down(struct ctld *d, int i, mono_ns now)
{
	d->nodes[i]->up = false;
	plan_changed(d);
	txn_node_gone(d, i, true, now);
}

/* The same node again: its job handles are void, the agent re-announces every process. */
static void node_again(struct ctld *d, int i, const uint8_t *id, size_t idlen,
                       const struct pctl_hello *h, mono_ns now)
{
	struct node *n = d->nodes[i];

	if (n->up && (n->idlen != idlen || memcmp(n->id, id, idlen) != 0))
		log_warnx("node %s: registered again from another connection (agent "
		          "restarted?); the new one wins",
		          n->name);
	else
		log_info("node %s registered again%s", n->name,
		         n->instance != h->instance ? " (agent restarted)" : "");
	jobs_forget_node(d, i);
	txn_node_gone(d, i, false, now);
	n->nhandles = 0;
	plan_changed(d);
}

int nodes_register(struct ctld *d, const uint8_t *id, size_t idlen, const struct pctl_hello *h,
                   mono_ns now)
{
	int i = nodes_find(d, h->node);
	struct node *n;

	if (i < 0)
		i = node_add(d, h);
	else
		node_again(d, i, id, idlen, h, now);
	/* a routing id belongs to one node: a connection re-used under another name */
	for (int k = 0; k < d->nnodes; k++) {
		struct node *o = d->nodes[k];

		if (k != i && o->idlen == idlen && memcmp(o->id, id, idlen) == 0) {
			o->idlen = 0;
			if (o->up)
				node_down(d, k, now);
		}
	}
	n = d->nodes[i];
	memcpy(n->id, id, idlen);
	n->idlen = idlen;
	nodes_index(d);
	n->ncpus = h->ncpus;
	n->mem_cap = h->mem_capacity;
	n->net_cap = h->net_capacity;
	n->instance = h->instance;
	n->up = true;
	n->last_seen = now;
	n->hello_at = now;
	n->sum_u = 0;
	n->nprocs = 0;
	return i;
}

void nodes_seen(struct ctld *d, int i, mono_ns now)
{
	struct node *n = d->nodes[i];

	if (!n->up) {
		log_info("node %s is back", n->name);
		n->up = true;
		plan_changed(d); /* its jobs are planned again */
	}
	n->last_seen = now;
}

void nodes_tick(struct ctld *d, mono_ns now)
{
	for (int i = 0; i < d->nnodes; i++) {
		struct node *n = d->nodes[i];

		if (!n->up || now - n->last_seen <= d->cfg.node_timeout)
			continue;
		log_warnx("node %s down: nothing heard for %.1f s", n->name,
		          (double)(now - n->last_seen) / 1e9);
		node_down(d, i, now);
	}
}

mono_ns nodes_next(const struct ctld *d)
{
	mono_ns next = 0;

	for (int i = 0; i < d->nnodes; i++) {
		const struct node *n = d->nodes[i];
		mono_ns at = n->last_seen + d->cfg.node_timeout + 1;

		if (n->up && (next == 0 || mono_before(at, next)))
			next = at;
	}
	return next;
}

int nodes_handle_job(const struct node *n, uint32_t handle)
{
	for (uint32_t i = 0; i < n->nhandles; i++)
		if (n->handles[i].handle == handle)
			return n->handles[i].job;
	return -1;
}

void nodes_handle_set(struct node *n, uint32_t handle, int job)
{
	for (uint32_t i = 0; i < n->nhandles; i++) {
		if (n->handles[i].handle == handle) {
			n->handles[i].job = job;
			return;
		}
	}
	if (n->nhandles == n->cap_handles) {
		uint32_t cap = n->cap_handles ? 2 * n->cap_handles : 8;
		struct node_job *h = realloc(n->handles, cap * sizeof(*h));
		if (h == NULL)
			fatalx("out of memory");
		n->handles = h;
		n->cap_handles = cap;
	}
	n->handles[n->nhandles].handle = handle;
	n->handles[n->nhandles].job = job;
	n->nhandles++;
}

void nodes_free(struct ctld *d)
{
	for (int i = 0; i < d->nnodes; i++) {
		free(d->nodes[i]->handles);
		outbox_free(&d->nodes[i]->out);
		free(d->nodes[i]);
	}
	free(d->nodes);
	d->nodes = NULL;
	d->nnodes = d->cap_nodes = 0;
	free(d->id_tab);
	d->id_tab = NULL;
	d->id_cap = 0;
}
