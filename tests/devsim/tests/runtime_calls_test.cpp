// The small runtime calls devsim models beyond launches, copies and streams: PCI bus ids,
// cache and bank preferences, peer attributes, stream attributes, the capture mode, the
// dynamic-shared-memory occupancy query, user objects, channel descriptors; and what an
// unmodelled entry point reports. Run with DEVSIM_DEVICE_COUNT=2.
#include <catch2/catch.hpp>

#include <cstring>
#include <thread>

#include <cupti_runtime_cbid.h>

#include "model_test_support.h"

using namespace devsim_test;

// The bank-size calls are deprecated in CUDA 13 but still exported, so programs still call them.
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

namespace {

void occupancy_stub() {}
const void* k_occupancy = fake_kernel(reinterpret_cast<const void*>(&occupancy_stub), "_Z9occupancyv");

int g_destroyed = 0;
void* g_destroyed_ptr = nullptr;
void count_destroy(void* ptr) {
  ++g_destroyed;
  g_destroyed_ptr = ptr;
}

}  // namespace

TEST_CASE("PCI bus ids agree with the properties and map back to their device", "[devsim][runtime_calls]") {
  int count = 0;
  REQUIRE(cudaGetDeviceCount(&count) == cudaSuccess);
  REQUIRE(count == 2);
  for (int device = 0; device < count; ++device) {
    cudaDeviceProp prop;
    REQUIRE(cudaGetDeviceProperties(&prop, device) == cudaSuccess);
    char id[32];
    REQUIRE(cudaDeviceGetPCIBusId(id, sizeof id, device) == cudaSuccess);
    char want[32];
    std::snprintf(want, sizeof want, "%04x:%02x:%02x.0", prop.pciDomainID, prop.pciBusID, prop.pciDeviceID);
    CHECK(std::string(id) == want);
    int found = -1;
    REQUIRE(cudaDeviceGetByPCIBusId(&found, id) == cudaSuccess);
    CHECK(found == device);
    std::snprintf(want, sizeof want, "%02x:%02x.0", prop.pciBusID, prop.pciDeviceID);  // short form
    found = -1;
    REQUIRE(cudaDeviceGetByPCIBusId(&found, want) == cudaSuccess);
    CHECK(found == device);
  }
  int found = -1;
  CHECK(cudaDeviceGetByPCIBusId(&found, "0000:7f:00.0") == cudaErrorInvalidDevice);
  CHECK(cudaDeviceGetByPCIBusId(&found, "not a bus id") == cudaErrorInvalidValue);
  cudaGetLastError();
}

TEST_CASE("cache preference is kept per device, the bank size is fixed at four bytes", "[devsim][runtime_calls]") {
  REQUIRE(cudaSetDevice(1) == cudaSuccess);
  REQUIRE(cudaDeviceSetCacheConfig(cudaFuncCachePreferShared) == cudaSuccess);
  REQUIRE(cudaSetDevice(0) == cudaSuccess);
  cudaFuncCache cache = cudaFuncCachePreferEqual;
  REQUIRE(cudaDeviceGetCacheConfig(&cache) == cudaSuccess);
  CHECK(cache == cudaFuncCachePreferNone);
  REQUIRE(cudaSetDevice(1) == cudaSuccess);
  REQUIRE(cudaDeviceGetCacheConfig(&cache) == cudaSuccess);
  CHECK(cache == cudaFuncCachePreferShared);
  CHECK(cudaDeviceSetCacheConfig(static_cast<cudaFuncCache>(9)) == cudaErrorInvalidValue);
  REQUIRE(cudaSetDevice(0) == cudaSuccess);

  REQUIRE(cudaDeviceSetSharedMemConfig(cudaSharedMemBankSizeEightByte) == cudaSuccess);
  cudaSharedMemConfig bank = cudaSharedMemBankSizeDefault;
  REQUIRE(cudaDeviceGetSharedMemConfig(&bank) == cudaSuccess);
  CHECK(bank == cudaSharedMemBankSizeFourByte);
  CHECK(cudaFuncSetSharedMemConfig(k_occupancy, cudaSharedMemBankSizeEightByte) == cudaSuccess);
  int not_a_kernel = 0;
  CHECK(cudaFuncSetSharedMemConfig(&not_a_kernel, cudaSharedMemBankSizeFourByte) == cudaErrorInvalidDeviceFunction);
  cudaGetLastError();
}

