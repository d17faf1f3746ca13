# vsched-agent: CPU use while relaying 1,000 reports/s (bench/agent_cpu.sh); agent_load is
# the load, NPROC real libapprate applications.
#   flock /tmp/vsched-rt.lock bench/agent_cpu.sh BUILD_DIR
if(TARGET apprate)
  add_executable(agent_load ${CMAKE_CURRENT_SOURCE_DIR}/agent_load.c)
  target_link_libraries(agent_load PRIVATE apprate)
endif()
