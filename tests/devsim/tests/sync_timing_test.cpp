// Host waits end at the modelled time: a synchronous copy returns at its record's end (its bytes
// moved from its start), and four streams of copy + kernel + copy finish as much faster than
// one stream as the model says. Run by devsim.timing with bandwidths low enough that this
// machine's memcpy outruns them several times (4 GB/s modelled; a warm 16 MB memcpy here runs
// at 24-32 GB/s), so the figures measure devsim's waiting, not the host's copying.
//
// Wall-clock figures are printed. Lower bounds (never before the modelled end) are asserted
// per call; upper bounds only on the best of several runs, relative to the model, so
// preemptions on a loaded machine (two cores shared by several builds: a woken thread may wait
// a whole time slice) cannot fail the test. A devsim that moved the bytes only at the end
// would be late by the host's copy time (about 0.6 ms for 16 MB here) in every run.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>

#include "model_test_support.h"

using namespace devsim_test;

namespace {

void pipeline_stub() {}  // DEVSIM_KERNEL_NS: 1 ms
const void* k_pipeline = fake_kernel(reinterpret_cast<const void*>(&pipeline_stub), "_Z10k_pipelinev");

constexpr size_t kCopyBytes = 16'000'000;  // 4 ms at 4 GB/s
constexpr size_t kStageBytes = 4'000'000;  // 1 ms at 4 GB/s
constexpr uint64_t kKernelNs = 1'000'000;
constexpr double kGbps = 4.0;              // DEVSIM_BW_HTOD_GBPS and _DTOH_GBPS of devsim.timing

uint64_t modelled_ns(size_t bytes) { return static_cast<uint64_t>(double(bytes) / kGbps); }

uint64_t median(std::vector<uint64_t> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

devsim::OpRecord last_copy() {
  auto ops = tracer().ops();
  for (auto it = ops.rbegin(); it != ops.rend(); ++it) {
    if (it->kind == devsim::OpKind::Memcpy) return *it;
  }
  FAIL("no copy record");
  return {};
}

struct Buffers {
  void* dev[4] = {};
  void* host[4] = {};
  Buffers() {
    for (int i = 0; i < 4; ++i) {
      REQUIRE(cudaMalloc(&dev[i], kCopyBytes) == cudaSuccess);
      REQUIRE(cudaMallocHost(&host[i], kCopyBytes) == cudaSuccess);
      std::memset(host[i], i + 1, kCopyBytes);  // touched: no page faults inside the timing
      REQUIRE(cudaMemcpy(dev[i], host[i], kCopyBytes, cudaMemcpyHostToDevice) == cudaSuccess);
    }
  }
  ~Buffers() {
    for (int i = 0; i < 4; ++i) cudaFree(dev[i]), cudaFreeHost(host[i]);
  }
};

// Copy in, 1 ms kernel, copy out on `stream`.
void stage(const Buffers& b, int i, cudaStream_t stream) {
  REQUIRE(cudaMemcpyAsync(b.dev[i], b.host[i], kStageBytes, cudaMemcpyHostToDevice, stream) == cudaSuccess);
  REQUIRE(cudaLaunchKernel(k_pipeline, 1, 32, nullptr, 0, stream) == cudaSuccess);
  REQUIRE(cudaMemcpyAsync(b.host[i], b.dev[i], kStageBytes, cudaMemcpyDeviceToHost, stream) == cudaSuccess);
}

// Wall time of issuing the four stages on `streams` (all the same stream: serial) and waiting.
uint64_t run_stages(const Buffers& b, const std::vector<cudaStream_t>& streams) {
  uint64_t t0 = devsim::now_ns();
  for (int i = 0; i < 4; ++i) stage(b, i, streams[i]);
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  return devsim::now_ns() - t0;
}

}  // namespace

TEST_CASE("a synchronous copy returns at its modelled end with its bytes in place", "[devsim][timing]") {
  Buffers b;
  std::vector<uint64_t> late;
  for (int i = 0; i < 9; ++i) {
    tracer().clear();
    std::memset(b.host[1], 0x40 + i, kCopyBytes);
    REQUIRE(cudaMemcpy(b.dev[0], b.host[1], kCopyBytes, cudaMemcpyHostToDevice) == cudaSuccess);
    const uint64_t returned = devsim::now_ns();
    const auto c = last_copy();
    REQUIRE(c.end_ns - c.start_ns == modelled_ns(kCopyBytes));
    CHECK(returned >= c.end_ns);  // never before the modelled end
    late.push_back(returned - c.end_ns);
    // The bytes were there when the call returned.
    REQUIRE(cudaMemcpy(b.host[2], b.dev[0], kCopyBytes, cudaMemcpyDeviceToHost) == cudaSuccess);
    CHECK(std::memcmp(b.host[1], b.host[2], kCopyBytes) == 0);
  }
  const uint64_t bound = std::max<uint64_t>(modelled_ns(kCopyBytes) / 20, 20'000);  // 5 % or 20 us
  const uint64_t best = *std::min_element(late.begin(), late.end());
  std::printf("sync copy of %zu bytes: modelled %.3f ms, returned late by best %.1f us, median %.1f us, "
              "max %.1f us; bound %.1f us\n",
              kCopyBytes, modelled_ns(kCopyBytes) / 1e6, best / 1e3, median(late) / 1e3,
              *std::max_element(late.begin(), late.end()) / 1e3, bound / 1e3);
  CHECK(best <= bound);
}

TEST_CASE("four streams of copy, kernel, copy overlap by the model's factor", "[devsim][timing]") {
  Buffers b;
  cudaStream_t one;
  REQUIRE(cudaStreamCreateWithFlags(&one, cudaStreamNonBlocking) == cudaSuccess);
  std::vector<cudaStream_t> four(4);
  for (auto& s : four) REQUIRE(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess);

  // The model: a stage is c (copy in) + k + c (copy out). One stream runs 4 stages back to back;
  // four streams share one engine per direction, so copies in follow each other, kernels run
  // at once (k >= c), copies out follow their kernels: 4c + k + c.
  const uint64_t c = modelled_ns(kStageBytes), k = kKernelNs;
  REQUIRE(k >= c);
  const double serial_model = 4.0 * (2 * c + k), overlap_model = 5.0 * c + k;
  const double model_factor = serial_model / overlap_model;

  std::vector<uint64_t> serial, overlap;
  for (int round = 0; round < 7; ++round) {
    serial.push_back(run_stages(b, {one, one, one, one}));
    overlap.push_back(run_stages(b, four));
  }
  const uint64_t best_serial = *std::min_element(serial.begin(), serial.end());
  const uint64_t best_overlap = *std::min_element(overlap.begin(), overlap.end());
  const double factor = double(best_serial) / double(best_overlap);
  std::printf("4 stages: serial best %.3f ms, median %.3f (model %.3f); 4 streams best %.3f ms, median %.3f "
              "(model %.3f); speed-up of the best %.2f (model %.2f)\n",
              best_serial / 1e6, median(serial) / 1e6, serial_model / 1e6, best_overlap / 1e6,
              median(overlap) / 1e6, overlap_model / 1e6, factor, model_factor);
  for (uint64_t t : serial) CHECK(double(t) >= serial_model);  // waits never end early
  for (uint64_t t : overlap) CHECK(double(t) >= overlap_model);
  CHECK(factor >= 0.85 * model_factor);
  CHECK(factor <= 1.15 * model_factor);
  for (auto& s : four) cudaStreamDestroy(s);
  cudaStreamDestroy(one);
}
