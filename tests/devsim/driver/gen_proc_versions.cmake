# Generates the ABI versions NVIDIA's driver has for every entry point, from the PFN_<name>_v<N>
# typedefs of cudaTypedefs.h (with _ptsz/_ptds for the per-thread-default-stream variants):
# { "name", version, per_thread } rows sorted by name, which cuGetProcAddress uses to pick the
# ABI a caller asks for (driver_proc_address.cpp).
# Usage: cmake -DHEADER=.../cudaTypedefs.h -DOUT=.../driver_proc_versions.inc -P gen_proc_versions.cmake
file(READ "${HEADER}" text)
string(REGEX MATCHALL "\\*PFN_cu[A-Za-z0-9]+_v[0-9]+(_ptsz|_ptds)?\\)" typedefs "${text}")
if(NOT typedefs)
  message(FATAL_ERROR "devsim: no PFN_ typedefs found in ${HEADER}")
endif()
set(keys "")
foreach(typedef IN LISTS typedefs)
  string(REGEX MATCH "PFN_(cu[A-Za-z0-9]+)_v([0-9]+)(_pt[sd][sz])?" _ "${typedef}")
  set(per_thread false)
  if(CMAKE_MATCH_3)
    set(per_thread true)
  endif()
  list(APPEND keys "${CMAKE_MATCH_1}!${CMAKE_MATCH_2}!${per_thread}")  # "!" sorts before any name character
endforeach()
list(REMOVE_DUPLICATES keys)
list(SORT keys)
set(rows "")
foreach(key IN LISTS keys)
  string(REPLACE "!" ";" fields "${key}")
  list(GET fields 0 name)
  list(GET fields 1 version)
  list(GET fields 2 per_thread)
  string(APPEND rows "  {\"${name}\", ${version}, ${per_thread}},\n")
endforeach()
file(WRITE "${OUT}.tmp" "// Generated from ${HEADER} by gen_proc_versions.cmake. Do not edit.\n${rows}")
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
