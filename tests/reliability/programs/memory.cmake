# Programs of tests/reliability/cases_memory.py: allocation sequences known by construction.
add_executable(memory_app ${CMAKE_CURRENT_LIST_DIR}/memory_app.cpp)
target_include_directories(memory_app SYSTEM PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
# simblas: a library allocating at the driver level (cuMemAlloc), as cuBLAS workspaces are.
target_link_libraries(memory_app PRIVATE CUDA::cudart simblas Threads::Threads)
