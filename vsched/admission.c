/* vsched/admission.c: not written yet */
