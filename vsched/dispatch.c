/* vsched/dispatch.c: not written yet */
