# Runs at install time (install(CODE) in cmake/install.cmake). Copies every shared library that
# the files PROFAGENT_CARRIED_FROM need, and what those need in turn, into
# <prefix>/PROFAGENT_CARRIED_TO, each under its soname, so that the installed tree runs on a
# machine with none of the build's packages. The helpers' DT_RPATH and the launcher's RUNPATH
# point there. Not carried: what every Linux system has and what must be the system's own —
# glibc (libc, libm, libdl, libpthread, librt, the dynamic loader), libstdc++ and libgcc_s.
set(system_libraries
  "^linux-vdso" "^ld-linux" "^libc\\.so" "^libm\\.so" "^libdl\\.so" "^libpthread\\.so"
  "^librt\\.so" "^libstdc\\+\\+\\.so" "^libgcc_s\\.so")
file(GET_RUNTIME_DEPENDENCIES
  MODULES ${PROFAGENT_CARRIED_FROM}
  RESOLVED_DEPENDENCIES_VAR carried
  UNRESOLVED_DEPENDENCIES_VAR missing
  PRE_EXCLUDE_REGEXES ${system_libraries})
if(missing)
  message(FATAL_ERROR "profagent: cannot carry ${missing}: not found on this machine")
endif()

set(destination "$ENV{DESTDIR}${CMAKE_INSTALL_PREFIX}/${PROFAGENT_CARRIED_TO}")
file(MAKE_DIRECTORY "${destination}")
foreach(library IN LISTS carried)
  # `library` is the path the loader would open (named by the soname, usually a symbolic link
  # to the versioned file): the file's content goes in under that name.
  get_filename_component(soname "${library}" NAME)
  file(REAL_PATH "${library}" content)
  message(STATUS "Installing: ${destination}/${soname} (from ${content})")
  file(COPY_FILE "${content}" "${destination}/${soname}" ONLY_IF_DIFFERENT)
  list(APPEND CMAKE_INSTALL_MANIFEST_FILES "${destination}/${soname}")
endforeach()
