// How much more memory the process may map before an allocation of the agent (or of the
// program) fails: the room below its address-space limit (RLIMIT_AS, `ulimit -v`: every mapping
// counts) and below its data limit (RLIMIT_DATA, `ulimit -d`: private writable mappings count,
// Linux 4.7 and later). A memory cgroup or the machine's RAM are no limits an allocation sees
// fail (the kernel's OOM killer acts instead), so they are not counted here.
#pragma once

#include <cstddef>

namespace profagent::collector {

// SIZE_MAX when neither limit is set; 0 when a limit is already reached. Reads /proc/self/statm
// (no allocation).
size_t memory_room() noexcept;

}  // namespace profagent::collector
