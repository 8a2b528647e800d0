# What a process that never uses CUDA pays for the preloaded agent (label bench):
# startup_bench runs /bin/true with and without it and prints CPU ms per process (rusage).
# The smoke test uses a few runs; run it by hand with --runs 500 for the figure.
if(TARGET profagent)
add_executable(startup_bench ${CMAKE_CURRENT_LIST_DIR}/startup_bench.cpp)
add_test(NAME bench.startup_smoke COMMAND startup_bench --agent $<TARGET_FILE:profagent> --runs 5)
set_tests_properties(bench.startup_smoke PROPERTIES LABELS bench)
endif()
