# Controller scale through the real daemon: ctl_scale plays 1,000 protocol-correct agents
# (one DEALER per node) and the administrator against a running vsched-controller and
# measures control-cycle latency, the controller's CPU and RSS, and the message rate.
# Not real-time (no lock); run through the driver, which starts the controller:
#   bench/ctl_scale.sh BUILD_DIR
if(TARGET vsched_control AND TARGET vsched_common)
  add_executable(ctl_scale ${CMAKE_CURRENT_SOURCE_DIR}/ctl_scale.c)
  target_link_libraries(ctl_scale PRIVATE vsched_control vsched_common PkgConfig::ZMQ m)
endif()
