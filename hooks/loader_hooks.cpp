// dlopen and dlclose, interposed so the agent learns of every load and unload the program
// makes — without changing either:
//  - dlopen: DIOPI importers loaded after start-up get their GOT slots patched
//    (hooks/diopi/install.h) before the call returns, i.e. before the program can call through
//    them. The real dlopen is entered as if from the program's own call site
//    (hooks/call_as_caller.h), so $ORIGIN, DT_RPATH/DT_RUNPATH, glibc-hwcaps subdirectories
//    and the namespace are the caller's, exactly as without the agent.
//  - dlclose: once an object is unloaded, every cached real function is forgotten (the runtime
//    that held it may be gone and its address range given to the next library) and looked up
//    again at its next call; DIOPI's record of scanned objects drops the unloaded ones.
// dlclose does not depend on its caller, so a plain wrapper is exact. dlsym is never
// interposed (it depends on its caller and every tool that wraps it breaks RTLD_NEXT).
#include <dlfcn.h>

#include <atomic>
#include <cerrno>

#include "hooks/call_as_caller.h"
#include "hooks/diopi/install.h"
#include "hooks/resolve.h"

namespace {

using profagent::hooks::DlopenFn;
using DlcloseFn = int (*)(void*);

// Looked up without function-local statics: a static's initialisation guard is a lock, and
// holding it across dlsym (which takes the loader's lock) while a library constructor, under
// the loader's lock, calls dlopen on another thread would leave both waiting. Racing first
// calls look up the same address.
template <typename Fn>
Fn next_function(std::atomic<Fn>& cache, const char* name) noexcept {
  Fn known = cache.load(std::memory_order_acquire);
  if (known != nullptr) return known;
  known = reinterpret_cast<Fn>(dlsym(RTLD_NEXT, name));
  cache.store(known, std::memory_order_release);
  return known;
}

std::atomic<DlopenFn> g_real_dlopen{nullptr};
std::atomic<DlcloseFn> g_real_dlclose{nullptr};

DlopenFn real_dlopen() noexcept { return next_function(g_real_dlopen, "dlopen"); }
DlcloseFn real_dlclose() noexcept { return next_function(g_real_dlclose, "dlclose"); }

}  // namespace

// Not noexcept: constructors that dlopen runs may be cancelled (see hooks/hook.h).
extern "C" __attribute__((visibility("default"))) void* dlopen(const char* file, int mode) {
  const DlopenFn real = real_dlopen();
  if (real == nullptr) return nullptr;  // no libc dlopen: cannot happen in a dynamic process
  void* handle = profagent::hooks::dlopen_as_caller(real, file, mode, __builtin_return_address(0));
  if (handle != nullptr && (mode & RTLD_NOLOAD) == 0) profagent::hooks::diopi::rescan();
  return handle;
}

extern "C" __attribute__((visibility("default"))) int dlclose(void* handle) {
  const DlcloseFn real = real_dlclose();
  if (real == nullptr) return -1;
  const uint64_t removed_before = profagent::hooks::loader_removals();
  const int result = real(handle);
  if (profagent::hooks::loader_removals() != removed_before) {
    const int saved_errno = errno;
    profagent::hooks::forget_real_symbols();
    profagent::hooks::diopi::forget_unloaded();
    errno = saved_errno;
  }
  return result;
}
