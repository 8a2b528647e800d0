# Trace-writing throughput (label bench: prints figures, never fails on time).
add_executable(exporter_bench ${CMAKE_CURRENT_LIST_DIR}/exporter_bench.cpp)
target_link_libraries(exporter_bench PRIVATE profagent_exporters)
add_test(NAME exporter_bench COMMAND exporter_bench 200000 ${CMAKE_CURRENT_BINARY_DIR})
set_tests_properties(exporter_bench PROPERTIES LABELS bench)
