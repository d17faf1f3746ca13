/*
 * membench: a memory-bandwidth streamer after MemBUS's membench (papers/000 Sect. 2).
 *
 * "membench allocates a block of B words, then accesses it sequentially multiple times in
 * an unrolled loop, with variable stride s. [...] If L is the cache line size in words [...]
 * if s = 1 [...] the first reference to a cache line is a cache miss and all L-1 remaining
 * accesses are hits (membench-min) [...] If s = L then all accesses reference a different
 * cache line (membench-max)." Here a word is 8 bytes, --stride counts words (min = 1,
 * max = L = line size / 8, 8 on x86-64), and the block defaults to 256 MiB, far larger than
 * any last-level cache of these machines, so every pass streams from main memory.
 *
 * Bytes moved: the cache lines a pass touches times the line size (stride ≤ L: the whole
 * block; stride > L: one line per access), i.e. the memory traffic the agent would measure
 * with miss counters (hardware prefetchers may add to it for large strides). The program
 * counts progress with libapprate in units of 1 MiB of block swept and reports the bytes
 * moved with apprate_bytes, for nodes without memory counters (DESIGN.md §4).
 */
#include "apps.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "proto_apprate.h"

#define WORD          8u
#define CHUNK         (1u << 20) /* bytes of block per progress unit */
#define CHUNK_WORDS   (CHUNK / WORD)
#define DEF_SIZE      (256ULL << 20)
#define DEF_DUR_NS    (10 * NSEC_PER_SEC)
#define SIZE_MAX_B    (64ULL << 30)
#define STRIDE_MAX    (1u << 16) /* words */
#define HUGE_ALIGN    (2u << 20)
#define LLC_SLICE_MAX (64ULL << 20) /* largest L3 one core can use, for the note */

struct mb_cfg {
	uint64_t size;   /* bytes, multiple of CHUNK */
	uint64_t stride; /* words */
	uint64_t duration_ns;
	uint64_t passes; /* 0: no limit */
	const char *job;
	const char *stamps; /* --stamps FILE: one line per pass */
	bool verbose;
};

static void usage(FILE *f)
{
	fputs("usage: membench [--size BYTES] [--stride WORDS|min|max] [--duration DUR]\n"
	      "                [--passes K] [--job NAME] [--stamps FILE] [-v]\n"
	      "\n"
	      "Sweeps a block of 8-byte words again and again with a stride, like MemBUS's\n"
	      "membench, and prints the memory bandwidth it used.\n"
	      "\n"
	      "  --size BYTES      block size, a multiple of 1MiB (default 256MiB; K/KiB M/MiB\n"
	      "                    G/GiB suffixes are 1024-based)\n"
	      "  --stride WORDS    distance between accesses in 8-byte words: 1 or 'min' =\n"
	      "                    membench-min (sequential words, 1 miss per line), 'max' = one\n"
	      "                    cache line (8 on x86-64) = membench-max (default: max)\n"
	      "  --duration DUR    stop after DUR (default 10s)\n"
	      "  --passes K        stop after K passes over the block (whichever comes first)\n"
	      "  --job NAME        libapprate job name (default $VSCHED_JOB; none: no reports)\n"
	      "  --stamps FILE     write \"PASS MONOTONIC_NS\" at the end of every pass\n"
	      "  -v                print the bandwidth every second\n",
	      f);
}

static uint64_t line_size(void)
{
	long l = sysconf(_SC_LEVEL1_DCACHE_LINESIZE);

	/* a plausible power of two, else the x86-64 value */
	return l >= 16 && l <= 1024 && (l & (l - 1)) == 0 ? (uint64_t)l : 64;
}

static uint64_t llc_size(void)
{
	long s = sysconf(_SC_LEVEL3_CACHE_SIZE);

	if (s <= 0)
		s = sysconf(_SC_LEVEL2_CACHE_SIZE);
	return s > 0 ? (uint64_t)s : 0;
}

static void parse(int argc, char **argv, struct mb_cfg *c)
{
	static const struct option longopts[] = {
	    {"size", required_argument, NULL, 's'},
	    {"stride", required_argument, NULL, 't'},
	    {"duration", required_argument, NULL, 'd'},
	    {"passes", required_argument, NULL, 'p'},
	    {"job", required_argument, NULL, 'j'},
	    {"verbose", no_argument, NULL, 'v'},
	    {"stamps", required_argument, NULL, 'S'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	int opt;

	*c = (struct mb_cfg){.size = DEF_SIZE, .stride = line_size() / WORD};
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":vh", longopts, NULL)) != -1) {
		switch (opt) {
		case 's':
			c->size = app_size("size", optarg, CHUNK, SIZE_MAX_B);
			if (c->size % CHUNK != 0)
				app_usage_fail("--size '%s': must be a multiple of 1MiB", optarg);
			break;
		case 't':
			if (strcmp(optarg, "min") == 0)
				c->stride = 1;
			else if (strcmp(optarg, "max") == 0)
				c->stride = line_size() / WORD;
			else
				c->stride = app_uint("stride", optarg, 1, STRIDE_MAX);
			break;
		case 'd':
			c->duration_ns = app_duration("duration", optarg, false);
			break;
		case 'p':
			c->passes = app_uint("passes", optarg, 1, UINT32_MAX);
			break;
		case 'j':
			c->job = app_job(optarg);
			break;
		case 'v':
			c->verbose = true;
			break;
		case 'S':
			c->stamps = optarg;
			break;
		case 'h':
			usage(stdout);
			exit(APP_EXIT_OK);
		default:
			app_option_fail(opt, argv);
		}
	}
	if (optind < argc)
		app_usage_fail("unexpected argument '%s'", argv[optind]);
	if (c->passes == 0 && c->duration_ns == 0)
		c->duration_ns = DEF_DUR_NS; /* always bounded */
}

