# Unit tests of call stacks (collector/stack_table, stacks, stack_symbols; exporters' folded
# files, stack-grouped table and trace stackFrames). Built with -g and one frame per function:
# a test captures its own stack and checks names and lines.
if(TARGET profagent_collector AND TARGET profagent_exporters)
  add_executable(stacks_tests ${CMAKE_CURRENT_LIST_DIR}/stacks/stacks_test.cpp
    ${CMAKE_CURRENT_LIST_DIR}/stacks/dwarf_path_test.cpp)
  target_link_libraries(stacks_tests PRIVATE profagent_collector profagent_exporters Catch2::Catch2
                        Threads::Threads ${CMAKE_DL_LIBS})
  target_compile_options(stacks_tests PRIVATE -g -fno-optimize-sibling-calls)
  target_compile_definitions(stacks_tests PRIVATE
    PROFAGENT_DWARF_LIBRARY="$<TARGET_FILE:profagent_dwarf>")
  add_dependencies(stacks_tests profagent_dwarf)
  profagent_catch_tests(stacks_tests PREFIX stacks_unit. LABELS unit)
endif()
