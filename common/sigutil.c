/* See sigutil.h. */
#include "sigutil.h"

#include <signal.h>

void sig_install(void (*handler)(int), const int *sigs)
{
	struct sigaction sa = {.sa_handler = handler};

	sigemptyset(&sa.sa_mask);
	for (; *sigs != 0; sigs++)
		sigaction(*sigs, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}
