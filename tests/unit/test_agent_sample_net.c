/*
 * Network sampling of vsched-agent (agent/snet.c):
 *  - /proc/net/dev parsing (node totals without lo, malformed input refused);
 *  - sock_diag -> process mapping: two child processes exchange a known number of bytes
 *    over loopback TCP; the bytes attributed to the sender (tcpi_bytes_acked) and to the
 *    receiver (tcpi_bytes_received) through /proc/PID/fd must be within 5 % of the known
 *    count (DESIGN.md §4 Done-when: "per-process TCP bandwidth is measured within 5 %"),
 *    and a third process with no traffic gets 0;
 *  - the rate: a paced sender at ~20 MB/s sampled every q = 250 ms with w = 2, against
 *    the bytes the receiving application counted over the same windows, within 5 %.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "agent.h"

static void test_netdev_parse(void **state)
{
	static const char text[] =
	    "Inter-|   Receive                                                |  Transmit\n"
	    " face |bytes    packets errs drop fifo frame compressed multicast|bytes    "
	    "packets errs drop fifo colls carrier compressed\n"
	    "    lo: 9999999    1000    0    0    0     0          0         0  9999999    "
	    "1000    0    0    0     0       0          0\n"
	    "  eth0: 123456789  98765    0    0    0     0          0         0 987654321  "
	    "54321    0    0    0     0       0          0\n"
	    "  ifb0:       1       1    0    0    0     0          0         0        2    "
	    "   1    0    0    0     0       0          0\n";
	static const char bad[] = "  eth0: 12 x\n";
	uint64_t rx = 0, tx = 0;
	FILE *f = fmemopen((void *)text, sizeof(text) - 1, "r");

	(void)state;
	assert_non_null(f);
	assert_int_equal(snet_parse_netdev(f, &rx, &tx), 2);
	assert_true(rx == 123456789ULL + 1);
	assert_true(tx == 987654321ULL + 2);
	fclose(f);
	f = fmemopen((void *)bad, sizeof(bad) - 1, "r");
	assert_int_equal(snet_parse_netdev(f, &rx, &tx), -EINVAL);
	fclose(f);
	/* The real file parses. */
	f = fopen("/proc/net/dev", "r");
	assert_non_null(f);
	assert_true(snet_parse_netdev(f, &rx, &tx) >= 0);
	fclose(f);
}

/* Shared between the parent and its children (MAP_SHARED). */
struct shared {
	_Atomic uint64_t sent;     /* bytes the sender's send() accepted */
	_Atomic uint64_t received; /* bytes the receiver's recv() returned */
	_Atomic int go;            /* parent -> sender: start sending */
	_Atomic int stop;          /* parent -> children: exit */
	_Atomic int ready;         /* children -> parent: connected */
};

static struct shared *sh;

static void msleep(long ms)
{
	struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

/* Receiver: accepts one connection and reads until stop, keeping the socket open. */
/* Children never outlive the test, whatever happens to it. */
static void child_setup(void)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	alarm(60);
}

static void receiver(int lfd)
{
	int fd;

	child_setup();
	fd = accept(lfd, NULL, NULL);
	static char buf[65536];

	if (fd < 0)
		_exit(1);
	atomic_fetch_add(&sh->ready, 1);
	for (;;) {
		ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n > 0) {
			atomic_fetch_add(&sh->received, (uint64_t)n);
			continue;
		}
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
			break;
		if (atomic_load(&sh->stop))
			break;
		msleep(1);
	}
	while (!atomic_load(&sh->stop))
		msleep(5);
	_exit(0);
}

/* Sender: total bytes in chunks, paced so that chunk bytes leave every pace_us (0: flat out). */
static void sender(uint16_t port, uint64_t total, size_t chunk, long pace_us)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port)};
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	static char buf[1 << 20];
	struct timespec next;
	uint64_t done = 0;

	child_setup();
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0)
		_exit(1);
	memset(buf, 'x', sizeof(buf));
	atomic_fetch_add(&sh->ready, 1);
	while (!atomic_load(&sh->go))
		msleep(1);
	clock_gettime(CLOCK_MONOTONIC, &next);
	while (done < total && !atomic_load(&sh->stop)) {
		size_t want = total - done < chunk ? (size_t)(total - done) : chunk;
		size_t off = 0;
		while (off < want) {
			ssize_t n = send(fd, buf + off, want - off, 0);
			if (n <= 0)
				_exit(1);
			off += (size_t)n;
			atomic_fetch_add(&sh->sent, (uint64_t)n);
		}
		done += want;
		if (pace_us) {
			next.tv_nsec += pace_us * 1000;
			while (next.tv_nsec >= 1000000000L) {
				next.tv_nsec -= 1000000000L;
				next.tv_sec++;
			}
			clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
		}
	}
	while (!atomic_load(&sh->stop))
		msleep(5);
	_exit(0);
}

/* An idle bystander with a TCP socket of its own (listening) and no traffic. */
static void bystander(void)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in sa = {.sin_family = AF_INET};

	child_setup();
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(fd, 1) != 0)
		_exit(1);
	atomic_fetch_add(&sh->ready, 1);
	while (!atomic_load(&sh->stop))
		msleep(5);
	_exit(0);
}

