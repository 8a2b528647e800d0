# Unit tests of agent/report (included by tests/unit/CMakeLists.txt): traces written by the
# exporters or by hand, read back by the loader.
if(NOT TARGET profagent_report)
  return()
endif()
find_package(ZLIB REQUIRED)
add_executable(report_unit_tests
  ${CMAKE_CURRENT_LIST_DIR}/exporters/main.cpp
  ${CMAKE_CURRENT_LIST_DIR}/report/trace_loader_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/report/bad_trace_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/report/schema_roundtrip_test.cpp)
target_include_directories(report_unit_tests PRIVATE ${CMAKE_CURRENT_LIST_DIR}/exporters)
target_link_libraries(report_unit_tests PRIVATE profagent_report Catch2::Catch2 ZLIB::ZLIB)
profagent_catch_tests(report_unit_tests PREFIX report.loader. LABELS unit)
