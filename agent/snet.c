/*
 * snet (sampled network): per-process TCP bandwidth (DESIGN.md §4): one netlink sock_diag
 * dump (NETLINK_INET_DIAG, SOCK_DIAG_BY_FAMILY, IPv4 and IPv6, every state,
 * INET_DIAG_INFO) gives every TCP socket's tcp_info; tcpi_bytes_acked (sent and
 * acknowledged) and tcpi_bytes_received are
 * attributed to a process through the socket inodes in /proc/PID/fd. Node totals come from
 * /proc/net/dev (every interface but lo).
 *
 * Attribution per socket between two samples: delta of its counters; a socket first seen
 * after the process's first sample counts from 0 (its whole life is inside the window); a
 * socket closed in between loses its last partial window (the kernel forgets it).
 *
 * Network namespaces: a sock_diag dump lists the sockets of the namespace its netlink socket
 * was made in. Processes are grouped by namespace (/proc/PID/ns/net) every round; the
 * agent's own is dumped as always, another one through a NETLINK_INET_DIAG socket made inside
 * it (setns there, socket(), setns back) and kept until no registered process lives there.
 * setns changes the calling thread only: the agent's one thread (ZeroMQ's I/O threads never
 * run our code and keep their namespace), with no other call in between; the switch back is
 * checked against the namespace recorded at start, and a failure is fatal. A namespace that
 * cannot be entered (no CAP_SYS_ADMIN, process gone) gives no table: the caller reports the
 * source as none, never 0 B/s.
 */
#include "agent.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/tcp.h>
#include <netinet/in.h>
#include <sched.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"

static int table_add(struct snet_table *t, uint64_t ino, uint64_t acked, uint64_t received)
{
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 256;
		struct snet_sock *s = realloc(t->s, cap * sizeof(*s));
		if (!s)
			return -ENOMEM;
		t->s = s;
		t->cap = cap;
	}
	t->s[t->n].ino = ino;
	t->s[t->n].acked = acked;
	t->s[t->n].received = received;
	t->n++;
	return 0;
}

