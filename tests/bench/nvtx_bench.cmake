# NVTX ranges through the agent's NVTX injection (label bench): tests/bench/nvtx_bench.py runs
# nvtx_bench without the agent, idle and recording, and prints ns per push+pop pair. The smoke
# test uses tiny N.
if(TARGET profagent)
add_executable(nvtx_bench ${CMAKE_CURRENT_LIST_DIR}/nvtx_bench.cpp)
target_include_directories(nvtx_bench PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
target_link_libraries(nvtx_bench PRIVATE ${CMAKE_DL_LIBS})
add_test(NAME bench.nvtx_smoke
  COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/nvtx_bench.py --program $<TARGET_FILE:nvtx_bench>
          --agent $<TARGET_FILE:profagent> --pairs 200 --runs 1)
set_tests_properties(bench.nvtx_smoke PROPERTIES LABELS bench)
endif()
