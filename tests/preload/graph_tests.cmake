# CUDA graph replays attributed to their capture (label preload): a graph captured inside NVTX
# ranges and one built with explicit nodes, replayed under the agent on devsim. Included by
# tests/preload/CMakeLists.txt; checks in graph_checks.py.
add_executable(graph_capture_app programs/graph_capture_app.cu)
target_include_directories(graph_capture_app PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
target_link_libraries(graph_capture_app PRIVATE ${CMAKE_DL_LIBS})
set_target_properties(graph_capture_app PROPERTIES CUDA_ARCHITECTURES ${PROFAGENT_CUDA_ARCH})

# Every replayed kernel, copy and set: linked to its cudaGraphLaunch by an arrow of its own,
# carrying its graph and node ids and the External id of the range open at its node's making;
# the table's row per graph recomputed from the records.
profagent_add_preload_test(graph_capture_attributed PROGRAM graph_capture_app ARGS 6
                           CHECKER graph_capture_attributed)
