# Controller: paper 004 Fig. 7 on the simulated application (linear vs adaptive) and the
# controller's scale (1,000 nodes x 200 jobs). Simulation only; see bench/RESULTS.md.
#   flock /tmp/vsched-rt.lock build/bin/control_sim
if(TARGET vsched_control)
  add_executable(control_sim ${CMAKE_CURRENT_SOURCE_DIR}/control_sim.c)
  target_link_libraries(control_sim PRIVATE vsched_control)
endif()
