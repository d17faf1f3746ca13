/*
 * bsp's command line: parsing and checking every option (one-line reasons, exit 2), and
 * turning a parsed configuration back into arguments for the ranks a launcher starts.
 */
#include "bsp.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto_apprate.h"

#define DEF_COMPUTE_NS  (10 * NSEC_PER_MSEC)
#define DEF_MSG         (64u << 10)
#define DEF_ITER_NS     (100 * NSEC_PER_MSEC)
#define DEF_DURATION_NS (10 * NSEC_PER_SEC)
#define DEF_CONNECT_NS  (30 * NSEC_PER_SEC)
#define DEF_TIMEOUT_NS  (60 * NSEC_PER_SEC)
#define RATIO_PART_MAX  1000000u

static void usage(FILE *f)
{
	fputs("usage: bsp --local N [--port BASE] [OPTIONS] [-- PREFIX...]\n"
	      "       bsp --rank R --peers HOST:PORT,HOST:PORT,... [--bind ADDR] [--listen-fd FD]\n"
	      "           [OPTIONS]\n"
	      "\n"
	      "A bulk-synchronous program: every iteration each rank computes, then sends --msg\n"
	      "bytes to every other rank over TCP and waits for theirs (all-to-all + barrier).\n"
	      "\n"
	      "  --local N            start N ranks on 127.0.0.1 and wait for them; each through\n"
	      "                       PREFIX if given ({rank} in PREFIX becomes the rank)\n"
	      "  --port BASE          --local: ranks listen on BASE..BASE+N-1 (default: ephemeral\n"
	      "                       ports, passed to the ranks as listening sockets)\n"
	      "  --rank R --peers L   this process is rank R of the ranks listed in L (entry R is\n"
	      "                       where it listens)\n"
	      "  --bind ADDR          listen on ADDR (e.g. 0.0.0.0) instead of entry R's host\n"
	      "  --compute DUR        CPU time per iteration (default 10ms)\n"
	      "  --msg BYTES          payload to each other rank per iteration, 0..256MiB\n"
	      "                       (default 64KiB; K/KiB M/MiB G/GiB suffixes are 1024-based)\n"
	      "  --ratio C:M          compute:communicate time ratio instead of --compute/--msg;\n"
	      "  --iter-time DUR      with --ratio, the iteration time to split (default 100ms)\n"
	      "  --iterations K       stop after K iterations\n"
	      "  --duration DUR       stop after DUR (default 10s when --iterations is not given)\n"
	      "  --spin work|cpu      compute as calibrated fixed work (default) or until the CPU\n"
	      "                       clock advanced by --compute\n"
	      "  --connect-timeout DUR  give up connecting after DUR (default 30s)\n"
	      "  --timeout DUR        give up when an exchange makes no progress for DUR (60s)\n"
	      "  --job NAME           libapprate job name (default $VSCHED_JOB; none: no reports)\n"
	      "  --stamps FILE        rank 0 writes \"ITERATION MONOTONIC_NS\" per iteration\n"
	      "  -v                   print the rate every second\n"
	      "  -h, --help\n",
	      f);
}

enum {
	O_LOCAL = 256,
	O_PORT,
	O_RANK,
	O_PEERS,
	O_LISTEN_FD,
	O_COMPUTE,
	O_MSG,
	O_RATIO,
	O_ITER_TIME,
	O_ITERATIONS,
	O_DURATION,
	O_SPIN,
	O_CONNECT_TIMEOUT,
	O_TIMEOUT,
	O_JOB,
	O_BIND,
	O_STAMPS,
};

