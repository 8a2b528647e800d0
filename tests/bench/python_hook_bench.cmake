# The Python hook's cost per training step and per window (label bench): python_hook_bench.py runs
# a CPU torch loop without the agent and under it with the hook off and on, idle and recording.
# The smoke test uses few steps; it prints SKIP where Debian's python3-torch is missing.
if(TARGET profagent)
add_test(NAME bench.python_hook_smoke
  COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/python_hook_bench.py --agent $<TARGET_FILE:profagent>
          --steps 20 --runs 1)
set_tests_properties(bench.python_hook_smoke PROPERTIES LABELS bench TIMEOUT 300)
endif()
