// Copies and sets: real bytes, pinned vs pageable semantics, bandwidth knobs
// (DEVSIM_BW_HTOD_GBPS=1, DEVSIM_BW_DTOH_GBPS=2, DEVSIM_BW_PAGEABLE_FACTOR=0.5 in this test's
// environment), memory accounting and argument errors.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <numeric>

#include "model_test_support.h"

using namespace devsim_test;

namespace {

constexpr size_t kBytes = 1 << 20;  // 1 MiB: 1048576 ns at 1 GB/s

std::vector<unsigned char> pattern(size_t n, unsigned char seed) {
  std::vector<unsigned char> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<unsigned char>(seed + i * 7);
  return v;
}

devsim::OpRecord last_copy() {
  auto ops = tracer().ops();
  for (auto it = ops.rbegin(); it != ops.rend(); ++it) {
    if (it->kind == devsim::OpKind::Memcpy) return *it;
  }
  FAIL("no memcpy record");
  return {};
}

}  // namespace

TEST_CASE("copies move real bytes and report kinds", "[devsim][memory]") {
  tracer().clear();
  auto src = pattern(kBytes, 3);
  std::vector<unsigned char> back(kBytes, 0);
  void* dev = nullptr;
  REQUIRE(cudaMalloc(&dev, kBytes) == cudaSuccess);
  REQUIRE(cudaMemcpy(dev, src.data(), kBytes, cudaMemcpyHostToDevice) == cudaSuccess);
  auto htod = last_copy();
  CHECK(htod.copy_kind == CUPTI_ACTIVITY_MEMCPY_KIND_HTOD);
  CHECK(htod.src_kind == CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE);
  CHECK(htod.dst_kind == CUPTI_ACTIVITY_MEMORY_KIND_DEVICE);
  CHECK(htod.bytes == kBytes);
  CHECK(htod.stream_id == 7);
  CHECK(htod.is_async == 0);
  REQUIRE(cudaMemcpy(back.data(), dev, kBytes, cudaMemcpyDeviceToHost) == cudaSuccess);
  CHECK(back == src);

  REQUIRE(cudaMemset(dev, 0xab, kBytes / 2) == cudaSuccess);
  REQUIRE(cudaMemcpy(back.data(), dev, kBytes, cudaMemcpyDefault) == cudaSuccess);
  CHECK(last_copy().copy_kind == CUPTI_ACTIVITY_MEMCPY_KIND_DTOH);
  CHECK(back[0] == 0xab);
  CHECK(back[kBytes / 2 - 1] == 0xab);
  CHECK(back[kBytes / 2] == src[kBytes / 2]);
  cudaFree(dev);
}

TEST_CASE("pinned async copies return early, pageable ones only after the data is taken", "[devsim][memory]") {
  void* dev = nullptr;
  void* pinned = nullptr;
  REQUIRE(cudaMalloc(&dev, kBytes) == cudaSuccess);
  REQUIRE(cudaMallocHost(&pinned, kBytes) == cudaSuccess);
  auto src = pattern(kBytes, 11);
  std::memcpy(pinned, src.data(), kBytes);
  cudaStream_t s;
  cudaStreamCreate(&s);

  SECTION("pinned") {
    tracer().clear();
    Gate gate;
    gate.enqueue_on(s);
    REQUIRE(cudaMemcpyAsync(dev, pinned, kBytes, cudaMemcpyHostToDevice, s) == cudaSuccess);
    CHECK(cudaStreamQuery(s) == cudaErrorNotReady);  // returned while the copy cannot have run
    gate.open();
    REQUIRE(cudaStreamSynchronize(s) == cudaSuccess);
    auto c = last_copy();
    CHECK(c.src_kind == CUPTI_ACTIVITY_MEMORY_KIND_PINNED);
    CHECK(c.is_async == CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC);
    CHECK(c.end_ns - c.start_ns == kBytes);  // 1 GB/s
  }
  SECTION("pageable") {
    tracer().clear();
    auto host = src;
    REQUIRE(cudaMemcpyAsync(dev, host.data(), kBytes, cudaMemcpyHostToDevice, s) == cudaSuccess);
    uint64_t returned = devsim::now_ns();
    CHECK(cudaStreamQuery(s) == cudaSuccess);
    auto c = last_copy();
    CHECK(returned >= c.end_ns);
    CHECK(c.src_kind == CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE);
    CHECK(c.end_ns - c.start_ns == 2 * kBytes);  // pageable factor 0.5
    std::fill(host.begin(), host.end(), 0);      // safe: the data was already taken
    std::vector<unsigned char> back(kBytes);
    REQUIRE(cudaMemcpy(back.data(), dev, kBytes, cudaMemcpyDeviceToHost) == cudaSuccess);
    CHECK(back == src);
    CHECK(last_copy().end_ns - last_copy().start_ns == kBytes);  // DtoH 2 GB/s * 0.5
  }
  SECTION("registered host memory counts as pinned") {
    tracer().clear();
    std::vector<unsigned char> host(kBytes);
    REQUIRE(cudaHostRegister(host.data(), kBytes, cudaHostRegisterDefault) == cudaSuccess);
    REQUIRE(cudaMemcpyAsync(host.data(), dev, kBytes, cudaMemcpyDeviceToHost, s) == cudaSuccess);
    REQUIRE(cudaStreamSynchronize(s) == cudaSuccess);
    auto c = last_copy();
    CHECK(c.dst_kind == CUPTI_ACTIVITY_MEMORY_KIND_PINNED);
    CHECK(c.end_ns - c.start_ns == kBytes / 2);  // DtoH 2 GB/s
    CHECK(cudaHostUnregister(host.data()) == cudaSuccess);
  }
  cudaStreamDestroy(s);
  cudaFreeHost(pinned);
  cudaFree(dev);
}

