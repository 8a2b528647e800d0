# Unit tests of agent/ (included by tests/unit/CMakeLists.txt). Config parsing is compiled in
# directly: it has no dependency on the collector or on CUDA.
add_executable(agent_config_test
  ${CMAKE_CURRENT_LIST_DIR}/agent_config_test.cpp
  ${PROJECT_SOURCE_DIR}/agent/config.cpp)
target_include_directories(agent_config_test PRIVATE ${PROJECT_SOURCE_DIR})
target_link_libraries(agent_config_test PRIVATE Catch2::Catch2)
add_test(NAME agent_config COMMAND agent_config_test)
set_tests_properties(agent_config PROPERTIES LABELS unit)
