/*
 * bench_wake_floor: what any user-level dispatcher of this design costs on this machine, at
 * the least: a SCHED_FIFO 99 thread pinned to one CPU that wakes once per period (absolute
 * CLOCK_MONOTONIC sleep, as vsched's dispatcher) and, at each wake, reads the CPU clock of
 * K stopped tasks and continues each with one pidfd SIGCONT: the per-period work of a
 * vsched dispatcher whose K `stop` tasks were all stopped at their budget ends, without
 * its bookkeeping. The reference beside vsched's own CPU in bench/sched_overhead.sh.
 *
 *   bench_wake_floor [-c CPU] [-p PERIOD_US] [-k TASKS] [-d SECONDS]
 *
 * A SCHED_OTHER spinner runs on the CPU throughout, so every wake preempts a running task
 * (as vsched's do). The K tasks are children at SCHED_RR 98 on the same CPU that stop
 * themselves as soon as they run (their own cost is theirs, not the dispatcher's). Prints
 * one line: "cpu=C period_us=P tasks=K wakes=N wake_us=X pct=Y" — the dispatcher thread's
 * CPU per wake (µs) and in % of one CPU, from CLOCK_THREAD_CPUTIME_ID over the run.
 * Bounded: -d at most 60 s; every child dies with the parent (PR_SET_PDEATHSIG) and is
 * killed and reaped at the end. Needs root (SCHED_FIFO).
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_TASKS 64

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof set, &set) != 0) {
		perror("bench_wake_floor: sched_setaffinity");
		exit(1);
	}
}

/* A child that dies with its parent; spin != 0: a SCHED_OTHER busy loop, else stops itself
 * whenever it runs. */
static pid_t child(int spin)
{
	pid_t pid = fork();

	if (pid != 0)
		return pid;
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() == 1)
		_exit(0);
	for (;;) {
		if (spin)
			for (volatile unsigned long i = 0; i < 1000000; i++)
				;
		else
			raise(SIGSTOP);
	}
}

static double thread_cpu_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

int main(int argc, char **argv)
{
	int cpu = 1, k = 0, opt;
	long period_us = 10000;
	double secs = 10;

	while ((opt = getopt(argc, argv, "c:p:k:d:")) != -1) {
		switch (opt) {
		case 'c':
			cpu = atoi(optarg);
			break;
		case 'p':
			period_us = atol(optarg);
			break;
		case 'k':
			k = atoi(optarg);
			break;
		case 'd':
			secs = atof(optarg);
			break;
		default:
			fprintf(stderr,
			        "usage: bench_wake_floor [-c CPU] [-p PERIOD_US] [-k TASKS] "
			        "[-d SECONDS]\n");
			return 2;
		}
	}
	if (cpu < 0 || cpu >= CPU_SETSIZE || period_us < 100 || period_us > 1000000 || k < 0 ||
	    k > MAX_TASKS || !(secs > 0 && secs <= 60)) {
		fprintf(stderr,
		        "bench_wake_floor: want -c in [0, %d), -p in [100, 1000000] us, -k in "
		        "[0, %d], -d in (0, 60]\n",
		        CPU_SETSIZE, MAX_TASKS);
		return 2;
	}
	pin(cpu);

	pid_t spinner = child(1), task[MAX_TASKS];
	int pfd[MAX_TASKS];
	clockid_t clk[MAX_TASKS];
	struct sched_param rr = {.sched_priority = 98}, fifo = {.sched_priority = 99};
	int rc = 0;

	for (int i = 0; i < k; i++) {
		int st;

		task[i] = child(0);
		if (waitpid(task[i], &st, WUNTRACED) != task[i] || !WIFSTOPPED(st) ||
		    (pfd[i] = (int)syscall(SYS_pidfd_open, task[i], 0)) < 0 ||
		    clock_getcpuclockid(task[i], &clk[i]) != 0 ||
		    sched_setscheduler(task[i], SCHED_RR, &rr) != 0) {
			fprintf(stderr, "bench_wake_floor: task %d: %s\n", i, strerror(errno));
			k = i + 1;
			rc = 1;
			goto out;
		}
	}
	if (sched_setscheduler(0, SCHED_FIFO, &fifo) != 0) {
		perror("bench_wake_floor: SCHED_FIFO 99 (root?)");
		rc = 1;
		goto out;
	}

	long wakes = (long)(secs * 1e6 / (double)period_us);
	struct timespec next, ts;
	double c0 = thread_cpu_ns();

	clock_gettime(CLOCK_MONOTONIC, &next);
	for (long w = 0; w < wakes; w++) {
		next.tv_nsec += period_us * 1000;
		while (next.tv_nsec >= 1000000000) {
			next.tv_nsec -= 1000000000;
			next.tv_sec++;
		}
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL) == EINTR)
			;
		for (int i = 0; i < k; i++) {
			clock_gettime(clk[i], &ts);
			syscall(SYS_pidfd_send_signal, pfd[i], SIGCONT, NULL, 0);
		}
	}
	double used = thread_cpu_ns() - c0;
	printf("cpu=%d period_us=%ld tasks=%d wakes=%ld wake_us=%.2f pct=%.3f\n", cpu, period_us, k,
	       wakes, used / (double)wakes / 1e3, 100 * used / (secs * 1e9));
out:
	for (int i = 0; i < k; i++)
		kill(task[i], SIGKILL);
	kill(spinner, SIGKILL);
	while (wait(NULL) > 0 || errno == EINTR)
		;
	return rc;
}
