# What PROFAGENT_PROFILE_MEMORY adds to allocation calls and to other calls (memory_bench.py).
# The CTest is a smoke run with a small N (label bench: figures, never pass/fail on time).
# bench_calls comes from overhead_bench.cmake (included after this file: generator expressions
# resolve it at generation time).
if(TARGET profagent)
  add_test(NAME bench.memory_smoke
           COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/memory_bench.py --calls 2000 --runs 1
                   --program $<TARGET_FILE:bench_calls> --agent $<TARGET_FILE:profagent>
                   --devsim ${PROFAGENT_DEVSIM_DIR} --work ${CMAKE_CURRENT_BINARY_DIR}/memory_bench_work)
  set_tests_properties(bench.memory_smoke PROPERTIES LABELS bench TIMEOUT 600)
endif()
