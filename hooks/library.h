// A library descriptor: everything the hook template (hooks/hook.h) needs to know about one
// interposed C library. libcudart (hooks/cudart.h) is one; NCCL, cuBLAS or a second vendor
// runtime is another descriptor plus one file of one-line hooks (docs/hooks.md, "Adding a
// library").
//
// A descriptor is two things:
//  1. A struct deriving from LibraryDefaults that names the library's error type and values:
//       struct Nccl : LibraryDefaults {
//         using Error = ncclResult_t;                  // what its functions return
//         static constexpr Error kSuccess = ncclSuccess;  // any other value: the call failed
//         static constexpr Error kUnavailable = ncclSystemError;  // returned when no loaded
//         static constexpr const char* kUnavailableName = "ncclSystemError";  // object defines it
//         static constexpr DeviceApi kDevice = DeviceApi::Cuda;   // see DeviceApi
//       };
//     Calls returning another type than Error (void, a pointer) are recorded without a result
//     and give R{} when unresolved.
//  2. A macro PROFAGENT_LIBRARY_<tag>(X, ...) that calls X once per version of the library the
//     agent exports hooks for (its own extra arguments, if any, passed on after a comma):
//       X(Descriptor, LibraryVersion object, version tag, export kind, symbol version, ...)
//     The export kind is VERSIONED (the library versions its symbols: each hook is exported as
//     the hidden `name@<symbol version>`, which agent/exports.map must declare) or UNVERSIONED
//     (a plain `name`, for libraries without symbol versions; the symbol version is ignored).
//     The version tag (13, 12, 2) only makes the per-version definitions' names unique.
#pragma once

#include <cstdint>

namespace profagent::hooks {

// Which device a library drives, i.e. what its first call means. Cuda: the first call of any
// of its hooks is the process's first CUDA use (the exit handler is registered and the CUDA
// device backend starts, hooks/hook.h note_cuda_use()), as for libcudart itself: NCCL or
// cuBLAS may be the first to reach the device when the program's own runtime calls are not
// interposed (a statically linked runtime). None: the calls are recorded, nothing else starts.
enum class DeviceApi : uint8_t { None, Cuda };

// What a descriptor does not have to say.
struct LibraryDefaults {
  static constexpr DeviceApi kDevice = DeviceApi::None;
  // The kernel a call launches, for `kernel:REGEX` step markers (collector/step_markers.h);
  // only launch functions have one.
  template <typename... Args>
  static const void* launched_kernel(Args...) noexcept {
    return nullptr;
  }
};

}  // namespace profagent::hooks

// The two export kinds of a descriptor's X entries (see above): the attributes and the name of
// the C++ function behind one exported hook.
#define PROFAGENT_EXPORT_ATTRIBUTES_VERSIONED(name, symbol_version) \
  __attribute__((visibility("default"), symver(#name "@" symbol_version)))
#define PROFAGENT_EXPORTED_FUNCTION_VERSIONED(name, tag) pahook##tag##_##name
#define PROFAGENT_EXPORT_ATTRIBUTES_UNVERSIONED(name, symbol_version) __attribute__((visibility("default")))
#define PROFAGENT_EXPORTED_FUNCTION_UNVERSIONED(name, tag) name
