# The overhead line against the same workload with and without the agent
# (agent_cost_bench.py; full run: `python3 tests/bench/agent_cost_bench.py --program
# build/bin/bench_calls --agent build/lib/libprofagent.so --devsim build/devsim --work DIR`,
# which fails when the host-only figure is off by more than its factor). The CTest is a smoke
# run with few calls: it checks the lines against their traces, never a time.
# bench_calls comes from overhead_bench.cmake (included after this file: its target is named
# in a generator expression, resolved once every list was read).
if(TARGET profagent)
  add_test(NAME bench.agent_cost_smoke
           COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/agent_cost_bench.py --smoke
                   --program $<TARGET_FILE:bench_calls> --agent $<TARGET_FILE:profagent>
                   --devsim ${PROFAGENT_DEVSIM_DIR} --work ${CMAKE_CURRENT_BINARY_DIR}/agent_cost_bench_work)
  set_tests_properties(bench.agent_cost_smoke PROPERTIES LABELS bench TIMEOUT 600)
endif()
