// The library descriptor of NVIDIA's CUDA runtime (hooks/library.h): libcudart.so.13 and
// libcudart.so.12, whose symbols carry their soname as symbol version. Every runtime hook is
// exported once per major, each forwarding to the runtime of its own major.
#pragma once

#include <cuda_runtime_api.h>

#include <type_traits>

#include "hooks/hook.h"

// The version nodes of NVIDIA's runtimes, which are also their sonames (agent/exports.map
// declares both).
#define PROFAGENT_CUDART13 "libcudart.so.13"
#define PROFAGENT_CUDART12 "libcudart.so.12"

namespace profagent::hooks {

inline constexpr LibraryVersion kCudart13{PROFAGENT_CUDART13, PROFAGENT_CUDART13, "libcudart.so."};
inline constexpr LibraryVersion kCudart12{PROFAGENT_CUDART12, PROFAGENT_CUDART12, "libcudart.so."};

struct CudaRuntime : LibraryDefaults {
  using Error = cudaError_t;
  static constexpr Error kSuccess = cudaSuccess;
  // A call no loaded runtime defines: the program sees a runtime that failed to initialise.
  static constexpr Error kUnavailable = cudaErrorSharedObjectInitFailed;
  static constexpr const char* kUnavailableName = "cudaErrorSharedObjectInitFailed";
  static constexpr DeviceApi kDevice = DeviceApi::Cuda;

  // The kernel of a launch: its first `const void*` or cudaKernel_t argument (the collector
  // only looks at it for launch symbols).
  template <typename... Args>
  static const void* launched_kernel(Args... args) noexcept {
    const void* kernel = nullptr;
    [[maybe_unused]] auto take = [&kernel](auto arg) {
      using A = decltype(arg);
      if constexpr (std::is_same_v<A, const void*> || std::is_same_v<A, cudaKernel_t>) {
        if (kernel == nullptr) kernel = reinterpret_cast<const void*>(arg);
      }
    };
    (take(args), ...);
    return kernel;
  }
};

using CudartSite = LibrarySite<CudaRuntime>;

}  // namespace profagent::hooks

// The versions (hooks/library.h): X(descriptor, version, tag, export kind, symbol version, ...).
#define PROFAGENT_LIBRARY_cudart(X, ...)                                                              \
  X(::profagent::hooks::CudaRuntime, ::profagent::hooks::kCudart13, 13, VERSIONED, PROFAGENT_CUDART13 \
    __VA_OPT__(, ) __VA_ARGS__)                                                                       \
  X(::profagent::hooks::CudaRuntime, ::profagent::hooks::kCudart12, 12, VERSIONED, PROFAGENT_CUDART12 \
    __VA_OPT__(, ) __VA_ARGS__)
