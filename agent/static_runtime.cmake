# libprofagent.so carries its own copy of the C++ runtime (libstdc++ and libsupc++), with every
# symbol of it kept local. Loaded dynamically, libstdc++.so.6 alone costs each process the agent
# is preloaded into ~1,800 symbol relocations resolved at start-up (about 1.9 M instructions
# and 70 page faults: +0.5 ms of CPU for every shell, launcher and short-lived child that never
# uses CUDA), and its static initialisers (iostreams, locales). Linked in, only the parts the
# agent uses come along, relocated against the agent itself.
#
# --exclude-libs makes the archives' symbols local: the agent defines no libstdc++ name for the
# process (operator new, __cxa_*, typeinfos), so a C++ program keeps binding to its own
# libstdc++, and the agent's exceptions are thrown and caught by its own copy.
# check_exports.py checks the exported list.
#
# libgcc_s.so.1 (the unwinder) stays shared: one unwinder for the whole process, whose frames
# any personality routine can walk; and libgcc_eh.a, built against this glibc, would need
# _dl_find_object (glibc 2.35), above the 2.34 the install states (cmake/cpack.cmake).
#
# Off for sanitizer builds (they build no libprofagent.so) and where the compiler has no static
# archive of its C++ runtime (clang with libc++, a toolchain without libstdc++.a): then the
# runtime stays dynamic, as before.
option(PROFAGENT_STATIC_CXX_RUNTIME
       "link libstdc++ into libprofagent.so, all of its symbols local" ON)

function(profagent_link_static_cxx_runtime target)
  if(NOT PROFAGENT_STATIC_CXX_RUNTIME)
    return()
  endif()
  execute_process(COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=libstdc++.a
                  OUTPUT_VARIABLE archive OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(NOT IS_ABSOLUTE "${archive}" OR NOT EXISTS "${archive}")
    message(STATUS "profagent: no libstdc++.a for ${CMAKE_CXX_COMPILER}: libprofagent.so links libstdc++ dynamically")
    return()
  endif()
  target_link_options(${target} PRIVATE
    -static-libstdc++
    -Wl,--exclude-libs,libstdc++.a:libsupc++.a:libgcc.a
    -Wl,--gc-sections  # the parts of the archives nothing calls (and their relocations) left out
    -Wl,--as-needed)  # no library nothing calls into
  profagent_link_static_libm(${target})
endfunction()

# libm.so.6 is one more library for the loader to map, version-check and relocate in every
# process (~0.05 ms of CPU for /bin/true, docs/startup.md), for the very few functions the
# agent calls: fegetround/fesetround (libstdc++'s floating-point to_chars) and lround/llround.
# They come from glibc's static libm.a instead, local like the C++ runtime: code on the FPU's
# own registers and errno, with no state of libm's to share. CMake places the archive ahead of
# some of the agent's own archives and of libstdc++.a, so -u names what is taken from it; a
# libm function used anywhere else brings libm.so.6 back, which preload.exported_symbols fails
# on (add it here). Without a libm.a (a toolchain without glibc's static archives), libm stays
# shared.
function(profagent_link_static_libm target)
  execute_process(COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=libm.a
                  OUTPUT_VARIABLE archive OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(NOT IS_ABSOLUTE "${archive}" OR NOT EXISTS "${archive}")
    message(STATUS "profagent: no libm.a for ${CMAKE_CXX_COMPILER}: libprofagent.so needs libm.so.6")
    return()
  endif()
  # glibc's libm.a can be a linker script naming the real archive (libm-2.36.a): local either way.
  get_filename_component(directory "${archive}" DIRECTORY)
  file(GLOB versioned RELATIVE "${directory}" "${directory}/libm-*.a")
  string(JOIN ":" archives libm.a ${versioned})
  target_link_options(${target} PRIVATE -Wl,--exclude-libs,${archives})
  # -lm inside -Wl: g++ moves a plain -lm of ours to its own, shared, -lm at the end.
  target_link_libraries(${target} PRIVATE
    "-Wl,-u,fegetround,-u,fesetround,-u,lround,-u,llround,--push-state,-Bstatic,-lm,--pop-state")
endfunction()
