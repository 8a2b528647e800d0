// Device configuration calls that are a few lines each: PCI bus ids (consistent with the
// pciBusID/pciDeviceID/pciDomainID properties), cache and shared-memory bank preferences, the
// peer attributes (consistent with cudaDeviceCanAccessPeer) and cudaSetValidDevices.
#include <atomic>
#include <cstdio>

#include "cudart_common.h"

using namespace devsim;

namespace {

constexpr int kMaxDevices = 16;  // DEVSIM_DEVICE_COUNT's ceiling
std::atomic<int> g_cache_config[kMaxDevices];  // cudaFuncCachePreferNone (0) until set

// The PCI location cudaGetDeviceProperties reports (device_props.h): domain 0, bus device+1,
// device 0, function 0.
int pci_bus_of(int device) { return device + 1; }

// Accepts the spellings NVIDIA documents: domain:bus:device.function, domain:bus:device and
// bus:device.function, all hexadecimal. False when the text is none of them.
bool parse_pci_bus_id(const char* text, unsigned* domain, unsigned* bus, unsigned* dev) {
  unsigned function = 0;
  *domain = 0;
  if (std::sscanf(text, "%x:%x:%x.%x", domain, bus, dev, &function) == 4) return true;
  if (std::sscanf(text, "%x:%x:%x", domain, bus, dev) == 3) return true;
  *domain = 0;
  return std::sscanf(text, "%x:%x.%x", bus, dev, &function) == 3;
}

}  // namespace

extern "C" {

cudaError_t cudaDeviceGetPCIBusId(char* pci_bus_id, int len, int device) {
  DEVSIM_RT_CALL(cudaDeviceGetPCIBusId, v4010, Light);
  if (!pci_bus_id || len <= 0) DEVSIM_RT_RETURN(cudaErrorInvalidValue);
  if (!valid_device(device)) DEVSIM_RT_RETURN(cudaErrorInvalidDevice);
  std::snprintf(pci_bus_id, size_t(len), "%04x:%02x:%02x.0", 0u, unsigned(pci_bus_of(device)), 0u);
  DEVSIM_RT_RETURN(cudaSuccess);
}

cudaError_t cudaDeviceGetByPCIBusId(int* device, const char* pci_bus_id) {
  DEVSIM_RT_CALL(cudaDeviceGetByPCIBusId, v4010, Light);
  unsigned domain = 0, bus = 0, dev = 0;
  if (!device || !pci_bus_id || !parse_pci_bus_id(pci_bus_id, &domain, &bus, &dev)) {
    DEVSIM_RT_RETURN(cudaErrorInvalidValue);
  }
  for (int d = 0; d < device_count(); ++d) {
    if (domain == 0 && dev == 0 && bus == unsigned(pci_bus_of(d))) {
      *device = d;
      DEVSIM_RT_RETURN(cudaSuccess);
    }
  }
  DEVSIM_RT_RETURN(cudaErrorInvalidDevice);
}

// The preference is kept per device and read back; the model has no L1/shared split to change.
cudaError_t cudaDeviceSetCacheConfig(cudaFuncCache config) {
  DEVSIM_RT_CALL(cudaDeviceSetCacheConfig, v3020, Light);
  if (config < cudaFuncCachePreferNone || config > cudaFuncCachePreferEqual) DEVSIM_RT_RETURN(cudaErrorInvalidValue);
  g_cache_config[current_device()].store(config);
  DEVSIM_RT_RETURN(cudaSuccess);
}

cudaError_t cudaDeviceGetCacheConfig(cudaFuncCache* config) {
  DEVSIM_RT_CALL(cudaDeviceGetCacheConfig, v3020, Light);
  if (!config) DEVSIM_RT_RETURN(cudaErrorInvalidValue);
  *config = static_cast<cudaFuncCache>(g_cache_config[current_device()].load());
  DEVSIM_RT_RETURN(cudaSuccess);
}

// The modelled part (compute capability 7.5) has a fixed four-byte bank size: as on real
// devices without a configurable bank size, setting is accepted without effect and getting
// always reports four bytes.
cudaError_t cudaDeviceSetSharedMemConfig(cudaSharedMemConfig config) {
  DEVSIM_RT_CALL(cudaDeviceSetSharedMemConfig, v4020, Light);
  bool known = config >= cudaSharedMemBankSizeDefault && config <= cudaSharedMemBankSizeEightByte;
  DEVSIM_RT_RETURN(known ? cudaSuccess : cudaErrorInvalidValue);
}

cudaError_t cudaDeviceGetSharedMemConfig(cudaSharedMemConfig* config) {
  DEVSIM_RT_CALL(cudaDeviceGetSharedMemConfig, v4020, Light);
  if (!config) DEVSIM_RT_RETURN(cudaErrorInvalidValue);
  *config = cudaSharedMemBankSizeFourByte;
  DEVSIM_RT_RETURN(cudaSuccess);
}

// Every pair of distinct devices can reach each other (cudaDeviceCanAccessPeer), with native
// atomics and array access, over links of equal rank.
cudaError_t cudaDeviceGetP2PAttribute(int* value, cudaDeviceP2PAttr attr, int src, int dst) {
  DEVSIM_RT_CALL(cudaDeviceGetP2PAttribute, v8000, Light);
  if (!value) DEVSIM_RT_RETURN(cudaErrorInvalidValue);
  if (!valid_device(src) || !valid_device(dst) || src == dst) DEVSIM_RT_RETURN(cudaErrorInvalidDevice);
  switch (attr) {
    case cudaDevP2PAttrPerformanceRank: *value = 0; break;
    case cudaDevP2PAttrAccessSupported:
    case cudaDevP2PAttrNativeAtomicSupported:
    case cudaDevP2PAttrCudaArrayAccessSupported: *value = 1; break;
    case cudaDevP2PAttrOnlyPartialNativeAtomicSupported: *value = 0; break;
    default: DEVSIM_RT_RETURN(cudaErrorInvalidValue);
  }
  DEVSIM_RT_RETURN(cudaSuccess);
}

// The list is validated; it changes nothing, since a devsim thread's device is 0 until it calls
// cudaSetDevice rather than the first usable device of a list.
cudaError_t cudaSetValidDevices(int* devices, int len) {
  DEVSIM_RT_CALL(cudaSetValidDevices, v3020, Light);
  if (len < 0 || (len > 0 && !devices)) DEVSIM_RT_RETURN(cudaErrorInvalidValue);
  for (int i = 0; i < len; ++i) {
    if (!valid_device(devices[i])) DEVSIM_RT_RETURN(cudaErrorInvalidDevice);
  }
  DEVSIM_RT_RETURN(cudaSuccess);
}

}  // extern "C"
