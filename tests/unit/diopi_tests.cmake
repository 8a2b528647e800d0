# Unit tests of the DIOPI wrapper generator and the generated wrappers (label unit).
if(TARGET profagent_diopi_wrappers AND TARGET profagent_collector)
  add_executable(diopi_wrappers_tests ${CMAKE_CURRENT_LIST_DIR}/diopi_wrappers_test.cpp)
  target_link_libraries(diopi_wrappers_tests PRIVATE profagent_diopi_wrappers profagent_collector
                        Catch2::Catch2)
  target_include_directories(diopi_wrappers_tests PRIVATE ${PROJECT_SOURCE_DIR}/tests/vendorsim/include)
  profagent_catch_tests(diopi_wrappers_tests PREFIX diopi_wrappers. LABELS unit)
endif()
add_test(NAME diopi_generator
  COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/diopi_generator_test.py
          ${PROJECT_SOURCE_DIR}/scripts/gen_diopi_wrappers.py)
set_tests_properties(diopi_generator PROPERTIES LABELS unit)
