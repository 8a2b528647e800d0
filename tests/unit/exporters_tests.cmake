# Unit tests of exporters/ (included by tests/unit/CMakeLists.txt): synthetic Traces in,
# files parsed back with nlohmann::json.
add_executable(exporters_unit_tests
  ${CMAKE_CURRENT_LIST_DIR}/exporters/main.cpp
  ${CMAKE_CURRENT_LIST_DIR}/exporters/chrome_trace_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/exporters/cpu_times_key_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/exporters/drop_counters_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/exporters/golden_trace_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/exporters/host_nesting_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/exporters/json_writer_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/exporters/memory_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/exporters/occupancy_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/exporters/output_file_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/exporters/overhead_line_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/exporters/partial_trace_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/exporters/rank_table_fold_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/exporters/report_hostile_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/exporters/report_summaries_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/exporters/step_summary_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/exporters/streamed_steps_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/exporters/streamed_step_summaries_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/exporters/streamed_memory_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/exporters/streamed_summaries_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/exporters/tables_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/exporters/trace_formats_test.cpp)
find_package(ZLIB REQUIRED)
target_link_libraries(exporters_unit_tests PRIVATE
  profagent_exporters Catch2::Catch2 nlohmann_json::nlohmann_json ZLIB::ZLIB)
# The golden trace files the writer's output is compared with (golden_trace_test.cpp).
target_compile_definitions(exporters_unit_tests PRIVATE
  PROFAGENT_GOLDEN_DIR="${CMAKE_CURRENT_LIST_DIR}/exporters/golden")
# The occupancy test checks against the toolkit's header-only occupancy calculator.
target_include_directories(exporters_unit_tests SYSTEM PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
profagent_catch_tests(exporters_unit_tests PREFIX exporters. LABELS unit)
