# Programs of tests/reliability/cases_footprint.py: what the agent must not take from the
# process (descriptors, the injection slot, a child's environment). Built with a frame pointer:
# its JIT-copied function keeps one, so a checked unwind can follow it.
add_executable(footprint_app ${CMAKE_CURRENT_LIST_DIR}/footprint_app.cpp)
target_include_directories(footprint_app SYSTEM PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
target_link_libraries(footprint_app PRIVATE CUDA::cudart)
target_compile_options(footprint_app PRIVATE -g -O1 -fno-omit-frame-pointer -fno-optimize-sibling-calls)
# The program's own injection tool, next to the programs.
add_library(footprint_tool SHARED ${CMAKE_CURRENT_LIST_DIR}/footprint_tool.cpp)
set_target_properties(footprint_tool PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${CMAKE_RUNTIME_OUTPUT_DIRECTORY})
