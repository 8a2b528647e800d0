# The exit flush end to end per trace format (json, json.gz, perfetto) and workload (host-only
# calls, calls with CUPTI, launches with kernels) on one core: CPU, system time, wall, page
# faults and callgrind instructions per event by phase (flush_bench.py). The CTest is a smoke
# run with tiny counts (label bench: figures, never pass/fail on a figure); the README's figures
# come from   flush_bench.py ... --events 1000000 --runs 3   (scripts/bench.sh's build first).
if(TARGET profagent)  # bench_calls: overhead_bench.cmake (included after this file)
  add_test(NAME bench.flush_smoke
           COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/flush_bench.py --smoke
                   --program $<TARGET_FILE:bench_calls> --agent $<TARGET_FILE:profagent>
                   --devsim ${PROFAGENT_DEVSIM_DIR} --work ${CMAKE_CURRENT_BINARY_DIR}/flush_bench_work)
  set_tests_properties(bench.flush_smoke PROPERTIES LABELS bench TIMEOUT 600)
endif()
