# Scheduler benchmarks (bench/RESULTS.md sections "vsched vs SCHED_DEADLINE", "Constraint
# change latency", "Scheduler overhead", "rt-app cross-check"). Driver: bench/run_sched.sh.
#   bench_spin    busy loop with a lifetime (runs under SCHED_DEADLINE too; -x: a sleeping helper thread)
#   bench_periodic a periodic job that sleeps between jobs, released at an exact phase
#   bench_share   CPU share of processes over an exactly timed wall interval
#   bench_chglat  constraint change latency through the vsched API (ZeroMQ, proto_vsched.h)
#   bench_wake_floor what a dispatcher that only wakes once per period and continues its
#                 stopped tasks costs here (the reference beside vsched's overhead)
set(VS_BENCH_DIR ${CMAKE_CURRENT_LIST_DIR})

add_executable(bench_spin ${VS_BENCH_DIR}/bench_spin.c)
target_link_libraries(bench_spin PRIVATE vsched_common Threads::Threads)

add_executable(bench_periodic ${VS_BENCH_DIR}/bench_periodic.c)
target_link_libraries(bench_periodic PRIVATE vsched_common Threads::Threads)

add_executable(bench_share ${VS_BENCH_DIR}/bench_share.c)
target_link_libraries(bench_share PRIVATE vsched_common)

add_executable(bench_wake_floor ${VS_BENCH_DIR}/bench_wake_floor.c)

add_executable(bench_chglat ${VS_BENCH_DIR}/bench_chglat.c)
target_link_libraries(bench_chglat PRIVATE vsched_common PkgConfig::ZMQ Threads::Threads)

# admission decision time (bench/RESULTS.md "Admission decision time"): admission_bench
add_executable(admission_bench ${VS_BENCH_DIR}/admission_bench.c)
target_link_libraries(admission_bench PRIVATE vsched_core)
