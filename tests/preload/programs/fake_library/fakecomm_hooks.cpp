// The fake library's descriptor and hooks, written exactly as NCCL's or a second vendor
// runtime's would be (docs/hooks.md, "Adding a library"): a descriptor (hooks/library.h) and one
// line per function. Built into libprofagent_with_fakecomm.so, a copy of the agent made for
// tests/preload/library_tests.cmake only.
#include "fakecomm.h"
#include "hooks/hook.h"

namespace fakecomm {

struct Library : profagent::hooks::LibraryDefaults {
  using Error = fakecommResult_t;
  static constexpr Error kSuccess = fakecommSuccess;
  static constexpr Error kUnavailable = fakecommSystemError;
  static constexpr const char* kUnavailableName = "fakecommSystemError";
  static constexpr profagent::hooks::DeviceApi kDevice = profagent::hooks::DeviceApi::Cuda;
};
// No symbol versions, like NCCL: the hooks are plain exports of the functions' names.
inline constexpr profagent::hooks::LibraryVersion kVersion1{"libprofagent_test_fakecomm.so.1", nullptr,
                                                           "libprofagent_test_fakecomm.so."};

using profagent::hooks::Payload;

}  // namespace fakecomm

#define PROFAGENT_LIBRARY_fakecomm(X, ...) \
  X(::fakecomm::Library, ::fakecomm::kVersion1, 1, UNVERSIONED, "" __VA_OPT__(, ) __VA_ARGS__)

PROFAGENT_LIBRARY_HOOK(fakecomm, fakecommGetVersion, (int* v), (v), fakecomm::Payload{})
PROFAGENT_LIBRARY_HOOK(fakecomm, fakecommAllReduce, (const float* i, float* o, size_t n, int r), (i, o, n, r),
                       fakecomm::Payload{})
PROFAGENT_LIBRARY_HOOK(fakecomm, fakecommMissing, (int v), (v), fakecomm::Payload{})
