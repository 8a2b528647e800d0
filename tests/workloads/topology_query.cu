// Of the kind of CUDA's topologyQuery sample: for every device its PCI location, for every
// ordered pair of devices the peer attributes, checked against each other (the PCI id maps back
// to its device and agrees with the properties; peer access agrees with cudaDeviceCanAccessPeer).
// Then, per device, the dynamic shared memory the occupancy calculator offers for two resident
// blocks is used by a launch on a stream, which the device must accept.
#include <cstdio>
#include <cstring>

#include "workload_check.h"

__global__ void stage_through_shared(const float* in, float* out, int n) {
  extern __shared__ float tile[];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) tile[threadIdx.x] = in[i];
  __syncthreads();
  if (i < n) out[i] = tile[blockDim.x - 1 - threadIdx.x];
}

static bool query_location(int device) {
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, device));
  char bus_id[32];
  CHECK(cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, device));
  char expected[32];
  std::snprintf(expected, sizeof expected, "%04x:%02x:%02x.0", prop.pciDomainID, prop.pciBusID, prop.pciDeviceID);
  int back = -1;
  CHECK(cudaDeviceGetByPCIBusId(&back, bus_id));
  std::printf("Device %d \"%s\" at PCI %s\n", device, prop.name, bus_id);
  if (std::strcmp(bus_id, expected) != 0 || back != device) {
    std::printf("FAIL device %d: bus id %s, properties say %s, maps back to %d\n", device, bus_id, expected, back);
    return false;
  }
  return true;
}

static bool query_pair(int src, int dst) {
  int rank = -1, access = -1, atomics = -1, can = -1;
  CHECK(cudaDeviceGetP2PAttribute(&rank, cudaDevP2PAttrPerformanceRank, src, dst));
  CHECK(cudaDeviceGetP2PAttribute(&access, cudaDevP2PAttrAccessSupported, src, dst));
  CHECK(cudaDeviceGetP2PAttribute(&atomics, cudaDevP2PAttrNativeAtomicSupported, src, dst));
  CHECK(cudaDeviceCanAccessPeer(&can, src, dst));
  std::printf("Device %d -> %d: performance rank %d, access %d, native atomics %d\n", src, dst, rank, access,
              atomics);
  if (access != can) {
    std::printf("FAIL peer access %d but cudaDeviceCanAccessPeer %d\n", access, can);
    return false;
  }
  return true;
}

// Launches with the dynamic shared memory offered for two resident blocks of 256 threads.
static bool launch_with_offered_shared(int device) {
  const int n = 1 << 14, block = 256;
  CHECK(cudaSetDevice(device));
  size_t offered = 0;
  CHECK(cudaOccupancyAvailableDynamicSMemPerBlock(&offered, stage_through_shared, 2, block));
  int resident = 0;
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, stage_through_shared, block, offered));
  float *in = nullptr, *out = nullptr;
  CHECK(cudaMalloc(&in, n * sizeof(float)));
  CHECK(cudaMalloc(&out, n * sizeof(float)));
  cudaStream_t stream;
  CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  int on = -1;
  CHECK(cudaStreamGetDevice(stream, &on));
  stage_through_shared<<<n / block, block, offered, stream>>>(in, out, n);
  CHECK(cudaGetLastError());
  CHECK(cudaStreamSynchronize(stream));
  CHECK(cudaStreamDestroy(stream));
  CHECK(cudaFree(in));
  CHECK(cudaFree(out));
  std::printf("Device %d: %zu bytes of dynamic shared memory keep %d blocks resident; launched on its stream\n",
              device, offered, resident);
  if (offered == 0 || resident < 2 || on != device) {
    std::printf("FAIL offered %zu, resident %d, stream on device %d\n", offered, resident, on);
    return false;
  }
  return true;
}

int main() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count < 1) {
    std::printf("FAIL no device\n");
    return 1;
  }
  bool ok = true;
  for (int d = 0; d < count; ++d) ok = query_location(d) && ok;
  for (int src = 0; src < count; ++src) {
    for (int dst = 0; dst < count; ++dst) {
      if (src != dst) ok = query_pair(src, dst) && ok;
    }
  }
  for (int d = 0; d < count; ++d) ok = launch_with_offered_shared(d) && ok;
  std::printf("topology_query: %s\n", ok ? "PASSED" : "FAILED");
  return ok ? 0 : 1;
}
