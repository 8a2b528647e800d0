# Reading a big trace back (agent/report): seconds and peak RSS per file size (label bench:
# figures, never pass/fail on time). The CTest is a small smoke run; the figures of the README
# come from `report_bench 28000 DIR build/bin/profagent` (~1 GB; without the third
# argument it times the loader and key_averages only).
if(TARGET profagent_report)
  add_executable(report_bench ${CMAKE_CURRENT_LIST_DIR}/report_bench.cpp)
  target_link_libraries(report_bench PRIVATE profagent_report)
  add_test(NAME bench.report_smoke
    COMMAND report_bench 200 ${CMAKE_CURRENT_BINARY_DIR} $<TARGET_FILE:profagent_launcher>)
  set_tests_properties(bench.report_smoke PROPERTIES LABELS bench)
endif()
