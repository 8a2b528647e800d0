# Included by agent/CMakeLists.txt once libprofagent.so is a target.
add_library(profagent_launcher_options STATIC ${CMAKE_CURRENT_LIST_DIR}/options.cpp)
target_include_directories(profagent_launcher_options PUBLIC ${PROJECT_SOURCE_DIR})
add_executable(profagent_launcher ${CMAKE_CURRENT_LIST_DIR}/main.cpp ${CMAKE_CURRENT_LIST_DIR}/supervise.cpp)
target_link_libraries(profagent_launcher PRIVATE profagent_launcher_options profagent_report_command)
# Its libraries (simdjson, zlib: `profagent report`) are carried in lib/profagent by an install
# or a bundle (cmake/carried_libraries.cmake); the build tree uses the system's.
set_target_properties(profagent_launcher PROPERTIES OUTPUT_NAME profagent
  INSTALL_RPATH "$ORIGIN/../lib/${PROFAGENT_CARRIED_LIBDIR}" BUILD_WITH_INSTALL_RPATH ON)
add_dependencies(profagent_launcher profagent)
# The Python start-up hook (--step-on python), next to the library.
configure_file(${CMAKE_CURRENT_LIST_DIR}/../python/sitecustomize.py
               ${CMAKE_BINARY_DIR}/lib/profagent_python/sitecustomize.py COPYONLY)
