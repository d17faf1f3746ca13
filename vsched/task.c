/* vsched/task.c: not written yet */
