# Step window tests (label preload): for every step marker, exactly which steps'
# events landed in which window's files, none from idle or warmup steps. Included by
# tests/preload/CMakeLists.txt. Programs: programs/step_program.cu (step k launches step_kernel
# with k+1 blocks and opens a range "work_<k>"), programs/train_steps.py (torch CPU loop).
# (An if block, not return(): this file is included, and return() would end the includer.)
if(TARGET profagent_launcher)
add_executable(step_program programs/step_program.cu)
set_target_properties(step_program PROPERTIES CUDA_ARCHITECTURES ${PROFAGENT_CUDA_ARCH})

set(WINDOWS_CHECKER /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/windows_checks.py)
set(WINDOWS_PROGRAM $<TARGET_FILE:step_program>)
set(WINDOWS_LAUNCHER $<TARGET_FILE:profagent_launcher>)

# windows_add_test(<name> EXPECT <json> [FLAGS ...] [ENV K=V ...] COMMAND ...): COMMAND runs
# with the simulated device and PROFAGENT_OUTPUT_DIR=<out>; `@OUT@` in it becomes <out>.
function(windows_add_test name)
  cmake_parse_arguments(PARSE_ARGV 1 T "" "EXPECT" "FLAGS;ENV;COMMAND")
  set(out ${CMAKE_CURRENT_BINARY_DIR}/out/${name})
  list(TRANSFORM T_COMMAND REPLACE "@OUT@" ${out})
  add_test(NAME preload.${name}
    COMMAND ${WINDOWS_CHECKER} --out ${out} --expect ${T_EXPECT} ${T_FLAGS} --
            ${CMAKE_COMMAND} -E env LD_LIBRARY_PATH=${PROFAGENT_DEVSIM_DIR}
            PROFAGENT_OUTPUT_DIR=${out} ${T_ENV} ${T_COMMAND})
  set_tests_properties(preload.${name} PROPERTIES LABELS "preload;windows" TIMEOUT 300)
endfunction()

set(agent_env LD_PRELOAD=$<TARGET_FILE:profagent>)

# All five schedule parameters at once, through the launcher; api:NAME marks the steps.
windows_add_test(windows_launcher_api FLAGS --kernels --launcher
  EXPECT 1:3-4:3,4/2:7-8:7,8
  COMMAND ${WINDOWS_LAUNCHER} run --skip-first 1 --wait 1 --warmup 1 --active 2 --repeat 2
          --step-on api:cudaDeviceSynchronize --output-dir @OUT@ -- ${WINDOWS_PROGRAM} api 12)
# profagent_step(); consecutive windows (wait=0, warmup=0, repeat=0); the process ends inside
# the third window, which is written with the steps seen (8, 9 and the teardown, step 10).
windows_add_test(windows_call_repeat_forever FLAGS --kernels
  EXPECT 1:0-3:0,1,2,3/2:4-7:4,5,6,7/3:8-10:8,9
  ENV ${agent_env} PROFAGENT_SCHEDULE=wait=0,warmup=0,active=4
  COMMAND ${WINDOWS_PROGRAM} call 10)
# kernel:REGEX on the demangled name of a launched kernel.
windows_add_test(windows_kernel_marker FLAGS --kernels
  EXPECT 1:2-4:2,3,4
  ENV ${agent_env} PROFAGENT_STEP_ON=kernel:^end_kernel PROFAGENT_SKIP_FIRST=2 PROFAGENT_ACTIVE=3 PROFAGENT_REPEAT=1
  COMMAND ${WINDOWS_PROGRAM} kernel 8)
# range:REGEX on profagent_range_push names; warmup step 2 leaves nothing.
windows_add_test(windows_range_marker FLAGS --kernels
  EXPECT 1:3-4:3,4
  ENV ${agent_env} PROFAGENT_STEP_ON=range:^iteration_end$ PROFAGENT_SCHEDULE=wait=2,warmup=1,active=2,repeat=1
  COMMAND ${WINDOWS_PROGRAM} range 8)
# profiler-api: cudaProfilerStart/Stop around steps 2-3 and 6 are the two windows.
windows_add_test(windows_profiler_api FLAGS --kernels
  EXPECT 1:0-0:2,3/2:1-1:6
  ENV ${agent_env} PROFAGENT_STEP_ON=profiler-api
  COMMAND ${WINDOWS_PROGRAM} profiler 9)
# With another marker too, each Start..Stop window is still one step from Start to Stop: the
# synchronisations inside it neither split it nor move its start.
windows_add_test(windows_profiler_api_with_markers FLAGS --kernels
  EXPECT 1:0-0:2,3/2:1-1:6
  ENV ${agent_env} PROFAGENT_STEP_ON=profiler-api,api:cudaStreamSynchronize
  COMMAND ${WINDOWS_PROGRAM} profiler 9)
# No schedule: the whole run is one window, with a ProfilerStep#N per step counted.
windows_add_test(windows_whole_run_steps FLAGS --kernels
  EXPECT 1:-:0,1,2,3,4:0,1,2,3,4
  ENV ${agent_env}
  COMMAND ${WINDOWS_PROGRAM} call 5)
# Ending inside warmup writes nothing (warmup data is never written).
windows_add_test(windows_exit_in_warmup EXPECT none
  ENV ${agent_env} PROFAGENT_SCHEDULE=warmup=5,active=1
  COMMAND ${WINDOWS_PROGRAM} call 3)
# time:MS: a timer thread marks steps; windows are consistent and disjoint.
windows_add_test(windows_time_marker EXPECT none FLAGS --loose
  ENV ${agent_env} PROFAGENT_STEP_ON=time:100 PROFAGENT_SCHEDULE=wait=1,active=1
  COMMAND ${WINDOWS_PROGRAM} time 20)
# --step-on python: Debian's torch (CPU), Optimizer.step() marks the steps; the script is not
# edited. Steps 0-1 skipped, 2 idle, 3 warmup, 4-5 recorded.
if(EXISTS /usr/lib/python3/dist-packages/torch/__init__.py)
  windows_add_test(windows_python_torch
    EXPECT 1:4-5:4,5 FLAGS --launcher
    COMMAND ${WINDOWS_LAUNCHER} run --skip-first 2 --wait 1 --warmup 1 --active 2 --repeat 1
            --step-on python --output-dir @OUT@ -- /usr/bin/python3
            ${CMAKE_CURRENT_SOURCE_DIR}/programs/train_steps.py 10)
endif()

# api:NAME naming a DIOPI operator (the vendorsim training loop through ctypes): each loss
# forward ends a step; steps 2-3 are recorded, so the window holds exactly two of them and
# the work of the steps in between (one AdamW update per parameter and step).
if(EXISTS ${PROJECT_SOURCE_DIR}/tests/vendorsim/CMakeLists.txt)
  windows_add_test(windows_diopi_operator_marker EXPECT 1:2-3:
    FLAGS --count diopiCrossEntropyLoss=2 --count diopiCrossEntropyLossBackward=2
    ENV ${agent_env} PROFAGENT_STEP_ON=api:diopiCrossEntropyLoss PROFAGENT_SCHEDULE=skip_first=2,active=2,repeat=1
    COMMAND /usr/bin/python3 ${PROJECT_SOURCE_DIR}/tests/vendorsim/train.py --steps 6
            --framework $<TARGET_FILE:frameworksim>)
endif()

# The launcher itself: --help, bad options, exit codes passed through.
add_test(NAME preload.launcher_cli
  COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/launcher_checks.py ${WINDOWS_LAUNCHER})
set_tests_properties(preload.launcher_cli PROPERTIES LABELS "preload;windows" TIMEOUT 120)
endif()
