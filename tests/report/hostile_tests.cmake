# Included by tests/report/CMakeLists.txt. `profagent report` on hostile-but-legal traces
# (tests/report/hostile_cases.py): deep nesting, a gzip bomb, one huge line, out-of-range times,
# control characters in names, asynchronous GPU time, every row and pure CSV in machine formats.
# Each case runs the real command and reads its output as a user or a consumer does. Label: report.
if(NOT TARGET profagent_launcher)
  return()  # (inside include(): leaves this topic only)
endif()

execute_process(COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/hostile_cases.py --list
  OUTPUT_VARIABLE hostile_cases RESULT_VARIABLE listed OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT listed EQUAL 0)
  message(FATAL_ERROR "tests/report/hostile_cases.py --list failed")
endif()
string(REPLACE "\n" ";" hostile_cases "${hostile_cases}")
foreach(case ${hostile_cases})
  add_test(NAME report.hostile.${case}
    COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/hostile_cases.py
            --profagent $<TARGET_FILE:profagent_launcher> --work ${CMAKE_CURRENT_BINARY_DIR}/hostile ${case})
  set_tests_properties(report.hostile.${case} PROPERTIES LABELS report TIMEOUT 300)
endforeach()
