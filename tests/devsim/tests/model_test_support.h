// Support for the device-model tests: a recording Tracer, fake kernels registered the way
// nvcc-generated code registers real ones, and a host-function gate that holds a stream until
// the test opens it (so timing relations are decided by the model, never by scheduling luck).
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "devsim_trace.h"

extern "C" {
// Per-thread-default-stream twins (declared by the header only in such builds).
cudaError_t cudaLaunchKernel_ptsz(const void* func, dim3 grid, dim3 block, void** args, size_t shared,
                                  cudaStream_t stream);
cudaError_t cudaStreamSynchronize_ptsz(cudaStream_t stream);
void** __cudaRegisterFatBinary(void* fat_cubin);
void __cudaRegisterFunction(void** handle, const char* host_fun, char* device_fun, const char* device_name,
                            int thread_limit, uint3* tid, uint3* bid, dim3* bdim, dim3* gdim, int* wsize);
void __cudaRegisterVar(void** handle, char* host_var, char* device_address, const char* device_name, int ext,
                       size_t size, int constant, int global);
}

namespace devsim_test {

class RecordingTracer final : public devsim::Tracer {
 public:
  void on_api_enter(const devsim::ApiCall& c) override {
    std::lock_guard lock(mutex_);
    enters_.push_back(c);
  }
  void on_api_exit(const devsim::ApiCall& c) override {
    std::lock_guard lock(mutex_);
    exits_.push_back(c);
  }
  void on_op_done(const devsim::OpRecord& op) override {
    std::lock_guard lock(mutex_);
    ops_.push_back(op);
  }
  void on_sync(const devsim::SyncRecord& s) override {
    std::lock_guard lock(mutex_);
    syncs_.push_back(s);
  }

  void clear() {
    std::lock_guard lock(mutex_);
    enters_.clear(), exits_.clear(), ops_.clear(), syncs_.clear();
  }
  std::vector<devsim::OpRecord> ops() {
    std::lock_guard lock(mutex_);
    return ops_;
  }
  std::vector<devsim::ApiCall> exits() {
    std::lock_guard lock(mutex_);
    return exits_;
  }
  std::vector<devsim::ApiCall> enters() {
    std::lock_guard lock(mutex_);
    return enters_;
  }
  std::vector<devsim::SyncRecord> syncs() {
    std::lock_guard lock(mutex_);
    return syncs_;
  }
  // Kernel records whose name is exactly `name`, in completion order.
  std::vector<devsim::OpRecord> kernels(const char* name) {
    std::vector<devsim::OpRecord> out;
    for (const auto& op : ops()) {
      if (op.kind == devsim::OpKind::Kernel && op.name && std::strcmp(op.name, name) == 0) out.push_back(op);
    }
    return out;
  }
  std::vector<devsim::ApiCall> calls(const char* name) {
    std::vector<devsim::ApiCall> out;
    for (const auto& c : exits()) {
      if (std::strcmp(c.name, name) == 0) out.push_back(c);
    }
    return out;
  }

 private:
  std::mutex mutex_;
  std::vector<devsim::ApiCall> enters_, exits_;
  std::vector<devsim::OpRecord> ops_;
  std::vector<devsim::SyncRecord> syncs_;
};

// The process-wide tracer of the test binary, installed once.
RecordingTracer& tracer();

// Registers a host stub under a mangled device name, as __nv_cudaEntityRegisterCallback does.
const void* fake_kernel(const void* stub, const char* mangled_name);

// Holds a stream at a host function until open() is called.
class Gate {
 public:
  void enqueue_on(cudaStream_t stream);
  void open();

 private:
  static void wait_fn(void* self);
  std::mutex mutex_;
  std::condition_variable cv_;
  bool open_ = false;
};

inline bool intervals_overlap(const devsim::OpRecord& a, const devsim::OpRecord& b) {
  return a.start_ns < b.end_ns && b.start_ns < a.end_ns;
}

}  // namespace devsim_test
