# Memory of a window's end, and what is written under `ulimit -v` (window_memory_bench.py).
# The CTest is a smoke run with small counts (label bench: figures, never pass/fail on size).
if(TARGET profagent AND TARGET window_oom_app)
  add_test(NAME bench.window_memory_smoke
           COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/window_memory_bench.py --events 100000
                   --limited-events 400000 --hold-mb 100 --limit-mb 512
                   --program $<TARGET_FILE:window_oom_app> --agent $<TARGET_FILE:profagent>
                   --devsim ${PROFAGENT_DEVSIM_DIR} --work ${CMAKE_CURRENT_BINARY_DIR}/window_memory_bench_work)
  set_tests_properties(bench.window_memory_smoke PROPERTIES LABELS bench TIMEOUT 600)
endif()
