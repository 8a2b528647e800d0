// The architecture's half of dlopen_as_caller (hooks/call_as_caller.h): the trampoline that
// enters the real dlopen with a chosen return address, and where that address lies in the
// crti/crtn code of an object. One definition per architecture: call_as_caller_x86_64.cpp,
// call_as_caller_aarch64.cpp.
#pragma once

#include <link.h>

#include <cstddef>
#include <cstring>

#include "hooks/call_as_caller.h"

namespace profagent::hooks::detour {

// An executable PT_LOAD of an object, mapped.
struct Segment {
  ElfW(Addr) begin = 0;
  ElfW(Addr) end = 0;
};

inline bool bytes_at(const Segment& segment, ElfW(Addr) at, const void* bytes, size_t n) noexcept {
  return at >= segment.begin && at + n <= segment.end &&
         std::memcmp(reinterpret_cast<const void*>(at), bytes, n) == 0;
}

// The return address to enter dlopen with, inside the object's _fini (DT_FINI) or _init
// (DT_INIT) at `at` in `segment`: nullptr unless the code there is exactly crti/crtn's.
const void* fini_return(const Segment& segment, ElfW(Addr) at) noexcept;
const void* init_return(const Segment& segment, ElfW(Addr) at) noexcept;

// Whether this process's returns are checked against a shadow stack (x86 CET, arm64 GCS):
// the detour's return would then be refused, so it is never taken.
bool returns_checked() noexcept;

}  // namespace profagent::hooks::detour

// real(file, mode) entered with `ret` (from fini_return/init_return) as its return address;
// the code at `ret` comes back here. Written in assembly, with CFI for its own frame, so that
// unwinding from the code after the detour is exact.
extern "C" void* profagent_call_via_return(const char* file, int mode, profagent::hooks::DlopenFn real,
                                           const void* ret);
