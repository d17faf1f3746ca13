/* common/cfgutil.c: not written yet */
