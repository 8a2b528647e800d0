# process_app: the process-level cases (threads, signals, descriptors, ways out),
# driven by tests/reliability/cases_process.py.
add_executable(process_app ${CMAKE_CURRENT_LIST_DIR}/process_app.cpp)
target_include_directories(process_app SYSTEM PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
target_link_libraries(process_app PRIVATE CUDA::cudart Threads::Threads)
