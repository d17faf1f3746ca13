/*
 * vsched/perfwatch.c: the kernel watches CPU time for vsched — per-thread software perf
 * counters (PERF_COUNT_SW_TASK_CLOCK) whose overflow sends a signal, so that neither a budget
 * end nor a wake-up needs a dispatcher timer.
 *
 *  - Enforcer (`stop` tasks): overflows after the job's remaining budget of the task's CPU
 *    time and sends SIGSTOP to the task itself (fcntl F_SETOWN_EX/F_SETSIG, O_ASYNC). The
 *    kernel stops it exactly at its budget and the next task in the EDF chain (already
 *    continued, at a lower priority) runs, with no dispatcher wake-up. The counter keeps
 *    its period after an overflow, so a task that always uses its whole budget needs no
 *    re-arming. Its ring buffer is mapped read-only (overwrite mode: the kernel never waits
 *    for a reader) and gets one sample record per overflow, written before the stop is
 *    queued, so the record head (perfwatch_fired) tells the dispatcher that the enforcer
 *    fired by a memory read, with no system call. A single-threaded task's counter is on
 *    its thread. A task in a cgroup v2 of its own has one counter per thread instead, each
 *    on that cgroup, counted on the task's CPU (PERF_FLAG_PID_CGROUP: the CPU time of all
 *    its threads, which are pinned there) and signalling its own thread; armed together,
 *    they overflow together, and the thread that is running takes its SIGSTOP at once.
 *    (One counter signalling the process would wake its main thread to take the stop,
 *    which, when it was asleep, waits behind its running siblings of the same SCHED_RR
 *    priority for their round-robin slice: 100 ms, bench/RESULTS.md session 34.) The
 *    leader's counter has the ring, and the others write their records into it
 *    (PERF_EVENT_IOC_SET_OUTPUT: same CPU): every stop, whichever counter sent it, moves
 *    the one head the dispatcher reads.
 *  - Detector (every thread of a wake-up-anchored task while it has no job): overflows once
 *    (PERF_EVENT_IOC_REFRESH 1) after PERFWATCH_DETECT_NS of CPU and sends VS_SIG_NOTIFY to
 *    the dispatcher of the task's CPU, whose FUTEX_WAIT it interrupts: the wake-up of a
 *    sleeping task is seen within that much of its CPU, with no polling.
 *
 * The task-clock hrtimer runs only while the thread is on a CPU, so both count the thread's
 * own run time — and the time the host takes from a virtual CPU while the thread is on it
 * (steal), which its CPU clock leaves out: the counter runs ahead of the clock by that (the
 * enforcer's margin, enf_plan.c).
 * Overflow signals are queued from an irq_work: a few µs after the overflow.
 *
 * Needs perf_event_open on other processes (root, or CAP_PERFMON); perfwatch_probe() says
 * whether this kernel offers it. Everything but perfwatch_arm/disarm/fired runs on the API
 * thread; arm/disarm are single system calls, perfwatch_fired a memory read: dispatcher-safe.
 */
#include "vsched.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

/*
 * A disabled task-clock counter on thread tid, or with PERF_FLAG_PID_CGROUP on the cgroup
 * whose directory fd is tid, counted on CPU cpu (-1: wherever the thread runs).
 */
static int open_counter(pid_t tid, int cpu, unsigned long flags)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.type = PERF_TYPE_SOFTWARE;
	a.size = sizeof(a);
	a.config = PERF_COUNT_SW_TASK_CLOCK;
	a.sample_period = 1ULL << 62; /* armed later */
	a.disabled = 1;
	a.exclude_hv = 1;
	return (int)syscall(SYS_perf_event_open, &a, tid, cpu, -1, PERF_FLAG_FD_CLOEXEC | flags);
}

