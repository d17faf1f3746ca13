/*
 * Network namespaces in vsched-agent's network sampling (agent/snet.c, sampler.c):
 *  - the namespace cache with injected probes: processes grouped by namespace, each
 *    namespace dumped once per round, a foreign one through a socket made inside it and
 *    kept across rounds, closed when no process lives there any more, made afresh after a
 *    failed dump; a namespace that cannot be entered (setns refused) or a process whose
 *    namespace cannot be read gives an error with the reason, never a table;
 *  - the sampler: such a process reports net_src none (not sockdiag with 0 B/s), logged and
 *    counted once however many rounds, while a process of the agent's own namespace keeps
 *    sockdiag;
 *  - the real thing (root, else skipped): a child in a new network namespace moves a known
 *    number of bytes over its own loopback; the real probes (setns in, socket, setns back)
 *    attribute them within 5 %, the agent's own dump does not hold those sockets, and
 *    afterwards this thread and another one are both in the original namespace.
 */
#include <errno.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "agent.h"
#include "procfs.h"
#include "log.h"

/* ---- injected probes ------------------------------------------------------------------ */

#define OWN_NS     10 /* the agent's namespace */
#define FOREIGN_NS 20 /* can be entered */
#define REFUSED_NS 30 /* setns refused */
#define SELF_FD    900

struct fake_proc {
	pid_t pid;
	uint64_t ns; /* 0: /proc/PID/ns/net unreadable (process gone) */
};

static struct fake_proc fprocs[8];
static int n_socket_in[64], n_dump[64];
static int closed[64], nclosed;
static int fail_dump_fd = -1;

static int fake_open_self(struct snet_nsid *id)
{
	id->dev = 1;
	id->ino = OWN_NS;
	return SELF_FD;
}

static int fake_ns_of(pid_t pid, struct snet_nsid *id)
{
	for (size_t i = 0; i < sizeof(fprocs) / sizeof(fprocs[0]); i++)
		if (fprocs[i].pid == pid) {
			if (!fprocs[i].ns)
				return -ENOENT;
			id->dev = 1;
			id->ino = fprocs[i].ns;
			return 0;
		}
	return -ENOENT;
}

static int fake_socket_in(int selfns, const struct snet_nsid *self, pid_t pid,
                          const struct snet_nsid *id, char *why, size_t whylen)
{
	(void)pid;
	assert_int_equal(selfns, SELF_FD);
	assert_true(self->ino == OWN_NS);
	assert_true(id->ino != OWN_NS); /* never asked to enter our own */
	n_socket_in[id->ino]++;
	if (id->ino == REFUSED_NS) {
		snprintf(why, whylen, "setns(/proc/%d/ns/net): %s", (int)pid, strerror(EPERM));
		return -EPERM;
	}
	return 100 + (int)id->ino;
}

/* One socket per namespace, inode ns * 1000; fd -1 is our own namespace. */
static int fake_dump(int fd, struct snet_table *t)
{
	uint64_t ns = fd < 0 ? OWN_NS : (uint64_t)(fd - 100);

	n_dump[ns]++;
	t->n = 0;
	if (fd >= 0 && fd == fail_dump_fd)
		return -EIO;
	if (t->cap == 0) {
		t->s = calloc(1, sizeof(*t->s));
		assert_non_null(t->s);
		t->cap = 1;
	}
	t->s[0].ino = ns * 1000;
	t->s[0].acked = ns;
	t->s[0].received = ns;
	t->n = 1;
	return 0;
}

static void fake_close(int fd)
{
	assert_true(nclosed < 64);
	closed[nclosed++] = fd;
}

static bool was_closed(int fd)
{
	for (int i = 0; i < nclosed; i++)
		if (closed[i] == fd)
			return true;
	return false;
}

static const struct snet_nsops fake_ops = {
    .open_self = fake_open_self,
    .ns_of = fake_ns_of,
    .socket_in = fake_socket_in,
    .dump = fake_dump,
    .close = fake_close,
};

static int reset_fakes(void **state)
{
	(void)state;
	memset(fprocs, 0, sizeof(fprocs));
	memset(n_socket_in, 0, sizeof(n_socket_in));
	memset(n_dump, 0, sizeof(n_dump));
	nclosed = 0;
	fail_dump_fd = -1;
	return 0;
}

