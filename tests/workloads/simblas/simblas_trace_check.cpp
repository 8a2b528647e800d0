// simblas_trace_check: proves, from the simulated device's own trace, that libsimblas launches
// the way cuBLAS does. A devsim Tracer (the seam libcupti.so.13 uses) sees every public API call
// and every finished device operation; after one sgemm and one saxpy it must have seen:
//   - two driver-domain cuLaunchKernel calls and no runtime launch call at all, so a profiler
//     that hooks only the runtime never sees these launches;
//   - two kernels whose correlation ids are those of the cuLaunchKernel calls, named after the
//     simblas kernels (mangled template and C-linkage names).
// Links libdevsim.so directly, so it runs only on devsim.
#include "devsim_trace.h"
#include "simblas.h"

#include <cuda_runtime_api.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

namespace {

struct SeenCall {
  devsim::ApiDomain domain;
  std::string name;
  uint32_t correlation_id;
};

struct SeenKernel {
  std::string name;
  uint32_t correlation_id;
};

// Tracer callbacks come from the calling thread and from devsim's completion thread.
class RecordingTracer final : public devsim::Tracer {
 public:
  void on_api_enter(const devsim::ApiCall&) override {}
  void on_api_exit(const devsim::ApiCall& call) override {
    std::lock_guard<std::mutex> lock(mutex_);
    calls_.push_back({call.domain, call.name, call.correlation_id});
  }
  void on_op_done(const devsim::OpRecord& op) override {
    if (op.kind != devsim::OpKind::Kernel) return;
    std::lock_guard<std::mutex> lock(mutex_);
    kernels_.push_back({op.name ? op.name : "", op.correlation_id});
    kernel_done_.notify_all();
  }
  void on_sync(const devsim::SyncRecord&) override {}

  // Device records arrive after the work ends; the bound only turns a hang into a failure.
  std::vector<SeenKernel> wait_for_kernels(size_t count) {
    std::unique_lock<std::mutex> lock(mutex_);
    kernel_done_.wait_for(lock, std::chrono::seconds(10), [&] { return kernels_.size() >= count; });
    return kernels_;
  }
  std::vector<SeenCall> calls() {
    std::lock_guard<std::mutex> lock(mutex_);
    return calls_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable kernel_done_;
  std::vector<SeenCall> calls_;
  std::vector<SeenKernel> kernels_;
};

void fail(const std::string& what) {
  std::fprintf(stderr, "FAILED: %s\n", what.c_str());
  std::exit(EXIT_FAILURE);
}

void check(bool ok, const char* what) {
  if (!ok) fail(what);
}

float* device_buffer(size_t floats) {
  void* p = nullptr;
  check(cudaMalloc(&p, floats * sizeof(float)) == cudaSuccess, "cudaMalloc");
  return static_cast<float*>(p);
}

// Runs one sgemm and one saxpy on a fresh stream and waits for them.
void run_simblas() {
  constexpr int n = 64;
  float *a = device_buffer(n * n), *b = device_buffer(n * n), *c = device_buffer(n * n);
  cudaStream_t stream = nullptr;
  check(cudaStreamCreate(&stream) == cudaSuccess, "cudaStreamCreate");
  check(simblasSgemm(n, n, n, 1.0f, a, n, b, n, 0.0f, c, n, stream) == SIMBLAS_STATUS_SUCCESS, "simblasSgemm");
  check(simblasSaxpy(n * n, 2.0f, a, c, stream) == SIMBLAS_STATUS_SUCCESS, "simblasSaxpy");
  check(cudaStreamSynchronize(stream) == cudaSuccess, "cudaStreamSynchronize");
  check(cudaStreamDestroy(stream) == cudaSuccess, "cudaStreamDestroy");
  for (float* p : {a, b, c}) check(cudaFree(p) == cudaSuccess, "cudaFree");
}

bool is_runtime_launch(const SeenCall& call) {
  return call.domain == devsim::ApiDomain::Runtime && call.name.find("Launch") != std::string::npos;
}

std::vector<uint32_t> driver_launch_ids(const std::vector<SeenCall>& calls) {
  std::vector<uint32_t> ids;
  for (const SeenCall& call : calls) {
    if (is_runtime_launch(call)) fail("simblas made a runtime launch call: " + call.name);
    if (call.domain == devsim::ApiDomain::Driver && call.name == "cuLaunchKernel") ids.push_back(call.correlation_id);
  }
  return ids;
}

void expect_kernel(const std::vector<SeenKernel>& kernels, const char* name_part, uint32_t correlation_id) {
  for (const SeenKernel& k : kernels)
    if (k.correlation_id == correlation_id && k.name.find(name_part) != std::string::npos) {
      std::printf("kernel %s has the correlation id %u of its cuLaunchKernel call\n", k.name.c_str(), correlation_id);
      return;
    }
  fail(std::string("no kernel named *") + name_part + "* with correlation id " + std::to_string(correlation_id));
}

}  // namespace

int main() {
  static RecordingTracer tracer;  // outlives devsim's completion thread
  check(cudaFree(nullptr) == cudaSuccess, "runtime initialisation");
  check(devsim::set_tracer(&tracer), "devsim::set_tracer (another tracer is installed)");
  run_simblas();
  std::vector<SeenKernel> kernels = tracer.wait_for_kernels(2);
  check(devsim::set_tracer(nullptr), "devsim::set_tracer(nullptr)");

  std::vector<uint32_t> launches = driver_launch_ids(tracer.calls());
  std::printf("driver launches seen: %zu, runtime launches seen: 0, kernels seen: %zu\n", launches.size(), kernels.size());
  check(launches.size() == 2, "expected exactly two cuLaunchKernel calls");
  check(kernels.size() == 2, "expected exactly two kernels");
  expect_kernel(kernels, "sgemm_tiled", launches[0]);
  expect_kernel(kernels, "simblas_saxpy_kernel", launches[1]);
  std::printf("simblas_trace_check: PASSED\n");
  return 0;
}
