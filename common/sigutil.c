/* See sigutil.h. */
#include "sigutil.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

static int wake_fd[2] = {-1, -1}; /* read end, write end; both non-blocking */

void sig_install(void (*handler)(int), const int *sigs)
{
	struct sigaction sa = {.sa_handler = handler};

	sigemptyset(&sa.sa_mask);
	for (; *sigs != 0; sigs++)
		sigaction(*sigs, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

int sig_wake_open(void)
{
	if (wake_fd[0] >= 0)
		return 0;
	return pipe2(wake_fd, O_NONBLOCK | O_CLOEXEC);
}

void sig_wake(void)
{
	int saved = errno;

	if (wake_fd[1] >= 0) {
		ssize_t n = write(wake_fd[1], "", 1); /* EAGAIN: full, a wake-up is pending */
		(void)n;
	}
	errno = saved;
}

int sig_wake_fd(void)
{
	return wake_fd[0];
}

void sig_wake_drain(void)
{
	char buf[64];

	while (wake_fd[0] >= 0 && read(wake_fd[0], buf, sizeof(buf)) > 0)
		;
}
