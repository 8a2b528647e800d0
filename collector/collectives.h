// NCCL collectives: the side store behind collector::record_collective (api.h), read by the
// join, and what the process learnt from its communicators (rank, backend).
#pragma once

#include <cstdint>

#include "collector/trace.h"

namespace profagent::collector {

// Moves the arguments of `handle` out of the store (each is read by one window's join);
// false for an unknown handle (already taken, or never kept).
bool take_collective(uint64_t handle, CollectiveArgs* out) noexcept;

// Calls whose arguments were not kept: the store holds at most kMaxPendingCollectives not yet
// joined (a window that never ends while NCCL calls keep coming).
inline constexpr uint64_t kMaxPendingCollectives = 1u << 20;
uint64_t dropped_collectives() noexcept;

// Rank, world size and backend from the first communicator, where the launcher's variables
// said nothing (process_info.h fills the rest).
void apply_communicator_rank(ProcessInfo& info) noexcept;

}  // namespace profagent::collector
