# Call stack costs (PROFAGENT_WITH_STACK): ns added per recorded call at stack depth 32, the
# same with stacks off, and trace bytes per event (label bench: figures, never pass/fail on time).
add_executable(stacks_bench_calls ${CMAKE_CURRENT_LIST_DIR}/stacks_bench_calls.cpp)
target_include_directories(stacks_bench_calls SYSTEM PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
target_link_libraries(stacks_bench_calls PRIVATE CUDA::cudart)
target_compile_options(stacks_bench_calls PRIVATE -fno-optimize-sibling-calls -fno-inline)
if(TARGET profagent)
  add_test(NAME bench.stacks
           COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/stacks_bench.py --smoke
                   --program $<TARGET_FILE:stacks_bench_calls> --agent $<TARGET_FILE:profagent>
                   --devsim ${PROFAGENT_DEVSIM_DIR} --work ${CMAKE_CURRENT_BINARY_DIR}/stacks_bench_work
                   --python-ext $<TARGET_FILE:py_cuda_ext>)
  set_tests_properties(bench.stacks PROPERTIES LABELS bench TIMEOUT 600)
endif()
