# The program of the no-device cases (tests/reliability/cases_no_device.py): cuda-samples' way
# of giving up when no device answers. Linked to the runtime; the cases choose devsim or
# NVIDIA's libcudart.so.13 (without a driver) at run time.
add_executable(no_device_app programs/no_device_app.cpp)
target_include_directories(no_device_app SYSTEM PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
target_link_libraries(no_device_app PRIVATE CUDA::cudart)
