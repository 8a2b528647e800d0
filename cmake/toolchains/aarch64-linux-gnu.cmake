# Cross build for aarch64 (Grace hosts) with Debian's g++-aarch64-linux-gnu and the multiarch
# :arm64 -dev packages (scripts/cross_aarch64.sh installs them and configures with this file).
# Built programs run under qemu-user: CTest starts each test through CMAKE_CROSSCOMPILING_EMULATOR.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)

# Libraries from the target's folders (/usr/lib/aarch64-linux-gnu, by CMAKE_LIBRARY_ARCHITECTURE;
# never the host's /usr/lib/x86_64-linux-gnu); architecture-independent packages (nlohmann-json,
# Catch2 v2, the CUDA toolkit's headers) from the host's; programs (python3, the generators) of
# the host.
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)
# pkg-config reads the :arm64 packages' .pc files, never the host's.
set(ENV{PKG_CONFIG_LIBDIR} /usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig)

# No `-L /usr/aarch64-linux-gnu`: the multiarch libc6:arm64 (which every :arm64 -dev package
# brings) gives the loader and libc.so.6 of one glibc build at their usual paths, where the
# programs' interpreter (/lib/ld-linux-aarch64.so.1) and ld.so.cache find them; -L would pair
# the cross toolchain's ld.so with that libc.so.6, two builds that must not be mixed.
find_program(PROFAGENT_QEMU_AARCH64 qemu-aarch64 REQUIRED)
set(CMAKE_CROSSCOMPILING_EMULATOR ${PROFAGENT_QEMU_AARCH64})
