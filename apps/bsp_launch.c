/*
 * bsp --local N: the convenience launcher. Starts N ranks on 127.0.0.1 and waits for them.
 *
 * Ports: with --port BASE the ranks listen on BASE..BASE+N-1 themselves. Otherwise the
 * launcher binds N listening sockets on ephemeral ports first (no port can be taken by
 * someone else in between) and hands rank r its socket as an inherited descriptor
 * (--listen-fd); a PREFIX command that passes its descriptors on to the program it starts
 * (vschedctl run, vschedctl job run, env, taskset, chrt, ...) keeps this working.
 *
 * Each rank is PREFIX... (with "{rank}" replaced by the rank) followed by this program with
 * --rank R --peers LIST and the work options, and VSCHED_RANK=R in its environment.
 *
 * Waiting: SIGCHLD, SIGINT, SIGTERM and SIGHUP are blocked and taken with sigtimedwait, so
 * nothing is lost between checks. SIGINT/SIGTERM/SIGHUP are forwarded to every rank. When a
 * rank fails the others normally notice by themselves (their connection to it closes); any
 * still running GRACE later get SIGTERM, and SIGKILL 2 s after that, so the launcher always
 * ends. Exit status: 0 when every rank succeeded, else the first failure's (128+N: killed by
 * signal N).
 */
#include "bsp.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define GRACE_NS (5 * NSEC_PER_SEC)
#define KILL_NS  (2 * NSEC_PER_SEC)

/* A listening socket on 127.0.0.1, ephemeral port, inheritable. Returns fd or -1. */
static int ephemeral_listener(uint16_t *port)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0); /* no CLOEXEC: the rank inherits it */

	if (fd < 0)
		return -1;
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(fd, BSP_RANKS_MAX) != 0 ||
	    getsockname(fd, (struct sockaddr *)&a, &len) != 0) {
		int err = errno;

		close(fd);
		errno = err;
		return -1;
	}
	*port = ntohs(a.sin_port);
	return fd;
}

/* s with every "{rank}" replaced by rank; allocated. */
static char *subst_rank(const char *s, uint32_t rank)
{
	char num[16];
	size_t nlen = (size_t)snprintf(num, sizeof(num), "%u", rank), len = 0;
	char *out = malloc(strlen(s) * 2 + 16); /* "{rank}" (6) -> at most 10 digits */

	if (out == NULL)
		app_fail("out of memory");
	while (*s != '\0') {
		if (strncmp(s, "{rank}", 6) == 0) {
			memcpy(out + len, num, nlen);
			len += nlen;
			s += 6;
		} else {
			out[len++] = *s++;
		}
	}
	out[len] = '\0';
	return out;
}

static char *fmt_u(uint64_t v)
{
	char buf[32];
	char *s;

	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)v);
	s = strdup(buf);
	if (s == NULL)
		app_fail("out of memory");
	return s;
}

/* The full argv of rank r (NULL-terminated, every string allocated). */
static char **rank_argv(const struct bsp_cfg *c, const char *self, uint32_t r, const char *peers,
                        int lfd)
{
	char **argv = calloc((size_t)c->nprefix + 8 + BSP_CFG_ARGS_MAX, sizeof(*argv));
	int n = 0;

	if (argv == NULL)
		app_fail("out of memory");
	for (int i = 0; i < c->nprefix; i++)
		argv[n++] = subst_rank(c->prefix[i], r);
	argv[n++] = strdup(self);
	argv[n++] = strdup("--rank");
	argv[n++] = fmt_u(r);
	argv[n++] = strdup("--peers");
	argv[n++] = strdup(peers);
	if (lfd >= 0) {
		argv[n++] = strdup("--listen-fd");
		argv[n++] = fmt_u((uint64_t)lfd);
	}
	for (int i = 0; i < n; i++)
		if (argv[i] == NULL)
			app_fail("out of memory");
	bsp_cfg_args(c, argv, &n);
	argv[n] = NULL;
	return argv;
}

static void free_argv(char **argv)
{
	for (char **a = argv; *a != NULL; a++)
		free(*a);
	free(argv);
}

static int status_code(int st)
{
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return APP_EXIT_FAIL;
}

static void signal_alive(const pid_t *pids, uint32_t n, int sig)
{
	for (uint32_t r = 0; r < n; r++)
		if (pids[r] > 0)
			kill(pids[r], sig);
}

