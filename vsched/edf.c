/* vsched/edf.c: not written yet */
