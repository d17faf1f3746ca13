/*
 * The sampling round, every q (MemBUS "invoke performance monitoring framework", paper 000
 * Algorithm 1): reap exited processes (registry_reap; the controller is told they left,
 * their sampling state released), read each process's memory and network counters, feed the
 * w-window averages, and send one BW message with every figure and its source. A figure whose
 * source changes (say, the application starts reporting bytes) restarts its average, so windows of
 * different sources are never mixed. Network figures come from the sock_diag dump of each process's
 * own network namespace (snet.c); a process whose namespace is out of reach gets source none
 * (or app), logged once, never a silent 0.
 */
#include "agent.h"

#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "procfs.h"

#define MAX_FDS 4096

static void sample_node(struct agent *a, mono_ns now)
{
	uint64_t rx, tx;
	FILE *f = fopen("/proc/net/dev", "r");

	a->netdev_ok = false;
	if (!f)
		return;
	if (snet_parse_netdev(f, &rx, &tx) >= 0) {
		bwavg_push_counter(&a->node_rx, rx, now);
		bwavg_push_counter(&a->node_tx, tx, now);
		a->netdev_ok = true;
	}
	fclose(f);
}

static void sample_mem(struct agent *a, struct agent_proc *pr, mono_ns now)
{
	uint64_t bytes;
	uint8_t src = smem_read(&a->mem, &pr->mem, pr->app_bytes_seen, pr->app_mem_total, &bytes);

	if (src != pr->mem_src) {
		bwavg_init(&pr->mem_bw, (unsigned)a->cfg.windows);
		pr->mem_src = src;
		/* Reported bytes are a sum since registration: count them from there. */
		if (src == PCTL_SRC_APP)
			bwavg_push_counter(&pr->mem_bw, 0, pr->since);
	}
	if (src != PCTL_SRC_NONE)
		bwavg_push_counter(&pr->mem_bw, bytes, now);
}

/* The process exited (or its pid was reused) since this round's reap: the next reap
 * records it; until then its figures and sources stay as they were. */
static bool proc_gone(const struct agent_proc *pr)
{
	return procfs_starttime(pr->pid) != pr->starttime;
}

/*
 * The sockets of pr's network namespace this round, or NULL: then said once per process
 * (once per agent when it is the agent's own namespace whose dump fails); *gone set when
 * the reason is that the process has just exited.
 */
static const struct snet_table *net_table(struct agent *a, struct agent_proc *pr, bool *gone)
{
	static bool own_warned;
	struct snet_nsres r;
	int rc = snet_ns_table(&a->netns, pr->pid, &r);

	*gone = false;
	if (rc == 0)
		return r.t;
	if (proc_gone(pr)) {
		*gone = true;
		return NULL;
	}
	if (r.own) {
		if (!own_warned)
			log_warnx("%s: per-process network bandwidth unavailable", r.why);
		own_warned = true;
	} else if (!pr->net_warned) {
		pr->net_warned = true;
		a->cnt.net_unavailable++;
		log_warnx("job %s rank %u pid %d: no per-process network figures (%s): network "
		          "source none, or the bytes it reports",
		          a->jobs[pr->job].name, pr->rank, (int)pr->pid, r.why);
	}
	return NULL;
}

static void sample_net(struct agent *a, struct agent_proc *pr, uint64_t *ino, mono_ns now)
{
	uint64_t tx = 0, rx = 0;
	uint8_t src;
	bool gone;
	const struct snet_table *t = net_table(a, pr, &gone);
	int n = t ? snet_proc_inodes(pr->pid, ino, MAX_FDS) : -1;
	int first = 1;

	if (n >= 0) {
		first = snet_proc_delta(&pr->net, t, ino, (size_t)n, &tx, &rx);
		if (first < 0)
			n = -1;
	}
	if (n < 0 && (t ? proc_gone(pr) : gone))
		return; /* not a change of source: the process is gone */
	/* TCP sockets seen: sockdiag; none but the application reports bytes: app. */
	if (n >= 0 && (pr->net.had_sockets || !pr->app_bytes_seen))
		src = PCTL_SRC_SOCKDIAG;
	else if (pr->app_bytes_seen)
		src = PCTL_SRC_APP;
	else
		src = PCTL_SRC_NONE;
	if (src != pr->net_src) {
		bwavg_init(&pr->tx_bw, (unsigned)a->cfg.windows);
		bwavg_init(&pr->rx_bw, (unsigned)a->cfg.windows);
		pr->net_src = src;
		pr->net_t = 0;
		if (src == PCTL_SRC_APP)
			bwavg_push_counter(&pr->tx_bw, 0, pr->since);
	}
	if (src == PCTL_SRC_SOCKDIAG) {
		if (!first && pr->net_t && mono_before(pr->net_t, now)) {
			bwavg_push_delta(&pr->tx_bw, tx, now - pr->net_t);
			bwavg_push_delta(&pr->rx_bw, rx, now - pr->net_t);
		}
		pr->net_t = now;
	} else if (src == PCTL_SRC_APP) {
		/* The application reports a total, not a direction: it is shown as tx. */
		bwavg_push_counter(&pr->tx_bw, pr->app_net_total, now);
	}
}