/* Waits for every rank (see the file comment). Returns the launcher's exit status. */
static int wait_ranks(pid_t *pids, uint32_t n, const sigset_t *set)
{
	uint32_t alive = 0;
	mono_ns term_at = 0, kill_at = 0;
	bool failed = false;
	int rc = APP_EXIT_OK;

	for (uint32_t r = 0; r < n; r++)
		alive += pids[r] > 0;
	while (alive > 0) {
		struct timespec ts = {.tv_sec = 0, .tv_nsec = 100 * 1000 * 1000};
		int sig = sigtimedwait(set, NULL, &ts), st;
		pid_t pid;

		if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP)
			signal_alive(pids, n, sig);
		while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
			uint32_t r;

			for (r = 0; r < n && pids[r] != pid; r++)
				;
			if (r == n)
				continue;
			pids[r] = 0;
			alive--;
			if (status_code(st) == 0)
				continue;
			if (WIFSIGNALED(st))
				fprintf(stderr, "bsp: rank %u (pid %d) was killed by signal %d\n",
				        r, (int)pid, WTERMSIG(st));
			else
				fprintf(stderr, "bsp: rank %u (pid %d) exited with status %d\n", r,
				        (int)pid, status_code(st));
			if (!failed) {
				failed = true;
				rc = status_code(st);
				term_at = mono_now() + GRACE_NS;
			}
		}
		if (failed && alive > 0) {
			mono_ns now = mono_now();

			if (kill_at == 0 && !mono_before(now, term_at)) {
				fprintf(stderr,
				        "bsp: %u rank(s) still running %.0f s after a failure: "
				        "terminating them\n",
				        alive, app_sec(GRACE_NS));
				signal_alive(pids, n, SIGTERM);
				kill_at = now + KILL_NS;
			} else if (kill_at != 0 && !mono_before(now, kill_at)) {
				signal_alive(pids, n, SIGKILL);
				kill_at = now + KILL_NS;
			}
		}
	}
	return rc;
}

int launch_local(const struct bsp_cfg *c, const char *self)
{
	uint32_t n = c->local;
	int lfd[BSP_RANKS_MAX];
	pid_t pids[BSP_RANKS_MAX] = {0};
	char *peers = malloc((size_t)n * 24 + 1);
	sigset_t set, old;
	size_t len = 0;
	bool forked_all = true;
	int rc;

	if (peers == NULL)
		app_fail("out of memory");
	for (uint32_t r = 0; r < n; r++) {
		uint16_t port = (uint16_t)(c->base_port + r);

		lfd[r] = -1;
		if (c->base_port == 0) {
			lfd[r] = ephemeral_listener(&port);
			if (lfd[r] < 0)
				app_fail("cannot listen on 127.0.0.1: %s", strerror(errno));
		}
		len += (size_t)sprintf(peers + len, "%s127.0.0.1:%u", r ? "," : "", port);
	}

	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigprocmask(SIG_BLOCK, &set, &old);
	fflush(NULL);
	for (uint32_t r = 0; r < n; r++) {
		char **argv = rank_argv(c, self, r, peers, lfd[r]);
		char rank[16];
		pid_t pid = fork();

		if (pid < 0) {
			fprintf(stderr, "bsp: fork: %s\n", strerror(errno));
			free_argv(argv);
			signal_alive(pids, n, SIGTERM);
			forked_all = false;
			break;
		}
		if (pid == 0) {
			for (uint32_t k = 0; k < n; k++)
				if (k != r && lfd[k] >= 0)
					close(lfd[k]);
			snprintf(rank, sizeof(rank), "%u", r);
			setenv("VSCHED_RANK", rank, 1);
			signal(SIGPIPE, SIG_DFL); /* an ignored signal would stay ignored in CMD */
			sigprocmask(SIG_SETMASK, &old, NULL);
			execvp(argv[0], argv);
			fprintf(stderr, "bsp: rank %u: cannot run %s: %s\n", r, argv[0],
			        strerror(errno));
			_exit(127);
		}
		pids[r] = pid;
		free_argv(argv);
	}
	for (uint32_t r = 0; r < n; r++)
		if (lfd[r] >= 0)
			close(lfd[r]);
	free(peers);
	rc = wait_ranks(pids, n, &set);
	if (!forked_all && rc == APP_EXIT_OK)
		rc = APP_EXIT_FAIL;
	sigprocmask(SIG_SETMASK, &old, NULL);
	return rc;
}
