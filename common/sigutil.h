/*
 * The signal set-up of the daemons and the apps: their handlers only set a flag that their
 * main loop reads, and, for a loop that may sleep without a time bound, make the wake-up
 * pipe readable.
 */
#ifndef VSCHED_SIGUTIL_H
#define VSCHED_SIGUTIL_H

/*
 * Installs handler for every signal of sigs (a list ended by 0) without SA_RESTART (a blocking
 * poll returns EINTR, so that the loop sees the flag at once) and with no signal blocked
 * while it runs, and ignores SIGPIPE (a write to a peer that went away fails with EPIPE).
 */
void sig_install(void (*handler)(int), const int *sigs);

/*
 * The wake-up pipe (one per process). EINTR alone loses a signal that lands after the loop
 * tested its flag and before its poll's system call: zmq_poll, for one, polls again by itself
 * after a wake-up that brought no message, and a loop with no deadline would then sleep
 * forever with its flag set. So the handler also calls sig_wake(), the loop polls
 * sig_wake_fd() for input and calls sig_wake_drain() after each poll, before it tests its
 * flags: a signal after the drain leaves a byte that ends the next poll at once.
 * sig_wake_open: 0, or -1 with errno (call it before sig_install). sig_wake: async-signal-safe,
 * errno kept; a full pipe already holds a wake-up. sig_wake_fd: -1 before sig_wake_open.
 */
int sig_wake_open(void);
void sig_wake(void);
int sig_wake_fd(void);
void sig_wake_drain(void);

#endif