static void test_grouping_and_cache(void **state)
{
	struct snet_nscache c;
	struct snet_nsres r1, r2, r3, r;
	const struct snet_table *t2;

	(void)state;
	fprocs[0] = (struct fake_proc){1, OWN_NS};
	fprocs[1] = (struct fake_proc){2, FOREIGN_NS};
	fprocs[2] = (struct fake_proc){3, FOREIGN_NS};
	fprocs[3] = (struct fake_proc){4, REFUSED_NS};
	fprocs[4] = (struct fake_proc){5, 0};
	assert_int_equal(snet_ns_init(&c, &fake_ops, 8), 0);

	/* Round 1: each namespace dumped once, the foreign one through a socket made inside. */
	snet_ns_begin(&c);
	assert_int_equal(snet_ns_table(&c, 1, &r1), 0);
	assert_true(r1.own);
	assert_true(r1.t->n == 1 && r1.t->s[0].ino == OWN_NS * 1000);
	assert_int_equal(snet_ns_table(&c, 2, &r2), 0);
	assert_false(r2.own);
	assert_true(r2.t->n == 1 && r2.t->s[0].ino == FOREIGN_NS * 1000);
	t2 = r2.t;
	assert_int_equal(snet_ns_table(&c, 3, &r3), 0);
	assert_ptr_equal(r3.t, t2); /* same namespace, same dump */
	assert_int_equal(snet_ns_table(&c, 4, &r), -EPERM);
	assert_null(r.t);
	assert_false(r.own);
	assert_non_null(strstr(r.why, "setns(/proc/4/ns/net)"));
	assert_non_null(strstr(r.why, strerror(EPERM)));
	assert_int_equal(snet_ns_table(&c, 5, &r), -ENOENT);
	assert_null(r.t);
	assert_non_null(strstr(r.why, "/proc/5/ns/net"));
	snet_ns_end(&c);
	assert_int_equal(n_dump[OWN_NS], 1);
	assert_int_equal(n_socket_in[FOREIGN_NS], 1);
	assert_int_equal(n_dump[FOREIGN_NS], 1);
	assert_int_equal(n_socket_in[REFUSED_NS], 1);
	assert_int_equal(n_dump[REFUSED_NS], 0);
	assert_true(c.n == 3);
	assert_int_equal(nclosed, 0);
	assert_true(c.entered == 1);

	/* Round 2: the foreign socket is kept (no setns), dumped again; refused is retried. */
	snet_ns_begin(&c);
	for (pid_t p = 1; p <= 5; p++)
		(void)snet_ns_table(&c, p, &r);
	snet_ns_end(&c);
	assert_int_equal(n_socket_in[FOREIGN_NS], 1);
	assert_int_equal(n_dump[FOREIGN_NS], 2);
	assert_int_equal(n_dump[OWN_NS], 2);
	assert_int_equal(n_socket_in[REFUSED_NS], 2);

	/* Round 3: nobody left in the foreign namespace: its socket is closed, entry gone. */
	snet_ns_begin(&c);
	assert_int_equal(snet_ns_table(&c, 1, &r), 0);
	snet_ns_end(&c);
	assert_true(was_closed(100 + FOREIGN_NS));
	assert_true(c.n == 1);

	/* Round 4: back: a new socket is made inside. */
	snet_ns_begin(&c);
	assert_int_equal(snet_ns_table(&c, 2, &r), 0);
	snet_ns_end(&c);
	assert_int_equal(n_socket_in[FOREIGN_NS], 2);

	/* Round 5: the dump fails on the kept socket: an error, and the socket is dropped... */
	nclosed = 0;
	fail_dump_fd = 100 + FOREIGN_NS;
	snet_ns_begin(&c);
	assert_int_equal(snet_ns_table(&c, 2, &r), -EIO);
	assert_null(r.t);
	assert_non_null(strstr(r.why, "sock_diag dump"));
	assert_int_equal(snet_ns_table(&c, 3, &r), -EIO); /* same round: not tried again */
	assert_int_equal(n_dump[FOREIGN_NS], 4);
	snet_ns_end(&c);
	assert_true(was_closed(100 + FOREIGN_NS));
	/* ...and round 6 makes a fresh one. */
	fail_dump_fd = -1;
	snet_ns_begin(&c);
	assert_int_equal(snet_ns_table(&c, 2, &r), 0);
	snet_ns_end(&c);
	assert_int_equal(n_socket_in[FOREIGN_NS], 3);

	/* Free: the kept socket and our own namespace's fd. */
	nclosed = 0;
	snet_ns_free(&c);
	assert_true(was_closed(100 + FOREIGN_NS));
	assert_true(was_closed(SELF_FD));
	assert_int_equal(nclosed, 2);
	snet_ns_free(&c); /* twice: harmless */
}

