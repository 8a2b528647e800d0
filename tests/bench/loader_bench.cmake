# The agent's dlopen/dlclose wrappers (label bench): tests/bench/loader_bench.py runs
# loader_bench with and without the agent and prints ns per call. The smoke test uses tiny N.
if(TARGET profagent AND TARGET loader_plugin_plain)
add_executable(loader_bench ${CMAKE_CURRENT_LIST_DIR}/loader_bench.cpp)
target_link_libraries(loader_bench PRIVATE ${CMAKE_DL_LIBS})
add_test(NAME bench.loader_smoke
  COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/loader_bench.py --program $<TARGET_FILE:loader_bench>
          --agent $<TARGET_FILE:profagent> --plugin $<TARGET_FILE:loader_plugin_plain> --calls 200 --runs 1)
set_tests_properties(bench.loader_smoke PROPERTIES LABELS bench)
endif()
