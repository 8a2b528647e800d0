# devsim_program_test(<name> PROGRAM <target> [ARGS ...] [ENV K=V ...] EXPECT <regex> ...)
# Adds a CTest (label devsim) that runs <target> with the simulated device's libraries first on
# LD_LIBRARY_PATH and passes only if it exits with 0 and its stdout matches every regex.
set(DEVSIM_RUN_AND_MATCH ${CMAKE_CURRENT_LIST_DIR}/run_and_match.cmake)

function(devsim_program_test name)
  cmake_parse_arguments(PARSE_ARGV 1 T "" "PROGRAM" "ARGS;ENV;EXPECT")
  # Lists are passed through -D, so their separators must survive the command line.
  string(REPLACE ";" "\\;" args "${T_ARGS}")
  string(REPLACE ";" "\\;" env "${T_ENV}")
  string(REPLACE ";" "\\;" expect "${T_EXPECT}")
  add_test(NAME ${name}
           COMMAND ${CMAKE_COMMAND} -DPROGRAM=$<TARGET_FILE:${T_PROGRAM}> "-DARGS=${args}"
                   -DLIBRARY_PATH=${PROFAGENT_DEVSIM_DIR} "-DENV=${env}" "-DEXPECT=${expect}"
                   -P ${DEVSIM_RUN_AND_MATCH})
  set_tests_properties(${name} PROPERTIES LABELS devsim TIMEOUT 120)
endfunction()
