# DIOPI preload tests (label preload), included from tests/vendorsim/CMakeLists.txt once the
# vendor and framework libraries exist. Each runs its command under the agent and again
# without it (tests/preload/diopi_checks.py), so "unchanged results" is always checked.
#   diopi_add_preload_test(<name> CHECKER <checker> [ENV K=V ...] [EXPECT_LOG regex] COMMAND ...)
function(diopi_add_preload_test name)
  cmake_parse_arguments(PARSE_ARGV 1 T "" "CHECKER;EXPECT_LOG" "ENV;COMMAND")
  set(out ${CMAKE_BINARY_DIR}/tests/preload/out/${name})
  add_test(NAME preload.${name}
    COMMAND /usr/bin/python3 ${PROJECT_SOURCE_DIR}/tests/preload/diopi_checks.py --out ${out}
            --checker ${T_CHECKER} --expect-log "${T_EXPECT_LOG}" --
            ${CMAKE_COMMAND} -E env LD_PRELOAD=$<TARGET_FILE:profagent>
            LD_LIBRARY_PATH=${PROFAGENT_DEVSIM_DIR} PROFAGENT_OUTPUT_DIR=${out} ${T_ENV} ${T_COMMAND})
  set_tests_properties(preload.${name} PROPERTIES LABELS preload TIMEOUT 180)
endfunction()

set(diopi_train /usr/bin/python3 ${PROJECT_SOURCE_DIR}/tests/vendorsim/train.py --steps 3 --framework)
# The demo: attribution, nesting, shapes and operator rows; same output and operators as without.
diopi_add_preload_test(diopi_train CHECKER diopi_train ENV PROFAGENT_RECORD_SHAPES=1
  COMMAND ${diopi_train} $<TARGET_FILE:frameworksim>)
# Every slot bound at load time (no lazy PLT stubs left to resolve by name).
diopi_add_preload_test(diopi_train_bind_now CHECKER diopi_train ENV PROFAGENT_RECORD_SHAPES=1 LD_BIND_NOW=1
  COMMAND ${diopi_train} $<TARGET_FILE:frameworksim>)
# key_averages(group_by_input_shape=True): operator rows split per input shapes.
diopi_add_preload_test(diopi_group_by_input_shape CHECKER diopi_group_by_shape
  ENV PROFAGENT_RECORD_SHAPES=1 PROFAGENT_GROUP_BY=input_shape
  COMMAND ${diopi_train} $<TARGET_FILE:frameworksim>)
# Streamed in segments (docs/streamed_windows.md): the summaries folded while it streams equal
# `profagent report`'s of its trace, also with steps (a step marked at each cudaMemsetAsync, in
# the middle of train.py's iteration: the records after the last one are in no step).
set(diopi_train_long /usr/bin/python3 ${PROJECT_SOURCE_DIR}/tests/vendorsim/train.py --steps 1200 --framework)
diopi_add_preload_test(diopi_train_streamed CHECKER diopi_train_streamed ENV PROFAGENT_STREAM_AFTER_MB=1
  COMMAND ${diopi_train_long} $<TARGET_FILE:frameworksim>)
diopi_add_preload_test(diopi_train_streamed_steps CHECKER diopi_train_streamed_steps
  ENV PROFAGENT_STREAM_AFTER_MB=1 PROFAGENT_STEP_ON=api:cudaMemsetAsync
  COMMAND ${diopi_train_long} $<TARGET_FILE:frameworksim>)
# ... with memory profiling and call stacks: allocations made in the first segment, live at the
# end, are placed in their step, operator and call site, and counted in their rows.
diopi_add_preload_test(diopi_train_streamed_memory CHECKER diopi_train_streamed_memory
  ENV PROFAGENT_STREAM_AFTER_MB=1 PROFAGENT_STEP_ON=api:cudaMemsetAsync PROFAGENT_PROFILE_MEMORY=1
      PROFAGENT_WITH_STACK=1
  COMMAND ${diopi_train_long} $<TARGET_FILE:frameworksim>)
# A scheduled window of 1,150 steps (20 to 1169), cut at a step boundary while it streams.
diopi_add_preload_test(diopi_train_streamed_schedule CHECKER diopi_train_streamed_steps
  ENV PROFAGENT_STREAM_AFTER_MB=1 PROFAGENT_STEP_ON=api:cudaMemsetAsync PROFAGENT_WAIT=20 PROFAGENT_ACTIVE=1150
      PROFAGENT_REPEAT=1
  COMMAND ${diopi_train_long} $<TARGET_FILE:frameworksim>)
# A framework without the DIOPI runtime functions: no shapes, one note, nothing else changes.
diopi_add_preload_test(diopi_no_runtime_functions CHECKER diopi_unchanged ENV PROFAGENT_RECORD_SHAPES=1
  EXPECT_LOG "no loaded object defines diopiGetTensorShape"
  COMMAND ${diopi_train} $<TARGET_FILE:frameworksim_nort>)
# A process without any DIOPI library (it still dlopens extension modules).
diopi_add_preload_test(diopi_no_diopi CHECKER diopi_unchanged
  COMMAND /usr/bin/python3 -c "import ctypes, json; ctypes.CDLL('libm.so.6'); print(json.dumps({'ok': 1}))")
# libprofagent.so defines no diopi* symbol: exporting one would make unimplemented operators
# look implemented to a framework that checks its weak references for null.
add_test(NAME preload.diopi_no_exports
  COMMAND sh -c "nm -D --defined-only \"$1\" | grep -i diopi && exit 1 || exit 0" sh $<TARGET_FILE:profagent>)
set_tests_properties(preload.diopi_no_exports PROPERTIES LABELS preload)