struct pair {
	pid_t rx, tx, idle;
};

static struct pair *running; /* children of the test under way, for kill_children */

/* Per-test teardown: a failed assertion leaves children behind; end them. */
static int kill_children(void **state)
{
	(void)state;
	if (running) {
		pid_t p[3] = {running->rx, running->tx, running->idle};
		for (int i = 0; i < 3; i++)
			if (p[i] > 0) {
				kill(p[i], SIGKILL);
				waitpid(p[i], NULL, 0);
			}
		running = NULL;
	}
	return 0;
}

static void start_pair(struct pair *p, uint64_t total, size_t chunk, long pace_us)
{
	struct sockaddr_in sa = {.sin_family = AF_INET};
	socklen_t sl = sizeof(sa);
	int lfd = socket(AF_INET, SOCK_STREAM, 0);

	memset(sh, 0, sizeof(*sh));
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_true(lfd >= 0);
	assert_int_equal(bind(lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(lfd, 1), 0);
	assert_int_equal(getsockname(lfd, (struct sockaddr *)&sa, &sl), 0);
	p->rx = fork();
	if (p->rx == 0)
		receiver(lfd);
	close(lfd);
	p->tx = fork();
	if (p->tx == 0)
		sender(ntohs(sa.sin_port), total, chunk, pace_us);
	p->idle = fork();
	if (p->idle == 0)
		bystander();
	running = p;
	for (int i = 0; i < 2000 && atomic_load(&sh->ready) < 3; i++)
		msleep(1);
	assert_int_equal(atomic_load(&sh->ready), 3);
}

static void stop_pair(struct pair *p)
{
	atomic_store(&sh->stop, 1);
	waitpid(p->rx, NULL, 0);
	waitpid(p->tx, NULL, 0);
	waitpid(p->idle, NULL, 0);
	running = NULL;
}

/* Samples one process the way sampler.c does. Returns snet_proc_delta's result. */
static int sample(struct snet_table *t, struct snet_proc *sp, pid_t pid, uint64_t *tx, uint64_t *rx)
{
	uint64_t ino[256];
	int n = snet_proc_inodes(pid, ino, 256);

	assert_true(n >= 0);
	return snet_proc_delta(sp, t, ino, (size_t)n, tx, rx);
}

static void test_known_bytes_within_5_percent(void **state)
{
	const uint64_t total = 50ULL << 20; /* 50 MiB */
	struct pair p;
	struct snet_table t = {0};
	struct snet_proc sr = {0}, ss = {0}, si = {0};
	uint64_t tx, rx, tx_s, rx_s, tx_r, rx_r, tx_i, rx_i;

	(void)state;
	start_pair(&p, total, 256 << 10, 0);
	/* Prime: the connection exists, nothing sent yet. */
	assert_int_equal(snet_dump(&t), 0);
	assert_int_equal(sample(&t, &ss, p.tx, &tx, &rx), 1);
	assert_int_equal(sample(&t, &sr, p.rx, &tx, &rx), 1);
	assert_int_equal(sample(&t, &si, p.idle, &tx, &rx), 1);
	atomic_store(&sh->go, 1);
	for (int i = 0; i < 20000 && atomic_load(&sh->received) < total; i++)
		msleep(1);
	assert_true(atomic_load(&sh->received) == total);
	msleep(20); /* the last ACK */
	assert_int_equal(snet_dump(&t), 0);
	assert_int_equal(sample(&t, &ss, p.tx, &tx_s, &rx_s), 0);
	assert_int_equal(sample(&t, &sr, p.rx, &tx_r, &rx_r), 0);
	assert_int_equal(sample(&t, &si, p.idle, &tx_i, &rx_i), 0);
	print_message("known %llu bytes: sender tx %llu rx %llu, receiver tx %llu rx %llu, "
	              "bystander %llu/%llu\n",
	              (unsigned long long)total, (unsigned long long)tx_s, (unsigned long long)rx_s,
	              (unsigned long long)tx_r, (unsigned long long)rx_r, (unsigned long long)tx_i,
	              (unsigned long long)rx_i);
	assert_true(tx_s >= total * 95 / 100 && tx_s <= total * 105 / 100);
	assert_true(rx_r >= total * 95 / 100 && rx_r <= total * 105 / 100);
	assert_true(rx_s == 0 && tx_r == 0);
	assert_true(tx_i == 0 && rx_i == 0);
	assert_true(ss.had_sockets && sr.had_sockets && si.had_sockets);
	stop_pair(&p);
	/* Exited processes: no fds to read. */
	assert_true(snet_proc_inodes(p.tx, (uint64_t[4]){0}, 4) < 0);
	snet_proc_free(&ss);
	snet_proc_free(&sr);
	snet_proc_free(&si);
	snet_table_free(&t);
}

/* A socket opened after the first sample counts from zero; a new process is primed. */
static void test_socket_opened_between_samples(void **state)
{
	const uint64_t total = 8ULL << 20;
	struct pair p;
	struct snet_table t = {0};
	struct snet_proc self = {0};
	uint64_t tx, rx;

	(void)state;
	/* The parent (this process) has no TCP socket at the first sample... */
	assert_int_equal(snet_dump(&t), 0);
	assert_int_equal(sample(&t, &self, getpid(), &tx, &rx), 1);
	assert_false(self.had_sockets);
	/* ...then the children's traffic is not ours. */
	start_pair(&p, total, 256 << 10, 0);
	atomic_store(&sh->go, 1);
	for (int i = 0; i < 20000 && atomic_load(&sh->received) < total; i++)
		msleep(1);
	assert_int_equal(snet_dump(&t), 0);
	assert_int_equal(sample(&t, &self, getpid(), &tx, &rx), 0);
	assert_true(tx == 0 && rx == 0);
	stop_pair(&p);
	snet_proc_free(&self);
	snet_table_free(&t);
}

/*
 * The reference is the byte count the receiving application read, taken right after each
 * dump. This machine is shared with real-time experiments: a round in which the test was
 * held up between the dump and the reference, or in which the receiver fell behind, is not
 * a fair comparison, so only windows built from fair rounds are checked (skipped, not
 * passed, when fewer than three are).
 */
static void test_paced_rate_within_5_percent(void **state)
{
	/* 20 MB/s as 50 kB every 2.5 ms, for ~3.5 s; q = 250 ms, w = 2. */
	const uint64_t total = 70ULL * 1000 * 1000;
	const mono_ns q = 250 * NSEC_PER_MSEC;
	struct pair p;
	struct snet_table t = {0};
	struct snet_proc ss = {0}, sr = {0};
	struct bwavg btx, brx, truth;
	uint64_t tx, rx, d;
	mono_ns prev, t0, t1;
	bool fair[16];
	int checked = 0;

	(void)state;
	bwavg_init(&btx, 2);
	bwavg_init(&brx, 2);
	bwavg_init(&truth, 2);
	start_pair(&p, total, 50000, 2500);
	assert_int_equal(snet_dump(&t), 0);
	sample(&t, &ss, p.tx, &tx, &rx);
	sample(&t, &sr, p.rx, &tx, &rx);
	atomic_store(&sh->go, 1);
	prev = mono_now();
	bwavg_push_counter(&truth, atomic_load(&sh->received), prev);
	for (int round = 0; round < 13; round++) {
		struct timespec ts = ns_to_ts(prev + q);
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
		t0 = mono_now();
		assert_int_equal(snet_dump(&t), 0);
		bwavg_push_counter(&truth, atomic_load(&sh->received), t0);
		t1 = mono_now();
		/*
		 * Fair: the dump and the reference were taken together (a dump takes ~3 ms here,
		 * the kernel walks its whole TCP hash; 10 ms of skew is at most 2 % of two
		 * windows), and the receiving application was keeping up (less than 150 kB sent
		 * but not yet read: the application's count is then the kernel's, within 3 %).
		 */
		fair[round] = t1 - t0 < 10 * NSEC_PER_MSEC &&
		              atomic_load(&sh->sent) - atomic_load(&sh->received) < 150000;
		sample(&t, &ss, p.tx, &tx, &d);
		sample(&t, &sr, p.rx, &d, &rx);
		bwavg_push_delta(&btx, tx, t0 - prev);
		bwavg_push_delta(&brx, rx, t0 - prev);
		prev = t0;
		/* Steady state (sender still running); the two windows and their ends fair. */
		if (round >= 2 && round <= 11 && fair[round] && fair[round - 1] &&
		    fair[round - 2]) {
			double want = bwavg_rate(&truth);
			print_message("round %d: sender %.2f MB/s, receiver %.2f MB/s, reference "
			              "%.2f MB/s\n",
			              round, bwavg_rate(&btx) / 1e6, bwavg_rate(&brx) / 1e6,
			              want / 1e6);
			assert_true(want > 5e6); /* pacing really ran */
			assert_true(bwavg_rate(&btx) >= want * 0.95 &&
			            bwavg_rate(&btx) <= want * 1.05);
			assert_true(bwavg_rate(&brx) >= want * 0.95 &&
			            bwavg_rate(&brx) <= want * 1.05);
			checked++;
		}
	}
	stop_pair(&p);
	snet_proc_free(&ss);
	snet_proc_free(&sr);
	snet_table_free(&t);
	if (checked < 3) {
		/* Held up all along (real-time experiments on this shared machine). */
		print_message("only %d fair windows: machine too busy to compare\n", checked);
		skip();
	}
}

static int setup(void **state)
{
	(void)state;
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
	    cmocka_unit_test(test_netdev_parse),
	    cmocka_unit_test_teardown(test_known_bytes_within_5_percent, kill_children),
	    cmocka_unit_test_teardown(test_socket_opened_between_samples, kill_children),
	    cmocka_unit_test_teardown(test_paced_rate_within_5_percent, kill_children),
	};
	alarm(50); /* bounded, whatever happens */
	return cmocka_run_group_tests(tests, setup, teardown);
}
