# The throw-in-agent case (tests/reliability/cases_throw_in_agent.py): a test-only preload
# whose operator new throws for the agent's allocations, and a CUDA program to run under it.
add_library(throwing_new SHARED programs/throw_in_agent/throwing_new.cpp)
set_target_properties(throwing_new PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${CMAKE_RUNTIME_OUTPUT_DIRECTORY})
add_executable(throw_in_agent_app programs/throw_in_agent/throw_in_agent_app.cpp)
target_include_directories(throw_in_agent_app SYSTEM PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
target_link_libraries(throw_in_agent_app PRIVATE CUDA::cudart ${CMAKE_DL_LIBS})
add_dependencies(throw_in_agent_app throwing_new)
