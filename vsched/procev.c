/*
 * vsched/procev.c: thread births and exits of the managed processes, from the kernel's
 * process-events connector (NETLINK_CONNECTOR, CN_IDX_PROC), so that vsched re-reads a
 * task's thread list only when it changed instead of polling /proc.
 *
 * The connector multicasts every fork and exit on the machine. A classic BPF filter on the
 * socket (rebuilt by procev_watch whenever the set of managed processes changes) lets
 * through only the events whose process is one of ours (a new thread: its tgid; a new
 * process: its parent's tgid; an exit: the tgid), so the API thread is not woken by the rest
 * of the system. A new process is reported so that it can be moved out of its parent's
 * freezer cgroup (sched.c, freezer_evict). Kernels from 6.6 also
 * filter by event type (only FORK and EXIT are asked for); older ones ignore that request,
 * so the subscription is checked with a thread of our own and re-sent in the old form if
 * nothing arrived.
 *
 * Not available (no CAP_NET_ADMIN, not in the initial network namespace, CONFIG_PROC_EVENTS
 * off): procev_open returns NULL and the caller keeps polling /proc. Lost events (ENOBUFS)
 * are reported to the caller, which then re-reads every task. API thread only.
 */
#include "vsched.h"

#include <arpa/inet.h>
#include <errno.h>
#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/filter.h>
#include <linux/netlink.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "log.h"

/* Byte offsets in one connector message: nlmsghdr, cn_msg, proc_event. */
#define OFF_EV    (NLMSG_HDRLEN + (int)sizeof(struct cn_msg))
#define OFF_WHAT  (OFF_EV + (int)offsetof(struct proc_event, what))
#define OFF_DATA  (OFF_EV + (int)offsetof(struct proc_event, event_data))
#define OFF_CTGID (OFF_DATA + (int)offsetof(struct fork_proc_event, child_tgid))
#define OFF_CPID  (OFF_DATA + (int)offsetof(struct fork_proc_event, child_pid))
#define OFF_PTGID (OFF_DATA + (int)offsetof(struct fork_proc_event, parent_tgid))
#define OFF_XTGID (OFF_DATA + (int)offsetof(struct exit_proc_event, process_tgid))
#define MAX_WATCH 1500 /* filter: 2 instructions a process, BPF_MAXINSNS 4096 */
#define CHECK_MS  200  /* how long the subscription check waits for its event */

struct procev {
	int fd;
};

/* struct proc_input of Linux 6.6 (older headers lack it): listen op and event-type filter. */
struct pe_input {
	uint32_t mcast_op;
	uint32_t event_type;
};

/* Sends a PROC_CN_MCAST_LISTEN request: with the event filter of 6.6+ or the old form. */
static int subscribe(int fd, bool filtered)
{
	/* nlmsghdr, cn_msg, then the request, packed: laid out by hand (cn_msg ends in a
	 * flexible array, so it cannot sit inside a struct) */
	uint8_t m[NLMSG_HDRLEN + sizeof(struct cn_msg) + sizeof(struct pe_input)];
	struct pe_input in = {.mcast_op = PROC_CN_MCAST_LISTEN,
	                      .event_type = PROC_EVENT_FORK | PROC_EVENT_EXIT};
	size_t body = filtered ? sizeof(in) : sizeof(in.mcast_op);
	struct cn_msg cn = {.id = {.idx = CN_IDX_PROC, .val = CN_VAL_PROC}, .len = (uint16_t)body};
	struct nlmsghdr nl = {.nlmsg_len = (uint32_t)(NLMSG_HDRLEN + sizeof(cn) + body),
	                      .nlmsg_type = NLMSG_DONE,
	                      .nlmsg_pid = (uint32_t)getpid()};

	memset(m, 0, sizeof(m));
	memcpy(m, &nl, sizeof(nl));
	memcpy(m + NLMSG_HDRLEN, &cn, sizeof(cn));
	memcpy(m + NLMSG_HDRLEN + sizeof(cn), &in, body);
	return send(fd, m, nl.nlmsg_len, 0) < 0 ? -1 : 0;
}

static void *check_thread(void *arg)
{
	(void)arg;
	return NULL;
}

/* Starts and joins a thread, then waits for its FORK event (the filter passes only us). */
static bool check_events(struct procev *ev)
{
	struct pollfd p = {.fd = ev->fd, .events = POLLIN};
	char buf[4096];
	pthread_t th;
	bool seen = false;

	if (pthread_create(&th, NULL, check_thread, NULL) != 0)
		return false;
	pthread_join(th, NULL);
	while (!seen && poll(&p, 1, CHECK_MS) > 0) {
		ssize_t n = recv(ev->fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n < OFF_CTGID + 4)
			break;
		uint32_t what, tgid;
		memcpy(&what, buf + OFF_WHAT, 4);
		memcpy(&tgid, buf + OFF_CTGID, 4);
		seen = what == PROC_EVENT_FORK && tgid == (uint32_t)getpid();
	}
	return seen;
}