static const struct option longopts[] = {
    {"local", required_argument, NULL, O_LOCAL},
    {"port", required_argument, NULL, O_PORT},
    {"rank", required_argument, NULL, O_RANK},
    {"peers", required_argument, NULL, O_PEERS},
    {"listen-fd", required_argument, NULL, O_LISTEN_FD},
    {"compute", required_argument, NULL, O_COMPUTE},
    {"msg", required_argument, NULL, O_MSG},
    {"ratio", required_argument, NULL, O_RATIO},
    {"iter-time", required_argument, NULL, O_ITER_TIME},
    {"iterations", required_argument, NULL, O_ITERATIONS},
    {"duration", required_argument, NULL, O_DURATION},
    {"spin", required_argument, NULL, O_SPIN},
    {"connect-timeout", required_argument, NULL, O_CONNECT_TIMEOUT},
    {"timeout", required_argument, NULL, O_TIMEOUT},
    {"job", required_argument, NULL, O_JOB},
    {"bind", required_argument, NULL, O_BIND},
    {"stamps", required_argument, NULL, O_STAMPS},
    {"verbose", no_argument, NULL, 'v'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

/* "HOST:PORT" or "[V6ADDR]:PORT" into *a. Exits 2 on a malformed entry. */
static void parse_addr(const char *s, size_t len, struct bsp_addr *a)
{
	char entry[BSP_HOST_MAX + 16];
	const char *host, *port;
	char *colon;
	size_t hlen;

	if (len == 0 || len >= sizeof(entry))
		app_usage_fail("--peers: entry '%.*s': must be HOST:PORT", (int)len, s);
	memcpy(entry, s, len);
	entry[len] = '\0';
	colon = strrchr(entry, ':');
	if (colon == NULL || colon == entry || colon[1] == '\0')
		app_usage_fail("--peers: entry '%s': must be HOST:PORT", entry);
	*colon = '\0';
	host = entry;
	port = colon + 1;
	hlen = strlen(host);
	if (host[0] == '[') { /* [::1]:4000 */
		if (hlen < 3 || host[hlen - 1] != ']')
			app_usage_fail("--peers: entry '%s:%s': unbalanced [ ]", entry, port);
		host++;
		hlen -= 2;
	}
	if (hlen > BSP_HOST_MAX)
		app_usage_fail("--peers: host '%s' too long", host);
	memcpy(a->host, host, hlen);
	a->host[hlen] = '\0';
	snprintf(a->port, sizeof(a->port), "%u", (unsigned)app_uint("peers", port, 1, 65535));
}

static void parse_peers(const char *s, struct bsp_cfg *c)
{
	uint32_t n = 1;

	for (const char *p = s; *p != '\0'; p++)
		n += *p == ',';
	if (n > BSP_RANKS_MAX)
		app_usage_fail("--peers: %u entries, at most %u ranks", n, BSP_RANKS_MAX);
	c->peers = calloc(n, sizeof(*c->peers));
	if (c->peers == NULL)
		app_fail("out of memory");
	c->nranks = n;
	for (uint32_t i = 0; i < n; i++) {
		const char *end = strchr(s, ',');
		size_t len = end != NULL ? (size_t)(end - s) : strlen(s);

		parse_addr(s, len, &c->peers[i]);
		s += len + 1;
	}
}

static void parse_ratio(const char *s, struct bsp_cfg *c)
{
	const char *colon = strchr(s, ':');
	char part[16];
	size_t len;

	if (colon == NULL || (size_t)(colon - s) >= sizeof(part))
		app_usage_fail("--ratio '%s': must be C:M, e.g. 1:1 or 3:1", s);
	len = (size_t)(colon - s);
	memcpy(part, s, len);
	part[len] = '\0';
	c->ratio_c = (uint32_t)app_uint("ratio", part, 0, RATIO_PART_MAX);
	c->ratio_m = (uint32_t)app_uint("ratio", colon + 1, 0, RATIO_PART_MAX);
	if (c->ratio_c + c->ratio_m == 0)
		app_usage_fail("--ratio '%s': C and M cannot both be 0", s);
	c->ratio = true;
}

/* The options given, for the checks of their combination. */
struct seen {
	bool rank, compute, msg, iter;
};

/* One option of the run's shape (opt: its getopt value). Returns false when opt is none. */
static bool parse_option(int opt, struct bsp_cfg *c, struct seen *seen)
{
	switch (opt) {
	case O_LOCAL:
		c->local = (uint32_t)app_uint("local", optarg, 1, BSP_RANKS_MAX);
		break;
	case O_PORT:
		c->base_port = (uint32_t)app_uint("port", optarg, 1, 65535);
		break;
	case O_RANK:
		c->rank = (uint32_t)app_uint("rank", optarg, 0, BSP_RANKS_MAX - 1);
		seen->rank = true;
		break;
	case O_PEERS:
		if (c->peers != NULL)
			app_usage_fail("--peers given twice");
		parse_peers(optarg, c);
		break;
	case O_LISTEN_FD:
		c->listen_fd = (int)app_uint("listen-fd", optarg, 3, 65535);
		break;
	case O_COMPUTE:
		c->compute_ns = app_duration("compute", optarg, true);
		seen->compute = true;
		break;
	case O_MSG:
		c->msg = app_size("msg", optarg, 0, BSP_MSG_MAX);
		seen->msg = true;
		break;
	case O_RATIO:
		parse_ratio(optarg, c);
		break;
	case O_ITER_TIME:
		c->iter_ns = app_duration("iter-time", optarg, false);
		seen->iter = true;
		break;
	case O_ITERATIONS:
		c->iterations = app_uint("iterations", optarg, 1, UINT32_MAX);
		break;
	case O_DURATION:
		c->duration_ns = app_duration("duration", optarg, false);
		break;
	case O_SPIN:
		if (strcmp(optarg, "work") == 0)
			c->spin = SPIN_WORK;
		else if (strcmp(optarg, "cpu") == 0)
			c->spin = SPIN_CPU;
		else
			app_usage_fail("--spin '%s': must be 'work' or 'cpu'", optarg);
		break;
	case O_CONNECT_TIMEOUT:
		c->connect_timeout_ns = app_duration("connect-timeout", optarg, false);
		break;
	case O_TIMEOUT:
		c->timeout_ns = app_duration("timeout", optarg, false);
		break;
	case O_BIND:
		if (strlen(optarg) > BSP_HOST_MAX)
			app_usage_fail("--bind: address too long");
		c->bind_host = optarg;
		break;
	case O_JOB:
		c->job = app_job(optarg);
		break;
	case O_STAMPS:
		c->stamps = optarg;
		break;
	default:
		return false;
	}
	return true;
}

/* The options together: a PREFIX, --ratio against --compute/--msg, --local against the
 * per-rank options; the derived values (compute time of a ratio, the default duration). */
static void check_options(int argc, char **argv, struct bsp_cfg *c, const struct seen *seen)
{
	if (optind < argc) {
		if (c->local == 0 || strcmp(argv[optind - 1], "--") != 0)
			app_usage_fail("unexpected argument '%s' (a PREFIX needs --local N and --)",
			               argv[optind]);
		c->prefix = argv + optind;
		c->nprefix = argc - optind;
	}
	if (c->ratio && (seen->compute || seen->msg))
		app_usage_fail("--ratio replaces --compute and --msg: give one or the other");
	if (seen->iter && !c->ratio)
		app_usage_fail("--iter-time needs --ratio C:M");
	if (c->ratio) {
		c->compute_ns =
		    (uint64_t)((double)c->iter_ns * c->ratio_c / ((double)c->ratio_c + c->ratio_m));
		c->msg = 0; /* chosen by calibration once the ranks are connected */
	}
	if (c->iterations == 0 && c->duration_ns == 0)
		c->duration_ns = DEF_DURATION_NS; /* always bounded */

	if (c->local > 0) {
		if (seen->rank || c->peers != NULL || c->listen_fd >= 0 || c->bind_host != NULL)
			app_usage_fail("--local starts the ranks itself: no --rank, --peers, "
			               "--listen-fd or --bind");
		if (c->base_port != 0 && c->base_port + c->local - 1 > 65535)
			app_usage_fail("--port %u: ports up to %u do not exist", c->base_port,
			               c->base_port + c->local - 1);
		return;
	}
	if (c->base_port != 0)
		app_usage_fail("--port needs --local N");
	if (c->peers == NULL || !seen->rank)
		app_usage_fail("give either --local N, or --rank R and --peers HOST:PORT,... "
		               "(see bsp --help)");
	if (c->rank >= c->nranks)
		app_usage_fail("--rank %u: --peers lists only ranks 0..%u", c->rank, c->nranks - 1);
}

void bsp_parse(int argc, char **argv, struct bsp_cfg *c)
{
	struct seen seen = {0};
	int opt;

	*c = (struct bsp_cfg){
	    .listen_fd = -1,
	    .compute_ns = DEF_COMPUTE_NS,
	    .msg = DEF_MSG,
	    .iter_ns = DEF_ITER_NS,
	    .spin = SPIN_WORK,
	    .connect_timeout_ns = DEF_CONNECT_NS,
	    .timeout_ns = DEF_TIMEOUT_NS,
	};
	opterr = 0;
	/* "+": stop at the first non-option, so a launcher's PREFIX keeps its own options */
	while ((opt = getopt_long(argc, argv, "+:vh", longopts, NULL)) != -1) {
		if (parse_option(opt, c, &seen))
			continue;
		switch (opt) {
		case 'v':
			c->verbose = true;
			break;
		case 'h':
			usage(stdout);
			exit(APP_EXIT_OK);
		default:
			app_option_fail(opt, argv);
		}
	}
	check_options(argc, argv, c, &seen);
}

/* Appends an allocated copy of s. */
static void add(char **argv, int *argc, const char *s)
{
	argv[*argc] = strdup(s);
	if (argv[*argc] == NULL)
		app_fail("out of memory");
	(*argc)++;
}

static void add_ns(char **argv, int *argc, const char *opt, uint64_t ns)
{
	char buf[32];

	add(argv, argc, opt);
	snprintf(buf, sizeof(buf), "%lluns", (unsigned long long)ns);
	add(argv, argc, buf);
}

static void add_u64(char **argv, int *argc, const char *opt, uint64_t v)
{
	char buf[32];

	add(argv, argc, opt);
	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)v);
	add(argv, argc, buf);
}

