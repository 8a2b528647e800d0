// What a compiled kernel needs from the device, read from the cubin the compiler wrote: the
// figures `ptxas -v` prints and cudaFuncGetAttributes reports on real hardware.
//
// A cubin keeps them as EIATTR attributes in its `.nv.info` sections (undocumented by NVIDIA;
// the layout read here is what CUDA 13's ptxas writes, checked against `ptxas -v` by the
// devsim.kernel_resources test): each attribute is {uint8 format, uint8 code} followed by a
// 16-bit value (formats 1-3) or a 16-bit size and that many bytes (format 4). The section
// `.nv.info` holds per-function attributes keyed by symbol index (EIATTR_REGCOUNT 0x2f,
// EIATTR_FRAME_SIZE 0x11: local memory per thread); `.nv.info.<kernel>` holds the kernel's own
// (EIATTR_CBANK_PARAM_SIZE 0x19, EIATTR_MAX_THREADS 0x05 from __launch_bounds__,
// EIATTR_REQNTID 0x10). Static shared memory is the size of the `.nv.shared.<kernel>` section.
#pragma once

#include <cstddef>
#include <string>
#include <unordered_map>

namespace devsim {

struct KernelResources {
  int registers = -1;    // per thread; -1: the image does not say
  int static_shared = 0; // bytes per block
  int local_bytes = 0;   // bytes per thread (stack frame)
  int param_bytes = 0;   // bytes of kernel parameters
  int max_threads = 0;   // threads per block the kernel was compiled for; 0: no bound
};

using ImageResources = std::unordered_map<std::string, KernelResources>;  // by mangled name

// Resources of every kernel of a 64-bit little-endian cubin of `size` bytes; empty when the
// bytes are no such ELF.
ImageResources cubin_resources(const unsigned char* elf, size_t size);

}  // namespace devsim
