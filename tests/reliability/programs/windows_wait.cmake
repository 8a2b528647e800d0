# Programs of tests/reliability/cases_windows_wait.py: steps that only queue device work, so
# a step window is cut while its kernels and copies are still on the device.
add_executable(queued_steps ${CMAKE_CURRENT_LIST_DIR}/queued_steps.cu)
# CMake knows no C++20 flag for nvcc: the CUDA standard is set on this target alone.
set_target_properties(queued_steps PROPERTIES CUDA_ARCHITECTURES ${PROFAGENT_CUDA_ARCH}
  CUDA_STANDARD 17 CUDA_STANDARD_REQUIRED ON)
