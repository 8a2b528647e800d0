# A streamed window's segment cut that takes nothing or a few events, with a full device pool
# (label bench: prints figures, never fails on time).
add_executable(segment_cut_bench ${CMAKE_CURRENT_LIST_DIR}/segment_cut_bench.cpp)
target_include_directories(segment_cut_bench PRIVATE ${PROJECT_SOURCE_DIR}/tests/unit/collector)
target_link_libraries(segment_cut_bench PRIVATE profagent_collector)
add_test(NAME bench.segment_cut COMMAND segment_cut_bench 20000 50)
set_tests_properties(bench.segment_cut PROPERTIES LABELS bench)
