// device_query: lists every CUDA device with its properties and every device attribute the
// CUDA 13 runtime defines, like the introductory deviceQuery sample. Exits non-zero if any
// call fails, so on devsim it proves the device-management part of the runtime is complete.
#include "sample_check.h"

#include <cstdio>

namespace {

struct Attribute {
  cudaDeviceAttr id;
  const char* name;
};

#define ATTR(name) {cudaDevAttr##name, #name}
// Every non-reserved enumerator of cudaDeviceAttr in the CUDA 13 driver_types.h.
constexpr Attribute kAttributes[] = {
    ATTR(MaxThreadsPerBlock), ATTR(MaxBlockDimX), ATTR(MaxBlockDimY), ATTR(MaxBlockDimZ),
    ATTR(MaxGridDimX), ATTR(MaxGridDimY), ATTR(MaxGridDimZ), ATTR(MaxSharedMemoryPerBlock),
    ATTR(TotalConstantMemory), ATTR(WarpSize), ATTR(MaxPitch), ATTR(MaxRegistersPerBlock),
    ATTR(ClockRate), ATTR(TextureAlignment), ATTR(GpuOverlap), ATTR(MultiProcessorCount),
    ATTR(KernelExecTimeout), ATTR(Integrated), ATTR(CanMapHostMemory), ATTR(ComputeMode),
    ATTR(MaxTexture1DWidth), ATTR(MaxTexture2DWidth), ATTR(MaxTexture2DHeight), ATTR(MaxTexture3DWidth),
    ATTR(MaxTexture3DHeight), ATTR(MaxTexture3DDepth), ATTR(MaxTexture2DLayeredWidth), ATTR(MaxTexture2DLayeredHeight),
    ATTR(MaxTexture2DLayeredLayers), ATTR(SurfaceAlignment), ATTR(ConcurrentKernels), ATTR(EccEnabled),
    ATTR(PciBusId), ATTR(PciDeviceId), ATTR(TccDriver), ATTR(MemoryClockRate),
    ATTR(GlobalMemoryBusWidth), ATTR(L2CacheSize), ATTR(MaxThreadsPerMultiProcessor), ATTR(AsyncEngineCount),
    ATTR(UnifiedAddressing), ATTR(MaxTexture1DLayeredWidth), ATTR(MaxTexture1DLayeredLayers), ATTR(MaxTexture2DGatherWidth),
    ATTR(MaxTexture2DGatherHeight), ATTR(MaxTexture3DWidthAlt), ATTR(MaxTexture3DHeightAlt), ATTR(MaxTexture3DDepthAlt),
    ATTR(PciDomainId), ATTR(TexturePitchAlignment), ATTR(MaxTextureCubemapWidth), ATTR(MaxTextureCubemapLayeredWidth),
    ATTR(MaxTextureCubemapLayeredLayers), ATTR(MaxSurface1DWidth), ATTR(MaxSurface2DWidth), ATTR(MaxSurface2DHeight),
    ATTR(MaxSurface3DWidth), ATTR(MaxSurface3DHeight), ATTR(MaxSurface3DDepth), ATTR(MaxSurface1DLayeredWidth),
    ATTR(MaxSurface1DLayeredLayers), ATTR(MaxSurface2DLayeredWidth), ATTR(MaxSurface2DLayeredHeight), ATTR(MaxSurface2DLayeredLayers),
    ATTR(MaxSurfaceCubemapWidth), ATTR(MaxSurfaceCubemapLayeredWidth), ATTR(MaxSurfaceCubemapLayeredLayers), ATTR(MaxTexture1DLinearWidth),
    ATTR(MaxTexture2DLinearWidth), ATTR(MaxTexture2DLinearHeight), ATTR(MaxTexture2DLinearPitch), ATTR(MaxTexture2DMipmappedWidth),
    ATTR(MaxTexture2DMipmappedHeight), ATTR(ComputeCapabilityMajor), ATTR(ComputeCapabilityMinor), ATTR(MaxTexture1DMipmappedWidth),
    ATTR(StreamPrioritiesSupported), ATTR(GlobalL1CacheSupported), ATTR(LocalL1CacheSupported), ATTR(MaxSharedMemoryPerMultiprocessor),
    ATTR(MaxRegistersPerMultiprocessor), ATTR(ManagedMemory), ATTR(IsMultiGpuBoard), ATTR(MultiGpuBoardGroupID),
    ATTR(HostNativeAtomicSupported), ATTR(SingleToDoublePrecisionPerfRatio), ATTR(PageableMemoryAccess), ATTR(ConcurrentManagedAccess),
    ATTR(ComputePreemptionSupported), ATTR(CanUseHostPointerForRegisteredMem), ATTR(CooperativeLaunch), ATTR(MaxSharedMemoryPerBlockOptin),
    ATTR(CanFlushRemoteWrites), ATTR(HostRegisterSupported), ATTR(PageableMemoryAccessUsesHostPageTables), ATTR(DirectManagedMemAccessFromHost),
    ATTR(MaxBlocksPerMultiprocessor), ATTR(MaxPersistingL2CacheSize), ATTR(MaxAccessPolicyWindowSize), ATTR(SparseCudaArraySupported),
    ATTR(HostRegisterReadOnlySupported), ATTR(TimelineSemaphoreInteropSupported), ATTR(MemoryPoolsSupported), ATTR(GPUDirectRDMASupported),
    ATTR(GPUDirectRDMAFlushWritesOptions), ATTR(GPUDirectRDMAWritesOrdering), ATTR(MemoryPoolSupportedHandleTypes), ATTR(ClusterLaunch),
    ATTR(DeferredMappingCudaArraySupported), ATTR(IpcEventSupport), ATTR(MemSyncDomainCount), ATTR(NumaConfig),
    ATTR(NumaId), ATTR(MpsEnabled), ATTR(HostNumaId), ATTR(D3D12CigSupported),
    ATTR(VulkanCigSupported), ATTR(GpuPciDeviceId), ATTR(GpuPciSubsystemId), ATTR(HostNumaMemoryPoolsSupported),
    ATTR(HostNumaMultinodeIpcSupported), ATTR(HostMemoryPoolsSupported), ATTR(OnlyPartialHostNativeAtomicSupported),    ATTR(ReservedSharedMemoryPerBlock),
};
#undef ATTR

void print_versions() {
  int driver = 0, runtime = 0;
  CHECK_CUDA(cudaDriverGetVersion(&driver));
  CHECK_CUDA(cudaRuntimeGetVersion(&runtime));
  std::printf("CUDA driver version %d.%d, runtime version %d.%d\n", driver / 1000,
              driver % 1000 / 10, runtime / 1000, runtime % 1000 / 10);
}

void print_limits(const cudaDeviceProp& p) {
  std::printf("  Max threads per block:                  %d\n", p.maxThreadsPerBlock);
  std::printf("  Max block dimensions:                   (%d, %d, %d)\n", p.maxThreadsDim[0],
              p.maxThreadsDim[1], p.maxThreadsDim[2]);
  std::printf("  Max grid dimensions:                    (%d, %d, %d)\n", p.maxGridSize[0],
              p.maxGridSize[1], p.maxGridSize[2]);
  std::printf("  Max threads per multiprocessor:         %d\n", p.maxThreadsPerMultiProcessor);
  std::printf("  Max blocks per multiprocessor:          %d\n", p.maxBlocksPerMultiProcessor);
  std::printf("  Warp size:                              %d\n", p.warpSize);
  std::printf("  Registers per block / multiprocessor:   %d / %d\n", p.regsPerBlock,
              p.regsPerMultiprocessor);
}

void print_memory(const cudaDeviceProp& p) {
  std::printf("  Total global memory:                    %.0f MiB (%zu bytes)\n",
              p.totalGlobalMem / 1048576.0, p.totalGlobalMem);
  std::printf("  Shared memory per block / optin / SM:   %zu / %zu / %zu bytes\n",
              p.sharedMemPerBlock, p.sharedMemPerBlockOptin, p.sharedMemPerMultiprocessor);
  std::printf("  Constant memory:                        %zu bytes\n", p.totalConstMem);
  std::printf("  L2 cache size:                          %d bytes\n", p.l2CacheSize);
  std::printf("  Memory bus width:                       %d bits\n", p.memoryBusWidth);
  std::printf("  Max memory pitch:                       %zu bytes\n", p.memPitch);
  std::printf("  Texture alignment:                      %zu bytes\n", p.textureAlignment);
}

void print_features(const cudaDeviceProp& p) {
  std::printf("  Copy engines (asyncEngineCount):        %d\n", p.asyncEngineCount);
  std::printf("  Concurrent kernels:                     %s\n", p.concurrentKernels ? "yes" : "no");
  std::printf("  Unified addressing:                     %s\n", p.unifiedAddressing ? "yes" : "no");
  std::printf("  Managed memory:                         %s\n", p.managedMemory ? "yes" : "no");
  std::printf("  Can map host memory:                    %s\n", p.canMapHostMemory ? "yes" : "no");
  std::printf("  Stream priorities:                      %s\n",
              p.streamPrioritiesSupported ? "yes" : "no");
  std::printf("  Cooperative launch:                     %s\n", p.cooperativeLaunch ? "yes" : "no");
  std::printf("  Integrated GPU:                         %s\n", p.integrated ? "yes" : "no");
  std::printf("  ECC enabled:                            %s\n", p.ECCEnabled ? "yes" : "no");
  std::printf("  PCI domain / bus / device:              %d / %d / %d\n", p.pciDomainID,
              p.pciBusID, p.pciDeviceID);
}

void print_properties(int device) {
  cudaDeviceProp p{};
  CHECK_CUDA(cudaGetDeviceProperties(&p, device));
  std::printf("\nDevice %d: \"%s\"\n", device, p.name);
  std::printf("  Compute capability:                     %d.%d\n", p.major, p.minor);
  std::printf("  Multiprocessors:                        %d\n", p.multiProcessorCount);
  print_limits(p);
  print_memory(p);
  print_features(p);
}

void print_attributes(int device) {
  std::printf("  Attributes (cudaDeviceGetAttribute):\n");
  for (const Attribute& attribute : kAttributes) {
    int value = 0;
    CHECK_CUDA(cudaDeviceGetAttribute(&value, attribute.id, device));
    std::printf("    %-42s %d\n", attribute.name, value);
  }
}

void print_free_memory(int device) {
  CHECK_CUDA(cudaSetDevice(device));
  size_t free_bytes = 0, total_bytes = 0;
  CHECK_CUDA(cudaMemGetInfo(&free_bytes, &total_bytes));
  std::printf("  Free / total memory (cudaMemGetInfo):   %zu / %zu bytes\n", free_bytes, total_bytes);
}

}  // namespace

int main() {
  int count = 0;
  CHECK_CUDA(cudaGetDeviceCount(&count));
  std::printf("Detected %d CUDA capable device(s)\n", count);
  print_versions();
  for (int device = 0; device < count; ++device) {
    print_properties(device);
    print_attributes(device);
    print_free_memory(device);
  }
  if (count == 0) samples::fail("no CUDA device");
  std::printf("\ndevice_query: %zu attributes per device, Result = PASS\n",
              sizeof(kAttributes) / sizeof(kAttributes[0]));
  return 0;
}
