# CUDA 12 programs (issue 10, point 6), included by ../CMakeLists.txt. No nvcc 12 here: plain
# C++ against the CUDA 13 headers, linked to devsim's libcudart.so.12 so that their runtime
# references carry version libcudart.so.12, exactly as an nvcc 12 build's do; the CUDA 12
# cudaDeviceProp comes from devsim (cudart/cuda12_device_prop.h).
set(PROFAGENT_CUDA12_INCLUDES ${CMAKE_SOURCE_DIR}/tests/devsim ${CMAKE_CURRENT_SOURCE_DIR}/programs)

# A CUDA 12 program and nothing else.
add_executable(cuda12_app programs/cuda12_app.cpp)
target_include_directories(cuda12_app SYSTEM PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
target_include_directories(cuda12_app PRIVATE ${PROFAGENT_CUDA12_INCLUDES})
target_link_libraries(cuda12_app PRIVATE devsim_cudart12)

# The mixed process: cuda_mixed (libcudart.so.13) dlopens libcuda12_plugin.so (libcudart.so.12).
add_library(cuda12_plugin MODULE programs/cuda12_plugin.cpp)
target_include_directories(cuda12_plugin SYSTEM PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
target_include_directories(cuda12_plugin PRIVATE ${PROFAGENT_CUDA12_INCLUDES})
target_link_libraries(cuda12_plugin PRIVATE devsim_cudart12)
set_target_properties(cuda12_plugin PROPERTIES CXX_VISIBILITY_PRESET hidden
  LIBRARY_OUTPUT_DIRECTORY ${CMAKE_RUNTIME_OUTPUT_DIRECTORY})

add_executable(cuda_mixed programs/cuda_mixed.cpp)
target_include_directories(cuda_mixed SYSTEM PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
target_include_directories(cuda_mixed PRIVATE ${PROFAGENT_CUDA12_INCLUDES})
target_link_libraries(cuda_mixed PRIVATE CUDA::cudart ${CMAKE_DL_LIBS})
add_dependencies(cuda_mixed cuda12_plugin)
