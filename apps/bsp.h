/*
 * bsp: a synthetic bulk-synchronous parallel program like Patterns (papers/004 Sect. 5.1).
 * N ranks, each a process; every iteration each rank computes (a calibrated CPU-time busy
 * loop), then sends --msg bytes to every other rank over TCP and waits until it has received
 * the same from all of them (all-to-all exchange = barrier). Private header, prototypes
 * grouped by file. See docs/apps.md.
 */
#ifndef VSCHED_BSP_H
#define VSCHED_BSP_H

#include <stdbool.h>
#include <stdint.h>

#include "apps.h"

#define BSP_RANKS_MAX  256
#define BSP_MSG_MAX    (256ULL << 20) /* bytes per peer per iteration */
#define BSP_HOST_MAX   255
#define BSP_HDR_SIZE   32 /* header in front of every message */
#define BSP_HELLO_SIZE 56
#define BSP_F_STOP     0x1        /* header flag: this rank's --duration is over */
#define BSP_BUF        (1u << 20) /* payload scratch buffer */

struct bsp_addr {
	char host[BSP_HOST_MAX + 1];
	char port[8];
};

struct bsp_cfg {
	/* the rank this process is (not in launcher mode) */
	uint32_t rank;
	uint32_t nranks;
	struct bsp_addr *peers; /* nranks entries, peers[rank] is where this rank listens */
	int listen_fd;          /* inherited listening socket, or -1: bind peers[rank] */
	const char *bind_host;  /* --bind: listen on this address instead of peers[rank]'s host */
	/* the work */
	uint64_t compute_ns; /* CPU time per iteration */
	uint64_t msg;        /* payload bytes to each other rank per iteration */
	bool ratio;          /* compute and msg derived from ratio_c:ratio_m and iter_ns */
	uint32_t ratio_c, ratio_m;
	uint64_t iter_ns;
	enum spin_mode spin;
	/* bounds: stop at whichever comes first; at least one is set */
	uint64_t iterations; /* 0: no limit */
	uint64_t duration_ns;
	uint64_t connect_timeout_ns; /* setting up the connections, in all */
	uint64_t timeout_ns;         /* longest time without progress in an exchange */
	const char *job;             /* libapprate job, NULL: $VSCHED_JOB */
	const char *stamps;          /* --stamps FILE: rank 0 records its iterations, NULL: no */
	bool verbose;
	/* launcher mode (--local N) */
	uint32_t local;     /* 0: not the launcher */
	uint32_t base_port; /* 0: ephemeral ports, handed to the ranks as listening fds */
	char **prefix;      /* command run in front of each rank, "{rank}" substituted */
	int nprefix;
};

/* One connection to another rank and the state of the current exchange on it. */
struct bsp_peer {
	int fd;
	uint32_t rank;
	uint8_t hout[BSP_HDR_SIZE];
	uint8_t hin[BSP_HDR_SIZE];
	uint64_t out_done; /* bytes of header + payload sent in this round */
	uint64_t in_done;  /* bytes of header + payload received in this round */
};

struct bsp_net {
	uint32_t rank, nranks;
	const struct bsp_addr *addrs;
	struct bsp_peer *peers; /* nranks entries; peers[rank].fd is -1 */
	uint64_t timeout_ns;
	uint8_t *buf; /* payload source and sink scratch, BSP_BUF bytes */
	uint32_t seq; /* exchange rounds so far */
	/* counters of payload traffic, reset by net_reset_counters */
	uint64_t msgs_sent, msgs_recv, bytes_sent, bytes_recv;
};

/* bsp_opts.c */
/* Parses argv into c (exits 2 with one line on a bad argument). */
void bsp_parse(int argc, char **argv, struct bsp_cfg *c);
/*
 * The arguments that make a rank of this launcher's job: the work and bound options of c
 * (not --local, --port, --rank, --peers), appended to argv at *argc. Strings are allocated;
 * the caller frees argv entries from the index it passed on.
 */
void bsp_cfg_args(const struct bsp_cfg *c, char **argv, int *argc);
#define BSP_CFG_ARGS_MAX 24
void bsp_cfg_free(struct bsp_cfg *c);

/* bsp_net.c — every call is bounded; a failure prints one line and returns -1 */
/*
 * Connects this rank with every other one (rank r connects to ranks < r and accepts ranks
 * > r), checking that all run the same configuration. Retries refused connections until
 * c->connect_timeout_ns has passed. On success n is ready for net_exchange.
 */
int net_setup(struct bsp_net *n, const struct bsp_cfg *c);
/*
 * One all-to-all round: sends a header (round number, flags, length, aux) and msg payload
 * bytes to every other rank and receives the same from each. *flags_or gets the OR of all
 * ranks' flags (own included), *aux0 (may be NULL) rank 0's aux. Fails when a peer closes,
 * sends something unexpected, or nothing moves for n->timeout_ns.
 */
int net_exchange(struct bsp_net *n, uint64_t msg, uint32_t flags, uint64_t aux, uint32_t *flags_or,
                 uint64_t *aux0);
void net_reset_counters(struct bsp_net *n);
void net_close(struct bsp_net *n);

/* bsp_ratio.c */
/*
 * --ratio C:M: sets c->compute_ns to C/(C+M) of the iteration time and c->msg so that one
 * exchange takes about M/(C+M) of it, measured with calibration rounds and a few real
 * iterations computing with sp (rank 0's measurement is used by all; none is counted).
 * Prints what it chose on stderr (rank 0). Returns 0 or -1.
 */
int ratio_calibrate(struct bsp_net *n, struct bsp_cfg *c, struct spin *sp);

/* bsp_launch.c */
/*
 * --local N: starts N ranks on 127.0.0.1 (each through c->prefix if given), waits for them
 * and returns the exit status: 0 if all succeeded, else the first failure's.
 */
int launch_local(const struct bsp_cfg *c, const char *self);

#endif
