// Interned names and kernel names (strings happen at freeze, not on the hot path). intern() and
// note_kernel_name() are declared in collector/api.h.
//
// Lock order: the names mutex is a leaf; it is never held across a CUPTI or CUDA call.
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "collector/event.h"

namespace profagent::collector {

// All names interned so far, indexed by NameId (index 0 is kNoName, the empty string).
std::vector<std::string> names_snapshot();

// Host function (or cudaKernel_t) -> mangled device name, as learned from registration.
std::unordered_map<const void*, std::string> kernel_names_snapshot();

// The mangled device name of one kernel (false when it was never registered): one string
// copied under the lock, where kernel_names_snapshot() copies them all.
bool kernel_name_of(const void* kernel, std::string& name);

// C++ demangling (abi::__cxa_demangle); names that are not mangled C++ come back unchanged.
std::string demangle(std::string_view name);

}  // namespace profagent::collector
