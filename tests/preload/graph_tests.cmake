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
# A window per step (steps begin at the "capture" and "replay" ranges): the graphs are made in
# window 1 and replayed in windows 2 and 3, attributed to window 1's ranges.
profagent_add_preload_test(graph_capture_windows PROGRAM graph_capture_app ARGS 6
                           ENV "PROFAGENT_STEP_ON=range:^(capture|replay)$" PROFAGENT_SCHEDULE=skip_first=1,active=1
                           CHECKER graph_capture_windows)
# The graphs made in a step nothing records: their replays keep their launch's External id,
# counted in profagent_drops.graph_replays_without_capture and said once.
profagent_add_preload_test(graph_capture_not_recorded PROGRAM graph_capture_app ARGS 6
                           ENV "PROFAGENT_STEP_ON=range:^(capture|replay)$" PROFAGENT_SCHEDULE=skip_first=2,active=1
                           CHECKER graph_capture_not_recorded)

# Opt-in, on a developer machine with a catapult checkout (no package ships it): the same trace
# opened in Chromium's legacy trace viewer through catapult's trace2html, which keeps one arrow
# per flow id: every arrow shown, no import warning.
set(PROFAGENT_CATAPULT_DIR "" CACHE PATH
    "A checkout of https://github.com/catapult-project/catapult: when set, preload.graph_capture_catapult opens a graph replay's trace in Chromium's legacy trace viewer and counts its flow warnings")
if(PROFAGENT_CATAPULT_DIR)
  find_program(PROFAGENT_NODE node REQUIRED)
  find_program(PROFAGENT_CHROMIUM NAMES chromium chromium-browser REQUIRED)
  set_tests_properties(preload.graph_capture_attributed PROPERTIES FIXTURES_SETUP graph_capture_trace)
  add_test(NAME preload.graph_capture_catapult
    COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/catapult_flows_check.py --catapult ${PROFAGENT_CATAPULT_DIR}
            --node ${PROFAGENT_NODE} --chromium ${PROFAGENT_CHROMIUM} --node-modules ${CMAKE_BINARY_DIR}/node/node_modules
            ${CMAKE_CURRENT_BINARY_DIR}/out/graph_capture_attributed)
  set_tests_properties(preload.graph_capture_catapult PROPERTIES LABELS preload TIMEOUT 300
                       FIXTURES_REQUIRED graph_capture_trace)
endif()
