/* vsched/main.c: not written yet */
