#define CATCH_CONFIG_RUNNER
#include "model_test_support.h"

#include <catch2/catch.hpp>

namespace devsim_test {

RecordingTracer& tracer() {
  static RecordingTracer* t = [] {
    auto* created = new RecordingTracer;
    devsim::set_tracer(created);
    return created;
  }();
  return *t;
}

const void* fake_kernel(const void* stub, const char* mangled_name) {
  static void** module = __cudaRegisterFatBinary(nullptr);
  __cudaRegisterFunction(module, static_cast<const char*>(stub), const_cast<char*>(mangled_name), mangled_name,
                         -1, nullptr, nullptr, nullptr, nullptr, nullptr);
  return stub;
}

void Gate::enqueue_on(cudaStream_t stream) { cudaLaunchHostFunc(stream, &Gate::wait_fn, this); }

void Gate::open() {
  {
    std::lock_guard lock(mutex_);
    open_ = true;
  }
  cv_.notify_all();
}

void Gate::wait_fn(void* self) {
  auto* gate = static_cast<Gate*>(self);
  std::unique_lock lock(gate->mutex_);
  gate->cv_.wait(lock, [&] { return gate->open_; });
}

}  // namespace devsim_test

#ifndef DEVSIM_TEST_CUSTOM_MAIN
int main(int argc, char** argv) {
  devsim_test::tracer();  // installed before any CUDA call
  return Catch::Session().run(argc, argv);
}
#else
int bench_main();
int main() { return bench_main(); }
#endif
