# Runs one program on the simulated device and checks both its exit status and its output.
# (CTest's PASS_REGULAR_EXPRESSION alone would ignore the exit status and accept any one of
# several expressions; a sample must succeed AND print every expected line.)
#
#   cmake -DPROGRAM=<exe> -DARGS=<a\;b> -DLIBRARY_PATH=<devsim dir> -DENV=<K=V\;K=V>
#         -DEXPECT_COUNT=<n> -DEXPECT_0=<regex> ... -DEXPECT_<n-1>=<regex>
#         [-DPRELOAD=<libprofagent.so> -DOUTPUT_DIR=<dir>] -P run_and_match.cmake
if(NOT PROGRAM)
  message(FATAL_ERROR "run_and_match: PROGRAM is not set")
endif()
# The lists arrive with escaped separators (see DevsimProgramTest.cmake); make them lists again.
foreach(list_var ARGS ENV)
  string(REPLACE "\\;" ";" ${list_var} "${${list_var}}")
endforeach()
set(ENV{LD_LIBRARY_PATH} "${LIBRARY_PATH}")
if(PRELOAD)
  file(REMOVE_RECURSE "${OUTPUT_DIR}")
  set(ENV{LD_PRELOAD} "${PRELOAD}")
  set(ENV{PROFAGENT_OUTPUT_DIR} "${OUTPUT_DIR}")
endif()
foreach(assignment IN LISTS ENV)
  string(FIND "${assignment}" "=" eq)
  string(SUBSTRING "${assignment}" 0 ${eq} key)
  math(EXPR value_start "${eq} + 1")
  string(SUBSTRING "${assignment}" ${value_start} -1 value)
  set(ENV{${key}} "${value}")
endforeach()

execute_process(COMMAND ${PROGRAM} ${ARGS}
                RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}")
if(err)
  message("stderr:\n${err}")
endif()
if(NOT status EQUAL 0)
  message(FATAL_ERROR "run_and_match: ${PROGRAM} exited with status '${status}'")
endif()
if(NOT EXPECT_COUNT)
  set(EXPECT_COUNT 0)
endif()
set(index 0)
while(index LESS EXPECT_COUNT)
  if(NOT out MATCHES "${EXPECT_${index}}")
    message(FATAL_ERROR "run_and_match: output does not match '${EXPECT_${index}}'")
  endif()
  math(EXPR index "${index} + 1")
endwhile()
