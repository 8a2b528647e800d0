// The device properties devsim reports, written into either runtime's cudaDeviceProp: the
// CUDA 13 struct of the toolkit header, or the CUDA 12 one (cuda12_device_prop.h). Every field
// set here has the same name and meaning in both; the fields CUDA 13 removed are set by the
// CUDA 12 entry points themselves.
#pragma once

#include <cstring>

#include "config.h"
#include "device.h"

namespace devsim::rt {

template <typename Prop>
void fill_properties(Prop& p, int device) {
  std::memset(&p, 0, sizeof p);
  std::strncpy(p.name, device_name(), sizeof p.name - 1);
  std::memset(p.uuid.bytes, 0xd5, sizeof p.uuid.bytes);
  p.uuid.bytes[15] = static_cast<char>(device);
  p.totalGlobalMem = config().memory_bytes;
  p.sharedMemPerBlock = Arch::shared_per_block;
  p.regsPerBlock = Arch::regs_per_block;
  p.warpSize = Arch::warp_size;
  p.memPitch = 2147483647;
  p.maxThreadsPerBlock = Arch::max_threads_per_block;
  p.maxThreadsDim[0] = 1024, p.maxThreadsDim[1] = 1024, p.maxThreadsDim[2] = 64;
  p.maxGridSize[0] = 2147483647, p.maxGridSize[1] = 65535, p.maxGridSize[2] = 65535;
  p.totalConstMem = 65536;
  p.major = Arch::major, p.minor = Arch::minor;
  p.textureAlignment = 512, p.texturePitchAlignment = 32;
  p.multiProcessorCount = config().sm_count;
  p.canMapHostMemory = 1;
  p.concurrentKernels = 1;
  p.pciBusID = device + 1;
  p.asyncEngineCount = 2;
  p.unifiedAddressing = 1;
  p.memoryBusWidth = Arch::memory_bus_width;
  p.l2CacheSize = Arch::l2_bytes;
  p.maxThreadsPerMultiProcessor = Arch::max_threads_per_sm;
  p.streamPrioritiesSupported = 1;
  p.globalL1CacheSupported = p.localL1CacheSupported = 1;
  p.sharedMemPerMultiprocessor = Arch::shared_per_sm;
  p.regsPerMultiprocessor = Arch::regs_per_sm;
  p.managedMemory = 1;
  p.computePreemptionSupported = 1;
  p.cooperativeLaunch = 1;
  p.sharedMemPerBlockOptin = Arch::shared_per_block_optin;
  p.maxBlocksPerMultiProcessor = Arch::max_blocks_per_sm;
  p.hostRegisterSupported = 1;
  p.memoryPoolsSupported = 1;
}

}  // namespace devsim::rt
