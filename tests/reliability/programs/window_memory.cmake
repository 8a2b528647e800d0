# A program holding memory of its own and recording many events (cases_window_memory.py, and
# tests/bench/window_memory_bench.py): a window's end under a memory limit.
add_executable(window_oom_app ${CMAKE_CURRENT_LIST_DIR}/window_oom_app.cpp)
target_include_directories(window_oom_app SYSTEM PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
target_link_libraries(window_oom_app PRIVATE CUDA::cudart)