void sampler_fill_bw(struct agent *a, struct pctl_bw *bw, struct pctl_bw_entry *e)
{
	uint16_t n = 0;

	memset(bw, 0, sizeof(*bw));
	bw->window_ns = a->cfg.sample_interval * (uint64_t)a->cfg.windows;
	bw->node_src = a->netdev_ok ? PCTL_SRC_PROCNETDEV : PCTL_SRC_NONE;
	bw->node_rx_bps = (uint64_t)bwavg_rate(&a->node_rx);
	bw->node_tx_bps = (uint64_t)bwavg_rate(&a->node_tx);
	for (int i = 0; i < a->cfg.max_procs && n < PCTL_MAX_ENTRIES; i++) {
		const struct agent_proc *pr = &a->procs[i];
		if (!pr->used || pr->exited)
			continue;
		e[n].job = a->jobs[pr->job].handle;
		e[n].rank = pr->rank;
		e[n].pid = pr->pid;
		e[n].mem_src = pr->mem_src;
		e[n].net_src = pr->net_src;
		e[n].mem_bps = (uint64_t)bwavg_rate(&pr->mem_bw);
		e[n].net_tx_bps = (uint64_t)bwavg_rate(&pr->tx_bw);
		e[n].net_rx_bps = (uint64_t)bwavg_rate(&pr->rx_bw);
		n++;
	}
	bw->n = n;
	bw->e = e;
}

void sampler_attach(struct agent *a, int p)
{
	struct agent_proc *pr = &a->procs[p];

	bwavg_init(&pr->mem_bw, (unsigned)a->cfg.windows);
	bwavg_init(&pr->tx_bw, (unsigned)a->cfg.windows);
	bwavg_init(&pr->rx_bw, (unsigned)a->cfg.windows);
	smem_attach(&a->mem, &pr->mem, pr->pid);
}

/* Releases what sampling holds for a process (counter fds, socket tables). */
static void sampler_release(struct agent *a, struct agent_proc *pr)
{
	smem_detach(&a->mem, &pr->mem);
	snet_proc_free(&pr->net);
}

void sampler_forget(struct agent *a, struct agent_gone *g)
{
	controller_announce(a, g->job_handle, g->job, g->proc.rank, g->proc.pid, PCTL_PROC_LEFT);
	sampler_release(a, &g->proc);
}

void sampler_release_all(struct agent *a)
{
	for (int i = 0; a->procs && i < a->cfg.max_procs; i++)
		if (a->procs[i].used)
			sampler_release(a, &a->procs[i]);
}

void sampler_round(struct agent *a)
{
	mono_ns now = mono_now();
	uint64_t *ino = malloc(MAX_FDS * sizeof(*ino));
	struct pctl_bw_entry *e = calloc((size_t)a->cfg.max_procs, sizeof(*e));
	struct agent_gone *gone = calloc((size_t)a->cfg.max_procs, sizeof(*gone));
	struct pctl_msg m;
	int ngone;

	if (!ino || !e || !gone)
		fatalx("out of memory");
	sample_node(a, now);
	ngone = registry_reap(a, now, gone);
	for (int i = 0; i < ngone; i++)
		sampler_forget(a, &gone[i]);
	/*
	 * Each network namespace with a live process is dumped once, when its first process is
	 * sampled (none: the kernel is spared the hash walk); the sockets kept for namespaces
	 * nobody lives in any more are closed at the end.
	 */
	snet_ns_begin(&a->netns);
	for (int i = 0; i < a->cfg.max_procs; i++) {
		struct agent_proc *pr = &a->procs[i];
		if (!pr->used || pr->exited)
			continue;
		sample_mem(a, pr, now);
		sample_net(a, pr, ino, now);
	}
	snet_ns_end(&a->netns);
	memset(&m, 0, sizeof(m));
	m.type = PCTL_BW;
	sampler_fill_bw(a, &m.u.bw, e);
	if (a->ctl.state == CTL_UP)
		ctl_send(a, &m);
	free(gone);
	free(e);
	free(ino);
}
