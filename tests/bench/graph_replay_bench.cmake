# What attributing CUDA graph replays to their capture costs (label bench: prints figures,
# never fails on time; fails only if the replays were not attributed).
add_executable(graph_replay_bench ${CMAKE_CURRENT_LIST_DIR}/graph_replay_bench.cpp)
target_link_libraries(graph_replay_bench PRIVATE profagent_collector)
add_test(NAME graph_replay_bench COMMAND graph_replay_bench 1000 1000)
set_tests_properties(graph_replay_bench PROPERTIES LABELS bench)
