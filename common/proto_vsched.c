/* common/proto_vsched.c: not written yet */
