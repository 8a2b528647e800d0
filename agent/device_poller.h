// A background thread that hands finished CUPTI activity buffers back to the pool while the
// program runs, so long runs do not exhaust the preallocated buffers before the next window
// is frozen (bench: 1 M launches lost ~88 % of kernel records without it).
#pragma once

namespace profagent::agent {

// Starts the poller once per process; later calls do nothing. Called at the first CUDA use,
// never in processes that do not use CUDA.
void start_device_poller() noexcept;

}  // namespace profagent::agent
