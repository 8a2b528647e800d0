// Device queries (cudaGetDeviceCount, cudaSetDevice, ...) are hooked like every call and
// recorded as the rule of collector/api.h says (cudaSetDevice is left out of traces, as
// torch.profiler leaves it out; the others are recorded, as the CUPTI callback records them
// when the agent came in by injection). Their results are also watched, because they are what a
// process without a usable device calls before it gives up: a run whose only CUDA calls were
// these, all failing, must end with a line that says why nothing was written ("no CUDA device:
// every call returned error 35") rather than with a trace of failed queries.
#pragma once

#include <cstdint>
#include <string_view>

// The watched queries: X(name, parameters, arguments), one definition for the hooks and for
// is_device_query().
#define PROFAGENT_DEVICE_QUERIES(X)                                \
  X(cudaGetDeviceCount, (int* n), (n))                             \
  X(cudaSetDevice, (int d), (d))                                   \
  X(cudaGetDeviceProperties, (cudaDeviceProp * p, int d), (p, d)) \
  X(cudaInitDevice, (int d, unsigned int df, unsigned int f), (d, df, f))

namespace profagent::hooks {

struct DeviceQueryOutcome {
  uint64_t failed = 0;        // calls that returned an error
  int first_error = 0;        // the error the first failing call returned
  bool same_error = true;     // every failing call returned first_error
  bool any_succeeded = false;
  bool seen() const noexcept { return failed != 0 || any_succeeded; }
};

// What this process's device queries returned so far (the agent's own calls are not counted;
// a forked child starts from none: its parent's queries are not its own).
DeviceQueryOutcome device_query_outcome() noexcept;

// `api` is one of the watched queries.
bool is_device_query(std::string_view api) noexcept;

}  // namespace profagent::hooks