/* Our own namespace cannot be opened: it is still dumped; no other can be entered. */
static int no_self(struct snet_nsid *id)
{
	(void)id;
	return -ENOENT;
}

static void test_no_own_namespace_fd(void **state)
{
	struct snet_nsops ops = fake_ops;
	struct snet_nscache c;
	struct snet_nsres r;

	(void)state;
	ops.open_self = no_self;
	fprocs[0] = (struct fake_proc){getpid(), OWN_NS};
	fprocs[1] = (struct fake_proc){2, FOREIGN_NS};
	assert_int_equal(snet_ns_init(&c, &ops, 4), 0);
	assert_int_equal(c.self_fd, -1);
	snet_ns_begin(&c);
	assert_int_equal(snet_ns_table(&c, getpid(), &r), 0);
	assert_true(r.own);
	snet_ns_end(&c);
	/* fake_socket_in insists on SELF_FD: give the real refusal path instead. */
	ops = snet_default_nsops();
	assert_true(ops.socket_in(-1, &c.self, 2, &(struct snet_nsid){1, FOREIGN_NS}, c.why,
	                          sizeof(c.why)) == -EBADF);
	assert_non_null(strstr(c.why, "own network namespace is unknown"));
	snet_ns_free(&c);
}

/* ---- the sampler: source none, logged once -------------------------------------------- */

static int no_pmu(pid_t pid)
{
	(void)pid;
	return -ENOENT;
}

static int no_read(int fd, uint64_t *v)
{
	(void)fd;
	(void)v;
	return -EIO;
}

static pid_t idle_child(void)
{
	pid_t p = fork();

	assert_true(p >= 0);
	if (p == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		alarm(30);
		pause();
		_exit(0);
	}
	return p;
}

static void test_sampler_source_none(void **state)
{
	static struct agent a;
	struct smem_ops mops = {
	    .perf_open = no_pmu, .perf_read = no_read, .resctrl_root = "/nonexistent"};
	char why[128];
	pid_t own = idle_child(), far = idle_child();
	int iown, ifar;

	(void)state;
	memset(&a, 0, sizeof(a));
	agent_config_defaults(&a.cfg);
	a.cfg.max_procs = 4;
	bwavg_init(&a.node_rx, (unsigned)a.cfg.windows); /* as main.c's setup */
	bwavg_init(&a.node_tx, (unsigned)a.cfg.windows);
	smem_detect(&a.mem, &mops);
	assert_int_equal(registry_init(&a), 0);
	assert_int_equal(snet_ns_init(&a.netns, &fake_ops, 5), 0);
	fprocs[0] = (struct fake_proc){own, OWN_NS};
	fprocs[1] = (struct fake_proc){far, REFUSED_NS};
	iown = registry_add_proc(&a, "jobN", 0, own, procfs_starttime(own), why, sizeof(why));
	ifar = registry_add_proc(&a, "jobN", 1, far, procfs_starttime(far), why, sizeof(why));
	assert_true(iown >= 0 && ifar >= 0);
	sampler_attach(&a, iown); /* as the relay does on REGISTER */
	sampler_attach(&a, ifar);
	for (int round = 0; round < 3; round++)
		sampler_round(&a);
	assert_int_equal(a.procs[iown].net_src, PCTL_SRC_SOCKDIAG);
	assert_int_equal(a.procs[ifar].net_src, PCTL_SRC_NONE); /* not sockdiag at 0 B/s */
	assert_true(a.procs[ifar].net_warned);
	assert_true(a.cnt.net_unavailable == 1); /* logged once, not every round */
	assert_int_equal(n_socket_in[REFUSED_NS], 3);
	/* The BW message carries it as none. */
	{
		struct pctl_bw bw;
		struct pctl_bw_entry e[4];
		bool seen = false;
		sampler_fill_bw(&a, &bw, e);
		for (unsigned i = 0; i < bw.n; i++)
			if (e[i].pid == far) {
				assert_int_equal(e[i].net_src, PCTL_SRC_NONE);
				assert_true(e[i].net_tx_bps == 0 && e[i].net_rx_bps == 0);
				seen = true;
			}
		assert_true(seen);
	}
	kill(own, SIGKILL);
	kill(far, SIGKILL);
	waitpid(own, NULL, 0);
	waitpid(far, NULL, 0);
	sampler_release_all(&a);
	registry_free(&a);
	snet_ns_free(&a.netns);
}

