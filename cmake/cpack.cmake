# `cpack -G DEB` (or TGZ) in the build tree: the install tree of cmake/install.cmake as a
# package, prefix /usr. The carried libraries live in a private folder (/usr/lib/profagent/), so
# they never clash with the system's packages.
set(CPACK_PACKAGE_NAME profagent)
set(CPACK_PACKAGE_VENDOR "profagent")
set(CPACK_PACKAGE_CONTACT "profagent maintainers")  # the Maintainer field dpkg requires
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
  "Drop-in profiler for CUDA workloads: LD_PRELOAD=libprofagent.so prog writes Kineto traces and torch.profiler-style tables")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_RESOURCE_FILE_LICENSE ${PROJECT_SOURCE_DIR}/LICENSE)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
# Stated, not derived by dpkg-shlibdeps: given a carried library (libdw.so.1 in the package),
# dpkg-shlibdeps still adds the system package of the same soname (libelf1, zlib1g, ...).
# What is left to the system is glibc, libstdc++ and libgcc_s, at the newest symbol versions
# the files reference (tests/install/elf_audit.py measures them; install.deb checks these
# against that measurement): GLIBC_2.34, GLIBCXX_3.4.29 (GCC 11; the launcher: libprofagent.so
# carries its own C++ runtime), GCC_4.2.0 (its personality routine: _Unwind_GetIPInfo).
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS OFF)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "libc6 (>= 2.34), libstdc++6 (>= 11), libgcc-s1 (>= 4.2.0)")
include(CPack)
