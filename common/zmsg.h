/*
 * One whole ZeroMQ message (every frame of it) received without blocking: the envelope
 * receive every daemon's socket loop uses. ZeroMQ delivers the frames of a message
 * together, so once the first is there the others are too.
 */
#ifndef VSCHED_ZMSG_H
#define VSCHED_ZMSG_H

#include <zmq.h>

#define ZMSG_NONE     (-1) /* nothing waiting (or the socket failed) */
#define ZMSG_TOO_MANY (-2) /* more than max frames: all of them received and dropped */

/*
 * Receives the next message on sock. Returns the number of frames (1..max) in part[0..n),
 * which the caller closes with zmsg_close, ZMSG_NONE or ZMSG_TOO_MANY (nothing to close).
 */
int zmsg_recv(void *sock, zmq_msg_t *part, int max);
/* Closes part[0..n); n < 0 (ZMSG_NONE, ZMSG_TOO_MANY) closes nothing. */
void zmsg_close(zmq_msg_t *part, int n);

#endif
