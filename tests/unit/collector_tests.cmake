# Unit tests of collector/ (included by tests/unit/CMakeLists.txt).
if(TARGET profagent_collector)
  add_executable(collector_tests
    ${CMAKE_CURRENT_LIST_DIR}/collector/main.cpp
    ${CMAKE_CURRENT_LIST_DIR}/collector/buffers_test.cpp
    ${CMAKE_CURRENT_LIST_DIR}/collector/clock_test.cpp
    ${CMAKE_CURRENT_LIST_DIR}/collector/names_test.cpp
    ${CMAKE_CURRENT_LIST_DIR}/collector/join_test.cpp
    ${CMAKE_CURRENT_LIST_DIR}/collector/session_test.cpp
    ${CMAKE_CURRENT_LIST_DIR}/step_schedule_test.cpp)
  target_link_libraries(collector_tests PRIVATE profagent_collector Catch2::Catch2)
  target_include_directories(collector_tests PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
  add_test(NAME collector COMMAND collector_tests)
  set_tests_properties(collector PROPERTIES LABELS unit)
endif()
