# CUDA 12 programs (a CUDA 12 runtime alone and beside a CUDA 13 one), included by ../CMakeLists.txt. No nvcc 12 here: plain
# C++ against the CUDA 13 headers, linked to devsim's libcudart.so.12 so that their runtime
# references carry version libcudart.so.12, exactly as an nvcc 12 build's do; the CUDA 12
# cudaDeviceProp comes from devsim (cudart/cuda12_device_prop.h).
set(PROFAGENT_CUDA12_INCLUDES ${CMAKE_SOURCE_DIR}/tests/devsim ${CMAKE_CURRENT_SOURCE_DIR}/programs)

# A CUDA 12 program (alone, or loading the CUDA 13 plugin).
add_executable(cuda12_app programs/cuda12_app.cpp)
target_include_directories(cuda12_app SYSTEM PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
target_include_directories(cuda12_app PRIVATE ${PROFAGENT_CUDA12_INCLUDES})
target_link_libraries(cuda12_app PRIVATE devsim_cudart12)

# Mixed processes: each major's program loads the other major's half of cuda_plugin.cpp.
foreach(major 12 13)
  add_library(cuda${major}_plugin MODULE programs/cuda_plugin.cpp)
  target_compile_definitions(cuda${major}_plugin PRIVATE CUDA_SIDE_MAJOR=${major})
  target_include_directories(cuda${major}_plugin SYSTEM PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
  target_include_directories(cuda${major}_plugin PRIVATE ${PROFAGENT_CUDA12_INCLUDES})
  set_target_properties(cuda${major}_plugin PROPERTIES CXX_VISIBILITY_PRESET hidden
    LIBRARY_OUTPUT_DIRECTORY ${CMAKE_RUNTIME_OUTPUT_DIRECTORY})
endforeach()
target_link_libraries(cuda12_plugin PRIVATE devsim_cudart12)
target_link_libraries(cuda13_plugin PRIVATE CUDA::cudart)
target_link_libraries(cuda12_app PRIVATE ${CMAKE_DL_LIBS})
add_dependencies(cuda12_app cuda13_plugin)

# cuda_mixed (libcudart.so.13) loads libcuda12_plugin.so (libcudart.so.12).
add_executable(cuda_mixed programs/cuda_mixed.cpp)
target_include_directories(cuda_mixed SYSTEM PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
target_include_directories(cuda_mixed PRIVATE ${PROFAGENT_CUDA12_INCLUDES})
target_link_libraries(cuda_mixed PRIVATE CUDA::cudart ${CMAKE_DL_LIBS})
add_dependencies(cuda_mixed cuda12_plugin)
