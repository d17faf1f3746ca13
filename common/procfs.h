/*
 * What the daemons read about a process from /proc/PID/stat: its start time (the guard
 * against pid reuse: a pid with another start time is another process) and its CPU time.
 * Parsing starts after the last ')' so that a command name with blanks or parentheses
 * cannot shift the fields. open/read only: no stdio, no allocation.
 */
#ifndef VSCHED_PROCFS_H
#define VSCHED_PROCFS_H

#include <stdint.h>
#include <sys/types.h>

/* Fields of /proc/PID/stat (man 5 proc). */
struct procfs_stat {
	char state;         /* field 3: R, S, D, T, Z, ... */
	uint64_t flags;     /* field 9: PF_* (PF_KTHREAD: a kernel thread) */
	uint64_t utime;     /* field 14, clock ticks */
	uint64_t stime;     /* field 15, clock ticks */
	uint64_t starttime; /* field 22, clock ticks after boot */
};

/* Reads /proc/PID/stat (pid > 0; tid > 0: /proc/PID/task/TID/stat). Returns 0 or -1. */
int procfs_stat(pid_t pid, pid_t tid, struct procfs_stat *st);
/* The start time of pid, never 0 for a process that exists; 0 when it does not. */
uint64_t procfs_starttime(pid_t pid);
/* The uid owning /proc/PID, or -1. */
long procfs_uid(pid_t pid);

#endif
