# Included by tests/report/CMakeLists.txt. A report command that is missing fails these tests
# (exit 77 is not a skip here). profagent report checked by code that shares nothing with it (recompute.py, from
# docs/report.md alone): interval merging on hand-made traces (report.intervals.<case>) and
# acceptance runs on real workloads (report.accept.<case>). Label: report.
if(NOT TARGET profagent OR NOT TARGET profagent_launcher)
  return()  # (inside include(): leaves this topic only)
endif()

file(GLOB PROFAGENT_REPORT_DRIVERS CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*.py)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${PROFAGENT_REPORT_DRIVERS})

function(profagent_report_cases driver out)
  execute_process(COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/${driver} --list
    OUTPUT_VARIABLE cases RESULT_VARIABLE listed OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT listed EQUAL 0)
    message(FATAL_ERROR "tests/report/${driver} --list failed")
  endif()
  string(REPLACE "\n" ";" cases "${cases}")
  set(${out} ${cases} PARENT_SCOPE)
endfunction()

profagent_report_cases(interval_cases.py PROFAGENT_REPORT_INTERVAL_CASES)
foreach(case ${PROFAGENT_REPORT_INTERVAL_CASES})
  add_test(NAME report.intervals.${case}
    COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/interval_cases.py
            --profagent $<TARGET_FILE:profagent_launcher> --work ${CMAKE_CURRENT_BINARY_DIR}/intervals ${case})
  set_tests_properties(report.intervals.${case} PROPERTIES LABELS report TIMEOUT 60)
endforeach()

profagent_report_cases(accept.py PROFAGENT_REPORT_ACCEPT_CASES)
foreach(case ${PROFAGENT_REPORT_ACCEPT_CASES})
  add_test(NAME report.accept.${case}
    COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/accept.py ${case}
            --profagent $<TARGET_FILE:profagent_launcher> --lib $<TARGET_FILE_DIR:profagent>
            --bin ${CMAKE_RUNTIME_OUTPUT_DIRECTORY} --devsim ${PROFAGENT_DEVSIM_DIR}
            --work ${CMAKE_CURRENT_BINARY_DIR}/accept/${case})
  set_tests_properties(report.accept.${case} PROPERTIES LABELS "report;preload" TIMEOUT 300)
endforeach()