/* Points counter fd's overflow signal sig at owner (the process, or the thread). */
static int signal_to(int fd, bool to_process, pid_t owner, int sig)
{
	struct f_owner_ex ow = {.type = to_process ? F_OWNER_PID : F_OWNER_TID, .pid = owner};
	int e;

	if (fcntl(fd, F_SETOWN_EX, &ow) < 0 || fcntl(fd, F_SETSIG, sig) < 0 ||
	    fcntl(fd, F_SETFL, O_ASYNC) < 0) {
		e = errno;
		close(fd);
		return -e;
	}
	return fd;
}

int perfwatch_open(pid_t tid, bool to_process, pid_t owner, int sig)
{
	int fd = open_counter(tid, -1, 0);

	return fd < 0 ? -errno : signal_to(fd, to_process, owner, sig);
}

/* A counter on the cgroup open as cg_fd, counted on CPU cpu, that stops thread tid. */
static int cgroup_counter(int cg_fd, int cpu, pid_t tid)
{
	int fd = open_counter(cg_fd, cpu, PERF_FLAG_PID_CGROUP);

	return fd < 0 ? -errno : signal_to(fd, false, tid, SIGSTOP);
}

int perfwatch_cgroup_stopper(int cg_fd, int cpu, pid_t tid, int records_fd)
{
	int fd = cgroup_counter(cg_fd, cpu, tid), e;

	if (fd < 0)
		return fd;
	if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, records_fd) < 0) {
		e = errno;
		close(fd);
		return -e;
	}
	return fd;
}

int perfwatch_owner(int fd, pid_t owner_tid)
{
	struct f_owner_ex ow = {.type = F_OWNER_TID, .pid = owner_tid};

	return fcntl(fd, F_SETOWN_EX, &ow) < 0 ? -errno : 0;
}

int perfwatch_arm(int fd, uint64_t ns, bool once, bool enable)
{
	uint64_t p = ns < PERFWATCH_MIN_NS ? PERFWATCH_MIN_NS : ns;

	if (ioctl(fd, PERF_EVENT_IOC_PERIOD, &p) < 0)
		return -errno;
	if (once)
		return ioctl(fd, PERF_EVENT_IOC_REFRESH, 1) < 0 ? -errno : 0;
	if (enable)
		return ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) < 0 ? -errno : 0;
	return 0;
}

int perfwatch_disarm(int fd)
{
	return ioctl(fd, PERF_EVENT_IOC_DISABLE, 0) < 0 ? -errno : 0;
}

/* The enforcer's mapping: its control page and one page of records (1 + 2^0 pages). */
static size_t map_len(void)
{
	return 2 * (size_t)sysconf(_SC_PAGESIZE);
}

/* Maps enforcer fd's records at *page; returns fd, or -errno with fd closed. */
static int map_records(int fd, struct perf_event_mmap_page **page)
{
	void *m;
	int e;

	if (fd < 0)
		return fd;
	/* PROT_READ only: overwrite mode, the head advances at every overflow */
	m = mmap(NULL, map_len(), PROT_READ, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED) {
		e = errno;
		close(fd);
		return -e;
	}
	*page = m;
	return fd;
}

int perfwatch_enforcer(pid_t pid, struct perf_event_mmap_page **page)
{
	return map_records(perfwatch_open(pid, true, pid, SIGSTOP), page);
}

int perfwatch_enforcer_cgroup(int cg_fd, int cpu, pid_t tid, struct perf_event_mmap_page **page)
{
	return map_records(cgroup_counter(cg_fd, cpu, tid), page);
}

void perfwatch_close(int *fd, struct perf_event_mmap_page **page)
{
	if (*page)
		munmap(*page, map_len());
	*page = NULL;
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

uint64_t perfwatch_fired(const struct perf_event_mmap_page *page)
{
	return __atomic_load_n(&page->data_head, __ATOMIC_ACQUIRE);
}

bool perfwatch_probe(void)
{
	int fd = open_counter(0, -1, 0);

	if (fd < 0)
		return false;
	close(fd);
	return true;
}