TEST_CASE("peer attributes agree with cudaDeviceCanAccessPeer", "[devsim][runtime_calls]") {
  for (int src = 0; src < 2; ++src) {
    for (int dst = 0; dst < 2; ++dst) {
      int can = -1, access = -1, atomics = -1;
      REQUIRE(cudaDeviceCanAccessPeer(&can, src, dst) == cudaSuccess);
      cudaError_t err = cudaDeviceGetP2PAttribute(&access, cudaDevP2PAttrAccessSupported, src, dst);
      if (src == dst) {
        CHECK(err == cudaErrorInvalidDevice);
        continue;
      }
      REQUIRE(err == cudaSuccess);
      REQUIRE(cudaDeviceGetP2PAttribute(&atomics, cudaDevP2PAttrNativeAtomicSupported, src, dst) == cudaSuccess);
      CHECK(access == can);
      CHECK(atomics == can);
    }
  }
  int value = 0;
  CHECK(cudaDeviceGetP2PAttribute(&value, static_cast<cudaDeviceP2PAttr>(77), 0, 1) == cudaErrorInvalidValue);
  cudaGetLastError();
}

TEST_CASE("stream attributes are stored, copied and read back, streams know their device", "[devsim][runtime_calls]") {
  cudaStream_t a = nullptr, b = nullptr;
  REQUIRE(cudaStreamCreateWithPriority(&a, cudaStreamNonBlocking, -3) == cudaSuccess);
  REQUIRE(cudaSetDevice(1) == cudaSuccess);
  REQUIRE(cudaStreamCreate(&b) == cudaSuccess);
  REQUIRE(cudaSetDevice(0) == cudaSuccess);

  cudaStreamAttrValue value{};
  REQUIRE(cudaStreamGetAttribute(a, cudaStreamAttributePriority, &value) == cudaSuccess);
  CHECK(value.priority == -3);
  static char window_base[4096];
  cudaStreamAttrValue window{};
  window.accessPolicyWindow.base_ptr = window_base;
  window.accessPolicyWindow.num_bytes = sizeof window_base;
  window.accessPolicyWindow.hitRatio = 0.5f;
  window.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
  REQUIRE(cudaStreamSetAttribute(a, cudaStreamAttributeAccessPolicyWindow, &window) == cudaSuccess);
  REQUIRE(cudaStreamCopyAttributes(b, a) == cudaSuccess);
  std::memset(&value, 0, sizeof value);
  REQUIRE(cudaStreamGetAttribute(b, cudaStreamAttributeAccessPolicyWindow, &value) == cudaSuccess);
  CHECK(value.accessPolicyWindow.base_ptr == window_base);
  CHECK(value.accessPolicyWindow.num_bytes == sizeof window_base);
  CHECK(value.accessPolicyWindow.hitRatio == 0.5f);
  CHECK(value.accessPolicyWindow.hitProp == cudaAccessPropertyPersisting);
  CHECK(cudaStreamGetAttribute(a, cudaLaunchAttributeCooperative, &value) == cudaErrorInvalidValue);

  int device = -1;
  REQUIRE(cudaStreamGetDevice(a, &device) == cudaSuccess);
  CHECK(device == 0);
  REQUIRE(cudaStreamGetDevice(b, &device) == cudaSuccess);
  CHECK(device == 1);
  REQUIRE(cudaStreamGetDevice(nullptr, &device) == cudaSuccess);  // the legacy stream
  CHECK(device == 0);
  REQUIRE(cudaStreamDestroy(a) == cudaSuccess);
  REQUIRE(cudaStreamDestroy(b) == cudaSuccess);
  cudaGetLastError();
}

TEST_CASE("the stream-capture mode is exchanged per thread", "[devsim][runtime_calls]") {
  cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
  REQUIRE(cudaThreadExchangeStreamCaptureMode(&mode) == cudaSuccess);
  CHECK(mode == cudaStreamCaptureModeGlobal);
  cudaStreamCaptureMode other_thread = cudaStreamCaptureModeThreadLocal;
  std::thread([&] { cudaThreadExchangeStreamCaptureMode(&other_thread); }).join();
  CHECK(other_thread == cudaStreamCaptureModeGlobal);
  mode = cudaStreamCaptureModeGlobal;
  REQUIRE(cudaThreadExchangeStreamCaptureMode(&mode) == cudaSuccess);
  CHECK(mode == cudaStreamCaptureModeRelaxed);
}

