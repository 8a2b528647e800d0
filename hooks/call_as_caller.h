// Calling a caller-sensitive loader function (dlopen) on behalf of the program so that the
// loader cannot tell the call from the program's own.
//
// glibc's dlopen takes its caller from its own return address (RETURN_ADDRESS(0)): the
// object containing that address decides $ORIGIN in the file name, which DT_RPATH/DT_RUNPATH
// are searched, and the link-map namespace. A wrapper that simply calls the real dlopen makes
// libprofagent.so the caller, and then a program's `dlopen("$ORIGIN/plug/libx.so")`, a
// library's plugin in its RUNPATH, or cuDNN's sub-libraries next to it (a pip wheel's layout)
// are not found, or found elsewhere — known in every dlopen interposer (ASan, uftrace,
// libTAS, heaptrack).
//
// The fix: the real dlopen is entered with a return address INSIDE the caller's object — in
// the epilogue that ends that object's `_fini` (or `_init`), the crti/crtn code every gcc/clang-
// linked object has, found through DT_FINI/DT_INIT and checked instruction for instruction —
// and that epilogue returns to us: on x86-64 its bare `ret` (the return address is on the
// stack), on aarch64 its `ldp x29, x30, [sp], #16; ret` (the return address is a register, so
// the epilogue must load ours). The architecture's half is hooks/call_as_caller_arch.h. So
// glibc sees the caller's object, and the wrapper still gets control back (to patch what was
// loaded). Where no such epilogue is found (an object linked without crti, JIT code calling
// dlopen), or where the process runs with a shadow stack (x86 CET, arm64 GCS: it would refuse
// the detour), the plain call is made and that is counted and said once.
//
// Unwinding across the detour: an unwinder that walks the stack during the dlopen (a
// backtrace taken in a library constructor) stops at the `_fini` address, which crti leaves
// without unwind info; it never walks wrong frames.
#pragma once

#include <cstdint>

namespace profagent::hooks {

using DlopenFn = void* (*)(const char*, int);

// dlopen(file, mode) as if called from `caller` (a return address in the program).
void* dlopen_as_caller(DlopenFn real, const char* file, int mode, const void* caller);

// How many dlopen calls could not be made as their caller (see above).
uint64_t plain_dlopen_calls() noexcept;

// hooks/ has no logger: the agent installs how the first such call is said (once per process).
using DetourReporter = void (*)(const char* object) noexcept;
void set_detour_reporter(DetourReporter reporter) noexcept;

}  // namespace profagent::hooks
