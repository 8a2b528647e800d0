# The cross-rank report (agent/ranks) locally and on Dask, on synthetic per-rank tables (label
# bench: figures). The CTest is a small smoke run; the README's figures come from
# `/usr/bin/python3 tests/bench/ranks_bench.py build/bin/profagent /tmp/ranks_bench 1024 200`.
if(TARGET profagent_launcher)
  add_test(NAME bench.ranks_smoke
    COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/ranks_bench.py $<TARGET_FILE:profagent_launcher>
            ${CMAKE_CURRENT_BINARY_DIR}/ranks_bench 64 20)
  set_tests_properties(bench.ranks_smoke PROPERTIES LABELS bench TIMEOUT 300)
endif()
