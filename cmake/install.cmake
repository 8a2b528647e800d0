# What `cmake --install` lays out, under any prefix; scripts/package.sh packs the same tree as
# the relocatable bundle, and CPack (`cpack -G DEB`) as a Debian package:
#
#   bin/profagent                         the launcher (finds ../lib/libprofagent.so)
#   lib/libprofagent.so                   the agent (LD_PRELOAD, CUDA_INJECTION64_PATH)
#   lib/libprofagent_{re2,dwarf,unwind}.so  helpers the agent loads by full path when needed
#   lib/profagent/                        the third-party libraries the helpers and the launcher
#                                         need, carried (cmake/carried_libraries.cmake)
#   lib/profagent_python/                 the launcher's Python hook: sitecustomize.py,
#                                         profagent_hook.py (and their bytecode), _profagent_ranges.abi3.so
#   include/profagent/profagent.h         the weak C API (CMake target profagent::api)
#   lib/cmake/profagent/, lib/pkgconfig/profagent.pc
#   share/doc/profagent/                  README, LICENSE, docs
#
# Only glibc, libstdc++ and libgcc_s are left to the system. `lib`, not GNUInstallDirs' libdir:
# the launcher finds the agent at bin/../lib on every prefix.
include(CMakePackageConfigHelpers)

set(profagent_lib_dir lib)
set(profagent_cmake_dir ${profagent_lib_dir}/cmake/profagent)

install(TARGETS profagent profagent_re2 profagent_dwarf profagent_unwind
        LIBRARY DESTINATION ${profagent_lib_dir})
install(TARGETS profagent_launcher RUNTIME DESTINATION bin)
install(FILES ${PROJECT_SOURCE_DIR}/agent/python/sitecustomize.py ${PROJECT_SOURCE_DIR}/agent/python/profagent_hook.py
        DESTINATION ${profagent_lib_dir}/profagent_python)
install(FILES ${PROJECT_SOURCE_DIR}/agent/ranks/profagent_ranks.py ${PROJECT_SOURCE_DIR}/agent/ranks/profagent_merge.py
        DESTINATION ${profagent_lib_dir}/profagent_ranks)
if(TARGET profagent_python_bytecode)
  install(DIRECTORY ${CMAKE_BINARY_DIR}/lib/profagent_python/__pycache__/ DESTINATION ${profagent_lib_dir}/profagent_python/__pycache__
          FILES_MATCHING PATTERN "*.pyc")
endif()
if(TARGET profagent_python_ranges)
  install(TARGETS profagent_python_ranges LIBRARY DESTINATION ${profagent_lib_dir}/profagent_python)
endif()
install(FILES ${PROFAGENT_PUBLIC_HEADER} DESTINATION include/profagent)
install(FILES ${PROJECT_SOURCE_DIR}/README.md ${PROJECT_SOURCE_DIR}/LICENSE DESTINATION share/doc/profagent)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION share/doc/profagent/docs FILES_MATCHING PATTERN "*.md")

# The third-party libraries, copied at install time from where this build found them.
install(CODE "
  set(PROFAGENT_CARRIED_FROM \"$<TARGET_FILE:profagent_re2>;$<TARGET_FILE:profagent_dwarf>;$<TARGET_FILE:profagent_unwind>;$<TARGET_FILE:profagent_launcher>\")
  set(PROFAGENT_CARRIED_TO \"${profagent_lib_dir}/${PROFAGENT_CARRIED_LIBDIR}\")
  include(\"${CMAKE_CURRENT_LIST_DIR}/carried_libraries.cmake\")")

# find_package(profagent): the INTERFACE target profagent::api (the header; nothing to link)
# and the paths of the agent and the launcher, relative to wherever the tree was unpacked.
install(TARGETS profagent_api EXPORT profagentTargets)
install(EXPORT profagentTargets NAMESPACE profagent:: DESTINATION ${profagent_cmake_dir})
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/profagentConfig.cmake.in
  ${CMAKE_BINARY_DIR}/cmake/profagentConfig.cmake
  INSTALL_DESTINATION ${profagent_cmake_dir}
  PATH_VARS profagent_lib_dir)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/cmake/profagentConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/cmake/profagentConfig.cmake ${CMAKE_BINARY_DIR}/cmake/profagentConfigVersion.cmake
        DESTINATION ${profagent_cmake_dir})
configure_file(${CMAKE_CURRENT_LIST_DIR}/profagent.pc.in ${CMAKE_BINARY_DIR}/pkgconfig/profagent.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/pkgconfig/profagent.pc DESTINATION ${profagent_lib_dir}/pkgconfig)

include(${CMAKE_CURRENT_LIST_DIR}/cpack.cmake)