/* ---- the real probes, in a real namespace (root) -------------------------------------- */

struct shared {
	_Atomic int state; /* child: 1 ready, 3 done, -errno failed; parent: 2 go, 4 stop */
	_Atomic uint64_t sent;
};

static struct shared *sh;

static void msleep(long ms)
{
	struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

static void wait_state(int want)
{
	for (int i = 0; i < 10000 && atomic_load(&sh->state) != want; i++) {
		if (atomic_load(&sh->state) < 0)
			break;
		msleep(1);
	}
}

/* Child: a new network namespace, lo up, total bytes to itself over loopback TCP. */
static void ns_child(uint64_t total)
{
	struct sockaddr_in sa = {.sin_family = AF_INET};
	socklen_t sl = sizeof(sa);
	struct ifreq ifr;
	static char buf[1 << 16];
	uint64_t got = 0;
	int l, tx, rx, s;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	alarm(30);
	if (unshare(CLONE_NEWNET) != 0) {
		atomic_store(&sh->state, -errno);
		_exit(0);
	}
	s = socket(AF_INET, SOCK_DGRAM, 0);
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
	if (s < 0 || ioctl(s, SIOCGIFFLAGS, &ifr) != 0)
		_exit(1);
	ifr.ifr_flags |= IFF_UP;
	if (ioctl(s, SIOCSIFFLAGS, &ifr) != 0)
		_exit(1);
	close(s);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	l = socket(AF_INET, SOCK_STREAM, 0);
	if (l < 0 || bind(l, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(l, 1) != 0 ||
	    getsockname(l, (struct sockaddr *)&sa, &sl) != 0)
		_exit(1);
	tx = socket(AF_INET, SOCK_STREAM, 0);
	if (tx < 0 || connect(tx, (struct sockaddr *)&sa, sizeof(sa)) != 0)
		_exit(1);
	rx = accept(l, NULL, NULL);
	if (rx < 0)
		_exit(1);
	atomic_store(&sh->state, 1);
	while (atomic_load(&sh->state) != 2)
		msleep(1);
	while (got < total) {
		uint64_t left = total - atomic_load(&sh->sent);
		ssize_t n;
		if (left) {
			n = send(tx, buf, left < sizeof(buf) ? left : sizeof(buf), MSG_DONTWAIT);
			if (n > 0)
				atomic_fetch_add(&sh->sent, (uint64_t)n);
		}
		n = recv(rx, buf, sizeof(buf), MSG_DONTWAIT);
		if (n > 0)
			got += (uint64_t)n;
		else if (n == 0)
			_exit(1);
	}
	msleep(20); /* the last ACK */
	atomic_store(&sh->state, 3);
	while (atomic_load(&sh->state) != 4)
		msleep(5);
	_exit(0);
}

static int same_ns_as(const char *path, const struct snet_nsid *id)
{
	struct stat st;

	if (stat(path, &st) != 0)
		return 0;
	return (uint64_t)st.st_dev == id->dev && (uint64_t)st.st_ino == id->ino;
}

static void *bystander_thread(void *arg)
{
	(void)arg;
	while (atomic_load(&sh->state) != 4)
		msleep(5);
	return NULL;
}

static void test_real_namespace(void **state)
{
	const uint64_t total = 20ULL << 20;
	struct snet_nsops ops = snet_default_nsops();
	struct snet_nscache c;
	struct snet_nsres r;
	struct snet_proc sp = {0}, mine = {0};
	uint64_t ino[64], tx, rx;
	char path[64];
	pthread_t th;
	long tid;
	pid_t child;
	int n;

	(void)state;
	memset(sh, 0, sizeof(*sh));
	child = fork();
	assert_true(child >= 0);
	if (child == 0)
		ns_child(total);
	wait_state(1);
	if (atomic_load(&sh->state) < 0) {
		int err = -atomic_load(&sh->state);
		waitpid(child, NULL, 0);
		print_message("unshare(CLONE_NEWNET): %s: needs root\n", strerror(err));
		skip();
	}
	assert_int_equal(atomic_load(&sh->state), 1);
	assert_int_equal(pthread_create(&th, NULL, bystander_thread, NULL), 0);
	assert_int_equal(snet_ns_init(&c, &ops, 4), 0);
	assert_true(c.self_fd >= 0);

	/* Prime: the connection exists, nothing sent. */
	snet_ns_begin(&c);
	assert_int_equal(snet_ns_table(&c, child, &r), 0);
	assert_false(r.own);
	n = snet_proc_inodes(child, ino, 64);
	assert_true(n >= 3); /* listener, two ends */
	assert_int_equal(snet_proc_delta(&sp, r.t, ino, (size_t)n, &tx, &rx), 1);
	assert_true(sp.had_sockets); /* found in its namespace's dump */
	/* The agent's own namespace does not hold them (what happened before the fix). */
	assert_int_equal(snet_ns_table(&c, getpid(), &r), 0);
	assert_true(r.own);
	assert_int_equal(snet_proc_delta(&mine, r.t, ino, (size_t)n, &tx, &rx), 1);
	assert_false(mine.had_sockets);
	snet_ns_end(&c);

	atomic_store(&sh->state, 2);
	wait_state(3);
	assert_int_equal(atomic_load(&sh->state), 3);
	snet_ns_begin(&c);
	assert_int_equal(snet_ns_table(&c, child, &r), 0);
	n = snet_proc_inodes(child, ino, 64);
	assert_int_equal(snet_proc_delta(&sp, r.t, ino, (size_t)n, &tx, &rx), 0);
	snet_ns_end(&c);
	print_message("namespace child moved %llu bytes: attributed tx %llu rx %llu\n",
	              (unsigned long long)total, (unsigned long long)tx, (unsigned long long)rx);
	assert_true(tx >= total * 95 / 100 && tx <= total * 105 / 100);
	assert_true(rx >= total * 95 / 100 && rx <= total * 105 / 100);
	assert_true(c.entered == 1); /* one socket made inside, kept for the second round */

	/* Back home: this thread, the process, and a thread that never switched. */
	assert_true(same_ns_as("/proc/thread-self/ns/net", &c.self));
	assert_true(same_ns_as("/proc/self/ns/net", &c.self));
	tid = syscall(SYS_gettid);
	snprintf(path, sizeof(path), "/proc/self/task/%ld/ns/net", tid);
	assert_true(same_ns_as(path, &c.self));

	atomic_store(&sh->state, 4);
	pthread_join(th, NULL);
	waitpid(child, NULL, 0);
	/* The process is gone: its namespace cannot be read, an error, not a table. */
	snet_ns_begin(&c);
	assert_true(snet_ns_table(&c, child, &r) < 0);
	assert_null(r.t);
	snet_ns_end(&c);
	assert_true(c.n == 0);
	snet_proc_free(&sp);
	snet_proc_free(&mine);
	snet_ns_free(&c);
}

static int setup(void **state)
{
	(void)state;
	log_init("test", 1, 0);
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	return sh == MAP_FAILED ? -1 : 0;
}

static int teardown(void **state)
{
	(void)state;
	munmap(sh, sizeof(*sh));
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup(test_grouping_and_cache, reset_fakes),
	    cmocka_unit_test_setup(test_no_own_namespace_fd, reset_fakes),
	    cmocka_unit_test_setup(test_sampler_source_none, reset_fakes),
	    cmocka_unit_test(test_real_namespace),
	};
	alarm(50); /* bounded, whatever happens */
	return cmocka_run_group_tests(tests, setup, teardown);
}
