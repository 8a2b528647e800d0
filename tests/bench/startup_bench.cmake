# What a process that never uses CUDA pays for the preloaded agent (label bench):
# startup_bench runs a program with and without it and prints CPU ms per process (rusage), and
# fails if the program's output or exit status differs with the agent. Three programs: /bin/true,
# Debian's python3 -c pass, and a C++ program with its own libstdc++ that throws and catches.
# The smoke tests use a few runs; run them by hand with --runs 500 for the figures.
if(TARGET profagent)
add_executable(startup_bench ${CMAKE_CURRENT_LIST_DIR}/startup_bench.cpp)
add_executable(startup_cxx_program ${CMAKE_CURRENT_LIST_DIR}/startup_cxx_program.cpp)
add_test(NAME bench.startup_smoke COMMAND startup_bench --agent $<TARGET_FILE:profagent> --runs 5)
add_test(NAME bench.startup_cxx_smoke
         COMMAND startup_bench --agent $<TARGET_FILE:profagent> --runs 5 -- $<TARGET_FILE:startup_cxx_program>)
set_tests_properties(bench.startup_smoke bench.startup_cxx_smoke PROPERTIES LABELS bench)
find_program(PROFAGENT_PYTHON3_EXECUTABLE python3 PATHS /usr/bin NO_DEFAULT_PATH)
if(PROFAGENT_PYTHON3_EXECUTABLE)
  add_test(NAME bench.startup_python_smoke
           COMMAND startup_bench --agent $<TARGET_FILE:profagent> --runs 5 -- ${PROFAGENT_PYTHON3_EXECUTABLE} -c pass)
  set_tests_properties(bench.startup_python_smoke PROPERTIES LABELS bench)
endif()
endif()
