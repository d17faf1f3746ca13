/* vsched/api.c: not written yet */
