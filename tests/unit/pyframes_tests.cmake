# Python frame capture (collector/python_frames.h): unit pieces in C++, the capture itself from
# a real CPython 3.11 through a test library loaded with ctypes, the structure offsets against
# CPython's headers. Included by collector_tests.cmake.
add_executable(python_frames_tests ${CMAKE_CURRENT_LIST_DIR}/pyframes/python_frames_test.cpp)
target_link_libraries(python_frames_tests PRIVATE profagent_collector Catch2::Catch2)
profagent_catch_tests(python_frames_tests PREFIX python_frames. LABELS unit TIMEOUT 300)

# Looks like a Python this cannot read (exports Py_Version and the thread-state function).
add_executable(python_frames_fake_python ${CMAKE_CURRENT_LIST_DIR}/pyframes/python_frames_fake_python.cpp)
target_link_libraries(python_frames_fake_python PRIVATE profagent_collector)
set_target_properties(python_frames_fake_python PROPERTIES ENABLE_EXPORTS ON)
add_test(NAME python_frames_unsupported_3_12 COMMAND python_frames_fake_python 3.12)
add_test(NAME python_frames_unsupported_incomplete COMMAND python_frames_fake_python 3.11-incomplete)

# The library the Python script loads; also the bench's (tests/bench/python_frames_bench.cmake).
add_library(python_frames_probe MODULE ${CMAKE_CURRENT_LIST_DIR}/pyframes/python_frames_probe.cpp)
target_link_libraries(python_frames_probe PRIVATE profagent_collector)
set_tests_properties(python_frames_unsupported_3_12 python_frames_unsupported_incomplete
  PROPERTIES LABELS unit TIMEOUT 300)
# The capture from a real CPython: this machine's python3 loads the probe, so not in a cross
# build (an x86-64 interpreter cannot load an aarch64 library).
if(NOT CMAKE_CROSSCOMPILING)
  add_test(NAME python_frames_py
    COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/pyframes/python_frames_test.py $<TARGET_FILE:python_frames_probe>)
  set_tests_properties(python_frames_py PROPERTIES LABELS unit TIMEOUT 300)
endif()

# The same script as users run Python on the simulated device: the agent preloaded, stacks on,
# a CUDA runtime call beside every capture.
if(TARGET profagent AND TARGET devsim_cudart)
  add_test(NAME python_frames_py_devsim
    COMMAND ${CMAKE_COMMAND} -E env LD_LIBRARY_PATH=${PROFAGENT_DEVSIM_DIR} LD_PRELOAD=$<TARGET_FILE:profagent>
            PROFAGENT_WITH_STACK=1 PROFAGENT_OUTPUT_DIR=${CMAKE_CURRENT_BINARY_DIR}/python_frames_devsim_out
            /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/pyframes/python_frames_test.py
            $<TARGET_FILE:python_frames_probe> ${PROFAGENT_DEVSIM_DIR}/libcudart.so.13)
  set_tests_properties(python_frames_py_devsim PROPERTIES LABELS "unit;devsim" TIMEOUT 300)
endif()

# The offsets of collector/python_layout.h against CPython 3.11's own headers (a compile-time
# check; the test runs the result). Needs python3.11-dev's internal headers.
# This machine's headers describe its own architecture: not in a cross build.
find_path(PROFAGENT_PYTHON311_INCLUDE internal/pycore_frame.h PATHS /usr/include/python3.11 NO_DEFAULT_PATH)
if(PROFAGENT_PYTHON311_INCLUDE AND NOT CMAKE_CROSSCOMPILING)
  add_executable(python_layout_check ${CMAKE_CURRENT_LIST_DIR}/pyframes/python_layout_check.c)
  target_include_directories(python_layout_check PRIVATE ${PROFAGENT_PYTHON311_INCLUDE} ${PROJECT_SOURCE_DIR})
  add_test(NAME python_layout COMMAND python_layout_check)
  set_tests_properties(python_layout PROPERTIES LABELS unit)
else()
  message(STATUS "profagent: CPython 3.11 headers not found; the python_layout test is not built")
endif()
