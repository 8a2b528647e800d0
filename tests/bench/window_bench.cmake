# Step window benchmarks (label bench): the step marker's cost and the hand-over time at a
# window boundary (tests/bench/window_bench.cpp). Run under the agent on the host only.
if(TARGET profagent)
add_executable(window_bench ${CMAKE_CURRENT_LIST_DIR}/window_bench.cpp)
set(window_bench_out ${CMAKE_CURRENT_BINARY_DIR}/window_bench_out)
add_test(NAME bench.window_marker
  COMMAND ${CMAKE_COMMAND} -E env LD_PRELOAD=$<TARGET_FILE:profagent> PROFAGENT_OUTPUT_DIR=${window_bench_out}
          PROFAGENT_SCHEDULE=skip_first=1000000000,active=1 PROFAGENT_STEP_ON=range:^ProfilerStep
          $<TARGET_FILE:window_bench> marker)
add_test(NAME bench.window_handover
  COMMAND ${CMAKE_COMMAND} -E env LD_PRELOAD=$<TARGET_FILE:profagent> PROFAGENT_OUTPUT_DIR=${window_bench_out}
          PROFAGENT_SCHEDULE=wait=0,warmup=0,active=1,repeat=50
          $<TARGET_FILE:window_bench> handover 50 1000)
set_tests_properties(bench.window_marker bench.window_handover PROPERTIES LABELS bench)
endif()
