// Of the kind of CUDA's simpleP2P sample, on two devices: a copy between them staged through
// the host (no peer access), peer access enabled both ways and the copy repeated direct, timed
// by events, access disabled and the copy repeated once more. Every copy's bytes are checked,
// and the peer access errors the runtime defines are provoked.
#include "memory_check.h"

// Device 0's work before each timed copy: a kernel reading the start of the copy's source into
// a scratch buffer. Its output is not checked (the simulated device does not run kernels); the copies are.
__global__ void scale_into(const float* in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i] * 2.0f;
}

namespace {

constexpr size_t kBytes = 32 << 20;
constexpr int kScratch = 1024;  // floats
constexpr unsigned kBusyBlocks = 2000000;

// Copies device 0's buffer to device 1's with cudaMemcpyPeerAsync between two events on device
// 0's legacy stream, and checks the bytes.
bool timed_copy(void* on0, void* on1, float* scratch0, unsigned char* host, unsigned seed, float* ms) {
  fill_pattern(host, kBytes, seed);
  CHECK(cudaSetDevice(0));
  CHECK(cudaMemcpy(on0, host, kBytes, cudaMemcpyHostToDevice));
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  // Many blocks, few of which touch memory: it keeps the stream busy while the events and the
  // copy are queued, so host-side gaps between those calls do not enter the measured time.
  scale_into<<<kBusyBlocks, 256>>>(static_cast<const float*>(on0), scratch0, kScratch);
  CHECK(cudaGetLastError());
  CHECK(cudaEventRecord(start, 0));
  CHECK(cudaMemcpyPeerAsync(on1, 1, on0, 0, kBytes, 0));
  CHECK(cudaEventRecord(stop, 0));
  CHECK(cudaEventSynchronize(stop));
  CHECK(cudaEventElapsedTime(ms, start, stop));
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  std::fill(host, host + kBytes, 0);
  CHECK(cudaSetDevice(1));
  CHECK(cudaMemcpy(host, on1, kBytes, cudaMemcpyDeviceToHost));
  CHECK(cudaSetDevice(0));
  EXPECT(has_pattern(host, kBytes, seed), "peer copy %u: device 1 holds other bytes", seed);
  return true;
}

bool set_access(bool enable) {
  for (int d = 0; d < 2; ++d) {
    CHECK(cudaSetDevice(d));
    CHECK(enable ? cudaDeviceEnablePeerAccess(1 - d, 0) : cudaDeviceDisablePeerAccess(1 - d));
  }
  CHECK(cudaSetDevice(0));
  return true;
}

bool access_errors() {
  CHECK(cudaSetDevice(0));
  EXPECT(cudaDeviceEnablePeerAccess(1, 0) == cudaErrorPeerAccessAlreadyEnabled, "a second enable was accepted");
  EXPECT(cudaDeviceEnablePeerAccess(0, 0) == cudaErrorInvalidDevice, "access to itself was accepted");
  cudaGetLastError();
  return true;
}

bool run(unsigned char* host, void* on0, void* on1, float* scratch0) {
  float staged = 0, direct = 0, again = 0;
  if (!timed_copy(on0, on1, scratch0, host, 1, &staged)) return false;
  if (!set_access(true) || !access_errors()) return false;
  if (!timed_copy(on0, on1, scratch0, host, 2, &direct)) return false;
  if (!set_access(false)) return false;
  EXPECT(cudaDeviceDisablePeerAccess(1) == cudaErrorPeerAccessNotEnabled, "a second disable was accepted");
  cudaGetLastError();
  if (!timed_copy(on0, on1, scratch0, host, 3, &again)) return false;
  std::printf("cudaMemcpyPeerAsync of %zu MiB: %.3f ms staged, %.3f ms with peer access, %.3f ms after disabling it\n",
              kBytes >> 20, staged, direct, again);
  std::printf("peer bandwidth %.1f GB/s\n", kBytes / (direct * 1e6));
  EXPECT(direct < staged, "the peer-access copy was not faster than the staged one");
  return true;
}

}  // namespace

int main() {
  int count = 0, can01 = 0, can10 = 0;
  cudaGetDeviceCount(&count);
  if (count < 2) {
    std::printf("peer_copy: needs two devices, found %d\n", count);
    return 1;
  }
  cudaDeviceCanAccessPeer(&can01, 0, 1);
  cudaDeviceCanAccessPeer(&can10, 1, 0);
  std::printf("device 0 -> 1 peer access possible: %d, 1 -> 0: %d\n", can01, can10);
  if (!can01 || !can10) return 1;
  unsigned char* host = nullptr;
  void *on0 = nullptr, *on1 = nullptr;
  float* scratch0 = nullptr;
  bool ok = cudaMallocHost(&host, kBytes) == cudaSuccess && cudaSetDevice(1) == cudaSuccess &&
            cudaMalloc(&on1, kBytes) == cudaSuccess && cudaSetDevice(0) == cudaSuccess &&
            cudaMalloc(&on0, kBytes) == cudaSuccess && cudaMalloc(&scratch0, kScratch * sizeof(float)) == cudaSuccess;
  ok = ok && run(host, on0, on1, scratch0);
  cudaFree(on0);
  cudaFree(scratch0);
  cudaSetDevice(1);
  cudaFree(on1);
  cudaFreeHost(host);
  std::printf("peer_copy: %s\n", ok ? "PASSED" : "FAILED");
  return ok ? 0 : 1;
}
