// The defaults of every table and summary, named once: the agent's settings (PROFAGENT_SORT_BY,
// PROFAGENT_ROW_LIMIT, PROFAGENT_GROUP_BY) and `profagent report` start from the same values, so
// that both print the same bytes for the same trace.
#pragma once

#include <cstdint>
#include <string_view>

namespace profagent::exporters {

// torch's sort key of the key_averages table (Paddle's tables use its twin, GPUTotal).
inline constexpr std::string_view kDefaultSortKey = "cuda_time_total";
// Rows of each table shown as text; <= 0 shows all.
inline constexpr int kDefaultRowLimit = 100;
// group_by stack_n:N takes at most this many frames (PROFAGENT_STACK_DEPTH keeps at most as many).
inline constexpr uint32_t kMaxStackFrames = 64;

}  // namespace profagent::exporters
