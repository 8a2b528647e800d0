// The kernels of a module image, as cuModuleLoadData / cuModuleLoadDataEx /
// cuModuleLoadFatBinary receive it: a cubin (an ELF file: its global function symbols), PTX
// text (its `.entry` names), or a fatbin (the images it contains, uncompressed ones only),
// also behind the __fatBinC_Wrapper_t that nvcc puts around embedded fatbins.
//
// The fatbin container is not documented by NVIDIA; the layout read here is the one the CUDA
// 13 `fatbinary` tool writes: a 16-byte header (magic 0xBA55ED50, version, header size, size of
// the entries) followed by entries, each with a header giving its kind (1 PTX, 2 ELF), its own
// header size, its payload size, the architecture it is for (x10 + y for sm_xy, at offset 0x1c)
// and flags (0x2000: LZ4-compressed payload, 0x8000: zstd-compressed, CUDA 13's default for PTX).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "cubin_resources.h"

namespace devsim {

enum class ImageKind { Unknown, Cubin, Ptx, Fatbin };

struct ImageKernels {
  ImageKind kind = ImageKind::Unknown;
  std::vector<std::string> names;  // in image order, duplicates removed
  size_t compressed_entries = 0;   // fatbin entries skipped because their payload is compressed
  // Registers, shared memory, ... of the kernels of the cubin the device would run: the image
  // itself, or the fatbin's uncompressed ELF entry for the device's architecture (sm_75, or the
  // newest older sm_7x). Empty when there is none (PTX only, compressed, other architectures).
  ImageResources resources;
};

// `image` points at the image; `size` bounds it when known (0: take the size from the image
// itself — PTX ends at its NUL, ELF and fatbin carry their sizes — as the driver does).
ImageKernels kernels_in_image(const void* image, size_t size = 0);

// Only the resources (what __cudaRegisterFatBinary needs: the names come one by one from
// __cudaRegisterFunction), without reading every entry's symbols.
ImageResources resources_in_image(const void* image);

}  // namespace devsim
