# Unit tests of agent/ and hooks/ (included by tests/unit/CMakeLists.txt), label unit.

# Config parsing is compiled in directly: it depends on nothing else.
add_executable(agent_config_test
  ${CMAKE_CURRENT_LIST_DIR}/agent_config_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/agent_python_options_test.cpp
  ${PROJECT_SOURCE_DIR}/agent/config.cpp
  ${PROJECT_SOURCE_DIR}/agent/python_options.cpp)
target_include_directories(agent_config_test PRIVATE ${PROJECT_SOURCE_DIR})
target_link_libraries(agent_config_test PRIVATE Catch2::Catch2 profagent_exporters)
profagent_catch_tests(agent_config_test PREFIX agent_config. LABELS unit)

# The hook template and the resolver with fake real functions, over the real collector. Only
# the template's own sources: the CUDA hook table (cuda_runtime.cpp) would interpose the
# test's own process.
if(TARGET profagent_collector)
  add_executable(hook_template_test
    ${CMAKE_CURRENT_LIST_DIR}/agent/main.cpp
    ${CMAKE_CURRENT_LIST_DIR}/agent/hook_template_test.cpp
    ${PROJECT_SOURCE_DIR}/hooks/hook.cpp
    ${PROJECT_SOURCE_DIR}/hooks/record_cost.cpp
    ${PROJECT_SOURCE_DIR}/hooks/resolve.cpp
    ${PROJECT_SOURCE_DIR}/hooks/stream_capture.cpp)
  target_include_directories(hook_template_test PRIVATE ${PROJECT_SOURCE_DIR})
  target_include_directories(hook_template_test SYSTEM PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
  target_link_libraries(hook_template_test PRIVATE profagent_collector Catch2::Catch2 ${CMAKE_DL_LIBS})
  profagent_catch_tests(hook_template_test PREFIX hook_template. LABELS unit)
endif()

# The partial writer (agent/partial_writer.h) over the real collector and agent, with a device
# backend whose flush checks that the writer's lock is free meanwhile.
if(TARGET profagent_agent)
  add_executable(partial_writer_lock_test
    ${CMAKE_CURRENT_LIST_DIR}/agent/main.cpp
    ${CMAKE_CURRENT_LIST_DIR}/agent/partial_writer_lock_test.cpp)
  # The agent refers to the hooks (the first CUDA use, the resolver): linked as the agent is.
  target_link_libraries(partial_writer_lock_test PRIVATE profagent_agent profagent_hooks Catch2::Catch2)
  profagent_catch_tests(partial_writer_lock_test PREFIX partial_writer_lock. LABELS unit)
endif()
