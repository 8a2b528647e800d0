# A second library descriptor (label preload): a fake NCCL-shaped library
# (programs/fake_library) hooked by one descriptor and one file of one-line hooks, exactly as a
# real library would be (docs/hooks.md, "Adding a library"). The hooks go into a copy of the
# agent built for this test only, so the product's exports stay unchanged.
# Included by tests/preload/CMakeLists.txt; the check is library_checks.py.
set(FAKECOMM_DIR ${CMAKE_CURRENT_SOURCE_DIR}/programs/fake_library)

# libprofagent_test_fakecomm.so.1 and a program linked against it (no CUDA at all).
add_library(profagent_test_fakecomm SHARED ${FAKECOMM_DIR}/fakecomm.c)
set_target_properties(profagent_test_fakecomm PROPERTIES VERSION 1 SOVERSION 1 C_VISIBILITY_PRESET default)
add_executable(fakecomm_app ${FAKECOMM_DIR}/fakecomm_app.c)
target_link_libraries(fakecomm_app PRIVATE profagent_test_fakecomm)

# libprofagent.so plus the fake library's hooks, linked as libprofagent.so is (agent/CMakeLists.txt).
add_library(profagent_with_fakecomm SHARED $<TARGET_OBJECTS:profagent_hooks> ${FAKECOMM_DIR}/fakecomm_hooks.cpp)
target_link_libraries(profagent_with_fakecomm PRIVATE
  "$<LINK_LIBRARY:WHOLE_ARCHIVE,profagent_agent>" profagent_hooks)
target_include_directories(profagent_with_fakecomm PRIVATE ${FAKECOMM_DIR})
target_compile_options(profagent_with_fakecomm PRIVATE -ftls-model=initial-exec)
get_target_property(agent_link_options profagent LINK_OPTIONS)
target_link_options(profagent_with_fakecomm PRIVATE ${agent_link_options})
set_target_properties(profagent_with_fakecomm PROPERTIES LINK_DEPENDS ${PROJECT_SOURCE_DIR}/agent/exports.map)

set(fakecomm_out ${CMAKE_CURRENT_BINARY_DIR}/out/second_library_descriptor)
add_test(NAME preload.second_library_descriptor
  COMMAND ${PRELOAD_PYTHON} ${PRELOAD_RUNNER} --out ${fakecomm_out} --checker second_library_descriptor --
          ${CMAKE_COMMAND} -E env LD_PRELOAD=$<TARGET_FILE:profagent_with_fakecomm>
          LD_LIBRARY_PATH=${PROFAGENT_DEVSIM_DIR} PROFAGENT_OUTPUT_DIR=${fakecomm_out}
          $<TARGET_FILE:fakecomm_app>)
set_tests_properties(preload.second_library_descriptor PROPERTIES LABELS preload TIMEOUT 180)
