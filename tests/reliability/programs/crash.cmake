# Programs of tests/reliability/cases_crash.py and cases_file_size.py: crashes of every kind
# after some CUDA work, signal handlers of the program's own, a program with a SIGXFSZ handler.
add_executable(crash_app ${CMAKE_CURRENT_LIST_DIR}/crash_app.cpp)
target_include_directories(crash_app SYSTEM PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
target_link_libraries(crash_app PRIVATE CUDA::cudart Threads::Threads)
# assert() must stay in: the build type may define NDEBUG.
target_compile_options(crash_app PRIVATE -UNDEBUG -O0)
