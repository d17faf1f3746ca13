# Controller: paper 004 Fig. 7 on the simulated application (linear vs adaptive) and the
# controller's scale (1,000 nodes x 200 jobs). Simulation only; see bench/RESULTS.md.
#   flock /tmp/vsched-rt.lock build/bin/control_sim
if(TARGET vsched_control)
  add_executable(control_sim ${CMAKE_CURRENT_SOURCE_DIR}/control_sim.c)
  target_link_libraries(control_sim PRIVATE vsched_control)
endif()
# The floating algorithm's evaluation length (grown, on trial, at most 1 s) under
# independent and correlated noise, judged on windows of the application's rate.
# Simulation only:
#   build/bin/control_noise
if(TARGET vsched_control)
  add_executable(control_noise ${CMAKE_CURRENT_SOURCE_DIR}/control_noise.c)
  target_link_libraries(control_noise PRIVATE vsched_control)
endif()
