# Collector hot-path costs (label bench: prints figures, never fails on time).
add_executable(collector_bench ${CMAKE_CURRENT_LIST_DIR}/collector_bench.cpp)
target_link_libraries(collector_bench PRIVATE profagent_collector)
add_test(NAME collector_bench COMMAND collector_bench 1000000)
set_tests_properties(collector_bench PROPERTIES LABELS bench)
