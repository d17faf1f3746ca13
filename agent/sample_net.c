/*
 * Per-process TCP bandwidth (DESIGN.md §4): one netlink sock_diag dump (NETLINK_INET_DIAG,
 * SOCK_DIAG_BY_FAMILY, IPv4 and IPv6, every state, INET_DIAG_INFO) gives every TCP
 * socket's tcp_info; tcpi_bytes_acked (sent and acknowledged) and tcpi_bytes_received are
 * attributed to a process through the socket inodes in /proc/PID/fd. Node totals come from
 * /proc/net/dev (every interface but lo).
 *
 * Attribution per socket between two samples: delta of its counters; a socket first seen
 * after the process's first sample counts from 0 (its whole life is inside the window); a
 * socket closed in between loses its last partial window (the kernel forgets it).
 */
#include "agent.h"

#include <dirent.h>
#include <errno.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/tcp.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

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

int snet_dump(struct snet_table *t)
{
	int fd, rc;

	t->n = 0;
	fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_INET_DIAG);
	if (fd < 0)
		return -errno;
	rc = dump_family(fd, AF_INET, t);
	/* A kernel without IPv6 refuses that dump: IPv4 alone is still a full answer. */
	if (rc == 0 && dump_family(fd, AF_INET6, t) == -ENOMEM)
		rc = -ENOMEM;
	close(fd);
	if (rc == 0)
		qsort(t->s, t->n, sizeof(*t->s), cmp_sock);
	return rc;
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
