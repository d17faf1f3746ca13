/* common/duration.c: not written yet */
