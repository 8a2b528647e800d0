# NVTX tests (label preload): programs annotated with the nvtx3 headers only, traced through
# NVTX's injection (agent/nvtx_injection.h). Included by tests/preload/CMakeLists.txt; checks in
# nvtx_checks.py.
foreach(id a b)  # two shared libraries, each with its own NVTX copy
  add_library(nvtx_library_${id} SHARED programs/nvtx_library.cu)
  target_compile_definitions(nvtx_library_${id} PRIVATE NVTX_LIBRARY_ID=${id})
  target_include_directories(nvtx_library_${id} PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
  target_link_libraries(nvtx_library_${id} PRIVATE ${CMAKE_DL_LIBS})
  set_target_properties(nvtx_library_${id} PROPERTIES CUDA_ARCHITECTURES ${PROFAGENT_CUDA_ARCH})
endforeach()
add_executable(nvtx_app programs/nvtx_app.cu)
target_include_directories(nvtx_app PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
target_link_libraries(nvtx_app PRIVATE nvtx_library_a nvtx_library_b Threads::Threads ${CMAKE_DL_LIBS})
set_target_properties(nvtx_app PROPERTIES CUDA_ARCHITECTURES ${PROFAGENT_CUDA_ARCH})

# Every range and mark of every NVTX copy, kernels attributed, names and args.
profagent_add_preload_test(nvtx_ranges PROGRAM nvtx_app ARGS 3 CHECKER nvtx_ranges)
# range:REGEX step markers on a domain range (`domain::message`).
profagent_add_preload_test(nvtx_range_marker PROGRAM nvtx_app ARGS 3
                           ENV "PROFAGENT_STEP_ON=range:^app::registered_step$"
                               PROFAGENT_SCHEDULE=skip_first=1,active=1,repeat=1
                           CHECKER nvtx_range_marker)
# Another tool's NVTX_INJECTION64_PATH is kept: the agent records no NVTX range and says so.
profagent_add_preload_test(nvtx_other_tool_kept PROGRAM nvtx_app ARGS 2
                           ENV NVTX_INJECTION64_PATH=/nonexistent/libother_nvtx_tool.so
                           CHECKER nvtx_other_tool_kept)

# torch's operator ranges (emit_nvtx names of several torch versions) turned into operators:
# Kineto's cpu_op args, fwdbwd links, kernels attributed, the table recomputed per input shape.
add_executable(torch_nvtx_app programs/torch_nvtx_app.cu)
target_include_directories(torch_nvtx_app PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
target_link_libraries(torch_nvtx_app PRIVATE Threads::Threads ${CMAKE_DL_LIBS})
set_target_properties(torch_nvtx_app PROPERTIES CUDA_ARCHITECTURES ${PROFAGENT_CUDA_ARCH})
profagent_add_preload_test(nvtx_torch_operators PROGRAM torch_nvtx_app ARGS 3
                           ENV PROFAGENT_GROUP_BY=input_shape CHECKER torch_ops)

# The Python hook's side: emit_nvtx on for the recorded steps only (a stand-in CUDA torch that
# prints when it is entered and left), never while the program runs its own profiler, and
# Debian's CPU torch detected (one line, the program unchanged).
if(TARGET profagent_launcher)
  set(TORCH_HOOK_CHECK /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/torch_hook_check.py
      --launcher $<TARGET_FILE:profagent_launcher>)
  set(FAKE_TORCH ${CMAKE_CURRENT_SOURCE_DIR}/programs/fake_cuda_torch)
  set(FAKE_STEPS ${CMAKE_CURRENT_SOURCE_DIR}/programs/fake_torch_steps.py)
  add_test(NAME preload.nvtx_hook_emit_nvtx_per_window
    COMMAND ${TORCH_HOOK_CHECK} --out ${CMAKE_CURRENT_BINARY_DIR}/out/nvtx_hook_window --fake-torch ${FAKE_TORCH} fake_cuda
            -- /usr/bin/python3 ${FAKE_STEPS} 6)
  add_test(NAME preload.nvtx_hook_own_profiler
    COMMAND ${TORCH_HOOK_CHECK} --out ${CMAKE_CURRENT_BINARY_DIR}/out/nvtx_hook_profiler --fake-torch ${FAKE_TORCH} fake_cuda
            -- /usr/bin/python3 ${FAKE_STEPS} 6 profiler)
  set(hook_tests preload.nvtx_hook_emit_nvtx_per_window preload.nvtx_hook_own_profiler)
  if(EXISTS /usr/lib/python3/dist-packages/torch/__init__.py)
    add_test(NAME preload.nvtx_hook_cpu_torch
      COMMAND ${TORCH_HOOK_CHECK} --out ${CMAKE_CURRENT_BINARY_DIR}/out/nvtx_hook_cpu cpu_build
              -- /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/programs/train_steps.py 6)
    list(APPEND hook_tests preload.nvtx_hook_cpu_torch)
  endif()
  set_tests_properties(${hook_tests} PROPERTIES LABELS preload TIMEOUT 300)
endif()