void bsp_cfg_args(const struct bsp_cfg *c, char **argv, int *argc)
{
	if (c->ratio) {
		char buf[32];

		add(argv, argc, "--ratio");
		snprintf(buf, sizeof(buf), "%u:%u", c->ratio_c, c->ratio_m);
		add(argv, argc, buf);
		add_ns(argv, argc, "--iter-time", c->iter_ns);
	} else {
		add_ns(argv, argc, "--compute", c->compute_ns);
		add_u64(argv, argc, "--msg", c->msg);
	}
	if (c->iterations != 0)
		add_u64(argv, argc, "--iterations", c->iterations);
	if (c->duration_ns != 0)
		add_ns(argv, argc, "--duration", c->duration_ns);
	add(argv, argc, "--spin");
	add(argv, argc, c->spin == SPIN_CPU ? "cpu" : "work");
	add_ns(argv, argc, "--connect-timeout", c->connect_timeout_ns);
	add_ns(argv, argc, "--timeout", c->timeout_ns);
	if (c->job != NULL) {
		add(argv, argc, "--job");
		add(argv, argc, c->job);
	}
	if (c->stamps != NULL) {
		add(argv, argc, "--stamps");
		add(argv, argc, c->stamps);
	}
	if (c->verbose)
		add(argv, argc, "-v");
}

void bsp_cfg_free(struct bsp_cfg *c)
{
	free(c->peers);
	c->peers = NULL;
}
