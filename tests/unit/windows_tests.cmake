# Unit tests of the step window pieces, label unit: PROFAGENT_STEP_ON parsing, the
# launcher's command line, api:NAME matching and the per-step summary of the tables.
if(TARGET profagent_collector AND TARGET profagent_exporters)
add_executable(windows_unit_test
  ${CMAKE_CURRENT_LIST_DIR}/windows/windows_unit_test.cpp
  ${PROJECT_SOURCE_DIR}/agent/step_on.cpp
  ${PROJECT_SOURCE_DIR}/agent/launcher/options.cpp
  ${CMAKE_CURRENT_LIST_DIR}/windows/step_marker_hooks_test.cpp
  ${PROJECT_SOURCE_DIR}/hooks/hook.cpp
  ${PROJECT_SOURCE_DIR}/hooks/resolve.cpp
  ${PROJECT_SOURCE_DIR}/hooks/stream_capture.cpp)
target_include_directories(windows_unit_test PRIVATE ${PROJECT_SOURCE_DIR})
target_include_directories(windows_unit_test SYSTEM PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
target_link_libraries(windows_unit_test PRIVATE profagent_exporters profagent_collector Catch2::Catch2 ${CMAKE_DL_LIBS})
profagent_catch_tests(windows_unit_test PREFIX windows_unit. LABELS unit)
endif()