TEST_CASE("available dynamic shared memory is the most that keeps num_blocks resident", "[devsim][runtime_calls]") {
  const int block_size = 128;
  for (int num_blocks : {1, 2, 3, 4, 7}) {
    size_t size = 0;
    REQUIRE(cudaOccupancyAvailableDynamicSMemPerBlock(&size, k_occupancy, num_blocks, block_size) == cudaSuccess);
    INFO("num_blocks " << num_blocks << ", available " << size);
    int resident = 0;
    REQUIRE(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, k_occupancy, block_size, size) == cudaSuccess);
    CHECK(resident >= num_blocks);
    cudaFuncAttributes attr;
    REQUIRE(cudaFuncGetAttributes(&attr, k_occupancy) == cudaSuccess);
    if (size < size_t(attr.maxDynamicSharedSizeBytes)) {  // one byte more would lose a block
      REQUIRE(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, k_occupancy, block_size, size + 1) == cudaSuccess);
      CHECK(resident < num_blocks);
    }
  }
  size_t size = 1;
  REQUIRE(cudaOccupancyAvailableDynamicSMemPerBlock(&size, k_occupancy, 1000, block_size) == cudaSuccess);
  CHECK(size == 0);  // the block cap keeps fewer resident whatever the shared memory
  CHECK(cudaOccupancyAvailableDynamicSMemPerBlock(&size, k_occupancy, 0, block_size) == cudaErrorInvalidValue);
  cudaGetLastError();
}

TEST_CASE("user objects run their destructor once, at the last release", "[devsim][runtime_calls]") {
  int payload = 0;
  cudaUserObject_t object = nullptr;
  CHECK(cudaUserObjectCreate(&object, &payload, count_destroy, 1, 0) == cudaErrorInvalidValue);
  REQUIRE(cudaUserObjectCreate(&object, &payload, count_destroy, 2, cudaUserObjectNoDestructorSync) == cudaSuccess);
  g_destroyed = 0;
  REQUIRE(cudaUserObjectRelease(object, 1) == cudaSuccess);
  REQUIRE(cudaUserObjectRetain(object, 2) == cudaSuccess);
  CHECK(cudaUserObjectRelease(object, 4) == cudaErrorInvalidValue);  // only 3 held
  CHECK(g_destroyed == 0);
  REQUIRE(cudaUserObjectRelease(object, 3) == cudaSuccess);
  CHECK(g_destroyed == 1);
  CHECK(g_destroyed_ptr == &payload);
  cudaGetLastError();
}

TEST_CASE("channel descriptors are built and the call is reported", "[devsim][runtime_calls]") {
  tracer().clear();
  cudaChannelFormatDesc d = cudaCreateChannelDesc(8, 16, 0, 32, cudaChannelFormatKindFloat);
  CHECK(d.x == 8);
  CHECK(d.y == 16);
  CHECK(d.z == 0);
  CHECK(d.w == 32);
  CHECK(d.f == cudaChannelFormatKindFloat);
  auto calls = tracer().calls("cudaCreateChannelDesc");
  REQUIRE(calls.size() == 1);
  CHECK(calls[0].cbid == CUPTI_RUNTIME_TRACE_CBID_cudaCreateChannelDesc_v3020);
}

TEST_CASE("an unmodelled entry point is reported with its callback id and parameters", "[devsim][runtime_calls]") {
  tracer().clear();
  void* device = nullptr;
  REQUIRE(cudaMalloc(&device, 256) == cudaSuccess);
  cudaIpcMemHandle_t handle;
  CHECK(cudaIpcGetMemHandle(&handle, device) == cudaErrorNotSupported);
  CHECK(cudaGetLastError() == cudaErrorNotSupported);
  CHECK(cudaGetLastError() == cudaSuccess);
  auto enters = tracer().enters();
  auto it = std::find_if(enters.begin(), enters.end(),
                         [](const devsim::ApiCall& c) { return std::strcmp(c.name, "cudaIpcGetMemHandle") == 0; });
  REQUIRE(it != enters.end());
  CHECK(it->cbid == CUPTI_RUNTIME_TRACE_CBID_cudaIpcGetMemHandle_v4010);
  REQUIRE(it->params != nullptr);  // read on enter, while the call's frame is alive
  auto calls = tracer().calls("cudaIpcGetMemHandle");
  REQUIRE(calls.size() == 1);
  CHECK(calls[0].result == cudaErrorNotSupported);
  REQUIRE(cudaFree(device) == cudaSuccess);
}
