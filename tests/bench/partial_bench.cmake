# Memory and exit flush of a long window, with the partial trace off and on (partial_bench.py).
# The CTest is a smoke run with small counts (label bench: figures, never pass/fail on a figure).
if(TARGET profagent AND TARGET window_oom_app)
  add_test(NAME bench.partial_smoke
           COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/partial_bench.py --events 300000 --buffers 64
                   --program $<TARGET_FILE:window_oom_app> --agent $<TARGET_FILE:profagent>
                   --devsim ${PROFAGENT_DEVSIM_DIR} --work ${CMAKE_CURRENT_BINARY_DIR}/partial_bench_work)
  set_tests_properties(bench.partial_smoke PROPERTIES LABELS bench TIMEOUT 600)
  # The same window streamed in segments (PROFAGENT_STREAM_AFTER_MB=2: about 44,000 events).
  add_test(NAME bench.streamed_smoke
           COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/partial_bench.py --events 300000 --buffers 64
                   --stream-after-mb 2 --program $<TARGET_FILE:window_oom_app> --agent $<TARGET_FILE:profagent>
                   --devsim ${PROFAGENT_DEVSIM_DIR} --work ${CMAKE_CURRENT_BINARY_DIR}/streamed_bench_work)
  set_tests_properties(bench.streamed_smoke PROPERTIES LABELS bench TIMEOUT 600)
endif()
