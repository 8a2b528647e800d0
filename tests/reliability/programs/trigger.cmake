# The program of tests/reliability/cases_trigger.py: a loop of steps that runs until told to
# stop, triggered by `profagent trigger`.
add_executable(trigger_app ${CMAKE_CURRENT_LIST_DIR}/trigger_app.cpp)
target_include_directories(trigger_app SYSTEM PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
target_link_libraries(trigger_app PRIVATE CUDA::cudart)
add_dependencies(trigger_app profagent_launcher)
