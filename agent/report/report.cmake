# Included by agent/CMakeLists.txt: reading saved traces back (agent/report) for `profagent report`.
find_package(ZLIB REQUIRED)
find_package(simdjson REQUIRED)
add_library(profagent_report STATIC
  ${CMAKE_CURRENT_LIST_DIR}/event_reader.cpp
  ${CMAKE_CURRENT_LIST_DIR}/json_string.cpp
  ${CMAKE_CURRENT_LIST_DIR}/perfetto_reader.cpp
  ${CMAKE_CURRENT_LIST_DIR}/trace_builder.cpp
  ${CMAKE_CURRENT_LIST_DIR}/trace_file.cpp
  ${CMAKE_CURRENT_LIST_DIR}/trace_loader.cpp
  ${CMAKE_CURRENT_LIST_DIR}/trace_metadata.cpp
  ${CMAKE_CURRENT_LIST_DIR}/trace_stacks.cpp
  ${CMAKE_CURRENT_LIST_DIR}/trace_stream.cpp)
target_include_directories(profagent_report PUBLIC ${PROJECT_SOURCE_DIR})
target_link_libraries(profagent_report PUBLIC profagent_exporters PRIVATE simdjson::simdjson ZLIB::ZLIB)
# The `report` command of the launcher (agent/launcher/main.cpp dispatches to it).
add_library(profagent_report_command STATIC
  ${CMAKE_CURRENT_LIST_DIR}/report_command.cpp
  ${CMAKE_CURRENT_LIST_DIR}/report_options.cpp
  ${CMAKE_CURRENT_LIST_DIR}/report_help.cpp)
target_link_libraries(profagent_report_command PUBLIC profagent_report)
