// A library for window_race_test.cpp: its constructor, run by the loader inside dlopen, calls
// back into the test program (found with dlsym) the way a CUDA module registers its kernels
// from its constructor while another thread may be at a step boundary.
#include <dlfcn.h>

namespace {

[[gnu::constructor]] void register_on_load() {
  using Callback = void (*)();
  if (auto callback = reinterpret_cast<Callback>(dlsym(RTLD_DEFAULT, "window_race_on_load"))) callback();
}

}  // namespace