int procev_watch(struct procev *ev, const pid_t *tgid, int n)
{
	struct sock_filter f[9 + 2 * MAX_WATCH + 1];
	struct sock_fprog prog = {.filter = f};
	int k = 0;

	if (n > MAX_WATCH)
		n = MAX_WATCH; /* the rest are re-read by the slow sweep */
	/*
	 * A = the process the event belongs to: a fork's child tgid, or its parent's tgid when
	 * the child is a new process (child_pid == child_tgid); an exit's tgid. Then A is looked
	 * up in the list. Loads are big-endian on netlink as elsewhere: compare with htonl'ed
	 * constants (A == X compares two loaded words, no conversion).
	 */
	f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, OFF_WHAT);
	f[k++] =
	    (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, htonl(PROC_EVENT_FORK), 0, 6);
	f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, OFF_CPID);
	f[k++] = (struct sock_filter)BPF_STMT(BPF_MISC | BPF_TAX, 0);
	f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, OFF_CTGID);
	f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_X, 0, 0, 3);
	f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, OFF_PTGID);
	f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JA, 1, 0, 0);
	f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, OFF_XTGID);
	for (int i = 0; i < n; i++) {
		f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
		                                      htonl((uint32_t)tgid[i]), 0, 1);
		f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, 0xffff);
	}
	f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, 0);
	prog.len = (unsigned short)k;
	return setsockopt(ev->fd, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof(prog)) < 0 ? -errno
	                                                                                 : 0;
}

struct procev *procev_open(void)
{
	struct sockaddr_nl sa = {.nl_family = AF_NETLINK, .nl_groups = CN_IDX_PROC};
	struct procev *ev = calloc(1, sizeof(*ev));
	pid_t self = getpid();

	if (!ev)
		fatal("procev: out of memory");
	sa.nl_pid = 0; /* let the kernel choose: the API thread may not be the only socket */
	ev->fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_CONNECTOR);
	if (ev->fd < 0 || bind(ev->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    procev_watch(ev, &self, 1) < 0 || subscribe(ev->fd, true) < 0)
		goto fail;
	if (!check_events(ev) && (subscribe(ev->fd, false) < 0 || !check_events(ev)))
		goto fail;
	procev_watch(ev, NULL, 0);
	return ev;
fail:
	log_info("process events unavailable (%s): thread lists are re-read from /proc",
	         errno ? strerror(errno) : "no event arrived");
	if (ev->fd >= 0)
		close(ev->fd);
	free(ev);
	return NULL;
}

int procev_fd(const struct procev *ev)
{
	return ev->fd;
}

int procev_drain(struct procev *ev, procev_fn fn, void *arg)
{
	char buf[8192] __attribute__((aligned(NLMSG_ALIGNTO)));
	int lost = 0;

	for (;;) {
		ssize_t got = recv(ev->fd, buf, sizeof(buf), 0);
		if (got < 0) {
			if (errno == ENOBUFS) {
				lost = -1; /* the kernel dropped some: the caller re-reads all */
				continue;
			}
			return lost; /* EAGAIN: drained */
		}
		size_t len = (size_t)got;
		/* NLMSG_OK/NLMSG_NEXT on a length that stays within [0, got] */
		for (size_t off = 0, step; off + NLMSG_HDRLEN <= len; off += step) {
			struct nlmsghdr *h = (struct nlmsghdr *)(buf + off);
			if (h->nlmsg_len < NLMSG_HDRLEN || h->nlmsg_len > len - off)
				break;
			step = NLMSG_ALIGN(h->nlmsg_len);
			struct cn_msg *cn = NLMSG_DATA(h);
			struct proc_event e;
			if (h->nlmsg_len < (uint32_t)OFF_DATA + 16 ||
			    cn->len < offsetof(struct proc_event, event_data) + 16)
				continue;
			memcpy(&e, cn->data, sizeof(e) < cn->len ? sizeof(e) : cn->len);
			if (e.what == PROC_EVENT_FORK &&
			    e.event_data.fork.child_pid == e.event_data.fork.child_tgid)
				fn(arg, PROCEV_CHILD, e.event_data.fork.parent_tgid,
				   e.event_data.fork.child_pid);
			else if (e.what == PROC_EVENT_FORK)
				fn(arg, PROCEV_THREAD, e.event_data.fork.child_tgid,
				   e.event_data.fork.child_pid);
			else if (e.what == PROC_EVENT_EXIT)
				fn(arg, PROCEV_EXIT, e.event_data.exit.process_tgid,
				   e.event_data.exit.process_pid);
		}
	}
}

void procev_close(struct procev **evp)
{
	if (!evp || !*evp)
		return;
	close((*evp)->fd);
	free(*evp);
	*evp = NULL;
}
