/*
 * vschedctl run: starts a command under a reservation from its first instruction.
 *
 *   fork ── child: waits on a pipe ───────────────── (released) exec CMD
 *      └─ parent: ADD child's pid ── refused: SIGKILL the child, exit 1 (CMD never ran)
 *                                 └─ accepted: release the child, forward SIGINT/SIGTERM/
 *                                    SIGHUP to it, wait, exit with its status
 *
 * The fork happens before any ZeroMQ context exists, so the child inherits no ZeroMQ
 * threads or sockets. The signals to forward are blocked around fork(), so a signal that
 * arrives early is delivered to the parent's handler once the child's pid is known, and the
 * child gets default dispositions before anything can reach it. vsched itself removes the
 * task when the process exits (pidfd), so there is no DEL at the end.
 */
#include "vschedctl.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static const int fwd_signals[] = {SIGINT, SIGTERM, SIGHUP};
#define NFWD (sizeof(fwd_signals) / sizeof(fwd_signals[0]))

static volatile sig_atomic_t child_pid; /* 0 until the fork, in the child always 0 */

static void forward(int sig)
{
	int saved = errno;

	if (child_pid > 0)
		kill((pid_t)child_pid, sig);
	errno = saved;
}

/* The child: waits for the parent's go (one byte), then execs argv. Never returns. */
static _Noreturn void child_main(int rfd, char **argv, const sigset_t *oldmask)
{
	char go;
	ssize_t n;

	for (size_t i = 0; i < NFWD; i++)
		signal(fwd_signals[i], SIG_DFL);
	sigprocmask(SIG_SETMASK, oldmask, NULL);
	do {
		n = read(rfd, &go, 1);
	} while (n < 0 && errno == EINTR);
	if (n != 1)
		_exit(127); /* the parent went away or refused: never run the command */
	close(rfd);
	execvp(argv[0], argv);
	fprintf(stderr, "vschedctl: run: %s: %s\n", argv[0], strerror(errno));
	_exit(127);
}

/* Waits for pid, retrying on EINTR. Returns the status as an exit code (128+sig if killed). */
static int wait_child(pid_t pid)
{
	int status = 0;

	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			fprintf(stderr, "vschedctl: run: waitpid: %s\n", strerror(errno));
			return CLI_EXIT_FAIL;
		}
	}
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return CLI_EXIT_FAIL;
}

/* Ends a child that must not run (it is still waiting on the pipe) and reaps it. */
static void kill_child(pid_t pid)
{
	kill(pid, SIGKILL);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
}

int cmd_run(const char *endpoint, int argc, char **argv)
{
	struct cli_opt opts[] = {
	    {"period", true, NULL}, {"slice", true, NULL}, {"deadline", true, NULL},
	    {"phase", true, NULL},  {"cpu", true, NULL},   {"park", true, NULL},
	    {"anchor", true, NULL}, {NULL, false, NULL},
	};
	struct vsp_request req = {.type = VSP_ADD, .cpu = -1};
	struct sigaction sa = {.sa_handler = forward};
	sigset_t block, old;
	const char *cpu, *park;
	struct vsp_reply rep;
	char **cmd = NULL;
	int ncmd = 0, pipefd[2], rc;
	pid_t pid;

	args_parse("run", argc, argv, opts, NULL, 0, true, &cmd, &ncmd);
	if (ncmd == 0)
		args_fail("run", "missing command (vschedctl run --period DUR --slice DUR -- CMD)");
	args_resv("run", opts, &req.resv);
	cpu = args_opt(opts, "cpu")->value;
	park = args_opt(opts, "park")->value;
	if (cpu != NULL)
		req.cpu = args_cpu("run", cpu);
	req.park = park != NULL ? args_park("run", park) : VSP_PARK_DEFAULT;
	if (args_opt(opts, "anchor")->value != NULL)
		req.anchor = args_anchor("run", args_opt(opts, "anchor")->value);

	if (pipe2(pipefd, O_CLOEXEC) != 0) {
		fprintf(stderr, "vschedctl: run: pipe: %s\n", strerror(errno));
		return CLI_EXIT_FAIL;
	}
	sigemptyset(&block);
	for (size_t i = 0; i < NFWD; i++)
		sigaddset(&block, fwd_signals[i]);
	sigprocmask(SIG_BLOCK, &block, &old);
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	for (size_t i = 0; i < NFWD; i++)
		sigaction(fwd_signals[i], &sa, NULL);

	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "vschedctl: run: fork: %s\n", strerror(errno));
		sigprocmask(SIG_SETMASK, &old, NULL);
		return CLI_EXIT_FAIL;
	}
	if (pid == 0) {
		close(pipefd[1]);
		child_main(pipefd[0], cmd, &old);
	}
	child_pid = pid;
	close(pipefd[0]);
	sigprocmask(SIG_SETMASK, &old, NULL); /* pending signals now reach the child */

	req.pid = pid;
	rc = client_request(endpoint, &req, &rep);
	if (rc != 0) {
		kill_child(pid);
		return rc;
	}
	if (rep.status != 0) {
		fprintf(stderr, "vschedctl: run: %s\n",
		        rep.msg[0] != '\0' ? rep.msg : strerror(-rep.status));
		free(rep.tasks);
		kill_child(pid);
		return CLI_EXIT_FAIL;
	}
	free(rep.tasks);

	/* release the child: it execs the command under its reservation */
	if (write(pipefd[1], "g", 1) != 1) {
		fprintf(stderr, "vschedctl: run: cannot start the command: %s\n", strerror(errno));
		close(pipefd[1]);
		kill_child(pid);
		return CLI_EXIT_FAIL;
	}
	close(pipefd[1]);
	return wait_child(pid);
}
