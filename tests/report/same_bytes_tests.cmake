# Included by tests/report/CMakeLists.txt. The exit files of a real run on devsim (memory, stacks,
# shapes on) and `profagent report` of its trace are the same bytes, for every sort key and
# grouping (report.same_bytes.<case>; same_bytes.py). Label: report.
if(NOT TARGET profagent OR NOT TARGET profagent_launcher OR NOT TARGET frameworksim)
  return()  # (inside include(): leaves this topic only)
endif()

execute_process(COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/same_bytes.py --list
  OUTPUT_VARIABLE same_bytes_cases RESULT_VARIABLE listed OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT listed EQUAL 0)
  message(FATAL_ERROR "tests/report/same_bytes.py --list failed")
endif()
string(REPLACE "\n" ";" same_bytes_cases "${same_bytes_cases}")
foreach(case ${same_bytes_cases})
  add_test(NAME report.same_bytes.${case}
    COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/same_bytes.py ${case}
            --profagent $<TARGET_FILE:profagent_launcher> --lib $<TARGET_FILE_DIR:profagent>
            --devsim ${PROFAGENT_DEVSIM_DIR} --work ${CMAKE_CURRENT_BINARY_DIR}/same_bytes/${case})
  set_tests_properties(report.same_bytes.${case} PROPERTIES LABELS "report;preload" TIMEOUT 120)
endforeach()
