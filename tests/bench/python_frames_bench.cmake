# ns per capture of Python frames at depth ~30 (label bench: prints figures, never fails on
# time). Uses the probe library the python_frames_py unit test loads.
if(TARGET python_frames_probe)
  add_test(NAME bench.python_frames
    COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/python_frames_bench.py $<TARGET_FILE:python_frames_probe>)
  set_tests_properties(bench.python_frames PROPERTIES LABELS bench TIMEOUT 300)
endif()