/* One family's dump into t. */
static int dump_family(int fd, int family, struct snet_table *t)
{
	struct {
		struct nlmsghdr nlh;
		struct inet_diag_req_v2 req;
	} msg;
	struct sockaddr_nl sa = {.nl_family = AF_NETLINK};
	static _Alignas(struct nlmsghdr) char buf[32768];
	const size_t need = offsetof(struct tcp_info, tcpi_bytes_received) + sizeof(uint64_t);

	memset(&msg, 0, sizeof(msg));
	msg.nlh.nlmsg_len = sizeof(msg);
	msg.nlh.nlmsg_type = SOCK_DIAG_BY_FAMILY;
	msg.nlh.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	msg.nlh.nlmsg_seq = (uint32_t)family;
	msg.req.sdiag_family = (uint8_t)family;
	msg.req.sdiag_protocol = IPPROTO_TCP;
	msg.req.idiag_states = ~0U;
	msg.req.idiag_ext = 1 << (INET_DIAG_INFO - 1);
	if (sendto(fd, &msg, sizeof(msg), 0, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return -errno;
	for (;;) {
		ssize_t len = recv(fd, buf, sizeof(buf), 0);
		struct nlmsghdr *h;

		if (len < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		for (h = (struct nlmsghdr *)buf; NLMSG_OK(h, (size_t)len); h = NLMSG_NEXT(h, len)) {
			struct inet_diag_msg *d;
			struct rtattr *a;
			int alen;
			uint64_t acked = 0, received = 0;

			if (h->nlmsg_type == NLMSG_DONE)
				return 0;
			if (h->nlmsg_type == NLMSG_ERROR) {
				struct nlmsgerr *e = NLMSG_DATA(h);
				return e->error ? e->error : -EIO;
			}
			if (h->nlmsg_type != SOCK_DIAG_BY_FAMILY ||
			    h->nlmsg_len < NLMSG_LENGTH(sizeof(*d)))
				continue;
			d = NLMSG_DATA(h);
			if (d->idiag_inode == 0) /* TIME_WAIT and such: nobody owns them */
				continue;
			alen = (int)(h->nlmsg_len - NLMSG_LENGTH(sizeof(*d)));
			for (a = (struct rtattr *)(d + 1); RTA_OK(a, alen); a = RTA_NEXT(a, alen)) {
				size_t plen = (size_t)RTA_PAYLOAD(a);
				if (a->rta_type == INET_DIAG_INFO && plen >= need) {
					struct tcp_info ti;
					memset(&ti, 0, sizeof(ti));
					memcpy(&ti, RTA_DATA(a),
					       plen < sizeof(ti) ? plen : sizeof(ti));
					acked = ti.tcpi_bytes_acked;
					received = ti.tcpi_bytes_received;
				}
			}
			if (table_add(t, d->idiag_inode, acked, received) != 0)
				return -ENOMEM;
		}
	}
}

static int cmp_sock(const void *a, const void *b)
{
	const struct snet_sock *x = a, *y = b;
	return x->ino < y->ino ? -1 : x->ino > y->ino;
}

int snet_dump_fd(int fd, struct snet_table *t)
{
	static char junk[4096];
	int own = fd < 0, rc;

	t->n = 0;
	if (own) {
		fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_INET_DIAG);
		if (fd < 0)
			return -errno;
	} else {
		/* A kept socket: nothing of an earlier dump may be read as part of this one. */
		while (recv(fd, junk, sizeof(junk), MSG_DONTWAIT) > 0)
			;
	}
	rc = dump_family(fd, AF_INET, t);
	/* A kernel without IPv6 refuses that dump: IPv4 alone is still a full answer. */
	if (rc == 0 && dump_family(fd, AF_INET6, t) == -ENOMEM)
		rc = -ENOMEM;
	if (own)
		close(fd);
	if (rc == 0)
		qsort(t->s, t->n, sizeof(*t->s), cmp_sock);
	return rc;
}

int snet_dump(struct snet_table *t)
{
	return snet_dump_fd(-1, t);
}

void snet_table_free(struct snet_table *t)
{
	free(t->s);
	memset(t, 0, sizeof(*t));
}

const struct snet_sock *snet_find(const struct snet_table *t, uint64_t ino)
{
	struct snet_sock key = {.ino = ino};

	if (t->n == 0)
		return NULL;
	return bsearch(&key, t->s, t->n, sizeof(*t->s), cmp_sock);
}

int snet_proc_inodes(pid_t pid, uint64_t *ino, size_t cap)
{
	char path[64], link[320], target[64];
	DIR *d;
	struct dirent *de;
	size_t n = 0;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	d = opendir(path);
	if (!d)
		return -errno;
	while ((de = readdir(d)) != NULL && n < cap) {
		ssize_t len;
		unsigned long long v;
		char *end;

		if (de->d_name[0] == '.')
			continue;
		snprintf(link, sizeof(link), "%s/%s", path, de->d_name);
		len = readlink(link, target, sizeof(target) - 1);
		if (len <= 8)
			continue;
		target[len] = '\0';
		if (strncmp(target, "socket:[", 8) != 0)
			continue;
		v = strtoull(target + 8, &end, 10);
		if (*end != ']')
			continue;
		ino[n++] = v;
	}
	closedir(d);
	return (int)n;
}

/* The previous counters of inode ino in p, or NULL. p->s is sorted by inode. */
static const struct snet_sock *proc_prev(const struct snet_proc *p, uint64_t ino)
{
	struct snet_sock key = {.ino = ino};

	if (p->n == 0)
		return NULL;
	return bsearch(&key, p->s, p->n, sizeof(*p->s), cmp_sock);
}

int snet_proc_delta(struct snet_proc *p, const struct snet_table *t, const uint64_t *ino,
                    size_t nino, uint64_t *tx, uint64_t *rx)
{
	struct snet_sock *now = NULL;
	size_t n = 0;
	uint64_t dtx = 0, drx = 0;
	int first = !p->primed;

	if (nino) {
		now = calloc(nino, sizeof(*now));
		if (!now)
			return -ENOMEM;
	}
	for (size_t i = 0; i < nino; i++) {
		const struct snet_sock *s = snet_find(t, ino[i]);
		const struct snet_sock *prev;

		if (!s) /* not TCP (unix, UDP, netlink, ...) */
			continue;
		now[n++] = *s;
		if (first)
			continue;
		prev = proc_prev(p, s->ino);
		if (prev) {
			dtx += s->acked >= prev->acked ? s->acked - prev->acked : 0;
			drx += s->received >= prev->received ? s->received - prev->received : 0;
		} else {
			dtx += s->acked;
			drx += s->received;
		}
	}
	if (n)
		qsort(now, n, sizeof(*now), cmp_sock);
	free(p->s);
	p->s = now;
	p->n = n;
	if (n)
		p->had_sockets = true;
	p->primed = true;
	*tx = dtx;
	*rx = drx;
	return first;
}

void snet_proc_free(struct snet_proc *p)
{
	free(p->s);
	memset(p, 0, sizeof(*p));
}

int snet_parse_netdev(FILE *f, uint64_t *rx, uint64_t *tx)
{
	char line[512];
	uint64_t srx = 0, stx = 0;
	int nif = 0;

	while (fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':');
		char *name = line;
		unsigned long long v[16];

		if (!colon)
			continue; /* the two header lines */
		*colon = '\0';
		while (*name == ' ')
			name++;
		if (strcmp(name, "lo") == 0)
			continue;
		/* rx: bytes packets errs drop fifo frame compressed multicast; tx: bytes ... */
		if (sscanf(colon + 1, "%llu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1],
		           &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8]) != 9)
			return -EINVAL;
		srx += v[0];
		stx += v[8];
		nif++;
	}
	*rx = srx;
	*tx = stx;
	return nif;
}

