/*
 * vsched/perfwatch.c: the kernel watches CPU time for vsched — per-thread software perf
 * counters (PERF_COUNT_SW_TASK_CLOCK) whose overflow sends a signal, so that neither a budget
 * end nor a wake-up needs a dispatcher timer.
 *
 *  - Enforcer (single-threaded `stop` tasks): overflows after the job's remaining budget of
 *    the task's CPU time and sends SIGSTOP to the task itself (fcntl F_SETOWN_EX/F_SETSIG,
 *    O_ASYNC). The kernel stops it exactly at its budget and the next task in the EDF chain
 *    (already continued, at a lower priority) runs, with no dispatcher wake-up. The counter
 *    keeps its period after an overflow, so a task that always uses its whole budget needs
 *    no re-arming; vsched re-arms it at every new job anyway (one ioctl).
 *  - Detector (every thread of a wake-up-anchored task while it has no job): overflows once
 *    (PERF_EVENT_IOC_REFRESH 1) after PERFWATCH_DETECT_NS of CPU and sends VS_SIG_NOTIFY to
 *    the dispatcher of the task's CPU, whose FUTEX_WAIT it interrupts: the wake-up of a
 *    sleeping task is seen within that much of its CPU, with no polling.
 *
 * The task-clock hrtimer runs only while the thread is on a CPU, so both count the thread's
 * own run time (the same time its CPU clock counts; no steal time on these VMs).
 * Overflow signals are queued from an irq_work: a few µs after the overflow.
 *
 * Needs perf_event_open on other processes (root, or CAP_PERFMON); perfwatch_probe() says
 * whether this kernel offers it. Everything but perfwatch_arm/disarm/count runs on the API
 * thread; those three are single system calls, dispatcher-safe.
 */
#include "vsched.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static int open_counter(pid_t tid)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.type = PERF_TYPE_SOFTWARE;
	a.size = sizeof(a);
	a.config = PERF_COUNT_SW_TASK_CLOCK;
	a.sample_period = 1ULL << 62; /* armed later */
	a.disabled = 1;
	a.exclude_hv = 1;
	return (int)syscall(SYS_perf_event_open, &a, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

int perfwatch_open(pid_t tid, bool to_process, pid_t owner, int sig)
{
	struct f_owner_ex ow = {.type = to_process ? F_OWNER_PID : F_OWNER_TID, .pid = owner};
	int fd = open_counter(tid), e;

	if (fd < 0)
		return -errno;
	if (fcntl(fd, F_SETOWN_EX, &ow) < 0 || fcntl(fd, F_SETSIG, sig) < 0 ||
	    fcntl(fd, F_SETFL, O_ASYNC) < 0) {
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

uint64_t perfwatch_count(int fd)
{
	uint64_t v;

	return read(fd, &v, sizeof(v)) == (ssize_t)sizeof(v) ? v : 0;
}

bool perfwatch_probe(void)
{
	int fd = open_counter(0);

	if (fd < 0)
		return false;
	close(fd);
	return true;
}
