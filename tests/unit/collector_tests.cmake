# Unit tests of collector/ (included by tests/unit/CMakeLists.txt).
if(TARGET profagent_collector)
  add_executable(collector_tests
    ${CMAKE_CURRENT_LIST_DIR}/collector/main.cpp
    ${CMAKE_CURRENT_LIST_DIR}/collector/buffers_test.cpp
    ${CMAKE_CURRENT_LIST_DIR}/collector/clock_test.cpp
    ${CMAKE_CURRENT_LIST_DIR}/collector/names_test.cpp
    ${CMAKE_CURRENT_LIST_DIR}/collector/cupti_status_test.cpp
    ${CMAKE_CURRENT_LIST_DIR}/collector/swallowed_test.cpp
    ${CMAKE_CURRENT_LIST_DIR}/collector/join_test.cpp
    ${CMAKE_CURRENT_LIST_DIR}/collector/graph_captures_test.cpp
    ${CMAKE_CURRENT_LIST_DIR}/collector/session_test.cpp
    ${CMAKE_CURRENT_LIST_DIR}/collector/interval_peek_test.cpp
    ${CMAKE_CURRENT_LIST_DIR}/collector/segment_split_test.cpp
    ${CMAKE_CURRENT_LIST_DIR}/collector/thread_marks_test.cpp
    ${CMAKE_CURRENT_LIST_DIR}/collector/segment_stream_test.cpp
    ${CMAKE_CURRENT_LIST_DIR}/collector/window_race_test.cpp
    ${CMAKE_CURRENT_LIST_DIR}/collector/device_pool_test.cpp
    ${CMAKE_CURRENT_LIST_DIR}/collector/flat_map_test.cpp
    ${CMAKE_CURRENT_LIST_DIR}/collector/correlation_map_test.cpp
    ${CMAKE_CURRENT_LIST_DIR}/collector/host_id_map_test.cpp
    ${CMAKE_CURRENT_LIST_DIR}/collector/memory_test.cpp
    ${CMAKE_CURRENT_LIST_DIR}/collector/window_limits_test.cpp
    ${CMAKE_CURRENT_LIST_DIR}/step_schedule_test.cpp
    ${CMAKE_CURRENT_LIST_DIR}/collector/cpu_times_test.cpp)
  target_link_libraries(collector_tests PRIVATE profagent_collector Catch2::Catch2 ${CMAKE_DL_LIBS})
  # window_race_test.cpp: a library whose constructor calls back into the test program (found
  # by dlsym, hence the exported symbols) while step boundaries run.
  add_library(window_race_plugin MODULE ${CMAKE_CURRENT_LIST_DIR}/collector/window_race_plugin.cpp)
  target_link_libraries(window_race_plugin PRIVATE ${CMAKE_DL_LIBS})
  add_dependencies(collector_tests window_race_plugin)
  set_target_properties(collector_tests PROPERTIES ENABLE_EXPORTS ON)
  target_compile_definitions(collector_tests PRIVATE WINDOW_RACE_PLUGIN="$<TARGET_FILE:window_race_plugin>")
  target_include_directories(collector_tests PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
  # Under qemu-user the process's memory is the emulator's: the [kernel_memory] cases (an
  # address-space limit, pages populated on request) check the kernel, which it does not pass
  # through.
  if(CMAKE_CROSSCOMPILING_EMULATOR)
    set(collector_spec "~[kernel_memory]")
  endif()
  profagent_catch_tests(collector_tests PREFIX collector. LABELS unit SPEC ${collector_spec})
endif()

# The CUPTI backend against devsim's libcupti.so.13 (label devsim): an nvcc-built program that
# links the collector and simblas (driver-level launches) and runs on the simulated device.
if(PROFAGENT_CUDA_TESTS AND TARGET profagent_collector AND EXISTS ${PROJECT_SOURCE_DIR}/tests/devsim/cupti/CMakeLists.txt
   AND EXISTS ${PROJECT_SOURCE_DIR}/tests/workloads/simblas/simblas.h)
  add_executable(collector_cupti_devsim_test ${CMAKE_CURRENT_LIST_DIR}/collector/cupti_devsim_test.cu)
  target_link_libraries(collector_cupti_devsim_test PRIVATE profagent_collector simblas)
  set_target_properties(collector_cupti_devsim_test PROPERTIES
    CUDA_ARCHITECTURES ${PROFAGENT_CUDA_ARCH} CUDA_STANDARD 17)
  # The simulated libraries must be built before the test runs.
  add_dependencies(collector_cupti_devsim_test devsim_cudart devsim_cupti)
  if(TARGET devsim_driver)
    add_dependencies(collector_cupti_devsim_test devsim_driver)
  endif()
  add_test(NAME collector_cupti_devsim
    COMMAND ${CMAKE_COMMAND} -E env LD_LIBRARY_PATH=${PROFAGENT_DEVSIM_DIR}
            $<TARGET_FILE:collector_cupti_devsim_test>)
  add_test(NAME collector_cupti_devsim_refused
    COMMAND ${CMAKE_COMMAND} -E env LD_LIBRARY_PATH=${PROFAGENT_DEVSIM_DIR} DEVSIM_CUPTI=unavailable
            $<TARGET_FILE:collector_cupti_devsim_test> refused)
  set_tests_properties(collector_cupti_devsim collector_cupti_devsim_refused PROPERTIES
    LABELS devsim TIMEOUT 120)
endif()
include(${CMAKE_CURRENT_LIST_DIR}/pyframes_tests.cmake)
include(${CMAKE_CURRENT_LIST_DIR}/stacks_tests.cmake)