/* ---- network namespaces ---------------------------------------------------------------- */

static bool nsid_eq(const struct snet_nsid *a, const struct snet_nsid *b)
{
	return a->dev == b->dev && a->ino == b->ino;
}

static void nsid_of_stat(const struct stat *st, struct snet_nsid *id)
{
	id->dev = (uint64_t)st->st_dev;
	id->ino = (uint64_t)st->st_ino;
}

static int real_open_self(struct snet_nsid *id)
{
	struct stat st;
	/* thread-self: the namespace of this thread, the one that will switch. */
	int fd = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) != 0) {
		int err = -errno;
		close(fd);
		return err;
	}
	nsid_of_stat(&st, id);
	return fd;
}

static int real_ns_of(pid_t pid, struct snet_nsid *id)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d/ns/net", (int)pid);
	if (stat(path, &st) != 0)
		return -errno;
	nsid_of_stat(&st, id);
	return 0;
}

/*
 * Back to the agent's own namespace after a setns elsewhere, and checked: this thread must
 * never go on in a foreign namespace (its next /proc/net/dev, its next dump would be someone
 * else's), so any failure here ends the agent.
 */
static void back_home(int selfns, const struct snet_nsid *self)
{
	struct stat st;
	struct snet_nsid now;

	if (setns(selfns, CLONE_NEWNET) != 0)
		fatal("setns back to the agent's own network namespace");
	if (stat("/proc/thread-self/ns/net", &st) != 0)
		fatal("stat /proc/thread-self/ns/net after setns back");
	nsid_of_stat(&st, &now);
	if (!nsid_eq(&now, self))
		fatalx("still in network namespace net:[%llu] after setns back to net:[%llu]",
		       (unsigned long long)now.ino, (unsigned long long)self->ino);
}

static int real_socket_in(int selfns, const struct snet_nsid *self, pid_t pid,
                          const struct snet_nsid *id, char *why, size_t whylen)
{
	char path[64];
	struct stat st;
	struct snet_nsid got;
	int nsfd, fd, err;

	if (selfns < 0) {
		snprintf(why, whylen, "the agent's own network namespace is unknown");
		return -EBADF;
	}
	snprintf(path, sizeof(path), "/proc/%d/ns/net", (int)pid);
	nsfd = open(path, O_RDONLY | O_CLOEXEC);
	if (nsfd < 0) {
		err = -errno;
		snprintf(why, whylen, "open %s: %s", path, strerror(-err));
		return err;
	}
	/* The pid may have exited (and been reused) since ns_of: enter only the namespace asked
	 * for. */
	if (fstat(nsfd, &st) != 0) {
		err = -errno;
		close(nsfd);
		snprintf(why, whylen, "fstat %s: %s", path, strerror(-err));
		return err;
	}
	nsid_of_stat(&st, &got);
	if (!nsid_eq(&got, id)) {
		close(nsfd);
		snprintf(why, whylen, "%s changed under us (process gone)", path);
		return -ESRCH;
	}
	/*
	 * This thread only (setns(2)); from here to back_home() nothing but socket() runs: no
	 * ZeroMQ call, no log line, no file opened by path.
	 */
	if (setns(nsfd, CLONE_NEWNET) != 0) {
		err = -errno;
		close(nsfd);
		snprintf(why, whylen, "setns(%s): %s", path, strerror(-err));
		return err;
	}
	fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_INET_DIAG);
	err = fd < 0 ? -errno : 0;
	back_home(selfns, self);
	close(nsfd);
	if (fd < 0) {
		snprintf(why, whylen, "socket(NETLINK_INET_DIAG) in net:[%llu]: %s",
		         (unsigned long long)id->ino, strerror(-err));
		return err;
	}
	return fd;
}

static void real_close(int fd)
{
	close(fd);
}

struct snet_nsops snet_default_nsops(void)
{
	struct snet_nsops o = {
	    .open_self = real_open_self,
	    .ns_of = real_ns_of,
	    .socket_in = real_socket_in,
	    .dump = snet_dump_fd,
	    .close = real_close,
	};
	return o;
}

