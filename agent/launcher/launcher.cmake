# Included by agent/CMakeLists.txt once libprofagent.so is a target.
add_library(profagent_launcher_options STATIC ${CMAKE_CURRENT_LIST_DIR}/options.cpp)
target_include_directories(profagent_launcher_options PUBLIC ${PROJECT_SOURCE_DIR})
target_link_libraries(profagent_launcher_options PUBLIC profagent_exporters)  # trace_format.h: --format
add_executable(profagent_launcher ${CMAKE_CURRENT_LIST_DIR}/main.cpp ${CMAKE_CURRENT_LIST_DIR}/supervise.cpp
  ${CMAKE_CURRENT_LIST_DIR}/unsplit_path.cpp ${CMAKE_CURRENT_LIST_DIR}/trigger.cpp
  ${CMAKE_CURRENT_LIST_DIR}/../user_runtime_dir.cpp ${CMAKE_CURRENT_LIST_DIR}/../trigger_protocol.cpp)
target_link_libraries(profagent_launcher PRIVATE profagent_launcher_options profagent_report_command)
# Its libraries (simdjson, zlib: `profagent report`) are carried in lib/profagent by an install
# or a bundle (cmake/carried_libraries.cmake); the build tree uses the system's.
set_target_properties(profagent_launcher PROPERTIES OUTPUT_NAME profagent
  INSTALL_RPATH "$ORIGIN/../lib/${PROFAGENT_CARRIED_LIBDIR}" BUILD_WITH_INSTALL_RPATH ON)
add_dependencies(profagent_launcher profagent)
# The Python hook (phase ranges, --step-on python), next to the library: the start-up file the
# agent puts on PYTHONPATH (agent/python_startup.h), the hook, and its call wrapper, a stable-ABI (abi3) extension
# built once for every CPython >= 3.8 (needs Python's headers: Debian python3-dev).
foreach(file sitecustomize.py profagent_hook.py)
  configure_file(${CMAKE_CURRENT_LIST_DIR}/../python/${file} ${CMAKE_BINARY_DIR}/lib/profagent_python/${file} COPYONLY)
endforeach()
# Their bytecode, compiled here for /usr/bin/python3: an interpreter that may not write it
# (PYTHONDONTWRITEBYTECODE, a read-only install) would otherwise compile both files at each
# start, ~3 ms of CPU for every python process, CUDA or not. checked-hash: Python uses it only
# while it matches the source beside it; other Pythons compile the source as before.
set(profagent_python_bytecode ${CMAKE_BINARY_DIR}/lib/profagent_python/__pycache__)
if(NOT CMAKE_CROSSCOMPILING AND EXISTS /usr/bin/python3)
  add_custom_command(OUTPUT ${profagent_python_bytecode}/compiled.stamp
    COMMAND /usr/bin/python3 -m compileall -q -f --invalidation-mode checked-hash
            ${CMAKE_BINARY_DIR}/lib/profagent_python/sitecustomize.py
            ${CMAKE_BINARY_DIR}/lib/profagent_python/profagent_hook.py
    COMMAND ${CMAKE_COMMAND} -E touch ${profagent_python_bytecode}/compiled.stamp
    DEPENDS ${CMAKE_CURRENT_LIST_DIR}/../python/sitecustomize.py ${CMAKE_CURRENT_LIST_DIR}/../python/profagent_hook.py
    COMMENT "Compiling the Python hook's bytecode"
    VERBATIM)
  add_custom_target(profagent_python_bytecode DEPENDS ${profagent_python_bytecode}/compiled.stamp)
  add_dependencies(profagent profagent_python_bytecode)
endif()
# The cross-rank tools (`profagent report --ranks/--dask`, `profagent merge`): Python, so that
# the local path and the Dask workers run one program.
foreach(file profagent_ranks.py profagent_merge.py)
  configure_file(${CMAKE_CURRENT_LIST_DIR}/../ranks/${file} ${CMAKE_BINARY_DIR}/lib/profagent_ranks/${file} COPYONLY)
endforeach()
# The headers of the system's Python (any CPython >= 3.8 gives the same stable ABI); asked of
# /usr/bin/python3, as the tests run it, not of the first python3 on PATH.
if(NOT PROFAGENT_PYTHON_INCLUDE)
  execute_process(COMMAND /usr/bin/python3 -c "import sysconfig; print(sysconfig.get_path('include'))"
    OUTPUT_VARIABLE profagent_python_include OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(profagent_python_include AND EXISTS "${profagent_python_include}/Python.h")
    set(PROFAGENT_PYTHON_INCLUDE "${profagent_python_include}" CACHE PATH "Python.h of the Python hook's extension")
  endif()
endif()
# A cross build compiles for another architecture: Debian's Python.h then needs that
# architecture's pyconfig.h (libpython3-dev:<arch>), so the header is tried with the target's
# compiler before the extension is built.
if(PROFAGENT_PYTHON_INCLUDE)
  include(CheckIncludeFile)
  set(CMAKE_REQUIRED_INCLUDES ${PROFAGENT_PYTHON_INCLUDE})
  check_include_file(Python.h PROFAGENT_PYTHON_H_COMPILES)
  unset(CMAKE_REQUIRED_INCLUDES)
endif()
if(PROFAGENT_PYTHON_INCLUDE AND PROFAGENT_PYTHON_H_COMPILES)
  add_library(profagent_python_ranges MODULE ${CMAKE_CURRENT_LIST_DIR}/../python/profagent_ranges.c)
  target_include_directories(profagent_python_ranges SYSTEM PRIVATE ${PROFAGENT_PYTHON_INCLUDE})
  target_link_libraries(profagent_python_ranges PRIVATE ${CMAKE_DL_LIBS})
  set_target_properties(profagent_python_ranges PROPERTIES PREFIX "" OUTPUT_NAME _profagent_ranges
    SUFFIX ".abi3.so" C_VISIBILITY_PRESET hidden
    LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/lib/profagent_python)
  add_dependencies(profagent_launcher profagent_python_ranges)
  add_dependencies(profagent profagent_python_ranges)  # plain LD_PRELOAD gives Python the hook too
else()
  message(STATUS "profagent: no Python.h that compiles for this target (Debian python3-dev, or libpython3-dev:<arch> for a cross build): the Python hook says it is off")
endif()