/* Sums n words of p, s words apart: the unrolled loop of membench. */
static uint64_t sweep(const uint64_t *p, uint64_t n, uint64_t s)
{
	uint64_t a0 = 0, a1 = 0, a2 = 0, a3 = 0, a4 = 0, a5 = 0, a6 = 0, a7 = 0, i = 0;

	for (; i + 8 <= n; i += 8, p += 8 * s) {
		a0 += p[0];
		a1 += p[s];
		a2 += p[2 * s];
		a3 += p[3 * s];
		a4 += p[4 * s];
		a5 += p[5 * s];
		a6 += p[6 * s];
		a7 += p[7 * s];
	}
	for (; i < n; i++, p += s)
		a0 += *p;
	return a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7;
}

struct chunk_plan {
	uint64_t first; /* word index of the first access in the chunk */
	uint64_t n;     /* accesses in the chunk */
	uint64_t bytes; /* memory traffic: lines touched x line size */
};

/* The accesses of chunk k: word indexes i ≡ 0 (mod stride) in [k·CHUNK_WORDS, +CHUNK_WORDS). */
static struct chunk_plan plan_chunk(uint64_t k, uint64_t stride, uint64_t line)
{
	uint64_t c0 = k * CHUNK_WORDS, c1 = c0 + CHUNK_WORDS;
	struct chunk_plan p = {.first = (c0 + stride - 1) / stride * stride};

	if (p.first >= c1)
		return p;
	p.n = (c1 - 1 - p.first) / stride + 1;
	p.bytes = stride * WORD <= line ? CHUNK : p.n * line; /* every line, or a line each */
	return p;
}

int main(int argc, char **argv)
{
	struct mb_cfg c;
	uint64_t line = line_size(), llc = llc_size(), nchunks, chunks = 0, bytes = 0, accesses = 0,
	         sink = 0, last_bytes = 0;
	mono_ns start, now, last_print;
	uint64_t *buf;
	apprate_t *r;
	struct stamps *st;

	app_name = "membench";
	parse(argc, argv, &c);
	app_signals();
	/*
	 * VMs often report the whole package's L3 (508 MiB here) although a core reaches only
	 * its own slice (tens of MiB): judge against at most LLC_SLICE_MAX. 256 MiB measured
	 * the same bandwidth as 4 GiB on these machines.
	 */
	if (llc != 0 && c.size < 4 * (llc < LLC_SLICE_MAX ? llc : LLC_SLICE_MAX))
		fprintf(stderr,
		        "membench: note: the %llu MiB block is less than 4x the last-level cache "
		        "(%llu MiB reported): part of the traffic may hit the cache\n",
		        (unsigned long long)(c.size >> 20), (unsigned long long)(llc >> 20));
	buf = aligned_alloc(HUGE_ALIGN, c.size);
	if (buf == NULL)
		app_fail("cannot allocate %llu bytes", (unsigned long long)c.size);
	madvise(buf, c.size, MADV_HUGEPAGE); /* fewer TLB misses; advisory */
	for (uint64_t i = 0; i < c.size / WORD; i++)
		buf[i] = i; /* touch every page before timing */
	nchunks = c.size / CHUNK;
	r = app_apprate_open(c.job);
	st = stamps_open(c.stamps);

	start = last_print = now = mono_now();
	while (!app_stop) {
		struct chunk_plan p = plan_chunk(chunks % nchunks, c.stride, line);

		sink += sweep(buf + p.first, p.n, c.stride);
		chunks++;
		bytes += p.bytes;
		accesses += p.n;
		apprate_progress(r, 1);
		apprate_bytes(r, p.bytes, 0);
		now = mono_now();
		if (chunks % nchunks == 0)
			stamps_add(st, now);
		if (c.passes != 0 && chunks >= c.passes * nchunks)
			break;
		if (c.duration_ns != 0 && !mono_before(now, start + c.duration_ns))
			break;
		if (c.verbose && now - last_print >= NSEC_PER_SEC) {
			printf("membench: t=%.3f mb_s=%.1f\n", app_sec(now - start),
			       (double)(bytes - last_bytes) / 1e6 / app_sec(now - last_print));
			fflush(stdout);
			last_print = now;
			last_bytes = bytes;
		}
	}
	stamps_close(&st);
	if (app_stop) {
		fprintf(stderr, "membench: interrupted by signal %d\n", (int)app_stop);
		apprate_close(&r);
		free(buf);
		return APP_EXIT_FAIL;
	}
	printf("membench: size=%llu stride=%llu stride_bytes=%llu line=%llu passes=%.2f "
	       "seconds=%.3f bytes=%llu accesses=%llu mb_s=%.1f maccesses_s=%.1f checksum=%llu\n",
	       (unsigned long long)c.size, (unsigned long long)c.stride,
	       (unsigned long long)(c.stride * WORD), (unsigned long long)line,
	       (double)chunks / (double)nchunks, app_sec(now - start), (unsigned long long)bytes,
	       (unsigned long long)accesses, (double)bytes / 1e6 / app_sec(now - start),
	       (double)accesses / 1e6 / app_sec(now - start), (unsigned long long)(sink & 0xffff));
	apprate_close(&r);
	free(buf);
	return APP_EXIT_OK;
}
