# The CUPTI callback path's own cost per call (label bench: prints figures; fails only if a
# recorded call is missing).
add_executable(callback_bench ${CMAKE_CURRENT_LIST_DIR}/callback_bench.cpp)
target_link_libraries(callback_bench PRIVATE profagent_collector)
target_include_directories(callback_bench PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
add_test(NAME bench.callback_cost COMMAND callback_bench 1000000)
set_tests_properties(bench.callback_cost PROPERTIES LABELS bench)
