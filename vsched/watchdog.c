/* vsched/watchdog.c: not written yet */
