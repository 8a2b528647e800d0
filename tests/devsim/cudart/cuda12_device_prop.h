// The CUDA 12.x `cudaDeviceProp`, as filled by `cudaGetDeviceProperties_v2` of libcudart.so.12.
//
// The toolkit here is CUDA 13, whose header declares the CUDA 13 layout: CUDA 13 removed
// clockRate, deviceOverlap, kernelExecTimeoutEnabled, computeMode, maxTexture1DLinear,
// memoryClockRate, singleToDoublePrecisionPerfRatio and cooperativeMultiDeviceLaunch, so every
// field after maxGridSize moved. A CUDA 12 program, and devsim's CUDA 12 runtime, need the
// old layout: written here from NVIDIA's CUDA 12 runtime API reference,
//   https://docs.nvidia.com/cuda/archive/12.2.0/cuda-runtime-api/structcudaDeviceProp.html
// (field names and types; that page lists them alphabetically), in declaration order as
// NVIDIA's Holoscan documentation of the CUDA 12 struct lists them,
//   https://docs.nvidia.com/holoscan/sensor-bridge/2.3.1/api/cpp/structholoscan_1_1cuda_1_1cudadeviceprop.html
// The layout is frozen for all of 12.x (the struct is fixed at each major.0 and grows by
// attributes in minor releases): 12.0 ends in 63 reserved ints, and fields added by later
// 12.x releases (deviceNumaConfig, deviceNumaId, mpsEnabled, hostNumaId, ...) took slots of
// `reserved`, which is why the CUDA 13 struct still has 63 ints after unifiedFunctionPointers.
//
// Plain C++ over <driver_types.h> (for cudaUUID_t), so test programs built without nvcc 12 can
// declare `cudaGetDeviceProperties_v2` with it.
#pragma once

#include <cstddef>

#include <driver_types.h>

namespace devsim_cuda12 {

struct DeviceProp {
  char name[256];
  cudaUUID_t uuid;
  char luid[8];
  unsigned int luidDeviceNodeMask;
  size_t totalGlobalMem;
  size_t sharedMemPerBlock;
  int regsPerBlock;
  int warpSize;
  size_t memPitch;
  int maxThreadsPerBlock;
  int maxThreadsDim[3];
  int maxGridSize[3];
  int clockRate;  // kHz; gone in CUDA 13 (cudaDevAttrClockRate)
  size_t totalConstMem;
  int major;
  int minor;
  size_t textureAlignment;
  size_t texturePitchAlignment;
  int deviceOverlap;  // gone in CUDA 13
  int multiProcessorCount;
  int kernelExecTimeoutEnabled;  // gone in CUDA 13
  int integrated;
  int canMapHostMemory;
  int computeMode;  // gone in CUDA 13
  int maxTexture1D;
  int maxTexture1DMipmap;
  int maxTexture1DLinear;  // gone in CUDA 13
  int maxTexture2D[2];
  int maxTexture2DMipmap[2];
  int maxTexture2DLinear[3];
  int maxTexture2DGather[2];
  int maxTexture3D[3];
  int maxTexture3DAlt[3];
  int maxTextureCubemap;
  int maxTexture1DLayered[2];
  int maxTexture2DLayered[3];
  int maxTextureCubemapLayered[2];
  int maxSurface1D;
  int maxSurface2D[2];
  int maxSurface3D[3];
  int maxSurface1DLayered[2];
  int maxSurface2DLayered[3];
  int maxSurfaceCubemap;
  int maxSurfaceCubemapLayered[2];
  size_t surfaceAlignment;
  int concurrentKernels;
  int ECCEnabled;
  int pciBusID;
  int pciDeviceID;
  int pciDomainID;
  int tccDriver;
  int asyncEngineCount;
  int unifiedAddressing;
  int memoryClockRate;  // kHz; gone in CUDA 13 (cudaDevAttrMemoryClockRate)
  int memoryBusWidth;
  int l2CacheSize;
  int persistingL2CacheMaxSize;
  int maxThreadsPerMultiProcessor;
  int streamPrioritiesSupported;
  int globalL1CacheSupported;
  int localL1CacheSupported;
  size_t sharedMemPerMultiprocessor;
  int regsPerMultiprocessor;
  int managedMemory;
  int isMultiGpuBoard;
  int multiGpuBoardGroupID;
  int hostNativeAtomicSupported;
  int singleToDoublePrecisionPerfRatio;  // gone in CUDA 13
  int pageableMemoryAccess;
  int concurrentManagedAccess;
  int computePreemptionSupported;
  int canUseHostPointerForRegisteredMem;
  int cooperativeLaunch;
  int cooperativeMultiDeviceLaunch;  // gone in CUDA 13
  size_t sharedMemPerBlockOptin;
  int pageableMemoryAccessUsesHostPageTables;
  int directManagedMemAccessFromHost;
  int maxBlocksPerMultiProcessor;
  int accessPolicyMaxWindowSize;
  size_t reservedSharedMemPerBlock;  // the last field of CUDA 11.0's layout
  int hostRegisterSupported;
  int sparseCudaArraySupported;
  int hostRegisterReadOnlySupported;
  int timelineSemaphoreInteropSupported;
  int memoryPoolsSupported;
  int gpuDirectRDMASupported;
  unsigned int gpuDirectRDMAFlushWritesOptions;
  int gpuDirectRDMAWritesOrdering;
  unsigned int memoryPoolSupportedHandleTypes;
  int deferredMappingCudaArraySupported;
  int ipcEventSupported;
  int clusterLaunch;
  int unifiedFunctionPointers;
  int reserved[63];  // 12.0: reserved2[2], reserved1[1], reserved[60]; later 12.x named some
};

// Offsets worked out by hand from the declaration order under the x86-64 System V ABI
// (int 4, size_t 8-aligned). 388 is what matters for profilers: a CUDA 13 reader takes
// multiProcessorCount from 384, which in this layout is deviceOverlap (1 on every GPU),
// hence "numSms: 1".
static_assert(offsetof(DeviceProp, totalGlobalMem) == 288, "name, uuid, luid, mask: 256+16+8+4, padded");
static_assert(offsetof(DeviceProp, clockRate) == 348, "after maxGridSize[3] at 336");
static_assert(offsetof(DeviceProp, totalConstMem) == 352, "");
static_assert(offsetof(DeviceProp, deviceOverlap) == 384, "");
static_assert(offsetof(DeviceProp, multiProcessorCount) == 388, "");
static_assert(offsetof(DeviceProp, memoryClockRate) == 608, "");
static_assert(offsetof(DeviceProp, sharedMemPerMultiprocessor) == 640, "");
static_assert(offsetof(DeviceProp, sharedMemPerBlockOptin) == 696, "");
static_assert(offsetof(DeviceProp, reservedSharedMemPerBlock) == 720, "");
static_assert(offsetof(DeviceProp, unifiedFunctionPointers) == 776, "");
static_assert(sizeof(DeviceProp) == 1032, "780 + 63 reserved ints; the size every CUDA 12.x runtime writes");

// Bytes of the layout up to and including reservedSharedMemPerBlock, the end of CUDA 11.0's
// struct: the most an older caller's buffer is guaranteed to hold.
constexpr size_t kCuda11PrefixBytes = offsetof(DeviceProp, reservedSharedMemPerBlock) + sizeof(size_t);

}  // namespace devsim_cuda12
