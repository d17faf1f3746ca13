/*
 * ptattach: attaches to a process as a debugger does (PTRACE_ATTACH, which sends it SIGSTOP)
 * and waits for it to stop, ROUNDS times at random moments, detaching after each.
 *
 *   ptattach -p PID [-n ROUNDS] [-g MAX_GAP_MS] [-t TIMEOUT_MS]
 *
 * Each round: sleeps a random 0..MAX_GAP_MS (default 50), attaches, waits at most TIMEOUT_MS
 * (default 2000) for the stop, detaches without a signal. Prints one line,
 *   rounds=N stopped=M max_wait_us=W
 * and exits 0 when every attach saw its stop, 1 when one did not within TIMEOUT_MS (the
 * SIGSTOP of the attach was discarded: the tracee runs on and would never stop), 2 on a
 * usage or ptrace error. Exiting detaches from a tracee that never stopped.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long long now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000LL + ts.tv_nsec / 1000;
}

static int usage(const char *why)
{
	fprintf(stderr,
	        "ptattach: %s\nusage: ptattach -p PID [-n ROUNDS] [-g MAX_GAP_MS] "
	        "[-t TIMEOUT_MS]\n",
	        why);
	return 2;
}

/* Waits for pid's stop (a traced stop of any signal) for at most timeout_us. 1, 0, -1. */
static int wait_stop(pid_t pid, long long timeout_us)
{
	long long t0 = now_us();
	int st;

	while (now_us() - t0 < timeout_us) {
		pid_t r = waitpid(pid, &st, WNOHANG | __WALL);
		if (r < 0 && errno != EINTR)
			return -1;
		if (r == pid && WIFSTOPPED(st))
			return 1;
		if (r == pid)
			return -1; /* exited */
		usleep(500);
	}
	return 0;
}

int main(int argc, char **argv)
{
	long pid = 0, rounds = 20, gap_ms = 50, timeout_ms = 2000;
	long long worst = 0;
	int c, stopped = 0;

	while ((c = getopt(argc, argv, "p:n:g:t:")) != -1) {
		long *dst = c == 'p'   ? &pid
		            : c == 'n' ? &rounds
		            : c == 'g' ? &gap_ms
		            : c == 't' ? &timeout_ms
		                       : NULL;
		char *end;
		if (!dst)
			return usage("unknown option");
		*dst = strtol(optarg, &end, 10);
		if (*end || *dst < 0)
			return usage("bad number");
	}
	if (pid <= 0 || rounds <= 0 || timeout_ms <= 0)
		return usage("-p PID is required; ROUNDS and TIMEOUT_MS must be > 0");
	srand((unsigned)now_us());
	for (long i = 0; i < rounds; i++) {
		long long t0;
		int r;

		usleep((useconds_t)(gap_ms > 0 ? rand() % (gap_ms * 1000) : 0));
		if (ptrace(PTRACE_ATTACH, (pid_t)pid, NULL, NULL) < 0) {
			fprintf(stderr, "ptattach: attach to %ld: %s\n", pid, strerror(errno));
			return 2;
		}
		t0 = now_us();
		r = wait_stop((pid_t)pid, timeout_ms * 1000LL);
		if (r <= 0) {
			printf("rounds=%ld stopped=%d max_wait_us=%lld\n", i + 1, stopped, worst);
			fprintf(stderr, "ptattach: round %ld: %s\n", i + 1,
			        r == 0 ? "no stop after the attach" : "tracee gone or wait failed");
			return r == 0 ? 1 : 2;
		}
		stopped++;
		if (now_us() - t0 > worst)
			worst = now_us() - t0;
		if (ptrace(PTRACE_DETACH, (pid_t)pid, NULL, NULL) < 0) {
			fprintf(stderr, "ptattach: detach: %s\n", strerror(errno));
			return 2;
		}
	}
	printf("rounds=%ld stopped=%d max_wait_us=%lld\n", rounds, stopped, worst);
	return 0;
}
