# Programs of tests/reliability/cases_memory.py: allocation sequences known by construction.
add_executable(memory_app ${CMAKE_CURRENT_LIST_DIR}/memory_app.cpp)
target_include_directories(memory_app SYSTEM PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
# simblas: a library allocating at the driver level (cuMemAlloc), as cuBLAS workspaces are.
target_link_libraries(memory_app PRIVATE CUDA::cudart simblas Threads::Threads)

# The ledger's edges (cases_memory_ledger.py): addresses shared by the runtime and the driver,
# graph memory nodes, zero-byte allocations, a refused registration.
add_executable(memory_edges_app ${CMAKE_CURRENT_LIST_DIR}/memory_edges_app.cpp)
target_include_directories(memory_edges_app SYSTEM PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
target_link_libraries(memory_edges_app PRIVATE CUDA::cudart simblas)
