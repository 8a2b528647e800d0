# Unit tests of the agent's two loader-level mechanisms in hooks/ (label unit), each driven
# directly with small libraries of its own, no agent and no CUDA: so they also run in the
# aarch64 cross build (scripts/cross_aarch64.sh), where both work differently than on x86-64.
set(loader_test_dir ${CMAKE_CURRENT_LIST_DIR}/loader)

# dlopen as its caller (hooks/call_as_caller.h): a host library whose RUNPATH ($ORIGIN/sub)
# holds its plugin, the same library linked without crti/crtn, and the plugin.
set(caller_fixture ${CMAKE_CURRENT_BINARY_DIR}/caller_fixture)
add_library(caller_host SHARED ${loader_test_dir}/caller_host.cpp)
add_library(caller_host_nocrt SHARED ${loader_test_dir}/caller_host.cpp)
target_link_options(caller_host_nocrt PRIVATE -nostartfiles)
foreach(host caller_host caller_host_nocrt)
  # DT_RUNPATH (not DT_RPATH): the form current toolchains and pip wheels write.
  target_link_options(${host} PRIVATE -Wl,--enable-new-dtags)
  set_target_properties(${host} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${caller_fixture}
    BUILD_RPATH "$ORIGIN/sub" SKIP_BUILD_RPATH OFF)
endforeach()
add_library(caller_plugin SHARED ${loader_test_dir}/caller_plugin.cpp)
set_target_properties(caller_plugin PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${caller_fixture}/sub)
add_executable(dlopen_as_caller_test ${loader_test_dir}/dlopen_as_caller_test.cpp
  ${PROJECT_SOURCE_DIR}/hooks/call_as_caller.cpp
  ${PROJECT_SOURCE_DIR}/hooks/call_as_caller_aarch64.cpp
  ${PROJECT_SOURCE_DIR}/hooks/call_as_caller_x86_64.cpp)
target_include_directories(dlopen_as_caller_test PRIVATE ${PROJECT_SOURCE_DIR})
target_compile_definitions(dlopen_as_caller_test PRIVATE CALLER_FIXTURE_DIR="${caller_fixture}")
target_link_libraries(dlopen_as_caller_test PRIVATE Catch2::Catch2 ${CMAKE_DL_LIBS})
add_dependencies(dlopen_as_caller_test caller_host caller_host_nocrt caller_plugin)
profagent_catch_tests(dlopen_as_caller_test PREFIX dlopen_as_caller. LABELS unit)

# DIOPI GOT patching (hooks/diopi/got_patch.h): a provider of diopi* functions and two
# importers of them (lazily bound, and bound at load time with -z now).
if(TARGET profagent_collector)
  set(got_fixture ${CMAKE_CURRENT_BINARY_DIR}/got_fixture)
  add_library(got_provider SHARED ${loader_test_dir}/got_provider.cpp)
  set_target_properties(got_provider PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${got_fixture})
  foreach(binding lazy now)
    add_library(got_importer_${binding} SHARED ${loader_test_dir}/got_importer.cpp)
    # Weak references alone would not keep the provider under --as-needed.
    target_link_options(got_importer_${binding} PRIVATE -Wl,--no-as-needed -Wl,-z,${binding})
    target_link_libraries(got_importer_${binding} PRIVATE got_provider)
    set_target_properties(got_importer_${binding} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${got_fixture})
  endforeach()
  add_executable(got_patch_test ${loader_test_dir}/got_patch_test.cpp
    ${PROJECT_SOURCE_DIR}/hooks/diopi/got_patch.cpp)
  target_include_directories(got_patch_test PRIVATE ${PROJECT_SOURCE_DIR})
  target_compile_definitions(got_patch_test PRIVATE GOT_FIXTURE_DIR="${got_fixture}")
  target_link_libraries(got_patch_test PRIVATE profagent_collector Catch2::Catch2 ${CMAKE_DL_LIBS})
  add_dependencies(got_patch_test got_importer_lazy got_importer_now got_load_pause_audit)
  profagent_catch_tests(got_patch_test PREFIX got_patch. LABELS unit SPEC "~[load_race]")
  # The load race case runs with an LD_AUDIT module that holds a load between "listed" and
  # "relocated". Under qemu-user the variable must reach the emulated program only, not the
  # host's qemu: QEMU_SET_ENV passes it to the guest.
  add_library(got_load_pause_audit SHARED ${loader_test_dir}/got_load_pause_audit.cpp)
  set_target_properties(got_load_pause_audit PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${got_fixture})
  set(audit_module ${got_fixture}/libgot_load_pause_audit.so)
  if(CMAKE_CROSSCOMPILING)
    set(audit_environment "QEMU_SET_ENV=LD_AUDIT=${audit_module}")
  else()
    set(audit_environment "LD_AUDIT=${audit_module}")
  endif()
  profagent_catch_tests(got_patch_test PREFIX got_patch. LABELS unit SPEC "[load_race]"
                        ENVIRONMENT ${audit_environment})
endif()
