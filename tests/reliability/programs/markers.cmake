# Programs of tests/reliability/cases_markers.py : step markers with
# hostile kernel and range names, the launcher's signal forwarding.
add_executable(markers_app ${CMAKE_CURRENT_LIST_DIR}/markers_app.cpp)
target_include_directories(markers_app SYSTEM PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
target_link_libraries(markers_app PRIVATE CUDA::cudart)

add_executable(signal_waiter ${CMAKE_CURRENT_LIST_DIR}/signal_waiter.cpp)
target_include_directories(signal_waiter SYSTEM PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
target_link_libraries(signal_waiter PRIVATE CUDA::cudart)
