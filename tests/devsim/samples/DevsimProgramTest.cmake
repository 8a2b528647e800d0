# devsim_program_test(<name> PROGRAM <target> [ARGS ...] [ENV K=V ...] EXPECT <regex> ...
#                     [ALSO_UNDER_AGENT] [RUNS <n>])
# Adds a CTest (label devsim) that runs <target> with the simulated device's libraries first on
# LD_LIBRARY_PATH and passes only if it exits with 0 and its stdout matches every regex.
# ALSO_UNDER_AGENT adds the same test with libprofagent.so preloaded (label preload, name
# preload.<name>), when the agent is built: the agent must not change what the program does.
# RUNS repeats the program n times in the devsim test (not under the agent); each run must pass.
# Square brackets in a regex must balance (match a literal '[' with '.'): CMake does not split a
# list at a ';' inside unbalanced brackets.
set(DEVSIM_RUN_AND_MATCH ${CMAKE_CURRENT_LIST_DIR}/run_and_match.cmake)

function(devsim_program_test name)
  cmake_parse_arguments(PARSE_ARGV 1 T "ALSO_UNDER_AGENT" "PROGRAM;RUNS" "ARGS;ENV;EXPECT")
  # ARGS and ENV go through -D as lists, their separators escaped; each regex gets its own
  # variable, so no regex character can interfere with list splitting in the script.
  string(REPLACE ";" "\\;" args "${T_ARGS}")
  string(REPLACE ";" "\\;" env "${T_ENV}")
  set(expect_defs "")
  list(LENGTH T_EXPECT expect_count)
  set(index 0)
  foreach(pattern IN LISTS T_EXPECT)
    list(APPEND expect_defs "-DEXPECT_${index}=${pattern}")
    math(EXPR index "${index} + 1")
  endforeach()
  set(command ${CMAKE_COMMAND} -DPROGRAM=$<TARGET_FILE:${T_PROGRAM}> "-DARGS=${args}"
              -DLIBRARY_PATH=${PROFAGENT_DEVSIM_DIR} "-DENV=${env}"
              -DEXPECT_COUNT=${expect_count} ${expect_defs})
  set(runs "")
  if(T_RUNS)
    set(runs -DRUNS=${T_RUNS})
  endif()
  add_test(NAME ${name} COMMAND ${command} ${runs} -P ${DEVSIM_RUN_AND_MATCH})
  set_tests_properties(${name} PROPERTIES LABELS devsim TIMEOUT 120)
  if(T_ALSO_UNDER_AGENT AND TARGET profagent)
    add_test(NAME preload.${name}
             COMMAND ${command} -DPRELOAD=$<TARGET_FILE:profagent>
                     -DOUTPUT_DIR=${CMAKE_CURRENT_BINARY_DIR}/profagent_out/${name}
                     -P ${DEVSIM_RUN_AND_MATCH})
    set_tests_properties(preload.${name} PROPERTIES LABELS preload TIMEOUT 120)
  endif()
endfunction()
