/*
 * libapprate's private header: the handle, its per-thread counter slots, and the functions
 * shared between the files of the library (prototypes grouped by the file that defines
 * them). Nothing here is exported from the shared library.
 */
#ifndef APPRATE_INT_H
#define APPRATE_INT_H

#include "apprate.h"
#include "proto_apprate.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define APRT_SLOTS           128        /* per-thread counter slots per handle */
#define APRT_BUSY            UINT64_MAX /* next_due while a thread holds the report claim */
#define APRT_REFRESH_NS      (10ULL * 1000000000ULL) /* periodic REGISTER refresh */
#define APRT_CLOSE_LINGER_MS 100  /* apprate_close waits at most this for delivery */
#define APRT_SNDHWM          16   /* messages queued in ZeroMQ before dropping */
#define APRT_SNDBUF          4096 /* kernel send buffer: bounds staleness */
#define APRT_CARRY_INTERVALS 10   /* units of dropped reports wait this long */
#define APRT_EVERY_MAX       256  /* countdown mode: most calls between clock reads */

enum aprt_clock_mode {
	APRT_CLOCK_COARSE = 0, /* CLOCK_MONOTONIC_COARSE every call (vDSO, ~3 ns) */
	APRT_CLOCK_COUNT = 1,  /* CLOCK_MONOTONIC every N calls, N adapted per thread */
};

enum aprt_link {
	APRT_LINK_UNKNOWN = 0, /* connecting, no news yet */
	APRT_LINK_UP = 1,      /* connected to an agent */
	APRT_LINK_DOWN = 2,    /* connect failed or connection lost: no agent listening */
};

/*
 * One thread's counters. Single writer: only the owning thread stores to units/mem/net
 * (plain load + store, no locked instruction); the reporter reads them with relaxed loads.
 * Values only grow and are never reset, so a slot can be handed from an exited thread to a
 * new one. The shared slot (more than APRT_SLOTS threads) is updated with fetch_add instead.
 */
struct aprt_slot {
	_Atomic uint64_t units;
	_Atomic uint64_t mem;
	_Atomic uint64_t net;
	_Atomic uint32_t owner; /* thread token, 0 = free */
	bool rmw;               /* the shared slot: several writers, use fetch_add */
} __attribute__((aligned(64)));

struct aprt_counters {
	_Atomic uint64_t units_reported, units_dropped, reports_sent, reports_dropped,
	    registers_sent, registers_dropped, bytes_sent, bytes_dropped, wire_bytes;
};

struct apprate {
	/* Read on every call; written once per report interval. */
	uint64_t id;               /* unique per open: key of the thread-local slot cache */
	_Atomic uint64_t next_due; /* CLOCK_MONOTONIC ns of the next report, or APRT_BUSY */
	int clock_mode;            /* enum aprt_clock_mode */
	uint64_t interval_ns;

	struct aprt_slot slots[APRT_SLOTS];
	struct aprt_slot shared;
	_Atomic uint32_t nslots; /* slots[0, nslots) have ever been claimed */

	/* Configuration, fixed at open. */
	char job[APROTO_JOB_MAX + 1];
	int rank;
	char *endpoint;

	/* Reporter state: only the thread holding the report claim touches it. */
	pid_t pid;
	uint32_t handle;
	uint32_t seq;
	uint64_t last_units, last_mem, last_net; /* sums at the previous report sent */
	uint64_t last_t;        /* CLOCK_MONOTONIC of the previous report sent (or open/fork) */
	uint64_t last_register; /* CLOCK_MONOTONIC of the last REGISTER sent */
	bool need_register;
	bool registered;    /* a REGISTER has been sent on this connection */
	bool counted;       /* something was counted since open/fork: reports may go out */
	uint8_t reg_reason; /* enum aproto_reason of the pending REGISTER */
	void *ctx, *sock, *mon;
	uint64_t opened_at; /* CLOCK_MONOTONIC of aprt_transport_open */
	int link;           /* enum aprt_link, from the monitor */

	/* Read by apprate_stats from any thread. */
	struct aprt_counters c;
	_Atomic uint64_t units_base; /* sum of units at open or fork */
	_Atomic uint32_t st_handle;
	_Atomic int32_t st_pid;

	struct apprate *next; /* registry of open handles (thread exit, fork) */
};

/* apprate.c */
void aprt_sums(struct apprate *r, uint64_t *units, uint64_t *mem, uint64_t *net);
int aprt_register_now(struct apprate *r);
extern int aprt_force_clock_mode; /* tests: -1 = choose, else enum aprt_clock_mode */

/* transport.c: ZeroMQ side. Called only by the holder of the report claim (or open/close). */
int aprt_transport_open(struct apprate *r);
void aprt_transport_close(struct apprate *r, int linger_ms);
void aprt_transport_abandon(struct apprate *r);
int aprt_transport_send(struct apprate *r, const uint8_t *buf, size_t len);
bool aprt_transport_events(struct apprate *r);
bool aprt_transport_wait_writable(struct apprate *r, int timeout_ms);

/* report.c */
int aprt_report(struct apprate *r, bool force, uint8_t flags);
void aprt_fork_reset(struct apprate *r, pid_t pid);
uint32_t aprt_new_handle(const void *salt);

#endif
