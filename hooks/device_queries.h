// Device queries (cudaGetDeviceCount, cudaSetDevice, ...) are forwarded, never recorded: a
// framework asks them far too often for events, and they enqueue no device work. Their
// results are still watched, because they are what a process without a usable device calls
// before it gives up: a run whose only CUDA calls were these must still end with a line that
// says why nothing was written ("no CUDA device: every call returned error 35").
#pragma once

#include <cstdint>

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

}  // namespace profagent::hooks