TEST_CASE("2-D copies and sets touch only their rectangle", "[devsim][memory]") {
  void* dev = nullptr;
  size_t pitch = 0;
  REQUIRE(cudaMallocPitch(&dev, &pitch, 100, 4) == cudaSuccess);
  CHECK(pitch >= 100);
  REQUIRE(cudaMemset(dev, 0, pitch * 4) == cudaSuccess);
  REQUIRE(cudaMemset2D(dev, pitch, 0x5a, 10, 3) == cudaSuccess);
  std::vector<unsigned char> host(100 * 4, 1);
  REQUIRE(cudaMemcpy2D(host.data(), 100, dev, pitch, 100, 4, cudaMemcpyDeviceToHost) == cudaSuccess);
  CHECK(host[0] == 0x5a);
  CHECK(host[9] == 0x5a);
  CHECK(host[10] == 0);
  CHECK(host[2 * 100 + 9] == 0x5a);
  CHECK(host[3 * 100] == 0);
  cudaFree(dev);
}

TEST_CASE("memory accounting and allocation failures", "[devsim][memory][errors]") {
  size_t free0 = 0, total = 0;
  REQUIRE(cudaMemGetInfo(&free0, &total) == cudaSuccess);
  CHECK(total == 256ull << 20);  // DEVSIM_MEMORY_MB=256
  void* dev = nullptr;
  REQUIRE(cudaMalloc(&dev, 64 << 20) == cudaSuccess);
  size_t free1 = 0;
  cudaMemGetInfo(&free1, &total);
  CHECK(free0 - free1 == (64u << 20));
  void* too_big = nullptr;
  CHECK(cudaMalloc(&too_big, 512ull << 20) == cudaErrorMemoryAllocation);
  CHECK(cudaGetLastError() == cudaErrorMemoryAllocation);
  CHECK(cudaGetLastError() == cudaSuccess);  // not sticky
  cudaPointerAttributes attr;
  REQUIRE(cudaPointerGetAttributes(&attr, static_cast<char*>(dev) + 100) == cudaSuccess);
  CHECK(attr.type == cudaMemoryTypeDevice);
  REQUIRE(cudaFree(dev) == cudaSuccess);
  CHECK(cudaFree(dev) == cudaErrorInvalidValue);  // double free
  int on_stack = 0;
  CHECK(cudaFree(&on_stack) == cudaErrorInvalidValue);
  CHECK(cudaMemset(&on_stack, 0, 4) == cudaErrorInvalidValue);
  CHECK(cudaMemcpy(&on_stack, &on_stack, 4, cudaMemcpyHostToDevice) == cudaErrorInvalidValue);
  CHECK(cudaMemcpy(&on_stack, &on_stack, 4, static_cast<cudaMemcpyKind>(7)) == cudaErrorInvalidMemcpyDirection);
  cudaGetLastError();
}

TEST_CASE("device symbols have real storage", "[devsim][memory]") {
  static float shadow[4];
  static void** module = __cudaRegisterFatBinary(nullptr);
  __cudaRegisterVar(module, reinterpret_cast<char*>(shadow), nullptr, "shadow", 0, sizeof shadow, 0, 0);
  float in[4] = {1, 2, 3, 4}, out[4] = {};
  REQUIRE(cudaMemcpyToSymbol(shadow, in, sizeof in) == cudaSuccess);
  REQUIRE(cudaMemcpyFromSymbol(out, shadow, sizeof out) == cudaSuccess);
  CHECK(std::equal(in, in + 4, out));
  CHECK(shadow[0] == 0);  // the host shadow is not the device copy
  CHECK(cudaMemcpyToSymbol(shadow, in, sizeof in, 4) == cudaErrorInvalidValue);
  int unknown = 0;
  CHECK(cudaMemcpyToSymbol(&unknown, in, 4) == cudaErrorInvalidSymbol);
  cudaGetLastError();
}
