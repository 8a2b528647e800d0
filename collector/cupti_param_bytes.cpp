#include "collector/cupti_param_bytes.h"

#include "collector/trace.h"

// The generated parameter structs name cuda.h's legacy v1 types, which it declares only for
// CUDA's own implementation. Nothing here calls CUDA.
#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>
#include <generated_cuda_meta.h>
#include <generated_cuda_runtime_api_meta.h>

#include <cstddef>

namespace profagent::collector {
namespace {

struct Entry {
  std::string_view name;
  ByteCountField field;
};

template <typename Params>
constexpr ByteCountField at(size_t offset, uint8_t element_bytes = 1) {
  static_assert(sizeof(Params) < 32768);
  return ByteCountField{int16_t(offset), element_bytes};
}

#define PROFAGENT_BYTES(name, params, member, ...) \
  Entry{#name, at<params>(offsetof(params, member) __VA_OPT__(, ) __VA_ARGS__)}

constexpr Entry kEntries[] = {
    PROFAGENT_BYTES(cudaMemcpy, cudaMemcpy_v3020_params, count),
    PROFAGENT_BYTES(cudaMemcpyAsync, cudaMemcpyAsync_v3020_params, count),
    PROFAGENT_BYTES(cudaMemcpyToSymbol, cudaMemcpyToSymbol_v3020_params, count),
    PROFAGENT_BYTES(cudaMemcpyFromSymbol, cudaMemcpyFromSymbol_v3020_params, count),
    PROFAGENT_BYTES(cudaMemcpyToSymbolAsync, cudaMemcpyToSymbolAsync_v3020_params, count),
    PROFAGENT_BYTES(cudaMemcpyFromSymbolAsync, cudaMemcpyFromSymbolAsync_v3020_params, count),
    PROFAGENT_BYTES(cudaMemset, cudaMemset_v3020_params, count),
    PROFAGENT_BYTES(cudaMemsetAsync, cudaMemsetAsync_v3020_params, count),
    PROFAGENT_BYTES(cudaMalloc, cudaMalloc_v3020_params, size),
    PROFAGENT_BYTES(cudaMallocHost, cudaMallocHost_v3020_params, size),
    PROFAGENT_BYTES(cudaMallocManaged, cudaMallocManaged_v6000_params, size),
    PROFAGENT_BYTES(cudaMallocAsync, cudaMallocAsync_v11020_params, size),
    PROFAGENT_BYTES(cuMemcpy, cuMemcpy_params, ByteCount),
    PROFAGENT_BYTES(cuMemcpyAsync, cuMemcpyAsync_params, ByteCount),
    PROFAGENT_BYTES(cuMemcpyHtoD_v2, cuMemcpyHtoD_v2_params, ByteCount),
    PROFAGENT_BYTES(cuMemcpyDtoH_v2, cuMemcpyDtoH_v2_params, ByteCount),
    PROFAGENT_BYTES(cuMemcpyDtoD_v2, cuMemcpyDtoD_v2_params, ByteCount),
    PROFAGENT_BYTES(cuMemcpyHtoDAsync_v2, cuMemcpyHtoDAsync_v2_params, ByteCount),
    PROFAGENT_BYTES(cuMemcpyDtoHAsync_v2, cuMemcpyDtoHAsync_v2_params, ByteCount),
    PROFAGENT_BYTES(cuMemcpyDtoDAsync_v2, cuMemcpyDtoDAsync_v2_params, ByteCount),
    PROFAGENT_BYTES(cuMemsetD8_v2, cuMemsetD8_v2_params, N),
    PROFAGENT_BYTES(cuMemsetD16_v2, cuMemsetD16_v2_params, N, 2),
    PROFAGENT_BYTES(cuMemsetD32_v2, cuMemsetD32_v2_params, N, 4),
    PROFAGENT_BYTES(cuMemsetD8Async, cuMemsetD8Async_params, N),
    PROFAGENT_BYTES(cuMemsetD16Async, cuMemsetD16Async_params, N, 2),
    PROFAGENT_BYTES(cuMemsetD32Async, cuMemsetD32Async_params, N, 4),
    PROFAGENT_BYTES(cuMemAlloc_v2, cuMemAlloc_v2_params, bytesize),
    PROFAGENT_BYTES(cuMemAllocHost_v2, cuMemAllocHost_v2_params, bytesize),
    PROFAGENT_BYTES(cuMemAllocManaged, cuMemAllocManaged_params, bytesize),
    PROFAGENT_BYTES(cuMemAllocAsync, cuMemAllocAsync_params, bytesize),
};

}  // namespace

ByteCountField byte_count_field(std::string_view name) noexcept {
  name = without_stream_suffix(name);
  for (const Entry& entry : kEntries) {
    if (entry.name == name) return entry.field;
  }
  return {};
}

}  // namespace profagent::collector
