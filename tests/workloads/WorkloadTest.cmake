# profagent_workload_test(<name> PROGRAM <target> [ARGS ...] [ENV K=V ...] EXPECT <regex> ...
#                         [RUNS <n>])
# A program of the kind users write, held to two tests:
#   devsim.workload.<name>   runs it <n> times (default 25) on the simulated device; every run
#                            must exit 0 and print every EXPECT line, so a model race that shows
#                            once in a while fails it;
#   preload.workload.<name>  runs it once under libprofagent.so and once without: same exit
#                            status, same output (numbers aside: times differ from run to run),
#                            and a trace whose device records are all linked to their calls,
#                            whose table adds up and which carries Kineto's fields
#                            (checkers.check_workload_unchanged).
set(WORKLOAD_PRELOAD_RUNNER ${CMAKE_CURRENT_LIST_DIR}/../preload/run_preload.py)

function(profagent_workload_test name)
  cmake_parse_arguments(PARSE_ARGV 1 T "" "PROGRAM;RUNS" "ARGS;ENV;EXPECT")
  if(NOT T_RUNS)
    set(T_RUNS 25)
  endif()
  devsim_program_test(devsim.workload.${name} PROGRAM ${T_PROGRAM} ARGS ${T_ARGS} ENV ${T_ENV}
                      EXPECT ${T_EXPECT} RUNS ${T_RUNS})
  # Each run of the model is short; 25 of them under a loaded 2-core machine need more time.
  set_tests_properties(devsim.workload.${name} PROPERTIES TIMEOUT 600)
  if(NOT TARGET profagent)
    return()
  endif()
  set(out ${CMAKE_CURRENT_BINARY_DIR}/profagent_out/${name})
  add_test(NAME preload.workload.${name}
    COMMAND /usr/bin/python3 ${WORKLOAD_PRELOAD_RUNNER} --out ${out} --checker workload_unchanged --
            ${CMAKE_COMMAND} -E env LD_PRELOAD=$<TARGET_FILE:profagent>
            LD_LIBRARY_PATH=${PROFAGENT_DEVSIM_DIR} PROFAGENT_OUTPUT_DIR=${out} ${T_ENV}
            $<TARGET_FILE:${T_PROGRAM}> ${T_ARGS})
  set_tests_properties(preload.workload.${name} PROPERTIES LABELS preload TIMEOUT 180)
endfunction()
