# The program of tests/reliability/cases_window_edges.py: step windows at their edges (time:MS
# markers, graphs without device work, launches racing a step boundary, device queries).
add_executable(window_edges ${CMAKE_CURRENT_LIST_DIR}/window_edges.cu)
target_link_libraries(window_edges PRIVATE Threads::Threads)
# CMake knows no C++20 flag for nvcc: the CUDA standard is set on this target alone.
set_target_properties(window_edges PROPERTIES CUDA_ARCHITECTURES ${PROFAGENT_CUDA_ARCH}
  CUDA_STANDARD 17 CUDA_STANDARD_REQUIRED ON)
