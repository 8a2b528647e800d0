// The C interface of libprofagent_dwarf.so, the one place libdw (elfutils) is used: source
// file and line, and the symbol-table name, of an address in this process (stack_symbols.h).
//
// libdw rather than libbacktrace: Debian packages it (libdw-dev; libbacktrace is only a copy
// inside GCC's sources), it is maintained with the DWARF producers (elfutils follows GCC's and
// binutils' DWARF 5, split DWARF and compressed sections), reads separate debug files by
// build-id from /usr/lib/debug, and gives static functions' names from .symtab, which dladdr
// (dynamic symbols only) cannot. It is a C interface over dlopen, not a link-time dependency of
// libprofagent.so, for the same reason as RE2's: libdw, libelf and their compression libraries
// must not join the profiled program's global scope (nor load at all unless stacks are on).
#pragma once

#include <cstddef>
#include <cstdint>

extern "C" {

// A symboliser for the calling process's current mappings, or nullptr.
using profagent_dwarf_open_fn = void* (*)();
// For the instruction at `address`: its function's symbol (mangled as in the ELF) and its
// source file and line. Returns a bitmask: 1 function found, 2 file and line found.
// Strings are NUL-terminated and cut to the sizes given.
using profagent_dwarf_lookup_fn = int (*)(void* symbolizer, uint64_t address, char* function,
                                          size_t function_size, char* file, size_t file_size,
                                          int* line);
using profagent_dwarf_close_fn = void (*)(void* symbolizer);

}  // extern "C"

inline constexpr const char* kProfagentDwarfOpen = "profagent_dwarf_open";
inline constexpr const char* kProfagentDwarfLookup = "profagent_dwarf_lookup";
inline constexpr const char* kProfagentDwarfClose = "profagent_dwarf_close";
