# Programs of the DIOPI loader-race case (tests/reliability/cases_diopi_race.py): an operator
# library, two importers of it, a library whose constructor loads one, and the program that
# loads them from several threads at once. The libraries land in <bin>/diopi_race/.
set(diopi_race_src ${CMAKE_CURRENT_SOURCE_DIR}/programs/diopi_race)
set(diopi_race_dir ${CMAKE_RUNTIME_OUTPUT_DIRECTORY}/diopi_race)
add_library(diopi_race_vendor SHARED ${diopi_race_src}/race_vendor.cpp)
foreach(copy a b)
  add_library(diopi_race_importer_${copy} SHARED ${diopi_race_src}/race_importer.cpp)
  target_link_libraries(diopi_race_importer_${copy} PRIVATE diopi_race_vendor)
  set_target_properties(diopi_race_importer_${copy} PROPERTIES BUILD_RPATH "$ORIGIN")
endforeach()
add_library(diopi_race_outer SHARED ${diopi_race_src}/race_outer.cpp)
target_link_libraries(diopi_race_outer PRIVATE ${CMAKE_DL_LIBS})
set_target_properties(diopi_race_vendor diopi_race_importer_a diopi_race_importer_b diopi_race_outer
  PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${diopi_race_dir} CXX_VISIBILITY_PRESET hidden)
add_executable(diopi_race_app ${diopi_race_src}/race_app.cpp)
target_link_libraries(diopi_race_app PRIVATE Threads::Threads ${CMAKE_DL_LIBS})
add_dependencies(diopi_race_app diopi_race_vendor diopi_race_importer_a diopi_race_importer_b diopi_race_outer)
