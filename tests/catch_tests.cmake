# profagent_catch_tests(): every Catch2 case of a test program as its own CTest entry, so one
# case can be run, and seen failing, by name (`ctest -R 'collector\.session: a window'`).
#
#   profagent_catch_tests(<target> PREFIX <name.> [LABELS l...] [SPEC <catch test spec>]
#                         [ENVIRONMENT VAR=value...] [TIMEOUT s] [RUN_SERIAL])
#
# The entries are named <PREFIX><case name> and found after each build by running the program
# with --list-test-names-only (catch_discover_tests of Catch2's own CMake module, which also
# runs it under CMAKE_CROSSCOMPILING_EMULATOR). SPEC picks the cases (tags, exclusions) as on
# the program's command line; one program may be registered several times, with other specs
# (and environments). RUN_SERIAL: cases that compare modelled times with the wall clock run
# alone, not beside the suite's other entries.
#
# Labels, environment and timeout are set by a CTest script of our own rather than through
# catch_discover_tests' PROPERTIES: Catch2 v2's module (Debian's catch2 2.13) passes those on
# as one flat list, so a list value (two labels, two variables) would be split into property
# names. For the same reason no case name may contain a ';' (the module splits on it), and
# none may start with '-' (the program would read it as an option).
include(Catch)

function(profagent_catch_tests target)
  cmake_parse_arguments(arg "RUN_SERIAL" "PREFIX;SPEC;TIMEOUT" "LABELS;ENVIRONMENT" ${ARGN})
  string(MAKE_C_IDENTIFIER "${arg_PREFIX}${arg_SPEC}" list_name)
  set(list_name "profagent_catch_${list_name}")
  catch_discover_tests(${target} TEST_PREFIX "${arg_PREFIX}" TEST_SPEC ${arg_SPEC} TEST_LIST ${list_name})
  set(properties "")
  if(arg_LABELS)
    string(APPEND properties " LABELS [==[${arg_LABELS}]==]")
  endif()
  if(arg_ENVIRONMENT)
    string(APPEND properties " ENVIRONMENT [==[${arg_ENVIRONMENT}]==]")
  endif()
  if(arg_TIMEOUT)
    string(APPEND properties " TIMEOUT ${arg_TIMEOUT}")
  endif()
  if(arg_RUN_SERIAL)
    string(APPEND properties " RUN_SERIAL ON")
  endif()
  if(properties STREQUAL "")
    return()
  endif()
  # Included by CTest after catch_discover_tests' own script, which defines ${list_name}.
  set(script "${CMAKE_CURRENT_BINARY_DIR}/${list_name}_properties.cmake")
  file(WRITE "${script}"
    "foreach(name IN LISTS ${list_name})\n"
    "  set_tests_properties(\"\${name}\" PROPERTIES${properties})\n"
    "endforeach()\n")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES "${script}")
endfunction()
