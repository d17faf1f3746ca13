/* vsched/placement.c: not written yet */
