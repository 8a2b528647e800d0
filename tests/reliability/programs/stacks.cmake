# Programs of tests/reliability/cases_stacks.py: CUDA calls from known call chains, with debug
# info (the cases check function names and source lines) and one frame per function.
add_executable(stacks_app ${CMAKE_CURRENT_LIST_DIR}/stacks_app.cpp)
target_include_directories(stacks_app SYSTEM PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
target_link_libraries(stacks_app PRIVATE CUDA::cudart Threads::Threads)
target_compile_options(stacks_app PRIVATE -g -O1 -fno-omit-frame-pointer -fno-optimize-sibling-calls -fno-inline)
