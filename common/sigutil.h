/*
 * The signal set-up of the daemons and the apps: their handlers only set a flag that their
 * main loop reads.
 */
#ifndef VSCHED_SIGUTIL_H
#define VSCHED_SIGUTIL_H

/*
 * Installs handler for every signal of sigs (a list ended by 0) without SA_RESTART (a blocking
 * poll returns EINTR, so that the loop sees the flag at once) and with no signal blocked
 * while it runs, and ignores SIGPIPE (a write to a peer that went away fails with EPIPE).
 */
void sig_install(void (*handler)(int), const int *sigs);

#endif
