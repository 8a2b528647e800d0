# Overhead against a peer: bench_calls is the one program every
# section runs; overhead_bench.py runs it in each agent mode, under callgrind and under
# uftrace, and prints the tables. scripts/bench.sh is the full run (README, "Benchmarks");
# the CTest below is only a smoke run with a tiny N (label bench: figures, never pass/fail
# on time — it fails only if a section cannot run or prints no table).
set(CMAKE_CUDA_STANDARD 17)
set(CMAKE_CUDA_STANDARD_REQUIRED ON)
add_executable(bench_calls ${CMAKE_CURRENT_LIST_DIR}/bench_calls.cu)
set_target_properties(bench_calls PROPERTIES CUDA_ARCHITECTURES ${PROFAGENT_CUDA_ARCH})

if(TARGET profagent)
  find_package(Python3 COMPONENTS Interpreter QUIET)
  set(overhead_bench_args
      --program $<TARGET_FILE:bench_calls> --agent $<TARGET_FILE:profagent>
      --devsim ${PROFAGENT_DEVSIM_DIR} --work ${CMAKE_CURRENT_BINARY_DIR}/overhead_bench_work)
  if(TARGET exporter_bench)
    list(APPEND overhead_bench_args --exporter-bench $<TARGET_FILE:exporter_bench>)
  endif()
  if(TARGET collector_bench)
    list(APPEND overhead_bench_args --collector-bench $<TARGET_FILE:collector_bench>)
  endif()
  add_test(NAME bench.overhead_smoke
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/overhead_bench.py --smoke
                   ${overhead_bench_args})
  set_tests_properties(bench.overhead_smoke PROPERTIES LABELS bench TIMEOUT 600)
endif()
