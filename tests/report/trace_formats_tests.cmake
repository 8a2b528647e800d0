# Included by tests/report/CMakeLists.txt. PROFAGENT_TRACE_FORMAT=json,json.gz,perfetto on real runs
# on devsim: json.gz and the Perfetto protobuf trace checked event by event against the JSON of the
# same window, and `profagent report` of each equal to the JSON's (report.trace_formats.<case>;
# trace_formats.py); the case "streamed" writes the window in segments while it is recorded. Needs protoc (Debian protobuf-compiler; scripts/setup.sh tests). Label: report.
if(NOT TARGET profagent OR NOT TARGET profagent_launcher OR NOT TARGET frameworksim OR NOT TARGET nvtx_app
   OR NOT TARGET preload_threads)
  return()  # (inside include(): leaves this topic only)
endif()

foreach(case diopi nvtx streamed)
  add_test(NAME report.trace_formats.${case}
    COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/trace_formats.py ${case}
            --profagent $<TARGET_FILE:profagent_launcher> --lib $<TARGET_FILE_DIR:profagent>
            --devsim ${PROFAGENT_DEVSIM_DIR} --nvtx-app $<TARGET_FILE:nvtx_app>
            --threads-app $<TARGET_FILE:preload_threads>
            --work ${CMAKE_CURRENT_BINARY_DIR}/trace_formats/${case})
  set_tests_properties(report.trace_formats.${case} PROPERTIES LABELS "report;preload" TIMEOUT 120)
endforeach()
