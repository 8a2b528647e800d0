# Programs of tests/reliability/cases_partial.py: one long window, killed or ended.
add_executable(long_window ${CMAKE_CURRENT_LIST_DIR}/long_window.cu)
set_target_properties(long_window PROPERTIES CUDA_ARCHITECTURES ${PROFAGENT_CUDA_ARCH}
  CUDA_STANDARD 17 CUDA_STANDARD_REQUIRED ON)
