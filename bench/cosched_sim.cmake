# Co-scheduling simulation: paper 000's workloads (Fig. 1 bandwidths, 4 nodes x 2 CPUs)
# through the real planner (controller/fit.c) vs random, FCFS/EDF, worst and best
# pairing under a stated contention model. Simulation only; see bench/cosched_sim.c.
#   build/bin/cosched_sim [--seeds N] [--model partial|equal] [--tables]
if(TARGET vsched_control)
  add_executable(cosched_sim ${CMAKE_CURRENT_SOURCE_DIR}/cosched_sim.c)
  target_link_libraries(cosched_sim PRIVATE vsched_control)
endif()
