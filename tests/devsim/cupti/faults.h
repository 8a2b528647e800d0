// Fault injection for the simulated CUPTI, read once from DEVSIM_CUPTI* variables
// (documented in README.md next to this file).
#pragma once

#include <cupti_result.h>

#include <cstdint>
#include <string>
#include <unordered_map>

namespace profagent::devsim_cupti {

// What a machine without a usable CUPTI looks like to a client.
enum class Availability : uint8_t {
  Available,
  Unavailable,  // DEVSIM_CUPTI=unavailable: CUPTI_ERROR_NOT_INITIALIZED
  NoPermission, // DEVSIM_CUPTI=noperm: CUPTI_ERROR_INSUFFICIENT_PRIVILEGES
  NoDriver,     // DEVSIM_CUPTI=nodriver: CUPTI_ERROR_UNKNOWN, what the real libcupti.so.13
                // returns when libcuda.so.1 is missing (measured on this toolkit)
  Busy,         // DEVSIM_CUPTI=busy: another subscriber holds CUPTI
};

struct Faults {
  Availability availability = Availability::Available;
  uint64_t drop_every = 0;  // DEVSIM_CUPTI_DROP_EVERY=N: drop every Nth record (0: never)
  // DEVSIM_CUPTI_FAIL=fn=result[,fn=result...]: result is a number or a CUPTI_ERROR_* name.
  std::unordered_map<std::string, CUptiResult> failing_functions;

  // CUPTI_SUCCESS unless availability makes calls that need the driver fail.
  CUptiResult availability_error() const;
  // The injected result for a function, or CUPTI_SUCCESS.
  CUptiResult injected(const char* function_name) const;
};

// Parses the variables' values (nullptr: unset). Unknown values are ignored with a message on
// stderr, so a typo in a test is visible.
Faults parse_faults(const char* mode, const char* drop_every, const char* fail);

// The process-wide faults, parsed from the environment on first use.
const Faults& faults();

}  // namespace profagent::devsim_cupti
