/* vsched/config.c: not written yet */
