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
