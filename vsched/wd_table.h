/*
 * vsched/wd_table.h: the watchdog's task table, private to watchdog.c (vsched's side),
 * wd_guardian.c (the guardian process) and wd_restore.c (restoring a table's tasks); the
 * design is in watchdog.c's file comment. Both processes run the same binary, so they share
 * this layout; a copy on file (WD_RUNDIR) has it too.
 */
#ifndef VSCHED_WD_TABLE_H
#define VSCHED_WD_TABLE_H

#include "vsched.h"

#include <stdio.h>

#define WD_MAGIC     0x7673776467303032ULL /* "vswdg002" */
#define WD_MAX_TASKS 65536
#define WD_RUNDIR    "/run/vsched" /* the tables' copies on file: tasks.<vsched pid> */

enum { WD_FREE = 0, WD_BUSY = 1, WD_VALID = 2 };

_Static_assert(ATOMIC_INT_LOCK_FREE == 2, "slot state must be lock-free (shared memory)");

struct wd_slot {
	_Atomic uint32_t state; /* WD_FREE, WD_BUSY (being written), WD_VALID */
	int32_t pid;
	uint64_t starttime; /* /proc/PID/stat field 22 */
	struct sched_saved saved;
	int32_t cgroup; /* FREEZER_* hierarchy the task is parked through, FREEZER_NONE */
};

struct wd_table {
	uint64_t magic;
	uint32_t slot_size; /* sizeof(struct wd_slot), checked by every reader */
	uint32_t max_tasks;
	struct wd_slot slot[];
};

static inline size_t wd_table_size(int max_tasks)
{
	return offsetof(struct wd_table, slot) + (size_t)max_tasks * sizeof(struct wd_slot);
}

/* True when the header at tab is this binary's table of max_tasks slots. */
static inline bool wd_table_ok(const struct wd_table *tab, uint32_t max_tasks)
{
	return tab->magic == WD_MAGIC && tab->slot_size == sizeof(struct wd_slot) &&
	       tab->max_tasks == max_tasks;
}

/* The path of the table's copy of vsched owner. */
static inline void wd_copy_path(pid_t owner, char *buf, size_t len)
{
	snprintf(buf, len, "%s/tasks.%d", WD_RUNDIR, (int)owner);
}

/*
 * wd_restore.c: restores every VALID slot of the first n of tab (a dead vsched's table: it no
 * longer changes; every field is checked before use), then removes vsched owner's freezer
 * sentinel; logs what it did.
 */
void wd_restore_all(const struct wd_table *tab, uint32_t n, pid_t owner);

#endif