int snet_ns_init(struct snet_nscache *c, const struct snet_nsops *ops, size_t cap)
{
	int fd;

	memset(c, 0, sizeof(*c));
	c->self_fd = -1;
	c->ns = calloc(cap ? cap : 1, sizeof(*c->ns));
	if (!c->ns)
		return -ENOMEM;
	c->cap = cap ? cap : 1;
	c->ops = *ops;
	fd = c->ops.open_self(&c->self);
	if (fd >= 0) {
		c->self_fd = fd;
		c->self_known = true;
		return 0;
	}
	/* Our own namespace can still be told apart, and dumped; no other can be entered. */
	c->self_known = c->ops.ns_of(getpid(), &c->self) == 0;
	log_warnx("/proc/thread-self/ns/net: %s: processes in other network namespaces get no "
	          "network figures",
	          strerror(-fd));
	return 0;
}

static void ns_forget(struct snet_nscache *c, size_t i)
{
	struct snet_ns *e = &c->ns[i];

	if (e->fd >= 0)
		c->ops.close(e->fd);
	snet_table_free(&e->socks);
	c->ns[i] = c->ns[--c->n];
	memset(&c->ns[c->n], 0, sizeof(c->ns[c->n]));
}

void snet_ns_free(struct snet_nscache *c)
{
	if (!c->ns)
		return;
	while (c->n)
		ns_forget(c, c->n - 1);
	if (c->self_fd >= 0)
		c->ops.close(c->self_fd);
	free(c->ns);
	memset(c, 0, sizeof(*c));
	c->self_fd = -1;
}

void snet_ns_begin(struct snet_nscache *c)
{
	for (size_t i = 0; i < c->n; i++) {
		c->ns[i].used = false;
		c->ns[i].done = false;
	}
}

void snet_ns_end(struct snet_nscache *c)
{
	/* Backwards: ns_forget moves the last entry into the hole. */
	for (size_t i = c->n; i-- > 0;)
		if (!c->ns[i].used)
			ns_forget(c, i);
}

/* The entry of namespace id, made when new; NULL when the table is full. */
static struct snet_ns *ns_get(struct snet_nscache *c, const struct snet_nsid *id)
{
	struct snet_ns *e;

	for (size_t i = 0; i < c->n; i++)
		if (nsid_eq(&c->ns[i].id, id))
			return &c->ns[i];
	if (c->n == c->cap)
		return NULL;
	e = &c->ns[c->n++];
	memset(e, 0, sizeof(*e));
	e->id = *id;
	e->fd = -1;
	e->own = c->self_known && nsid_eq(id, &c->self);
	return e;
}

/* This round's socket (when foreign) and dump of e, pid being one of its processes. */
static void ns_fill(struct snet_nscache *c, struct snet_ns *e, pid_t pid)
{
	int rc;

	e->done = true;
	e->err = 0;
	e->why[0] = '\0';
	if (!e->own && e->fd < 0) {
		int fd =
		    c->ops.socket_in(c->self_fd, &c->self, pid, &e->id, e->why, sizeof(e->why));
		if (fd < 0) {
			e->err = fd;
			return;
		}
		e->fd = fd;
		c->entered++;
		log_debug("network namespace net:[%llu] (pid %d): sock_diag socket made inside",
		          (unsigned long long)e->id.ino, (int)pid);
	}
	rc = c->ops.dump(e->own ? -1 : e->fd, &e->socks);
	if (rc != 0) {
		e->err = rc;
		snprintf(e->why, sizeof(e->why), "sock_diag dump of net:[%llu]: %s",
		         (unsigned long long)e->id.ino, strerror(-rc));
		/* Whatever state the kept socket is in, the next round makes a fresh one. */
		if (e->fd >= 0) {
			c->ops.close(e->fd);
			e->fd = -1;
		}
	}
}

int snet_ns_table(struct snet_nscache *c, pid_t pid, struct snet_nsres *r)
{
	struct snet_nsid id;
	struct snet_ns *e;
	int rc;

	memset(r, 0, sizeof(*r));
	r->why = c->why;
	if (c->cap == 0) {
		snprintf(c->why, sizeof(c->why), "network namespaces not set up");
		return -EINVAL;
	}
	rc = c->ops.ns_of(pid, &id);
	if (rc < 0) {
		snprintf(c->why, sizeof(c->why), "/proc/%d/ns/net: %s", (int)pid, strerror(-rc));
		return rc;
	}
	e = ns_get(c, &id);
	if (!e) {
		snprintf(c->why, sizeof(c->why), "more than %zu network namespaces", c->cap);
		return -ENOSPC;
	}
	e->used = true;
	if (!e->done)
		ns_fill(c, e, pid);
	r->own = e->own;
	r->why = e->why;
	if (e->err)
		return e->err;
	r->t = &e->socks;
	return 0;
}
