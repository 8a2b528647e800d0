// PROFAGENT_STEP_ON=time:MS: an agent thread that ends one step per period.
//
// The k-th step ends at start + k * MS (CLOCK_MONOTONIC, absolute deadlines: the time a step
// boundary itself takes never makes later steps drift, and a period shorter than the
// scheduler's tick still waits for its deadline: no period rounds to a wait of zero, the thread
// never spins). A thread woken later than its next deadline (the machine was busy, the process
// was stopped) does not catch up with a burst of empty steps: it ends the one step that was due
// (which is then longer than MS) and resumes at the next deadline still ahead, counting the
// periods it skipped. The count is in every trace (profagent_drops.timer_periods_missed) and
// said once on stderr.
#pragma once

#include <cstdint>

namespace profagent::agent {

// Starts the timer thread: `end_step()` at each deadline, until agent threads stop or
// `finished()` returns true. False if the thread could not be created.
bool start_step_timer(uint64_t period_ms, void (*end_step)(), bool (*finished)()) noexcept;

// Periods skipped so far in this process because the timer thread woke too late.
uint64_t timer_periods_missed() noexcept;

}  // namespace profagent::agent
