/* vsched/sched.c: not written yet */
