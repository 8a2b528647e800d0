# What the agent adds for the summaries (label preload): the Python hook's phase ranges in a
# torch training loop run by `profagent run`. Included by tests/preload/CMakeLists.txt.
if(TARGET profagent_launcher AND EXISTS /usr/lib/python3/dist-packages/torch/__init__.py)
  add_test(NAME report.agent.python_phases
    COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/report_agent_checks.py
            --launcher $<TARGET_FILE:profagent_launcher>
            --hook-dir ${CMAKE_BINARY_DIR}/lib/profagent_python
            --out ${CMAKE_CURRENT_BINARY_DIR}/out/report_agent
            --program ${CMAKE_CURRENT_SOURCE_DIR}/programs/train_phases.py)
  set_tests_properties(report.agent.python_phases PROPERTIES LABELS preload TIMEOUT 300)
endif()

# <stem>.summary.txt per window: two windows of demo_train on the simulated device.
if(TARGET profagent AND TARGET demo_train)
  add_test(NAME report.agent.window_summaries
    COMMAND ${CMAKE_COMMAND} -E env LD_LIBRARY_PATH=${PROFAGENT_DEVSIM_DIR}
            /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/report_agent_summary_checks.py
            --agent $<TARGET_FILE:profagent> --out ${CMAKE_CURRENT_BINARY_DIR}/out/report_agent_summaries
            -- $<TARGET_FILE:demo_train>)
  set_tests_properties(report.agent.window_summaries PROPERTIES LABELS "preload;devsim" TIMEOUT 300)
endif()

# The overhead line and the profagent track in every window's outputs (agent_cost_checks.py).
if(TARGET profagent AND TARGET profagent_launcher AND TARGET demo_train)
  add_test(NAME report.agent.overhead_line
    COMMAND ${CMAKE_COMMAND} -E env LD_LIBRARY_PATH=${PROFAGENT_DEVSIM_DIR}
            /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/agent_cost_checks.py
            --agent $<TARGET_FILE:profagent> --profagent $<TARGET_FILE:profagent_launcher>
            --out ${CMAKE_CURRENT_BINARY_DIR}/out/agent_cost -- $<TARGET_FILE:demo_train>)
  set_tests_properties(report.agent.overhead_line PROPERTIES LABELS "preload;devsim" TIMEOUT 300)
endif()
