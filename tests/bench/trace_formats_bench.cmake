# The trace formats on real traces (label bench: figures, never pass/fail on time): bytes/event and
# flush events/s of json, json.gz and perfetto, and zlib/libdeflate/zstd on the same JSON bytes.
# The CTest is a small smoke run; the figures of docs/trace-formats.md come from
#   trace_formats_bench.py ... --calls 250000 --files   (about a million events per trace)
find_package(PkgConfig QUIET)
if(PkgConfig_FOUND)
  pkg_check_modules(trace_formats_bench_libs QUIET IMPORTED_TARGET libdeflate libzstd)
endif()
if(NOT TARGET profagent_report OR NOT TARGET profagent OR NOT trace_formats_bench_libs_FOUND)
  message(STATUS "trace_formats_bench: needs libdeflate-dev and libzstd-dev (scripts/setup.sh tests); not built")
  return()
endif()
add_executable(trace_formats_bench ${CMAKE_CURRENT_LIST_DIR}/trace_formats_bench.cpp)
target_link_libraries(trace_formats_bench PRIVATE profagent_report PkgConfig::trace_formats_bench_libs)
find_package(ZLIB REQUIRED)
target_link_libraries(trace_formats_bench PRIVATE ZLIB::ZLIB)
find_package(Python3 COMPONENTS Interpreter QUIET)
add_test(NAME bench.trace_formats_smoke
  COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/trace_formats_bench.py
          --program $<TARGET_FILE:bench_calls> --agent $<TARGET_FILE:profagent> --devsim ${PROFAGENT_DEVSIM_DIR}
          --bench $<TARGET_FILE:trace_formats_bench> --work ${CMAKE_CURRENT_BINARY_DIR}/trace_formats_bench_work
          --calls 5000)
set_tests_properties(bench.trace_formats_smoke PROPERTIES LABELS bench TIMEOUT 300)
